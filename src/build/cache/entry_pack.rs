//! The build cache's converted packages, two files in the cache folder
//! rather than one per package:
//! - `packages.zpk` (the pack): after a head (magic, generation), the
//!   entries back to back, each as [`crate::build::built::BuiltPackage`]
//!   encodes it (with its own key and BLAKE3 checksum);
//! - `packages.zpi` (the index): after the same kind of head, one
//!   fixed-size [`IndexRecord`] per entry written — its key, offset and
//!   length, and a CRC-32 of the three — appended as the entry is.
//!
//! Why not a file per package: creating tens of thousands of small files
//! is what a first build spent its system time on (ext4 scans its inode
//! bitmap for each new file after many were removed, holding the folder's
//! lock; Windows' file system and scanners pay per file too), and removing
//! them is what `clean` did.
//!
//! Invariants:
//! - An entry's bytes are written before its record, so a record names
//!   bytes that were written; a build stopped in between leaves bytes no
//!   record names (unused, dropped by the next compaction). Whatever a crash
//!   tears is caught when read: a record by its CRC (the index is cut back
//!   to the last whole record), an entry by its checksum (a warning and a
//!   conversion, never wrong output).
//! - The pack and its index carry one generation. A pair that does not
//!   (a crash between replacing the one and the other) is started anew:
//!   an index is never read against another pack.
//! - A dropped entry (its files changed while the build read them) gets a
//!   tombstone record ([`EntryPack::forget`]); the last record of a key counts.
//! - At the end of a build ([`EntryPack::finish`]) the index is written
//!   anew with this build's entries only; when the bytes no record names
//!   outgrow those it names, the pack is written anew too (under a new
//!   generation). Neither file is synced, like the rest of the cache.
//! - The output folder's lock keeps two builds apart; within one build the
//!   pool's threads append and look entries up under one lock, and read
//!   entries (at their offsets) without it.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::file::write_cache_file;
use crate::binary::{Reader, Writer};
use crate::build::input::Hash;
use crate::error::{Error, Result};
use crate::publish::temporary::TempFile;

/// The pack's file name in the cache folder.
pub(crate) const PACK_FILE: &str = "packages.zpk";
/// The index's file name in the cache folder.
pub(crate) const INDEX_FILE: &str = "packages.zpi";

const PACK_MAGIC: &[u8; 8] = b"ZPKEP\x00\x00\x01";
const INDEX_MAGIC: &[u8; 8] = b"ZPKEI\x00\x00\x01";
/// A head: magic and generation.
const HEAD: u64 = 16;
/// Unused bytes the pack may hold before it is written anew, at least.
const MIN_UNUSED: u64 = 1 << 20;
/// The largest entry read back (an entry holds a package's header and
/// tables, not its export data).
const MAX_ENTRY: u32 = 64 << 20;

/// Where one entry lies in the pack: the index's record of it (48 bytes:
/// key, offset, length, CRC-32 of those 44 bytes). A length of 0 is a
/// tombstone: the key's entry was dropped ([`EntryPack::forget`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct IndexRecord {
    key: Hash,
    offset: u64,
    len: u32,
}

impl IndexRecord {
    const SIZE: usize = 48;

    fn write(&self) -> [u8; Self::SIZE] {
        let mut w = Writer::with_capacity(Self::SIZE);
        w.bytes(&self.key);
        w.u64(self.offset);
        w.u32(self.len);
        let crc = crc32(w.as_slice());
        w.u32(crc);
        let mut bytes = [0u8; Self::SIZE];
        bytes.copy_from_slice(w.as_slice());
        bytes
    }

    /// The record, unless its CRC does not match or it names bytes outside
    /// a pack of `pack_len` bytes.
    fn read(bytes: &[u8; Self::SIZE], pack_len: u64) -> Option<IndexRecord> {
        let mut r = Reader::new(bytes);
        let record = IndexRecord {
            key: r.array::<32>().ok()?,
            offset: r.u64().ok()?,
            len: r.u32().ok()?,
        };
        if r.u32().ok()? != crc32(&bytes[..r.pos() - 4]) {
            return None;
        }
        if record.len == 0 {
            // A tombstone: the key has no entry.
            return Some(record);
        }
        let end = record.offset.checked_add(u64::from(record.len))?;
        (record.offset >= HEAD && end <= pack_len && record.len <= MAX_ENTRY).then_some(record)
    }
}

fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = flate2::Crc::new();
    crc.update(bytes);
    crc.sum()
}

