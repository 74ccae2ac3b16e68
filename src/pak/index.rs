//! The pak's index records, each with its `read` and `write` together: the
//! footer (`FPakInfo`, per version), the flat index of versions before 10,
//! and the primary index, path-hash index and full directory index of
//! version 10+.

use super::entry::PakEntry;
use super::{PakVersion, PAK_MAGIC};
use crate::binary::{Reader, Writer};
use crate::error::{Context, Error, Result};

/// `FPakInfo`, the footer. Its size depends on the version
/// ([`PakVersion::footer_size`]); [`PakFooter::find`] tries each layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PakFooter {
    pub version: PakVersion,
    pub encryption_key_guid: [u8; 16],
    pub encrypted_index: bool,
    pub index_offset: u64,
    pub index_size: u64,
    pub index_hash: [u8; 20],
    /// Version 9's frozen-index flag (a memory image of the index; zenpak
    /// refuses it).
    pub frozen_index: bool,
    /// Method names of version 8+; entry method `n` is `compression_methods[n - 1]`.
    /// Empty names are kept so that indices stay right.
    pub compression_methods: Vec<String>,
}

impl PakFooter {
    /// Reads the footer of the pak at `path` (no key needed: the footer is
    /// never encrypted).
    pub fn read_file(path: &std::path::Path) -> Result<Self> {
        use std::io::{Read, Seek, SeekFrom};
        let mut file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
        let len = file.metadata().map_err(|e| Error::io(path, e))?.len();
        let tail_len = len.min(PakVersion::V9.footer_size() as u64);
        let mut tail = vec![0; tail_len as usize];
        file.seek(SeekFrom::Start(len - tail_len))
            .and_then(|_| file.read_exact(&mut tail))
            .map_err(|e| Error::io(path, e))?;
        Self::find(&tail, len - tail_len).map_err(|e| e.in_file(path))
    }

    /// Finds the footer at the end of `tail` (the last bytes of the file,
    /// `tail_start` being the file offset of `tail[0]`): the first version,
    /// newest first, whose magic and version number sit where its layout
    /// puts them.
    pub fn find(tail: &[u8], tail_start: u64) -> Result<Self> {
        for version in PakVersion::ALL {
            let size = version.footer_size();
            if tail.len() < size {
                continue;
            }
            let at = tail.len() - size;
            let mut magic_at = at;
            if version.has_encryption_key_guid() {
                magic_at += 16;
            }
            if version.has_encrypted_index_flag() {
                magic_at += 1;
            }
            let word =
                |i: usize| u32::from_le_bytes([tail[i], tail[i + 1], tail[i + 2], tail[i + 3]]);
            if word(magic_at) == PAK_MAGIC && word(magic_at + 4) == version.number() {
                let mut r = Reader::with_base(&tail[at..], tail_start + at as u64);
                return PakFooter::read(&mut r, version);
            }
        }
        Err(Error::format(
            tail_start + tail.len() as u64,
            "no pak footer at the end of the file (not a pak, a truncated one, or a pak version zenpak does not know)",
        )
        .with_hint("zenpak reads pak versions 1 to 11 as the engine writes them"))
    }

    pub fn read(r: &mut Reader, version: PakVersion) -> Result<Self> {
        let encryption_key_guid = if version.has_encryption_key_guid() {
            r.array::<16>()?
        } else {
            [0; 16]
        };
        let encrypted_index = version.has_encrypted_index_flag() && r.u8()? != 0;
        let at = r.pos();
        if r.u32()? != PAK_MAGIC {
            return Err(r.error_at(at, "pak footer magic is missing"));
        }
        let at = r.pos();
        let number = r.u32()?;
        if number != version.number() {
            return Err(r.error_at(at, format!("pak version {number}, expected {version}")));
        }
        let index_offset = r.u64()?;
        let index_size = r.u64()?;
        let index_hash = r.array::<20>()?;
        let frozen_index = version.has_frozen_index_flag() && r.u8()? != 0;
        let mut compression_methods = Vec::new();
        for _ in 0..version.compression_method_names() {
            let raw = r.bytes(32)?;
            let end = raw.iter().position(|&b| b == 0).unwrap_or(32);
            compression_methods.push(raw[..end].iter().map(|&b| b as char).collect());
        }
        while compression_methods
            .last()
            .is_some_and(|m: &String| m.is_empty())
        {
            compression_methods.pop();
        }
        Ok(PakFooter {
            version,
            encryption_key_guid,
            encrypted_index,
            index_offset,
            index_size,
            index_hash,
            frozen_index,
            compression_methods,
        })
    }

