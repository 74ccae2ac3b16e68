//! After a build: the release archive (`zenpak package`), installing into
//! and uninstalling from a game (`zenpak install`, `zenpak uninstall`) and
//! removing build output (`zenpak clean`).
//!
//! Every file is written through [`crate::publish`] (unique temporary, sync,
//! rename) and recorded as owned by this mod ([`owned::OwnedFiles`], keyed by the
//! manifest's path). Only recorded files that are still exactly as zenpak
//! wrote them are ever removed: `clean` never deletes by pattern and never
//! recurses, and `install` replaces the previous install of this mod (even
//! under its old name) by record. In a game's `~mods` the `.pak` is removed
//! first and written last: the game finds a mod through its `.pak`, so an
//! interrupted install leaves the old mod, or no mod, never a mixed one.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::build::BuildSummary;
use crate::error::{Error, Result};
use crate::game::folder::GameFolder;
use crate::manifest::Manifest;
use crate::publish::lock::OutputLock;
use crate::publish::temporary::{Staged, TempFile};
use owned::{OwnedFiles, Removal};

pub(crate) mod owned;

pub(crate) use crate::build::cache::CACHE_DIR;

/// Name of the release archive folder inside the output folder.
pub const PACKAGE_DIR: &str = "package";

/// The three output files of a manifest's build.
pub fn artifact_paths(manifest: &Manifest) -> [PathBuf; 3] {
    manifest.artifact_paths()
}

/// Hex SHA-256 of a file, read in blocks.
pub(crate) fn sha256_file(path: &Path) -> Result<String> {
    let mut file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut hasher = Sha256::new();
    std::io::copy(&mut file, &mut hasher).map_err(|e| Error::io(path, e))?;
    Ok(hex(&hasher.finalize()))
}

pub(crate) use crate::hash::hex;

/// The identity of a mod in ownership records: its manifest's absolute path.
pub(crate) fn owner_of(manifest: &Manifest) -> String {
    let path = manifest
        .manifest_path()
        .canonicalize()
        .unwrap_or_else(|_| manifest.manifest_path().to_path_buf());
    path.display().to_string()
}

/// Copies `from` into `to` (a temporary), hashing what it copies: returns
/// (BLAKE3, SHA-256) of the bytes.
fn copy_hashing(from: &Path, to: &mut dyn Write, to_path: &Path) -> Result<([u8; 32], String)> {
    let mut input = std::fs::File::open(from).map_err(|e| Error::io(from, e))?;
    let mut to = Hashing::new(to);
    let mut buffer = vec![0u8; 1 << 20];
    loop {
        let n = input.read(&mut buffer).map_err(|e| Error::io(from, e))?;
        if n == 0 {
            break;
        }
        to.write_all(&buffer[..n])
            .map_err(|e| Error::io(to_path, e))?;
    }
    Ok(to.finish())
}

/// A writer that hashes what passes through it (BLAKE3 and SHA-256).
struct Hashing<'a> {
    to: &'a mut dyn Write,
    blake: blake3::Hasher,
    sha: Sha256,
}

impl<'a> Hashing<'a> {
    fn new(to: &'a mut dyn Write) -> Self {
        Hashing {
            to,
            blake: blake3::Hasher::new(),
            sha: Sha256::new(),
        }
    }

    fn finish(self) -> ([u8; 32], String) {
        (*self.blake.finalize().as_bytes(), hex(&self.sha.finalize()))
    }
}

impl Write for Hashing<'_> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        let n = self.to.write(bytes)?;
        self.blake.update(&bytes[..n]);
        self.sha.update(&bytes[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.to.flush()
    }
}

