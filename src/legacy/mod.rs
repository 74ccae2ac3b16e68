//! Legacy cooked packages (UE 4.26 – 5.7): the `.uasset`/`.umap` header
//! with its summary and tables, the `.uexp` export data beside it and the
//! bulk-data companions (`.ubulk`, `.uptnl`, `.m.ubulk`).
//!
//! [`LegacyPackage::read`] parses a header completely; [`LegacyPackage::write`]
//! writes it back byte for byte, and also lays out an edited package (new names, grown
//! exports) consistently; `new_cooked` builds one from scratch. The layout follows the engine's
//! `FPackageFileSummary`, `FObjectImport`, `FObjectExport` and
//! `FObjectDataResource` serializers; the version conditions live in
//! [`crate::version`] (legacy package section). Sections the converter does
//! not need to understand (asset registry data, thumbnails, searchable names,
//! gatherable text, Verse cells, metadata, import type hierarchies, world tile
//! info) are kept as raw bytes at their place (`raw_sections`).
//!
//! Submodules: `summary` (every summary field with its version condition; version resolution:
//! unversioned → `--engine`, versioned → its own versions checked against `--engine`;
//! `FieldPositions` for error offsets), `tables` (imports, exports, soft object paths, data
//! resources), `names` (`NameEntry` + `name_map_hashes`, `FName`, `PackageIndex`,
//! `EngineString`), `files` (`PackageFiles`, `export_data`, `build_uexp`), `report` (what
//! `zenpak inspect` prints, `"kind": "legacy-package"`; CLI side in `cli/inspect.rs`).
//!
//! # Reading and writing a header
//!
//! 1. The summary's file versions (or, when all 0, the `--engine` release's) decide which
//!    fields exist.
//! 2. Sections with a positive offset, sorted by offset, each extend to the next one (the last
//!    to `TotalHeaderSize`). The summary must end exactly where the first section starts.
//! 3. Modeled sections (names, soft object paths, imports, exports, depends map, soft package
//!    references, preload dependencies, data resources) must fill their extent exactly; zero
//!    bytes after the last one are kept as `header_padding` (tool-saved SN2 packages pad there).
//! 4. `write` keeps the read order (`layout`; a section gaining content is inserted at its
//!    engine position), recomputes offsets, counts and `TotalHeaderSize`, and writes every other
//!    field as stored; offsets 0 / -1 (absent sections) stay. It does not move export serial
//!    offsets or the bulk data start: `assign_export_offsets` does (exports back to back after
//!    the header, bulk data after the last), and `PackageFiles::build_uexp` builds the `.uexp`.
//!
//! Invariants: every count is checked against its section's bytes before allocating; every
//! `FName` index and `FPackageIndex` against the table sizes; each export's preload dependency
//! range must lie in the preload list; export serial ranges (positions in header + `.uexp`)
//! must lie wholly inside one file. Errors name the file, the structure path
//! (`import map > import 3`) and the byte offset (a summary value's error points at its field).
//!
//! # Format facts (corpus-checked; versions per release in `EngineVersion::legacy_file_versions`)
//!
//! - All corpus packages are unversioned. Legacy file version: 4.26/4.27 -7, 5.0–5.5 -8,
//!   5.6/5.7 -9. UE5 object version: 5.0 1004, 5.1 1008, 5.2/5.3 1009, 5.4 1012, 5.5 1013,
//!   5.6 1017, 5.7 1018 (UE4: 522 everywhere). The corpus pins 5.5 < 1014, 5.6 ≥ 1016,
//!   5.7 = 1018; the rest follow each release's `AUTOMATIC_VERSION` (no effect on unversioned
//!   cooked headers). Versioned packages shared by two releases (4.26/4.27, 5.2/5.3) need
//!   `--engine`.
//! - Summary: `LegacyUE3Version` unless legacy -4; `FileVersionUE5` from -8; from 1016
//!   `SavedHash` (20 B) + `TotalHeaderSize` right after the versions, else `TotalHeaderSize`
//!   after the custom versions and a 16-byte `Guid` after the thumbnail offset; soft object
//!   paths 1008; `LocalizationId`/`PersistentGuid` only without `PKG_FilterEditorOnly`; Verse
//!   cell counts/offsets 1015; `MetaDataOffset` 1014; import type hierarchies 1018;
//!   names-referenced-from-export-data 1001; payload TOC offset (i64) 1002; data resources
//!   1009. Custom versions in optimized form (GUID + i32); compressed chunks must be 0.
//! - Import: `PackageName` only with editor-only data (cooked imports 4.27–5.7 lack it: 32 B
//!   in UE5); `bImportOptional` from 1003.
//! - Export: package GUID before 1005; `bIsInheritedInstance` from 1006; `bGeneratePublicHash`
//!   from 1003; script serialization start/end offsets from 1010 **only without
//!   `PKG_UnversionedProperties`**.
//! - Data resources: version 1, or 2 (`AddedCookedIndex`, +1-byte cooked index): 44 / 45 B.
//! - Name map hashes (two u16): low halves of the deprecated case-insensitive CRC and of
//!   `StrCrc32` (`names::name_map_hashes`); all 3,863 non-zero corpus pairs match (UTF-16
//!   too). Tool-written packages (retoc, UAssetAPI, SN2) store zeros.
//! - Cooked layout (all 260 corpus packages): exports contiguous from the header end in serial
//!   offset order; bulk data start = end of the last export; the `.uexp` ends with the tag
//!   `C1 83 2A 9E` (except SN2's 36 tool-saved packages).
//!
//! # Tests (`tests/packages/`)
//!
//! `legacy_corpus.rs` (all 260 packages parse, layout facts, `assign_export_offsets` is a
//! no-op, byte-exact round trip, name hashes); `legacy_inspect.rs` (`inspect` JSON/text, exit 1
//! with file/structure/offset); `legacy_versions.rs` (versioned packages, mismatch/ambiguity
//! errors, edited packages, `new_cooked` for every release 4.26–5.7); `legacy_mutation.rs`
//! (~95,000 truncated/overwritten/hostile inputs: no panic, errors with in-range offsets).

