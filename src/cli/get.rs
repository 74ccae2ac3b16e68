//! `zenpak get PATH FILE [-o OUT]`: writes one file of a container, pak or
//! game folder (the copy the game would load), checked before it appears.

use std::path::PathBuf;

use zenpak::game::GameView;
use zenpak::Result;

use super::key::KeyArgs;
use super::GlobalOptions;

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

pub fn run(args: Args, global: &GlobalOptions) -> Result<()> {
    let view = GameView::open(&args.path, &args.key.keys()?)?;
    let found = view.find_file(&args.file).map(|f| f.path.clone());
    let out = match (&args.output, &found) {
        (Some(o), _) => o.clone(),
        (None, Some(p)) => PathBuf::from(p.rsplit('/').next().unwrap_or(p)),
        (None, None) => PathBuf::from(args.file.rsplit('/').next().unwrap_or(&args.file)),
    };
    let bytes = view.get(&args.file, &out)?;
    if !global.quiet {
        println!("wrote {} ({bytes} bytes)", out.display());
    }
    Ok(())
}
