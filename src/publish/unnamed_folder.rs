//! [`UnnamedFolder`]: files created without a name in a folder (Linux
//! `O_TMPFILE`, through `openat`) and given one when complete (`linkat`),
//! so that no file shows under its final name before it is whole and one
//! never linked leaves nothing behind.

use std::fs::File;
use std::path::{Path, PathBuf};

/// A folder open for files without a name (Linux `O_TMPFILE`), each given
/// its name in the folder by [`UnnamedFolder::link`] once complete: one
/// that is never linked (an error, an interrupt, a kill) is gone with its
/// descriptor, nothing is left to clean up. Both calls are relative to the
/// folder's descriptor, so the kernel looks up one name, not every folder
/// of the path again.
#[derive(Debug)]
pub(crate) struct UnnamedFolder {
    path: PathBuf,
    folder: File,
}

/// Set when the kernel refused to name a file by its descriptor
/// (`AT_EMPTY_PATH`), as kernels before 6.10 do for unprivileged
/// processes: files are then named by their `/proc/self/fd` link.
static LINK_BY_PROC: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

impl UnnamedFolder {
    /// The folder at `path`; `None` when it cannot be opened.
    pub(crate) fn open(path: &Path) -> Option<UnnamedFolder> {
        use std::os::unix::fs::OpenOptionsExt;
        let folder = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECTORY)
            .open(path)
            .ok()?;
        Some(UnnamedFolder {
            path: path.to_path_buf(),
            folder,
        })
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// A new file without a name in the folder; `None` where the system or
    /// the filesystem has no such files.
    pub(crate) fn create(&self) -> Option<File> {
        use std::os::fd::{AsRawFd, FromRawFd};
        // SAFETY: a NUL-terminated name and a descriptor this folder owns;
        // the descriptor returned is new and owned by the `File`.
        let fd = unsafe {
            libc::openat(
                self.folder.as_raw_fd(),
                c".".as_ptr(),
                // Read too: a file that cannot be linked is copied from.
                libc::O_TMPFILE | libc::O_RDWR | libc::O_CLOEXEC,
                0o666 as libc::c_uint,
            )
        };
        if fd < 0 {
            return None;
        }
        // SAFETY: `fd` is a new descriptor nothing else owns.
        Some(unsafe { File::from_raw_fd(fd) })
    }

    /// Gives `file` (from [`create`](Self::create)) the name `name` in the
    /// folder, which must not exist yet; an error when it does, or when the
    /// name cannot be given (no `/proc` on a kernel that refuses the direct
    /// way): the caller then writes the bytes another way.
    pub(crate) fn link(&self, file: &File, name: &std::ffi::OsStr) -> std::io::Result<()> {
        use std::os::fd::AsRawFd;
        use std::os::unix::ffi::OsStrExt;
        use std::sync::atomic::Ordering;
        let name = std::ffi::CString::new(name.as_bytes())?;
        let folder = self.folder.as_raw_fd();
        let result = |linked: libc::c_int| match linked {
            0 => Ok(()),
            _ => Err(std::io::Error::last_os_error()),
        };
        if !LINK_BY_PROC.load(Ordering::Relaxed) {
            // SAFETY: NUL-terminated names and open descriptors.
            let direct = result(unsafe {
                libc::linkat(
                    file.as_raw_fd(),
                    c"".as_ptr(),
                    folder,
                    name.as_ptr(),
                    libc::AT_EMPTY_PATH,
                )
            });
            match direct {
                Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {
                    LINK_BY_PROC.store(true, Ordering::Relaxed)
                }
                other => return other,
            }
        }
        let source = std::ffi::CString::new(format!("/proc/self/fd/{}", file.as_raw_fd()))?;
        // SAFETY: NUL-terminated names and an open descriptor.
        result(unsafe {
            libc::linkat(
                libc::AT_FDCWD,
                source.as_ptr(),
                folder,
                name.as_ptr(),
                libc::AT_SYMLINK_FOLLOW,
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::publish::tests::names_in;

    /// A file without a name is seen in its folder only once named; a name
    /// that exists is refused; naming by the `/proc` link (older kernels)
    /// gives the same result.
    #[test]
    fn an_unnamed_file_appears_in_its_folder_only_when_named() {
        use std::io::Write;
        let dir = tempfile::tempdir().unwrap();
        let Some(folder) = UnnamedFolder::open(dir.path()) else {
            panic!("the temporary folder cannot be opened");
        };
        let Some(mut file) = folder.create() else {
            eprintln!("no O_TMPFILE on this filesystem; skipping");
            return;
        };
        file.write_all(b"whole").unwrap();
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        folder.link(&file, "a.bin".as_ref()).unwrap();
        assert_eq!(std::fs::read(dir.path().join("a.bin")).unwrap(), b"whole");
        let second = folder.create().unwrap();
        let refused = folder.link(&second, "a.bin".as_ref()).unwrap_err();
        assert_eq!(refused.kind(), std::io::ErrorKind::AlreadyExists);
        // The way kernels before 6.10 take (other tests meanwhile name their
        // files this way too, with the same result).
        LINK_BY_PROC.store(true, std::sync::atomic::Ordering::Relaxed);
        let mut third = folder.create().unwrap();
        third.write_all(b"by proc").unwrap();
        folder.link(&third, "b.bin".as_ref()).unwrap();
        assert_eq!(std::fs::read(dir.path().join("b.bin")).unwrap(), b"by proc");
        assert_eq!(names_in(dir.path()), ["a.bin", "b.bin"]);
    }
}
