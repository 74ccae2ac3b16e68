//! Writes a version 11 pak the way UnrealPak lays one out, streaming entry
//! data to the file as files are added; the index is built at the end.
//!
//! Checked byte for byte against the corpus's UnrealPak (4.27) paks: for
//! the same files, in the same order, with the same mount point and path
//! hash seed, an uncompressed pak is identical, encrypted or not (entry
//! data and index parts are padded to 16 bytes with their own first bytes
//! before encryption). Compressed entries match in layout; their zlib bytes
//! match only where the deflate encoder gives the same output (zenpak uses
//! flate2's, UnrealPak the zlib library's).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use super::crypto::{pad_like_engine, AesKey};
use super::entry::{PakBlock, PakEntry};
use super::index::{FullDirectoryIndex, IndexLocation, PakFooter, PathHashIndex, PrimaryIndex};
use super::{path_hash, sha1};
use crate::binary::Writer;
use crate::compression::Compression;
use crate::error::{Error, Result};
use crate::version::PakVersion;

/// Block size of compressed pak entries (UnrealPak's default).
pub(crate) const PAK_BLOCK_SIZE: u32 = 64 * 1024;

/// How a pak is written.
#[derive(Debug, Clone)]
pub struct PakWriterOptions {
    pub mount_point: String,
    pub compression: Compression,
    pub key: Option<AesKey>,
    pub encryption_key_guid: [u8; 16],
    /// The path-hash index seed. UnrealPak derives it from the pak's file
    /// name as it was given (`FCrc::StrCrc32` of the lowercased name,
    /// `PakFileUtilities.cpp`); the engine
    /// reads it from the index, so any value works in game. zenpak uses 0
    /// unless told otherwise, so output does not depend on file names.
    pub path_hash_seed: u64,
    /// With a key: whether the entries' data is encrypted (UnrealPak's `-encrypt`).
    pub encrypt_entries: bool,
    /// With a key: whether the index is encrypted (UnrealPak's `-encryptindex`).
    pub encrypt_index: bool,
    /// The format written: 11, or 12 (UTF-8 file names in the directory
    /// index) — what [`crate::version::EngineVersion::pak_version`] says.
    pub version: PakVersion,
}

impl Default for PakWriterOptions {
    fn default() -> Self {
        PakWriterOptions {
            mount_point: "../../../".into(),
            compression: Compression::None,
            key: None,
            encryption_key_guid: [0; 16],
            path_hash_seed: 0,
            encrypt_entries: true,
            encrypt_index: true,
            version: PakVersion::V11,
        }
    }
}

/// A game's own pak encryption, used instead of the engine's AES for the
/// entries and the index (Marvel Rivals': `fixups::marvel_rivals::pak_cipher`).
pub trait PakCipher: Send + Sync {
    /// The stored bytes of the entry at `path` (relative to `mount_point`;
    /// compressed blocks each zero-padded to 16 bytes), as they go to disk.
    fn seal_entry(&self, mount_point: &str, path: &str, stored: Vec<u8>) -> Vec<u8>;
    /// Encrypts an index part, already zero-padded to 16 bytes, in place.
    fn encrypt_index(&self, part: &mut [u8]);
    /// Bytes written between the index and the footer.
    fn footer_prefix(&self) -> &[u8];
    /// `Some(n)`: sealing an entry longer than `n` stored bytes changes its
    /// first `n` bytes only, as [`seal_entry`](Self::seal_entry) of those
    /// bytes alone does, so an entry can be streamed. `None` (the default):
    /// entries are sealed whole, in memory.
    fn sealed_prefix(&self, _mount_point: &str, _path: &str) -> Option<usize> {
        None
    }
}

/// A streamed entry sealed with a game's cipher (see
/// [`PakCipher::sealed_prefix`]): its first `prefix` stored bytes are held
/// until they are all there, sealed and written; the rest pass as they are.
struct Sealing {
    cipher: std::sync::Arc<dyn PakCipher>,
    path: String,
    prefix: usize,
    held: Vec<u8>,
    sealed: bool,
}

