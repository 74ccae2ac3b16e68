//! The incremental build cache, under `<output>/.zenpak-cache/`.
//!
//! - `files.json` ([`FileIndex`], binary): for every input file, its stamp
//!   ([`crate::publish::FileStamp`]: size, modification time, change time
//!   and inode number) and BLAKE3 hash, sorted by path. A development build
//!   does not read again a file whose whole stamp is unchanged; one whose
//!   stamp differs in anything is hashed again, so touching a file without
//!   changing it costs a hash, not a conversion. Copy tools and archives can
//!   set a file's size and modification time back, never its change time or
//!   inode, so an edit is always seen. A release build (`--release`,
//!   `package`) and a `--force` build hash every input and never read the
//!   index: their output depends on the bytes alone.
//! - `packages.zpk` and `packages.zpi` ([`super::entry_pack`]): the
//!   converted packages, each under a key that hashes everything its
//!   conversion depends on (its files' contents, its name, the engine
//!   version, the profile, the mappings and zenpak's version), back to back
//!   in one pack with an index of where each lies.
//! - `build.json`: the key of the last build as a whole and the artifacts it
//!   wrote, each with its BLAKE3 hash and the stamp it had when written
//!   ([`crate::publish::FileStamp`]: size, times and inode, which no later
//!   write keeps); when the next build's key is the same and every artifact
//!   still has its stamp, nothing is rewritten.
//! - Each entry begins with a BLAKE3 checksum: a damaged entry is a cache
//!   miss (and a warning), never wrong output.
//! - `container.bin` ([`ContainerRecord`]): the container the last build
//!   wrote — the stamps of its `.utoc` and `.ucas`, the settings its chunk
//!   bytes depend on, and what each package put in it (its chunk key, store
//!   entry and bulk chunks' lengths). A development build extends that
//!   `.ucas` with the chunks of changed packages only, when the stamps show
//!   the files are still the ones recorded; an unchanged package is added
//!   from its record alone, its cache entry not opened. Read and written
//!   as a stream and checksummed: a damaged record is a warning and a
//!   container written anew.
//! - `tree.bin` ([`TreeRecord`]): every folder the last scan walked with its
//!   stamp, the stamp of `files.json` and the build key. A development build
//!   whose folders and files all keep their stamps is up to date without
//!   walking; one whose folders keep theirs (no entry added, removed or
//!   renamed) but not every file takes the files from `files.json`, stamped
//!   once ([`IndexedFiles`]), without listing a folder; a damaged record is
//!   a warning and a full scan.
//!
//! None of these files is synced to disk: each is written whole through a
//! rename and checked when read (a checksum, or its layout and stamps), so
//! one a crash loses or cuts costs work, never wrong output. The artifacts
//! are synced before `build.json` names them.
//!
//! A release build (`--release`, `package`) never reads `container.bin`:
//! its bytes depend on the inputs only. A development build's `.ucas` may
//! hold the earlier builds' replaced chunks, so its bytes depend on history.

use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::arena::PathArena;
use crate::binary::{Reader, Writer};
use crate::build::package::RecordedPackage;
use crate::error::{Error, Result};

/// Name of the build cache folder inside the output folder.
pub(crate) const CACHE_DIR: &str = ".zenpak-cache";

/// A BLAKE3 hash.
pub(crate) type Hash = [u8; 32];

/// How much a build takes from the cache on its stamps alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Trust {
    /// A development build: what the stamps say is unchanged is not read again.
    Stamps,
    /// A release build: every cached thing is checked against the hash of
    /// what it was made from.
    Contents,
    /// A `--force` build: nothing cached is read.
    Nothing,
}

impl Trust {
    pub(crate) fn of(force: bool, release: bool) -> Trust {
        match (force, release) {
            (true, _) => Trust::Nothing,
            (false, true) => Trust::Contents,
            (false, false) => Trust::Stamps,
        }
    }
}

/// What the cache remembers of one input file: its stamp on disk and the
/// BLAKE3 of its contents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct InputStamp {
    pub(crate) file: crate::publish::FileStamp,
    pub(crate) hash: Hash,
}

/// Marks the file index and its layout; bump when the layout changes.
const INDEX_MAGIC: &[u8; 8] = b"ZPKFI\x00\x00\x05";

/// Bytes of a [`crate::publish::FileStamp`] as the cache stores it.
const STAMP_BYTES: usize = 32;

/// A disk stamp as the cache stores it: size, modification time, inode,
/// change time (two's complement); each 8 bytes little-endian.
fn encode_stamp(stamp: &crate::publish::FileStamp) -> [u8; STAMP_BYTES] {
    let mut out = [0u8; STAMP_BYTES];
    let fields = [
        stamp.size,
        stamp.modified_ns,
        stamp.inode,
        stamp.changed_ns as u64,
    ];
    for (slot, field) in out.chunks_exact_mut(8).zip(fields) {
        slot.copy_from_slice(&field.to_le_bytes());
    }
    out
}

/// The stamp [`encode_stamp`] wrote.
fn decode_stamp(bytes: &[u8; STAMP_BYTES]) -> crate::publish::FileStamp {
    let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
    crate::publish::FileStamp {
        size: u64_at(0),
        modified_ns: u64_at(8),
        inode: u64_at(16),
        changed_ns: u64_at(24) as i64,
    }
}

/// The longest path an index entry may hold; a longer one means the file is
/// damaged (and it is then not used further).
const MAX_INDEX_PATH: usize = 64 * 1024;

/// Stamp and content hash of every input file seen by the last build
/// (`files.json`, binary despite its historical name). A
/// no-change rebuild consults it for every input, so it is small; its
/// entries are sorted by path, so it is read as a stream merged with this
/// build's sorted paths and never held in memory whole.
///
/// Layout: magic, entry count (u32), then per entry its path — how many of
/// its first bytes are the previous entry's (u32), then the length (u32)
/// and UTF-8 bytes of the rest: sorted paths share most of their bytes —,
/// the stamp ([`encode_stamp`], 32 bytes) and BLAKE3 hash (32 bytes); all
/// little-endian. Read with [`IndexReader`], written with [`IndexWriter`].
pub(crate) struct FileIndex;

/// Stamps of one build's input files, in the order they were asked for.
#[derive(Debug)]
pub(crate) struct Stamps {
    pub(crate) stamps: Vec<InputStamp>,
    /// True when every file was found unchanged in the previous index and
    /// no other file was in it: the index need not be written again.
    pub(crate) unchanged: bool,
}

/// Stamp of a file the index did not know: its time never matches, so the
/// file is hashed.
const UNKNOWN: InputStamp = InputStamp {
    file: crate::publish::FileStamp {
        size: 0,
        modified_ns: 0,
        inode: 0,
        changed_ns: 0,
    },
    hash: [0; 32],
};

/// What a build knows of its input files before any is read: each file's
/// stamp now, and the hash the index gave it when that stamp is the one
/// indexed ([`FileIndex::take`]); [`FileIndex::finish`] hashes the rest.
#[derive(Debug, Clone, Default)]
pub(crate) struct Taken {
    /// Per file: its stamp now; its hash where `known` or `hashed`, else zeros.
    stamps: Vec<InputStamp>,
    /// Whether the index had the file with exactly this stamp.
    known: Vec<bool>,
    /// Whether the file was hashed already, by a read that happened anyway
    /// (the Git LFS check of small files: [`Taken::set_hash`]).
    hashed: Vec<bool>,
    /// Entries in the index, and how many of the files it had; `None`
    /// without an index.
    indexed: Option<(usize, usize)>,
}

impl Taken {
    /// How many files were stamped.
    pub(crate) fn len(&self) -> usize {
        self.stamps.len()
    }

    /// The stamp of file `i` now.
    pub(crate) fn stamp(&self, i: usize) -> &crate::publish::FileStamp {
        &self.stamps[i].file
    }

    /// Whether file `i` is unchanged since the index recorded it (and so
    /// holds what it held then).
    pub(crate) fn is_known(&self, i: usize) -> bool {
        self.known[i]
    }

    /// Gives file `i` (not known) its `hash`, taken from its whole contents
    /// as they are with its stamp now: [`FileIndex::finish`] does not read
    /// it again.
    pub(crate) fn set_hash(&mut self, i: usize, hash: Hash) {
        self.stamps[i].hash = hash;
        self.hashed[i] = true;
    }

    /// Whether file `i` was given its hash by [`Taken::set_hash`].
    #[cfg(test)]
    pub(crate) fn is_hashed(&self, i: usize) -> bool {
        self.hashed[i]
    }

    /// Keeps the files for which `keep` says so, in order.
    pub(crate) fn retain(&mut self, keep: &[bool]) {
        let mut flags = keep.iter();
        self.stamps.retain(|_| *flags.next().unwrap_or(&true));
        let mut flags = keep.iter();
        self.known.retain(|_| *flags.next().unwrap_or(&true));
        let mut flags = keep.iter();
        self.hashed.retain(|_| *flags.next().unwrap_or(&true));
    }
}

impl FileIndex {
    /// Stamps of `paths` (in parallel). With `index` (a development build),
    /// the content hash that index recorded is reused for every file whose
    /// whole stamp is unchanged; without it (`--release`, `package`,
    /// `--force`), every file is hashed. A missing or damaged index only
    /// means more hashing. (The build calls the two halves itself, with
    /// the scan's stamps in between.)
    #[cfg(test)]
    pub(crate) fn refresh(index: Option<&Path>, paths: &PathArena) -> Result<Stamps> {
        Self::finish(Self::take(index, paths)?, paths)
    }

