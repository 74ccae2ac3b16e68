//! Reading a container back: the TOC, chunks by index or path (streamed
//! block by block, each chunk's hash checked), the container header,
//! and [`Container::verify`], which checks everything a game relies on.
//!
//! `Container::open_with_keys` parses the TOC (every count checked against the bytes that remain),
//! takes the key named by the header's GUID from the key ring, decrypts the directory index, and maps
//! partitions (`X.ucas`, `X_s1.ucas`, … by block offset / partition size), so game containers read
//! too. `read_chunk_to` handles one compression block at a time (at most 16 MiB stored and 16 MiB
//! decompressed, the 24-bit limits of a block entry): decrypt, decompress (zlib and gzip strictly:
//! the stream must end at the block's end and its checksum match, as the engine's `uncompress`
//! insists; Oodle via `oozextract`, a decoder panic turned into an error), hash (SHA-1 in UE4, BLAKE3-160
//! in UE5) and compare at the end; an all-zero recorded hash means none was recorded (`verify` warns).
//! Errors name the chunk (`chunk 3 (<id>, <path>)`), the block (`block 0 (TOC block 17, .ucas offset
//! N)`), the `.ucas` file and offset, and the likely cause (wrong key or corrupt `.ucas`).
//!
//! # Reader policy: where a block's bytes lie
//!
//! One rule, [`CompressionBlock::data_size`], used by the block read and the layout check alike, so
//! every command and `GameView` take the same files. The engine reads a block as its compressed size
//! aligned to 16 (the AES block) from its offset. A block's *data* is its compressed size (the whole
//! aligned size when encrypted); the padding past it is slack that may reach into the next block or
//! up to 15 bytes past the end of the file. retoc writes containers that way and games load them, so
//! they are read, with an `unpadded-blocks` note in `verify -v` ([`Container::layout_notes`]).
//!
//! # Layout checks
//!
//! [`Container::layout_errors`] checks, without reading data, what makes a small `.utoc` a bomb: each
//! chunk starts on a block boundary and its blocks' sizes add up to its length (none larger than the
//! block size); no two chunks use the same blocks; no two blocks share data bytes; every block's data
//! lies inside its partition file. `verify` reports these (and inflates nothing then); `unpack` and
//! `get` refuse the container before writing anything.
//!
//! # `verify`
//!
//! Every chunk decompresses and matches its hash and is found through the perfect-hash lookup; the
//! container header parses (UE4 tried as `Initial`, then `PreInitial`), its id equals the TOC's, every
//! store entry has a package chunk; `Indexed` set, `Signed` not; container id matches the file stem
//! (warning); the companion `.pak` exists, its index parts and every entry match their SHA-1s.
//! Findings are `Diagnostic`s in a `VerifyReport`; `zenpak verify` exits 1 on any error.
//!
//! # On-demand containers
//!
//! A TOC flagged `OnDemand` (bit 4, 16, of `EIoContainerFlags`; the engine's
//! `IoContainerHeader.h`/`IoStore.h`, also CUE4Parse's `EIoContainerFlags`)
//! belongs to a game that streams some chunks from a content server: their
//! data need not be in the local `.ucas` (which may be missing altogether).
//! Such a container opens without its `.ucas`; a chunk with a block that
//! does not lie inside its local partition file is *remote*
//! ([`Container::is_remote`]): `list` marks it (`remote` in JSON), `verify`
//! checks only local chunks and notes how many are remote
//! (`on-demand-remote`), the layout checks leave remote blocks out, and
//! reading one is an `unsupported` error naming the chunk (`unpack` skips
//! it with a warning, `get` fails). A container without the flag keeps every
//! check: a truncated `.ucas` is still an error. zenpak never writes the flag.
//!
//! # `unpack`
//!
//! Files go through `publish::output_dir::OutputDir`: a unique temporary beside the target, renamed only
//! when its data checked out, deleted otherwise; absolute paths, `..`, drive letters, backslashes and
//! symlinked targets or folders are refused (`publish::output_dir::create_folders_inside`). A package chunk
//! (`ExportBundleData`) is written as `X.uzenasset` / `X.uzenmap` (never mistaken for a legacy
//! package by `build`; `inspect` reads both); bulk chunks keep their names; chunks without a path go
//! to `_chunks/<id>.<type>`.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::chunk::{ChunkHasher, ChunkId, ChunkType};
use super::container_header::ContainerHeader;
use super::directory_index::DirectoryIndex;
use super::toc::{container_flags, CompressionBlock, Toc};
use crate::compression::Compression;
use crate::diagnostic::Diagnostic;
use crate::error::{Error, ErrorKind, Result};
use crate::pak::crypto::{AesKey, KeyRing};
use crate::pak::PakReader;
use crate::pool::in_order_on_pool;
use crate::version::TocVersion;

/// One chunk as listed.
#[derive(Debug, Clone, Serialize)]
pub struct ChunkInfo {
    pub index: usize,
    pub(crate) id: String,
    pub chunk_type: ChunkType,
    pub(crate) size: u64,
    pub(crate) compressed_size: u64,
    pub path: Option<String>,
    /// An on-demand chunk whose data is not in the local `.ucas`.
    pub(crate) remote: bool,
}

/// An open container.
pub struct Container {
    pub utoc_path: PathBuf,
    pub ucas_path: PathBuf,
    pub toc: Toc,
    pub(crate) directory_index: Option<DirectoryIndex>,
    /// TOC index → path relative to the mount point.
    pub paths: ChunkPaths,
    methods: Vec<Option<Compression>>,
    /// The key the container's blocks are decrypted with (only when it is encrypted).
    key: Option<AesKey>,
    /// The keys the user gave, for the companion pak (which may be encrypted on its own).
    keys: KeyRing,
    /// On-demand containers: chunks whose data is not in the local `.ucas`.
    remote: std::collections::BTreeSet<usize>,
    /// Partition files opened so far, by number (see [`PartitionFiles`]).
    partitions: std::sync::Mutex<BTreeMap<u64, std::sync::Arc<OpenPartition>>>,
}

/// The directory index's path of each indexed chunk of a container
/// (relative to the mount point, as the view sees them), all in one
/// buffer: a container of a million chunks keeps its paths' bytes and 16
/// bytes each, not a `String` and a map node each.
#[derive(Debug, Clone, Default)]
pub struct ChunkPaths {
    names: crate::arena::Arena,
    /// (TOC index, piece of `names`), sorted by TOC index, one per index.
    by_index: Vec<(u32, u32)>,
    /// Bytes of the paths.
    bytes: u64,
}

impl ChunkPaths {
    /// Adds the path of chunk `index` (a later path of the same chunk
    /// replaces it, once [`finish`](Self::finish)ed).
    fn push(&mut self, index: u32, path: &str) {
        self.by_index.push((index, self.names.len() as u32));
        self.names.push(path.as_bytes());
        self.bytes += path.len() as u64;
    }

