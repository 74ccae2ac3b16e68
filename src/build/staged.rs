//! Packages made for the build in memory (the game's assets with the mod's
//! patches applied, `crate::patch`): written into the build cache
//! (`<cache>/staged/`, laid out as a content root) and discovered like
//! cooked content, so that conversion, the cache and the container treat
//! them as any other package. A file whose bytes are unchanged is not
//! written again (its stamp stays, and the cache reuses its conversion);
//! a file of an earlier build that is no longer made is removed. Everything
//! in the folder is zenpak's: `clean` removes it.

use std::path::{Path, PathBuf};

use crate::build::discover::{self, Content, Selection};
use crate::error::{Error, Result};
use crate::legacy::BulkKind;

/// One package's files, made in memory.
#[derive(Debug, Clone)]
pub struct StagedPackage {
    /// The header's path in the container (`MyGame/Content/Data/DT_Weapons.uasset`).
    pub relative_path: String,
    pub header: Vec<u8>,
    pub uexp: Vec<u8>,
    pub companions: Vec<(BulkKind, Vec<u8>)>,
    /// What made it, for messages (`patches of /Game/Data/DT_Weapons`).
    pub origin: String,
}

impl StagedPackage {
    /// Each file's path (relative) and bytes.
    fn files(&self) -> Vec<(String, &[u8])> {
        let stem = self
            .relative_path
            .rsplit_once('.')
            .map_or(self.relative_path.as_str(), |(stem, _)| stem);
        let mut files = vec![
            (self.relative_path.clone(), self.header.as_slice()),
            (format!("{stem}.uexp"), self.uexp.as_slice()),
        ];
        for (kind, bytes) in &self.companions {
            files.push((format!("{stem}.{}", kind.extension()), bytes.as_slice()));
        }
        files
    }
}

fn staged_dir(cache_dir: &Path) -> PathBuf {
    cache_dir.join("staged")
}

/// Writes `staged` into the cache and adds their packages to `content`. A
/// package both staged and in the content root is an error naming both.
pub(crate) fn add_staged(
    content: &mut Content,
    staged: &[StagedPackage],
    project: &str,
    cache_dir: &Path,
) -> Result<()> {
    let dir = staged_dir(cache_dir);
    if staged.is_empty() {
        return remove_all(&dir, &mut Vec::new());
    }
    let mut wanted = std::collections::BTreeSet::new();
    let out = crate::publish::output_dir::OutputDir::new(&dir)?;
    for package in staged {
        for (relative, bytes) in package.files() {
            crate::mount::validate_relative_path(&relative)?;
            let target = out.root().join(&relative);
            wanted.insert(target.clone());
            // Read back only when the size already matches.
            let same = std::fs::symlink_metadata(&target)
                .is_ok_and(|m| m.is_file() && m.len() == bytes.len() as u64)
                && std::fs::read(&target).is_ok_and(|held| held == bytes);
            if !same {
                out.write(&relative, |w| {
                    w.write_all(bytes).map_err(|e| Error::io(&target, e))?;
                    Ok(bytes.len() as u64)
                })?;
            }
        }
    }
    // What an earlier build staged and this one does not.
    let mut stale = Vec::new();
    for entry in walkdir::WalkDir::new(out.root())
        .min_depth(1)
        .contents_first(true)
    {
        let entry = entry.map_err(|e| Error::invalid(e.to_string()).in_file(&dir))?;
        let path = entry.path();
        if entry.file_type().is_dir() {
            if std::fs::read_dir(path).is_ok_and(|mut d| d.next().is_none()) {
                std::fs::remove_dir(path).map_err(|e| Error::io(path, e))?;
            }
        } else if !wanted.contains(path) {
            stale.push(path.to_path_buf());
        }
    }
    for path in stale {
        std::fs::remove_file(&path).map_err(|e| Error::io(&path, e))?;
    }
    let (found, problems) = discover::scan(out.root(), project, &Selection::new(&[], &[])?, false)?;
    Error::many("staged packages", problems)?;
    let taken: std::collections::BTreeSet<String> = content
        .packages
        .iter()
        .map(|p| p.relative_path().to_lowercase())
        .chain(
            content
                .loose_files
                .iter()
                .map(|f| f.relative_path.to_lowercase()),
        )
        .collect();
    for package in &found.packages {
        if taken.contains(&package.relative_path().to_lowercase()) {
            let origin = staged
                .iter()
                .find(|s| {
                    s.relative_path
                        .eq_ignore_ascii_case(package.relative_path())
                })
                .map_or("a patch", |s| s.origin.as_str());
            return Err(Error::usage(format!(
                "`{}` is both cooked content of the mod and made by {origin}",
                package.relative_path()
            ))
            .with_hint("keep one: remove the cooked copy from the content (or `exclude` it in mod.toml), or the patch"));
        }
    }
    content.packages.extend(found.packages);
    content
        .packages
        .sort_by(|a, b| a.relative_path().cmp(b.relative_path()));
    Ok(())
}

/// Removes the staged folder (for `clean`, and a build that stages nothing).
pub(crate) fn remove_all(cache_dir_staged: &Path, removed: &mut Vec<PathBuf>) -> Result<()> {
    match std::fs::symlink_metadata(cache_dir_staged) {
        Ok(meta) if meta.is_dir() => {
            for entry in walkdir::WalkDir::new(cache_dir_staged).contents_first(true) {
                let entry =
                    entry.map_err(|e| Error::invalid(e.to_string()).in_file(cache_dir_staged))?;
                let path = entry.path();
                if entry.file_type().is_dir() {
                    std::fs::remove_dir(path).map_err(|e| Error::io(path, e))?;
                } else {
                    std::fs::remove_file(path).map_err(|e| Error::io(path, e))?;
                    removed.push(path.to_path_buf());
                }
            }
            Ok(())
        }
        Ok(_) => std::fs::remove_file(cache_dir_staged).map_err(|e| Error::io(cache_dir_staged, e)),
        Err(_) => Ok(()),
    }
}

/// Removes what the cache at `cache_dir` staged (for `clean`).
pub(crate) fn clean(cache_dir: &Path, removed: &mut Vec<PathBuf>) -> Result<()> {
    remove_all(&staged_dir(cache_dir), removed)
}
