//! `zenpak check`: validate the manifest and content without writing anything.

use serde::Serialize;
use zenpak::game_check::{GameReport, GameSection};
use zenpak::{Error, Result};

use super::args::{KeyArgs, ManifestArgs};
use super::output::{count, Output};

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(flatten)]
    pub(crate) manifest: ManifestArgs,
    /// Also check the mod against this game (its install folder, or any of
    /// its folders): every import resolves, what it overrides, blueprint
    /// mods, the game's engine and compression.
    #[arg(long = "game-dir", value_name = "DIR")]
    pub(crate) game_dir: Option<std::path::PathBuf>,
    /// With --game-dir: the game's current mappings (.usmap), which the
    /// mod's unversioned packages are decoded with (default: mod.toml's
    /// `[game] mappings`).
    #[arg(long, value_name = "FILE", requires = "game_dir")]
    pub(crate) mappings: Option<std::path::PathBuf>,
    /// Keys for the game's encrypted containers.
    #[command(flatten)]
    pub(crate) key: KeyArgs,
}

/// How many packages the game must have are listed without `--verbose`.
const NEEDED_SHOWN: usize = 5;

#[derive(Serialize)]
struct CheckLine<'a> {
    packages: usize,
    loose_files: usize,
    problems: usize,
    warnings: usize,
    must_exist_in_game: &'a [String],
    suggested_exclude: &'a [String],
    /// With `--game-dir`: what the game checks found.
    #[serde(skip_serializing_if = "Option::is_none")]
    game: Option<&'a GameSection>,
}

/// Mounts the game named by `--game-dir` for the mod of `manifest` and
/// runs the game checks (with `mappings`, the mod's data decoded with
/// them); prints the diagnostics. Shared by `check` and `build`.
pub(crate) fn game_checks(
    out: &Output,
    manifest: &zenpak::manifest::Manifest,
    (dir, key): (&std::path::Path, &KeyArgs),
    content: (
        &[zenpak::build::mod_package::ModPackage],
        &[zenpak::build::input::LooseFile],
    ),
    mappings: Option<&std::path::Path>,
) -> Result<GameReport> {
    let folder = super::args::game_folder(out, dir, Some(&manifest.game.project))?;
    let game = zenpak::game_check::GameContext::open(
        folder,
        &key.keys()?,
        Some(&manifest.artifact_stem()),
    )?;
    let mappings = match mappings {
        Some(path) => {
            let mappings = zenpak::mappings::Mappings::load(path)?;
            out.diagnostics(&mappings.diagnostics);
            Some((mappings, path))
        }
        None => None,
    };
    let report = zenpak::game_check::check_game(
        manifest,
        content,
        &game,
        mappings.as_ref().map(|(m, p)| (m, *p)),
    );
    out.diagnostics(&report.diagnostics);
    Ok(report)
}

pub(crate) fn run(args: Args, out: &Output) -> Result<()> {
    let manifest = args.manifest.load()?;
    let mut report = zenpak::build::check::check(&manifest)?;
    out.diagnostics(&report.warnings);
    out.diagnostics(&report.problems);
    let game = match &args.game_dir {
        Some(dir) => Some(game_checks(
            out,
            &manifest,
            (dir, &args.key),
            (
                &std::mem::take(&mut report.mod_packages),
                &std::mem::take(&mut report.mod_loose_files),
            ),
            args.mappings
                .or_else(|| manifest.mappings_path())
                .as_deref(),
        )?),
        None => None,
    };
    let (game_errors, game_warnings) = game.as_ref().map_or((0, 0), |g| {
        (
            g.errors(),
            g.diagnostics
                .iter()
                .filter(|d| d.level == zenpak::diagnostic::Level::Warning)
                .count(),
        )
    });
    let patches = super::patch::patch_checks(&manifest, args.game_dir.as_deref(), &args.key, out)?;
    let broken = patches
        .iter()
        .filter(|c| c.state == zenpak::patch::PatchState::Broken)
        .count();
    let game_errors = game_errors + broken;
    let needed = &report.must_exist_in_game;
    if !needed.is_empty() && !out.is_json() {
        let shown = if out.verbose {
            needed.len()
        } else {
            needed.len().min(NEEDED_SHOWN)
        };
        let mut message = format!(
            "{} packages are imported but not in the mod; the game must have them: {}",
            needed.len(),
            needed[..shown].join(", ")
        );
        if shown < needed.len() {
            message.push_str(&format!(", … (--verbose lists all {})", needed.len()));
        }
        out.note("must-exist-in-game", message);
    }
    out.data(
        "check",
        &CheckLine {
            packages: report.packages,
            loose_files: report.loose_files,
            problems: report.problems.len() + game_errors,
            warnings: report.warnings.len() + game_warnings,
            must_exist_in_game: needed,
            suggested_exclude: &report.suggested_exclude,
            game: game.as_ref().map(|g| &g.game),
        },
        || {
            out.status(
                "Checked",
                format!(
                    "{}, {}: {}, {}",
                    count(report.packages, "package"),
                    count(report.loose_files, "loose file"),
                    count(report.problems.len() + game_errors, "problem"),
                    count(report.warnings.len() + game_warnings, "warning")
                ),
            );
            if let Some(game) = &game {
                let g = &game.game;
                out.status(
                    "Against",
                    format!(
                        "{}: {} checked, {} not found; {} overridden",
                        g.dir,
                        count(g.imports_checked, "import"),
                        g.unresolved_imports.len(),
                        count(g.overrides.len(), "game package")
                    ),
                );
                if let Some(r) = &g.redecode {
                    out.status(
                        "Decoded",
                        format!(
                            "{} of {} with {}: {} not decoding, {} not checked",
                            count(r.exports_checked, "export"),
                            count(r.packages_checked, "package"),
                            r.mappings,
                            r.not_decoding.len(),
                            r.exports_unchecked
                        ),
                    );
                }
            }
        },
    );
    if !report.suggested_exclude.is_empty() && !out.is_json() {
        out.note(
            "suggested-exclude",
            format!(
                "to leave out what a mod must not contain, add to `[content] exclude` in mod.toml: exclude = [{}]",
                report
                    .suggested_exclude
                    .iter()
                    .map(|p| format!("\"{p}\""))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        );
    }
    if report.is_ok() && game_errors == 0 {
        Ok(())
    } else {
        Err(Error::invalid(format!(
            "{} found",
            count(report.problems.len() + game_errors, "problem")
        )))
    }
}
