//! Writing a container triplet: `<base>.utoc`, `<base>.ucas` and the
//! companion `<base>.pak`.
//!
//! # Library API for the build pipeline
//!
//! ```no_run
//! use zenpak::iostore::{ContainerBuilder, ContainerOptions};
//! use zenpak::iostore::container_header::StoreEntry;
//! use zenpak::EngineVersion;
//! # fn main() -> zenpak::Result<()> {
//! let engine = EngineVersion::UE5_6;
//! let options = ContainerOptions::default(); // no compression, 64 KiB blocks, "../../../"
//! let mut builder = ContainerBuilder::create("target".as_ref(), "MyMod_P", engine, options)?;
//! let package_id = zenpak::hash::package_id("/Game/Maps/Entry");
//! let zen_package: Vec<u8> = Vec::new(); // Zen header + exports
//! builder.add_package(package_id, &zen_package, StoreEntry::default(), "MyGame/Content/Maps/Entry.umap")?;
//! builder.add_bulk_chunk(package_id, zenpak::iostore::chunk::ChunkType::BulkData, 0, &[], "MyGame/Content/Maps/Entry.ubulk")?;
//! builder.add_loose_file("MyGame/Config/DefaultGame.ini", b"[/Script/...]")?;
//! let written = builder.finish()?; // all three files appear only now
//! # Ok(()) }
//! ```
//!
//! * Paths are relative to the mount point (`options.mount_point`, default
//!   `../../../`), `/`-separated, e.g. `MyGame/Content/Maps/Entry.umap`; a
//!   path that starts with the mount point has it stripped. `..`, absolute
//!   paths and backslashes are refused.
//! * Chunk data is compressed and written to the `.ucas` as it is added;
//!   only the TOC entries stay in memory. Loose files stream into the pak.
//! * Everything goes to unique hidden temporary files in the output folder
//!   ([`crate::publish::temporary::TempFile`]); only [`ContainerBuilder::finish`] renames
//!   them, after all three are complete and synced: the old `.pak` is removed
//!   first and the new `.pak` renamed last, because the game finds a
//!   container through its `.pak` and must never pair a new `.utoc` with an
//!   old `.ucas`. Dropping the builder removes the temporaries.
//! * [`ContainerBuilder::add_chunk_pieces`] streams a chunk from files in
//!   bounded buffers, so memory does not grow with a chunk's size.
//! * Output depends only on the inputs and their order: add chunks in a
//!   deterministic order (e.g. sorted by path) to get identical bytes.
//! * The container id is CityHash64 of the lowercased base name as UTF-16
//!   (`FIoContainerId::FromName`), so the files must keep that name.
//! * The container header chunk is written last and never compressed.
//!
//! # Notes and limits
//!
//! * Compression: none, zlib, gzip, zstd, lz4. Zstd is read by retoc/CUE4Parse-style tools, but a
//!   stock engine only decompresses methods it has codecs for (Zlib, LZ4, Oodle): use `zstd` only for
//!   games known to ship it. Oodle is read but never written: asking for it is an `unsupported` error
//!   naming Epic's proprietary Oodle SDK (`Compression::check_writable`, also in
//!   `PakWriter::create_with`).
//! * The encryption key GUID is zero (the game's default key) unless the caller sets it.
//! * Per-version output (TOC, header, hashes, flags, block layout) is listed in the `iostore`
//!   module doc; `tests/containers/iostore_round_trip.rs` checks that writing twice is identical.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::chunk::{ChunkHasher, ChunkId, ChunkType};

mod chunk_paths;
mod fresh;
use super::container_header::{ContainerHeader, StoreEntry, StoreEntryArena};
use super::directory_index::DirectoryIndex;
use super::shader_library::{ConvertedLibrary, ShaHash};
use super::toc::{
    build_perfect_hash_with, container_flags, meta_flags, ChunkMeta, CompressionBlock,
    IndexSection, OffsetAndLength, Toc, TocHeader, TocSections, COMPRESSED_BLOCK_ENTRY_SIZE,
    MAX_BLOCK_SIZE,
};
use crate::compression::Compression;
use crate::error::{Error, Result};
pub use crate::mount::validate_relative_path;
use crate::mount::{common_root, normalize_mount_point};
use crate::pak::crypto::{pad_like_engine, AesKey};
use crate::pak::PakWriter;
use crate::publish::extension::Extension;
use crate::publish::temporary::{Staged, TempFile};
use crate::version::{EngineVersion, ShaderMapHashLayout};
use chunk_paths::ChunkPaths;
use fresh::FreshUcas;

/// Settings of a container.
#[derive(Debug, Clone)]
pub struct ContainerOptions {
    /// Block compression (`None` by default).
    pub compression: Compression,
    /// Compression block size; default 64 KiB. Must be a power of two.
    pub block_size: u32,
    /// Encrypts the `.ucas` blocks, the directory index and the pak.
    pub aes_key: Option<AesKey>,
    /// GUID of the key as the game knows it (zero = the game's default key).
    pub encryption_key_guid: [u8; 16],
    /// Mount point of the directory index and the pak.
    pub mount_point: String,
    /// Whether a `.ucas` written anew is hashed as it is written
    /// ([`WrittenContainer`]'s BLAKE3; on by default). A development build
    /// leaves it off: its outputs are identified by their stamps.
    pub hash_ucas: bool,
}

impl Default for ContainerOptions {
    fn default() -> Self {
        ContainerOptions {
            compression: Compression::None,
            block_size: 64 * 1024,
            aes_key: None,
            encryption_key_guid: [0; 16],
            mount_point: "../../../".to_string(),
            hash_ucas: true,
        }
    }
}

/// The result of [`ContainerBuilder::finish`].
#[derive(Debug, Clone, Serialize)]
pub struct WrittenContainer {
    pub utoc: PathBuf,
    pub ucas: PathBuf,
    pub pak: PathBuf,
    pub container_id: u64,
    pub(crate) chunk_count: usize,
    pub(crate) package_count: usize,
    pub(crate) loose_file_count: usize,
    pub(crate) uncompressed_bytes: u64,
    pub(crate) ucas_bytes: u64,
    /// Whether the previous `.ucas` was extended (a development build)
    /// rather than written anew in the canonical layout.
    pub(crate) appended: bool,
    /// BLAKE3 of the `.ucas`, taken as it was written (`None` when the
    /// previous one was extended: only its new bytes passed through; and
    /// without [`ContainerOptions::hash_ucas`]).
    pub(crate) ucas_blake3: Option<[u8; 32]>,
    /// Chunks taken from the previous container as they were.
    pub(crate) reused_chunks: usize,
}

/// A part of a chunk's data: bytes in memory, or a range of a file that is
/// copied in bounded buffers when the chunk is written.
#[derive(Debug, Clone, Copy)]
pub enum ChunkPiece<'a> {
    Bytes(&'a [u8]),
    File {
        path: &'a Path,
        offset: u64,
        len: u64,
    },
}

