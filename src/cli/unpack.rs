//! `zenpak unpack X.utoc DIR`: writes the container's chunks (by path) and
//! the companion pak's files into DIR, never outside it.

use std::path::PathBuf;

use zenpak::iostore::Container;
use zenpak::pak::PakReader;
use zenpak::Result;

use super::key::KeyArgs;
use super::GlobalOptions;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The container's `.utoc`.
    pub utoc: PathBuf,
    /// Output folder.
    pub dir: PathBuf,
    #[command(flatten)]
    pub key: KeyArgs,
}

pub fn run(args: Args, global: &GlobalOptions) -> Result<()> {
    let key = args.key.key()?;
    let container = Container::open(&args.utoc, key.clone())?;
    let chunks = container.unpack(&args.dir)?;
    let pak_path = args.utoc.with_extension("pak");
    let mut pak_files = 0;
    if pak_path.is_file() {
        pak_files = PakReader::open(&pak_path, key)?.unpack(&args.dir)?;
    }
    if !global.quiet {
        println!(
            "unpacked {chunks} chunks and {pak_files} pak files into {}",
            args.dir.display()
        );
    }
    Ok(())
}
