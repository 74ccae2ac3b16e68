//! Vendored bases: the game's packages that the patches change, copied into
//! the repository (`<patches>/base/`, each at its path in the game's
//! container, `<patches>/base/MyGame/Content/Data/DT_Weapons.uasset`) by
//! `zenpak patch vendor`, so that a build without the game (CI) applies
//! the patches to them. `<patches>/base/lock.toml` names each base: its
//! package, its path in the container, the game's container it was read
//! from and the BLAKE3 of its files. A build with the game uses the game's
//! copy and warns when it differs from the vendored one (the game was
//! updated; `patch vendor` refreshes the base); a build without the game
//! refuses a vendored base whose files no longer match the lock.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::legacy::PackageFiles;
use crate::manifest::Manifest;

use super::base::{Base, Game};
use super::file::Target;
use super::PatchSet;

/// The lock file's name inside `<patches>/base/`.
pub const LOCK_NAME: &str = "lock.toml";

/// `<patches>/base/lock.toml`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lock {
    #[serde(default, rename = "base")]
    pub bases: Vec<LockedBase>,
}

/// One vendored base.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockedBase {
    /// The package name (`/Game/Data/DT_Weapons`).
    pub asset: String,
    /// The header's path in the game's container, and below `base/`.
    pub path: String,
    /// The game's container (or pak) it was read from.
    pub source: String,
    /// BLAKE3 (hex) of its files, header, `.uexp` and companions in that order.
    pub blake3: String,
}

/// The base folder of a manifest's patches.
pub fn base_dir(manifest: &Manifest) -> PathBuf {
    manifest.patches_dir().join("base")
}

/// BLAKE3 of a package's files, each with its length first.
pub fn files_hash(files: &PackageFiles) -> Result<String> {
    let mut hasher = blake3::Hasher::new();
    for bytes in [&files.header, &files.uexp] {
        hasher.update(&(bytes.len() as u64).to_le_bytes());
        hasher.update(bytes);
    }
    for companion in &files.bulk {
        let bytes = companion.read()?;
        hasher.update(companion.kind.extension().as_bytes());
        hasher.update(&(bytes.len() as u64).to_le_bytes());
        hasher.update(&bytes);
    }
    Ok(crate::hash::hex(hasher.finalize().as_bytes()))
}

impl Lock {
    /// The manifest's lock, empty when there is none.
    pub fn load(manifest: &Manifest) -> Result<Lock> {
        let path = base_dir(manifest).join(LOCK_NAME);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Lock::default()),
            Err(e) => return Err(Error::io(&path, e)),
        };
        let lock: Lock = toml::from_str(&text).map_err(|e| {
            Error::usage(format!(
                "the lock of the vendored bases does not read: {}",
                e.message()
            ))
            .in_file(&path)
            .with_hint("write it again with `zenpak patch vendor --game-dir GAME`")
        })?;
        for base in &lock.bases {
            crate::mount::validate_relative_path(&base.path).map_err(|e| e.in_file(&path))?;
        }
        Ok(lock)
    }

    /// The entry of package `asset`.
    pub fn get(&self, asset: &str) -> Option<&LockedBase> {
        self.bases
            .iter()
            .find(|b| b.asset.eq_ignore_ascii_case(asset))
    }
}

/// The vendored base of `asset`, checked against its lock entry.
pub fn vendored(manifest: &Manifest, lock: &Lock, asset: &str) -> Result<Option<Base>> {
    let Some(entry) = lock.get(asset) else {
        return Ok(None);
    };
    let path = base_dir(manifest).join(&entry.path);
    let files = PackageFiles::load(&path)?;
    if files_hash(&files)? != entry.blake3 {
        return Err(Error::usage(format!(
            "the vendored base of `{asset}` is not the one its lock names (its files changed)"
        ))
        .in_file(&path)
        .with_hint("vendor it again from the game: `zenpak patch vendor --game-dir GAME`"));
    }
    Ok(Some(Base {
        package: entry.asset.clone(),
        files,
        relative_path: entry.path.clone(),
        origin: format!(
            "{} (vendored from {})",
            Path::new(&manifest.patches.dir)
                .join("base")
                .join(&entry.path)
                .display(),
            entry.source
        ),
    }))
}