pub(crate) mod bulk_data;
mod cooked;
pub mod edit;
mod files;
mod names;
mod report;
mod summary;
mod tables;

use std::collections::BTreeMap;

use serde::Serialize;

use crate::binary::{Reader, Writer};
use crate::diagnostic::Diagnostic;
use crate::error::{Context, Error, Result};
use crate::version::EngineVersion;

pub use files::{BulkCompanion, BulkKind, PackageFiles};
pub use names::{
    name_map_hashes, str_crc_deprecated, DisplayName, EngineString, FName, NameEntry, PackageIndex,
    ResolvedIndex,
};
pub use report::{ExportReport, ImportReport, PackageReport, SectionReport};
pub use summary::{
    CustomVersion, FieldPositions, FileVersions, Generation, SavedEngineVersion, Summary,
    SummaryRead, PACKAGE_FILE_TAG, PKG_COOKED, PKG_FILTER_EDITOR_ONLY,
    PKG_REQUIRES_LOCALIZATION_GATHER, PKG_UNVERSIONED_PROPERTIES,
};
pub(crate) use tables::DATA_RESOURCE_VERSION_COOKED_INDEX;
pub use tables::{DataResource, ObjectExport, ObjectImport, SoftObjectPath, TableContext};

/// A header section addressed by an offset in the summary. The declaration
/// order is the order the engine writes them in (used to place sections a
/// package did not have before).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Section {
    Names,
    SoftObjectPaths,
    GatherableText,
    Imports,
    Exports,
    CellImports,
    CellExports,
    Metadata,
    Depends,
    SoftPackageReferences,
    SearchableNames,
    Thumbnails,
    ImportTypeHierarchies,
    AssetRegistryData,
    WorldTileInfo,
    PreloadDependencies,
    DataResources,
}

impl Section {
    pub(crate) const ALL: [Section; 17] = [
        Section::Names,
        Section::SoftObjectPaths,
        Section::GatherableText,
        Section::Imports,
        Section::Exports,
        Section::CellImports,
        Section::CellExports,
        Section::Metadata,
        Section::Depends,
        Section::SoftPackageReferences,
        Section::SearchableNames,
        Section::Thumbnails,
        Section::ImportTypeHierarchies,
        Section::AssetRegistryData,
        Section::WorldTileInfo,
        Section::PreloadDependencies,
        Section::DataResources,
    ];

    pub(crate) fn label(self) -> &'static str {
        match self {
            Section::Names => "name map",
            Section::SoftObjectPaths => "soft object paths",
            Section::GatherableText => "gatherable text data",
            Section::Imports => "import map",
            Section::Exports => "export map",
            Section::CellImports => "cell import map",
            Section::CellExports => "cell export map",
            Section::Metadata => "metadata",
            Section::Depends => "depends map",
            Section::SoftPackageReferences => "soft package references",
            Section::SearchableNames => "searchable names",
            Section::Thumbnails => "thumbnail table",
            Section::ImportTypeHierarchies => "import type hierarchies",
            Section::AssetRegistryData => "asset registry data",
            Section::WorldTileInfo => "world tile info",
            Section::PreloadDependencies => "preload dependencies",
            Section::DataResources => "data resources",
        }
    }

    /// Sections zenpak models field by field (the others are kept as bytes).
    pub(crate) fn is_modeled(self) -> bool {
        matches!(
            self,
            Section::Names
                | Section::SoftObjectPaths
                | Section::Imports
                | Section::Exports
                | Section::Depends
                | Section::SoftPackageReferences
                | Section::PreloadDependencies
                | Section::DataResources
        )
    }

    /// The section's offset as the summary gives it (`None`: the version has no such field).
    pub(crate) fn offset_in(self, s: &Summary) -> Option<i64> {
        let v = match self {
            Section::Names => Some(s.name_offset),
            Section::SoftObjectPaths => s.soft_object_paths_offset,
            Section::GatherableText => Some(s.gatherable_text_data_offset),
            Section::Imports => Some(s.import_offset),
            Section::Exports => Some(s.export_offset),
            Section::CellImports => s.cell_import_offset,
            Section::CellExports => s.cell_export_offset,
            Section::Metadata => s.metadata_offset,
            Section::Depends => Some(s.depends_offset),
            Section::SoftPackageReferences => Some(s.soft_package_references_offset),
            Section::SearchableNames => Some(s.searchable_names_offset),
            Section::Thumbnails => Some(s.thumbnail_table_offset),
            Section::ImportTypeHierarchies => s.import_type_hierarchies_offset,
            Section::AssetRegistryData => Some(s.asset_registry_data_offset),
            Section::WorldTileInfo => Some(s.world_tile_info_data_offset),
            Section::PreloadDependencies => Some(s.preload_dependency_offset),
            Section::DataResources => s.data_resource_offset,
        };
        v.map(i64::from)
    }

    fn set_offset_in(self, s: &mut Summary, offset: i32) {
        match self {
            Section::Names => s.name_offset = offset,
            Section::SoftObjectPaths => s.soft_object_paths_offset = Some(offset),
            Section::GatherableText => s.gatherable_text_data_offset = offset,
            Section::Imports => s.import_offset = offset,
            Section::Exports => s.export_offset = offset,
            Section::CellImports => s.cell_import_offset = Some(offset),
            Section::CellExports => s.cell_export_offset = Some(offset),
            Section::Metadata => s.metadata_offset = Some(offset),
            Section::Depends => s.depends_offset = offset,
            Section::SoftPackageReferences => s.soft_package_references_offset = offset,
            Section::SearchableNames => s.searchable_names_offset = offset,
            Section::Thumbnails => s.thumbnail_table_offset = offset,
            Section::ImportTypeHierarchies => s.import_type_hierarchies_offset = Some(offset),
            Section::AssetRegistryData => s.asset_registry_data_offset = offset,
            Section::WorldTileInfo => s.world_tile_info_data_offset = offset,
            Section::PreloadDependencies => s.preload_dependency_offset = offset,
            Section::DataResources => s.data_resource_offset = Some(offset),
        }
    }
}

