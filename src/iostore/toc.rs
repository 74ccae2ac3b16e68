//! The `.utoc` table of contents (`FIoStoreTocResource`).
//!
//! Layout, in file order:
//! 1. header, 144 bytes ([`TocHeader`]);
//! 2. chunk ids, 12 bytes each;
//! 3. offset + length per chunk, 5 + 5 bytes big-endian, in the container's
//!    uncompressed address space (each chunk starts on a block boundary);
//! 4. perfect hash seeds (i32 each) and the indices of chunks without a
//!    perfect hash (`PerfectHash`/`PerfectHashWithOverflow` and later);
//! 5. compression blocks, 12 bytes each: 40-bit offset in the `.ucas`,
//!    24-bit compressed size, 24-bit uncompressed size, 8-bit method index;
//! 6. compression method names, 32 bytes each, zero-padded (method 0,
//!    `None`, is implicit);
//! 7. (signed containers only: signatures — zenpak never writes them);
//! 8. the directory index (`Indexed` containers; AES-encrypted when the
//!    container is);
//! 9. chunk metas: hash + flags, 33 bytes (32-byte hash) before
//!    `ReplaceIoChunkHashWithIoHash`, 24 bytes (20-byte hash, flags, 3 pad) from it.

use serde::Serialize;

use super::chunk::ChunkId;
use super::directory_index::DirectoryIndex;
use crate::binary::{Reader, Writer};
use crate::error::{Context, Result};
use crate::version::TocVersion;

pub(crate) const TOC_MAGIC: &[u8; 16] = b"-==--==--==--==-";
pub(crate) const TOC_HEADER_SIZE: u32 = 144;
pub(crate) const COMPRESSED_BLOCK_ENTRY_SIZE: u32 = 12;
pub(crate) const COMPRESSION_METHOD_NAME_LEN: u32 = 32;

/// Largest block size a block entry can describe (24-bit sizes).
pub const MAX_BLOCK_SIZE: u32 = (1 << 24) - 1;

/// `EIoContainerFlags`.
pub mod container_flags {
    pub const COMPRESSED: u8 = 1;
    pub const ENCRYPTED: u8 = 2;
    pub const SIGNED: u8 = 4;
    pub const INDEXED: u8 = 8;
    pub const ON_DEMAND: u8 = 16;
}

/// `FIoStoreTocEntryMetaFlags`.
pub mod meta_flags {
    pub const COMPRESSED: u8 = 1;
}

/// The fixed 144-byte header.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TocHeader {
    pub version: TocVersion,
    pub entry_count: u32,
    pub compressed_block_entry_count: u32,
    pub compression_method_name_count: u32,
    pub compression_block_size: u32,
    pub directory_index_size: u32,
    pub partition_count: u32,
    pub container_id: u64,
    pub encryption_key_guid: [u8; 16],
    pub container_flags: u8,
    pub perfect_hash_seeds_count: u32,
    pub partition_size: u64,
    pub chunks_without_perfect_hash_count: u32,
}

impl TocHeader {
    pub(crate) fn read(r: &mut Reader) -> Result<Self> {
        let magic = r.array::<16>()?;
        if &magic != TOC_MAGIC {
            return Err(r.error_at(0, "not a .utoc file (TOC magic is missing)"));
        }
        let at = r.pos();
        let raw_version = r.u8()?;
        let version = TocVersion::from_u8(raw_version)
            .ok_or_else(|| r.error_at(at, format!("unknown TOC version {raw_version}")))?;
        r.u8()?;
        r.u16()?;
        let at = r.pos();
        let header_size = r.u32()?;
        if header_size != TOC_HEADER_SIZE {
            return Err(r.error_at(
                at,
                format!("TOC header size is {header_size}, expected {TOC_HEADER_SIZE}"),
            ));
        }
        let entry_count = r.u32()?;
        let compressed_block_entry_count = r.u32()?;
        let at = r.pos();
        let block_entry_size = r.u32()?;
        if block_entry_size != COMPRESSED_BLOCK_ENTRY_SIZE {
            return Err(r.error_at(
                at,
                format!("compression block entry size is {block_entry_size}, expected 12"),
            ));
        }
        let compression_method_name_count = r.u32()?;
        let at = r.pos();
        let name_len = r.u32()?;
        if name_len != COMPRESSION_METHOD_NAME_LEN && compression_method_name_count > 0 {
            return Err(r.error_at(
                at,
                format!("compression method name length is {name_len}, expected 32"),
            ));
        }
        let compression_block_size = r.u32()?;
        let directory_index_size = r.u32()?;
        let partition_count = r.u32()?;
        let container_id = r.u64()?;
        let encryption_key_guid = r.array::<16>()?;
        let container_flags = r.u8()?;
        r.u8()?;
        r.u16()?;
        let perfect_hash_seeds_count = r.u32()?;
        let partition_size = r.u64()?;
        let chunks_without_perfect_hash_count = r.u32()?;
        r.u32()?;
        r.skip(40)?;
        Ok(TocHeader {
            version,
            entry_count,
            compressed_block_entry_count,
            compression_method_name_count,
            compression_block_size,
            directory_index_size,
            partition_count,
            container_id,
            encryption_key_guid,
            container_flags,
            perfect_hash_seeds_count,
            partition_size,
            chunks_without_perfect_hash_count,
        })
    }

