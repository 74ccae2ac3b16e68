//! The compact index: the variable-length signed integer (1 to 5 bytes) that
//! classic packages use for name indices, object references and sizes.
//!
//! Layout (reference 002 and 003): the first byte holds the sign in bit 7, a
//! "more bytes follow" flag in bit 6 and the lowest 6 bits of the magnitude;
//! bytes two to four hold 7 more bits each plus a "more" flag in bit 7; the
//! fifth byte, when present, holds 8 bits. Magnitudes therefore reach 35 bits,
//! but the engine's value is a 32-bit signed integer, so anything outside
//! `i32` is rejected when read.

use crate::binary::{Reader, Writer};
use crate::error::Result;

/// A compact index value. Reading accepts any encoding the engine would
/// accept; writing always produces the shortest one (which is what the
/// engine writes, so tables read from real files write back byte for byte).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct CompactIndex(pub i32);

/// The longest encoding, in bytes.
pub(crate) const MAX_COMPACT_INDEX_LEN: usize = 5;

impl CompactIndex {
    /// Reads one compact index.
    pub(crate) fn read(reader: &mut Reader) -> Result<CompactIndex> {
        let start = reader.pos();
        let first = reader.u8()?;
        let negative = first & 0x80 != 0;
        let mut magnitude = u64::from(first & 0x3f);
        let mut more = first & 0x40 != 0;
        let mut shift = 6;
        let mut length = 1;
        while more {
            let byte = reader.u8().map_err(|_| {
                reader.error_at(
                    start,
                    format!("compact index is cut off after {length} byte(s) (file truncated?)"),
                )
            })?;
            length += 1;
            if length == MAX_COMPACT_INDEX_LEN {
                // The last byte carries a full 8 bits and never continues.
                magnitude |= u64::from(byte) << shift;
                more = false;
            } else {
                magnitude |= u64::from(byte & 0x7f) << shift;
                more = byte & 0x80 != 0;
                shift += 7;
            }
        }
        let value = if negative {
            if magnitude > 1 << 31 {
                None
            } else {
                Some((-(magnitude as i64)) as i32)
            }
        } else {
            i32::try_from(magnitude).ok()
        };
        match value {
            Some(v) => Ok(CompactIndex(v)),
            None => Err(reader.error_at(
                start,
                format!(
                    "compact index {}{magnitude} does not fit in a 32-bit integer",
                    if negative { "-" } else { "" }
                ),
            )),
        }
    }

    /// Reads a compact index and returns its value.
    pub(crate) fn read_i32(reader: &mut Reader) -> Result<i32> {
        Ok(Self::read(reader)?.0)
    }

    /// Appends the shortest encoding.
    pub(crate) fn write(self, writer: &mut Writer) {
        let (bytes, length) = self.encode();
        writer.bytes(&bytes[..length]);
    }

    /// The shortest encoding: the bytes (only the first `length` are used) and `length`.
    pub fn encode(self) -> ([u8; MAX_COMPACT_INDEX_LEN], usize) {
        let mut out = [0u8; MAX_COMPACT_INDEX_LEN];
        let mut rest = self.0.unsigned_abs();
        out[0] = if self.0 < 0 { 0x80 } else { 0 } | (rest & 0x3f) as u8;
        rest >>= 6;
        if rest == 0 {
            return (out, 1);
        }
        out[0] |= 0x40;
        for (i, byte) in out
            .iter_mut()
            .enumerate()
            .take(MAX_COMPACT_INDEX_LEN - 1)
            .skip(1)
        {
            *byte = (rest & 0x7f) as u8;
            rest >>= 7;
            if rest == 0 {
                return (out, i + 1);
            }
            *byte |= 0x80;
        }
        // At most 32 - 27 = 5 bits remain for the fifth byte.
        out[MAX_COMPACT_INDEX_LEN - 1] = rest as u8;
        (out, MAX_COMPACT_INDEX_LEN)
    }

    /// The encoded bytes as a vector (shortest form).
    pub fn to_bytes(self) -> Vec<u8> {
        let (bytes, length) = self.encode();
        bytes[..length].to_vec()
    }

    /// Decodes a compact index from the start of `bytes`; returns the value and the bytes used.
    pub fn decode(bytes: &[u8]) -> Result<(CompactIndex, usize)> {
        let mut reader = Reader::new(bytes);
        let value = Self::read(&mut reader)?;
        Ok((value, reader.pos()))
    }
}

impl From<i32> for CompactIndex {
    fn from(v: i32) -> Self {
        CompactIndex(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_values() {
        assert_eq!(CompactIndex(0).to_bytes(), [0x00]);
        assert_eq!(CompactIndex(63).to_bytes(), [0x3f]);
        assert_eq!(CompactIndex(64).to_bytes(), [0x40, 0x01]);
        assert_eq!(CompactIndex(-1).to_bytes(), [0x81]);
        // A "negative zero" is a valid encoding of 0.
        assert_eq!(CompactIndex::decode(&[0x80]).unwrap(), (CompactIndex(0), 1));
    }
}