    /// The first half of fingerprinting the inputs: every file's stamp (one
    /// `stat` each, [`crate::publish::FileStamp::of_all`]) and, with
    /// `index`, the hashes it recorded for the files whose whole stamp is
    /// unchanged. Nothing is read.
    pub(crate) fn take(index: Option<&Path>, paths: &PathArena) -> Result<Taken> {
        // Stamped in place: one list of stamps, not a second one beside it.
        let mut stamps = vec![UNKNOWN; paths.len()];
        crate::publish::FileStamp::of_all_into(paths, &mut stamps, |s| &mut s.file)?;
        let mut known = vec![false; paths.len()];
        let indexed = index.map(|index| {
            Self::merge(index, paths, |i, _, then| {
                let same = is_same(&stamps[i].file, &then.file);
                known[i] = same;
                stamps[i].hash = if same { then.hash } else { [0; 32] };
            })
        });
        Ok(Taken {
            hashed: vec![false; stamps.len()],
            stamps,
            known,
            indexed,
        })
    }

    /// The second half of fingerprinting the inputs: hashes (in parallel)
    /// every file of `taken` (stamps of `paths`, same order) the index did
    /// not know and that was not hashed already.
    pub(crate) fn finish(taken: Taken, paths: &PathArena) -> Result<Stamps> {
        let Taken {
            mut stamps,
            known,
            hashed,
            indexed,
        } = taken;
        if stamps.len() != paths.len() {
            return Err(Error::internal("file stamps out of step with the files"));
        }
        stamps
            .par_iter_mut()
            .enumerate()
            .zip(known.par_iter().zip(hashed.par_iter()))
            .filter(|(_, (known, hashed))| !**known && !**hashed)
            .try_for_each(|((i, stamp), _)| -> Result<()> {
                let path = paths.path(i);
                stamp.hash = if stamp.file.size > LARGE_FILE {
                    hash_large_file(&path)?
                } else {
                    hash_file(&path)?
                };
                Ok(())
            })?;
        let all_known = known.iter().all(|k| *k);
        Ok(Stamps {
            stamps,
            unchanged: all_known && indexed == Some((paths.len(), paths.len())),
        })
    }

    /// Calls `found(i, at, stamp)` for every `paths[i]` the index holds, as
    /// its entry `at` with `stamp`, walking the index (sorted by path)
    /// beside the paths in sorted order. Returns the number of entries the
    /// index holds and how many paths it had. Reading stops at the first
    /// damaged or out-of-order entry.
    fn merge(
        index: &Path,
        paths: &PathArena,
        mut found: impl FnMut(usize, usize, &InputStamp),
    ) -> (usize, usize) {
        let Some(mut reader) = IndexReader::open(index) else {
            return (0, 0);
        };
        let count = reader.count;
        let keys = IndexKeys::of(paths);
        let (mut entry, mut done) = (None, false);
        let (mut matched, mut buffer) = (0, Vec::new());
        for i in keys.sorted() {
            let key = keys.key(i as usize, &mut buffer);
            // Advance to the first entry not below the key.
            loop {
                match &entry {
                    Some(stamp) if reader.path() >= key => {
                        if reader.path() == key {
                            found(i as usize, count - reader.remaining - 1, stamp);
                            matched += 1;
                        }
                        break;
                    }
                    _ if done => break,
                    _ => {
                        entry = reader.next();
                        done = entry.is_none();
                    }
                }
            }
        }
        (count, matched)
    }

    /// Writes the index of `paths` with their `stamps` (same order) to `index`.
    pub(crate) fn save(index: &Path, paths: &PathArena, stamps: &[InputStamp]) -> Result<()> {
        let keys = IndexKeys::of(paths);
        let order = keys.sorted();
        crate::publish::write_file_unsynced(index, |file| {
            let at = file.path().to_path_buf();
            let write = || -> std::io::Result<()> {
                let count = u32::try_from(paths.len())
                    .map_err(|_| std::io::Error::other("too many files for the file index"))?;
                let out = std::io::BufWriter::with_capacity(1 << 16, file);
                let mut out = IndexWriter::new(out, count)?;
                let mut buffer = Vec::new();
                for i in order {
                    out.write(keys.key(i as usize, &mut buffer), &stamps[i as usize])?;
                }
                out.finish().map(drop)
            };
            write().map_err(|e| Error::io(&at, e))
        })
    }
}

/// Paths as the file index keys them (their text) and sorts them.
struct IndexKeys<'a> {
    paths: &'a PathArena,
    /// Each path's text, made only when some path is not valid text (then
    /// in place of the path's bytes, which the index would not read back).
    lossy: Vec<String>,
}

impl<'a> IndexKeys<'a> {
    fn of(paths: &'a PathArena) -> IndexKeys<'a> {
        // Paths that are text sort as their bytes do: no list of keys is
        // made for them. (A path whose text is split by the bytes all
        // paths share is checked whole.)
        let mut whole = Vec::new();
        let prefix_is_text = !paths.is_empty() && std::str::from_utf8(paths.parts(0).0).is_ok();
        let is_text = |i: usize, whole: &mut Vec<u8>| {
            prefix_is_text && std::str::from_utf8(paths.parts(i).1).is_ok() || {
                paths.write(i, whole);
                std::str::from_utf8(whole).is_ok()
            }
        };
        let lossy = match (0..paths.len()).all(|i| is_text(i, &mut whole)) {
            true => Vec::new(),
            false => (0..paths.len())
                .map(|i| paths.path(i).to_string_lossy().into_owned())
                .collect(),
        };
        IndexKeys { paths, lossy }
    }

    /// The key of path `i`: its text's bytes (made in `buffer` if need be).
    fn key<'b>(&'b self, i: usize, buffer: &'b mut Vec<u8>) -> &'b [u8] {
        match self.lossy.is_empty() {
            true => {
                self.paths.write(i, buffer);
                buffer
            }
            false => self.lossy[i].as_bytes(),
        }
    }

    /// The paths' positions, in the order of their keys.
    fn sorted(&self) -> Vec<u32> {
        let mut order: Vec<u32> = (0..self.paths.len() as u32).collect();
        match self.lossy.is_empty() {
            // Every path starts with the same bytes: they sort as the rests do.
            true => order.sort_unstable_by(|&a, &b| {
                let rest = |i: u32| self.paths.parts(i as usize).1;
                rest(a).cmp(rest(b))
            }),
            false => {
                order.sort_unstable_by(|&a, &b| self.lossy[a as usize].cmp(&self.lossy[b as usize]))
            }
        }
        order
    }
}

/// Reads a file index ([`FileIndex`]) as a stream, one entry at a time,
/// each checked not to sort before the one before it.
struct IndexReader {
    reader: std::io::BufReader<std::fs::File>,
    /// The entries the header declares.
    count: usize,
    /// Entries not read yet.
    remaining: usize,
    /// The path of the entry read last.
    path: Vec<u8>,
    /// The rest of the next path, read before it is checked.
    rest: Vec<u8>,
}

impl IndexReader {
    /// Opens `index` and reads its header; `None` when it cannot be read or
    /// is not an index of this layout.
    fn open(index: &Path) -> Option<IndexReader> {
        use std::io::Read;
        let file = std::fs::File::open(index).ok()?;
        let mut reader = std::io::BufReader::with_capacity(1 << 16, file);
        let mut header = [0u8; 12];
        reader.read_exact(&mut header).ok()?;
        if &header[..8] != INDEX_MAGIC {
            return None;
        }
        let count = u32::from_le_bytes(header[8..].try_into().unwrap()) as usize;
        Some(IndexReader {
            reader,
            count,
            remaining: count,
            path: Vec::new(),
            rest: Vec::new(),
        })
    }

    /// The next entries `keep` takes (by path), up to [`STAT_BATCH`] of
    /// them, into `paths` and `stamps` (emptied first); `None` at an entry
    /// that does not read.
    fn next_batch(
        &mut self,
        paths: &mut PathArena,
        stamps: &mut Vec<InputStamp>,
        keep: impl Fn(&str) -> bool,
    ) -> Option<()> {
        paths.clear();
        stamps.clear();
        while paths.len() < STAT_BATCH && self.remaining > 0 {
            let stamp = self.next()?;
            let path = std::str::from_utf8(self.path()).ok()?;
            if keep(path) {
                stamps.push(stamp);
                paths.push_text(path);
            }
        }
        Some(())
    }

    /// The next entry's stamp (its path is then [`IndexReader::path`]);
    /// `None` after the last, or at an entry that is damaged or sorts
    /// before the one before it.
    fn next(&mut self) -> Option<InputStamp> {
        use std::io::Read;
        self.remaining = self.remaining.checked_sub(1)?;
        let mut lengths = [0u8; 8];
        self.reader.read_exact(&mut lengths).ok()?;
        let shared = u32::from_le_bytes(lengths[..4].try_into().unwrap()) as usize;
        let rest = u32::from_le_bytes(lengths[4..].try_into().unwrap()) as usize;
        if shared > self.path.len() || rest > MAX_INDEX_PATH - shared {
            return None;
        }
        self.rest.resize(rest, 0);
        self.reader.read_exact(&mut self.rest).ok()?;
        // The first `shared` bytes are the previous path's: the new one
        // sorts after it when its rest does after the previous one's.
        if self.rest.as_slice() < &self.path[shared..] {
            return None;
        }
        self.path.truncate(shared);
        self.path.extend_from_slice(&self.rest);
        let mut fields = [0u8; STAMP_BYTES + 32];
        self.reader.read_exact(&mut fields).ok()?;
        Some(InputStamp {
            file: decode_stamp(fields[..STAMP_BYTES].try_into().unwrap()),
            hash: fields[STAMP_BYTES..].try_into().unwrap(),
        })
    }

