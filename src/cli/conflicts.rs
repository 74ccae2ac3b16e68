//! `zenpak conflicts --game-dir GAME [--mod PATH…]`: every package and file
//! that more than one of the game's sources, its installed mods and the
//! mods named provide, who wins by the engine's mount order, and which mods
//! are partly or wholly shadowed. A mod named (or the mod's last build) is
//! mounted where `install` puts it, `~mods/<file name>`, so the winner shown
//! is the one the game will load once it is installed. The work is `zenpak::game::conflicts`;
//! this file mounts the sources and prints.

use std::io::Write;
use std::path::PathBuf;

use serde::Serialize;
use zenpak::game::conflicts::{self, ConflictReport, ModConflicts, SourceShadowing};
use zenpak::game::GameView;
use zenpak::manifest::Manifest;
use zenpak::Result;

use super::args::{KeyArgs, ManifestArgs};
use super::Output;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The game's install folder (or any folder of the game: its project,
    /// `Content`, `Paks`, `~mods`).
    #[arg(long = "game-dir", value_name = "DIR")]
    pub(crate) game_dir: PathBuf,
    /// A mod to mount with the game, as the engine mounts `~mods` after it:
    /// a built `.utoc`/`.pak` or a folder of them. Repeatable. Default
    /// inside a mod: its last build in the output folder, if any.
    #[arg(long = "mod", value_name = "PATH")]
    pub(crate) mods: Vec<PathBuf>,
    #[command(flatten)]
    pub(crate) manifest: ManifestArgs,
    #[command(flatten)]
    pub(crate) key: KeyArgs,
}

/// The last JSON line: the totals and every source and mod.
#[derive(Serialize)]
struct Summary<'a> {
    game_dir: String,
    conflicts: usize,
    sources: &'a [SourceShadowing],
    mods: &'a [ModConflicts],
}

/// The nearest (or named) manifest; `None` outside a mod.
fn manifest(args: &ManifestArgs) -> Result<Option<Manifest>> {
    if args.manifest_path.is_some() {
        return args.load().map(Some);
    }
    Ok(args.load().ok())
}

pub(crate) fn run(args: Args, out: &Output) -> Result<()> {
    let manifest = manifest(&args.manifest)?;
    let project = manifest.as_ref().map(|m| m.game.project.as_str());
    let folder = super::args::game_folder(out, &args.game_dir, project)?;
    let mut paths = args.mods.clone();
    if let (true, Some(manifest)) = (args.mods.is_empty(), &manifest) {
        paths.extend(built_mod(manifest, &folder, out));
    }
    // A mod named is mounted where `install` puts it, in `~mods`.
    let (view, named) = GameView::open_game(&folder.paks(), &paths, &args.key.keys()?)?;
    out.diagnostics(&view.diagnostics);
    let mut mods = conflicts::installed_mods(&view, &folder.paks());
    mods.extend(named.iter().flatten());
    let report = conflicts::conflicts(&view, &mods);
    for conflict in &report.conflicts {
        out.data("conflict", conflict, || {});
    }
    let summary = Summary {
        game_dir: folder.root.display().to_string(),
        conflicts: report.conflicts.len(),
        sources: &report.sources,
        mods: &report.mods,
    };
    out.report_text(false, "conflicts", &summary, |w| table(w, &report));
    view.unreadable_error().map_or(Ok(()), Err)
}

/// The mod's last build (its `.pak`), unless that mod is installed in the
/// game already under the same name (then the installed copy stands for it).
fn built_mod(
    manifest: &Manifest,
    folder: &zenpak::game::folder::GameFolder,
    out: &Output,
) -> Option<PathBuf> {
    let pak = manifest
        .artifact_paths()
        .into_iter()
        .find(|p| p.extension().is_some_and(|e| e.eq_ignore_ascii_case("pak")))?;
    let name = pak.file_name()?.to_owned();
    if !pak.is_file() {
        out.note(
            "mod-not-built",
            format!(
                "{} has no build in {} (`zenpak build` makes one); showing the game and its installed mods",
                manifest.package.name,
                manifest.output_dir().display()
            ),
        );
        return None;
    }
    for dir in [folder.mods(), folder.logic_mods()] {
        if dir.join(&name).is_file() {
            out.note(
                "mod-installed",
                format!(
                    "{} is installed as {}; that copy stands for the mod (install again to compare the latest build)",
                    manifest.package.name,
                    dir.join(&name).display()
                ),
            );
            return None;
        }
    }
    Some(pak)
}

/// The human table: each conflict with its providers (winner first), then each mod.
fn table(w: &mut dyn Write, report: &ConflictReport) -> std::io::Result<()> {
    if report.conflicts.is_empty() {
        writeln!(
            w,
            "no package or file is provided by more than one source ({} sources)",
            report.sources.len()
        )?;
    }
    for c in &report.conflicts {
        let kind = serde_json::to_value(c.kind).unwrap_or_default();
        writeln!(w, "{}  {}", kind.as_str().unwrap_or_default(), c.path)?;
        for (i, p) in c.providers.iter().enumerate() {
            writeln!(
                w,
                "  {:<6} {:<40} order {:>5}  mounted #{:<3} {}",
                if i == 0 { "wins" } else { "" },
                p.name,
                p.order,
                p.sequence,
                if p.role == conflicts::Role::Mod {
                    "mod"
                } else {
                    "game"
                }
            )?;
        }
    }
    if !report.mods.is_empty() {
        writeln!(w)?;
        writeln!(
            w,
            "{:<40} {:>5}  {:<8} {:>9}  {:>4}  shadows / shadowed by",
            "mod", "order", "shadowed", "overrides", "wins"
        )?;
    }
    for m in &report.mods {
        let state = serde_json::to_value(m.state).unwrap_or_default();
        writeln!(
            w,
            "{:<40} {:>5}  {:<8} {:>9}  {:>4}  {} / {}",
            m.provider.name,
            m.provider.order,
            state.as_str().unwrap_or_default(),
            m.overrides.len(),
            m.overrides.iter().filter(|o| o.wins).count(),
            list(&m.shadows),
            list(&m.shadowed_by)
        )?;
    }
    Ok(())
}

fn list(names: &[String]) -> String {
    if names.is_empty() {
        "-".into()
    } else {
        names.join(", ")
    }
}
