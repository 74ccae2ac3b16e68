//! [`OwnedFiles`]: the record of the files zenpak wrote in a folder, with
//! their size, hash and stamp; only files in the record whose stamp still
//! matches are ever deleted. Files about to be renamed into place are
//! recorded as pending first, so a record and its files never disagree
//! after an interrupt.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
#[cfg(windows)]
use crate::publish::lock::windows;
use crate::publish::stamp::FileStamp;
use crate::publish::temporary::{unique_number, Staged};
use crate::publish::write_file;

/// How long replacing an ownership record is retried while another zenpak
/// reads it (an instant), before the refusal is reported: 2 s, short
/// enough that a folder really refusing writes fails soon (Windows, where a
/// file another process has open cannot be replaced).
#[cfg(windows)]
const RECORD_BUSY_TRIES: u32 = 200;

/// One file zenpak wrote, as it wrote it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct OwnedFile {
    /// Relative to the folder of the record.
    pub(crate) name: String,
    pub(crate) stamp: FileStamp,
    /// Hex SHA-256 of the contents.
    pub(crate) sha256: String,
    /// Which mod wrote it (its manifest's path): folders can be shared.
    #[serde(default)]
    pub(crate) owner: String,
}

/// The record of the files zenpak wrote in one folder (`<dir>/.zenpak-owned.json`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct OwnedFiles {
    pub(crate) files: Vec<OwnedFile>,
    /// zenpak created the folder (`install` made a game's `~mods`): it is
    /// removed with the last recorded file, when nothing else is in it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) created_folder: bool,
    /// The files an install is about to rename into place, recorded before
    /// the first rename and dropped with the record written after the last
    /// ([`OwnedFiles::expect`]). An install stopped between the two leaves
    /// them here; [`load`](Self::load) then settles each: a file on disk
    /// with that name, size and hash is the new one (its entry replaces the
    /// name's), any other entry is forgotten. So the record and the files
    /// agree whatever moment the install stopped at.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) pending: Vec<OwnedFile>,
    /// Entries whose name is not a plain file name of the folder (see
    /// [`checked_record_path`]), with why: never acted on, written back as
    /// they were.
    #[serde(skip)]
    pub(crate) damaged: Vec<(OwnedFile, String)>,
    /// Why the record file could not be read, when it exists but is not a
    /// record (then nothing is known to be owned).
    #[serde(skip)]
    pub(crate) unreadable: Option<String>,
}

/// Name of the ownership record in a folder zenpak writes to.
pub(crate) const OWNED_RECORD_NAME: &str = ".zenpak-owned.json";

/// What became of one recorded file when zenpak tried to remove it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) enum Removal {
    Removed(PathBuf),
    /// Changed since zenpak wrote it (or replaced by something else): left in place.
    KeptChanged(PathBuf),
    /// Already gone.
    Missing(PathBuf),
}

impl OwnedFiles {
    pub(crate) fn record_path(dir: &Path) -> PathBuf {
        dir.join(OWNED_RECORD_NAME)
    }

