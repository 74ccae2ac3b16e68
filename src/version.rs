//! The engine version table: every engine release zenpak supports (4.26 … 5.8)
//! and every format version that follows from it.
//!
//! UE 5.8 (no engine output in the corpus; facts from public evidence):
//! * no new `EIoStoreTocVersion`, `EIoContainerHeaderVersion` or
//!   `EUnrealEngineObjectUE5Version` over 5.7 — trumank/retoc PR #75 ("Add
//!   UE5_8 engine version", checked against the 5.7 and 5.8 release branches
//!   and a retail 5.8.1 title);
//! * but `FFilePackageStoreEntry::ShaderMapHashes` elements are 8 bytes
//!   instead of a 20-byte `FSHAHash`, without a container header version
//!   bump — trumank/retoc issue #72 (retail 5.8 game, The Sinking City 2:
//!   "failed to fill whole buffer" on the 5.7 layout). See
//!   [`ShaderMapHashLayout`]: written from the engine setting, detected by
//!   size arithmetic when read (`iostore::container_header`);
//! * the companion pak is version 12 (`Utf8PakDirectory`: UTF-8 file names in
//!   the full directory index). The engine's pak reader accepts 12 from 5.7
//!   on (the brief for issue 30; not checked against engine source here), so
//!   only 5.8 is given 12 as the version it writes.
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
    UE5_8,
}

impl EngineVersion {
    /// Every supported release, oldest first.
    pub const ALL: [EngineVersion; 11] = [
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
        EngineVersion::UE5_8,
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
            EngineVersion::UE5_8 => "5.8",
        }
    }

    pub fn is_ue5(self) -> bool {
        self >= EngineVersion::UE5_0
    }

    /// Whether this release has a versioned feature (see [`Feature`]).
    pub(crate) fn has(self, feature: Feature) -> bool {
        self >= feature.since()
    }
}

// ---------------------------------------------------------------------------
// Zen package (src/zen/): layout of the Zen package header per release.
// Facts checked against the engine-written packages in the corpus
// (retoc/UE4.27, UE5.4, UE5.5, UE5.6); 5.0–5.2 and 5.7 follow the public
// readers (retoc, CUE4Parse) as there is no engine output for them here.
// ---------------------------------------------------------------------------

/// Which generation of Zen package header a release writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum ZenLayout {
    /// UE 4.26/4.27: summary with source name and split name map (names,
    /// hashes), export bundle headers before the entries, graph data with
    /// per-package arcs; exports laid out in bundle order.
    Ue4,
    /// UE 5.0–5.2: versioning summary, name batch, imported public export
    /// hashes, graph data (bundle headers with serial offsets, internal and
    /// external arcs); exports laid out in bundle order.
    GraphData,
    /// UE 5.3+: one export bundle, dependency bundles, imported package
    /// names; export data is the `.uexp` unchanged.
    DependencyBundles,
}

impl EngineVersion {
    /// The Zen package header layout of this release.
    pub fn zen_layout(self) -> ZenLayout {
        match self {
            EngineVersion::UE4_26 | EngineVersion::UE4_27 => ZenLayout::Ue4,
            EngineVersion::UE5_0 | EngineVersion::UE5_1 | EngineVersion::UE5_2 => {
                ZenLayout::GraphData
            }
            _ => ZenLayout::DependencyBundles,
        }
    }

    /// `EZenPackageVersion` written in a versioned Zen package's versioning
    /// info (0 Initial, 1 DataResourceTable, 2 ImportedPackageNames,
    /// 3 ExportDependencies).
    pub fn zen_package_version(self) -> u32 {
        match self {
            EngineVersion::UE4_26 | EngineVersion::UE4_27 => 0,
            EngineVersion::UE5_0 | EngineVersion::UE5_1 => 0,
            EngineVersion::UE5_2 => 1,
            _ => 3,
        }
    }

    /// The Zen header carries a bulk-data map (UE5 object version
    /// `DataResources`, 5.2+).
    pub fn zen_has_bulk_data_map(self) -> bool {
        self >= EngineVersion::UE5_2
    }