/// The data resource table (UE5 `DATA_RESOURCES`): its version and entries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DataResources {
    pub version: u32,
    pub entries: Vec<DataResource>,
}

/// A parsed legacy package header.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LegacyPackage {
    /// The release the package was cooked with (given, or read from a versioned summary).
    pub engine: EngineVersion,
    /// The object versions the package was read with.
    pub versions: FileVersions,
    pub summary: Summary,
    pub names: Vec<NameEntry>,
    pub soft_object_paths: Vec<SoftObjectPath>,
    pub imports: Vec<ObjectImport>,
    pub exports: Vec<ObjectExport>,
    /// Per export, the objects it depends on (cooked packages: all empty).
    pub depends_map: Vec<Vec<PackageIndex>>,
    pub soft_package_references: Vec<FName>,
    /// The flat preload dependency list that exports index into.
    pub preload_dependencies: Vec<PackageIndex>,
    pub data_resources: Option<DataResources>,
    /// Sections kept as bytes, by section.
    #[serde(skip)]
    pub(crate) raw_sections: BTreeMap<Section, Vec<u8>>,
    /// The sections with a positive offset, in file order. The writer keeps this order.
    pub(crate) layout: Vec<Section>,
    /// Zero bytes between the last table and `TotalHeaderSize` (some cooks pad there).
    pub header_padding: usize,
    /// Bytes of the `.uasset` after `TotalHeaderSize` (cooked packages: none).
    #[serde(skip)]
    pub(crate) after_header: Vec<u8>,
    /// A versioned package whose versions are not the given release's: read
    /// with its own versions; callers report this warning.
    #[serde(skip)]
    pub version_warning: Option<Diagnostic>,
}

impl LegacyPackage {
    /// Parses a `.uasset`/`.umap` header. `engine` is required for
    /// unversioned packages and must agree with a versioned one.
    pub fn read(header: &[u8], engine: Option<EngineVersion>) -> Result<LegacyPackage> {
        Self::read_sections(header, engine, |_| true)
    }

    /// [`read`](Self::read) of the summary, the names and the imports only,
    /// every other table left empty (and unchecked): what a reader of the
    /// imports alone needs, in a fraction of the time.
    pub(crate) fn read_imports(
        header: &[u8],
        engine: Option<EngineVersion>,
    ) -> Result<LegacyPackage> {
        Self::read_sections(header, engine, |s| {
            matches!(s, Section::Names | Section::Imports)
        })
    }

