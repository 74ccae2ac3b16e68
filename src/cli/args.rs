//! Arguments shared by several commands (cargo's "command prelude" idea):
//! where the manifest is, which engine, which game folders, which AES keys,
//! and what container, pak or game folder to read.

use std::path::PathBuf;

use clap::builder::{PossibleValuesParser, TypedValueParser};
use zenpak::manifest::Manifest;
use zenpak::pak::crypto::KeyRing;
use zenpak::{EngineVersion, Error, Result};

/// The mappings given, else the nearest mod.toml's.
pub(crate) fn load_mappings(
    given: Option<&std::path::Path>,
    out: &super::Output,
) -> Result<Option<zenpak::mappings::Mappings>> {
    let path = match given {
        Some(p) => Some(p.to_path_buf()),
        None => nearest_manifest().and_then(|(manifest, at)| {
            let path = manifest.mappings_path()?;
            out.verbose_status(
                "Using",
                format!("mappings {} from {}", path.display(), at.display()),
            );
            Some(path)
        }),
    };
    let Some(path) = path else {
        return Ok(None);
    };
    let mappings = zenpak::mappings::Mappings::load(&path)?;
    out.diagnostics(&mappings.diagnostics);
    Ok(Some(mappings))
}

/// `--engine` as given, else the nearest mod.toml's `[game] engine`; the
/// usage error asks `question` (`which engine wrote these packages?`).
pub(crate) fn engine_or_nearest(
    given: Option<EngineVersion>,
    question: &str,
) -> Result<EngineVersion> {
    given
        .or_else(|| engine_from_nearest_manifest().map(|(engine, _)| engine))
        .ok_or_else(|| {
            Error::usage(question.to_string()).with_hint(
                "pass --engine (e.g. --engine 5.6), or run inside a mod whose mod.toml sets `[game] engine`",
            )
        })
}

/// Where the manifest is; shared by every command that works on a mod.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct ManifestArgs {
    /// Path to mod.toml (default: found by walking up from the current folder).
    #[arg(long, value_name = "PATH")]
    pub(crate) manifest_path: Option<PathBuf>,
}

impl ManifestArgs {
    pub(crate) fn load(&self) -> Result<Manifest> {
        let path = match &self.manifest_path {
            Some(p) => p.clone(),
            None => Manifest::find(&std::env::current_dir().map_err(|e| Error::io(".", e))?)?,
        };
        Manifest::load(&path)
    }
}

/// The parser of `--engine`: lists the supported versions in `--help` and
/// in the error for an unknown one.
pub(crate) fn engine_parser() -> impl TypedValueParser<Value = EngineVersion> {
    PossibleValuesParser::new(EngineVersion::ALL.map(|v| v.as_str()))
        .map(|s| s.parse::<EngineVersion>().expect("listed versions parse"))
}

/// The engine a command inside a mod uses when `--engine` is not given:
/// the nearest `mod.toml`'s `[game] engine`.
pub(crate) fn engine_from_nearest_manifest() -> Option<(EngineVersion, PathBuf)> {
    nearest_manifest().map(|(manifest, path)| (manifest.game.engine, path))
}

/// The nearest `mod.toml` above the current folder, if one loads.
pub(crate) fn nearest_manifest() -> Option<(Manifest, PathBuf)> {
    let cwd = std::env::current_dir().ok()?;
    let path = Manifest::find(&cwd).ok()?;
    let manifest = Manifest::load(&path).ok()?;
    Some((manifest, path))
}

/// One or more game install folders.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct GameDirArgs {
    /// The game's install folder (holding `<Project>/Content/Paks`); repeat
    /// for several. Default: `ZENPAK_GAME_DIR`, else `[games]` in the user
    /// configuration (`zenpak config-path` shows where).
    #[arg(long = "game-dir", value_name = "DIR")]
    pub(crate) game_dirs: Vec<PathBuf>,
    /// Say what would be written and removed, and change nothing.
    #[arg(long)]
    pub(crate) dry_run: bool,
}

