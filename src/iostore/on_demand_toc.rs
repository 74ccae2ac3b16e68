//! `.uondemandtoc`: the table of an on-demand game's streamed chunks (which
//! containers, which chunks, their hashes and sizes on the content server).
//!
//! Layout (magic "ondemand", `EOnDemandTocVersion` 1–12), from FabianFG/CUE4Parse's
//! reader (`CUE4Parse/UE4/IO/Objects/OnDemand/V1`); no engine-written file is
//! in the corpus, so tests build files from this description:
//!
//! * header: magic `0x6f6e64656d616e64` (u64), version (u32), flags (u32,
//!   meaningful from 10 `TocFlags`: 1 install on demand, 2 stream on demand),
//!   block size (u32), compression format, chunks directory (`FString`s),
//!   host group name (`FString`, from 11 `HostGroupName`);
//! * from 5 `Meta`: time stamp (i64 Unix seconds), build version, target
//!   platform (`FString`s);
//! * containers (i32 count), each: container id (u64, from 6 `ContainerId`),
//!   name, encryption key GUID (`FString`s), entries (i32 count; each a
//!   20-byte hash, the 12-byte chunk id, raw and encoded size (u64), block
//!   offset and count (u32)), block sizes (u32 array), block hashes (u32
//!   array), the `.utoc`'s 20-byte hash, flags (u8, from 9 `ContainerFlags`),
//!   the container header (byte array, from 12 `ContainerHeader`);
//! * from 7 `AdditionalFiles`: (20-byte hash, file name, u64 size) array;
//! * from 8 `TagSets`: (tag, (container index, u32 package index array)
//!   array) array.
//!
//! Versions 1–3 are refused: their names (`UTocHash` 2, `BlockHash32` 3,
//! `NoRawHash` 4) say the entries and block hashes differed before, and no
//! public reader describes how. Newer files starting with the signature
//! `UE ON-DEMAND TOC` are a later format; they are refused by name.

use serde::Serialize;

use crate::binary::Reader;
use crate::error::{Context, Error, Result};

/// The magic, as the u64 the file starts with.
pub const MAGIC: u64 = 0x6f6e_6465_6d61_6e64;
/// The first bytes of the later format.
pub(crate) const SIGNATURE_V2: &[u8] = b"UE ON-DEMAND TOC";
/// Largest `.uondemandtoc` read (it is read whole).
pub(crate) const MAX_BYTES: u64 = 1 << 30;
/// The versions read.
pub const VERSIONS: std::ops::RangeInclusive<u32> = 4..=12;

/// A parsed `.uondemandtoc`.
#[derive(Debug, Clone, Serialize)]
pub struct OnDemandToc {
    pub version: u32,
    pub(crate) flags: u32,
    pub block_size: u32,
    pub compression_format: String,
    pub(crate) chunks_directory: String,
    pub host_group_name: Option<String>,
    /// Unix seconds, build version, target platform (version 5+).
    pub meta: Option<(i64, String, String)>,
    pub containers: Vec<OnDemandContainer>,
    pub(crate) additional_files: Vec<AdditionalFile>,
    pub(crate) tag_sets: Vec<TagSet>,
}

/// One container the table describes.
#[derive(Debug, Clone, Serialize)]
pub struct OnDemandContainer {
    /// `0x…` (version 6+).
    pub container_id: Option<String>,
    pub name: String,
    pub encryption_key_guid: String,
    pub chunks: Vec<OnDemandChunk>,
    pub block_count: usize,
    pub(crate) utoc_hash: String,
    pub(crate) flags: u8,
    /// Bytes of the embedded container header (version 12+).
    pub(crate) container_header_size: usize,
}

