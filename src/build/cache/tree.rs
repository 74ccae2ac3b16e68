//! `tree.bin`: the record of the last scan ([`TreeRecord`]).

use std::path::{Path, PathBuf};

use super::file::{read_stamp, write_stamp, STAMP_BYTES};
use super::index::{files_unchanged, IndexedFiles};
use crate::arena::PathArena;
use crate::binary::{Reader, Writer};
use crate::build::input::Hash;
use crate::error::{Error, Result};

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
/// [`FileIndex`](super::index::FileIndex)) still has its recorded stamp, and the settings are the
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
    pub(crate) index: crate::publish::stamp::FileStamp,
    /// When the scan started (ns since 1970).
    pub(crate) scanned_ns: i128,
    /// Every folder the scan walked, with its stamp taken before its
    /// entries were read.
    pub(crate) folders: Vec<(String, crate::publish::stamp::FileStamp)>,
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
        write_stamp(&mut w, &self.index);
        w.bytes(&self.scanned_ns.to_le_bytes());
        w.u32(self.folders.len() as u32);
        for (path, stamp) in &self.folders {
            w.u32(path.len() as u32);
            w.bytes(path.as_bytes());
            write_stamp(&mut w, stamp);
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
        let index = read_stamp(&mut r)?;
        let scanned_ns = i128::from_le_bytes(r.array::<16>()?);
        let count = r.count_u32(4 + STAMP_BYTES)?;
        let mut folders = Vec::with_capacity(count);
        for _ in 0..count {
            let len = r.count_u32(1)?;
            let path = std::str::from_utf8(r.bytes(len)?).map_err(|_| damaged())?;
            folders.push((path.to_string(), read_stamp(&mut r)?));
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
        let settled = |s: &crate::publish::stamp::FileStamp| {
            i128::from(s.changed_ns) < self.scanned_ns - RACY_NS
                && i128::from(s.modified_ns) < self.scanned_ns - RACY_NS
        };
        let folders_same = crate::publish::stamp::FileStamp::of_all(&folders).is_ok_and(|now| {
            now.iter()
                .zip(&self.folders)
                .all(|(now, (_, then))| now == then && settled(then))
        });
        let index_same = crate::publish::stamp::FileStamp::of(index).is_ok_and(|s| s == self.index);
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
    pub(crate) fn folder_paths(&self) -> Vec<(PathBuf, crate::publish::stamp::FileStamp)> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build::cache::index::tests::{arena, files};
    use crate::build::cache::index::{read_index, FileIndex, FirstChange};
    use crate::build::cache::Cache;
    use crate::build::input::InputStamp;

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
        let folder = crate::publish::stamp::FileStamp::following(&sub).unwrap();
        let record = TreeRecord {
            config: [1; 32],
            build_key: [2; 32],
            packages: 3,
            loose_files: 2,
            bytes_in: 5,
            files: paths.len() as u64,
            index: crate::publish::stamp::FileStamp::of(&index).unwrap(),
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
            crate::publish::stamp::FileStamp::following(&dir.path().join("sub")).unwrap(),
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
            crate::publish::stamp::FileStamp::of(&file).unwrap()
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
        let given = crate::publish::stamp::FileStamp {
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
