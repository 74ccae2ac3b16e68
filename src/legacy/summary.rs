//! `FPackageFileSummary`: the first record of a legacy package, with every
//! field and the file version that makes it present.
//!
//! Field order and conditions follow the engine's `PackageFileSummary.cpp`
//! (UE 4.26 … 5.7) and were checked against the corpus.

use serde::Serialize;

use crate::binary::{Reader, Writer};
use crate::error::{Context, Result};
use crate::version::{ue4_object_version as ue4, ue5_object_version as ue5};
use crate::version::{EngineVersion, LegacyFileVersions};

use super::names::EngineString;
use super::Section;

/// Where some summary fields sit in the file, so errors about their values
/// can point at them.
#[derive(Debug, Clone, Default)]
pub struct FieldPositions {
    pub total_header_size: usize,
    /// The position of each section's offset field (its count, if any, is 4 bytes before).
    pub section_offsets: std::collections::BTreeMap<Section, usize>,
}

impl FieldPositions {
    fn mark(&mut self, section: Section, position: usize) {
        self.section_offsets.insert(section, position);
    }

    /// The position of a section's offset field (0 if the version has none).
    pub fn of(&self, section: Section) -> usize {
        self.section_offsets.get(&section).copied().unwrap_or(0)
    }
}

/// The package tag `C1 83 2A 9E` as a little-endian word.
pub const PACKAGE_FILE_TAG: u32 = 0x9E2A_83C1;

/// `PKG_FilterEditorOnly`: editor-only data was stripped (every cooked package).
pub const PKG_FILTER_EDITOR_ONLY: u32 = 0x8000_0000;
/// `PKG_UnversionedProperties`: property data carries no tags.
pub const PKG_UNVERSIONED_PROPERTIES: u32 = 0x0000_2000;
/// `PKG_Cooked`.
pub const PKG_COOKED: u32 = 0x0000_0200;
/// `PKG_RequiresLocalizationGather`: the package holds localizable text
/// (string tables, `FText` properties).
pub const PKG_REQUIRES_LOCALIZATION_GATHER: u32 = 0x0004_0000;

/// One custom version: its GUID and version number.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CustomVersion {
    #[serde(serialize_with = "crate::legacy::serialize_guid")]
    pub key: [u8; 16],
    pub version: i32,
}

/// `FGenerationInfo`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Generation {
    pub export_count: i32,
    pub name_count: i32,
}

/// `FEngineVersion` (cooked packages write an empty one).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct SavedEngineVersion {
    pub major: u16,
    pub minor: u16,
    pub patch: u16,
    pub changelist: u32,
    pub branch: EngineString,
}

impl SavedEngineVersion {
    fn read(r: &mut Reader) -> Result<Self> {
        Ok(SavedEngineVersion {
            major: r.u16()?,
            minor: r.u16()?,
            patch: r.u16()?,
            changelist: r.u32()?,
            branch: EngineString::read(r).context("branch")?,
        })
    }

    fn write(&self, w: &mut Writer) {
        w.u16(self.major);
        w.u16(self.minor);
        w.u16(self.patch);
        w.u32(self.changelist);
        self.branch.write(w);
    }
}

