//! `FPackageFileSummary`: the first record of a legacy package, with every
//! field and the file version that makes it present.
//!
//! Field order and conditions follow the engine's `PackageFileSummary.cpp`
//! (UE 4.26 … 5.7) and were checked against the corpus.

use serde::Serialize;

use crate::binary::{Reader, Writer};
use crate::diagnostic::Diagnostic;
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
    pub(crate) fn of(&self, section: Section) -> usize {
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
    pub(crate) key: [u8; 16],
    pub(crate) version: i32,
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
    pub(crate) major: u16,
    pub(crate) minor: u16,
    pub(crate) patch: u16,
    pub(crate) changelist: u32,
    pub(crate) branch: EngineString,
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
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct Summary {
    /// -7 (UE4), -8 (UE5), -9 (5.6+).
    pub(crate) legacy_file_version: i32,
    /// Present unless the legacy file version is -4.
    pub legacy_ue3_version: Option<i32>,
    /// The object versions as stored (all 0 in an unversioned package).
    pub file_version_ue4: i32,
    /// Present from legacy file version -8.
    pub file_version_ue5: Option<i32>,
    pub(crate) file_version_licensee_ue4: i32,
    /// `SavedHash` (FIoHash), from UE5 `PACKAGE_SAVED_HASH`.
    #[serde(serialize_with = "crate::legacy::serialize_opt_hex")]
    pub(crate) saved_hash: Option<[u8; 20]>,
    pub(crate) custom_versions: Vec<CustomVersion>,
    pub total_header_size: i32,
    /// `PackageName` (formerly `FolderName`; UE4 cooks write `None`).
    pub package_name: EngineString,
    pub package_flags: u32,
    pub name_count: i32,
    pub(crate) name_offset: i32,
    /// From UE5 `ADD_SOFTOBJECTPATH_LIST`.
    pub(crate) soft_object_paths_count: Option<i32>,
    pub(crate) soft_object_paths_offset: Option<i32>,
    /// Only when editor-only data is kept.
    pub(crate) localization_id: Option<EngineString>,
    pub(crate) gatherable_text_data_count: i32,
    pub(crate) gatherable_text_data_offset: i32,
    pub export_count: i32,
    pub(crate) export_offset: i32,
    pub import_count: i32,
    pub import_offset: i32,
    /// From UE5 `VERSE_CELLS`.
    pub(crate) cell_export_count: Option<i32>,
    pub(crate) cell_export_offset: Option<i32>,
    pub(crate) cell_import_count: Option<i32>,
    pub(crate) cell_import_offset: Option<i32>,
    /// From UE5 `METADATA_SERIALIZATION_OFFSET`.
    pub(crate) metadata_offset: Option<i32>,
    pub(crate) depends_offset: i32,
    pub(crate) soft_package_references_count: i32,
    pub(crate) soft_package_references_offset: i32,
    pub(crate) searchable_names_offset: i32,
    pub(crate) thumbnail_table_offset: i32,
    /// From UE5 `IMPORT_TYPE_HIERARCHIES` (5.7).
    pub(crate) import_type_hierarchies_count: Option<i32>,
    pub(crate) import_type_hierarchies_offset: Option<i32>,
    /// The package GUID, before UE5 `PACKAGE_SAVED_HASH`.
    #[serde(serialize_with = "crate::legacy::serialize_opt_hex")]
    pub(crate) guid: Option<[u8; 16]>,
    /// Only when editor-only data is kept.
    #[serde(serialize_with = "crate::legacy::serialize_opt_hex")]
    pub(crate) persistent_guid: Option<[u8; 16]>,
    #[serde(serialize_with = "crate::legacy::serialize_opt_hex")]
    pub(crate) owner_persistent_guid: Option<[u8; 16]>,
    pub generations: Vec<Generation>,
    pub(crate) saved_by_engine_version: SavedEngineVersion,
    pub(crate) compatible_with_engine_version: SavedEngineVersion,
    pub(crate) compression_flags: u32,
    pub(crate) package_source: u32,
    pub(crate) additional_packages_to_cook: Vec<EngineString>,
    /// Before legacy file version -7 (always 0).
    pub(crate) num_texture_allocations: Option<i32>,
    pub(crate) asset_registry_data_offset: i32,
    /// Where bulk data stored after the exports starts, in the combined
    /// `.uasset` + `.uexp` stream (cooked packages: the end of that stream).
    pub bulk_data_start_offset: i64,
    pub(crate) world_tile_info_data_offset: i32,
    pub(crate) chunk_ids: Vec<i32>,
    pub(crate) preload_dependency_count: i32,
    pub(crate) preload_dependency_offset: i32,
    /// From UE5 `NAMES_REFERENCED_FROM_EXPORT_DATA`.
    pub names_referenced_from_export_data_count: Option<i32>,
    /// From UE5 `PAYLOAD_TOC`.
    pub(crate) payload_toc_offset: Option<i64>,
    /// From UE5 `DATA_RESOURCES`.
    pub(crate) data_resource_offset: Option<i32>,
}

/// The object versions a package is read with (its own, or the engine's when
/// unversioned). The summary's field conditions are named predicates on it,
/// shared by [`Summary::read`] and [`Summary::write`]; those that look at the
/// package flags take `filter_editor_only`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct FileVersions {
    pub legacy: i32,
    pub(crate) ue4: i32,
    pub ue5: i32,
    pub(crate) licensee: i32,
}

