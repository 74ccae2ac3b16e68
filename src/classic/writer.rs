//! The classic package writer: lays out a whole package file — header
//! (GUID and generations from version 68, heritage count/offset before),
//! heritage table, name table, object data, import table, export table —
//! and gives an edited package a new GUID when its bytes change.
//!
//! Two layouts share one placement routine:
//! - [`Package::to_bytes`] writes a fresh file in the order the engine's
//!   own save uses (header, heritage, names, object data in export order,
//!   imports, exports). Every corpus file is in this order with no gap, so a parsed corpus
//!   file written this way gives its bytes back (`tests/classic/classic_writer.rs`, all 12).
//! - [`write_edited`] rewrites a package read from a file. **Object data never moves**: a
//!   lazy array starts with the absolute file position of its end (texture mipmaps, sound
//!   and music data), so moving data that is not fully decoded would break it. Unchanged data
//!   keeps its offset; replaced data stays at its old offset when it still fits (its own
//!   lazy-array positions recomputed: `ObjectBytes::placed_at`), else goes after the last
//!   object. Name and heritage tables stay put when they fit (a grown name table moves after
//!   the object data); import and export tables always follow the last object (in an
//!   engine-written file, exactly where they were). Freed bytes are zeros. With nothing
//!   changed the output is the input, byte for byte (corpus test).
//!
//! GUID: the engine gives a package a new GUID and a single generation (its export and name
//! counts) on every non-conforming save (`UObject::SavePackage`: `appCreateGuid()`,
//! `Generations` emptied, one `FGenerationInfo`); clients cache downloads by GUID.
//! `write_edited` does the same when, and only when, the bytes differ from the source: the
//! GUID is the first 16 bytes of a BLAKE3 key derivation (context
//! `"zenpak classic package GUID v1"`) over the new file with the GUID field zeroed, so
//! identical input gives identical output (team rule) and any change gives another GUID.
//! Before 68 the GUID is the last heritage entry, replaced the same way.
//! Formats: references 001–003.

use std::borrow::Cow;

use super::header::{Generation, Lineage};
use super::tables::{ExportEntry, HeritageEntry};
use super::Package;
use crate::binary::{is_latin1, Writer};
use crate::error::{Context, Error, Result};

/// Context string of the BLAKE3 key derivation that makes package GUIDs.
const GUID_DERIVATION_CONTEXT: &str = "zenpak classic package GUID v1";

/// An absolute file position stored inside object data: the 32-bit value
/// at `at` must equal the file offset of `target` (both relative to the
/// start of the object's data).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FilePosition {
    pub(crate) at: usize,
    pub(crate) target: usize,
}

/// The serialized data of one export, with the absolute file positions
/// inside it that depend on where it is placed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ObjectBytes {
    pub bytes: Vec<u8>,
    pub(crate) file_positions: Vec<FilePosition>,
}

impl ObjectBytes {
    /// Data that holds no file positions.
    pub fn plain(bytes: Vec<u8>) -> ObjectBytes {
        ObjectBytes {
            bytes,
            file_positions: Vec::new(),
        }
    }

    /// The bytes as they are when the data starts at file offset `offset`.
    pub fn placed_at(&self, offset: u64) -> Result<Vec<u8>> {
        let mut bytes = self.bytes.clone();
        for position in &self.file_positions {
            let value = offset + position.target as u64;
            let value = i32::try_from(value).map_err(|_| {
                Error::limit("file position inside object data", value, i32::MAX as u64)
            })?;
            let slot = bytes
                .get_mut(position.at..position.at + 4)
                .ok_or_else(|| Error::internal("file position lies outside its object data"))?;
            slot.copy_from_slice(&value.to_le_bytes());
        }
        Ok(bytes)
    }
}

/// Where the data of one export of an edited package comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExportEdit {
    /// The bytes the source file holds for this export, left at their offset.
    Unchanged,
    /// New bytes: written at the export's old offset when they fit in its
    /// old length, otherwise after the last object.
    Replaced(ObjectBytes),
}

/// The result of [`write_edited`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    pub bytes: Vec<u8>,
    /// False when the bytes are the source file's bytes.
    pub changed: bool,
    /// The package's GUID after writing: the header's from version 68, the
    /// last heritage entry before.
    pub guid: Option<[u8; 16]>,
}

/// One block of object data to place.
struct Block<'a> {
    bytes: Cow<'a, ObjectBytes>,
    /// The offset it must keep, if any.
    pinned: Option<u64>,
    /// The source file's own bytes at `pinned`: such blocks may share bytes
    /// with each other (the engine never writes that, but a hand-made file
    /// may), since they are the same file's bytes.
    from_source: bool,
}