/// The package summary. Fields absent from a file version are `None`
/// (or empty); offsets are absolute positions in the `.uasset`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// -7 (UE4), -8 (UE5), -9 (5.6+).
    pub legacy_file_version: i32,
    /// Present unless the legacy file version is -4.
    pub legacy_ue3_version: Option<i32>,
    /// The object versions as stored (all 0 in an unversioned package).
    pub file_version_ue4: i32,
    /// Present from legacy file version -8.
    pub file_version_ue5: Option<i32>,
    pub file_version_licensee_ue4: i32,
    /// `SavedHash` (FIoHash), from UE5 `PACKAGE_SAVED_HASH`.
    #[serde(serialize_with = "crate::legacy::serialize_opt_hex")]
    pub saved_hash: Option<[u8; 20]>,
    pub custom_versions: Vec<CustomVersion>,
    pub total_header_size: i32,
    /// `PackageName` (formerly `FolderName`; UE4 cooks write `None`).
    pub package_name: EngineString,
    pub package_flags: u32,
    pub name_count: i32,
    pub name_offset: i32,
    /// From UE5 `ADD_SOFTOBJECTPATH_LIST`.
    pub soft_object_paths_count: Option<i32>,
    pub soft_object_paths_offset: Option<i32>,
    /// Only when editor-only data is kept.
    pub localization_id: Option<EngineString>,
    pub gatherable_text_data_count: i32,
    pub gatherable_text_data_offset: i32,
    pub export_count: i32,
    pub export_offset: i32,
    pub import_count: i32,
    pub import_offset: i32,
    /// From UE5 `VERSE_CELLS`.
    pub cell_export_count: Option<i32>,
    pub cell_export_offset: Option<i32>,
    pub cell_import_count: Option<i32>,
    pub cell_import_offset: Option<i32>,
    /// From UE5 `METADATA_SERIALIZATION_OFFSET`.
    pub metadata_offset: Option<i32>,
    pub depends_offset: i32,
    pub soft_package_references_count: i32,
    pub soft_package_references_offset: i32,
    pub searchable_names_offset: i32,
    pub thumbnail_table_offset: i32,
    /// From UE5 `IMPORT_TYPE_HIERARCHIES` (5.7).
    pub import_type_hierarchies_count: Option<i32>,
    pub import_type_hierarchies_offset: Option<i32>,
    /// The package GUID, before UE5 `PACKAGE_SAVED_HASH`.
    #[serde(serialize_with = "crate::legacy::serialize_opt_hex")]
    pub guid: Option<[u8; 16]>,
    /// Only when editor-only data is kept.
    #[serde(serialize_with = "crate::legacy::serialize_opt_hex")]
    pub persistent_guid: Option<[u8; 16]>,
    #[serde(serialize_with = "crate::legacy::serialize_opt_hex")]
    pub owner_persistent_guid: Option<[u8; 16]>,
    pub generations: Vec<Generation>,
    pub saved_by_engine_version: SavedEngineVersion,
    pub compatible_with_engine_version: SavedEngineVersion,
    pub compression_flags: u32,
    pub package_source: u32,
    pub additional_packages_to_cook: Vec<EngineString>,
    /// Before legacy file version -7 (always 0).
    pub num_texture_allocations: Option<i32>,
    pub asset_registry_data_offset: i32,
    /// Where bulk data stored after the exports starts, in the combined
    /// `.uasset` + `.uexp` stream (cooked packages: the end of that stream).
    pub bulk_data_start_offset: i64,
    pub world_tile_info_data_offset: i32,
    pub chunk_ids: Vec<i32>,
    pub preload_dependency_count: i32,
    pub preload_dependency_offset: i32,
    /// From UE5 `NAMES_REFERENCED_FROM_EXPORT_DATA`.
    pub names_referenced_from_export_data_count: Option<i32>,
    /// From UE5 `PAYLOAD_TOC`.
    pub payload_toc_offset: Option<i64>,
    /// From UE5 `DATA_RESOURCES`.
    pub data_resource_offset: Option<i32>,
}

/// The object versions a package is read with (its own, or the engine's when unversioned).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct FileVersions {
    pub legacy: i32,
    pub ue4: i32,
    pub ue5: i32,
    pub licensee: i32,
}

impl FileVersions {
    pub fn ue4_at_least(&self, v: i32) -> bool {
        self.ue4 >= v
    }
    pub fn ue5_at_least(&self, v: i32) -> bool {
        self.ue5 >= v
    }
    fn as_table(&self) -> LegacyFileVersions {
        LegacyFileVersions {
            legacy: self.legacy,
            ue4: self.ue4,
            ue5: self.ue5,
        }
    }
}

/// Oldest UE4 object version this reader accepts (4.26 writes 522; older
/// layouts are not part of zenpak's scope).
const OLDEST_SUPPORTED_UE4: i32 = ue4::NAME_HASHES_SERIALIZED;

impl Summary {
    /// Whether all stored object versions are 0.
    pub fn is_unversioned(&self) -> bool {
        self.file_version_ue4 == 0
            && self.file_version_ue5.unwrap_or(0) == 0
            && self.file_version_licensee_ue4 == 0
    }

