//! Names and object references of a legacy package: the name map entry,
//! `FName` as (index, number), `FPackageIndex`, and the engine string with
//! its encoding kept (so a rewrite reproduces the original bytes).

use std::fmt;

use serde::Serialize;

use crate::binary::{Reader, Writer};
use crate::error::{Error, Result};

/// An `FString` as stored: its text and whether it was written as UTF-16.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct EngineString {
    pub text: String,
    pub utf16: bool,
}

impl EngineString {
    pub fn new(text: impl Into<String>) -> Self {
        let text = text.into();
        let utf16 = !crate::binary::is_latin1(&text);
        EngineString { text, utf16 }
    }

    pub fn read(r: &mut Reader) -> Result<Self> {
        let (text, utf16) = r.fstring_ext()?;
        Ok(EngineString { text, utf16 })
    }

    pub fn write(&self, w: &mut Writer) {
        w.fstring_ext(&self.text, self.utf16);
    }
}

impl fmt::Display for EngineString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// One name map entry: the text, its encoding, and the two 16-bit hashes
/// the engine stores beside it (kept as read; the engine recomputes them on load).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NameEntry {
    pub text: String,
    pub utf16: bool,
    pub non_case_preserving_hash: u16,
    pub case_preserving_hash: u16,
}

impl NameEntry {
    /// A name map entry for `text` with the hashes the engine writes
    /// (see [`name_entry_hashes`]).
    pub fn new(text: impl Into<String>) -> Self {
        let text = text.into();
        let utf16 = !crate::binary::is_latin1(&text);
        let (non_case_preserving_hash, case_preserving_hash) = name_entry_hashes(&text);
        NameEntry {
            text,
            utf16,
            non_case_preserving_hash,
            case_preserving_hash,
        }
    }

    /// `with_hashes`: the UE4 object version has `NAME_HASHES_SERIALIZED`.
    pub fn read(r: &mut Reader, with_hashes: bool) -> Result<Self> {
        let (text, utf16) = r.fstring_ext()?;
        let (non_case_preserving_hash, case_preserving_hash) = if with_hashes {
            (r.u16()?, r.u16()?)
        } else {
            (0, 0)
        };
        Ok(NameEntry {
            text,
            utf16,
            non_case_preserving_hash,
            case_preserving_hash,
        })
    }

    pub fn write(&self, w: &mut Writer, with_hashes: bool) {
        w.fstring_ext(&self.text, self.utf16);
        if with_hashes {
            w.u16(self.non_case_preserving_hash);
            w.u16(self.case_preserving_hash);
        }
    }
}

/// The two 16-bit hashes of a name map entry, as `FNameEntrySerialized`
/// writes them: (non-case-preserving, case-preserving). The first is the low
/// half of the engine's `FCrc::Strihash_DEPRECATED` (a CRC over the
/// upper-cased characters with the MSB-first polynomial 0x04C11DB7 table,
/// one step per byte of each character as stored: one for Latin-1 names, two
/// for UTF-16 ones); the second the low half of `FCrc::StrCrc32` (the
/// reflected CRC-32 over each character as a 32-bit value). Checked against
/// engine-written names in the corpus.
pub fn name_entry_hashes(text: &str) -> (u16, u16) {
    let utf16 = !crate::binary::is_latin1(text);
    let mut non_case_preserving: u32 = 0;
    let step = |hash: &mut u32, byte: u32| {
        *hash = (*hash >> 8) ^ crc_msb_first_table()[((*hash ^ byte) & 0xFF) as usize];
    };
    for unit in text.encode_utf16() {
        let upper = upper_case_unit(unit);
        step(&mut non_case_preserving, u32::from(upper & 0xFF));
        if utf16 {
            step(&mut non_case_preserving, u32::from(upper >> 8));
        }
    }
    let mut case_preserving: u32 = !0;
    for unit in text.encode_utf16() {
        let mut value = u32::from(unit);
        for _ in 0..4 {
            case_preserving = (case_preserving >> 8)
                ^ crc_reflected_table()[((case_preserving ^ value) & 0xFF) as usize];
            value >>= 8;
        }
    }
    (non_case_preserving as u16, !case_preserving as u16)
}