/// A file's head: `magic` and `generation`.
fn head(magic: &[u8; 8], generation: u64) -> Vec<u8> {
    let mut w = Writer::with_capacity(HEAD as usize);
    w.bytes(magic);
    w.u64(generation);
    w.into_inner()
}

/// The generation of a file whose head is `bytes`, if it has `magic`.
fn generation_of(bytes: &[u8], magic: &[u8; 8]) -> Option<u64> {
    let mut r = Reader::new(bytes);
    (r.array::<8>().ok()? == *magic).then_some(())?;
    r.u64().ok()
}

/// A generation no earlier pack of this folder is likely to have had.
fn new_generation() -> u64 {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    now ^ (u64::from(std::process::id()) << 48)
}

/// An entry as looked up in memory: the first 8 bytes of its key (the key
/// itself is in the index file and the entry), where it lies, and whether
/// this build has its key. A look-up that meets another key under the same
/// prefix loads an entry that names another key: damaged, converted again.
#[derive(Debug, Clone, Copy)]
struct Slot {
    prefix: u64,
    offset: u64,
    len: u32,
    wanted: bool,
}

fn prefix(key: &Hash) -> u64 {
    Reader::new(key).u64().unwrap_or_default()
}

/// The entries written since the pack was opened, and where the next goes.
#[derive(Default)]
struct Appended {
    pack_end: u64,
    index_end: u64,
    /// Per key prefix, the last record appended (a length of 0: dropped).
    at: HashMap<u64, (u64, u32)>,
}

/// The cache's converted packages: look-ups by key, appends, and the
/// pruning at the end of a build.
pub(crate) struct EntryPack {
    pack_path: PathBuf,
    index_path: PathBuf,
    generation: u64,
    /// The pack and the index, opened to read (at offsets) and to append.
    files: (File, File),
    table: Table,
}

/// Where the entries lie, by key prefix.
struct Table {
    /// The index's entries when opened, sorted by key prefix (the last
    /// record of a key counts; none is a tombstone): 24 bytes each, the
    /// one thing here that grows with the package count.
    known: Vec<Slot>,
    appended: Mutex<Appended>,
}

impl EntryPack {
    /// Opens the pack of the cache folder `dir` (which exists), reading its
    /// index; starts both anew when either is missing, of another layout or
    /// of another generation.
    pub(crate) fn open(dir: &Path) -> Result<EntryPack> {
        let pack_path = dir.join(PACK_FILE);
        let index_path = dir.join(INDEX_FILE);
        let (generation, known, index_end) = match Self::read_index(&pack_path, &index_path) {
            Some(read) => read,
            None => {
                let generation = new_generation();
                write_cache_file(&pack_path, &head(PACK_MAGIC, generation))?;
                write_cache_file(&index_path, &head(INDEX_MAGIC, generation))?;
                (generation, Vec::new(), HEAD)
            }
        };
        // A torn or damaged tail of the index is cut off, so that what is
        // appended next is read.
        let index_len = std::fs::metadata(&index_path)
            .map_err(|e| Error::io(&index_path, e))?
            .len();
        if index_len != index_end {
            std::fs::OpenOptions::new()
                .write(true)
                .open(&index_path)
                .and_then(|f| f.set_len(index_end))
                .map_err(|e| Error::io(&index_path, e))?;
        }
        let append = |path: &Path| {
            std::fs::OpenOptions::new()
                .read(true)
                .append(true)
                .open(path)
                .map_err(|e| Error::io(path, e))
        };
        let pack = append(&pack_path)?;
        let pack_end = pack.metadata().map_err(|e| Error::io(&pack_path, e))?.len();
        Ok(EntryPack {
            files: (pack, append(&index_path)?),
            generation,
            table: Table {
                known,
                appended: Mutex::new(Appended {
                    pack_end,
                    index_end,
                    at: HashMap::new(),
                }),
            },
            pack_path,
            index_path,
        })
    }