    /// [`read`](Self::read) parsing the sections `wanted` says (the summary
    /// and the section layout are always read and checked).
    fn read_sections(
        header: &[u8],
        engine: Option<EngineVersion>,
        wanted: impl Fn(Section) -> bool,
    ) -> Result<LegacyPackage> {
        let mut r = Reader::new(header);
        let mut positions = FieldPositions::default();
        let SummaryRead {
            summary,
            engine,
            versions,
            warning: version_warning,
        } = Summary::read_with_positions(&mut r, engine, &mut positions)
            .context("package summary")?;
        let summary_end = r.pos();

        let header_size = summary.total_header_size;
        if header_size < summary_end as i32 || header_size as usize > header.len() {
            return Err(Error::format(
                positions.total_header_size as u64,
                format!(
                    "total header size {header_size} is outside the file (summary ends at {summary_end}, file has {} bytes)",
                    header.len()
                ),
            )
            .within("total header size")
            .within("package summary"));
        }
        let header_size = header_size as usize;

        // Find each section's extent: from its offset to the next section's.
        let mut placed: Vec<(usize, Section)> = Vec::new();
        for section in Section::ALL {
            let Some(offset) = section.offset_in(&summary) else {
                continue;
            };
            if offset <= 0 {
                continue;
            }
            if offset < summary_end as i64 || offset > header_size as i64 {
                return Err(Error::format(
                    positions.of(section) as u64,
                    format!(
                        "{} offset {offset} is outside the header (summary ends at {summary_end}, header size {header_size})",
                        section.label()
                    ),
                )
                .within("package summary"));
            }
            placed.push((offset as usize, section));
        }
        placed.sort();
        let first = placed.first().map_or(header_size, |p| p.0);
        if first != summary_end {
            return Err(Error::format(
                summary_end as u64,
                format!(
                    "{} bytes between the end of the summary and the first section",
                    first - summary_end
                ),
            )
            .within("package summary"));
        }

        let mut package = LegacyPackage {
            layout: placed.iter().map(|p| p.1).collect(),
            after_header: header[header_size..].to_vec(),
            version_warning,
            ..LegacyPackage::without_tables(engine, versions, summary)
        };

        // Names first: every other table refers into them. Imports and
        // exports are counted before they are read so references can be checked.
        let extent = |section: Section| -> Option<(usize, usize)> {
            let i = placed.iter().position(|p| p.1 == section)?;
            let end = placed.get(i + 1).map_or(header_size, |p| p.0);
            Some((placed[i].0, end))
        };
        let mut order: Vec<Section> = package.layout.clone();
        order.sort_by_key(|s| match s {
            Section::Names => 0,
            Section::Imports | Section::Exports => 1,
            _ => 2,
        });
        for section in order.into_iter().filter(|&s| wanted(s)) {
            let (start, end) = extent(section).expect("section is placed");
            let mut sr = Reader::with_base(&header[start..end], start as u64);
            package
                .read_section(section, &mut sr)
                .context(section.label())?;
            let is_last = placed.last().map(|p| p.1) == Some(section);
            if section.is_modeled() && is_last && sr.rest().iter().all(|&b| b == 0) {
                // Some cooks pad the header with zeros after its last table.
                package.header_padding = sr.remaining();
                sr.skip(sr.remaining())?;
            }
            if section.is_modeled() && !sr.at_end() {
                return Err(sr
                    .error(format!(
                        "{} unread bytes before the next section at offset {end}",
                        sr.remaining()
                    ))
                    .within(section.label()));
            }
        }
        package.check_counts(&positions)?;
        Ok(package)
    }

    /// An empty cooked, unversioned package of `engine` (no names, imports
    /// or exports yet) with the summary fields a cook writes: the release's
    /// legacy file version, `PKG_Cooked | PKG_FilterEditorOnly |
    /// PKG_UnversionedProperties`, one generation, absent sections at 0 and
    /// absent UE5 offsets at -1. Fill the tables, then
    /// [`assign_export_offsets`](Self::assign_export_offsets) and
    /// [`write`](Self::write).
    pub fn new_cooked(engine: EngineVersion, package_name: Option<&str>) -> LegacyPackage {
        let table = engine.legacy_file_versions();
        let v = FileVersions {
            legacy: table.legacy,
            ue4: table.ue4,
            ue5: table.ue5,
            licensee: 0,
        };
        let versions = v;
        // Present fields start at 0, absent ones are None; UE5 offsets of
        // sections a cook leaves out are -1.
        let zero = |present: bool| present.then_some(0);
        let summary = Summary {
            legacy_file_version: table.legacy,
            legacy_ue3_version: zero(v.has_legacy_ue3_version()),
            file_version_ue5: zero(v.has_ue5_version()),
            saved_hash: v.has_saved_hash().then_some([0; 20]),
            package_name: EngineString::new(package_name.unwrap_or("None")),
            package_flags: PKG_COOKED | PKG_FILTER_EDITOR_ONLY | PKG_UNVERSIONED_PROPERTIES,
            soft_object_paths_count: zero(v.has_soft_object_path_list()),
            soft_object_paths_offset: zero(v.has_soft_object_path_list()),
            cell_export_count: zero(v.has_verse_cells()),
            cell_export_offset: zero(v.has_verse_cells()),
            cell_import_count: zero(v.has_verse_cells()),
            cell_import_offset: zero(v.has_verse_cells()),
            metadata_offset: zero(v.has_metadata_offset()),
            import_type_hierarchies_count: zero(v.has_import_type_hierarchies()),
            import_type_hierarchies_offset: zero(v.has_import_type_hierarchies()),
            guid: (!v.has_saved_hash()).then_some([0; 16]),
            generations: vec![Generation {
                export_count: 0,
                name_count: 0,
            }],
            num_texture_allocations: zero(v.has_texture_allocations()),
            names_referenced_from_export_data_count: zero(
                v.has_names_referenced_from_export_data(),
            ),
            payload_toc_offset: v.has_payload_toc().then_some(-1),
            data_resource_offset: v.has_data_resources().then_some(-1),
            ..Summary::default()
        };
        LegacyPackage::without_tables(engine, versions, summary)
    }

    /// A package of `summary` with every table empty.
    fn without_tables(
        engine: EngineVersion,
        versions: FileVersions,
        summary: Summary,
    ) -> LegacyPackage {
        LegacyPackage {
            engine,
            versions,
            summary,
            names: Vec::new(),
            soft_object_paths: Vec::new(),
            imports: Vec::new(),
            exports: Vec::new(),
            depends_map: Vec::new(),
            soft_package_references: Vec::new(),
            preload_dependencies: Vec::new(),
            data_resources: None,
            raw_sections: BTreeMap::new(),
            layout: Vec::new(),
            header_padding: 0,
            after_header: Vec::new(),
            version_warning: None,
        }
    }