    /// The bulk-data map size is preceded by a u64 pad count and that many
    /// zero bytes so that the size lands 8-aligned (5.4+).
    pub(crate) fn zen_bulk_data_map_is_aligned(self) -> bool {
        self >= EngineVersion::UE5_4
    }

    /// The value of the summary's `CookedHeaderSize` field for a legacy
    /// header of `total_header_size` bytes. 5.7 renamed it `_Unused` and
    /// writes the size minus 8 (`FPackageStoreOptimizer::FinalizePackageHeader`:
    /// `CookedHeaderSizeOffsetToMinimizePatchSize`, because
    /// `IMPORT_TYPE_HIERARCHIES` made every summary 8 bytes longer and the
    /// value is frozen at its 5.6 size); earlier releases write the size.
    pub(crate) fn zen_cooked_header_size(self, total_header_size: u32) -> u32 {
        if self >= EngineVersion::UE5_7 {
            total_header_size.wrapping_sub(8)
        } else {
            total_header_size
        }
    }

    /// The legacy header size a stored `CookedHeaderSize` value stands for:
    /// the inverse of [`zen_cooked_header_size`](Self::zen_cooked_header_size).
    pub(crate) fn legacy_header_size_from_cooked(self, cooked_header_size: u32) -> u32 {
        if self >= EngineVersion::UE5_7 {
            cooked_header_size.wrapping_add(8)
        } else {
            cooked_header_size
        }
    }

    /// The summary is followed by the cell import/export map offsets
    /// (Verse cells, 5.6+).
    pub(crate) fn zen_has_cell_maps(self) -> bool {
        self >= EngineVersion::UE5_6
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
pub(crate) enum ChunkHashKind {
    /// UE4: SHA-1 of the uncompressed chunk.
    Sha1,
    /// UE5: BLAKE3 of the uncompressed chunk, truncated to 20 bytes (`FIoHash`).
    Blake3_160,
}

/// `EIoStoreTocVersion`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum TocVersion {
    Initial = 1,
    DirectoryIndex = 2,
    PartitionSize = 3,
    PerfectHash = 4,
    PerfectHashWithOverflow = 5,
    OnDemandMetaData = 6,
    RemovedOnDemandMetaData = 7,
    ReplaceIoChunkHashWithIoHash = 8,
}

impl TocVersion {
    pub(crate) fn from_u8(v: u8) -> Option<Self> {
        use TocVersion::*;
        Some(match v {
            1 => Initial,
            2 => DirectoryIndex,
            3 => PartitionSize,
            4 => PerfectHash,
            5 => PerfectHashWithOverflow,
            6 => OnDemandMetaData,
            7 => RemovedOnDemandMetaData,
            8 => ReplaceIoChunkHashWithIoHash,
            _ => return None,
        })
    }

    pub(crate) fn has_perfect_hash(self) -> bool {
        self >= TocVersion::PerfectHash
    }

    pub(crate) fn has_overflow_list(self) -> bool {
        self >= TocVersion::PerfectHashWithOverflow
    }

    pub(crate) fn has_partitions(self) -> bool {
        self >= TocVersion::PartitionSize
    }

    /// Bytes of one chunk meta entry.
    pub fn meta_size(self) -> usize {
        if self >= TocVersion::ReplaceIoChunkHashWithIoHash {
            24
        } else {
            33
        }
    }
}

/// `FPakInfo::EPakVersion`, with the two layouts that share the number 8:
/// UE 4.22 wrote four compression method names (`8a`, and a one-byte method
/// in each entry), 4.23+ five (`8b`). Every layout difference is one
/// predicate below, shared by the reader and the writer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum PakVersion {
    V1,
    V2,
    V3,
    V4,
    V5,
    V6,
    V7,
    V8A,
    V8B,
    V9,
    V10,
    V11,
    V12,
    V13,
    V14,
}

impl PakVersion {
    /// Every version, newest first (the order footers are tried in).
    pub(crate) const ALL: [PakVersion; 15] = [
        PakVersion::V14,
        PakVersion::V13,
        PakVersion::V12,
        PakVersion::V11,
        PakVersion::V10,
        PakVersion::V9,
        PakVersion::V8B,
        PakVersion::V8A,
        PakVersion::V7,
        PakVersion::V6,
        PakVersion::V5,
        PakVersion::V4,
        PakVersion::V3,
        PakVersion::V2,
        PakVersion::V1,
    ];