impl FileVersions {
    /// The versions an engine release cooks with (what unversioned packages
    /// are read with).
    pub(crate) fn of_engine(engine: crate::version::EngineVersion) -> FileVersions {
        let v = engine.legacy_file_versions();
        FileVersions {
            legacy: v.legacy,
            ue4: v.ue4,
            ue5: v.ue5,
            licensee: 0,
        }
    }

    /// `bImportOptional` on imports and `bGeneratePublicHash` on exports
    /// (UE5 `OPTIONAL_RESOURCES`).
    pub(crate) fn has_optional_resources(&self) -> bool {
        self.ue5_at_least(ue5::OPTIONAL_RESOURCES)
    }
    /// Exports carry a package GUID (before UE5 `REMOVE_OBJECT_EXPORT_PACKAGE_GUID`).
    pub(crate) fn export_has_package_guid(&self) -> bool {
        !self.ue5_at_least(ue5::REMOVE_OBJECT_EXPORT_PACKAGE_GUID)
    }
    /// Exports carry `bIsInheritedInstance` (UE5 `TRACK_OBJECT_EXPORT_IS_INHERITED`).
    pub(crate) fn export_has_inherited_instance(&self) -> bool {
        self.ue5_at_least(ue5::TRACK_OBJECT_EXPORT_IS_INHERITED)
    }

    pub(crate) fn ue4_at_least(&self, v: i32) -> bool {
        self.ue4 >= v
    }
    pub(crate) fn ue5_at_least(&self, v: i32) -> bool {
        self.ue5 >= v
    }
    fn as_table(&self) -> LegacyFileVersions {
        LegacyFileVersions {
            legacy: self.legacy,
            ue4: self.ue4,
            ue5: self.ue5,
        }
    }

    /// Only the legacy file version is known yet (the start of the summary).
    fn of_legacy(legacy: i32) -> Self {
        FileVersions {
            legacy,
            ..FileVersions::default()
        }
    }

