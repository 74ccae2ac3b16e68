//! `zenpak list X.utoc [--json]`: the chunks of a container with type,
//! size and path.

use std::path::PathBuf;

use zenpak::iostore::Container;
use zenpak::Result;

use super::key::KeyArgs;
use super::GlobalOptions;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The container's `.utoc`.
    pub utoc: PathBuf,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub key: KeyArgs,
}

pub fn run(args: Args, global: &GlobalOptions) -> Result<()> {
    let container = Container::open(&args.utoc, args.key.key()?)?;
    let chunks = container.chunks();
    if args.json || global.message_format == super::MessageFormat::Json {
        return super::print_json(&chunks);
    }
    if global.quiet {
        return Ok(());
    }
    println!(
        "{:>6}  {:<24}  {:<22}  {:>12}  path",
        "index", "chunk id", "type", "size"
    );
    for c in &chunks {
        println!(
            "{:>6}  {:<24}  {:<22}  {:>12}  {}",
            c.index,
            c.id,
            format!("{:?}", c.chunk_type),
            c.size,
            c.path.as_deref().unwrap_or("-")
        );
    }
    Ok(())
}
