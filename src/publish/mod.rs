//! How zenpak puts files on disk so that it never leaves a half-written
//! output and never removes what it did not write.
//!
//! - [`TempFile`]: every output is written under a unique hidden name in its
//!   destination folder (`.<name>.<pid>-<random>.zenpak-tmp`), synced, and
//!   only then renamed over the final name. Dropping an unpublished
//!   temporary removes it; the interrupt handler removes all of them
//!   ([`on_interrupt`]); a crash leaves them with a name `clean`
//!   recognises ([`is_temporary_name`]).
//! - [`publish`]: renames a set of staged files in the order given, inside a
//!   critical section that an interrupt waits for, so Ctrl-C never cuts a
//!   publication in half. The order is the caller's promise about what a
//!   reader sees at any instant (a container's `.pak` last: the game finds
//!   mods through their `.pak`).
//! - [`OutputLock`]: one zenpak at a time per output folder (an advisory
//!   lock on `<dir>/.zenpak-lock`), so two builds never interleave. The
//!   lock file is opened as itself, never through a link: one that is a
//!   link (or a hard link, a reparse point) is refused (`unsafe-output`).
//! - [`OwnedFiles`]: the record of the files zenpak wrote in a folder, with
//!   their size, hash and a stamp of the inode that no later write can keep
//!   unchanged. Only files in the record whose stamp still matches are ever
//!   deleted. Files about to be renamed into place are recorded as pending
//!   first, so a record and its files never disagree after an interrupt.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use crate::error::{Error, ErrorKind, Result};

mod lock;
mod owned;

pub use lock::*;
pub(crate) use owned::*;

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
/// Files being extended in place, with the length each had (see [`Extension`]).
static EXTENDED: Mutex<BTreeMap<PathBuf, u64>> = Mutex::new(BTreeMap::new());
/// Held while a publication renames files; an interrupt waits for it.
static PUBLISHING: Mutex<()> = Mutex::new(());
/// Set by the interrupt handler; long work checks it between steps.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);
static COUNTER: AtomicU64 = AtomicU64::new(0);

/// True once the user asked zenpak to stop (Ctrl-C / SIGTERM).
pub(crate) fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// An error if the user asked zenpak to stop: call between steps of long work.
pub(crate) fn check_interrupted() -> Result<()> {
    if interrupted() {
        Err(Error::new(ErrorKind::Interrupted))
    } else {
        Ok(())
    }
}

/// How many items [`in_order_on_pool`] gives the pool at once. The pool's
/// threads meet at the end of each group and wait for its slowest item, so
/// groups are large enough for item costs to even out (`unpack`'s files
/// differ in size by orders of magnitude), and small enough that two
/// groups' results are a few MiB.
pub(crate) const POOL_GROUP: usize = 256;

/// Runs `work` for every item on the thread pool a group at a time
/// ([`POOL_GROUP`]) and hands each result to `then`, on one thread, in
/// item order: what comes out is in the order one thread would give it,
/// whatever the pool's timing. A group's results go to `then` while the pool
/// works on the next group, so memory holds two groups' results. An
/// interrupt (looked at before each group is handed over) or an error from
/// `then` stops it: no group after the one being worked on then starts.
pub(crate) fn in_order_on_pool<T: Sync, R: Send>(
    items: &[T],
    work: impl Fn(&T) -> R + Sync,
    mut then: impl FnMut(&T, R) -> Result<()> + Send,
) -> Result<()> {
    use rayon::prelude::*;
    let work_on = |group: &'_ [T]| -> Vec<R> { group.par_iter().map(&work).collect() };
    let mut groups = items.chunks(POOL_GROUP);
    let mut current = groups.next().map(|group| (group, work_on(group)));
    while let Some((group, results)) = current {
        check_interrupted()?;
        let next = groups.next();
        let (worked, handed) = rayon::join(
            || next.map(|group| (group, work_on(group))),
            || {
                group
                    .iter()
                    .zip(results)
                    .try_for_each(|(item, result)| then(item, result))
            },
        );
        handed?;
        current = worked;
    }
    Ok(())
}

