//! `FPakEntry`: where an entry's data lies and how it is stored. Written
//! in full before the data (offset 0) and, before version 10, in the index;
//! from version 10 the index holds the compact "encoded" form
//! (`FPakFile::EncodePakEntry`).

use crate::binary::{Reader, Writer};
use crate::error::{Error, Result};
use crate::version::PakVersion;

/// One compression block, as offsets relative to the entry's start (the
/// inline record's first byte).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PakBlock {
    pub start: u64,
    pub end: u64,
}

impl PakBlock {
    /// Blocks of the given stored lengths laid out one after another from
    /// `start`; encrypted blocks each take a whole number of AES blocks.
    pub(crate) fn consecutive(
        start: u64,
        lens: impl IntoIterator<Item = u64>,
        encrypted: bool,
    ) -> Vec<Self> {
        let mut at = start;
        lens.into_iter()
            .map(|len| {
                let block = PakBlock {
                    start: at,
                    end: at.saturating_add(len),
                };
                let stored = if encrypted {
                    len.next_multiple_of(16)
                } else {
                    len
                };
                at = at.saturating_add(stored);
                block
            })
            .collect()
    }

    pub(crate) fn len(&self) -> u64 {
        self.end.saturating_sub(self.start)
    }
}

/// `FPakEntry::Flags` (the byte after the blocks): bit 0 encrypted, bit 1
/// deleted (from version 6).
const FLAG_ENCRYPTED: u8 = 1;
const FLAG_DELETED: u8 = 2;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PakEntry {
    /// Offset of the inline record in the pak.
    pub offset: u64,
    /// Stored size (compressed, before AES padding).
    pub size: u64,
    pub uncompressed_size: u64,
    /// The stored method: before version 8 a set of `ECompressionFlags`
    /// (1 zlib, 2 gzip, 4 the game's custom codec), from 8 `1 + index` into
    /// the footer's method names; 0 = stored uncompressed either way.
    pub method: u32,
    /// Version 1 only.
    pub timestamp: u64,
    /// SHA-1 of the stored data before encryption.
    pub hash: [u8; 20],
    pub blocks: Vec<PakBlock>,
    pub encrypted: bool,
    /// A delete record of a patch pak (version 6+): the path has no data.
    pub deleted: bool,
    pub block_size: u32,
}

impl PakEntry {
    pub(crate) fn is_compressed(&self) -> bool {
        self.method != 0
    }

    /// Size of the full record for `block_count` blocks.
    pub fn record_size(version: PakVersion, block_count: usize, compressed: bool) -> u64 {
        let mut size = 8 + 8 + 8 + 20;
        size += if version.has_byte_method_index() {
            1
        } else {
            4
        };
        if version.has_entry_timestamp() {
            size += 8;
        }
        if version.has_block_records() {
            if compressed {
                size += 4 + 16 * block_count as u64;
            }
            size += 1 + 4;
        }
        size
    }

    /// Size of this entry's full record.
    pub(crate) fn own_record_size(&self, version: PakVersion) -> u64 {
        PakEntry::record_size(version, self.blocks.len(), self.is_compressed())
    }

    /// The full record; `inline` writes offset 0 as the engine does before
    /// data. Blocks are written relative (the layout of version 5+).
    pub fn write_full(&self, w: &mut Writer, version: PakVersion, inline: bool) {
        w.u64(if inline { 0 } else { self.offset });
        w.u64(self.size);
        w.u64(self.uncompressed_size);
        if version.has_byte_method_index() {
            w.u8(self.method as u8);
        } else {
            w.u32(self.method);
        }
        if version.has_entry_timestamp() {
            w.u64(self.timestamp);
        }
        w.bytes(&self.hash);
        if version.has_block_records() {
            if self.is_compressed() {
                w.u32(self.blocks.len() as u32);
                for b in &self.blocks {
                    w.u64(b.start);
                    w.u64(b.end);
                }
            }
            let mut flags = 0;
            if self.encrypted {
                flags |= FLAG_ENCRYPTED;
            }
            if self.deleted {
                flags |= FLAG_DELETED;
            }
            w.u8(flags);
            w.u32(self.block_size);
        }
    }