    /// Sorts the paths by TOC index, the last given for an index kept.
    fn finish(&mut self) {
        self.by_index.reverse();
        self.by_index.sort_by_key(|&(index, _)| index);
        self.by_index.dedup_by_key(|&mut (index, _)| index);
        self.by_index.shrink_to_fit();
        self.names.shrink_to_fit();
    }

    fn name(&self, piece: u32) -> &str {
        // Every piece was pushed from a `&str`.
        std::str::from_utf8(self.names.get(piece as usize).unwrap_or_default()).unwrap_or_default()
    }

    /// The path of chunk `index`, if the index gives it one.
    pub fn get(&self, index: usize) -> Option<&str> {
        let at = self
            .by_index
            .binary_search_by_key(&index, |&(i, _)| i as usize)
            .ok()?;
        Some(self.name(self.by_index[at].1))
    }

    /// How many chunks have a path.
    pub fn len(&self) -> usize {
        self.by_index.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_index.is_empty()
    }

    /// Every chunk with a path and its path, by TOC index.
    pub fn iter(&self) -> impl Iterator<Item = (usize, &str)> + '_ {
        self.by_index
            .iter()
            .map(|&(index, piece)| (index as usize, self.name(piece)))
    }

    /// Every path, by TOC index.
    pub fn values(&self) -> impl Iterator<Item = &str> + '_ {
        self.iter().map(|(_, path)| path)
    }

    /// What the paths hold in memory, about: their bytes and 16 bytes each.
    pub(crate) fn memory(&self) -> u64 {
        self.bytes + 16 * self.names.len() as u64
    }
}

/// What a `verify` found: errors and warnings as diagnostics, plus counts.
#[derive(Debug, Clone, Default, Serialize)]
pub struct VerifyReport {
    pub chunks_checked: usize,
    pub packages: usize,
    pub pak_entries: usize,
    /// Chunks of on-demand containers whose data is not local (not checked).
    pub remote_chunks: usize,
    pub errors: Vec<Diagnostic>,
    pub warnings: Vec<Diagnostic>,
    /// What is unusual but loads in the game (shown by `verify -v`).
    pub notes: Vec<Diagnostic>,
    /// Findings per kind: the first few of each are kept, the rest counted
    /// (`more-of-kind`, added by [`VerifyReport::finish`]).
    #[serde(skip)]
    pub(crate) kinds: crate::diagnostic::PerKind,
}

impl VerifyReport {
    pub fn is_ok(&self) -> bool {
        self.errors.is_empty()
    }

    pub(crate) fn error(&mut self, error: &Error) {
        for d in Diagnostic::from_error(error) {
            self.push(d);
        }
    }

    fn warn(&mut self, code: &str, message: String, file: &Path) {
        self.push(Diagnostic::warning(code, message).with_file(file));
    }

    /// Adds a finding to its list, unless enough of its kind are there
    /// already (then it is only counted).
    pub(crate) fn push(&mut self, d: Diagnostic) {
        if self.kinds.admit(&d) {
            self.list(d.level).push(d);
        }
    }

    /// The list findings of `level` go into.
    fn list(&mut self, level: crate::diagnostic::Level) -> &mut Vec<Diagnostic> {
        match level {
            crate::diagnostic::Level::Error => &mut self.errors,
            crate::diagnostic::Level::Warning => &mut self.warnings,
            crate::diagnostic::Level::Note => &mut self.notes,
        }
    }

    /// Adds another report's findings and counts.
    pub(crate) fn merge(&mut self, other: VerifyReport) {
        self.chunks_checked += other.chunks_checked;
        self.packages += other.packages;
        self.pak_entries += other.pak_entries;
        self.remote_chunks += other.remote_chunks;
        self.kinds.absorb_hidden(&other.kinds);
        for d in other
            .errors
            .into_iter()
            .chain(other.warnings)
            .chain(other.notes)
        {
            self.push(d);
        }
    }

    /// Adds, for each kind of finding with more than were kept, how many
    /// more there were (`more-of-kind`). Called once, when the report is complete.
    pub fn finish(&mut self) {
        for d in self.kinds.summaries() {
            self.list(d.level).push(d);
        }
    }
}

/// What [`Container::check_layout`] found.
#[derive(Default)]
struct LayoutCheck {
    errors: Vec<Error>,
    notes: Vec<Diagnostic>,
}

/// Largest block a block entry can describe: its sizes are 24-bit.
const MAX_BLOCK_BYTES: u64 = (1 << 24) - 1;

fn io_at(path: &Path, offset: u64, e: std::io::Error) -> Error {
    Error::new(ErrorKind::Io(e)).in_file(path).at(offset)
}

thread_local! {
    /// See [`PartitionFiles::KEPT_BUFFER`].
    static BLOCK_BUFFER: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
}

/// A partition file, opened by the first read that needs it and shared by
/// every thread reading the container (reads give their offset).
struct OpenPartition {
    path: PathBuf,
    file: File,
    len: u64,
}

/// Where a chunk read puts the chunk: streamed to a writer, or into a
/// slice as long as the chunk (`at` bytes filled so far).
enum ChunkOut<'a> {
    Stream(&'a mut dyn Write),
    Slice { dest: &'a mut [u8], at: usize },
}

impl ChunkOut<'_> {
    /// The next `data` of the chunk (the read keeps it within the chunk's length).
    fn write(&mut self, data: &[u8]) -> Result<()> {
        match self {
            ChunkOut::Stream(sink) => sink
                .write_all(data)
                .map_err(|e| Error::new(ErrorKind::Io(e)).within("writing the chunk's data")),
            ChunkOut::Slice { dest, at } => {
                dest[*at..*at + data.len()].copy_from_slice(data);
                *at += data.len();
                Ok(())
            }
        }
    }
}

/// The partition files a chunk read uses, and its block buffer.
struct PartitionFiles<'a> {
    container: &'a Container,
    /// The block read last: one buffer for all the chunk's blocks.
    buffer: Vec<u8>,
    /// The partition read last, by number: a chunk's blocks are nearly
    /// always in one, so the container's table is not locked per block.
    last: Option<(u64, std::sync::Arc<OpenPartition>)>,
}

impl<'a> PartitionFiles<'a> {
    /// Buffers a thread keeps for the blocks it reads (up to this size):
    /// one allocation for all the chunks a thread reads, not one per chunk.
    const KEPT_BUFFER: usize = 4 << 20;

    fn new(container: &'a Container) -> Self {
        PartitionFiles {
            container,
            buffer: BLOCK_BUFFER.try_with(|b| b.take()).unwrap_or_default(),
            last: None,
        }
    }

