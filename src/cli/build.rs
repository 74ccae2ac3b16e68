//! `zenpak build`: build the mod of the nearest `mod.toml` into its triplet.
//! Progress bar on a terminal, a summary at the end, or one JSON object per
//! line with `--message-format json`.

use std::io::IsTerminal;
use std::sync::Mutex;

use indicatif::{ProgressBar, ProgressStyle};
use zenpak::build::{BuildOptions, BuildSummary, Event, Reporter};
use zenpak::Result;

use super::release::ManifestArgs;
use super::{print_json_line, GlobalOptions, MessageFormat};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub manifest: ManifestArgs,
    /// Convert every package again and rewrite the outputs, ignoring the cache.
    #[arg(long)]
    pub force: bool,
}

/// Prints build events as the user asked.
struct Printer {
    format: MessageFormat,
    quiet: bool,
    bar: Mutex<Option<ProgressBar>>,
}

impl Reporter for Printer {
    fn event(&self, event: Event<'_>) {
        match (self.format, event) {
            (MessageFormat::Json, Event::Package { source, reused }) => {
                let _ = print_json_line(&serde_json::json!({
                    "reason": "package",
                    "package": source.package_name,
                    "path": source.relative_path,
                    "reused": reused,
                }));
            }
            (MessageFormat::Json, Event::Warning { message }) => {
                let _ =
                    print_json_line(&serde_json::json!({"reason": "warning", "message": message}));
            }
            (MessageFormat::Json, _) => {}
            (
                MessageFormat::Human,
                Event::Started {
                    packages,
                    to_convert,
                    ..
                },
            ) => {
                if self.quiet || !std::io::stderr().is_terminal() {
                    return;
                }
                let bar = ProgressBar::new(packages as u64);
                bar.set_style(
                    ProgressStyle::with_template("  Converting [{bar:40}] {pos}/{len} {wide_msg}")
                        .unwrap_or_else(|_| ProgressStyle::default_bar())
                        .progress_chars("=> "),
                );
                bar.set_message(format!("{to_convert} to convert"));
                *self.bar.lock().unwrap_or_else(|e| e.into_inner()) = Some(bar);
            }
            (MessageFormat::Human, Event::Package { source, .. }) => {
                if let Some(bar) = &*self.bar.lock().unwrap_or_else(|e| e.into_inner()) {
                    bar.inc(1);
                    bar.set_message(source.package_name.clone());
                }
            }
            (MessageFormat::Human, Event::Warning { message }) => {
                let guard = self.bar.lock().unwrap_or_else(|e| e.into_inner());
                match &*guard {
                    Some(bar) => bar.println(format!("warning: {message}")),
                    None if !self.quiet => eprintln!("warning: {message}"),
                    None => {}
                }
            }
            (MessageFormat::Human, Event::Writing { stem }) => {
                if let Some(bar) = self.bar.lock().unwrap_or_else(|e| e.into_inner()).take() {
                    bar.finish_and_clear();
                }
                if !self.quiet {
                    eprintln!("     Writing {stem}.utoc, {stem}.ucas, {stem}.pak");
                }
            }
        }
    }
}

pub fn run(args: Args, global: &GlobalOptions) -> Result<()> {
    let manifest = args.manifest.load()?;
    let options = BuildOptions {
        force: args.force,
        aes_key: zenpak::build::aes_key(&manifest)?,
        hash_artifacts: global.message_format == MessageFormat::Json,
    };
    let printer = Printer {
        format: global.message_format,
        quiet: global.quiet,
        bar: Mutex::new(None),
    };
    if global.message_format == MessageFormat::Human && !global.quiet {
        eprintln!(
            "    Building {} v{} (UE {}, profile {})",
            manifest.package.name,
            manifest.package.version,
            manifest.game.engine,
            manifest.game.profile
        );
    }
    let result = zenpak::build::build(&manifest, &options, &printer);
    if let Some(bar) = printer.bar.lock().unwrap_or_else(|e| e.into_inner()).take() {
        bar.finish_and_clear();
    }
    match (&result, global.message_format) {
        (Ok(summary), MessageFormat::Json) => print_json_line(&finished_json(summary))?,
        (Ok(summary), MessageFormat::Human) if !global.quiet => print_summary(summary),
        (Err(e), MessageFormat::Json) => print_json_line(&serde_json::json!({
            "reason": "build-finished", "success": false, "error": e.to_string(),
        }))?,
        _ => {}
    }
    result.map(|_| ())
}

fn finished_json(summary: &BuildSummary) -> serde_json::Value {
    serde_json::json!({
        "reason": "build-finished",
        "success": true,
        "up_to_date": summary.up_to_date,
        "packages": summary.packages,
        "converted": summary.converted,
        "loose_files": summary.loose_files,
        "chunks": summary.chunks,
        "bytes_in": summary.bytes_in,
        "bytes_out": summary.bytes_out,
        "elapsed_ms": summary.elapsed.as_secs_f64() * 1000.0,
        "artifacts": summary.artifacts.iter().map(|a| serde_json::json!({
            "path": a.path.display().to_string(), "size": a.size, "sha256": a.sha256,
        })).collect::<Vec<_>>(),
    })
}

fn print_summary(summary: &BuildSummary) {
    if summary.up_to_date {
        eprintln!(
            "    Fresh {} packages, {} loose files: nothing to do ({:.0} ms)",
            summary.packages,
            summary.loose_files,
            summary.elapsed.as_secs_f64() * 1000.0
        );
    } else {
        eprintln!(
            "    Finished {} packages ({} converted, {} from cache), {} loose files, {} chunks, {} → {} in {:.2} s",
            summary.packages,
            summary.converted,
            summary.packages - summary.converted,
            summary.loose_files,
            summary.chunks,
            human_bytes(summary.bytes_in),
            human_bytes(summary.bytes_out),
            summary.elapsed.as_secs_f64()
        );
    }
    for artifact in &summary.artifacts {
        eprintln!(
            "      {} ({})",
            artifact.path.display(),
            human_bytes(artifact.size)
        );
    }
}

fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut value = n as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}