    fn table_context(&self) -> TableContext {
        TableContext {
            versions: self.versions,
            filter_editor_only: self.summary.filter_editor_only(),
            unversioned_properties: self.summary.unversioned_properties(),
            name_count: self.names.len(),
            import_count: self.summary.import_count.max(0) as usize,
            export_count: self.summary.export_count.max(0) as usize,
        }
    }

    fn read_section(&mut self, section: Section, r: &mut Reader) -> Result<()> {
        let s = &self.summary;
        match section {
            Section::Names => {
                let count = r
                    .check_count(s.name_count as i64, 5)
                    .context("name count")?;
                let hashes = self.versions.has_name_hashes();
                self.names = r.records(count, "name", |r| NameEntry::read(r, hashes))?;
            }
            Section::Imports => {
                let count = r
                    .check_count(s.import_count as i64, 28)
                    .context("import count")?;
                let cx = self.table_context();
                self.imports = r.records(count, "import", |r| ObjectImport::read(r, &cx))?;
            }
            Section::Exports => {
                let count = r
                    .check_count(s.export_count as i64, 64)
                    .context("export count")?;
                let cx = self.table_context();
                self.exports = r.records(count, "export", |r| ObjectExport::read(r, &cx))?;
            }
            Section::SoftObjectPaths => {
                let count = s.soft_object_paths_count.unwrap_or(0) as i64;
                let count = r.check_count(count, 20).context("soft object path count")?;
                let cx = self.table_context();
                self.soft_object_paths =
                    r.records(count, "soft object path", |r| SoftObjectPath::read(r, &cx))?;
            }
            Section::Depends => {
                let cx = self.table_context();
                let count = r
                    .check_count(s.export_count as i64, 4)
                    .context("export count")?;
                let read_index = |r: &mut Reader| {
                    PackageIndex::read_checked(r, cx.import_count, cx.export_count)
                };
                self.depends_map = r.records(count, "export", |r| {
                    let n = r.count_i32(4)?;
                    r.records(n, "dependency", read_index)
                })?;
            }
            Section::SoftPackageReferences => {
                let count = s.soft_package_references_count as i64;
                let count = r
                    .check_count(count, 8)
                    .context("soft package reference count")?;
                let names = self.names.len();
                self.soft_package_references =
                    r.records(count, "reference", |r| FName::read(r, names))?;
            }
            Section::PreloadDependencies => {
                let cx = self.table_context();
                let count = s.preload_dependency_count as i64;
                let count = r
                    .check_count(count, 4)
                    .context("preload dependency count")?;
                self.preload_dependencies = r.records(count, "dependency", |r| {
                    PackageIndex::read_checked(r, cx.import_count, cx.export_count)
                })?;
            }
            Section::DataResources => {
                let cx = self.table_context();
                let version_at = r.pos();
                let version = r.u32().context("version")?;
                if version == 0 || version > DATA_RESOURCE_LATEST_VERSION {
                    return Err(r.error_at(
                        version_at,
                        format!("data resource version {version} is not 1..={DATA_RESOURCE_LATEST_VERSION}"),
                    ));
                }
                let count = r.count_i32(44).context("count")?;
                let entries =
                    r.records(count, "resource", |r| DataResource::read(r, version, &cx))?;
                self.data_resources = Some(DataResources { version, entries });
            }
            raw => {
                self.raw_sections.insert(raw, r.rest().to_vec());
                r.skip(r.remaining())?;
            }
        }
        Ok(())
    }

    /// Cross-checks the tables against each other once all are read.
    fn check_counts(&self, positions: &FieldPositions) -> Result<()> {
        let s = &self.summary;
        let expect = |what: &str, section: Section, count: i64| -> Result<()> {
            if count > 0 && !self.layout.contains(&section) {
                return Err(Error::format(
                    positions.of(section).saturating_sub(4) as u64,
                    format!("the summary counts {count} {what} but gives no offset for them"),
                )
                .within("package summary"));
            }
            Ok(())
        };
        expect("names", Section::Names, s.name_count as i64)?;
        expect("imports", Section::Imports, s.import_count as i64)?;
        expect("exports", Section::Exports, s.export_count as i64)?;
        expect(
            "soft object paths",
            Section::SoftObjectPaths,
            s.soft_object_paths_count.unwrap_or(0) as i64,
        )?;
        expect(
            "soft package references",
            Section::SoftPackageReferences,
            s.soft_package_references_count as i64,
        )?;
        expect(
            "preload dependencies",
            Section::PreloadDependencies,
            s.preload_dependency_count as i64,
        )?;
        let preload_count = self.preload_dependencies.len() as i64;
        for (i, export) in self.exports.iter().enumerate() {
            let total = export.preload_dependency_total();
            let counts = [
                export.serialization_before_serialization_dependencies,
                export.create_before_serialization_dependencies,
                export.serialization_before_create_dependencies,
                export.create_before_create_dependencies,
            ];
            let bad = counts.iter().any(|&c| c < 0)
                || (export.first_export_dependency >= 0
                    && export.first_export_dependency as i64 + total > preload_count)
                || (export.first_export_dependency < -1)
                || (export.first_export_dependency == -1 && total != 0);
            if bad {
                return Err(Error::format(
                    s.export_offset.max(0) as u64,
                    format!(
                        "export {i} lists preload dependencies {}..+{total} but the package has {preload_count}",
                        export.first_export_dependency
                    ),
                )
                .within("export map"));
            }
        }
        Ok(())
    }