    /// Reads `len` bytes at `offset` of the container's `.ucas` address
    /// space (partition `offset / partition_size`).
    /// The bytes are in the returned buffer, with the file's path and the
    /// offset in it.
    fn read(
        &mut self,
        offset: u64,
        len: u64,
    ) -> Result<(&mut [u8], std::sync::Arc<OpenPartition>, u64)> {
        let (partition, in_file) = self.locate(offset, len)?;
        // At most the file's size (checked by `locate`). The buffer only
        // grows: it is zeroed once, up to the largest block read.
        let len = len as usize;
        if self.buffer.len() < len {
            self.buffer.resize(len, 0);
        }
        let buf = &mut self.buffer[..len];
        read_exact_at(&partition.file, buf, in_file)
            .map_err(|e| io_at(&partition.path, in_file, e))?;
        Ok((buf, partition, in_file))
    }

    /// Fills `dest` from `offset` of the `.ucas` address space.
    fn read_into(&mut self, offset: u64, dest: &mut [u8]) -> Result<()> {
        let (partition, in_file) = self.locate(offset, dest.len() as u64)?;
        read_exact_at(&partition.file, dest, in_file)
            .map_err(|e| io_at(&partition.path, in_file, e))
    }

    /// The partition holding `len` bytes at `offset`, and their offset in
    /// its file, checked to lie inside it.
    fn locate(&mut self, offset: u64, len: u64) -> Result<(std::sync::Arc<OpenPartition>, u64)> {
        let size = self.container.partition_size();
        let (number, in_file) = (offset / size, offset % size);
        let partition = match &self.last {
            Some((n, open)) if *n == number => std::sync::Arc::clone(open),
            _ => {
                let open = self.container.partition(number)?;
                self.last = Some((number, std::sync::Arc::clone(&open)));
                open
            }
        };
        let file_len = partition.len;
        if in_file.checked_add(len).is_none_or(|end| end > file_len) {
            return Err(Error::format(
                in_file,
                format!("the block ({len} bytes) runs past the end of the file ({file_len} bytes)"),
            )
            .in_file(&partition.path)
            .with_hint("the .ucas is truncated, or belongs to another .utoc"));
        }
        Ok((partition, in_file))
    }
}