    /// The number stored in the footer.
    pub(crate) const fn number(self) -> u32 {
        match self {
            PakVersion::V1 => 1,
            PakVersion::V2 => 2,
            PakVersion::V3 => 3,
            PakVersion::V4 => 4,
            PakVersion::V5 => 5,
            PakVersion::V6 => 6,
            PakVersion::V7 => 7,
            PakVersion::V8A | PakVersion::V8B => 8,
            PakVersion::V9 => 9,
            PakVersion::V10 => 10,
            PakVersion::V11 => 11,
            PakVersion::V12 => 12,
            PakVersion::V13 => 13,
            PakVersion::V14 => 14,
        }
    }

    /// `1` … `11`, with `8a`/`8b` for the two layouts of version 8.
    pub fn name(self) -> &'static str {
        match self {
            PakVersion::V1 => "1",
            PakVersion::V2 => "2",
            PakVersion::V3 => "3",
            PakVersion::V4 => "4",
            PakVersion::V5 => "5",
            PakVersion::V6 => "6",
            PakVersion::V7 => "7",
            PakVersion::V8A => "8a",
            PakVersion::V8B => "8b",
            PakVersion::V9 => "9",
            PakVersion::V10 => "10",
            PakVersion::V11 => "11",
            PakVersion::V12 => "12",
            PakVersion::V13 => "13",
            PakVersion::V14 => "14",
        }
    }

    /// `Initial`: entries carry a timestamp.
    pub(crate) const fn has_entry_timestamp(self) -> bool {
        matches!(self, PakVersion::V1)
    }

    /// `CompressionEncryption` (3): entries list their compression blocks
    /// and carry an encryption flag byte and the block size.
    pub(crate) const fn has_block_records(self) -> bool {
        self.number() >= 3
    }

    /// `IndexEncryption` (4): the footer has the encrypted-index flag.
    pub(crate) const fn has_encrypted_index_flag(self) -> bool {
        self.number() >= 4
    }

    /// `RelativeChunkOffsets` (5): block offsets are relative to the entry.
    pub(crate) const fn has_relative_block_offsets(self) -> bool {
        self.number() >= 5
    }

    /// `DeleteRecords` (6): the entry flag byte also marks deleted records.
    pub(crate) const fn has_delete_records(self) -> bool {
        self.number() >= 6
    }

    /// `EncryptionKeyGuid` (7): the footer names the key by GUID.
    pub(crate) const fn has_encryption_key_guid(self) -> bool {
        self.number() >= 7
    }

    /// `FNameBasedCompressionMethod` (8): compression methods are named in
    /// the footer (four names in 8a, five from 8b); before, an entry's method
    /// is a set of `ECompressionFlags`.
    pub(crate) const fn compression_method_names(self) -> usize {
        match self {
            PakVersion::V8A => 4,
            v if v.number() >= 8 => 5,
            _ => 0,
        }
    }

    /// Only 8a stores an entry's method index in one byte.
    pub(crate) const fn has_byte_method_index(self) -> bool {
        matches!(self, PakVersion::V8A)
    }

    /// `FrozenIndex` (9): one more footer byte (a frozen index is not read).
    pub(crate) const fn has_frozen_index_flag(self) -> bool {
        matches!(self, PakVersion::V9)
    }

    /// `PathHashIndex` (10): primary index with encoded entries, path-hash
    /// index and full directory index.
    pub(crate) const fn has_path_hash_index(self) -> bool {
        self.number() >= 10
    }

    /// `Utf8PakDirectory` (12): the full directory index stores file names
    /// as `FUtf8String`s (directory names stay `FString`s).
    pub(crate) const fn has_utf8_file_names(self) -> bool {
        self.number() >= 12
    }

    /// `SortedDirectoryIndex` (13): the full directory index may be stored
    /// flat (`pak::index::FlatDirectoryIndex`, recognised by its magic).
    pub(crate) const fn may_have_flat_directory_index(self) -> bool {
        self.number() >= 13
    }

    /// `PakchunkIndex` (14): the footer ends with the pak's chunk index.
    pub const fn has_pakchunk_index(self) -> bool {
        self.number() >= 14
    }

    /// Bytes of the footer.
    pub const fn footer_size(self) -> usize {
        let mut size = 4 + 4 + 8 + 8 + 20;
        if self.has_encryption_key_guid() {
            size += 16;
        }
        if self.has_encrypted_index_flag() {
            size += 1;
        }
        if self.has_frozen_index_flag() {
            size += 1;
        }
        if self.has_pakchunk_index() {
            size += 4;
        }
        size + 32 * self.compression_method_names()
    }
}

