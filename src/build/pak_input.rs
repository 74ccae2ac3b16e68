//! Legacy `.pak` files as build input (`[content] paks`): each pak is
//! unpacked into the build cache (`<cache>/paks/<name>/`, laid out as a
//! content root: `<Project>/Content/...` by the pak's mount point), once per
//! version of the pak, and discovered like cooked content. Its packages then
//! go through the normal conversion and its other files into the companion
//! pak. Entries are streamed to disk, never held whole in memory, and every
//! entry's SHA-1 is checked before its file appears (the pak reader's rule).
//!
//! The unpacked folder is a cache, and checked as one before it is used:
//! its record names the pak it came from (stamp and BLAKE3) and every file
//! written (stamp and BLAKE3). A development build compares stamps, a
//! release build hashes the pak and every file, a `--force` build unpacks
//! anew; a folder that differs in anything (a file edited, added, removed
//! or swapped, a name listed twice) is removed and unpacked again.

use std::path::{Path, PathBuf};

use crate::build::discover::{self, Content, Selection};
use crate::build::input::{hash_file, hash_large_file, Trust};
use crate::error::{Error, Result};
use crate::pak::crypto::KeyRing;
use crate::pak::reader::PakReader;
use crate::publish::stamp::FileStamp;

/// Beside an unpacked pak's folder, `<folder>.json` says which version of
/// the pak it holds and which files zenpak wrote there (all that `clean`
/// removes). It is not inside the folder, which is discovered as content.
fn record_path(dir: &Path) -> PathBuf {
    let name = dir.file_name().unwrap_or_default().to_string_lossy();
    dir.with_file_name(format!("{name}.json"))
}

#[derive(serde::Serialize, serde::Deserialize)]
struct UnpackRecord {
    pak: FileStamp,
    /// Hex BLAKE3 of the pak the folder was unpacked from.
    #[serde(default)]
    pak_blake3: String,
    files: Vec<String>,
    /// For each of `files`, what it was when written.
    #[serde(default)]
    written: Vec<WrittenFile>,
}

/// One unpacked file as zenpak wrote it.
#[derive(serde::Serialize, serde::Deserialize)]
struct WrittenFile {
    stamp: FileStamp,
    /// Hex BLAKE3 of its contents.
    blake3: String,
}

fn load_record(dir: &Path) -> Option<UnpackRecord> {
    let bytes = std::fs::read(record_path(dir)).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Whether `dir` holds exactly what `record` says was unpacked there from
/// `pak`: the record names each file once, each file is there as written
/// (its stamp, or with [`Trust::Contents`] its hash) and nothing else is
/// there; and the record was made from this pak (its stamp, or its hash).
fn is_intact(record: &UnpackRecord, pak: &Path, dir: &Path, trust: Trust) -> Result<bool> {
    let by_contents = match trust {
        Trust::Nothing => return Ok(false),
        Trust::Stamps => false,
        Trust::Contents => true,
    };
    let made_from_pak = if by_contents {
        crate::hash::hex(&hash_large_file(pak)?) == record.pak_blake3
    } else {
        FileStamp::of(pak).map_err(|e| Error::io(pak, e))? == record.pak
    };
    if !made_from_pak || record.files.len() != record.written.len() {
        return Ok(false);
    }
    let names: std::collections::BTreeSet<&str> = record.files.iter().map(String::as_str).collect();
    if names.len() != record.files.len()
        || names
            .iter()
            .any(|n| crate::mount::validate_relative_path(n).is_err())
    {
        return Ok(false);
    }
    for (name, written) in record.files.iter().zip(&record.written) {
        let path = dir.join(name);
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            return Ok(false);
        };
        let same = meta.is_file()
            && if by_contents {
                crate::hash::hex(&hash_file(&path)?) == written.blake3
            } else {
                FileStamp::from_metadata(&meta) == written.stamp
            };
        if !same {
            return Ok(false);
        }
    }
    // Nothing but those files: no file added, no link.
    let mut found = 0;
    for entry in walkdir::WalkDir::new(dir).min_depth(1) {
        let Ok(entry) = entry else {
            return Ok(false);
        };
        if entry.file_type().is_dir() {
            continue;
        }
        found += 1;
        if !entry.file_type().is_file() {
            return Ok(false);
        }
    }
    Ok(found == names.len())
}