    /// Calls `each` for every whole record of the index at `index_path`
    /// (of a pack `pack_len` long), in file order, up to the first that is
    /// not. Returns the index's length up to there; `None` when it is not
    /// an index of `generation` (of any, when `None`).
    fn each_record(
        index_path: &Path,
        generation: Option<u64>,
        pack_len: u64,
        mut each: impl FnMut(&IndexRecord) -> Result<()>,
    ) -> Option<Result<u64>> {
        let file = File::open(index_path).ok()?;
        let len = file.metadata().ok()?.len();
        let mut index = BufReader::with_capacity(1 << 16, file);
        let mut index_head = [0u8; HEAD as usize];
        index.read_exact(&mut index_head).ok()?;
        let found = generation_of(&index_head, INDEX_MAGIC)?;
        if generation.is_some_and(|g| g != found) {
            return None;
        }
        let (mut end, mut bytes) = (HEAD, [0u8; IndexRecord::SIZE]);
        while end + IndexRecord::SIZE as u64 <= len && index.read_exact(&mut bytes).is_ok() {
            let Some(record) = IndexRecord::read(&bytes, pack_len) else {
                break;
            };
            if let Err(e) = each(&record) {
                return Some(Err(e));
            }
            end += IndexRecord::SIZE as u64;
        }
        Some(Ok(end))
    }

    /// The generation, the entries (sorted by key prefix, the last of each
    /// key, tombstones left out) and the length of the index up to its last
    /// good record — `None` when the two files are not a pair to use.
    fn read_index(pack_path: &Path, index_path: &Path) -> Option<(u64, Vec<Slot>, u64)> {
        let mut pack_head = [0u8; HEAD as usize];
        let mut pack = File::open(pack_path).ok()?;
        pack.read_exact(&mut pack_head).ok()?;
        let pack_len = pack.metadata().ok()?.len();
        let generation = generation_of(&pack_head, PACK_MAGIC)?;
        let records = std::fs::metadata(index_path)
            .ok()?
            .len()
            .saturating_sub(HEAD)
            / IndexRecord::SIZE as u64;
        let mut slots = Vec::with_capacity(records as usize);
        let end = Self::each_record(index_path, Some(generation), pack_len, |r| {
            slots.push(Slot {
                prefix: prefix(&r.key),
                offset: r.offset,
                len: r.len,
                wanted: true,
            });
            Ok(())
        })?
        .ok()?;
        // The last record of a key counts: reversed, a stable sort puts it
        // first among its equals, which `dedup` keeps.
        slots.reverse();
        slots.sort_by_key(|s| s.prefix);
        slots.dedup_by_key(|s| s.prefix);
        slots.retain(|s| s.len > 0);
        slots.shrink_to_fit();
        Some((generation, slots, end))
    }

    /// Notes the keys of this build's packages: at [`Self::finish`], the
    /// entries of other keys are dropped. Returns how many of `keys` have
    /// no entry.
    pub(crate) fn want(&mut self, keys: &[Hash]) -> usize {
        let mut prefixes: Vec<u64> = keys.iter().map(prefix).collect();
        prefixes.sort_unstable();
        for slot in &mut self.table.known {
            slot.wanted = prefixes.binary_search(&slot.prefix).is_ok();
        }
        drop(prefixes);
        let missing = keys.iter().filter(|key| !self.contains(key)).count();
        let appended = self
            .table
            .appended
            .get_mut()
            .unwrap_or_else(|e| e.into_inner());
        appended.at.reserve(missing);
        missing
    }

    /// Where the entry of `key` lies: the last written.
    fn find(&self, key: &Hash) -> Option<(u64, u32)> {
        self.table
            .find_prefix(prefix(key))
            .map(|(offset, len, _)| (offset, len))
    }

    /// Whether the pack holds an entry for `key`.
    pub(crate) fn contains(&self, key: &Hash) -> bool {
        self.find(key).is_some()
    }

    /// The pack's path (for messages).
    pub(crate) fn path(&self) -> &Path {
        &self.pack_path
    }

    /// The bytes of the entry of `key` and their offset in the pack;
    /// `Ok(None)` when there is none.
    pub(crate) fn load(&self, key: &Hash) -> Result<Option<(Vec<u8>, u64)>> {
        let Some((offset, len)) = self.find(key) else {
            return Ok(None);
        };
        let mut bytes = vec![0u8; len as usize];
        crate::iostore::reader::read_exact_at(&self.files.0, &mut bytes, offset)
            .map_err(|e| Error::io(&self.pack_path, e).at(offset))?;
        Ok(Some((bytes, offset)))
    }

    /// Whether the entry of `key` is `entry`'s length and begins with its
    /// first `head` bytes (which hold its key's checksum): reads those bytes only.
    pub(crate) fn holds(&self, key: &Hash, entry: &[u8], head: usize) -> bool {
        let Some((offset, len)) = self.find(key) else {
            return false;
        };
        let mut start = vec![0u8; head.min(entry.len())];
        len as usize == entry.len()
            && crate::iostore::reader::read_exact_at(&self.files.0, &mut start, offset).is_ok()
            && start[..] == entry[..start.len()]
    }

