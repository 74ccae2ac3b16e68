//! The engine's names as they are serialized outside a legacy package's own
//! name map: the `FName` number suffix rule, the name batch (UE5: count,
//! string bytes, hash algorithm id, CityHash64 per name, big-endian length
//! words, strings; UE4: the split form with a name block and a hash block)
//! and `FMappedName`. Zen packages, container headers and the UE4 global
//! name chunks all store names this way, so they share this one module.
//!
//! Which names are stored as UTF-16 follows the engine's name pool: a name
//! is wide when any of its characters is above 0x7F (`IsPureAnsi` in
//! `UnrealNames.cpp`, the same test as `TCString<WIDECHAR>::IsPureAnsi` in
//! `CString.h`), not when it leaves Latin-1. The hash of a name is taken
//! over the form it is stored in (`SaveNameBatch` / `HashName`).

use std::borrow::Cow;

use serde::Serialize;
use strum::FromRepr;

use crate::binary::{Reader, Writer};
use crate::error::{Context, Result};
use crate::hash::city_hash_mapped;

/// The algorithm id the engine writes before the name hashes.
pub(crate) const NAME_HASH_ALGORITHM_ID: u64 = 0xC164_0000;

/// Splits `Name_12` into (`Name`, 13), as the engine stores FName numbers:
/// number `n + 1` for a suffix `_n`. Names without a numeric suffix, or
/// whose suffix has a leading zero (`_012`), get 0.
pub fn split_number(name: &str) -> (&str, u32) {
    if let Some(pos) = name.rfind('_') {
        let digits = &name[pos + 1..];
        let valid = !digits.is_empty()
            && digits.bytes().all(|b| b.is_ascii_digit())
            && (digits == "0" || !digits.starts_with('0'))
            && digits.len() <= 10;
        if valid && pos > 0 {
            if let Ok(n) = digits.parse::<u32>() {
                if n < u32::MAX {
                    return (&name[..pos], n + 1);
                }
            }
        }
    }
    (name, 0)
}

/// The text of an FName: `base` alone for number 0, else `base_{number-1}`.
pub(crate) fn with_number(base: &str, number: u32) -> Cow<'_, str> {
    if number == 0 {
        Cow::Borrowed(base)
    } else {
        Cow::Owned(format!("{base}_{}", number - 1))
    }
}

/// One name of a name batch: its text and whether it is stored as UTF-16.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BatchName {
    pub text: String,
    /// Stored as UTF-16 (the engine's `bIsWide`).
    pub wide: bool,
}

impl BatchName {
    /// A name stored the way the engine stores it: wide when not pure ASCII.
    pub(crate) fn new(text: impl Into<String>) -> Self {
        let text = text.into();
        let wide = !text.is_ascii();
        BatchName { text, wide }
    }

    /// Whether the name goes out as UTF-16: as flagged, or because a
    /// character does not fit one byte (a flag set by hand cannot say otherwise).
    fn stored_wide(&self) -> bool {
        self.wide || !crate::binary::is_latin1(&self.text)
    }

    /// Characters in the stored form (UTF-16 units or bytes).
    fn stored_len(&self) -> usize {
        if self.stored_wide() {
            self.text.encode_utf16().count()
        } else {
            self.text.chars().count()
        }
    }

    fn stored_bytes(&self) -> usize {
        self.stored_len() * if self.stored_wide() { 2 } else { 1 }
    }

    /// The batch hash: CityHash64 of the ASCII-lowercased text in its stored form.
    pub(crate) fn hash(&self) -> u64 {
        city_hash_mapped(&self.text, self.stored_wide(), |c| c.to_ascii_lowercase())
    }

    /// `FSerializedNameHeader`: big-endian, top bit set for UTF-16, 15-bit length.
    fn write_header(&self, w: &mut Writer) {
        let len = self.stored_len() as u16 & 0x7fff;
        let wide_bit = if self.stored_wide() { 0x8000 } else { 0 };
        w.bytes(&(wide_bit | len).to_be_bytes());
    }

    fn read_header(r: &mut Reader) -> Result<(bool, usize)> {
        let raw = u16::from_be_bytes(r.array()?);
        Ok((raw & 0x8000 != 0, (raw & 0x7fff) as usize))
    }

    fn read_text(r: &mut Reader, wide: bool, len: usize) -> Result<Self> {
        let at = r.pos();
        let text = if wide {
            let bytes = r.bytes(len * 2)?;
            let units: Vec<u16> = bytes
                .chunks_exact(2)
                .map(|c| u16::from_le_bytes([c[0], c[1]]))
                .collect();
            String::from_utf16(&units).map_err(|_| r.error_at(at, "name is not valid UTF-16"))?
        } else {
            // One byte per character; bytes above 0x7F are Latin-1 in the engine.
            r.bytes(len)?.iter().map(|&b| b as char).collect()
        };
        Ok(BatchName { text, wide })
    }

    fn write_text(&self, w: &mut Writer) {
        if self.stored_wide() {
            for unit in self.text.encode_utf16() {
                w.u16(unit);
            }
        } else {
            for c in self.text.chars() {
                w.u8(c as u32 as u8);
            }
        }
    }
}