    /// Reads a full record. Block offsets are returned as stored: absolute
    /// before version 5 (see [`PakEntry::make_blocks_relative`]).
    pub(crate) fn read_full(r: &mut Reader, version: PakVersion) -> Result<Self> {
        let offset = r.u64()?;
        let size = r.u64()?;
        let uncompressed_size = r.u64()?;
        let method = if version.has_byte_method_index() {
            r.u8()? as u32
        } else {
            r.u32()?
        };
        let timestamp = if version.has_entry_timestamp() {
            r.u64()?
        } else {
            0
        };
        let hash = r.array::<20>()?;
        let mut blocks = Vec::new();
        let mut flags = 0;
        let mut block_size = 0;
        if version.has_block_records() {
            if method != 0 {
                let n = r.count_u32(16)?;
                blocks.reserve(n);
                for _ in 0..n {
                    blocks.push(PakBlock {
                        start: r.u64()?,
                        end: r.u64()?,
                    });
                }
            }
            flags = r.u8()?;
            block_size = r.u32()?;
        }
        let deleted = version.has_delete_records() && flags & FLAG_DELETED != 0;
        Ok(PakEntry {
            offset,
            size,
            uncompressed_size,
            method,
            timestamp,
            hash,
            blocks,
            encrypted: flags & FLAG_ENCRYPTED != 0,
            deleted,
            block_size,
        })
    }

    /// Turns the absolute block offsets of versions before 5 into offsets
    /// relative to the entry.
    pub(crate) fn make_blocks_relative(&mut self, version: PakVersion) -> Result<()> {
        if version.has_relative_block_offsets() {
            return Ok(());
        }
        for b in &mut self.blocks {
            b.start = b.start.checked_sub(self.offset).ok_or_else(|| {
                Error::invalid(format!(
                    "a compression block starts at {}, before its entry at {}",
                    b.start, self.offset
                ))
            })?;
            b.end = b.end.checked_sub(self.offset).ok_or_else(|| {
                Error::invalid(format!(
                    "a compression block ends at {}, before its entry at {}",
                    b.end, self.offset
                ))
            })?;
        }
        Ok(())
    }

    /// The encoded form (version 10+).
    pub fn write_encoded(&self, w: &mut Writer) {
        let mut block_size_bits = (self.block_size >> 11) & 0x3f;
        if block_size_bits << 11 != self.block_size {
            block_size_bits = 0x3f;
        }
        let size_32 = self.size <= u32::MAX as u64;
        let uncompressed_32 = self.uncompressed_size <= u32::MAX as u64;
        let offset_32 = self.offset <= u32::MAX as u64;
        let flags = block_size_bits
            | ((self.blocks.len() as u32 & 0xffff) << 6)
            | ((self.encrypted as u32) << 22)
            | ((self.method & 0x3f) << 23)
            | ((size_32 as u32) << 29)
            | ((uncompressed_32 as u32) << 30)
            | ((offset_32 as u32) << 31);
        w.u32(flags);
        if block_size_bits == 0x3f {
            w.u32(self.block_size);
        }
        let var =
            |w: &mut Writer, v: u64, small: bool| if small { w.u32(v as u32) } else { w.u64(v) };
        var(w, self.offset, offset_32);
        var(w, self.uncompressed_size, uncompressed_32);
        if self.method != 0 {
            var(w, self.size, size_32);
            if self.blocks.len() != 1 || self.encrypted {
                for b in &self.blocks {
                    w.u32(b.len() as u32);
                }
            }
        }
    }

    /// Whether [`PakEntry::write_encoded`] can represent the entry (the
    /// engine keeps the others as full records after the encoded ones).
    pub(crate) fn is_encodable(&self) -> bool {
        self.blocks.len() <= 0xffff
            && self.method <= 0x3f
            && self.blocks.iter().all(|b| b.len() <= u32::MAX as u64)
    }