/// What an interrupt handler does: marks the process interrupted, waits for
/// a publication under way to complete, and removes every temporary file.
/// It keeps the publication lock for good, so no publication can start
/// between its return and the process's exit, which the caller does next.
pub fn on_interrupt() {
    INTERRUPTED.store(true, Ordering::SeqCst);
    let publishing = PUBLISHING.lock().unwrap_or_else(|e| e.into_inner());
    // Every shard, locked in order (a thread holds at most one, so this
    // cannot deadlock) and kept too: a temporary being created waits, then
    // sees the interrupt.
    let temporaries: Vec<_> = TEMPORARIES
        .iter()
        .map(|shard| shard.lock().unwrap_or_else(|e| e.into_inner()))
        .collect();
    for path in temporaries.iter().flat_map(|shard| shard.iter()) {
        let _ = std::fs::remove_file(path);
    }
    let extended = EXTENDED.lock().unwrap_or_else(|e| e.into_inner());
    for (path, len) in extended.iter() {
        cut_back(path, *len);
    }
    std::mem::forget(extended);
    std::mem::forget(temporaries);
    std::mem::forget(publishing);
}

fn cut_back(path: &Path, len: u64) {
    if let Ok(file) = std::fs::OpenOptions::new().write(true).open(path) {
        let _ = file.set_len(len);
    }
}

/// A published file being extended at its end (a development build adding
/// chunks to its previous `.ucas`). Until it is committed by
/// [`publish_with_extensions`], dropping it — or an interrupt — cuts the
/// file back to its old length, so it is again byte for byte the file its
/// old companions describe.
#[derive(Debug)]
pub(crate) struct Extension {
    path: PathBuf,
    original_len: u64,
    file: Option<File>,
}

impl Extension {
    /// Opens `path` to append after its `expected_len` bytes (refused when
    /// the file has another length: it is not the file the caller knows).
    pub(crate) fn open(path: &Path, expected_len: u64) -> Result<Extension> {
        let mut extended = EXTENDED.lock().unwrap_or_else(|e| e.into_inner());
        check_interrupted()?;
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map_err(|e| Error::io(path, e))?;
        let len = file.metadata().map_err(|e| Error::io(path, e))?.len();
        if len != expected_len {
            return Err(Error::invalid(format!(
                "the file has {len} bytes, {expected_len} were expected"
            ))
            .in_file(path));
        }
        std::io::Seek::seek(&mut file, std::io::SeekFrom::End(0))
            .map_err(|e| Error::io(path, e))?;
        extended.insert(path.to_path_buf(), len);
        Ok(Extension {
            path: path.to_path_buf(),
            original_len: len,
            file: Some(file),
        })
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    pub(crate) fn file(&mut self) -> &mut File {
        self.file
            .as_mut()
            .expect("an Extension keeps its file until it is committed")
    }

    /// Makes the appended bytes durable.
    pub(crate) fn sync(&mut self) -> Result<()> {
        let path = self.path.clone();
        self.file().sync_data().map_err(|e| Error::io(&path, e))
    }
}

impl Write for Extension {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.file().write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.file().flush()
    }
}

impl Drop for Extension {
    fn drop(&mut self) {
        if let Some(file) = self.file.take() {
            let _ = file.set_len(self.original_len);
            EXTENDED
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&self.path);
        }
    }
}

