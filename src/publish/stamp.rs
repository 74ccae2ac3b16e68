//! [`FileStamp`]: a file's identity as written (size, times, inode), from
//! the system's file status (`stat`, `fstatat`; on Windows a folder's
//! listing), one file or many at a time: how a development build knows an
//! input or an output is unchanged without reading it, and how ownership
//! records know a file is still the one zenpak wrote.

#[cfg(unix)]
use std::fs::File;
use std::path::Path;
#[cfg(not(unix))]
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Identity of a file as written: size, modification time, and (on Unix)
/// inode and change time. Rewriting, truncating or replacing the file
/// changes the change time or the inode, which no user tool can set back.
/// On Windows, where std has no stable file index or change time, the
/// creation time takes the change time's place and the inode is 0: an edit
/// in place that keeps the size and sets the modification time back goes
/// unseen there by development builds, as does a file written through
/// another of its hard links (its listing entry under this name keeps the
/// earlier stamp: see `stamps_listed`); release builds hash every input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileStamp {
    pub size: u64,
    /// Nanoseconds since 1970; 0 (never trusted) before 1970 or after 2554.
    pub(crate) modified_ns: u64,
    pub(crate) inode: u64,
    /// Nanoseconds since 1970 (before it, negative); a change time outside
    /// ±292 years of 1970 leaves `modified_ns` 0 (never trusted).
    pub(crate) changed_ns: i64,
}

impl FileStamp {
    /// The stamp of the file at `path` (not following a final symlink).
    pub(crate) fn of(path: &Path) -> std::io::Result<FileStamp> {
        let meta = std::fs::symlink_metadata(path)?;
        Ok(FileStamp::from_metadata(&meta))
    }

    pub(crate) fn from_metadata(meta: &std::fs::Metadata) -> FileStamp {
        let modified_ns = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .and_then(|d| u64::try_from(d.as_nanos()).ok());
        #[cfg(unix)]
        let (inode, changed_ns) = {
            use std::os::unix::fs::MetadataExt;
            (meta.ino(), nanoseconds(meta.ctime(), meta.ctime_nsec()))
        };
        // Elsewhere (Windows) std offers no stable file index or change
        // time: the creation time stands in for the change time (a file
        // written anew under the name gets a new one, except within seconds
        // of the old one's deletion: NTFS then passes the old creation time
        // on, and size and modification time must tell), the inode stays 0.
        #[cfg(not(unix))]
        let (inode, changed_ns) = (
            0,
            meta.created()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(Some(0), |d| i64::try_from(d.as_nanos()).ok()),
        );
        FileStamp::new(meta.len(), modified_ns, inode, changed_ns)
    }

    /// A stamp of times that may not fit: either out of range leaves the
    /// modification time 0, which is never trusted.
    fn new(size: u64, modified_ns: Option<u64>, inode: u64, changed_ns: Option<i64>) -> FileStamp {
        let (modified_ns, changed_ns) = match (modified_ns, changed_ns) {
            (Some(m), Some(c)) => (m, c),
            (_, c) => (0, c.unwrap_or(0)),
        };
        FileStamp {
            size,
            modified_ns,
            inode,
            changed_ns,
        }
    }

    /// The stamps of many files or folders (following symbolic links, as
    /// [`std::fs::metadata`] does), on every core, in the order given. On
    /// Unix each is one `fstatat` relative to its folder, opened once for a
    /// run of paths in it: the kernel then looks up one name, not every
    /// folder of the path again (a no-change build is mostly these calls).
    /// Elsewhere, or when the folder cannot be opened, [`std::fs::metadata`].
    pub(crate) fn of_all(paths: &crate::arena::PathArena) -> Result<Vec<FileStamp>> {
        let mut stamps = vec![
            FileStamp {
                size: 0,
                modified_ns: 0,
                inode: 0,
                changed_ns: 0,
            };
            paths.len()
        ];
        FileStamp::stamp_all(paths, &mut stamps, |s| s, false)?;
        Ok(stamps)
    }

    /// [`FileStamp::of_all`] of files (not folders), written into records
    /// the caller holds (the stamp of path `i` into `stamp(&mut
    /// records[i])`), so that a list of records with a stamp each needs no
    /// second list of stamps beside it. On Windows each folder's files are
    /// stamped from one listing of it (`stamps_listed`), not by opening
    /// every file.
    pub(crate) fn of_all_into<T: Send>(
        paths: &crate::arena::PathArena,
        records: &mut [T],
        stamp: fn(&mut T) -> &mut FileStamp,
    ) -> Result<()> {
        FileStamp::stamp_all(paths, records, stamp, true)
    }