    /// The path of the entry [`IndexReader::next`] read last.
    fn path(&self) -> &[u8] {
        &self.path
    }
}

/// Writes a file index ([`FileIndex`]): the header, then entries in path order.
struct IndexWriter<W> {
    out: W,
    /// The path of the entry written last.
    last: Vec<u8>,
}

impl<W: std::io::Write> IndexWriter<W> {
    fn new(mut out: W, count: u32) -> std::io::Result<IndexWriter<W>> {
        out.write_all(INDEX_MAGIC)?;
        out.write_all(&count.to_le_bytes())?;
        Ok(IndexWriter {
            out,
            last: Vec::new(),
        })
    }

    /// Writes the entry of `path` (sorting after the one written before).
    fn write(&mut self, path: &[u8], stamp: &InputStamp) -> std::io::Result<()> {
        let shared = crate::arena::shared_len(&self.last, path);
        let rest = &path[shared..];
        let length = |n: usize| {
            u32::try_from(n)
                .map(u32::to_le_bytes)
                .map_err(|_| std::io::Error::other("a path too long for the file index"))
        };
        self.out.write_all(&length(shared)?)?;
        self.out.write_all(&length(rest.len())?)?;
        self.out.write_all(rest)?;
        self.out.write_all(&encode_stamp(&stamp.file))?;
        self.out.write_all(&stamp.hash)?;
        self.last.truncate(shared);
        self.last.extend_from_slice(rest);
        Ok(())
    }

    fn finish(mut self) -> std::io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

/// Files larger than this are hashed in pieces on every core ([`hash_large_file`]).
const LARGE_FILE: u64 = 8 << 20;

/// BLAKE3 of a file's contents.
pub(crate) fn hash_file(path: &Path) -> Result<Hash> {
    let mut hasher = blake3::Hasher::new();
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    hasher.update_reader(file).map_err(|e| Error::io(path, e))?;
    Ok(*hasher.finalize().as_bytes())
}

/// [`hash_file`] for a large file (an output `.ucas`): read in pieces of a
/// few MiB, each hashed on every core (BLAKE3 splits its input into
/// independent subtrees), so memory stays bounded.
pub(crate) fn hash_large_file(path: &Path) -> Result<Hash> {
    use std::io::Read;
    const PIECE: usize = 8 << 20;
    let mut hasher = blake3::Hasher::new();
    let mut file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut buffer = vec![0u8; PIECE];
    loop {
        let mut filled = 0;
        while filled < PIECE {
            match file.read(&mut buffer[filled..]) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(Error::io(path, e)),
            }
        }
        hasher.update_rayon(&buffer[..filled]);
        if filled < PIECE {
            break;
        }
    }
    Ok(*hasher.finalize().as_bytes())
}

/// The record of the last build.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub(crate) struct BuildRecord {
    #[serde(with = "hex_hash")]
    pub(crate) key: Hash,
    pub(crate) artifacts: Vec<ArtifactRecord>,
    /// Whether the `.ucas` is a development build's extension of an earlier
    /// one (not the canonical layout a release build must write).
    #[serde(default)]
    pub(crate) extended: bool,
    /// How many chunks the container holds (absent in records of older
    /// zenpaks: such a build is not taken as up to date).
    #[serde(default)]
    pub(crate) chunks: Option<usize>,
}

/// One output file as the last build left it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct ArtifactRecord {
    pub path: PathBuf,
    pub stamp: crate::publish::FileStamp,
    /// Hex BLAKE3 of the contents, recorded by a release build; `None` in
    /// a development build's record, whose outputs their stamps identify
    /// (hashing them would read every output again: a GiB `.ucas`, a pak
    /// of large loose files).
    pub blake3: Option<String>,
}

impl ArtifactRecord {
    /// Whether the file on disk is still the one the build wrote.
    pub(crate) fn is_unchanged(&self) -> bool {
        crate::publish::FileStamp::of(&self.path).is_ok_and(|s| s == self.stamp)
    }

    /// Records `path` as just written: its stamp and BLAKE3.
    pub(crate) fn of(path: &Path) -> Result<ArtifactRecord> {
        let mut record = Self::stamp_only(path)?;
        record.blake3 = Some(crate::hash::hex(&hash_large_file(path)?));
        Ok(record)
    }

    /// Records `path` as just written, with the BLAKE3 `hash` of the bytes
    /// written to it (taken by the writer).
    pub(crate) fn with_hash(path: &Path, hash: &Hash) -> Result<ArtifactRecord> {
        let mut record = Self::stamp_only(path)?;
        record.blake3 = Some(crate::hash::hex(hash));
        Ok(record)
    }

    /// Records `path` as just written by its stamp alone.
    pub(crate) fn stamp_only(path: &Path) -> Result<ArtifactRecord> {
        let stamp = crate::publish::FileStamp::of(path).map_err(|e| Error::io(path, e))?;
        Ok(ArtifactRecord {
            path: path.to_path_buf(),
            stamp,
            blake3: None,
        })
    }

    /// Checks that `bytes_hash` (BLAKE3 of what was just read from the file)
    /// is what the build wrote; without a recorded hash, that the file still
    /// has the stamp it was written with.
    pub(crate) fn check_hash(&self, bytes_hash: &Hash) -> Result<()> {
        let actual = crate::hash::hex(bytes_hash);
        let expected = match &self.blake3 {
            Some(expected) if *expected == actual => return Ok(()),
            Some(expected) => expected.clone(),
            None if self.is_unchanged() => return Ok(()),
            None => "the file as the build wrote it".to_string(),
        };
        Err(Error::new(crate::error::ErrorKind::HashMismatch {
            algorithm: "BLAKE3",
            expected,
            actual,
        })
        .in_file(&self.path)
        .with_hint("the file changed since zenpak built it; run `zenpak build`"))
    }
}

impl BuildRecord {
    /// True when every artifact is the file the build wrote, at the expected paths.
    pub(crate) fn matches_disk(&self, paths: &[PathBuf]) -> bool {
        self.artifacts.len() == paths.len()
            && self
                .artifacts
                .iter()
                .zip(paths)
                .all(|(a, p)| &a.path == p && a.is_unchanged())
    }
}

/// Writes a cache bookkeeping file through a unique temporary and a rename,
/// not synced: each is checked when read (its checksum, its layout), and one
/// a crash loses costs only work.
pub(crate) fn write_cache_file(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    crate::publish::write_file_unsynced(path, |f| {
        f.write_all(bytes).map_err(|e| Error::io(f.path(), e))
    })
}

/// The cache folder and its files.
pub(crate) struct Cache {
    dir: PathBuf,
}

impl Cache {
    /// The cache of the mod whose outputs are named `stem` in `output_dir`
    /// (`<output>/.zenpak-cache/<stem>/`): mods that share an output folder
    /// keep separate caches.
    pub(crate) fn new(output_dir: &Path, stem: &str) -> Cache {
        Cache {
            dir: output_dir.join(CACHE_DIR).join(stem),
        }
    }

    /// Removes this cache's own files (the entry pack, its index and the
    /// bookkeeping files, and an earlier layout's entries named by their
    /// hash), then its folders if they are left empty. Never recursive and
    /// never through a symbolic link.
    pub(crate) fn clean(&self, removed: &mut Vec<PathBuf>) -> Result<()> {
        if !is_real_dir(&self.dir) {
            return Ok(());
        }
        super::pak_input::clean(&self.dir, removed)?;
        self.remove_old_layout(removed)?;
        for name in BOOKKEEPING_FILES {
            remove_own_file(self.dir.join(name), removed)?;
        }
        removed.extend(crate::publish::remove_leftover_temporaries(&self.dir)?);
        let parent = self.dir.parent().map(Path::to_path_buf);
        for dir in [Some(self.dir.clone()), parent].into_iter().flatten() {
            if is_real_dir(&dir) && std::fs::read_dir(&dir).is_ok_and(|mut d| d.next().is_none()) {
                std::fs::remove_dir(&dir).map_err(|e| Error::io(&dir, e))?;
                removed.push(dir);
            }
        }
        Ok(())
    }

    /// Removes the entries an earlier zenpak kept one per file
    /// (`packages/<hash>.zpc`), and their folder once empty; nothing when
    /// there is no such folder (one look).
    pub(crate) fn remove_old_entries(&self) -> Result<()> {
        self.remove_old_layout(&mut Vec::new())
    }

    fn remove_old_layout(&self, removed: &mut Vec<PathBuf>) -> Result<()> {
        let packages = self.dir.join("packages");
        if !is_real_dir(&packages) {
            return Ok(());
        }
        for entry in std::fs::read_dir(&packages)
            .map_err(|e| Error::io(&packages, e))?
            .flatten()
        {
            if is_entry_name(&entry.file_name().to_string_lossy()) {
                remove_own_file(entry.path(), removed)?;
            }
        }
        removed.extend(crate::publish::remove_leftover_temporaries(&packages)?);
        if std::fs::read_dir(&packages).is_ok_and(|mut d| d.next().is_none()) {
            std::fs::remove_dir(&packages).map_err(|e| Error::io(&packages, e))?;
            removed.push(packages);
        }
        Ok(())
    }

    /// The cache's folder.
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    pub(crate) fn create(&self) -> Result<()> {
        std::fs::create_dir_all(&self.dir).map_err(|e| Error::io(&self.dir, e))
    }

    pub(crate) fn files_path(&self) -> PathBuf {
        self.dir.join("files.json")
    }

    pub(crate) fn build_record_path(&self) -> PathBuf {
        self.dir.join("build.json")
    }

    pub(crate) fn container_record_path(&self) -> PathBuf {
        self.dir.join("container.bin")
    }

    pub(crate) fn tree_record_path(&self) -> PathBuf {
        self.dir.join("tree.bin")
    }