    /// `LegacyUE3Version` is stored (every version but -4).
    pub(crate) fn has_legacy_ue3_version(&self) -> bool {
        self.legacy != -4
    }
    /// `FileVersionUE5` is stored (legacy -8 on).
    pub(crate) fn has_ue5_version(&self) -> bool {
        self.legacy <= -8
    }
    /// `NumTextureAllocations` is stored (before legacy -7).
    pub(crate) fn has_texture_allocations(&self) -> bool {
        self.legacy > -7
    }
    /// `SavedHash` then `TotalHeaderSize` right after the versions, and no
    /// package GUID (UE5 `PACKAGE_SAVED_HASH`).
    pub(crate) fn has_saved_hash(&self) -> bool {
        self.ue5_at_least(ue5::PACKAGE_SAVED_HASH)
    }
    /// Soft object path count/offset (UE5 `ADD_SOFTOBJECTPATH_LIST`).
    pub(crate) fn has_soft_object_path_list(&self) -> bool {
        self.ue5_at_least(ue5::ADD_SOFTOBJECTPATH_LIST)
    }
    /// `LocalizationId`, only with editor-only data.
    pub(crate) fn has_localization_id(&self, filter_editor_only: bool) -> bool {
        !filter_editor_only && self.ue4_at_least(ue4::ADDED_PACKAGE_SUMMARY_LOCALIZATION_ID)
    }
    /// Gatherable text data count/offset.
    pub(crate) fn has_gatherable_text(&self) -> bool {
        self.ue4_at_least(ue4::SERIALIZE_TEXT_IN_PACKAGES)
    }
    /// Cell export/import counts and offsets (UE5 `VERSE_CELLS`).
    pub(crate) fn has_verse_cells(&self) -> bool {
        self.ue5_at_least(ue5::VERSE_CELLS)
    }
    /// `MetaDataOffset` (UE5 `METADATA_SERIALIZATION_OFFSET`).
    pub(crate) fn has_metadata_offset(&self) -> bool {
        self.ue5_at_least(ue5::METADATA_SERIALIZATION_OFFSET)
    }
    /// Soft package reference count/offset.
    pub(crate) fn has_soft_package_references(&self) -> bool {
        self.ue4_at_least(ue4::ADD_STRING_ASSET_REFERENCES_MAP)
    }
    /// `SearchableNamesOffset`.
    pub(crate) fn has_searchable_names(&self) -> bool {
        self.ue4_at_least(ue4::ADDED_SEARCHABLE_NAMES)
    }
    /// Import type hierarchy count/offset (UE5 `IMPORT_TYPE_HIERARCHIES`, 5.7).
    pub(crate) fn has_import_type_hierarchies(&self) -> bool {
        self.ue5_at_least(ue5::IMPORT_TYPE_HIERARCHIES)
    }
    /// `PersistentGuid`, only with editor-only data.
    pub(crate) fn has_persistent_guid(&self, filter_editor_only: bool) -> bool {
        !filter_editor_only && self.ue4_at_least(ue4::ADDED_PACKAGE_OWNER)
    }
    /// `OwnerPersistentGuid`, only with editor-only data, between
    /// `ADDED_PACKAGE_OWNER` and `NON_OUTER_PACKAGE_IMPORT`.
    pub(crate) fn has_owner_persistent_guid(&self, filter_editor_only: bool) -> bool {
        self.has_persistent_guid(filter_editor_only)
            && !self.ue4_at_least(ue4::NON_OUTER_PACKAGE_IMPORT)
    }
    /// Name map entries carry their two hashes (`NAME_HASHES_SERIALIZED`).
    pub(crate) fn has_name_hashes(&self) -> bool {
        self.ue4_at_least(ue4::NAME_HASHES_SERIALIZED)
    }
    /// `WorldTileInfoDataOffset`.
    pub(crate) fn has_world_tile_info(&self) -> bool {
        self.ue4_at_least(ue4::WORLD_LEVEL_INFO)
    }
    /// Preload dependency count/offset.
    pub(crate) fn has_preload_dependencies(&self) -> bool {
        self.ue4_at_least(ue4::PRELOAD_DEPENDENCIES_IN_COOKED_EXPORTS)
    }
    /// `NamesReferencedFromExportDataCount` (UE5 1001).
    pub(crate) fn has_names_referenced_from_export_data(&self) -> bool {
        self.ue5_at_least(ue5::NAMES_REFERENCED_FROM_EXPORT_DATA)
    }
    /// `PayloadTocOffset` (UE5 `PAYLOAD_TOC`).
    pub(crate) fn has_payload_toc(&self) -> bool {
        self.ue5_at_least(ue5::PAYLOAD_TOC)
    }
    /// `DataResourceOffset` (UE5 `DATA_RESOURCES`).
    pub(crate) fn has_data_resources(&self) -> bool {
        self.ue5_at_least(ue5::DATA_RESOURCES)
    }
}

/// Oldest UE4 object version this reader accepts (4.26 writes 522; older
/// layouts are not part of zenpak's scope).
const OLDEST_SUPPORTED_UE4: i32 = ue4::NAME_HASHES_SERIALIZED;

