//! `zenpak convert PKG.uasset --engine V -o OUT.uzenasset`: converts one
//! cooked legacy package into the Zen package the engine would write,
//! through the same per-package pipeline as `zenpak build`.

use std::path::{Path, PathBuf};

use serde::Serialize;
use zenpak::build::package::{convert_files, Settings};
use zenpak::legacy::PackageFiles;
use zenpak::zen::StoreEntryReport;
use zenpak::{EngineVersion, Error, Result};

use super::args::{engine_from_nearest_manifest, engine_parser};
use super::output::Output;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The legacy package (`.uasset`/`.umap`, with its `.uexp` beside it).
    pub(crate) path: PathBuf,
    /// Engine version the package was cooked with (and the Zen package is
    /// written for). Default: the nearest mod.toml's `[game] engine`.
    #[arg(long, value_parser = engine_parser())]
    pub(crate) engine: Option<EngineVersion>,
    /// Long package name (`/Game/...`) for packages that do not carry it (UE4 cooks).
    #[arg(long)]
    pub(crate) package_name: Option<String>,
    /// Where to write the Zen package (header + export data). Bulk data
    /// companions are written beside it with their extensions.
    #[arg(short, long)]
    pub(crate) output: PathBuf,
    /// Also write the package's store entry (for the container header) as JSON.
    #[arg(long)]
    pub(crate) store_entry: Option<PathBuf>,
    /// Game profile whose fixups are applied before the conversion
    /// (`generic`: none; `marvel-rivals`: SkeletalMesh material padding).
    #[arg(long, default_value = "generic")]
    pub(crate) profile: zenpak::fixups::Profile,
    /// The game's mappings (.usmap): lets fixups find what they change by
    /// walking the property data instead of by structure alone.
    #[arg(long, value_name = "M.usmap")]
    pub(crate) mappings: Option<PathBuf>,
}

#[derive(Serialize)]
struct Report<'a> {
    package_name: &'a str,
    package_id: String,
    output: &'a PathBuf,
    bytes: u64,
    bulk_data: Vec<(String, u64)>,
    store_entry: StoreEntryReport<'a>,
    fixups: &'a [String],
}

/// Refuses an output that is one of the input's own files, or whose folder
/// is missing (`example`: an output to suggest instead).
pub(crate) fn check_output(output: &Path, input: &PackageFiles, example: &str) -> Result<()> {
    let inputs = [input.path.clone(), input.uexp_path.clone()]
        .into_iter()
        .chain(input.bulk.iter().map(|b| b.path.clone()));
    for file in inputs {
        if zenpak::publish::same_file(output, &file) {
            return Err(
                Error::usage("the output would overwrite the package's own file")
                    .in_file(output)
                    .with_hint(format!("write it elsewhere, e.g. `-o {example}`")),
            );
        }
    }
    check_output_folder(output)
}

/// Refuses an output whose folder is missing.
pub(crate) fn check_output_folder(output: &Path) -> Result<()> {
    let parent = output.parent().filter(|p| !p.as_os_str().is_empty());
    if let Some(parent) = parent {
        if !parent.is_dir() {
            return Err(Error::usage(format!(
                "the output folder {} does not exist",
                parent.display()
            ))
            .in_file(output)
            .with_hint("create the folder first, or choose another -o"));
        }
    }
    Ok(())
}

fn store_entry_report(built: &zenpak::build::built::BuiltPackage) -> StoreEntryReport<'_> {
    StoreEntryReport {
        package_id: built.package_id,
        package_name: &built.package_name,
        entry: &built.store_entry,
        soft_package_references: &built.soft_package_references,
    }
}

fn write_to(
    path: &Path,
    write: impl FnOnce(&mut zenpak::publish::temporary::TempFile) -> Result<()>,
) -> Result<()> {
    zenpak::publish::write_file(path, write)
}

pub(crate) fn run(args: Args, out: &Output) -> Result<()> {
    let engine = match args.engine {
        Some(engine) => engine,
        None => match engine_from_nearest_manifest() {
            Some((engine, manifest)) => {
                out.verbose_status("Using", format!("UE {engine} from {}", manifest.display()));
                engine
            }
            None => {
                return Err(Error::usage("which engine cooked this package?")
                    .with_hint("pass --engine (e.g. --engine 5.6), or run inside a mod whose mod.toml sets `[game] engine`"))
            }
        },
    };
    let files = PackageFiles::load(&args.path)?;
    check_output(&args.output, &files, "out/X.uzenasset")?;
    let mut settings = Settings::new(
        engine,
        args.profile,
        zenpak::fixups::ProfileOptions::default(),
        args.mappings.as_deref(),
    )?;
    settings.load_mappings()?;
    let built = convert_files(files, args.package_name.as_deref().unwrap_or(""), &settings)?;
    let pieces = built.package_pieces();
    write_to(&args.output, |f| {
        let path = f.path().to_path_buf();
        zenpak::iostore::write_pieces(&pieces, f, &path)
    })?;
    let mut bulk = Vec::new();
    for chunk in &built.bulk {
        let path = args.output.with_extension(chunk.kind.extension());
        let piece = [zenpak::iostore::ChunkPiece::File {
            path: &chunk.path,
            offset: 0,
            len: chunk.len,
        }];
        write_to(&path, |f| {
            let temp = f.path().to_path_buf();
            zenpak::iostore::write_pieces(&piece, f, &temp)
        })?;
        bulk.push((path.display().to_string(), chunk.len));
    }
    if let Some(path) = &args.store_entry {
        let text =
            serde_json::to_string_pretty(&store_entry_report(&built)).map_err(Error::json)?;
        write_to(path, |f| {
            use std::io::Write;
            f.write_all(text.as_bytes())
                .map_err(|e| Error::io(f.path(), e))
        })?;
    }
    let report = Report {
        package_name: &built.package_name,
        package_id: format!("{:#018x}", built.package_id),
        output: &args.output,
        bytes: built.package_len(),
        bulk_data: bulk,
        store_entry: store_entry_report(&built),
        fixups: &built.fixups,
    };
    out.data("converted", &report, || {
        println!(
            "converted {} ({}, id {}) -> {} ({} bytes, {} exports, {} imported packages)",
            args.path.display(),
            report.package_name,
            report.package_id,
            args.output.display(),
            report.bytes,
            built.store_entry.export_count,
            built.store_entry.imported_packages.len()
        );
        for fix in &built.fixups {
            println!("  {} fixup: {fix}", args.profile.name());
        }
        for (path, size) in &report.bulk_data {
            println!("  bulk data {path} ({size} bytes)");
        }
    });
    Ok(())
}