    /// The last scan's tree record: `Ok(None)` when there is none, an error
    /// when it is damaged.
    pub(crate) fn load_tree_record(&self) -> Result<Option<TreeRecord>> {
        let path = self.tree_record_path();
        match std::fs::read(&path) {
            Ok(bytes) => TreeRecord::decode(&bytes)
                .map(Some)
                .map_err(|e| e.in_file(&path)),
            Err(_) => Ok(None),
        }
    }

    /// Saves the tree record, or with `None` removes the one there is.
    pub(crate) fn save_tree_record(&self, record: Option<&TreeRecord>) -> Result<()> {
        let path = self.tree_record_path();
        match record {
            Some(record) => write_cache_file(&path, &record.encode()),
            None => match std::fs::remove_file(&path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(Error::io(&path, e)),
                _ => Ok(()),
            },
        }
    }

    /// The last build's container record, opened to be read as a stream:
    /// `Ok(None)` when there is none (or of another layout), an error when
    /// it is damaged.
    pub(crate) fn open_container_record(&self) -> Result<Option<ContainerRecordReader>> {
        ContainerRecordReader::open(&self.container_record_path())
    }

    /// Starts this build's container record (published by its `finish`).
    pub(crate) fn create_container_record(&self) -> Result<ContainerRecordWriter> {
        ContainerRecordWriter::create(&self.container_record_path())
    }

    pub(crate) fn load_build_record(&self) -> Option<BuildRecord> {
        let bytes = std::fs::read(self.build_record_path()).ok()?;
        serde_json::from_slice(&bytes).ok()
    }

    pub(crate) fn save_build_record(&self, record: &BuildRecord) -> Result<()> {
        let bytes = serde_json::to_vec_pretty(record).map_err(Error::json)?;
        write_cache_file(&self.build_record_path(), &bytes)
    }
}

/// A folder, not a link to one.
fn is_real_dir(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir())
}

/// Removes `path` if it is a file (not a link), noting it in `removed`.
fn remove_own_file(path: PathBuf, removed: &mut Vec<PathBuf>) -> Result<()> {
    if std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file()) {
        std::fs::remove_file(&path).map_err(|e| Error::io(&path, e))?;
        removed.push(path);
    }
    Ok(())
}

/// Whether a file name is one of an earlier layout's package entries
/// (`packages/<64 hex>.zpc`).
fn is_entry_name(name: &str) -> bool {
    name.strip_suffix(".zpc")
        .is_some_and(|hex| hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// The cache's own bookkeeping files, by name.
pub(crate) const BOOKKEEPING_FILES: [&str; 6] = [
    "files.json",
    "build.json",
    "container.bin",
    "tree.bin",
    super::entry_pack::PACK_FILE,
    super::entry_pack::INDEX_FILE,
];

/// Marks the tree record and its layout; bump when the layout changes.
const TREE_MAGIC: &[u8; 8] = b"ZPKTR\x00\x00\x02";

/// A folder changed this recently before a scan is not trusted by the next
/// no-change check: file systems stamp times from a clock that ticks every
/// few milliseconds (or seconds), so an entry added in the same tick just
/// after the scan read the folder would leave its stamp as recorded.
const RACY_NS: i128 = 2_000_000_000;

/// `tree.bin`: what a development build checks instead of scanning the
/// content again when nothing changed. Adding, removing or renaming an
/// entry changes its folder's stamp (modification and change time), and
/// rewriting a file changes the file's own stamp: so when every folder the
/// last scan walked and every input file (the entries of `files.json`,
/// [`FileIndex`]) still has its recorded stamp, and the settings are the
/// same (`config`), the scan would find the same content with the same
/// contents, and the build's key is the one recorded. One `stat` per
/// folder and per file, no folder listed, nothing read.
///
/// Written only after a scan that warned of nothing (its warnings would
/// otherwise go unsaid) and without `[content] paks`; any other build
/// removes it. A record that does not read back whole (it ends with its
/// BLAKE3) is a cache miss and a warning: the content is scanned again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TreeRecord {
    /// Hash of everything besides the files that the content and the build
    /// key depend on.
    pub(crate) config: Hash,
    /// The build key the scan led to.
    pub(crate) build_key: Hash,
    pub(crate) packages: u64,
    pub(crate) loose_files: u64,
    pub(crate) bytes_in: u64,
    /// How many input files the scan found (the index's entries).
    pub(crate) files: u64,
    /// The stamp of the index (`files.json`) that holds them, as this
    /// build left it: an index written since belongs to another scan.
    pub(crate) index: crate::publish::FileStamp,
    /// When the scan started (ns since 1970).
    pub(crate) scanned_ns: i128,
    /// Every folder the scan walked, with its stamp taken before its
    /// entries were read.
    pub(crate) folders: Vec<(String, crate::publish::FileStamp)>,
}

impl TreeRecord {
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut w = Writer::with_capacity(256 + self.folders.len() * 128);
        w.bytes(TREE_MAGIC);
        w.bytes(&self.config);
        w.bytes(&self.build_key);
        for n in [self.packages, self.loose_files, self.bytes_in, self.files] {
            w.u64(n);
        }
        w.bytes(&encode_stamp(&self.index));
        w.bytes(&self.scanned_ns.to_le_bytes());
        w.u32(self.folders.len() as u32);
        for (path, stamp) in &self.folders {
            w.u32(path.len() as u32);
            w.bytes(path.as_bytes());
            w.bytes(&encode_stamp(stamp));
        }
        let checksum = blake3::hash(w.as_slice());
        w.bytes(checksum.as_bytes());
        w.into_inner()
    }

    pub(crate) fn decode(bytes: &[u8]) -> Result<TreeRecord> {
        let damaged = || Error::invalid("the build cache's tree record is damaged");
        let body_len = bytes.len().checked_sub(32).ok_or_else(damaged)?;
        let (body, checksum) = bytes.split_at(body_len);
        if !body.starts_with(TREE_MAGIC) || blake3::hash(body).as_bytes() != checksum {
            return Err(damaged());
        }
        let mut r = Reader::new(&body[TREE_MAGIC.len()..]);
        let config = r.array::<32>()?;
        let build_key = r.array::<32>()?;
        let (packages, loose_files, bytes_in, files) = (r.u64()?, r.u64()?, r.u64()?, r.u64()?);
        let index = decode_stamp(&r.array::<STAMP_BYTES>()?);
        let scanned_ns = i128::from_le_bytes(r.array::<16>()?);
        let count = r.count_u32(4 + STAMP_BYTES)?;
        let mut folders = Vec::with_capacity(count);
        for _ in 0..count {
            let len = r.count_u32(1)?;
            let path = std::str::from_utf8(r.bytes(len)?).map_err(|_| damaged())?;
            folders.push((path.to_string(), decode_stamp(&r.array::<STAMP_BYTES>()?)));
        }
        if !r.at_end() {
            return Err(damaged());
        }
        Ok(TreeRecord {
            config,
            build_key,
            packages,
            loose_files,
            bytes_in,
            files,
            index,
            scanned_ns,
            folders,
        })
    }

    /// Compares the content with this record: every folder must still
    /// have its recorded stamp and none have changed within [`RACY_NS`]
    /// before the scan, the `index` must be the one the scan left, and then
    /// every file of it (exactly [`TreeRecord::files`] of them) is checked
    /// for its stamp.
    pub(crate) fn check(&self, index: &Path) -> TreeCheck {
        let folders = PathArena::of(
            self.folders.iter().map(|(p, _)| Path::new(p)),
            self.folders.len(),
        );
        let settled = |s: &crate::publish::FileStamp| {
            i128::from(s.changed_ns) < self.scanned_ns - RACY_NS
                && i128::from(s.modified_ns) < self.scanned_ns - RACY_NS
        };
        let folders_same = crate::publish::FileStamp::of_all(&folders).is_ok_and(|now| {
            now.iter()
                .zip(&self.folders)
                .all(|(now, (_, then))| now == then && settled(then))
        });
        let index_same = crate::publish::FileStamp::of(index).is_ok_and(|s| s == self.index);
        if !(index_same && folders_same) {
            return TreeCheck::Changed;
        }
        match files_unchanged(index, self.files) {
            Some(None) => TreeCheck::Unchanged,
            Some(Some(first_change)) => match IndexedFiles::read(index, self.files, first_change) {
                Some(files) => TreeCheck::FilesChanged(files),
                None => TreeCheck::Changed,
            },
            None => TreeCheck::Changed,
        }
    }

    /// The folders the scan walked, with their stamps.
    pub(crate) fn folder_paths(&self) -> Vec<(PathBuf, crate::publish::FileStamp)> {
        self.folders
            .iter()
            .map(|(path, stamp)| (PathBuf::from(path), *stamp))
            .collect()
    }
}

/// What [`TreeRecord::check`] found.
#[derive(Debug)]
pub(crate) enum TreeCheck {
    /// Every folder and every input file has its recorded stamp.
    Unchanged,
    /// Every folder has its recorded stamp, so no entry was added, removed
    /// or renamed, and the index lists every input file; some file's stamp
    /// differs. The index's files, stamped.
    FilesChanged(IndexedFiles),
    /// A folder changed, or the index is not the one recorded: scan.
    Changed,
}

