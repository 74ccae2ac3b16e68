//! `zenpak add FILES… [--to MOD]`: put cooked packages into a mod's content
//! folder where their package names say (`zenpak::build::placement`).

use std::path::PathBuf;

use zenpak::manifest::Manifest;
use zenpak::{Error, Result};

use super::output::Output;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Cooked packages: .uasset/.umap headers (or any of a package's files);
    /// each is copied with its .uexp/.ubulk/.uptnl/.m.ubulk.
    #[arg(required = true, value_name = "FILES")]
    pub(crate) files: Vec<PathBuf>,
    /// The mod: its folder or its mod.toml (default: the nearest mod.toml).
    #[arg(long, value_name = "MOD")]
    pub(crate) to: Option<PathBuf>,
}

#[derive(serde::Serialize)]
struct Report<'a> {
    packages: &'a [zenpak::build::placement::Added],
}

pub(crate) fn run(args: Args, out: &Output) -> Result<()> {
    let manifest_path = match &args.to {
        Some(to) if to.is_dir() => to.join("mod.toml"),
        Some(to) => to.clone(),
        None => Manifest::find(&std::env::current_dir().map_err(|e| Error::io(".", e))?)?,
    };
    let manifest_path = std::path::absolute(&manifest_path).unwrap_or(manifest_path);
    let manifest = Manifest::load(&manifest_path)?;
    let added = zenpak::build::placement::add(
        &args.files,
        &manifest.content_root(),
        &manifest.game.project,
        manifest.game.engine,
    )?;
    out.data("added", &Report { packages: &added }, || {
        for a in &added {
            let verb = if a.copied { "Added" } else { "Unchanged" };
            out.status(
                verb,
                format!(
                    "{} → {} ({} files)",
                    a.package,
                    a.to.display(),
                    a.files.len()
                ),
            );
        }
    });
    Ok(())
}
