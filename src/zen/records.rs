//! The fixed-size records of a Zen package header. Each record's `read` and
//! `write` sit together so its layout is written down once.

use serde::Serialize;

use strum::FromRepr;

use crate::binary::{Reader, Writer};
use crate::error::Result;
use crate::legacy::PackageIndex;
pub(crate) use crate::names::MappedName;

/// What an [`PackageObjectIndex`] refers to (its top two bits).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, FromRepr)]
#[repr(u64)]
pub(crate) enum ObjectIndexKind {
    Export = 0,
    ScriptImport = 1,
    PackageImport = 2,
    Null = 3,
}

/// `FPackageObjectIndex`: a 64-bit reference to an export of this package,
/// a script object (hash of its `/Script/...` path), an export of another
/// package (UE5: imported package index << 32 | public export hash index;
/// UE4: hash of the object's full path), or nothing (all bits set).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PackageObjectIndex(pub u64);

impl Serialize for PackageObjectIndex {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(&self.describe())
    }
}

impl PackageObjectIndex {
    pub(crate) const NULL: PackageObjectIndex = PackageObjectIndex(u64::MAX);
    const INDEX_MASK: u64 = (1u64 << 62) - 1;

    pub fn export(index: u32) -> Self {
        PackageObjectIndex(index as u64)
    }
    /// A script import from the 62-bit hash of its path ([`crate::hash::object_path_hash`]).
    pub fn script_import(path_hash: u64) -> Self {
        PackageObjectIndex((1u64 << 62) | (path_hash & Self::INDEX_MASK))
    }
    /// A UE5 package import: which imported package, which imported public export hash.
    pub(crate) fn package_import(imported_package: u32, export_hash_index: u32) -> Self {
        PackageObjectIndex(
            (2u64 << 62) | ((imported_package as u64) << 32) | export_hash_index as u64,
        )
    }
    /// A UE4 package import (or public export id) from the 62-bit hash of the object's full path.
    pub(crate) fn package_import_from_hash(path_hash: u64) -> Self {
        PackageObjectIndex((2u64 << 62) | (path_hash & Self::INDEX_MASK))
    }
    pub(crate) fn kind(self) -> ObjectIndexKind {
        // Two bits hold every value of the enum.
        ObjectIndexKind::from_repr(self.0 >> 62).unwrap_or(ObjectIndexKind::Null)
    }
    pub(crate) fn is_null(self) -> bool {
        self.kind() == ObjectIndexKind::Null
    }
    /// (imported package index, imported public export hash index) of a UE5 package import.
    pub(crate) fn package_import_parts(self) -> Option<(u32, u32)> {
        (self.kind() == ObjectIndexKind::PackageImport)
            .then_some((((self.0 & Self::INDEX_MASK) >> 32) as u32, self.0 as u32))
    }
    /// A short human description (`export 3`, `script 0x…`, `package 1/4`, `null`).
    pub fn describe(self) -> String {
        match self.kind() {
            ObjectIndexKind::Export => format!("export {}", self.0),
            ObjectIndexKind::ScriptImport => format!("script 0x{:016x}", self.0 & Self::INDEX_MASK),
            ObjectIndexKind::PackageImport => {
                let v = self.0 & Self::INDEX_MASK;
                format!("package 0x{v:016x} ({}/{})", v >> 32, v as u32)
            }
            ObjectIndexKind::Null => "null".to_string(),
        }
    }
    pub(crate) fn read(r: &mut Reader) -> Result<Self> {
        Ok(PackageObjectIndex(r.u64()?))
    }
    pub(crate) fn write(&self, w: &mut Writer) {
        w.u64(self.0);
    }
}

/// `FBulkDataMapEntry` (5.2+): where one bulk-data payload of the package lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct BulkDataMapEntry {
    pub serial_offset: i64,
    pub duplicate_serial_offset: i64,
    pub serial_size: i64,
    pub flags: u32,
    /// Cooked index (the first byte after the flags); the other three are padding.
    pub cooked_index: u8,
    pub(crate) padding: [u8; 3],
}

impl BulkDataMapEntry {
    pub(crate) const SIZE: usize = 32;
    pub(crate) fn read(r: &mut Reader) -> Result<Self> {
        Ok(BulkDataMapEntry {
            serial_offset: r.i64()?,
            duplicate_serial_offset: r.i64()?,
            serial_size: r.i64()?,
            flags: r.u32()?,
            cooked_index: r.u8()?,
            padding: r.array()?,
        })
    }
    pub(crate) fn write(&self, w: &mut Writer) {
        w.i64(self.serial_offset);
        w.i64(self.duplicate_serial_offset);
        w.i64(self.serial_size);
        w.u32(self.flags);
        w.u8(self.cooked_index);
        w.bytes(&self.padding);
    }
}

