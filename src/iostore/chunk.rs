//! Chunk ids (`FIoChunkId`): 12 bytes — a 64-bit id (usually a package id
//! or the container id), a 16-bit index stored big-endian, one padding
//! byte and the chunk type. The type's numbering differs between UE4 and
//! UE5 ([`ChunkType::to_raw`]).

use crate::legacy::BulkKind;
use serde::Serialize;

use crate::version::EngineVersion;

/// What a chunk holds. Names follow UE5's `EIoChunkType`; the UE4-only
/// kinds are kept so UE4 containers can be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum ChunkType {
    Invalid,
    /// UE4 only.
    InstallManifest,
    /// A package: Zen header followed by its exports.
    ExportBundleData,
    BulkData,
    OptionalBulkData,
    MemoryMappedBulkData,
    /// UE4 only (global container).
    LoaderGlobalMeta,
    /// UE4 only (global container).
    LoaderInitialLoadMeta,
    /// UE4 only (global container).
    LoaderGlobalNames,
    /// UE4 only (global container).
    LoaderGlobalNameHashes,
    /// UE5 only (global container).
    ScriptObjects,
    ContainerHeader,
    ExternalFile,
    ShaderCodeLibrary,
    ShaderCode,
    PackageStoreEntry,
    DerivedData,
    EditorDerivedData,
    PackageResource,
    /// A type number this table does not know, kept as read.
    Unknown(u8),
}

impl ChunkType {
    /// The chunk type that holds a bulk companion's data: the one table
    /// between `.ubulk`/`.uptnl`/`.m.ubulk` and chunk types.
    pub fn of_bulk(kind: BulkKind) -> ChunkType {
        match kind {
            BulkKind::Bulk => ChunkType::BulkData,
            BulkKind::Optional => ChunkType::OptionalBulkData,
            BulkKind::MemoryMapped => ChunkType::MemoryMappedBulkData,
        }
    }

    /// The bulk companion kind a chunk type holds, if any.
    pub(crate) fn bulk_kind(self) -> Option<BulkKind> {
        BulkKind::ALL
            .into_iter()
            .find(|&k| ChunkType::of_bulk(k) == self)
    }

    /// The stored type byte for an engine version.
    pub(crate) fn to_raw(self, engine: EngineVersion) -> u8 {
        use ChunkType::*;
        if engine.uses_ue5_chunk_types() {
            match self {
                Invalid => 0,
                ExportBundleData => 1,
                BulkData => 2,
                OptionalBulkData => 3,
                MemoryMappedBulkData => 4,
                ScriptObjects => 5,
                ContainerHeader => 6,
                ExternalFile => 7,
                ShaderCodeLibrary => 8,
                ShaderCode => 9,
                PackageStoreEntry => 10,
                DerivedData => 11,
                EditorDerivedData => 12,
                PackageResource => 13,
                Unknown(v) => v,
                InstallManifest
                | LoaderGlobalMeta
                | LoaderInitialLoadMeta
                | LoaderGlobalNames
                | LoaderGlobalNameHashes => 0,
            }
        } else {
            match self {
                Invalid => 0,
                InstallManifest => 1,
                ExportBundleData => 2,
                BulkData => 3,
                OptionalBulkData => 4,
                MemoryMappedBulkData => 5,
                LoaderGlobalMeta => 6,
                LoaderInitialLoadMeta => 7,
                LoaderGlobalNames => 8,
                LoaderGlobalNameHashes => 9,
                ContainerHeader => 10,
                Unknown(v) => v,
                _ => 0,
            }
        }
    }

    /// The type a stored byte means for an engine generation.
    pub(crate) fn from_raw(raw: u8, ue5: bool) -> Self {
        use ChunkType::*;
        if ue5 {
            match raw {
                0 => Invalid,
                1 => ExportBundleData,
                2 => BulkData,
                3 => OptionalBulkData,
                4 => MemoryMappedBulkData,
                5 => ScriptObjects,
                6 => ContainerHeader,
                7 => ExternalFile,
                8 => ShaderCodeLibrary,
                9 => ShaderCode,
                10 => PackageStoreEntry,
                11 => DerivedData,
                12 => EditorDerivedData,
                13 => PackageResource,
                v => Unknown(v),
            }
        } else {
            match raw {
                0 => Invalid,
                1 => InstallManifest,
                2 => ExportBundleData,
                3 => BulkData,
                4 => OptionalBulkData,
                5 => MemoryMappedBulkData,
                6 => LoaderGlobalMeta,
                7 => LoaderInitialLoadMeta,
                8 => LoaderGlobalNames,
                9 => LoaderGlobalNameHashes,
                10 => ContainerHeader,
                v => Unknown(v),
            }
        }
    }
}