/// A pak being written.
pub struct PakWriter {
    path: PathBuf,
    file: BufWriter<File>,
    position: u64,
    options: PakWriterOptions,
    /// Entries in the order they were added, with their path.
    entries: Vec<(String, PakEntry)>,
    paths: std::collections::BTreeSet<String>,
    cipher: Option<std::sync::Arc<dyn PakCipher>>,
}

/// The versions zenpak writes.
const WRITABLE: [PakVersion; 2] = [PakVersion::V11, PakVersion::V12];

impl PakWriter {
    /// Creates (truncates) `path`. Files are added relative to `mount_point`.
    pub fn create(
        path: &Path,
        version: PakVersion,
        mount_point: &str,
        compression: Compression,
        key: Option<AesKey>,
        encryption_key_guid: [u8; 16],
    ) -> Result<Self> {
        Self::create_with(
            path,
            PakWriterOptions {
                mount_point: mount_point.to_string(),
                compression,
                key,
                encryption_key_guid,
                path_hash_seed: 0,
                encrypt_entries: true,
                encrypt_index: true,
                version,
            },
        )
    }

    /// Creates (truncates) `path` with the given options.
    pub fn create_with(path: &Path, options: PakWriterOptions) -> Result<Self> {
        options.compression.check_writable()?;
        if !WRITABLE.contains(&options.version) {
            return Err(Error::usage(format!(
                "pak version {} cannot be written; zenpak writes versions 11 and 12",
                options.version
            )));
        }
        let file = File::create(path).map_err(|e| Error::io(path, e))?;
        Ok(PakWriter {
            path: path.to_path_buf(),
            file: BufWriter::new(file),
            position: 0,
            options,
            entries: Vec::new(),
            paths: Default::default(),
            cipher: None,
        })
    }

    /// Encrypts entries and index with a game's own cipher instead of the
    /// engine's AES (any AES key in the options is then not used).
    pub fn with_cipher(mut self, cipher: std::sync::Arc<dyn PakCipher>) -> Self {
        self.cipher = Some(cipher);
        self
    }

    fn emit(&mut self, bytes: &[u8]) -> Result<()> {
        self.file
            .write_all(bytes)
            .map_err(|e| Error::io(&self.path, e))?;
        self.position += bytes.len() as u64;
        Ok(())
    }

    /// Checks a path to add and claims it: the same path (whatever its
    /// case) cannot be added twice.
    fn claim(&mut self, relative_path: &str) -> Result<()> {
        crate::mount::validate_relative_path(relative_path)?;
        if !self.paths.insert(relative_path.to_lowercase()) {
            return Err(Error::usage(format!(
                "`{relative_path}` is added to the pak twice"
            )));
        }
        Ok(())
    }

    /// Adds a file by its path relative to the mount point.
    pub fn add_file(&mut self, relative_path: &str, data: &[u8]) -> Result<()> {
        self.claim(relative_path)?;
        let offset = self.position;
        if let Some(cipher) = self.cipher.clone() {
            return self.add_sealed_file(relative_path, data, cipher.as_ref());
        }
        let entry_key = self.entry_key().cloned();
        let encrypted = entry_key.is_some();
        let compression = self.options.compression;
        // Compress per block; keep the blocks only if they save space.
        let mut blocks_data: Option<Vec<Vec<u8>>> = None;
        if compression != Compression::None && !data.is_empty() {
            let blocks: Vec<Vec<u8>> = data
                .chunks(PAK_BLOCK_SIZE as usize)
                .map(|c| compression.compress(c))
                .collect::<Result<_>>()?;
            if blocks.iter().map(Vec::len).sum::<usize>() < data.len() {
                blocks_data = Some(blocks);
            }
        }
        // The stored bytes as they go to disk (padded and encrypted per
        // block, or as one run when uncompressed).
        let mut on_disk: Vec<u8> = Vec::new();
        let mut block_lens = Vec::new();
        let method;
        match blocks_data {
            Some(blocks) => {
                method = 1;
                for mut b in blocks {
                    block_lens.push(b.len() as u64);
                    if let Some(key) = &entry_key {
                        pad_like_engine(&mut b);
                        key.encrypt(&mut b);
                    }
                    on_disk.extend_from_slice(&b);
                }
            }
            None => {
                method = 0;
                on_disk.extend_from_slice(data);
                if let Some(key) = &entry_key {
                    pad_like_engine(&mut on_disk);
                    key.encrypt(&mut on_disk);
                }
            }
        }
        // UnrealPak's size: the stored bytes, padding included for
        // compressed encrypted entries (whose blocks are padded one by
        // one), not for an uncompressed one. The SHA-1 covers `size` bytes
        // of what is on disk (checked against the corpus).
        let size = if method != 0 {
            on_disk.len() as u64
        } else {
            data.len() as u64
        };
        let hash = sha1(&on_disk[..size as usize]);
        let record_size =
            PakEntry::record_size(self.options.version, block_lens.len(), method != 0);
        let blocks = PakBlock::consecutive(record_size, block_lens.iter().copied(), encrypted);
        let entry = PakEntry {
            offset,
            size,
            uncompressed_size: data.len() as u64,
            method,
            timestamp: 0,
            hash,
            blocks,
            encrypted,
            deleted: false,
            block_size: entry_block_size(method, data.len()),
        };
        self.push_entry(relative_path, entry, &on_disk)
    }