    /// Appends `entry` as the entry of `key`, then its record.
    pub(crate) fn save(&self, key: &Hash, entry: &[u8]) -> Result<()> {
        let len = u32::try_from(entry.len())
            .ok()
            .filter(|len| (1..=MAX_ENTRY).contains(len))
            .ok_or_else(|| {
                Error::limit("a build cache entry", entry.len() as u64, MAX_ENTRY.into())
            })?;
        let mut appended = self
            .table
            .appended
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let offset = appended.pack_end;
        (&self.files.0)
            .write_all(entry)
            .map_err(|e| Error::io(&self.pack_path, e).at(offset))?;
        appended.pack_end += u64::from(len);
        Self::append_record(
            &self.files.1,
            &self.index_path,
            &mut appended,
            key,
            offset,
            len,
        )
    }

    /// Drops the entries of `keys`: a tombstone record for each.
    pub(crate) fn forget(&self, keys: &[Hash]) -> Result<()> {
        let mut appended = self
            .table
            .appended
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        for key in keys {
            Self::append_record(&self.files.1, &self.index_path, &mut appended, key, 0, 0)?;
        }
        Ok(())
    }

    fn append_record(
        index: &File,
        index_path: &Path,
        appended: &mut Appended,
        key: &Hash,
        offset: u64,
        len: u32,
    ) -> Result<()> {
        let record = IndexRecord {
            key: *key,
            offset,
            len,
        };
        let mut index = index;
        index
            .write_all(&record.write())
            .map_err(|e| Error::io(index_path, e).at(appended.index_end))?;
        appended.index_end += IndexRecord::SIZE as u64;
        appended.at.insert(prefix(key), (offset, len));
        Ok(())
    }

    /// Ends the build's use of the pack: keeps the entries it wrote and the
    /// earlier ones of keys it [wants](Self::want), and drops the others.
    /// The index is written anew when it names any other (or a key twice),
    /// and the pack too when the bytes no kept record names outgrow those
    /// it names; both stream, in pack order. Both files are closed first
    /// (a file open here could not be replaced on Windows). Returns the
    /// number of entries kept.
    pub(crate) fn finish(self) -> Result<usize> {
        let EntryPack {
            pack_path,
            index_path,
            generation,
            files,
            table,
        } = self;
        drop(files);
        let (pack_end, index_end) = {
            let appended = table.appended.lock().unwrap_or_else(|e| e.into_inner());
            (appended.pack_end, appended.index_end)
        };
        let changed = || {
            Error::invalid("the cache's entry index changed while the build ran")
                .in_file(&index_path)
                .with_hint(
                    "build again (only one zenpak may build into an output folder at a time)",
                )
        };
        let (mut kept, mut used) = (0usize, 0u64);
        Self::each_record(&index_path, Some(generation), pack_end, |r| {
            if table.keeps(r) {
                kept += 1;
                used += u64::from(r.len);
            }
            Ok(())
        })
        .ok_or_else(changed)??;
        let records = (index_end - HEAD) / IndexRecord::SIZE as u64;
        let unused = pack_end.saturating_sub(HEAD + used);
        let compact = unused > used.max(MIN_UNUSED);
        if !compact && records == kept as u64 {
            return Ok(kept);
        }
        let written = match compact {
            true => new_generation(),
            false => generation,
        };
        // The index's records, each kept one moved to where the new pack
        // holds its entry when the pack is written anew.
        let new_index = TempFile::create(&index_path)?;
        let mut index = std::io::BufWriter::with_capacity(1 << 16, new_index);
        let index_error = |e: std::io::Error, index: &std::io::BufWriter<TempFile>| {
            Error::io(index.get_ref().path(), e)
        };
        index
            .write_all(&head(INDEX_MAGIC, written))
            .map_err(|e| index_error(e, &index))?;
        let mut pack = match compact {
            true => {
                let mut pack =
                    std::io::BufWriter::with_capacity(1 << 16, TempFile::create(&pack_path)?);
                pack.write_all(&head(PACK_MAGIC, written))
                    .map_err(|e| Error::io(pack.get_ref().path(), e))?;
                Some((
                    pack,
                    File::open(&pack_path).map_err(|e| Error::io(&pack_path, e))?,
                ))
            }
            false => None,
        };
        let (mut offset, mut bytes) = (HEAD, Vec::new());
        Self::each_record(&index_path, Some(generation), pack_end, |r| {
            if !table.keeps(r) {
                return Ok(());
            }
            let mut record = *r;
            if let Some((pack, old)) = &mut pack {
                bytes.resize(r.len as usize, 0);
                crate::iostore::reader::read_exact_at(old, &mut bytes, r.offset)
                    .map_err(|e| Error::io(&pack_path, e).at(r.offset))?;
                pack.write_all(&bytes)
                    .map_err(|e| Error::io(pack.get_ref().path(), e))?;
                record.offset = offset;
                offset += u64::from(r.len);
            }
            index
                .write_all(&record.write())
                .map_err(|e| index_error(e, &index))
        })
        .ok_or_else(changed)??;
        let index = flushed(index)?;
        let mut staged = Vec::new();
        if let Some((pack, old)) = pack {
            drop(old);
            let pack = flushed(pack)?;
            staged.push(pack.stage_unsynced());
        }
        // The pack first: an index of the old generation is not read
        // against the new pack.
        staged.push(index.stage_unsynced());
        crate::publish::publish(Vec::new(), staged)?;
        Ok(kept)
    }
}