    pub(crate) fn write(&self, w: &mut Writer) {
        w.bytes(TOC_MAGIC);
        w.u8(self.version as u8);
        w.u8(0);
        w.u16(0);
        w.u32(TOC_HEADER_SIZE);
        w.u32(self.entry_count);
        w.u32(self.compressed_block_entry_count);
        w.u32(COMPRESSED_BLOCK_ENTRY_SIZE);
        w.u32(self.compression_method_name_count);
        w.u32(COMPRESSION_METHOD_NAME_LEN);
        w.u32(self.compression_block_size);
        w.u32(self.directory_index_size);
        w.u32(self.partition_count);
        w.u64(self.container_id);
        w.bytes(&self.encryption_key_guid);
        w.u8(self.container_flags);
        w.u8(0);
        w.u16(0);
        w.u32(self.perfect_hash_seeds_count);
        w.u64(self.partition_size);
        w.u32(self.chunks_without_perfect_hash_count);
        w.u32(0);
        w.zeros(40);
    }
}

/// Where a chunk lies in the container's uncompressed address space.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct OffsetAndLength {
    pub offset: u64,
    pub length: u64,
}

impl OffsetAndLength {
    pub(crate) fn read(r: &mut Reader) -> Result<Self> {
        Ok(OffsetAndLength::from_bytes(&r.array::<10>()?))
    }

    pub(crate) fn write(&self, w: &mut Writer) {
        w.bytes(&self.to_bytes());
    }

    /// From the 10 bytes the TOC stores: offset and length, 40 bits each,
    /// big endian.
    pub(crate) fn from_bytes(b: &[u8; 10]) -> Self {
        let be40 = |s: &[u8]| s.iter().fold(0u64, |acc, &x| (acc << 8) | x as u64);
        OffsetAndLength {
            offset: be40(&b[..5]),
            length: be40(&b[5..]),
        }
    }

    /// The 10 bytes the TOC stores (each value's low 40 bits).
    pub(crate) fn to_bytes(self) -> [u8; 10] {
        let mut b = [0; 10];
        b[..5].copy_from_slice(&self.offset.to_be_bytes()[3..]);
        b[5..].copy_from_slice(&self.length.to_be_bytes()[3..]);
        b
    }
}

/// One compression block of the `.ucas`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct CompressionBlock {
    /// Offset of the block in the `.ucas`.
    pub offset: u64,
    /// Stored size (before the AES padding to 16 bytes).
    pub compressed_size: u32,
    pub uncompressed_size: u32,
    /// Index into the method table; 0 is `None`.
    pub method_index: u8,
}

impl CompressionBlock {
    pub(crate) fn read(r: &mut Reader) -> Result<Self> {
        Ok(Self::from_bytes(&r.array::<12>()?))
    }

    /// The block from its 12-byte TOC entry.
    pub(crate) fn from_bytes(b: &[u8; 12]) -> Self {
        let le = |s: &[u8]| s.iter().rev().fold(0u64, |acc, &x| (acc << 8) | x as u64);
        CompressionBlock {
            offset: le(&b[..5]),
            compressed_size: le(&b[5..8]) as u32,
            uncompressed_size: le(&b[8..11]) as u32,
            method_index: b[11],
        }
    }

    /// Its 12-byte TOC entry (half the block's size in memory: a writer
    /// keeps its blocks this way).
    pub(crate) fn to_bytes(self) -> [u8; 12] {
        let mut b = [0u8; 12];
        b[..5].copy_from_slice(&self.offset.to_le_bytes()[..5]);
        b[5..8].copy_from_slice(&self.compressed_size.to_le_bytes()[..3]);
        b[8..11].copy_from_slice(&self.uncompressed_size.to_le_bytes()[..3]);
        b[11] = self.method_index;
        b
    }

    pub(crate) fn write(&self, w: &mut Writer) {
        w.bytes(&self.to_bytes());
    }

    /// Bytes the engine reads for the block: its compressed size aligned
    /// to 16 (the AES block), whether or not the container is encrypted.
    /// zenpak's writer pads every block to this size.
    pub(crate) fn stored_size(&self) -> u64 {
        (self.compressed_size as u64).next_multiple_of(16)
    }

    /// Bytes of the `.ucas` the block's data needs, the reader policy in one
    /// place: all of [`stored_size`](Self::stored_size) when the container
    /// is encrypted (AES decrypts whole 16-byte blocks), only the compressed
    /// size otherwise. The rest of the aligned range is slack: retoc, the
    /// tool most mods are built with, writes blocks back to back without
    /// padding, so a block's aligned range reaches into the next block's
    /// first bytes or up to 15 bytes past the end of the file, and games
    /// load such containers (the engine's read of the padding finds the
    /// next block's bytes or nothing, and decompression never looks there).
    pub fn data_size(&self, encrypted: bool) -> u64 {
        if encrypted {
            self.stored_size()
        } else {
            self.compressed_size as u64
        }
    }
}