/// Whether the files of `index` (which must hold `count` entries) all
/// still have the stamps recorded (a time of 0 is never trusted): `None`
/// when they do, else the first batch that holds a change, stamped
/// ([`FirstChange`]). `None` (outer) when the index does not read back
/// whole, holds another count, or lists a file that is gone.
fn files_unchanged(index: &Path, count: u64) -> Option<Option<FirstChange>> {
    let mut same_before = 0;
    let mut first_change = None;
    stat_index(
        index,
        count,
        0,
        |_| {},
        |then, now| {
            let same = now
                .iter()
                .zip(then)
                .all(|(now, then)| is_same(now, &then.file));
            match same {
                true => same_before += then.len(),
                false => {
                    first_change = Some(FirstChange {
                        same_before,
                        now: now.to_vec(),
                    })
                }
            }
            same
        },
    )?;
    Some(first_change)
}

/// Where [`files_unchanged`] found the first change: how many files before
/// it (whole batches) are unchanged, and the stamps now of the batch that
/// holds it, which need not be taken again.
#[derive(Debug)]
struct FirstChange {
    same_before: usize,
    now: Vec<crate::publish::FileStamp>,
}

/// Stats the files `index` lists (exactly `count` entries) a batch at a
/// time on every core, reading the next batch while one is stat'ed (two
/// sets of buffers, used in turn: nothing is allocated per batch). The
/// first `from` entries are not stat'ed: each indexed stamp goes to
/// `skipped`. Each batch's indexed stamps and stamps now go to `batch`,
/// which says whether to go on. `None` when the index does not read back
/// whole, holds another count, or lists a file that is gone.
fn stat_index(
    index: &Path,
    count: u64,
    from: usize,
    mut skipped: impl FnMut(&InputStamp),
    mut batch: impl FnMut(&[InputStamp], &[crate::publish::FileStamp]) -> bool,
) -> Option<()> {
    let mut reader = IndexReader::open(index)?;
    if reader.count as u64 != count {
        return None;
    }
    for _ in 0..from.min(reader.count) {
        skipped(&reader.next()?);
    }
    let room = STAT_BATCH.min(reader.remaining);
    let mut read_batch = |paths: &mut PathArena, stamps: &mut Vec<InputStamp>| {
        reader.next_batch(paths, stamps, |_| true)
    };
    let buffers = || (PathArena::with_capacity(room), Vec::with_capacity(room));
    let ((mut paths, mut then), (mut next_paths, mut next_then)) = (buffers(), buffers());
    let mut now = Vec::with_capacity(room);
    read_batch(&mut paths, &mut then)?;
    while !paths.is_empty() {
        now.resize(paths.len(), UNKNOWN.file);
        let (stamped, read) = rayon::join(
            || crate::publish::FileStamp::of_all_into(&paths, &mut now, |s| s).ok(),
            || read_batch(&mut next_paths, &mut next_then),
        );
        stamped?;
        if !batch(&then, &now) {
            return Some(());
        }
        read?;
        std::mem::swap(&mut paths, &mut next_paths);
        std::mem::swap(&mut then, &mut next_then);
    }
    Some(())
}

/// The first file of `index` (which must hold `count` entries) whose stamp
/// now is not the indexed one — written, replaced or removed since the
/// build stamped it — or `None` when every file still has its stamp.
/// Stamped a batch at a time on every core. Unlike the no-change check,
/// which never trusts a time of 0, this asks only whether the stamp moved:
/// a write always moves the change time. An index that does not read back
/// whole is an error. With `only`, the files not in it are not stat'ed.
pub(crate) fn changed_since_indexed(
    index: &Path,
    count: u64,
    only: Option<&std::collections::HashSet<PathBuf>>,
) -> Result<Option<PathBuf>> {
    let unreadable = || {
        Error::invalid("the build cache's file index does not read back whole")
            .in_file(index)
            .with_hint("build again")
    };
    let mut reader = IndexReader::open(index).ok_or_else(unreadable)?;
    if reader.count as u64 != count {
        return Err(unreadable());
    }
    let room = STAT_BATCH.min(reader.remaining);
    let (mut paths, mut then) = (PathArena::with_capacity(room), Vec::with_capacity(room));
    let mut now = Vec::with_capacity(room);
    while reader.remaining > 0 {
        reader
            .next_batch(&mut paths, &mut then, |path| {
                only.is_none_or(|only| only.contains(Path::new(path)))
            })
            .ok_or_else(unreadable)?;
        now.clear();
        now.resize(paths.len(), UNKNOWN.file);
        // A file that is gone fails the batch: found one at a time below.
        let stamped = crate::publish::FileStamp::of_all_into(&paths, &mut now, |s| s).is_ok();
        for i in 0..paths.len() {
            let moved = match stamped {
                true => now[i] != then[i].file,
                false => crate::publish::FileStamp::following(&paths.path(i))
                    .map_or(true, |stamp| stamp != then[i].file),
            };
            if moved {
                return Ok(Some(paths.path(i)));
            }
        }
    }
    Ok(None)
}

/// Files the no-change check stats at a time.
const STAT_BATCH: usize = 4096;

/// Whether a file whose stamp is `now` is the one indexed with `then` (a
/// time of 0 is never trusted).
fn is_same(now: &crate::publish::FileStamp, then: &crate::publish::FileStamp) -> bool {
    now == then && then.modified_ns != 0
}

/// The input files the file index lists, each stamped now: what a scan
/// that lists no folder takes ([`TreeCheck::FilesChanged`]). Only the
/// stamps are held (in the index's order), with the hash the index gave
/// each file whose stamp is the indexed one; the paths are read from the
/// index as they are needed.
#[derive(Debug)]
pub(crate) struct IndexedFiles {
    index: PathBuf,
    /// Per entry: the file's stamp now, and its indexed hash where `known`
    /// (else zeros).
    now: Vec<InputStamp>,
    /// Per entry: whether the file's stamp now is the one indexed.
    known: Vec<bool>,
}

impl IndexedFiles {
    /// Stamps the files `index` lists (exactly `count` entries), a batch at
    /// a time as it is read, all but those `known` already: the first
    /// `same_before`, just found unchanged (their stamps are the indexed
    /// ones), then the batch stamped with them.
    fn read(index: &Path, count: u64, known: FirstChange) -> Option<IndexedFiles> {
        let FirstChange {
            same_before,
            now: batch,
        } = known;
        let room = usize::try_from(count).ok()?.min(1 << 20);
        let (mut now, mut known) = (Vec::with_capacity(room), Vec::with_capacity(room));
        let (mut stamped, mut stamped_known) = (Vec::new(), Vec::new());
        let entry = |now: crate::publish::FileStamp, then: &InputStamp| {
            let same = is_same(&now, &then.file);
            let hash = if same { then.hash } else { [0; 32] };
            (InputStamp { file: now, hash }, same)
        };
        let mut batch = batch.into_iter();
        stat_index(
            index,
            count,
            same_before + batch.len(),
            |then| {
                let now_stamp = match now.len() < same_before {
                    true => Some(then.file),
                    false => batch.next(),
                };
                if let Some(now_stamp) = now_stamp {
                    let (stamp, same) = entry(now_stamp, then);
                    now.push(stamp);
                    known.push(same);
                }
            },
            |then, batch| {
                for (now, then) in batch.iter().zip(then) {
                    let (stamp, same) = entry(*now, then);
                    stamped.push(stamp);
                    stamped_known.push(same);
                }
                true
            },
        )?;
        now.append(&mut stamped);
        known.append(&mut stamped_known);
        Some(IndexedFiles {
            index: index.to_path_buf(),
            now,
            known,
        })
    }

    /// [`IndexedFiles::read`] of an index whose `count` files were all just
    /// found unchanged ([`TreeCheck::Unchanged`]): nothing is stat'ed.
    pub(crate) fn unchanged(index: &Path, count: u64) -> Option<IndexedFiles> {
        let same_before = usize::try_from(count).ok()?;
        Self::read(
            index,
            count,
            FirstChange {
                same_before,
                now: Vec::new(),
            },
        )
    }

    /// Calls `each` with every path the index lists, in its order, read as
    /// a stream.
    pub(crate) fn for_each_path(&self, mut each: impl FnMut(&str) -> Result<()>) -> Result<()> {
        let mut failed = None;
        let whole = read_index(&self.index, self.now.len(), |_, path, _| match each(path) {
            Ok(()) => Some(()),
            Err(e) => {
                failed = Some(e);
                None
            }
        });
        match (failed, whole) {
            (Some(e), _) => Err(e),
            (None, Some(())) => Ok(()),
            (None, None) => Err(Error::invalid(
                "the build cache's file index changed while the build read it",
            )
            .in_file(&self.index)
            .with_hint("run the build again")),
        }
    }

    /// [`FileIndex::take`] of `paths` (files the index lists) from the
    /// stamps taken: nothing is stat'ed again, and the stamps are put in
    /// the order of `paths` where they are (no second list of them).
    pub(crate) fn take(self, paths: &PathArena) -> Result<Taken> {
        let IndexedFiles {
            index,
            mut now,
            mut known,
        } = self;
        // Where each entry goes: the position of its path in `paths`.
        const NOWHERE: u32 = u32::MAX;
        let mut to = vec![NOWHERE; now.len()];
        let mut same = true;
        let (count, found) = FileIndex::merge(&index, paths, |i, at, then| {
            // The entry must be the one read before, and met once.
            same &= match (to.get_mut(at), now.get(at), known.get(at)) {
                (Some(to), Some(now), Some(&known)) if *to == NOWHERE => {
                    *to = i as u32;
                    known == is_same(&now.file, &then.file) && (!known || now.hash == then.hash)
                }
                _ => false,
            };
        });
        if !same || count != now.len() || found != paths.len() {
            // Not the files stamped: stamped again.
            return FileIndex::take(Some(&index), paths);
        }
        // Entries of no path go; the rest are put in the paths' order by
        // following each cycle of the permutation.
        if found != count {
            let mut kept = to.iter().map(|to| *to != NOWHERE);
            now.retain(|_| kept.next().unwrap_or(false));
            let mut kept = to.iter().map(|to| *to != NOWHERE);
            known.retain(|_| kept.next().unwrap_or(false));
            to.retain(|to| *to != NOWHERE);
        }
        for at in 0..to.len() {
            while to[at] as usize != at {
                let other = to[at] as usize;
                now.swap(at, other);
                known.swap(at, other);
                to.swap(at, other);
            }
        }
        Ok(Taken {
            hashed: vec![false; now.len()],
            stamps: now,
            known,
            indexed: Some((count, found)),
        })
    }
}