/// Result of `zenpak package`.
#[derive(Debug, Clone, Serialize)]
pub struct ReleaseArchive {
    pub path: PathBuf,
    /// Hex SHA-256 of the zip.
    pub sha256: String,
    /// `<zip>.sha256` beside the zip: one `sha256sum` line naming it.
    pub(crate) checksum_file: PathBuf,
    /// Entries in the archive with their SHA-256.
    pub(crate) files: Vec<ArchiveEntry>,
    /// The platform it was made for.
    pub(crate) platform: crate::platform::Platform,
    /// The platform's metadata written beside the archive (Nexus Mods, mod.io).
    pub(crate) metadata_file: Option<PathBuf>,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct ArchiveEntry {
    pub(crate) name: String,
    pub(crate) sha256: String,
}

/// An error (`empty-mod`) when the build held no package and no loose file:
/// such a mod is a container with nothing in it, almost always a mistyped
/// `[content] root` or `include`. `build` only warns; `package` and
/// `install` refuse before writing anything.
pub(crate) fn refuse_empty(manifest: &Manifest, summary: &BuildSummary) -> Result<()> {
    if summary.packages > 0 || summary.loose_files > 0 {
        return Ok(());
    }
    let include = if manifest.content.include.is_empty() {
        "(none: every file)".to_string()
    } else {
        manifest
            .content
            .include
            .iter()
            .map(|p| format!("`{p}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    Err(Error::new(crate::error::ErrorKind::EmptyMod(format!(
        "the mod is empty: no package and no file under `[content] root` ({}) matched `[content] include` {include}; nothing to ship",
        manifest.content_root().display()
    )))
    .in_file(&manifest.path)
    .with_hint(format!(
        "check that `[content] root` is the folder holding `{}/Content/...` and that the include patterns (relative to the root) match the cooked files; `zenpak check` counts what they select",
        manifest.game.project
    )))
}

/// Writes `<output>/package/<name>-<version>.zip` holding the triplet the
/// build `summary` describes under `~mods/` and a `SHA256SUMS` file, and
/// beside it `<name>-<version>.zip.sha256` (the zip's SHA-256 as `sha256sum`
/// writes it, so `sha256sum -c` checks a download). The archive is reproducible (fixed entry order and timestamps). Each file is
/// checked, as it is read, to be the one the build wrote. Call with the
/// output folder locked, right after the build.
pub fn package(
    manifest: &Manifest,
    summary: &BuildSummary,
    platform: crate::platform::Platform,
) -> Result<ReleaseArchive> {
    refuse_empty(manifest, summary)?;
    let artifacts: Vec<PathBuf> = summary.artifacts.iter().map(|a| a.path.clone()).collect();
    let plan = crate::platform::plan(manifest, platform, &artifacts)?;
    let dir = manifest.output_dir().join(PACKAGE_DIR);
    std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
    let archive = dir.join(&plan.archive);
    let mut temp = TempFile::create(&archive)?;
    let temp_path = temp.path().to_path_buf();
    let mut files = Vec::new();
    {
        let mut zip = zip::ZipWriter::new(temp.file());
        // Deflated: containers are mostly built uncompressed, so the download shrinks a lot.
        // The default DateTime (1980-01-01) keeps the archive free of build times.
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated)
            .last_modified_time(zip::DateTime::default())
            .unix_permissions(0o644)
            .large_file(true);
        for entry in &plan.entries {
            let name = entry.name.clone();
            zip.start_file(name.as_str(), options)
                .map_err(|e| Error::io(&temp_path, std::io::Error::other(e)))?;
            let sha256 = match (&entry.from, &entry.bytes, entry.release_key) {
                (Some(from), _, Some(key)) => {
                    let mut to = Hashing::new(&mut zip);
                    crate::platform::copy_release_file(manifest, key, from, &mut to, &temp_path)?;
                    to.finish().1
                }
                (Some(from), _, None) => {
                    let (blake, sha256) = copy_hashing(from, &mut zip, &temp_path)?;
                    if entry.artifact {
                        if let Some(artifact) = summary.artifacts.iter().find(|a| &a.path == from) {
                            artifact.check_hash(&blake)?;
                        }
                    }
                    sha256
                }
                (None, Some(bytes), _) => {
                    zip.write_all(bytes).map_err(|e| Error::io(&temp_path, e))?;
                    hex(&Sha256::digest(bytes))
                }
                (None, None, _) => return Err(Error::internal("a planned entry has no contents")),
            };
            files.push(ArchiveEntry { name, sha256 });
        }
        let sums: String = files
            .iter()
            .map(|f| format!("{}  {}\n", f.sha256, f.name))
            .collect();
        zip.start_file("SHA256SUMS", options)
            .map_err(|e| Error::io(&temp_path, std::io::Error::other(e)))?;
        zip.write_all(sums.as_bytes())
            .map_err(|e| Error::io(&temp_path, e))?;
        zip.finish()
            .map_err(|e| Error::io(&temp_path, std::io::Error::other(e)))?;
    }
    let sha256 = sha256_file(&temp_path)?;
    let checksum_file = checksum_path(&archive);
    let checksum_text = format!(
        "{sha256}  {}\n",
        archive
            .file_name()
            .ok_or_else(|| Error::internal("the archive has no file name"))?
            .to_string_lossy()
    );
    let mut sums = TempFile::create(&checksum_file)?;
    sums.write_all(checksum_text.as_bytes())
        .map_err(|e| Error::io(&checksum_file, e))?;
    let mut staged = vec![sums.stage()?];
    let metadata = match (&plan.beside, &plan.manifest) {
        (Some(name), Some(json)) => {
            let path = dir.join(name);
            let mut text = serde_json::to_vec_pretty(json).expect("JSON serialises");
            text.push(b'\n');
            let mut file = TempFile::create(&path)?;
            file.write_all(&text).map_err(|e| Error::io(&path, e))?;
            staged.push(file.stage()?);
            Some((path, hex(&Sha256::digest(&text))))
        }
        _ => None,
    };
    staged.push(temp.stage()?);
    crate::publish::publish(Vec::new(), staged)?;
    let mut owned = OwnedFiles::load(&dir);
    let owner = owner_of(manifest);
    owned.insert(&dir, &archive, sha256.clone(), &owner)?;
    owned.insert(
        &dir,
        &checksum_file,
        hex(&Sha256::digest(checksum_text.as_bytes())),
        &owner,
    )?;
    if let Some((path, hash)) = &metadata {
        owned.insert(&dir, path, hash.clone(), &owner)?;
    }
    owned.save(&dir)?;
    Ok(ReleaseArchive {
        sha256,
        checksum_file,
        path: archive,
        files,
        platform,
        metadata_file: metadata.map(|(path, _)| path),
    })
}

