//! The pak's index records, each with its `read` and `write` together: the
//! footer (`FPakInfo`, per version), the flat index of versions before 10,
//! and the primary index, path-hash index and full directory index of
//! version 10+.

use super::entry::PakEntry;
use super::PAK_MAGIC;
use crate::binary::{Reader, Writer};
use crate::error::{Context, Error, Result};
use crate::version::PakVersion;

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
    /// Version 14's pakchunk index (`-1`: none, the engine then takes it
    /// from the file name).
    pub pakchunk_index: Option<i32>,
}

impl PakFooter {
    /// Reads the footer of the pak at `path` (no key needed: the footer is
    /// never encrypted).
    pub(crate) fn read_file(path: &std::path::Path) -> Result<Self> {
        use std::io::{Read, Seek, SeekFrom};
        let mut file = crate::limits::open_regular(path)?;
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
        // A newer layout: the magic followed by a version zenpak does not know.
        let newer = (0..tail.len().saturating_sub(8)).rev().find_map(|i| {
            let magic = u32::from_le_bytes(tail[i..i + 4].try_into().ok()?);
            let number = u32::from_le_bytes(tail[i + 4..i + 8].try_into().ok()?);
            let newest = PakVersion::ALL[0].number();
            (magic == PAK_MAGIC && number > newest && number < 64).then_some((i, number))
        });
        if let Some((i, number)) = newer {
            return Err(Error::unsupported(format!(
                "pak version {number} at byte {}: zenpak reads versions 1 to {}",
                tail_start + i as u64 + 4,
                PakVersion::ALL[0].number()
            ))
            .with_hint(
                "this pak comes from an engine release newer than zenpak knows; update zenpak",
            ));
        }
        Err(Error::format(
            tail_start + tail.len() as u64,
            "no pak footer at the end of the file (not a pak, a truncated one, or a pak version zenpak does not know)",
        )
        .with_hint("zenpak reads pak versions 1 to 14 as the engine writes them"))
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
        let pakchunk_index = if version.has_pakchunk_index() {
            Some(r.i32()?)
        } else {
            None
        };
        Ok(PakFooter {
            version,
            encryption_key_guid,
            encrypted_index,
            index_offset,
            index_size,
            index_hash,
            frozen_index,
            compression_methods,
            pakchunk_index,
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
        if version.has_pakchunk_index() {
            w.i32(self.pakchunk_index.unwrap_or(-1));
        }
        debug_assert_eq!(w.pos() - start, version.footer_size());
    }
}

/// The index of versions before 10: mount point, then each entry's path
/// and full record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FlatIndex {
    pub(crate) mount_point: String,
    pub(crate) entries: Vec<(String, PakEntry)>,
}

impl FlatIndex {
    pub(crate) fn read(r: &mut Reader, version: PakVersion) -> Result<Self> {
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
    pub(crate) fn read(r: &mut Reader) -> Result<Self> {
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
    /// Reads the index as `version` stores it: from 13 the flat form when it
    /// starts with its magic, else the map of directories (file names as
    /// UTF-8 strings from 12).
    pub fn read(r: &mut Reader, version: PakVersion) -> Result<Self> {
        if version.may_have_flat_directory_index() && r.peek_u32() == Some(FLAT_DIRECTORY_MAGIC) {
            return FlatDirectoryIndex::read(r);
        }
        let dirs = r.count_u32(8)?;
        let mut out = Vec::with_capacity(dirs);
        for _ in 0..dirs {
            let dir = r.fstring().context("directory name")?;
            let files = r.count_u32(8)?;
            let mut list = Vec::with_capacity(files);
            for _ in 0..files {
                let name = if version.has_utf8_file_names() {
                    r.utf8_string()
                } else {
                    r.fstring()
                };
                let name = name.context("file name")?;
                list.push((name, r.i32()?));
            }
            out.push((dir, list));
        }
        Ok(FullDirectoryIndex(out))
    }

    /// Writes the map form (file names as UTF-8 strings from version 12).
    pub fn write(&self, w: &mut Writer, version: PakVersion) {
        w.u32(self.0.len() as u32);
        for (dir, files) in &self.0 {
            w.fstring(dir);
            w.u32(files.len() as u32);
            for (name, location) in files {
                if version.has_utf8_file_names() {
                    w.utf8_string(name);
                } else {
                    w.fstring(name);
                }
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

/// `'PFDQ'`: the first word of a flat full directory index.
pub(crate) const FLAT_DIRECTORY_MAGIC: u32 = 0x5046_4451;

/// The flat full directory index of version 13 (`SortedDirectoryIndex`),
/// read into the map form. Layout (as FabianFG/CUE4Parse reads it; the
/// engine releases that write it are newer than 5.8): magic, then i32
/// directory count, file count, restart interval, directory-blob bytes,
/// file-blob bytes, path-hash count and a pad; the sorted path hashes (u64)
/// and their locations (i32); the directory anchors (i32, one per restart
/// interval, plus one); per directory the index of its first file (i32,
/// plus one); per file the offset of its name in the file blob (i32, plus
/// one) and its entry location (i32); the directory blob (per directory:
/// i32 bytes shared with the previous name, i32 suffix bytes, the suffix)
/// and the file blob (UTF-8 names back to back).
pub(crate) struct FlatDirectoryIndex;

impl FlatDirectoryIndex {
    pub(crate) fn read(r: &mut Reader) -> Result<FullDirectoryIndex> {
        let at = r.pos();
        if r.u32()? != FLAT_DIRECTORY_MAGIC {
            return Err(r.error_at(at, "flat directory index magic is missing"));
        }
        let mut header = [0i32; 7];
        for (i, v) in header.iter_mut().enumerate() {
            let at = r.pos();
            *v = r.i32()?;
            if *v < 0 || (i == 2 && *v == 0) {
                return Err(r.error_at(at, format!("flat directory index field {i} is {v}")));
            }
        }
        let [dirs, files, restart, dir_blob, file_blob, hashes, _] = header.map(|v| v as usize);
        r.u32()?; // pad before the 8-aligned hash table
        let anchors = dirs.div_ceil(restart) + 1;
        let tables = hashes * 12 + anchors * 4 + (dirs + 1) * 4 + (files + 1) * 4 + files * 4;
        if (tables as u128 + dir_blob as u128 + file_blob as u128) > r.remaining() as u128 {
            return Err(r.error_at(at, "flat directory index is larger than its bytes"));
        }
        r.skip(hashes * 12 + anchors * 4)?;
        let ints =
            |r: &mut Reader, n: usize| -> Result<Vec<i32>> { (0..n).map(|_| r.i32()).collect() };
        let dir_first_file = ints(r, dirs + 1)?;
        let name_offsets = ints(r, files + 1)?;
        let locations = ints(r, files)?;
        let dir_base = r.pos();
        let dir_bytes = r.bytes(dir_blob)?;
        let file_bytes = r.bytes(file_blob)?;
        let mut out = Vec::with_capacity(dirs);
        let mut name: Vec<u8> = Vec::new();
        let mut d = Reader::with_base(dir_bytes, dir_base as u64);
        for i in 0..dirs {
            let at = d.pos();
            let shared = d.u32()? as usize;
            let suffix = d.u32()? as usize;
            if shared > name.len() {
                return Err(d.error_at(
                    at,
                    format!("directory {i} shares {shared} bytes of a shorter name"),
                ));
            }
            name.truncate(shared);
            name.extend_from_slice(d.bytes(suffix)?);
            let dir = std::str::from_utf8(&name)
                .map_err(|_| d.error_at(at, format!("directory {i} is not valid UTF-8")))?
                .to_string();
            let (first, end) = (dir_first_file[i], dir_first_file[i + 1]);
            if first < 0 || end < first || end as usize > files {
                return Err(r.error_at(
                    at,
                    format!("directory {i} lists files {first}..{end} of {files}"),
                ));
            }
            let mut list = Vec::with_capacity((end - first) as usize);
            for f in first as usize..end as usize {
                let (start, stop) = (name_offsets[f], name_offsets[f + 1]);
                let file = (start >= 0 && stop >= start)
                    .then(|| file_bytes.get(start as usize..stop as usize))
                    .flatten()
                    .and_then(|b| std::str::from_utf8(b).ok())
                    .ok_or_else(|| {
                        r.error_at(at, format!("file {f} has a bad name range {start}..{stop}"))
                    })?;
                list.push((file.to_string(), locations[f]));
            }
            out.push((dir, list));
        }
        Ok(FullDirectoryIndex(out))
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
                pakchunk_index: version.has_pakchunk_index().then_some(7),
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
        for version in [PakVersion::V11, PakVersion::V12] {
            let mut w = Writer::new();
            fdi.write(&mut w, version);
            assert_eq!(
                FullDirectoryIndex::read(&mut Reader::new(w.as_slice()), version).unwrap(),
                fdi
            );
        }
    }

    /// The flat form of `fdi` as CUE4Parse reads it (restart interval 2, two
    /// path hashes), built here by hand.
    fn flat(fdi: &FullDirectoryIndex) -> Vec<u8> {
        let files: Vec<(&str, i32)> = fdi
            .0
            .iter()
            .flat_map(|(_, f)| f.iter().map(|(n, l)| (n.as_str(), *l)))
            .collect();
        let mut dir_blob = Writer::new();
        let mut previous = "";
        for (dir, _) in &fdi.0 {
            let shared = crate::arena::shared_len(dir.as_bytes(), previous.as_bytes());
            dir_blob.u32(shared as u32);
            dir_blob.u32((dir.len() - shared) as u32);
            dir_blob.bytes(&dir.as_bytes()[shared..]);
            previous = dir;
        }
        let file_blob: Vec<u8> = files.iter().flat_map(|(n, _)| n.bytes()).collect();
        let dirs = fdi.0.len();
        let mut w = Writer::new();
        w.u32(FLAT_DIRECTORY_MAGIC);
        for v in [dirs, files.len(), 2, dir_blob.pos(), file_blob.len(), 2, 0] {
            w.i32(v as i32);
        }
        w.u32(0);
        w.u64(1);
        w.u64(2);
        w.i32(0);
        w.i32(1);
        for _ in 0..dirs.div_ceil(2) + 1 {
            w.i32(0);
        }
        let mut first = 0;
        for (_, f) in &fdi.0 {
            w.i32(first);
            first += f.len() as i32;
        }
        w.i32(first);
        let mut offset = 0;
        for (n, _) in &files {
            w.i32(offset);
            offset += n.len() as i32;
        }
        w.i32(offset);
        for (_, l) in &files {
            w.i32(*l);
        }
        w.bytes(dir_blob.as_slice());
        w.bytes(&file_blob);
        w.into_inner()
    }

    #[test]
    fn the_flat_directory_index_of_version_13_reads_as_the_map() {
        let mut fdi = FullDirectoryIndex::default();
        fdi.add_file("Game/Content/Maps/Entry.umap", 0);
        fdi.add_file("Game/Content/Maps/Ünïcode.txt", 40);
        fdi.add_file("Game/Config/DefaultGame.ini", -1);
        let bytes = flat(&fdi);
        let read = FullDirectoryIndex::read(&mut Reader::new(&bytes), PakVersion::V13).unwrap();
        assert_eq!(read, fdi);
        // Before 13 the magic is a directory count: refused for its size.
        assert!(FullDirectoryIndex::read(&mut Reader::new(&bytes), PakVersion::V12).is_err());
        // Every cut is an error, never a panic.
        for cut in 0..bytes.len() {
            assert!(
                FullDirectoryIndex::read(&mut Reader::new(&bytes[..cut]), PakVersion::V13).is_err(),
                "cut at {cut}"
            );
        }
        // A shared prefix longer than the previous name is refused.
        let mut bad = bytes.clone();
        let dir_blob_at = bytes.len()
            - fdi
                .0
                .iter()
                .map(|(_, f)| f.iter().map(|(n, _)| n.len()).sum::<usize>())
                .sum::<usize>()
            - fdi.0.iter().map(|(d, _)| d.len()).sum::<usize>()
            - 8 * fdi.0.len();
        bad[dir_blob_at..dir_blob_at + 4].copy_from_slice(&9u32.to_le_bytes());
        assert!(FullDirectoryIndex::read(&mut Reader::new(&bad), PakVersion::V13).is_err());
    }
}