    /// Writes the header. Section offsets, table counts and the total header
    /// size are recomputed from the tables; every other summary field
    /// (including export serial offsets and the bulk data start offset) is
    /// written as stored.
    pub fn write(&self) -> Result<Vec<u8>> {
        let cx = TableContext {
            name_count: self.names.len(),
            import_count: self.imports.len(),
            export_count: self.exports.len(),
            ..self.table_context()
        };
        let mut layout = self.layout.clone();
        for section in Section::ALL {
            if !layout.contains(&section) && self.has_content(section) {
                let at = layout
                    .iter()
                    .position(|s| *s > section)
                    .unwrap_or(layout.len());
                layout.insert(at, section);
            }
        }
        let mut summary = self.summary.clone();
        summary.name_count = self.names.len() as i32;
        summary.import_count = self.imports.len() as i32;
        summary.export_count = self.exports.len() as i32;
        if layout.contains(&Section::SoftObjectPaths) {
            summary.soft_object_paths_count = Some(self.soft_object_paths.len() as i32);
        }
        if layout.contains(&Section::SoftPackageReferences) {
            summary.soft_package_references_count = self.soft_package_references.len() as i32;
        }
        if layout.contains(&Section::PreloadDependencies) {
            summary.preload_dependency_count = self.preload_dependencies.len() as i32;
        }
        // The summary goes first with every section's offset set (to 0), so
        // that it has its final size; each section follows in one buffer,
        // and the summary is written again over the first, its offsets known.
        for &section in &layout {
            section.set_offset_in(&mut summary, 0);
        }
        let mut w = Writer::with_capacity(self.after_header.len() + self.header_padding + 4096);
        summary.write(&mut w, &self.versions);
        let summary_size = w.pos();
        let header_size = |position: usize| {
            i32::try_from(position)
                .map_err(|_| Error::limit("package header size", position as u64, i32::MAX as u64))
        };
        for &section in &layout {
            section.set_offset_in(&mut summary, header_size(w.pos())?);
            self.write_section(section, &cx, &mut w)?;
        }
        summary.total_header_size = header_size(w.pos() + self.header_padding)?;
        w.zeros(self.header_padding);
        w.bytes(&self.after_header);
        let mut head = Writer::with_capacity(summary_size);
        summary.write(&mut head, &self.versions);
        let mut out = w.into_inner();
        if head.pos() != summary_size {
            return Err(Error::internal(
                "the summary's size changed with its section offsets",
            ));
        }
        out[..summary_size].copy_from_slice(&head.into_inner());
        Ok(out)
    }

    /// Each section in file order with its offset and size, as the summary gives them.
    pub fn section_extents(&self) -> Vec<(Section, i64, i64)> {
        let mut out = Vec::with_capacity(self.layout.len());
        let end = self.summary.total_header_size as i64 - self.header_padding as i64;
        for (i, section) in self.layout.iter().enumerate() {
            let start = section.offset_in(&self.summary).unwrap_or(0);
            let next = self
                .layout
                .get(i + 1)
                .and_then(|s| s.offset_in(&self.summary))
                .unwrap_or(end);
            out.push((*section, start, next - start));
        }
        out
    }

    /// The size [`write`](Self::write) will give the header.
    pub(crate) fn header_size(&self) -> Result<usize> {
        Ok(self.write()?.len())
    }

    /// Lays the exports out as a cook does: back to back right after the
    /// header, in their current serial offset order (ties by index), using
    /// their current serial sizes; the bulk data start offset follows the
    /// last export. Call after changing names, tables or export sizes, then
    /// write the header and the exports' data in that order (see
    /// [`PackageFiles::build_uexp`]). The corpus confirms the layout: in all
    /// its packages the exports are contiguous from the header's end and the
    /// bulk data start offset is the end of the last export.
    pub fn assign_export_offsets(&mut self) -> Result<()> {
        let mut order: Vec<usize> = (0..self.exports.len()).collect();
        order.sort_by_key(|&i| (self.exports[i].serial_offset, i));
        let mut next = self.header_size()? as i64;
        for i in order {
            let export = &mut self.exports[i];
            if export.serial_size < 0 {
                return Err(Error::invalid(format!(
                    "export {i} has a negative serial size"
                )));
            }
            export.serial_offset = next;
            next = next
                .checked_add(export.serial_size)
                .ok_or_else(|| Error::invalid("export sizes overflow"))?;
        }
        self.summary.bulk_data_start_offset = next;
        Ok(())
    }

    fn has_content(&self, section: Section) -> bool {
        match section {
            Section::Names => !self.names.is_empty(),
            Section::SoftObjectPaths => !self.soft_object_paths.is_empty(),
            Section::Imports => !self.imports.is_empty(),
            Section::Exports => !self.exports.is_empty(),
            Section::Depends => !self.depends_map.is_empty(),
            Section::SoftPackageReferences => !self.soft_package_references.is_empty(),
            Section::PreloadDependencies => !self.preload_dependencies.is_empty(),
            Section::DataResources => self.data_resources.is_some(),
            raw => self.raw_sections.get(&raw).is_some_and(|b| !b.is_empty()),
        }
    }