    /// [`add_file`](Self::add_file) with the contents of the file at
    /// `source`, streamed: read, compressed, encrypted, hashed and written
    /// a block at a time, so memory holds one block whatever the file's
    /// size (the entry's record, written first in the pak, is filled in
    /// once the data is written). The bytes are those `add_file` writes.
    /// Returns the BLAKE3 of what was read. A file that does not have the
    /// length it had when opened is an error. A game's own cipher that
    /// seals only a prefix of each entry ([`PakCipher::sealed_prefix`])
    /// seals it on the way; one that seals entries whole has the file read
    /// into memory.
    pub(crate) fn add_file_from(&mut self, relative_path: &str, source: &Path) -> Result<[u8; 32]> {
        let new_sealing = |this: &Self| {
            this.cipher.as_ref().map(|cipher| {
                let prefix = cipher.sealed_prefix(&this.options.mount_point, relative_path)?;
                Some(Sealing {
                    cipher: cipher.clone(),
                    path: relative_path.to_string(),
                    prefix,
                    held: Vec::new(),
                    sealed: false,
                })
            })
        };
        let mut sealing = match new_sealing(self) {
            // A cipher that seals entries whole.
            Some(None) => {
                let data = std::fs::read(source).map_err(|e| Error::io(source, e))?;
                self.add_file(relative_path, &data)?;
                return Ok(*blake3::hash(&data).as_bytes());
            }
            Some(Some(sealing)) => Some(sealing),
            None => None,
        };
        self.claim(relative_path)?;
        let mut file = File::open(source).map_err(|e| Error::io(source, e))?;
        let len = file.metadata().map_err(|e| Error::io(source, e))?.len();
        let offset = self.position;
        if self.options.compression != Compression::None && len > 0 {
            let (path, seal) = (relative_path, &mut sealing);
            if let Some(hash) = self.stream_compressed(path, &mut file, source, len, seal)? {
                return Ok(hash);
            }
            // Compression saved nothing: the entry is stored as is, over
            // what was written of the compressed one.
            self.rewind_to(offset)?;
            std::io::Seek::rewind(&mut file).map_err(|e| Error::io(source, e))?;
            sealing = new_sealing(self).flatten();
        }
        self.stream_stored(relative_path, &mut file, source, len, &mut sealing)
    }

    /// Writes stored bytes of a streamed entry, sealed first when the pak
    /// has a game's cipher.
    fn emit_stored(&mut self, sealing: &mut Option<Sealing>, mut bytes: &[u8]) -> Result<()> {
        if let Some(s) = sealing.as_mut().filter(|s| !s.sealed) {
            let take = (s.prefix - s.held.len()).min(bytes.len());
            s.held.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
            if s.held.len() < s.prefix {
                return Ok(());
            }
            s.sealed = true;
            let held = std::mem::take(&mut s.held);
            let sealed = s
                .cipher
                .seal_entry(&self.options.mount_point, &s.path, held);
            self.emit(&sealed)?;
        }
        self.emit(bytes)
    }

