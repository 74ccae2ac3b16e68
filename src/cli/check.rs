//! `zenpak check`: validate the manifest and content without writing anything.

use serde::Serialize;
use zenpak::{Error, Result};

use super::args::ManifestArgs;
use super::build::count;
use super::output::Output;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub manifest: ManifestArgs,
}

/// How many packages the game must have are listed without `--verbose`.
const NEEDED_SHOWN: usize = 5;

#[derive(Serialize)]
struct CheckLine<'a> {
    packages: usize,
    loose_files: usize,
    problems: usize,
    warnings: usize,
    must_exist_in_game: &'a [String],
    suggested_exclude: &'a [String],
}

pub fn run(args: Args, out: &Output) -> Result<()> {
    let manifest = args.manifest.load()?;
    let report = zenpak::build::check::check(&manifest)?;
    out.diagnostics(&report.warnings);
    out.diagnostics(&report.problems);
    let needed = &report.must_exist_in_game;
    if !needed.is_empty() && !out.is_json() {
        let shown = if out.verbose {
            needed.len()
        } else {
            needed.len().min(NEEDED_SHOWN)
        };
        let mut message = format!(
            "{} packages are imported but not in the mod; the game must have them: {}",
            needed.len(),
            needed[..shown].join(", ")
        );
        if shown < needed.len() {
            message.push_str(&format!(", … (--verbose lists all {})", needed.len()));
        }
        out.note("must-exist-in-game", message);
    }
    out.data(
        "check",
        &CheckLine {
            packages: report.packages,
            loose_files: report.loose_files,
            problems: report.problems.len(),
            warnings: report.warnings.len(),
            must_exist_in_game: needed,
            suggested_exclude: &report.suggested_exclude,
        },
        || {
            out.status(
                "Checked",
                format!(
                    "{}, {}: {}, {}",
                    count(report.packages, "package"),
                    count(report.loose_files, "loose file"),
                    count(report.problems.len(), "problem"),
                    count(report.warnings.len(), "warning")
                ),
            )
        },
    );
    if !report.suggested_exclude.is_empty() && !out.is_json() {
        out.note(
            "suggested-exclude",
            format!(
                "to leave out what a mod must not contain, add to `[content] exclude` in mod.toml: exclude = [{}]",
                report
                    .suggested_exclude
                    .iter()
                    .map(|p| format!("\"{p}\""))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        );
    }
    if report.is_ok() {
        Ok(())
    } else {
        Err(Error::invalid(format!(
            "{} found",
            count(report.problems.len(), "problem")
        )))
    }
}