/// A chunk's meta entry: the hash of its uncompressed data and flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ChunkMeta {
    /// First 20 bytes are the hash; older versions store 12 more zero bytes.
    pub hash: [u8; 20],
    pub flags: u8,
}

impl ChunkMeta {
    pub(crate) fn read(r: &mut Reader, version: TocVersion) -> Result<Self> {
        let hash = r.array::<20>()?;
        if version.meta_size() == 33 {
            r.skip(12)?;
            Ok(ChunkMeta {
                hash,
                flags: r.u8()?,
            })
        } else {
            let flags = r.u8()?;
            r.skip(3)?;
            Ok(ChunkMeta { hash, flags })
        }
    }

    pub(crate) fn write(&self, w: &mut Writer, version: TocVersion) {
        w.bytes(&self.hash);
        if version.meta_size() == 33 {
            w.zeros(12);
            w.u8(self.flags);
        } else {
            w.u8(self.flags);
            w.zeros(3);
        }
    }
}

/// A whole TOC. The directory index is kept as stored (it may be encrypted).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Toc {
    pub header: TocHeader,
    pub chunk_ids: Vec<ChunkId>,
    pub offsets: Vec<OffsetAndLength>,
    pub perfect_hash_seeds: Vec<i32>,
    pub chunks_without_perfect_hash: Vec<i32>,
    pub blocks: Vec<CompressionBlock>,
    /// Method names after the implicit `None`.
    pub compression_methods: Vec<String>,
    pub directory_index: Vec<u8>,
    pub metas: Vec<ChunkMeta>,
}

impl TocHeader {
    /// The bytes the sections after the header take, by the header's counts
    /// (signatures, whose size only the file says, not counted): what the
    /// `.utoc` must hold at least.
    pub(crate) fn declared_len(&self) -> u64 {
        let n = self.entry_count as u64;
        let seeds = if self.version.has_perfect_hash() {
            self.perfect_hash_seeds_count as u64
        } else {
            0
        };
        let overflow = if self.version.has_overflow_list() {
            self.chunks_without_perfect_hash_count as u64
        } else {
            0
        };
        let directory_index = if self.container_flags & container_flags::INDEXED != 0 {
            self.directory_index_size as u64
        } else {
            0
        };
        TOC_HEADER_SIZE as u64
            + n * (12 + 10 + self.version.meta_size() as u64)
            + (seeds + overflow) * 4
            + self.compressed_block_entry_count as u64 * COMPRESSED_BLOCK_ENTRY_SIZE as u64
            + self.compression_method_name_count as u64 * COMPRESSION_METHOD_NAME_LEN as u64
            + directory_index
    }
}

impl Toc {
    /// Reads the `.utoc` at `path`: its header first, then the whole file
    /// only when the sizes the header declares and the file's length are
    /// within [`MAX_TOC_BYTES`](crate::limits::MAX_TOC_BYTES), so a sparse
    /// or hostile multi-GiB `.utoc` fails at once. Errors name the file.
    pub fn read_file(path: &std::path::Path) -> Result<Self> {
        use std::io::Read;
        let fail = |e: crate::Error| e.in_file(path);
        let io = |e| crate::Error::io(path, e);
        let mut file = crate::limits::open_regular(path)?;
        let len = file.metadata().map_err(io)?.len();
        let mut head = Vec::with_capacity(TOC_HEADER_SIZE as usize);
        (&mut file)
            .take(TOC_HEADER_SIZE as u64)
            .read_to_end(&mut head)
            .map_err(io)?;
        let header = TocHeader::read(&mut Reader::new(&head))
            .context("TOC header")
            .map_err(fail)?;
        let declared = header.declared_len();
        let budget = crate::limits::MAX_TOC_BYTES;
        crate::limits::check_declared("TOC header", declared, budget, len)
            .map_err(|e| fail(e.within("TOC header")))?;
        if len > budget {
            return Err(fail(
                crate::Error::invalid(format!(
                    "the .utoc holds {len} bytes, more than the {} MiB zenpak reads for a TOC; its header declares {declared} bytes of sections",
                    budget >> 20
                ))
                .within("TOC header")
                .with_hint("the file is damaged (padded or overwritten past its end) or is not a .utoc"),
            ));
        }
        let mut data = Vec::with_capacity(len as usize);
        data.extend_from_slice(&head);
        file.read_to_end(&mut data).map_err(io)?;
        Toc::read(&data).map_err(fail)
    }