/// What reading a summary gives.
#[derive(Debug, Clone)]
pub struct SummaryRead {
    pub(crate) summary: Summary,
    /// The release the package was cooked with (given, or found from its versions).
    pub(crate) engine: EngineVersion,
    /// The versions the rest of the package is read with.
    pub(crate) versions: FileVersions,
    /// Set when a versioned package's own versions differ from the given
    /// release's: it is read with its own (as the engine does) and the caller
    /// should say so.
    pub(crate) warning: Option<Diagnostic>,
}

/// The file versions as stored, before they are resolved against a release.
struct StoredVersions {
    legacy: i32,
    ue4: i32,
    ue5: Option<i32>,
    licensee: i32,
    /// Where the legacy file version sits (errors about versions point there).
    at: usize,
}

impl StoredVersions {
    fn is_unversioned(&self) -> bool {
        self.ue4 == 0 && self.ue5.unwrap_or(0) == 0 && self.licensee == 0
    }

    fn found(&self) -> FileVersions {
        FileVersions {
            legacy: self.legacy,
            ue4: self.ue4,
            ue5: self.ue5.unwrap_or(0),
            licensee: self.licensee,
        }
    }

    /// An unversioned package is read with the given release's versions.
    fn resolve_unversioned(
        &self,
        r: &Reader,
        engine: Option<EngineVersion>,
    ) -> Result<(EngineVersion, FileVersions)> {
        let engine = engine.ok_or_else(|| {
            r.error_at(self.at, "the package is unversioned (its file versions are 0), so its engine version must be given")
                .with_hint("pass --engine (e.g. --engine 5.6) or set the engine version in the manifest")
        })?;
        let table = engine.legacy_file_versions();
        if table.legacy != self.legacy {
            return Err(r
                .error_at(
                    self.at,
                    format!(
                        "legacy file version {} does not match engine {engine} (which writes {})",
                        self.legacy, table.legacy
                    ),
                )
                .with_hint("check the engine version given for this package"));
        }
        let versions = FileVersions {
            legacy: table.legacy,
            ue4: table.ue4,
            ue5: table.ue5,
            licensee: 0,
        };
        Ok((engine, versions))
    }

    /// A versioned package is read with its own versions. Its release is the
    /// one whose versions they are; when they are not the given release's,
    /// that is a warning (the engine loads such packages with their own
    /// versions and the Zen package is written for the given release).
    fn resolve_versioned(
        &self,
        r: &Reader,
        engine: Option<EngineVersion>,
    ) -> Result<(EngineVersion, FileVersions, Option<Diagnostic>)> {
        let found = self.found();
        if found.ue4 < OLDEST_SUPPORTED_UE4 {
            return Err(r.error_at(
                self.at,
                format!(
                    "UE4 file version {} is older than UE 4.26 packages",
                    found.ue4
                ),
            ));
        }
        let describe = format!(
            "legacy {} / UE4 {} / UE5 {}",
            found.legacy, found.ue4, found.ue5
        );
        let matching: Vec<EngineVersion> = EngineVersion::ALL
            .iter()
            .copied()
            .filter(|e| e.legacy_file_versions() == found.as_table())
            .collect();
        match (engine, matching.as_slice()) {
            (Some(given), m) if m.contains(&given) => Ok((given, found, None)),
            (Some(given), m) => {
                // The package's own release when its versions name one (the newest
                // of those that share them), else the given one.
                let own = m.last().copied().unwrap_or(given);
                let table = given.legacy_file_versions();
                let warning = Diagnostic::warning(
                    "versioned-package",
                    format!(
                        "the package was saved with file versions {describe} ({}), not those of engine {given} ({} / {} / {}); it is read with its own versions and written for {given}",
                        if m.is_empty() { "no supported release".to_string() } else { format!("UE {own}") },
                        table.legacy, table.ue4, table.ue5
                    ),
                )
                .with_hint("recook the package with the game's engine version if it does not load");
                Ok((own, found, Some(warning)))
            }
            (None, [one]) => Ok((*one, found, None)),
            (None, []) => Err(r
                .error_at(
                    self.at,
                    format!("file versions {describe} match no supported engine release"),
                )
                .with_hint("pass --engine with the release the package was cooked with")),
            (None, several) => {
                let list: Vec<&str> = several.iter().map(|e| e.as_str()).collect();
                Err(r
                    .error_at(
                        self.at,
                        format!(
                            "file versions {describe} are shared by releases {}",
                            list.join(", ")
                        ),
                    )
                    .with_hint("pass --engine to say which one"))
            }
        }
    }
}

