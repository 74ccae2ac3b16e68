//! Shader libraries in a container: a cooked `.ushaderbytecode` archive
//! (`FSerializedShaderArchive`, version 2) becomes, as the engine's
//! `ConvertToIoStoreShaderLibrary` (`IoStoreUtilities.cpp`) makes it, one
//! library header chunk (`FIoStoreShaderCodeArchiveHeader`, version 1;
//! chunk type `ShaderCodeLibrary`) and one `ShaderCode` chunk per shader
//! group; the packages that use its shader maps (the cook's
//! `ShaderAssetInfo-<library>-<format>.assetinfo.json`) list their hashes
//! in their store entries, sorted (`ProcessShaderLibraries`), and `verify`
//! checks each listed shader map against the container's chunks
//! ([`check_store_entries`]). UE4 containers have no shader chunk types, and
//! an archive of another version is a layout zenpak does not know: those
//! libraries stay in the companion pak ([`convert_file`]).
//!
//! Grouping follows `FIoStoreShaderCodeArchive::CreateIoStoreShaderCodeArchiveHeader`
//! (`ShaderCodeArchive.cpp`): shaders are grouped by the set of shader maps
//! that use them (fewest maps first, then the maps' indices, then the
//! shader index); `PCD3D_SM5` separates ray tracing shaders; a group over
//! `r.ShaderCodeLibrary.MaxShaderGroupSize` (1 MiB) is split greedily;
//! each group is sorted by uncompressed size, size, frequency and offset;
//! its chunk id is the first 11 bytes of the SHA-1 of (shader hash,
//! uncompressed size) per shader plus the format name. The corpus's
//! `retoc/UE5.4/ShaderArchive-NuclearNightmare-PCD3D_SM6-PCD3D_SM6` pair
//! checks this: from the cooked header, the same 2,423 groups, chunk ids,
//! shader entries and index table as the engine-written library header.
//! (That cooked header has no code and its offsets are not in the layout
//! `FSerializedShaderArchive::Finalize` gives, so it was likely rebuilt by
//! a peer tool from the library; the grouping it reproduces is the
//! engine's.)
//!
//! The engine recompresses each group with Oodle, which zenpak does not
//! have: a group of one shader keeps the shader's own bytes (the loader
//! decompresses groups with the method the cook compressed shaders with);
//! a larger group is stored uncompressed (the loader copies a group whose
//! compressed size equals its uncompressed size), its shaders decompressed
//! with whichever of zlib, zstd and LZ4 reproduces their size. A group with
//! a shader none of them decodes (Oodle) is stored one shader per group:
//! the loader takes whatever grouping the header describes.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Seek, SeekFrom};

use serde::Deserialize;
use sha1::{Digest, Sha1};

use super::chunk::{ChunkId, ChunkType};
use super::container_header::StoreEntry;
use crate::binary::{Reader, Writer};
use crate::compression::Compression;
use crate::error::{Context, Error, Result};
use crate::version::EngineVersion;

/// `FSHAHash`.
pub type ShaHash = [u8; 20];

/// The cooked archive's version (`FShaderCodeArchive`'s `CurrentVersion`).
const LEGACY_VERSION: u32 = 2;
/// `EIoStoreShaderLibraryVersion::Initial`.
const IO_STORE_VERSION: u32 = 1;
/// `r.ShaderCodeLibrary.MaxShaderGroupSize`'s default.
const MAX_GROUP_SIZE: u64 = 1024 * 1024;
/// The cooked archive's tables, in file order: name and bytes per record.
const LEGACY_TABLES: [(&str, u64); 6] = [
    ("shader map hashes", 20),
    ("shader hashes", 20),
    ("shader map entries", 16),
    ("shader entries", 17),
    ("preload entries", 16),
    ("shader indices", 4),
];
/// Largest cooked archive header read (its tables; the code is streamed).
/// A real library's header is about 60 bytes per shader: a few MiB for
/// the largest games' libraries.
pub(crate) const MAX_ARCHIVE_HEADER_BYTES: u64 = 64 << 20;
/// `SF_RayGen` … `SF_RayCallable`.
const RAY_TRACING_FREQUENCIES: std::ops::RangeInclusive<u8> = 6..=9;

