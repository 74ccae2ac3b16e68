//! A cooked shader archive into a library header and shader group chunks
//! (`ConvertToIoStoreShaderLibrary`, `CreateIoStoreShaderCodeArchiveHeader`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::iostore::writer::ChunkPiece;

use super::*;

/// Which packages use which shader maps (the cook's `ShaderAssetInfo` JSON).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShaderAssetInfo {
    /// (shader map hash, package names), in file order.
    pub(crate) shader_maps: Vec<(ShaHash, Vec<String>)>,
}

impl ShaderAssetInfo {
    pub fn read(bytes: &[u8]) -> Result<Self> {
        let file: AssetInfoFile = serde_json::from_slice(bytes)
            .map_err(Error::json)
            .context("shader asset info")?;
        let mut shader_maps = Vec::with_capacity(file.shader_code_to_assets.len());
        for entry in file.shader_code_to_assets {
            let hash = parse_hash(&entry.shader_map_hash).ok_or_else(|| {
                Error::invalid(format!(
                    "`{}` is not a shader map hash",
                    entry.shader_map_hash
                ))
                .within("shader asset info")
            })?;
            shader_maps.push((hash, entry.assets));
        }
        Ok(ShaderAssetInfo { shader_maps })
    }

    /// The asset info file the cook writes beside a library.
    pub(crate) fn file_name_for(library_file_name: &str) -> Option<String> {
        let (library, format) = library_and_format(library_file_name)?;
        Some(format!("ShaderAssetInfo-{library}-{format}.assetinfo.json"))
    }
}

fn parse_hash(text: &str) -> Option<ShaHash> {
    crate::hash::from_hex(text.trim())
}

/// A converted library: its header chunk, its group chunks, and each
/// package's shader maps (only maps this library holds). The groups' bytes
/// are not held: they are read from the cooked archive as each group chunk
/// is written ([`ConvertedLibrary::each_group`]).
#[derive(Debug, Clone)]
pub struct ConvertedLibrary {
    pub library_chunk_id: ChunkId,
    pub header: IoStoreShaderArchive,
    /// The header chunk's bytes.
    pub header_bytes: Vec<u8>,
    /// One chunk per group, in group order.
    pub group_chunks: Vec<(ChunkId, GroupChunk)>,
    /// Package name → shader map hashes, in asset-info order, each once.
    pub(crate) package_shader_maps: BTreeMap<String, Vec<ShaHash>>,
    /// Groups of the engine's grouping stored one shader per group, because
    /// a shader in them is compressed with a method zenpak cannot undo
    /// (Oodle): the loader takes any grouping the header describes.
    pub split_groups: usize,
    /// Where the shaders' code is read from.
    code: CodeSource,
    /// Each shader's code entry, with its offset from the start of the file.
    entries: Vec<ShaderCodeEntry>,
}

/// How a group chunk's bytes are made from the cooked archive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GroupChunk {
    /// A group of one shader: its bytes as the cook stored them, `len`
    /// bytes at `start` in the archive (compressed or not), streamed.
    Stored { start: u64, len: u64 },
    /// Several shaders, each uncompressed, one after the other (`len` bytes
    /// in all, under 2 MiB: see `split_by_size`). `bytes`: kept from the
    /// conversion, which decompressed them (while a budget lasts); else
    /// made again when the chunk is written.
    Shaders {
        shaders: Vec<u32>,
        len: u64,
        bytes: Option<Vec<u8>>,
    },
}

impl GroupChunk {
    /// The chunk's length, which is also the compressed size its entry records.
    pub(crate) fn len(&self) -> u64 {
        match self {
            GroupChunk::Stored { len, .. } | GroupChunk::Shaders { len, .. } => *len,
        }
    }
}

/// Decompressed groups kept from the conversion for the write, at most
/// this many bytes in all; the others are decompressed again when written.
const KEPT_GROUP_BYTES: u64 = 32 << 20;

/// The cooked archive's bytes: the file (read at offsets) or a copy in memory.
#[derive(Debug, Clone)]
enum CodeSource {
    File(PathBuf),
    Memory(Vec<u8>),
}

