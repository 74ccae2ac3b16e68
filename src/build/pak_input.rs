//! Legacy `.pak` files as build input (`[content] paks`): each pak is
//! unpacked into the build cache (`<cache>/paks/<name>/`, laid out as a
//! content root: `<Project>/Content/...` by the pak's mount point), once per
//! version of the pak, and discovered like cooked content. Its packages then
//! go through the normal conversion and its other files into the companion
//! pak. Entries are streamed to disk, never held whole in memory, and every
//! entry's SHA-1 is checked before its file appears (the pak reader's rule).

use std::path::{Path, PathBuf};

use crate::build::discover::{self, Content, Selection};
use crate::error::{Error, Result};
use crate::pak::crypto::KeyRing;
use crate::pak::reader::PakReader;
use crate::publish::FileStamp;

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
    files: Vec<String>,
}

fn load_record(dir: &Path) -> Option<UnpackRecord> {
    let bytes = std::fs::read(record_path(dir)).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Unpacks `pak` into `dir` unless `dir` already holds this version of it.
fn unpack_once(pak: &Path, dir: &Path, keys: &KeyRing) -> Result<()> {
    let stamp = FileStamp::of(pak).map_err(|e| Error::io(pak, e))?;
    if load_record(dir).is_some_and(|r| r.pak == stamp) {
        return Ok(());
    }
    remove_unpacked(dir, &mut Vec::new())?;
    let reader = PakReader::open_with_keys(pak, keys)?;
    let mut files = Vec::with_capacity(reader.entries.len());
    for entry in &reader.entries {
        crate::publish::check_interrupted()?;
        let path = crate::mount::virtual_path(&reader.mount_point, &entry.path);
        crate::publish::write_inside_with(dir, &path, &mut |w| {
            reader.read_to(entry, w).map(|_| ())
        })
        .map_err(|e| e.in_file(pak).within(format!("entry `{}`", entry.path)))?;
        files.push(path);
    }
    let record = UnpackRecord { pak: stamp, files };
    let text = serde_json::to_vec(&record).map_err(Error::json)?;
    crate::publish::write_file(&record_path(dir), |f| {
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
pub fn add_paks(
    content: &mut Content,
    paks: &[PathBuf],
    project: &str,
    cache_dir: &Path,
    keys: &KeyRing,
) -> Result<()> {
    if paks.is_empty() {
        return Ok(());
    }
    let mut origin: std::collections::BTreeMap<String, String> = content
        .packages
        .iter()
        .map(|p| p.relative_path.clone())
        .chain(content.loose_files.iter().map(|f| f.relative_path.clone()))
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
        unpack_once(pak, &dir, keys)?;
        let found = discover::discover(&dir, project, &Selection::new(&[], &[])?)?;
        let name = pak.display().to_string();
        let paths = found
            .packages
            .iter()
            .map(|p| &p.relative_path)
            .chain(found.loose_files.iter().map(|f| &f.relative_path));
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
        .sort_by(|a, b| a.relative_path.cmp(&b.relative_path));
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
pub fn clean(cache_dir: &Path, removed: &mut Vec<PathBuf>) -> Result<()> {
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