/// Removes a folder zenpak unpacked a pak into, whatever it holds now
/// (it is the cache's own); a link in its place is removed, not followed.
fn remove_folder(dir: &Path) -> Result<()> {
    match std::fs::symlink_metadata(dir) {
        Ok(meta) if meta.is_dir() => std::fs::remove_dir_all(dir).map_err(|e| Error::io(dir, e)),
        Ok(_) => std::fs::remove_file(dir).map_err(|e| Error::io(dir, e)),
        Err(_) => Ok(()),
    }
}

/// A writer that hashes what goes through it.
struct Hashing<'a> {
    inner: &'a mut dyn std::io::Write,
    hasher: blake3::Hasher,
}

impl std::io::Write for Hashing<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Unpacks `pak` into `dir` unless `dir` already holds this version of it,
/// whole and untouched (checked as far as `trust` says; with
/// [`Trust::Nothing`] it is always unpacked anew). A pak that lists one
/// path twice is refused: the game reads the last one listed (see
/// `pak::reader`), which may not be the one the modder meant.
fn unpack_once(pak: &Path, dir: &Path, keys: &KeyRing, trust: Trust) -> Result<()> {
    if let Some(record) = load_record(dir) {
        if is_intact(&record, pak, dir, trust)? {
            return Ok(());
        }
    }
    let record_file = record_path(dir);
    if std::fs::symlink_metadata(&record_file).is_ok() {
        std::fs::remove_file(&record_file).map_err(|e| Error::io(&record_file, e))?;
    }
    remove_folder(dir)?;
    let stamp = FileStamp::of(pak).map_err(|e| Error::io(pak, e))?;
    let pak_blake3 = crate::hash::hex(&hash_large_file(pak)?);
    let reader = PakReader::open_with_keys(pak, keys)?;
    if let Some(repeated) = reader.repeated.first() {
        return Err(Error::invalid(format!(
            "the pak lists `{}` twice (records at offsets {} and {})",
            repeated.path, repeated.dropped, repeated.kept
        ))
        .within("pak index")
        .in_file(pak)
        .with_hint("the game reads the last one listed, which may not be the one meant: make the pak again with one of them"));
    }
    let mut files = Vec::with_capacity(reader.entries.len());
    let mut written = Vec::with_capacity(reader.entries.len());
    let out = crate::publish::output_dir::OutputDir::new(dir)?;
    for entry in &reader.entries {
        crate::pool::check_interrupted()?;
        let path = crate::mount::virtual_path(&reader.mount_point, &entry.path);
        let mut hasher = blake3::Hasher::new();
        out.write(&path, |w| {
            let mut hashing = Hashing {
                inner: w,
                hasher: blake3::Hasher::new(),
            };
            let n = reader.read_to(entry, &mut hashing)?;
            hasher = hashing.hasher;
            Ok(n)
        })
        .map_err(|e| e.in_file(pak).within(format!("entry `{}`", entry.path)))?;
        let target = out.root().join(&path);
        written.push(WrittenFile {
            stamp: FileStamp::of(&target).map_err(|e| Error::io(&target, e))?,
            blake3: crate::hash::hex(hasher.finalize().as_bytes()),
        });
        files.push(path);
    }
    let record = UnpackRecord {
        pak: stamp,
        pak_blake3,
        files,
        written,
    };
    let text = serde_json::to_vec(&record).map_err(Error::json)?;
    crate::publish::write_file(&record_file, |f| {
        use std::io::Write;
        f.write_all(&text).map_err(|e| Error::io(f.path(), e))
    })
}

/// The folder a pak is unpacked into: its file name plus a hash of its
/// path, so two paks of one name do not share a folder.
fn unpacked_dir(cache_dir: &Path, pak: &Path) -> PathBuf {
    let name = crate::iostore::container_stem(pak).unwrap_or_default();
    let hash = blake3::hash(pak.to_string_lossy().as_bytes());
    cache_dir.join("paks").join(format!(
        "{name}-{}",
        &crate::hash::hex(hash.as_bytes())[..12]
    ))
}