impl std::fmt::Display for PakVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl PartialEq<u32> for PakVersion {
    fn eq(&self, other: &u32) -> bool {
        self.number() == *other
    }
}

/// The element of `FFilePackageStoreEntry::ShaderMapHashes`: which one a
/// header uses is not told by its version (5.6, 5.7 and 5.8 all write
/// `SoftPackageReferencesOffset`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum ShaderMapHashLayout {
    /// 20-byte `FSHAHash` (UE 5.0 … 5.7).
    Sha1,
    /// 8-byte hash (UE 5.8; retoc issue #72, a retail 5.8 game).
    Hash64,
}

impl ShaderMapHashLayout {
    /// Bytes of one element.
    pub(crate) const fn element_size(self) -> usize {
        match self {
            ShaderMapHashLayout::Sha1 => 20,
            ShaderMapHashLayout::Hash64 => 8,
        }
    }
}

/// `EIoContainerHeaderVersion`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, strum::FromRepr)]
#[repr(i32)]
pub enum ContainerHeaderVersion {
    /// Some UE4 games: 16-byte store entries without bundle size or load order.
    PreInitial = -1,
    /// UE 4.26 and 4.27.
    Initial = 0,
    /// UE 5.0.
    LocalizedPackages = 1,
    /// UE 5.1, 5.2.
    OptionalSegmentPackages = 2,
    /// UE 5.3, 5.4.
    NoExportInfo = 3,
    /// UE 5.5.
    SoftPackageReferences = 4,
    /// UE 5.6, 5.7, 5.8 (5.8 with 8-byte shader map hashes, see
    /// [`ShaderMapHashLayout`]).
    SoftPackageReferencesOffset = 5,
}

impl ContainerHeaderVersion {
    pub(crate) fn from_i32(value: i32) -> Option<Self> {
        Self::from_repr(value)
    }
}

impl EngineVersion {
    /// `EIoStoreTocVersion` of the `.utoc` this release writes, as its number
    /// (2 `DirectoryIndex`, 3 `PartitionSize`, 5 `PerfectHashWithOverflow`,
    /// 6 `OnDemandMetaData`, 8 `ReplaceIoChunkHashWithIoHash`).
    pub fn toc_version(self) -> TocVersion {
        match self {
            EngineVersion::UE4_26 => TocVersion::DirectoryIndex,
            EngineVersion::UE4_27 => TocVersion::PartitionSize,
            EngineVersion::UE5_0
            | EngineVersion::UE5_1
            | EngineVersion::UE5_2
            | EngineVersion::UE5_3 => TocVersion::PerfectHashWithOverflow,
            EngineVersion::UE5_4 => TocVersion::OnDemandMetaData,
            EngineVersion::UE5_5
            | EngineVersion::UE5_6
            | EngineVersion::UE5_7
            | EngineVersion::UE5_8 => TocVersion::ReplaceIoChunkHashWithIoHash,
        }
    }

    /// `EIoContainerHeaderVersion` of the container header chunk.
    pub fn container_header_version(self) -> ContainerHeaderVersion {
        use ContainerHeaderVersion::*;
        match self {
            EngineVersion::UE4_26 | EngineVersion::UE4_27 => Initial,
            EngineVersion::UE5_0 => LocalizedPackages,
            EngineVersion::UE5_1 | EngineVersion::UE5_2 => OptionalSegmentPackages,
            EngineVersion::UE5_3 | EngineVersion::UE5_4 => NoExportInfo,
            EngineVersion::UE5_5 => SoftPackageReferences,
            EngineVersion::UE5_6 | EngineVersion::UE5_7 | EngineVersion::UE5_8 => {
                SoftPackageReferencesOffset
            }
        }
    }

