//! [`OutputLock`]: one zenpak at a time per output folder, an advisory lock
//! on `<dir>/.zenpak-lock`, whose file is opened as itself and never
//! through a link.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::{Error, ErrorKind, Result};

/// Name of the lock file in an output folder.
pub(crate) const LOCK_NAME: &str = ".zenpak-lock";

/// Exclusive use of an output folder by this process, released on drop.
#[derive(Debug)]
pub struct OutputLock {
    file: File,
    path: PathBuf,
}

impl OutputLock {
    /// Locks `dir` (creating it). When another zenpak holds the lock,
    /// `waiting` is called once with that process's id (if it wrote one;
    /// on Windows the holder's lock keeps others from reading it: `None`),
    /// then the call blocks until the folder is free.
    pub(crate) fn acquire(dir: &Path, waiting: impl FnOnce(Option<u32>)) -> Result<OutputLock> {
        let path = dir.join(LOCK_NAME);
        let mut waiting = Some(waiting);
        let mut file = loop {
            // Created on every try: the holder before us may have removed
            // the folder with its lock file (`uninstall` of the last mod).
            std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
            let file = open_lock_file(&path)?;
            match file.try_lock() {
                Ok(()) => {}
                Err(std::fs::TryLockError::WouldBlock) => {
                    if let Some(waiting) = waiting.take() {
                        waiting(lock_holder(&file));
                    }
                    file.lock().map_err(|e| Error::io(&path, e))?;
                }
                Err(std::fs::TryLockError::Error(e)) => return Err(Error::io(&path, e)),
            }
            // The holder before us may have removed the lock file
            // ([`release_removing`](Self::release_removing)): a lock on a
            // file that no longer has this name locks nothing; start over.
            if is_same_file(&file, &path) {
                break file;
            }
        };
        // Who holds it, for the message another zenpak prints while it waits.
        let _ = file.set_len(0);
        let _ = file.write_all(std::process::id().to_string().as_bytes());
        let _ = file.flush();
        Ok(OutputLock { file, path })
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Removes the lock file and releases the lock: for a folder that
    /// zenpak leaves with nothing of its own in it. Returns whether the
    /// file is gone.
    ///
    /// Unix: the file is removed while still locked; a zenpak waiting for
    /// the lock meanwhile sees that the file it locked lost its name, and
    /// locks the new one. Windows: a file that another process has open
    /// cannot lose its name there (zenpak opens it without delete sharing),
    /// so the lock is released first and the file is then deleted only if
    /// no one else has it open; when a waiting zenpak does, the file is
    /// left to it (`false`).
    pub(crate) fn release_removing(self) -> Result<bool> {
        #[cfg(windows)]
        {
            let path = self.path.clone();
            drop(self);
            windows::remove_unless_open(&path)
        }
        #[cfg(not(windows))]
        match std::fs::remove_file(&self.path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(true),
            Err(e) => Err(Error::io(&self.path, e)),
        }
    }
}

/// The process id the holder of the lock wrote into `file` (read through
/// the open file, never by its name again; on Windows the holder's lock
/// keeps others from reading it: `None`).
fn lock_holder(mut file: &File) -> Option<u32> {
    use std::io::{Read, Seek};
    let mut text = String::new();
    file.seek(std::io::SeekFrom::Start(0)).ok()?;
    file.take(32).read_to_string(&mut text).ok()?;
    text.trim().parse().ok()
}

/// Opens (creating) the lock file at `path`, never through a link: a lock
/// file that is a symbolic link, another name of a file (a hard link), a
/// Windows reparse point (a symbolic link or junction) or not a regular
/// file is refused ([`refuse_lock_file`]) before a byte is written, since
/// zenpak writes its process id into the file it locks and empties it when
/// done. On Windows without delete sharing: while any zenpak has it open,
/// no one can delete or rename it, so the name always means the file that
/// is locked. A release under way ([`OutputLock::release_removing`]) has it
/// open alone for an instant; the open is retried meanwhile.
fn open_lock_file(path: &Path) -> Result<File> {
    let file = open_lock_file_no_follow(path)?;
    let meta = file.metadata().map_err(|e| Error::io(path, e))?;
    #[cfg(windows)]
    if meta.file_type().is_symlink() {
        return Err(refuse_lock_file(path, "a symbolic link or junction"));
    }
    if !meta.is_file() {
        return Err(refuse_lock_file(path, "not a regular file"));
    }
    #[cfg(unix)]
    if std::os::unix::fs::MetadataExt::nlink(&meta) > 1 {
        return Err(refuse_lock_file(
            path,
            "another name of a file that has other names (a hard link)",
        ));
    }
    Ok(file)
}

/// The error for a lock file zenpak will not use: `what` it is.
fn refuse_lock_file(path: &Path, what: &str) -> Error {
    let what = match std::fs::read_link(path) {
        Ok(target) => format!("{what} to `{}`", target.display()),
        Err(_) => what.to_string(),
    };
    Error::new(ErrorKind::UnsafeOutput(format!(
        "refusing to use the lock file: it is {what}, which zenpak did not make \
         (it writes its process id into its lock file and empties it when done)"
    )))
    .in_file(path)
    .with_hint(format!(
        "remove `{}` (what it leads to is left as it is), then run zenpak again; \
         zenpak makes a new lock file itself",
        path.display()
    ))
}

/// [`open_lock_file`]'s open: the name itself, never what a link leads to.
fn open_lock_file_no_follow(path: &Path) -> Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    #[cfg(windows)]
    {
        use std::os::windows::fs::OpenOptionsExt;
        options.share_mode(windows::FILE_SHARE_READ | windows::FILE_SHARE_WRITE);
        options.custom_flags(windows::FILE_FLAG_OPEN_REPARSE_POINT);
        let mut tries = 0;
        loop {
            match options.open(path) {
                Err(e) if windows::is_sharing_violation(&e) && tries < windows::BUSY_TRIES => {
                    tries += 1;
                    std::thread::sleep(windows::BUSY_WAIT);
                }
                Err(e) if windows::is_sharing_violation(&e) => {
                    return Err(Error::io(path, e).replace_hint(
                        "another program keeps the lock file open; close it (or wait for it), \
                         then run zenpak again",
                    ))
                }
                result => return result.map_err(|e| Error::io(path, e)),
            }
        }
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW);
        match options.open(path) {
            Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
                Err(refuse_lock_file(path, "a symbolic link"))
            }
            result => result.map_err(|e| Error::io(path, e)),
        }
    }
    #[cfg(not(any(unix, windows)))]
    options.open(path).map_err(|e| Error::io(path, e))
}