    /// [`FileStamp::of_all_into`], and [`FileStamp::of_all`] with `listed`
    /// false (folders: NTFS keeps a folder's times in its parent's listing
    /// only as of the last time it was closed, so a folder is opened).
    fn stamp_all<T: Send>(
        paths: &crate::arena::PathArena,
        records: &mut [T],
        stamp: fn(&mut T) -> &mut FileStamp,
        listed: bool,
    ) -> Result<()> {
        use rayon::prelude::*;
        const RUN: usize = 256;
        if records.len() != paths.len() {
            return Err(Error::internal("file stamps out of step with the files"));
        }
        #[cfg(not(unix))]
        if listed {
            return stamps_listed(paths, records, stamp);
        }
        #[cfg(unix)]
        let _ = listed;
        records
            .par_chunks_mut(RUN)
            .enumerate()
            .try_for_each(|(run, records)| -> Result<()> {
                #[cfg(unix)]
                stamp_run(paths, run * RUN, records, stamp)?;
                // Elsewhere std's way, one file at a time.
                #[cfg(not(unix))]
                for (i, record) in (run * RUN..).zip(records) {
                    *stamp(record) = FileStamp::following(&paths.path(i))?;
                }
                Ok(())
            })
    }

    /// The stamp of `path`, following a final symbolic link.
    pub(crate) fn following(path: &Path) -> Result<FileStamp> {
        let meta = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
        Ok(FileStamp::from_metadata(&meta))
    }
}

/// Stamps of files on Windows (see [`FileStamp::of_all_into`]) from a
/// listing of each of their folders, on every core: a listing (std's
/// `read_dir`, which asks Windows for a folder's entries many at a time)
/// gives each entry's size and times, where [`std::fs::metadata`] opens
/// each file and asks its handle. Git for Windows (its file system cache)
/// and Ninja stamp files the same way. NTFS brings a file's listing entry
/// up to date when the file is closed, and only the entry of the name it
/// was opened by: a file still open for writing shows its earlier stamp
/// until it is closed, and one written through another of its hard links
/// keeps it under this name. A name the listing does not hold as it is
/// written here, and a symbolic link (to be followed), take std's way, as
/// does a folder that cannot be listed; so errors are std's.
#[cfg(not(unix))]
fn stamps_listed<T: Send>(
    paths: &crate::arena::PathArena,
    records: &mut [T],
    field: fn(&mut T) -> &mut FileStamp,
) -> Result<()> {
    use rayon::prelude::*;
    use std::collections::HashMap;
    // Each folder with the positions of the paths in it (names are taken
    // from `paths` again per folder, so only one folder's are held at a
    // time on each thread); a path without both a folder and a name takes
    // std's way.
    let mut folders: HashMap<PathBuf, Vec<usize>> = HashMap::new();
    let mut alone = Vec::new();
    for i in 0..paths.len() {
        let path = paths.path(i);
        match (path.parent(), path.file_name()) {
            (Some(parent), Some(_)) if !parent.as_os_str().is_empty() => {
                folders.entry(parent.to_path_buf()).or_default().push(i);
            }
            _ => alone.push(i),
        }
    }
    let listed: Vec<Vec<(usize, FileStamp)>> = folders
        .par_iter()
        .map(|(folder, indices)| -> Result<Vec<(usize, FileStamp)>> {
            let named: Vec<PathBuf> = indices.iter().map(|&i| paths.path(i)).collect();
            let mut wanted: HashMap<&std::ffi::OsStr, Option<FileStamp>> = named
                .iter()
                .filter_map(|path| Some((path.file_name()?, None)))
                .collect();
            let mut left = wanted.len();
            if let Ok(entries) = std::fs::read_dir(folder) {
                for entry in entries {
                    // An entry that does not read ends the listing: what is
                    // still wanted takes std's way.
                    let Ok(entry) = entry else { break };
                    let name = entry.file_name();
                    let Some(slot) = wanted.get_mut(name.as_os_str()) else {
                        continue;
                    };
                    *slot = match entry.metadata() {
                        Ok(meta) if !meta.file_type().is_symlink() => {
                            Some(FileStamp::from_metadata(&meta))
                        }
                        _ => None,
                    };
                    left -= 1;
                    if left == 0 {
                        break;
                    }
                }
            }
            indices
                .iter()
                .zip(&named)
                .map(|(&i, path)| {
                    let listed = path.file_name().and_then(|name| *wanted.get(name)?);
                    Ok((i, listed.map_or_else(|| FileStamp::following(path), Ok)?))
                })
                .collect()
        })
        .collect::<Result<_>>()?;
    for (i, stamp) in listed.into_iter().flatten() {
        *field(&mut records[i]) = stamp;
    }
    for i in alone {
        *field(&mut records[i]) = FileStamp::following(&paths.path(i))?;
    }
    Ok(())
}

