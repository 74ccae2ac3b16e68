//! Where a legacy package's bulk data lives, and whether it is really there.
//!
//! From UE 5.2 (`DATA_RESOURCES`, object version 1009) a cooked header lists
//! every bulk-data payload in its data resource table: legacy bulk-data
//! flags, offset and size. The flags say which file holds the payload (the
//! engine's `EBulkDataFlags`: `PayloadInSeperateFile` 0x100 puts it in a
//! companion, `OptionalPayload` 0x800 in `.uptnl`, `MemoryMappedPayload`
//! 0x1000 in `.m.ubulk`, otherwise `.ubulk`; `DuplicateNonOptionalPayload`
//! 0x4000 keeps a second copy in `.ubulk` at the duplicate offset). Older
//! packages record bulk data only inside export data, so for them this
//! check can only see the data resources they do not have.

use std::ops::Range;

use crate::error::{Error, Result};

use super::files::{BulkKind, PackageFiles};
use super::LegacyPackage;

/// `EBulkDataFlags` bits that decide where a payload is stored.
pub(crate) mod bulk_data_flags {
    pub(crate) const PAYLOAD_IN_SEPARATE_FILE: u32 = 0x0100;
    pub(crate) const OPTIONAL_PAYLOAD: u32 = 0x0800;
    pub(crate) const MEMORY_MAPPED_PAYLOAD: u32 = 0x1000;
    pub(crate) const DUPLICATE_NON_OPTIONAL_PAYLOAD: u32 = 0x4000;
}

/// One payload a package expects in a companion file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CompanionRange {
    /// Index in the data resource table.
    pub(crate) resource: usize,
    pub(crate) kind: BulkKind,
    pub(crate) range: Range<u64>,
}

/// The payloads stored outside the header and `.uexp`, by data resource.
pub(crate) fn companion_ranges(package: &LegacyPackage) -> Vec<CompanionRange> {
    use bulk_data_flags::*;
    let Some(resources) = &package.data_resources else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (index, resource) in resources.entries.iter().enumerate() {
        let flags = resource.legacy_bulk_data_flags;
        if flags & PAYLOAD_IN_SEPARATE_FILE == 0 || resource.serial_size <= 0 {
            continue;
        }
        let kind = if flags & OPTIONAL_PAYLOAD != 0 {
            BulkKind::Optional
        } else if flags & MEMORY_MAPPED_PAYLOAD != 0 {
            BulkKind::MemoryMapped
        } else {
            BulkKind::Bulk
        };
        let size = resource.serial_size as u64;
        let range_at = |offset: i64| {
            let start = offset.max(0) as u64;
            start..start.saturating_add(size)
        };
        out.push(CompanionRange {
            resource: index,
            kind,
            range: range_at(resource.serial_offset),
        });
        if flags & DUPLICATE_NON_OPTIONAL_PAYLOAD != 0 && resource.duplicate_serial_offset >= 0 {
            out.push(CompanionRange {
                resource: index,
                kind: BulkKind::Bulk,
                range: range_at(resource.duplicate_serial_offset),
            });
        }
    }
    out
}

impl PackageFiles {
    /// Fails when a payload the header lists is missing: its companion file
    /// is absent, or too short for the byte range the header gives it.
    pub fn check_bulk_data(&self, package: &LegacyPackage) -> Result<()> {
        let mut failures = Vec::new();
        for needed in companion_ranges(package) {
            let path = self.path.with_extension(needed.kind.extension());
            let structure = format!("data resource {}", needed.resource);
            match self.companion(needed.kind) {
                None => failures.push(
                    Error::invalid(format!(
                        "the package needs bytes {}..{} of its .{} companion, which is missing",
                        needed.range.start,
                        needed.range.end,
                        needed.kind.extension()
                    ))
                    .within(structure)
                    .in_file(&path)
                    .with_hint("copy the bulk-data file that the editor cooked beside the .uasset"),
                ),
                Some(companion) if companion.size < needed.range.end => failures.push(
                    Error::invalid(format!(
                        "the package needs bytes {}..{} but the file has {}",
                        needed.range.start, needed.range.end, companion.size
                    ))
                    .within(structure)
                    .in_file(&companion.path)
                    .with_hint(
                        "the bulk-data file is truncated or from another cook; copy it again",
                    ),
                ),
                Some(_) => {}
            }
        }
        match failures.len() {
            0 => Ok(()),
            1 => Err(failures.remove(0)),
            _ => Err(Error::new(crate::error::ErrorKind::Many {
                what: "bulk-data payloads",
                total: failures.len(),
                failures,
            })),
        }
    }
}
