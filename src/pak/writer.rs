//! Writes a version 11 pak, streaming entry data to the file as files are
//! added; the index is built at the end.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use super::crypto::{pad_like_engine, AesKey};
use super::entry::{PakBlock, PakEntry};
use super::index::{FullDirectoryIndex, IndexLocation, PakFooter, PathHashIndex, PrimaryIndex};
use super::{path_hash, sha1, split_directory};
use crate::binary::Writer;
use crate::compression::Compression;
use crate::error::{Error, Result};

/// Block size of compressed pak entries.
pub const PAK_BLOCK_SIZE: u32 = 64 * 1024;

/// A pak being written.
pub struct PakWriter {
    path: PathBuf,
    file: BufWriter<File>,
    position: u64,
    version: u32,
    mount_point: String,
    compression: Compression,
    key: Option<AesKey>,
    encryption_key_guid: [u8; 16],
    /// Entries in the order they were added, with their path.
    entries: Vec<(String, PakEntry)>,
    paths: BTreeMap<String, usize>,
}

impl PakWriter {
    /// Creates (truncates) `path`. Files are added relative to `mount_point`.
    pub fn create(
        path: &Path,
        version: u32,
        mount_point: &str,
        compression: Compression,
        key: Option<AesKey>,
        encryption_key_guid: [u8; 16],
    ) -> Result<Self> {
        if version != 11 {
            return Err(Error::usage(format!(
                "pak version {version} cannot be written; zenpak writes version 11"
            )));
        }
        let file = File::create(path).map_err(|e| Error::io(path, e))?;
        Ok(PakWriter {
            path: path.to_path_buf(),
            file: BufWriter::new(file),
            position: 0,
            version,
            mount_point: mount_point.to_string(),
            compression,
            key,
            encryption_key_guid,
            entries: Vec::new(),
            paths: BTreeMap::new(),
        })
    }

    fn emit(&mut self, bytes: &[u8]) -> Result<()> {
        self.file
            .write_all(bytes)
            .map_err(|e| Error::io(&self.path, e))?;
        self.position += bytes.len() as u64;
        Ok(())
    }

    /// Adds a file by its path relative to the mount point.
    pub fn add_file(&mut self, relative_path: &str, data: &[u8]) -> Result<()> {
        crate::mount::validate_relative_path(relative_path)?;
        if self.paths.contains_key(&relative_path.to_lowercase()) {
            return Err(Error::usage(format!(
                "`{relative_path}` is added to the pak twice"
            )));
        }
        let offset = self.position;
        let encrypted = self.key.is_some();
        // Compress per block; keep the blocks only if they save space.
        let mut method_index = 0;
        let mut payload: Vec<Vec<u8>> = vec![data.to_vec()];
        if self.compression != Compression::None && !data.is_empty() {
            let blocks: Vec<Vec<u8>> = data
                .chunks(PAK_BLOCK_SIZE as usize)
                .map(|c| self.compression.compress(c))
                .collect::<Result<_>>()?;
            if blocks.iter().map(Vec::len).sum::<usize>() < data.len() {
                payload = blocks;
                method_index = 1;
            }
        }
        let stored: Vec<u8> = payload.concat();
        let hash = sha1(&stored);
        let header_size = PakEntry::inline_size(payload.len(), method_index != 0);
        let mut blocks = Vec::new();
        if method_index != 0 {
            let mut at = header_size;
            for b in &payload {
                blocks.push(PakBlock {
                    start: at,
                    end: at + b.len() as u64,
                });
                at += if encrypted {
                    (b.len() as u64).next_multiple_of(16)
                } else {
                    b.len() as u64
                };
            }
        }
        let entry = PakEntry {
            offset,
            size: stored.len() as u64,
            uncompressed_size: data.len() as u64,
            method_index,
            hash,
            blocks,
            encrypted,
            block_size: if method_index != 0 {
                PAK_BLOCK_SIZE.min(data.len() as u32)
            } else {
                0
            },
        };
        let mut header = Writer::new();
        entry.write_full(&mut header, true);
        self.emit(header.as_slice())?;
        match self.key.clone() {
            Some(key) => {
                // Each compressed block is padded and encrypted on its own;
                // an uncompressed entry is one padded run.
                for mut b in payload {
                    pad_like_engine(&mut b);
                    key.encrypt(&mut b);
                    self.emit(&b)?;
                }
            }
            None => self.emit(&stored)?,
        }
        self.paths
            .insert(relative_path.to_lowercase(), self.entries.len());
        self.entries.push((relative_path.to_string(), entry));
        Ok(())
    }

