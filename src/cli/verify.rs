//! `zenpak verify PATH`: every chunk decompresses and matches its hash, no
//! two chunks or pak entries share bytes, the container headers and
//! directory indexes parse, every pak entry matches its SHA-1. Exit code 1
//! when anything is wrong.

use zenpak::game::GameView;
use zenpak::{Error, Result};

use super::key::SourceArgs;
use super::{GlobalOptions, JsonStyle};

pub type Args = SourceArgs;

pub fn run(args: Args, global: &GlobalOptions) -> Result<()> {
    let view = GameView::open(&args.path, &args.key.keys()?)?;
    let report = view.verify();
    if let Some(style) = JsonStyle::choose(global, args.json) {
        style.print(&report)?;
    } else {
        for w in &report.warnings {
            eprintln!("warning: {w}");
        }
        for e in &report.errors {
            eprintln!("error: {e}");
        }
        if !global.quiet && report.is_ok() {
            println!(
                "{}: ok — {} chunks, {} packages, {} pak entries",
                args.path.display(),
                report.chunks_checked,
                report.packages,
                report.pak_entries
            );
        }
    }
    if report.is_ok() {
        Ok(())
    } else {
        Err(Error::invalid(format!(
            "{}: verification failed with {} error(s)",
            args.path.display(),
            report.errors.len()
        )))
    }
}
