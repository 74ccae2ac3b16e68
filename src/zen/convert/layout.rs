//! Stage 5, export layout: the export data that follows the Zen header.
//! 5.3+ keep the `.uexp` as it is; UE4 and 5.0–5.2 lay the exports out in
//! bundle order (the loader reads them sequentially,
//! `FPackageStoreOptimizer::CreatePackageBuffer`).

use crate::error::{Error, Result};
use crate::legacy::PACKAGE_FILE_TAG;
use crate::version::ZenLayout;

use super::super::package::ZenPackage;
use super::super::records::ExportCommand;
use super::source::SourcePackage;

/// The export data of `package` for its layout.
pub(super) fn export_data(
    package: &ZenPackage,
    source: &SourcePackage,
    uexp: &[u8],
    layout: ZenLayout,
) -> Result<Vec<u8>> {
    match layout {
        ZenLayout::DependencyBundles => Ok(uexp.to_vec()),
        ZenLayout::Ue4 | ZenLayout::GraphData => exports_in_bundle_order(package, source, uexp),
    }
}

/// The exports in bundle order, then whatever followed the last export in
/// the `.uexp` except its closing package tag.
fn exports_in_bundle_order(
    package: &ZenPackage,
    source: &SourcePackage,
    uexp: &[u8],
) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(uexp.len());
    let mut end_of_exports = 0usize;
    for entry in &package.export_bundle_entries {
        if entry.command != ExportCommand::Serialize {
            continue;
        }
        let e = &source.exports[entry.export_index as usize];
        let start = e.serial_offset - source.total_header_size as i64;
        let end = start + e.serial_size;
        if start < 0 || end as u64 > uexp.len() as u64 {
            return Err(Error::invalid(format!(
                "data {start}..{end} is outside the .uexp ({} bytes)",
                uexp.len()
            ))
            .within(format!("export {}", entry.export_index)));
        }
        out.extend_from_slice(&uexp[start as usize..end as usize]);
        end_of_exports = end_of_exports.max(end as usize);
    }
    let tail = &uexp[end_of_exports..];
    let tail = tail
        .strip_suffix(&PACKAGE_FILE_TAG.to_le_bytes())
        .unwrap_or(tail);
    out.extend_from_slice(tail);
    Ok(out)
}
