//! `zenpak convert PKG.uasset --engine V -o OUT.uzenasset`: converts one
//! cooked legacy package into the Zen package the engine would write.

use std::path::PathBuf;

use serde::Serialize;
use zenpak::legacy::PackageFiles;
use zenpak::zen::{convert, StoreEntryReport};
use zenpak::{EngineVersion, Error, Result};

use super::{GlobalOptions, MessageFormat};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The legacy package (`.uasset`/`.umap`, with its `.uexp` beside it).
    pub path: PathBuf,
    /// Engine version the package was cooked with (and the Zen package is written for).
    #[arg(long)]
    pub engine: EngineVersion,
    /// Long package name (`/Game/...`) for packages that do not carry it (UE4 cooks).
    #[arg(long)]
    pub package_name: Option<String>,
    /// Where to write the Zen package (header + export data). Bulk data
    /// companions are written beside it with their extensions.
    #[arg(short, long)]
    pub output: PathBuf,
    /// Also write the package's store entry (for the container header) as JSON.
    #[arg(long)]
    pub store_entry: Option<PathBuf>,
    /// Game profile whose fixups are applied before the conversion
    /// (`generic`: none; `marvel-rivals`: SkeletalMesh material padding).
    #[arg(long, default_value = "generic")]
    pub profile: zenpak::fixups::Profile,
    /// The game's mappings (.usmap): lets fixups find what they change by
    /// walking the property data instead of by structure alone.
    #[arg(long, value_name = "M.usmap")]
    pub mappings: Option<PathBuf>,
}

#[derive(Serialize)]
struct Report<'a> {
    package_name: &'a str,
    package_id: String,
    output: &'a PathBuf,
    bytes: usize,
    bulk_data: Vec<(String, usize)>,
    store_entry: StoreEntryReport<'a>,
    fixups: &'a zenpak::fixups::FixupReport,
}

fn write(path: &PathBuf, bytes: &[u8]) -> Result<()> {
    std::fs::write(path, bytes).map_err(|e| Error::io(path, e))
}

pub fn run(args: Args, global: &GlobalOptions) -> Result<()> {
    let mut files = PackageFiles::load(&args.path)?;
    let mappings = match &args.mappings {
        Some(path) => Some(zenpak::mappings::Mappings::load(path)?),
        None => None,
    };
    let fixups = args
        .profile
        .apply(&mut files, args.engine, mappings.as_ref())?;
    let legacy = files.read_package(Some(args.engine))?;
    let converted = convert(
        &files,
        &legacy,
        args.engine,
        args.package_name.as_deref().unwrap_or(""),
    )?;
    write(&args.output, &converted.package_bytes)?;
    let mut bulk = Vec::new();
    for (kind, bytes) in &converted.bulk_data {
        let path = args.output.with_extension(kind.extension());
        write(&path, bytes)?;
        bulk.push((path.display().to_string(), bytes.len()));
    }
    if let Some(path) = &args.store_entry {
        let text =
            serde_json::to_string_pretty(&converted.store_entry_report()).map_err(Error::json)?;
        write(path, text.as_bytes())?;
    }
    let report = Report {
        package_name: &converted.package_name,
        package_id: format!("{:#018x}", converted.package_id),
        output: &args.output,
        bytes: converted.package_bytes.len(),
        bulk_data: bulk,
        store_entry: converted.store_entry_report(),
        fixups: &fixups,
    };
    if global.message_format == MessageFormat::Json {
        super::print_json(&report)?;
    } else if !global.quiet {
        println!(
            "converted {} ({}, id {}) -> {} ({} bytes, {} exports, {} imported packages)",
            args.path.display(),
            report.package_name,
            report.package_id,
            args.output.display(),
            report.bytes,
            converted.store_entry.export_count,
            converted.store_entry.imported_packages.len()
        );
        for fix in &fixups.exports {
            println!(
                "  {} fixup: export {} {}: {} ({} bytes inserted; located by {})",
                fixups.profile,
                fix.export_index,
                fix.export_name,
                fix.what,
                fix.inserted_bytes,
                fix.located_by
            );
        }
        for (path, size) in &report.bulk_data {
            println!("  bulk data {path} ({size} bytes)");
        }
    }
    Ok(())
}