    pub fn filter_editor_only(&self) -> bool {
        self.package_flags & PKG_FILTER_EDITOR_ONLY != 0
    }

    pub fn unversioned_properties(&self) -> bool {
        self.package_flags & PKG_UNVERSIONED_PROPERTIES != 0
    }

    /// The package name the summary carries, if any (UE4 cooks write `None`).
    pub fn package_name(&self) -> Option<&str> {
        let name = self.package_name.text.as_str();
        (!name.is_empty() && name != "None").then_some(name)
    }

    /// Reads the summary. `engine` is the release the user says the package
    /// was cooked with; an unversioned package needs it, a versioned one must
    /// agree with it. Returns the summary, the release, and the versions to
    /// read the rest of the package with.
    pub fn read(
        r: &mut Reader,
        engine: Option<EngineVersion>,
    ) -> Result<(Summary, EngineVersion, FileVersions)> {
        Summary::read_with_positions(r, engine, &mut FieldPositions::default())
    }

    /// [`read`](Self::read), also noting where the offset fields are (for error messages).
    pub fn read_with_positions(
        r: &mut Reader,
        engine: Option<EngineVersion>,
        positions: &mut FieldPositions,
    ) -> Result<(Summary, EngineVersion, FileVersions)> {
        let tag_at = r.pos();
        let tag = r.u32().context("tag")?;
        if tag != PACKAGE_FILE_TAG {
            return Err(r.error_at(
                tag_at,
                format!("not a package: tag is {tag:08x}, expected {PACKAGE_FILE_TAG:08x}"),
            ));
        }
        let legacy_at = r.pos();
        let legacy_file_version = r.i32().context("legacy file version")?;
        if !(-9..=-7).contains(&legacy_file_version) {
            return Err(r
                .error_at(
                    legacy_at,
                    format!(
                        "legacy file version {legacy_file_version} is not one of UE 4.26-5.7 (-7, -8, -9)"
                    ),
                )
                .within("legacy file version"));
        }
        let legacy_ue3_version = if legacy_file_version != -4 {
            Some(r.i32().context("legacy UE3 version")?)
        } else {
            None
        };
        let file_version_ue4 = r.i32().context("UE4 file version")?;
        let file_version_ue5 = if legacy_file_version <= -8 {
            Some(r.i32().context("UE5 file version")?)
        } else {
            None
        };
        let file_version_licensee_ue4 = r.i32().context("licensee file version")?;

        let unversioned = file_version_ue4 == 0
            && file_version_ue5.unwrap_or(0) == 0
            && file_version_licensee_ue4 == 0;
        let (engine, versions) = if unversioned {
            let engine = engine.ok_or_else(|| {
                r.error_at(legacy_at, "the package is unversioned (its file versions are 0), so its engine version must be given")
                    .with_hint("pass --engine (e.g. --engine 5.6) or set the engine version in the manifest")
            })?;
            let table = engine.legacy_file_versions();
            if table.legacy != legacy_file_version {
                return Err(r
                    .error_at(
                        legacy_at,
                        format!(
                            "legacy file version {legacy_file_version} does not match engine {engine} (which writes {})",
                            table.legacy
                        ),
                    )
                    .with_hint("check the engine version given for this package"));
            }
            (
                engine,
                FileVersions {
                    legacy: table.legacy,
                    ue4: table.ue4,
                    ue5: table.ue5,
                    licensee: 0,
                },
            )
        } else {
            let found = FileVersions {
                legacy: legacy_file_version,
                ue4: file_version_ue4,
                ue5: file_version_ue5.unwrap_or(0),
                licensee: file_version_licensee_ue4,
            };
            if found.ue4 < OLDEST_SUPPORTED_UE4 {
                return Err(r.error_at(
                    legacy_at,
                    format!(
                        "UE4 file version {} is older than UE 4.26 packages",
                        found.ue4
                    ),
                ));
            }
            let engine = match engine {
                Some(engine) => {
                    let table = engine.legacy_file_versions();
                    if table != found.as_table() {
                        return Err(r
                            .error_at(
                                legacy_at,
                                format!(
                                    "the package says it was saved with file versions legacy {} / UE4 {} / UE5 {}, but engine {engine} writes {} / {} / {}",
                                    found.legacy, found.ue4, found.ue5, table.legacy, table.ue4, table.ue5
                                ),
                            )
                            .with_hint("the package's own versions win: drop --engine or give the release it was cooked with"));
                    }
                    engine
                }
                None => {
                    let matching: Vec<EngineVersion> = EngineVersion::ALL
                        .iter()
                        .copied()
                        .filter(|e| e.legacy_file_versions() == found.as_table())
                        .collect();
                    match matching.as_slice() {
                        [one] => *one,
                        [] => {
                            return Err(r.error_at(
                                legacy_at,
                                format!(
                                    "file versions legacy {} / UE4 {} / UE5 {} match no supported engine release",
                                    found.legacy, found.ue4, found.ue5
                                ),
                            ).with_hint("pass --engine with the release the package was cooked with"))
                        }
                        several => {
                            let list: Vec<&str> = several.iter().map(|e| e.as_str()).collect();
                            return Err(r
                                .error_at(
                                    legacy_at,
                                    format!(
                                        "file versions legacy {} / UE4 {} / UE5 {} are shared by releases {}",
                                        found.legacy,
                                        found.ue4,
                                        found.ue5,
                                        list.join(", ")
                                    ),
                                )
                                .with_hint("pass --engine to say which one"));
                        }
                    }
                }
            };
            (engine, found)
        };

        let mut total_header_size = 0;
        let saved_hash = if versions.ue5_at_least(ue5::PACKAGE_SAVED_HASH) {
            let hash = r.array::<20>().context("saved hash")?;
            positions.total_header_size = r.pos();
            total_header_size = r.i32().context("total header size")?;
            Some(hash)
        } else {
            None
        };

        let custom_versions = {
            let count = r.count_i32(20).context("custom versions")?;
            let mut list = Vec::with_capacity(count);
            for _ in 0..count {
                list.push(CustomVersion {
                    key: r.guid()?,
                    version: r.i32()?,
                });
            }
            list
        };
        if saved_hash.is_none() {
            positions.total_header_size = r.pos();
            total_header_size = r.i32().context("total header size")?;
        }
        let package_name = EngineString::read(r).context("package name")?;
        let package_flags = r.u32().context("package flags")?;
        let filter_editor_only = package_flags & PKG_FILTER_EDITOR_ONLY != 0;
        positions.mark(Section::Names, r.pos() + 4);
        let name_count = r.i32().context("name count")?;
        let name_offset = r.i32().context("name offset")?;
        positions.mark(Section::SoftObjectPaths, r.pos() + 4);
        let (soft_object_paths_count, soft_object_paths_offset) =
            if versions.ue5_at_least(ue5::ADD_SOFTOBJECTPATH_LIST) {
                (Some(r.i32()?), Some(r.i32()?))
            } else {
                (None, None)
            };
        let localization_id = if !filter_editor_only
            && versions.ue4_at_least(ue4::ADDED_PACKAGE_SUMMARY_LOCALIZATION_ID)
        {
            Some(EngineString::read(r).context("localization id")?)
        } else {
            None
        };
        positions.mark(Section::GatherableText, r.pos() + 4);
        let (gatherable_text_data_count, gatherable_text_data_offset) =
            if versions.ue4_at_least(ue4::SERIALIZE_TEXT_IN_PACKAGES) {
                (r.i32()?, r.i32()?)
            } else {
                (0, 0)
            };
        positions.mark(Section::Exports, r.pos() + 4);
        positions.mark(Section::Imports, r.pos() + 12);
        let export_count = r.i32().context("export count")?;
        let export_offset = r.i32().context("export offset")?;
        let import_count = r.i32().context("import count")?;
        let import_offset = r.i32().context("import offset")?;
        positions.mark(Section::CellExports, r.pos() + 4);
        positions.mark(Section::CellImports, r.pos() + 12);
        let (cell_export_count, cell_export_offset, cell_import_count, cell_import_offset) =
            if versions.ue5_at_least(ue5::VERSE_CELLS) {
                (
                    Some(r.i32()?),
                    Some(r.i32()?),
                    Some(r.i32()?),
                    Some(r.i32()?),
                )
            } else {
                (None, None, None, None)
            };
        positions.mark(Section::Metadata, r.pos());
        let metadata_offset = if versions.ue5_at_least(ue5::METADATA_SERIALIZATION_OFFSET) {
            Some(r.i32().context("metadata offset")?)
        } else {
            None
        };
        positions.mark(Section::Depends, r.pos());
        let depends_offset = r.i32().context("depends offset")?;
        positions.mark(Section::SoftPackageReferences, r.pos() + 4);
        let (soft_package_references_count, soft_package_references_offset) =
            if versions.ue4_at_least(ue4::ADD_STRING_ASSET_REFERENCES_MAP) {
                (r.i32()?, r.i32()?)
            } else {
                (0, 0)
            };
        positions.mark(Section::SearchableNames, r.pos());
        let searchable_names_offset = if versions.ue4_at_least(ue4::ADDED_SEARCHABLE_NAMES) {
            r.i32().context("searchable names offset")?
        } else {
            0
        };
        positions.mark(Section::Thumbnails, r.pos());
        let thumbnail_table_offset = r.i32().context("thumbnail table offset")?;
        positions.mark(Section::ImportTypeHierarchies, r.pos() + 4);
        let (import_type_hierarchies_count, import_type_hierarchies_offset) =
            if versions.ue5_at_least(ue5::IMPORT_TYPE_HIERARCHIES) {
                (Some(r.i32()?), Some(r.i32()?))
            } else {
                (None, None)
            };
        let guid = if saved_hash.is_none() {
            Some(r.guid().context("package guid")?)
        } else {
            None
        };
        let (persistent_guid, owner_persistent_guid) = if !filter_editor_only {
            let persistent = if versions.ue4_at_least(ue4::ADDED_PACKAGE_OWNER) {
                Some(r.guid().context("persistent guid")?)
            } else {
                None
            };
            let owner = if versions.ue4_at_least(ue4::ADDED_PACKAGE_OWNER)
                && !versions.ue4_at_least(ue4::NON_OUTER_PACKAGE_IMPORT)
            {
                Some(r.guid().context("owner persistent guid")?)
            } else {
                None
            };
            (persistent, owner)
        } else {
            (None, None)
        };
        let generations = {
            let count = r.count_i32(8).context("generations")?;
            let mut list = Vec::with_capacity(count);
            for _ in 0..count {
                list.push(Generation {
                    export_count: r.i32()?,
                    name_count: r.i32()?,
                });
            }
            list
        };
        // Every supported version has ENGINE_VERSION_OBJECT and the compatible version.
        let saved_by_engine_version =
            SavedEngineVersion::read(r).context("saved-by engine version")?;
        let compatible_with_engine_version =
            SavedEngineVersion::read(r).context("compatible-with engine version")?;
        let compression_flags = r.u32().context("compression flags")?;
        let chunks_at = r.pos();
        let compressed_chunks = r.i32().context("compressed chunks")?;
        if compressed_chunks != 0 {
            return Err(r
                .error_at(
                    chunks_at,
                    format!("the package uses package-level compression ({compressed_chunks} compressed chunks), which UE 4.26+ does not write"),
                )
                .within("compressed chunks"));
        }
        let package_source = r.u32().context("package source")?;
        let additional_packages_to_cook = {
            let count = r.count_i32(4).context("additional packages to cook")?;
            let mut list = Vec::with_capacity(count);
            for _ in 0..count {
                list.push(EngineString::read(r).context("additional packages to cook")?);
            }
            list
        };
        let num_texture_allocations = if legacy_file_version > -7 {
            Some(r.i32()?)
        } else {
            None
        };
        positions.mark(Section::AssetRegistryData, r.pos());
        let asset_registry_data_offset = r.i32().context("asset registry data offset")?;
        let bulk_data_start_offset = r.i64().context("bulk data start offset")?;
        positions.mark(Section::WorldTileInfo, r.pos());
        let world_tile_info_data_offset = if versions.ue4_at_least(ue4::WORLD_LEVEL_INFO) {
            r.i32().context("world tile info offset")?
        } else {
            0
        };
        let chunk_ids = {
            let count = r.count_i32(4).context("chunk ids")?;
            let mut list = Vec::with_capacity(count);
            for _ in 0..count {
                list.push(r.i32()?);
            }
            list
        };
        positions.mark(Section::PreloadDependencies, r.pos() + 4);
        let (preload_dependency_count, preload_dependency_offset) =
            if versions.ue4_at_least(ue4::PRELOAD_DEPENDENCIES_IN_COOKED_EXPORTS) {
                (r.i32()?, r.i32()?)
            } else {
                (-1, 0)
            };
        let names_referenced_from_export_data_count =
            if versions.ue5_at_least(ue5::NAMES_REFERENCED_FROM_EXPORT_DATA) {
                Some(r.i32().context("names referenced from export data")?)
            } else {
                None
            };
        let payload_toc_offset = if versions.ue5_at_least(ue5::PAYLOAD_TOC) {
            Some(r.i64().context("payload TOC offset")?)
        } else {
            None
        };
        positions.mark(Section::DataResources, r.pos());
        let data_resource_offset = if versions.ue5_at_least(ue5::DATA_RESOURCES) {
            Some(r.i32().context("data resource offset")?)
        } else {
            None
        };

        let summary = Summary {
            legacy_file_version,
            legacy_ue3_version,
            file_version_ue4,
            file_version_ue5,
            file_version_licensee_ue4,
            saved_hash,
            custom_versions,
            total_header_size,
            package_name,
            package_flags,
            name_count,
            name_offset,
            soft_object_paths_count,
            soft_object_paths_offset,
            localization_id,
            gatherable_text_data_count,
            gatherable_text_data_offset,
            export_count,
            export_offset,
            import_count,
            import_offset,
            cell_export_count,
            cell_export_offset,
            cell_import_count,
            cell_import_offset,
            metadata_offset,
            depends_offset,
            soft_package_references_count,
            soft_package_references_offset,
            searchable_names_offset,
            thumbnail_table_offset,
            import_type_hierarchies_count,
            import_type_hierarchies_offset,
            guid,
            persistent_guid,
            owner_persistent_guid,
            generations,
            saved_by_engine_version,
            compatible_with_engine_version,
            compression_flags,
            package_source,
            additional_packages_to_cook,
            num_texture_allocations,
            asset_registry_data_offset,
            bulk_data_start_offset,
            world_tile_info_data_offset,
            chunk_ids,
            preload_dependency_count,
            preload_dependency_offset,
            names_referenced_from_export_data_count,
            payload_toc_offset,
            data_resource_offset,
        };
        Ok((summary, engine, versions))
    }