/// One streamed chunk.
#[derive(Debug, Clone, Serialize)]
pub struct OnDemandChunk {
    pub(crate) chunk_id: String,
    pub(crate) hash: String,
    pub(crate) raw_size: u64,
    pub(crate) encoded_size: u64,
    pub(crate) block_offset: u32,
    pub(crate) block_count: u32,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct AdditionalFile {
    pub(crate) file_name: String,
    pub(crate) size: u64,
    pub(crate) hash: String,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct TagSet {
    pub(crate) tag: String,
    /// (container index, package indices).
    pub(crate) packages: Vec<(u32, Vec<u32>)>,
}

impl OnDemandToc {
    /// Reads a whole file (bounded by its size: every count is checked
    /// against the bytes that remain).
    pub fn read_file(path: &std::path::Path) -> Result<Self> {
        let len = std::fs::metadata(path)
            .map_err(|e| Error::io(path, e))?
            .len();
        if len > MAX_BYTES {
            return Err(Error::new(crate::error::ErrorKind::Limit {
                what: "on-demand TOC size".into(),
                requested: len,
                limit: MAX_BYTES,
            })
            .in_file(path));
        }
        let data = std::fs::read(path).map_err(|e| Error::io(path, e))?;
        Self::read(&data).map_err(|e| e.in_file(path))
    }

    pub(crate) fn read(data: &[u8]) -> Result<Self> {
        let mut r = Reader::new(data);
        Self::read_from(&mut r).context("on-demand TOC")
    }

    fn read_from(r: &mut Reader) -> Result<Self> {
        if r.rest().starts_with(SIGNATURE_V2) {
            return Err(Error::unsupported(
                "this on-demand TOC starts with `UE ON-DEMAND TOC`, a later format than the \
                 \"ondemand\" one (versions 1-12) zenpak reads",
            ));
        }
        let magic = r.u64().context("magic")?;
        if magic != MAGIC {
            return Err(r.error_at(0, format!("magic is 0x{magic:016x}, not \"ondemand\"")));
        }
        let version = r.u32()?;
        if !VERSIONS.contains(&version) {
            return Err(Error::unsupported(format!(
                "on-demand TOC version {version}: zenpak reads versions {}-{} (earlier ones differ \
                 in ways no public reader describes; later ones are unknown)",
                VERSIONS.start(),
                VERSIONS.end()
            )));
        }
        let flags = r.u32()?;
        let block_size = r.u32()?;
        let compression_format = r.fstring().context("compression format")?;
        let chunks_directory = r.fstring().context("chunks directory")?;
        let host_group_name = (version >= 11)
            .then(|| r.fstring().context("host group name"))
            .transpose()?;
        let meta = if version >= 5 {
            Some((r.i64()?, r.fstring()?, r.fstring()?))
        } else {
            None
        };
        let n = r.count_i32(4 + 4 + 4 + 4 + 4 + 20).context("containers")?;
        let mut containers = Vec::with_capacity(n);
        for i in 0..n {
            containers.push(read_container(r, version).with_context(|| format!("container {i}"))?);
        }
        let mut additional_files = Vec::new();
        if version >= 7 {
            let n = r.count_i32(20 + 4 + 8).context("additional files")?;
            for _ in 0..n {
                let hash = crate::hash::hex(r.bytes(20)?);
                additional_files.push(AdditionalFile {
                    file_name: r.fstring()?,
                    size: r.u64()?,
                    hash,
                });
            }
        }
        let mut tag_sets = Vec::new();
        if version >= 8 {
            let n = r.count_i32(8).context("tag sets")?;
            for _ in 0..n {
                let tag = r.fstring()?;
                let k = r.count_i32(8).context("tag set packages")?;
                let mut packages = Vec::with_capacity(k);
                for _ in 0..k {
                    let container = r.u32()?;
                    let m = r.count_i32(4)?;
                    packages.push((container, (0..m).map(|_| r.u32()).collect::<Result<_>>()?));
                }
                tag_sets.push(TagSet { tag, packages });
            }
        }
        if !r.at_end() {
            return Err(r.error(format!(
                "{} unexpected bytes after the on-demand TOC",
                r.remaining()
            )));
        }
        Ok(OnDemandToc {
            version,
            flags,
            block_size,
            compression_format,
            chunks_directory,
            host_group_name,
            meta,
            containers,
            additional_files,
            tag_sets,
        })
    }
}

fn read_container(r: &mut Reader, version: u32) -> Result<OnDemandContainer> {
    let container_id = (version >= 6)
        .then(|| r.u64().map(|id| format!("0x{id:016x}")))
        .transpose()?;
    let name = r.fstring().context("name")?;
    let encryption_key_guid = r.fstring().context("encryption key guid")?;
    let n = r.count_i32(20 + 12 + 8 + 8 + 4 + 4).context("entries")?;
    let mut chunks = Vec::with_capacity(n);
    for _ in 0..n {
        let hash = crate::hash::hex(r.bytes(20)?);
        let chunk_id = crate::hash::hex(r.bytes(12)?);
        chunks.push(OnDemandChunk {
            chunk_id,
            hash,
            raw_size: r.u64()?,
            encoded_size: r.u64()?,
            block_offset: r.u32()?,
            block_count: r.u32()?,
        });
    }
    let block_count = r.count_i32(4).context("block sizes")?;
    r.skip(block_count * 4)?;
    let hashes = r.count_i32(4).context("block hashes")?;
    r.skip(hashes * 4)?;
    let utoc_hash = crate::hash::hex(r.bytes(20)?);
    let flags = if version >= 9 { r.u8()? } else { 0 };
    let container_header_size = if version >= 12 {
        let n = r.count_i32(1).context("container header")?;
        r.skip(n)?;
        n
    } else {
        0
    };
    for c in &chunks {
        let end = c.block_offset as u64 + c.block_count as u64;
        if end > block_count as u64 {
            return Err(r.error(format!(
                "chunk {} uses blocks {}..{end}, the container has {block_count}",
                c.chunk_id, c.block_offset
            )));
        }
    }
    Ok(OnDemandContainer {
        container_id,
        name,
        encryption_key_guid,
        chunks,
        block_count,
        utoc_hash,
        flags,
        container_header_size,
    })
}
