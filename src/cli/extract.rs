//! `zenpak extract PATH... -o DIR --engine V [--game PAKS] [--filter GLOB]...
//! [--with-deps] [--allow-unresolved] [--force]`: writes the packages of the
//! named containers, paks or `Paks/` folders as legacy `.uasset`/`.umap` +
//! `.uexp` (+ bulk companions) and their other files as they are. Logic
//! lives in `zenpak::extract::container`.

use std::path::PathBuf;

use zenpak::extract::container::{extract, ExtractEvent, ExtractRequest, ViewSource};
use zenpak::extract::{ExtractOptions, ScriptObjects};
use zenpak::{EngineVersion, Error, Result};

use super::args::KeyArgs;
use super::Output;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// What to extract: a `.utoc` (with its `.ucas` and `.pak`), a `.pak`
    /// (with its container, if any), or a game's `Paks` folder (every pak
    /// and container, in the engine's mount order). Repeatable.
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Output folder (created; must be empty unless --force).
    #[arg(short, long)]
    pub output: PathBuf,
    /// Engine release the containers were written for.
    #[arg(long)]
    pub engine: EngineVersion,
    /// The game's Paks folder, mounted first: its containers resolve imports
    /// (and global.utoc gives the script objects). Not extracted unless
    /// --with-deps needs them.
    #[arg(long, value_name = "DIR")]
    pub game: Option<PathBuf>,
    /// Extract only packages whose name matches (e.g. `/Game/Characters/**`); repeatable.
    #[arg(long = "filter", value_name = "GLOB")]
    pub filters: Vec<String>,
    /// Also extract the packages the selected ones import.
    #[arg(long)]
    pub with_deps: bool,
    /// Write placeholders for imports that cannot be resolved instead of failing.
    #[arg(long)]
    pub allow_unresolved: bool,
    /// Write into an output folder that is not empty.
    #[arg(long)]
    pub force: bool,
    /// Convert each extracted package back and warn when it differs from the original.
    #[arg(long)]
    pub verify: bool,
    /// The game's script objects: a file (the ScriptObjects chunk of
    /// global.utoc), or a folder of cooked legacy packages whose /Script/
    /// imports name them (with their classes).
    #[arg(long, value_name = "FILE|DIR")]
    pub script_objects: Option<PathBuf>,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub key: KeyArgs,
}

pub fn run(args: Args, out: &Output) -> Result<()> {
    let source = ViewSource::open(&args.paths, args.game.as_deref(), &args.key.keys()?)?;
    out.diagnostics(&source.view().diagnostics);
    let script_objects = match &args.script_objects {
        Some(dir) if dir.is_dir() => Some(ScriptObjects::from_legacy_folder(dir, args.engine)?),
        Some(path) => {
            let data = std::fs::read(path).map_err(|e| Error::io(path, e))?;
            Some(ScriptObjects::read_ue5(&data).map_err(|e| e.in_file(path))?)
        }
        None => None,
    };
    let request = ExtractRequest {
        engine: args.engine,
        output: args.output.clone(),
        filters: args.filters.clone(),
        with_dependencies: args.with_deps,
        force: args.force,
        options: ExtractOptions {
            allow_unresolved: args.allow_unresolved,
            verify: args.verify,
        },
    };
    let mut progress = None;
    let summary = extract(
        &source,
        &request,
        script_objects.as_ref(),
        &mut |event| match event {
            ExtractEvent::Planned { packages, .. } => {
                progress = Some(out.progress("Extracting", *packages as u64));
            }
            ExtractEvent::Package {
                package_name,
                warnings,
                ..
            } => {
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
            "extracted {} packages and {} files ({} bytes) into {}",
            summary.packages,
            summary.files,
            summary.bytes_written,
            summary.output.display()
        )
    });
    match summary.failure_error() {
        Some(e) => Err(e),
        None => Ok(()),
    }
}