    pub fn read(data: &[u8]) -> Result<Self> {
        let mut r = Reader::new(data);
        let header = TocHeader::read(&mut r).context("TOC header")?;
        let version = header.version;
        let n = r
            .check_count(header.entry_count as i64, 12 + 10)
            .context("chunk ids")?;
        let chunk_ids = (0..n)
            .map(|_| r.array::<12>().map(ChunkId))
            .collect::<Result<Vec<_>>>()
            .context("chunk ids")?;
        let offsets = (0..n)
            .map(|_| OffsetAndLength::read(&mut r))
            .collect::<Result<Vec<_>>>()
            .context("chunk offsets")?;
        let seeds = if version.has_perfect_hash() {
            header.perfect_hash_seeds_count
        } else {
            0
        };
        let seeds = r
            .check_count(seeds as i64, 4)
            .context("perfect hash seeds")?;
        let perfect_hash_seeds = (0..seeds).map(|_| r.i32()).collect::<Result<Vec<_>>>()?;
        let overflow = if version.has_overflow_list() {
            header.chunks_without_perfect_hash_count
        } else {
            0
        };
        let overflow = r
            .check_count(overflow as i64, 4)
            .context("chunks without perfect hash")?;
        let chunks_without_perfect_hash =
            (0..overflow).map(|_| r.i32()).collect::<Result<Vec<_>>>()?;
        let nb = r
            .check_count(header.compressed_block_entry_count as i64, 12)
            .context("compression blocks")?;
        let blocks = (0..nb)
            .map(|_| CompressionBlock::read(&mut r))
            .collect::<Result<Vec<_>>>()
            .context("compression blocks")?;
        let nm = r
            .check_count(
                header.compression_method_name_count as i64,
                COMPRESSION_METHOD_NAME_LEN as usize,
            )
            .context("compression methods")?;
        let mut compression_methods = Vec::with_capacity(nm);
        for _ in 0..nm {
            let raw = r.bytes(COMPRESSION_METHOD_NAME_LEN as usize)?;
            let end = raw.iter().position(|&b| b == 0).unwrap_or(raw.len());
            compression_methods.push(raw[..end].iter().map(|&b| b as char).collect());
        }
        if header.container_flags & container_flags::SIGNED != 0 {
            let at = r.pos();
            let size = r.count_i32(2).context("signatures")?;
            r.skip(size * 2).context("signatures")?;
            r.skip(r.check_count_at(at, nb as i64, 20)? * 20)
                .context("block signatures")?;
        }
        let directory_index = if header.container_flags & container_flags::INDEXED != 0 {
            let size = r
                .check_count(header.directory_index_size as i64, 1)
                .context("directory index")?;
            r.bytes(size)?.to_vec()
        } else {
            Vec::new()
        };
        r.check_count(n as i64, version.meta_size())
            .context("chunk metas")?;
        let metas = (0..n)
            .map(|_| ChunkMeta::read(&mut r, version))
            .collect::<Result<Vec<_>>>()
            .context("chunk metas")?;
        if !r.at_end() && header.container_flags & container_flags::ON_DEMAND == 0 {
            return Err(r.error(format!(
                "{} unexpected bytes after the chunk metas",
                r.remaining()
            )));
        }
        Ok(Toc {
            header,
            chunk_ids,
            offsets,
            perfect_hash_seeds,
            chunks_without_perfect_hash,
            blocks,
            compression_methods,
            directory_index,
            metas,
        })
    }

    pub fn write(&self) -> Vec<u8> {
        let mut out = Vec::new();
        let sections = TocSections {
            header: &self.header,
            chunk_ids: self.chunk_ids.iter().copied(),
            offsets: self.offsets.iter().copied(),
            perfect_hash_seeds: &self.perfect_hash_seeds,
            chunks_without_perfect_hash: &self.chunks_without_perfect_hash,
            blocks: self.blocks.iter().copied(),
            compression_methods: self.compression_methods.iter().map(String::as_str),
            directory_index: IndexSection::Bytes(&self.directory_index),
            metas: self.metas.iter().copied(),
        };
        match sections.write_to(&mut out) {
            Ok(()) => out,
            // Writing to memory does not fail.
            Err(e) => unreachable!("writing a TOC to memory: {e}"),
        }
    }

    /// The TOC index of a chunk, looked up as the engine does (perfect hash
    /// when the container has one, else a scan). One look-up; for many,
    /// [`Toc::lookup`] builds its maps once.
    pub(crate) fn find(&self, id: &ChunkId) -> Option<usize> {
        self.find_with(id, None)
    }