/// `FExportMapEntry` (72 bytes in every version).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ExportMapEntry {
    /// UE5: offset of the export in the export data (legacy serial offset
    /// minus the legacy header size); UE4: the legacy serial offset itself.
    pub cooked_serial_offset: u64,
    pub cooked_serial_size: u64,
    pub object_name: MappedName,
    pub outer_index: PackageObjectIndex,
    pub class_index: PackageObjectIndex,
    pub super_index: PackageObjectIndex,
    pub template_index: PackageObjectIndex,
    /// UE5: hash of the package-relative path, 0 when not public. UE4: the
    /// export's global import index (hash of its full path), all bits set when not public.
    pub public_export_hash: u64,
    pub object_flags: u32,
    /// 0 none, 1 not for client, 2 not for server.
    pub filter_flags: u8,
    pub(crate) padding: [u8; 3],
}

impl ExportMapEntry {
    pub(crate) const SIZE: usize = 72;
    pub(crate) fn read(r: &mut Reader) -> Result<Self> {
        Ok(ExportMapEntry {
            cooked_serial_offset: r.u64()?,
            cooked_serial_size: r.u64()?,
            object_name: MappedName::read(r)?,
            outer_index: PackageObjectIndex::read(r)?,
            class_index: PackageObjectIndex::read(r)?,
            super_index: PackageObjectIndex::read(r)?,
            template_index: PackageObjectIndex::read(r)?,
            public_export_hash: r.u64()?,
            object_flags: r.u32()?,
            filter_flags: r.u8()?,
            padding: r.array()?,
        })
    }
    pub(crate) fn write(&self, w: &mut Writer) {
        w.u64(self.cooked_serial_offset);
        w.u64(self.cooked_serial_size);
        self.object_name.write(w);
        self.outer_index.write(w);
        self.class_index.write(w);
        self.super_index.write(w);
        self.template_index.write(w);
        w.u64(self.public_export_hash);
        w.u32(self.object_flags);
        w.u8(self.filter_flags);
        w.bytes(&self.padding);
    }
}

/// `FCellExportMapEntry` (Verse cells, 5.6+).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct CellExportMapEntry {
    pub(crate) cooked_serial_offset: u64,
    pub(crate) cooked_serial_layout_size: u64,
    pub(crate) cooked_serial_size: u64,
    pub(crate) cpp_class_info: MappedName,
    pub(crate) public_export_hash: u64,
}

impl CellExportMapEntry {
    pub(crate) const SIZE: usize = 40;
    pub(crate) fn read(r: &mut Reader) -> Result<Self> {
        Ok(CellExportMapEntry {
            cooked_serial_offset: r.u64()?,
            cooked_serial_layout_size: r.u64()?,
            cooked_serial_size: r.u64()?,
            cpp_class_info: MappedName::read(r)?,
            public_export_hash: r.u64()?,
        })
    }
    pub(crate) fn write(&self, w: &mut Writer) {
        w.u64(self.cooked_serial_offset);
        w.u64(self.cooked_serial_layout_size);
        w.u64(self.cooked_serial_size);
        self.cpp_class_info.write(w);
        w.u64(self.public_export_hash);
    }
}

/// The two commands the loader runs per export (`EExportCommandType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, FromRepr)]
#[repr(u32)]
pub enum ExportCommand {
    Create = 0,
    Serialize = 1,
}

/// `FExportBundleEntry`: one command in an export bundle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ExportBundleEntry {
    pub export_index: u32,
    pub command: ExportCommand,
}

impl ExportBundleEntry {
    pub(crate) const SIZE: usize = 8;
    pub(crate) fn read(r: &mut Reader) -> Result<Self> {
        let export_index = r.u32()?;
        let at = r.pos();
        let raw = r.u32()?;
        let command = ExportCommand::from_repr(raw)
            .ok_or_else(|| r.error_at(at, format!("unknown export command type {raw}")))?;
        Ok(ExportBundleEntry {
            export_index,
            command,
        })
    }
    pub(crate) fn write(&self, w: &mut Writer) {
        w.u32(self.export_index);
        w.u32(self.command as u32);
    }
}

/// `FExportBundleHeader` (UE4 and 5.0–5.2). UE5 stores the bundle's offset
/// in the export data; UE4 leaves it implied (bundles are consecutive).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ExportBundleHeader {
    pub serial_offset: Option<u64>,
    pub first_entry_index: u32,
    pub entry_count: u32,
}

impl ExportBundleHeader {
    pub(crate) fn read(r: &mut Reader, with_serial_offset: bool) -> Result<Self> {
        Ok(ExportBundleHeader {
            serial_offset: if with_serial_offset {
                Some(r.u64()?)
            } else {
                None
            },
            first_entry_index: r.u32()?,
            entry_count: r.u32()?,
        })
    }
    pub(crate) fn write(&self, w: &mut Writer, with_serial_offset: bool) {
        if with_serial_offset {
            w.u64(self.serial_offset.unwrap_or(0));
        }
        w.u32(self.first_entry_index);
        w.u32(self.entry_count);
    }
}

