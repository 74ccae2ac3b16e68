//! The three tables of a classic package (names, imports, exports), object
//! references, and the heritage GUID table of old versions.
//!
//! Layouts (references 000, 001, 002, 003):
//! - name: before version 64 a zero-terminated string, from 64 on a compact
//!   length (terminator included) and the bytes; then 32-bit flags;
//! - import: class package name, class name (compact name indices), outer
//!   (32-bit object reference), object name (compact name index);
//! - export: class and super (compact object references), outer (32-bit
//!   object reference), object name (compact name index), flags (32 bits),
//!   serial size (compact) and, only when the size is not zero, the serial
//!   offset (compact). The corpus confirms "not zero": exports of size 0
//!   store no offset.

use serde::Serialize;

use super::compact::CompactIndex;
use super::header::FileVersion;
use crate::binary::{Reader, Writer};
use crate::error::{Context, Result};

/// A reference to an object: 0 is null, `N > 0` is export `N - 1`, `-N` is import `N - 1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize)]
#[serde(transparent)]
pub struct ObjectRef(pub i32);

/// What an [`ObjectRef`] points at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    Null,
    Import(usize),
    Export(usize),
}

impl ObjectRef {
    pub const NULL: ObjectRef = ObjectRef(0);

    pub fn import(index: usize) -> ObjectRef {
        ObjectRef(-(index as i32) - 1)
    }

    pub fn export(index: usize) -> ObjectRef {
        ObjectRef(index as i32 + 1)
    }

    pub fn target(self) -> Target {
        match self.0 {
            0 => Target::Null,
            n if n > 0 => Target::Export(n as usize - 1),
            // -(n + 1) cannot overflow, unlike -n for i32::MIN.
            n => Target::Import((-(n + 1)) as usize),
        }
    }

    pub fn is_null(self) -> bool {
        self.0 == 0
    }
}

/// How many entries each table has: used to check indices while reading so
/// that every reference in a parsed package is known to resolve.
#[derive(Debug, Clone, Copy)]
pub struct TableCounts {
    pub(crate) names: usize,
    pub(crate) imports: usize,
    pub(crate) exports: usize,
}

impl TableCounts {
    fn check_name(&self, reader: &Reader, at: usize, index: i32) -> Result<usize> {
        if index < 0 || index as usize >= self.names {
            return Err(reader.error_at(
                at,
                format!(
                    "name index {index} is outside the name table ({} names)",
                    self.names
                ),
            ));
        }
        Ok(index as usize)
    }

    fn check_ref(&self, reader: &Reader, at: usize, reference: ObjectRef) -> Result<ObjectRef> {
        let bad = match reference.target() {
            Target::Null => false,
            Target::Import(i) => i >= self.imports,
            Target::Export(i) => i >= self.exports,
        };
        if bad {
            return Err(reader.error_at(
                at,
                format!(
                    "object reference {} points outside the tables ({} imports, {} exports)",
                    reference.0, self.imports, self.exports
                ),
            ));
        }
        Ok(reference)
    }

    fn name(&self, reader: &mut Reader, what: &str) -> Result<usize> {
        let at = reader.pos();
        let index = CompactIndex::read_i32(reader).context(what)?;
        self.check_name(reader, at, index).context(what)
    }

    fn compact_ref(&self, reader: &mut Reader, what: &str) -> Result<ObjectRef> {
        let at = reader.pos();
        let reference = ObjectRef(CompactIndex::read_i32(reader).context(what)?);
        self.check_ref(reader, at, reference).context(what)
    }

    fn ref32(&self, reader: &mut Reader, what: &str) -> Result<ObjectRef> {
        let at = reader.pos();
        let reference = ObjectRef(reader.i32().context(what)?);
        self.check_ref(reader, at, reference).context(what)
    }
}

/// One name-table entry. The text is kept as Latin-1 (one byte per character).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NameEntry {
    pub name: String,
    pub flags: u32,
}

impl NameEntry {
    /// Longest name read (the engine's limit is 64; anything far beyond is corruption).
    pub(crate) const MAX_LEN: usize = 1024;

    pub(crate) fn read(reader: &mut Reader, version: FileVersion) -> Result<NameEntry> {
        let at = reader.pos();
        let mut text_at = at;
        let bytes = if version.has_length_prefixed_names() {
            let length = CompactIndex::read_i32(reader).context("length")?;
            if length <= 0 || length as usize > Self::MAX_LEN {
                return Err(reader.error_at(
                    at,
                    format!(
                        "name length {length} is not between 1 and {}",
                        Self::MAX_LEN
                    ),
                ));
            }
            text_at = reader.pos();
            let bytes = reader.bytes(length as usize).context("text")?;
            if bytes[bytes.len() - 1] != 0 {
                return Err(reader.error_at(at, "name is not zero-terminated"));
            }
            &bytes[..bytes.len() - 1]
        } else {
            let rest = reader.rest();
            let limit = rest.len().min(Self::MAX_LEN + 1);
            let Some(end) = rest[..limit].iter().position(|&b| b == 0) else {
                return Err(reader.error_at(
                    at,
                    format!("no zero terminator within {limit} bytes (file truncated?)"),
                ));
            };
            let bytes = reader.bytes(end + 1)?;
            &bytes[..end]
        };
        if let Some(zero) = bytes.iter().position(|&b| b == 0) {
            return Err(reader.error_at(text_at + zero, "name contains a zero byte before its end"));
        }
        let name = bytes.iter().map(|&b| b as char).collect();
        let flags = reader.u32().context("flags")?;
        Ok(NameEntry { name, flags })
    }