impl Table {
    /// Where the entry of key prefix `prefix` lies (the last written), and
    /// whether [`EntryPack::finish`] keeps it: written by this build, or of
    /// a key it wants.
    fn find_prefix(&self, prefix: u64) -> Option<(u64, u32, bool)> {
        let appended = self.appended.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(&(offset, len)) = appended.at.get(&prefix) {
            return (len > 0).then_some((offset, len, true));
        }
        drop(appended);
        let i = self
            .known
            .binary_search_by_key(&prefix, |s| s.prefix)
            .ok()?;
        let slot = self.known[i];
        Some((slot.offset, slot.len, slot.wanted))
    }

    /// Whether `record` of the index is the one that counts for its key,
    /// and is kept.
    fn keeps(&self, record: &IndexRecord) -> bool {
        record.len > 0
            && self
                .find_prefix(prefix(&record.key))
                .is_some_and(|(offset, len, kept)| {
                    kept && (offset, len) == (record.offset, record.len)
                })
    }
}

/// The temporary behind `writer`, all written.
fn flushed(writer: std::io::BufWriter<TempFile>) -> Result<TempFile> {
    let path = writer.get_ref().path().to_path_buf();
    writer
        .into_inner()
        .map_err(|e| Error::io(path, e.into_error()))
}