/// `FShaderMapEntry` of a cooked archive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShaderMapEntry {
    pub shader_indices_offset: u32,
    pub num_shaders: u32,
    pub first_preload_index: u32,
    pub num_preload_entries: u32,
}

/// `FShaderCodeEntry`: where a shader's (maybe compressed) code is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShaderCodeEntry {
    /// From the end of the archive header.
    pub offset: u64,
    pub size: u32,
    pub uncompressed_size: u32,
    pub frequency: u8,
}

/// A cooked shader archive (`FSerializedShaderArchive`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShaderArchive {
    pub shader_map_hashes: Vec<ShaHash>,
    pub shader_hashes: Vec<ShaHash>,
    pub shader_map_entries: Vec<ShaderMapEntry>,
    pub shader_entries: Vec<ShaderCodeEntry>,
    /// `FFileCachePreloadEntry`: (offset, size).
    pub preload_entries: Vec<(i64, i64)>,
    pub shader_indices: Vec<u32>,
    /// Where the shader code starts in the file.
    pub code_offset: usize,
}

/// `FIoStoreShaderMapEntry`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IoStoreShaderMapEntry {
    pub(crate) shader_indices_offset: u32,
    pub(crate) num_shaders: u32,
}

/// `FIoStoreShaderGroupEntry`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShaderGroupEntry {
    pub shader_indices_offset: u32,
    pub num_shaders: u32,
    pub uncompressed_size: u32,
    /// Equal to the uncompressed size when the group is stored as it is.
    pub compressed_size: u32,
}

/// The library header chunk (`FIoStoreShaderCodeArchiveHeader`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IoStoreShaderArchive {
    pub shader_map_hashes: Vec<ShaHash>,
    pub shader_hashes: Vec<ShaHash>,
    /// The chunk of each group (`ShaderGroupIoHashes`).
    pub group_chunk_ids: Vec<ChunkId>,
    pub shader_map_entries: Vec<IoStoreShaderMapEntry>,
    /// Per shader: frequency (4 bits), group (30 bits), offset in the uncompressed group (30 bits).
    pub shader_entries: Vec<u64>,
    pub group_entries: Vec<ShaderGroupEntry>,
    pub shader_indices: Vec<u32>,
}

fn read_array<T>(
    r: &mut Reader,
    size: usize,
    what: &str,
    read: impl FnMut(&mut Reader) -> Result<T>,
) -> Result<Vec<T>> {
    let count = r.count_i32(size).context(what.to_string())?;
    r.records(count, what, read).context(what.to_string())
}

fn write_array<T>(w: &mut Writer, items: &[T], write: impl Fn(&mut Writer, &T)) {
    w.i32(items.len() as i32);
    for item in items {
        write(w, item);
    }
}

/// Another version is a library zenpak does not know the layout of.
fn read_version(r: &mut Reader, expected: u32, what: &str) -> Result<()> {
    let at = r.pos();
    let version = r.u32()?;
    if version != expected {
        return Err(Error::unsupported(format!(
            "{what} version {version}; zenpak knows version {expected}"
        ))
        .at(at as u64));
    }
    Ok(())
}

impl ShaderArchive {
    /// Reads the header of a cooked archive (its code stays in `bytes`).
    pub fn read(bytes: &[u8]) -> Result<Self> {
        let mut r = Reader::new(bytes);
        read_version(&mut r, LEGACY_VERSION, "shader archive").context("shader archive")?;
        let archive = ShaderArchive {
            shader_map_hashes: read_array(&mut r, 20, "shader map hashes", |r| r.array())?,
            shader_hashes: read_array(&mut r, 20, "shader hashes", |r| r.array())?,
            shader_map_entries: read_array(&mut r, 16, "shader map entries", |r| {
                Ok(ShaderMapEntry {
                    shader_indices_offset: r.u32()?,
                    num_shaders: r.u32()?,
                    first_preload_index: r.u32()?,
                    num_preload_entries: r.u32()?,
                })
            })?,
            shader_entries: read_array(&mut r, 17, "shader entries", |r| {
                Ok(ShaderCodeEntry {
                    offset: r.u64()?,
                    size: r.u32()?,
                    uncompressed_size: r.u32()?,
                    frequency: r.u8()?,
                })
            })?,
            preload_entries: read_array(&mut r, 16, "preload entries", |r| {
                Ok((r.i64()?, r.i64()?))
            })?,
            shader_indices: read_array(&mut r, 4, "shader indices", |r| r.u32())?,
            code_offset: r.pos(),
        };
        archive.check().context("shader archive")?;
        Ok(archive)
    }

