//! Name maps of Zen packages: the UE5 name batch (count, string bytes, hash
//! algorithm id, CityHash64 hashes, big-endian length headers, then the
//! strings) and the UE4 split form (length-prefixed strings in one block,
//! hash algorithm id + hashes in another).

use serde::Serialize;

use crate::binary::{Reader, Writer};
use crate::error::{Context, Result};
use crate::hash::name_hash;

/// The algorithm id the engine writes before the name hashes.
pub const NAME_HASH_ALGORITHM_ID: u64 = 0xC164_0000;

/// One name of a name map. `wide` names are stored as UTF-16 (the engine
/// does so for any name that is not pure ASCII).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ZenName {
    pub text: String,
    pub wide: bool,
}

impl ZenName {
    pub fn new(text: impl Into<String>) -> Self {
        let text = text.into();
        let wide = !text.is_ascii();
        ZenName { text, wide }
    }

    /// Bytes of the text in the batch (UTF-16 for wide names).
    fn byte_len(&self) -> usize {
        if self.wide {
            self.text.encode_utf16().count() * 2
        } else {
            self.text.len()
        }
    }

    fn char_len(&self) -> usize {
        if self.wide {
            self.text.encode_utf16().count()
        } else {
            self.text.len()
        }
    }

    /// `FSerializedNameHeader`: big-endian, top bit set for UTF-16, 15-bit length.
    fn write_header(&self, w: &mut Writer) {
        let len = self.char_len() as u16 & 0x7fff;
        let wide_bit = if self.wide { 0x8000 } else { 0 };
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
            let bytes = r.bytes(len)?;
            if !bytes.is_ascii() {
                // ANSI entries hold Latin-1 in the engine; accept them as such.
                bytes.iter().map(|&b| b as char).collect()
            } else {
                String::from_utf8(bytes.to_vec())
                    .map_err(|_| r.error_at(at, "name is not valid text"))?
            }
        };
        Ok(ZenName { text, wide })
    }

    fn write_text(&self, w: &mut Writer) {
        if self.wide {
            for unit in self.text.encode_utf16() {
                w.u16(unit);
            }
        } else {
            for c in self.text.chars() {
                w.u8(c as u32 as u8);
            }
        }
    }

    fn hash(&self) -> u64 {
        name_hash(&self.text)
    }
}

/// Reads and checks the hash block: algorithm id, then one hash per name.
fn check_hashes(r: &mut Reader, names: &[ZenName], hashes_at: usize) -> Result<()> {
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

/// Reads a UE5 name batch.
pub fn read_name_batch(r: &mut Reader) -> Result<Vec<ZenName>> {
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
        headers.push(ZenName::read_header(r)?);
    }
    let strings_start = r.pos();
    let mut names = Vec::with_capacity(count);
    for (i, (wide, len)) in headers.into_iter().enumerate() {
        names.push(ZenName::read_text(r, wide, len).with_context(|| format!("name {i}"))?);
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

/// Writes a UE5 name batch.
pub fn write_name_batch(w: &mut Writer, names: &[ZenName]) {
    w.u32(names.len() as u32);
    if names.is_empty() {
        return;
    }
    w.u32(names.iter().map(ZenName::byte_len).sum::<usize>() as u32);
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

/// Reads the UE4 name block (`names_size` bytes of header + text per name)
/// and checks it against the hash block (`hashes_size` bytes: algorithm id
/// + one hash per name). `r` must be positioned at the start of the package.
pub fn read_split_names(
    r: &mut Reader,
    names_offset: usize,
    names_size: usize,
    hashes_offset: usize,
    hashes_size: usize,
) -> Result<Vec<ZenName>> {
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
        let (wide, len) = ZenName::read_header(&mut block).with_context(|| format!("name {i}"))?;
        names.push(ZenName::read_text(&mut block, wide, len).with_context(|| format!("name {i}"))?);
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

/// Writes the UE4 name block; returns its bytes.
pub fn split_name_block(names: &[ZenName]) -> Vec<u8> {
    let mut w = Writer::new();
    for name in names {
        name.write_header(&mut w);
        name.write_text(&mut w);
    }
    w.into_inner()
}

/// Writes the UE4 hash block; returns its bytes.
pub fn split_hash_block(names: &[ZenName]) -> Vec<u8> {
    let mut w = Writer::new();
    w.u64(NAME_HASH_ALGORITHM_ID);
    for name in names {
        w.u64(name.hash());
    }
    w.into_inner()
}

/// Splits `Name_12` into (`Name`, 13) as the engine stores FName numbers;
/// names without a numeric suffix (or with a leading zero in it) get 0.
pub fn split_name_number(name: &str) -> (&str, u32) {
    if let Some(pos) = name.rfind('_') {
        let digits = &name[pos + 1..];
        let valid = !digits.is_empty()
            && digits.bytes().all(|b| b.is_ascii_digit())
            && (digits == "0" || !digits.starts_with('0'))
            && digits.len() <= 10;
        if valid {
            if let Ok(n) = digits.parse::<u32>() {
                if n < u32::MAX && pos > 0 {
                    return (&name[..pos], n + 1);
                }
            }
        }
    }
    (name, 0)
}

/// Imported package names (5.3+): a name batch, then one i32 number per name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct ImportedPackageNames {
    pub names: Vec<ZenName>,
    pub numbers: Vec<i32>,
}

impl ImportedPackageNames {
    pub fn read(r: &mut Reader) -> Result<Self> {
        let names = read_name_batch(r)?;
        r.check_count(names.len() as i64, 4)?;
        let mut numbers = Vec::with_capacity(names.len());
        for _ in 0..names.len() {
            numbers.push(r.i32()?);
        }
        Ok(ImportedPackageNames { names, numbers })
    }
    pub fn write(&self, w: &mut Writer) {
        write_name_batch(w, &self.names);
        for n in &self.numbers {
            w.i32(*n);
        }
    }
    /// Full names with their `_N` suffixes.
    pub fn full_names(&self) -> Vec<String> {
        self.names
            .iter()
            .zip(&self.numbers)
            .map(|(n, &num)| {
                if num > 0 {
                    format!("{}_{}", n.text, num - 1)
                } else {
                    n.text.clone()
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_numbers() {
        assert_eq!(split_name_number("Foo_0"), ("Foo", 1));
        assert_eq!(split_name_number("Foo_12"), ("Foo", 13));
        assert_eq!(split_name_number("Foo_012"), ("Foo_012", 0));
        assert_eq!(split_name_number("Foo"), ("Foo", 0));
        assert_eq!(split_name_number("Foo_"), ("Foo_", 0));
    }

    #[test]
    fn batch_round_trip() {
        let names = vec![
            ZenName::new("None"),
            ZenName::new("Größe"),
            ZenName::new("abc"),
        ];
        let mut w = Writer::new();
        write_name_batch(&mut w, &names);
        let bytes = w.into_inner();
        let mut r = Reader::new(&bytes);
        assert_eq!(read_name_batch(&mut r).unwrap(), names);
        assert!(r.at_end());
    }
}