    /// Writes the entry. Characters above U+00FF cannot be stored; callers
    /// building packages check names with [`crate::binary::is_latin1`].
    pub(crate) fn write(&self, writer: &mut Writer, version: FileVersion) {
        let bytes: Vec<u8> = self.name.chars().map(|c| c as u32 as u8).collect();
        if version.has_length_prefixed_names() {
            CompactIndex(bytes.len() as i32 + 1).write(writer);
        }
        writer.bytes(&bytes);
        writer.u8(0);
        writer.u32(self.flags);
    }
}

/// One import-table entry: an object in another package.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ImportEntry {
    /// Name index of the package holding the object's class (e.g. `Core`).
    pub class_package: usize,
    /// Name index of the object's class (e.g. `Package`, `Texture`).
    pub class_name: usize,
    /// The object's outer: null for a top-level package.
    pub outer: ObjectRef,
    pub object_name: usize,
}

impl ImportEntry {
    /// Three one-byte compact indices and a 32-bit reference.
    pub(crate) const MIN_SIZE: usize = 7;

    pub(crate) fn read(reader: &mut Reader, counts: &TableCounts) -> Result<ImportEntry> {
        Ok(ImportEntry {
            class_package: counts.name(reader, "class package")?,
            class_name: counts.name(reader, "class name")?,
            outer: counts.ref32(reader, "outer (package index)")?,
            object_name: counts.name(reader, "object name")?,
        })
    }

    pub(crate) fn write(&self, writer: &mut Writer) {
        CompactIndex(self.class_package as i32).write(writer);
        CompactIndex(self.class_name as i32).write(writer);
        writer.i32(self.outer.0);
        CompactIndex(self.object_name as i32).write(writer);
    }
}

/// One export-table entry: an object stored in this package.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ExportEntry {
    /// The object's class; null means the object is itself a class (`Core.Class`).
    pub class: ObjectRef,
    /// The super field of a struct, class, state or function; usually null.
    pub super_field: ObjectRef,
    /// The object's outer: null for objects directly in the package.
    pub outer: ObjectRef,
    pub object_name: usize,
    pub flags: u32,
    pub serial_size: i32,
    /// Present exactly when `serial_size != 0`.
    pub serial_offset: Option<i32>,
}

impl ExportEntry {
    /// Two one-byte compact indices, a 32-bit reference, a one-byte name,
    /// 32-bit flags and a one-byte size.
    pub(crate) const MIN_SIZE: usize = 12;

    pub(crate) fn read(reader: &mut Reader, counts: &TableCounts) -> Result<ExportEntry> {
        let class = counts.compact_ref(reader, "class")?;
        let super_field = counts.compact_ref(reader, "super")?;
        let outer = counts.ref32(reader, "outer (package index)")?;
        let object_name = counts.name(reader, "object name")?;
        let flags = reader.u32().context("object flags")?;
        let size_at = reader.pos();
        let serial_size = CompactIndex::read_i32(reader).context("serial size")?;
        if serial_size < 0 {
            return Err(reader
                .error_at(size_at, format!("negative serial size {serial_size}"))
                .within("serial size"));
        }
        let serial_offset = if serial_size != 0 {
            let offset_at = reader.pos();
            let offset = CompactIndex::read_i32(reader).context("serial offset")?;
            if offset < 0 {
                return Err(reader
                    .error_at(offset_at, format!("negative serial offset {offset}"))
                    .within("serial offset"));
            }
            Some(offset)
        } else {
            None
        };
        Ok(ExportEntry {
            class,
            super_field,
            outer,
            object_name,
            flags,
            serial_size,
            serial_offset,
        })
    }

    pub(crate) fn write(&self, writer: &mut Writer) {
        CompactIndex(self.class.0).write(writer);
        CompactIndex(self.super_field.0).write(writer);
        writer.i32(self.outer.0);
        CompactIndex(self.object_name as i32).write(writer);
        writer.u32(self.flags);
        CompactIndex(self.serial_size).write(writer);
        if self.serial_size != 0 {
            CompactIndex(self.serial_offset.unwrap_or(0)).write(writer);
        }
    }

    /// The byte range of the object's data in the file, if it has any.
    pub fn serial_range(&self) -> Option<std::ops::Range<u64>> {
        let offset = self.serial_offset? as u64;
        Some(offset..offset + self.serial_size as u64)
    }
}

/// One heritage entry (versions before 68): a GUID the package is compatible with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeritageEntry(pub [u8; 16]);

impl HeritageEntry {
    pub(crate) const SIZE: usize = 16;

    pub(crate) fn read(reader: &mut Reader) -> Result<HeritageEntry> {
        Ok(HeritageEntry(reader.guid()?))
    }

    pub(crate) fn write(&self, writer: &mut Writer) {
        writer.guid(&self.0);
    }
}
