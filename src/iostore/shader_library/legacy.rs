//! A library header and its groups back into a cooked archive, each shader
//! stored uncompressed: what unpacking a container gives back, and what a
//! round trip through a container checks.

use super::*;

/// `FSerializedShaderArchive::Finalize`'s limit: shaders of a shader map
/// closer than this are preloaded as one range.
const MAX_PRELOAD_GAP: i64 = 1024;

impl ShaderArchive {
    /// The cooked archive of `library`, whose group chunks `group` returns
    /// (by group index and chunk id), as `(header, code)`; the file is the
    /// header written with [`ShaderArchive::write_header`], then the code.
    pub fn from_io_store(
        library: &IoStoreShaderArchive,
        mut group: impl FnMut(usize, &ChunkId) -> Result<Vec<u8>>,
    ) -> Result<(ShaderArchive, Vec<u8>)> {
        let sizes = library.shader_sizes()?;
        let mut shaders: Vec<Option<(Vec<u8>, u32)>> = vec![None; library.shader_entries.len()];
        for (index, (id, entry)) in library
            .group_chunk_ids
            .iter()
            .zip(&library.group_entries)
            .enumerate()
        {
            let stored = group(index, id)?;
            let members = library.shaders_of_group(index);
            if let ([only], true) = (members, entry.compressed_size != entry.uncompressed_size) {
                // One compressed shader: the group's bytes are that shader as
                // the cook compressed it, whatever the method.
                shaders[*only as usize] = Some((stored, entry.uncompressed_size));
                continue;
            }
            let size = entry.uncompressed_size as usize;
            let data = if entry.compressed_size == entry.uncompressed_size {
                stored
            } else {
                decompress_shader(&stored, size).with_context(|| format!("shader group {index}"))?
            };
            if data.len() != size {
                return Err(Error::invalid(format!(
                    "shader group {index} holds {} bytes, its entry says {size}",
                    data.len()
                )));
            }
            for &shader in members {
                let start = offset_in_group(library.shader_entries[shader as usize]);
                let bytes = data
                    .get(start..start + sizes[shader as usize])
                    .ok_or_else(|| {
                        Error::invalid(format!(
                            "shader {shader} lies past the end of group {index}"
                        ))
                    })?;
                shaders[shader as usize] = Some((bytes.to_vec(), bytes.len() as u32));
            }
        }
        let mut code = Vec::new();
        let mut shader_entries = Vec::with_capacity(shaders.len());
        for (index, (shader, &packed)) in
            shaders.into_iter().zip(&library.shader_entries).enumerate()
        {
            let (bytes, uncompressed_size) =
                shader.ok_or_else(|| Error::invalid(format!("shader {index} is in no group")))?;
            shader_entries.push(ShaderCodeEntry {
                offset: code.len() as u64,
                size: bytes.len() as u32,
                uncompressed_size,
                frequency: (packed & 0xF) as u8,
            });
            code.extend_from_slice(&bytes);
        }
        let mut archive = ShaderArchive {
            shader_map_hashes: library.shader_map_hashes.clone(),
            shader_hashes: library.shader_hashes.clone(),
            shader_map_entries: library
                .shader_map_entries
                .iter()
                .map(|e| ShaderMapEntry {
                    shader_indices_offset: e.shader_indices_offset,
                    num_shaders: e.num_shaders,
                    first_preload_index: 0,
                    num_preload_entries: 0,
                })
                .collect(),
            shader_entries,
            preload_entries: Vec::new(),
            shader_indices: library.shader_indices.clone(),
            code_offset: 0,
        };
        archive.set_preload_entries();
        Ok((archive, code))
    }

    /// Each shader map's preload ranges, as `FSerializedShaderArchive::Finalize`
    /// computes them: its shaders' code by offset, merged across gaps of up
    /// to 1 KiB.
    pub fn set_preload_entries(&mut self) {
        self.preload_entries.clear();
        for map in 0..self.shader_map_entries.len() {
            let mut ranges: Vec<(i64, i64)> = self
                .shaders_of_map(map)
                .iter()
                .map(|&s| {
                    let e = self.shader_entries[s as usize];
                    (e.offset as i64, e.size as i64)
                })
                .collect();
            ranges.sort_by_key(|&(offset, _)| offset);
            let first = self.preload_entries.len();
            let mut ranges = ranges.into_iter();
            if let Some(mut current) = ranges.next() {
                for (offset, size) in ranges {
                    if offset - current.0 - current.1 > MAX_PRELOAD_GAP {
                        self.preload_entries.push(current);
                        current = (offset, size);
                    } else {
                        current.1 = offset + size - current.0;
                    }
                }
                self.preload_entries.push(current);
            }
            let entry = &mut self.shader_map_entries[map];
            entry.first_preload_index = first as u32;
            entry.num_preload_entries = (self.preload_entries.len() - first) as u32;
        }
    }
}

impl IoStoreShaderArchive {
    /// A group's shaders, in their order in the group.
    fn shaders_of_group(&self, group: usize) -> &[u32] {
        let e = self.group_entries[group];
        let start = e.shader_indices_offset as usize;
        &self.shader_indices[start..start + e.num_shaders as usize]
    }

    /// Each shader's uncompressed size: the distance to the next shader of
    /// its group, or to the group's end.
    fn shader_sizes(&self) -> Result<Vec<usize>> {
        let mut sizes = vec![0usize; self.shader_entries.len()];
        for (index, group) in self.group_entries.iter().enumerate() {
            let shaders = self.shaders_of_group(index);
            for (i, &shader) in shaders.iter().enumerate() {
                let offset = offset_in_group(self.shader_entries[shader as usize]);
                let end = match shaders.get(i + 1) {
                    Some(&next) => offset_in_group(self.shader_entries[next as usize]),
                    None => group.uncompressed_size as usize,
                };
                sizes[shader as usize] = end.checked_sub(offset).ok_or_else(|| {
                    Error::invalid(format!(
                        "shader {shader} of group {index} ends before it starts"
                    ))
                })?;
            }
        }
        Ok(sizes)
    }
}