    /// Reads the header of the cooked archive `file` (`len` bytes long)
    /// without its code. Each table's count is checked against the bytes
    /// the file has left, and the whole header against
    /// [`MAX_ARCHIVE_HEADER_BYTES`], before anything is allocated: a header
    /// that lies about its sizes is an error at the lying count's offset.
    pub(crate) fn read_header_from(file: &mut (impl Read + Seek), len: u64) -> Result<Self> {
        let mut word = [0u8; 4];
        let mut read_word = |at: u64| -> Result<[u8; 4]> {
            if at + 4 > len {
                return Err(Error::format(
                    at,
                    format!("the header is cut off: the file ends at byte {len}"),
                ));
            }
            file.seek(SeekFrom::Start(at))
                .and_then(|_| file.read_exact(&mut word))
                .map_err(|e| Error::new(crate::error::ErrorKind::Io(e)).at(at))?;
            Ok(word)
        };
        let version = u32::from_le_bytes(read_word(0).context("shader archive")?);
        if version != LEGACY_VERSION {
            return Err(Error::unsupported(format!(
                "shader archive version {version}; zenpak knows version {LEGACY_VERSION}"
            ))
            .at(0));
        }
        let mut end = 4u64;
        for (what, size) in LEGACY_TABLES {
            let count = i32::from_le_bytes(read_word(end).context("shader archive")?);
            let need = 4 + count.max(0) as u64 * size;
            if count < 0 || end + need > len {
                return Err(Error::format(
                    end,
                    format!(
                        "{what}: a count of {count} records of {size} bytes does not fit in the {} bytes the file has left",
                        len - end - 4
                    ),
                )
                .within("shader archive"));
            }
            end += need;
        }
        crate::limits::check_declared("shader archive header", end, MAX_ARCHIVE_HEADER_BYTES, len)?;
        let mut header = vec![0u8; end as usize];
        file.seek(SeekFrom::Start(0))
            .and_then(|_| file.read_exact(&mut header))
            .map_err(|e| Error::new(crate::error::ErrorKind::Io(e)))?;
        ShaderArchive::read(&header)
    }

    /// Where shader `index`'s entry is in the header.
    fn shader_entry_offset(&self, index: usize) -> u64 {
        let tables = [
            (self.shader_map_hashes.len(), 20),
            (self.shader_hashes.len(), 20),
            (self.shader_map_entries.len(), 16),
        ];
        4 + tables
            .iter()
            .map(|&(n, size)| 4 + n as u64 * size)
            .sum::<u64>()
            + 4
            + index as u64 * 17
    }

    /// Every shader's code lies within the file's `len` bytes: an entry
    /// that says otherwise is an error at its offset in the header (checked
    /// before any code is read, so no size it claims is ever allocated).
    pub(crate) fn check_code(&self, len: u64) -> Result<()> {
        for (i, e) in self.shader_entries.iter().enumerate() {
            let start = (self.code_offset as u64).saturating_add(e.offset);
            let end = start.saturating_add(e.size as u64);
            if end > len {
                return Err(Error::format(
                    self.shader_entry_offset(i),
                    format!(
                        "shader {i}'s code is bytes {start}..{end}, past the end of the file ({len} bytes)"
                    ),
                )
                .within("shader archive")
                .with_hint("the library is cut off or its header is damaged: copy it again from the cooked folder"));
            }
        }
        Ok(())
    }

    /// Every index the tables hold points into them.
    fn check(&self) -> Result<()> {
        if self.shader_hashes.len() != self.shader_entries.len()
            || self.shader_map_hashes.len() != self.shader_map_entries.len()
        {
            return Err(Error::invalid("hash and entry counts disagree"));
        }
        check_indices(&self.shader_indices, self.shader_entries.len())?;
        let ranges = self
            .shader_map_entries
            .iter()
            .map(|e| (e.shader_indices_offset, e.num_shaders));
        check_ranges(ranges, self.shader_indices.len(), "shader map")
    }