    /// Loads the record of `dir`; missing is empty (nothing is owned). An
    /// unreadable record is empty too, with [`unreadable`](Self::unreadable)
    /// saying why; entries naming anything but a file of `dir` are set
    /// aside as [`damaged`](Self::damaged).
    pub(crate) fn load(dir: &Path) -> OwnedFiles {
        let path = Self::record_path(dir);
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return OwnedFiles::default(),
            Err(e) => {
                return OwnedFiles {
                    unreadable: Some(e.to_string()),
                    ..OwnedFiles::default()
                }
            }
        };
        let mut record: OwnedFiles = match serde_json::from_slice(&bytes) {
            Ok(record) => record,
            Err(e) => {
                return OwnedFiles {
                    unreadable: Some(format!("it is not an ownership record ({e})")),
                    ..OwnedFiles::default()
                }
            }
        };
        let (good, bad): (Vec<OwnedFile>, Vec<OwnedFile>) = std::mem::take(&mut record.files)
            .into_iter()
            .partition(|f| checked_record_path(dir, &f.name).is_ok());
        record.files = good;
        record.damaged = bad
            .into_iter()
            .map(|f| {
                let why = checked_record_path(dir, &f.name).err().unwrap_or_default();
                (f, why)
            })
            .collect();
        record.settle_pending(dir);
        record
    }

    /// Settles what an interrupted install left [`pending`](Self::pending):
    /// each file that made it to its name is recorded as it is on disk,
    /// the others are forgotten (the name's entry, if any, still stands).
    fn settle_pending(&mut self, dir: &Path) {
        for entry in std::mem::take(&mut self.pending) {
            let path = match checked_record_path(dir, &entry.name) {
                Ok(path) => path,
                Err(why) => {
                    self.damaged.push((entry, why));
                    continue;
                }
            };
            if !entry.is_on_disk(&path).unwrap_or(false) {
                continue;
            }
            let Ok(stamp) = FileStamp::of(&path) else {
                continue;
            };
            self.files.retain(|f| f.name != entry.name);
            self.files.push(OwnedFile { stamp, ..entry });
        }
        self.files.sort_by(|a, b| a.name.cmp(&b.name));
    }

    /// Records `staged`, about to be renamed to `path` in `dir`, as
    /// [`pending`](Self::pending) for `owner`: saved before the renames,
    /// it lets the next load tell the new file at `path` from the old.
    pub(crate) fn expect(
        &mut self,
        dir: &Path,
        path: &Path,
        staged: &Staged,
        sha256: String,
        owner: &str,
    ) -> Result<()> {
        let entry = Self::entry(dir, path, staged.path(), sha256, owner)?;
        self.pending.retain(|f| f.name != entry.name);
        self.pending.push(entry);
        Ok(())
    }

    /// The entry for the file at `stamped` (`path` itself, or the temporary
    /// about to become it) under `path`'s name in `dir`.
    fn entry(
        dir: &Path,
        path: &Path,
        stamped: &Path,
        sha256: String,
        owner: &str,
    ) -> Result<OwnedFile> {
        Ok(OwnedFile {
            name: relative_name(dir, path)?,
            stamp: FileStamp::of(stamped).map_err(|e| Error::io(stamped, e))?,
            sha256,
            owner: owner.to_string(),
        })
    }

    /// What is wrong with the record as loaded, one line each (for warnings
    /// that name the record): nothing it names in these ways is touched.
    pub(crate) fn problems(&self, dir: &Path) -> Vec<String> {
        let record = Self::record_path(dir);
        let mut out = Vec::new();
        if let Some(why) = &self.unreadable {
            out.push(format!(
                "the ownership record {} is damaged: {why}; nothing in it is trusted",
                record.display()
            ));
        }
        for (_, why) in &self.damaged {
            out.push(format!(
                "the ownership record {} is damaged: {why}; that entry is left alone",
                record.display()
            ));
        }
        out
    }

    /// The recorded files of `owner`, as paths inside `dir`.
    pub(crate) fn paths_of(&self, dir: &Path, owner: &str) -> Vec<PathBuf> {
        self.files
            .iter()
            .filter(|f| f.owner == owner)
            .filter_map(|f| checked_record_path(dir, &f.name).ok())
            .collect()
    }

    /// Writes the record (damaged entries as they were); an empty record
    /// removes the file instead. A record file that could not be read is
    /// first set aside as `.zenpak-owned.damaged-<n>.json`, never deleted.
    ///
    /// On Windows a file another process has open cannot be replaced or
    /// removed. The record is read outside the `~mods` lock (an install's
    /// mount-order checks come before its build), for an instant each time,
    /// so a refused replacement is retried for a while before it fails.
    pub(crate) fn save(&self, dir: &Path) -> Result<()> {
        #[cfg(windows)]
        {
            let mut tries = 0;
            loop {
                match self.save_once(dir) {
                    Err(e)
                        if tries < RECORD_BUSY_TRIES
                            && matches!(
                                e.refusal(),
                                Some(
                                    crate::error::Refusal::PermissionDenied
                                        | crate::error::Refusal::InUse
                                )
                            ) =>
                    {
                        tries += 1;
                        std::thread::sleep(windows::BUSY_WAIT);
                    }
                    result => return result,
                }
            }
        }
        #[cfg(not(windows))]
        self.save_once(dir)
    }

    fn save_once(&self, dir: &Path) -> Result<()> {
        let path = Self::record_path(dir);
        if self.unreadable.is_some() && path.exists() {
            let aside = dir.join(format!(
                ".zenpak-owned.damaged-{:016x}.json",
                unique_number()
            ));
            std::fs::rename(&path, &aside).map_err(|e| Error::io(&path, e))?;
        }
        if self.files.is_empty() && self.damaged.is_empty() && self.pending.is_empty() {
            return match std::fs::remove_file(&path) {
                Ok(()) => Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                Err(e) => Err(Error::io(&path, e)),
            };
        }
        let mut all = self.files.clone();
        all.extend(self.damaged.iter().map(|(f, _)| f.clone()));
        let bytes = serde_json::to_vec_pretty(&OwnedFiles {
            files: all,
            created_folder: self.created_folder,
            pending: self.pending.clone(),
            ..OwnedFiles::default()
        })
        .map_err(Error::json)?;
        write_file(&path, |f| {
            f.write_all(&bytes).map_err(|e| Error::io(f.path(), e))
        })
    }

    /// Records (or re-records) `path` in `dir` as written by zenpak just now for `owner`.
    pub(crate) fn insert(
        &mut self,
        dir: &Path,
        path: &Path,
        sha256: String,
        owner: &str,
    ) -> Result<()> {
        let entry = Self::entry(dir, path, path, sha256, owner)?;
        self.files.retain(|f| f.name != entry.name);
        self.files.push(entry);
        self.files.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(())
    }

    /// Drops `path` from the record (it was removed or replaced by other means).
    pub(crate) fn forget(&mut self, dir: &Path, path: &Path) {
        if let Ok(name) = relative_name(dir, path) {
            self.files.retain(|f| f.name != name);
        }
    }

    pub(crate) fn get(&self, dir: &Path, path: &Path) -> Option<&OwnedFile> {
        let name = relative_name(dir, path).ok()?;
        self.files.iter().find(|f| f.name == name)
    }

    /// True when `path` is recorded and still exactly as zenpak wrote it.
    pub(crate) fn is_unchanged(&self, dir: &Path, path: &Path) -> bool {
        self.get(dir, path)
            .is_some_and(|owned| owned.is_on_disk(path).unwrap_or(false))
    }

    /// Removes `path` if the record owns it and it is unchanged; forgets it either way.
    pub(crate) fn remove(&mut self, dir: &Path, path: &Path) -> Result<Removal> {
        let Ok(name) = relative_name(dir, path) else {
            return Ok(Removal::KeptChanged(path.to_path_buf()));
        };
        let Some(position) = self.files.iter().position(|f| f.name == name) else {
            return Ok(if path.exists() {
                Removal::KeptChanged(path.to_path_buf())
            } else {
                Removal::Missing(path.to_path_buf())
            });
        };
        let owned = self.files.remove(position);
        match owned.is_on_disk(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Ok(Removal::Missing(path.to_path_buf()))
            }
            Err(e) => Err(Error::io(path, e)),
            Ok(false) => Ok(Removal::KeptChanged(path.to_path_buf())),
            Ok(true) => {
                std::fs::remove_file(path).map_err(|e| Error::io(path, e))?;
                Ok(Removal::Removed(path.to_path_buf()))
            }
        }
    }
}