/// The keys the index at `dir` names, sorted.
#[cfg(test)]
fn indexed_keys(dir: &Path) -> Vec<Hash> {
    let mut keys = Vec::new();
    let counted = EntryPack::each_record(&dir.join(INDEX_FILE), None, u64::MAX, |r| {
        keys.push(r.key);
        Ok(())
    });
    if counted.is_none_or(|c| c.is_err()) {
        return Vec::new();
    }
    keys.sort();
    keys
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(n: u8) -> Hash {
        [n; 32]
    }

    #[test]
    fn entries_are_found_again_after_reopening_and_the_last_of_a_key_counts() {
        let dir = tempfile::tempdir().unwrap();
        let pack = EntryPack::open(dir.path()).unwrap();
        pack.save(&key(1), b"first").unwrap();
        pack.save(&key(2), b"second").unwrap();
        pack.save(&key(1), b"first again").unwrap();
        assert_eq!(pack.load(&key(1)).unwrap().unwrap().0, b"first again");
        drop(pack);
        let pack = EntryPack::open(dir.path()).unwrap();
        assert_eq!(pack.load(&key(1)).unwrap().unwrap().0, b"first again");
        assert_eq!(pack.load(&key(2)).unwrap().unwrap().0, b"second");
        assert!(pack.load(&key(3)).unwrap().is_none());
        assert!(pack.holds(&key(2), b"second", 3));
        assert!(!pack.holds(&key(2), b"sacond", 3));
        assert!(!pack.holds(&key(2), b"second!", 3));
    }

    /// A torn record at the index's end is cut off, and what is appended
    /// after it is read back; an index of another generation starts both
    /// files anew.
    #[test]
    fn a_torn_index_is_cut_back_and_a_mismatched_pair_starts_anew() {
        let dir = tempfile::tempdir().unwrap();
        let pack = EntryPack::open(dir.path()).unwrap();
        pack.save(&key(1), b"one").unwrap();
        pack.save(&key(2), b"two").unwrap();
        drop(pack);
        let index = dir.path().join(INDEX_FILE);
        let len = std::fs::metadata(&index).unwrap().len();
        let file = std::fs::OpenOptions::new()
            .write(true)
            .open(&index)
            .unwrap();
        file.set_len(len - 7).unwrap();
        drop(file);
        let pack = EntryPack::open(dir.path()).unwrap();
        assert!(pack.contains(&key(1)));
        assert!(!pack.contains(&key(2)));
        pack.save(&key(3), b"three").unwrap();
        drop(pack);
        assert_eq!(indexed_keys(dir.path()), vec![key(1), key(3)]);

        // A damaged record ends the index where it is.
        let mut bytes = std::fs::read(&index).unwrap();
        bytes[HEAD as usize + 3] ^= 1;
        std::fs::write(&index, &bytes).unwrap();
        assert!(indexed_keys(dir.path()).is_empty());

        let mut bytes = std::fs::read(&index).unwrap();
        bytes[8] ^= 1;
        std::fs::write(&index, &bytes).unwrap();
        let pack = EntryPack::open(dir.path()).unwrap();
        assert!(!pack.contains(&key(1)));
        assert_eq!(
            std::fs::metadata(dir.path().join(PACK_FILE)).unwrap().len(),
            HEAD
        );
    }

    /// Pruning writes the index anew; the pack is written anew once the
    /// unused bytes outgrow the used ones, and its entries read the same.
    #[test]
    fn pruning_rewrites_the_index_and_compacts_the_pack_when_mostly_unused() {
        let dir = tempfile::tempdir().unwrap();
        let pack_len = || std::fs::metadata(dir.path().join(PACK_FILE)).unwrap().len();
        let index_len = || {
            std::fs::metadata(dir.path().join(INDEX_FILE))
                .unwrap()
                .len()
        };
        let pack = EntryPack::open(dir.path()).unwrap();
        let big = vec![7u8; 600 << 10];
        for n in 0..4 {
            pack.save(&key(n), &big).unwrap();
        }
        pack.save(&key(9), b"small").unwrap();
        pack.forget(&[key(2)]).unwrap();
        assert_eq!(pack.finish().unwrap(), 4);
        assert_eq!(indexed_keys(dir.path()).len(), 4);
        assert_eq!(
            index_len(),
            HEAD + 4 * 48,
            "the tombstone and its entry gone"
        );

        let mut pack = EntryPack::open(dir.path()).unwrap();
        assert_eq!(pack.want(&[key(1), key(3), key(9), key(2)]), 1);
        assert_eq!(pack.finish().unwrap(), 3);
        assert_eq!(indexed_keys(dir.path()).len(), 3);
        let before = pack_len();
        assert_eq!(
            before,
            HEAD + 4 * (600 << 10) + 5,
            "only the index rewritten"
        );

        let mut pack = EntryPack::open(dir.path()).unwrap();
        pack.want(&[key(9), key(3)]);
        assert_eq!(pack.finish().unwrap(), 2);
        assert_eq!(pack_len(), HEAD + (600 << 10) + 5, "compacted");
        let pack = EntryPack::open(dir.path()).unwrap();
        assert_eq!(pack.load(&key(9)).unwrap().unwrap().0, b"small");
        assert_eq!(pack.load(&key(3)).unwrap().unwrap().0, big);
        assert!(!pack.contains(&key(1)));
        assert!(!pack.contains(&key(2)));
    }

    /// Two keys sharing their first 8 bytes: a look-up finds the entry
    /// written last under that prefix, whose bytes name its own key (the
    /// caller's check makes the other a damaged entry, converted again),
    /// and pruning keeps that one record.
    #[test]
    fn keys_sharing_a_prefix_find_the_last_entry_written_under_it() {
        let dir = tempfile::tempdir().unwrap();
        let (a, mut b) = (key(1), key(1));
        b[31] = 2;
        let pack = EntryPack::open(dir.path()).unwrap();
        pack.save(&a, b"entry of a").unwrap();
        pack.save(&b, b"entry of b").unwrap();
        assert_eq!(pack.load(&a).unwrap().unwrap().0, b"entry of b");
        assert_eq!(pack.finish().unwrap(), 1);
        assert_eq!(indexed_keys(dir.path()), vec![b]);
        let pack = EntryPack::open(dir.path()).unwrap();
        assert_eq!(pack.load(&a).unwrap().unwrap().0, b"entry of b");
    }
}