    /// The element layout of `FFilePackageStoreEntry::ShaderMapHashes` (UE5
    /// headers): 20-byte `FSHAHash` up to 5.7, 8 bytes from 5.8 (retoc
    /// issue #72) under the same container header version.
    pub(crate) fn shader_map_hash_layout(self) -> ShaderMapHashLayout {
        if self >= EngineVersion::UE5_8 {
            ShaderMapHashLayout::Hash64
        } else {
            ShaderMapHashLayout::Sha1
        }
    }

    /// Whether chunk types use UE5's `EIoChunkType` numbering (UE4's differs).
    pub(crate) fn uses_ue5_chunk_types(self) -> bool {
        self.is_ue5()
    }

    /// The hash stored in a chunk's TOC meta entry.
    pub(crate) fn chunk_hash_kind(self) -> ChunkHashKind {
        if self.is_ue5() {
            ChunkHashKind::Blake3_160
        } else {
            ChunkHashKind::Sha1
        }
    }

    /// `EPakFileVersion` of the companion `.pak`: 4.26 … 5.7 write
    /// `Fnv64BugFix` (11), with the path-hash and full-directory indexes;
    /// 5.8 writes `Utf8PakDirectory` (12: UTF-8 file names in the full
    /// directory index), which the engine's readers accept from 5.7 on.
    pub fn pak_version(self) -> PakVersion {
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
            | EngineVersion::UE5_7 => PakVersion::V11,
            EngineVersion::UE5_8 => PakVersion::V12,
        }
    }
}

/// Features that appear in one release and stay in all later ones.
/// Each names the first release that has it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Feature {
    /// Large world coordinates: vectors and bounds are doubles.
    LargeWorldCoordinates,
}

impl Feature {
    pub(crate) fn since(self) -> EngineVersion {
        match self {
            Feature::LargeWorldCoordinates => EngineVersion::UE5_0,
        }
    }
}

// ---------------------------------------------------------------------------
// Legacy package format (src/legacy): file versions written by each release.
// ---------------------------------------------------------------------------

/// `EUnrealEngineObjectUE4Version` values the legacy package layout branches on.
pub(crate) mod ue4_object_version {
    pub(crate) const WORLD_LEVEL_INFO: i32 = 224;
    pub(crate) const LOAD_FOR_EDITOR_GAME: i32 = 365;
    pub(crate) const ADD_STRING_ASSET_REFERENCES_MAP: i32 = 384;
    pub(crate) const SERIALIZE_TEXT_IN_PACKAGES: i32 = 459;
    pub(crate) const COOKED_ASSETS_IN_EDITOR_SUPPORT: i32 = 485;
    pub(crate) const NAME_HASHES_SERIALIZED: i32 = 504;
    pub(crate) const PRELOAD_DEPENDENCIES_IN_COOKED_EXPORTS: i32 = 507;
    pub(crate) const TEMPLATE_INDEX_IN_COOKED_EXPORTS: i32 = 508;
    pub(crate) const ADDED_SEARCHABLE_NAMES: i32 = 510;
    pub(crate) const SIXTY_FOUR_BIT_EXPORTMAP_SERIALSIZES: i32 = 511;
    pub(crate) const ADDED_PACKAGE_SUMMARY_LOCALIZATION_ID: i32 = 516;
    pub(crate) const ADDED_PACKAGE_OWNER: i32 = 518;
    pub(crate) const NON_OUTER_PACKAGE_IMPORT: i32 = 520;
    /// The last UE4 object version; every release from 4.26 on writes it.
    pub(crate) const CORRECT_LICENSEE_FLAG: i32 = 522;
}

