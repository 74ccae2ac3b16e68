//! `build.json`: the record of the last build ([`BuildRecord`]): its key
//! and the artifacts it wrote ([`ArtifactRecord`]).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::build::input::{hash_large_file, Hash};
use crate::error::{Error, Result};

/// The record of the last build.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub(crate) struct BuildRecord {
    #[serde(with = "hex_hash")]
    pub(crate) key: Hash,
    pub(crate) artifacts: Vec<ArtifactRecord>,
    /// Whether the `.ucas` is a development build's extension of an earlier
    /// one (not the canonical layout a release build must write).
    #[serde(default)]
    pub(crate) extended: bool,
    /// How many chunks the container holds (absent in records of older
    /// zenpaks: such a build is not taken as up to date).
    #[serde(default)]
    pub(crate) chunks: Option<usize>,
}

/// One output file as the last build left it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct ArtifactRecord {
    pub path: PathBuf,
    pub stamp: crate::publish::stamp::FileStamp,
    /// Hex BLAKE3 of the contents, recorded by a release build; `None` in
    /// a development build's record, whose outputs their stamps identify
    /// (hashing them would read every output again: a GiB `.ucas`, a pak
    /// of large loose files).
    pub blake3: Option<String>,
}

impl ArtifactRecord {
    /// Whether the file on disk is still the one the build wrote.
    pub(crate) fn is_unchanged(&self) -> bool {
        crate::publish::stamp::FileStamp::of(&self.path).is_ok_and(|s| s == self.stamp)
    }

    /// Records `path` as just written: its stamp and BLAKE3.
    pub(crate) fn of(path: &Path) -> Result<ArtifactRecord> {
        let mut record = Self::stamp_only(path)?;
        record.blake3 = Some(crate::hash::hex(&hash_large_file(path)?));
        Ok(record)
    }

    /// Records `path` as just written, with the BLAKE3 `hash` of the bytes
    /// written to it (taken by the writer).
    pub(crate) fn with_hash(path: &Path, hash: &Hash) -> Result<ArtifactRecord> {
        let mut record = Self::stamp_only(path)?;
        record.blake3 = Some(crate::hash::hex(hash));
        Ok(record)
    }

    /// Records `path` as just written by its stamp alone.
    pub(crate) fn stamp_only(path: &Path) -> Result<ArtifactRecord> {
        let stamp = crate::publish::stamp::FileStamp::of(path).map_err(|e| Error::io(path, e))?;
        Ok(ArtifactRecord {
            path: path.to_path_buf(),
            stamp,
            blake3: None,
        })
    }

    /// Checks that `bytes_hash` (BLAKE3 of what was just read from the file)
    /// is what the build wrote; without a recorded hash, that the file still
    /// has the stamp it was written with.
    pub(crate) fn check_hash(&self, bytes_hash: &Hash) -> Result<()> {
        let actual = crate::hash::hex(bytes_hash);
        let expected = match &self.blake3 {
            Some(expected) if *expected == actual => return Ok(()),
            Some(expected) => expected.clone(),
            None if self.is_unchanged() => return Ok(()),
            None => "the file as the build wrote it".to_string(),
        };
        Err(Error::new(crate::error::ErrorKind::HashMismatch {
            algorithm: "BLAKE3",
            expected,
            actual,
        })
        .in_file(&self.path)
        .with_hint("the file changed since zenpak built it; run `zenpak build`"))
    }
}

impl BuildRecord {
    /// True when every artifact is the file the build wrote, at the expected paths.
    pub(crate) fn matches_disk(&self, paths: &[PathBuf]) -> bool {
        self.artifacts.len() == paths.len()
            && self
                .artifacts
                .iter()
                .zip(paths)
                .all(|(a, p)| &a.path == p && a.is_unchanged())
    }
}

mod hex_hash {
    use serde::{Deserialize, Deserializer, Serializer};

    pub(crate) fn serialize<S: Serializer>(hash: &[u8; 32], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&crate::hash::hex(hash))
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<[u8; 32], D::Error> {
        let text = String::deserialize(d)?;
        crate::hash::from_hex(&text)
            .ok_or_else(|| serde::de::Error::custom("hash must be 64 hex digits"))
    }
}
