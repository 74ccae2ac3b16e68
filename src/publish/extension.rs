//! [`Extension`]: a published file extended at its end in place (a
//! development build appending chunks to its previous `.ucas`), cut back to
//! its old length unless the publication that uses it commits it
//! ([`super::publish_with_extensions`]): on drop, and by the interrupt
//! handler ([`super::on_interrupt`]).

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::error::{Error, Result};
use crate::pool::check_interrupted;

/// Files being extended in place, with the length each had (see [`Extension`]).
static EXTENDED: Mutex<BTreeMap<PathBuf, u64>> = Mutex::new(BTreeMap::new());

/// Cuts every file being extended back to its old length, for the
/// interrupt handler: the registry stays locked for good, so no extension
/// is opened or committed after.
pub(super) fn cut_back_all_for_good() {
    let extended = EXTENDED.lock().unwrap_or_else(|e| e.into_inner());
    for (path, len) in extended.iter() {
        cut_back(path, *len);
    }
    std::mem::forget(extended);
}

fn cut_back(path: &Path, len: u64) {
    if let Ok(file) = std::fs::OpenOptions::new().write(true).open(path) {
        let _ = file.set_len(len);
    }
}

/// A published file being extended at its end (a development build adding
/// chunks to its previous `.ucas`). Until it is committed by
/// [`super::publish_with_extensions`], dropping it — or an interrupt — cuts the
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

    /// Commits `extensions`, for a publication that makes them part of the
    /// published files: from then on they are no longer cut back.
    pub(super) fn commit_all(extensions: Vec<Extension>) {
        let mut extended = EXTENDED.lock().unwrap_or_else(|e| e.into_inner());
        for mut extension in extensions {
            extended.remove(&extension.path);
            extension.file = None;
        }
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
