//! [`OutputDir`]: a folder the user names that zenpak writes files into
//! (`unpack`, `extract`, `get`, pak inputs, added packages), each file kept
//! inside it, and [`create_folders_inside`], which makes folders one
//! component at a time, never through a link.

use std::collections::BTreeSet;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::temporary::{create_registered, temporary_path_for, unregister};
#[cfg(target_os = "linux")]
use super::unnamed_folder::UnnamedFolder;
use crate::error::{Error, Result};
use crate::pool::in_order_on_pool;

/// A folder zenpak writes files into (`unpack`, `extract`, `get`, a pak
/// input unpacked for a build, packages added to a mod): inside it only —
/// no absolute path, `..`, drive letter or backslash, no folder below it
/// that is a symbolic link, no target that is one; folders are created one
/// at a time, none through a link ([`create_folders_inside`]). Each file
/// goes through a temporary beside it renamed when complete (registered,
/// so an interrupt removes it) — or, in a folder that was empty, on Linux,
/// a file without a name linked in when complete. A failed fill leaves
/// nothing. Folders already checked are remembered, so a file costs a
/// create, its writes and a rename or link (and, in a folder that was not
/// empty, a look at what it replaces), not a walk of its path. No sync per
/// file: what is written here can be made again, and thousands of fsyncs
/// would dominate an unpack.
pub(crate) struct OutputDir {
    root: PathBuf,
    checked: std::sync::Mutex<BTreeSet<PathBuf>>,
    /// The folder was empty when extraction began: nothing in it is a
    /// symbolic link zenpak did not make (it makes none).
    was_empty: bool,
    /// The filesystem refused a file without a name: temporaries are renamed.
    #[cfg(target_os = "linux")]
    no_unnamed: std::sync::atomic::AtomicBool,
    /// The folder each thread writes files without a name into now: a
    /// package's files, and the next package's, are mostly in one folder.
    #[cfg(target_os = "linux")]
    folders: std::sync::Mutex<Vec<(std::thread::ThreadId, std::sync::Arc<UnnamedFolder>)>>,
}

impl OutputDir {
    /// The folder `root` (created if missing).
    pub(crate) fn new(root: &Path) -> Result<Self> {
        std::fs::create_dir_all(root).map_err(|e| Error::io(root, e))?;
        let root = root.canonicalize().map_err(|e| Error::io(root, e))?;
        let was_empty = std::fs::read_dir(&root)
            .map_err(|e| Error::io(&root, e))?
            .next()
            .is_none();
        Ok(OutputDir {
            root,
            checked: std::sync::Mutex::new(BTreeSet::new()),
            was_empty,
            #[cfg(target_os = "linux")]
            no_unnamed: Default::default(),
            #[cfg(target_os = "linux")]
            folders: Default::default(),
        })
    }

    /// The folder, its links resolved: a file written as `relative` is
    /// `root().join(relative)`.
    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    /// Writes `relative` (a `/`-separated path), streamed by `fill` through
    /// a buffer; returns what `fill` returns (its byte count).
    pub(crate) fn write(
        &self,
        relative: &str,
        fill: impl FnOnce(&mut dyn Write) -> Result<u64>,
    ) -> Result<u64> {
        self.write_file(relative, |file, target| {
            let mut w = std::io::BufWriter::with_capacity(1 << 16, file);
            let n = fill(&mut w).map_err(|e| e.in_file(target))?;
            w.flush().map_err(|e| Error::io(target, e))?;
            Ok(n)
        })
    }