    /// Ends a streamed entry: one not longer than its sealed prefix is
    /// sealed (whole) and written now.
    fn finish_stored(&mut self, sealing: &mut Option<Sealing>) -> Result<()> {
        match sealing.as_mut().filter(|s| !s.sealed) {
            Some(s) => {
                s.sealed = true;
                let held = std::mem::take(&mut s.held);
                let sealed = s
                    .cipher
                    .seal_entry(&self.options.mount_point, &s.path, held);
                self.emit(&sealed)
            }
            None => Ok(()),
        }
    }

    /// Streams `len` bytes of `file` as compressed blocks. `None` (with
    /// the pak left to be rewound) when they would not be smaller than the
    /// data, which is then stored as is, as [`add_file`](Self::add_file) does.
    fn stream_compressed(
        &mut self,
        relative_path: &str,
        file: &mut File,
        source: &Path,
        len: u64,
        sealing: &mut Option<Sealing>,
    ) -> Result<Option<[u8; 32]>> {
        let offset = self.position;
        // A game's cipher replaces the engine's AES.
        let entry_key = self.entry_key().cloned().filter(|_| sealing.is_none());
        let block_count = len.div_ceil(u64::from(PAK_BLOCK_SIZE)) as usize;
        let record_size = PakEntry::record_size(self.options.version, block_count, true);
        self.emit(&vec![0; record_size as usize])?;
        let mut content = blake3::Hasher::new();
        let mut stored_hash = <sha1::Sha1 as sha1::Digest>::new();
        let mut block_lens = Vec::with_capacity(block_count);
        let (mut compressed_total, mut stored_total) = (0u64, 0u64);
        let mut block = vec![0u8; PAK_BLOCK_SIZE as usize];
        for i in 0..block_count {
            let start = i as u64 * u64::from(PAK_BLOCK_SIZE);
            let n = (len - start).min(u64::from(PAK_BLOCK_SIZE)) as usize;
            read_exactly(file, &mut block[..n], source, len)?;
            content.update(&block[..n]);
            let mut compressed = self.options.compression.compress(&block[..n])?;
            compressed_total += compressed.len() as u64;
            if compressed_total >= len {
                return Ok(None);
            }
            block_lens.push(compressed.len() as u64);
            if sealing.is_some() {
                // The SHA-1 covers the blocks before the cipher pads them
                // with zeros to 16 bytes (as `add_sealed_file`).
                sha1::Digest::update(&mut stored_hash, &compressed);
                compressed.resize(compressed.len().next_multiple_of(16), 0);
            } else {
                if let Some(key) = &entry_key {
                    pad_like_engine(&mut compressed);
                    key.encrypt(&mut compressed);
                }
                sha1::Digest::update(&mut stored_hash, &compressed);
            }
            stored_total += compressed.len() as u64;
            self.emit_stored(sealing, &compressed)?;
        }
        check_at_end(file, source, len)?;
        self.finish_stored(sealing)?;
        let encrypted = entry_key.is_some() || sealing.is_some();
        let entry = PakEntry {
            offset,
            size: stored_total,
            uncompressed_size: len,
            method: 1,
            timestamp: 0,
            hash: sha1::Digest::finalize(stored_hash).into(),
            blocks: PakBlock::consecutive(record_size, block_lens.iter().copied(), encrypted),
            encrypted,
            deleted: false,
            block_size: entry_block_size(1, len as usize),
        };
        self.fill_record(relative_path, entry, record_size)?;
        Ok(Some(*content.finalize().as_bytes()))
    }