    /// A look-up of every chunk in the time of one pass: what `find` scans
    /// (the ids of a TOC without perfect-hash seeds, the overflow list of
    /// one with them) is put in a map first.
    ///
    /// A TOC without seeds (UE 4.26/4.27, or hostile) is read by the engine
    /// into a map from chunk id to TOC index, built once in TOC order
    /// (`FIoStoreTocReader::Read` in `IoStore.cpp`:
    /// `ChunkIdToIndex.Add(Toc.ChunkIds[ChunkIndex], ChunkIndex)`); `TMap::Add`
    /// replaces the value of a key already there, so of ids listed twice the
    /// last is the one found. [`Toc::find`] agrees.
    pub(crate) fn lookup(&self) -> ChunkLookup<'_> {
        let map = |indices: &mut dyn Iterator<Item = usize>| {
            let mut map = std::collections::HashMap::new();
            for i in indices {
                map.insert(self.chunk_ids[i], i);
            }
            map
        };
        let scanned = if self.perfect_hash_seeds.is_empty() {
            map(&mut (0..self.chunk_ids.len()))
        } else {
            // The overflow list is scanned from its start: the first match
            // is found, so the map keeps the first.
            map(&mut self
                .chunks_without_perfect_hash
                .iter()
                .rev()
                .map(|&i| i as usize)
                .filter(|&i| i < self.chunk_ids.len()))
        };
        ChunkLookup { toc: self, scanned }
    }

    fn find_with(
        &self,
        id: &ChunkId,
        scanned: Option<&std::collections::HashMap<ChunkId, usize>>,
    ) -> Option<usize> {
        let count = self.chunk_ids.len();
        if count == 0 {
            return None;
        }
        if !self.perfect_hash_seeds.is_empty() {
            let seeds = self.perfect_hash_seeds.len();
            let seed = self.perfect_hash_seeds[(hash_chunk_id(0, id) % seeds as u64) as usize];
            if seed == 0 {
                return None;
            }
            let slot = if seed < 0 {
                let slot = (-(seed as i64) - 1) as usize;
                if slot >= count {
                    if let Some(scanned) = scanned {
                        return scanned.get(id).copied();
                    }
                    return self
                        .chunks_without_perfect_hash
                        .iter()
                        .map(|&i| i as usize)
                        .find(|&i| self.chunk_ids.get(i) == Some(id));
                }
                slot
            } else {
                (hash_chunk_id(seed, id) % count as u64) as usize
            };
            return (self.chunk_ids[slot] == *id).then_some(slot);
        }
        if let Some(scanned) = scanned {
            return scanned.get(id).copied();
        }
        // The engine's map keeps the last of ids listed twice (see `lookup`).
        self.chunk_ids.iter().rposition(|c| c == id)
    }

    /// Indices of the compression blocks that hold chunk `index`.
    pub fn chunk_blocks(&self, index: usize) -> Result<std::ops::Range<usize>> {
        chunk_block_range(
            index,
            self.offsets[index],
            self.header.compression_block_size,
            self.blocks.len(),
        )
    }
}

/// [`Toc::find`] for many chunks: its scans done once, as maps.
pub(crate) struct ChunkLookup<'a> {
    toc: &'a Toc,
    /// The scanned ids (all of a TOC without seeds, else the overflow list)
    /// → the TOC index the engine finds.
    scanned: std::collections::HashMap<ChunkId, usize>,
}

impl ChunkLookup<'_> {
    /// The TOC index of a chunk, as [`Toc::find`] gives it.
    pub(crate) fn find(&self, id: &ChunkId) -> Option<usize> {
        self.toc.find_with(id, Some(&self.scanned))
    }
}

/// The compression blocks of chunk `index`, at `offset` in a container of
/// `block_count` blocks of `block_size` bytes (each chunk starts a block).
pub(crate) fn chunk_block_range(
    index: usize,
    offset: OffsetAndLength,
    block_size: u32,
    block_count: usize,
) -> Result<std::ops::Range<usize>> {
    let block_size = block_size as u64;
    if block_size == 0 {
        return Err(crate::Error::invalid("TOC compression block size is 0"));
    }
    let first = offset.offset / block_size;
    let count = offset.length.div_ceil(block_size);
    let end = first + count;
    if end > block_count as u64 {
        return Err(crate::Error::invalid(format!(
            "chunk {index} needs blocks {first}..{end} but the TOC has {block_count}"
        )));
    }
    Ok(first as usize..end as usize)
}

/// Bytes a streamed TOC section gathers before they are written out.
const STREAM_BATCH: usize = 64 << 10;

/// The directory index section of [`TocSections`].
pub(crate) enum IndexSection<'a> {
    /// As stored (encrypted when the container is).
    Bytes(&'a [u8]),
    /// Encoded as it is written ([`DirectoryIndex::write_to`]).
    Index(&'a DirectoryIndex),
}

/// A TOC given section by section, each section an iterator over its
/// entries in TOC order: [`TocSections::write_to`] streams it in file order
/// through one small buffer, so a container's TOC (13 MB at 100,000
/// packages) is never held whole, nor are its tables copied. The header's
/// counts must be the sections' lengths. [`Toc::write`] writes a whole TOC
/// this way too: the layout has this one home.
pub(crate) struct TocSections<'a, I, O, B, N, M> {
    pub(crate) header: &'a TocHeader,
    pub(crate) chunk_ids: I,
    pub(crate) offsets: O,
    pub(crate) perfect_hash_seeds: &'a [i32],
    pub(crate) chunks_without_perfect_hash: &'a [i32],
    pub(crate) blocks: B,
    /// Method names after the implicit `None`.
    pub(crate) compression_methods: N,
    /// Written only when the header's flags say the container is indexed.
    pub(crate) directory_index: IndexSection<'a>,
    pub(crate) metas: M,
}