    pub fn write(&self, w: &mut Writer) {
        let start = w.pos();
        let version = self.version;
        if version.has_encryption_key_guid() {
            w.bytes(&self.encryption_key_guid);
        }
        if version.has_encrypted_index_flag() {
            w.u8(self.encrypted_index as u8);
        }
        w.u32(PAK_MAGIC);
        w.u32(version.number());
        w.u64(self.index_offset);
        w.u64(self.index_size);
        w.bytes(&self.index_hash);
        if version.has_frozen_index_flag() {
            w.u8(self.frozen_index as u8);
        }
        for i in 0..version.compression_method_names() {
            let mut name = [0u8; 32];
            if let Some(m) = self.compression_methods.get(i) {
                let n = m.len().min(31);
                name[..n].copy_from_slice(&m.as_bytes()[..n]);
            }
            w.bytes(&name);
        }
        debug_assert_eq!(w.pos() - start, version.footer_size());
    }
}

/// The index of versions before 10: mount point, then each entry's path
/// and full record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlatIndex {
    pub mount_point: String,
    pub entries: Vec<(String, PakEntry)>,
}

impl FlatIndex {
    pub fn read(r: &mut Reader, version: PakVersion) -> Result<Self> {
        let mount_point = r.fstring().context("mount point")?;
        let min_record = 4 + PakEntry::record_size(version, 0, false) as usize;
        let count = r.count_u32(min_record).context("entry count")?;
        let mut entries = Vec::with_capacity(count);
        for i in 0..count {
            let name = r.fstring().with_context(|| format!("entry {i} > path"))?;
            let entry =
                PakEntry::read_full(r, version).with_context(|| format!("entry `{name}`"))?;
            entries.push((name, entry));
        }
        Ok(FlatIndex {
            mount_point,
            entries,
        })
    }

    pub fn write(&self, w: &mut Writer, version: PakVersion) {
        w.fstring(&self.mount_point);
        w.u32(self.entries.len() as u32);
        for (name, entry) in &self.entries {
            w.fstring(name);
            entry.write_full(w, version, false);
        }
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
    /// Entries the encoded form cannot hold, as full records; a directory
    /// index location `-(i + 1)` means `unencoded_entries[i]`.
    pub unencoded_entries: Vec<PakEntry>,
}

impl PrimaryIndex {
    pub fn read(r: &mut Reader, version: PakVersion) -> Result<Self> {
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
        let min_record = PakEntry::record_size(version, 0, false) as usize;
        let unencoded = r.count_u32(min_record).context("unencoded entries")?;
        let mut unencoded_entries = Vec::with_capacity(unencoded);
        for i in 0..unencoded {
            unencoded_entries.push(
                PakEntry::read_full(r, version).with_context(|| format!("unencoded entry {i}"))?,
            );
        }
        Ok(PrimaryIndex {
            mount_point,
            entry_count,
            path_hash_seed,
            path_hash_index,
            full_directory_index,
            encoded_entries,
            unencoded_entries,
        })
    }

    pub fn write(&self, w: &mut Writer, version: PakVersion) {
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
        w.u32(self.unencoded_entries.len() as u32);
        for e in &self.unencoded_entries {
            e.write_full(w, version, false);
        }
    }
}

/// `(path hash, entry location)` pairs in the order the pak lists its
/// entries, then an (empty) pruned directory count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathHashIndex(pub Vec<(u64, i32)>);

impl PathHashIndex {
    pub fn read(r: &mut Reader) -> Result<Self> {
        let n = r.count_u32(12)?;
        let mut entries = Vec::with_capacity(n);
        for _ in 0..n {
            entries.push((r.u64()?, r.i32()?));
        }
        r.u32()?;
        Ok(PathHashIndex(entries))
    }

