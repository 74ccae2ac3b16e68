//! `zenpak package`, `zenpak install`, `zenpak uninstall`, `zenpak clean`:
//! what comes after a build. `package` and `install` build first (as
//! `cargo install` does), under the same lock, so they never ship a stale
//! or failed build.

use zenpak::Result;

use super::args::{GameDirArgs, ManifestArgs};
use super::build::build_and_report;
use super::output::Output;

#[derive(Debug, clap::Args)]
pub struct PackageArgs {
    #[command(flatten)]
    pub manifest: ManifestArgs,
}

#[derive(Debug, clap::Args)]
pub struct InstallArgs {
    #[command(flatten)]
    pub manifest: ManifestArgs,
    #[command(flatten)]
    pub games: GameDirArgs,
}

#[derive(Debug, clap::Args)]
pub struct CleanArgs {
    #[command(flatten)]
    pub manifest: ManifestArgs,
}

pub fn run_package(args: PackageArgs, out: &Output) -> Result<()> {
    let manifest = args.manifest.load()?;
    let lock = super::build::lock(&manifest, out)?;
    // A release archive holds the canonical, reproducible layout.
    let summary = build_and_report(&manifest, (false, true), out, &lock)?;
    out.check_warnings_denied()?;
    let archive = zenpak::release::package(&manifest, &summary)?;
    out.data("release-archive", &archive, || {
        out.status(
            "Packaged",
            format!("{} (sha256 {})", archive.path.display(), archive.sha256),
        )
    });
    Ok(())
}

pub fn run_install(args: InstallArgs, out: &Output) -> Result<()> {
    let manifest = args.manifest.load()?;
    let game_dirs = args.games.resolve(&manifest)?;
    let lock = super::build::lock(&manifest, out)?;
    let summary = build_and_report(&manifest, (false, false), out, &lock)?;
    out.check_warnings_denied()?;
    for game_dir in &game_dirs {
        let report = zenpak::release::install(&manifest, &summary, game_dir, args.games.dry_run)?;
        out.data("installed", &report, || {
            let verb = if report.dry_run {
                "Would install"
            } else {
                "Installed"
            };
            for path in &report.installed {
                out.status(verb, path.display());
            }
            let verb = if report.dry_run {
                "Would remove"
            } else {
                "Removed"
            };
            for path in &report.removed {
                out.status(verb, path.display());
            }
        });
        for path in &report.kept {
            out.warning(
                "install-kept",
                format!(
                    "{} belonged to this mod's previous install but changed since; left in place",
                    path.display()
                ),
            );
        }
    }
    Ok(())
}

pub fn run_uninstall(args: InstallArgs, out: &Output) -> Result<()> {
    let manifest = args.manifest.load()?;
    for game_dir in &args.games.resolve(&manifest)? {
        let report = zenpak::release::uninstall(&manifest, game_dir, args.games.dry_run)?;
        out.data("uninstalled", &report, || {
            let verb = if report.dry_run {
                "Would remove"
            } else {
                "Removed"
            };
            for path in &report.removed {
                out.status(verb, path.display());
            }
            if report.removed.is_empty() && report.kept.is_empty() {
                out.status(
                    "Nothing",
                    format!("of this mod is installed in {}", game_dir.display()),
                );
            }
        });
        for path in &report.kept {
            out.warning(
                "uninstall-kept",
                format!(
                    "{} was installed by this mod but changed since; left in place",
                    path.display()
                ),
            );
        }
    }
    Ok(())
}

pub fn run_clean(args: CleanArgs, out: &Output) -> Result<()> {
    let manifest = args.manifest.load()?;
    let report = zenpak::release::clean(&manifest)?;
    out.data("cleaned", &report, || {
        for path in &report.removed {
            out.verbose_status("Removed", path.display());
        }
        out.status(
            "Cleaned",
            format!("{} files and folders", report.removed.len()),
        );
    });
    for path in &report.kept {
        out.warning(
            "clean-kept",
            format!(
                "{} was written by zenpak but changed since; left in place",
                path.display()
            ),
        );
    }
    Ok(())
}