/// Adds the packages and files of `paks` to `content` (unpacked under
/// `cache_dir`), keeping content order. A path both in a pak and in the
/// content root, or in two paks, is an error naming both.
pub(crate) fn add_paks(
    content: &mut Content,
    paks: &[PathBuf],
    project: &str,
    cache_dir: &Path,
    keys: &KeyRing,
    trust: Trust,
) -> Result<()> {
    if paks.is_empty() {
        return Ok(());
    }
    let mut origin: std::collections::BTreeMap<String, String> = content
        .packages
        .iter()
        .map(|p| p.relative_path())
        .chain(content.loose_files.iter().map(|f| f.relative_path.as_str()))
        .map(|path| (path.to_lowercase(), "the content root".to_string()))
        .collect();
    for pak in paks {
        if !pak.is_file() {
            return Err(
                Error::usage("the pak named in `[content] paks` does not exist")
                    .in_file(pak)
                    .with_hint("paths in `[content] paks` are relative to mod.toml's folder"),
            );
        }
        let dir = unpacked_dir(cache_dir, pak);
        unpack_once(pak, &dir, keys, trust)?;
        let (found, problems) = discover::scan(&dir, project, &Selection::new(&[], &[])?, false)?;
        Error::many("content files", problems)?;
        let name = pak.display().to_string();
        // What a mod must never contain is left out of an input pak's files
        // (an exclude line cannot reach them), with a warning each.
        for file in &found.never_ship {
            content.warnings.push(
                crate::diagnostic::Diagnostic::warning(
                    "never-ship",
                    format!(
                        "`{}` in {name} is {}; it was left out of the mod",
                        file.relative_path, file.what
                    ),
                )
                .with_file(pak),
            );
        }
        let paths = found
            .packages
            .iter()
            .map(|p| p.relative_path())
            .chain(found.loose_files.iter().map(|f| f.relative_path.as_str()));
        for path in paths {
            if let Some(other) = origin.insert(path.to_lowercase(), name.clone()) {
                return Err(
                    Error::usage(format!("`{path}` is both in {other} and in {name}")).with_hint(
                        "keep one of them: remove the file, or the pak from `[content] paks`",
                    ),
                );
            }
        }
        content.packages.extend(found.packages);
        content.loose_files.extend(found.loose_files);
        content.warnings.extend(found.warnings);
    }
    content
        .packages
        .sort_by(|a, b| a.relative_path().cmp(b.relative_path()));
    content
        .loose_files
        .sort_by(|a, b| a.relative_path.cmp(&b.relative_path));
    Ok(())
}

/// Removes what [`unpack_once`] wrote in `dir` (the files its record lists,
/// then folders left empty), never following a symbolic link.
fn remove_unpacked(dir: &Path, removed: &mut Vec<PathBuf>) -> Result<()> {
    let real_dir = |p: &Path| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir());
    let Some(record) = load_record(dir) else {
        return Ok(());
    };
    let mut folders = std::collections::BTreeSet::new();
    for file in &record.files {
        crate::mount::validate_relative_path(file)?;
        let path = dir.join(file);
        if std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file()) {
            std::fs::remove_file(&path).map_err(|e| Error::io(&path, e))?;
            removed.push(path);
        }
        let mut parent = Path::new(file).parent();
        while let Some(p) = parent.filter(|p| !p.as_os_str().is_empty()) {
            folders.insert(p.to_path_buf());
            parent = p.parent();
        }
    }
    let record = record_path(dir);
    std::fs::remove_file(&record).map_err(|e| Error::io(&record, e))?;
    removed.push(record);
    // Deepest first, so a folder is empty by the time it is tried.
    let mut folders: Vec<PathBuf> = folders.into_iter().collect();
    folders.sort_by_key(|f| std::cmp::Reverse(f.components().count()));
    for folder in folders
        .iter()
        .map(|f| dir.join(f))
        .chain([dir.to_path_buf()])
    {
        if real_dir(&folder) && std::fs::read_dir(&folder).is_ok_and(|mut d| d.next().is_none()) {
            std::fs::remove_dir(&folder).map_err(|e| Error::io(&folder, e))?;
        }
    }
    Ok(())
}

/// Removes every unpacked pak of the cache at `cache_dir` (for `clean`).
pub(crate) fn clean(cache_dir: &Path, removed: &mut Vec<PathBuf>) -> Result<()> {
    let paks = cache_dir.join("paks");
    if !std::fs::symlink_metadata(&paks).is_ok_and(|m| m.is_dir()) {
        return Ok(());
    }
    for entry in std::fs::read_dir(&paks)
        .map_err(|e| Error::io(&paks, e))?
        .flatten()
    {
        let path = entry.path();
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            remove_unpacked(&path, removed)?;
        }
    }
    if std::fs::read_dir(&paks).is_ok_and(|mut d| d.next().is_none()) {
        std::fs::remove_dir(&paks).map_err(|e| Error::io(&paks, e))?;
    }
    Ok(())
}
