//! Reading a container back: the TOC, chunks by index or path, the
//! container header, and [`Container::verify`], which checks everything a
//! game relies on.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::chunk::{ChunkId, ChunkType};
use super::container_header::ContainerHeader;
use super::directory_index::DirectoryIndex;
use super::toc::{container_flags, Toc, TocVersion};
use crate::compression::Compression;
use crate::error::{Error, Result};
use crate::pak::crypto::AesKey;
use crate::pak::PakReader;

/// One chunk as listed.
#[derive(Debug, Clone, Serialize)]
pub struct ChunkInfo {
    pub index: usize,
    pub id: String,
    pub chunk_type: ChunkType,
    pub size: u64,
    pub compressed_size: u64,
    pub path: Option<String>,
}

/// An open container.
pub struct Container {
    pub utoc_path: PathBuf,
    pub ucas_path: PathBuf,
    pub toc: Toc,
    pub directory_index: Option<DirectoryIndex>,
    /// TOC index → path relative to the mount point.
    pub paths: BTreeMap<usize, String>,
    methods: Vec<Compression>,
    /// The key the container's blocks are decrypted with (only when it is encrypted).
    key: Option<AesKey>,
    /// The key the user gave, for the companion pak (which may be encrypted on its own).
    pak_key: Option<AesKey>,
}

/// What [`Container::verify`] found.
#[derive(Debug, Clone, Default, Serialize)]
pub struct VerifyReport {
    pub chunks_checked: usize,
    pub packages: usize,
    pub pak_entries: usize,
    pub errors: Vec<String>,
    pub warnings: Vec<String>,
}