/// Offsets the tables must keep, if any (they are kept only where they fit).
#[derive(Default, Clone, Copy)]
struct TablePins {
    heritage: Option<u64>,
    names: Option<u64>,
}

impl Package {
    /// Writes a complete package with a fresh layout: header, heritage
    /// table (before version 68), name table, the objects' data (one entry
    /// of `object_data` per export, or none at all for data-less exports),
    /// import table, export table — the order the engine itself uses.
    /// Counts, offsets and serial sizes/offsets are recomputed; the header's
    /// GUID, generations and heritage entries are written as given. The
    /// result is parsed again before it is returned, so it is always readable.
    pub fn to_bytes(&self, object_data: &[Vec<u8>]) -> Result<Vec<u8>> {
        if !object_data.is_empty() && object_data.len() != self.exports.len() {
            return Err(Error::usage(format!(
                "{} blocks of object data given for {} exports",
                object_data.len(),
                self.exports.len()
            )));
        }
        let blocks: Vec<Option<Block>> = (0..self.exports.len())
            .map(|i| {
                object_data.get(i).filter(|d| !d.is_empty()).map(|d| Block {
                    bytes: Cow::Owned(ObjectBytes::plain(d.clone())),
                    pinned: None,
                    from_source: false,
                })
            })
            .collect();
        let bytes = lay_out(self, &self.header.lineage, &self.heritage, &blocks, None)?;
        Package::parse(&bytes, &self.name).context("package just written")?;
        Ok(bytes)
    }
}

/// Writes `edited`, a changed copy of `source` (parsed from `original`),
/// keeping every object's data at its offset in `original`: `data` says,
/// export by export, whether its data is unchanged or replaced. New exports
/// (beyond the source's) must have replaced data or none.
///
/// When the result differs from `original`, the package gets a new GUID
/// (from version 68: in the header, with one generation holding the new
/// counts; before: the last heritage entry) derived from the new bytes.
pub fn write_edited(
    original: &[u8],
    source: &Package,
    edited: &Package,
    data: &[ExportEdit],
) -> Result<Written> {
    if data.len() != edited.exports.len() {
        return Err(Error::internal(format!(
            "{} blocks of object data given for {} exports",
            data.len(),
            edited.exports.len()
        )));
    }
    let mut blocks = Vec::with_capacity(data.len());
    for (index, entry) in data.iter().enumerate() {
        let old_range = source
            .exports
            .get(index)
            .and_then(|e| e.serial_range())
            .map(|r| r.start as usize..r.end as usize);
        let block = match (entry, old_range) {
            (ExportEdit::Unchanged, None) if index < source.exports.len() => None,
            (ExportEdit::Unchanged, None) => {
                return Err(Error::internal(format!(
                    "export {index} is new but its data is marked unchanged"
                )))
            }
            (ExportEdit::Unchanged, Some(range)) => {
                let bytes = original.get(range.clone()).ok_or_else(|| {
                    Error::internal(format!("export {index}'s data lies outside the source"))
                })?;
                Some(Block {
                    bytes: Cow::Owned(ObjectBytes::plain(bytes.to_vec())),
                    pinned: Some(range.start as u64),
                    from_source: true,
                })
            }
            (ExportEdit::Replaced(bytes), _) if bytes.bytes.is_empty() => None,
            // Data that still fits where it was stays there (what is left
            // of its old bytes is zeroed); its own file positions follow it.
            (ExportEdit::Replaced(bytes), range) => Some(Block {
                bytes: Cow::Borrowed(bytes),
                pinned: range
                    .filter(|r| r.len() >= bytes.bytes.len())
                    .map(|r| r.start as u64),
                from_source: false,
            }),
        };
        blocks.push(block);
    }
    let pins = TablePins {
        heritage: match source.header.lineage {
            Lineage::Heritage { offset, .. } if !source.heritage.is_empty() => Some(offset as u64),
            _ => None,
        },
        names: (!source.names.is_empty()).then_some(source.header.name_offset as u64),
    };

    let bytes = lay_out(
        edited,
        &edited.header.lineage,
        &edited.heritage,
        &blocks,
        Some(pins),
    )?;
    if bytes == original {
        return Ok(Written {
            guid: package_guid(&edited.header.lineage, &edited.heritage),
            bytes,
            changed: false,
        });
    }

    // A real change: a new GUID, and (from 68) one generation, as the
    // engine's own non-conforming save writes.
    let mut heritage = edited.heritage.clone();
    let lineage = match &edited.header.lineage {
        Lineage::Generations { .. } => Lineage::Generations {
            guid: [0; 16],
            generations: vec![Generation {
                export_count: edited.exports.len() as i32,
                name_count: edited.names.len() as i32,
            }],
        },
        Lineage::Heritage { count, offset } => {
            match heritage.last_mut() {
                Some(last) => last.0 = [0; 16],
                None => heritage.push(HeritageEntry([0; 16])),
            }
            Lineage::Heritage {
                count: *count,
                offset: *offset,
            }
        }
    };
    let mut bytes = lay_out(edited, &lineage, &heritage, &blocks, Some(pins))?;
    let guid_at = guid_offset(&bytes, &lineage)?;
    let mut hasher = blake3::Hasher::new_derive_key(GUID_DERIVATION_CONTEXT);
    hasher.update(&bytes);
    let mut guid = [0u8; 16];
    guid.copy_from_slice(&hasher.finalize().as_bytes()[..16]);
    bytes[guid_at..guid_at + 16].copy_from_slice(&guid);
    Package::parse(&bytes, &edited.name).context("package just written")?;
    Ok(Written {
        bytes,
        changed: true,
        guid: Some(guid),
    })
}