    pub fn write(&self, w: &mut Writer) {
        w.u32(self.0.len() as u32);
        for (hash, location) in &self.0 {
            w.u64(*hash);
            w.i32(*location);
        }
        w.u32(0);
    }
}

/// Directories (with trailing `/`, root `/`) and their files with entry
/// locations, kept in stored order: the engine writes its `TMap`s in
/// insertion order, which a sorted map would not reproduce.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FullDirectoryIndex(pub Vec<(String, Vec<(String, i32)>)>);

impl FullDirectoryIndex {
    pub fn read(r: &mut Reader) -> Result<Self> {
        let dirs = r.count_u32(8)?;
        let mut out = Vec::with_capacity(dirs);
        for _ in 0..dirs {
            let dir = r.fstring().context("directory name")?;
            let files = r.count_u32(8)?;
            let mut list = Vec::with_capacity(files);
            for _ in 0..files {
                let name = r.fstring().context("file name")?;
                list.push((name, r.i32()?));
            }
            out.push((dir, list));
        }
        Ok(FullDirectoryIndex(out))
    }

    pub fn write(&self, w: &mut Writer) {
        w.u32(self.0.len() as u32);
        for (dir, files) in &self.0 {
            w.fstring(dir);
            w.u32(files.len() as u32);
            for (name, location) in files {
                w.fstring(name);
                w.i32(*location);
            }
        }
    }

    /// Adds a file, creating its directory and (as the engine does, parents
    /// first, the root `/` always) every parent directory.
    pub fn add_file(&mut self, path: &str, location: i32) {
        let (dir, file) = super::split_directory(path);
        self.ensure_directory("/");
        if dir != "/" {
            let mut parent = String::new();
            for part in dir.trim_end_matches('/').split('/') {
                parent.push_str(part);
                parent.push('/');
                self.ensure_directory(&parent);
            }
        }
        let index = self.ensure_directory(&dir);
        self.0[index].1.push((file, location));
    }

    fn ensure_directory(&mut self, dir: &str) -> usize {
        match self.0.iter().position(|(d, _)| d == dir) {
            Some(i) => i,
            None => {
                self.0.push((dir.to_string(), Vec::new()));
                self.0.len() - 1
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn footer_round_trips_and_is_found_for_every_version() {
        for version in PakVersion::ALL {
            let footer = PakFooter {
                version,
                encryption_key_guid: if version.has_encryption_key_guid() {
                    [3; 16]
                } else {
                    [0; 16]
                },
                encrypted_index: version.has_encrypted_index_flag(),
                index_offset: 1234,
                index_size: 99,
                index_hash: [7; 20],
                frozen_index: false,
                compression_methods: if version.compression_method_names() > 0 {
                    vec!["Zlib".into()]
                } else {
                    vec![]
                },
            };
            let mut w = Writer::new();
            w.zeros(300);
            footer.write(&mut w);
            let bytes = w.into_inner();
            assert_eq!(PakFooter::find(&bytes, 0).unwrap(), footer, "{version}");
        }
    }

    #[test]
    fn directory_index_keeps_insertion_order() {
        let mut fdi = FullDirectoryIndex::default();
        fdi.add_file("b/x.txt", 0);
        fdi.add_file("a/y.txt", 12);
        fdi.add_file("top.txt", 24);
        let dirs: Vec<&str> = fdi.0.iter().map(|(d, _)| d.as_str()).collect();
        assert_eq!(dirs, ["/", "b/", "a/"]);
        let mut w = Writer::new();
        fdi.write(&mut w);
        assert_eq!(
            FullDirectoryIndex::read(&mut Reader::new(w.as_slice())).unwrap(),
            fdi
        );
    }
}