/// `FDependencyBundleHeader` (5.3+): one per export; the export's
/// dependencies are `entry_count` consecutive entries from `first_entry_index`,
/// grouped as create-before-create, serialize-before-create,
/// create-before-serialize, serialize-before-serialize.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct DependencyBundleHeader {
    pub first_entry_index: i32,
    pub create_before_create: u32,
    pub serialize_before_create: u32,
    pub create_before_serialize: u32,
    pub serialize_before_serialize: u32,
}

impl DependencyBundleHeader {
    pub(crate) const SIZE: usize = 20;
    pub(crate) fn read(r: &mut Reader) -> Result<Self> {
        // The engine's EntryCount[Create|Serialize (this export)][Create|Serialize (dependency)].
        Ok(DependencyBundleHeader {
            first_entry_index: r.i32()?,
            create_before_create: r.u32()?,
            serialize_before_create: r.u32()?,
            create_before_serialize: r.u32()?,
            serialize_before_serialize: r.u32()?,
        })
    }
    pub(crate) fn write(&self, w: &mut Writer) {
        w.i32(self.first_entry_index);
        w.u32(self.create_before_create);
        w.u32(self.serialize_before_create);
        w.u32(self.create_before_serialize);
        w.u32(self.serialize_before_serialize);
    }
    pub fn entry_count(&self) -> u64 {
        self.create_before_create as u64
            + self.serialize_before_create as u64
            + self.create_before_serialize as u64
            + self.serialize_before_serialize as u64
    }
}

/// `FDependencyBundleEntry` (5.3+): a legacy package index (positive:
/// export + 1, negative: -(import + 1)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct DependencyBundleEntry {
    pub package_index: i32,
}

impl DependencyBundleEntry {
    pub(crate) const SIZE: usize = 4;
    pub(crate) fn new(index: PackageIndex) -> Self {
        DependencyBundleEntry {
            package_index: index.0,
        }
    }
    pub(crate) fn read(r: &mut Reader) -> Result<Self> {
        Ok(DependencyBundleEntry {
            package_index: r.i32()?,
        })
    }
    pub(crate) fn write(&self, w: &mut Writer) {
        w.i32(self.package_index);
    }
}

/// A dependency between two export bundles of this package (5.0–5.2), or
/// in UE4 from a bundle of an imported package to a bundle of this one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct BundleArc {
    pub from_bundle: i32,
    pub to_bundle: i32,
}

impl BundleArc {
    pub(crate) const SIZE: usize = 8;
    pub(crate) fn read(r: &mut Reader) -> Result<Self> {
        Ok(BundleArc {
            from_bundle: r.i32()?,
            to_bundle: r.i32()?,
        })
    }
    pub(crate) fn write(&self, w: &mut Writer) {
        w.i32(self.from_bundle);
        w.i32(self.to_bundle);
    }
}

/// A dependency of one of this package's bundles on an import's command (5.0–5.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct ExternalArc {
    pub from_import: i32,
    pub from_command: ExportCommand,
    pub to_bundle: i32,
}

impl ExternalArc {
    /// The command type is a single byte here (u32 in bundle entries).
    pub(crate) const SIZE: usize = 9;
    pub(crate) fn read(r: &mut Reader) -> Result<Self> {
        let from_import = r.i32()?;
        let at = r.pos();
        let raw = r.u8()?;
        let from_command = ExportCommand::from_repr(raw as u32)
            .ok_or_else(|| r.error_at(at, format!("unknown export command type {raw}")))?;
        Ok(ExternalArc {
            from_import,
            from_command,
            to_bundle: r.i32()?,
        })
    }
    pub(crate) fn write(&self, w: &mut Writer) {
        w.i32(self.from_import);
        w.u8(self.from_command as u8);
        w.i32(self.to_bundle);
    }
}

/// `FZenPackageVersioningInfo`, present when the package is versioned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VersioningInfo {
    pub zen_version: u32,
    pub file_version_ue4: i32,
    pub file_version_ue5: i32,
    pub(crate) licensee_version: i32,
    /// (custom version GUID, version).
    pub(crate) custom_versions: Vec<([u8; 16], i32)>,
}

impl VersioningInfo {
    pub(crate) fn read(r: &mut Reader) -> Result<Self> {
        let zen_version = r.u32()?;
        let file_version_ue4 = r.i32()?;
        let file_version_ue5 = r.i32()?;
        let licensee_version = r.i32()?;
        let count = r.count_i32(20)?;
        let mut custom_versions = Vec::with_capacity(count);
        for _ in 0..count {
            custom_versions.push((r.guid()?, r.i32()?));
        }
        Ok(VersioningInfo {
            zen_version,
            file_version_ue4,
            file_version_ue5,
            licensee_version,
            custom_versions,
        })
    }
    pub(crate) fn write(&self, w: &mut Writer) {
        w.u32(self.zen_version);
        w.i32(self.file_version_ue4);
        w.i32(self.file_version_ue5);
        w.i32(self.licensee_version);
        w.i32(self.custom_versions.len() as i32);
        for (guid, version) in &self.custom_versions {
            w.guid(guid);
            w.i32(*version);
        }
    }
}
