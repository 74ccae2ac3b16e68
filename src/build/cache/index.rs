//! `files.json`: the file index, every input file's stamp and BLAKE3 by
//! path ([`FileIndex`]), read as a stream beside this build's sorted paths;
//! what a build takes from it ([`Taken`], [`IndexedFiles`]) and the checks
//! of the files it lists against their stamps now.

use std::path::{Path, PathBuf};

use rayon::prelude::*;

use super::file::{read_stamp, write_stamp, STAMP_BYTES};
use crate::arena::PathArena;
use crate::binary::{Reader, Writer};
use crate::build::input::{hash_file, hash_large_file, Hash, InputStamp, LARGE_FILE};
use crate::error::{Error, Result};

/// Marks the file index and its layout; bump when the layout changes.
const INDEX_MAGIC: &[u8; 8] = b"ZPKFI\x00\x00\x05";

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
/// the stamp ([`write_stamp`], 32 bytes) and BLAKE3 hash (32 bytes); all
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
    file: crate::publish::stamp::FileStamp {
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
    pub(super) stamps: Vec<InputStamp>,
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
    pub(crate) fn stamp(&self, i: usize) -> &crate::publish::stamp::FileStamp {
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
    /// `stat` each, [`crate::publish::stamp::FileStamp::of_all`]) and, with
    /// `index`, the hashes it recorded for the files whose whole stamp is
    /// unchanged. Nothing is read.
    pub(crate) fn take(index: Option<&Path>, paths: &PathArena) -> Result<Taken> {
        // Stamped in place: one list of stamps, not a second one beside it.
        let mut stamps = vec![UNKNOWN; paths.len()];
        crate::publish::stamp::FileStamp::of_all_into(paths, &mut stamps, |s| &mut s.file)?;
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
        let mut r = Reader::new(&header);
        if r.array::<8>().ok()? != *INDEX_MAGIC {
            return None;
        }
        let count = r.u32().ok()? as usize;
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
        let mut r = Reader::new(&lengths);
        let (shared, rest) = (r.u32().ok()? as usize, r.u32().ok()? as usize);
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
        let mut r = Reader::new(&fields);
        Some(InputStamp {
            file: read_stamp(&mut r).ok()?,
            hash: r.array::<32>().ok()?,
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
    /// The entry being written (emptied as it is written out).
    entry: Writer,
}

impl<W: std::io::Write> IndexWriter<W> {
    fn new(mut out: W, count: u32) -> std::io::Result<IndexWriter<W>> {
        let mut entry = Writer::with_capacity(256);
        entry.bytes(INDEX_MAGIC);
        entry.u32(count);
        entry.drain_to(&mut out, 0)?;
        Ok(IndexWriter {
            out,
            last: Vec::new(),
            entry,
        })
    }

    /// Writes the entry of `path` (sorting after the one written before).
    fn write(&mut self, path: &[u8], stamp: &InputStamp) -> std::io::Result<()> {
        let shared = crate::arena::shared_len(&self.last, path);
        let rest = &path[shared..];
        let length = |n: usize| {
            u32::try_from(n)
                .map_err(|_| std::io::Error::other("a path too long for the file index"))
        };
        let w = &mut self.entry;
        w.u32(length(shared)?);
        w.u32(length(rest.len())?);
        w.bytes(rest);
        write_stamp(w, &stamp.file);
        w.bytes(&stamp.hash);
        w.drain_to(&mut self.out, 0)?;
        self.last.truncate(shared);
        self.last.extend_from_slice(rest);
        Ok(())
    }

    fn finish(mut self) -> std::io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

/// Whether the files of `index` (which must hold `count` entries) all
/// still have the stamps recorded (a time of 0 is never trusted): `None`
/// when they do, else the first batch that holds a change, stamped
/// ([`FirstChange`]). `None` (outer) when the index does not read back
/// whole, holds another count, or lists a file that is gone.
pub(super) fn files_unchanged(index: &Path, count: u64) -> Option<Option<FirstChange>> {
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
pub(super) struct FirstChange {
    pub(super) same_before: usize,
    pub(super) now: Vec<crate::publish::stamp::FileStamp>,
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
    mut batch: impl FnMut(&[InputStamp], &[crate::publish::stamp::FileStamp]) -> bool,
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
            || crate::publish::stamp::FileStamp::of_all_into(&paths, &mut now, |s| s).ok(),
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
        let stamped =
            crate::publish::stamp::FileStamp::of_all_into(&paths, &mut now, |s| s).is_ok();
        for i in 0..paths.len() {
            let moved = match stamped {
                true => now[i] != then[i].file,
                false => crate::publish::stamp::FileStamp::following(&paths.path(i))
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
fn is_same(
    now: &crate::publish::stamp::FileStamp,
    then: &crate::publish::stamp::FileStamp,
) -> bool {
    now == then && then.modified_ns != 0
}

/// The input files the file index lists, each stamped now: what a scan
/// that lists no folder takes ([`TreeCheck::FilesChanged`](super::tree::TreeCheck::FilesChanged)). Only the
/// stamps are held (in the index's order), with the hash the index gave
/// each file whose stamp is the indexed one; the paths are read from the
/// index as they are needed.
#[derive(Debug)]
pub(crate) struct IndexedFiles {
    index: PathBuf,
    /// Per entry: the file's stamp now, and its indexed hash where `known`
    /// (else zeros).
    pub(super) now: Vec<InputStamp>,
    /// Per entry: whether the file's stamp now is the one indexed.
    known: Vec<bool>,
}

impl IndexedFiles {
    /// Stamps the files `index` lists (exactly `count` entries), a batch at
    /// a time as it is read, all but those `known` already: the first
    /// `same_before`, just found unchanged (their stamps are the indexed
    /// ones), then the batch stamped with them.
    pub(super) fn read(index: &Path, count: u64, known: FirstChange) -> Option<IndexedFiles> {
        let FirstChange {
            same_before,
            now: batch,
        } = known;
        let room = usize::try_from(count).ok()?.min(1 << 20);
        let (mut now, mut known) = (Vec::with_capacity(room), Vec::with_capacity(room));
        let (mut stamped, mut stamped_known) = (Vec::new(), Vec::new());
        let entry = |now: crate::publish::stamp::FileStamp, then: &InputStamp| {
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
    /// found unchanged ([`TreeCheck::Unchanged`](super::tree::TreeCheck::Unchanged)): nothing is stat'ed.
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
pub(super) fn read_index(
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

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// Files `a`..`e` with their real stamps, except a made-up hash: a
    /// stamp that comes back with it was taken from the index, not hashed.
    pub(crate) fn files(dir: &Path) -> Vec<(PathBuf, InputStamp)> {
        ["c", "a", "e", "b", "d"]
            .iter()
            .map(|name| {
                let path = dir.join(name);
                std::fs::write(&path, name.as_bytes()).unwrap();
                let stamp = InputStamp {
                    file: crate::publish::stamp::FileStamp::of(&path).unwrap(),
                    hash: [name.as_bytes()[0]; 32],
                };
                (path, stamp)
            })
            .collect()
    }

    pub(crate) fn arena(paths: &[&Path]) -> PathArena {
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
            file: crate::publish::stamp::FileStamp {
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
}