/// `EUnrealEngineObjectUE5Version` values the legacy package layout branches on.
pub mod ue5_object_version {
    pub(crate) const NAMES_REFERENCED_FROM_EXPORT_DATA: i32 = 1001;
    pub(crate) const PAYLOAD_TOC: i32 = 1002;
    pub(crate) const OPTIONAL_RESOURCES: i32 = 1003;
    pub(crate) const LARGE_WORLD_COORDINATES: i32 = 1004;
    pub const REMOVE_OBJECT_EXPORT_PACKAGE_GUID: i32 = 1005;
    pub const TRACK_OBJECT_EXPORT_IS_INHERITED: i32 = 1006;
    pub(crate) const ADD_SOFTOBJECTPATH_LIST: i32 = 1008;
    pub(crate) const DATA_RESOURCES: i32 = 1009;
    pub(crate) const SCRIPT_SERIALIZATION_OFFSET: i32 = 1010;
    pub(crate) const PROPERTY_TAG_COMPLETE_TYPE_NAME: i32 = 1012;
    pub(crate) const ASSETREGISTRY_PACKAGEBUILDDEPENDENCIES: i32 = 1013;
    pub(crate) const METADATA_SERIALIZATION_OFFSET: i32 = 1014;
    pub(crate) const VERSE_CELLS: i32 = 1015;
    pub(crate) const PACKAGE_SAVED_HASH: i32 = 1016;
    pub(crate) const OS_SUB_OBJECT_SHADOW_SERIALIZATION: i32 = 1017;
    pub(crate) const IMPORT_TYPE_HIERARCHIES: i32 = 1018;
}

/// The object versions a release writes into (or assumes for) a legacy package summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct LegacyFileVersions {
    /// `LegacyFileVersion`: -7 (UE4), -8 (UE5 versions added), -9 (5.6+).
    pub(crate) legacy: i32,
    pub ue4: i32,
    /// 0 for UE4 releases (the field is absent from their summaries).
    pub ue5: i32,
}

impl EngineVersion {
    /// The legacy package file versions of this release. Unversioned cooked
    /// packages (all versions 0 in the summary) are read with these.
    ///
    /// The corpus confirms the legacy version per release (4.27: -7; 5.1-5.5:
    /// -8; 5.6, 5.7: -9), that 5.5 summaries have neither the saved hash nor
    /// the Verse cell counts (so 5.5 < 1014) and that 5.6 ones have the saved
    /// hash (>= 1016). The UE5 values are those of each release's
    /// `EUnrealEngineObjectUE5Version::AUTOMATIC_VERSION`.
    pub fn legacy_file_versions(self) -> LegacyFileVersions {
        use ue4_object_version as ue4;
        use ue5_object_version as ue5;
        let (legacy, ue5) = match self {
            EngineVersion::UE4_26 | EngineVersion::UE4_27 => (-7, 0),
            EngineVersion::UE5_0 => (-8, ue5::LARGE_WORLD_COORDINATES),
            EngineVersion::UE5_1 => (-8, ue5::ADD_SOFTOBJECTPATH_LIST),
            EngineVersion::UE5_2 => (-8, ue5::DATA_RESOURCES),
            EngineVersion::UE5_3 => (-8, ue5::DATA_RESOURCES),
            EngineVersion::UE5_4 => (-8, ue5::PROPERTY_TAG_COMPLETE_TYPE_NAME),
            EngineVersion::UE5_5 => (-8, ue5::ASSETREGISTRY_PACKAGEBUILDDEPENDENCIES),
            EngineVersion::UE5_6 => (-9, ue5::OS_SUB_OBJECT_SHADOW_SERIALIZATION),
            // 5.8 adds no UE5 object version (retoc PR #75).
            EngineVersion::UE5_7 | EngineVersion::UE5_8 => (-9, ue5::IMPORT_TYPE_HIERARCHIES),
        };
        LegacyFileVersions {
            legacy,
            ue4: ue4::CORRECT_LICENSEE_FLAG,
            ue5,
        }
    }

    /// The `FObjectDataResource::EVersion` a cook of this release writes in
    /// the data resource table (5.2+): 1 (`Initial`) up to 5.4, 2
    /// (`AddedCookedIndex`) from 5.5. Corpus: the 5.3 and 5.4 tables say 1,
    /// every 5.5, 5.6 and 5.7 table says 2.
    pub(crate) fn legacy_data_resource_version(self) -> u32 {
        if self >= EngineVersion::UE5_5 {
            2
        } else {
            1
        }
    }
}

// ---------------------------------------------------------------------------
// Property data and native export data (src/properties, src/fixups).
// ---------------------------------------------------------------------------