/// Fills `buf` from `file` at `offset`, leaving the file's position to
/// other readers.
pub(crate) fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
    }
    #[cfg(windows)]
    {
        let (mut done, mut at) = (0, offset);
        while done < buf.len() {
            match std::os::windows::fs::FileExt::seek_read(file, &mut buf[done..], at) {
                Ok(0) => return Err(std::io::ErrorKind::UnexpectedEof.into()),
                Ok(n) => {
                    done += n;
                    at += n as u64;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

impl Drop for PartitionFiles<'_> {
    fn drop(&mut self) {
        if self.buffer.capacity() <= Self::KEPT_BUFFER {
            let buffer = std::mem::take(&mut self.buffer);
            // Ignored while the thread ends (its buffer is gone then).
            let _ = BLOCK_BUFFER.try_with(|b| b.set(buffer));
        }
    }
}

impl Container {
    /// Opens `X.utoc` (with `X.ucas` beside it). `key` decrypts an encrypted
    /// container and an encrypted companion pak.
    pub fn open(utoc: &Path, key: Option<AesKey>) -> Result<Self> {
        Self::open_with_keys(utoc, &KeyRing::single(key))
    }

    /// Opens `X.utoc`, taking the key its TOC's GUID names from `keys`.
    pub fn open_with_keys(utoc: &Path, keys: &KeyRing) -> Result<Self> {
        let toc = Toc::read_file(utoc)?;
        let ucas_path = super::companion(utoc, "ucas");
        let on_demand = toc.header.container_flags & container_flags::ON_DEMAND != 0;
        if !ucas_path.is_file() && !on_demand {
            return Err(Error::io(
                &ucas_path,
                std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    "the container data file (.ucas) is missing",
                ),
            ));
        }
        // Unknown methods are kept as None here so that listing works; a
        // block that uses one fails when it is read.
        let methods = toc
            .compression_methods
            .iter()
            .map(|name| Compression::from_engine_name(name).ok())
            .collect();
        let encrypted = toc.header.container_flags & container_flags::ENCRYPTED != 0;
        let key = if encrypted {
            Some(
                keys.key_for(&toc.header.encryption_key_guid)
                    .ok_or_else(|| {
                        Error::key("the container is encrypted and no AES key was given")
                            .in_file(utoc)
                            .with_hint(
                                "give the key with --aes-key, --aes-key-file or ZENPAK_AES_KEY",
                            )
                    })?,
            )
        } else {
            None
        };
        let mut container = Container {
            utoc_path: utoc.to_path_buf(),
            ucas_path,
            toc,
            directory_index: None,
            paths: ChunkPaths::default(),
            methods,
            key,
            keys: keys.clone(),
            remote: Default::default(),
            partitions: Default::default(),
        };
        container.read_directory_index()?;
        if on_demand {
            container.remote = container.find_remote_chunks();
        }
        Ok(container)
    }

    /// Whether chunk `index` is an on-demand chunk whose data is not in the
    /// local `.ucas` (always false without the `OnDemand` flag).
    pub fn is_remote(&self, index: usize) -> bool {
        self.remote.contains(&index)
    }

    /// The chunks of an on-demand container that have a block outside the
    /// local partition files (or in a missing one).
    fn find_remote_chunks(&self) -> std::collections::BTreeSet<usize> {
        let size = self.partition_size();
        let encrypted = self.is_encrypted();
        let mut lengths: BTreeMap<u64, Option<u64>> = BTreeMap::new();
        let mut local = |b: &CompressionBlock| {
            let partition = b.offset / size;
            let len = *lengths.entry(partition).or_insert_with(|| {
                std::fs::metadata(self.partition_path(partition))
                    .ok()
                    .map(|m| m.len())
            });
            let end = (b.offset % size).checked_add(b.data_size(encrypted));
            len.zip(end).is_some_and(|(len, end)| end <= len)
        };
        (0..self.toc.chunk_ids.len())
            .filter(|&i| self.toc.offsets[i].length > 0)
            .filter(|&i| match self.toc.chunk_blocks(i) {
                Ok(range) => !self.toc.blocks[range].iter().all(&mut local),
                Err(_) => false,
            })
            .collect()
    }

    fn read_directory_index(&mut self) -> Result<()> {
        let utoc = &self.utoc_path;
        if self.toc.directory_index.is_empty() {
            return Ok(());
        }
        let mut raw = self.toc.directory_index.clone();
        if let Some(key) = &self.key {
            key.decrypt(&mut raw)
                .map_err(|e| e.in_file(utoc).within("directory index"))?;
        }
        let index = DirectoryIndex::read(&raw).map_err(|e| {
            let e = e.in_file(utoc).within("directory index");
            if self.key.is_some() {
                e.with_hint("the directory index does not parse: is the AES key right?")
            } else {
                e
            }
        })?;
        // Paths are kept as the view sees them (`SN2/Content/X.uasset`),
        // whatever common root the writer chose as mount point.
        let chunks = self.toc.chunk_ids.len();
        let mut paths = ChunkPaths::default();
        index
            .each_file(crate::limits::MAX_VIEW_TABLE_BYTES, |path, toc_index| {
                let path = crate::mount::virtual_path(&index.mount_point, path);
                if toc_index as usize >= chunks {
                    return Err(Error::invalid(format!(
                        "file `{path}` points at chunk {toc_index}, but the TOC has {chunks}"
                    ))
                    .within("directory index"));
                }
                paths.push(toc_index, &path);
                Ok(())
            })
            .map_err(|e| e.in_file(utoc))?;
        paths.finish();
        self.paths = paths;
        self.directory_index = Some(index);
        Ok(())
    }

    /// Directory-index paths no path the game looks up can reach
    /// (`entry-name-unreachable`), the first few of each kind.
    pub(crate) fn index_warnings(&self) -> Vec<Diagnostic> {
        let mut kinds = crate::diagnostic::PerKind::default();
        let mut out = Vec::new();
        for path in self.paths.values() {
            if let Some(why) = crate::mount::unreachable_name(path) {
                let d = crate::pak::reader::unreachable_warning("container path", path, why)
                    .with_file(&self.utoc_path);
                if kinds.admit(&d) {
                    out.push(d);
                }
            }
        }
        out.extend(kinds.summaries());
        out
    }

    /// Whether the container's blocks are AES-encrypted.
    pub(crate) fn is_encrypted(&self) -> bool {
        self.toc.header.container_flags & container_flags::ENCRYPTED != 0
    }

    /// Whether chunk types use UE5 numbering (TOC versions of UE5 releases).
    pub(crate) fn is_ue5(&self) -> bool {
        self.toc.header.version >= TocVersion::PerfectHash
    }

    pub fn mount_point(&self) -> &str {
        self.directory_index
            .as_ref()
            .map(|d| d.mount_point.as_str())
            .unwrap_or("")
    }

    /// The type of chunk `index`.
    pub fn chunk_type(&self, index: usize) -> ChunkType {
        self.toc.chunk_ids[index].chunk_type(self.is_ue5())
    }

    pub fn chunks(&self) -> Vec<ChunkInfo> {
        (0..self.toc.chunk_ids.len())
            .map(|i| {
                let compressed_size = self
                    .toc
                    .chunk_blocks(i)
                    .map(|r| {
                        self.toc.blocks[r]
                            .iter()
                            .map(|b| b.compressed_size as u64)
                            .sum()
                    })
                    .unwrap_or(0);
                ChunkInfo {
                    index: i,
                    id: self.toc.chunk_ids[i].to_hex(),
                    chunk_type: self.chunk_type(i),
                    size: self.toc.offsets[i].length,
                    compressed_size,
                    path: self.paths.get(i).map(str::to_string),
                    remote: self.is_remote(i),
                }
            })
            .collect()
    }

    fn partition_size(&self) -> u64 {
        let h = &self.toc.header;
        if h.version.has_partitions() && h.partition_size != 0 {
            h.partition_size
        } else {
            u64::MAX
        }
    }

    /// Partition `number`'s file, opened on first use.
    fn partition(&self, number: u64) -> Result<std::sync::Arc<OpenPartition>> {
        let lock = || self.partitions.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(open) = lock().get(&number) {
            return Ok(std::sync::Arc::clone(open));
        }
        let path = self.partition_path(number);
        let file = crate::limits::open_regular(&path)?;
        let len = file.metadata().map_err(|e| Error::io(&path, e))?.len();
        let open = std::sync::Arc::new(OpenPartition { path, file, len });
        // Another thread may have opened it meanwhile: the first one stays.
        Ok(std::sync::Arc::clone(lock().entry(number).or_insert(open)))
    }

    /// Large game containers are split into partitions (`X.ucas`,
    /// `X_s1.ucas`, …); block offsets run through all of them.
    fn partition_path(&self, partition: u64) -> PathBuf {
        if partition == 0 {
            return self.ucas_path.clone();
        }
        let stem = super::container_stem(&self.ucas_path).unwrap_or("");
        self.ucas_path
            .with_file_name(format!("{stem}_s{partition}.ucas"))
    }

    /// How a chunk is named in errors: index, id and path.
    fn chunk_label(&self, index: usize) -> String {
        let mut label = format!("chunk {index} ({}", self.toc.chunk_ids[index].to_hex());
        if let Some(p) = self.paths.get(index) {
            label.push_str(", ");
            label.push_str(p);
        }
        label.push(')');
        label
    }

    /// Reads chunk `index` (decrypted, decompressed, hash checked).
    pub fn read_chunk(&self, index: usize) -> Result<Vec<u8>> {
        let capacity = self
            .toc
            .offsets
            .get(index)
            .map_or(0, |o| o.length.min(1 << 26));
        let mut out = Vec::with_capacity(capacity as usize);
        self.read_chunk_to(index, &mut out)?;
        Ok(out)
    }

    /// Streams chunk `index` into `sink` one compression block at a time,
    /// then checks the chunk's hash: on a mismatch the error comes after
    /// `sink` got the data, so callers that write files write to a
    /// temporary they discard on error ([`crate::publish::output_dir::OutputDir`]). Errors name
    /// the chunk, the block and its `.ucas` offset.
    pub(crate) fn read_chunk_to(&self, index: usize, sink: &mut dyn Write) -> Result<u64> {
        self.read_chunk_checked(index, ChunkOut::Stream(sink))
    }

    /// Reads chunk `index` into `dest`, which must be as long as the chunk
    /// (as [`Container::read_chunk_to`], the hash checked at the end).
    /// Stored blocks are read straight into `dest`, not through a buffer.
    pub(crate) fn read_chunk_into(&self, index: usize, dest: &mut [u8]) -> Result<()> {
        let length = self.toc.offsets.get(index).map(|o| o.length);
        if length != Some(dest.len() as u64) {
            return Err(Error::internal(format!(
                "chunk {index} read into {} bytes, not its length",
                dest.len()
            )));
        }
        self.read_chunk_checked(index, ChunkOut::Slice { dest, at: 0 })
            .map(|_| ())
    }

    fn read_chunk_checked(&self, index: usize, out: ChunkOut<'_>) -> Result<u64> {
        if index >= self.toc.chunk_ids.len() {
            return Err(Error::internal(format!(
                "chunk index {index} is out of range"
            )));
        }
        self.read_chunk_inner(index, out)
            .map_err(|e| e.within(self.chunk_label(index)).in_file(&self.ucas_path))
    }

    fn read_chunk_inner(&self, index: usize, mut out: ChunkOut<'_>) -> Result<u64> {
        if self.is_remote(index) {
            return Err(Error::unsupported(
                "the chunk is on demand: its data is not in the local .ucas (the game streams it)",
            )
            .with_hint(
                "zenpak reads only local data; the chunk's content is not on this machine",
            ));
        }
        let length = self.toc.offsets[index].length;
        let range = self.toc.chunk_blocks(index)?;
        let first_block = range.start;
        self.check_chunk_blocks(index)?;
        let mut files = PartitionFiles::new(self);
        let mut hasher = ChunkHasher::new(if self.is_ue5() {
            crate::version::ChunkHashKind::Blake3_160
        } else {
            crate::version::ChunkHashKind::Sha1
        });
        let mut remaining = length;
        for (i, b) in self.toc.blocks[range].iter().enumerate() {
            let global = first_block + i;
            let block_label =
                || format!("block {i} (TOC block {global}, .ucas offset {})", b.offset);
            // A stored block read into a slice goes straight to its place.
            if let ChunkOut::Slice { dest, at } = &mut out {
                let size = b.compressed_size as u64;
                let stored = !self.is_encrypted() && b.method_index == 0;
                if stored && size <= remaining {
                    self.block_method(b).map_err(|e| e.within(block_label()))?;
                    let place = &mut dest[*at..*at + size as usize];
                    files
                        .read_into(b.offset, place)
                        .map_err(|e| e.within(block_label()))?;
                    hasher.update(place);
                    *at += size as usize;
                    remaining -= size;
                    continue;
                }
            }
            let data = self
                .read_block(&mut files, b)
                .map_err(|e| e.within(block_label()))?;
            let take = (data.len() as u64).min(remaining) as usize;
            hasher.update(&data[..take]);
            out.write(&data[..take])?;
            remaining -= take as u64;
        }
        if remaining != 0 {
            return Err(Error::invalid(format!(
                "the chunk's blocks hold {} bytes, the TOC says {length}",
                length - remaining
            )));
        }
        let recorded = self.toc.metas[index].hash;
        // An all-zero hash means none was recorded (some tools write none).
        if recorded != [0; 20] {
            let actual = hasher.finish();
            if actual != recorded {
                return Err(Error::new(ErrorKind::HashMismatch {
                    algorithm: if self.is_ue5() { "BLAKE3" } else { "SHA-1" },
                    expected: crate::hash::hex(&recorded),
                    actual: crate::hash::hex(&actual),
                })
                .with_hint(if self.key.is_some() {
                    "the .ucas is corrupt or the AES key is wrong"
                } else {
                    "the .ucas is corrupt"
                }));
            }
        }
        Ok(length)
    }

    /// One block's data, decrypted and decompressed (a stored block is
    /// given from the read buffer as it is).
    fn read_block<'f>(
        &self,
        files: &'f mut PartitionFiles,
        b: &CompressionBlock,
    ) -> Result<std::borrow::Cow<'f, [u8]>> {
        let (data, partition, in_file) = files.read(b.offset, b.data_size(self.is_encrypted()))?;
        let located = |e: Error| e.in_file(&partition.path).at(in_file);
        if let Some(key) = &self.key {
            key.decrypt(data).map_err(located)?;
        }
        let data = &data[..(b.compressed_size as usize).min(data.len())];
        match self.block_method(b).map_err(located)? {
            // `block_method` checked that both sizes are equal.
            Compression::None => Ok(std::borrow::Cow::Borrowed(data)),
            method => method
                .decompress(data, b.uncompressed_size as usize)
                .map(std::borrow::Cow::Owned)
                .map_err(located),
        }
    }

    fn block_method(&self, b: &CompressionBlock) -> Result<Compression> {
        if b.method_index == 0 {
            if b.compressed_size != b.uncompressed_size {
                return Err(Error::invalid(format!(
                    "the block is stored uncompressed, but its sizes differ ({} and {})",
                    b.compressed_size, b.uncompressed_size
                )));
            }
            return Ok(Compression::None);
        }
        match self.methods.get(b.method_index as usize - 1) {
            Some(Some(m)) => Ok(*m),
            Some(None) => Err(Error::unsupported(format!(
                "the block uses compression method `{}`, which zenpak does not know",
                self.toc.compression_methods[b.method_index as usize - 1]
            ))),
            None => Err(Error::invalid(format!(
                "the block uses compression method {}, which the TOC does not name",
                b.method_index
            ))),
        }
    }

    /// What one chunk's read relies on: it starts on a block boundary, its
    /// blocks' sizes add up to its length, and no block is larger than the
    /// container's block size.
    fn check_chunk_blocks(&self, index: usize) -> Result<()> {
        let o = self.toc.offsets[index];
        let block_size = self.toc.header.compression_block_size as u64;
        if o.length == 0 {
            return Ok(());
        }
        if !o.offset.is_multiple_of(block_size) {
            return Err(Error::invalid(format!(
                "the chunk starts at {} in the container, not on a block boundary ({block_size})",
                o.offset
            )));
        }
        let range = self.toc.chunk_blocks(index)?;
        let blocks = &self.toc.blocks[range];
        let mut total = 0u64;
        for (i, b) in blocks.iter().enumerate() {
            if b.uncompressed_size as u64 > block_size.min(MAX_BLOCK_BYTES) {
                return Err(Error::invalid(format!(
                    "block {i} says it holds {} bytes, more than the block size {block_size}",
                    b.uncompressed_size
                )));
            }
            total += b.uncompressed_size as u64;
        }
        let last = blocks.last().map_or(0, |b| b.uncompressed_size as u64);
        if total < o.length || total - last >= o.length {
            return Err(Error::invalid(format!(
                "the chunk is {} bytes, its {} blocks hold {total}",
                o.length,
                blocks.len()
            )));
        }
        Ok(())
    }

    /// Container-wide structure that reading every chunk relies on, checked
    /// without reading any data: every chunk's blocks fit its length, no
    /// two chunks share blocks, no two blocks share `.ucas` bytes, and every
    /// block lies inside its partition file (each block's bytes being its
    /// [`CompressionBlock::data_size`]: the alignment slack is not shared
    /// bytes). `verify` reports these, `unpack` refuses a container that
    /// has any.
    pub fn layout_errors(&self) -> Vec<Error> {
        self.check_layout().errors
    }

    /// What is unusual in the layout but loads in the game: blocks stored
    /// back to back without their alignment padding. For `verify -v`.
    pub fn layout_notes(&self) -> Vec<Diagnostic> {
        self.check_layout().notes
    }

    fn check_layout(&self) -> LayoutCheck {
        let mut check = LayoutCheck::default();
        let errors = &mut check.errors;
        let in_toc = |e: Error| e.in_file(&self.utoc_path).within("TOC");
        // Chunks: each its own run of blocks.
        let mut runs = Vec::new();
        let mut remote_blocks = std::collections::BTreeSet::new();
        for &index in &self.remote {
            if let Ok(range) = self.toc.chunk_blocks(index) {
                remote_blocks.extend(range);
            }
        }
        for index in 0..self.toc.chunk_ids.len() {
            if let Err(e) = self.check_chunk_blocks(index) {
                errors.push(in_toc(e.within(self.chunk_label(index))));
                continue;
            }
            if let Ok(range) = self.toc.chunk_blocks(index) {
                if !range.is_empty() && self.toc.offsets[index].length > 0 {
                    runs.push((range.start, range.end, index));
                }
            }
        }
        runs.sort();
        for pair in runs.windows(2) {
            let (a, b) = (pair[0], pair[1]);
            if b.0 < a.1 {
                errors.push(in_toc(
                    Error::invalid(format!(
                        "{} and {} use the same compression blocks ({}..{} and {}..{})",
                        self.chunk_label(a.2),
                        self.chunk_label(b.2),
                        a.0,
                        a.1,
                        b.0,
                        b.1
                    ))
                    .with_hint(
                        "the container is corrupt or was made to exhaust memory; zenpak refuses it",
                    ),
                ));
                if errors.len() > 100 {
                    return check;
                }
            }
        }
        // Blocks: each its own bytes of the .ucas.
        let encrypted = self.is_encrypted();
        let size = self.partition_size();
        let mut spans: Vec<(u64, u64, usize)> = self
            .toc
            .blocks
            .iter()
            .enumerate()
            .filter(|(i, b)| b.compressed_size > 0 && !remote_blocks.contains(i))
            .map(|(i, b)| (b.offset, b.offset.saturating_add(b.data_size(encrypted)), i))
            .collect();
        spans.sort();
        let mut slack_into_next = 0usize;
        for pair in spans.windows(2) {
            let (a, b) = (pair[0], pair[1]);
            if b.0 < a.1 {
                errors.push(in_toc(
                    Error::invalid(format!(
                        "compression blocks {} and {} share .ucas bytes ({}..{} and {}..{})",
                        a.2, b.2, a.0, a.1, b.0, b.1
                    ))
                    .with_hint(
                        "the container is corrupt or was made to exhaust memory; zenpak refuses it",
                    ),
                ));
                if errors.len() > 100 {
                    return check;
                }
            } else if a.0.saturating_add(self.toc.blocks[a.2].stored_size()) > b.0 {
                slack_into_next += 1;
            }
        }
        let mut slack_past_end = 0usize;
        let mut lengths: BTreeMap<u64, Option<u64>> = BTreeMap::new();
        // Per partition: blocks past its end, and the first of them.
        let mut past_end: BTreeMap<u64, (usize, usize, u64, u64, u64)> = BTreeMap::new();
        for &(start, end, i) in &spans {
            let partition = start / size;
            let file_len = *lengths.entry(partition).or_insert_with(|| {
                std::fs::metadata(self.partition_path(partition))
                    .ok()
                    .map(|m| m.len())
            });
            let in_file_end = end - partition * size;
            match file_len {
                None => {
                    errors.push(in_toc(Error::invalid(format!(
                        "compression block {i} lies in partition {partition}, whose file {} is missing",
                        self.partition_path(partition).display()
                    ))));
                    return check;
                }
                Some(len) if in_file_end > len || (end - 1) / size != partition => {
                    // One error per file, however many blocks a truncation cuts off.
                    let entry = past_end.entry(partition).or_insert((0, i, start, end, len));
                    entry.0 += 1;
                }
                Some(len) => {
                    let stored_end = start.saturating_add(self.toc.blocks[i].stored_size());
                    if stored_end - partition * size > len {
                        slack_past_end += 1;
                    }
                }
            }
        }
        for (partition, (count, i, start, end, len)) in past_end {
            let what = if count == 1 {
                format!("compression block {i} ({start}..{end}) lies")
            } else {
                format!("{count} compression blocks, the first block {i} ({start}..{end}), lie")
            };
            check.errors.push(in_toc(
                Error::invalid(format!(
                    "{what} past the end of {} ({len} bytes)",
                    self.partition_path(partition).display()
                ))
                .with_hint("the .ucas is truncated, or belongs to another .utoc"),
            ));
        }
        if check.errors.is_empty() && slack_into_next + slack_past_end > 0 {
            check.notes.push(
                Diagnostic::note(
                    "unpadded-blocks",
                    format!(
                        "compression blocks are stored back to back without their 16-byte alignment \
                         padding ({slack_into_next} reach into the next block, {slack_past_end} past \
                         the end of the .ucas), as retoc writes them; the engine loads this layout"
                    ),
                )
                .with_file(&self.utoc_path),
            );
        }
        check
    }

    pub fn find(&self, id: &ChunkId) -> Option<usize> {
        self.toc.find(id)
    }

    /// The TOC index of the chunk at `path` (relative to the mount point).
    pub fn find_path(&self, path: &str) -> Option<usize> {
        self.paths.iter().find(|&(_, p)| p == path).map(|(i, _)| i)
    }

    /// Parses the container header chunk, if the container has one.
    pub fn container_header(&self) -> Result<Option<ContainerHeader>> {
        let Some(index) = (0..self.toc.chunk_ids.len())
            .find(|&i| self.chunk_type(i) == ChunkType::ContainerHeader)
        else {
            return Ok(None);
        };
        // Read whole, so only within its budget (see `crate::limits`).
        let declared = self.toc.offsets[index].length;
        let ucas_len = std::fs::metadata(&self.ucas_path).map_or(0, |m| m.len());
        crate::limits::check_declared(
            "container header chunk",
            declared,
            crate::limits::MAX_CONTAINER_HEADER_BYTES,
            ucas_len,
        )
        .map_err(|e| {
            e.in_file(&self.utoc_path)
                .within(self.chunk_label(index))
                .within("container header")
        })?;
        let data = self.read_chunk(index)?;
        use super::container_header::ContainerHeaderVersion;
        if self.is_ue5() {
            return ContainerHeader::read(&data, None)
                .map(Some)
                .map_err(|e| e.in_file(&self.ucas_path).within("container header"));
        }
        // Some UE4 games use the older 16-byte store entries; the header
        // has no version field to tell, so try that layout second.
        match ContainerHeader::read(&data, Some(ContainerHeaderVersion::Initial)) {
            Ok(h) => Ok(Some(h)),
            Err(e) => ContainerHeader::read(&data, Some(ContainerHeaderVersion::PreInitial))
                .map(Some)
                .map_err(|_| e.in_file(&self.ucas_path).within("container header")),
        }
    }

    /// Checks every chunk (decompresses, hash matches), the layout, the
    /// container header, the directory index, the lookup table, the
    /// container id against the file name, and the companion pak.
    pub fn verify(&self) -> VerifyReport {
        self.verify_with(true)
    }

    /// [`Container::verify`]; `companion_pak` false skips the companion pak
    /// (for `global.utoc`, which has none).
    pub(crate) fn verify_with(&self, companion_pak: bool) -> VerifyReport {
        let mut report = VerifyReport::default();
        let layout = self.check_layout();
        let layout_ok = layout.errors.is_empty();
        for e in &layout.errors {
            report.error(e);
        }
        report.notes.extend(layout.notes);
        // Chunks are read on the pool; what each shows is reported in chunk order.
        let read = |&i: &usize| -> Result<()> {
            // A container whose blocks overlap is not inflated: that is the bomb.
            if layout_ok && !self.is_remote(i) {
                self.read_chunk_to(i, &mut std::io::sink())?;
            }
            Ok(())
        };
        let chunks: Vec<usize> = (0..self.toc.chunk_ids.len()).collect();
        let lookup = self.toc.lookup();
        let checked = in_order_on_pool(&chunks, read, |&i, read| {
            if self.is_remote(i) {
                report.remote_chunks += 1;
            } else {
                report.chunks_checked += 1;
            }
            if let Err(e) = read {
                report.error(&e);
            }
            if self.toc.metas[i].hash == [0; 20] && self.toc.offsets[i].length > 0 {
                report.warn(
                    "no-chunk-hash",
                    format!(
                        "{} records no hash; its data cannot be checked",
                        self.chunk_label(i)
                    ),
                    &self.utoc_path,
                );
            }
            if lookup.find(&self.toc.chunk_ids[i]) != Some(i) {
                report.error(
                    &Error::invalid(format!(
                        "{} cannot be found through the TOC's lookup table",
                        self.chunk_label(i)
                    ))
                    .in_file(&self.utoc_path),
                );
            }
            Ok(())
        });
        if let Err(e) = checked {
            report.error(&e);
        }
        if !self.remote.is_empty() {
            report.notes.push(self.remote_note());
        }
        if layout_ok && !self.header_is_remote() {
            self.verify_container_header(&mut report);
        }
        self.verify_flags_and_name(&mut report);
        if companion_pak {
            self.verify_pak(&mut report);
        }
        report
    }

    /// Whether the container header chunk is a remote on-demand chunk.
    fn header_is_remote(&self) -> bool {
        self.remote
            .iter()
            .any(|&i| self.chunk_type(i) == ChunkType::ContainerHeader)
    }

    /// `on-demand-remote`: how many chunks are not local, and which.
    fn remote_note(&self) -> Diagnostic {
        const NAMED: usize = 20;
        let mut names: Vec<String> = self
            .remote
            .iter()
            .take(NAMED)
            .map(|&i| self.chunk_label(i))
            .collect();
        if self.remote.len() > NAMED {
            names.push(format!("and {} more", self.remote.len() - NAMED));
        }
        Diagnostic::note(
            "on-demand-remote",
            format!(
                "the container is on demand: {} of {} chunks are not in the local .ucas and were \
                 not checked: {}",
                self.remote.len(),
                self.toc.chunk_ids.len(),
                names.join(", ")
            ),
        )
        .with_file(&self.utoc_path)
    }

    fn verify_container_header(&self, report: &mut VerifyReport) {
        match self.container_header() {
            Ok(Some(h)) => {
                report.packages = h.packages.len();
                if h.container_id != self.toc.header.container_id {
                    report.error(
                        &Error::invalid(format!(
                            "container header id 0x{:016x} differs from the TOC's 0x{:016x}",
                            h.container_id, self.toc.header.container_id
                        ))
                        .in_file(&self.ucas_path),
                    );
                }
                let package_chunks: std::collections::BTreeSet<u64> = (0..self.toc.chunk_ids.len())
                    .filter(|&i| self.chunk_type(i) == ChunkType::ExportBundleData)
                    .map(|i| self.toc.chunk_ids[i].id())
                    .collect();
                for (id, _) in &h.packages {
                    if !package_chunks.contains(id) {
                        report.error(
                            &Error::invalid(format!(
                                "store entry of package 0x{id:016x} has no package chunk"
                            ))
                            .in_file(&self.utoc_path),
                        );
                    }
                }
                let shaders = super::shader_library::check_store_entries(
                    &h.packages,
                    &self.toc.chunk_ids,
                    self.is_ue5(),
                    |i| self.read_chunk(i),
                );
                for message in shaders.errors {
                    report.error(&Error::invalid(message).in_file(&self.utoc_path));
                }
                for message in shaders.warnings {
                    report.warn("shader-map", message, &self.utoc_path);
                }
            }
            Ok(None) => report.warn(
                "no-container-header",
                "the container has no container header chunk".into(),
                &self.utoc_path,
            ),
            Err(e) => report.error(&e),
        }
    }

    fn verify_flags_and_name(&self, report: &mut VerifyReport) {
        let flags = self.toc.header.container_flags;
        if flags & container_flags::INDEXED == 0 {
            report.error(
                &Error::invalid("the container is not flagged Indexed; the game ignores it")
                    .in_file(&self.utoc_path),
            );
        }
        if flags & container_flags::SIGNED != 0 {
            report.warn(
                "signed",
                "the container is flagged Signed; mods normally are not".into(),
                &self.utoc_path,
            );
        }
        if let Some(stem) = super::container_stem(&self.utoc_path) {
            let expected = crate::hash::hash_lower_utf16(stem);
            if expected != self.toc.header.container_id {
                report.warn(
                    "renamed-container",
                    format!(
                        "container id 0x{:016x} is not the hash of the file name `{stem}` (0x{expected:016x}); \
                         the container was renamed after it was built, and two such mods can crash the game together",
                        self.toc.header.container_id
                    ),
                    &self.utoc_path,
                );
            }
        }
    }

    fn verify_pak(&self, report: &mut VerifyReport) {
        let pak = super::companion(&self.utoc_path, "pak");
        if !pak.is_file() {
            report.error(
                &Error::invalid(
                    "the companion .pak is missing; the game will not mount the container",
                )
                .in_file(&pak),
            );
            return;
        }
        match PakReader::open_with_keys(&pak, &self.keys) {
            Ok(reader) => {
                // Each file's mount point is the common root of its own
                // entries, so one lies below the other unless they disagree.
                let (pak_mount, utoc_mount) = (reader.mount_point.as_str(), self.mount_point());
                let related =
                    pak_mount.starts_with(utoc_mount) || utoc_mount.starts_with(pak_mount);
                if !related && !utoc_mount.is_empty() {
                    report.warn(
                        "mount-point",
                        format!(
                            "the pak's mount point `{}` differs from the container's `{}`",
                            reader.mount_point,
                            self.mount_point()
                        ),
                        &pak,
                    );
                }
                report.merge(verify_pak_entries(&reader));
            }
            Err(e) => report.error(&e),
        }
    }
}

