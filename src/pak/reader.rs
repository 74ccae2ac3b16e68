//! Reads a pak: footer, index (version 10/11 with the full directory index,
//! or the flat index of older versions) and entry data.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::crypto::AesKey;
use super::entry::PakEntry;
use super::{sha1, FOOTER_SIZE_V11, PAK_MAGIC};
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
    if offset.checked_add(len).map_or(true, |end| end > file_len) {
        return Err(Error::format(offset, format!("{what} ({len} bytes) runs past the end of the file ({file_len} bytes)")).in_file(path));
    }
    file.seek(SeekFrom::Start(offset)).map_err(|e| Error::io(path, e))?;
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
            return Err(Error::format(0, format!("file of {len} bytes is too short to be a pak")));
        }
        let footer_at = len - FOOTER_SIZE_V11 as u64;
        let footer = read_at(&mut file, path, footer_at, FOOTER_SIZE_V11 as u64, "footer")?;
        let mut r = Reader::with_base(&footer, footer_at);
        let encryption_key_guid = r.array::<16>()?;
        let encrypted_index = r.u8()? != 0;
        let at = r.pos();
        let magic = r.u32()?;
        if magic != PAK_MAGIC {
            return Err(r.error_at(at, "pak footer magic is missing (not a pak, or truncated)").within("pak footer"));
        }
        let version = r.u32()?;
        if !(8..=11).contains(&version) || version == 9 {
            return Err(r.error_at(at + 4, format!("pak version {version} is not supported (8, 10 and 11 are)")));
        }
        let index_offset = r.u64()?;
        let index_size = r.u64()?;
        let index_hash = r.array::<20>()?;
        let mut compression_methods = Vec::new();
        for _ in 0..5 {
            let raw = r.bytes(32)?;
            let end = raw.iter().position(|&b| b == 0).unwrap_or(32);
            if end > 0 {
                compression_methods.push(raw[..end].iter().map(|&b| b as char).collect());
            }
        }
        let decrypt = |mut data: Vec<u8>, what: &str| -> Result<Vec<u8>> {
            if encrypted_index {
                let key = key.as_ref().ok_or_else(|| {
                    Error::other(format!("the pak's {what} is encrypted; give the AES key (ZENPAK_AES_KEY or --aes-key-file)"))
                })?;
                key.decrypt(&mut data)?;
            }
            Ok(data)
        };
        let index = read_at(&mut file, path, index_offset, index_size, "index")?;
        let index = decrypt(index, "index")?;
        if sha1(&index) != index_hash {
            return Err(Error::format(index_offset, if encrypted_index {
                "index hash does not match (wrong AES key, or the index is corrupt)"
            } else {
                "index hash does not match (the index is corrupt)"
            }).within("pak index"));
        }
        let mut r = Reader::with_base(&index, index_offset);
        let mount_point = r.fstring().context("pak index > mount point")?;
        let count = r.count_u32(4).context("pak index > entry count")?;
        let mut entries = Vec::with_capacity(count);
        if version >= 10 {
            let _seed = r.u64()?;
            if r.u32()? != 0 {
                // The path-hash index is checked for integrity only.
                let off = r.u64()?;
                let size = r.u64()?;
                let hash = r.array::<20>()?;
                let phi = decrypt(read_at(&mut file, path, off, size, "path hash index")?, "path hash index")?;
                if sha1(&phi) != hash {
                    return Err(Error::format(off, "path hash index hash does not match").within("pak path hash index"));
                }
            }
            let mut fdi = None;
            if r.u32()? != 0 {
                let off = r.u64()?;
                let size = r.u64()?;
                let hash = r.array::<20>()?;
                let data = decrypt(read_at(&mut file, path, off, size, "full directory index")?, "full directory index")?;
                if sha1(&data) != hash {
                    return Err(Error::format(off, "full directory index hash does not match").within("pak directory index"));
                }
                fdi = Some((data, off));
            }
            let n = r.count_u32(1).context("pak index > encoded entries")?;
            let encoded = r.bytes(n)?;
            let encoded_at = r.offset() - n as u64;
            let (fdi, fdi_at) = fdi.ok_or_else(|| Error::other("pak has no full directory index; zenpak needs it to list files"))?;
            let mut d = Reader::with_base(&fdi, fdi_at);
            let dirs = d.count_u32(8).context("pak directory index")?;
            for _ in 0..dirs {
                let dir = d.fstring().context("pak directory index > directory")?;
                let files = d.count_u32(8)?;
                for _ in 0..files {
                    let name = d.fstring().context("pak directory index > file")?;
                    let off = d.u32()? as usize;
                    if off >= encoded.len() {
                        return Err(d.error(format!("file `{name}` points at encoded entry {off}, past the {} encoded bytes", encoded.len())));
                    }
                    let mut e = Reader::with_base(&encoded[off..], encoded_at + off as u64);
                    let entry = PakEntry::read_encoded(&mut e).with_context(|| format!("encoded entry of `{name}`"))?;
                    let dir = if dir == "/" { "" } else { dir.as_str() };
                    entries.push(Self::info(format!("{dir}{name}"), entry, &compression_methods)?);
                }
            }
        } else {
            for _ in 0..count {
                let name = r.fstring().context("pak index > file name")?;
                let entry = PakEntry::read_full(&mut r).with_context(|| format!("entry of `{name}`"))?;
                entries.push(Self::info(name, entry, &compression_methods)?);
            }
        }
        entries.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(PakReader { path: path.to_path_buf(), version, mount_point, encrypted_index, encryption_key_guid, compression_methods, entries, key })
    }

    fn info(path: String, entry: PakEntry, methods: &[String]) -> Result<PakEntryInfo> {
        let compression = if entry.method_index == 0 {
            "None".to_string()
        } else {
            methods
                .get(entry.method_index as usize - 1)
                .cloned()
                .ok_or_else(|| Error::other(format!("`{path}` uses compression method {} which the footer does not name", entry.method_index)))?
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
        self.read_inner(info).map_err(|e| e.within(format!("pak entry `{}`", info.path)).in_file(&self.path))
    }

    fn read_inner(&self, info: &PakEntryInfo) -> Result<Vec<u8>> {
        let mut file = File::open(&self.path).map_err(|e| Error::io(&self.path, e))?;
        let entry = &info.entry;
        let header_len = PakEntry::inline_size(entry.blocks.len(), entry.method_index != 0);
        let header = read_at(&mut file, &self.path, entry.offset, header_len, "entry header")?;
        let inline = PakEntry::read_full(&mut Reader::with_base(&header, entry.offset))?;
        if inline.size != entry.size || inline.uncompressed_size != entry.uncompressed_size || inline.method_index != entry.method_index {
            return Err(Error::format(entry.offset, "the entry's header disagrees with the index"));
        }
        let compression = Compression::from_engine_name(&info.compression)?;
        let key = || {
            self.key.as_ref().ok_or_else(|| Error::other("the entry is encrypted; give the AES key (ZENPAK_AES_KEY or --aes-key-file)"))
        };
        let data_at = entry.offset + header_len;
        let mut stored = Vec::with_capacity(entry.size as usize);
        let mut out = Vec::with_capacity(entry.uncompressed_size as usize);
        if entry.method_index == 0 {
            let len = if entry.encrypted { entry.size.next_multiple_of(16) } else { entry.size };
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
                let len = block.end.checked_sub(block.start).ok_or_else(|| Error::format(entry.offset, "block ends before it starts"))?;
                let read_len = if entry.encrypted { len.next_multiple_of(16) } else { len };
                let mut data = read_at(&mut file, &self.path, entry.offset + block.start, read_len, "compression block")?;
                if entry.encrypted {
                    key()?.decrypt(&mut data)?;
                    data.truncate(len as usize);
                }
                stored.extend_from_slice(&data);
                let want = remaining.min(entry.block_size.max(1) as u64);
                out.extend(compression.decompress(&data, want as usize)?);
                remaining -= want;
            }
            if out.len() as u64 != entry.uncompressed_size {
                return Err(Error::format(entry.offset, format!("entry decompressed to {} bytes, expected {}", out.len(), entry.uncompressed_size)));
            }
        }
        if sha1(&stored) != inline.hash {
            return Err(Error::format(data_at, "entry data hash does not match (the pak is corrupt or the AES key is wrong)"));
        }
        Ok(out)
    }
}
