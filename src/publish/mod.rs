//! How zenpak puts files on disk so that it never leaves a half-written
//! output and never removes what it did not write. One file per concern:
//!
//! - [`temporary`]: every output is written under a unique hidden name in
//!   its destination folder (`.<name>.<pid>-<random>.zenpak-tmp`), synced,
//!   and only then renamed over the final name. Dropping an unpublished
//!   temporary removes it; the interrupt handler removes all of them
//!   ([`on_interrupt`]); a crash leaves them with a name `clean` recognises
//!   (`temporary::is_temporary_name`).
//! - This file, the publication: [`publish`] renames a set of staged files
//!   in the order given, inside a critical section that an interrupt waits
//!   for, so Ctrl-C never cuts a publication in half. The order is the
//!   caller's promise about what a reader sees at any instant (a
//!   container's `.pak` last: the game finds mods through their `.pak`).
//!   [`write_file`] is one file written so.
//! - [`extension`]: a published file extended in place (a development
//!   build's `.ucas`), cut back unless a publication commits it.
//! - [`output_dir`]: files written into a folder the user names, kept
//!   inside it; folders created one component at a time, never through a
//!   link.
//! - [`lock`]: one zenpak at a time per output folder (an advisory lock on
//!   `<dir>/.zenpak-lock`), so two builds never interleave. The lock file
//!   is opened as itself, never through a link: one that is a link (or a
//!   hard link, a reparse point) is refused (`unsafe-output`).
//! - [`stamp`]: a file's identity as written (size, times, inode), which
//!   no later write can keep unchanged.
//! - The system calls behind them, each family in its own file with its
//!   `SAFETY` notes: `unnamed_folder` (Linux files created without a name
//!   and linked in when whole: `openat` `O_TMPFILE`, `linkat`),
//!   [`page_cache`] (write-back and cache hints: `sync_file_range`,
//!   `posix_fadvise`), `stamp` (`fstatat`).
//!
//! The record of which files zenpak wrote in a folder (what `install`,
//! `uninstall` and `clean` may delete) is `release::owned`; the interrupt
//! flag and the thread pool's work are `pool`.

use std::collections::BTreeSet;
#[cfg(unix)]
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::error::{Error, Result};
use crate::pool::check_interrupted;

pub(crate) mod extension;
pub mod lock;
pub(crate) mod output_dir;
pub(crate) mod page_cache;
pub mod stamp;
pub mod temporary;
#[cfg(target_os = "linux")]
mod unnamed_folder;

use extension::Extension;
use temporary::{Staged, TempFile};

/// Held while a publication renames files; an interrupt waits for it.
static PUBLISHING: Mutex<()> = Mutex::new(());

/// What an interrupt handler does: marks the process interrupted, waits for
/// a publication under way to complete, and removes every temporary file
/// and cuts back every file being extended. It keeps the publication lock
/// for good, so no publication can start between its return and the
/// process's exit, which the caller does next.
pub fn on_interrupt() {
    crate::pool::set_interrupted();
    let publishing = PUBLISHING.lock().unwrap_or_else(|e| e.into_inner());
    temporary::remove_all_for_good();
    extension::cut_back_all_for_good();
    std::mem::forget(publishing);
}

/// Whether two paths name the same file (through links too).
pub fn same_file(a: &Path, b: &Path) -> bool {
    if let (Ok(a), Ok(b)) = (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        if a == b {
            return true;
        }
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let (Ok(a), Ok(b)) = (std::fs::metadata(a), std::fs::metadata(b)) {
            return a.dev() == b.dev() && a.ino() == b.ino();
        }
    }
    false
}

/// Writes `final_path` through a temporary file beside it.
pub fn write_file(
    final_path: &Path,
    write: impl FnOnce(&mut TempFile) -> Result<()>,
) -> Result<()> {
    let mut temp = TempFile::create(final_path)?;
    write(&mut temp)?;
    let staged = temp.stage()?;
    publish(Vec::new(), vec![staged])
}

/// [`write_file`] not synced to disk ([`TempFile::stage_unsynced`]): for
/// files that can be made again and are checked whenever they are read.
pub(crate) fn write_file_unsynced(
    final_path: &Path,
    write: impl FnOnce(&mut TempFile) -> Result<()>,
) -> Result<()> {
    let mut temp = TempFile::create(final_path)?;
    write(&mut temp)?;
    publish(Vec::new(), vec![temp.stage_unsynced()])
}

/// Publishes staged files: first removes `remove_first` (files being
/// replaced whose absence must come before the new files appear), then
/// renames each staged file into place in the order given, then syncs the
/// folders. Runs as one critical section: an interrupt waits for it.
pub(crate) fn publish(remove_first: Vec<PathBuf>, staged: Vec<Staged>) -> Result<()> {
    publish_with_extensions(remove_first, staged, Vec::new())
}

/// [`publish`], committing `extensions` first: from then on they are part
/// of the published files and are no longer cut back.
pub(crate) fn publish_with_extensions(
    remove_first: Vec<PathBuf>,
    staged: Vec<Staged>,
    extensions: Vec<Extension>,
) -> Result<()> {
    let _publishing = PUBLISHING.lock().unwrap_or_else(|e| e.into_inner());
    // Stopped while waiting: publish nothing (the staged files are dropped,
    // so removed; the extensions are cut back).
    check_interrupted()?;
    Extension::commit_all(extensions);
    for path in &remove_first {
        match std::fs::remove_file(path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(path, e)),
        }
    }
    let mut folders = BTreeSet::new();
    for file in staged {
        folders.extend(file.rename_into_place()?);
    }
    for folder in folders {
        sync_folder(&folder);
    }
    Ok(())
}

/// Makes renames in a folder durable (a no-op where folders cannot be opened).
fn sync_folder(folder: &Path) {
    #[cfg(unix)]
    if let Ok(dir) = File::open(folder) {
        let _ = dir.sync_all();
    }
    #[cfg(not(unix))]
    let _ = folder;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use temporary::is_temporary_name;

    /// The names in `folder`, sorted.
    pub(super) fn names_in(folder: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(folder)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn publish_renames_in_order_and_removes_first() {
        let dir = tempfile::tempdir().unwrap();
        let old = dir.path().join("old.pak");
        std::fs::write(&old, b"old").unwrap();
        let mut staged = Vec::new();
        for name in ["a.utoc", "a.pak"] {
            let mut t = TempFile::create(&dir.path().join(name)).unwrap();
            t.write_all(name.as_bytes()).unwrap();
            staged.push(t.stage().unwrap());
        }
        publish(vec![old.clone()], staged).unwrap();
        assert!(!old.exists());
        assert_eq!(std::fs::read(dir.path().join("a.pak")).unwrap(), b"a.pak");
        let names = names_in(dir.path());
        assert!(names.iter().all(|n| !is_temporary_name(n)), "{names:?}");
    }
}
