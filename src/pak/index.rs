//! The pak's index records, each with its `read` and `write` together:
//! the footer, the primary index (version 10+), the path-hash index and
//! the full directory index.

use std::collections::BTreeMap;

use super::{FOOTER_SIZE_V11, PAK_MAGIC};
use crate::binary::{Reader, Writer};
use crate::error::{Context, Result};

/// `FPakInfo`, the footer (versions 8, 10, 11: 221 bytes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PakFooter {
    pub encryption_key_guid: [u8; 16],
    pub encrypted_index: bool,
    pub version: u32,
    pub index_offset: u64,
    pub index_size: u64,
    pub index_hash: [u8; 20],
    /// Up to five method names; entry method `n` is `compression_methods[n - 1]`.
    pub compression_methods: Vec<String>,
}

impl PakFooter {
    pub fn read(r: &mut Reader) -> Result<Self> {
        let encryption_key_guid = r.array::<16>()?;
        let encrypted_index = r.u8()? != 0;
        let at = r.pos();
        if r.u32()? != PAK_MAGIC {
            return Err(r.error_at(at, "pak footer magic is missing (not a pak, or truncated)"));
        }
        let version = r.u32()?;
        if !(8..=11).contains(&version) || version == 9 {
            return Err(r.error_at(
                at + 4,
                format!("pak version {version} is not supported (8, 10 and 11 are)"),
            ));
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
        Ok(PakFooter {
            encryption_key_guid,
            encrypted_index,
            version,
            index_offset,
            index_size,
            index_hash,
            compression_methods,
        })
    }

    pub fn write(&self, w: &mut Writer) {
        let start = w.pos();
        w.bytes(&self.encryption_key_guid);
        w.u8(self.encrypted_index as u8);
        w.u32(PAK_MAGIC);
        w.u32(self.version);
        w.u64(self.index_offset);
        w.u64(self.index_size);
        w.bytes(&self.index_hash);
        for i in 0..5 {
            let mut name = [0u8; 32];
            if let Some(m) = self.compression_methods.get(i) {
                let n = m.len().min(31);
                name[..n].copy_from_slice(&m.as_bytes()[..n]);
            }
            w.bytes(&name);
        }
        debug_assert_eq!(w.pos() - start, FOOTER_SIZE_V11);
    }
}

/// Where a secondary index lies, and the SHA-1 of its (padded) plain text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexLocation {
    pub offset: u64,
    pub size: u64,
    pub hash: [u8; 20],
}

/// The primary index of a version 10+ pak.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrimaryIndex {
    pub mount_point: String,
    pub entry_count: u32,
    pub path_hash_seed: u64,
    pub path_hash_index: Option<IndexLocation>,
    pub full_directory_index: Option<IndexLocation>,
    /// The encoded `FPakEntry` records the secondary indexes point into.
    pub encoded_entries: Vec<u8>,
}

impl PrimaryIndex {
    pub fn read(r: &mut Reader) -> Result<Self> {
        let mount_point = r.fstring().context("mount point")?;
        let entry_count = r.u32()?;
        let path_hash_seed = r.u64()?;
        let location = |r: &mut Reader| -> Result<Option<IndexLocation>> {
            if r.u32()? == 0 {
                return Ok(None);
            }
            Ok(Some(IndexLocation {
                offset: r.u64()?,
                size: r.u64()?,
                hash: r.array::<20>()?,
            }))
        };
        let path_hash_index = location(r).context("path hash index location")?;
        let full_directory_index = location(r).context("full directory index location")?;
        let n = r.count_u32(1).context("encoded entries")?;
        let encoded_entries = r.bytes(n)?.to_vec();
        let at = r.pos();
        let unencoded = r.u32()?;
        if unencoded != 0 {
            return Err(r.error_at(
                at,
                format!("{unencoded} unencoded entries are not supported"),
            ));
        }
        Ok(PrimaryIndex {
            mount_point,
            entry_count,
            path_hash_seed,
            path_hash_index,
            full_directory_index,
            encoded_entries,
        })
    }

    pub fn write(&self, w: &mut Writer) {
        w.fstring(&self.mount_point);
        w.u32(self.entry_count);
        w.u64(self.path_hash_seed);
        for loc in [&self.path_hash_index, &self.full_directory_index] {
            match loc {
                Some(l) => {
                    w.u32(1);
                    w.u64(l.offset);
                    w.u64(l.size);
                    w.bytes(&l.hash);
                }
                None => w.u32(0),
            }
        }
        w.u32(self.encoded_entries.len() as u32);
        w.bytes(&self.encoded_entries);
        w.u32(0);
    }
}

/// `(path hash, encoded entry offset)` pairs, then an (empty) pruned
/// directory count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathHashIndex(pub Vec<(u64, u32)>);

impl PathHashIndex {
    pub fn read(r: &mut Reader) -> Result<Self> {
        let n = r.count_u32(12)?;
        let mut entries = Vec::with_capacity(n);
        for _ in 0..n {
            entries.push((r.u64()?, r.u32()?));
        }
        r.u32()?;
        Ok(PathHashIndex(entries))
    }

    pub fn write(&self, w: &mut Writer) {
        w.u32(self.0.len() as u32);
        for (hash, offset) in &self.0 {
            w.u64(*hash);
            w.u32(*offset);
        }
        w.u32(0);
    }
}

/// Directory (with trailing `/`, root `/`) → file name → encoded entry offset.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FullDirectoryIndex(pub BTreeMap<String, BTreeMap<String, u32>>);

impl FullDirectoryIndex {
    pub fn read(r: &mut Reader) -> Result<Self> {
        let dirs = r.count_u32(8)?;
        let mut out = BTreeMap::new();
        for _ in 0..dirs {
            let dir = r.fstring().context("directory name")?;
            let files = r.count_u32(8)?;
            let mut map = BTreeMap::new();
            for _ in 0..files {
                let name = r.fstring().context("file name")?;
                map.insert(name, r.u32()?);
            }
            out.insert(dir, map);
        }
        Ok(FullDirectoryIndex(out))
    }

    pub fn write(&self, w: &mut Writer) {
        w.u32(self.0.len() as u32);
        for (dir, files) in &self.0 {
            w.fstring(dir);
            w.u32(files.len() as u32);
            for (name, offset) in files {
                w.fstring(name);
                w.u32(*offset);
            }
        }
    }
}
