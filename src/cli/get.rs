//! `zenpak get PATH FILE [-o OUT]`: writes one file of a container, pak or
//! game folder (the copy the game would load), checked before it appears.

use std::path::PathBuf;

use zenpak::game::GameView;
use zenpak::Result;

use super::args::KeyArgs;
use super::Output;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// A `.utoc`, a `.pak` or a game's `Paks` folder.
    pub path: PathBuf,
    /// The file, as `zenpak list` shows it (a package's stored `.uasset`
    /// path works too).
    pub file: String,
    /// Where to write it (default: its file name in the current folder).
    #[arg(short, long, value_name = "OUT")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub key: KeyArgs,
}

#[derive(serde::Serialize)]
struct Written<'a> {
    file: &'a str,
    output: &'a std::path::Path,
    bytes: u64,
}

pub fn run(args: Args, out: &Output) -> Result<()> {
    let view = GameView::open(&args.path, &args.key.keys()?)?;
    out.diagnostics(&view.diagnostics);
    let found = view.find_file(&args.file).map(|f| f.path.clone());
    let output = match (&args.output, &found) {
        (Some(o), _) => o.clone(),
        (None, Some(p)) => PathBuf::from(p.rsplit('/').next().unwrap_or(p)),
        (None, None) => PathBuf::from(args.file.rsplit('/').next().unwrap_or(&args.file)),
    };
    let bytes = view.get(&args.file, &output)?;
    let written = Written {
        file: found.as_deref().unwrap_or(&args.file),
        output: &output,
        bytes,
    };
    out.data("written", &written, || {
        println!("wrote {} ({bytes} bytes)", output.display())
    });
    Ok(())
}