    /// Writes one file per item, as [`OutputDir::write`] would, on the
    /// thread pool: `path` names an item's file, `fill` streams its bytes,
    /// `written` hears of it once it is in place. Items go a group at a
    /// time ([`in_order_on_pool`]). Returns each item's byte count in item
    /// order, or the error of the first item (in that order) that failed;
    /// items after it in its group and the next may have been written, each
    /// whole, and no later group is started.
    pub(crate) fn write_each<T: Sync>(
        &self,
        items: &[T],
        path: impl Fn(&T) -> &str + Sync,
        fill: impl Fn(&T, &mut dyn Write) -> Result<u64> + Sync,
        written: impl Fn(&T) + Sync,
    ) -> Result<Vec<u64>> {
        let mut sizes = Vec::with_capacity(items.len());
        in_order_on_pool(
            items,
            |item| {
                let n = self.write(path(item), |w| fill(item, w))?;
                written(item);
                Ok(n)
            },
            |_, n: Result<u64>| {
                sizes.push(n?);
                Ok(())
            },
        )?;
        Ok(sizes)
    }

    /// Writes `data`, already in memory, as `relative`: one write, no buffer
    /// in between (see [`OutputDir::write`]).
    pub(crate) fn write_bytes(&self, relative: &str, data: &[u8]) -> Result<u64> {
        self.write_file(relative, |file, target| {
            file.write_all(data).map_err(|e| Error::io(target, e))?;
            Ok(data.len() as u64)
        })
    }

    /// Checks `relative`, creates its folders, has `fill` write its
    /// temporary (given the target's path, which its errors name) and
    /// renames it into place.
    fn write_file(
        &self,
        relative: &str,
        fill: impl FnOnce(&mut File, &Path) -> Result<u64>,
    ) -> Result<u64> {
        crate::mount::validate_relative_path(relative).map_err(|_| {
            Error::invalid(format!(
                "refusing to write `{relative}`: the path would leave the output folder"
            ))
        })?;
        let target = self.root.join(relative);
        let parent = target.parent().unwrap_or(&self.root).to_path_buf();
        let known = |checked: &std::sync::Mutex<BTreeSet<PathBuf>>| {
            checked
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .contains(&parent)
        };
        if !known(&self.checked) {
            create_folders_inside(&self.root, &parent, relative)?;
            let real = parent.canonicalize().map_err(|e| Error::io(&parent, e))?;
            if !real.starts_with(&self.root) {
                return Err(Error::invalid(format!(
                    "refusing to write `{relative}`: it resolves outside the output folder"
                ))
                .in_file(&parent)
                .with_hint("remove the link that leads out, or write into another folder"));
            }
            self.checked
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(parent.clone());
        }
        if !self.was_empty
            && target
                .symlink_metadata()
                .is_ok_and(|m| m.file_type().is_symlink())
        {
            return Err(Error::invalid(format!(
                "refusing to write `{relative}`: it is a symbolic link"
            ))
            .in_file(&target)
            .with_hint("remove the link, or write into another folder"));
        }
        // In a folder that was empty, a new file is written without a name
        // and named when complete: a create and a link, no rename.
        #[cfg(target_os = "linux")]
        if self.was_empty && !self.no_unnamed.load(std::sync::atomic::Ordering::Relaxed) {
            let created = self
                .unnamed_folder(&parent)
                .and_then(|folder| Some((folder.create()?, folder)));
            match created {
                Some((mut file, folder)) => {
                    let n = fill(&mut file, &target)?;
                    let name = target.file_name().unwrap_or_default();
                    if folder.link(&file, name).is_ok() {
                        return Ok(n);
                    }
                    // Named another way: the bytes are copied to a temporary
                    // renamed into place (the name exists, or no `/proc`).
                    use std::io::Seek;
                    file.rewind().map_err(|e| Error::io(&target, e))?;
                    return self.write_through_temporary(&target, |temp_file, temp| {
                        std::io::copy(&mut file, temp_file).map_err(|e| Error::io(temp, e))?;
                        Ok(n)
                    });
                }
                None => self
                    .no_unnamed
                    .store(true, std::sync::atomic::Ordering::Relaxed),
            }
        }
        self.write_through_temporary(&target, fill)
    }