impl ChunkPiece<'_> {
    pub(crate) fn len(&self) -> u64 {
        match self {
            ChunkPiece::Bytes(b) => b.len() as u64,
            ChunkPiece::File { len, .. } => *len,
        }
    }
}

/// Reads a chunk's pieces in order, one block at a time.
struct PieceReader<'a> {
    pieces: &'a [ChunkPiece<'a>],
    index: usize,
    within: u64,
    file: Option<std::fs::File>,
}

impl<'a> PieceReader<'a> {
    fn new(pieces: &'a [ChunkPiece<'a>]) -> Self {
        PieceReader {
            pieces,
            index: 0,
            within: 0,
            file: None,
        }
    }

    /// Fills `buf` completely from the pieces (the caller asks only for what remains).
    fn fill(&mut self, buf: &mut [u8]) -> Result<()> {
        let mut filled = 0;
        while filled < buf.len() {
            let Some(piece) = self.pieces.get(self.index) else {
                return Err(Error::internal(
                    "chunk pieces are shorter than their length",
                ));
            };
            let left = piece.len() - self.within;
            if left == 0 {
                self.index += 1;
                self.within = 0;
                self.file = None;
                continue;
            }
            let take = left.min((buf.len() - filled) as u64) as usize;
            match piece {
                ChunkPiece::Bytes(bytes) => {
                    let start = self.within as usize;
                    buf[filled..filled + take].copy_from_slice(&bytes[start..start + take]);
                }
                ChunkPiece::File { path, offset, len } => {
                    // Opened once per piece, without a stat or a seek for
                    // the usual piece that starts at 0: a file shorter
                    // than the piece shows as a short read.
                    if self.file.is_none() {
                        let mut file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
                        let start = offset + self.within;
                        if start > 0 {
                            file.seek(SeekFrom::Start(start))
                                .map_err(|e| Error::io(path, e))?;
                        }
                        self.file = Some(file);
                    }
                    let file = self.file.as_mut().expect("opened above");
                    match file.read_exact(&mut buf[filled..filled + take]) {
                        Ok(()) => {}
                        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                            let size = file.metadata().map_err(|e| Error::io(path, e))?.len();
                            return Err(Error::invalid(format!(
                                "bytes {offset}..{} are needed but the file has {size}",
                                offset.saturating_add(*len)
                            ))
                            .in_file(path)
                            .with_hint("the file changed during the build; build again"));
                        }
                        Err(e) => return Err(Error::io(path, e)),
                    }
                }
            }
            self.within += take as u64;
            filled += take;
        }
        Ok(())
    }
}

/// Where the `.ucas` bytes go.
enum UcasOut {
    /// A new file under a temporary name, published with the triplet.
    Fresh(FreshUcas),
    /// The previous build's `.ucas`, extended at its end.
    Appending(BufWriter<Extension>),
    Finished,
}

/// A `.ucas` ready to publish.
enum CompletedUcas {
    /// Written anew, with the BLAKE3 hash of its bytes (when asked for).
    Staged(Staged, Option<[u8; 32]>),
    Extended(Extension),
}

impl UcasOut {
    fn write_all(&mut self, bytes: &[u8]) -> Result<std::io::Result<()>> {
        match self {
            UcasOut::Fresh(w) => Ok(w.write_all(bytes)),
            UcasOut::Appending(w) => Ok(w.write_all(bytes)),
            UcasOut::Finished => Err(Error::internal("container is already finished")),
        }
    }

    /// Flushes and syncs the data.
    fn complete(self, path: &Path) -> Result<CompletedUcas> {
        match self {
            UcasOut::Fresh(fresh) => {
                let (staged, hash) = fresh.finish()?;
                Ok(CompletedUcas::Staged(staged, hash))
            }
            UcasOut::Appending(w) => {
                let mut extension = w
                    .into_inner()
                    .map_err(|e| Error::io(path, e.into_error()))?;
                extension.sync()?;
                Ok(CompletedUcas::Extended(extension))
            }
            UcasOut::Finished => Err(Error::internal("container is already finished")),
        }
    }
}

/// The container a previous build wrote, opened to be extended (see
/// [`ContainerBuilder::create_appending`]).
pub struct PreviousContainer {
    /// Its TOC, less the directory index and the blocks.
    toc: Toc,
    /// Its compression blocks, as the TOC stores them (12 bytes each, not
    /// the 24 of [`CompressionBlock`]: a TOC of 100,000 packages holds
    /// about 250,000).
    blocks: Vec<[u8; COMPRESSED_BLOCK_ENTRY_SIZE as usize]>,
    /// Each chunk id with its old TOC index, sorted by id: only for a TOC
    /// without a perfect hash.
    index: Vec<(ChunkId, u32)>,
    ucas_len: u64,
}

/// A chunk of the previous container a build can keep where it is
/// ([`ContainerBuilder::reusable`]).
#[derive(Debug, Clone)]
pub(crate) struct KeptChunk {
    id: ChunkId,
    length: u64,
    /// Its index in the previous TOC.
    old: usize,
    /// Its compression blocks there.
    blocks: std::ops::Range<usize>,
}

impl PreviousContainer {
    /// Reads the `.utoc` at `utoc` (its `.ucas` beside it must have
    /// `ucas_len` bytes, as the caller recorded). `None` when it was not
    /// written for `engine` with `options` (block size, compression,
    /// encryption) as one partition: then it cannot be extended.
    pub(crate) fn open(
        utoc: &Path,
        ucas_len: u64,
        engine: EngineVersion,
        options: &ContainerOptions,
    ) -> Result<Option<Self>> {
        let toc = Toc::read_file(utoc)?;
        let header = &toc.header;
        let encrypted = header.container_flags & container_flags::ENCRYPTED != 0;
        // Every method it names is the one this build compresses with, so a
        // kept block's method index maps to this container's for that method.
        let same_method = toc.compression_methods.iter().all(|name| {
            Compression::from_engine_name(name).is_ok_and(|m| m == options.compression)
        });
        let fits = toc
            .blocks
            .iter()
            .all(|b| b.offset.saturating_add(b.stored_size()) <= ucas_len);
        if header.version != engine.toc_version()
            || header.compression_block_size != options.block_size
            || encrypted != options.aes_key.is_some()
            || header.encryption_key_guid != options.encryption_key_guid
            || header.partition_count > 1
            || !same_method
            || !fits
        {
            return Ok(None);
        }
        let mut toc = toc;
        // A chunk is found through the TOC's perfect hash, as the engine
        // finds it; a TOC without one gets an index sorted by id.
        let mut index: Vec<(ChunkId, u32)> = Vec::new();
        if toc.perfect_hash_seeds.is_empty() {
            index = toc.chunk_ids.iter().copied().zip(0..).collect();
            index.sort_unstable();
        }
        // Only the chunks' ids, places, blocks and hashes are needed from
        // here; the rest of a big container's TOC is let go.
        toc.directory_index = Vec::new();
        let blocks = std::mem::take(&mut toc.blocks)
            .into_iter()
            .map(CompressionBlock::to_bytes)
            .collect();
        Ok(Some(PreviousContainer {
            toc,
            blocks,
            index,
            ucas_len,
        }))
    }