/// Reads the hash block (one hash per name at `hashes_at`) and checks every
/// stored hash against the name's own: a mismatch means the names or the
/// hashes are damaged.
fn check_hashes(r: &Reader, names: &[BatchName], hashes_at: usize) -> Result<()> {
    let mut rh = r.clone();
    rh.seek(hashes_at)?;
    for (i, name) in names.iter().enumerate() {
        let at = rh.pos();
        let stored = rh.u64()?;
        let expected = name.hash();
        if stored != expected {
            return Err(rh.error_at(
                at,
                format!(
                    "hash of name {i} `{}` is {stored:#018x}, expected {expected:#018x}",
                    name.text
                ),
            ));
        }
    }
    Ok(())
}

fn read_algorithm_id(r: &mut Reader) -> Result<()> {
    let at = r.pos();
    let id = r.u64()?;
    if id != NAME_HASH_ALGORITHM_ID {
        return Err(r.error_at(
            at,
            format!(
                "unknown name hash algorithm id {id:#x} (expected {NAME_HASH_ALGORITHM_ID:#x})"
            ),
        ));
    }
    Ok(())
}

/// Reads a UE5 name batch (`LoadNameBatch`), checking every stored hash.
pub(crate) fn read_name_batch(r: &mut Reader) -> Result<Vec<BatchName>> {
    // Each name costs at least 8 hash bytes and a 2-byte header.
    let count = r.count_u32(10).context("name count")?;
    if count == 0 {
        return Ok(Vec::new());
    }
    let string_bytes_at = r.pos();
    let string_bytes = r.u32()? as usize;
    read_algorithm_id(r)?;
    let hashes_at = r.pos();
    r.skip(count * 8)?;
    let mut headers = Vec::with_capacity(count);
    for _ in 0..count {
        headers.push(BatchName::read_header(r)?);
    }
    let strings_start = r.pos();
    let mut names = Vec::with_capacity(count);
    for (i, (wide, len)) in headers.into_iter().enumerate() {
        names.push(BatchName::read_text(r, wide, len).with_context(|| format!("name {i}"))?);
    }
    if r.pos() - strings_start != string_bytes {
        return Err(r.error_at(
            string_bytes_at,
            format!(
                "string byte count {string_bytes} does not match the names ({} bytes)",
                r.pos() - strings_start
            ),
        ));
    }
    check_hashes(r, &names, hashes_at)?;
    Ok(names)
}

/// Writes a UE5 name batch (`SaveNameBatch`).
pub(crate) fn write_name_batch(w: &mut Writer, names: &[BatchName]) {
    w.u32(names.len() as u32);
    if names.is_empty() {
        return;
    }
    w.u32(names.iter().map(BatchName::stored_bytes).sum::<usize>() as u32);
    w.u64(NAME_HASH_ALGORITHM_ID);
    for name in names {
        w.u64(name.hash());
    }
    for name in names {
        name.write_header(w);
    }
    for name in names {
        name.write_text(w);
    }
}

/// Reads the UE4 split name batch: the name block (`names_size` bytes of
/// header + text per name) checked against the hash block (`hashes_size`
/// bytes: algorithm id + one hash per name). `r` spans the whole record the
/// offsets are relative to.
pub(crate) fn read_split_names(
    r: &mut Reader,
    names_offset: usize,
    names_size: usize,
    hashes_offset: usize,
    hashes_size: usize,
) -> Result<Vec<BatchName>> {
    if hashes_size < 8 || !hashes_size.is_multiple_of(8) {
        return Err(r.error(format!(
            "name hash block size {hashes_size} is not 8 + 8 × names"
        )));
    }
    let count = hashes_size / 8 - 1;
    r.seek(names_offset)?;
    let mut block = r.sub(names_size).context("name block")?;
    // Each name costs at least its 2-byte header.
    block.check_count(count as i64, 2)?;
    let mut names = Vec::with_capacity(count);
    for i in 0..count {
        let (wide, len) =
            BatchName::read_header(&mut block).with_context(|| format!("name {i}"))?;
        names.push(
            BatchName::read_text(&mut block, wide, len).with_context(|| format!("name {i}"))?,
        );
    }
    if !block.at_end() {
        return Err(block.error(format!(
            "{} bytes left after the last name",
            block.remaining()
        )));
    }
    r.seek(hashes_offset)?;
    read_algorithm_id(r)?;
    let at = r.pos();
    check_hashes(r, &names, at)?;
    r.skip(count * 8)?;
    Ok(names)
}

/// The UE4 split name batch as its two blocks: (names, hashes).
pub(crate) fn write_split_names(names: &[BatchName]) -> (Vec<u8>, Vec<u8>) {
    let mut block = Writer::new();
    for name in names {
        name.write_header(&mut block);
        name.write_text(&mut block);
    }
    let mut hashes = Writer::new();
    hashes.u64(NAME_HASH_ALGORITHM_ID);
    for name in names {
        hashes.u64(name.hash());
    }
    (block.into_inner(), hashes.into_inner())
}

