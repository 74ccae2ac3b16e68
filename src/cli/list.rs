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

/// The files the filter keeps, made one at a time as they are written
/// (a game of a million chunks is not held twice).
struct Listing<'a> {
    view: &'a GameView,
    keep: &'a Globs,
}

impl<'a> Listing<'a> {
    fn files(&self) -> impl Iterator<Item = GameFile<'a>> + 'a {
        let keep = self.keep;
        self.view
            .files()
            .filter(move |f| keep.is_empty() || keep.is_match(&f.path))
    }
}

impl Serialize for Listing<'_> {
    fn serialize<S: serde::Serializer>(
        &self,
        serializer: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        struct Files<'b, 'a>(&'b Listing<'a>);
        impl Serialize for Files<'_, '_> {
            fn serialize<S: serde::Serializer>(
                &self,
                serializer: S,
            ) -> std::result::Result<S::Ok, S::Error> {
                serializer.collect_seq(self.0.files())
            }
        }
        let mut listing = serializer.serialize_struct("Listing", 1)?;
        listing.serialize_field("files", &Files(self))?;
        listing.end()
    }
}

pub(crate) fn run(args: Args, out: &Output) -> Result<()> {
    let view = GameView::open(&args.source.path, &args.source.key.keys()?)?;
    let keep = Globs::new("--filter", &args.filter)?;
    out.diagnostics(&view.diagnostics);
    let listing = Listing {
        view: &view,
        keep: &keep,
    };
    out.report(args.source.json, "files", &listing, || {
        println!("{:>12}  {:<22}  {:<28}  path", "size", "kind", "source");
        for f in listing.files() {
            // Paths and sources are read from containers: printed escaped.
            println!(
                "{:>12}  {:<22}  {:<28}  {}",
                f.size,
                f.kind,
                if f.remote {
                    format!("{} (remote)", printable(f.source))
                } else {
                    printable(f.source).into_owned()
                },
                printable(&f.path)
            );
        }
    });
    Ok(())
}