    /// The folder `parent` open for files without a name, kept for the
    /// calling thread until it writes into another folder.
    #[cfg(target_os = "linux")]
    fn unnamed_folder(&self, parent: &Path) -> Option<std::sync::Arc<UnnamedFolder>> {
        let thread = std::thread::current().id();
        let lock = || self.folders.lock().unwrap_or_else(|e| e.into_inner());
        let kept = lock()
            .iter()
            .find(|(t, f)| *t == thread && f.path() == parent)
            .map(|(_, f)| std::sync::Arc::clone(f));
        if kept.is_some() {
            return kept;
        }
        let folder = std::sync::Arc::new(UnnamedFolder::open(parent)?);
        let mut folders = lock();
        match folders.iter_mut().find(|(t, _)| *t == thread) {
            Some(entry) => entry.1 = std::sync::Arc::clone(&folder),
            None => folders.push((thread, std::sync::Arc::clone(&folder))),
        }
        Some(folder)
    }

    /// Has `fill` write a temporary beside `target` and renames it into place.
    fn write_through_temporary(
        &self,
        target: &Path,
        fill: impl FnOnce(&mut File, &Path) -> Result<u64>,
    ) -> Result<u64> {
        let temp = temporary_path_for(target);
        let mut file = create_registered(&temp)?;
        let result = (|| {
            let n = fill(&mut file, target)?;
            drop(file);
            std::fs::rename(&temp, target).map_err(|e| Error::io(target, e))?;
            Ok(n)
        })();
        if result.is_err() {
            let _ = std::fs::remove_file(&temp);
        }
        unregister(&temp);
        result
    }
}

