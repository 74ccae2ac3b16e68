//! [`TempFile`]: every output is written under a unique hidden name in its
//! destination folder (`.<name>.<pid>-<random>.zenpak-tmp`,
//! [`temporary_path_for`]), synced, and only then renamed over the final
//! name ([`Staged`], renamed by [`super::publish`]). Temporaries that exist
//! are registered: dropping an unpublished one removes it, the interrupt
//! handler removes all of them ([`super::on_interrupt`]), and a crash leaves
//! them with a name `clean` recognises ([`is_temporary_name`]).

use std::collections::BTreeSet;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use crate::error::{Error, Result};
use crate::pool::check_interrupted;

/// The suffix of every temporary file zenpak writes.
pub(crate) const TEMPORARY_SUFFIX: &str = ".zenpak-tmp";

/// Temporaries that exist now (registered on creation, removed on publish
/// or drop), in shards by path: a temporary is created under its shard's
/// lock ([`create_registered`]), so threads writing many files (`unpack`,
/// `extract`) create them side by side, not one at a time.
static TEMPORARIES: [Mutex<BTreeSet<PathBuf>>; TEMPORARY_SHARDS] =
    [const { Mutex::new(BTreeSet::new()) }; TEMPORARY_SHARDS];
const TEMPORARY_SHARDS: usize = 16;

/// The shard of [`TEMPORARIES`] that registers `path`.
fn temporaries_of(path: &Path) -> std::sync::MutexGuard<'static, BTreeSet<PathBuf>> {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    path.hash(&mut hasher);
    TEMPORARIES[hasher.finish() as usize % TEMPORARY_SHARDS]
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}
static COUNTER: AtomicU64 = AtomicU64::new(0);

/// Whether `path` is registered as a temporary that exists now.
#[cfg(test)]
pub(super) fn is_registered(path: &Path) -> bool {
    temporaries_of(path).contains(path)
}

/// Removes every registered temporary, for the interrupt handler: every
/// shard is locked in order (a thread holds at most one, so this cannot
/// deadlock) and kept locked for good, so a temporary being created waits,
/// then sees the interrupt, and none is created after.
pub(super) fn remove_all_for_good() {
    let temporaries: Vec<_> = TEMPORARIES
        .iter()
        .map(|shard| shard.lock().unwrap_or_else(|e| e.into_inner()))
        .collect();
    for path in temporaries.iter().flat_map(|shard| shard.iter()) {
        // A temporary folder ([`TempFolder`]) goes with what it holds.
        if std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir()) {
            let _ = std::fs::remove_dir_all(path);
        } else {
            let _ = std::fs::remove_file(path);
        }
    }
    std::mem::forget(temporaries);
}

/// Creates the temporary file `path` and registers it, as one step an
/// interrupt cannot split: after an interrupt, nothing more is created.
pub(super) fn create_registered(path: &Path) -> Result<File> {
    let mut temporaries = temporaries_of(path);
    check_interrupted()?;
    let file = std::fs::OpenOptions::new()
        .write(true)
        .read(true)
        .create_new(true)
        .open(path)
        .map_err(|e| Error::io(path, e))?;
    temporaries.insert(path.to_path_buf());
    Ok(file)
}

/// Whether a file name is one of zenpak's temporaries, as
/// [`temporary_path_for`] names them (`.<name>.<pid>-<16 hex
/// digits>.zenpak-tmp`, nothing looser): discovery never takes such a file
/// into a mod, and `clean`, `install` and `uninstall` remove them from the
/// folders they write ([`remove_leftover_temporaries`]).
pub fn is_temporary_name(name: &str) -> bool {
    let Some(stem) = name
        .strip_prefix('.')
        .and_then(|n| n.strip_suffix(TEMPORARY_SUFFIX))
    else {
        return false;
    };
    let Some((named, unique)) = stem.rsplit_once('.') else {
        return false;
    };
    let Some((pid, random)) = unique.split_once('-') else {
        return false;
    };
    !named.is_empty()
        && !pid.is_empty()
        && pid.bytes().all(|b| b.is_ascii_digit())
        && random.len() == 16
        && random.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Removes the temporaries a killed zenpak left directly in `dir` (files
/// only, never through a link; not recursive) and returns their paths.
/// Call with the folder locked, so that no live zenpak owns them.
pub(crate) fn remove_leftover_temporaries(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut removed = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(removed);
    };
    for entry in entries.flatten() {
        if is_temporary_name(&entry.file_name().to_string_lossy())
            && entry.file_type().is_ok_and(|t| t.is_file())
        {
            let path = entry.path();
            match std::fs::remove_file(&path) {
                Ok(()) => removed.push(path),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(Error::io(&path, e)),
            }
        }
    }
    Ok(removed)
}

/// A random-enough 64-bit number without a dependency: std's hasher keys are
/// random per process, and the counter separates names within one process.
pub(crate) fn unique_number() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    hasher.finish()
}

/// The temporary name beside `final_path`: hidden, unique to this process and call.
pub(crate) fn temporary_path_for(final_path: &Path) -> PathBuf {
    let name = final_path.file_name().unwrap_or_default().to_string_lossy();
    // The id asked once: each `std::process::id` is a system call, and
    // extract names 20,000 temporaries.
    static PROCESS_ID: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    final_path.with_file_name(format!(
        ".{name}.{}-{:016x}{TEMPORARY_SUFFIX}",
        PROCESS_ID.get_or_init(std::process::id),
        unique_number()
    ))
}

/// A folder filled under a temporary name beside its final path (`merge`
/// writes a whole mod repository), registered as a temporary: removed with
/// what it holds when dropped or on an interrupt, unless published.
#[derive(Debug)]
pub struct TempFolder {
    path: PathBuf,
    published: bool,
}

