//! `zenpak build`: build the mod of the nearest `mod.toml` into its triplet.

use std::sync::Mutex;

use serde::Serialize;
use zenpak::build::{BuildOptions, BuildSummary, Event, Reporter};
use zenpak::manifest::Manifest;
use zenpak::Result;

use super::args::ManifestArgs;
use super::output::{count, Output, Progress};

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(flatten)]
    pub(crate) manifest: ManifestArgs,
    /// Convert every package again and rewrite the outputs, ignoring the cache.
    #[arg(long)]
    pub(crate) force: bool,
    /// Write the canonical, reproducible layout. Without it, a rebuild
    /// appends the changed packages' chunks to the previous .ucas (fast;
    /// bytes depend on earlier builds). `package` always builds this way.
    #[arg(long)]
    pub(crate) release: bool,
    /// Check the mod against this game first (as `check --game-dir`): a
    /// problem stops the build before anything is written.
    #[arg(long = "game-dir", value_name = "DIR")]
    pub(crate) game_dir: Option<std::path::PathBuf>,
    /// Keys for the game's encrypted containers.
    #[command(flatten)]
    pub(crate) key: super::args::KeyArgs,
}

/// Shows build events through the output layer.
pub(crate) struct BuildPrinter<'a> {
    out: &'a Output,
    progress: Mutex<Option<Progress<'a>>>,
}

impl<'a> BuildPrinter<'a> {
    pub(crate) fn new(out: &'a Output) -> Self {
        BuildPrinter {
            out,
            progress: Mutex::new(None),
        }
    }

    fn end_progress(&self) {
        self.progress
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
    }
}

#[derive(Serialize)]
struct PackageLine<'a> {
    package: &'a str,
    path: &'a str,
    reused: bool,
    fixups: &'a [String],
}

impl Reporter for BuildPrinter<'_> {
    fn event(&self, event: Event<'_>) {
        match event {
            Event::Waiting { folder, pid } => {
                let holder = pid.map(|p| format!(" (pid {p})")).unwrap_or_default();
                self.out.status(
                    "Waiting",
                    format!("for another zenpak in {}{holder}", folder.display()),
                );
            }
            Event::Started {
                packages,
                to_convert,
                ..
            } => {
                self.out.verbose_status(
                    "Converting",
                    format!("{to_convert} of {packages} packages (the rest from the cache)"),
                );
                *self.progress.lock().unwrap_or_else(|e| e.into_inner()) =
                    Some(self.out.progress("Converting", packages as u64));
            }
            Event::Package {
                source,
                reused,
                fixups,
            } => {
                if self.out.is_json() {
                    self.out.data(
                        "package",
                        &PackageLine {
                            package: source.package_name(),
                            path: source.relative_path(),
                            reused,
                            fixups,
                        },
                        || {},
                    );
                }
                if let Some(progress) = &*self.progress.lock().unwrap_or_else(|e| e.into_inner()) {
                    progress.step(source.package_name());
                }
                for fixup in fixups {
                    self.out
                        .status("Fixed", format!("{}: {fixup}", source.package_name()));
                }
            }
            Event::Diagnostic(diagnostic) => self.out.diagnostic(&diagnostic),
            Event::Writing { stem } => {
                self.end_progress();
                self.out
                    .status("Writing", format!("{stem}.ucas, {stem}.utoc, {stem}.pak"));
            }
        }
    }
}

/// The JSON `build-finished` line and what the human summary shows.
#[derive(Serialize)]
pub(crate) struct Finished<'a> {
    pub(crate) up_to_date: bool,
    pub(crate) packages: usize,
    pub(crate) converted: usize,
    pub(crate) loose_files: usize,
    pub(crate) chunks: usize,
    pub(crate) bytes_in: u64,
    pub(crate) bytes_out: u64,
    pub(crate) warnings: usize,
    pub(crate) elapsed_ms: f64,
    /// `canonical`, `extended` (development layout), or null when up to date.
    pub(crate) layout: Option<zenpak::build::Layout>,
    pub(crate) reused_chunks: usize,
    pub(crate) artifacts: Vec<Artifact<'a>>,
}

#[derive(Serialize)]
pub(crate) struct Artifact<'a> {
    pub(crate) path: String,
    pub(crate) size: u64,
    /// Null in a development build (see `ArtifactRecord::blake3`).
    pub(crate) blake3: Option<&'a str>,
}

