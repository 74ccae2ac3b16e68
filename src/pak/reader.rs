//! Reads a pak: footer, index (version 10/11 with the full directory index,
//! or the flat index of older versions) and entry data.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::crypto::AesKey;
use super::entry::PakEntry;
use super::index::{FullDirectoryIndex, PakFooter, PathHashIndex, PrimaryIndex};
use super::{sha1, FOOTER_SIZE_V11};
use crate::binary::Reader;
use crate::compression::Compression;
use crate::error::{Context, Error, Result};

/// An entry as listed by [`PakReader::entries`].
#[derive(Debug, Clone, Serialize)]
pub struct PakEntryInfo {
    /// Path relative to the mount point.
    pub path: String,
    pub offset: u64,
    pub size: u64,
    pub uncompressed_size: u64,
    pub compression: String,
    pub encrypted: bool,
    #[serde(skip)]
    entry: PakEntry,
}

/// An open pak.
#[derive(Debug)]
pub struct PakReader {
    path: PathBuf,
    pub version: u32,
    pub mount_point: String,
    pub encrypted_index: bool,
    pub encryption_key_guid: [u8; 16],
    pub compression_methods: Vec<String>,
    pub entries: Vec<PakEntryInfo>,
    key: Option<AesKey>,
}

fn read_at(file: &mut File, path: &Path, offset: u64, len: u64, what: &str) -> Result<Vec<u8>> {
    let file_len = file.metadata().map_err(|e| Error::io(path, e))?.len();
    if offset.checked_add(len).is_none_or(|end| end > file_len) {
        return Err(Error::format(
            offset,
            format!("{what} ({len} bytes) runs past the end of the file ({file_len} bytes)"),
        )
        .in_file(path));
    }
    file.seek(SeekFrom::Start(offset))
        .map_err(|e| Error::io(path, e))?;
    let mut buf = vec![0u8; len as usize];
    file.read_exact(&mut buf).map_err(|e| Error::io(path, e))?;
    Ok(buf)
}

impl PakReader {
    /// Opens a pak and parses its index. An encrypted index needs `key`.
    pub fn open(path: &Path, key: Option<AesKey>) -> Result<Self> {
        Self::open_inner(path, key).map_err(|e| e.in_file(path))
    }

    fn open_inner(path: &Path, key: Option<AesKey>) -> Result<Self> {
        let mut file = File::open(path).map_err(|e| Error::io(path, e))?;
        let len = file.metadata().map_err(|e| Error::io(path, e))?.len();
        if len < FOOTER_SIZE_V11 as u64 {
            return Err(Error::format(
                0,
                format!("file of {len} bytes is too short to be a pak"),
            ));
        }
        let footer_at = len - FOOTER_SIZE_V11 as u64;
        let footer = read_at(&mut file, path, footer_at, FOOTER_SIZE_V11 as u64, "footer")?;
        let footer =
            PakFooter::read(&mut Reader::with_base(&footer, footer_at)).context("pak footer")?;
        let encrypted_index = footer.encrypted_index;
        // Reads one part of the index: decrypts it and checks its SHA-1.
        let mut read_part =
            |offset: u64, size: u64, hash: [u8; 20], what: &str| -> Result<Vec<u8>> {
                let mut data = read_at(&mut file, path, offset, size, what)?;
                if encrypted_index {
                    let key = key.as_ref().ok_or_else(|| {
                        Error::key(format!("the pak's {what} is encrypted"))
                            .with_hint("give the AES key (ZENPAK_AES_KEY or --aes-key-file)")
                    })?;
                    key.decrypt(&mut data)
                        .map_err(|e| e.within(what.to_string()))?;
                }
                if sha1(&data) != hash {
                    let why = if encrypted_index {
                        "wrong AES key, or the pak is corrupt"
                    } else {
                        "the pak is corrupt"
                    };
                    return Err(Error::format(
                        offset,
                        format!("{what} hash does not match ({why})"),
                    ));
                }
                Ok(data)
            };
        let index = read_part(
            footer.index_offset,
            footer.index_size,
            footer.index_hash,
            "index",
        )?;
        let mut r = Reader::with_base(&index, footer.index_offset);
        let methods = &footer.compression_methods;
        let mut entries = Vec::new();
        let mount_point;
        if footer.version >= 10 {
            let primary = PrimaryIndex::read(&mut r).context("pak index")?;
            mount_point = primary.mount_point.clone();
            if let Some(l) = primary.path_hash_index {
                // Read for integrity: its hash is checked, its entries must parse.
                let data = read_part(l.offset, l.size, l.hash, "path hash index")?;
                PathHashIndex::read(&mut Reader::with_base(&data, l.offset))
                    .context("pak path hash index")?;
            }
            let l = primary.full_directory_index.ok_or_else(|| {
                Error::unsupported(
                    "the pak has no full directory index; zenpak needs it to list files",
                )
            })?;
            let data = read_part(l.offset, l.size, l.hash, "full directory index")?;
            let fdi = FullDirectoryIndex::read(&mut Reader::with_base(&data, l.offset))
                .context("pak directory index")?;
            let encoded = &primary.encoded_entries;
            for (dir, files) in &fdi.0 {
                for (name, &off) in files {
                    let off = off as usize;
                    if off >= encoded.len() {
                        return Err(Error::invalid(format!(
                            "`{dir}{name}` points at encoded entry {off}, past the {} encoded bytes",
                            encoded.len()
                        ))
                        .within("pak directory index"));
                    }
                    let entry = PakEntry::read_encoded(&mut Reader::new(&encoded[off..]))
                        .with_context(|| format!("encoded entry of `{name}`"))?;
                    let dir = if dir == "/" { "" } else { dir.as_str() };
                    entries.push(Self::info(format!("{dir}{name}"), entry, methods)?);
                }
            }
            if entries.len() != primary.entry_count as usize {
                return Err(Error::invalid(format!(
                    "pak index says {} entries, its directory index lists {}",
                    primary.entry_count,
                    entries.len()
                )));
            }
        } else {
            mount_point = r.fstring().context("pak index > mount point")?;
            let count = r.count_u32(4).context("pak index > entry count")?;
            for _ in 0..count {
                let name = r.fstring().context("pak index > file name")?;
                let entry =
                    PakEntry::read_full(&mut r).with_context(|| format!("entry of `{name}`"))?;
                entries.push(Self::info(name, entry, methods)?);
            }
        }
        entries.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(PakReader {
            path: path.to_path_buf(),
            version: footer.version,
            mount_point,
            encrypted_index,
            encryption_key_guid: footer.encryption_key_guid,
            compression_methods: footer.compression_methods.clone(),
            entries,
            key,
        })
    }