impl EngineVersion {
    /// `FSoftObjectPath` stores its asset as `FTopLevelAssetPath` (package
    /// FName + asset FName) from 5.1 (`FSOFTOBJECTPATH_REMOVE_ASSET_PATH_FNAMES`);
    /// before, one FName. A sub-path string follows in both.
    pub(crate) fn soft_object_path_is_top_level_asset_path(self) -> bool {
        self >= EngineVersion::UE5_1
    }

    /// Tagged property tags carry the complete type name tree and a flags
    /// byte from 5.4 (`PROPERTY_TAG_COMPLETE_TYPE_NAME`).
    pub(crate) fn property_tags_have_complete_type_names(self) -> bool {
        self >= EngineVersion::UE5_4
    }

    /// A tagged (versioned) object property block starts with a class
    /// serialization control byte from 5.4
    /// (`PROPERTY_TAG_EXTENSION_AND_OVERRIDABLE_SERIALIZATION`); its bit 0x02
    /// adds an overridable-operation byte. Unversioned blocks have neither.
    pub(crate) fn tagged_objects_have_serialization_control(self) -> bool {
        self >= EngineVersion::UE5_4
    }

    /// Bytes of one cooked `FSkeletalMaterial` in a SkeletalMesh's native data:
    /// `MaterialInterface` (FPackageIndex 4), `MaterialSlotName` (FName 8), a
    /// 32-bit bool saying whether `ImportedMaterialSlotName` follows (false
    /// when cooked: 4), `FMeshUVChannelInfo` (two 32-bit bools + four floats:
    /// 24) = 40; from 5.6 an `OverlayMaterialInterface` FPackageIndex follows
    /// (`FFortniteMainBranchObjectVersion::MeshMaterialSlotOverlayMaterialAdded`,
    /// first reached by 5.6's custom version) = 44.
    pub fn skeletal_material_size(self) -> usize {
        if self.skeletal_material_has_overlay() {
            44
        } else {
            40
        }
    }

    /// Whether `FSkeletalMaterial` ends with `OverlayMaterialInterface` (5.6+).
    pub(crate) fn skeletal_material_has_overlay(self) -> bool {
        self >= EngineVersion::UE5_6
    }

    /// Bytes of one cooked `FStaticMaterial` at the end of a StaticMesh's
    /// native data: `MaterialInterface` (4), `MaterialSlotName` (8),
    /// `FMeshUVChannelInfo` (24) = 36; from 5.6 an `OverlayMaterialInterface`
    /// FPackageIndex follows = 40 (the same custom version as
    /// [`skeletal_material_has_overlay`](Self::skeletal_material_has_overlay)).
    /// Checked on the corpus's `SM_Cube` (5.5: 36, 5.6: 40) and `SM_BlueCube` (5.4: 36).
    pub(crate) fn static_material_size(self) -> usize {
        if self.skeletal_material_has_overlay() {
            40
        } else {
            36
        }
    }

    /// `FStaticMeshRenderData` keeps `bLODsShareStaticLighting` in a flags
    /// byte from 5.6 (before: a 32-bit bool); corpus `SM_Cube` 5.5 vs 5.6.
    pub(crate) fn static_mesh_render_flags_are_a_byte(self) -> bool {
        self >= EngineVersion::UE5_6
    }

    /// `FStaticMeshRenderData` ends with an `FStripDataFlags` (2 bytes) after
    /// the screen sizes from 5.4 (corpus `SM_BlueCube` 5.4, `SM_Cube` 5.5/5.6).
    pub(crate) fn static_mesh_render_data_ends_with_strip_flags(self) -> bool {
        self >= EngineVersion::UE5_4
    }

    /// Bytes of one engine "real" (`FVector` component etc.): doubles with
    /// large world coordinates.
    pub(crate) fn real_size(self) -> usize {
        if self.has(Feature::LargeWorldCoordinates) {
            8
        } else {
            4
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
        assert_eq!(
            "5.8".parse::<EngineVersion>().unwrap(),
            EngineVersion::UE5_8
        );
        assert!("5.9".parse::<EngineVersion>().is_err());
    }
}