impl<'a> Finished<'a> {
    pub(crate) fn of(summary: &'a BuildSummary) -> Self {
        Finished {
            up_to_date: summary.up_to_date,
            packages: summary.packages,
            converted: summary.converted,
            loose_files: summary.loose_files,
            chunks: summary.chunks,
            bytes_in: summary.bytes_in,
            bytes_out: summary.bytes_out,
            warnings: summary.warnings,
            elapsed_ms: summary.elapsed.as_secs_f64() * 1000.0,
            layout: summary.layout,
            reused_chunks: summary.reused_chunks,
            artifacts: summary
                .artifacts
                .iter()
                .map(|a| Artifact {
                    path: a.path.display().to_string(),
                    size: a.stamp.size,
                    blake3: a.blake3.as_deref(),
                })
                .collect(),
        }
    }
}

/// Builds under the output folder's lock (which the caller holds) and
/// reports the result; shared by `build`, `package` and `install`.
/// Where a build finds the game and its keys (for patches on the game's assets).
#[derive(Clone, Copy)]
pub(crate) struct GameInput<'a> {
    pub(crate) dir: Option<&'a std::path::Path>,
    pub(crate) keys: &'a super::args::KeyArgs,
}

pub(crate) fn build_and_report(
    manifest: &Manifest,
    (force, release): (bool, bool),
    game: GameInput<'_>,
    out: &Output,
    lock: &zenpak::publish::lock::OutputLock,
) -> Result<BuildSummary> {
    let options = BuildOptions {
        force,
        release,
        aes_key: zenpak::build::aes_key(manifest)?,
        pak_key: zenpak::build::pak_key(manifest)?,
        staged: super::patch::patched_packages(manifest, game.dir, game.keys, out)?,
    };
    out.status(
        "Building",
        format!(
            "{} v{} (UE {}, profile {})",
            manifest.package.name,
            manifest.package.version,
            manifest.game.engine,
            manifest.game.profile
        ),
    );
    let printer = BuildPrinter::new(out);
    let result = zenpak::build::build_locked(manifest, &options, &printer, lock);
    printer.end_progress();
    let summary = result?;
    out.data("build-finished", &Finished::of(&summary), || {
        print_summary(out, &summary)
    });
    Ok(summary)
}

pub(crate) fn run(args: Args, out: &Output) -> Result<()> {
    let manifest = args.manifest.load()?;
    if let Some(dir) = &args.game_dir {
        let content = zenpak::build::check::check(&manifest)?;
        // The mod's data against the mappings is `check --game-dir`'s.
        let report = super::check::game_checks(
            out,
            &manifest,
            (dir, &args.key),
            (&content.mod_packages, &content.mod_loose_files),
            None,
        )?;
        out.data("game-check", &report.game, || {});
        if !report.is_ok() {
            return Err(zenpak::Error::invalid(format!(
                "{} found against the game in {}; nothing was built",
                count(report.errors(), "problem"),
                report.game.dir
            )));
        }
    }
    let lock = lock(&manifest, out)?;
    let game = GameInput {
        dir: args.game_dir.as_deref(),
        keys: &args.key,
    };
    build_and_report(&manifest, (args.force, args.release), game, out, &lock).map(|_| ())
}

/// Takes the output folder's lock, saying so while it waits.
pub(crate) fn lock(manifest: &Manifest, out: &Output) -> Result<zenpak::publish::lock::OutputLock> {
    zenpak::build::lock_output(manifest, &BuildPrinter::new(out))
}

fn print_summary(out: &Output, summary: &BuildSummary) {
    let warnings = match summary.warnings {
        0 => String::new(),
        n => format!(", {}", count(n, "warning")),
    };
    let (packages, loose_files) = (
        count(summary.packages, "package"),
        count(summary.loose_files, "loose file"),
    );
    if summary.up_to_date {
        out.status(
            "Fresh",
            format!(
                "{packages}, {loose_files}: nothing to do ({:.0} ms{warnings})",
                summary.elapsed.as_secs_f64() * 1000.0
            ),
        );
    } else {
        out.status(
            "Finished",
            format!(
                "{packages} ({} converted, {} from cache), {loose_files}, {}, {} → {} in {:.2} s{warnings}",
                summary.converted,
                summary.packages - summary.converted,
                count(summary.chunks, "chunk"),
                human_bytes(summary.bytes_in),
                human_bytes(summary.bytes_out),
                summary.elapsed.as_secs_f64()
            ),
        );
        if summary.layout == Some(zenpak::build::Layout::Extended) {
            out.verbose_status(
                "Extended",
                format!(
                    "the previous .ucas: {} chunks kept where they were, the changed ones appended (`--release` writes the canonical layout)",
                    summary.reused_chunks
                ),
            );
        }
    }
    for artifact in &summary.artifacts {
        out.status(
            "",
            format!(
                "{} ({})",
                artifact.path.display(),
                human_bytes(artifact.stamp.size)
            ),
        );
    }
}

pub(crate) fn human_bytes(n: u64) -> String {
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
