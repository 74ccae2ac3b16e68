//! After a build: the release archive (`zenpak package`), installing into a
//! game (`zenpak install`) and removing build output (`zenpak clean`).
//!
//! Everything written goes to a temporary name first and is renamed when
//! complete, so an interrupted command never leaves a half-written file.

use std::io::Write;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::error::{Error, Result};
use crate::manifest::Manifest;

/// Extensions of the three files of a built mod, in the order they are listed.
pub const ARTIFACT_EXTENSIONS: [&str; 3] = ["utoc", "ucas", "pak"];

/// Name of the build cache folder inside the output folder.
pub const CACHE_DIR: &str = ".zenpak-cache";

/// The three output files of a manifest's build.
pub fn artifact_paths(manifest: &Manifest) -> [PathBuf; 3] {
    let dir = manifest.output_dir();
    let stem = manifest.artifact_stem();
    ARTIFACT_EXTENSIONS.map(|ext| dir.join(format!("{stem}.{ext}")))
}

/// Hex SHA-256 of a file, read in blocks.
pub fn sha256_file(path: &Path) -> Result<String> {
    let mut file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut hasher = Sha256::new();
    std::io::copy(&mut file, &mut hasher).map_err(|e| Error::io(path, e))?;
    Ok(hex(&hasher.finalize()))
}

/// Lowercase hex of bytes.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Writes `path` through a temporary file beside it, renamed when complete.
pub fn write_atomically(
    path: &Path,
    write: impl FnOnce(&mut std::fs::File) -> std::io::Result<()>,
) -> Result<()> {
    let temporary = temporary_path(path);
    let result = (|| {
        let mut file = std::fs::File::create(&temporary)?;
        write(&mut file)?;
        file.sync_all()?;
        std::fs::rename(&temporary, path)
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&temporary);
        return Err(Error::io(path, e));
    }
    Ok(())
}

/// Replaces `path` with `bytes` through a temporary file and a rename, without
/// waiting for the disk: for cache files, where a file lost in a crash only
/// costs a rebuild.
pub fn write_replacing(path: &Path, bytes: &[u8]) -> Result<()> {
    let temporary = temporary_path(path);
    std::fs::write(&temporary, bytes)
        .and_then(|()| std::fs::rename(&temporary, path))
        .map_err(|e| {
            let _ = std::fs::remove_file(&temporary);
            Error::io(path, e)
        })
}

/// The temporary name a file is written under before it is renamed into place.
pub fn temporary_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".zenpak-tmp");
    path.with_file_name(name)
}

fn require_artifacts(manifest: &Manifest) -> Result<[PathBuf; 3]> {
    let paths = artifact_paths(manifest);
    for path in &paths {
        if !path.is_file() {
            return Err(Error::usage(format!(
                "{} is missing; run `zenpak build` first",
                path.display()
            )));
        }
    }
    Ok(paths)
}

/// Result of `zenpak package`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ReleaseArchive {
    pub path: PathBuf,
    pub sha256: String,
    /// Entries in the archive with their SHA-256.
    pub files: Vec<(String, String)>,
}

/// Writes `<output>/package/<name>-<version>.zip` holding the triplet under
/// `~mods/` and a `SHA256SUMS` file. The archive is reproducible: fixed
/// entry order and timestamps.
pub fn package(manifest: &Manifest) -> Result<ReleaseArchive> {
    let artifacts = require_artifacts(manifest)?;
    let dir = manifest.output_dir().join("package");
    std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
    let archive = dir.join(format!(
        "{}-{}.zip",
        manifest.package.name, manifest.package.version
    ));
    let mut files = Vec::new();
    for path in &artifacts {
        let name = format!("~mods/{}", path.file_name().unwrap().to_string_lossy());
        files.push((name, sha256_file(path)?));
    }
    let sums: String = files
        .iter()
        .map(|(name, sum)| format!("{sum}  {name}\n"))
        .collect();
    write_atomically(&archive, |file| {
        let mut zip = zip::ZipWriter::new(file);
        // Deflated: containers are mostly built uncompressed, so the download shrinks a lot.
        // The default DateTime (1980-01-01) keeps the archive free of build times.
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated)
            .last_modified_time(zip::DateTime::default())
            .unix_permissions(0o644)
            .large_file(true);
        for (path, (name, _)) in artifacts.iter().zip(&files) {
            zip.start_file(name.as_str(), options)
                .map_err(std::io::Error::other)?;
            let mut input = std::fs::File::open(path)?;
            std::io::copy(&mut input, &mut zip)?;
        }
        zip.start_file("SHA256SUMS", options)
            .map_err(std::io::Error::other)?;
        zip.write_all(sums.as_bytes())?;
        zip.finish().map_err(std::io::Error::other)?;
        Ok(())
    })?;
    Ok(ReleaseArchive {
        sha256: sha256_file(&archive)?,
        path: archive,
        files,
    })
}

/// Copies the triplet into `<game_dir>/<project>/Content/Paks/~mods/`.
/// Returns the installed paths.
pub fn install(manifest: &Manifest, game_dir: &Path) -> Result<Vec<PathBuf>> {
    let artifacts = require_artifacts(manifest)?;
    let project_dir = game_dir.join(&manifest.game.project);
    if !project_dir.is_dir() {
        return Err(Error::usage(format!(
            "{} has no `{}` folder; --game-dir must be the game's install folder \
             (the one holding `{}/Content/Paks`)",
            game_dir.display(),
            manifest.game.project,
            manifest.game.project
        )));
    }
    let mods = project_dir.join("Content").join("Paks").join("~mods");
    std::fs::create_dir_all(&mods).map_err(|e| Error::io(&mods, e))?;
    let mut installed = Vec::new();
    for path in &artifacts {
        let target = mods.join(path.file_name().unwrap());
        write_atomically(&target, |file| {
            let mut input = std::fs::File::open(path)?;
            std::io::copy(&mut input, file).map(|_| ())
        })?;
        installed.push(target);
    }
    Ok(installed)
}

/// Removes what `zenpak build` and `zenpak package` wrote: the triplet, the
/// release folder and the cache; the output folder too when it is then
/// empty. Returns the paths removed.
pub fn clean(manifest: &Manifest) -> Result<Vec<PathBuf>> {
    let dir = manifest.output_dir();
    let mut removed = Vec::new();
    for path in artifact_paths(manifest) {
        for candidate in [temporary_path(&path), path] {
            if candidate.is_file() {
                std::fs::remove_file(&candidate).map_err(|e| Error::io(&candidate, e))?;
                removed.push(candidate);
            }
        }
    }
    for sub in [CACHE_DIR, "package"] {
        let path = dir.join(sub);
        if path.is_dir() {
            std::fs::remove_dir_all(&path).map_err(|e| Error::io(&path, e))?;
            removed.push(path);
        }
    }
    if dir.is_dir()
        && std::fs::read_dir(&dir)
            .map(|mut d| d.next().is_none())
            .unwrap_or(false)
    {
        std::fs::remove_dir(&dir).map_err(|e| Error::io(&dir, e))?;
        removed.push(dir);
    }
    Ok(removed)
}
