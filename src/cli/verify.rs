//! `zenpak verify X.utoc`: every chunk decompresses and matches its hash,
//! the container header and directory index parse, the companion pak
//! exists and its index parses. Exit code 1 when anything is wrong.

use std::path::PathBuf;

use zenpak::iostore::Container;
use zenpak::{Error, Result};

use super::key::KeyArgs;
use super::GlobalOptions;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The container's `.utoc`.
    pub utoc: PathBuf,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub key: KeyArgs,
}

pub fn run(args: Args, global: &GlobalOptions) -> Result<()> {
    let container = Container::open(&args.utoc, args.key.key()?)?;
    let report = container.verify();
    if args.json || global.message_format == super::MessageFormat::Json {
        super::print_json(&report)?;
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
        Err(Error::other(format!(
            "{}: verification failed with {} error(s)",
            args.utoc.display(),
            report.errors.len()
        )))
    }
}
