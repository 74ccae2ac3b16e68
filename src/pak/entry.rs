//! `FPakEntry`: where an entry's data lies and how it is stored. Written
//! twice: in full before the data (offset 0), and in the primary index in
//! the compact "encoded" form (version 10+).

use crate::binary::{Reader, Writer};
use crate::error::Result;

/// One compression block, as offsets relative to the entry's start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PakBlock {
    pub start: u64,
    pub end: u64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PakEntry {
    /// Offset of the inline header in the pak.
    pub offset: u64,
    /// Stored size (compressed, before AES padding).
    pub size: u64,
    pub uncompressed_size: u64,
    /// 0 = none, else 1 + index into the footer's method names.
    pub method_index: u32,
    /// SHA-1 of the stored data before encryption.
    pub hash: [u8; 20],
    pub blocks: Vec<PakBlock>,
    pub encrypted: bool,
    pub block_size: u32,
}

impl PakEntry {
    /// Size of the full (inline) record.
    pub fn inline_size(block_count: usize, compressed: bool) -> u64 {
        let blocks = if compressed {
            4 + 16 * block_count as u64
        } else {
            0
        };
        8 + 8 + 8 + 4 + 20 + blocks + 1 + 4
    }

    /// The full record; `inline` writes offset 0 as the engine does before data.
    pub fn write_full(&self, w: &mut Writer, inline: bool) {
        w.u64(if inline { 0 } else { self.offset });
        w.u64(self.size);
        w.u64(self.uncompressed_size);
        w.u32(self.method_index);
        w.bytes(&self.hash);
        if self.method_index != 0 {
            w.u32(self.blocks.len() as u32);
            for b in &self.blocks {
                w.u64(b.start);
                w.u64(b.end);
            }
        }
        w.u8(self.encrypted as u8);
        w.u32(self.block_size);
    }

    pub fn read_full(r: &mut Reader) -> Result<Self> {
        let offset = r.u64()?;
        let size = r.u64()?;
        let uncompressed_size = r.u64()?;
        let method_index = r.u32()?;
        let hash = r.array::<20>()?;
        let mut blocks = Vec::new();
        if method_index != 0 {
            let n = r.count_u32(16)?;
            for _ in 0..n {
                blocks.push(PakBlock {
                    start: r.u64()?,
                    end: r.u64()?,
                });
            }
        }
        let encrypted = r.u8()? != 0;
        let block_size = r.u32()?;
        Ok(PakEntry {
            offset,
            size,
            uncompressed_size,
            method_index,
            hash,
            blocks,
            encrypted,
            block_size,
        })
    }

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
            | ((self.method_index & 0x3f) << 23)
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
        if self.method_index != 0 {
            var(w, self.size, size_32);
            if self.blocks.len() != 1 || self.encrypted {
                for b in &self.blocks {
                    w.u32((b.end - b.start) as u32);
                }
            }
        }
    }

    /// Reads an encoded entry. The hash is not part of the encoded form; it
    /// is taken from the inline header when the data is read.
    pub fn read_encoded(r: &mut Reader) -> Result<Self> {
        let flags = r.u32()?;
        let mut block_size = flags & 0x3f;
        block_size = if block_size == 0x3f {
            r.u32()?
        } else {
            block_size << 11
        };
        let block_count = ((flags >> 6) & 0xffff) as usize;
        let encrypted = flags & (1 << 22) != 0;
        let method_index = (flags >> 23) & 0x3f;
        let var = |r: &mut Reader, small: bool| -> Result<u64> {
            if small {
                Ok(r.u32()? as u64)
            } else {
                r.u64()
            }
        };
        let offset = var(r, flags & (1 << 31) != 0)?;
        let uncompressed_size = var(r, flags & (1 << 30) != 0)?;
        let size = if method_index != 0 {
            var(r, flags & (1 << 29) != 0)?
        } else {
            uncompressed_size
        };
        let mut blocks = Vec::with_capacity(block_count.min(r.remaining()));
        let data_start = PakEntry::inline_size(block_count, method_index != 0);
        if method_index != 0 {
            if block_count == 1 && !encrypted {
                blocks.push(PakBlock {
                    start: data_start,
                    end: data_start.saturating_add(size),
                });
            } else {
                let mut at = data_start;
                for _ in 0..block_count {
                    let len = r.u32()? as u64;
                    blocks.push(PakBlock {
                        start: at,
                        end: at + len,
                    });
                    at += if encrypted {
                        len.next_multiple_of(16)
                    } else {
                        len
                    };
                }
            }
        }
        Ok(PakEntry {
            offset,
            size,
            uncompressed_size,
            method_index,
            hash: [0; 20],
            blocks,
            encrypted,
            block_size,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(method_index: u32, block_lens: &[u64], encrypted: bool) -> PakEntry {
        let mut at = PakEntry::inline_size(block_lens.len(), method_index != 0);
        let mut blocks = Vec::new();
        for &len in block_lens {
            blocks.push(PakBlock {
                start: at,
                end: at + len,
            });
            at += if encrypted {
                len.next_multiple_of(16)
            } else {
                len
            };
        }
        let stored: u64 = block_lens.iter().sum();
        PakEntry {
            offset: 1234,
            size: if method_index != 0 { stored } else { 999 },
            uncompressed_size: if method_index != 0 { 200_000 } else { 999 },
            method_index,
            hash: [0; 20],
            blocks,
            encrypted,
            block_size: if method_index != 0 { 65536 } else { 0 },
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
                PakEntry::read_encoded(&mut Reader::new(w.as_slice())).unwrap(),
                e
            );
            let mut w = Writer::new();
            e.write_full(&mut w, false);
            assert_eq!(
                w.pos() as u64,
                PakEntry::inline_size(e.blocks.len(), e.method_index != 0)
            );
            assert_eq!(
                PakEntry::read_full(&mut Reader::new(w.as_slice())).unwrap(),
                e
            );
        }
    }
}