/// The package's own GUID: the header's, or the last heritage entry.
fn package_guid(lineage: &Lineage, heritage: &[HeritageEntry]) -> Option<[u8; 16]> {
    match lineage {
        Lineage::Generations { guid, .. } => Some(*guid),
        Lineage::Heritage { .. } => heritage.last().map(|h| h.0),
    }
}

/// Where the package's own GUID sits in a file laid out by [`lay_out`].
fn guid_offset(bytes: &[u8], lineage: &Lineage) -> Result<usize> {
    match lineage {
        // Tag, version, flags and three count/offset pairs come first.
        Lineage::Generations { .. } => Ok(36),
        Lineage::Heritage { .. } => {
            let at = super::header::HERITAGE_OFFSET_AT;
            let count = i32::from_le_bytes(bytes[at - 4..at].try_into().unwrap_or_default());
            let offset = i32::from_le_bytes(bytes[at..at + 4].try_into().unwrap_or_default());
            if count <= 0 || offset < 0 {
                return Err(Error::internal("heritage table missing after writing"));
            }
            Ok(offset as usize + (count as usize - 1) * HeritageEntry::SIZE)
        }
    }
}

/// Places header, tables and object data and returns the file's bytes.
/// With `pins`, the tables keep the given offsets where they still fit and
/// pinned object data keeps its offset; everything else follows the last
/// placed byte, in the engine's order. Without, everything is laid out
/// fresh in that order.
fn lay_out(
    package: &Package,
    lineage: &Lineage,
    heritage: &[HeritageEntry],
    blocks: &[Option<Block>],
    pins: Option<TablePins>,
) -> Result<Vec<u8>> {
    check_storable(package)?;
    let version = package.version();
    let limits = version.limits();
    let mut header = package.header.clone();
    header.lineage = lineage.clone();
    header.name_count = package.names.len() as i32;
    header.import_count = package.imports.len() as i32;
    header.export_count = package.exports.len() as i32;

    let mut heritage_bytes = Writer::new();
    for entry in heritage {
        entry.write(&mut heritage_bytes);
    }
    let heritage_bytes = heritage_bytes.into_inner();
    let mut name_bytes = Writer::new();
    for name in &package.names {
        name.write(&mut name_bytes, version);
    }
    let name_bytes = name_bytes.into_inner();
    let has_heritage = matches!(lineage, Lineage::Heritage { .. }) && !heritage.is_empty();

    let placement = place(
        header.size() as u64,
        has_heritage.then_some(heritage_bytes.len() as u64),
        name_bytes.len() as u64,
        blocks,
        pins.unwrap_or_default(),
    );
    let Placement {
        heritage_at,
        names_at,
        data_offsets,
        end_of_data: next,
    } = placement;
    let import_at = next;
    let mut import_bytes = Writer::new();
    for import in &package.imports {
        import.write(&mut import_bytes);
    }
    let import_bytes = import_bytes.into_inner();
    let export_at = import_at + import_bytes.len() as u64;
    let mut export_bytes = Writer::new();
    for (index, export) in package.exports.iter().enumerate() {
        let (size, offset) = match (&blocks[index], data_offsets[index]) {
            (Some(block), Some(at)) => (block.bytes.bytes.len() as u64, Some(at)),
            _ => (0, None),
        };
        let entry = ExportEntry {
            serial_size: checked_i32("serial size", size, limits.max_file_size)?,
            serial_offset: offset
                .map(|o| checked_i32("serial offset", o, limits.max_file_size))
                .transpose()?,
            ..export.clone()
        };
        entry.write(&mut export_bytes);
    }
    let export_bytes = export_bytes.into_inner();
    let end = export_at + export_bytes.len() as u64;
    if end > limits.max_file_size {
        return Err(
            Error::limit("package size", end, limits.max_file_size).with_hint(format!(
                "a package of file version {} cannot be larger than {} bytes",
                version.0, limits.max_file_size
            )),
        );
    }

    header.name_offset = names_at as i32;
    header.import_offset = import_at as i32;
    header.export_offset = export_at as i32;
    if let Lineage::Heritage { count, offset } = &mut header.lineage {
        *count = heritage.len() as i32;
        *offset = heritage_at as i32;
    }
    let mut header_bytes = Writer::new();
    header.write(&mut header_bytes);

    let mut out = vec![0u8; end as usize];
    let mut put = |at: u64, bytes: &[u8]| {
        out[at as usize..at as usize + bytes.len()].copy_from_slice(bytes);
    };
    put(0, header_bytes.as_slice());
    if has_heritage {
        put(heritage_at, &heritage_bytes);
    }
    put(names_at, &name_bytes);
    for (index, block) in blocks.iter().enumerate() {
        if let (Some(block), Some(at)) = (block, data_offsets[index]) {
            put(at, &block.bytes.placed_at(at)?);
        }
    }
    put(import_at, &import_bytes);
    put(export_at, &export_bytes);
    Ok(out)
}

