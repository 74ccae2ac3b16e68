//! `zenpak verify PATH`: every chunk decompresses and matches its hash, no
//! two chunks or pak entries share bytes, the container headers and
//! directory indexes parse, every pak entry matches its SHA-1. Exit code 1
//! when anything is wrong; `--verbose` adds notes on what is unusual but
//! loads in the game.

use zenpak::game::GameView;
use zenpak::{Error, Result};

use super::args::SourceArgs;
use super::Output;

pub(crate) type Args = SourceArgs;

pub(crate) fn run(args: Args, out: &Output) -> Result<()> {
    let view = GameView::open(&args.path, &args.key.keys()?)?;
    let report = view.verify();
    // Notes (what loads in the game but is unusual) with --verbose, and always in JSON.
    if out.verbose || out.is_json() {
        out.diagnostics(&report.notes);
    }
    out.diagnostics(&report.warnings);
    out.diagnostics(&report.errors);
    out.report(args.json, "verified", &report, || {
        if report.is_ok() {
            println!(
                "{}: ok — {} chunks, {} packages, {} pak entries",
                args.path.display(),
                report.chunks_checked,
                report.packages,
                report.pak_entries
            );
            if report.remote_chunks > 0 {
                println!(
                    "  {} on-demand chunks are not local and were not checked",
                    report.remote_chunks
                );
            }
        }
    });
    if report.is_ok() {
        Ok(())
    } else {
        Err(Error::invalid(format!(
            "verification failed with {}",
            super::output::count(report.errors.len(), "error")
        ))
        .in_file(&args.path))
    }
}
