//! Building cooked packages from scratch: an empty cooked package for an
//! engine release ([`LegacyPackage::new_cooked`]) and the final layout step
//! that places the export data after the header and writes the `.uasset` +
//! `.uexp` pair ([`LegacyPackage::write_cooked`]).
//!
//! The shape follows what UE 5.x cooks write for an unversioned package (checked
//! against the corpus, e.g. `uassetapi/TestManyAssets/SN2/.../ST_Attributes`
//! and `retoc/UE5.6/SM_Cube`): all file versions 0, no custom versions, a
//! zero saved hash, the sections names → soft object paths → imports →
//! exports → (Verse cells) → depends → asset registry data → preload
//! dependencies, and a `.uexp` that ends with the package tag.

use std::collections::BTreeMap;

use crate::error::{Error, Result};
use crate::version::{ue5_object_version as ue5, EngineVersion};

use super::names::EngineString;
use super::summary::{
    FileVersions, Generation, SavedEngineVersion, Summary, PKG_COOKED, PKG_FILTER_EDITOR_ONLY,
};
use super::{LegacyPackage, PackageFiles, Section};

impl Summary {
    /// An unversioned cooked summary for `engine` with no tables yet.
    /// Flags: `PKG_FilterEditorOnly | PKG_Cooked` (add
    /// `PKG_UnversionedProperties` when the export data uses unversioned
    /// properties). Counts, offsets and the header size are filled in by
    /// [`LegacyPackage::write`]; generations and the bulk data offset by
    /// [`LegacyPackage::write_cooked`].
    pub fn new_cooked(engine: EngineVersion, package_name: &str) -> Summary {
        let table = engine.legacy_file_versions();
        let ue5_has = |v: i32| table.ue5 >= v;
        let ue5_field = |v: i32| ue5_has(v).then_some(0);
        Summary {
            legacy_file_version: table.legacy,
            legacy_ue3_version: Some(0),
            file_version_ue4: 0,
            file_version_ue5: (table.legacy <= -8).then_some(0),
            file_version_licensee_ue4: 0,
            saved_hash: ue5_has(ue5::PACKAGE_SAVED_HASH).then_some([0; 20]),
            custom_versions: Vec::new(),
            total_header_size: 0,
            package_name: EngineString::new(package_name),
            package_flags: PKG_FILTER_EDITOR_ONLY | PKG_COOKED,
            name_count: 0,
            name_offset: 0,
            soft_object_paths_count: ue5_field(ue5::ADD_SOFTOBJECTPATH_LIST),
            soft_object_paths_offset: ue5_field(ue5::ADD_SOFTOBJECTPATH_LIST),
            localization_id: None,
            gatherable_text_data_count: 0,
            gatherable_text_data_offset: 0,
            export_count: 0,
            export_offset: 0,
            import_count: 0,
            import_offset: 0,
            cell_export_count: ue5_field(ue5::VERSE_CELLS),
            cell_export_offset: ue5_field(ue5::VERSE_CELLS),
            cell_import_count: ue5_field(ue5::VERSE_CELLS),
            cell_import_offset: ue5_field(ue5::VERSE_CELLS),
            metadata_offset: ue5_field(ue5::METADATA_SERIALIZATION_OFFSET),
            depends_offset: 0,
            soft_package_references_count: 0,
            soft_package_references_offset: 0,
            searchable_names_offset: 0,
            thumbnail_table_offset: 0,
            import_type_hierarchies_count: ue5_field(ue5::IMPORT_TYPE_HIERARCHIES),
            import_type_hierarchies_offset: ue5_field(ue5::IMPORT_TYPE_HIERARCHIES),
            // Before the saved hash replaced it, cooks wrote a package GUID;
            // a zero one keeps the output reproducible.
            guid: (!ue5_has(ue5::PACKAGE_SAVED_HASH)).then_some([0; 16]),
            persistent_guid: None,
            owner_persistent_guid: None,
            generations: Vec::new(),
            saved_by_engine_version: SavedEngineVersion::default(),
            compatible_with_engine_version: SavedEngineVersion::default(),
            compression_flags: 0,
            package_source: 0,
            additional_packages_to_cook: Vec::new(),
            num_texture_allocations: None,
            asset_registry_data_offset: 0,
            bulk_data_start_offset: 0,
            world_tile_info_data_offset: 0,
            chunk_ids: Vec::new(),
            preload_dependency_count: 0,
            preload_dependency_offset: 0,
            names_referenced_from_export_data_count: ue5_field(
                ue5::NAMES_REFERENCED_FROM_EXPORT_DATA,
            ),
            payload_toc_offset: ue5_has(ue5::PAYLOAD_TOC).then_some(-1),
            data_resource_offset: ue5_has(ue5::DATA_RESOURCES).then_some(-1),
        }
    }
}