fn read_custom_versions(r: &mut Reader) -> Result<Vec<CustomVersion>> {
    let count = r.count_i32(20).context("custom versions")?;
    let mut list = Vec::with_capacity(count);
    for _ in 0..count {
        list.push(CustomVersion {
            key: r.guid()?,
            version: r.i32()?,
        });
    }
    Ok(list)
}

/// An `i32` count followed by that many elements.
fn read_list<T>(
    r: &mut Reader,
    what: &str,
    min_size: usize,
    read: impl Fn(&mut Reader) -> Result<T>,
) -> Result<Vec<T>> {
    let count = r.count_i32(min_size).context(what.to_string())?;
    let mut list = Vec::with_capacity(count);
    for _ in 0..count {
        list.push(read(r).context(what.to_string())?);
    }
    Ok(list)
}

/// A count/offset pair present when `present`.
fn read_pair(r: &mut Reader, present: bool) -> Result<(Option<i32>, Option<i32>)> {
    Ok(if present {
        (Some(r.i32()?), Some(r.i32()?))
    } else {
        (None, None)
    })
}

/// An `i32` present when `present`.
fn read_if(r: &mut Reader, present: bool, what: &str) -> Result<Option<i32>> {
    present
        .then(|| r.i32().context(what.to_string()))
        .transpose()
}

impl Summary {
    /// Whether all stored object versions are 0.
    pub fn is_unversioned(&self) -> bool {
        self.file_version_ue4 == 0
            && self.file_version_ue5.unwrap_or(0) == 0
            && self.file_version_licensee_ue4 == 0
    }

    pub(crate) fn filter_editor_only(&self) -> bool {
        self.package_flags & PKG_FILTER_EDITOR_ONLY != 0
    }

    pub fn unversioned_properties(&self) -> bool {
        self.package_flags & PKG_UNVERSIONED_PROPERTIES != 0
    }

    /// The package name the summary carries, if any (UE4 cooks write `None`).
    pub(crate) fn package_name(&self) -> Option<&str> {
        let name = self.package_name.text.as_str();
        (!name.is_empty() && name != "None").then_some(name)
    }

    /// Reads the summary. `engine` is the release the user says the package
    /// was cooked with; an unversioned package needs it; a versioned one is
    /// read with its own versions (with a warning when they are another
    /// release's).
    pub(crate) fn read(r: &mut Reader, engine: Option<EngineVersion>) -> Result<SummaryRead> {
        Summary::read_with_positions(r, engine, &mut FieldPositions::default())
    }

    /// [`read`](Self::read), also noting where the offset fields are (for error messages).
    pub fn read_with_positions(
        r: &mut Reader,
        engine: Option<EngineVersion>,
        positions: &mut FieldPositions,
    ) -> Result<SummaryRead> {
        let mut s = Summary::default();
        let stored = s.read_file_versions(r)?;
        let (engine, versions, warning) = if stored.is_unversioned() {
            let (engine, versions) = stored.resolve_unversioned(r, engine)?;
            (engine, versions, None)
        } else {
            stored.resolve_versioned(r, engine)?
        };
        s.read_custom_versions_and_sizes(r, &versions, positions)?;
        s.read_table_offsets(r, &versions, positions)?;
        s.read_trailer(r, &versions, positions)?;
        Ok(SummaryRead {
            summary: s,
            engine,
            versions,
            warning,
        })
    }

