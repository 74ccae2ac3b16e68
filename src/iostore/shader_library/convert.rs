//! A cooked shader archive into a library header and shader group chunks
//! (`ConvertToIoStoreShaderLibrary`, `CreateIoStoreShaderCodeArchiveHeader`).

use std::collections::BTreeMap;

use super::*;

/// Which packages use which shader maps (the cook's `ShaderAssetInfo` JSON).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShaderAssetInfo {
    /// (shader map hash, package names), in file order.
    pub shader_maps: Vec<(ShaHash, Vec<String>)>,
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
    pub fn file_name_for(library_file_name: &str) -> Option<String> {
        let (library, format) = library_and_format(library_file_name)?;
        Some(format!("ShaderAssetInfo-{library}-{format}.assetinfo.json"))
    }
}

fn parse_hash(text: &str) -> Option<ShaHash> {
    crate::hash::from_hex(text.trim())
}

/// A converted library: its header chunk, its group chunks, and each
/// package's shader maps (only maps this library holds).
#[derive(Debug, Clone)]
pub struct ConvertedLibrary {
    pub library_chunk_id: ChunkId,
    pub header: IoStoreShaderArchive,
    /// The header chunk's bytes.
    pub header_bytes: Vec<u8>,
    /// One chunk per group, in group order.
    pub group_chunks: Vec<(ChunkId, Vec<u8>)>,
    /// Package name → shader map hashes, in asset-info order, each once.
    pub package_shader_maps: BTreeMap<String, Vec<ShaHash>>,
    /// Groups of the engine's grouping stored one shader per group, because
    /// a shader in them is compressed with a method zenpak cannot undo
    /// (Oodle): the loader takes any grouping the header describes.
    pub split_groups: usize,
}

/// Converts the cooked archive `bytes` named `file_name`
/// (`ShaderArchive-<library>-<format>.ushaderbytecode`) for `engine`.
pub fn convert(
    file_name: &str,
    bytes: &[u8],
    asset_info: Option<&ShaderAssetInfo>,
    engine: EngineVersion,
) -> Result<ConvertedLibrary> {
    let (library, format) = library_and_format(file_name).ok_or_else(|| {
        Error::usage(format!(
            "`{file_name}` is not named ShaderArchive-<library>-<format>.ushaderbytecode"
        ))
    })?;
    let archive = ShaderArchive::read(bytes)?;
    let mut groups = Vec::new();
    let mut data = Vec::new();
    let mut split_groups = 0;
    for shaders in group_shaders(&archive, &format)? {
        match group_data(&archive, bytes, &shaders) {
            Ok(d) => {
                groups.push(shaders);
                data.push(d);
            }
            Err(e) if matches!(e.kind(), crate::error::ErrorKind::Unsupported(_)) => {
                split_groups += 1;
                for shader in shaders {
                    data.push(group_data(&archive, bytes, &[shader])?);
                    groups.push(vec![shader]);
                }
            }
            Err(e) => return Err(e.within("shader archive")),
        }
    }
    let mut header = header_for_groups(&archive, &format, &groups, engine)?;
    let mut group_chunks = Vec::with_capacity(groups.len());
    for (index, d) in data.into_iter().enumerate() {
        header.group_entries[index].compressed_size = d.compressed_size;
        group_chunks.push((header.group_chunk_ids[index], d.bytes));
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
    })
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

/// A group's chunk bytes and the compressed size its entry records.
struct GroupData {
    bytes: Vec<u8>,
    compressed_size: u32,
}

fn group_data(archive: &ShaderArchive, file: &[u8], shaders: &[u32]) -> Result<GroupData> {
    let code = |shader: u32| -> Result<(&[u8], ShaderCodeEntry)> {
        let e = archive.shader_entries[shader as usize];
        let start = archive.code_offset as u64 + e.offset;
        let end = start + e.size as u64;
        let bytes = file.get(start as usize..end as usize).ok_or_else(|| {
            Error::format(
                start,
                format!(
                    "shader {shader}'s code {start}..{end} is past the end of the file ({} bytes)",
                    file.len()
                ),
            )
        })?;
        Ok((bytes, e))
    };
    if let [only] = shaders {
        // One shader: its bytes as stored, compressed or not, are the group.
        let (bytes, e) = code(*only)?;
        return Ok(GroupData {
            bytes: bytes.to_vec(),
            compressed_size: e.size,
        });
    }
    let mut out = Vec::new();
    for &shader in shaders {
        let (bytes, e) = code(shader)?;
        if e.size == e.uncompressed_size {
            out.extend_from_slice(bytes);
        } else {
            out.extend_from_slice(
                &decompress_shader(bytes, e.uncompressed_size as usize)
                    .with_context(|| format!("shader {shader}"))?,
            );
        }
    }
    let compressed_size = out.len() as u32;
    Ok(GroupData {
        bytes: out,
        compressed_size,
    })
}
