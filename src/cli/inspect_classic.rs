//! The classic-package branch of `zenpak inspect`: prints the header with
//! flags decoded, the name, import and export tables with every object
//! reference as a full dotted path, and each export's data range.

use std::io::Write;
use std::path::Path;

use zenpak::classic::report::{Flags, PackageReport};
use zenpak::classic::Package;
use zenpak::Result;

use super::Output;

pub(crate) fn run(path: &Path, json: bool, out: &Output) -> Result<()> {
    let package = Package::read_file(path)?;
    let report = PackageReport::new(&package);
    // Streamed: a package may declare a million exports.
    out.report_text(json, "inspected", &report, |w| {
        render(w, &path.display().to_string(), &report)
    });
    Ok(())
}

fn flags(f: &Flags) -> String {
    if f.names.is_empty() {
        format!("0x{:08x}", f.value)
    } else {
        format!("0x{:08x} {}", f.value, f.names.join(" | "))
    }
}

/// The text form, written to `o` row by row.
fn render(o: &mut dyn Write, file: &str, r: &PackageReport) -> std::io::Result<()> {
    writeln!(o, "{file}: classic Unreal package {}", r.package)?;
    writeln!(
        o,
        "  file version   {} (licensee {})",
        r.file_version, r.licensee_version
    )?;
    writeln!(o, "  file size      {} bytes", r.file_size)?;
    writeln!(o, "  package flags  {}", flags(&r.package_flags))?;
    if let Some(guid) = &r.guid {
        writeln!(o, "  guid           {guid}")?;
    }
    if let Some(generations) = &r.generations {
        let list: Vec<String> = generations
            .iter()
            .map(|g| format!("{} exports/{} names", g.export_count, g.name_count))
            .collect();
        writeln!(
            o,
            "  generations    {}: {}",
            generations.len(),
            list.join(", ")
        )?;
    }
    if let Some(heritage) = &r.heritage {
        writeln!(
            o,
            "  heritage       {} at offset {}: {}",
            heritage.count,
            heritage.offset,
            heritage.guids.join(", ")
        )?;
    }
    writeln!(
        o,
        "  names          {} at offset {}",
        r.name_table.count, r.name_table.offset
    )?;
    writeln!(
        o,
        "  imports        {} at offset {}",
        r.import_table.count, r.import_table.offset
    )?;
    writeln!(
        o,
        "  exports        {} at offset {}",
        r.export_table.count, r.export_table.offset
    )?;

    writeln!(o, "\nnames ({}):", r.names.len())?;
    for n in r.names.iter() {
        writeln!(o, "  {:>5}  {:<32} {}", n.index, n.name, flags(&n.flags))?;
    }
    writeln!(o, "\nimports ({}):", r.imports.len())?;
    for i in r.imports.iter() {
        writeln!(o, "  {:>6}  {}  [{}]", i.reference, i.path, i.class)?;
    }
    writeln!(o, "\nexports ({}):", r.exports.len())?;
    for e in r.exports.iter() {
        let data = match e.serial_offset {
            Some(offset) => format!(
                "{}..{} ({} bytes)",
                offset,
                offset as i64 + e.serial_size as i64,
                e.serial_size
            ),
            None => "no data".to_string(),
        };
        writeln!(
            o,
            "  {:>6}  {}  [{}]  {}",
            e.reference, e.path, e.class, data
        )?;
        if let Some(super_field) = &e.super_field {
            writeln!(o, "          super {super_field}")?;
        }
        writeln!(o, "          flags {}", flags(&e.flags))?;
    }
    Ok(())
}