    /// Tag, legacy file version and the object versions as stored.
    fn read_file_versions(&mut self, r: &mut Reader) -> Result<StoredVersions> {
        let tag_at = r.pos();
        let tag = r.u32().context("tag")?;
        if tag != PACKAGE_FILE_TAG {
            return Err(r.error_at(
                tag_at,
                format!("not a package: tag is {tag:08x}, expected {PACKAGE_FILE_TAG:08x}"),
            ));
        }
        let at = r.pos();
        let legacy = r.i32().context("legacy file version")?;
        if !(-9..=-7).contains(&legacy) {
            return Err(r
                .error_at(
                    at,
                    format!("legacy file version {legacy} is not one of UE 4.26-5.7 (-7, -8, -9)"),
                )
                .within("legacy file version"));
        }
        let early = FileVersions::of_legacy(legacy);
        self.legacy_file_version = legacy;
        self.legacy_ue3_version = read_if(r, early.has_legacy_ue3_version(), "legacy UE3 version")?;
        self.file_version_ue4 = r.i32().context("UE4 file version")?;
        self.file_version_ue5 = read_if(r, early.has_ue5_version(), "UE5 file version")?;
        self.file_version_licensee_ue4 = r.i32().context("licensee file version")?;
        Ok(StoredVersions {
            legacy,
            ue4: self.file_version_ue4,
            ue5: self.file_version_ue5,
            licensee: self.file_version_licensee_ue4,
            at,
        })
    }

    /// Saved hash, custom versions and the total header size (which moved
    /// before the custom versions with the saved hash).
    fn read_custom_versions_and_sizes(
        &mut self,
        r: &mut Reader,
        v: &FileVersions,
        positions: &mut FieldPositions,
    ) -> Result<()> {
        if v.has_saved_hash() {
            self.saved_hash = Some(r.array::<20>().context("saved hash")?);
            positions.total_header_size = r.pos();
            self.total_header_size = r.i32().context("total header size")?;
        }
        self.custom_versions = read_custom_versions(r)?;
        if !v.has_saved_hash() {
            positions.total_header_size = r.pos();
            self.total_header_size = r.i32().context("total header size")?;
        }
        Ok(())
    }

    /// From the package name to the import type hierarchies: the flags and
    /// the count/offset pairs of the tables.
    fn read_table_offsets(
        &mut self,
        r: &mut Reader,
        v: &FileVersions,
        positions: &mut FieldPositions,
    ) -> Result<()> {
        self.package_name = EngineString::read(r).context("package name")?;
        self.package_flags = r.u32().context("package flags")?;
        let editor_only_stripped = self.filter_editor_only();
        positions.mark(Section::Names, r.pos() + 4);
        self.name_count = r.i32().context("name count")?;
        self.name_offset = r.i32().context("name offset")?;
        positions.mark(Section::SoftObjectPaths, r.pos() + 4);
        (self.soft_object_paths_count, self.soft_object_paths_offset) =
            read_pair(r, v.has_soft_object_path_list())?;
        if v.has_localization_id(editor_only_stripped) {
            self.localization_id = Some(EngineString::read(r).context("localization id")?);
        }
        positions.mark(Section::GatherableText, r.pos() + 4);
        if v.has_gatherable_text() {
            self.gatherable_text_data_count = r.i32()?;
            self.gatherable_text_data_offset = r.i32()?;
        }
        positions.mark(Section::Exports, r.pos() + 4);
        positions.mark(Section::Imports, r.pos() + 12);
        self.export_count = r.i32().context("export count")?;
        self.export_offset = r.i32().context("export offset")?;
        self.import_count = r.i32().context("import count")?;
        self.import_offset = r.i32().context("import offset")?;
        positions.mark(Section::CellExports, r.pos() + 4);
        positions.mark(Section::CellImports, r.pos() + 12);
        (self.cell_export_count, self.cell_export_offset) = read_pair(r, v.has_verse_cells())?;
        (self.cell_import_count, self.cell_import_offset) = read_pair(r, v.has_verse_cells())?;
        positions.mark(Section::Metadata, r.pos());
        self.metadata_offset = read_if(r, v.has_metadata_offset(), "metadata offset")?;
        positions.mark(Section::Depends, r.pos());
        self.depends_offset = r.i32().context("depends offset")?;
        positions.mark(Section::SoftPackageReferences, r.pos() + 4);
        if v.has_soft_package_references() {
            self.soft_package_references_count = r.i32()?;
            self.soft_package_references_offset = r.i32()?;
        }
        positions.mark(Section::SearchableNames, r.pos());
        self.searchable_names_offset =
            read_if(r, v.has_searchable_names(), "searchable names offset")?.unwrap_or(0);
        positions.mark(Section::Thumbnails, r.pos());
        self.thumbnail_table_offset = r.i32().context("thumbnail table offset")?;
        positions.mark(Section::ImportTypeHierarchies, r.pos() + 4);
        (
            self.import_type_hierarchies_count,
            self.import_type_hierarchies_offset,
        ) = read_pair(r, v.has_import_type_hierarchies())?;
        Ok(())
    }