/// `<archive>.sha256`: the checksum file written beside a release archive.
pub(crate) fn checksum_path(archive: &Path) -> PathBuf {
    let mut name = archive.as_os_str().to_os_string();
    name.push(".sha256");
    PathBuf::from(name)
}

/// The user's configuration (`<config dir>/zenpak/config.toml`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct UserConfig {
    /// Game install folders by project name: `[games] MyGame = "C:/Games/MyGame"`.
    #[serde(default)]
    pub(crate) games: std::collections::BTreeMap<String, PathBuf>,
}

impl UserConfig {
    /// Where the configuration lives (`$XDG_CONFIG_HOME/zenpak/config.toml`,
    /// `%APPDATA%\zenpak\config.toml`, `~/Library/Application Support/zenpak/config.toml`).
    pub fn path() -> Option<PathBuf> {
        std::env::var_os("ZENPAK_CONFIG")
            .map(PathBuf::from)
            .or_else(|| dirs::config_dir().map(|d| d.join("zenpak").join("config.toml")))
    }

    /// Loads the configuration; a missing file is the empty configuration.
    pub(crate) fn load() -> Result<UserConfig> {
        let Some(path) = Self::path() else {
            return Ok(UserConfig::default());
        };
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(UserConfig::default()),
            Err(e) => return Err(Error::io(&path, e)),
        };
        toml::from_str(&text).map_err(|e| Error::usage(e.message().trim_end()).in_file(&path))
    }
}

