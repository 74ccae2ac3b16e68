//! `zenpak package`, `zenpak install`, `zenpak uninstall`, `zenpak clean`:
//! what comes after a build. `package` and `install` build first (as
//! `cargo install` does), under the same lock, so they never ship a stale
//! or failed build.

use zenpak::Result;

use super::args::{GameDirArgs, KeyArgs, ManifestArgs};
use super::build::{build_and_report, GameInput};
use super::output::Output;

#[derive(Debug, clap::Args)]
pub(crate) struct PackageArgs {
    #[command(flatten)]
    pub(crate) manifest: ManifestArgs,
    /// The platform the archive is for: its layout and metadata from
    /// `mod.toml` (`[release]`).
    #[arg(long = "for", value_name = "PLATFORM", default_value = "zip",
          value_parser = ["zip", "nexus", "modio", "thunderstore"])]
    pub(crate) platform: String,
    /// Build, then print what the archive would hold and the platform's
    /// manifest, writing no archive.
    #[arg(long)]
    pub(crate) dry_run: bool,
    /// The game whose assets the mod's patch files change (default:
    /// `ZENPAK_GAME_DIR`, else `[games]` in the user configuration).
    #[arg(long = "game-dir", value_name = "DIR")]
    pub(crate) game_dir: Option<std::path::PathBuf>,
    /// Keys for the game's encrypted containers.
    #[command(flatten)]
    pub(crate) key: KeyArgs,
}

#[derive(Debug, clap::Args)]
pub(crate) struct InstallArgs {
    #[command(flatten)]
    pub(crate) manifest: ManifestArgs,
    #[command(flatten)]
    pub(crate) games: GameDirArgs,
    /// Replace files in `~mods` that this mod did not install (another
    /// mod's, or nobody's); without it, such a file stops the install.
    #[arg(long)]
    pub(crate) force: bool,
    /// Keep running: rebuild (development build) and reinstall whenever the
    /// cooked files or mod.toml change; Ctrl-C stops it.
    #[arg(long, conflicts_with = "dry_run")]
    pub(crate) watch: bool,
    /// Keys for the game's encrypted containers (read for the mod's patch files).
    #[command(flatten)]
    pub(crate) key: KeyArgs,
}

#[derive(Debug, clap::Args)]
pub(crate) struct UninstallArgs {
    #[command(flatten)]
    pub(crate) manifest: ManifestArgs,
    #[command(flatten)]
    pub(crate) games: GameDirArgs,
}

/// Says once that another zenpak holds a game's `~mods` folder.
fn waiting_for<'a>(out: &'a Output, mods: &'a std::path::Path) -> impl FnMut(Option<u32>) + 'a {
    move |pid| {
        let who = pid.map_or("another zenpak".to_string(), |p| {
            format!("zenpak (pid {p})")
        });
        out.status(
            "Waiting",
            format!("for {who} to finish with {}", mods.display()),
        );
    }
}

#[derive(Debug, clap::Args)]
pub(crate) struct CleanArgs {
    #[command(flatten)]
    pub(crate) manifest: ManifestArgs,
}

pub(crate) fn run_package(args: PackageArgs, out: &Output) -> Result<()> {
    let manifest = args.manifest.load()?;
    let lock = super::build::lock(&manifest, out)?;
    // A release archive holds the canonical, reproducible layout.
    let game = GameInput {
        dir: args.game_dir.as_deref(),
        keys: &args.key,
    };
    let summary = build_and_report(&manifest, (false, true), game, out, &lock)?;
    out.check_warnings_denied()?;
    let platform: zenpak::platform::Platform = args.platform.parse()?;
    if args.dry_run {
        let artifacts: Vec<std::path::PathBuf> =
            summary.artifacts.iter().map(|a| a.path.clone()).collect();
        let plan = zenpak::platform::plan(&manifest, platform, &artifacts)?;
        out.data("release-plan", &plan, || {
            out.status("Would package", &plan.archive);
            for entry in &plan.entries {
                out.status("", &entry.name);
            }
            if let Some(json) = &plan.manifest {
                out.status(
                    "Manifest",
                    serde_json::to_string_pretty(json).unwrap_or_default(),
                );
            }
        });
        return Ok(());
    }
    let archive = zenpak::release::package(&manifest, &summary, platform)?;
    out.data("release-archive", &archive, || {
        out.status(
            "Packaged",
            format!("{} (sha256 {})", archive.path.display(), archive.sha256),
        )
    });
    Ok(())
}