    /// Streams `len` bytes of `file` stored as they are (encrypted with
    /// the key, padded at the end the engine's way).
    fn stream_stored(
        &mut self,
        relative_path: &str,
        file: &mut File,
        source: &Path,
        len: u64,
        sealing: &mut Option<Sealing>,
    ) -> Result<[u8; 32]> {
        const PIECE: usize = 1 << 20;
        let offset = self.position;
        let entry_key = self.entry_key().cloned().filter(|_| sealing.is_none());
        let record_size = PakEntry::record_size(self.options.version, 0, false);
        self.emit(&vec![0; record_size as usize])?;
        let mut content = blake3::Hasher::new();
        // The SHA-1 covers the file's length of stored bytes (not the padding).
        let mut stored_hash = <sha1::Sha1 as sha1::Digest>::new();
        let mut first = Vec::new();
        let mut piece = vec![0u8; PIECE.min(len as usize)];
        let mut done = 0u64;
        while done < len {
            let n = (len - done).min(PIECE as u64) as usize;
            piece.truncate(n);
            read_exactly(file, &mut piece, source, len)?;
            content.update(&piece);
            if first.is_empty() {
                first = piece[..n.min(16)].to_vec();
            }
            done += n as u64;
            let hashed = piece.len();
            if let Some(key) = &entry_key {
                if done == len {
                    piece.extend_from_slice(&super::crypto::engine_padding(&first, len));
                }
                key.encrypt(&mut piece);
            }
            sha1::Digest::update(&mut stored_hash, &piece[..hashed]);
            self.emit_stored(sealing, &piece)?;
        }
        check_at_end(file, source, len)?;
        self.finish_stored(sealing)?;
        let entry = PakEntry {
            offset,
            size: len,
            uncompressed_size: len,
            method: 0,
            timestamp: 0,
            hash: sha1::Digest::finalize(stored_hash).into(),
            blocks: Vec::new(),
            encrypted: entry_key.is_some() || sealing.is_some(),
            deleted: false,
            block_size: entry_block_size(0, len as usize),
        };
        self.fill_record(relative_path, entry, record_size)?;
        Ok(*content.finalize().as_bytes())
    }

    /// Writes `entry`'s record over the `record_size` bytes reserved for it
    /// at its offset, and lists it for the index.
    fn fill_record(
        &mut self,
        relative_path: &str,
        entry: PakEntry,
        record_size: u64,
    ) -> Result<()> {
        use std::io::{Seek, SeekFrom};
        let mut record = Writer::new();
        entry.write_full(&mut record, self.options.version, true);
        if record.as_slice().len() as u64 != record_size {
            return Err(Error::internal(format!(
                "a pak entry record is {} bytes, {record_size} were reserved",
                record.as_slice().len()
            )));
        }
        let io = |e| Error::io(&self.path, e);
        self.file.seek(SeekFrom::Start(entry.offset)).map_err(io)?;
        self.file.write_all(record.as_slice()).map_err(io)?;
        self.file.seek(SeekFrom::Start(self.position)).map_err(io)?;
        self.entries.push((relative_path.to_string(), entry));
        Ok(())
    }

    /// Cuts the pak back to `offset`, dropping what was written after it.
    fn rewind_to(&mut self, offset: u64) -> Result<()> {
        use std::io::{Seek, SeekFrom};
        let io = |e| Error::io(&self.path, e);
        self.file.flush().map_err(io)?;
        self.file.get_ref().set_len(offset).map_err(io)?;
        self.file.seek(SeekFrom::Start(offset)).map_err(io)?;
        self.position = offset;
        Ok(())
    }

    /// [`add_file`](Self::add_file) with a game's own cipher: blocks are
    /// zero-padded to 16 bytes and the cipher seals the stored bytes.
    fn add_sealed_file(
        &mut self,
        relative_path: &str,
        data: &[u8],
        cipher: &dyn PakCipher,
    ) -> Result<()> {
        let offset = self.position;
        let compression = self.options.compression;
        let mut payload: Vec<Vec<u8>> = vec![data.to_vec()];
        let mut method = 0;
        if compression != Compression::None && !data.is_empty() {
            let blocks: Vec<Vec<u8>> = data
                .chunks(PAK_BLOCK_SIZE as usize)
                .map(|c| compression.compress(c))
                .collect::<Result<_>>()?;
            if blocks.iter().map(Vec::len).sum::<usize>() < data.len() {
                payload = blocks;
                method = 1;
            }
        }
        let hash = sha1(&payload.concat());
        let record_size = PakEntry::record_size(
            self.options.version,
            if method != 0 { payload.len() } else { 0 },
            method != 0,
        );
        // The game's cipher pads every block to 16 bytes, like AES.
        let blocks = if method != 0 {
            PakBlock::consecutive(record_size, payload.iter().map(|b| b.len() as u64), true)
        } else {
            Vec::new()
        };
        let stored: Vec<u8> = if method != 0 {
            payload
                .iter()
                .flat_map(|b| {
                    let mut b = b.clone();
                    b.resize(b.len().next_multiple_of(16), 0);
                    b
                })
                .collect()
        } else {
            payload.concat()
        };
        let sealed = cipher.seal_entry(&self.options.mount_point, relative_path, stored);
        // An uncompressed entry records its plain size (the encoded index
        // cannot hold another); compressed ones the padded blocks'.
        let entry = PakEntry {
            offset,
            size: if method != 0 {
                sealed.len() as u64
            } else {
                data.len() as u64
            },
            uncompressed_size: data.len() as u64,
            method,
            timestamp: 0,
            hash,
            blocks,
            encrypted: true,
            deleted: false,
            block_size: entry_block_size(method, data.len()),
        };
        self.push_entry(relative_path, entry, &sealed)
    }