    /// Writes the header (version and tables); the code follows it.
    pub fn write_header(&self, w: &mut Writer) {
        w.u32(LEGACY_VERSION);
        write_array(w, &self.shader_map_hashes, |w, h| w.bytes(h));
        write_array(w, &self.shader_hashes, |w, h| w.bytes(h));
        write_array(w, &self.shader_map_entries, |w, e| {
            w.u32(e.shader_indices_offset);
            w.u32(e.num_shaders);
            w.u32(e.first_preload_index);
            w.u32(e.num_preload_entries);
        });
        write_array(w, &self.shader_entries, |w, e| {
            w.u64(e.offset);
            w.u32(e.size);
            w.u32(e.uncompressed_size);
            w.u8(e.frequency);
        });
        write_array(w, &self.preload_entries, |w, &(o, s)| {
            w.i64(o);
            w.i64(s);
        });
        write_array(w, &self.shader_indices, |w, &i| w.u32(i));
    }

    /// The whole file: header, then `code` (the shaders' bytes at their offsets).
    pub fn write(&self, code: &[u8]) -> Vec<u8> {
        let mut w = Writer::new();
        self.write_header(&mut w);
        w.bytes(code);
        w.into_inner()
    }

    /// The shader maps' shaders, by shader map.
    fn shaders_of_map(&self, map: usize) -> &[u32] {
        let e = self.shader_map_entries[map];
        let start = e.shader_indices_offset as usize;
        &self.shader_indices[start..start + e.num_shaders as usize]
    }
}

fn check_indices(indices: &[u32], shaders: usize) -> Result<()> {
    match indices.iter().find(|&&i| i as usize >= shaders) {
        Some(i) => Err(Error::invalid(format!(
            "shader index {i} is not one of the {shaders} shaders"
        ))),
        None => Ok(()),
    }
}

fn check_ranges(ranges: impl Iterator<Item = (u32, u32)>, len: usize, what: &str) -> Result<()> {
    for (i, (offset, count)) in ranges.enumerate() {
        if offset as u64 + count as u64 > len as u64 {
            return Err(Error::invalid(format!(
                "{what} {i} lists shader indices {offset}..+{count} of {len}"
            )));
        }
    }
    Ok(())
}

impl IoStoreShaderArchive {
    pub fn read(bytes: &[u8]) -> Result<Self> {
        let mut r = Reader::new(bytes);
        read_version(&mut r, IO_STORE_VERSION, "shader library").context("shader library")?;
        let archive = IoStoreShaderArchive {
            shader_map_hashes: read_array(&mut r, 20, "shader map hashes", |r| r.array())?,
            shader_hashes: read_array(&mut r, 20, "shader hashes", |r| r.array())?,
            group_chunk_ids: read_array(&mut r, 12, "shader group chunks", |r| {
                Ok(ChunkId(r.array()?))
            })?,
            shader_map_entries: read_array(&mut r, 8, "shader map entries", |r| {
                Ok(IoStoreShaderMapEntry {
                    shader_indices_offset: r.u32()?,
                    num_shaders: r.u32()?,
                })
            })?,
            shader_entries: read_array(&mut r, 8, "shader entries", |r| r.u64())?,
            group_entries: read_array(&mut r, 16, "shader groups", |r| {
                Ok(ShaderGroupEntry {
                    shader_indices_offset: r.u32()?,
                    num_shaders: r.u32()?,
                    uncompressed_size: r.u32()?,
                    compressed_size: r.u32()?,
                })
            })?,
            shader_indices: read_array(&mut r, 4, "shader indices", |r| r.u32())?,
        };
        if !r.at_end() {
            return Err(r.error(format!(
                "{} bytes after the shader library header",
                r.remaining()
            )));
        }
        archive.check().context("shader library")?;
        Ok(archive)
    }