/// Where `install` goes when no `--game-dir` is given: `ZENPAK_GAME_DIR`
/// (several folders separated as in `PATH`), else the user configuration's
/// entry for the project.
pub fn default_game_dirs(project: &str) -> Result<Vec<PathBuf>> {
    if let Some(value) = std::env::var_os("ZENPAK_GAME_DIR") {
        let dirs: Vec<PathBuf> = std::env::split_paths(&value)
            .filter(|p| !p.as_os_str().is_empty())
            .collect();
        if !dirs.is_empty() {
            return Ok(dirs);
        }
    }
    let config = UserConfig::load()?;
    Ok(config.games.get(project).cloned().into_iter().collect())
}

/// A file in `~mods` that `install` would replace but did not write for this mod.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Conflict {
    pub path: PathBuf,
    /// Whose it is: another mod's record, nobody's, or this mod's but changed since.
    pub owner: FileOwner,
}

/// Who a file in a game's `~mods` belongs to, as the ownership record says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum FileOwner {
    /// Another mod's install wrote it (its manifest's path).
    OtherMod { manifest: String },
    /// No record names it: not written by `zenpak install`.
    Nobody,
    /// This mod's install wrote it, but it changed since.
    ChangedSinceInstall,
}

impl Conflict {
    fn describe(&self) -> String {
        match &self.owner {
            FileOwner::OtherMod { manifest } => format!(
                "{} belongs to another mod (installed from {manifest})",
                self.path.display()
            ),
            FileOwner::Nobody => format!(
                "{} was not installed by zenpak (no ownership record names it)",
                self.path.display()
            ),
            FileOwner::ChangedSinceInstall => format!(
                "{} was installed by this mod but changed since",
                self.path.display()
            ),
        }
    }
}

/// What `install` did (or, with `dry_run`, would do) in one game.
#[derive(Debug, Clone, Default, Serialize)]
pub struct InstallReport {
    pub(crate) game_dir: PathBuf,
    pub(crate) mods_dir: PathBuf,
    pub installed: Vec<PathBuf>,
    /// Files of the previous install of this mod that were removed.
    pub removed: Vec<PathBuf>,
    /// Files of the previous install that changed since and were left in place.
    pub kept: Vec<PathBuf>,
    /// Files in the way that this mod did not write: replaced with `force`,
    /// otherwise the install is refused (a dry run says it would be).
    pub conflicts: Vec<Conflict>,
    /// Whether the install was (or would be) refused because of `conflicts`.
    pub refused: bool,
    /// What is wrong with the folder's ownership record (damaged entries are left alone).
    pub damaged_record: Vec<String>,
    pub dry_run: bool,
}

/// How `install` and `uninstall` go about a game folder.
#[derive(Debug, Clone, Copy, Default)]
pub struct InstallOptions {
    /// Say what would be done, change nothing.
    pub dry_run: bool,
    /// Replace files in the way that this mod did not write.
    pub force: bool,
}

/// Locks a game's `~mods` folder for this process (one `install` or
/// `uninstall` at a time; the same lock as a build's output folder).
fn lock_mods(mods: &Path, waiting: &mut dyn FnMut(Option<u32>)) -> Result<OutputLock> {
    OutputLock::acquire(mods, waiting)
}

/// Releases the `~mods` lock, removing the lock file when zenpak leaves
/// nothing else of its own there (the ownership record is gone).
fn unlock_mods(mods: &Path, lock: OutputLock) -> Result<()> {
    if OwnedFiles::record_path(mods).exists() {
        drop(lock);
        Ok(())
    } else {
        lock.release_removing().map(|_| ())
    }
}

/// Whose `path` (a file in `mods`) is, when it is in the way of this mod's install.
fn conflict_at(owned: &OwnedFiles, mods: &Path, path: &Path, owner: &str) -> Option<Conflict> {
    std::fs::symlink_metadata(path).ok()?;
    let owner = match owned.get(mods, path) {
        Some(f) if f.owner == owner => {
            if f.is_on_disk(path).unwrap_or(false) {
                return None;
            }
            FileOwner::ChangedSinceInstall
        }
        Some(f) => FileOwner::OtherMod {
            manifest: f.owner.clone(),
        },
        None => FileOwner::Nobody,
    };
    Some(Conflict {
        path: path.to_path_buf(),
        owner,
    })
}