/// Creates the folders from `root` down to `folder` (inside it) one at a
/// time, never through a symbolic link: a component that is a link (or a
/// file) is refused before anything is created below it. `root` is the
/// output folder as the user named it, links resolved.
pub(crate) fn create_folders_inside(root: &Path, folder: &Path, relative: &str) -> Result<()> {
    let below = folder.strip_prefix(root).map_err(|_| {
        Error::internal(format!(
            "{} is not inside {}",
            folder.display(),
            root.display()
        ))
    })?;
    let mut at = root.to_path_buf();
    for component in below.components() {
        at.push(component);
        let refuse = |what: &str| {
            Err(Error::invalid(format!(
                "refusing to write `{relative}`: `{}` is {what}",
                at.display()
            ))
            .with_hint("remove it, or write into another folder"))
        };
        match std::fs::symlink_metadata(&at) {
            Ok(meta) if meta.is_dir() => continue,
            Ok(meta) if meta.file_type().is_symlink() => return refuse("a symbolic link"),
            Ok(_) => return refuse("a file, not a folder"),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(&at, e)),
        }
        match std::fs::create_dir(&at) {
            Ok(()) => {}
            // Made meanwhile by another thread: fine if it is a real folder.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                if !std::fs::symlink_metadata(&at).is_ok_and(|m| m.is_dir()) {
                    return refuse("not a folder");
                }
            }
            Err(e) => return Err(Error::io(&at, e)),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pool::POOL_GROUP;
    use crate::publish::temporary::{is_registered, is_temporary_name};
    use crate::publish::tests::names_in;

    /// In a folder that was empty, a file is linked in when whole (Linux);
    /// a second file under the same name replaces it through a temporary.
    /// Either way the folder ends up holding the last bytes and nothing else.
    #[test]
    fn a_path_written_twice_into_an_empty_folder_holds_the_last_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let out = OutputDir::new(&dir.path().join("out")).unwrap();
        assert_eq!(out.write_bytes("a/b.bin", b"first").unwrap(), 5);
        assert_eq!(out.write_bytes("a/b.bin", b"second").unwrap(), 6);
        let streamed = out.write("a/c.bin", |w| {
            w.write_all(b"xyz")
                .map_err(|e| Error::io(Path::new("a/c.bin"), e))?;
            Ok(3)
        });
        assert_eq!(streamed.unwrap(), 3);
        let folder = dir.path().join("out/a");
        assert_eq!(std::fs::read(folder.join("b.bin")).unwrap(), b"second");
        assert_eq!(std::fs::read(folder.join("c.bin")).unwrap(), b"xyz");
        assert_eq!(names_in(&folder), ["b.bin", "c.bin"]);
    }

    /// A fill that fails leaves nothing, in a folder that was empty and in
    /// one that was not; in the latter the temporary is registered while it
    /// is filled, so that an interrupt would remove it.
    #[test]
    fn a_failed_write_leaves_nothing_and_a_temporary_is_registered_meanwhile() {
        let dir = tempfile::tempdir().unwrap();
        let failed = || Err(Error::invalid("the data did not check out"));
        let empty = OutputDir::new(&dir.path().join("empty")).unwrap();
        let error = empty.write("a/x.bin", |_| failed()).unwrap_err();
        // The error names the file it was for.
        assert_eq!(error.file(), Some(empty.root().join("a/x.bin").as_path()));
        assert_eq!(
            std::fs::read_dir(dir.path().join("empty/a"))
                .unwrap()
                .count(),
            0
        );

        let full = dir.path().join("full");
        std::fs::create_dir_all(full.join("a")).unwrap();
        std::fs::write(full.join("a/keep.bin"), b"kept").unwrap();
        let out = OutputDir::new(&full).unwrap();
        let mut registered = false;
        let result = out.write("a/x.bin", |w| {
            w.write_all(b"partial").unwrap();
            w.flush().unwrap();
            let names: Vec<PathBuf> = std::fs::read_dir(out.root().join("a"))
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|p| is_temporary_name(&p.file_name().unwrap().to_string_lossy()))
                .collect();
            registered = names.len() == 1 && is_registered(&names[0]);
            failed()
        });
        assert_eq!(
            result.unwrap_err().file(),
            Some(out.root().join("a/x.bin").as_path())
        );
        assert!(registered, "the temporary was not registered while filled");
        assert_eq!(names_in(&full.join("a")), ["keep.bin"]);
    }

    /// `write_each` writes on the pool but answers in item order: the byte
    /// counts in order, and of several failures the first item's, every
    /// file before it written whole and no failed one left behind.
    #[test]
    fn write_each_answers_in_item_order() {
        let dir = tempfile::tempdir().unwrap();
        let out = OutputDir::new(dir.path()).unwrap();
        let items: Vec<(String, usize)> = (0..1000)
            .map(|i| (format!("d{}/f{i}.bin", i % 7), i))
            .collect();
        let written = out
            .write_each(
                &items,
                |(path, _)| path,
                |(_, n), w| {
                    w.write_all(&vec![*n as u8; *n]).unwrap();
                    Ok(*n as u64)
                },
                |_| (),
            )
            .unwrap();
        assert_eq!(written, (0..1000u64).collect::<Vec<_>>());
        for (path, n) in &items {
            assert_eq!(
                std::fs::read(dir.path().join(path)).unwrap(),
                vec![*n as u8; *n]
            );
        }

        let again = tempfile::tempdir().unwrap();
        let out = OutputDir::new(again.path()).unwrap();
        let fails = |n: usize| n == 300 || n == 310 || n == 500;
        let error = out
            .write_each(
                &items,
                |(path, _)| path,
                |(_, n), w| {
                    if fails(*n) {
                        return Err(Error::invalid(format!("item {n}")));
                    }
                    w.write_all(&vec![*n as u8; *n]).unwrap();
                    Ok(*n as u64)
                },
                |_| (),
            )
            .unwrap_err();
        assert_eq!(error.file(), Some(out.root().join("d6/f300.bin").as_path()));
        for (path, n) in &items {
            let file = again.path().join(path);
            if *n < 300 {
                assert_eq!(std::fs::read(&file).unwrap(), vec![*n as u8; *n], "{path}");
            }
            assert!(!fails(*n) || !file.exists(), "{path}");
        }
        // Items in groups after the failure's and the next were not started.
        let not_started = (300 / POOL_GROUP + 2) * POOL_GROUP;
        for (path, _) in &items[not_started..] {
            assert!(!again.path().join(path).exists(), "{path}");
        }
    }
}