    /// The blocks of the chunk at old TOC index `old`.
    fn chunk_blocks(&self, old: usize) -> Result<std::ops::Range<usize>> {
        crate::iostore::toc::chunk_block_range(
            old,
            self.toc.offsets[old],
            self.toc.header.compression_block_size,
            self.blocks.len(),
        )
    }

    /// The old TOC index of chunk `id`, if the container has it.
    fn old_index(&self, id: &ChunkId) -> Option<usize> {
        if self.index.is_empty() {
            return self.toc.find(id);
        }
        let at = self
            .index
            .binary_search_by(|(chunk, _)| chunk.cmp(id))
            .ok()?;
        Some(self.index[at].1 as usize)
    }

    /// Length of the `.ucas`.
    pub(crate) fn ucas_len(&self) -> u64 {
        self.ucas_len
    }

    /// Bytes of the `.ucas` that would be dead once extended by a build
    /// that keeps the chunks of `kept_packages` only: chunks replaced by
    /// earlier extensions, and every other chunk of the container.
    pub(crate) fn dead_bytes_keeping(&self, kept_packages: &BTreeSet<u64>) -> u64 {
        let live: u64 = self
            .toc
            .chunk_ids
            .iter()
            .enumerate()
            .filter(|(_, id)| kept_packages.contains(&id.id()))
            .filter_map(|(old, _)| self.chunk_blocks(old).ok())
            .flat_map(|blocks| &self.blocks[blocks])
            .map(|block| CompressionBlock::from_bytes(block).stored_size())
            .sum();
        self.ucas_len.saturating_sub(live)
    }
}

/// A block's bytes in the `.ucas`.
enum StoredPiece {
    /// Bytes of the batch stored as they are.
    Range(std::ops::Range<usize>),
    /// A block stored compressed, padded or encrypted.
    Owned(Vec<u8>),
}

/// Blocks compressed together in parallel: bounds memory to this many blocks.
const BLOCKS_PER_BATCH: usize = 16;

/// A chunk written, waiting for the TOC (a container of 100,000 packages
/// keeps as many: no allocation of its own, 48 bytes).
struct PendingChunk {
    id: ChunkId,
    meta: ChunkMeta,
    /// Its offset and length as the TOC stores them (40 bits each, big
    /// endian; [`ContainerBuilder::register_chunk`] keeps the container
    /// below that).
    offset: [u8; 10],
    /// Its full path's number in [`ContainerBuilder::paths`], or [`NO_PATH`].
    path: u32,
}

const _: () = assert!(std::mem::size_of::<PendingChunk>() == 48);

/// [`PendingChunk::path`] of a chunk without a path.
const NO_PATH: u32 = u32::MAX;

impl PendingChunk {
    fn new(id: ChunkId, offset: OffsetAndLength, meta: ChunkMeta, path: Option<u32>) -> Self {
        PendingChunk {
            id,
            meta,
            offset: offset.to_bytes(),
            path: path.unwrap_or(NO_PATH),
        }
    }

    fn offset(&self) -> OffsetAndLength {
        OffsetAndLength::from_bytes(&self.offset)
    }

    fn path(&self) -> Option<u32> {
        (self.path != NO_PATH).then_some(self.path)
    }
}

/// Builds a container triplet. See the module documentation.
pub struct ContainerBuilder {
    engine: EngineVersion,
    options: ContainerOptions,
    container_id: u64,
    utoc_path: PathBuf,
    ucas_path: PathBuf,
    pak_path: PathBuf,
    ucas: UcasOut,
    temp_pak: Option<TempFile>,
    /// The file the `.ucas` bytes go to (a temporary, or the extended `.ucas`).
    ucas_write_path: PathBuf,
    /// The previous container, when this one extends it.
    previous: Option<PreviousContainer>,
    reused_chunks: usize,
    ucas_position: u64,
    uncompressed_position: u64,
    pak: Option<PakWriter>,
    header: ContainerHeader,
    /// The packages' store entries, encoded, in the order added (the
    /// header's own list stays empty).
    store: StoreEntryArena,
    chunks: Vec<PendingChunk>,
    /// The chunks' full paths ([`PendingChunk::path`]).
    paths: ChunkPaths,
    chunk_ids: HashSet<ChunkId>,
    /// Hashes of the chunks' lowercased paths ([`Self::is_path_taken`]).
    path_hashes: HashSet<u64>,
    /// The compression blocks, each as the TOC stores it (12 bytes).
    blocks: Vec<[u8; COMPRESSED_BLOCK_ENTRY_SIZE as usize]>,
    methods_used: Vec<Compression>,
    loose_files: usize,
    /// The reused buffer a batch of blocks is read into, so streaming a
    /// chunk allocates nothing per block.
    batch_buffer: Vec<u8>,
    /// (localized package id, culture, source package name), applied in `finish`.
    localized: Vec<(u64, String, String)>,
    /// Package id → the shader maps it uses, from the added shader libraries.
    shader_maps: BTreeMap<u64, BTreeSet<ShaHash>>,
    /// Shader group chunks added, with their chunk hash: libraries of one
    /// container may share a group, which is stored once.
    shader_groups: BTreeMap<ChunkId, [u8; 20]>,
}

impl ContainerBuilder {
    /// Starts `<output_dir>/<base_name>.utoc/.ucas/.pak`.
    pub fn create(
        output_dir: &Path,
        base_name: &str,
        engine: EngineVersion,
        options: ContainerOptions,
    ) -> Result<Self> {
        Self::create_with(output_dir, base_name, engine, options, None)
    }

    /// Like [`ContainerBuilder::create`], but extending `previous` (the
    /// container at the same place, opened with [`PreviousContainer::open`]
    /// for the same options): its `.ucas` keeps its bytes, new chunk data is
    /// appended, and [`ContainerBuilder::add_chunk_reused`] takes an
    /// unchanged chunk's blocks where they are. The `.utoc` and `.pak` are
    /// written anew. The result reads like any container but is not the
    /// canonical layout; an unfinished build cuts the `.ucas` back.
    pub(crate) fn create_appending(
        output_dir: &Path,
        base_name: &str,
        engine: EngineVersion,
        options: ContainerOptions,
        previous: PreviousContainer,
    ) -> Result<Self> {
        Self::create_with(output_dir, base_name, engine, options, Some(previous))
    }