/// Reads shaders' code from a [`CodeSource`], keeping the file open.
struct CodeReader<'a> {
    source: &'a CodeSource,
    file: Option<std::fs::File>,
}

impl<'a> CodeReader<'a> {
    fn new(source: &'a CodeSource) -> Self {
        CodeReader { source, file: None }
    }

    /// Appends `len` bytes at `start` (checked to be in the archive) to `out`.
    fn read(&mut self, start: u64, len: usize, out: &mut Vec<u8>) -> Result<()> {
        use std::io::{Read, Seek, SeekFrom};
        match self.source {
            CodeSource::Memory(bytes) => {
                let range = start as usize..start as usize + len;
                let code = bytes.get(range).ok_or_else(|| {
                    Error::internal("a shader's code range was not checked against the archive")
                })?;
                out.extend_from_slice(code);
            }
            CodeSource::File(path) => {
                if self.file.is_none() {
                    self.file = Some(std::fs::File::open(path).map_err(|e| Error::io(path, e))?);
                }
                let file = self.file.as_mut().expect("opened above");
                let at = out.len();
                out.resize(at + len, 0);
                file.seek(SeekFrom::Start(start))
                    .and_then(|_| file.read_exact(&mut out[at..]))
                    .map_err(|e| {
                        Error::io(path, e)
                            .at(start)
                            .with_hint("the file changed during the build; build again")
                    })?;
            }
        }
        Ok(())
    }
}

/// Converts the cooked archive `bytes` named `file_name`
/// (`ShaderArchive-<library>-<format>.ushaderbytecode`) for `engine`.
pub fn convert(
    file_name: &str,
    bytes: &[u8],
    asset_info: Option<&ShaderAssetInfo>,
    engine: EngineVersion,
) -> Result<ConvertedLibrary> {
    let archive = ShaderArchive::read(bytes)?;
    convert_archive(
        file_name,
        archive,
        CodeSource::Memory(bytes.to_vec()),
        bytes.len() as u64,
        asset_info,
        engine,
        KEPT_GROUP_BYTES,
    )
}

/// [`convert()`] for the cooked archive at `path`, `len` bytes long, whose
/// header is `archive`: the code is read a group at a time, never whole.
pub(super) fn convert_path(
    path: &Path,
    archive: ShaderArchive,
    len: u64,
    asset_info: Option<&ShaderAssetInfo>,
    engine: EngineVersion,
) -> Result<ConvertedLibrary> {
    let file_name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    let source = CodeSource::File(path.to_path_buf());
    let kept = KEPT_GROUP_BYTES;
    convert_archive(file_name, archive, source, len, asset_info, engine, kept)
}

/// [`convert()`] of `archive`, whose code (`len` bytes of file) is read from
/// `code`; up to `kept` bytes of decompressed groups are kept for the write.
fn convert_archive(
    file_name: &str,
    archive: ShaderArchive,
    code: CodeSource,
    len: u64,
    asset_info: Option<&ShaderAssetInfo>,
    engine: EngineVersion,
    kept: u64,
) -> Result<ConvertedLibrary> {
    let (library, format) = library_and_format(file_name).ok_or_else(|| {
        Error::usage(format!(
            "`{file_name}` is not named ShaderArchive-<library>-<format>.ushaderbytecode"
        ))
    })?;
    archive.check_code(len)?;
    let entries: Vec<ShaderCodeEntry> = archive
        .shader_entries
        .iter()
        .map(|e| ShaderCodeEntry {
            offset: archive.code_offset as u64 + e.offset,
            ..*e
        })
        .collect();
    let mut reader = CodeReader::new(&code);
    let mut groups = Vec::new();
    let mut chunks = Vec::new();
    let mut split_groups = 0;
    let mut budget = kept;
    for shaders in group_shaders(&archive, &format)? {
        match plan_group(&entries, &mut reader, shaders.clone(), &mut budget) {
            Ok(chunk) => {
                groups.push(shaders);
                chunks.push(chunk);
            }
            Err(e) if matches!(e.kind(), crate::error::ErrorKind::Unsupported(_)) => {
                split_groups += 1;
                for shader in shaders {
                    chunks.push(stored(&entries, shader));
                    groups.push(vec![shader]);
                }
            }
            Err(e) => return Err(e.within("shader archive")),
        }
    }
    drop(reader);
    let mut header = header_for_groups(&archive, &format, &groups, engine)?;
    let mut group_chunks = Vec::with_capacity(groups.len());
    for (index, chunk) in chunks.into_iter().enumerate() {
        header.group_entries[index].compressed_size = chunk.len() as u32;
        group_chunks.push((header.group_chunk_ids[index], chunk));
    }
    let package_shader_maps = asset_info
        .map(|info| package_shader_maps(info, &archive))
        .unwrap_or_default();
    Ok(ConvertedLibrary {
        library_chunk_id: library_chunk_id(&library, &format, engine),
        header_bytes: header.write(),
        header,
        group_chunks,
        package_shader_maps,
        split_groups,
        code,
        entries,
    })
}