impl<'a, I, O, B, N, M> TocSections<'a, I, O, B, N, M>
where
    I: Iterator<Item = ChunkId>,
    O: Iterator<Item = OffsetAndLength>,
    B: Iterator<Item = CompressionBlock>,
    N: Iterator<Item = &'a str>,
    M: Iterator<Item = ChunkMeta>,
{
    pub(crate) fn write_to(self, out: &mut impl std::io::Write) -> std::io::Result<()> {
        let version = self.header.version;
        let mut w = Writer::with_capacity(STREAM_BATCH + 64);
        self.header.write(&mut w);
        for id in self.chunk_ids {
            w.bytes(&id.0);
            w.drain_to(out, STREAM_BATCH)?;
        }
        for o in self.offsets {
            o.write(&mut w);
            w.drain_to(out, STREAM_BATCH)?;
        }
        for s in self
            .perfect_hash_seeds
            .iter()
            .chain(self.chunks_without_perfect_hash)
        {
            w.i32(*s);
            w.drain_to(out, STREAM_BATCH)?;
        }
        for b in self.blocks {
            b.write(&mut w);
            w.drain_to(out, STREAM_BATCH)?;
        }
        for m in self.compression_methods {
            let mut name = [0u8; COMPRESSION_METHOD_NAME_LEN as usize];
            let bytes = m.as_bytes();
            let n = bytes.len().min(name.len() - 1);
            name[..n].copy_from_slice(&bytes[..n]);
            w.bytes(&name);
        }
        if self.header.container_flags & container_flags::INDEXED != 0 {
            match self.directory_index {
                IndexSection::Bytes(bytes) => w.bytes(bytes),
                IndexSection::Index(index) => {
                    w.drain_to(out, 0)?;
                    index.write_to(out)?;
                }
            }
        }
        for m in self.metas {
            m.write(&mut w, version);
            w.drain_to(out, STREAM_BATCH)?;
        }
        w.drain_to(out, 0)
    }
}

/// `FIoStoreTocResource::HashChunkIdWithSeed`: FNV-style over the 12 id bytes.
pub(crate) fn hash_chunk_id(seed: i32, id: &ChunkId) -> u64 {
    let mut hash: u64 = if seed != 0 {
        seed as i64 as u64
    } else {
        0xcbf2_9ce4_8422_2325
    };
    for &b in &id.0 {
        hash = hash.wrapping_mul(0x0000_0100_0000_01B3) ^ b as u64;
    }
    hash
}

/// The engine's prime seeds, tried in order for each colliding bucket.
fn seed_primes() -> Vec<u32> {
    // The first 1000 primes (2 ..= 7919), as the engine's table.
    let mut primes = Vec::with_capacity(1000);
    let mut n = 2u32;
    while primes.len() < 1000 {
        if primes
            .iter()
            .take_while(|&&p| p * p <= n)
            .all(|&p| !n.is_multiple_of(p))
        {
            primes.push(n);
        }
        n += 1;
    }
    primes
}

/// The result of building the perfect hash: the new order of the chunks
/// (`order[slot] = original index`), the seeds and the overflow slots.
pub struct PerfectHash {
    pub order: Vec<usize>,
    pub seeds: Vec<i32>,
    pub overflow: Vec<i32>,
}

/// Builds the perfect hash table the way the engine's writer does
/// (`GeneratePerfectHashes`), so lookups behave identically.
pub fn build_perfect_hash(ids: &[ChunkId]) -> PerfectHash {
    build_perfect_hash_with(ids.len(), |i| ids[i])
}

