//! `zenpak list PATH [--filter GLOB] [--json]`: the files a container, pak
//! or game folder holds (winning copies, as the game sees them).

use zenpak::game::{path_filter, GameView};
use zenpak::Result;

use super::key::SourceArgs;
use super::{GlobalOptions, JsonStyle};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub source: SourceArgs,
    /// Only paths matching this glob (`*` within a folder, `**` across,
    /// case-insensitive; without `/` it matches file names). Repeatable.
    #[arg(long, value_name = "GLOB")]
    pub filter: Vec<String>,
}

pub fn run(args: Args, global: &GlobalOptions) -> Result<()> {
    let view = GameView::open(&args.source.path, &args.source.key.keys()?)?;
    let keep = path_filter(&args.filter)?;
    let files: Vec<_> = view.files().iter().filter(|f| keep(&f.path)).collect();
    if let Some(style) = JsonStyle::choose(global, args.source.json) {
        return style.print(&files);
    }
    for d in &view.diagnostics {
        eprintln!("warning: {d}");
    }
    if global.quiet {
        return Ok(());
    }
    println!("{:>12}  {:<22}  {:<28}  path", "size", "kind", "source");
    for f in &files {
        println!(
            "{:>12}  {:<22}  {:<28}  {}",
            f.size, f.kind, f.source, f.path
        );
    }
    Ok(())
}
