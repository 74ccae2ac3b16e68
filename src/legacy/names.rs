//! Names and object references of a legacy package: the name map entry,
//! `FName` as (index, number), `FPackageIndex`, and the engine string with
//! its encoding kept (so a rewrite reproduces the original bytes).

use std::borrow::Cow;
use std::fmt;

use serde::Serialize;

use crate::binary::{Reader, Writer};
use crate::error::{Error, Result};

/// An `FString` as stored: its text and whether it was written as UTF-16.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct EngineString {
    pub(crate) text: String,
    pub(crate) utf16: bool,
}

impl EngineString {
    pub fn new(text: impl Into<String>) -> Self {
        let text = text.into();
        // The engine writes an FString wide when any character is above 0x7F
        // (`TCString<WIDECHAR>::IsPureAnsi`).
        let utf16 = !text.is_ascii();
        EngineString { text, utf16 }
    }

    pub(crate) fn read(r: &mut Reader) -> Result<Self> {
        let (text, utf16) = r.fstring_ext()?;
        Ok(EngineString { text, utf16 })
    }

    pub(crate) fn write(&self, w: &mut Writer) {
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
    /// A new entry with the hashes the engine would store for `text`
    /// (wide when the text is not pure ASCII, as the engine's name pool decides).
    pub fn new(text: impl Into<String>) -> Self {
        let text = text.into();
        let utf16 = !text.is_ascii();
        let (non_case_preserving_hash, case_preserving_hash) = name_map_hashes(&text, utf16);
        NameEntry {
            text,
            utf16,
            non_case_preserving_hash,
            case_preserving_hash,
        }
    }

    /// Whether the stored hashes are the ones the engine computes for the text.
    pub fn hashes_match(&self) -> bool {
        name_map_hashes(&self.text, self.utf16)
            == (self.non_case_preserving_hash, self.case_preserving_hash)
    }

    /// `with_hashes`: the UE4 object version has `NAME_HASHES_SERIALIZED`.
    pub(crate) fn read(r: &mut Reader, with_hashes: bool) -> Result<Self> {
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

    pub(crate) fn write(&self, w: &mut Writer, with_hashes: bool) {
        w.fstring_ext(&self.text, self.utf16);
        if with_hashes {
            w.u16(self.non_case_preserving_hash);
            w.u16(self.case_preserving_hash);
        }
    }
}

/// The two 16-bit hashes a name map entry stores: the low 16 bits of the
/// engine's deprecated case-insensitive CRC (`Strihash_DEPRECATED`: ASCII
/// upper-cased, MSB-first CRC-32 table, one byte per ANSI character or two
/// per UTF-16 unit) and of `StrCrc32` (reflected CRC-32 over each character
/// widened to four bytes). Checked against every name in the corpus.
pub fn name_map_hashes(text: &str, utf16: bool) -> (u16, u16) {
    let mut insensitive: u32 = 0;
    // `StrCrc32` is the standard CRC-32 of the widened characters.
    let mut sensitive = crc32fast::Hasher::new();
    let mut widened = [0u8; 256];
    let mut len = 0;
    // Both hashes in one pass over the characters (or UTF-16 units).
    let mut add = |unit: u32| {
        let upper = if (u32::from(b'a')..=u32::from(b'z')).contains(&unit) {
            unit - 32
        } else {
            unit
        };
        let bytes: &[u32] = if utf16 {
            &[upper & 0xff, (upper >> 8) & 0xff]
        } else {
            &[upper & 0xff]
        };
        for &byte in bytes {
            insensitive =
                (insensitive >> 8) ^ CRC_TABLE_MSB[((insensitive ^ byte) & 0xff) as usize];
        }
        // ANSI names are hashed from signed chars: bytes >= 0x80 widen with
        // their sign bit set.
        let wide = if !utf16 && unit >= 0x80 {
            unit | 0xffff_ff00
        } else {
            unit
        };
        widened[len..len + 4].copy_from_slice(&wide.to_le_bytes());
        len += 4;
        if len == widened.len() {
            sensitive.update(&widened);
            len = 0;
        }
    };
    if utf16 {
        text.encode_utf16().for_each(|u| add(u32::from(u)));
    } else {
        text.chars().for_each(|c| add(c as u32));
    }
    sensitive.update(&widened[..len]);
    (
        (insensitive & 0xffff) as u16,
        (sensitive.finalize() & 0xffff) as u16,
    )
}

/// The engine's `StrCrc_DEPRECATED`: the MSB-first CRC-32 of the text's
/// UTF-16 units, low byte then high byte, started at all ones and inverted.
/// Cooks store it of the upper-cased file base name as the summary's
/// `PackageSource` (checked against the corpus's engine-cooked packages).
pub fn str_crc_deprecated(text: &str) -> u32 {
    let mut crc: u32 = !0;
    for unit in text.encode_utf16() {
        for byte in [unit & 0xff, unit >> 8] {
            crc = (crc << 8) ^ CRC_TABLE_MSB[((crc >> 24) ^ u32::from(byte)) as usize & 0xff];
        }
    }
    !crc
}

/// CRC-32 (polynomial 0x04C11DB7) table, most significant bit first, as the
/// engine's `CRCTable_DEPRECATED` indexes it.
static CRC_TABLE_MSB: [u32; 256] = {
    let mut table = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut crc = (i as u32) << 24;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 0x8000_0000 != 0 {
                (crc << 1) ^ 0x04C1_1DB7
            } else {
                crc << 1
            };
            bit += 1;
        }
        table[i] = crc;
        i += 1;
    }
    table
};

