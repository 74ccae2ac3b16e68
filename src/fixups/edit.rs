//! Inserting bytes into a legacy package's export data, and recomputing
//! every size and offset that depends on them.

use crate::legacy::{LegacyPackage, PackageFiles};
use crate::{Error, Result};

/// Bytes to insert at an absolute offset of the header + .uexp stream
/// (before any insertion is applied).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Insertion {
    pub offset: u64,
    pub bytes: Vec<u8>,
}

/// `BULKDATA_PayloadAtEndOfFile`: the payload sits after the exports, at an
/// offset relative to the bulk data start, which moves with the exports.
const BULKDATA_PAYLOAD_AT_END_OF_FILE: u32 = 0x0001;
/// `BULKDATA_PayloadInSeperateFile`: the payload is in a `.ubulk`; its offset is in that file.
const BULKDATA_PAYLOAD_IN_SEPARATE_FILE: u32 = 0x0100;

/// Applies insertions (all inside export data in the .uexp) to `files`,
/// updating `package` (already read from `files.header`) and rewriting the
/// header. An insertion at an export's end belongs to that export.
pub fn apply_insertions(
    files: &mut PackageFiles,
    package: &mut LegacyPackage,
    insertions: &[Insertion],
) -> Result<()> {
    if insertions.is_empty() {
        return Ok(());
    }
    let header_len = files.header.len() as u64;
    let mut sorted: Vec<&Insertion> = insertions.iter().collect();
    sorted.sort_by_key(|i| i.offset);
    // Every insertion must fall inside (or at the end of) an export that lives in the .uexp.
    let mut owners = Vec::with_capacity(sorted.len());
    for ins in &sorted {
        let owner = package.exports.iter().position(|e| {
            let (Ok(start), Ok(size)) =
                (u64::try_from(e.serial_offset), u64::try_from(e.serial_size))
            else {
                return false;
            };
            ins.offset > start && ins.offset <= start.saturating_add(size)
        });
        match owner {
            Some(i) if ins.offset > header_len => owners.push(i),
            _ => {
                return Err(Error::internal(format!(
                    "insertion at offset {} is not inside the export data",
                    ins.offset
                )))
            }
        }
    }
    // Shift everything that lies after each insertion point (original coordinates).
    let shift_of = |offset: u64, inclusive: bool| -> u64 {
        sorted
            .iter()
            .filter(|i| {
                if inclusive {
                    i.offset <= offset
                } else {
                    i.offset < offset
                }
            })
            .map(|i| i.bytes.len() as u64)
            .sum()
    };
    for (i, export) in package.exports.iter_mut().enumerate() {
        let Ok(start) = u64::try_from(export.serial_offset) else {
            continue;
        };
        let grown: u64 = sorted
            .iter()
            .zip(&owners)
            .filter(|(_, &owner)| owner == i)
            .map(|(ins, _)| ins.bytes.len() as u64)
            .sum();
        export.serial_offset += shift_of(start, true) as i64;
        export.serial_size += grown as i64;
    }
    let total: u64 = sorted.iter().map(|i| i.bytes.len() as u64).sum();
    // The bulk data start follows the last export (the .uexp's tag precedes it).
    let bulk_start = package.summary.bulk_data_start_offset;
    if bulk_start >= 0 && bulk_start as u64 >= sorted[0].offset {
        package.summary.bulk_data_start_offset += total as i64;
    }
    if let Some(resources) = package.data_resources.as_mut() {
        for r in &mut resources.entries {
            let flags = r.legacy_bulk_data_flags;
            if flags & (BULKDATA_PAYLOAD_AT_END_OF_FILE | BULKDATA_PAYLOAD_IN_SEPARATE_FILE) != 0 {
                continue;
            }
            // Inline payloads: absolute offsets in the header + .uexp stream.
            if r.serial_offset >= 0 {
                r.serial_offset += shift_of(r.serial_offset as u64, false) as i64;
            }
            if r.duplicate_serial_offset >= 0 {
                r.duplicate_serial_offset +=
                    shift_of(r.duplicate_serial_offset as u64, false) as i64;
            }
        }
    }
    // The .uexp bytes, insertions applied back to front so earlier offsets stay valid.
    for ins in sorted.iter().rev() {
        let at = (ins.offset - header_len) as usize;
        if at > files.uexp.len() {
            return Err(Error::internal(format!(
                "insertion at {} is past the .uexp",
                ins.offset
            )));
        }
        files.uexp.splice(at..at, ins.bytes.iter().copied());
    }
    let header = package.write()?;
    if header.len() as u64 != header_len {
        return Err(Error::internal(format!(
            "the rewritten header is {} bytes, the original {header_len}",
            header.len()
        )));
    }
    files.header = header;
    Ok(())
}