/// The error for an install refused because of `conflicts`.
fn refusal(conflicts: &[Conflict]) -> Error {
    let hint = "remove or move the file yourself, or pass --force to replace it \
                (`--dry-run` lists every file in the way)";
    let one = |c: &Conflict| {
        Error::new(crate::error::ErrorKind::NotOwned(format!(
            "refusing to replace: {}",
            c.describe()
        )))
        .in_file(&c.path)
        .with_hint(hint)
    };
    match conflicts {
        [c] => one(c),
        _ => Error::new(crate::error::ErrorKind::Many {
            what: "files to install",
            total: conflicts.len(),
            failures: conflicts.iter().map(one).collect(),
        })
        .with_hint(hint),
    }
}

/// Installs the triplet of `summary` into `<game_dir>/<project>/Content/Paks/~mods/`,
/// replacing this mod's previous install by record. A file in the way that
/// this mod did not write (another mod's, nobody's, or this mod's changed
/// since) is never replaced unless `options.force`: the install is refused
/// first, nothing written. Runs under the `~mods` lock (`waiting` is called
/// when another zenpak holds it). Order: the new `.ucas` and `.utoc` are
/// staged, the old `.pak` is removed, the new files are renamed into place
/// `.pak` last, then the rest of the previous install goes.
pub fn install(
    manifest: &Manifest,
    summary: &BuildSummary,
    game: &GameFolder,
    options: InstallOptions,
    waiting: &mut dyn FnMut(Option<u32>),
) -> Result<InstallReport> {
    refuse_empty(manifest, summary)?;
    let game_dir = &game.root;
    let mods = game.mods();
    let created_folder = !mods.exists();
    let lock = if options.dry_run {
        None
    } else {
        Some(lock_mods(&mods, waiting).map_err(|e| in_game_folder(e, &mods, "install"))?)
    };
    let report = install_locked(manifest, summary, game_dir, &mods, options, created_folder);
    if let Some(lock) = lock {
        unlock_mods(&mods, lock).map_err(|e| in_game_folder(e, &mods, "install"))?;
    }
    report.map_err(|e| in_game_folder(e, &mods, "install"))
}

/// A refused file in a game's `~mods` folder: says what zenpak was doing
/// there and what to do (close the game that holds its files open; a game
/// under Program Files needs write access given).
fn in_game_folder(e: Error, mods: &Path, command: &str) -> Error {
    use crate::error::Refusal;
    let doing = format!(
        "zenpak {command} {} the game's mod folder {}",
        if command == "install" {
            "writes into"
        } else {
            "removes this mod's files from"
        },
        mods.display()
    );
    match e.refusal() {
        Some(Refusal::InUse) => e.replace_hint(format!(
            "{doing}, and the game (or its launcher, or another tool) has this file open: \
             close the game, then run `zenpak {command}` again"
        )),
        Some(Refusal::PermissionDenied) => e.replace_hint(format!(
            "{doing}, and your user may not write there: if the game is running, close it; \
             otherwise give your user write access to that folder (a game under Program Files \
             is not writable by default) or run zenpak from an administrator prompt"
        )),
        Some(Refusal::ReadOnly | Refusal::DiskFull | Refusal::FileTooLarge) => {
            let hint = format!("{doing}: {}", e.hint().unwrap_or_default());
            e.replace_hint(hint)
        }
        None => e,
    }
}

/// The mount-order checks of [`crate::game::conflicts::mount_order_checks`]
/// for this mod about to be installed into `game`: its built `.pak` when
/// there is a build, else the name a build gives it (`check --game-dir`);
/// when installing a build, also `override-not-loaded` (the mod mounted
/// where it goes, `game::conflicts::lost_overrides`).
/// The files this mod installed before (by ownership record) are left out.
pub fn mount_order_warnings(
    manifest: &Manifest,
    summary: Option<&BuildSummary>,
    game: &GameFolder,
) -> Result<Vec<crate::diagnostic::Diagnostic>> {
    let built = summary.and_then(|s| {
        s.artifacts
            .iter()
            .map(|a| a.path.clone())
            .find(|p| p.extension().is_some_and(|e| e.eq_ignore_ascii_case("pak")))
    });
    let built = built.unwrap_or_else(|| {
        manifest
            .output_dir()
            .join(format!("{}.pak", manifest.artifact_stem()))
    });
    let built = built.as_path();
    let mods = game.mods();
    let own = OwnedFiles::load(&mods).paths_of(&mods, &owner_of(manifest));
    let mut found = crate::game::conflicts::mount_order_checks(game, built, &own)?;
    // Installing: which of the mod's overrides the game will load
    // (`check --game-dir` says it from the mod's packages instead).
    if summary.is_some() {
        found.extend(crate::game::conflicts::lost_overrides(game, built, &own));
    }
    Ok(found)
}