    /// Writes an entry's record and its stored bytes, and lists it for the index.
    fn push_entry(&mut self, relative_path: &str, entry: PakEntry, stored: &[u8]) -> Result<()> {
        let mut record = Writer::new();
        entry.write_full(&mut record, self.options.version, true);
        self.emit(record.as_slice())?;
        self.emit(stored)?;
        self.entries.push((relative_path.to_string(), entry));
        Ok(())
    }

    /// Seals a part of the index: pads it (with its own first bytes, as
    /// UnrealPak does) and encrypts it when the index is encrypted; returns
    /// the bytes to store and the SHA-1 the index records (of the padded
    /// plain text).
    fn seal(&self, mut part: Vec<u8>) -> (Vec<u8>, [u8; 20]) {
        if let Some(cipher) = &self.cipher {
            part.resize(part.len().next_multiple_of(16), 0);
            let hash = sha1(&part);
            cipher.encrypt_index(&mut part);
            (part, hash)
        } else if let Some(key) = self.index_key() {
            pad_like_engine(&mut part);
            let hash = sha1(&part);
            key.encrypt(&mut part);
            (part, hash)
        } else {
            let hash = sha1(&part);
            (part, hash)
        }
    }

    fn entry_key(&self) -> Option<&AesKey> {
        self.options
            .key
            .as_ref()
            .filter(|_| self.options.encrypt_entries)
    }

    fn index_key(&self) -> Option<&AesKey> {
        self.options
            .key
            .as_ref()
            .filter(|_| self.options.encrypt_index)
    }