    /// From the package GUID to the data resource offset.
    fn read_trailer(
        &mut self,
        r: &mut Reader,
        v: &FileVersions,
        positions: &mut FieldPositions,
    ) -> Result<()> {
        let editor_only_stripped = self.filter_editor_only();
        if !v.has_saved_hash() {
            self.guid = Some(r.guid().context("package guid")?);
        }
        if v.has_persistent_guid(editor_only_stripped) {
            self.persistent_guid = Some(r.guid().context("persistent guid")?);
        }
        if v.has_owner_persistent_guid(editor_only_stripped) {
            self.owner_persistent_guid = Some(r.guid().context("owner persistent guid")?);
        }
        self.generations = read_list(r, "generations", 8, |r| {
            Ok(Generation {
                export_count: r.i32()?,
                name_count: r.i32()?,
            })
        })?;
        // Every supported version has ENGINE_VERSION_OBJECT and the compatible version.
        self.saved_by_engine_version =
            SavedEngineVersion::read(r).context("saved-by engine version")?;
        self.compatible_with_engine_version =
            SavedEngineVersion::read(r).context("compatible-with engine version")?;
        self.compression_flags = r.u32().context("compression flags")?;
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
        self.package_source = r.u32().context("package source")?;
        self.additional_packages_to_cook =
            read_list(r, "additional packages to cook", 4, EngineString::read)?;
        self.num_texture_allocations =
            read_if(r, v.has_texture_allocations(), "texture allocations")?;
        positions.mark(Section::AssetRegistryData, r.pos());
        self.asset_registry_data_offset = r.i32().context("asset registry data offset")?;
        self.bulk_data_start_offset = r.i64().context("bulk data start offset")?;
        positions.mark(Section::WorldTileInfo, r.pos());
        self.world_tile_info_data_offset =
            read_if(r, v.has_world_tile_info(), "world tile info offset")?.unwrap_or(0);
        self.chunk_ids = read_list(r, "chunk ids", 4, |r| r.i32())?;
        positions.mark(Section::PreloadDependencies, r.pos() + 4);
        (
            self.preload_dependency_count,
            self.preload_dependency_offset,
        ) = if v.has_preload_dependencies() {
            (r.i32()?, r.i32()?)
        } else {
            (-1, 0)
        };
        self.names_referenced_from_export_data_count = read_if(
            r,
            v.has_names_referenced_from_export_data(),
            "names referenced from export data",
        )?;
        if v.has_payload_toc() {
            self.payload_toc_offset = Some(r.i64().context("payload TOC offset")?);
        }
        positions.mark(Section::DataResources, r.pos());
        self.data_resource_offset = read_if(r, v.has_data_resources(), "data resource offset")?;
        Ok(())
    }

    /// Writes the summary as stored; fields a version lacks are skipped,
    /// fields it needs but the model lacks are written as zero.
    pub(crate) fn write(&self, w: &mut Writer, v: &FileVersions) {
        self.write_marking_hash(w, v);
    }

    /// [`Summary::write`], returning where in `w` the content hash starts:
    /// the saved hash (5.6+, 20 bytes), else the GUID (16 bytes).
    pub(crate) fn write_marking_hash(&self, w: &mut Writer, v: &FileVersions) -> usize {
        let stored = FileVersions::of_legacy(self.legacy_file_version);
        let mut hash_at = 0;
        w.u32(PACKAGE_FILE_TAG);
        w.i32(self.legacy_file_version);
        if stored.has_legacy_ue3_version() {
            w.i32(self.legacy_ue3_version.unwrap_or(0));
        }
        w.i32(self.file_version_ue4);
        if stored.has_ue5_version() {
            w.i32(self.file_version_ue5.unwrap_or(0));
        }
        w.i32(self.file_version_licensee_ue4);
        if v.has_saved_hash() {
            hash_at = w.pos();
            w.bytes(&self.saved_hash.unwrap_or([0; 20]));
            w.i32(self.total_header_size);
        }
        w.i32(self.custom_versions.len() as i32);
        for custom in &self.custom_versions {
            w.guid(&custom.key);
            w.i32(custom.version);
        }
        if !v.has_saved_hash() {
            w.i32(self.total_header_size);
        }
        self.write_table_offsets(w, v);
        self.write_trailer(w, v, stored).unwrap_or(hash_at)
    }

