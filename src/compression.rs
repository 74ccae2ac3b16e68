//! Block compression used by IoStore containers and pak files: none, zlib,
//! gzip, zstd and lz4 both ways, and Oodle (Kraken, Mermaid, Selkie,
//! Leviathan) for reading only, through the pure-Rust `oozextract` decoder:
//! writing Oodle needs Epic's proprietary Oodle SDK, so asking for it is an
//! error that says so.
//!
//! The names are the engine's `FName`s for the methods, as they appear in
//! a `.utoc`'s compression method table and a pak footer (`NAME_Zlib`,
//! `NAME_Gzip`, `NAME_LZ4`, `NAME_Oodle`; `Zstd` is not a stock engine codec).
//! Every decompression is bounded by the block's declared uncompressed size,
//! which callers check against their format's block size first.

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
    Gzip,
    Zstd,
    Lz4,
    /// Readable only: compressing needs the proprietary Oodle SDK.
    Oodle,
}

impl Compression {
    /// The method's name in container and pak method tables.
    pub fn engine_name(self) -> &'static str {
        match self {
            Compression::None => "None",
            Compression::Zlib => "Zlib",
            Compression::Gzip => "Gzip",
            Compression::Zstd => "Zstd",
            Compression::Lz4 => "LZ4",
            Compression::Oodle => "Oodle",
        }
    }

    /// The methods zenpak can write: what `[output] compression` accepts
    /// (mod.toml.example and README list these, checked by a test).
    pub const WRITABLE: [Compression; 5] = [
        Compression::None,
        Compression::Zlib,
        Compression::Gzip,
        Compression::Zstd,
        Compression::Lz4,
    ];

    /// The manifest spellings of [`Compression::WRITABLE`], quoted, e.g.
    /// `"none", "zlib", "gzip", "zstd", "lz4"`.
    pub(crate) fn writable_names() -> String {
        Self::WRITABLE
            .iter()
            .map(|m| format!("\"{}\"", m.engine_name().to_ascii_lowercase()))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Whether zenpak can write this method (Oodle it can only read).
    pub(crate) fn is_writable(self) -> bool {
        self != Compression::Oodle
    }

    /// An error unless zenpak can write this method: for callers that take
    /// a method from the user and want to refuse it before writing anything.
    pub(crate) fn check_writable(self) -> Result<()> {
        if self.is_writable() {
            Ok(())
        } else {
            Err(oodle_write_error())
        }
    }

    /// Finds a method by its table name (case-insensitive). Unknown names
    /// are errors that name the method.
    pub(crate) fn from_engine_name(name: &str) -> Result<Self> {
        match name.to_ascii_lowercase().as_str() {
            "" | "none" => Ok(Compression::None),
            "zlib" => Ok(Compression::Zlib),
            "gzip" => Ok(Compression::Gzip),
            "zstd" => Ok(Compression::Zstd),
            "lz4" => Ok(Compression::Lz4),
            "oodle" => Ok(Compression::Oodle),
            _ => Err(
                Error::unsupported(format!("unknown compression method `{name}`"))
                    .with_hint("zenpak reads None, Zlib, Gzip, LZ4, Zstd and Oodle blocks"),
            ),
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
            Compression::Gzip => {
                // Header fields fixed (no name, no time) so output is reproducible.
                let mut enc = flate2::GzBuilder::new()
                    .mtime(0)
                    .write(Vec::new(), flate2::Compression::default());
                enc.write_all(data)
                    .map_err(|e| Error::internal(format!("gzip: {e}")))?;
                enc.finish()
                    .map_err(|e| Error::internal(format!("gzip: {e}")))
            }
            Compression::Zstd => {
                zstd::bulk::compress(data, 3).map_err(|e| Error::internal(format!("zstd: {e}")))
            }
            Compression::Lz4 => Ok(lz4_flex::block::compress(data)),
            Compression::Oodle => Err(oodle_write_error()),
        }
    }

    /// Decompresses one block whose uncompressed size is known; the result
    /// must have exactly that size.
    pub fn decompress(self, data: &[u8], uncompressed_size: usize) -> Result<Vec<u8>> {
        let out = match self {
            Compression::None => data.to_vec(),
            Compression::Zlib => decompress_zlib_strict(data, uncompressed_size)?,
            Compression::Gzip => decompress_gzip(data, uncompressed_size)?,
            Compression::Oodle => decompress_oodle(data, uncompressed_size)?,
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

/// The error for writing Oodle, which only Epic's SDK can encode.
fn oodle_write_error() -> Error {
    Error::unsupported(
        "zenpak cannot write Oodle-compressed data: the Oodle encoder is part of Epic's \
         proprietary Oodle SDK (zenpak only decodes Oodle, with the open-source oozextract)",
    )
    .with_hint(format!("zenpak writes {}", Compression::writable_names()))
}

/// Inflates one gzip member, which must fill the block exactly and produce
/// exactly the expected size (the CRC-32 and size trailer are checked by
/// the decoder).
fn decompress_gzip(data: &[u8], uncompressed_size: usize) -> Result<Vec<u8>> {
    use std::io::Read;
    let mut decoder = flate2::bufread::GzDecoder::new(data);
    let mut out = Vec::with_capacity(uncompressed_size);
    // One byte more than expected is enough to tell "too long".
    (&mut decoder)
        .take(uncompressed_size as u64 + 1)
        .read_to_end(&mut out)
        .map_err(|e| Error::decompress("gzip", e))?;
    if !decoder.into_inner().is_empty() {
        return Err(Error::decompress(
            "gzip",
            "the stream does not end at the end of the block",
        ));
    }
    Ok(out)
}

/// Decodes a bare Oodle stream (any of its codecs: the stream says which).
/// The decoder is third-party code fed with file bytes; a panic inside it
/// is turned into an error rather than taking the process down, and prints
/// nothing (see [`quietly`]).
fn decompress_oodle(data: &[u8], uncompressed_size: usize) -> Result<Vec<u8>> {
    let mut out = vec![0u8; uncompressed_size];
    let decoded = quietly(|| oozextract::Extractor::new().read_from_slice(data, &mut out));
    match decoded {
        Some(Ok(n)) if n == uncompressed_size => Ok(out),
        Some(Ok(n)) => Err(Error::decompress(
            "Oodle",
            format!("decoded {n} bytes, expected {uncompressed_size}"),
        )),
        Some(Err(_)) => Err(Error::decompress("Oodle", "the stream is corrupt")),
        None => Err(Error::decompress(
            "Oodle",
            "the stream is corrupt (the decoder gave up)",
        )),
    }
}

thread_local! {
    /// Set while this thread runs third-party code whose panics are caught.
    static QUIET_PANICS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f`, turning a panic into `None` without printing it. The panic
/// hook is process-wide, so it is replaced once by one that stays silent
/// only on a thread inside `quietly` (decoders run on several threads at
/// once) and otherwise does what the previous hook did.
fn quietly<T>(f: impl FnOnce() -> T) -> Option<T> {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !QUIET_PANICS.with(|quiet| quiet.get()) {
                previous(info);
            }
        }));
    });
    let was = QUIET_PANICS.with(|quiet| quiet.replace(true));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    QUIET_PANICS.with(|quiet| quiet.set(was));
    result.ok()
}

fn adler32(data: &[u8]) -> u32 {
    let mut adler = adler2::Adler32::new();
    adler.write_slice(data);
    adler.checksum()
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
            Compression::Gzip,
            Compression::Zstd,
            Compression::Lz4,
        ] {
            let packed = m.compress(&data).unwrap();
            assert_eq!(m.decompress(&packed, data.len()).unwrap(), data, "{m:?}");
            assert_eq!(Compression::from_engine_name(m.engine_name()).unwrap(), m);
        }
    }

    #[test]
    fn oodle_reads_but_does_not_write() {
        let m = Compression::from_engine_name("Oodle").unwrap();
        assert_eq!(m, Compression::Oodle);
        let e = m.compress(b"data").unwrap_err();
        assert_eq!(e.code(), "unsupported");
        assert!(e.to_string().contains("proprietary"), "{e}");
        assert!(m.check_writable().is_err());
        assert!(Compression::Lz4.check_writable().is_ok());
    }

    #[test]
    fn corrupt_block_is_an_error() {
        for m in [
            Compression::Zlib,
            Compression::Gzip,
            Compression::Zstd,
            Compression::Lz4,
            Compression::Oodle,
        ] {
            let e = m.decompress(&[1, 2, 3, 4, 5], 100).unwrap_err();
            assert_eq!(e.code(), "decompress", "{m:?}");
        }
    }

    #[test]
    fn gzip_output_is_reproducible_and_strict() {
        let data = vec![7u8; 5000];
        let a = Compression::Gzip.compress(&data).unwrap();
        assert_eq!(a, Compression::Gzip.compress(&data).unwrap());
        let mut trailing = a.clone();
        trailing.push(0);
        assert!(Compression::Gzip.decompress(&trailing, 5000).is_err());
        assert!(Compression::Gzip.decompress(&a, 4999).is_err());
    }
}