    /// Seals a part of the index: pads and encrypts it when the pak is
    /// encrypted; returns the bytes to store and the SHA-1 the index records.
    fn seal(&self, mut part: Vec<u8>) -> (Vec<u8>, [u8; 20]) {
        if let Some(key) = &self.key {
            part.resize(part.len().next_multiple_of(16), 0);
            let hash = sha1(&part);
            key.encrypt(&mut part);
            (part, hash)
        } else {
            let hash = sha1(&part);
            (part, hash)
        }
    }

    /// Writes the index and footer and flushes the file.
    pub fn finish(mut self) -> Result<()> {
        let index_offset = self.position;
        let path_hash_seed = 0u64;
        let mut encoded = Writer::new();
        let mut encoded_offsets = Vec::with_capacity(self.entries.len());
        for (_, entry) in &self.entries {
            encoded_offsets.push(encoded.pos() as u32);
            entry.write_encoded(&mut encoded);
        }

        // Path hash index, sorted by hash for a stable order.
        let mut hashed: Vec<(u64, u32)> = self
            .entries
            .iter()
            .zip(&encoded_offsets)
            .map(|((path, _), &off)| (path_hash(path, path_hash_seed), off))
            .collect();
        hashed.sort();
        let mut phi = Writer::new();
        PathHashIndex(hashed).write(&mut phi);

        // Full directory index, with the root and every parent directory listed.
        let mut fdi = FullDirectoryIndex::default();
        fdi.0.entry("/".to_string()).or_default();
        for ((path, _), &off) in self.entries.iter().zip(&encoded_offsets) {
            let (dir, file) = split_directory(path);
            if dir != "/" {
                let mut parent = String::new();
                for part in dir.trim_end_matches('/').split('/') {
                    parent.push_str(part);
                    parent.push('/');
                    fdi.0.entry(parent.clone()).or_default();
                }
            }
            fdi.0.entry(dir).or_default().insert(file, off);
        }
        let mut fdi_bytes = Writer::new();
        fdi.write(&mut fdi_bytes);

        let (phi, phi_hash) = self.seal(phi.into_inner());
        let (fdi, fdi_hash) = self.seal(fdi_bytes.into_inner());

        // The primary index's size does not depend on the secondary
        // offsets it records, so measure it with placeholders first.
        let mut primary = PrimaryIndex {
            mount_point: self.mount_point.clone(),
            entry_count: self.entries.len() as u32,
            path_hash_seed,
            path_hash_index: Some(IndexLocation {
                offset: 0,
                size: phi.len() as u64,
                hash: phi_hash,
            }),
            full_directory_index: Some(IndexLocation {
                offset: 0,
                size: fdi.len() as u64,
                hash: fdi_hash,
            }),
            encoded_entries: encoded.into_inner(),
        };
        let mut probe = Writer::new();
        primary.write(&mut probe);
        let primary_len = if self.key.is_some() {
            probe.pos().next_multiple_of(16)
        } else {
            probe.pos()
        };
        let phi_offset = index_offset + primary_len as u64;
        if let Some(l) = primary.path_hash_index.as_mut() {
            l.offset = phi_offset;
        }
        if let Some(l) = primary.full_directory_index.as_mut() {
            l.offset = phi_offset + phi.len() as u64;
        }
        let mut primary_bytes = Writer::new();
        primary.write(&mut primary_bytes);
        let (primary_bytes, primary_hash) = self.seal(primary_bytes.into_inner());

        self.emit(&primary_bytes)?;
        self.emit(&phi)?;
        self.emit(&fdi)?;

        let footer = PakFooter {
            encryption_key_guid: self.encryption_key_guid,
            encrypted_index: self.key.is_some(),
            version: self.version,
            index_offset,
            index_size: primary_bytes.len() as u64,
            index_hash: primary_hash,
            compression_methods: if self.entries.iter().any(|(_, e)| e.method_index != 0) {
                vec![self.compression.engine_name().to_string()]
            } else {
                Vec::new()
            },
        };
        let mut footer_bytes = Writer::new();
        footer.write(&mut footer_bytes);
        self.emit(footer_bytes.as_slice())?;
        self.file.flush().map_err(|e| Error::io(&self.path, e))?;
        self.file
            .get_ref()
            .sync_all()
            .map_err(|e| Error::io(&self.path, e))?;
        Ok(())
    }
}