/// What the lock needs of Windows that std names only by value.
#[cfg(windows)]
pub(crate) mod windows {
    use super::{Error, Result};
    use std::path::Path;

    pub(crate) const FILE_SHARE_READ: u32 = 0x1;
    pub(crate) const FILE_SHARE_WRITE: u32 = 0x2;
    /// Opens a reparse point (a symbolic link, a junction) itself, not
    /// what it leads to.
    pub(crate) const FILE_FLAG_OPEN_REPARSE_POINT: u32 = 0x0020_0000;
    const DELETE: u32 = 0x0001_0000;
    const FILE_FLAG_DELETE_ON_CLOSE: u32 = 0x0400_0000;
    const ERROR_SHARING_VIOLATION: i32 = 32;
    /// How long an open of the lock file is retried while another process
    /// has it open alone (a release deleting it takes microseconds).
    pub(crate) const BUSY_TRIES: u32 = 1000;
    pub(crate) const BUSY_WAIT: std::time::Duration = std::time::Duration::from_millis(10);

    pub(crate) fn is_sharing_violation(e: &std::io::Error) -> bool {
        e.raw_os_error() == Some(ERROR_SHARING_VIOLATION)
    }

    /// Deletes the file at `path` unless another process has it open:
    /// opened for deletion sharing nothing (which fails while any other
    /// handle exists, and keeps others out while it is open), and deleted
    /// when that handle closes. Returns whether the file is gone.
    pub(crate) fn remove_unless_open(path: &Path) -> Result<bool> {
        use std::os::windows::fs::OpenOptionsExt;
        let opened = std::fs::OpenOptions::new()
            .access_mode(DELETE)
            .share_mode(0)
            .custom_flags(FILE_FLAG_DELETE_ON_CLOSE | FILE_FLAG_OPEN_REPARSE_POINT)
            .open(path);
        match opened {
            Ok(file) => {
                drop(file);
                Ok(true)
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(true),
            Err(e) if is_sharing_violation(&e) => Ok(false),
            Err(e) => Err(Error::io(path, e)),
        }
    }
}

/// Whether the open `file` is the file named `path` now.
#[cfg(unix)]
fn is_same_file(file: &File, path: &Path) -> bool {
    let (Ok(open), Ok(named)) = (file.metadata(), std::fs::symlink_metadata(path)) else {
        return false;
    };
    use std::os::unix::fs::MetadataExt;
    open.dev() == named.dev() && open.ino() == named.ino()
}

/// Whether the open `file` is the file named `path` now: always on
/// Windows, where the lock file cannot lose its name while it is open
/// ([`open_lock_file`]). (Comparing creation times would not do: a file
/// created under a name deleted seconds before inherits the old file's
/// creation time there.)
#[cfg(not(unix))]
fn is_same_file(_file: &File, _path: &Path) -> bool {
    true
}

impl Drop for OutputLock {
    fn drop(&mut self) {
        let _ = self.file.set_len(0);
        let _ = self.file.unlock();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether the file named `path` now is locked (by anyone).
    fn is_locked(path: &Path) -> bool {
        let file = open_lock_file(path).unwrap();
        matches!(file.try_lock(), Err(std::fs::TryLockError::WouldBlock))
    }

    #[test]
    fn a_lock_released_with_its_file_passes_to_the_waiting_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(LOCK_NAME);
        // Alone: the file goes.
        let only = OutputLock::acquire(dir.path(), |_| panic!("free folder")).unwrap();
        assert!(only.release_removing().unwrap());
        assert!(!path.exists());

        let first = OutputLock::acquire(dir.path(), |_| panic!("free folder")).unwrap();
        let folder = dir.path().to_path_buf();
        let (waiting_tx, waiting) = std::sync::mpsc::channel();
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        let second = std::thread::spawn(move || {
            let lock = OutputLock::acquire(&folder, |_| waiting_tx.send(()).unwrap()).unwrap();
            // The lock held is on the file that has the name now.
            let locked = is_locked(&folder.join(LOCK_NAME));
            done_rx.recv().unwrap();
            drop(lock);
            locked
        });
        waiting
            .recv_timeout(std::time::Duration::from_secs(30))
            .expect("the second lock waits");
        // Unix removes the name under the waiting one; Windows leaves the
        // file to it.
        assert_eq!(first.release_removing().unwrap(), !cfg!(windows));
        done_tx.send(()).unwrap();
        assert!(
            second.join().unwrap(),
            "the waiting zenpak's lock locks nothing"
        );
        assert!(!is_locked(&path));
    }

    #[test]
    fn a_second_lock_waits_for_the_first() {
        let dir = tempfile::tempdir().unwrap();
        let first = OutputLock::acquire(dir.path(), |_| panic!("free folder")).unwrap();
        let path = dir.path().to_path_buf();
        let (waiting_tx, waiting) = std::sync::mpsc::channel();
        let handle = std::thread::spawn(move || {
            let _second = OutputLock::acquire(&path, |pid| waiting_tx.send(pid).unwrap()).unwrap();
        });
        let pid = waiting
            .recv_timeout(std::time::Duration::from_secs(30))
            .expect("the second lock waits");
        // The holder's id, read from the lock file. Windows locks are
        // mandatory: another handle cannot read it there (Wine lets it).
        let id = std::process::id();
        if cfg!(windows) {
            assert!(pid.is_none() || pid == Some(id), "{pid:?}");
        } else {
            assert_eq!(pid, Some(id));
        }
        drop(first);
        handle.join().unwrap();
    }
}