    fn write_section(&self, section: Section, cx: &TableContext, w: &mut Writer) -> Result<()> {
        match section {
            Section::Names => {
                let hashes = self.versions.has_name_hashes();
                for name in &self.names {
                    name.write(w, hashes);
                }
            }
            Section::SoftObjectPaths => self.soft_object_paths.iter().for_each(|p| p.write(w)),
            Section::Imports => self.imports.iter().for_each(|i| i.write(w, cx)),
            Section::Exports => self.exports.iter().for_each(|e| e.write(w, cx)),
            Section::Depends => {
                if self.depends_map.len() != self.exports.len() {
                    return Err(Error::invalid(format!(
                        "the depends map has {} entries but there are {} exports",
                        self.depends_map.len(),
                        self.exports.len()
                    )));
                }
                for list in &self.depends_map {
                    w.i32(list.len() as i32);
                    list.iter().for_each(|i| i.write(w));
                }
            }
            Section::SoftPackageReferences => {
                self.soft_package_references.iter().for_each(|n| n.write(w))
            }
            Section::PreloadDependencies => {
                self.preload_dependencies.iter().for_each(|i| i.write(w))
            }
            Section::DataResources => {
                let resources = self.data_resources.as_ref().ok_or_else(|| {
                    Error::internal("the layout has a data resource section but the package has no data resources")
                })?;
                w.u32(resources.version);
                w.i32(resources.entries.len() as i32);
                resources
                    .entries
                    .iter()
                    .for_each(|d| d.write(w, resources.version));
            }
            raw => {
                if let Some(bytes) = self.raw_sections.get(&raw) {
                    w.bytes(bytes);
                }
            }
        }
        Ok(())
    }

    /// The package name the summary carries (5.x cooks write it; UE4 cooks write `None`).
    pub fn package_name(&self) -> Option<&str> {
        self.summary.package_name()
    }

    /// The text of a name (with its number suffix).
    pub fn name(&self, name: FName) -> Result<String> {
        name.resolve(&self.names)
    }

    /// Refuses an import or export whose outer chain loops back on itself
    /// (import 1's outer is 2 and 2's outer is 1): its path has no end, and
    /// the engine would never finish resolving it. Refuses too an export
    /// that is its own class, super or template: the engine creates an
    /// export after its class and template and links its super first, so it
    /// would recurse into the export it is creating (or crash).
    pub(crate) fn check_outer_chains(&self) -> Result<()> {
        for (e, export) in self.exports.iter().enumerate() {
            for (what, index) in [
                ("class", export.class_index),
                ("super", export.super_index),
                ("template", export.template_index),
            ] {
                if index.resolve() == ResolvedIndex::Export(e) {
                    return Err(Error::invalid(format!(
                        "the export is its own {what} (its {what} index {} points at itself)",
                        index.0
                    ))
                    .within(format!("export {e}"))
                    .within("export map"));
                }
            }
        }
        // Slots: imports, then exports.
        let imports = self.imports.len();
        let slot = |index: PackageIndex| match index.resolve() {
            ResolvedIndex::Import(i) if i < imports => Some(i),
            ResolvedIndex::Export(i) if i < self.exports.len() => Some(imports + i),
            _ => None,
        };
        let outer = |slot: usize| match slot.checked_sub(imports) {
            None => self.imports[slot].outer_index,
            Some(e) => self.exports[e].outer_index,
        };
        match first_in_outer_loop(imports + self.exports.len(), |at| slot(outer(at))) {
            None => Ok(()),
            Some(at) => {
                let what = match at.checked_sub(imports) {
                    None => format!("import {at}"),
                    Some(e) => format!("export {e}"),
                };
                Err(Error::invalid("the outer chain loops").within(what))
            }
        }
    }

    /// The package an import belongs to: the name of its outermost import.
    pub fn import_package_name(&self, index: usize) -> Result<String> {
        let mut current = index;
        for _ in 0..=self.imports.len() {
            let import = self.import(current)?;
            match import.outer_index.resolve() {
                ResolvedIndex::Null => return self.name(import.object_name),
                ResolvedIndex::Import(outer) => current = outer,
                ResolvedIndex::Export(_) => {
                    return Err(Error::invalid(format!(
                        "import {index} has an export as an outer"
                    )))
                }
            }
        }
        Err(Error::invalid("the outer chain loops").within(format!("import {index}")))
    }

    fn import(&self, index: usize) -> Result<&ObjectImport> {
        self.imports.get(index).ok_or_else(|| {
            Error::invalid(format!(
                "import {index} does not exist ({} imports)",
                self.imports.len()
            ))
        })
    }