/// Reads every entry of a pak to check it (SHA-1s, decompression).
pub(crate) fn verify_pak_entries(reader: &PakReader) -> VerifyReport {
    let mut report = VerifyReport {
        pak_entries: reader.entries.len(),
        ..VerifyReport::default()
    };
    let checked = in_order_on_pool(
        &reader.entries,
        |entry| reader.verify_entry(entry),
        |_, checked| {
            if let Err(e) = checked {
                report.error(&e);
            }
            Ok(())
        },
    );
    if let Err(e) = checked {
        report.error(&e);
    }
    report
}

/// A summary of a container for `inspect`.
#[derive(Debug, Clone, Serialize)]
pub struct ContainerSummary {
    pub toc_version: TocVersion,
    pub container_id: String,
    pub container_id_matches_file_name: bool,
    pub flags: Vec<&'static str>,
    pub(crate) encryption_key_guid: String,
    pub compression_block_size: u32,
    pub compression_methods: Vec<String>,
    pub chunk_count: usize,
    pub block_count: usize,
    pub(crate) partition_count: u32,
    pub perfect_hash_seeds: usize,
    pub chunks_without_perfect_hash: usize,
    pub mount_point: String,
    pub indexed_files: usize,
    pub chunk_types: BTreeMap<String, usize>,
    pub container_header: Option<ContainerHeaderSummary>,
}

