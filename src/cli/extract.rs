//! `zenpak extract PATH... -o DIR [--engine V] [--game PAKS | --game-dir DIR] [--filter GLOB]...
//! [--with-deps] [--allow-unresolved] [--force]`: writes the packages of the
//! named containers, paks or `Paks/` folders as legacy `.uasset`/`.umap` +
//! `.uexp` (+ bulk companions) and their other files as they are. Logic
//! lives in `zenpak::extract::container`.

use std::path::{Path, PathBuf};

use zenpak::extract::container::{extract, ExtractEvent, ExtractRequest, ViewSource};
use zenpak::extract::{ExtractOptions, ScriptObjects};
use zenpak::{EngineVersion, Error, Result};

use super::args::{KeyArgs, MaxOutputArgs};
use super::Output;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// What to extract: a `.utoc` (with its `.ucas` and `.pak`), a `.pak`
    /// (with its container, if any), or a game's `Paks` folder (every pak
    /// and container, in the engine's mount order). Repeatable.
    #[arg(required = true, value_name = "PATH")]
    pub(crate) paths: Vec<PathBuf>,
    /// Output folder (created; must be empty unless --force).
    #[arg(short, long)]
    pub(crate) output: PathBuf,
    /// Engine release the containers were written for (default: the
    /// nearest mod.toml's `[game] engine`).
    #[arg(long)]
    pub(crate) engine: Option<EngineVersion>,
    /// The game's Paks folder, mounted first: its containers resolve imports
    /// (and global.utoc gives the script objects). Not extracted unless
    /// --with-deps needs them.
    #[arg(long, value_name = "DIR", conflicts_with = "game_dir")]
    pub(crate) game: Option<PathBuf>,
    /// The game, as `install` takes it: its install folder or any folder of
    /// it (the project, `Content`, `Paks`, `~mods`); its `Paks` folder is
    /// used as --game uses it.
    #[arg(long, value_name = "DIR")]
    pub(crate) game_dir: Option<PathBuf>,
    /// Extract only packages whose name matches (e.g. `/Game/Characters/**`); repeatable.
    #[arg(long = "filter", value_name = "GLOB")]
    pub(crate) filters: Vec<String>,
    /// Also extract the packages the selected ones import.
    #[arg(long)]
    pub(crate) with_deps: bool,
    /// Write placeholders for imports that cannot be resolved instead of failing.
    #[arg(long)]
    pub(crate) allow_unresolved: bool,
    /// Write into an output folder that is not empty.
    #[arg(long)]
    pub(crate) force: bool,
    /// Convert each extracted package back and warn when it differs from the original.
    #[arg(long)]
    pub(crate) verify: bool,
    /// The game's script objects: a file (the ScriptObjects chunk of
    /// global.utoc), or a folder of cooked legacy packages whose /Script/
    /// imports name them (with their classes).
    #[arg(long, value_name = "FILE|DIR")]
    pub(crate) script_objects: Option<PathBuf>,
    /// Print the summary as JSON.
    #[arg(long)]
    pub(crate) json: bool,
    #[command(flatten)]
    pub(crate) key: KeyArgs,
    #[command(flatten)]
    pub(crate) max_output: MaxOutputArgs,
}

/// The engine: `--engine`, else the nearest mod.toml's (which must load).
fn engine(args: &Args, out: &Output) -> Result<EngineVersion> {
    if let Some(engine) = args.engine {
        return Ok(engine);
    }
    let cwd = std::env::current_dir().map_err(|e| Error::io(".", e))?;
    let no_engine = || {
        Error::usage("which engine wrote these containers?").with_hint(
            "pass --engine (e.g. --engine 5.6), or run inside a mod whose mod.toml sets `[game] engine`",
        )
    };
    let path = zenpak::manifest::Manifest::find(&cwd).map_err(|_| no_engine())?;
    let manifest = zenpak::manifest::Manifest::load(&path)?;
    out.verbose_status(
        "Using",
        format!("UE {} from {}", manifest.game.engine, path.display()),
    );
    Ok(manifest.game.engine)
}