/// Upper-cases one UTF-16 unit when its upper case is a single unit.
fn upper_case_unit(unit: u16) -> u16 {
    let Some(c) = char::from_u32(u32::from(unit)) else {
        return unit;
    };
    let mut upper = c.to_uppercase();
    match (upper.next(), upper.next()) {
        (Some(u), None) if (u as u32) <= 0xFFFF => u as u16,
        _ => unit,
    }
}

/// `CRCTable_DEPRECATED`: the CRC-32 table of polynomial 0x04C11DB7, MSB first.
fn crc_msb_first_table() -> &'static [u32; 256] {
    static TABLE: std::sync::OnceLock<[u32; 256]> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        let mut table = [0u32; 256];
        for (i, slot) in table.iter_mut().enumerate() {
            let mut c = (i as u32) << 24;
            for _ in 0..8 {
                c = if c & 0x8000_0000 != 0 {
                    (c << 1) ^ 0x04C1_1DB7
                } else {
                    c << 1
                };
            }
            *slot = c;
        }
        table
    })
}

/// The reflected CRC-32 table (polynomial 0xEDB88320) behind `FCrc::StrCrc32`.
fn crc_reflected_table() -> &'static [u32; 256] {
    static TABLE: std::sync::OnceLock<[u32; 256]> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        let mut table = [0u32; 256];
        for (i, slot) in table.iter_mut().enumerate() {
            let mut c = i as u32;
            for _ in 0..8 {
                c = if c & 1 != 0 {
                    (c >> 1) ^ 0xEDB8_8320
                } else {
                    c >> 1
                };
            }
            *slot = c;
        }
        table
    })
}

/// An `FName` as serialized in a package: an index into the name map and a
/// number (0 = no suffix; n > 0 displays as `_{n-1}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize)]
pub struct FName {
    pub index: u32,
    pub number: u32,
}

impl FName {
    pub fn new(index: u32, number: u32) -> Self {
        FName { index, number }
    }

    /// Reads the pair and checks the index against the name map.
    pub fn read(r: &mut Reader, name_count: usize) -> Result<Self> {
        let at = r.pos();
        let index = r.u32()?;
        let number = r.u32()?;
        if index as usize >= name_count {
            return Err(r.error_at(
                at,
                format!("name index {index} is outside the name map ({name_count} names)"),
            ));
        }
        Ok(FName { index, number })
    }

    pub fn write(&self, w: &mut Writer) {
        w.u32(self.index);
        w.u32(self.number);
    }

    /// The name's text with its number suffix, or an error if the index is out of range.
    pub fn resolve(&self, names: &[NameEntry]) -> Result<String> {
        let entry = names.get(self.index as usize).ok_or_else(|| {
            Error::other(format!(
                "name index {} is outside the name map ({} names)",
                self.index,
                names.len()
            ))
        })?;
        Ok(match self.number {
            0 => entry.text.clone(),
            n => format!("{}_{}", entry.text, n - 1),
        })
    }

    /// A displayable form that never fails (`<bad name 12>` for a bad index).
    pub fn display<'a>(&self, names: &'a [NameEntry]) -> DisplayName<'a> {
        DisplayName { name: *self, names }
    }
}

/// See [`FName::display`].
pub struct DisplayName<'a> {
    name: FName,
    names: &'a [NameEntry],
}

impl fmt::Display for DisplayName<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.names.get(self.name.index as usize) {
            Some(entry) if self.name.number == 0 => f.write_str(&entry.text),
            Some(entry) => write!(f, "{}_{}", entry.text, self.name.number - 1),
            None => write!(f, "<bad name {}>", self.name.index),
        }
    }
}

/// `FPackageIndex`: 0 is null, `n > 0` is export `n - 1`, `n < 0` is import `-n - 1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize)]
#[serde(transparent)]
pub struct PackageIndex(pub i32);

/// What a [`PackageIndex`] refers to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResolvedIndex {
    Null,
    Import(usize),
    Export(usize),
}

impl PackageIndex {
    pub const NULL: PackageIndex = PackageIndex(0);

    pub fn from_import(index: usize) -> Self {
        PackageIndex(-(index as i32) - 1)
    }

    pub fn from_export(index: usize) -> Self {
        PackageIndex(index as i32 + 1)
    }

    pub fn is_null(self) -> bool {
        self.0 == 0
    }

