//! The engine version table: every engine release zenpak supports (4.26 … 5.7)
//! and every format version that follows from it.
//!
//! This is the one place where version differences are written down. Code
//! elsewhere asks the table (`engine.legacy_file_versions()`,
//! `engine.has(Feature::DataResources)`) instead of comparing version numbers.
//!
//! The table is split into sections, one per format; each section is a set
//! of `match` arms over [`EngineVersion`].

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::error::Error;

/// An engine release.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum EngineVersion {
    UE4_26,
    UE4_27,
    UE5_0,
    UE5_1,
    UE5_2,
    UE5_3,
    UE5_4,
    UE5_5,
    UE5_6,
    UE5_7,
}

impl EngineVersion {
    /// Every supported release, oldest first.
    pub const ALL: [EngineVersion; 10] = [
        EngineVersion::UE4_26,
        EngineVersion::UE4_27,
        EngineVersion::UE5_0,
        EngineVersion::UE5_1,
        EngineVersion::UE5_2,
        EngineVersion::UE5_3,
        EngineVersion::UE5_4,
        EngineVersion::UE5_5,
        EngineVersion::UE5_6,
        EngineVersion::UE5_7,
    ];

    /// `"5.6"` style name.
    pub fn as_str(self) -> &'static str {
        match self {
            EngineVersion::UE4_26 => "4.26",
            EngineVersion::UE4_27 => "4.27",
            EngineVersion::UE5_0 => "5.0",
            EngineVersion::UE5_1 => "5.1",
            EngineVersion::UE5_2 => "5.2",
            EngineVersion::UE5_3 => "5.3",
            EngineVersion::UE5_4 => "5.4",
            EngineVersion::UE5_5 => "5.5",
            EngineVersion::UE5_6 => "5.6",
            EngineVersion::UE5_7 => "5.7",
        }
    }

    pub fn is_ue5(self) -> bool {
        self >= EngineVersion::UE5_0
    }

    /// Whether this release has a versioned feature (see [`Feature`]).
    pub fn has(self, feature: Feature) -> bool {
        self >= feature.since()
    }
}

impl fmt::Display for EngineVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for EngineVersion {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        let t = s.trim();
        let t = t
            .strip_prefix("UE")
            .or_else(|| t.strip_prefix("ue"))
            .unwrap_or(t);
        let t = t.replace('_', ".");
        EngineVersion::ALL
            .iter()
            .copied()
            .find(|v| v.as_str() == t)
            .ok_or_else(|| {
                let all: Vec<&str> = EngineVersion::ALL.iter().map(|v| v.as_str()).collect();
                Error::usage(format!(
                    "unknown engine version `{s}`; supported: {}",
                    all.join(", ")
                ))
            })
    }
}

impl Serialize for EngineVersion {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for EngineVersion {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse()
            .map_err(|e: Error| serde::de::Error::custom(e.to_string()))
    }
}

// ---------------------------------------------------------------------------
// Section: IoStore containers and pak files (owner: iostore; src/iostore/,
// src/pak/). Facts from the engine's IoStore/pak sources as published and
// trumank/retoc + trumank/repak.
// ---------------------------------------------------------------------------

/// How a container's chunk hashes are computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum ChunkHashKind {
    /// UE4: SHA-1 of the uncompressed chunk.
    Sha1,
    /// UE5: BLAKE3 of the uncompressed chunk, truncated to 20 bytes (`FIoHash`).
    Blake3_160,
}

impl EngineVersion {
    /// `EIoStoreTocVersion` of the `.utoc` this release writes.
    pub fn toc_version(self) -> crate::iostore::toc::TocVersion {
        use crate::iostore::toc::TocVersion::*;
        match self {
            EngineVersion::UE4_26 => DirectoryIndex,
            EngineVersion::UE4_27 => PartitionSize,
            EngineVersion::UE5_0
            | EngineVersion::UE5_1
            | EngineVersion::UE5_2
            | EngineVersion::UE5_3 => PerfectHashWithOverflow,
            EngineVersion::UE5_4 => OnDemandMetaData,
            EngineVersion::UE5_5 | EngineVersion::UE5_6 | EngineVersion::UE5_7 => {
                ReplaceIoChunkHashWithIoHash
            }
        }
    }

    /// `EIoContainerHeaderVersion` of the container header chunk.
    pub fn container_header_version(
        self,
    ) -> crate::iostore::container_header::ContainerHeaderVersion {
        use crate::iostore::container_header::ContainerHeaderVersion::*;
        match self {
            EngineVersion::UE4_26 | EngineVersion::UE4_27 => Initial,
            EngineVersion::UE5_0 => LocalizedPackages,
            EngineVersion::UE5_1 | EngineVersion::UE5_2 => OptionalSegmentPackages,
            EngineVersion::UE5_3 | EngineVersion::UE5_4 => NoExportInfo,
            EngineVersion::UE5_5 => SoftPackageReferences,
            EngineVersion::UE5_6 | EngineVersion::UE5_7 => SoftPackageReferencesOffset,
        }
    }

    /// Whether chunk types use UE5's `EIoChunkType` numbering (UE4's differs).
    pub fn uses_ue5_chunk_types(self) -> bool {
        self.is_ue5()
    }

    /// The hash stored in a chunk's TOC meta entry.
    pub fn chunk_hash_kind(self) -> ChunkHashKind {
        if self.is_ue5() {
            ChunkHashKind::Blake3_160
        } else {
            ChunkHashKind::Sha1
        }
    }

    /// `EPakFileVersion` of the companion `.pak`: every supported release
    /// (4.26 onwards) writes `Fnv64BugFix` (11), with the path-hash and
    /// full-directory indexes.
    pub fn pak_version(self) -> u32 {
        match self {
            EngineVersion::UE4_26
            | EngineVersion::UE4_27
            | EngineVersion::UE5_0
            | EngineVersion::UE5_1
            | EngineVersion::UE5_2
            | EngineVersion::UE5_3
            | EngineVersion::UE5_4
            | EngineVersion::UE5_5
            | EngineVersion::UE5_6
            | EngineVersion::UE5_7 => 11,
        }
    }
}

/// Features that appear in one release and stay in all later ones.
/// Each names the first release that has it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Feature {
    /// UE5 object versions (`FileVersionUE5`) in the legacy summary.
    Ue5ObjectVersion,
    /// Large world coordinates: vectors and bounds are doubles.
    LargeWorldCoordinates,
}

impl Feature {
    pub fn since(self) -> EngineVersion {
        match self {
            Feature::Ue5ObjectVersion => EngineVersion::UE5_0,
            Feature::LargeWorldCoordinates => EngineVersion::UE5_0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_display() {
        for v in EngineVersion::ALL {
            assert_eq!(v.as_str().parse::<EngineVersion>().unwrap(), v);
        }
        assert_eq!(
            "UE5_6".parse::<EngineVersion>().unwrap(),
            EngineVersion::UE5_6
        );
        assert!("5.8".parse::<EngineVersion>().is_err());
    }
}
