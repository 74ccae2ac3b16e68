//! The incremental build cache, under `<output>/.zenpak-cache/`.
//!
//! - `files.json`: for every input file, its size, modification time and
//!   BLAKE3 hash. A file whose size and time are unchanged is not read again;
//!   one whose time changed is hashed again, so touching a file without
//!   changing it costs a hash, not a conversion.
//! - `packages/<key>.zpc`: a converted package, under a key that hashes
//!   everything its conversion depends on (its files' contents, its name, the
//!   engine version, the profile, the mappings and zenpak's version).
//! - `build.json`: the key of the last build as a whole and the artifacts it
//!   wrote; when the next build's key is the same and the artifacts are
//!   unchanged, nothing is rewritten.
//!
//! The cache only ever saves work: output bytes never depend on it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::release::write_replacing;

/// A BLAKE3 hash.
pub type Hash = [u8; 32];

/// What the cache remembers of one input file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileStamp {
    pub size: u64,
    pub modified_ns: u128,
    #[serde(with = "hex_hash")]
    pub hash: Hash,
}

/// Size, modification time and content hash of every input file seen by the last build.
#[derive(Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileIndex {
    files: BTreeMap<PathBuf, FileStamp>,
}

impl FileIndex {
    /// Loads the index; a missing or unreadable one is empty (everything gets hashed).
    pub fn load(path: &Path) -> FileIndex {
        std::fs::read(path)
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default()
    }

    pub fn save(&self, path: &Path) -> Result<()> {
        let bytes = serde_json::to_vec(self).map_err(|e| Error::other(e.to_string()))?;
        write_replacing(path, &bytes)
    }

    /// Stamps of `paths` (in parallel), reusing the content hash of every file
    /// whose size and modification time are unchanged. Returns a new index
    /// holding exactly these files.
    pub fn refresh(&self, paths: &[&Path]) -> Result<FileIndex> {
        let stamps: Vec<(PathBuf, FileStamp)> = paths
            .par_iter()
            .map(|path| {
                let meta = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
                let modified_ns = meta
                    .modified()
                    .ok()
                    .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                    .map_or(0, |d| d.as_nanos());
                let size = meta.len();
                if let Some(old) = self.files.get(*path) {
                    if old.size == size && old.modified_ns == modified_ns && modified_ns != 0 {
                        return Ok((path.to_path_buf(), *old));
                    }
                }
                let hash = hash_file(path)?;
                Ok((
                    path.to_path_buf(),
                    FileStamp {
                        size,
                        modified_ns,
                        hash,
                    },
                ))
            })
            .collect::<Result<_>>()?;
        Ok(FileIndex {
            files: stamps.into_iter().collect(),
        })
    }

    pub fn get(&self, path: &Path) -> Option<&FileStamp> {
        self.files.get(path)
    }
}

/// BLAKE3 of a file's contents.
pub fn hash_file(path: &Path) -> Result<Hash> {
    let mut hasher = blake3::Hasher::new();
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    hasher.update_reader(file).map_err(|e| Error::io(path, e))?;
    Ok(*hasher.finalize().as_bytes())
}

/// The record of the last build.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct BuildRecord {
    #[serde(with = "hex_hash")]
    pub key: Hash,
    pub artifacts: Vec<ArtifactRecord>,
}

/// One output file as the last build left it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct ArtifactRecord {
    pub path: PathBuf,
    pub size: u64,
    pub modified_ns: u128,
    /// Hex SHA-256, when the build was asked for it.
    pub sha256: Option<String>,
}

impl ArtifactRecord {
    /// Whether the file on disk still looks as the build left it.
    pub fn is_unchanged(&self) -> bool {
        std::fs::metadata(&self.path).ok().is_some_and(|meta| {
            meta.len() == self.size
                && meta
                    .modified()
                    .ok()
                    .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                    .map(|d| d.as_nanos())
                    == Some(self.modified_ns)
        })
    }

    pub fn of(path: &Path, sha256: Option<String>) -> Result<ArtifactRecord> {
        let meta = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
        Ok(ArtifactRecord {
            path: path.to_path_buf(),
            size: meta.len(),
            modified_ns: meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos()),
            sha256,
        })
    }
}

/// The cache folder and its files.
pub struct Cache {
    dir: PathBuf,
}

impl Cache {
    pub fn new(output_dir: &Path) -> Cache {
        Cache {
            dir: output_dir.join(crate::release::CACHE_DIR),
        }
    }

    pub fn create(&self) -> Result<()> {
        let packages = self.dir.join("packages");
        std::fs::create_dir_all(&packages).map_err(|e| Error::io(&packages, e))
    }

    pub fn files_path(&self) -> PathBuf {
        self.dir.join("files.json")
    }

    pub fn build_record_path(&self) -> PathBuf {
        self.dir.join("build.json")
    }

    /// Where the converted package with this key is kept.
    pub fn package_path(&self, key: &Hash) -> PathBuf {
        self.dir
            .join("packages")
            .join(format!("{}.zpc", crate::release::hex(key)))
    }

    pub fn load_build_record(&self) -> Option<BuildRecord> {
        let bytes = std::fs::read(self.build_record_path()).ok()?;
        serde_json::from_slice(&bytes).ok()
    }

    pub fn save_build_record(&self, record: &BuildRecord) -> Result<()> {
        let bytes = serde_json::to_vec_pretty(record).map_err(|e| Error::other(e.to_string()))?;
        write_replacing(&self.build_record_path(), &bytes)
    }

    /// Removes cached packages whose keys are not in `keep`, so the cache holds one build's worth.
    pub fn prune(&self, keep: &std::collections::BTreeSet<Hash>) -> Result<()> {
        let dir = self.dir.join("packages");
        let Ok(entries) = std::fs::read_dir(&dir) else {
            return Ok(());
        };
        let keep: std::collections::BTreeSet<String> = keep
            .iter()
            .map(|k| format!("{}.zpc", crate::release::hex(k)))
            .collect();
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if !keep.contains(&name) {
                let path = entry.path();
                std::fs::remove_file(&path).map_err(|e| Error::io(&path, e))?;
            }
        }
        Ok(())
    }
}

mod hex_hash {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(hash: &[u8; 32], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&crate::release::hex(hash))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<[u8; 32], D::Error> {
        let text = String::deserialize(d)?;
        let mut out = [0u8; 32];
        if text.len() != 64 {
            return Err(serde::de::Error::custom("hash must be 64 hex digits"));
        }
        for (i, byte) in out.iter_mut().enumerate() {
            *byte = u8::from_str_radix(&text[i * 2..i * 2 + 2], 16)
                .map_err(serde::de::Error::custom)?;
        }
        Ok(out)
    }
}