impl ConvertedLibrary {
    /// Gives each group chunk to `add`, in group order, as the pieces of
    /// its bytes: a group of one shader as a range of the archive (read in
    /// blocks by the container writer), a larger group (under 2 MiB) made
    /// in one buffer reused from group to group.
    pub(crate) fn each_group(
        &self,
        mut add: impl FnMut(ChunkId, &[ChunkPiece<'_>]) -> Result<()>,
    ) -> Result<()> {
        let mut reader = CodeReader::new(&self.code);
        let mut buffer = Vec::new();
        for (id, chunk) in &self.group_chunks {
            match chunk {
                GroupChunk::Stored { start, len } => match &self.code {
                    CodeSource::File(path) => add(
                        *id,
                        &[ChunkPiece::File {
                            path,
                            offset: *start,
                            len: *len,
                        }],
                    )?,
                    CodeSource::Memory(bytes) => {
                        let range = *start as usize..(*start + *len) as usize;
                        add(*id, &[ChunkPiece::Bytes(&bytes[range])])?
                    }
                },
                GroupChunk::Shaders {
                    bytes: Some(bytes), ..
                } => add(*id, &[ChunkPiece::Bytes(bytes)])?,
                GroupChunk::Shaders {
                    shaders,
                    bytes: None,
                    ..
                } => {
                    buffer.clear();
                    assemble(&self.entries, &mut reader, shaders, &mut buffer)?;
                    add(*id, &[ChunkPiece::Bytes(&buffer)])?;
                }
            }
        }
        Ok(())
    }

    /// The bytes of group chunk `index`, whole.
    pub fn group_bytes(&self, index: usize) -> Result<Vec<u8>> {
        let mut reader = CodeReader::new(&self.code);
        let mut out = Vec::new();
        match &self.group_chunks[index].1 {
            GroupChunk::Stored { start, len } => reader.read(*start, *len as usize, &mut out)?,
            GroupChunk::Shaders {
                bytes: Some(bytes), ..
            } => out.clone_from(bytes),
            GroupChunk::Shaders { shaders, .. } => {
                assemble(&self.entries, &mut reader, shaders, &mut out)?
            }
        }
        Ok(out)
    }
}

/// A group of one shader, as the cook stored it.
fn stored(entries: &[ShaderCodeEntry], shader: u32) -> GroupChunk {
    let e = entries[shader as usize];
    GroupChunk::Stored {
        start: e.offset,
        len: e.size as u64,
    }
}

/// How a group's chunk is made. A group of several shaders with
/// compressed ones is made now, to know that they decompress (an
/// `Unsupported` error when one does not, so the group is split), and
/// kept while `budget` lasts.
fn plan_group(
    entries: &[ShaderCodeEntry],
    reader: &mut CodeReader,
    shaders: Vec<u32>,
    budget: &mut u64,
) -> Result<GroupChunk> {
    if let [only] = shaders[..] {
        // One shader: its bytes as stored, compressed or not, are the group.
        return Ok(stored(entries, only));
    }
    let len: u64 = shaders
        .iter()
        .map(|&s| entries[s as usize].uncompressed_size as u64)
        .sum();
    let compressed = shaders
        .iter()
        .any(|&s| entries[s as usize].size != entries[s as usize].uncompressed_size);
    let mut bytes = None;
    if compressed {
        let mut out = Vec::with_capacity(len as usize);
        assemble(entries, reader, &shaders, &mut out)?;
        if len <= *budget {
            *budget -= len;
            bytes = Some(out);
        }
    }
    Ok(GroupChunk::Shaders {
        shaders,
        len,
        bytes,
    })
}

/// Appends a group's shaders, uncompressed, to `out`.
fn assemble(
    entries: &[ShaderCodeEntry],
    reader: &mut CodeReader,
    shaders: &[u32],
    out: &mut Vec<u8>,
) -> Result<()> {
    let mut code = Vec::new();
    for &shader in shaders {
        let e = entries[shader as usize];
        if e.size == e.uncompressed_size {
            reader.read(e.offset, e.size as usize, out)?;
            continue;
        }
        // Compressed data a little larger than its input is possible; far
        // larger is no shader the cook stored compressed (read it, and the
        // group would no longer be bounded): the group is split instead.
        let uncompressed = e.uncompressed_size as u64;
        if e.size as u64 > uncompressed + uncompressed / 64 + 1024 {
            return Err(Error::unsupported(format!(
                "shader {shader} is stored compressed in {} bytes, more than its {uncompressed} bytes uncompressed",
                e.size
            )));
        }
        code.clear();
        reader.read(e.offset, e.size as usize, &mut code)?;
        out.extend_from_slice(
            &decompress_shader(&code, e.uncompressed_size as usize)
                .with_context(|| format!("shader {shader}"))?,
        );
    }
    Ok(())
}

fn package_shader_maps(
    info: &ShaderAssetInfo,
    archive: &ShaderArchive,
) -> BTreeMap<String, Vec<ShaHash>> {
    let mut out: BTreeMap<String, Vec<ShaHash>> = BTreeMap::new();
    for (hash, packages) in &info.shader_maps {
        // The engine skips (with a warning) maps its libraries do not hold.
        if !archive.shader_map_hashes.contains(hash) {
            continue;
        }
        for package in packages {
            let maps = out.entry(package.clone()).or_default();
            if !maps.contains(hash) {
                maps.push(*hash);
            }
        }
    }
    out
}

/// The library header the engine makes of a cooked archive (compressed
/// sizes not yet known), and each group's shaders.
pub fn io_store_header(
    archive: &ShaderArchive,
    format: &str,
    engine: EngineVersion,
) -> Result<(IoStoreShaderArchive, Vec<Vec<u32>>)> {
    let groups = group_shaders(archive, format)?;
    Ok((header_for_groups(archive, format, &groups, engine)?, groups))
}

/// The library header for a grouping (compressed sizes not yet known).
fn header_for_groups(
    archive: &ShaderArchive,
    format: &str,
    groups: &[Vec<u32>],
    engine: EngineVersion,
) -> Result<IoStoreShaderArchive> {
    let mut header = IoStoreShaderArchive {
        shader_map_hashes: archive.shader_map_hashes.clone(),
        shader_hashes: archive.shader_hashes.clone(),
        group_chunk_ids: Vec::with_capacity(groups.len()),
        shader_map_entries: archive
            .shader_map_entries
            .iter()
            .map(|e| IoStoreShaderMapEntry {
                shader_indices_offset: e.shader_indices_offset,
                num_shaders: e.num_shaders,
            })
            .collect(),
        shader_entries: vec![0; archive.shader_entries.len()],
        group_entries: Vec::with_capacity(groups.len()),
        shader_indices: archive.shader_indices.clone(),
    };
    for (index, shaders) in groups.iter().enumerate() {
        let mut size = 0u64;
        let mut parts: Vec<Vec<u8>> = Vec::with_capacity(shaders.len() * 2 + 1);
        for &shader in shaders {
            let entry = archive.shader_entries[shader as usize];
            header.shader_entries[shader as usize] = shader_entry(entry.frequency, index, size);
            parts.push(archive.shader_hashes[shader as usize].to_vec());
            parts.push(entry.uncompressed_size.to_le_bytes().to_vec());
            size += entry.uncompressed_size as u64;
        }
        parts.push(format.as_bytes().to_vec());
        let refs: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
        header
            .group_chunk_ids
            .push(group_chunk_id(&sha1(&refs), engine));
        header.group_entries.push(ShaderGroupEntry {
            shader_indices_offset: 0,
            num_shaders: shaders.len() as u32,
            uncompressed_size: u32::try_from(size)
                .map_err(|_| Error::limit("shader group size", size, u32::MAX as u64))?,
            compressed_size: 0,
        });
    }
    // A group reuses a run of the original indices when it has one; the
    // others are appended in group order.
    for (index, shaders) in groups.iter().enumerate() {
        let offset = find_run(&archive.shader_indices, shaders).unwrap_or_else(|| {
            let at = header.shader_indices.len();
            header.shader_indices.extend_from_slice(shaders);
            at
        });
        header.group_entries[index].shader_indices_offset = offset as u32;
    }
    Ok(header)
}

fn find_run(haystack: &[u32], run: &[u32]) -> Option<usize> {
    (!run.is_empty())
        .then(|| haystack.windows(run.len()).position(|w| w == run))
        .flatten()
}

/// Shaders grouped by the set of shader maps that use them, split for ray
/// tracing (`PCD3D_SM5`) and by size, each group in its final order.
fn group_shaders(archive: &ShaderArchive, format: &str) -> Result<Vec<Vec<u32>>> {
    let mut maps_of: Vec<Vec<u32>> = vec![Vec::new(); archive.shader_entries.len()];
    for map in 0..archive.shader_map_entries.len() {
        for &shader in archive.shaders_of_map(map) {
            maps_of[shader as usize].push(map as u32);
        }
    }
    if let Some(orphan) = maps_of.iter().position(Vec::is_empty) {
        return Err(
            Error::invalid(format!("shader {orphan} belongs to no shader map"))
                .within("shader archive"),
        );
    }
    for maps in &mut maps_of {
        maps.sort_unstable();
    }
    let mut order: Vec<u32> = (0..archive.shader_entries.len() as u32).collect();
    order.sort_by(|&a, &b| {
        let (ma, mb) = (&maps_of[a as usize], &maps_of[b as usize]);
        ma.len()
            .cmp(&mb.len())
            .then_with(|| ma.cmp(mb))
            .then(a.cmp(&b))
    });
    let split_ray_tracing = format == "PCD3D_SM5";
    let mut groups = Vec::new();
    for streak in order.chunk_by(|&a, &b| maps_of[a as usize] == maps_of[b as usize]) {
        let (ray, other): (Vec<u32>, Vec<u32>) = streak.iter().partition(|&&s| {
            split_ray_tracing
                && RAY_TRACING_FREQUENCIES.contains(&archive.shader_entries[s as usize].frequency)
        });
        for part in [other, ray].into_iter().filter(|p| !p.is_empty()) {
            split_by_size(archive, part, &mut groups);
        }
    }
    Ok(groups)
}

/// The engine's order of shaders in a group: uncompressed size, size,
/// frequency, offset.
fn code_key(archive: &ShaderArchive, shader: u32) -> (u32, u32, u8, u64) {
    let e = archive.shader_entries[shader as usize];
    (e.uncompressed_size, e.size, e.frequency, e.offset)
}

/// Adds a streak as one group, or, over the size limit, as several: the
/// shaders largest first, each to the currently smallest group.
fn split_by_size(archive: &ShaderArchive, mut shaders: Vec<u32>, groups: &mut Vec<Vec<u32>>) {
    let size: u64 = shaders
        .iter()
        .map(|&s| archive.shader_entries[s as usize].uncompressed_size as u64)
        .sum();
    let mut parts = if size <= MAX_GROUP_SIZE || shaders.len() == 1 {
        vec![shaders]
    } else {
        let count = ((size / MAX_GROUP_SIZE + 1) as usize).min(shaders.len());
        shaders.sort_by_key(|&s| std::cmp::Reverse(code_key(archive, s)));
        let mut parts = vec![Vec::new(); count];
        let mut sizes = vec![0u64; count];
        for s in shaders {
            let smallest =
                (1..count).fold(0, |best, i| if sizes[i] < sizes[best] { i } else { best });
            parts[smallest].push(s);
            sizes[smallest] += archive.shader_entries[s as usize].uncompressed_size as u64;
        }
        parts
    };
    for mut part in parts.drain(..).filter(|p| !p.is_empty()) {
        part.sort_by_key(|&s| code_key(archive, s));
        groups.push(part);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Groups decompressed again when written are the groups kept from
    /// the conversion, byte for byte.
    #[test]
    fn groups_made_again_are_the_groups_kept() {
        let code: Vec<Vec<u8>> = (0..6u8)
            .map(|s| (0..3000).map(|i| s.wrapping_add((i / 5) as u8)).collect())
            .collect();
        let mut all = Vec::new();
        let mut entries = Vec::new();
        for (i, c) in code.iter().enumerate() {
            let stored = match i % 3 {
                0 => c.clone(),
                1 => Compression::Zstd.compress(c).unwrap(),
                _ => Compression::Lz4.compress(c).unwrap(),
            };
            entries.push(ShaderCodeEntry {
                offset: all.len() as u64,
                size: stored.len() as u32,
                uncompressed_size: c.len() as u32,
                frequency: 0,
            });
            all.extend_from_slice(&stored);
        }
        let archive = ShaderArchive {
            shader_map_hashes: vec![[1; 20], [2; 20]],
            shader_hashes: (0..6u8).map(|s| [s; 20]).collect(),
            shader_map_entries: [(0, 3), (3, 3)]
                .map(|(offset, n)| ShaderMapEntry {
                    shader_indices_offset: offset,
                    num_shaders: n,
                    first_preload_index: 0,
                    num_preload_entries: 0,
                })
                .to_vec(),
            shader_entries: entries,
            preload_entries: Vec::new(),
            shader_indices: (0..6).collect(),
            code_offset: 0,
        };
        let bytes = archive.write(&all);
        let name = "ShaderArchive-L-PCD3D_SM6.ushaderbytecode";
        let engine = EngineVersion::UE5_4;
        let convert_keeping = |kept| {
            let archive = ShaderArchive::read(&bytes).unwrap();
            let source = CodeSource::Memory(bytes.clone());
            let len = bytes.len() as u64;
            convert_archive(name, archive, source, len, None, engine, kept).unwrap()
        };
        let groups = |library: &ConvertedLibrary| {
            let mut out = Vec::new();
            library
                .each_group(|id, pieces| {
                    let mut bytes = Vec::new();
                    for piece in pieces {
                        match piece {
                            ChunkPiece::Bytes(b) => bytes.extend_from_slice(b),
                            ChunkPiece::File { .. } => panic!("a file piece from memory"),
                        }
                    }
                    out.push((id, bytes));
                    Ok(())
                })
                .unwrap();
            out
        };
        let (kept, made_again) = (convert_keeping(u64::MAX), convert_keeping(0));
        let kept_count = |l: &ConvertedLibrary| {
            l.group_chunks
                .iter()
                .filter(|(_, c)| matches!(c, GroupChunk::Shaders { bytes: Some(_), .. }))
                .count()
        };
        assert_eq!((kept_count(&kept), kept_count(&made_again)), (2, 0));
        assert_eq!(groups(&kept), groups(&made_again));
        // Each group is its three shaders uncompressed, in the group's order.
        for (_, group) in groups(&kept) {
            let mut shaders: Vec<&[u8]> = group.chunks(3000).collect();
            shaders.sort();
            let first = code
                .iter()
                .position(|c| c.as_slice() == shaders[0])
                .unwrap();
            let mut expected: Vec<&[u8]> =
                code[first..first + 3].iter().map(Vec::as_slice).collect();
            expected.sort();
            assert_eq!(shaders, expected);
        }
    }
}
