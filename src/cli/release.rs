//! `zenpak package`, `zenpak install`, `zenpak clean`: what comes after a build.

use std::path::PathBuf;

use zenpak::manifest::Manifest;
use zenpak::{Error, Result};

use super::{GlobalOptions, MessageFormat};

/// Where the manifest is; shared by every command that works on a mod.
#[derive(Debug, Clone, clap::Args)]
pub struct ManifestArgs {
    /// Path to mod.toml (default: found by walking up from the current folder).
    #[arg(long)]
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

#[derive(Debug, clap::Args)]
pub struct PackageArgs {
    #[command(flatten)]
    pub manifest: ManifestArgs,
}

#[derive(Debug, clap::Args)]
pub struct InstallArgs {
    #[command(flatten)]
    pub manifest: ManifestArgs,
    /// The game's install folder (holding `<Project>/Content/Paks`).
    #[arg(long)]
    pub game_dir: PathBuf,
}

#[derive(Debug, clap::Args)]
pub struct CleanArgs {
    #[command(flatten)]
    pub manifest: ManifestArgs,
}

pub fn run_package(args: PackageArgs, global: &GlobalOptions) -> Result<()> {
    let manifest = args.manifest.load()?;
    let archive = zenpak::release::package(&manifest)?;
    match global.message_format {
        MessageFormat::Json => super::print_json_line(&serde_json::json!({
            "reason": "release-archive",
            "path": archive.path.display().to_string(),
            "sha256": archive.sha256,
            "files": archive.files.iter().map(|(name, sha256)| serde_json::json!({"name": name, "sha256": sha256})).collect::<Vec<_>>(),
        })),
        MessageFormat::Human if !global.quiet => {
            eprintln!(
                "    Packaged {} (sha256 {})",
                archive.path.display(),
                archive.sha256
            );
            Ok(())
        }
        MessageFormat::Human => Ok(()),
    }
}

pub fn run_install(args: InstallArgs, global: &GlobalOptions) -> Result<()> {
    let manifest = args.manifest.load()?;
    let installed = zenpak::release::install(&manifest, &args.game_dir)?;
    report_paths("installed", "   Installed", &installed, global)
}

pub fn run_clean(args: CleanArgs, global: &GlobalOptions) -> Result<()> {
    let manifest = args.manifest.load()?;
    let removed = zenpak::release::clean(&manifest)?;
    report_paths("cleaned", "     Removed", &removed, global)
}

fn report_paths(reason: &str, verb: &str, paths: &[PathBuf], global: &GlobalOptions) -> Result<()> {
    match global.message_format {
        MessageFormat::Json => super::print_json_line(&serde_json::json!({
            "reason": reason,
            "paths": paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
        })),
        MessageFormat::Human if !global.quiet => {
            for path in paths {
                eprintln!("{verb} {}", path.display());
            }
            Ok(())
        }
        MessageFormat::Human => Ok(()),
    }
}