    fn create_with(
        output_dir: &Path,
        base_name: &str,
        engine: EngineVersion,
        options: ContainerOptions,
        previous: Option<PreviousContainer>,
    ) -> Result<Self> {
        if base_name.is_empty() || base_name.contains(['/', '\\']) {
            return Err(Error::usage(format!(
                "`{base_name}` is not a valid container base name"
            )));
        }
        if !options.block_size.is_power_of_two()
            || options.block_size < 1024
            || options.block_size > MAX_BLOCK_SIZE
        {
            return Err(Error::usage(format!(
                "compression block size {} must be a power of two between 1 KiB and 8 MiB",
                options.block_size
            )));
        }
        let mount_point = normalize_mount_point(&options.mount_point)?;
        let options = ContainerOptions {
            mount_point,
            ..options
        };
        std::fs::create_dir_all(output_dir).map_err(|e| Error::io(output_dir, e))?;
        let path = |ext: &str| super::container_file(output_dir, base_name, ext);
        let (ucas, ucas_write_path, ucas_position) = match &previous {
            Some(previous) => {
                let extension = Extension::open(&path("ucas"), previous.ucas_len)?;
                let at = extension.path().to_path_buf();
                let out = UcasOut::Appending(BufWriter::with_capacity(1 << 20, extension));
                (out, at, previous.ucas_len)
            }
            None => {
                // The previous `.ucas` stays whole until the new one replaces
                // it, but its cached pages are of no more use: handing them
                // back first frees that memory for the new file's.
                crate::publish::page_cache::drop_cached_pages(&path("ucas"));
                let temp = TempFile::create(&path("ucas"))?;
                let at = temp.path().to_path_buf();
                (
                    UcasOut::Fresh(FreshUcas::new(temp, options.hash_ucas)?),
                    at,
                    0,
                )
            }
        };
        let temp_pak = TempFile::create(&path("pak"))?;
        let pak = PakWriter::create(
            temp_pak.path(),
            engine.pak_version(),
            &options.mount_point,
            options.compression,
            options.aes_key.clone(),
            options.encryption_key_guid,
        )?;
        let container_id = crate::hash::hash_lower_utf16(base_name);
        Ok(ContainerBuilder {
            engine,
            header: ContainerHeader {
                shader_map_hash_layout: engine.is_ue5().then(|| engine.shader_map_hash_layout()),
                ..ContainerHeader::new(engine.container_header_version(), container_id)
            },
            options,
            container_id,
            utoc_path: path("utoc"),
            ucas_path: path("ucas"),
            pak_path: path("pak"),
            ucas,
            temp_pak: Some(temp_pak),
            ucas_write_path,
            previous,
            reused_chunks: 0,
            ucas_position,
            uncompressed_position: 0,
            pak: Some(pak),
            store: StoreEntryArena::default(),
            chunks: Vec::new(),
            paths: ChunkPaths::default(),
            chunk_ids: HashSet::new(),
            path_hashes: HashSet::new(),
            blocks: Vec::new(),
            methods_used: Vec::new(),
            loose_files: 0,
            batch_buffer: Vec::new(),
            localized: Vec::new(),
            shader_maps: BTreeMap::new(),
            shader_groups: BTreeMap::new(),
        })
    }

    /// Seals the companion pak with a game's own cipher instead of the
    /// engine's AES (call before adding loose files).
    pub(crate) fn set_pak_cipher(&mut self, cipher: std::sync::Arc<dyn crate::pak::PakCipher>) {
        self.pak = self.pak.take().map(|pak| pak.with_cipher(cipher));
    }

    pub(crate) fn engine(&self) -> EngineVersion {
        self.engine
    }

    /// The packages' store entries, in the order added (UE4 load orders
    /// are set there once every package is added).
    pub(crate) fn store_entries_mut(&mut self) -> &mut StoreEntryArena {
        &mut self.store
    }