impl Container {
    /// Opens `X.utoc` (with `X.ucas` beside it).
    pub fn open(utoc: &Path, key: Option<AesKey>) -> Result<Self> {
        let data = std::fs::read(utoc).map_err(|e| Error::io(utoc, e))?;
        let toc = Toc::read(&data).map_err(|e| e.in_file(utoc))?;
        let ucas_path = utoc.with_extension("ucas");
        if !ucas_path.is_file() {
            return Err(Error::io(
                &ucas_path,
                std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    "the container data file (.ucas) is missing",
                ),
            ));
        }
        let mut methods = Vec::new();
        for name in &toc.compression_methods {
            methods.push(
                Compression::from_engine_name(name)
                    .map_err(|e| e.in_file(utoc).within("TOC compression methods"))?,
            );
        }
        let encrypted = toc.header.container_flags & container_flags::ENCRYPTED != 0;
        if encrypted && key.is_none() {
            return Err(Error::usage(format!(
                "{}: the container is encrypted; give the AES key (ZENPAK_AES_KEY or --aes-key-file)",
                utoc.display()
            )));
        }
        let mut container = Container {
            utoc_path: utoc.to_path_buf(),
            ucas_path,
            toc,
            directory_index: None,
            paths: BTreeMap::new(),
            methods,
            key: if encrypted { key.clone() } else { None },
            pak_key: key,
        };
        if !container.toc.directory_index.is_empty() {
            let mut raw = container.toc.directory_index.clone();
            if let Some(key) = &container.key {
                key.decrypt(&mut raw).map_err(|e| e.in_file(utoc))?;
            }
            let index = DirectoryIndex::read(&raw).map_err(|e| {
                let e = e.in_file(utoc);
                if encrypted {
                    e.with_hint("the directory index does not parse; is the AES key right?")
                } else {
                    e
                }
            })?;
            // Paths are listed below the engine root (`SN2/Content/X.uasset`),
            // whatever common root the writer chose as mount point.
            let below_root = index
                .mount_point
                .strip_prefix(crate::mount::ENGINE_ROOT)
                .unwrap_or("")
                .to_string();
            for (path, toc_index) in index.files_with_paths().map_err(|e| e.in_file(utoc))? {
                let path = format!("{below_root}{path}");
                if toc_index as usize >= container.toc.chunk_ids.len() {
                    return Err(Error::invalid(format!(
                        "file `{path}` points at chunk {toc_index}, but the TOC has {}",
                        container.toc.chunk_ids.len()
                    ))
                    .within("directory index")
                    .in_file(utoc));
                }
                container.paths.insert(toc_index as usize, path);
            }
            container.directory_index = Some(index);
        }
        Ok(container)
    }

    /// Whether chunk types use UE5 numbering (TOC versions of UE5 releases).
    pub fn is_ue5(&self) -> bool {
        self.toc.header.version >= TocVersion::PerfectHash
    }

    pub fn mount_point(&self) -> &str {
        self.directory_index
            .as_ref()
            .map(|d| d.mount_point.as_str())
            .unwrap_or("")
    }

    pub fn chunks(&self) -> Vec<ChunkInfo> {
        let ue5 = self.is_ue5();
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
                    chunk_type: self.toc.chunk_ids[i].chunk_type(ue5),
                    size: self.toc.offsets[i].length,
                    compressed_size,
                    path: self.paths.get(&i).cloned(),
                }
            })
            .collect()
    }

    /// Reads chunk `index` (decrypted, decompressed).
    pub fn read_chunk(&self, index: usize) -> Result<Vec<u8>> {
        self.read_chunk_inner(index)
            .map_err(|e| e.within(format!("chunk {index}")).in_file(&self.ucas_path))
    }

    fn read_chunk_inner(&self, index: usize) -> Result<Vec<u8>> {
        if index >= self.toc.chunk_ids.len() {
            return Err(Error::internal(format!(
                "chunk index {index} is out of range"
            )));
        }
        let length = self.toc.offsets[index].length;
        let range = self.toc.chunk_blocks(index)?;
        if range.is_empty() {
            return Ok(Vec::new());
        }
        let blocks = &self.toc.blocks[range];
        let start = blocks[0].offset;
        let last = blocks[blocks.len() - 1];
        let end = last.offset + last.stored_size();
        // Large game containers are split into partitions (`X.ucas`,
        // `X_s1.ucas`, ...); a chunk never straddles two.
        let h = &self.toc.header;
        let partition_size = if h.version.has_partitions() && h.partition_size != 0 {
            h.partition_size
        } else {
            u64::MAX
        };
        let partition = start / partition_size;
        let ucas = if partition == 0 {
            self.ucas_path.clone()
        } else {
            let stem = self
                .ucas_path
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or("");
            self.ucas_path
                .with_file_name(format!("{stem}_s{partition}.ucas"))
        };
        if end < start {
            return Err(Error::format(start, "the chunk's blocks are out of order"));
        }
        let start_in_file = start - partition * partition_size;
        let end_in_file = end - partition * partition_size;
        let mut file = File::open(&ucas).map_err(|e| Error::io(&ucas, e))?;
        let file_len = file.metadata().map_err(|e| Error::io(&ucas, e))?.len();
        if end_in_file > file_len || end < start {
            return Err(Error::format(
                start,
                format!(
                    "blocks {start}..{end} run past the end of {} ({file_len} bytes)",
                    ucas.display()
                ),
            ));
        }
        file.seek(SeekFrom::Start(start_in_file))
            .map_err(|e| Error::io(&ucas, e))?;
        let mut raw = vec![0u8; (end - start) as usize];
        file.read_exact(&mut raw).map_err(|e| Error::io(&ucas, e))?;
        let mut out = Vec::with_capacity(length.min(1 << 26) as usize);
        let block_size = self.toc.header.compression_block_size as u64;
        let offset_in_first = self.toc.offsets[index].offset % block_size;
        if offset_in_first != 0 {
            return Err(Error::format(0, "chunk does not start on a block boundary"));
        }
        for (i, b) in blocks.iter().enumerate() {
            let from = b.offset.checked_sub(start).ok_or_else(|| {
                Error::format(
                    b.offset,
                    format!("block {i} lies before the chunk's first block"),
                )
            })? as usize;
            let to = from + b.stored_size() as usize;
            if b.offset < start || to > raw.len() {
                return Err(Error::format(
                    b.offset,
                    format!("block {i} lies outside the chunk's range"),
                ));
            }
            let mut data = raw[from..to].to_vec();
            if let Some(key) = &self.key {
                key.decrypt(&mut data)?;
            }
            data.truncate(b.compressed_size as usize);
            let method = if b.method_index == 0 {
                Compression::None
            } else {
                *self
                    .methods
                    .get(b.method_index as usize - 1)
                    .ok_or_else(|| {
                        Error::format(
                            b.offset,
                            format!(
                                "block uses compression method {} the TOC does not name",
                                b.method_index
                            ),
                        )
                    })?
            };
            if method == Compression::None && b.compressed_size != b.uncompressed_size {
                return Err(Error::format(b.offset, "stored block's sizes disagree"));
            }
            out.extend(
                method
                    .decompress(&data, b.uncompressed_size as usize)
                    .map_err(|e| e.within(format!("block at {}", b.offset)))?,
            );
        }
        out.truncate(length as usize);
        if out.len() as u64 != length {
            return Err(Error::invalid(format!(
                "chunk has {} bytes, the TOC says {length}",
                out.len()
            )));
        }
        Ok(out)
    }

    /// The hash the TOC stores for a chunk, recomputed from its data.
    fn hash_of(&self, data: &[u8]) -> [u8; 20] {
        if self.is_ue5() {
            blake3::hash(data).as_bytes()[..20]
                .try_into()
                .unwrap_or([0; 20])
        } else {
            crate::pak::sha1(data)
        }
    }

    pub fn find(&self, id: &ChunkId) -> Option<usize> {
        self.toc.find(id)
    }

    /// Parses the container header chunk, if the container has one.
    pub fn container_header(&self) -> Result<Option<ContainerHeader>> {
        let ue5 = self.is_ue5();
        let Some(index) = (0..self.toc.chunk_ids.len())
            .find(|&i| self.toc.chunk_ids[i].chunk_type(ue5) == ChunkType::ContainerHeader)
        else {
            return Ok(None);
        };
        let data = self.read_chunk(index)?;
        let hint = if ue5 {
            None
        } else {
            Some(super::container_header::ContainerHeaderVersion::Initial)
        };
        use super::container_header::ContainerHeaderVersion;
        match ContainerHeader::read(&data, hint) {
            Ok(h) => Ok(Some(h)),
            // Some UE4 games use the older 16-byte store entries; the header
            // has no version field to tell, so try that layout second.
            Err(e) if !ue5 => {
                ContainerHeader::read(&data, Some(ContainerHeaderVersion::PreInitial))
                    .map(Some)
                    .map_err(|_| e.in_file(&self.ucas_path))
            }
            Err(e) => Err(e.in_file(&self.ucas_path)),
        }
    }

    /// Checks every chunk (decompresses, hash matches), the container
    /// header, the directory index, the lookup table, the container id
    /// against the file name, and the companion pak.
    pub fn verify(&self) -> VerifyReport {
        let mut report = VerifyReport::default();
        for i in 0..self.toc.chunk_ids.len() {
            match self.read_chunk(i) {
                Ok(data) => {
                    if self.hash_of(&data) != self.toc.metas[i].hash {
                        let path = self
                            .paths
                            .get(&i)
                            .map(|p| format!(" ({p})"))
                            .unwrap_or_default();
                        report.errors.push(format!(
                            "chunk {i} {}{path}: hash mismatch — the .ucas data is corrupt",
                            self.toc.chunk_ids[i].to_hex()
                        ));
                    }
                }
                Err(e) => report.errors.push(e.to_string()),
            }
            report.chunks_checked += 1;
            if self.toc.find(&self.toc.chunk_ids[i]) != Some(i) {
                report.errors.push(format!(
                    "chunk {i} cannot be found through the TOC's lookup table"
                ));
            }
        }
        match self.container_header() {
            Ok(Some(h)) => {
                report.packages = h.packages.len();
                if h.container_id != self.toc.header.container_id {
                    report.errors.push(format!(
                        "container header id 0x{:016x} differs from the TOC's 0x{:016x}",
                        h.container_id, self.toc.header.container_id
                    ));
                }
                let ue5 = self.is_ue5();
                let package_chunks: std::collections::BTreeSet<u64> = self
                    .toc
                    .chunk_ids
                    .iter()
                    .filter(|c| c.chunk_type(ue5) == ChunkType::ExportBundleData)
                    .map(|c| c.id())
                    .collect();
                for (id, _) in &h.packages {
                    if !package_chunks.contains(id) {
                        report.errors.push(format!(
                            "store entry of package 0x{id:016x} has no package chunk"
                        ));
                    }
                }
                let shaders = super::shader_library::check_store_entries(
                    &h.packages,
                    &self.toc.chunk_ids,
                    ue5,
                    |i| self.read_chunk(i),
                );
                report.errors.extend(shaders.errors);
                report.warnings.extend(shaders.warnings);
            }
            Ok(None) => report
                .warnings
                .push("the container has no container header chunk".into()),
            Err(e) => report.errors.push(e.to_string()),
        }
        if self.toc.header.container_flags & container_flags::INDEXED == 0 {
            report
                .errors
                .push("the container is not flagged Indexed; the game ignores it".into());
        }
        if self.toc.header.container_flags & container_flags::SIGNED != 0 {
            report
                .warnings
                .push("the container is flagged Signed; mods normally are not".into());
        }
        if let Some(stem) = self.utoc_path.file_stem().and_then(|s| s.to_str()) {
            let expected = crate::hash::hash_lower_utf16(stem);
            if expected != self.toc.header.container_id {
                report.warnings.push(format!(
                    "container id 0x{:016x} is not the hash of the file name `{stem}` (0x{expected:016x}); \
                     the container was renamed after it was built, and two such mods can crash the game together",
                    self.toc.header.container_id
                ));
            }
        }
        let pak = self.utoc_path.with_extension("pak");
        if !pak.is_file() {
            report.errors.push(format!(
                "{}: the companion .pak is missing; the game will not mount the container",
                pak.display()
            ));
        } else {
            match PakReader::open(&pak, self.pak_key.clone()) {
                Ok(reader) => {
                    report.pak_entries = reader.entries.len();
                    // Each file's mount point is the common root of its own
                    // entries, so one lies below the other unless they disagree.
                    let (pak, utoc) = (reader.mount_point.as_str(), self.mount_point());
                    let related = pak.starts_with(utoc) || utoc.starts_with(pak);
                    if !related && !utoc.is_empty() {
                        report.warnings.push(format!(
                            "the pak's mount point `{}` differs from the container's `{}`",
                            reader.mount_point,
                            self.mount_point()
                        ));
                    }
                    for entry in &reader.entries {
                        if let Err(e) = reader.read(entry) {
                            report.errors.push(e.to_string());
                        }
                    }
                }
                Err(e) => report.errors.push(e.to_string()),
            }
        }
        report
    }
}

