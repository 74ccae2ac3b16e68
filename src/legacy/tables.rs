//! The records of a legacy package's tables: import map entries
//! (`FObjectImport`), export map entries (`FObjectExport`), soft object
//! paths and data resources (`FObjectDataResource`), each with the file
//! versions that add or remove fields.

use serde::Serialize;

use crate::binary::{Reader, Writer};
use crate::error::Result;
use crate::version::{ue4_object_version as ue4, ue5_object_version as ue5};

use super::names::{EngineString, FName, PackageIndex};
use super::summary::FileVersions;

/// What the reader of a table entry needs to know besides the bytes.
#[derive(Debug, Clone, Copy)]
pub struct TableContext {
    pub(crate) versions: FileVersions,
    pub(crate) filter_editor_only: bool,
    pub(crate) unversioned_properties: bool,
    pub(crate) name_count: usize,
    pub(crate) import_count: usize,
    pub(crate) export_count: usize,
}

impl TableContext {
    fn index(&self, r: &mut Reader) -> Result<PackageIndex> {
        PackageIndex::read_checked(r, self.import_count, self.export_count)
    }
    fn name(&self, r: &mut Reader) -> Result<FName> {
        FName::read(r, self.name_count)
    }
    fn import_has_package_name(&self) -> bool {
        self.versions.ue4_at_least(ue4::NON_OUTER_PACKAGE_IMPORT) && !self.filter_editor_only
    }
    fn export_has_script_offsets(&self) -> bool {
        !self.unversioned_properties && self.versions.ue5_at_least(ue5::SCRIPT_SERIALIZATION_OFFSET)
    }
    /// `bImportOptional` on imports and `bGeneratePublicHash` on exports.
    fn has_optional_resources(&self) -> bool {
        self.versions.has_optional_resources()
    }
    fn export_has_template_index(&self) -> bool {
        self.versions
            .ue4_at_least(ue4::TEMPLATE_INDEX_IN_COOKED_EXPORTS)
    }
    fn export_has_64_bit_serial_range(&self) -> bool {
        self.versions
            .ue4_at_least(ue4::SIXTY_FOUR_BIT_EXPORTMAP_SERIALSIZES)
    }
    fn export_has_package_guid(&self) -> bool {
        self.versions.export_has_package_guid()
    }
    fn export_has_inherited_instance(&self) -> bool {
        self.versions.export_has_inherited_instance()
    }
    fn export_has_not_always_loaded_for_editor_game(&self) -> bool {
        self.versions.ue4_at_least(ue4::LOAD_FOR_EDITOR_GAME)
    }
    fn export_has_is_asset(&self) -> bool {
        self.versions
            .ue4_at_least(ue4::COOKED_ASSETS_IN_EDITOR_SUPPORT)
    }
}

/// `FObjectImport`: an object this package uses from another package (or a
/// package itself, when `outer_index` is null).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ObjectImport {
    pub class_package: FName,
    pub class_name: FName,
    pub outer_index: PackageIndex,
    pub object_name: FName,
    /// Present from UE4 `NON_OUTER_PACKAGE_IMPORT` when editor-only data is
    /// kept; cooked packages (4.26-5.7 in the corpus) do not carry it.
    pub package_name: Option<FName>,
    /// Present from UE5 `OPTIONAL_RESOURCES`.
    pub import_optional: Option<bool>,
}

impl ObjectImport {
    pub(crate) fn read(r: &mut Reader, cx: &TableContext) -> Result<Self> {
        Ok(ObjectImport {
            class_package: cx.name(r)?,
            class_name: cx.name(r)?,
            outer_index: cx.index(r)?,
            object_name: cx.name(r)?,
            package_name: if cx.import_has_package_name() {
                Some(cx.name(r)?)
            } else {
                None
            },
            import_optional: if cx.has_optional_resources() {
                Some(r.bool32()?)
            } else {
                None
            },
        })
    }

    pub(crate) fn write(&self, w: &mut Writer, cx: &TableContext) {
        self.class_package.write(w);
        self.class_name.write(w);
        self.outer_index.write(w);
        self.object_name.write(w);
        if cx.import_has_package_name() {
            self.package_name.unwrap_or(self.object_name).write(w);
        }
        if cx.has_optional_resources() {
            w.bool32(self.import_optional.unwrap_or(false));
        }
    }
}