/// [`build_perfect_hash`] over `count` chunks whose ids `id_of` gives, so
/// the caller's own records need not be copied into a list of ids. The
/// buckets are one list of chunk indices, bucket after bucket (a few bytes
/// per chunk, nothing allocated per bucket).
pub(crate) fn build_perfect_hash_with(
    count: usize,
    id_of: impl Fn(usize) -> ChunkId,
) -> PerfectHash {
    let seed_count = ((count as f64 / 2.0).round() as usize).max(1);
    let mut seeds = vec![0i32; seed_count];
    let mut order = vec![usize::MAX; count];
    let mut free = vec![true; count];
    let mut overflow_chunks: Vec<usize> = Vec::new();
    // Bucket `b` holds members[starts[b]..starts[b + 1]], in chunk order.
    let bucket_of: Vec<u32> = (0..count)
        .map(|i| (hash_chunk_id(0, &id_of(i)) % seed_count as u64) as u32)
        .collect();
    let mut starts = vec![0u32; seed_count + 1];
    for &b in &bucket_of {
        starts[b as usize + 1] += 1;
    }
    for b in 0..seed_count {
        starts[b + 1] += starts[b];
    }
    let mut members = vec![0u32; count];
    let mut next = starts[..seed_count].to_vec();
    for (chunk, &b) in bucket_of.iter().enumerate() {
        members[next[b as usize] as usize] = chunk as u32;
        next[b as usize] += 1;
    }
    drop((next, bucket_of));
    let bucket = |b: u32| &members[starts[b as usize] as usize..starts[b as usize + 1] as usize];
    // Largest buckets first; a stable sort keeps equal sizes in bucket order.
    let mut buckets: Vec<u32> = (0..seed_count as u32).collect();
    buckets.sort_by_key(|&b| std::cmp::Reverse(bucket(b).len()));
    let primes = seed_primes();
    for &b in buckets.iter().take_while(|&&b| bucket(b).len() > 1) {
        let members = bucket(b);
        let mut found = None;
        'primes: for &prime in &primes {
            let mut used = Vec::with_capacity(members.len());
            for &chunk in members {
                let id = id_of(chunk as usize);
                let slot = (hash_chunk_id(prime as i32, &id) % count as u64) as usize;
                if !free[slot] || used.contains(&slot) {
                    continue 'primes;
                }
                used.push(slot);
            }
            found = Some((prime, used));
            break;
        }
        match found {
            Some((prime, slots)) => {
                seeds[b as usize] = prime as i32;
                for (&chunk, slot) in members.iter().zip(slots) {
                    free[slot] = false;
                    order[slot] = chunk as usize;
                }
            }
            None => {
                seeds[b as usize] = -(overflow_chunks.len() as i32) - count as i32 - 1;
                overflow_chunks.extend(members.iter().map(|&c| c as usize));
            }
        }
    }
    let mut free_slots = (0..count).filter(|&s| free[s]);
    for &b in buckets.iter().filter(|&&b| bucket(b).len() == 1) {
        let slot = free_slots.next().unwrap_or(0);
        seeds[b as usize] = -(slot as i32) - 1;
        order[slot] = bucket(b)[0] as usize;
    }
    let mut overflow = Vec::with_capacity(overflow_chunks.len());
    for chunk in overflow_chunks {
        let slot = free_slots.next().unwrap_or(0);
        order[slot] = chunk;
        overflow.push(slot as i32);
    }
    PerfectHash {
        order,
        seeds,
        overflow,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::iostore::chunk::ChunkType;
    use crate::version::EngineVersion;

    #[test]
    fn primes_match_the_engine_table_ends() {
        let p = seed_primes();
        assert_eq!(p.len(), 1000);
        assert_eq!(p[0], 2);
        assert_eq!(p[999], 7919);
    }

    #[test]
    fn perfect_hash_finds_every_chunk() {
        for n in [1usize, 2, 3, 10, 257, 2000] {
            let ids: Vec<ChunkId> = (0..n as u64)
                .map(|i| {
                    ChunkId::new(
                        i.wrapping_mul(0x9e37_79b9_7f4a_7c15),
                        (i % 3) as u16,
                        ChunkType::BulkData,
                        EngineVersion::UE5_3,
                    )
                })
                .collect();
            let ph = build_perfect_hash(&ids);
            let mut sorted = ph.order.clone();
            sorted.sort();
            assert_eq!(sorted, (0..n).collect::<Vec<_>>());
            let mut toc = Toc {
                header: TocHeader {
                    version: TocVersion::PerfectHashWithOverflow,
                    entry_count: n as u32,
                    compressed_block_entry_count: 0,
                    compression_method_name_count: 0,
                    compression_block_size: 65536,
                    directory_index_size: 0,
                    partition_count: 1,
                    container_id: 0,
                    encryption_key_guid: [0; 16],
                    container_flags: 0,
                    perfect_hash_seeds_count: ph.seeds.len() as u32,
                    partition_size: u64::MAX,
                    chunks_without_perfect_hash_count: ph.overflow.len() as u32,
                },
                chunk_ids: ph.order.iter().map(|&i| ids[i]).collect(),
                offsets: vec![
                    OffsetAndLength {
                        offset: 0,
                        length: 0
                    };
                    n
                ],
                perfect_hash_seeds: ph.seeds,
                chunks_without_perfect_hash: ph.overflow,
                blocks: vec![],
                compression_methods: vec![],
                directory_index: vec![],
                metas: vec![
                    ChunkMeta {
                        hash: [0; 20],
                        flags: 0
                    };
                    n
                ],
            };
            for id in &ids {
                let slot = toc.find(id).expect("found");
                assert_eq!(toc.chunk_ids[slot], *id);
            }
            let missing = ChunkId::new(u64::MAX, 9, ChunkType::BulkData, EngineVersion::UE5_3);
            assert_eq!(toc.find(&missing), None);
            toc.header.container_flags = container_flags::INDEXED;
            let bytes = toc.write();
            assert_eq!(Toc::read(&bytes).unwrap(), toc);
        }
    }

    /// BLAKE3 of a perfect hash's order, seeds and overflow slots.
    fn digest(ph: &PerfectHash) -> String {
        let mut hasher = blake3::Hasher::new();
        for &i in &ph.order {
            hasher.update(&(i as u64).to_le_bytes());
        }
        for &s in ph.seeds.iter().chain(&ph.overflow) {
            hasher.update(&s.to_le_bytes());
        }
        hasher.finalize().to_hex()[..16].to_string()
    }

    #[test]
    fn the_compact_perfect_hash_places_every_chunk_where_a_list_per_bucket_does() {
        // Digests of what the algorithm with a list per bucket (zenpak up
        // to this change, whose containers match the engine's) gave.
        let expected = [
            (1usize, "f62b5aa7b957948d"),
            (2, "b880cafce2bf4a89"),
            (3, "1dbce29086c86b98"),
            (10, "1fdb366c457a6ab4"),
            (257, "308b84ba9a0463e5"),
            (2000, "1fe5d687a8c160c1"),
            (20_000, "c90bde5aaa1bebf8"),
        ];
        for (n, digest_then) in expected {
            let ids: Vec<ChunkId> = (0..n as u64)
                .map(|i| {
                    ChunkId::new(
                        i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (i % 7),
                        (i % 3) as u16,
                        ChunkType::BulkData,
                        EngineVersion::UE5_3,
                    )
                })
                .collect();
            assert_eq!(digest(&build_perfect_hash(&ids)), digest_then, "{n} chunks");
        }
    }

    #[test]
    fn a_toc_streamed_with_its_directory_index_is_the_toc_written_whole() {
        let mut index = DirectoryIndex::new("../../../");
        for (i, path) in [
            "Game/Content/A.uasset",
            "Game/Content/Sub/B.ubulk",
            "Game/Größe.uasset",
        ]
        .iter()
        .enumerate()
        {
            index.add_file(path, i as u32).unwrap();
        }
        let encoded = index.write();
        assert_eq!(index.encoded_len(), encoded.len() as u64);
        let ids: Vec<ChunkId> = (0..3u64)
            .map(|i| ChunkId::new(i + 7, 0, ChunkType::ExportBundleData, EngineVersion::UE5_3))
            .collect();
        let ph = build_perfect_hash(&ids);
        let toc = Toc {
            header: TocHeader {
                version: TocVersion::PerfectHashWithOverflow,
                entry_count: 3,
                compressed_block_entry_count: 2,
                compression_method_name_count: 1,
                compression_block_size: 65536,
                directory_index_size: encoded.len() as u32,
                partition_count: 1,
                container_id: 5,
                encryption_key_guid: [0; 16],
                container_flags: container_flags::INDEXED | container_flags::COMPRESSED,
                perfect_hash_seeds_count: ph.seeds.len() as u32,
                partition_size: u64::MAX,
                chunks_without_perfect_hash_count: ph.overflow.len() as u32,
            },
            chunk_ids: ph.order.iter().map(|&i| ids[i]).collect(),
            offsets: (0..3)
                .map(|i| OffsetAndLength {
                    offset: i * 65536,
                    length: 100 + i,
                })
                .collect(),
            perfect_hash_seeds: ph.seeds.clone(),
            chunks_without_perfect_hash: ph.overflow.clone(),
            blocks: (0..2)
                .map(|i| CompressionBlock {
                    offset: i * 4096,
                    compressed_size: 90,
                    uncompressed_size: 65536,
                    method_index: 1,
                })
                .collect(),
            compression_methods: vec!["Oodle".to_string()],
            directory_index: encoded,
            metas: (0..3u8)
                .map(|i| ChunkMeta {
                    hash: [i; 20],
                    flags: 0,
                })
                .collect(),
        };
        let whole = toc.write();
        let mut streamed = Vec::new();
        TocSections {
            header: &toc.header,
            chunk_ids: toc.chunk_ids.iter().copied(),
            offsets: toc.offsets.iter().copied(),
            perfect_hash_seeds: &toc.perfect_hash_seeds,
            chunks_without_perfect_hash: &toc.chunks_without_perfect_hash,
            blocks: toc.blocks.iter().copied(),
            compression_methods: ["Oodle"].into_iter(),
            directory_index: IndexSection::Index(&index),
            metas: toc.metas.iter().copied(),
        }
        .write_to(&mut streamed)
        .unwrap();
        assert_eq!(streamed, whole);
        assert_eq!(Toc::read(&streamed).unwrap(), toc);
    }

    #[test]
    fn block_entry_layout() {
        let b = CompressionBlock {
            offset: 0x01_0203_0405,
            compressed_size: 0x0a0b0c,
            uncompressed_size: 0x010000,
            method_index: 2,
        };
        let mut w = Writer::new();
        b.write(&mut w);
        assert_eq!(w.as_slice(), &[5, 4, 3, 2, 1, 0x0c, 0x0b, 0x0a, 0, 0, 1, 2]);
        assert_eq!(
            CompressionBlock::read(&mut Reader::new(w.as_slice())).unwrap(),
            b
        );
    }
}