    /// A path below the paths' root (`options.mount_point`), checked.
    fn relative<'p>(&self, path: &'p str) -> Result<&'p str> {
        let rel = path
            .strip_prefix(self.options.mount_point.as_str())
            .unwrap_or(path);
        validate_relative_path(rel)?;
        Ok(rel)
    }

    /// The full path of a chunk file (`../../../Game/Content/X.uasset`).
    fn full_path(&self, path: &str) -> Result<String> {
        Ok(format!(
            "{}{}",
            self.options.mount_point,
            self.relative(path)?
        ))
    }

    /// Adds a package: its export bundle chunk (Zen header + exports), its
    /// store entry and its path in the directory index (`.uasset`/`.umap`).
    /// The entry's bundle size is the chunk's length, as the engine records it.
    pub fn add_package(
        &mut self,
        package_id: u64,
        export_bundle: &[u8],
        mut store_entry: StoreEntry,
        path: &str,
    ) -> Result<()> {
        store_entry.export_bundles_size = export_bundle.len() as u64;
        if self.has_package(package_id) {
            return Err(Error::usage(format!(
                "package id 0x{package_id:016x} ({path}) is added twice"
            )));
        }
        self.add_chunk(
            ChunkId::package_data(package_id, self.engine),
            export_bundle,
            Some(path),
        )?;
        self.store.push(package_id, &store_entry);
        Ok(())
    }

    /// Adds a package whose export-bundle chunk is streamed from `pieces`.
    pub(crate) fn add_package_pieces(
        &mut self,
        package_id: u64,
        pieces: &[ChunkPiece<'_>],
        store_entry: StoreEntry,
        path: &str,
    ) -> Result<()> {
        if self.has_package(package_id) {
            return Err(Error::usage(format!(
                "package id 0x{package_id:016x} ({path}) is added twice"
            )));
        }
        self.add_chunk_pieces(
            ChunkId::package_data(package_id, self.engine),
            pieces,
            Some(path),
        )?;
        self.store.push(package_id, &store_entry);
        Ok(())
    }

    /// Registers an added package as the localized variant of
    /// `source_package_name` for `culture` (see
    /// [`crate::zen::localization`]); the container header lists it.
    pub(crate) fn add_localized_package(
        &mut self,
        package_id: u64,
        culture: &str,
        source_package_name: &str,
    ) {
        self.localized.push((
            package_id,
            culture.to_string(),
            source_package_name.to_string(),
        ));
    }

    /// Adds a converted shader library (UE5 only; see
    /// [`super::shader_library`]): its header chunk, visible by `path`, and
    /// its group chunks, each id once (two libraries may share a group, as
    /// the engine's `ProcessShaderLibraries` shares it). The packages that
    /// use its shader maps list them in their store entries.
    pub fn add_shader_library(&mut self, library: &ConvertedLibrary, path: &str) -> Result<()> {
        if !self.engine.is_ue5() {
            return Err(Error::unsupported(format!(
                "{} containers hold no shader libraries",
                self.engine
            ))
            .with_hint("keep the library in the companion pak"));
        }
        if !library.package_shader_maps.is_empty()
            && self.engine.shader_map_hash_layout() == ShaderMapHashLayout::Hash64
        {
            // 5.8 store entries keep 8-byte shader map hashes (retoc issue
            // #72); how 5.8 derives them from the library's 20-byte hashes
            // is not public, so none is made up.
            return Err(Error::unsupported(format!(
                "`{path}`: {} container headers keep 8-byte shader map hashes, and how they \
                 derive from the shader library's 20-byte hashes is not known",
                self.engine
            ))
            .with_hint(
                "leave the shader library out of the mod, or build for a release up to 5.7",
            ));
        }
        self.add_chunk(library.library_chunk_id, &library.header_bytes, Some(path))?;
        // Each group is streamed into the `.ucas` as it is read; one already
        // added (by another library) is only hashed, to check it is the same.
        library.each_group(|id, pieces| {
            if let Some(&known) = self.shader_groups.get(&id) {
                let length = pieces.iter().map(ChunkPiece::len).sum();
                if known == self.hash_pieces(pieces, length)? {
                    return Ok(());
                }
                return Err(Error::invalid(format!(
                    "shader group chunk {} of `{path}` has other bytes than the group of that id already added",
                    id.to_hex()
                ))
                .with_hint("rebuild the shader libraries from one cook"));
            }
            self.add_chunk_pieces(id, pieces, None)?;
            let hash = self.chunks.last().expect("just added").meta.hash;
            self.shader_groups.insert(id, hash);
            Ok(())
        })?;
        for (package, maps) in &library.package_shader_maps {
            let id = crate::hash::package_id(package);
            self.shader_maps
                .entry(id)
                .or_default()
                .extend(maps.iter().copied());
        }
        Ok(())
    }

    /// Adds a bulk data chunk (`.ubulk`, `.uptnl`, `.m.ubulk`) of a package.
    pub fn add_bulk_chunk(
        &mut self,
        package_id: u64,
        chunk_type: ChunkType,
        index: u16,
        data: &[u8],
        path: &str,
    ) -> Result<()> {
        self.add_chunk(
            ChunkId::new(package_id, index, chunk_type, self.engine),
            data,
            Some(path),
        )
    }

    /// Makes room for what is about to be added (`chunks` chunks, of which
    /// `packages` are packages), so the builder's tables are allocated
    /// once at their size instead of growing to up to twice it.
    pub(crate) fn reserve(&mut self, chunks: usize, packages: usize) {
        self.chunks.reserve(chunks);
        self.store.reserve(packages);
    }

    /// Adds any chunk, optionally visible by path in the directory index.
    pub fn add_chunk(&mut self, id: ChunkId, data: &[u8], path: Option<&str>) -> Result<()> {
        self.add_chunk_pieces(id, &[ChunkPiece::Bytes(data)], path)
    }

    /// Adds a chunk whose data is the concatenation of `pieces`, streamed in
    /// blocks: file ranges are read a block at a time, never whole.
    pub(crate) fn add_chunk_pieces(
        &mut self,
        id: ChunkId,
        pieces: &[ChunkPiece<'_>],
        path: Option<&str>,
    ) -> Result<()> {
        let length: u64 = pieces.iter().map(ChunkPiece::len).sum();
        let path = self.register_chunk(id, path, length)?;
        let aligned = length.next_multiple_of(self.options.block_size as u64);
        // The container header is read before any decompressor is set up;
        // shader groups are compressed by the shader library itself (the
        // engine adds them with `bForceUncompressed`).
        let force_uncompressed = matches!(
            id.chunk_type(self.engine.uses_ue5_chunk_types()),
            ChunkType::ContainerHeader | ChunkType::ShaderCode
        );
        let meta = self.write_chunk_data(pieces, length, force_uncompressed)?;
        let offset = OffsetAndLength {
            offset: self.uncompressed_position,
            length,
        };
        self.uncompressed_position += aligned;
        self.chunks.push(PendingChunk::new(id, offset, meta, path));
        Ok(())
    }

    /// Checks a chunk about to be added (its id and path are new, the
    /// container stays below the TOC's 40-bit offsets) and records its id
    /// and path; returns its full path's number in `paths`. From here the chunk is committed: a
    /// failure while writing it (disk full) leaves the builder unusable, and
    /// dropping it cleans up.
    fn register_chunk(
        &mut self,
        id: ChunkId,
        path: Option<&str>,
        length: u64,
    ) -> Result<Option<u32>> {
        let path = path.map(|p| self.full_path(p)).transpose()?;
        // Paths are compared case-insensitively, by the hash of the
        // lowercased path (see `path_hashes`).
        let path_hash = path
            .as_deref()
            .map(|p| crate::hash::hash_lower_utf16(&p.to_lowercase()));
        if let (Some(p), Some(hash)) = (&path, path_hash) {
            if self.is_path_taken(p, hash) {
                return Err(Error::usage(format!(
                    "`{p}` is added to the container twice"
                )));
            }
        }
        if self.chunk_ids.contains(&id) {
            return Err(Error::usage(format!(
                "chunk {} is added twice",
                id.to_hex()
            )));
        }
        let aligned = length.next_multiple_of(self.options.block_size as u64);
        if self.uncompressed_position + aligned >= 1 << 40
            || self.ucas_position + aligned + aligned / 8 >= 1 << 40
        {
            return Err(Error::usage(
                "a container must stay below 1 TiB; split the mod into several containers",
            ));
        }
        self.chunk_ids.insert(id);
        self.path_hashes.extend(path_hash);
        Ok(match path {
            Some(path) => Some(
                u32::try_from(self.paths.push(&path))
                    .ok()
                    .filter(|n| *n != NO_PATH)
                    .ok_or_else(|| Error::usage("a container holds fewer than 4 billion paths"))?,
            ),
            None => None,
        })
    }

    /// Whether a package of that id is added (its export-bundle chunk is:
    /// no other chunk has that chunk id).
    fn has_package(&self, package_id: u64) -> bool {
        self.chunk_ids
            .contains(&ChunkId::package_data(package_id, self.engine))
    }

    /// Whether a chunk already has `path` (whose lowercased form hashes to
    /// `hash`). Only the hashes are kept; a match is confirmed against the
    /// paths themselves, so two paths that merely share a hash never clash.
    fn is_path_taken(&self, path: &str, hash: u64) -> bool {
        self.path_hashes.contains(&hash) && {
            let lower = path.to_lowercase();
            let mut taken = false;
            self.paths
                .for_each(|_, p| taken = taken || p.to_lowercase() == lower);
            taken
        }
    }

    /// Adds a chunk of the previous container (see
    /// [`ContainerBuilder::create_appending`]) without touching its data:
    /// its blocks stay where they are in the `.ucas`, its hash is the one
    /// recorded. The caller vouches that the chunk's content is unchanged;
    /// `length` is checked. Returns `false`, adding nothing, when there is
    /// no previous container or it has no such chunk of that length: add
    /// the chunk's data instead.
    pub(crate) fn add_chunk_reused(
        &mut self,
        id: ChunkId,
        length: u64,
        path: Option<&str>,
    ) -> Result<bool> {
        let Some(kept) = self.reusable(id, length) else {
            return Ok(false);
        };
        self.keep_chunk(kept, path)?;
        Ok(true)
    }

    /// Adds a chunk [`ContainerBuilder::reusable`] found (see
    /// [`ContainerBuilder::add_chunk_reused`]).
    pub(crate) fn keep_chunk(&mut self, kept: KeptChunk, path: Option<&str>) -> Result<()> {
        let KeptChunk {
            id,
            length,
            old,
            blocks,
        } = kept;
        let path = self.register_chunk(id, path, length)?;
        let Some(previous) = &self.previous else {
            return Err(Error::internal(
                "a chunk of the previous container is kept after it was let go",
            ));
        };
        let meta = previous.toc.metas[old];
        let (methods_used, compression) = (&mut self.methods_used, self.options.compression);
        self.blocks.extend(previous.blocks[blocks].iter().map(|b| {
            let block = CompressionBlock::from_bytes(b);
            // A block compressed then is compressed with this build's
            // method (the same, see `PreviousContainer::open`), under its
            // number here.
            let method_index = match block.method_index {
                0 => 0,
                _ => method_index(methods_used, compression),
            };
            CompressionBlock {
                method_index,
                ..block
            }
            .to_bytes()
        }));
        let offset = OffsetAndLength {
            offset: self.uncompressed_position,
            length,
        };
        self.chunks.push(PendingChunk::new(id, offset, meta, path));
        self.uncompressed_position += length.next_multiple_of(self.options.block_size as u64);
        self.reused_chunks += 1;
        Ok(())
    }

    /// Whether the container extends a previous one.
    pub(crate) fn is_extending(&self) -> bool {
        self.previous.is_some()
    }

    /// The chunk `id` of the previous container, to keep with
    /// [`ContainerBuilder::keep_chunk`], when it has it with `length` bytes.
    pub(crate) fn reusable(&self, id: ChunkId, length: u64) -> Option<KeptChunk> {
        let previous = self.previous.as_ref()?;
        let old = previous.old_index(&id)?;
        if previous.toc.offsets[old].length != length {
            return None;
        }
        let blocks = previous.chunk_blocks(old).ok()?;
        Some(KeptChunk {
            id,
            length,
            old,
            blocks,
        })
    }

    /// [`ContainerBuilder::add_chunk_reused`] for a package's export-bundle
    /// chunk, with its store entry.
    pub(crate) fn add_package_reused(
        &mut self,
        package_id: u64,
        length: u64,
        store_entry: StoreEntry,
        path: &str,
    ) -> Result<bool> {
        let id = ChunkId::package_data(package_id, self.engine);
        let Some(kept) = self.reusable(id, length) else {
            return Ok(false);
        };
        self.keep_package(package_id, kept, store_entry, path)?;
        Ok(true)
    }

    /// [`ContainerBuilder::keep_chunk`] for a package's export-bundle
    /// chunk (found for `package_id`), with its store entry.
    pub(crate) fn keep_package(
        &mut self,
        package_id: u64,
        kept: KeptChunk,
        store_entry: StoreEntry,
        path: &str,
    ) -> Result<()> {
        if self.has_package(package_id) {
            return Err(Error::usage(format!(
                "package id 0x{package_id:016x} ({path}) is added twice"
            )));
        }
        self.keep_chunk(kept, Some(path))?;
        self.store.push(package_id, &store_entry);
        Ok(())
    }

    /// Splits a chunk into blocks, compresses, pads, encrypts and writes
    /// them, a batch of blocks at a time; blocks stored as they are (no
    /// compression, encryption or padding) go straight from the batch's
    /// buffer, several at once (no copy of them is made).
    fn write_chunk_data(
        &mut self,
        pieces: &[ChunkPiece<'_>],
        length: u64,
        force_uncompressed: bool,
    ) -> Result<ChunkMeta> {
        let mut hasher = ChunkHasher::new(self.engine.chunk_hash_kind());
        let mut flags = 0;
        let method = if force_uncompressed {
            Compression::None
        } else {
            self.options.compression
        };
        let block_size = self.options.block_size as usize;
        // Blocks stored as they are (no compression, no key) go from the
        // inputs straight into a new `.ucas`'s buffers, hashed there.
        let in_place = method == Compression::None
            && self.options.aes_key.is_none()
            && matches!(self.ucas, UcasOut::Fresh(_));
        let mut reader = PieceReader::new(pieces);
        let mut remaining = length;
        let mut batch = std::mem::take(&mut self.batch_buffer);
        let result = (|| -> Result<()> {
            while remaining > 0 {
                let take = remaining.min((block_size * BLOCKS_PER_BATCH) as u64) as usize;
                if in_place {
                    remaining -= take as u64;
                    // Every block is whole but the chunk's last, which is
                    // padded (a copy) unless it fills its AES blocks.
                    let last_block = match take % block_size {
                        0 => block_size,
                        short => short,
                    };
                    let tail = match remaining == 0
                        && !last_block.is_multiple_of(crate::pak::crypto::AES_BLOCK)
                    {
                        true => last_block,
                        false => 0,
                    };
                    self.fill_as_is(take - tail, &mut reader, &mut hasher)?;
                    if tail > 0 {
                        batch.resize(tail, 0);
                        reader.fill(&mut batch)?;
                        hasher.update(&batch);
                        self.store_batch(&batch, method, &mut flags)?;
                    }
                    continue;
                }
                batch.resize(take, 0);
                reader.fill(&mut batch)?;
                remaining -= take as u64;
                // The chunk hash is taken on another core (when one is
                // free) while the blocks are stored.
                let (stored, ()) = rayon::join(
                    || self.store_batch(&batch, method, &mut flags),
                    || hasher.update(&batch),
                );
                stored?;
            }
            Ok(())
        })();
        self.batch_buffer = batch;
        result?;
        Ok(ChunkMeta {
            hash: hasher.finish(),
            flags,
        })
    }

    /// Stores the next `len` bytes of `reader` as whole blocks, neither
    /// compressed nor encrypted, read straight into the new `.ucas`'s
    /// buffers and given to `hasher` there (no copy in between).
    fn fill_as_is(
        &mut self,
        len: usize,
        reader: &mut PieceReader<'_>,
        hasher: &mut ChunkHasher,
    ) -> Result<()> {
        let block_size = self.options.block_size as usize;
        for at in (0..len).step_by(block_size) {
            let size = (len - at).min(block_size);
            self.place_block(size, size, 0, size);
        }
        let UcasOut::Fresh(ucas) = &mut self.ucas else {
            return Err(Error::internal("blocks stored in place need a new .ucas"));
        };
        let fill = |bytes: &mut [u8]| {
            reader.fill(bytes)?;
            hasher.update(bytes);
            Ok(())
        };
        ucas.fill_in_place(len, fill, |path, e| Error::io(path, e))
    }

    /// The chunk hash of `pieces` (`length` bytes), read a batch at a time.
    fn hash_pieces(&mut self, pieces: &[ChunkPiece<'_>], length: u64) -> Result<[u8; 20]> {
        let mut hasher = ChunkHasher::new(self.engine.chunk_hash_kind());
        let mut reader = PieceReader::new(pieces);
        let mut batch = std::mem::take(&mut self.batch_buffer);
        let mut remaining = length;
        let result = (|| -> Result<()> {
            while remaining > 0 {
                let take = remaining.min(self.options.block_size as u64 * BLOCKS_PER_BATCH as u64);
                batch.resize(take as usize, 0);
                reader.fill(&mut batch)?;
                hasher.update(&batch);
                remaining -= take;
            }
            Ok(())
        })();
        self.batch_buffer = batch;
        result.map(|()| hasher.finish())
    }

    /// Stores one batch of a chunk's blocks in the `.ucas`: each block
    /// compressed when that makes it smaller, padded and encrypted as the
    /// container needs, its entry added to the block table. `flags` gets
    /// the chunk's COMPRESSED flag when a block is compressed.
    fn store_batch(&mut self, batch: &[u8], method: Compression, flags: &mut u8) -> Result<()> {
        let block_size = self.options.block_size as usize;
        let blocks: Vec<&[u8]> = batch.chunks(block_size).collect();
        // Blocks compress independently, so a batch uses every core;
        // results come back in block order, keeping output stable.
        let packed: Vec<Option<Vec<u8>>> = if method == Compression::None {
            vec![None; blocks.len()]
        } else {
            use rayon::prelude::*;
            blocks
                .par_iter()
                .map(|block| {
                    method
                        .compress(block)
                        .map(|p| (p.len() < block.len()).then_some(p))
                })
                .collect::<Result<_>>()?
        };
        let mut stored_pieces: Vec<StoredPiece> = Vec::new();
        let mut at = 0;
        for (block, packed) in blocks.iter().zip(packed) {
            let range = at..at + block.len();
            at = range.end;
            let as_is = packed.is_none()
                && self.options.aes_key.is_none()
                && block.len().is_multiple_of(crate::pak::crypto::AES_BLOCK);
            let (compressed_size, method_index, piece) = if as_is {
                (block.len(), 0u8, StoredPiece::Range(range))
            } else {
                let (mut stored, method_index) = match packed {
                    Some(p) => {
                        *flags |= meta_flags::COMPRESSED;
                        (p, method_index(&mut self.methods_used, method))
                    }
                    None => (block.to_vec(), 0u8),
                };
                let compressed_size = stored.len();
                pad_like_engine(&mut stored);
                if let Some(key) = &self.options.aes_key {
                    key.encrypt(&mut stored);
                }
                (compressed_size, method_index, StoredPiece::Owned(stored))
            };
            let stored_len = match &piece {
                StoredPiece::Range(r) => r.len(),
                StoredPiece::Owned(bytes) => bytes.len(),
            };
            self.place_block(compressed_size, block.len(), method_index, stored_len);
            // Neighbouring ranges are written (and hashed) as one.
            match (stored_pieces.last_mut(), piece) {
                (Some(StoredPiece::Range(last)), StoredPiece::Range(r)) if last.end == r.start => {
                    last.end = r.end;
                }
                (_, piece) => stored_pieces.push(piece),
            }
        }
        for piece in &stored_pieces {
            let bytes = match piece {
                StoredPiece::Range(r) => &batch[r.clone()],
                StoredPiece::Owned(bytes) => bytes.as_slice(),
            };
            self.ucas
                .write_all(bytes)?
                .map_err(|e| Error::io(&self.ucas_write_path, e))?;
        }
        Ok(())
    }

    /// Adds the entry of a block stored next in the `.ucas` (`stored_len`
    /// bytes there, padding included) to the block table.
    fn place_block(
        &mut self,
        compressed_size: usize,
        uncompressed_size: usize,
        method_index: u8,
        stored_len: usize,
    ) {
        self.blocks.push(
            CompressionBlock {
                offset: self.ucas_position,
                compressed_size: compressed_size as u32,
                uncompressed_size: uncompressed_size as u32,
                method_index,
            }
            .to_bytes(),
        );
        self.ucas_position += stored_len as u64;
    }

    /// Adds a loose (non-package) file to the companion pak.
    pub fn add_loose_file(&mut self, path: &str, data: &[u8]) -> Result<()> {
        let rel = self.relative(path)?.to_string();
        self.pak
            .as_mut()
            .ok_or_else(|| Error::internal("container is already finished"))?
            .add_file(&rel, data)?;
        self.loose_files += 1;
        Ok(())
    }

    /// Adds the file at `source` to the companion pak as the loose file
    /// `path`, streamed from disk (see [`PakWriter::add_file_from`]).
    /// Returns the BLAKE3 of the bytes read.
    pub(crate) fn add_loose_file_from(&mut self, path: &str, source: &Path) -> Result<[u8; 32]> {
        let rel = self.relative(path)?.to_string();
        let hash = self
            .pak
            .as_mut()
            .ok_or_else(|| Error::internal("container is already finished"))?
            .add_file_from(&rel, source)?;
        self.loose_files += 1;
        Ok(hash)
    }

    /// Writes the container header chunk, the TOC and the pak index, then
    /// renames the three files into place.
    // Long on purpose: the TOC is assembled field by field in the order the
    // engine lays it out, and the three files are published in one place.
    pub fn finish(mut self) -> Result<WrittenContainer> {
        // The chunks of the previous container are all added: its tables
        // (its whole TOC) go before the header and the TOC are made.
        self.previous = None;
        // Every chunk but the header's is added (whose id is new, and path
        // none): what checked them goes before the TOC is made.
        self.chunk_ids = HashSet::new();
        self.path_hashes = HashSet::new();
        // The engine lists packages by id (`CreateContainerHeader` sorts its
        // store entries with `Algo::Sort` on the package id); ids are
        // unique (a package added twice is refused).
        self.store.sort_by_id();
        // Each package's shader maps, sorted (`ProcessShaderLibraries` sorts
        // `ShaderMapHashes`).
        if !self.shader_maps.is_empty() {
            let maps = std::mem::take(&mut self.shader_maps);
            self.store = self
                .store
                .with_shader_maps(|id| maps.get(&id).map(|m| m.iter()));
        }
        // Localized packages in the same order, by their own id.
        self.localized.sort();
        for (id, culture, source) in std::mem::take(&mut self.localized) {
            self.header.add_localized_package(&culture, &source, id);
        }
        let header = self.header.write_with(&self.store)?;
        self.add_chunk(
            ChunkId::container_header(self.container_id, self.engine),
            &header,
            None,
        )?;
        // The store entries are in the header chunk now.
        drop(header);
        let package_count = self.store.len();
        self.store = StoreEntryArena::default();

        let ucas =
            std::mem::replace(&mut self.ucas, UcasOut::Finished).complete(&self.ucas_write_path)?;

        let toc_version = self.engine.toc_version();
        let chunks = std::mem::take(&mut self.chunks);
        let (ordered, seeds, overflow) = if toc_version.has_perfect_hash() {
            let ph = build_perfect_hash_with(chunks.len(), |i| chunks[i].id);
            (ph.order, ph.seeds, ph.overflow)
        } else {
            ((0..chunks.len()).collect(), Vec::new(), Vec::new())
        };

        // The engine's mount point: the indexed files' common root.
        let paths = std::mem::take(&mut self.paths);
        let mount_point = common_root(|each| paths.for_each(|_, p| each(p)));
        let mut index = DirectoryIndex::new(&mount_point);
        let mut path = String::new();
        for (toc_index, &original) in ordered.iter().enumerate() {
            if let Some(number) = chunks[original].path() {
                paths.get(number as usize, &mut path);
                index.add_file(&path[mount_point.len()..], toc_index as u32)?;
            }
        }
        // The paths are in the directory index now.
        drop(paths);
        // An encrypted index is sealed whole; a plain one is encoded as it
        // is written.
        let sealed = self.options.aes_key.as_ref().map(|key| {
            let mut bytes = index.write();
            pad_like_engine(&mut bytes);
            key.encrypt(&mut bytes);
            bytes
        });
        let (directory_index, directory_index_size) = match &sealed {
            Some(bytes) => (IndexSection::Bytes(bytes), bytes.len() as u64),
            None => (IndexSection::Index(&index), index.encoded_len()),
        };
        let directory_index_size = u32::try_from(directory_index_size)
            .map_err(|_| Error::usage("the container's directory index must stay below 4 GiB; split the mod into several containers"))?;
        let chunk_count = chunks.len();
        let uncompressed_bytes = chunks.iter().map(|c| c.offset().length).sum();

        let mut flags = container_flags::INDEXED;
        if self
            .blocks
            .iter()
            .any(|b| CompressionBlock::from_bytes(b).method_index != 0)
        {
            flags |= container_flags::COMPRESSED;
        }
        if self.options.aes_key.is_some() {
            flags |= container_flags::ENCRYPTED;
        }
        let header = TocHeader {
            version: toc_version,
            entry_count: chunk_count as u32,
            compressed_block_entry_count: self.blocks.len() as u32,
            compression_method_name_count: self.methods_used.len() as u32,
            compression_block_size: self.options.block_size,
            directory_index_size,
            partition_count: if toc_version.has_partitions() { 1 } else { 0 },
            container_id: self.container_id,
            encryption_key_guid: self.options.encryption_key_guid,
            container_flags: flags,
            perfect_hash_seeds_count: seeds.len() as u32,
            partition_size: if toc_version.has_partitions() {
                u64::MAX
            } else {
                0
            },
            chunks_without_perfect_hash_count: overflow.len() as u32,
        };
        // Each chunk's id, place and hash go from its pending record to the
        // file in TOC order: the TOC is written as it is encoded.
        let in_order = || ordered.iter().map(|&i| &chunks[i]);
        let sections = TocSections {
            header: &header,
            chunk_ids: in_order().map(|c| c.id),
            offsets: in_order().map(PendingChunk::offset),
            perfect_hash_seeds: &seeds,
            chunks_without_perfect_hash: &overflow,
            blocks: self.blocks.iter().map(CompressionBlock::from_bytes),
            compression_methods: self.methods_used.iter().map(|m| m.engine_name()),
            directory_index,
            metas: in_order().map(|c| c.meta),
        };
        let mut utoc = TempFile::create(&self.utoc_path)?;
        let at = utoc.path().to_path_buf();
        let mut out = BufWriter::with_capacity(1 << 16, &mut utoc);
        sections
            .write_to(&mut out)
            .and_then(|()| out.flush())
            .map_err(|e| Error::io(&at, e))?;
        drop(out);
        drop((index, sealed, chunks, ordered, seeds, overflow));
        self.blocks = Vec::new();
        let utoc = utoc.stage()?;

        self.pak
            .take()
            .ok_or_else(|| Error::internal("container is already finished"))?
            .finish()?;
        let pak = self
            .temp_pak
            .take()
            .ok_or_else(|| Error::internal("container is already finished"))?
            .stage()?;

        // The old `.pak` goes first and the new one comes last: at no instant
        // does the folder hold a `.pak` beside a `.utoc`/`.ucas` of another
        // build. An extended `.ucas` is in place already: its old bytes are
        // untouched, so it serves the old `.utoc` until the new one replaces it.
        let (appended, ucas_blake3) = match ucas {
            CompletedUcas::Staged(ucas, hash) => {
                // The staged .ucas, .utoc and .pak in that order, the old
                // .pak removed first.
                crate::publish::publish(vec![self.pak_path.clone()], vec![ucas, utoc, pak])?;
                (false, hash)
            }
            CompletedUcas::Extended(extension) => {
                crate::publish::publish_with_extensions(
                    vec![self.pak_path.clone()],
                    vec![utoc, pak],
                    vec![extension],
                )?;
                (true, None)
            }
        };
        Ok(WrittenContainer {
            utoc: self.utoc_path.clone(),
            ucas: self.ucas_path.clone(),
            pak: self.pak_path.clone(),
            container_id: self.container_id,
            chunk_count,
            package_count,
            loose_file_count: self.loose_files,
            uncompressed_bytes,
            ucas_bytes: self.ucas_position,
            appended,
            ucas_blake3,
            reused_chunks: self.reused_chunks,
        })
    }
}

/// Writes the concatenation of `pieces` to `out`, a block at a time.
pub fn write_pieces(pieces: &[ChunkPiece<'_>], out: &mut dyn Write, out_path: &Path) -> Result<()> {
    let mut reader = PieceReader::new(pieces);
    let mut remaining: u64 = pieces.iter().map(ChunkPiece::len).sum();
    let mut buffer = vec![0u8; (remaining.min(1 << 20)) as usize];
    while remaining > 0 {
        let take = remaining.min(buffer.len() as u64) as usize;
        reader.fill(&mut buffer[..take])?;
        out.write_all(&buffer[..take])
            .map_err(|e| Error::io(out_path, e))?;
        remaining -= take as u64;
    }
    Ok(())
}

/// The TOC's number for compression `method` (1-based; 0 is none),
/// adding it to `methods_used` the first time.
fn method_index(methods_used: &mut Vec<Compression>, method: Compression) -> u8 {
    match methods_used.iter().position(|m| *m == method) {
        Some(i) => i as u8 + 1,
        None => {
            methods_used.push(method);
            methods_used.len() as u8
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_is_added_once_whatever_its_case() {
        let dir = tempfile::tempdir().unwrap();
        let engine = EngineVersion::UE5_6;
        let mut builder =
            ContainerBuilder::create(dir.path(), "Paths_P", engine, ContainerOptions::default())
                .unwrap();
        let chunk = |n| ChunkId::new(n, 0, ChunkType::BulkData, engine);
        builder
            .add_chunk(chunk(1), b"one", Some("Game/Content/\u{c4}/One.ubulk"))
            .unwrap();
        builder
            .add_chunk(chunk(2), b"two", Some("Game/Content/\u{c4}/Two.ubulk"))
            .unwrap();
        let twice = builder
            .add_chunk(chunk(3), b"again", Some("game/CONTENT/\u{e4}/one.ubulk"))
            .unwrap_err();
        assert!(twice.to_string().contains("twice"), "{twice}");
        let written = builder.finish().unwrap();
        assert_eq!(
            written.chunk_count, 3,
            "two chunks and the container header"
        );
    }
}
