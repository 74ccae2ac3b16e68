//! `zenpak verify X.utoc`: every chunk decompresses and matches its hash,
//! the container header and directory index parse, the companion pak
//! exists and its index parses. Exit code 1 when anything is wrong.

use zenpak::iostore::Container;
use zenpak::{Error, Result};

use super::key::ContainerArgs;
use super::{GlobalOptions, JsonStyle};

pub type Args = ContainerArgs;

pub fn run(args: Args, global: &GlobalOptions) -> Result<()> {
    let container = Container::open(&args.utoc, args.key.key()?)?;
    let report = container.verify();
    if let Some(style) = JsonStyle::choose(global, args.json) {
        style.print(&report)?;
    } else {
        for w in &report.warnings {
            eprintln!("warning: {w}");
        }
        for e in &report.errors {
            eprintln!("error: {e}");
        }
        if !global.quiet && report.errors.is_empty() {
            println!(
                "{}: ok — {} chunks, {} packages, {} pak entries",
                args.utoc.display(),
                report.chunks_checked,
                report.packages,
                report.pak_entries
            );
        }
    }
    if report.errors.is_empty() {
        Ok(())
    } else {
        Err(Error::invalid(format!(
            "{}: verification failed with {} error(s)",
            args.utoc.display(),
            report.errors.len()
        )))
    }
}