/// The container header part of [`ContainerSummary`].
#[derive(Debug, Clone, Serialize)]
pub struct ContainerHeaderSummary {
    pub version: super::container_header::ContainerHeaderVersion,
    pub packages: usize,
    pub localized_packages: usize,
    pub package_redirects: usize,
    pub(crate) optional_segment_packages: usize,
    pub(crate) soft_package_references: usize,
    /// Bytes of one shader map hash in the store entries (20 up to 5.7, 8 in
    /// 5.8), by the store buffer's size; absent when no package has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) shader_map_hash_size: Option<usize>,
}

impl Container {
    pub fn summary(&self) -> Result<ContainerSummary> {
        let h = &self.toc.header;
        let mut flags = Vec::new();
        for (bit, name) in [
            (container_flags::COMPRESSED, "Compressed"),
            (container_flags::ENCRYPTED, "Encrypted"),
            (container_flags::SIGNED, "Signed"),
            (container_flags::INDEXED, "Indexed"),
            (container_flags::ON_DEMAND, "OnDemand"),
        ] {
            if h.container_flags & bit != 0 {
                flags.push(name);
            }
        }
        let mut chunk_types = BTreeMap::new();
        for c in self.chunks() {
            *chunk_types
                .entry(format!("{:?}", c.chunk_type))
                .or_insert(0) += 1;
        }
        let stem = super::container_stem(&self.utoc_path).unwrap_or("");
        // An on-demand container's header may not be local: not summarised.
        let header = if self.header_is_remote() {
            None
        } else {
            self.container_header()?
        };
        let container_header = header.map(|c| ContainerHeaderSummary {
            version: c.version,
            packages: c.packages.len(),
            localized_packages: c.localized_packages.len()
                + c.culture_packages
                    .iter()
                    .map(|p| p.packages.len())
                    .sum::<usize>(),
            package_redirects: c.package_redirects.len(),
            optional_segment_packages: c.optional_segment_package_ids.len(),
            soft_package_references: c
                .soft_package_references
                .as_ref()
                .map_or(0, |s| s.package_ids.len()),
            shader_map_hash_size: c.shader_map_hash_layout.map(|l| l.element_size()),
        });
        Ok(ContainerSummary {
            toc_version: h.version,
            container_id: format!("0x{:016x}", h.container_id),
            container_id_matches_file_name: crate::hash::hash_lower_utf16(stem) == h.container_id,
            flags,
            encryption_key_guid: h
                .encryption_key_guid
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect(),
            compression_block_size: h.compression_block_size,
            compression_methods: self.toc.compression_methods.clone(),
            chunk_count: self.toc.chunk_ids.len(),
            block_count: self.toc.blocks.len(),
            partition_count: h.partition_count,
            perfect_hash_seeds: self.toc.perfect_hash_seeds.len(),
            chunks_without_perfect_hash: self.toc.chunks_without_perfect_hash.len(),
            mount_point: self.mount_point().to_string(),
            indexed_files: self.paths.len(),
            chunk_types,
            container_header,
        })
    }
}