    fn info(path: String, entry: PakEntry, methods: &[String]) -> Result<PakEntryInfo> {
        let compression = if entry.method_index == 0 {
            "None".to_string()
        } else {
            methods
                .get(entry.method_index as usize - 1)
                .cloned()
                .ok_or_else(|| {
                    Error::invalid(format!(
                        "`{path}` uses compression method {} which the footer does not name",
                        entry.method_index
                    ))
                })?
        };
        Ok(PakEntryInfo {
            path,
            offset: entry.offset,
            size: entry.size,
            uncompressed_size: entry.uncompressed_size,
            compression,
            encrypted: entry.encrypted,
            entry,
        })
    }

    /// Reads, decrypts and decompresses one entry's data, checking its hash.
    pub fn read(&self, info: &PakEntryInfo) -> Result<Vec<u8>> {
        self.read_inner(info).map_err(|e| {
            e.within(format!("pak entry `{}`", info.path))
                .in_file(&self.path)
        })
    }

    fn read_inner(&self, info: &PakEntryInfo) -> Result<Vec<u8>> {
        let mut file = File::open(&self.path).map_err(|e| Error::io(&self.path, e))?;
        let entry = &info.entry;
        let header_len = PakEntry::inline_size(entry.blocks.len(), entry.method_index != 0);
        let header = read_at(
            &mut file,
            &self.path,
            entry.offset,
            header_len,
            "entry header",
        )?;
        let inline = PakEntry::read_full(&mut Reader::with_base(&header, entry.offset))?;
        if inline.size != entry.size
            || inline.uncompressed_size != entry.uncompressed_size
            || inline.method_index != entry.method_index
        {
            return Err(Error::format(
                entry.offset,
                "the entry's header disagrees with the index",
            ));
        }
        let compression = Compression::from_engine_name(&info.compression)?;
        let key = || {
            self.key.as_ref().ok_or_else(|| {
                Error::key("the entry is encrypted")
                    .with_hint("give the AES key (ZENPAK_AES_KEY or --aes-key-file)")
            })
        };
        let data_at = entry
            .offset
            .checked_add(header_len)
            .ok_or_else(|| Error::format(entry.offset, "entry offset overflows"))?;
        let mut stored = Vec::with_capacity(entry.size.min(1 << 26) as usize);
        let mut out = Vec::with_capacity(entry.uncompressed_size.min(1 << 26) as usize);
        if entry.method_index == 0 {
            let len = if entry.encrypted {
                entry.size.next_multiple_of(16)
            } else {
                entry.size
            };
            let mut data = read_at(&mut file, &self.path, data_at, len, "entry data")?;
            if entry.encrypted {
                key()?.decrypt(&mut data)?;
                data.truncate(entry.size as usize);
            }
            stored.extend_from_slice(&data);
            out = data;
        } else {
            let mut remaining = entry.uncompressed_size;
            for block in &entry.blocks {
                let len = block
                    .end
                    .checked_sub(block.start)
                    .ok_or_else(|| Error::format(entry.offset, "block ends before it starts"))?;
                let read_len = if entry.encrypted {
                    len.next_multiple_of(16)
                } else {
                    len
                };
                let mut data = read_at(
                    &mut file,
                    &self.path,
                    entry
                        .offset
                        .checked_add(block.start)
                        .ok_or_else(|| Error::format(entry.offset, "block offset overflows"))?,
                    read_len,
                    "compression block",
                )?;
                if entry.encrypted {
                    key()?.decrypt(&mut data)?;
                    data.truncate(len as usize);
                }
                stored.extend_from_slice(&data);
                if entry.block_size > crate::iostore::toc::MAX_BLOCK_SIZE {
                    return Err(Error::format(
                        entry.offset,
                        format!(
                            "compression block size {} is out of range",
                            entry.block_size
                        ),
                    ));
                }
                let want = remaining.min(entry.block_size.max(1) as u64);
                out.extend(compression.decompress(&data, want as usize)?);
                remaining -= want;
            }
            if out.len() as u64 != entry.uncompressed_size {
                return Err(Error::format(
                    entry.offset,
                    format!(
                        "entry decompressed to {} bytes, expected {}",
                        out.len(),
                        entry.uncompressed_size
                    ),
                ));
            }
        }
        if sha1(&stored) != inline.hash {
            return Err(Error::format(
                data_at,
                "entry data hash does not match (the pak is corrupt or the AES key is wrong)",
            ));
        }
        Ok(out)
    }
}

impl PakReader {
    /// Writes every entry under `dir` at its path; nothing is written
    /// outside `dir` whatever the paths in the pak say.
    pub fn unpack(&self, dir: &Path) -> Result<usize> {
        for entry in &self.entries {
            let data = self.read(entry)?;
            crate::iostore::reader::write_inside(dir, &entry.path, &data)?;
        }
        Ok(self.entries.len())
    }
}
