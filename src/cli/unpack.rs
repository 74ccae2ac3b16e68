//! `zenpak unpack PATH DIR [--filter GLOB]`: writes the files of a
//! container, pak or game folder into DIR, never outside it. Zen packages
//! are written as `.uzenasset`/`.uzenmap` (they are not legacy packages).

use std::path::PathBuf;

use zenpak::game::GameView;
use zenpak::glob::Globs;
use zenpak::Result;

use super::args::{KeyArgs, MaxOutputArgs};
use super::build::human_bytes;
use super::output::count;
use super::Output;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// A `.utoc`, a `.pak` or a game's `Paks` folder.
    pub(crate) path: PathBuf,
    /// Output folder.
    pub(crate) dir: PathBuf,
    /// Only paths matching this glob (as `list --filter`). Repeatable.
    #[arg(long, value_name = "GLOB")]
    pub(crate) filter: Vec<String>,
    /// Write into an output folder that is not empty.
    #[arg(long)]
    pub(crate) force: bool,
    /// Print a JSON summary.
    #[arg(long)]
    pub(crate) json: bool,
    #[command(flatten)]
    pub(crate) key: KeyArgs,
    #[command(flatten)]
    pub(crate) max_output: MaxOutputArgs,
}

pub(crate) fn run(args: Args, out: &Output) -> Result<()> {
    let view = GameView::open(&args.path, &args.key.keys()?)?;
    out.diagnostics(&view.diagnostics);
    let keep = Globs::new("--filter", &args.filter)?;
    let selected = view.select(&|path| keep.is_empty() || keep.is_match(path));
    let local = selected.iter().filter(|f| !f.remote).count();
    let planned = selected
        .iter()
        .filter(|f| !f.remote)
        .fold(0u64, |sum, f| sum.saturating_add(f.size));
    let large = args
        .max_output
        .budget()
        .check(planned, view.input_bytes(), &args.path)?;
    out.diagnostics(&large.into_iter().collect::<Vec<_>>());
    zenpak::extract::container::check_output(&args.dir, args.force)?;
    let progress = out.progress("Unpacking", local as u64);
    let summary = view.unpack(&args.dir, &selected, &|f| progress.step(&f.path))?;
    drop(progress);
    // One warning per file the game streams instead of shipping.
    let remote: Vec<_> = summary
        .remote
        .iter()
        .map(|path| {
            zenpak::diagnostic::Diagnostic::warning(
                "on-demand-not-written",
                format!(
                    "`{}` was not written: it is an on-demand chunk whose data is not in the local .ucas",
                    zenpak::diagnostic::printable(path)
                ),
            )
        })
        .collect();
    out.diagnostics(&remote);
    out.report(args.json, "unpacked", &summary, || {
        println!(
            "unpacked {} ({}) into {}",
            count(summary.files, "file"),
            human_bytes(summary.bytes),
            args.dir.display()
        );
    });
    Ok(())
}
