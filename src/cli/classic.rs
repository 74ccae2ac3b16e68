//! `zenpak classic ...`: commands on classic Unreal packages (Unreal
//! Engine 1). `consolidate` makes a map use external packages instead of
//! the copies it embeds (`--embedded`, the default) or re-targets its
//! imports from one external package to another (`--retarget`); the work
//! is `zenpak::classic::consolidate`.

use std::fmt::Write as _;
use std::path::PathBuf;

use clap::Subcommand;
use zenpak::classic::consolidate::{
    consolidate, write_output, ConsolidationReport, Mode, PackageSpec, PackageStatus, Request,
};
use zenpak::classic::deps::PackageCache;
use zenpak::classic::Package;
use zenpak::{Error, Result};

use super::Output;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(subcommand)]
    pub(crate) command: ClassicCommand,
}

#[derive(Debug, Subcommand)]
pub(crate) enum ClassicCommand {
    /// Make a map refer to external packages instead of the copies it embeds.
    Consolidate(ConsolidateArgs),
}

#[derive(Debug, clap::Args)]
pub(crate) struct ConsolidateArgs {
    /// The map (.unr) to consolidate; it is only read.
    pub(crate) map: PathBuf,
    /// Packages to consolidate: NAME for embedded copies, FROM=TO with --retarget.
    #[arg(long = "package", required = true, num_args = 1..)]
    pub(crate) packages: Vec<String>,
    /// Folders holding the external packages, searched in order.
    #[arg(long, required = true, num_args = 1..)]
    pub(crate) search: Vec<PathBuf>,
    /// Where to write the consolidated map (never the input).
    #[arg(short, long, required_unless_present = "dry_run")]
    pub(crate) output: Option<PathBuf>,
    /// Replace embedded copies of the packages by imports (the default).
    #[arg(long, conflicts_with = "retarget")]
    pub(crate) embedded: bool,
    /// Re-target imports of package FROM to package TO.
    #[arg(long)]
    pub(crate) retarget: bool,
    /// Show what would change without writing anything.
    #[arg(long)]
    pub(crate) dry_run: bool,
    /// Print the report as JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

pub(crate) fn run(args: Args, out: &Output) -> Result<()> {
    match args.command {
        ClassicCommand::Consolidate(args) => run_consolidate(args, out),
    }
}

/// What `classic consolidate` did, with the file it read and what it wrote.
#[derive(serde::Serialize)]
struct Consolidated<'a> {
    file: String,
    dry_run: bool,
    written: Option<String>,
    #[serde(flatten)]
    report: &'a ConsolidationReport,
}

fn run_consolidate(args: ConsolidateArgs, out: &Output) -> Result<()> {
    let bytes = std::fs::read(&args.map).map_err(|e| Error::io(&args.map, e))?;
    let name = args
        .map
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let map = Package::parse(&bytes, &name).map_err(|e| e.in_file(&args.map))?;
    let request = Request {
        mode: if args.retarget {
            Mode::Retarget
        } else {
            Mode::Embedded
        },
        packages: args
            .packages
            .iter()
            .map(|p| PackageSpec::parse(p))
            .collect::<Result<_>>()?,
        search: args.search.clone(),
    };
    let result = consolidate(&bytes, &map, &request, &mut PackageCache::new())
        .map_err(|e| e.in_file(&args.map))?;
    let report = &result.report;
    let written = match (&result.bytes, &args.output, args.dry_run) {
        (Some(bytes), Some(output), false) => {
            write_output(&args.map, output, bytes)?;
            Some(output.clone())
        }
        _ => None,
    };
    let consolidated = Consolidated {
        file: args.map.display().to_string(),
        dry_run: args.dry_run,
        written: written.as_ref().map(|p| p.display().to_string()),
        report,
    };
    out.report(args.json, "consolidated", &consolidated, || {
        print!(
            "{}",
            render(&args.map.display().to_string(), report, written.as_ref())
        )
    });
    match report.problems_error() {
        Some(error) => Err(error.in_file(&args.map)),
        None => Ok(()),
    }
}

/// The text form. `writeln!` into a String cannot fail, hence the `.ok()`s.
fn render(file: &str, r: &ConsolidationReport, written: Option<&PathBuf>) -> String {
    let mut out = String::new();
    let o = &mut out;
    let mode = match r.mode {
        Mode::Embedded => "embedded copies",
        Mode::Retarget => "re-targeted imports",
    };
    writeln!(o, "{file}: map {}, {mode}", r.map).ok();
    for p in &r.packages {
        let what = match p.status {
            PackageStatus::Consolidated => {
                format!("embedded ({} exports): consolidated", p.members)
            }
            PackageStatus::NotEmbedded => "not embedded: nothing to do".to_string(),
            PackageStatus::Retargeted => "imported: re-targeted".to_string(),
            PackageStatus::NotImported => "not imported: nothing to do".to_string(),
            PackageStatus::Failed => "FAILED".to_string(),
        };
        let target = p
            .target
            .as_deref()
            .map(|t| format!(" -> {t}"))
            .unwrap_or_default();
        let file = p
            .file
            .as_ref()
            .map(|f| format!(" ({})", f.display()))
            .unwrap_or_default();
        writeln!(o, "  {}{target}: {what}{file}", p.package).ok();
    }
    if !r.repointed.is_empty() {
        writeln!(o, "  re-pointed {} object(s):", r.repointed.len()).ok();
        for x in &r.repointed {
            let added = if x.added { "new import" } else { "import" };
            writeln!(
                o,
                "    {} -> {} [{}] ({added} {})",
                x.from, x.to, x.class, x.import
            )
            .ok();
        }
    }
    let fields: usize = r.changed_exports.iter().map(|c| c.fields.len()).sum();
    let data: usize = r.changed_exports.iter().map(|c| c.data_references).sum();
    if fields + data > 0 {
        writeln!(
            o,
            "  {} reference(s) changed in {} export(s): {fields} in the export table, {data} in object data",
            fields + data,
            r.changed_exports.len()
        )
        .ok();
    }
    if !r.added_imports.is_empty() || !r.added_names.is_empty() {
        writeln!(
            o,
            "  added {} import(s), {} name(s) at the ends of their tables",
            r.added_imports.len(),
            r.added_names.len()
        )
        .ok();
    }
    if !r.unloaded_exports.is_empty() {
        writeln!(
            o,
            "  {} embedded export(s) are no longer loaded (kept in place, unreferenced)",
            r.unloaded_exports.len()
        )
        .ok();
    }
    if !r.problems.is_empty() {
        writeln!(
            o,
            "  {} object(s) cannot be resolved (listed below): nothing written, the map is unchanged",
            r.problems.len()
        )
        .ok();
        return out;
    }
    let result = if r.changed {
        format!(
            "changed, new GUID {}",
            r.guid.as_deref().unwrap_or("(none)")
        )
    } else {
        "byte-identical to the input".to_string()
    };
    match written {
        Some(path) => writeln!(
            o,
            "  wrote {} ({} bytes): {result}",
            path.display(),
            r.output_size
        ),
        None => writeln!(
            o,
            "  dry run, nothing written; the output would be {result}"
        ),
    }
    .ok();
    out
}