/// What `patch vendor` did for one base.
#[derive(Debug, Clone, Serialize)]
pub struct Vendored {
    pub asset: String,
    pub path: String,
    pub source: String,
    /// Whether the files changed (`false`: the base was already vendored as it is).
    pub changed: bool,
}

/// Copies the game's copy of every package the patches name into
/// `<patches>/base/` and writes the lock. Only files the lock names (now or
/// before) are written or removed.
pub fn vendor(manifest: &Manifest, set: &PatchSet, game: &Game) -> Result<Vec<Vendored>> {
    let dir = base_dir(manifest);
    let old = Lock::load(manifest)?;
    let mut assets: Vec<&str> = set
        .patches
        .iter()
        .filter_map(|p| match &p.target {
            Target::Asset(name) => Some(name.as_str()),
            Target::Base { .. } => None,
        })
        .collect();
    assets.sort_unstable();
    assets.dedup();
    let mut lock = Lock::default();
    let mut report = Vec::with_capacity(assets.len());
    let mut written = Vec::new();
    for asset in assets {
        let base = game.package(manifest, asset)?.ok_or_else(|| {
            Error::usage(format!("the game has no package `{asset}`"))
                .with_hint("`zenpak list --game-dir GAME` lists the game's packages")
        })?;
        let blake3 = files_hash(&base.files)?;
        let changed = old
            .get(asset)
            .is_none_or(|e| e.blake3 != blake3 || e.path != base.relative_path);
        crate::mount::validate_relative_path(&base.relative_path)?;
        let header = dir.join(&base.relative_path);
        let mut files = vec![(header.clone(), base.files.header.clone())];
        files.push((header.with_extension("uexp"), base.files.uexp.clone()));
        for companion in &base.files.bulk {
            files.push((
                header.with_extension(companion.kind.extension()),
                companion.read()?,
            ));
        }
        for (path, bytes) in &files {
            if std::fs::read(path).ok().as_deref() != Some(bytes.as_slice()) {
                if let Some(parent) = path.parent() {
                    std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
                }
                crate::publish::write_file(path, |f| {
                    use std::io::Write;
                    f.write_all(bytes).map_err(|e| Error::io(f.path(), e))
                })?;
            }
            written.push(path.clone());
        }
        let source = base
            .origin
            .split(" in ")
            .next()
            .unwrap_or_default()
            .to_string();
        report.push(Vendored {
            asset: asset.to_string(),
            path: base.relative_path.clone(),
            source: source.clone(),
            changed,
        });
        lock.bases.push(LockedBase {
            asset: asset.to_string(),
            path: base.relative_path,
            source,
            blake3,
        });
    }
    // Files of bases no longer patched (or moved): only those the old lock named.
    for entry in &old.bases {
        let header = dir.join(&entry.path);
        let mut candidates = vec![header.clone(), header.with_extension("uexp")];
        for kind in crate::legacy::BulkKind::ALL {
            candidates.push(header.with_extension(kind.extension()));
        }
        for path in candidates {
            if !written.contains(&path)
                && std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file())
            {
                std::fs::remove_file(&path).map_err(|e| Error::io(&path, e))?;
            }
        }
    }
    let text = toml::to_string(&lock).map_err(|e| Error::internal(format!("lock: {e}")))?;
    let text = format!(
        "# Written by `zenpak patch vendor`: the game's packages the patches apply to,\n# vendored below this folder. Do not edit; vendor again after a game update.\n\n{text}"
    );
    std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
    let lock_path = dir.join(LOCK_NAME);
    crate::publish::write_file(&lock_path, |f| {
        use std::io::Write;
        f.write_all(text.as_bytes())
            .map_err(|e| Error::io(f.path(), e))
    })?;
    Ok(report)
}