    /// Writes the index and footer and flushes the file.
    pub fn finish(mut self) -> Result<()> {
        let index_offset = self.position;
        let seed = self.options.path_hash_seed;
        let mut encoded = Writer::new();
        let mut unencoded = Vec::new();
        let mut locations = Vec::with_capacity(self.entries.len());
        for (_, entry) in &self.entries {
            if entry.is_encodable() {
                locations.push(encoded.pos() as i32);
                entry.write_encoded(&mut encoded);
            } else {
                unencoded.push(entry.clone());
                locations.push(-(unencoded.len() as i32));
            }
        }

        // Both secondary indexes list entries in the order they were added,
        // as UnrealPak's do.
        let hashed = self
            .entries
            .iter()
            .zip(&locations)
            .map(|((path, _), &loc)| (path_hash(path, seed), loc))
            .collect();
        let mut phi = Writer::new();
        PathHashIndex(hashed).write(&mut phi);
        let mut fdi = FullDirectoryIndex::default();
        for ((path, _), &loc) in self.entries.iter().zip(&locations) {
            fdi.add_file(path, loc);
        }
        let mut fdi_bytes = Writer::new();
        fdi.write(&mut fdi_bytes, self.options.version);

        let (phi, phi_hash) = self.seal(phi.into_inner());
        let (fdi, fdi_hash) = self.seal(fdi_bytes.into_inner());

        // The primary index's size does not depend on the secondary
        // offsets it records, so measure it with placeholders first.
        let mut primary = PrimaryIndex {
            mount_point: self.options.mount_point.clone(),
            entry_count: self.entries.len() as u32,
            path_hash_seed: seed,
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
            unencoded_entries: unencoded,
        };
        let mut probe = Writer::new();
        primary.write(&mut probe, self.options.version);
        let primary_len = if self.index_key().is_some() || self.cipher.is_some() {
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
        primary.write(&mut primary_bytes, self.options.version);
        let (primary_bytes, primary_hash) = self.seal(primary_bytes.into_inner());

        self.emit(&primary_bytes)?;
        self.emit(&phi)?;
        self.emit(&fdi)?;
        if let Some(cipher) = self.cipher.clone() {
            self.emit(cipher.footer_prefix())?;
        }

        let footer = PakFooter {
            version: self.options.version,
            encryption_key_guid: self.options.encryption_key_guid,
            encrypted_index: self.index_key().is_some() || self.cipher.is_some(),
            index_offset,
            index_size: primary_bytes.len() as u64,
            index_hash: primary_hash,
            frozen_index: false,
            compression_methods: if self.entries.iter().any(|(_, e)| e.method != 0) {
                vec![self.options.compression.engine_name().to_string()]
            } else {
                Vec::new()
            },
            pakchunk_index: None,
        };
        let mut footer_bytes = Writer::new();
        footer.write(&mut footer_bytes);
        self.emit(footer_bytes.as_slice())?;
        // Flushed, not synced: whoever publishes the file syncs it once
        // (the build's temporary, `TempFile::stage`).
        self.file.flush().map_err(|e| Error::io(&self.path, e))
    }
}

/// Fills `buf` from `file`; the file ending first means it was cut while
/// being read (it had `len` bytes when opened).
fn read_exactly(file: &mut File, buf: &mut [u8], source: &Path, len: u64) -> Result<()> {
    use std::io::Read;
    file.read_exact(buf).map_err(|e| {
        if e.kind() == std::io::ErrorKind::UnexpectedEof {
            changed_while_read(source, len)
        } else {
            Error::io(source, e)
        }
    })
}

/// Checks that `file` ends where it did when opened.
fn check_at_end(file: &mut File, source: &Path, len: u64) -> Result<()> {
    use std::io::Read;
    match file.read(&mut [0u8; 1]) {
        Ok(0) => Ok(()),
        Ok(_) => Err(changed_while_read(source, len)),
        Err(e) => Err(Error::io(source, e)),
    }
}

fn changed_while_read(source: &Path, len: u64) -> Error {
    Error::invalid(format!(
        "the file no longer has the {len} bytes it had when the build opened it"
    ))
    .in_file(source)
    .with_hint("the file changed during the build; build again")
}

/// The block size an entry records: the pak's block size capped at the
/// file's length when compressed, 0 when stored as is.
fn entry_block_size(method: u32, len: usize) -> u32 {
    if method != 0 {
        PAK_BLOCK_SIZE.min(len as u32)
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bytes that compress (text), bytes that do not (a pseudo-random
    /// run), lengths around the block size and the AES block.
    fn samples() -> Vec<Vec<u8>> {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut noise = |len: usize| -> Vec<u8> {
            (0..len)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    state as u8
                })
                .collect()
        };
        let text: Vec<u8> = b"[Script/Engine.Game]\nValue=1\n"
            .iter()
            .copied()
            .cycle()
            .take(PAK_BLOCK_SIZE as usize * 2 + 77)
            .collect();
        let mut mixed = text.clone();
        mixed.extend(noise(PAK_BLOCK_SIZE as usize * 3));
        vec![
            Vec::new(),
            b"abc".to_vec(),
            text,
            noise(PAK_BLOCK_SIZE as usize + 5),
            noise(16 * 1000),
            mixed,
        ]
    }

    /// A pak of `files` written from memory and one streamed from disk are
    /// the same bytes, whatever the compression and key.
    #[test]
    fn streamed_files_are_written_as_files_from_memory() {
        let dir = tempfile::tempdir().unwrap();
        let files = samples();
        let sources: Vec<PathBuf> = files
            .iter()
            .enumerate()
            .map(|(i, bytes)| {
                let path = dir.path().join(format!("source-{i}"));
                std::fs::write(&path, bytes).unwrap();
                path
            })
            .collect();
        let key = AesKey::parse(&"ab".repeat(32)).unwrap();
        for compression in [Compression::None, Compression::Zlib] {
            for key in [None, Some(key.clone())] {
                let write = |name: &str, streamed: bool| {
                    let path = dir.path().join(name);
                    let options = PakWriterOptions {
                        compression,
                        key: key.clone(),
                        ..PakWriterOptions::default()
                    };
                    let mut pak = PakWriter::create_with(&path, options).unwrap();
                    for (i, (bytes, source)) in files.iter().zip(&sources).enumerate() {
                        let name = format!("Game/File{i}.bin");
                        if streamed {
                            let hash = pak.add_file_from(&name, source).unwrap();
                            assert_eq!(hash, *blake3::hash(bytes).as_bytes());
                        } else {
                            pak.add_file(&name, bytes).unwrap();
                        }
                    }
                    pak.finish().unwrap();
                    std::fs::read(path).unwrap()
                };
                let from_memory = write("memory.pak", false);
                let streamed = write("streamed.pak", true);
                assert!(
                    from_memory == streamed,
                    "{compression:?}, key: {}",
                    key.is_some()
                );
                let reader = crate::pak::reader::PakReader::open(
                    &dir.path().join("streamed.pak"),
                    key.clone(),
                )
                .unwrap();
                for (i, bytes) in files.iter().enumerate() {
                    let entry = reader.entry(&format!("Game/File{i}.bin")).unwrap();
                    assert_eq!(&reader.read(entry).unwrap(), bytes);
                }
            }
        }
    }

    /// With a game's cipher that seals a prefix of each entry (Marvel
    /// Rivals'), a streamed file is sealed on the way into the bytes the
    /// whole file sealed in memory gives: files shorter than, as long as
    /// and longer than their prefix, compressed or not.
    #[test]
    fn sealed_streamed_files_are_written_as_sealed_files_from_memory() {
        use crate::fixups::marvel_rivals::pak_cipher::RivalsPakCipher;
        use crate::fixups::marvel_rivals::pak_cipher::{encrypted_prefix, root_path};
        let dir = tempfile::tempdir().unwrap();
        let mount = PakWriterOptions::default().mount_point;
        let mut files: Vec<(String, Vec<u8>)> = samples()
            .into_iter()
            .enumerate()
            .map(|(i, bytes)| (format!("Game/File{i}.bin"), bytes))
            .collect();
        for (name, extra) in [("Game/Exact.bin", 0), ("Game/OneMore.bin", 1)] {
            let len = encrypted_prefix(&root_path(&mount, name)) + extra;
            files.push((name.to_string(), (0..len).map(|i| (i * 7) as u8).collect()));
        }
        let key = AesKey::parse(&"cd".repeat(32)).unwrap();
        let cipher: std::sync::Arc<dyn PakCipher> = std::sync::Arc::new(RivalsPakCipher::new(&key));
        for compression in [Compression::None, Compression::Zlib] {
            let write = |name: &str, streamed: bool| {
                let path = dir.path().join(name);
                let options = PakWriterOptions {
                    compression,
                    ..PakWriterOptions::default()
                };
                let mut pak = PakWriter::create_with(&path, options)
                    .unwrap()
                    .with_cipher(cipher.clone());
                for (name, bytes) in &files {
                    if streamed {
                        let source = dir.path().join("source");
                        std::fs::write(&source, bytes).unwrap();
                        let hash = pak.add_file_from(name, &source).unwrap();
                        assert_eq!(hash, *blake3::hash(bytes).as_bytes());
                    } else {
                        pak.add_file(name, bytes).unwrap();
                    }
                }
                pak.finish().unwrap();
                std::fs::read(path).unwrap()
            };
            let from_memory = write("memory.pak", false);
            let streamed = write("streamed.pak", true);
            assert!(from_memory == streamed, "{compression:?}");
        }
    }

    #[test]
    fn an_unreadable_source_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let mut pak =
            PakWriter::create_with(&dir.path().join("out.pak"), PakWriterOptions::default())
                .unwrap();
        // A source that is a folder cannot be read.
        assert!(pak.add_file_from("Game/Dir", dir.path()).is_err());
        let missing = dir.path().join("missing");
        assert!(pak.add_file_from("Game/Missing", &missing).is_err());
    }
}