/// `FObjectExport`: an object this package defines. `serial_offset` is a
/// position in the combined `.uasset` + `.uexp` stream.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ObjectExport {
    pub class_index: PackageIndex,
    pub super_index: PackageIndex,
    /// Present from UE4 `TemplateIndex_IN_COOKED_EXPORTS`.
    pub template_index: PackageIndex,
    pub outer_index: PackageIndex,
    pub object_name: FName,
    pub object_flags: u32,
    pub serial_size: i64,
    pub serial_offset: i64,
    pub forced_export: bool,
    pub not_for_client: bool,
    pub not_for_server: bool,
    /// Before UE5 `REMOVE_OBJECT_EXPORT_PACKAGE_GUID`.
    #[serde(serialize_with = "crate::legacy::serialize_opt_hex")]
    pub package_guid: Option<[u8; 16]>,
    /// From UE5 `TRACK_OBJECT_EXPORT_IS_INHERITED`.
    pub is_inherited_instance: Option<bool>,
    pub package_flags: u32,
    pub not_always_loaded_for_editor_game: bool,
    pub is_asset: bool,
    /// From UE5 `OPTIONAL_RESOURCES`: the Zen loader gives the export a public hash.
    pub generate_public_hash: Option<bool>,
    /// Index of this export's first entry in the preload dependency list (-1: none).
    pub first_export_dependency: i32,
    pub serialization_before_serialization_dependencies: i32,
    pub create_before_serialization_dependencies: i32,
    pub serialization_before_create_dependencies: i32,
    pub create_before_create_dependencies: i32,
    /// From UE5 `SCRIPT_SERIALIZATION_OFFSET`, only in versioned-property packages:
    /// where the tagged property block starts and ends, relative to the export.
    pub script_serialization_start_offset: Option<i64>,
    pub script_serialization_end_offset: Option<i64>,
}

impl ObjectExport {
    pub(crate) fn read(r: &mut Reader, cx: &TableContext) -> Result<Self> {
        let class_index = cx.index(r)?;
        let super_index = cx.index(r)?;
        let template_index = if cx.export_has_template_index() {
            cx.index(r)?
        } else {
            PackageIndex::NULL
        };
        let outer_index = cx.index(r)?;
        let object_name = cx.name(r)?;
        let object_flags = r.u32()?;
        let (serial_size, serial_offset) = if cx.export_has_64_bit_serial_range() {
            (r.i64()?, r.i64()?)
        } else {
            (r.i32()? as i64, r.i32()? as i64)
        };
        let forced_export = r.bool32()?;
        let not_for_client = r.bool32()?;
        let not_for_server = r.bool32()?;
        let package_guid = if cx.export_has_package_guid() {
            Some(r.guid()?)
        } else {
            None
        };
        let is_inherited_instance = if cx.export_has_inherited_instance() {
            Some(r.bool32()?)
        } else {
            None
        };
        let package_flags = r.u32()?;
        let not_always_loaded_for_editor_game = if cx.export_has_not_always_loaded_for_editor_game()
        {
            r.bool32()?
        } else {
            true
        };
        let is_asset = if cx.export_has_is_asset() {
            r.bool32()?
        } else {
            false
        };
        let generate_public_hash = if cx.has_optional_resources() {
            Some(r.bool32()?)
        } else {
            None
        };
        let deps = if cx.versions.has_preload_dependencies() {
            [r.i32()?, r.i32()?, r.i32()?, r.i32()?, r.i32()?]
        } else {
            [-1, 0, 0, 0, 0]
        };
        let (script_serialization_start_offset, script_serialization_end_offset) =
            if cx.export_has_script_offsets() {
                (Some(r.i64()?), Some(r.i64()?))
            } else {
                (None, None)
            };
        Ok(ObjectExport {
            class_index,
            super_index,
            template_index,
            outer_index,
            object_name,
            object_flags,
            serial_size,
            serial_offset,
            forced_export,
            not_for_client,
            not_for_server,
            package_guid,
            is_inherited_instance,
            package_flags,
            not_always_loaded_for_editor_game,
            is_asset,
            generate_public_hash,
            first_export_dependency: deps[0],
            serialization_before_serialization_dependencies: deps[1],
            create_before_serialization_dependencies: deps[2],
            serialization_before_create_dependencies: deps[3],
            create_before_create_dependencies: deps[4],
            script_serialization_start_offset,
            script_serialization_end_offset,
        })
    }