    fn check(&self) -> Result<()> {
        if self.shader_hashes.len() != self.shader_entries.len()
            || self.shader_map_hashes.len() != self.shader_map_entries.len()
            || self.group_chunk_ids.len() != self.group_entries.len()
        {
            return Err(Error::invalid("hash and entry counts disagree"));
        }
        check_indices(&self.shader_indices, self.shader_entries.len())?;
        let maps = self
            .shader_map_entries
            .iter()
            .map(|e| (e.shader_indices_offset, e.num_shaders));
        check_ranges(maps, self.shader_indices.len(), "shader map")?;
        let groups = self
            .group_entries
            .iter()
            .map(|e| (e.shader_indices_offset, e.num_shaders));
        check_ranges(groups, self.shader_indices.len(), "shader group")?;
        match self
            .shader_entries
            .iter()
            .find(|&&e| group_of(e) >= self.group_entries.len())
        {
            Some(_) => Err(Error::invalid("a shader names a group that does not exist")),
            None => Ok(()),
        }
    }

    pub fn write(&self) -> Vec<u8> {
        let mut w = Writer::new();
        w.u32(IO_STORE_VERSION);
        write_array(&mut w, &self.shader_map_hashes, |w, h| w.bytes(h));
        write_array(&mut w, &self.shader_hashes, |w, h| w.bytes(h));
        write_array(&mut w, &self.group_chunk_ids, |w, c| w.bytes(&c.0));
        write_array(&mut w, &self.shader_map_entries, |w, e| {
            w.u32(e.shader_indices_offset);
            w.u32(e.num_shaders);
        });
        write_array(&mut w, &self.shader_entries, |w, &e| w.u64(e));
        write_array(&mut w, &self.group_entries, |w, e| {
            w.u32(e.shader_indices_offset);
            w.u32(e.num_shaders);
            w.u32(e.uncompressed_size);
            w.u32(e.compressed_size);
        });
        write_array(&mut w, &self.shader_indices, |w, &i| w.u32(i));
        w.into_inner()
    }

    /// The chunks a shader map's shaders live in (each once, in shader order).
    pub(crate) fn chunks_of_map(&self, map: usize) -> Vec<ChunkId> {
        let e = self.shader_map_entries[map];
        let start = e.shader_indices_offset as usize;
        let mut chunks: Vec<ChunkId> = Vec::new();
        for &shader in &self.shader_indices[start..start + e.num_shaders as usize] {
            let chunk = self.group_chunk_ids[group_of(self.shader_entries[shader as usize])];
            if !chunks.contains(&chunk) {
                chunks.push(chunk);
            }
        }
        chunks
    }
}

/// A shader entry's group (bits 4..34).
fn group_of(entry: u64) -> usize {
    ((entry >> 4) & ((1 << 30) - 1)) as usize
}

/// A shader entry's offset in its uncompressed group (bits 34..64).
fn offset_in_group(entry: u64) -> usize {
    (entry >> 34) as usize
}

/// `FIoStoreShaderCodeEntry` packed: frequency, group, offset in the group.
fn shader_entry(frequency: u8, group: usize, offset: u64) -> u64 {
    (frequency as u64 & 0xF)
        | ((group as u64 & ((1 << 30) - 1)) << 4)
        | ((offset & ((1 << 30) - 1)) << 34)
}

/// The chunk of a library (`GetShaderCodeArchiveChunkId`): CityHash64 of
/// `<library>-<format>` lowercased, as UTF-16.
pub(crate) fn library_chunk_id(library: &str, format: &str, engine: EngineVersion) -> ChunkId {
    let id = crate::hash::hash_lower_utf16(&format!("{library}-{format}"));
    ChunkId::new(id, 0, ChunkType::ShaderCodeLibrary, engine)
}

/// The chunk of a shader group (`GetShaderCodeChunkId`): the first 11 bytes
/// of its hash, then the chunk type.
fn group_chunk_id(hash: &ShaHash, engine: EngineVersion) -> ChunkId {
    let mut bytes = [0u8; 12];
    bytes[..11].copy_from_slice(&hash[..11]);
    bytes[11] = ChunkType::ShaderCode.to_raw(engine);
    ChunkId(bytes)
}