/// Reflected CRC-32 (polynomial 0xEDB88320) table: the tests' reference
/// for the case-preserving hash (zenpak computes it with `crc32fast`).
#[cfg(test)]
static CRC_TABLE_REFLECTED: [u32; 256] = {
    let mut table = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut crc = i as u32;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
            bit += 1;
        }
        table[i] = crc;
        i += 1;
    }
    table
};

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
    pub(crate) fn read(r: &mut Reader, name_count: usize) -> Result<Self> {
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
    pub(crate) fn resolve(&self, names: &[NameEntry]) -> Result<String> {
        self.text(names).map(Cow::into_owned)
    }

    /// [`resolve`](Self::resolve) borrowing the text when it has no number.
    pub(crate) fn text<'a>(&self, names: &'a [NameEntry]) -> Result<Cow<'a, str>> {
        let entry = names.get(self.index as usize).ok_or_else(|| {
            Error::invalid(format!(
                "name index {} is outside the name map ({} names)",
                self.index,
                names.len()
            ))
        })?;
        Ok(crate::names::with_number(&entry.text, self.number))
    }

    /// A displayable form that never fails (`<bad name 12>` for a bad index).
    pub(crate) fn display<'a>(&self, names: &'a [NameEntry]) -> DisplayName<'a> {
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
            Some(entry) => f.write_str(&crate::names::with_number(&entry.text, self.name.number)),
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

    pub(crate) fn is_import(self) -> bool {
        self.0 < 0
    }

    pub(crate) fn is_export(self) -> bool {
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

    pub(crate) fn read(r: &mut Reader) -> Result<Self> {
        Ok(PackageIndex(r.i32()?))
    }

    /// Reads an index and checks it refers to an existing import/export (or null).
    pub(crate) fn read_checked(r: &mut Reader, imports: usize, exports: usize) -> Result<Self> {
        let at = r.pos();
        let index = PackageIndex(r.i32()?);
        index
            .check(imports, exports)
            .map_err(|m| r.error_at(at, m))?;
        Ok(index)
    }

    /// `Err(message)` if the index is outside the given table sizes.
    pub(crate) fn check(self, imports: usize, exports: usize) -> std::result::Result<(), String> {
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

    #[test]
    fn name_map_hashes_match_stored_engine_values() {
        // Stored beside these names in the corpus's retoc/UE5.6/SM_Cube.uasset.
        assert_eq!(name_map_hashes("BlockAll", false), (0x3bf8, 0x095b));
        assert_eq!(name_map_hashes("Chaos", false), (0x0630, 0xf99b));
        assert_eq!(name_map_hashes("lambert1", false), (0xe0e6, 0x0e94));
        assert_eq!(
            name_map_hashes("NavCollision_Chaos", false),
            (0xc2b0, 0x9900)
        );
        assert!(NameEntry::new("BlockAll").hashes_match());
        assert!(NameEntry::new("日本").utf16);
    }

    /// The one-pass hashes against the two CRCs computed one after the
    /// other over the collected units, as first written: ANSI (with bytes
    /// past 0x7f, which widen signed) and UTF-16 names.
    #[test]
    fn name_map_hashes_are_the_two_crcs_over_the_units() {
        fn reference(text: &str, utf16: bool) -> (u16, u16) {
            let units: Vec<u32> = if utf16 {
                text.encode_utf16().map(u32::from).collect()
            } else {
                text.chars().map(|c| c as u32).collect()
            };
            let mut insensitive: u32 = 0;
            for &unit in &units {
                let upper = if (97..=122).contains(&unit) {
                    unit - 32
                } else {
                    unit
                };
                let bytes = if utf16 {
                    vec![upper & 0xff, (upper >> 8) & 0xff]
                } else {
                    vec![upper & 0xff]
                };
                for byte in bytes {
                    insensitive =
                        (insensitive >> 8) ^ CRC_TABLE_MSB[((insensitive ^ byte) & 0xff) as usize];
                }
            }
            let mut sensitive: u32 = !0;
            for &unit in &units {
                let mut widened = if !utf16 && unit >= 0x80 {
                    unit | 0xffff_ff00
                } else {
                    unit
                };
                for _ in 0..4 {
                    sensitive = (sensitive >> 8)
                        ^ CRC_TABLE_REFLECTED[((sensitive ^ widened) & 0xff) as usize];
                    widened >>= 8;
                }
            }
            ((insensitive & 0xffff) as u16, (!sensitive & 0xffff) as u16)
        }
        for text in [
            "",
            "BlockAll",
            "/Script/Engine",
            "Caf\u{e9}_\u{ff}",
            "日本",
            "Mixed 日本 ok",
        ] {
            for utf16 in [false, true] {
                assert_eq!(
                    name_map_hashes(text, utf16),
                    reference(text, utf16),
                    "{text:?} utf16 {utf16}"
                );
            }
        }
    }

    #[test]
    fn package_source_is_the_deprecated_string_crc() {
        // `PackageSource` of the corpus's engine cooks retoc/UE5.5 and
        // UE5.6 SM_Cube and BP_ThirdPersonCharacter.
        assert_eq!(str_crc_deprecated("SM_CUBE"), 3_728_387_022);
        assert_eq!(str_crc_deprecated("BP_THIRDPERSONCHARACTER"), 1_825_978_960);
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