    pub(crate) fn write(&self, w: &mut Writer, cx: &TableContext) {
        self.class_index.write(w);
        self.super_index.write(w);
        if cx.export_has_template_index() {
            self.template_index.write(w);
        }
        self.outer_index.write(w);
        self.object_name.write(w);
        w.u32(self.object_flags);
        if cx.export_has_64_bit_serial_range() {
            w.i64(self.serial_size);
            w.i64(self.serial_offset);
        } else {
            w.i32(self.serial_size as i32);
            w.i32(self.serial_offset as i32);
        }
        w.bool32(self.forced_export);
        w.bool32(self.not_for_client);
        w.bool32(self.not_for_server);
        if cx.export_has_package_guid() {
            w.guid(&self.package_guid.unwrap_or([0; 16]));
        }
        if cx.export_has_inherited_instance() {
            w.bool32(self.is_inherited_instance.unwrap_or(false));
        }
        w.u32(self.package_flags);
        if cx.export_has_not_always_loaded_for_editor_game() {
            w.bool32(self.not_always_loaded_for_editor_game);
        }
        if cx.export_has_is_asset() {
            w.bool32(self.is_asset);
        }
        if cx.has_optional_resources() {
            w.bool32(self.generate_public_hash.unwrap_or(false));
        }
        if cx.versions.has_preload_dependencies() {
            w.i32(self.first_export_dependency);
            w.i32(self.serialization_before_serialization_dependencies);
            w.i32(self.create_before_serialization_dependencies);
            w.i32(self.serialization_before_create_dependencies);
            w.i32(self.create_before_create_dependencies);
        }
        if cx.export_has_script_offsets() {
            w.i64(self.script_serialization_start_offset.unwrap_or(0));
            w.i64(self.script_serialization_end_offset.unwrap_or(0));
        }
    }

    /// The number of preload dependencies this export lists (the four counts summed).
    pub(crate) fn preload_dependency_total(&self) -> i64 {
        self.serialization_before_serialization_dependencies as i64
            + self.create_before_serialization_dependencies as i64
            + self.serialization_before_create_dependencies as i64
            + self.create_before_create_dependencies as i64
    }
}

/// An entry of the soft object path list (UE5 `ADD_SOFTOBJECTPATH_LIST`):
/// `FTopLevelAssetPath` (package, asset) plus a sub-path string.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SoftObjectPath {
    pub(crate) package_name: FName,
    pub(crate) asset_name: FName,
    pub(crate) sub_path: EngineString,
}

impl SoftObjectPath {
    pub(crate) fn read(r: &mut Reader, cx: &TableContext) -> Result<Self> {
        Ok(SoftObjectPath {
            package_name: cx.name(r)?,
            asset_name: cx.name(r)?,
            sub_path: EngineString::read(r)?,
        })
    }

    pub(crate) fn write(&self, w: &mut Writer) {
        self.package_name.write(w);
        self.asset_name.write(w);
        self.sub_path.write(w);
    }
}

/// `FObjectDataResource::EVersion::AddedCookedIndex`: entries carry a cooked index byte.
pub(crate) const DATA_RESOURCE_VERSION_COOKED_INDEX: u32 = 2;

/// `FObjectDataResource`: one bulk data payload of an export (UE5 `DATA_RESOURCES`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DataResource {
    pub flags: u32,
    /// Present from data resource version 2.
    pub cooked_index: Option<u8>,
    pub serial_offset: i64,
    pub duplicate_serial_offset: i64,
    pub serial_size: i64,
    pub raw_size: i64,
    pub outer_index: PackageIndex,
    pub legacy_bulk_data_flags: u32,
}

impl DataResource {
    pub(crate) fn read(r: &mut Reader, version: u32, cx: &TableContext) -> Result<Self> {
        Ok(DataResource {
            flags: r.u32()?,
            cooked_index: if version >= DATA_RESOURCE_VERSION_COOKED_INDEX {
                Some(r.u8()?)
            } else {
                None
            },
            serial_offset: r.i64()?,
            duplicate_serial_offset: r.i64()?,
            serial_size: r.i64()?,
            raw_size: r.i64()?,
            outer_index: cx.index(r)?,
            legacy_bulk_data_flags: r.u32()?,
        })
    }

    pub(crate) fn write(&self, w: &mut Writer, version: u32) {
        w.u32(self.flags);
        if version >= DATA_RESOURCE_VERSION_COOKED_INDEX {
            w.u8(self.cooked_index.unwrap_or(0));
        }
        w.i64(self.serial_offset);
        w.i64(self.duplicate_serial_offset);
        w.i64(self.serial_size);
        w.i64(self.raw_size);
        self.outer_index.write(w);
        w.u32(self.legacy_bulk_data_flags);
    }
}
