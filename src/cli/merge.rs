//! `zenpak merge MOD… --game-dir GAME -o OUT_DIR`: several built mods into
//! one whose assets carry every mod's changes. The work is
//! `zenpak::patch::merge`; this file finds the game, the engine and the
//! mappings, and prints each asset's changes, each overlap and the result.

use std::path::PathBuf;

use serde::Serialize;
use zenpak::diagnostic::Diagnostic;
use zenpak::patch::merge::{self, MergeReport, MergeRequest};
use zenpak::{Error, Result};

use super::args::KeyArgs;
use super::Output;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The built mods to merge (`.pak` or `.utoc`), two or more. Their
    /// order does not matter: overlaps are resolved by the order the game
    /// mounts them in `~mods`.
    #[arg(value_name = "MOD", required = true, num_args = 2..)]
    pub(crate) mods: Vec<PathBuf>,
    /// The game's install folder (or any folder of the game); its copy of
    /// each asset several mods change is what their changes are measured
    /// against.
    #[arg(long = "game-dir", value_name = "DIR")]
    pub(crate) game_dir: Option<PathBuf>,
    /// The folder of the merged mod (made; must be new or empty): its
    /// `mod.toml`, `Cooked/` and the built `target/<name>_P.*`.
    #[arg(short, long, value_name = "DIR")]
    pub(crate) output: PathBuf,
    /// The merged mod's name.
    #[arg(long, default_value = "Merged")]
    pub(crate) name: String,
    /// Resolve overlapping changes by mount order (the later mod wins
    /// each, listed) instead of stopping.
    #[arg(long)]
    pub(crate) later_wins: bool,
    /// Engine release (default: the nearest mod.toml's).
    #[arg(long, value_parser = super::args::engine_parser())]
    pub(crate) engine: Option<zenpak::EngineVersion>,
    /// The game's mappings (.usmap) for its unversioned packages (default:
    /// the nearest mod.toml's).
    #[arg(long, value_name = "FILE")]
    pub(crate) mappings: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) key: KeyArgs,
}

/// The last line: what was merged and made.
#[derive(Serialize)]
struct Merged<'a> {
    mods: &'a [String],
    /// Assets several mods change, merged from the game's copy.
    assets: usize,
    overlaps: usize,
    taken: &'a [merge::Taken],
    manifest: Option<&'a std::path::Path>,
    /// The merged mod's files (`.utoc`, `.ucas`, `.pak`).
    outputs: Vec<String>,
}

pub(crate) fn run(args: Args, out: &Output) -> Result<()> {
    let engine = super::args::engine_or_nearest(args.engine, "which engine is the game?")?;
    let project = super::args::nearest_manifest().map(|(m, _)| m.game.project);
    let game_dir = match &args.game_dir {
        Some(dir) => dir.clone(),
        None => zenpak::release::default_game_dirs(project.as_deref().unwrap_or_default())?
            .into_iter()
            .next()
            .ok_or_else(|| {
                Error::usage("merge needs the game: its copy of each asset is what the mods' changes are measured against")
                    .with_hint("pass --game-dir DIR, or set ZENPAK_GAME_DIR")
            })?,
    };
    let folder = super::args::game_folder(out, &game_dir, None)?;
    let mappings = super::args::load_mappings(args.mappings.as_deref(), out)?;
    let keys = args.key.keys()?;
    let request = MergeRequest {
        mods: &args.mods,
        paks: &folder.paks(),
        project: folder.project(),
        keys: &keys,
        engine,
        mappings: mappings.as_ref(),
        output: &args.output,
        name: &args.name,
        later_wins: args.later_wins,
    };
    let printer = super::build::BuildPrinter::new(out);
    let report = merge::merge(&request, &printer)?;
    print(&report, args.later_wins, out);
    if report.manifest.is_none() {
        return Err(Error::invalid(format!(
            "{} overlapping changes (listed above): nothing was written",
            report.overlaps.len()
        ))
        .with_hint("drop one of the mods' changes there, or pass --later-wins to keep the later mod's (in mount order)"));
    }
    Ok(())
}

fn print(report: &MergeReport, later_wins: bool, out: &Output) {
    for asset in &report.assets {
        out.data("asset-changes", asset, || {
            let changed: Vec<String> = asset
                .changes
                .iter()
                .filter(|c| c.count() > 0)
                .map(|c| format!("{} ({})", c.provider, c.count()))
                .collect();
            out.status(
                "Compared",
                format!("{}: {}", asset.path, changed.join(", ")),
            );
        });
    }
    for (path, overlap) in &report.overlaps {
        let message = format!(
            "`{}` is changed by {}",
            overlap.path,
            overlap
                .providers
                .iter()
                .zip(&overlap.changes)
                .map(|(p, c)| format!("{p} ({c})"))
                .collect::<Vec<_>>()
                .join(" and ")
        );
        let last = overlap.providers.last().cloned().unwrap_or_default();
        let diagnostic = match later_wins {
            true => Diagnostic::warning(
                "merge-overlap",
                format!("{message}: {last} wins (mounted last)"),
            ),
            false => Diagnostic::error("merge-overlap", message),
        };
        out.diagnostic(&diagnostic.with_file(path));
    }
    if report.manifest.is_none() {
        return;
    }
    let outputs: Vec<String> = report
        .build
        .as_ref()
        .map(|b| {
            b.artifacts
                .iter()
                .map(|a| a.path.display().to_string())
                .collect()
        })
        .unwrap_or_default();
    let line = Merged {
        mods: &report.mods,
        assets: report.assets.len(),
        overlaps: report.overlaps.len(),
        taken: &report.taken,
        manifest: report.manifest.as_deref(),
        outputs,
    };
    out.data("merged", &line, || {
        out.status(
            "Merged",
            format!(
                "{} into {} ({} assets merged from the game's copy)",
                report.mods.join(", "),
                line.outputs.first().map_or("", String::as_str),
                report.assets.len()
            ),
        );
        out.note(
            "merged-replaces",
            format!(
                "install the merged mod instead of {}: with both, the game loads one copy of each asset",
                report.mods.join(", ")
            ),
        );
    });
}
