//! Block compression used by IoStore containers and pak files: none, zlib,
//! zstd and lz4. Oodle is named (so files that use it are reported
//! clearly) but not supported: its codec is proprietary.
//!
//! The names are the engine's `FName`s for the methods, as they appear in
//! a `.utoc`'s compression method table and a pak footer.

use std::io::Write;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// A block compression method.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default,
)]
#[serde(rename_all = "lowercase")]
pub enum Compression {
    #[default]
    None,
    Zlib,
    Zstd,
    Lz4,
}

impl Compression {
    /// The method's name in container and pak method tables.
    pub fn engine_name(self) -> &'static str {
        match self {
            Compression::None => "None",
            Compression::Zlib => "Zlib",
            Compression::Zstd => "Zstd",
            Compression::Lz4 => "LZ4",
        }
    }

    /// Finds a method by its table name (case-insensitive). `Oodle` and
    /// unknown names are errors that name the method.
    pub fn from_engine_name(name: &str) -> Result<Self> {
        match name.to_ascii_lowercase().as_str() {
            "" | "none" => Ok(Compression::None),
            "zlib" => Ok(Compression::Zlib),
            "zstd" => Ok(Compression::Zstd),
            "lz4" => Ok(Compression::Lz4),
            "oodle" => Err(Error::unsupported(
                "compression method Oodle is not supported (its codec is proprietary)",
            )
            .with_hint("re-create the file with zlib, zstd, lz4 or no compression")),
            _ => Err(Error::unsupported(format!(
                "unknown compression method `{name}`"
            ))),
        }
    }

    /// Compresses one block. Output is deterministic for given input.
    pub fn compress(self, data: &[u8]) -> Result<Vec<u8>> {
        match self {
            Compression::None => Ok(data.to_vec()),
            Compression::Zlib => {
                let mut enc =
                    flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
                enc.write_all(data)
                    .map_err(|e| Error::internal(format!("zlib: {e}")))?;
                enc.finish()
                    .map_err(|e| Error::internal(format!("zlib: {e}")))
            }
            Compression::Zstd => {
                zstd::bulk::compress(data, 3).map_err(|e| Error::internal(format!("zstd: {e}")))
            }
            Compression::Lz4 => Ok(lz4_flex::block::compress(data)),
        }
    }

    /// Decompresses one block whose uncompressed size is known; the result
    /// must have exactly that size.
    pub fn decompress(self, data: &[u8], uncompressed_size: usize) -> Result<Vec<u8>> {
        let out = match self {
            Compression::None => data.to_vec(),
            Compression::Zlib => decompress_zlib_strict(data, uncompressed_size)?,
            Compression::Zstd => zstd::bulk::decompress(data, uncompressed_size)
                .map_err(|e| Error::decompress("zstd", e))?,
            Compression::Lz4 => lz4_flex::block::decompress(data, uncompressed_size)
                .map_err(|e| Error::decompress("lz4", e))?,
        };
        if out.len() != uncompressed_size {
            return Err(Error::decompress(
                self.engine_name(),
                format!(
                    "decompressed to {} bytes, expected {uncompressed_size}",
                    out.len()
                ),
            ));
        }
        Ok(out)
    }
}

/// Inflates a whole zlib stream and insists that it ends exactly at the
/// end of the block and that its Adler-32 trailer matches, as the engine's
/// `uncompress` does: a damaged trailer makes the game reject the block
/// even when the inflated bytes are right.
fn decompress_zlib_strict(data: &[u8], uncompressed_size: usize) -> Result<Vec<u8>> {
    let mut inflater = flate2::Decompress::new(true);
    let mut out = Vec::with_capacity(uncompressed_size + 1);
    let status = inflater
        .decompress_vec(data, &mut out, flate2::FlushDecompress::Finish)
        .map_err(|e| Error::decompress("zlib", e))?;
    if status != flate2::Status::StreamEnd || inflater.total_in() as usize != data.len() {
        return Err(Error::decompress(
            "zlib",
            format!(
                "the stream does not end at the end of the block ({} of {} bytes used)",
                inflater.total_in(),
                data.len()
            ),
        ));
    }
    if data.len() < 4 || data[data.len() - 4..] != adler32(&out).to_be_bytes() {
        return Err(Error::decompress(
            "zlib",
            "its Adler-32 checksum does not match",
        ));
    }
    Ok(out)
}

fn adler32(data: &[u8]) -> u32 {
    let (mut a, mut b) = (1u32, 0u32);
    for chunk in data.chunks(5552) {
        for &x in chunk {
            a += x as u32;
            b += a;
        }
        a %= 65521;
        b %= 65521;
    }
    (b << 16) | a
}

impl std::str::FromStr for Compression {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        Compression::from_engine_name(s).map_err(|e| Error::usage(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_method_round_trips() {
        let data: Vec<u8> = (0..100_000u32)
            .map(|i| (i % 251) as u8 ^ (i / 1000) as u8)
            .collect();
        for m in [
            Compression::None,
            Compression::Zlib,
            Compression::Zstd,
            Compression::Lz4,
        ] {
            let packed = m.compress(&data).unwrap();
            assert_eq!(m.decompress(&packed, data.len()).unwrap(), data, "{m:?}");
            assert_eq!(Compression::from_engine_name(m.engine_name()).unwrap(), m);
        }
    }

    #[test]
    fn oodle_is_named_in_the_error() {
        let e = Compression::from_engine_name("Oodle").unwrap_err();
        assert!(e.to_string().contains("Oodle"));
    }

    #[test]
    fn corrupt_block_is_an_error() {
        for m in [Compression::Zlib, Compression::Zstd, Compression::Lz4] {
            assert!(m.decompress(&[1, 2, 3, 4, 5], 100).is_err());
        }
    }
}