/// `--script-objects`: a file (the ScriptObjects chunk of global.utoc), or
/// a folder of cooked legacy packages whose /Script/ imports name them.
pub(crate) fn load_script_objects(path: &Path, engine: EngineVersion) -> Result<ScriptObjects> {
    if path.is_dir() {
        return ScriptObjects::from_legacy_folder(path, engine);
    }
    let data = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    ScriptObjects::read_ue5(&data).map_err(|e| e.in_file(path))
}

/// One line per package with unresolved imports: how many and the first
/// few (all of them with `--verbose` or in JSON).
pub(crate) fn unresolved_diagnostic(
    out: &Output,
    package_name: &str,
    ok: bool,
    unresolved: &[zenpak::extract::Unresolved],
) -> Option<zenpak::diagnostic::Diagnostic> {
    if unresolved.is_empty() {
        return None;
    }
    let all = out.verbose || out.is_json();
    let shown = if all {
        unresolved.len()
    } else {
        zenpak::extract::UNRESOLVED_SHOWN
    };
    let list = zenpak::extract::unresolved_list(unresolved, shown);
    let mut d = if ok {
        zenpak::diagnostic::Diagnostic::warning(
            "unresolved-import",
            format!(
                "{} imports cannot be resolved and are written as placeholders: {list}",
                unresolved.len()
            ),
        )
    } else if all {
        // The failure itself comes at the end (one error per package); this lists them all.
        zenpak::diagnostic::Diagnostic::note(
            "unresolved-import",
            format!("{} imports cannot be resolved: {list}", unresolved.len()),
        )
    } else {
        return None;
    };
    if !all && unresolved.len() > shown {
        d = d.with_hint("--verbose lists them all");
    }
    d.file = Some(package_name.to_string());
    Some(d)
}

pub(crate) fn run(args: Args, out: &Output) -> Result<()> {
    let engine = engine(&args, out)?;
    let game = super::args::game_paks(out, args.game.as_deref(), args.game_dir.as_deref())?;
    let source = ViewSource::open(&args.paths, game.as_deref(), &args.key.keys()?)?;
    out.diagnostics(&source.view().diagnostics);
    let script_objects = match &args.script_objects {
        Some(path) => Some(load_script_objects(path, engine)?),
        None => None,
    };
    let request = ExtractRequest {
        engine,
        output: args.output.clone(),
        filters: args.filters.clone(),
        with_dependencies: args.with_deps,
        force: args.force,
        options: ExtractOptions {
            allow_unresolved: args.allow_unresolved,
            verify: args.verify,
        },
        output_budget: args.max_output.budget(),
    };
    let mut progress = None;
    let summary = extract(
        &source,
        &request,
        script_objects.as_ref(),
        &mut |event| match event {
            ExtractEvent::Planned {
                packages, warnings, ..
            } => {
                out.diagnostics(warnings);
                progress = Some(out.progress("Extracting", *packages as u64));
            }
            ExtractEvent::Package {
                package_name,
                warnings,
                ok,
                unresolved,
                ..
            } => {
                if let Some(d) = unresolved_diagnostic(out, package_name, *ok, unresolved) {
                    out.diagnostic(&d);
                }
                for warning in warnings {
                    let mut warning = warning.clone();
                    if warning.file.is_none() {
                        warning.file = Some(package_name.clone());
                    }
                    out.diagnostic(&warning);
                }
                if let Some(p) = &progress {
                    p.step(package_name);
                }
            }
        },
    )?;
    drop(progress);
    for skipped in &summary.skipped {
        out.note(
            "skipped",
            format!("skipped {}: {}", skipped.what, skipped.reason),
        );
    }
    out.report(args.json, "extracted", &summary, || {
        println!(
            "extracted {} and {} ({}) into {}",
            super::output::count(summary.packages, "package"),
            super::output::count(summary.files, "file"),
            super::build::human_bytes(summary.bytes_written),
            summary.output.display()
        )
    });
    match summary
        .failure_error()
        .or_else(|| source.view().unreadable_error())
    {
        Some(e) => Err(e),
        None => Ok(()),
    }
}
