//! StringTables. A cooked `UStringTable` is its property block, the object
//! GUID flag, then `FStringTable`: the namespace (FString), the entries
//! (`i32` count, then key and source string FStrings) and the metadata
//! (`i32` count, then per key an FString and a map of FName → FString),
//! which end the export. The game's own tables carry one more field after
//! each entry's value: 4 bytes (an `int32` in earlier builds, an `FString`
//! since — empty, it is the same 4 zero bytes); the profile inserts 4 zero
//! bytes after each value.
//!
//! The table is read exactly from where the walker says the properties end
//! to the export's end, in the stock and in the game's layout. A table that
//! reads only in the game's layout is left as it is; one that reads both
//! ways with entries, or neither, is refused.

use crate::binary::Reader;
use crate::legacy::{LegacyPackage, PackageFiles};
use crate::mappings::Mappings;
use crate::properties::{walk_export, PackageContext};
use crate::{Error, Result};

use super::{refuse, Change};
use crate::legacy::edit::Edit;

/// Where a table's entries end, read in one layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TableLayout {
    /// Absolute offset after each entry's value (where the game's field goes or is).
    pub(crate) value_ends: Vec<u64>,
}

/// Reads `FStringTable` from slice position `pos` to the end of `data`
/// (`game`: with the game's field after each value).
pub(crate) fn read_table(data: &[u8], base: u64, pos: usize, game: bool) -> Result<TableLayout> {
    let mut r = Reader::with_base(data, base);
    r.seek(pos)?;
    r.fstring()?; // namespace
    let count = r.count_i32(8)?;
    let mut value_ends = Vec::with_capacity(count);
    for _ in 0..count {
        r.fstring()?;
        r.fstring()?;
        value_ends.push(r.offset());
        if game {
            r.fstring()?;
        }
    }
    let keys = r.count_i32(8)?;
    for _ in 0..keys {
        r.fstring()?;
        let n = r.count_i32(12)?;
        for _ in 0..n {
            r.skip(8)?; // FName
            r.fstring()?;
        }
    }
    if !r.at_end() {
        return Err(r.error(format!(
            "{} bytes follow the string table's metadata",
            r.remaining()
        )));
    }
    Ok(TableLayout { value_ends })
}

/// What the profile does to one string table.
pub(crate) enum Planned {
    /// The change and how many entries get the field.
    Change(Change, usize),
    Unchanged(crate::fixups::Unchanged),
}

/// Where the table of export `index` starts (after its properties).
fn table_start(
    files: &PackageFiles,
    package: &LegacyPackage,
    cx: &PackageContext,
    mappings: Option<&Mappings>,
    index: usize,
) -> Result<usize> {
    let (_, native_start, _) = walk_export(files, package, cx, mappings, index, false)
        .map_err(|e| e.within(format!("StringTable export {index}")))?;
    Ok((native_start - package.exports[index].serial_offset as u64) as usize)
}

/// Plans the change to StringTable export `index`.
pub(crate) fn plan(
    files: &PackageFiles,
    package: &LegacyPackage,
    cx: &PackageContext,
    mappings: Option<&Mappings>,
    index: usize,
) -> Result<Planned> {
    let data = files.export_data(package, index)?;
    let base = package.exports[index].serial_offset as u64;
    let pos = table_start(files, package, cx, mappings, index)?;
    let stock = read_table(data, base, pos, false);
    let game = read_table(data, base, pos, true);
    match (stock, game) {
        (Ok(t), _) if t.value_ends.is_empty() => Ok(Planned::Unchanged(
            crate::fixups::Unchanged::EmptyStringTable { export: index },
        )),
        (Ok(t), Err(_)) => {
            let n = t.value_ends.len();
            Ok(Planned::Change(
                Change {
                    export_index: index,
                    what: crate::fixups::Change::StringTableFields { entries: n },
                    located_by: crate::fixups::LocatedBy::WholeStructure,
                    edits: t
                        .value_ends
                        .iter()
                        .map(|&at| Edit::insert(at, vec![0; 4]))
                        .collect(),
                },
                n,
            ))
        }
        (Err(_), Ok(t)) => Ok(Planned::Unchanged(
            crate::fixups::Unchanged::StringTableInGameLayout {
                export: index,
                entries: t.value_ends.len(),
            },
        )),
        (Ok(_), Ok(_)) => Err(refuse(
            package,
            index,
            "StringTable",
            "the table reads both with and without the game's entry field; refusing to guess",
        )
        .with_hint("set `[marvel-rivals] string-tables = false` if the table is already in the game's layout")),
        (Err(e), Err(_)) => Err(e
            .within(format!("StringTable export {index}"))
            .with_hint("the string table does not read to the export's end in either layout")),
    }
}

/// Checks a changed table: it reads in the game's layout with the same entries.
pub(crate) fn verify(
    files: &PackageFiles,
    package: &LegacyPackage,
    cx: &PackageContext,
    mappings: Option<&Mappings>,
    index: usize,
    entries: usize,
) -> Result<()> {
    let data = files.export_data(package, index)?;
    let base = package.exports[index].serial_offset as u64;
    let pos = table_start(files, package, cx, mappings, index)?;
    match read_table(data, base, pos, true) {
        Ok(t) if t.value_ends.len() == entries => Ok(()),
        _ => Err(Error::internal(format!(
            "StringTable export {index}: after the change it does not read in the game's layout"
        ))),
    }
}
