//! `zenpak list PATH [--filter GLOB] [--json]`: the files a container, pak
//! or game folder holds (winning copies, as the game sees them).

use serde::Serialize;
use zenpak::diagnostic::printable;
use zenpak::game::{GameFile, GameView};
use zenpak::glob::Globs;
use zenpak::Result;

use super::args::SourceArgs;
use super::Output;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(flatten)]
    pub(crate) source: SourceArgs,
    /// Only paths matching this glob (`*` within a folder, `**` across,
    /// case-insensitive; without `/` it matches file names). Repeatable.
    #[arg(long, value_name = "GLOB")]
    pub(crate) filter: Vec<String>,
}

#[derive(Serialize)]
struct Listing<'a> {
    files: Vec<&'a GameFile>,
}

pub(crate) fn run(args: Args, out: &Output) -> Result<()> {
    let view = GameView::open(&args.source.path, &args.source.key.keys()?)?;
    let keep = Globs::new("--filter", &args.filter)?;
    out.diagnostics(&view.diagnostics);
    let listing = Listing {
        files: view
            .files()
            .iter()
            .filter(|f| keep.is_empty() || keep.is_match(&f.path))
            .collect(),
    };
    out.report(args.source.json, "files", &listing, || {
        println!("{:>12}  {:<22}  {:<28}  path", "size", "kind", "source");
        for f in &listing.files {
            // Paths and sources are read from containers: printed escaped.
            println!(
                "{:>12}  {:<22}  {:<28}  {}",
                f.size,
                f.kind,
                if f.remote {
                    format!("{} (remote)", printable(&f.source))
                } else {
                    printable(&f.source).into_owned()
                },
                printable(&f.path)
            );
        }
    });
    Ok(())
}