/// Reads `index` as a stream: exactly `count` entries, each given to `each`
/// with its position, path and stamp, until `each` gives `None`. `None`
/// when the index is not whole, holds another count, or `each` stopped.
fn read_index(
    index: &Path,
    count: usize,
    mut each: impl FnMut(usize, &str, &InputStamp) -> Option<()>,
) -> Option<()> {
    let mut reader = IndexReader::open(index)?;
    if reader.count != count {
        return None;
    }
    for at in 0..count {
        let stamp = reader.next()?;
        each(at, std::str::from_utf8(reader.path()).ok()?, &stamp)?;
    }
    Some(())
}

/// Marks the container record and its layout; bump when the layout changes.
const CONTAINER_MAGIC: &[u8; 8] = b"ZPKCR\x00\x00\x03";

/// The longest package record a container record may hold; a longer one
/// means the file is damaged.
const MAX_PACKAGE_RECORD: usize = 64 << 20;

/// Bytes of the container record's trailer before its checksum: settings,
/// two stamps, package count.
const CONTAINER_TRAILER: usize = 32 + 2 * STAMP_BYTES + 8;

/// The container the last build wrote, as a development build needs it to
/// extend that container (see the module documentation): the settings its
/// chunk bytes depend on, the stamps of its `.utoc` and `.ucas`, and what
/// each package put in it ([`RecordedPackage`]: its chunk key, store entry
/// and bulk chunks), so that an unchanged package is kept without reading
/// its cache entry.
///
/// Layout (`container.bin`), written and read as a stream, never held
/// whole: magic; per package in the order the container got them, its
/// record's length (u32, not 0) and the record; a u32 0; the settings (32
/// bytes), the `.utoc`'s and `.ucas`'s stamps, the package count (u64);
/// the BLAKE3 of everything before it. A record that does not read back
/// whole is damaged (a cache miss and a warning); one of another layout is
/// a cache miss.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ContainerRecord {
    /// Hash of every setting the container's chunk bytes depend on.
    pub(crate) settings: Hash,
    pub(crate) utoc: crate::publish::FileStamp,
    pub(crate) ucas: crate::publish::FileStamp,
    /// How many packages the record holds.
    pub(crate) packages: u64,
}

impl ContainerRecord {
    /// Whether `utoc` and `ucas` on disk are the files recorded.
    pub(crate) fn matches(&self, utoc: &Path, ucas: &Path) -> bool {
        crate::publish::FileStamp::of(utoc).is_ok_and(|s| s == self.utoc)
            && crate::publish::FileStamp::of(ucas).is_ok_and(|s| s == self.ucas)
    }
}

/// A container record read as a stream: its packages one at a time
/// ([`next`](Self::next)), then its trailer, checked against the checksum
/// ([`finish`](Self::finish)). Nothing read is to be trusted before
/// `finish` said the record is whole.
pub(crate) struct ContainerRecordReader {
    path: PathBuf,
    reader: std::io::BufReader<std::fs::File>,
    hasher: blake3::Hasher,
    /// Bytes read so far (the offset errors name).
    offset: u64,
    /// Packages read so far.
    read: u64,
    /// The reused buffer a package's record is read into.
    entry: Vec<u8>,
    ended: bool,
}

impl ContainerRecordReader {
    /// Opens the record at `path`: `Ok(None)` when there is none or it is
    /// of another layout (an older zenpak's).
    pub(crate) fn open(path: &Path) -> Result<Option<ContainerRecordReader>> {
        use std::io::Read;
        let Ok(file) = std::fs::File::open(path) else {
            return Ok(None);
        };
        let mut reader = std::io::BufReader::with_capacity(1 << 16, file);
        let mut magic = [0u8; 8];
        if reader.read_exact(&mut magic).is_err() || magic[..5] != CONTAINER_MAGIC[..5] {
            // Too short to be any version, or not a record at all: damaged.
            return Err(Self::damaged_at(path, 0, "it does not start as one"));
        }
        if magic != *CONTAINER_MAGIC {
            return Ok(None);
        }
        let mut hasher = blake3::Hasher::new();
        hasher.update(&magic);
        Ok(Some(ContainerRecordReader {
            path: path.to_path_buf(),
            reader,
            hasher,
            offset: magic.len() as u64,
            read: 0,
            entry: Vec::new(),
            ended: false,
        }))
    }

    fn damaged_at(path: &Path, offset: u64, what: &str) -> Error {
        Error::invalid(format!(
            "the build cache's container record is damaged: {what}"
        ))
        .within("container record")
        .in_file(path)
        .at(offset)
    }

    fn damaged(&self, what: &str) -> Error {
        Self::damaged_at(&self.path, self.offset, what)
    }

    /// Reads exactly `buf.len()` bytes into `buf`, hashing them.
    fn fill(&mut self, buf: &mut [u8], what: &str) -> Result<()> {
        use std::io::Read;
        if self.reader.read_exact(buf).is_err() {
            return Err(self.damaged(what));
        }
        self.hasher.update(buf);
        self.offset += buf.len() as u64;
        Ok(())
    }

    /// How many packages were read so far.
    pub(crate) fn position(&self) -> u64 {
        self.read
    }

    /// The next package's record; `Ok(None)` after the last.
    pub(crate) fn next(&mut self) -> Result<Option<RecordedPackage>> {
        if self.ended {
            return Ok(None);
        }
        let mut len = [0u8; 4];
        self.fill(&mut len, "it ends in the middle of a package")?;
        let len = u32::from_le_bytes(len) as usize;
        if len == 0 {
            self.ended = true;
            return Ok(None);
        }
        if len > MAX_PACKAGE_RECORD {
            return Err(self.damaged(&format!("a package's record of {len} bytes")));
        }
        let at = self.offset;
        let mut entry = std::mem::take(&mut self.entry);
        entry.resize(len, 0);
        let filled = self.fill(&mut entry, "it ends in the middle of a package");
        let package = filled.and_then(|()| {
            RecordedPackage::read(&entry)
                .map_err(|e| Self::damaged_at(&self.path, at, &e.to_string()))
        });
        self.entry = entry;
        self.read += 1;
        package.map(Some)
    }

    /// Reads the rest of the packages and the trailer, and checks the
    /// whole record against its checksum.
    pub(crate) fn finish(mut self) -> Result<ContainerRecord> {
        while self.next()?.is_some() {}
        let mut trailer = [0u8; CONTAINER_TRAILER];
        self.fill(&mut trailer, "it ends before its trailer")?;
        let computed = self.hasher.finalize();
        let mut checksum = [0u8; 32];
        let mut rest = [0u8; 1];
        use std::io::Read;
        if self.reader.read_exact(&mut checksum).is_err()
            || self.reader.read(&mut rest).map_or(true, |n| n != 0)
            || computed.as_bytes() != &checksum
        {
            return Err(self.damaged("its checksum does not match"));
        }
        let stamp = |at: usize| decode_stamp(trailer[at..at + STAMP_BYTES].try_into().unwrap());
        let packages = u64::from_le_bytes(trailer[32 + 2 * STAMP_BYTES..].try_into().unwrap());
        if packages != self.read {
            return Err(self.damaged("its package count does not match"));
        }
        Ok(ContainerRecord {
            settings: trailer[..32].try_into().unwrap(),
            utoc: stamp(32),
            ucas: stamp(32 + STAMP_BYTES),
            packages,
        })
    }
}

/// Writes a container record as a stream (see [`ContainerRecord`]) to a
/// temporary that [`finish`](Self::finish) publishes; dropped unfinished,
/// it leaves nothing.
pub(crate) struct ContainerRecordWriter {
    out: std::io::BufWriter<crate::publish::TempFile>,
    hasher: blake3::Hasher,
    packages: u64,
    entry: Writer,
}

impl ContainerRecordWriter {
    pub(crate) fn create(path: &Path) -> Result<ContainerRecordWriter> {
        let mut writer = ContainerRecordWriter {
            out: std::io::BufWriter::with_capacity(
                1 << 16,
                crate::publish::TempFile::create(path)?,
            ),
            hasher: blake3::Hasher::new(),
            packages: 0,
            entry: Writer::new(),
        };
        writer.write(CONTAINER_MAGIC)?;
        Ok(writer)
    }

    fn write(&mut self, bytes: &[u8]) -> Result<()> {
        use std::io::Write;
        self.hasher.update(bytes);
        self.out
            .write_all(bytes)
            .map_err(|e| Error::io(self.out.get_ref().path(), e))
    }

    /// Appends a package's record.
    pub(crate) fn add(&mut self, package: &RecordedPackage) -> Result<()> {
        let mut entry = std::mem::take(&mut self.entry);
        package.write(&mut entry);
        let bytes = entry.as_slice();
        let result = self
            .write(&(bytes.len() as u32).to_le_bytes())
            .and_then(|()| self.write(bytes));
        self.entry = Writer::with_capacity(bytes.len());
        self.packages += 1;
        result
    }