/// Which name map an [`MappedName`] indexes (its top two bits).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, FromRepr)]
#[repr(u32)]
pub enum MappedNameKind {
    /// The package's own name map.
    Package = 0,
    /// The container header's name map (localized packages, redirects).
    Container = 1,
    /// The global name map (script objects).
    Global = 2,
}

/// `FMappedName`: an index into a name map (low 30 bits), the map kind (top
/// 2 bits) and the name's number (`Name_3` is stored as 4; 0: no suffix).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct MappedName {
    pub(crate) index_and_kind: u32,
    pub(crate) number: u32,
}

impl MappedName {
    const INDEX_MASK: u32 = (1 << 30) - 1;

    pub(crate) fn new(kind: MappedNameKind, index: u32, number: u32) -> Self {
        MappedName {
            index_and_kind: (index & Self::INDEX_MASK) | ((kind as u32) << 30),
            number,
        }
    }
    /// A name of the package's own name map.
    pub(crate) fn package(index: u32, number: u32) -> Self {
        Self::new(MappedNameKind::Package, index, number)
    }
    pub(crate) fn index(self) -> u32 {
        self.index_and_kind & Self::INDEX_MASK
    }
    /// The map kind; `None` for the unused fourth value.
    pub fn kind(self) -> Option<MappedNameKind> {
        MappedNameKind::from_repr(self.index_and_kind >> 30)
    }
    /// The name's text in `map` (the map this name's kind refers to), with its number.
    pub fn resolve<'a>(self, map: &'a [BatchName]) -> Option<Cow<'a, str>> {
        map.get(self.index() as usize)
            .map(|n| with_number(&n.text, self.number))
    }
    pub(crate) fn read(r: &mut Reader) -> Result<Self> {
        Ok(MappedName {
            index_and_kind: r.u32()?,
            number: r.u32()?,
        })
    }
    pub(crate) fn write(&self, w: &mut Writer) {
        w.u32(self.index_and_kind);
        w.u32(self.number);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::city_hash64;

    #[test]
    fn name_numbers() {
        assert_eq!(split_number("Foo_0"), ("Foo", 1));
        assert_eq!(split_number("Foo_12"), ("Foo", 13));
        assert_eq!(split_number("Foo_012"), ("Foo_012", 0));
        assert_eq!(split_number("Foo"), ("Foo", 0));
        assert_eq!(split_number("Foo_"), ("Foo_", 0));
        assert_eq!(split_number("_3"), ("_3", 0));
        assert_eq!(with_number("Foo", 13), "Foo_12");
        assert_eq!(with_number("Foo", 0), "Foo");
    }

    #[test]
    fn batch_round_trip() {
        let names = vec![
            BatchName::new("None"),
            BatchName::new("Größe"),
            BatchName::new("abc"),
        ];
        // The engine's rule: any character above 0x7F makes the name wide.
        assert!(names[1].wide);
        let mut w = Writer::new();
        write_name_batch(&mut w, &names);
        let bytes = w.into_inner();
        let mut r = Reader::new(&bytes);
        assert_eq!(read_name_batch(&mut r).unwrap(), names);
        assert!(r.at_end());
    }

    #[test]
    fn narrow_latin1_names_hash_their_bytes() {
        // A tool may store a Latin-1 name one byte per character; its hash
        // is then over those bytes, as the engine hashes what it stores.
        let narrow = BatchName {
            text: "é".into(),
            wide: false,
        };
        assert_eq!(narrow.hash(), city_hash64(&[0xE9]));
        let (block, hashes) = write_split_names(std::slice::from_ref(&narrow));
        let mut record = block.clone();
        record.extend_from_slice(&hashes);
        let mut r = Reader::new(&record);
        let back = read_split_names(&mut r, 0, block.len(), block.len(), hashes.len()).unwrap();
        assert_eq!(back, vec![narrow]);
    }

    #[test]
    fn damaged_hash_is_reported_at_its_offset() {
        let mut w = Writer::new();
        write_name_batch(&mut w, &[BatchName::new("A")]);
        let mut bytes = w.into_inner();
        bytes[16] ^= 1; // first byte of the only hash (count 4, size 4, id 8)
        let e = read_name_batch(&mut Reader::new(&bytes)).unwrap_err();
        assert_eq!(e.context().offset, Some(16));
    }

    #[test]
    fn mapped_name_kinds() {
        let m = MappedName::new(MappedNameKind::Container, 5, 2);
        assert_eq!(m.index(), 5);
        assert_eq!(m.kind(), Some(MappedNameKind::Container));
        assert_eq!(m.index_and_kind, 0x4000_0005);
        let map = [
            BatchName::new("a"),
            BatchName::new("b"),
            BatchName::new("c"),
            BatchName::new("d"),
            BatchName::new("e"),
            BatchName::new("/Game/X"),
        ];
        assert_eq!(m.resolve(&map).unwrap(), "/Game/X_1");
    }
}