impl GameDirArgs {
    pub(crate) fn resolve(&self, manifest: &Manifest) -> Result<Vec<PathBuf>> {
        if !self.game_dirs.is_empty() {
            return Ok(self.game_dirs.clone());
        }
        let dirs = zenpak::release::default_game_dirs(&manifest.game.project)?;
        if dirs.is_empty() {
            let config = zenpak::release::UserConfig::path()
                .map(|p| p.display().to_string())
                .unwrap_or_else(|| "the user configuration".into());
            return Err(Error::usage("no game folder given").with_hint(format!(
                "pass --game-dir DIR, set ZENPAK_GAME_DIR, or add `[games] {} = \"DIR\"` to {config}",
                manifest.game.project
            )));
        }
        Ok(dirs)
    }
}

/// Locates the game install folder from the folder given (any folder of
/// the game) and says which one was taken when it differs.
pub(crate) fn game_folder(
    out: &super::output::Output,
    given: &std::path::Path,
    project: Option<&str>,
) -> Result<zenpak::game::folder::GameFolder> {
    let folder = zenpak::game::folder::GameFolder::locate(given, project)?;
    out.diagnostics(&folder.notes);
    Ok(folder)
}

/// The game's Paks folder: `--game` as given, or `--game-dir` located (the
/// nearest mod.toml's `[game] project`, when there is one, picks the project).
pub(crate) fn game_paks(
    out: &super::output::Output,
    game: Option<&std::path::Path>,
    game_dir: Option<&std::path::Path>,
) -> Result<Option<PathBuf>> {
    let Some(dir) = game_dir else {
        return Ok(game.map(std::path::Path::to_path_buf));
    };
    let project = nearest_manifest().map(|(m, _)| m.game.project);
    Ok(Some(game_folder(out, dir, project.as_deref())?.paks()))
}

#[derive(Debug, Clone, clap::Args)]
pub(crate) struct KeyArgs {
    /// AES-256 key: 64 hex digits (0x optional) or base64; `GUID:KEY` for a
    /// key that only files with that key GUID use. Repeatable.
    #[arg(long = "aes-key", value_name = "KEY")]
    pub(crate) aes_keys: Vec<String>,
    /// File holding keys: one key, lines of GUID:KEY, or an UnrealPak
    /// Crypto.json. The `ZENPAK_AES_KEY` environment variable is read too.
    #[arg(long, value_name = "FILE")]
    pub(crate) aes_key_file: Option<PathBuf>,
}

impl KeyArgs {
    /// Every key given: environment first, then the key file, then
    /// `--aes-key` (a later source wins for the same GUID).
    pub(crate) fn keys(&self) -> Result<KeyRing> {
        let mut ring = KeyRing::from_env()?;
        if let Some(path) = &self.aes_key_file {
            ring.extend(KeyRing::from_file(path)?);
        }
        for spec in &self.aes_keys {
            ring.add_spec(spec)
                .map_err(|e| zenpak::Error::usage(format!("--aes-key: {}", e.message())))?;
        }
        Ok(ring)
    }
}

/// A container, pak or game folder to read, `--json`, and the AES keys.
#[derive(Debug, clap::Args)]
pub(crate) struct SourceArgs {
    /// A `.utoc` (with its `.pak`), a `.pak` (with its `.utoc`), or a game's
    /// `Paks` folder (every pak and container, in the engine's mount order).
    pub(crate) path: PathBuf,
    /// Print JSON instead of text.
    #[arg(long)]
    pub(crate) json: bool,
    #[command(flatten)]
    pub(crate) key: KeyArgs,
}

/// `--max-output`, shared by the commands that write a source's files
/// (`unpack`, `extract`, `get`).
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct MaxOutputArgs {
    /// Refuse to write more than SIZE (bytes, or with K, M, G, T: powers of
    /// 1024), checked before anything is written. Default: no limit, but
    /// output over 64 times the size of the containers and paks read is
    /// announced with its total (`large-output`); with CI=true in the
    /// environment such output is refused unless --max-output is given.
    #[arg(long, value_name = "SIZE", value_parser = zenpak::limits::parse_size)]
    pub(crate) max_output: Option<u64>,
}

impl MaxOutputArgs {
    pub(crate) fn budget(&self) -> zenpak::limits::OutputBudget {
        zenpak::limits::OutputBudget::from_env(self.max_output)
    }
}
