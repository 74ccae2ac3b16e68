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
use zenpak::patch::changes::{AssetChanges, ModCopies};
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
    /// Engine release: with it, each asset several mods change is compared
    /// with the game's copy (which rows and paths each mod changed, and
    /// whether they overlap). Default: mod.toml's.
    #[arg(long, value_parser = super::args::engine_parser())]
    pub(crate) engine: Option<zenpak::EngineVersion>,
    /// The game's mappings (.usmap) for that comparison (default: mod.toml's).
    #[arg(long, value_name = "FILE")]
    pub(crate) mappings: Option<PathBuf>,
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
    let changes = asset_changes(
        &args,
        manifest.as_ref(),
        (&view, &mods, &report),
        &folder.paks(),
        out,
    )?;
    for asset in &changes {
        out.data("asset-changes", asset, || {});
    }
    let summary = Summary {
        game_dir: folder.root.display().to_string(),
        conflicts: report.conflicts.len(),
        sources: &report.sources,
        mods: &report.mods,
    };
    out.report_text(false, "conflicts", &summary, |w| {
        table(w, &report, &changes)
    });
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

/// Each package two or more mods override, compared with the game's copy
/// (when the engine is known: `--engine` or mod.toml's).
fn asset_changes(
    args: &Args,
    manifest: Option<&Manifest>,
    (view, mods, report): (&GameView, &[usize], &ConflictReport),
    paks: &std::path::Path,
    out: &Output,
) -> Result<Vec<AssetChanges>> {
    let sources = view.sources();
    let mod_names: Vec<&str> = mods.iter().map(|&s| sources[s].name()).collect();
    let shared: Vec<(&str, Vec<&str>)> = report
        .conflicts
        .iter()
        .filter(|c| c.kind == conflicts::ItemKind::Package)
        .filter(|c| c.providers.iter().any(|p| p.role == conflicts::Role::Game))
        .map(|c| {
            let mut by_mods: Vec<&str> = c
                .providers
                .iter()
                .filter(|p| p.role == conflicts::Role::Mod && mod_names.contains(&p.name.as_str()))
                .map(|p| p.name.as_str())
                .collect();
            by_mods.reverse(); // mount order: the winner last
            (c.path.as_str(), by_mods)
        })
        .filter(|(_, by_mods)| by_mods.len() > 1)
        .collect();
    if shared.is_empty() {
        return Ok(Vec::new());
    }
    let Some(engine) = args.engine.or(manifest.map(|m| m.game.engine)) else {
        out.note(
            "changes-not-compared",
            format!(
                "{} packages are changed by several mods; pass --engine (and --mappings) to see which rows and paths each changes",
                shared.len()
            ),
        );
        return Ok(Vec::new());
    };
    let mappings = match args
        .mappings
        .clone()
        .or_else(|| manifest.and_then(|m| m.mappings_path()))
    {
        Some(path) => super::args::load_mappings(Some(&path), out)?,
        None => None,
    };
    let mut involved: Vec<(String, PathBuf)> = Vec::new();
    for &s in mods {
        let name = sources[s].name();
        if shared.iter().any(|(_, m)| m.contains(&name)) && !involved.iter().any(|(n, _)| n == name)
        {
            involved.push((name.to_string(), sources[s].path().to_path_buf()));
        }
    }
    let keys = args.key.keys()?;
    let copies = ModCopies::open(paks, &involved, &keys, (engine, mappings.as_ref()))?;
    let mut all = Vec::new();
    for (path, by_mods) in &shared {
        all.extend(copies.changes(path, by_mods)?);
    }
    Ok(all)
}

/// The human table: each conflict with its providers (winner first), then each mod.
fn table(
    w: &mut dyn Write,
    report: &ConflictReport,
    changes: &[AssetChanges],
) -> std::io::Result<()> {
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
        if let Some(asset) = changes.iter().find(|a| a.path == c.path) {
            asset_lines(w, asset)?;
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

/// What each mod changed in one asset, and the overlaps.
fn asset_lines(w: &mut dyn Write, asset: &AssetChanges) -> std::io::Result<()> {
    for change in &asset.changes {
        let mut parts = Vec::new();
        if let Some(why) = &change.whole {
            parts.push(format!("the whole asset ({why})"));
        }
        for (what, items) in [
            ("set", &change.set),
            ("appended to", &change.appended),
            ("added rows", &change.added_rows),
            ("removed rows", &change.removed_rows),
        ] {
            if !items.is_empty() {
                parts.push(format!("{what} {}", items.join(", ")));
            }
        }
        if parts.is_empty() {
            parts.push("nothing (the game's copy)".into());
        }
        writeln!(w, "    {}: {}", change.provider, parts.join("; "))?;
    }
    for overlap in &asset.overlaps {
        writeln!(
            w,
            "    overlap {}: {} ({} wins)",
            overlap.path,
            overlap.providers.join(", "),
            overlap.providers.last().map_or("", String::as_str)
        )?;
    }
    if asset.overlaps.is_empty() {
        writeln!(
            w,
            "    no overlap: `zenpak merge` can make one mod with every change"
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