    /// The full path of an object, as the engine prints it:
    /// `/Script/Engine.StaticMesh`, `/Game/X/Y.Y:Sub`, `/Game/X/Y.Y:Sub.Inner`.
    /// `package_name` names this package for exports (defaults to the summary's name).
    pub fn object_path(&self, index: PackageIndex, package_name: Option<&str>) -> Result<String> {
        // Collect the outer chain, innermost first.
        let mut chain: Vec<PackageIndex> = Vec::new();
        let mut current = index;
        while !current.is_null() {
            if chain.len() > self.imports.len() + self.exports.len() {
                return Err(
                    Error::invalid("the outer chain loops").within(format!("object {index}"))
                );
            }
            chain.push(current);
            current = match current.resolve() {
                ResolvedIndex::Import(i) => self.import(i)?.outer_index,
                ResolvedIndex::Export(i) => {
                    self.exports
                        .get(i)
                        .ok_or_else(|| Error::invalid(format!("export {i} does not exist")))?
                        .outer_index
                }
                ResolvedIndex::Null => PackageIndex::NULL,
            };
        }
        let Some(&root) = chain.last() else {
            return Ok(String::new());
        };
        // An import without outer is a package; an export without outer lives in this package.
        let mut path = String::new();
        let mut depth_below_package = 0usize;
        if root.is_export() {
            let own = package_name
                .map(str::to_string)
                .or_else(|| self.package_name().map(str::to_string))
                .ok_or_else(|| {
                    Error::usage("the package does not say its name; give it (--package-name)")
                })?;
            path.push_str(&own);
        }
        for (step, item) in chain.iter().rev().enumerate() {
            let name = match item.resolve() {
                ResolvedIndex::Import(i) => self.name(self.imports[i].object_name)?,
                ResolvedIndex::Export(i) => self.name(self.exports[i].object_name)?,
                ResolvedIndex::Null => unreachable!("null indices end the chain"),
            };
            if step == 0 && root.is_import() {
                path.push_str(&name);
                continue;
            }
            // The first object under a package follows a '.', the next a ':'
            // (subobject delimiter), any deeper one a '.' again.
            path.push(if depth_below_package == 1 { ':' } else { '.' });
            path.push_str(&name);
            depth_below_package += 1;
        }
        Ok(path)
    }

    /// The names (number suffixes included) from the outermost object down
    /// to `index`: an import's start with its package, an export's with
    /// its top-level export (this package's name is not among them).
    pub(crate) fn object_names(&self, index: PackageIndex) -> Result<Vec<String>> {
        let mut names = Vec::new();
        let mut current = index;
        while !current.is_null() {
            if names.len() > self.imports.len() + self.exports.len() {
                return Err(
                    Error::invalid("the outer chain loops").within(format!("object {index}"))
                );
            }
            let (name, outer) = match current.resolve() {
                ResolvedIndex::Import(i) => {
                    let import = self.import(i)?;
                    (import.object_name, import.outer_index)
                }
                ResolvedIndex::Export(i) => {
                    let export = self
                        .exports
                        .get(i)
                        .ok_or_else(|| Error::invalid(format!("export {i} does not exist")))?;
                    (export.object_name, export.outer_index)
                }
                ResolvedIndex::Null => break,
            };
            names.push(self.name(name)?);
            current = outer;
        }
        names.reverse();
        Ok(names)
    }

    /// Full path of import `index`.
    pub fn import_path(&self, index: usize) -> Result<String> {
        self.object_path(PackageIndex::from_import(index), None)
    }

    /// Full path of export `index` (`package_name` as for [`object_path`](Self::object_path)).
    pub fn export_path(&self, index: usize, package_name: Option<&str>) -> Result<String> {
        self.object_path(PackageIndex::from_export(index), package_name)
    }

    /// The preload dependencies of one export, as the four lists the engine
    /// stores consecutively: (serialize-before-serialize, create-before-serialize,
    /// serialize-before-create, create-before-create).
    pub fn export_preload_dependencies(&self, index: usize) -> Result<[&[PackageIndex]; 4]> {
        let export = self
            .exports
            .get(index)
            .ok_or_else(|| Error::invalid(format!("export {index} does not exist")))?;
        if export.first_export_dependency < 0 {
            return Ok([&[], &[], &[], &[]]);
        }
        let mut start = export.first_export_dependency as usize;
        let mut out: [&[PackageIndex]; 4] = [&[], &[], &[], &[]];
        let counts = [
            export.serialization_before_serialization_dependencies,
            export.create_before_serialization_dependencies,
            export.serialization_before_create_dependencies,
            export.create_before_create_dependencies,
        ];
        for (slot, count) in out.iter_mut().zip(counts) {
            let end = start + count.max(0) as usize;
            *slot = self.preload_dependencies.get(start..end).ok_or_else(|| {
                Error::invalid("preload dependencies run past the list")
                    .within(format!("export {index}"))
            })?;
            start = end;
        }
        Ok(out)
    }
}

/// The newest `FObjectDataResource::EVersion` (5.7: `AddedCookedIndex` = 2).
pub(crate) const DATA_RESOURCE_LATEST_VERSION: u32 = 2;

pub(crate) fn serialize_guid<S: serde::Serializer>(
    g: &[u8; 16],
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(&crate::hash::hex(g))
}

pub(crate) fn serialize_opt_hex<S: serde::Serializer, const N: usize>(
    g: &Option<[u8; N]>,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    match g {
        Some(b) => s.serialize_str(&crate::hash::hex(b)),
        None => s.serialize_none(),
    }
}

/// The first object (of `count`, in order) found on a loop of outer
/// chains, `outer` giving each object's outer (`None` at the top of a
/// chain), or `None` when every chain ends. Linear: each object is walked
/// once. Shared by the legacy and Zen outer-chain checks.
pub(crate) fn first_in_outer_loop(
    count: usize,
    outer: impl Fn(usize) -> Option<usize>,
) -> Option<usize> {
    // 0 unseen, 1 on the walk, 2 done.
    let mut state = vec![0u8; count];
    let mut walk = Vec::new();
    for start in 0..count {
        let mut current = Some(start);
        while let Some(at) = current {
            match state[at] {
                0 => {
                    state[at] = 1;
                    walk.push(at);
                    current = outer(at);
                }
                1 => return Some(at),
                _ => current = None,
            }
        }
        for at in walk.drain(..) {
            state[at] = 2;
        }
    }
    None
}