impl TempFolder {
    /// Makes the folder (and `final_path`'s parent when missing).
    pub fn create(final_path: &Path) -> Result<TempFolder> {
        if let Some(parent) = final_path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
        }
        let path = temporary_path_for(final_path);
        let mut temporaries = temporaries_of(&path);
        check_interrupted()?;
        std::fs::create_dir(&path).map_err(|e| Error::io(&path, e))?;
        temporaries.insert(path.clone());
        Ok(TempFolder {
            path,
            published: false,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Renames the folder to `final_path`, which must not exist or be an
    /// empty folder (removed first); under the registry's lock, so an
    /// interrupt removes either the temporary or nothing.
    pub fn publish(mut self, final_path: &Path) -> Result<()> {
        let mut temporaries = temporaries_of(&self.path);
        check_interrupted()?;
        if std::fs::symlink_metadata(final_path).is_ok_and(|m| m.is_dir()) {
            std::fs::remove_dir(final_path).map_err(|e| Error::io(final_path, e))?;
        }
        std::fs::rename(&self.path, final_path).map_err(|e| Error::io(final_path, e))?;
        temporaries.remove(&self.path);
        self.published = true;
        Ok(())
    }
}

impl Drop for TempFolder {
    fn drop(&mut self) {
        if !self.published {
            let mut temporaries = temporaries_of(&self.path);
            let _ = std::fs::remove_dir_all(&self.path);
            temporaries.remove(&self.path);
        }
    }
}

/// A file being written under a temporary name beside its final path.
#[derive(Debug)]
pub struct TempFile {
    path: PathBuf,
    final_path: PathBuf,
    file: Option<File>,
}

impl TempFile {
    /// Creates the temporary for `final_path` (its folder must exist).
    pub(crate) fn create(final_path: &Path) -> Result<TempFile> {
        let path = temporary_path_for(final_path);
        let file = create_registered(&path)?;
        Ok(TempFile {
            path,
            final_path: final_path.to_path_buf(),
            file: Some(file),
        })
    }

    /// The temporary's own path (for error messages).
    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn file(&mut self) -> &mut File {
        self.file
            .as_mut()
            .expect("a TempFile keeps its file until it is staged")
    }

    /// Asks the system to start writing what was written so far to disk,
    /// without waiting for it: the sync in [`stage`](Self::stage) then
    /// waits only for what came after. (Linux; elsewhere nothing is done
    /// and `stage` syncs it all.)
    pub(crate) fn start_writeback(&mut self) {
        super::page_cache::start_writeback(self.file());
    }

    /// Syncs the data to disk and closes the file: ready to publish.
    pub(crate) fn stage(mut self) -> Result<Staged> {
        let file = self.file.take().expect("staged once");
        file.sync_all().map_err(|e| Error::io(&self.path, e))?;
        drop(file);
        Ok(self.staged(true))
    }

    /// Closes the file without syncing it: for a file that can be made
    /// again and is checked whenever it is read (the build cache's records),
    /// which a crash can only cost work. Its rename is not synced either;
    /// it still keeps the file whole for every reader.
    pub(crate) fn stage_unsynced(mut self) -> Staged {
        self.file = None;
        self.staged(false)
    }

    fn staged(&mut self, durable: bool) -> Staged {
        Staged {
            path: std::mem::take(&mut self.path),
            final_path: std::mem::take(&mut self.final_path),
            durable,
        }
    }
}

impl Write for TempFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.file().write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.file().flush()
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if !self.path.as_os_str().is_empty() {
            self.file = None;
            let _ = std::fs::remove_file(&self.path);
            unregister(&self.path);
        }
    }
}

pub(super) fn unregister(path: &Path) {
    temporaries_of(path).remove(path);
}

/// A complete temporary waiting to be renamed into place.
#[derive(Debug)]
pub(crate) struct Staged {
    path: PathBuf,
    final_path: PathBuf,
    /// Synced ([`TempFile::stage`]): its rename is synced too.
    durable: bool,
}

impl Staged {
    /// The complete temporary's own path: its bytes are those the final
    /// file will have once renamed.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Renames the file into place, for [`super::publish`] inside its
    /// critical section (a rename that fails removes the temporary).
    /// Returns the folder whose entries must be synced to make the rename
    /// durable, for a staged file that was synced itself.
    pub(super) fn rename_into_place(mut self) -> Result<Option<PathBuf>> {
        let from = std::mem::take(&mut self.path);
        let to = std::mem::take(&mut self.final_path);
        unregister(&from);
        if let Err(e) = std::fs::rename(&from, &to) {
            let _ = std::fs::remove_file(&from);
            return Err(Error::io(&to, e));
        }
        Ok(to.parent().filter(|_| self.durable).map(Path::to_path_buf))
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.path.as_os_str().is_empty() {
            let _ = std::fs::remove_file(&self.path);
            unregister(&self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temporaries_are_unique_hidden_and_removed_on_drop() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("Mod_P.ucas");
        let a = TempFile::create(&target).unwrap();
        let b = TempFile::create(&target).unwrap();
        assert_ne!(a.path(), b.path());
        let name = a.path().file_name().unwrap().to_string_lossy().into_owned();
        assert!(is_temporary_name(&name), "{name}");
        let (pa, pb) = (a.path().to_path_buf(), b.path().to_path_buf());
        assert!(pa.exists() && pb.exists());
        drop(a);
        drop(b);
        assert!(!pa.exists() && !pb.exists());
        assert!(!target.exists());
    }
}