    /// Ends the record with the container's settings and stamps, and
    /// publishes it in place of the last one.
    pub(crate) fn finish(
        mut self,
        settings: &Hash,
        utoc: &crate::publish::FileStamp,
        ucas: &crate::publish::FileStamp,
    ) -> Result<()> {
        use std::io::Write;
        self.write(&0u32.to_le_bytes())?;
        self.write(settings)?;
        self.write(&encode_stamp(utoc))?;
        self.write(&encode_stamp(ucas))?;
        self.write(&self.packages.to_le_bytes())?;
        let checksum = *self.hasher.finalize().as_bytes();
        self.out
            .write_all(&checksum)
            .and_then(|()| self.out.flush())
            .map_err(|e| Error::io(self.out.get_ref().path(), e))?;
        let temp = self
            .out
            .into_inner()
            .map_err(|e| Error::internal(format!("container record: {}", e.error())))?;
        crate::publish::publish(Vec::new(), vec![temp.stage_unsynced()])
    }
}

mod hex_hash {
    use serde::{Deserialize, Deserializer, Serializer};

    pub(crate) fn serialize<S: Serializer>(hash: &[u8; 32], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&crate::hash::hex(hash))
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<[u8; 32], D::Error> {
        let text = String::deserialize(d)?;
        crate::hash::from_hex(&text)
            .ok_or_else(|| serde::de::Error::custom("hash must be 64 hex digits"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Files `a`..`e` with their real stamps, except a made-up hash: a
    /// stamp that comes back with it was taken from the index, not hashed.
    fn files(dir: &Path) -> Vec<(PathBuf, InputStamp)> {
        ["c", "a", "e", "b", "d"]
            .iter()
            .map(|name| {
                let path = dir.join(name);
                std::fs::write(&path, name.as_bytes()).unwrap();
                let stamp = InputStamp {
                    file: crate::publish::FileStamp::of(&path).unwrap(),
                    hash: [name.as_bytes()[0]; 32],
                };
                (path, stamp)
            })
            .collect()
    }

    fn arena(paths: &[&Path]) -> PathArena {
        PathArena::of(paths, paths.len())
    }

    fn real_hash(path: &Path) -> Hash {
        *blake3::hash(&std::fs::read(path).unwrap()).as_bytes()
    }

    #[test]
    fn the_index_is_merged_in_any_order_of_paths() {
        let dir = tempfile::tempdir().unwrap();
        let index = dir.path().join("files.bin");
        let files = files(dir.path());
        let paths: Vec<&Path> = files.iter().map(|(p, _)| p.as_path()).collect();
        let stamps: Vec<InputStamp> = files.iter().map(|(_, s)| *s).collect();
        FileIndex::save(&index, &arena(&paths), &stamps).unwrap();

        let same = FileIndex::refresh(Some(&index), &arena(&paths)).unwrap();
        assert_eq!(same.stamps, stamps);
        assert!(same.unchanged);

        // Another order, one file fewer, one the index does not know.
        let extra = dir.path().join("0-new");
        std::fs::write(&extra, b"new").unwrap();
        let asked = [paths[4], extra.as_path(), paths[0], paths[2], paths[1]];
        let refreshed = FileIndex::refresh(Some(&index), &arena(&asked)).unwrap();
        assert!(!refreshed.unchanged);
        assert_eq!(refreshed.stamps[0], stamps[4]);
        assert_eq!(refreshed.stamps[1].hash, real_hash(&extra));
        assert_eq!(refreshed.stamps[2], stamps[0]);
        assert_eq!(refreshed.stamps[3], stamps[2]);
        assert_eq!(refreshed.stamps[4], stamps[1]);
    }

    /// Paths that are not text are keyed as their lossy text (the index's
    /// keys are text); the index still holds every file and is found again.
    #[cfg(unix)]
    #[test]
    fn an_index_with_a_path_that_is_not_text_is_merged_whole() {
        use std::os::unix::ffi::OsStrExt;
        let dir = tempfile::tempdir().unwrap();
        let index = dir.path().join("files.bin");
        // `b\xff` sorts after `b\u{fffe}` as bytes, before it as lossy text.
        let names: [&[u8]; 5] = [b"zeta", b"b\xff", b"alpha", b"b\xef\xbf\xbe", b"m"];
        let files: Vec<PathBuf> = names
            .iter()
            .map(|name| {
                let path = dir.path().join(std::ffi::OsStr::from_bytes(name));
                std::fs::write(&path, name).unwrap();
                path
            })
            .collect();
        let paths: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
        let first = FileIndex::refresh(None, &arena(&paths)).unwrap();
        FileIndex::save(&index, &arena(&paths), &first.stamps).unwrap();
        let again = FileIndex::refresh(Some(&index), &arena(&paths)).unwrap();
        assert!(again.unchanged);
        assert_eq!(again.stamps, first.stamps);
    }

    #[test]
    fn index_paths_are_written_as_the_rest_after_the_previous_one_and_read_back_whole() {
        let paths = [
            "",
            "a",
            "a/b",
            "a/b/c.uasset",
            "a/b/c.uexp",
            "a/bc",
            "b",
            "b/c",
        ];
        let stamp = |i: usize| InputStamp {
            file: crate::publish::FileStamp {
                size: i as u64,
                modified_ns: i as u64,
                inode: 1,
                changed_ns: 2,
            },
            hash: [i as u8; 32],
        };
        let mut out = IndexWriter::new(Vec::new(), paths.len() as u32).unwrap();
        for (i, path) in paths.iter().enumerate() {
            out.write(path.as_bytes(), &stamp(i)).unwrap();
        }
        let bytes = out.finish().unwrap();
        // Each entry holds only the bytes its path does not share.
        let rests: usize = ["", "a", "/b", "/c.uasset", "exp", "c", "b", "/c"]
            .iter()
            .map(|r| r.len())
            .sum();
        assert_eq!(
            bytes.len(),
            12 + paths.len() * (8 + STAMP_BYTES + 32) + rests
        );
        let dir = tempfile::tempdir().unwrap();
        let index = dir.path().join("files.bin");
        std::fs::write(&index, &bytes).unwrap();
        let mut read = Vec::new();
        read_index(&index, paths.len(), |at, path, s| {
            read.push((at, path.to_string(), *s));
            Some(())
        })
        .unwrap();
        let expected: Vec<_> = (0..paths.len())
            .map(|i| (i, paths[i].to_string(), stamp(i)))
            .collect();
        assert_eq!(read, expected);
        // A count other than the header's is not this index.
        assert!(read_index(&index, paths.len() - 1, |_, _, _| Some(())).is_none());
    }

    #[test]
    fn a_damaged_index_only_costs_hashing() {
        let dir = tempfile::tempdir().unwrap();
        let index = dir.path().join("files.bin");
        let files = files(dir.path());
        let paths: Vec<&Path> = files.iter().map(|(p, _)| p.as_path()).collect();
        let stamps: Vec<InputStamp> = files.iter().map(|(_, s)| *s).collect();
        let rehashed = |refreshed: &Stamps| {
            refreshed
                .stamps
                .iter()
                .zip(&paths)
                .filter(|(stamp, path)| stamp.hash == real_hash(path))
                .count()
        };

        FileIndex::save(&index, &arena(&paths), &stamps).unwrap();
        let whole = std::fs::read(&index).unwrap();
        // Cut in the middle of an entry: the entries before it still count.
        std::fs::write(&index, &whole[..whole.len() - 30]).unwrap();
        let cut = FileIndex::refresh(Some(&index), &arena(&paths)).unwrap();
        assert!(!cut.unchanged);
        assert_eq!(rehashed(&cut), 1);

        // Another version's magic, a path length past the limit, garbage:
        // nothing is taken from the index, every file is hashed.
        let mut other_version = whole.clone();
        other_version[7] ^= 0xff;
        let mut long_path = whole.clone();
        long_path[16..20].copy_from_slice(&u32::MAX.to_le_bytes());
        for bytes in [other_version, long_path, vec![0x5a; 300], Vec::new()] {
            std::fs::write(&index, &bytes).unwrap();
            let refreshed = FileIndex::refresh(Some(&index), &arena(&paths)).unwrap();
            assert!(!refreshed.unchanged);
            assert_eq!(rehashed(&refreshed), paths.len());
        }

        // Entries out of order (not written by zenpak): reading stops there.
        let (first, second) = (&paths[1], &paths[3]); // `a`, `b`
        let mut out = IndexWriter::new(Vec::new(), 2).unwrap();
        out.write(second.to_str().unwrap().as_bytes(), &stamps[3])
            .unwrap();
        out.write(first.to_str().unwrap().as_bytes(), &stamps[1])
            .unwrap();
        std::fs::write(&index, out.finish().unwrap()).unwrap();
        let refreshed = FileIndex::refresh(Some(&index), &arena(&[*first, *second])).unwrap();
        assert_eq!(refreshed.stamps[1], stamps[3], "the first entry counts");
        assert_eq!(
            refreshed.stamps[0].hash,
            real_hash(first),
            "the one out of order does not"
        );
    }

    /// A tree record of `dir` (its folder `sub` and the files of
    /// [`files`], indexed) as a scan at `scanned_ns` would leave it.
    fn tree_of(dir: &Path, scanned_ns: i128) -> (TreeRecord, PathBuf) {
        let sub = dir.join("sub");
        std::fs::create_dir_all(&sub).unwrap();
        let index = dir.join("files.bin");
        let files = files(&sub);
        let paths: Vec<&Path> = files.iter().map(|(p, _)| p.as_path()).collect();
        let stamps: Vec<InputStamp> = files.iter().map(|(_, s)| *s).collect();
        FileIndex::save(&index, &arena(&paths), &stamps).unwrap();
        let folder = crate::publish::FileStamp::following(&sub).unwrap();
        let record = TreeRecord {
            config: [1; 32],
            build_key: [2; 32],
            packages: 3,
            loose_files: 2,
            bytes_in: 5,
            files: paths.len() as u64,
            index: crate::publish::FileStamp::of(&index).unwrap(),
            scanned_ns,
            folders: vec![(sub.to_str().unwrap().to_string(), folder)],
        };
        (record, index)
    }

    fn later() -> i128 {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as i128;
        now + 10 * RACY_NS
    }

    #[test]
    fn a_tree_record_reads_back_and_a_damaged_one_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let (record, _) = tree_of(dir.path(), later());
        let bytes = record.encode();
        assert_eq!(TreeRecord::decode(&bytes).unwrap(), record);
        for at in [0, 9, bytes.len() / 2, bytes.len() - 1] {
            let mut damaged = bytes.clone();
            damaged[at] ^= 0x10;
            assert!(TreeRecord::decode(&damaged).is_err(), "byte {at}");
        }
        for len in [0, 31, bytes.len() - 1] {
            assert!(TreeRecord::decode(&bytes[..len]).is_err(), "cut at {len}");
        }
        // Through the cache: a damaged file is an error naming it, none is None.
        let cache = Cache::new(dir.path(), "T");
        cache.create().unwrap();
        assert!(cache.load_tree_record().unwrap().is_none());
        cache.save_tree_record(Some(&record)).unwrap();
        assert_eq!(cache.load_tree_record().unwrap(), Some(record));
        let mut damaged = bytes.clone();
        damaged[20] ^= 1;
        std::fs::write(cache.tree_record_path(), &damaged).unwrap();
        let error = cache.load_tree_record().unwrap_err();
        assert_eq!(error.file(), Some(cache.tree_record_path().as_path()));
        cache.save_tree_record(None).unwrap();
        assert!(!cache.tree_record_path().exists());
    }

    #[test]
    fn a_container_record_streams_back_and_any_damage_is_an_error() {
        use crate::iostore::container_header::StoreEntry;
        use crate::legacy::BulkKind;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("container.bin");
        let stamp = |n: u64| crate::publish::FileStamp {
            size: n,
            modified_ns: u64::MAX - n,
            inode: n + 1,
            changed_ns: -(n as i64) - (1 << 40),
        };
        let packages: Vec<RecordedPackage> = (0..3u64)
            .map(|n| RecordedPackage {
                package_id: 0x1000 + n,
                chunk_key: [n as u8; 32],
                store_entry: StoreEntry {
                    export_bundles_size: 100 * n + 7,
                    load_order: n as u32,
                    export_count: 2,
                    export_bundle_count: 1,
                    imported_packages: (0..n).collect(),
                    shader_map_hashes: vec![[n as u8; 20]; n as usize],
                },
                bulk: [(BulkKind::Bulk, 5), (BulkKind::MemoryMapped, 1 << 33)][..n as usize % 3]
                    .to_vec(),
            })
            .collect();
        let mut writer = ContainerRecordWriter::create(&path).unwrap();
        for package in &packages {
            writer.add(package).unwrap();
        }
        writer.finish(&[9; 32], &stamp(1), &stamp(2)).unwrap();

        let read_all = || -> Result<(Vec<RecordedPackage>, ContainerRecord)> {
            let mut reader = ContainerRecordReader::open(&path)?.expect("a record");
            let mut read = Vec::new();
            while let Some(package) = reader.next()? {
                read.push(package);
            }
            Ok((read, reader.finish()?))
        };
        let (read, record) = read_all().unwrap();
        assert_eq!(read, packages);
        assert_eq!(
            record,
            ContainerRecord {
                settings: [9; 32],
                utoc: stamp(1),
                ucas: stamp(2),
                packages: 3,
            }
        );

        let whole = std::fs::read(&path).unwrap();
        for at in [2, 8, 12, whole.len() / 2, whole.len() - 40, whole.len() - 1] {
            let mut damaged = whole.clone();
            damaged[at] ^= 0x20;
            std::fs::write(&path, &damaged).unwrap();
            let error = read_all().unwrap_err();
            assert_eq!(error.file(), Some(path.as_path()), "byte {at}");
        }
        for len in [0, 7, 12, whole.len() / 2, whole.len() - 1] {
            std::fs::write(&path, &whole[..len]).unwrap();
            assert!(read_all().is_err(), "cut at {len}");
        }
        std::fs::write(&path, [whole.as_slice(), b"x"].concat()).unwrap();
        assert!(read_all().is_err(), "a byte past the end");
        // Another layout (an older zenpak's) is no record, and none either.
        std::fs::write(&path, [&b"ZPKCR\x00\x00\x01"[..], &whole[8..]].concat()).unwrap();
        assert!(ContainerRecordReader::open(&path).unwrap().is_none());
        std::fs::remove_file(&path).unwrap();
        assert!(ContainerRecordReader::open(&path).unwrap().is_none());
        // An unfinished writer leaves nothing behind.
        drop(ContainerRecordWriter::create(&path).unwrap());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_tree_record_holds_only_while_nothing_changed() {
        let dir = tempfile::tempdir().unwrap();
        let (record, index) = tree_of(dir.path(), later());
        assert!(matches!(record.check(&index), TreeCheck::Unchanged));

        // A folder changed just before the scan is not trusted.
        let racy = TreeRecord {
            scanned_ns: i128::from(record.folders[0].1.changed_ns) + RACY_NS / 2,
            ..record.clone()
        };
        assert!(matches!(racy.check(&index), TreeCheck::Changed));

        // The index holds another count, or was written again.
        let fewer = TreeRecord {
            files: record.files - 1,
            ..record.clone()
        };
        assert!(matches!(fewer.check(&index), TreeCheck::Changed));
        let copy = dir.path().join("copy.bin");
        std::fs::copy(&index, &copy).unwrap();
        std::fs::rename(&copy, &index).unwrap();
        assert!(matches!(record.check(&index), TreeCheck::Changed));
        let (record, index) = tree_of(dir.path(), later());
        assert!(matches!(record.check(&index), TreeCheck::Unchanged));

        // A file rewritten in place (its folder keeps its stamp).
        let file = dir.path().join("sub/c");
        std::fs::write(&file, b"C").unwrap();
        assert_eq!(
            crate::publish::FileStamp::following(&dir.path().join("sub")).unwrap(),
            record.folders[0].1
        );
        // The index's files, in its order, each stamped: the one rewritten
        // is not known, the others keep their hashes.
        let TreeCheck::FilesChanged(listed) = record.check(&index) else {
            panic!("a file changed under unchanged folders");
        };
        let sub = dir.path().join("sub");
        let found: Vec<String> = ["a", "b", "c", "d", "e"]
            .iter()
            .map(|name| sub.join(name).to_str().unwrap().to_string())
            .collect();
        let mut listed_paths = Vec::new();
        listed
            .for_each_path(|p| {
                listed_paths.push(p.to_string());
                Ok(())
            })
            .unwrap();
        assert_eq!(listed_paths, found);
        let asked: Vec<PathBuf> = ["e", "c", "a"].iter().map(|n| sub.join(n)).collect();
        let asked: Vec<&Path> = asked.iter().map(PathBuf::as_path).collect();
        // Taken whole, each time from the check again (taking uses it up).
        let listed_again = || match record.check(&index) {
            TreeCheck::FilesChanged(listed) => listed,
            other => panic!("{other:?}"),
        };
        let taken = listed_again().take(&arena(&asked)).unwrap();
        assert_eq!(
            (0..3).map(|i| taken.is_known(i)).collect::<Vec<_>>(),
            [true, false, true]
        );
        assert_eq!(
            *taken.stamp(1),
            crate::publish::FileStamp::of(&file).unwrap()
        );
        assert_eq!(taken.stamps[0].hash, [b'e'; 32]);
        assert_eq!(taken.stamps[2].hash, [b'a'; 32]);
        assert_eq!(taken.stamps[1].hash, [0; 32]);
        assert!(listed_again()
            .take(&arena(&[dir.path().join("other").as_path()]))
            .is_err());
        // The files the check found unchanged before a change are not
        // stat'ed again: their stamps are the indexed ones.
        let later_batch = IndexedFiles::read(
            &index,
            record.files,
            FirstChange {
                same_before: 3,
                now: Vec::new(),
            },
        )
        .unwrap();
        assert_eq!(later_batch.now[3..], listed.now[3..]);
        // Nor are those of the batch the check stamped: they are taken as given.
        let given = crate::publish::FileStamp {
            size: 7,
            modified_ns: 7,
            inode: 7,
            changed_ns: 7,
        };
        let carried = IndexedFiles::read(
            &index,
            record.files,
            FirstChange {
                same_before: 1,
                now: vec![given, listed.now[2].file],
            },
        )
        .unwrap();
        assert_eq!(carried.now[1].file, given);
        assert_eq!(carried.now[2..], listed.now[2..]);
        let mut indexed = Vec::new();
        read_index(&index, 5, |_, _, stamp| {
            indexed.push(stamp.file);
            Some(())
        })
        .unwrap();
        let later_stamps: Vec<_> = later_batch.now.iter().map(|s| s.file).collect();
        assert_eq!(later_stamps[..3], indexed[..3]);
        assert_ne!(later_batch.now[2], listed.now[2]);
        let (record, index) = tree_of(dir.path(), later());
        assert!(matches!(record.check(&index), TreeCheck::Unchanged));

        // A file added to the folder.
        std::fs::write(dir.path().join("sub/new"), b"n").unwrap();
        assert!(matches!(record.check(&index), TreeCheck::Changed));
        // A file removed.
        let (record, index) = tree_of(dir.path(), later());
        std::fs::remove_file(&file).unwrap();
        assert!(matches!(record.check(&index), TreeCheck::Changed));
    }
}