    /// Reads an encoded entry (version 10+, so blocks are relative). The
    /// hash is not part of the encoded form; it is taken from the inline
    /// record when the data is read.
    pub fn read_encoded(r: &mut Reader, version: PakVersion) -> Result<Self> {
        let flags = r.u32()?;
        let mut block_size = flags & 0x3f;
        block_size = if block_size == 0x3f {
            r.u32()?
        } else {
            block_size << 11
        };
        let block_count = ((flags >> 6) & 0xffff) as usize;
        let encrypted = flags & (1 << 22) != 0;
        let method = (flags >> 23) & 0x3f;
        let var = |r: &mut Reader, small: bool| -> Result<u64> {
            if small {
                Ok(r.u32()? as u64)
            } else {
                r.u64()
            }
        };
        let offset = var(r, flags & (1 << 31) != 0)?;
        let uncompressed_size = var(r, flags & (1 << 30) != 0)?;
        let size = if method != 0 {
            var(r, flags & (1 << 29) != 0)?
        } else {
            uncompressed_size
        };
        let mut blocks = Vec::new();
        let data_start = PakEntry::record_size(version, block_count, method != 0);
        if method != 0 {
            if block_count == 1 && !encrypted {
                blocks.push(PakBlock {
                    start: data_start,
                    end: data_start.saturating_add(size),
                });
            } else {
                r.check_count(block_count as i64, 4)?;
                let mut lens = Vec::with_capacity(block_count);
                for _ in 0..block_count {
                    lens.push(r.u32()? as u64);
                }
                blocks = PakBlock::consecutive(data_start, lens, encrypted);
            }
        }
        Ok(PakEntry {
            offset,
            size,
            uncompressed_size,
            method,
            timestamp: 0,
            hash: [0; 20],
            blocks,
            encrypted,
            deleted: false,
            block_size,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(method: u32, block_lens: &[u64], encrypted: bool) -> PakEntry {
        let start = PakEntry::record_size(PakVersion::V11, block_lens.len(), method != 0);
        let blocks = PakBlock::consecutive(start, block_lens.iter().copied(), encrypted);
        let stored: u64 = block_lens.iter().sum();
        PakEntry {
            offset: 1234,
            size: if method != 0 { stored } else { 999 },
            uncompressed_size: if method != 0 { 200_000 } else { 999 },
            method,
            timestamp: 0,
            hash: [0; 20],
            blocks,
            encrypted,
            deleted: false,
            block_size: if method != 0 { 65536 } else { 0 },
        }
    }

    #[test]
    fn encoded_round_trip() {
        for e in [
            entry(0, &[], false),
            entry(1, &[500], false),
            entry(1, &[500, 20, 33], true),
            entry(2, &[40, 41], false),
            entry(0, &[], true),
        ] {
            let mut w = Writer::new();
            e.write_encoded(&mut w);
            assert_eq!(
                PakEntry::read_encoded(&mut Reader::new(w.as_slice()), PakVersion::V11).unwrap(),
                e
            );
            let mut w = Writer::new();
            e.write_full(&mut w, PakVersion::V11, false);
            assert_eq!(w.pos() as u64, e.own_record_size(PakVersion::V11));
            assert_eq!(
                PakEntry::read_full(&mut Reader::new(w.as_slice()), PakVersion::V11).unwrap(),
                e
            );
        }
    }

    #[test]
    fn record_sizes_per_version() {
        // Checked against the inline records of the corpus's UnrealPak paks.
        assert_eq!(PakEntry::record_size(PakVersion::V11, 0, false), 53);
        assert_eq!(PakEntry::record_size(PakVersion::V8A, 0, false), 50);
        assert_eq!(PakEntry::record_size(PakVersion::V5, 0, false), 53);
        assert_eq!(PakEntry::record_size(PakVersion::V11, 2, true), 53 + 4 + 32);
    }
}