impl OwnedFile {
    /// Whether the file at `path` is still the one zenpak wrote: the same
    /// stamp (nothing touched it), or — after a copy, a restore, a move to
    /// another disk, which change the inode and times — the same size and
    /// SHA-256. A symbolic link or folder at the name is never it.
    pub(crate) fn is_on_disk(&self, path: &Path) -> std::io::Result<bool> {
        let meta = std::fs::symlink_metadata(path)?;
        if !meta.is_file() {
            return Ok(false);
        }
        let stamp = FileStamp::from_metadata(&meta);
        if stamp == self.stamp {
            return Ok(true);
        }
        if stamp.size != self.stamp.size {
            return Ok(false);
        }
        use sha2::Digest;
        let mut file = File::open(path)?;
        let mut hasher = sha2::Sha256::new();
        std::io::copy(&mut file, &mut hasher)?;
        Ok(crate::hash::hex(&hasher.finalize()) == self.sha256)
    }
}

/// `path` relative to `dir`, as a single file name (records never reach into sub-folders
/// they do not name).
fn relative_name(dir: &Path, path: &Path) -> Result<String> {
    let relative = path
        .strip_prefix(dir)
        .map_err(|_| Error::internal(format!("{} is not in {}", path.display(), dir.display())))?;
    Ok(relative.to_string_lossy().replace('\\', "/"))
}

/// The path inside `dir` that a record (an ownership record, a build
/// record, a cache entry) names with `name`, once `name` is checked to be a
/// plain relative name that cannot leave `dir`: not empty, not absolute, no
/// drive or root, no `.` or `..` segment, no backslash, colon or control
/// character, and no `/` at all where a file name is expected. A record is
/// data written to disk, anyone can edit it: a name that fails is a
/// damaged record, never a path to act on. The error says why.
pub(crate) fn checked_record_path(dir: &Path, name: &str) -> std::result::Result<PathBuf, String> {
    let reason = if name.is_empty() {
        Some("an empty name")
    } else if name.starts_with('/') {
        Some("an absolute path")
    } else if name.contains('\\') || name.contains(':') {
        Some("a backslash or colon")
    } else if name.chars().any(char::is_control) {
        Some("a control character")
    } else if name.contains('/') {
        Some("a folder where a file name is expected")
    } else if name
        .split('/')
        .any(|s| s.is_empty() || s == "." || s == "..")
    {
        Some("an empty, `.` or `..` segment")
    } else if !Path::new(name)
        .components()
        .all(|c| matches!(c, std::path::Component::Normal(_)))
    {
        Some("a root or prefix component")
    } else {
        None
    };
    match reason {
        Some(reason) => Err(format!(
            "the recorded name `{}` has {reason}",
            name.escape_debug()
        )),
        None => Ok(dir.join(name)),
    }
}

/// [`checked_record_path`] for a record that stores full paths: `path` must
/// be a plain file name directly inside `dir`.
pub(crate) fn checked_recorded_file(
    dir: &Path,
    path: &Path,
) -> std::result::Result<PathBuf, String> {
    let name = path
        .strip_prefix(dir)
        .ok()
        .and_then(|p| p.to_str())
        .ok_or_else(|| {
            format!(
                "the recorded path `{}` is not inside {}",
                path.display(),
                dir.display()
            )
        })?;
    checked_record_path(dir, name)
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