fn install_locked(
    manifest: &Manifest,
    summary: &BuildSummary,
    game_dir: &Path,
    mods: &Path,
    options: InstallOptions,
    created_folder: bool,
) -> Result<InstallReport> {
    let owner = owner_of(manifest);
    let mut owned = OwnedFiles::load(mods);
    owned.created_folder |= created_folder;
    let previous = owned.paths_of(mods, &owner);
    let targets: Vec<PathBuf> = summary
        .artifacts
        .iter()
        .map(|a| mods.join(a.path.file_name().unwrap_or_default()))
        .collect();
    let conflicts: Vec<Conflict> = targets
        .iter()
        .filter_map(|t| conflict_at(&owned, mods, t, &owner))
        .collect();
    let mut report = InstallReport {
        game_dir: game_dir.to_path_buf(),
        mods_dir: mods.to_path_buf(),
        installed: targets.clone(),
        refused: !conflicts.is_empty() && !options.force,
        conflicts,
        damaged_record: owned.problems(mods),
        dry_run: options.dry_run,
        ..InstallReport::default()
    };
    if options.dry_run {
        if !report.refused {
            report.removed = previous
                .into_iter()
                .filter(|p| !targets.contains(p))
                .collect();
        } else {
            report.installed.clear();
        }
        return Ok(report);
    }
    if report.refused {
        return Err(refusal(&report.conflicts));
    }
    std::fs::create_dir_all(mods).map_err(|e| Error::io(mods, e))?;
    // Full-size temporaries a killed install left (no live zenpak owns
    // them: the folder is locked).
    crate::publish::temporary::remove_leftover_temporaries(mods)?;
    // Stage all three (checking each is what the build wrote), .pak last.
    let mut staged: Vec<Staged> = Vec::new();
    let mut hashes = Vec::new();
    for (artifact, target) in summary.artifacts.iter().zip(&targets) {
        let mut temp = TempFile::create(target)?;
        let temp_path = temp.path().to_path_buf();
        let (blake, sha256) = copy_hashing(&artifact.path, temp.file(), &temp_path)?;
        artifact.check_hash(&blake)?;
        staged.push(temp.stage()?);
        hashes.push(sha256);
    }
    // Every `.pak` of the previous install goes before anything new appears.
    let mut remove_first: Vec<PathBuf> = previous
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e.eq_ignore_ascii_case("pak")))
        .filter(|p| owned.is_unchanged(mods, p))
        .cloned()
        .collect();
    remove_first.sort();
    // The record names the new files before the first rename: stopped at
    // any point after (Ctrl-C waits for the renames, then nothing more is
    // written; a kill), the next run finds which are in place.
    for ((file, target), sha256) in staged.iter().zip(&targets).zip(&hashes) {
        owned.expect(mods, target, file, sha256.clone(), &owner)?;
    }
    owned.save(mods)?;
    crate::publish::publish(remove_first.clone(), staged)?;
    for old in &remove_first {
        if !targets.contains(old) {
            report.removed.push(old.clone());
        }
        owned.forget(mods, old);
    }
    for old in previous
        .iter()
        .filter(|p| !targets.contains(p) && !remove_first.contains(p))
    {
        match owned.remove(mods, old)? {
            Removal::Removed(p) => report.removed.push(p),
            Removal::KeptChanged(p) => report.kept.push(p),
            Removal::Missing(_) => {}
        }
    }
    // A replaced file is this mod's now: the other mod's entry goes with it.
    owned.pending.clear();
    for (target, sha256) in targets.iter().zip(hashes) {
        owned.insert(mods, target, sha256, &owner)?;
    }
    owned.save(mods)?;
    Ok(report)
}