/// Creates the temporary file `path` and registers it, as one step an
/// interrupt cannot split: after an interrupt, nothing more is created.
fn create_registered(path: &Path) -> Result<File> {
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
fn unique_number() -> u64 {
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

/// A folder open for files without a name (Linux `O_TMPFILE`), each given
/// its name in the folder by [`UnnamedFolder::link`] once complete: one
/// that is never linked (an error, an interrupt, a kill) is gone with its
/// descriptor, nothing is left to clean up. Both calls are relative to the
/// folder's descriptor, so the kernel looks up one name, not every folder
/// of the path again.
#[cfg(target_os = "linux")]
#[derive(Debug)]
pub(crate) struct UnnamedFolder {
    path: PathBuf,
    folder: File,
}

/// Set when the kernel refused to name a file by its descriptor
/// (`AT_EMPTY_PATH`), as kernels before 6.10 do for unprivileged
/// processes: files are then named by their `/proc/self/fd` link.
#[cfg(target_os = "linux")]
static LINK_BY_PROC: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

#[cfg(target_os = "linux")]
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
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd;
            let fd = self.file().as_raw_fd();
            // SAFETY: `fd` is this open file's descriptor; the call only
            // starts write-out of its dirty pages (a failure leaves them for
            // the sync in `stage`, which reports errors).
            unsafe {
                libc::sync_file_range(fd, 0, 0, libc::SYNC_FILE_RANGE_WRITE);
            }
        }
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

fn unregister(path: &Path) {
    temporaries_of(path).remove(path);
}

/// Asks the system to drop the cached pages of the file at `path` (if any),
/// leaving the file itself as it is: for an output about to be replaced,
/// whose cached bytes no one needs. Measured on a 2.9 GiB container, the
/// new file's pages are then taken from those instead of from memory never
/// touched before (the cost that dominated writing it). A hint: Linux only,
/// and nothing happens when the file cannot be opened.
pub(crate) fn drop_cached_pages(path: &Path) {
    #[cfg(target_os = "linux")]
    if let Ok(file) = File::open(path) {
        use std::os::fd::AsRawFd;
        // SAFETY: the descriptor is this open file's; the advice only
        // affects the page cache, never the file's contents.
        unsafe {
            libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = path;
}

/// A complete temporary waiting to be renamed into place.
#[derive(Debug)]
pub(crate) struct Staged {
    path: PathBuf,
    final_path: PathBuf,
    /// Synced ([`TempFile::stage`]): its rename is synced too.
    durable: bool,
}

impl Staged {}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.path.as_os_str().is_empty() {
            let _ = std::fs::remove_file(&self.path);
            unregister(&self.path);
        }
    }
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
    {
        let mut extended = EXTENDED.lock().unwrap_or_else(|e| e.into_inner());
        for mut extension in extensions {
            extended.remove(&extension.path);
            extension.file = None;
        }
    }
    for path in &remove_first {
        match std::fs::remove_file(path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(path, e)),
        }
    }
    let mut folders = BTreeSet::new();
    for mut file in staged {
        let from = std::mem::take(&mut file.path);
        let to = std::mem::take(&mut file.final_path);
        unregister(&from);
        if let Err(e) = std::fs::rename(&from, &to) {
            let _ = std::fs::remove_file(&from);
            return Err(Error::io(&to, e));
        }
        if let Some(parent) = to.parent().filter(|_| file.durable) {
            folders.insert(parent.to_path_buf());
        }
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

    /// The names in `folder`, sorted.
    fn names_in(folder: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(folder)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

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
            registered = names.len() == 1 && temporaries_of(&names[0]).contains(&names[0]);
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

    /// A file without a name is seen in its folder only once named; a name
    /// that exists is refused; naming by the `/proc` link (older kernels)
    /// gives the same result.
    #[cfg(target_os = "linux")]
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

    #[test]
    fn owned_files_are_removed_only_when_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        let mine = dir.path().join("mine.zip");
        let changed = dir.path().join("changed.zip");
        let theirs = dir.path().join("theirs.zip");
        for p in [&mine, &changed, &theirs] {
            std::fs::write(p, b"zip").unwrap();
        }
        let mut owned = OwnedFiles::default();
        owned.insert(dir.path(), &mine, "x".into(), "me").unwrap();
        owned
            .insert(dir.path(), &changed, "x".into(), "me")
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(&changed, b"someone else's").unwrap();
        assert!(owned.is_unchanged(dir.path(), &mine));
        assert!(!owned.is_unchanged(dir.path(), &changed));
        assert_eq!(
            owned.remove(dir.path(), &mine).unwrap(),
            Removal::Removed(mine.clone())
        );
        assert_eq!(
            owned.remove(dir.path(), &changed).unwrap(),
            Removal::KeptChanged(changed.clone())
        );
        assert_eq!(
            owned.remove(dir.path(), &theirs).unwrap(),
            Removal::KeptChanged(theirs.clone())
        );
        assert!(!mine.exists() && changed.exists() && theirs.exists());
    }

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