/// Stamps of the paths from `first` on into `records` (see
/// [`FileStamp::of_all_into`]) on Unix: each file one `fstatat` in its
/// folder, opened once for the files of the run in it.
#[cfg(unix)]
fn stamp_run<T>(
    paths: &crate::arena::PathArena,
    first: usize,
    records: &mut [T],
    field: fn(&mut T) -> &mut FileStamp,
) -> Result<()> {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::OpenOptionsExt;
    use std::os::unix::io::AsRawFd;
    let mut bytes = Vec::new();
    // The folder open now, and its path.
    let (mut folder, mut open): (Vec<u8>, Option<File>) = (Vec::new(), None);
    for (i, record) in (first..).zip(records) {
        let stamp = field(record);
        paths.write(i, &mut bytes);
        // Split at the last `/` (cheaper than `Path::parent`, which parses
        // every component); a name that is empty, `.` or `..` takes std's way.
        let split = bytes.iter().rposition(|b| *b == b'/');
        let (parent, name) = match split {
            Some(at) => (&bytes[..at.max(1)], &bytes[at + 1..]),
            None => (&b"."[..], &bytes[..]),
        };
        let path = Path::new(std::ffi::OsStr::from_bytes(&bytes));
        if name.is_empty() || name == b"." || name == b".." {
            *stamp = FileStamp::following(path)?;
            continue;
        }
        if folder.is_empty() || folder != parent {
            open = std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_DIRECTORY)
                .open(std::ffi::OsStr::from_bytes(parent))
                .ok();
            folder.clear();
            folder.extend_from_slice(parent);
        }
        let mut c_name = [0u8; 256];
        let found = match &open {
            Some(dir) if name.len() < c_name.len() && !name.contains(&0) => {
                c_name[..name.len()].copy_from_slice(name);
                // SAFETY: `c_name` is NUL-terminated (zeroed past the name),
                // `st` is written whole by a successful call.
                unsafe {
                    let mut st: libc::stat = std::mem::zeroed();
                    (libc::fstatat(dir.as_raw_fd(), c_name.as_ptr().cast(), &mut st, 0) == 0)
                        .then_some(st)
                }
            }
            _ => None,
        };
        *stamp = match found {
            Some(st) => stamp_of_stat(&st),
            // The error (or an unusual name) as std reports it.
            None => FileStamp::following(path)?,
        };
    }
    Ok(())
}

/// [`FileStamp::from_metadata`] of what `fstatat` returned: the same fields
/// std reads (a modification time before 1970 is 0, as there).
#[cfg(unix)]
#[allow(clippy::unnecessary_cast)]
fn stamp_of_stat(st: &libc::stat) -> FileStamp {
    let modified_ns = nanoseconds(st.st_mtime as i64, st.st_mtime_nsec as i64)
        .and_then(|ns| u64::try_from(ns).ok());
    FileStamp::new(
        st.st_size as u64,
        modified_ns,
        st.st_ino as u64,
        nanoseconds(st.st_ctime as i64, st.st_ctime_nsec as i64),
    )
}

/// Seconds and nanoseconds since 1970 as nanoseconds, if they fit.
#[cfg(unix)]
fn nanoseconds(seconds: i64, nanos: i64) -> Option<i64> {
    seconds.checked_mul(1_000_000_000)?.checked_add(nanos)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn stamps_of_many_files_are_what_metadata_says() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("sub");
        std::fs::create_dir(&sub).unwrap();
        let mut paths = Vec::new();
        for (i, folder) in [dir.path(), &sub, dir.path()].iter().enumerate() {
            for n in 0..300 {
                let path = folder.join(format!("f{i}-{n}"));
                std::fs::write(&path, vec![7u8; n]).unwrap();
                paths.push(path);
            }
        }
        // A path asked twice is stamped twice.
        paths.push(paths[3].clone());
        #[cfg(unix)]
        {
            // A link is followed, as `std::fs::metadata` does.
            let link = sub.join("link");
            std::os::unix::fs::symlink(&paths[5], &link).unwrap();
            paths.push(link);
        }
        let asked: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
        let arena = crate::arena::PathArena::of(&asked, asked.len());
        let stamps = FileStamp::of_all(&arena).unwrap();
        // Files stamped as files are (on Windows, from their folders'
        // listings) what metadata says too.
        let mut listed = vec![stamps[0]; stamps.len()];
        FileStamp::of_all_into(&arena, &mut listed, |s| s).unwrap();
        for ((path, stamp), listed) in paths.iter().zip(&stamps).zip(&listed) {
            let expected = FileStamp::from_metadata(&std::fs::metadata(path).unwrap());
            assert_eq!(*stamp, expected, "{}", path.display());
            assert_eq!(*listed, expected, "{}", path.display());
            assert_ne!(stamp.modified_ns, 0);
        }
        #[cfg(unix)]
        assert_eq!(stamps.last().unwrap().inode, stamps[5].inode);

        // A file that is gone is an error naming it.
        let gone = sub.join("gone");
        let with_gone = crate::arena::PathArena::of([asked[0], gone.as_path()], 2);
        let error = FileStamp::of_all(&with_gone).unwrap_err();
        assert_eq!(error.file(), Some(gone.as_path()));
        let mut two = vec![stamps[0]; 2];
        let error = FileStamp::of_all_into(&with_gone, &mut two, |s| s).unwrap_err();
        assert_eq!(error.file(), Some(gone.as_path()));
    }
}
