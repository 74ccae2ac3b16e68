//! The Zen-package branch of `zenpak inspect`.

use std::io::Write;
use std::path::Path;

use serde::Serialize;
use zenpak::zen::ZenPackage;
use zenpak::{EngineVersion, Error, Result};

use super::Output;

#[derive(Serialize)]
struct ZenReport<'a> {
    kind: &'static str,
    engine: EngineVersion,
    package_name: String,
    header_size: usize,
    names_text: Vec<&'a str>,
    #[serde(flatten)]
    package: &'a ZenPackage,
}

pub(crate) fn run(
    path: &Path,
    engine: Option<EngineVersion>,
    json: bool,
    out: &Output,
) -> Result<()> {
    let engine = engine.ok_or_else(|| {
        Error::usage("a Zen package does not say which engine wrote it")
            .in_file(path)
            .with_hint("pass --engine (e.g. --engine 5.6), or run inside a mod whose mod.toml sets `[game] engine`")
    })?;
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    let package = ZenPackage::read(&bytes, engine).map_err(|e| e.in_file(path))?;
    let header_size = bytes.len() - package.export_data.len();
    let report = ZenReport {
        kind: "zen-package",
        engine,
        package_name: package.package_name(),
        header_size,
        names_text: package.names.iter().map(|n| n.text.as_str()).collect(),
        package: &package,
    };
    out.report_text(json, "inspected", &report, |w| {
        print_package(w, path, engine, &package, header_size)
    });
    Ok(())
}

fn print_package(
    w: &mut dyn Write,
    path: &Path,
    engine: EngineVersion,
    package: &ZenPackage,
    header_size: usize,
) -> std::io::Result<()> {
    let s = &package.summary;
    writeln!(w, "zen package {} ({engine})", path.display())?;
    writeln!(w, "  name              {}", package.package_name())?;
    writeln!(w, "  package flags     {:#010x}", s.package_flags)?;
    writeln!(w, "  header size       {header_size}")?;
    writeln!(w, "  cooked header     {}", s.cooked_header_size)?;
    writeln!(w, "  versioned         {}", package.versioning.is_some())?;
    writeln!(w, "  export data       {} bytes", package.export_data.len())?;
    writeln!(w, "names ({})", package.names.len())?;
    for (i, n) in package.names.iter().enumerate() {
        writeln!(
            w,
            "  {i:4} {}{}",
            n.text,
            if n.wide { " (utf-16)" } else { "" }
        )?;
    }
    if !package.bulk_data.is_empty() {
        writeln!(w, "bulk data ({})", package.bulk_data.len())?;
        for (i, b) in package.bulk_data.iter().enumerate() {
            writeln!(
                w,
                "  {i:4} offset {} size {} duplicate {} flags {:#x} cooked index {}",
                b.serial_offset, b.serial_size, b.duplicate_serial_offset, b.flags, b.cooked_index
            )?;
        }
    }
    if !package.imported_public_export_hashes.is_empty() {
        writeln!(
            w,
            "imported public export hashes ({})",
            package.imported_public_export_hashes.len()
        )?;
        for (i, h) in package.imported_public_export_hashes.iter().enumerate() {
            writeln!(w, "  {i:4} {h:#018x}")?;
        }
    }
    writeln!(w, "imports ({})", package.imports.len())?;
    for (i, imp) in package.imports.iter().enumerate() {
        writeln!(w, "  {i:4} {}", imp.describe())?;
    }
    writeln!(w, "exports ({})", package.exports.len())?;
    for (i, e) in package.exports.iter().enumerate() {
        writeln!(w,
            "  {i:4} {} class {} outer {} super {} template {} flags {:#x} filter {} offset {} size {} public hash {:#018x}",
            package.name_text(e.object_name),
            e.class_index.describe(),
            e.outer_index.describe(),
            e.super_index.describe(),
            e.template_index.describe(),
            e.object_flags,
            e.filter_flags,
            e.cooked_serial_offset,
            e.cooked_serial_size,
            e.public_export_hash
        )?;
    }
    writeln!(
        w,
        "export bundles ({} headers, {} entries)",
        package.export_bundle_headers.len(),
        package.export_bundle_entries.len()
    )?;
    for h in &package.export_bundle_headers {
        writeln!(
            w,
            "  bundle first {} count {} offset {:?}",
            h.first_entry_index, h.entry_count, h.serial_offset
        )?;
    }
    for e in &package.export_bundle_entries {
        writeln!(w, "  {:?} {}", e.command, e.export_index)?;
    }
    if !package.dependency_bundle_headers.is_empty() {
        writeln!(
            w,
            "dependency bundles ({})",
            package.dependency_bundle_headers.len()
        )?;
        for (i, h) in package.dependency_bundle_headers.iter().enumerate() {
            let first = h.first_entry_index.max(0) as usize;
            let end =
                (first + h.entry_count() as usize).min(package.dependency_bundle_entries.len());
            let entries: Vec<i32> = package.dependency_bundle_entries[first.min(end)..end]
                .iter()
                .map(|e| e.package_index)
                .collect();
            writeln!(
                w,
                "  export {i:4}: CbC {} SbC {} CbS {} SbS {} -> {entries:?}",
                h.create_before_create,
                h.serialize_before_create,
                h.create_before_serialize,
                h.serialize_before_serialize
            )?;
        }
    }
    if !package.internal_arcs.is_empty() || !package.external_arcs.is_empty() {
        writeln!(
            w,
            "graph data: {} internal arcs",
            package.internal_arcs.len()
        )?;
        for (i, arcs) in package.external_arcs.iter().enumerate() {
            writeln!(w, "  imported package {i}: {} external arcs", arcs.len())?;
        }
    }
    for p in &package.package_arcs {
        writeln!(w, "  package {:#018x}: {:?}", p.package_id, p.arcs)?;
    }
    let imported = package.imported_package_names.full_names();
    if !imported.is_empty() {
        writeln!(w, "imported packages ({})", imported.len())?;
        for n in imported {
            writeln!(w, "  {n} ({:#018x})", zenpak::hash::package_id(&n))?;
        }
    }
    Ok(())
}