/// Names must be Latin-1 without zero bytes; tables must fit the version's limits.
fn check_storable(package: &Package) -> Result<()> {
    if let Some(bad) = package
        .names
        .iter()
        .find(|n| !is_latin1(&n.name) || n.name.contains('\0'))
    {
        return Err(Error::usage(format!(
            "name {:?} cannot be stored in a classic package",
            bad.name
        )));
    }
    let limits = package.version().limits();
    for (what, count) in [
        ("name count", package.names.len()),
        ("import count", package.imports.len()),
        ("export count", package.exports.len()),
    ] {
        if count as u64 > limits.max_table_entries {
            return Err(Error::limit(what, count as u64, limits.max_table_entries));
        }
    }
    Ok(())
}

/// Where the heritage table, the name table and each export's data go.
struct Placement {
    heritage_at: u64,
    names_at: u64,
    data_offsets: Vec<Option<u64>>,
    /// The first byte after everything placed: the import table goes here.
    end_of_data: u64,
}

/// Places pinned object data and tables at their offsets where they fit
/// (nothing else there; the source's own unchanged data may share bytes
/// with other such data), then everything else after the last placed byte,
/// in the engine's order: heritage, names, object data. Empty tables get
/// the offset where they would start, as the engine writes them.
fn place(
    header_size: u64,
    heritage_len: Option<u64>,
    names_len: u64,
    blocks: &[Option<Block>],
    pins: TablePins,
) -> Placement {
    // Occupied spans: start, end, whether they hold the source's own data.
    let mut occupied: Vec<(u64, u64, bool)> = vec![(0, header_size, false)];
    let fits = |occupied: &[(u64, u64, bool)], start: u64, len: u64, from_source: bool| {
        len == 0
            || occupied
                .iter()
                .all(|&(s, e, source)| start + len <= s || start >= e || (from_source && source))
    };
    let mut data_offsets: Vec<Option<u64>> = vec![None; blocks.len()];
    for (index, block) in blocks.iter().enumerate() {
        let Some(block) = block else { continue };
        let Some(at) = block.pinned else { continue };
        let len = block.bytes.bytes.len() as u64;
        if fits(&occupied, at, len, block.from_source) {
            data_offsets[index] = Some(at);
            occupied.push((at, at + len, block.from_source));
        }
    }
    let heritage_size = heritage_len.unwrap_or(0);
    let heritage_at = pins
        .heritage
        .filter(|&at| heritage_len.is_some() && fits(&occupied, at, heritage_size, false));
    if let Some(at) = heritage_at {
        occupied.push((at, at + heritage_size, false));
    }
    let names_at = pins
        .names
        .filter(|&at| fits(&occupied, at, names_len, false));
    if let Some(at) = names_at {
        occupied.push((at, at + names_len, false));
    }

    let mut next = occupied.iter().map(|&(_, e, _)| e).max().unwrap_or(0);
    let heritage_at = heritage_at.unwrap_or_else(|| {
        next += heritage_size;
        next - heritage_size
    });
    let names_at = names_at.unwrap_or_else(|| {
        next += names_len;
        next - names_len
    });
    for (index, block) in blocks.iter().enumerate() {
        if let (Some(block), None) = (block, data_offsets[index]) {
            data_offsets[index] = Some(next);
            next += block.bytes.bytes.len() as u64;
        }
    }
    Placement {
        heritage_at,
        names_at,
        data_offsets,
        end_of_data: next,
    }
}

fn checked_i32(what: &str, value: u64, limit: u64) -> Result<i32> {
    if value > limit {
        return Err(Error::limit(what, value, limit));
    }
    Ok(value as i32)
}