impl LegacyPackage {
    /// An empty unversioned cooked package for `engine` named `package_name`
    /// (e.g. `/Game/MyMod/ST_Texts`). Fill in `names`, `imports`, `exports`
    /// and `preload_dependencies`, then call [`write_cooked`](Self::write_cooked).
    pub fn new_cooked(engine: EngineVersion, package_name: &str) -> LegacyPackage {
        let summary = Summary::new_cooked(engine, package_name);
        let table = engine.legacy_file_versions();
        let versions = FileVersions {
            legacy: table.legacy,
            ue4: table.ue4,
            ue5: table.ue5,
            licensee: 0,
        };
        // The sections a cook writes, in its order; a section the release
        // has no offset field for is left out.
        let layout = [
            (Section::Names, true),
            (
                Section::SoftObjectPaths,
                summary.soft_object_paths_offset.is_some(),
            ),
            (Section::Imports, true),
            (Section::Exports, true),
            (Section::CellImports, summary.cell_import_offset.is_some()),
            (Section::CellExports, summary.cell_export_offset.is_some()),
            (Section::Depends, true),
            (Section::AssetRegistryData, true),
            (Section::PreloadDependencies, true),
        ]
        .into_iter()
        .filter_map(|(section, present)| present.then_some(section))
        .collect();
        // A cooked package's asset registry data is an object count of 0.
        let raw_sections = BTreeMap::from([(Section::AssetRegistryData, vec![0u8; 4])]);
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
            raw_sections,
            layout,
            header_padding: 0,
            after_header: Vec::new(),
        }
    }

    /// Lays out a cooked package and returns its `.uasset` and `.uexp`
    /// bytes. `export_data[i]` is export `i`'s serialized object. Sets the
    /// generation record, an empty depends list per export and each export's
    /// serial size, then places the exports after the header
    /// ([`assign_export_offsets`](Self::assign_export_offsets)) and builds the
    /// `.uexp` with the trailing package tag ([`PackageFiles::build_uexp`]).
    pub fn write_cooked(&mut self, export_data: &[Vec<u8>]) -> Result<(Vec<u8>, Vec<u8>)> {
        if export_data.len() != self.exports.len() {
            return Err(Error::usage(format!(
                "{} export data blocks for {} exports",
                export_data.len(),
                self.exports.len()
            )));
        }
        if !self.after_header.is_empty() {
            return Err(Error::usage(
                "a cooked package keeps its export data in the .uexp, not after the header",
            ));
        }
        self.depends_map = vec![Vec::new(); self.exports.len()];
        self.summary.generations = vec![Generation {
            export_count: self.exports.len() as i32,
            name_count: self.names.len() as i32,
        }];
        for (export, data) in self.exports.iter_mut().zip(export_data) {
            export.serial_size = data.len() as i64;
        }
        self.assign_export_offsets()?;
        let header = self.write()?;
        self.summary.total_header_size = header.len() as i32;
        let uexp = PackageFiles::build_uexp(self, export_data, true)?;
        Ok((header, uexp))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::legacy::{NameEntry, PACKAGE_FILE_TAG};

    /// An empty package of every release writes, reads back with the same
    /// tables, and rewrites to the same bytes.
    #[test]
    fn empty_cooked_packages_read_back() {
        for engine in EngineVersion::ALL {
            let mut package = LegacyPackage::new_cooked(engine, "/Game/Empty");
            package.names.push(NameEntry::new("Empty"));
            let (header, uexp) = package.write_cooked(&[]).unwrap();
            assert_eq!(uexp, PACKAGE_FILE_TAG.to_le_bytes());
            let read = LegacyPackage::read(&header, Some(engine)).unwrap();
            assert_eq!(read.package_name(), Some("/Game/Empty"), "{engine}");
            assert_eq!(read.names, package.names, "{engine}");
            assert_eq!(read.write().unwrap(), header, "{engine}");
            assert_eq!(read.summary.bulk_data_start_offset, header.len() as i64);
            let files = PackageFiles {
                path: "Empty.uasset".into(),
                header,
                uexp_path: "Empty.uexp".into(),
                uexp,
                bulk: Vec::new(),
            };
            files.check_exports(&read).unwrap();
        }
    }
}