/// What `uninstall` did in one game.
#[derive(Debug, Clone, Default, Serialize)]
pub struct UninstallReport {
    pub(crate) game_dir: PathBuf,
    pub removed: Vec<PathBuf>,
    pub kept: Vec<PathBuf>,
    /// What is wrong with the folder's ownership record (damaged entries are left alone).
    pub damaged_record: Vec<String>,
    pub dry_run: bool,
}

/// Removes what `install` recorded for this mod in a game (`.pak` first):
/// only files still as the install wrote them; others are kept (and
/// reported). Runs under the `~mods` lock.
pub fn uninstall(
    manifest: &Manifest,
    game: &GameFolder,
    dry_run: bool,
    waiting: &mut dyn FnMut(Option<u32>),
) -> Result<UninstallReport> {
    let game_dir = &game.root;
    let mods = game.mods();
    if dry_run || !is_real_dir(&mods) {
        return uninstall_locked(manifest, game_dir, &mods, dry_run);
    }
    let lock = lock_mods(&mods, waiting).map_err(|e| in_game_folder(e, &mods, "uninstall"))?;
    // Read under the lock: on Windows, a record another zenpak reads cannot
    // be replaced, and one installing or uninstalling now replaces it.
    let created_folder = OwnedFiles::load(&mods).created_folder;
    let report = uninstall_locked(manifest, game_dir, &mods, dry_run);
    unlock_mods(&mods, lock).map_err(|e| in_game_folder(e, &mods, "uninstall"))?;
    let mut report = report.map_err(|e| in_game_folder(e, &mods, "uninstall"))?;
    // The `~mods` folder install created goes with the last mod, if nothing else is in it.
    if created_folder
        && !OwnedFiles::record_path(&mods).exists()
        && std::fs::read_dir(&mods).is_ok_and(|mut d| d.next().is_none())
        && std::fs::remove_dir(&mods).is_ok()
    {
        report.removed.push(mods);
    }
    Ok(report)
}

fn uninstall_locked(
    manifest: &Manifest,
    game_dir: &Path,
    mods: &Path,
    dry_run: bool,
) -> Result<UninstallReport> {
    let owner = owner_of(manifest);
    let mut owned = OwnedFiles::load(mods);
    let mut mine = owned.paths_of(mods, &owner);
    // `.pak` first: the game stops seeing the mod before its data goes.
    mine.sort_by_key(|p| !p.extension().is_some_and(|e| e.eq_ignore_ascii_case("pak")));
    let mut report = UninstallReport {
        game_dir: game_dir.to_path_buf(),
        damaged_record: owned.problems(mods),
        dry_run,
        ..UninstallReport::default()
    };
    if dry_run {
        for path in mine {
            if owned.is_unchanged(mods, &path) {
                report.removed.push(path);
            } else if path.exists() {
                report.kept.push(path);
            }
        }
        return Ok(report);
    }
    // Full-size temporaries a killed install left (the folder is locked;
    // not when it is not a folder of its own, which is not locked either).
    if is_real_dir(mods) {
        crate::publish::temporary::remove_leftover_temporaries(mods)?;
    }
    if mine.is_empty() {
        return Ok(report);
    }
    for path in mine {
        match owned.remove(mods, &path)? {
            Removal::Removed(p) => report.removed.push(p),
            Removal::KeptChanged(p) => report.kept.push(p),
            Removal::Missing(_) => {}
        }
    }
    owned.save(mods)?;
    Ok(report)
}

/// What `clean` did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CleanReport {
    pub removed: Vec<PathBuf>,
    /// Files zenpak wrote that changed since: left in place.
    pub kept: Vec<PathBuf>,
    /// Damaged records (a name that is not a plain file of its folder):
    /// what they name was left alone.
    pub damaged_record: Vec<String>,
}