    /// Writes the summary as stored; fields a version lacks are skipped,
    /// fields it needs but the model lacks are written as zero.
    pub fn write(&self, w: &mut Writer, versions: &FileVersions) {
        w.u32(PACKAGE_FILE_TAG);
        w.i32(self.legacy_file_version);
        if self.legacy_file_version != -4 {
            w.i32(self.legacy_ue3_version.unwrap_or(0));
        }
        w.i32(self.file_version_ue4);
        if self.legacy_file_version <= -8 {
            w.i32(self.file_version_ue5.unwrap_or(0));
        }
        w.i32(self.file_version_licensee_ue4);
        let saved_hash = versions.ue5_at_least(ue5::PACKAGE_SAVED_HASH);
        if saved_hash {
            w.bytes(&self.saved_hash.unwrap_or([0; 20]));
            w.i32(self.total_header_size);
        }
        w.i32(self.custom_versions.len() as i32);
        for custom in &self.custom_versions {
            w.guid(&custom.key);
            w.i32(custom.version);
        }
        if !saved_hash {
            w.i32(self.total_header_size);
        }
        self.package_name.write(w);
        w.u32(self.package_flags);
        w.i32(self.name_count);
        w.i32(self.name_offset);
        if versions.ue5_at_least(ue5::ADD_SOFTOBJECTPATH_LIST) {
            w.i32(self.soft_object_paths_count.unwrap_or(0));
            w.i32(self.soft_object_paths_offset.unwrap_or(0));
        }
        if !self.filter_editor_only()
            && versions.ue4_at_least(ue4::ADDED_PACKAGE_SUMMARY_LOCALIZATION_ID)
        {
            self.localization_id.clone().unwrap_or_default().write(w);
        }
        if versions.ue4_at_least(ue4::SERIALIZE_TEXT_IN_PACKAGES) {
            w.i32(self.gatherable_text_data_count);
            w.i32(self.gatherable_text_data_offset);
        }
        w.i32(self.export_count);
        w.i32(self.export_offset);
        w.i32(self.import_count);
        w.i32(self.import_offset);
        if versions.ue5_at_least(ue5::VERSE_CELLS) {
            w.i32(self.cell_export_count.unwrap_or(0));
            w.i32(self.cell_export_offset.unwrap_or(0));
            w.i32(self.cell_import_count.unwrap_or(0));
            w.i32(self.cell_import_offset.unwrap_or(0));
        }
        if versions.ue5_at_least(ue5::METADATA_SERIALIZATION_OFFSET) {
            w.i32(self.metadata_offset.unwrap_or(0));
        }
        w.i32(self.depends_offset);
        if versions.ue4_at_least(ue4::ADD_STRING_ASSET_REFERENCES_MAP) {
            w.i32(self.soft_package_references_count);
            w.i32(self.soft_package_references_offset);
        }
        if versions.ue4_at_least(ue4::ADDED_SEARCHABLE_NAMES) {
            w.i32(self.searchable_names_offset);
        }
        w.i32(self.thumbnail_table_offset);
        if versions.ue5_at_least(ue5::IMPORT_TYPE_HIERARCHIES) {
            w.i32(self.import_type_hierarchies_count.unwrap_or(0));
            w.i32(self.import_type_hierarchies_offset.unwrap_or(0));
        }
        if !saved_hash {
            w.guid(&self.guid.unwrap_or([0; 16]));
        }
        if !self.filter_editor_only() && versions.ue4_at_least(ue4::ADDED_PACKAGE_OWNER) {
            w.guid(&self.persistent_guid.unwrap_or([0; 16]));
            if !versions.ue4_at_least(ue4::NON_OUTER_PACKAGE_IMPORT) {
                w.guid(&self.owner_persistent_guid.unwrap_or([0; 16]));
            }
        }
        w.i32(self.generations.len() as i32);
        for generation in &self.generations {
            w.i32(generation.export_count);
            w.i32(generation.name_count);
        }
        self.saved_by_engine_version.write(w);
        self.compatible_with_engine_version.write(w);
        w.u32(self.compression_flags);
        w.i32(0); // compressed chunks: never written by 4.26+
        w.u32(self.package_source);
        w.i32(self.additional_packages_to_cook.len() as i32);
        for package in &self.additional_packages_to_cook {
            package.write(w);
        }
        if self.legacy_file_version > -7 {
            w.i32(self.num_texture_allocations.unwrap_or(0));
        }
        w.i32(self.asset_registry_data_offset);
        w.i64(self.bulk_data_start_offset);
        if versions.ue4_at_least(ue4::WORLD_LEVEL_INFO) {
            w.i32(self.world_tile_info_data_offset);
        }
        w.i32(self.chunk_ids.len() as i32);
        for id in &self.chunk_ids {
            w.i32(*id);
        }
        if versions.ue4_at_least(ue4::PRELOAD_DEPENDENCIES_IN_COOKED_EXPORTS) {
            w.i32(self.preload_dependency_count);
            w.i32(self.preload_dependency_offset);
        }
        if versions.ue5_at_least(ue5::NAMES_REFERENCED_FROM_EXPORT_DATA) {
            w.i32(
                self.names_referenced_from_export_data_count
                    .unwrap_or(self.name_count),
            );
        }
        if versions.ue5_at_least(ue5::PAYLOAD_TOC) {
            w.i64(self.payload_toc_offset.unwrap_or(-1));
        }
        if versions.ue5_at_least(ue5::DATA_RESOURCES) {
            w.i32(self.data_resource_offset.unwrap_or(-1));
        }
    }
}
