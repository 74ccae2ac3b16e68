//! The incremental build cache, under `<output>/.zenpak-cache/`.
//!
//! - `files.json` ([`index::FileIndex`], binary): for every input file, its stamp
//!   ([`crate::publish::stamp::FileStamp`]: size, modification time, change time
//!   and inode number) and BLAKE3 hash, sorted by path. A development build
//!   does not read again a file whose whole stamp is unchanged; one whose
//!   stamp differs in anything is hashed again, so touching a file without
//!   changing it costs a hash, not a conversion. Copy tools and archives can
//!   set a file's size and modification time back, never its change time or
//!   inode, so an edit is always seen. A release build (`--release`,
//!   `package`) and a `--force` build hash every input and never read the
//!   index: their output depends on the bytes alone.
//! - `packages.zpk` and `packages.zpi` ([`entry_pack`]): the
//!   converted packages, each under a key that hashes everything its
//!   conversion depends on (its files' contents, its name, the engine
//!   version, the profile, the mappings and zenpak's version), back to back
//!   in one pack with an index of where each lies.
//! - `build.json`: the key of the last build as a whole and the artifacts it
//!   wrote, each with its BLAKE3 hash and the stamp it had when written
//!   ([`crate::publish::stamp::FileStamp`]: size, times and inode, which no later
//!   write keeps); when the next build's key is the same and every artifact
//!   still has its stamp, nothing is rewritten.
//! - Each entry begins with a BLAKE3 checksum: a damaged entry is a cache
//!   miss (and a warning), never wrong output.
//! - `container.bin` ([`container::ContainerRecord`]): the container the last build
//!   wrote — the stamps of its `.utoc` and `.ucas`, the settings its chunk
//!   bytes depend on, and what each package put in it (its chunk key, store
//!   entry and bulk chunks' lengths). A development build extends that
//!   `.ucas` with the chunks of changed packages only, when the stamps show
//!   the files are still the ones recorded; an unchanged package is added
//!   from its record alone, its cache entry not opened. Read and written
//!   as a stream and checksummed: a damaged record is a warning and a
//!   container written anew.
//! - `tree.bin` ([`tree::TreeRecord`]): every folder the last scan walked with its
//!   stamp, the stamp of `files.json` and the build key. A development build
//!   whose folders and files all keep their stamps is up to date without
//!   walking; one whose folders keep theirs (no entry added, removed or
//!   renamed) but not every file takes the files from `files.json`, stamped
//!   once ([`index::IndexedFiles`]), without listing a folder; a damaged record is
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

pub(crate) mod build_record;
pub(crate) mod container;
pub(crate) mod entry;
pub(crate) mod entry_pack;
pub(crate) mod file;
pub(crate) mod index;
pub(crate) mod tree;

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use build_record::BuildRecord;
use container::{ContainerRecordReader, ContainerRecordWriter};
use file::write_cache_file;
use tree::TreeRecord;

/// Name of the build cache folder inside the output folder.
pub(crate) const CACHE_DIR: &str = ".zenpak-cache";

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
        if !self.exists() {
            return Ok(());
        }
        self.remove_old_layout(removed)?;
        for name in BOOKKEEPING_FILES {
            remove_own_file(self.dir.join(name), removed)?;
        }
        removed.extend(crate::publish::temporary::remove_leftover_temporaries(
            &self.dir,
        )?);
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
        removed.extend(crate::publish::temporary::remove_leftover_temporaries(
            &packages,
        )?);
        if std::fs::read_dir(&packages).is_ok_and(|mut d| d.next().is_none()) {
            std::fs::remove_dir(&packages).map_err(|e| Error::io(&packages, e))?;
            removed.push(packages);
        }
        Ok(())
    }

    /// Whether the cache's folder is there (a folder, not a link to one).
    pub(crate) fn exists(&self) -> bool {
        is_real_dir(&self.dir)
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
    entry_pack::PACK_FILE,
    entry_pack::INDEX_FILE,
];