/// Removes what `zenpak build` and `zenpak package` wrote for this mod: the
/// triplet the last build recorded, its release archives, its cache (the
/// entry pack and the bookkeeping files, by name), and zenpak's own
/// temporaries; then each folder that is left empty. Nothing is removed by
/// pattern except zenpak's temporaries and an earlier layout's cache entries
/// (named by their hash), and nothing through a symbolic link.
pub fn clean(manifest: &Manifest) -> Result<CleanReport> {
    let dir = manifest.output_dir();
    let mut report = CleanReport::default();
    // The output folder itself may be a link (a `target` on another disk);
    // nothing inside it is followed, and the link's destination stays.
    if !dir.is_dir() {
        return Ok(report);
    }
    let lock = OutputLock::acquire(&dir, |_| {})?;
    let cache = crate::build::cache::Cache::new(&dir, &manifest.artifact_stem());
    // The triplet, as the last build recorded it.
    if let Some(record) = cache.load_build_record() {
        for artifact in &record.artifacts {
            if let Err(why) = owned::checked_recorded_file(&dir, &artifact.path) {
                report.damaged_record.push(format!(
                    "the build record {} is damaged: {why}; it was left alone",
                    cache.build_record_path().display()
                ));
                continue;
            }
            if artifact.is_unchanged() {
                remove(&artifact.path, &mut report)?;
            } else if artifact.path.exists() {
                report.kept.push(artifact.path.clone());
            }
        }
    }
    // Release archives owned by this mod.
    let package_dir = dir.join(PACKAGE_DIR);
    if is_real_dir(&package_dir) {
        let owner = owner_of(manifest);
        let mut owned = OwnedFiles::load(&package_dir);
        report.damaged_record.extend(owned.problems(&package_dir));
        for path in owned.paths_of(&package_dir, &owner) {
            match owned.remove(&package_dir, &path)? {
                Removal::Removed(p) => report.removed.push(p),
                Removal::KeptChanged(p) => report.kept.push(p),
                Removal::Missing(_) => {}
            }
        }
        if owned.unreadable.is_some() {
            // Left as it is: damaged, and nothing of it was acted on.
        } else if owned.files.is_empty() && owned.damaged.is_empty() {
            remove(&OwnedFiles::record_path(&package_dir), &mut report)?;
        } else {
            owned.save(&package_dir)?;
        }
        remove_temporaries_in(&package_dir, &mut report)?;
        remove_dir_if_empty(&package_dir, &mut report)?;
    }
    crate::build::clean_cache(&cache, &mut report.removed)?;
    remove_temporaries_in(&dir, &mut report)?;
    // The lock file goes when no zenpak build state is left (another mod
    // sharing the folder keeps its cache, and the lock with it); then the
    // folder goes if it is empty.
    if dir.join(CACHE_DIR).exists() {
        drop(lock);
    } else {
        let lock_path = lock.path().to_path_buf();
        if lock.release_removing()? {
            report.removed.push(lock_path);
        }
    }
    remove_dir_if_empty(&dir, &mut report)?;
    Ok(report)
}

/// A folder that is not a symbolic link.
fn is_real_dir(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir())
}

fn remove(path: &Path, report: &mut CleanReport) -> Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_file() => {
            std::fs::remove_file(path).map_err(|e| Error::io(path, e))?;
            report.removed.push(path.to_path_buf());
            Ok(())
        }
        _ => Ok(()),
    }
}

fn remove_temporaries_in(dir: &Path, report: &mut CleanReport) -> Result<()> {
    report
        .removed
        .extend(crate::publish::temporary::remove_leftover_temporaries(dir)?);
    Ok(())
}

/// Removes a folder only if it is empty (never recursively).
pub(crate) fn remove_dir_if_empty(dir: &Path, report: &mut CleanReport) -> Result<()> {
    if is_real_dir(dir)
        && std::fs::read_dir(dir)
            .map(|mut d| d.next().is_none())
            .unwrap_or(false)
    {
        std::fs::remove_dir(dir).map_err(|e| Error::io(dir, e))?;
        report.removed.push(dir.to_path_buf());
    }
    Ok(())
}