/// `ShaderArchive-<library>-<format>.ushaderbytecode` → (library, format),
/// split as the engine's IoStore tool does: the format is the last
/// `-` part, the library everything between the first and the last `-`.
pub(crate) fn library_and_format(file_name: &str) -> Option<(String, String)> {
    let stem = file_name.strip_suffix(".ushaderbytecode")?;
    let first = stem.find('-')?;
    let last = stem.rfind('-')?;
    (first < last).then(|| {
        (
            stem[first + 1..last].to_string(),
            stem[last + 1..].to_string(),
        )
    })
}

mod convert;
mod file;
mod legacy;

pub use convert::{convert, io_store_header, ConvertedLibrary, GroupChunk, ShaderAssetInfo};
pub use file::{convert_file, is_library_file_name, FileConversion};

/// What `verify` found about a container's shader maps.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ShaderMapCheck {
    pub(crate) errors: Vec<String>,
    pub(crate) warnings: Vec<String>,
}

/// Checks that every shader map a store entry lists has its chunks: the
/// container's library chunks (`chunk_ids`, read with `read_chunk` by
/// index) are parsed, and each group chunk of each listed map must be in
/// the container. A map no library here holds is only a warning: its
/// library may be in another container the game mounts.
pub(crate) fn check_store_entries(
    packages: &[(u64, StoreEntry)],
    chunk_ids: &[ChunkId],
    ue5: bool,
    read_chunk: impl Fn(usize) -> Result<Vec<u8>>,
) -> ShaderMapCheck {
    let mut check = ShaderMapCheck::default();
    let mut maps: BTreeMap<ShaHash, Vec<ChunkId>> = BTreeMap::new();
    for (index, id) in chunk_ids.iter().enumerate() {
        if id.chunk_type(ue5) != ChunkType::ShaderCodeLibrary {
            continue;
        }
        match read_chunk(index).and_then(|bytes| IoStoreShaderArchive::read(&bytes)) {
            Ok(library) => {
                for (map, hash) in library.shader_map_hashes.iter().enumerate() {
                    maps.entry(*hash)
                        .or_insert_with(|| library.chunks_of_map(map));
                }
            }
            Err(e) => check
                .errors
                .push(format!("shader library chunk {}: {e}", id.to_hex())),
        }
    }
    let present: BTreeSet<&ChunkId> = chunk_ids.iter().collect();
    for (package, entry) in packages {
        for hash in &entry.shader_map_hashes {
            let Some(chunks) = maps.get(hash) else {
                check.warnings.push(format!(
                    "package 0x{package:016x} uses shader map {} that no shader library of this container holds",
                    crate::hash::hex(hash)
                ));
                continue;
            };
            for chunk in chunks.iter().filter(|c| !present.contains(c)) {
                check.errors.push(format!(
                    "package 0x{package:016x} uses shader map {} whose shader group chunk {} is missing",
                    crate::hash::hex(hash),
                    chunk.to_hex()
                ));
            }
        }
    }
    check
}

/// Decompresses one shader's code with whichever method gives its size.
fn decompress_shader(code: &[u8], uncompressed_size: usize) -> Result<Vec<u8>> {
    for method in [Compression::Zstd, Compression::Zlib, Compression::Lz4] {
        if let Ok(out) = method.decompress(code, uncompressed_size) {
            return Ok(out);
        }
    }
    Err(Error::unsupported(
        "a compressed shader is not zlib, zstd or LZ4 (Oodle, the engine's default, is not available to zenpak)",
    )
    .with_hint("cook with r.Shaders.CompressionFormat set to None, Zlib, Zstd or LZ4, or ship the library in the pak"))
}

/// SHA-1 as `FSHA1` computes it.
fn sha1(parts: &[&[u8]]) -> ShaHash {
    let mut hasher = Sha1::new();
    for p in parts {
        hasher.update(p);
    }
    hasher.finalize().into()
}

/// `ShaderAssetInfo` JSON: shader map hash (hex) → package names.
#[derive(Debug, Deserialize)]
struct AssetInfoFile {
    #[serde(rename = "ShaderCodeToAssets")]
    shader_code_to_assets: Vec<AssetInfoEntry>,
}

#[derive(Debug, Deserialize)]
struct AssetInfoEntry {
    #[serde(rename = "ShaderMapHash")]
    shader_map_hash: String,
    #[serde(rename = "Assets")]
    assets: Vec<String>,
}