/// The 12 stored bytes of a chunk id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ChunkId(pub [u8; 12]);

impl ChunkId {
    /// Builds an id the way the engine's `CreateIoChunkId` does.
    pub fn new(id: u64, index: u16, chunk_type: ChunkType, engine: EngineVersion) -> Self {
        let mut bytes = [0u8; 12];
        bytes[..8].copy_from_slice(&id.to_le_bytes());
        bytes[8..10].copy_from_slice(&index.to_be_bytes());
        bytes[11] = chunk_type.to_raw(engine);
        ChunkId(bytes)
    }

    /// A package's export bundle chunk.
    pub fn package_data(package_id: u64, engine: EngineVersion) -> Self {
        ChunkId::new(package_id, 0, ChunkType::ExportBundleData, engine)
    }

    /// The container header chunk of a container.
    pub(crate) fn container_header(container_id: u64, engine: EngineVersion) -> Self {
        ChunkId::new(container_id, 0, ChunkType::ContainerHeader, engine)
    }

    pub fn id(&self) -> u64 {
        u64::from_le_bytes(self.0[..8].try_into().unwrap_or_default())
    }

    pub(crate) fn index(&self) -> u16 {
        u16::from_be_bytes([self.0[8], self.0[9]])
    }

    pub fn raw_type(&self) -> u8 {
        self.0[11]
    }

    pub fn chunk_type(&self, ue5: bool) -> ChunkType {
        ChunkType::from_raw(self.raw_type(), ue5)
    }

    pub fn to_hex(&self) -> String {
        crate::hash::hex(&self.0)
    }
}

/// Incremental chunk hash of the engine's kind. Lives on the stack of the
/// read or write that hashes one chunk: not boxed, which for every chunk
/// read would be an allocation large enough to make the allocator tidy up.
#[allow(clippy::large_enum_variant)]
pub(crate) enum ChunkHasher {
    Sha1(sha1::Sha1),
    Blake3(blake3::Hasher),
}

impl ChunkHasher {
    pub(crate) fn new(kind: crate::version::ChunkHashKind) -> Self {
        match kind {
            crate::version::ChunkHashKind::Sha1 => {
                ChunkHasher::Sha1(<sha1::Sha1 as sha1::Digest>::new())
            }
            crate::version::ChunkHashKind::Blake3_160 => ChunkHasher::Blake3(blake3::Hasher::new()),
        }
    }

    pub(crate) fn update(&mut self, data: &[u8]) {
        match self {
            ChunkHasher::Sha1(h) => sha1::Digest::update(h, data),
            ChunkHasher::Blake3(h) => {
                h.update(data);
            }
        }
    }

    pub(crate) fn finish(self) -> [u8; 20] {
        match self {
            ChunkHasher::Sha1(h) => sha1::Digest::finalize(h).into(),
            ChunkHasher::Blake3(h) => {
                let full = h.finalize();
                let mut out = [0; 20];
                out.copy_from_slice(&full.as_bytes()[..20]);
                out
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_and_numbering() {
        let id = ChunkId::new(
            0x0102_0304_0506_0708,
            0x0a0b,
            ChunkType::BulkData,
            EngineVersion::UE5_3,
        );
        assert_eq!(id.0, [8, 7, 6, 5, 4, 3, 2, 1, 0x0a, 0x0b, 0, 2]);
        let ue4 = ChunkId::new(1, 0, ChunkType::ContainerHeader, EngineVersion::UE4_27);
        assert_eq!(ue4.raw_type(), 10);
        assert_eq!(ue4.chunk_type(false), ChunkType::ContainerHeader);
        assert_eq!(
            ChunkId::container_header(1, EngineVersion::UE5_6).raw_type(),
            6
        );
    }
}
