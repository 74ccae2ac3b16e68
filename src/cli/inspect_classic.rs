//! The classic-package branch of `zenpak inspect`: prints the header with
//! flags decoded, the name, import and export tables with every object
//! reference as a full dotted path, and each export's data range.

use std::fmt::Write as _;

use zenpak::classic::report::{Flags, PackageReport};
use zenpak::classic::Package;
use zenpak::Result;

use super::inspect::Args;
use super::Output;

pub fn run(args: &Args, out: &Output) -> Result<()> {
    let package = Package::read_file(&args.path)?;
    let report = PackageReport::new(&package);
    out.report(args.json, "inspected", &report, || {
        print!("{}", render(&args.path.display().to_string(), &report))
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

/// The text form. `writeln!` into a String cannot fail, hence the `.ok()`s.
fn render(file: &str, r: &PackageReport) -> String {
    let mut out = String::new();
    let o = &mut out;
    writeln!(o, "{file}: classic Unreal package {}", r.package).ok();
    writeln!(
        o,
        "  file version   {} (licensee {})",
        r.file_version, r.licensee_version
    )
    .ok();
    writeln!(o, "  file size      {} bytes", r.file_size).ok();
    writeln!(o, "  package flags  {}", flags(&r.package_flags)).ok();
    if let Some(guid) = &r.guid {
        writeln!(o, "  guid           {guid}").ok();
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
        )
        .ok();
    }
    if let Some(heritage) = &r.heritage {
        writeln!(
            o,
            "  heritage       {} at offset {}: {}",
            heritage.count,
            heritage.offset,
            heritage.guids.join(", ")
        )
        .ok();
    }
    writeln!(
        o,
        "  names          {} at offset {}",
        r.name_table.count, r.name_table.offset
    )
    .ok();
    writeln!(
        o,
        "  imports        {} at offset {}",
        r.import_table.count, r.import_table.offset
    )
    .ok();
    writeln!(
        o,
        "  exports        {} at offset {}",
        r.export_table.count, r.export_table.offset
    )
    .ok();

    writeln!(o, "\nnames ({}):", r.names.len()).ok();
    for n in &r.names {
        writeln!(o, "  {:>5}  {:<32} {}", n.index, n.name, flags(&n.flags)).ok();
    }
    writeln!(o, "\nimports ({}):", r.imports.len()).ok();
    for i in &r.imports {
        writeln!(o, "  {:>6}  {}  [{}]", i.reference, i.path, i.class).ok();
    }
    writeln!(o, "\nexports ({}):", r.exports.len()).ok();
    for e in &r.exports {
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
        )
        .ok();
        if let Some(super_field) = &e.super_field {
            writeln!(o, "          super {super_field}").ok();
        }
        writeln!(o, "          flags {}", flags(&e.flags)).ok();
    }
    out
}