    fn write_table_offsets(&self, w: &mut Writer, v: &FileVersions) {
        let pair = |w: &mut Writer, present: bool, count: Option<i32>, offset: Option<i32>| {
            if present {
                w.i32(count.unwrap_or(0));
                w.i32(offset.unwrap_or(0));
            }
        };
        self.package_name.write(w);
        w.u32(self.package_flags);
        w.i32(self.name_count);
        w.i32(self.name_offset);
        pair(
            w,
            v.has_soft_object_path_list(),
            self.soft_object_paths_count,
            self.soft_object_paths_offset,
        );
        if v.has_localization_id(self.filter_editor_only()) {
            self.localization_id.clone().unwrap_or_default().write(w);
        }
        if v.has_gatherable_text() {
            w.i32(self.gatherable_text_data_count);
            w.i32(self.gatherable_text_data_offset);
        }
        w.i32(self.export_count);
        w.i32(self.export_offset);
        w.i32(self.import_count);
        w.i32(self.import_offset);
        pair(
            w,
            v.has_verse_cells(),
            self.cell_export_count,
            self.cell_export_offset,
        );
        pair(
            w,
            v.has_verse_cells(),
            self.cell_import_count,
            self.cell_import_offset,
        );
        if v.has_metadata_offset() {
            w.i32(self.metadata_offset.unwrap_or(0));
        }
        w.i32(self.depends_offset);
        if v.has_soft_package_references() {
            w.i32(self.soft_package_references_count);
            w.i32(self.soft_package_references_offset);
        }
        if v.has_searchable_names() {
            w.i32(self.searchable_names_offset);
        }
        w.i32(self.thumbnail_table_offset);
        pair(
            w,
            v.has_import_type_hierarchies(),
            self.import_type_hierarchies_count,
            self.import_type_hierarchies_offset,
        );
    }

    /// Returns where the GUID starts, when the version has one.
    fn write_trailer(
        &self,
        w: &mut Writer,
        v: &FileVersions,
        stored: FileVersions,
    ) -> Option<usize> {
        let editor_only_stripped = self.filter_editor_only();
        let mut guid_at = None;
        if !v.has_saved_hash() {
            guid_at = Some(w.pos());
            w.guid(&self.guid.unwrap_or([0; 16]));
        }
        if v.has_persistent_guid(editor_only_stripped) {
            w.guid(&self.persistent_guid.unwrap_or([0; 16]));
        }
        if v.has_owner_persistent_guid(editor_only_stripped) {
            w.guid(&self.owner_persistent_guid.unwrap_or([0; 16]));
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
        if stored.has_texture_allocations() {
            w.i32(self.num_texture_allocations.unwrap_or(0));
        }
        w.i32(self.asset_registry_data_offset);
        w.i64(self.bulk_data_start_offset);
        if v.has_world_tile_info() {
            w.i32(self.world_tile_info_data_offset);
        }
        w.i32(self.chunk_ids.len() as i32);
        for id in &self.chunk_ids {
            w.i32(*id);
        }
        if v.has_preload_dependencies() {
            w.i32(self.preload_dependency_count);
            w.i32(self.preload_dependency_offset);
        }
        if v.has_names_referenced_from_export_data() {
            w.i32(
                self.names_referenced_from_export_data_count
                    .unwrap_or(self.name_count),
            );
        }
        if v.has_payload_toc() {
            w.i64(self.payload_toc_offset.unwrap_or(-1));
        }
        if v.has_data_resources() {
            w.i32(self.data_resource_offset.unwrap_or(-1));
        }
        guid_at
    }
}