    pub fn is_import(self) -> bool {
        self.0 < 0
    }

    pub fn is_export(self) -> bool {
        self.0 > 0
    }

    pub fn resolve(self) -> ResolvedIndex {
        match self.0 {
            0 => ResolvedIndex::Null,
            n if n < 0 => ResolvedIndex::Import((-(n as i64) - 1) as usize),
            n => ResolvedIndex::Export((n - 1) as usize),
        }
    }

    /// The import index, if this refers to an import.
    pub fn import(self) -> Option<usize> {
        match self.resolve() {
            ResolvedIndex::Import(i) => Some(i),
            _ => None,
        }
    }

    /// The export index, if this refers to an export.
    pub fn export(self) -> Option<usize> {
        match self.resolve() {
            ResolvedIndex::Export(i) => Some(i),
            _ => None,
        }
    }

    pub fn read(r: &mut Reader) -> Result<Self> {
        Ok(PackageIndex(r.i32()?))
    }

    /// Reads an index and checks it refers to an existing import/export (or null).
    pub fn read_checked(r: &mut Reader, imports: usize, exports: usize) -> Result<Self> {
        let at = r.pos();
        let index = PackageIndex(r.i32()?);
        index
            .check(imports, exports)
            .map_err(|m| r.error_at(at, m))?;
        Ok(index)
    }

    /// `Err(message)` if the index is outside the given table sizes.
    pub fn check(self, imports: usize, exports: usize) -> std::result::Result<(), String> {
        match self.resolve() {
            ResolvedIndex::Import(i) if i >= imports => Err(format!(
                "package index {} names import {i} but there are {imports} imports",
                self.0
            )),
            ResolvedIndex::Export(i) if i >= exports => Err(format!(
                "package index {} names export {i} but there are {exports} exports",
                self.0
            )),
            _ => Ok(()),
        }
    }

    pub fn write(self, w: &mut Writer) {
        w.i32(self.0);
    }
}

impl fmt::Display for PackageIndex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.resolve() {
            ResolvedIndex::Null => f.write_str("null"),
            ResolvedIndex::Import(i) => write!(f, "import {i}"),
            ResolvedIndex::Export(i) => write!(f, "export {i}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_index_round_trip() {
        assert_eq!(PackageIndex::from_import(0).0, -1);
        assert_eq!(PackageIndex::from_export(0).0, 1);
        assert_eq!(PackageIndex(-3).resolve(), ResolvedIndex::Import(2));
        assert_eq!(PackageIndex(4).resolve(), ResolvedIndex::Export(3));
        assert_eq!(PackageIndex(i32::MIN).import(), Some(i32::MAX as usize));
        assert!(PackageIndex(-5).check(4, 0).is_err());
        assert!(PackageIndex(-4).check(4, 0).is_ok());
    }

    /// Hashes of names the engine wrote (corpus `retoc/UE5.6/SM_Cube.uasset`).
    #[test]
    fn name_hashes_match_the_engine() {
        assert_eq!(name_entry_hashes("/Script/CoreUObject"), (0x49f8, 0x3e2d));
        assert_eq!(name_entry_hashes("/Script/Engine"), (0x4086, 0x4985));
        assert_eq!(
            name_entry_hashes("/Script/NavigationSystem"),
            (0xb8aa, 0x2f24)
        );
        assert_eq!(name_entry_hashes("BodySetup"), (0xbc09, 0x798f));
        let entry = NameEntry::new("BodySetup");
        assert!(!entry.utf16);
        assert_eq!(
            (entry.non_case_preserving_hash, entry.case_preserving_hash),
            (0xbc09, 0x798f)
        );
    }

    #[test]
    fn fname_display_adds_number_suffix() {
        let names = vec![NameEntry {
            text: "Cube".into(),
            utf16: false,
            non_case_preserving_hash: 0,
            case_preserving_hash: 0,
        }];
        assert_eq!(FName::new(0, 0).display(&names).to_string(), "Cube");
        assert_eq!(FName::new(0, 3).display(&names).to_string(), "Cube_2");
        assert_eq!(FName::new(1, 0).display(&names).to_string(), "<bad name 1>");
        assert!(FName::new(1, 0).resolve(&names).is_err());
    }
}