/// `install` without `--watch` (which is [`super::watch`]'s).
pub(crate) fn run_install(args: InstallArgs, out: &Output) -> Result<()> {
    let manifest = args.manifest.load()?;
    let game_dirs = args.games.resolve(&manifest)?;
    install(&args, &manifest, &game_dirs, out)
}

/// Builds (if needed) and installs into each game folder.
pub(crate) fn install(
    args: &InstallArgs,
    manifest: &zenpak::manifest::Manifest,
    game_dirs: &[std::path::PathBuf],
    out: &Output,
) -> Result<()> {
    // The game folders are checked before building: a wrong --game-dir fails fast.
    let games = game_dirs
        .iter()
        .map(|dir| super::args::game_folder(out, dir, Some(&manifest.game.project)))
        .collect::<Result<Vec<_>>>()?;
    let lock = super::build::lock(manifest, out)?;
    // Patches apply to the first game's assets.
    let game = GameInput {
        dir: game_dirs.first().map(std::path::PathBuf::as_path),
        keys: &args.key,
    };
    let summary = build_and_report(manifest, (false, false), game, out, &lock)?;
    out.check_warnings_denied()?;
    let options = zenpak::release::InstallOptions {
        dry_run: args.games.dry_run,
        force: args.force,
    };
    for game in &games {
        // Mount order: another mod with the same name or container id, a
        // suffix below the game's patches, a mod without its .pak.
        out.diagnostics(&zenpak::release::mount_order_warnings(
            manifest,
            Some(&summary),
            game,
        )?);
        out.check_warnings_denied()?;
        let mods = game.mods();
        let report = zenpak::release::install(
            manifest,
            &summary,
            game,
            options,
            &mut waiting_for(out, &mods),
        )?;
        for problem in &report.damaged_record {
            out.warning("damaged-record", problem.clone());
        }
        for conflict in &report.conflicts {
            let (code, verb) = match (report.refused, report.dry_run) {
                (true, _) => ("install-would-refuse", "would be refused"),
                (false, true) => ("install-would-replace", "would be replaced (--force)"),
                (false, false) => ("install-replaced", "was replaced (--force)"),
            };
            let owner = match &conflict.owner {
                zenpak::release::FileOwner::OtherMod { manifest } => {
                    format!("it belongs to another mod ({manifest})")
                }
                zenpak::release::FileOwner::Nobody => {
                    "no ownership record names it (zenpak did not install it)".to_string()
                }
                zenpak::release::FileOwner::ChangedSinceInstall => {
                    "this mod installed it, but it changed since".to_string()
                }
            };
            out.warning(code, format!("{} {verb}: {owner}", conflict.path.display()));
        }
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

pub(crate) fn run_uninstall(args: UninstallArgs, out: &Output) -> Result<()> {
    let manifest = args.manifest.load()?;
    for game_dir in &args.games.resolve(&manifest)? {
        let game = super::args::game_folder(out, game_dir, Some(&manifest.game.project))?;
        let mods = game.mods();
        let report = zenpak::release::uninstall(
            &manifest,
            &game,
            args.games.dry_run,
            &mut waiting_for(out, &mods),
        )?;
        for problem in &report.damaged_record {
            out.warning("damaged-record", problem.clone());
        }
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

pub(crate) fn run_clean(args: CleanArgs, out: &Output) -> Result<()> {
    let manifest = args.manifest.load()?;
    let report = zenpak::release::clean(&manifest)?;
    for problem in &report.damaged_record {
        out.warning("damaged-record", problem.clone());
    }
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