/// A summary of a container for `inspect`.
#[derive(Debug, Clone, Serialize)]
pub struct ContainerSummary {
    pub toc_version: TocVersion,
    pub container_id: String,
    pub container_id_matches_file_name: bool,
    pub flags: Vec<&'static str>,
    pub encryption_key_guid: String,
    pub compression_block_size: u32,
    pub compression_methods: Vec<String>,
    pub chunk_count: usize,
    pub block_count: usize,
    pub partition_count: u32,
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
    pub optional_segment_packages: usize,
    pub soft_package_references: usize,
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
        let stem = self
            .utoc_path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("");
        let container_header = self.container_header()?.map(|c| ContainerHeaderSummary {
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

    /// Writes every chunk under `dir`: chunks with a path at that path,
    /// the others as `_chunks/<id>.<type>`. Paths from the file are checked
    /// so nothing is ever written outside `dir`. Returns the number of files.
    pub fn unpack(&self, dir: &Path) -> Result<usize> {
        let mut count = 0;
        for info in self.chunks() {
            let rel = match &info.path {
                Some(p) => p.clone(),
                None => format!("_chunks/{}.{:?}", info.id, info.chunk_type),
            };
            let data = self.read_chunk(info.index)?;
            write_inside(dir, &rel, &data)?;
            count += 1;
        }
        Ok(count)
    }
}

/// Writes `data` to `dir/relative`, refusing any path that could leave
/// `dir` (absolute paths, `..`, drive letters, backslashes, symlinked
/// parents that point elsewhere).
pub fn write_inside(dir: &Path, relative: &str, data: &[u8]) -> Result<PathBuf> {
    super::writer::validate_relative_path(relative).map_err(|_| {
        Error::invalid(format!(
            "refusing to write `{relative}`: the path would leave the output folder"
        ))
    })?;
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let root = dir.canonicalize().map_err(|e| Error::io(dir, e))?;
    let target = root.join(relative);
    let parent = target.parent().unwrap_or(&root);
    std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
    let real_parent = parent.canonicalize().map_err(|e| Error::io(parent, e))?;
    if !real_parent.starts_with(&root) {
        return Err(Error::invalid(format!(
            "refusing to write `{relative}`: it resolves outside the output folder"
        )));
    }
    if target
        .symlink_metadata()
        .map(|m| m.file_type().is_symlink())
        .unwrap_or(false)
    {
        return Err(Error::invalid(format!(
            "refusing to write `{relative}`: it is a symbolic link"
        )));
    }
    std::fs::write(&target, data).map_err(|e| Error::io(&target, e))?;
    Ok(target)
}
