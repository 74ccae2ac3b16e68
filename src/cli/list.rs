//! `zenpak list X.utoc [--json]`: the chunks of a container with type,
//! size and path.

use zenpak::iostore::Container;
use zenpak::Result;

use super::key::ContainerArgs;
use super::{GlobalOptions, JsonStyle};

pub type Args = ContainerArgs;

pub fn run(args: Args, global: &GlobalOptions) -> Result<()> {
    let container = Container::open(&args.utoc, args.key.key()?)?;
    let chunks = container.chunks();
    if let Some(style) = JsonStyle::choose(global, args.json) {
        return style.print(&chunks);
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
