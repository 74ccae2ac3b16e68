//! The directory index of a `.utoc` (`FIoDirectoryIndexResource`): the
//! mount point and a tree of directories and files whose file entries
//! carry the TOC index of their chunk, so that chunks are visible by path.
//!
//! Stored as: mount point (`FString`), directory entries (name, first
//! child, next sibling, first file — u32 each, `!0` = none; entry 0 is the
//! root), file entries (name, next file, TOC index), and the string table
//! (`TArray<FString>`) the names index. New children and files are linked
//! at the head of their parent's list, as the engine's writer does.

use std::collections::{BTreeMap, HashMap};

use crate::binary::{Reader, Writer};
use crate::error::{Context, Error, Result};

const NONE: u32 = u32::MAX;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct DirectoryEntry {
    name: u32,
    first_child: u32,
    next_sibling: u32,
    first_file: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FileEntry {
    name: u32,
    next_file: u32,
    toc_index: u32,
}

/// The string table: the names one after the other in one buffer
/// ([`crate::arena`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Names(crate::arena::Arena);

impl Names {
    fn len(&self) -> usize {
        self.0.len()
    }

    fn get(&self, i: usize) -> Option<&str> {
        // SAFETY: every piece was pushed from a `&str` (`push`), unchanged.
        self.0
            .get(i)
            .map(|bytes| unsafe { std::str::from_utf8_unchecked(bytes) })
    }

    fn push(&mut self, name: &str) {
        self.0.push(name.as_bytes());
    }

    fn iter(&self) -> impl Iterator<Item = &str> {
        (0..self.len()).filter_map(|i| self.get(i))
    }
}

/// A directory index being built or read.
#[derive(Debug, Clone)]
pub struct DirectoryIndex {
    pub(crate) mount_point: String,
    directories: Vec<DirectoryEntry>,
    files: Vec<FileEntry>,
    strings: Names,
    /// Each name's index in `strings` by a hash of the name, so that a
    /// name is kept once (a container of 100,000 packages has about as
    /// many names); a name whose hash an earlier, other name has is in
    /// `collided`.
    by_hash: HashMap<u64, u32>,
    collided: BTreeMap<String, u32>,
    /// Each folder files were added to, as its path was spelled (with no
    /// empty part), and its entry: a file is added without walking its
    /// parents' children, whatever the order (a writer adds them in the
    /// TOC's order, which mixes the folders).
    folders: HashMap<Box<str>, usize>,
}

/// Two indexes are equal when they hold the same entries; the lookup
/// tables are made from those.
impl PartialEq for DirectoryIndex {
    fn eq(&self, other: &Self) -> bool {
        self.mount_point == other.mount_point
            && self.directories == other.directories
            && self.files == other.files
            && self.strings == other.strings
    }
}

impl Eq for DirectoryIndex {}

/// The hash of a name in [`DirectoryIndex::by_hash`] (the same on every run).
fn name_hash(name: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    name.hash(&mut hasher);
    hasher.finish()
}

impl DirectoryIndex {
    pub fn new(mount_point: &str) -> Self {
        DirectoryIndex {
            mount_point: mount_point.to_string(),
            directories: vec![DirectoryEntry {
                name: NONE,
                first_child: NONE,
                next_sibling: NONE,
                first_file: NONE,
            }],
            files: Vec::new(),
            strings: Names::default(),
            by_hash: HashMap::new(),
            collided: BTreeMap::new(),
            folders: HashMap::new(),
        }
    }

    /// The index of `name` in the string table, if it is there.
    fn find_name(&self, name: &str) -> Option<u32> {
        let &i = self.by_hash.get(&name_hash(name))?;
        if self.strings.get(i as usize) == Some(name) {
            return Some(i);
        }
        self.collided.get(name).copied()
    }

    /// Records that `strings[i]` is a name (the first of equal names stays).
    fn remember_name(&mut self, i: u32) {
        let Some(name) = self.strings.get(i as usize) else {
            return;
        };
        if self.find_name(name).is_some() {
            return;
        }
        match self.by_hash.entry(name_hash(name)) {
            std::collections::hash_map::Entry::Vacant(slot) => {
                slot.insert(i);
            }
            std::collections::hash_map::Entry::Occupied(_) => {
                self.collided.insert(name.to_string(), i);
            }
        }
    }

    fn name_index(&mut self, name: &str) -> u32 {
        if let Some(i) = self.find_name(name) {
            return i;
        }
        let i = self.strings.len() as u32;
        self.strings.push(name);
        self.remember_name(i);
        i
    }

    /// Adds a file by its path relative to the mount point (`/`-separated).
    pub fn add_file(&mut self, relative_path: &str, toc_index: u32) -> Result<()> {
        // The folder as spelled names the entry only when no part is empty.
        let plain = relative_path.split('/').all(|part| !part.is_empty());
        let (folder, file_name) = relative_path
            .rsplit_once('/')
            .unwrap_or(("", relative_path));
        let known = plain.then(|| self.folders.get(folder).copied()).flatten();
        let (dir, file_name) = match known {
            Some(dir) => (dir, file_name),
            None => {
                let parts: Vec<&str> = relative_path.split('/').filter(|p| !p.is_empty()).collect();
                let Some((&file_name, dirs)) = parts.split_last() else {
                    return Err(Error::usage(format!(
                        "empty file path `{relative_path}` in directory index"
                    )));
                };
                let dir = self.folder_entry(dirs);
                if plain {
                    self.folders.insert(folder.into(), dir);
                }
                (dir, file_name)
            }
        };
        let name = self.name_index(file_name);
        let new = self.files.len() as u32;
        self.files.push(FileEntry {
            name,
            next_file: self.directories[dir].first_file,
            toc_index,
        });
        self.directories[dir].first_file = new;
        Ok(())
    }

    /// The entry of the folder whose path is `dirs` (its names from the
    /// root), made with every missing parent.
    fn folder_entry(&mut self, dirs: &[&str]) -> usize {
        let mut dir = 0usize;
        for part in dirs {
            let name = self.name_index(part);
            let mut child = self.directories[dir].first_child;
            let mut found = None;
            while child != NONE {
                let entry = self.directories[child as usize];
                if entry.name == name {
                    found = Some(child as usize);
                    break;
                }
                child = entry.next_sibling;
            }
            dir = match found {
                Some(d) => d,
                None => {
                    let new = self.directories.len();
                    self.directories.push(DirectoryEntry {
                        name,
                        first_child: NONE,
                        next_sibling: self.directories[dir].first_child,
                        first_file: NONE,
                    });
                    self.directories[dir].first_child = new as u32;
                    new
                }
            };
        }
        dir
    }

    pub fn write(&self) -> Vec<u8> {
        let mut out = Vec::new();
        match self.write_to(&mut out) {
            Ok(()) => out,
            // Writing to memory does not fail.
            Err(e) => unreachable!("writing a directory index to memory: {e}"),
        }
    }

    /// Streams the encoded index to `out` through a small buffer (the index
    /// of a container of 100,000 packages is about 10 MB).
    pub(crate) fn write_to(&self, out: &mut impl std::io::Write) -> std::io::Result<()> {
        const BATCH: usize = 64 << 10;
        let mut w = Writer::with_capacity(BATCH + 1024);
        w.fstring(&self.mount_point);
        w.u32(self.directories.len() as u32);
        for d in &self.directories {
            w.u32(d.name);
            w.u32(d.first_child);
            w.u32(d.next_sibling);
            w.u32(d.first_file);
            w.drain_to(out, BATCH)?;
        }
        w.u32(self.files.len() as u32);
        for f in &self.files {
            w.u32(f.name);
            w.u32(f.next_file);
            w.u32(f.toc_index);
            w.drain_to(out, BATCH)?;
        }
        w.u32(self.strings.len() as u32);
        for s in self.strings.iter() {
            w.fstring(s);
            w.drain_to(out, BATCH)?;
        }
        w.drain_to(out, 0)
    }

    /// The length of the encoded index ([`DirectoryIndex::write_to`]), found
    /// without keeping the bytes.
    pub(crate) fn encoded_len(&self) -> u64 {
        struct Count(u64);
        impl std::io::Write for Count {
            fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
                self.0 += buf.len() as u64;
                Ok(buf.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let mut count = Count(0);
        match self.write_to(&mut count) {
            Ok(()) => count.0,
            Err(e) => unreachable!("counting bytes does not fail: {e}"),
        }
    }

    /// Parses a (decrypted) directory index. Trailing bytes (AES padding)
    /// are allowed.
    pub(crate) fn read(data: &[u8]) -> Result<Self> {
        let mut r = Reader::new(data);
        let mount_point = r.fstring().context("directory index > mount point")?;
        let n = r.count_u32(16).context("directory index > directories")?;
        let mut directories = Vec::with_capacity(n);
        for _ in 0..n {
            directories.push(DirectoryEntry {
                name: r.u32()?,
                first_child: r.u32()?,
                next_sibling: r.u32()?,
                first_file: r.u32()?,
            });
        }
        let n = r.count_u32(12).context("directory index > files")?;
        let mut files = Vec::with_capacity(n);
        for _ in 0..n {
            files.push(FileEntry {
                name: r.u32()?,
                next_file: r.u32()?,
                toc_index: r.u32()?,
            });
        }
        let n = r.count_u32(4).context("directory index > strings")?;
        let mut strings = Names(crate::arena::Arena::with_capacity(n));
        for _ in 0..n {
            strings.push(&r.fstring().context("directory index > strings")?);
        }
        let mut index = DirectoryIndex {
            mount_point,
            directories,
            files,
            strings,
            by_hash: HashMap::new(),
            collided: BTreeMap::new(),
            folders: HashMap::new(),
        };
        for i in 0..index.strings.len() as u32 {
            index.remember_name(i);
        }
        index.each_file(crate::limits::MAX_VIEW_TABLE_BYTES, |_, _| Ok(()))?;
        Ok(index)
    }

    /// Calls `each` with every file's path (relative to the mount point)
    /// and TOC index, in the engine's iteration order. Cycles and bad
    /// references are errors. Paths are spelled one at a time in one
    /// buffer, and at most `budget` bytes of them in all: twelve bytes of a
    /// file entry can name a path of any length (a long name, a deep
    /// folder), so a hostile index could spell gigabytes; over the budget
    /// it is a `limit` error, before the bytes are spelled.
    pub(crate) fn each_file(
        &self,
        budget: u64,
        mut each: impl FnMut(&str, u32) -> Result<()>,
    ) -> Result<()> {
        if self.directories.is_empty() {
            return Ok(());
        }
        let name = |i: u32| -> Result<&str> {
            self.strings.get(i as usize).ok_or_else(|| {
                Error::invalid(format!("name {i} is not in the string table"))
                    .within("directory index")
            })
        };
        let mut spelled = 0u64;
        let mut spell = |path: &mut String, len: usize, piece: &str, end: &str| -> Result<()> {
            let total = len + piece.len() + end.len();
            spelled = spelled.saturating_add(total as u64);
            if spelled > budget {
                return Err(Error::limit(
                    "the bytes of the paths the directory index spells",
                    spelled,
                    budget,
                )
                .within("directory index")
                .with_hint("the index gives its files paths far longer or more numerous than a game's (a long name or a deep folder repeated); the file is damaged or hostile"));
            }
            path.truncate(len);
            path.push_str(piece);
            path.push_str(end);
            Ok(())
        };
        let mut visited_dirs = vec![false; self.directories.len()];
        // Each folder to visit with the length of its parent's path in
        // `path`: a folder is visited after every folder its parent's path
        // leads through and before its siblings, so `path` still begins
        // with its parent's path then.
        let mut stack = vec![(0u32, None::<usize>)];
        let mut path = String::new();
        let mut steps = 0usize;
        while let Some((dir, parent_len)) = stack.pop() {
            let entry = *self.directories.get(dir as usize).ok_or_else(|| {
                Error::invalid(format!("directory {dir} does not exist")).within("directory index")
            })?;
            if std::mem::replace(&mut visited_dirs[dir as usize], true) {
                return Err(Error::invalid("directories form a cycle").within("directory index"));
            }
            // The root's path is empty; a folder's is its parent's, its name and `/`.
            match parent_len {
                None => path.clear(),
                Some(len) => spell(&mut path, len, name(entry.name)?, "/")?,
            }
            let dir_len = path.len();
            let mut file = entry.first_file;
            while file != NONE {
                steps += 1;
                if steps > self.files.len() {
                    return Err(Error::invalid("file list forms a cycle").within("directory index"));
                }
                let f = *self.files.get(file as usize).ok_or_else(|| {
                    Error::invalid(format!("file {file} does not exist")).within("directory index")
                })?;
                spell(&mut path, dir_len, name(f.name)?, "")?;
                each(&path, f.toc_index)?;
                file = f.next_file;
            }
            path.truncate(dir_len);
            let first = stack.len();
            let mut child = entry.first_child;
            while child != NONE {
                if stack.len() - first > self.directories.len() {
                    return Err(
                        Error::invalid("sibling list forms a cycle").within("directory index")
                    );
                }
                let c = *self.directories.get(child as usize).ok_or_else(|| {
                    Error::invalid(format!("directory {child} does not exist"))
                        .within("directory index")
                })?;
                stack.push((child, Some(dir_len)));
                child = c.next_sibling;
            }
            stack[first..].reverse();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files_with_paths(index: &DirectoryIndex) -> Vec<(String, u32)> {
        let mut files = Vec::new();
        index
            .each_file(u64::MAX, |path, i| {
                files.push((path.to_string(), i));
                Ok(())
            })
            .unwrap();
        files
    }

    #[test]
    fn files_added_folder_after_folder_build_the_index_a_walk_builds() {
        // Each file added alone (the folder cache emptied) against all in
        // a row, with spellings that name a folder differently.
        let paths = [
            "G/C/A/x.uasset",
            "G/C/A/y.uasset",
            "G/C/A/",
            "G/C/A/B/z.uasset",
            "G/C//A/w.uasset",
            "G/C/A/v.uasset",
            "G/D/u.uasset",
            "G/C/A/t.uasset",
        ];
        let mut in_a_row = DirectoryIndex::new("../../../");
        let mut one_by_one = DirectoryIndex::new("../../../");
        for (i, path) in paths.iter().enumerate() {
            in_a_row.add_file(path, i as u32).unwrap();
            one_by_one.folders.clear();
            one_by_one.add_file(path, i as u32).unwrap();
        }
        assert_eq!(in_a_row, one_by_one);
    }

    #[test]
    fn a_name_whose_hash_another_name_has_is_kept_once_too() {
        let mut index = DirectoryIndex::new("../../../");
        index.add_file("A/x", 0).unwrap();
        // As if "B" hashed like "A" (index 0).
        index.by_hash.insert(name_hash("B"), 0);
        index.add_file("B/y", 1).unwrap();
        index.add_file("B/z", 2).unwrap();
        assert_eq!(
            index.strings.iter().collect::<Vec<_>>(),
            ["A", "x", "B", "y", "z"]
        );
        assert_eq!(index.collided.get("B"), Some(&2));
        let mut files = files_with_paths(&DirectoryIndex::read(&index.write()).unwrap());
        files.sort();
        let expected = [("A/x", 0), ("B/y", 1), ("B/z", 2)].map(|(p, i)| (p.to_string(), i));
        assert_eq!(files, expected);
    }

    #[test]
    fn paths_round_trip() {
        let mut index = DirectoryIndex::new("../../../");
        let paths = [
            "Game/Content/A.uasset",
            "Game/Content/Sub/B.uasset",
            "Game/Content/A.ubulk",
            "Engine/X.uasset",
        ];
        for (i, p) in paths.iter().enumerate() {
            index.add_file(p, i as u32).unwrap();
        }
        let back = DirectoryIndex::read(&index.write()).unwrap();
        assert_eq!(back.mount_point, "../../../");
        let mut files = files_with_paths(&back);
        files.sort();
        let mut expected: Vec<(String, u32)> = paths
            .iter()
            .enumerate()
            .map(|(i, p)| (p.to_string(), i as u32))
            .collect();
        expected.sort();
        assert_eq!(files, expected);
    }
}
