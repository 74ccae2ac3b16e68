//! Where a patched asset's base comes from: a cooked legacy file in the
//! repository (`base = "…"`), or the game's own copy of the package
//! (`asset = "/Game/…"`), read from the game's paks and containers (not
//! its mod folders), converted from Zen in memory as `extract` converts.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::extract::container::ViewSource;
use crate::extract::single::{find_package, Lookup, SourcePackages};
use crate::extract::ExtractOptions;
use crate::legacy::PackageFiles;
use crate::manifest::Manifest;
use crate::pak::crypto::KeyRing;
use crate::version::EngineVersion;

/// A base package, as legacy files in memory.
pub struct Base {
    /// The package name it is built as (`/Game/Data/DT_Weapons`).
    pub package: String,
    pub files: PackageFiles,
    /// The header's path in the container the mod builds
    /// (`MyGame/Content/Data/DT_Weapons.uasset`).
    pub relative_path: String,
    /// Where it was read from, for messages (a file, or a container of the game).
    pub origin: String,
}

/// The game whose packages patches apply to.
pub struct Game {
    source: ViewSource,
    paks: PathBuf,
}

impl Game {
    /// The game whose `Paks/` folder is `paks`.
    pub fn open(paks: &Path, keys: &KeyRing) -> Result<Game> {
        Ok(Game {
            source: ViewSource::open_game_shipped(paks, keys)?,
            paks: paks.to_path_buf(),
        })
    }

    /// How the game's packages are looked up (the name left to fill).
    fn lookup(engine: EngineVersion, package: &str) -> Lookup<'_> {
        Lookup {
            package,
            engine: Some(engine),
            script_objects: None,
            options: ExtractOptions {
                allow_unresolved: false,
                verify: false,
            },
        }
    }

    /// The game as a source of the schemas a package needs (a blueprint
    /// parent, a user-defined struct).
    pub fn schema_packages(&self, manifest: &Manifest) -> SourcePackages<'_> {
        SourcePackages {
            source: &self.source,
            lookup: Game::lookup(manifest.game.engine, ""),
        }
    }

    /// The game's copy of `package` (`/Game/Data/DT_Weapons`), if it has one.
    pub fn package(&self, manifest: &Manifest, package: &str) -> Result<Option<Base>> {
        self.package_of(manifest.game.engine, package)
    }

    /// [`package`](Self::package) of a game of `engine`; `package` may
    /// also be a path as the view has it (`MyGame/Content/Data/DT_Weapons.uasset`).
    pub fn package_of(&self, engine: EngineVersion, package: &str) -> Result<Option<Base>> {
        let lookup = Game::lookup(engine, package);
        let Some(found) = find_package(&self.source, &lookup)? else {
            return Ok(None);
        };
        let relative_path = found.files.path.to_string_lossy().replace('\\', "/");
        Ok(Some(Base {
            package: package.to_string(),
            files: found.files,
            relative_path,
            origin: format!("{} in {}", found.source, self.paks.display()),
        }))
    }
}

/// The cooked package at `path` (relative to the mod's folder), built as
/// `asset` when given, else as the package name its header stores (or,
/// for a header that stores none, the error says to name it).
pub fn repository_base(manifest: &Manifest, path: &Path, asset: Option<&str>) -> Result<Base> {
    let full = manifest.dir.join(path);
    let mod_dir = match manifest.dir.as_os_str().is_empty() {
        true => Path::new("."),
        false => manifest.dir.as_path(),
    };
    let real = full.canonicalize().map_err(|e| Error::io(&full, e))?;
    let real_mod = mod_dir.canonicalize().map_err(|e| Error::io(mod_dir, e))?;
    if !real.starts_with(&real_mod) {
        return Err(Error::usage(format!(
            "the base `{}` leads outside the mod's folder, to `{}`",
            path.display(),
            real.display()
        ))
        .with_hint(
            "copy the cooked base into the repository; a patch reads only the mod's own files",
        ));
    }
    let files = PackageFiles::load(&full)?;
    let package = files.read_package(Some(manifest.game.engine))?;
    let name = match asset {
        Some(name) => name.to_string(),
        None => package.package_name().map(str::to_string).ok_or_else(|| {
            Error::usage(format!(
                "the base `{}` does not store its package name",
                path.display()
            ))
            .with_hint(
                "say which package it builds: `asset = \"/Game/Data/DT_Weapons\"` beside `base`",
            )
        })?,
    };
    let extension = full
        .extension()
        .map(|e| e.to_string_lossy().into_owned())
        .unwrap_or_else(|| "uasset".into());
    let relative_path = container_path(&manifest.game.project, &name, &extension)?;
    Ok(Base {
        package: name,
        files,
        relative_path,
        origin: full.display().to_string(),
    })
}

/// Where package `name` sits in the container: `/Game/X` is
/// `<Project>/Content/X`, `/Engine/X` is `Engine/Content/X`.
fn container_path(project: &str, name: &str, extension: &str) -> Result<String> {
    let (root, rest) = name
        .strip_prefix('/')
        .and_then(|n| n.split_once('/'))
        .ok_or_else(|| Error::usage(format!("`{name}` is not a package name")))?;
    let folder = match root {
        "Game" => project,
        "Engine" => "Engine",
        _ => {
            return Err(Error::usage(format!(
                "`{name}` is in a plugin's mount (`/{root}/`): where its files go is known only from the game"
            ))
            .with_hint("patch it with `asset` and `--game-dir`, which finds the package where the game has it"))
        }
    };
    Ok(format!("{folder}/Content/{rest}.{extension}"))
}