/// Turns layout errors into one error (or none).
pub(crate) fn refuse_layout(mut errors: Vec<Error>) -> Result<()> {
    match errors.len() {
        0 => Ok(()),
        1 => Err(errors.remove(0)),
        n => Err(Error::new(ErrorKind::Many {
            what: "layout checks",
            total: n,
            failures: errors,
        })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A chunk read into a slice (stored blocks straight into place) is the
    /// chunk streamed, for every chunk of a container retoc wrote; a byte
    /// changed in a stored block fails the hash check on that way too.
    #[test]
    fn a_chunk_read_into_a_slice_is_the_chunk_streamed() {
        let Some(corpus) = crate::test_corpus::corpus() else {
            return;
        };
        let peer = corpus.join("peers/retoc/UE5.6-to-zen");
        let container = Container::open(&peer.join("RetocMod_P.utoc"), None).unwrap();
        assert!(container.toc.blocks.iter().all(|b| b.method_index == 0));
        for index in 0..container.toc.chunk_ids.len() {
            let streamed = container.read_chunk(index).unwrap();
            let mut dest = vec![0xAA; streamed.len()];
            container.read_chunk_into(index, &mut dest).unwrap();
            assert_eq!(dest, streamed, "chunk {index}");
            let mut short = vec![0; streamed.len() + 1];
            assert!(container.read_chunk_into(index, &mut short).is_err());
        }

        let dir = tempfile::tempdir().unwrap();
        for ext in ["utoc", "ucas"] {
            let name = format!("RetocMod_P.{ext}");
            std::fs::copy(peer.join(&name), dir.path().join(&name)).unwrap();
        }
        let index = (0..container.toc.chunk_ids.len())
            .max_by_key(|&i| container.toc.offsets[i].length)
            .unwrap();
        let block = container.toc.chunk_blocks(index).unwrap().start;
        let at = container.toc.blocks[block].offset + 10;
        let ucas = dir.path().join("RetocMod_P.ucas");
        let mut bytes = std::fs::read(&ucas).unwrap();
        bytes[at as usize] ^= 0xFF;
        std::fs::write(&ucas, bytes).unwrap();
        let corrupt = Container::open(&dir.path().join("RetocMod_P.utoc"), None).unwrap();
        let mut dest = vec![0; container.toc.offsets[index].length as usize];
        let error = corrupt.read_chunk_into(index, &mut dest).unwrap_err();
        assert_eq!(error.code(), "hash-mismatch");
    }
}
