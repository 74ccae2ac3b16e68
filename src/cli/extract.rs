//! `zenpak extract X.utoc -o DIR --engine V [--game PAKS] [--filter GLOB]...
//! [--with-deps] [--allow-unresolved] [--force]`: writes the container's
//! packages as legacy `.uasset`/`.umap` + `.uexp` (+ bulk companions) and
//! its other files as they are. Logic lives in `zenpak::extract::container`.

use std::io::IsTerminal;
use std::path::PathBuf;

use indicatif::{ProgressBar, ProgressStyle};
use zenpak::extract::container::{extract, Containers, ExtractEvent, ExtractRequest};
use zenpak::extract::{ExtractOptions, ScriptObjects};
use zenpak::{EngineVersion, Error, Result};

use super::key::KeyArgs;
use super::{GlobalOptions, JsonStyle, MessageFormat};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The container(s) to extract (`.utoc`, with `.ucas` and `.pak` beside it).
    #[arg(required = true)]
    pub utoc: Vec<PathBuf>,
    /// Output folder (created; must be empty unless --force).
    #[arg(short, long)]
    pub output: PathBuf,
    /// Engine release the containers were written for.
    #[arg(long)]
    pub engine: EngineVersion,
    /// The game's Paks folder: its containers resolve imports (and global.utoc
    /// gives the script objects). Not extracted unless --with-deps needs them.
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

pub fn run(args: Args, global: &GlobalOptions) -> Result<()> {
    let key = args.key.keys()?.default_key();
    let source = Containers::open(&args.utoc, args.game.as_deref(), key)?;
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
    let show_bar = global.message_format == MessageFormat::Human
        && !global.quiet
        && std::io::stderr().is_terminal();
    let mut bar: Option<ProgressBar> = None;
    let summary = extract(
        &source,
        &request,
        script_objects.as_ref(),
        &mut |event| match event {
            ExtractEvent::Planned { packages, .. } if show_bar => {
                let b = ProgressBar::new(*packages as u64);
                b.set_style(
                    ProgressStyle::with_template("  Extracting [{bar:40}] {pos}/{len} {wide_msg}")
                        .unwrap_or_else(|_| ProgressStyle::default_bar())
                        .progress_chars("=> "),
                );
                bar = Some(b);
            }
            ExtractEvent::Package { package_name, .. } => {
                if let Some(b) = &bar {
                    b.inc(1);
                    b.set_message(package_name.clone());
                }
            }
            _ => {}
        },
    )?;
    if let Some(b) = bar.take() {
        b.finish_and_clear();
    }
    if let Some(style) = JsonStyle::choose(global, args.json) {
        style.print(&summary)?;
    } else if !global.quiet {
        for report in &summary.warnings {
            for w in &report.warnings {
                eprintln!("warning: {}: {}", report.package_name, w.message);
            }
        }
        for s in &summary.skipped {
            eprintln!("skipped: {}: {}", s.what, s.reason);
        }
        for f in &summary.failures {
            eprintln!("error: {}: {}", f.location(), f.message);
        }
        println!(
            "extracted {} packages and {} files ({} bytes) into {}",
            summary.packages,
            summary.files,
            summary.bytes_written,
            summary.output.display()
        );
    }
    match summary.failure_error() {
        Some(e) => Err(e),
        None => Ok(()),
    }
}
