//! Arguments shared by several commands (cargo's "command prelude" idea):
//! where the manifest is, which engine, which game folders.

use std::path::PathBuf;

use clap::builder::{PossibleValuesParser, TypedValueParser};
use zenpak::manifest::Manifest;
use zenpak::{EngineVersion, Error, Result};

/// Where the manifest is; shared by every command that works on a mod.
#[derive(Debug, Clone, clap::Args)]
pub struct ManifestArgs {
    /// Path to mod.toml (default: found by walking up from the current folder).
    #[arg(long, value_name = "PATH")]
    pub manifest_path: Option<PathBuf>,
}

impl ManifestArgs {
    pub fn load(&self) -> Result<Manifest> {
        let path = match &self.manifest_path {
            Some(p) => p.clone(),
            None => Manifest::find(&std::env::current_dir().map_err(|e| Error::io(".", e))?)?,
        };
        Manifest::load(&path)
    }
}

/// The parser of `--engine`: lists the supported versions in `--help` and
/// in the error for an unknown one.
pub fn engine_parser() -> impl TypedValueParser<Value = EngineVersion> {
    PossibleValuesParser::new(EngineVersion::ALL.map(|v| v.as_str()))
        .map(|s| s.parse::<EngineVersion>().expect("listed versions parse"))
}

/// The engine a command inside a mod uses when `--engine` is not given:
/// the nearest `mod.toml`'s `[game] engine`.
pub fn engine_from_nearest_manifest() -> Option<(EngineVersion, PathBuf)> {
    let cwd = std::env::current_dir().ok()?;
    let path = Manifest::find(&cwd).ok()?;
    let manifest = Manifest::load(&path).ok()?;
    Some((manifest.game.engine, path))
}

/// One or more game install folders.
#[derive(Debug, Clone, clap::Args)]
pub struct GameDirArgs {
    /// The game's install folder (holding `<Project>/Content/Paks`); repeat
    /// for several. Default: `ZENPAK_GAME_DIR`, else `[games]` in the user
    /// configuration (`zenpak config-path` shows where).
    #[arg(long = "game-dir", value_name = "DIR")]
    pub game_dirs: Vec<PathBuf>,
    /// Say what would be written and removed, and change nothing.
    #[arg(long)]
    pub dry_run: bool,
}

impl GameDirArgs {
    pub fn resolve(&self, manifest: &Manifest) -> Result<Vec<PathBuf>> {
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
