//! Stage 1, the source model: the facts of a legacy package the conversion
//! needs (names, imports, exports, preload dependencies, data resources,
//! versioning), taken from [`crate::legacy::LegacyPackage`], and the object
//! paths they spell.

use crate::error::{Error, Result};
use crate::legacy::{LegacyPackage, PackageIndex, ResolvedIndex};
use crate::names::with_number;

/// An import of the legacy package, as far as the conversion needs it.
#[derive(Debug, Clone)]
pub struct SourceImport {
    pub(crate) object_name: String,
    /// The outer (null: the import is a package).
    pub(crate) outer_index: PackageIndex,
}

/// An export of the legacy package, as far as the conversion needs it.
#[derive(Debug, Clone)]
pub struct SourceExport {
    /// Name without its number, and the FName number (0: none, n: `_{n-1}`).
    pub(crate) object_name: String,
    pub(crate) object_name_number: u32,
    pub(crate) outer_index: PackageIndex,
    pub(crate) class_index: PackageIndex,
    pub(crate) super_index: PackageIndex,
    pub(crate) template_index: PackageIndex,
    pub(crate) object_flags: u32,
    /// Offset in the combined header + `.uexp` stream.
    pub(crate) serial_offset: i64,
    pub(crate) serial_size: i64,
    pub(crate) not_for_client: bool,
    pub(crate) not_for_server: bool,
    pub(crate) generate_public_hash: bool,
    pub(crate) first_export_dependency: i32,
    pub(crate) serialize_before_serialize: i32,
    pub(crate) create_before_serialize: i32,
    pub(crate) serialize_before_create: i32,
    pub(crate) create_before_create: i32,
}

/// A data resource (bulk data) of a 5.2+ legacy package.
#[derive(Debug, Clone, Copy)]
pub struct SourceDataResource {
    pub(crate) serial_offset: i64,
    pub(crate) duplicate_serial_offset: i64,
    pub(crate) serial_size: i64,
    pub(crate) legacy_bulk_data_flags: u32,
    pub(crate) cooked_index: u8,
}

/// The file versions a versioned legacy package states.
#[derive(Debug, Clone)]
pub struct SourceVersioning {
    pub file_version_ue4: i32,
    pub file_version_ue5: i32,
    pub licensee_version: i32,
    /// (custom version GUID, version).
    pub custom_versions: Vec<([u8; 16], i32)>,
}

/// What the conversion needs of a legacy package.
#[derive(Debug, Clone)]
pub struct SourcePackage {
    pub(crate) package_flags: u32,
    /// Size of the `.uasset` header (`TotalHeaderSize`).
    pub(crate) total_header_size: u32,
    /// Name map texts (without numbers).
    pub(crate) names: Vec<String>,
    /// UE5: names referenced from export data (the Zen name map starts with these).
    pub(crate) names_referenced_from_export_data: Option<usize>,
    pub(crate) imports: Vec<SourceImport>,
    pub(crate) exports: Vec<SourceExport>,
    pub(crate) preload_dependencies: Vec<PackageIndex>,
    pub(crate) data_resources: Vec<SourceDataResource>,
    /// Versioning of a versioned legacy package (None: unversioned).
    pub versioning: Option<SourceVersioning>,
    pub(crate) soft_package_references: Vec<String>,
}

impl SourcePackage {
    /// Takes what the conversion needs from a parsed legacy package.
    pub fn from_legacy(package: &LegacyPackage) -> Result<SourcePackage> {
        let s = &package.summary;
        let imports = package
            .imports
            .iter()
            .map(|i| {
                Ok(SourceImport {
                    object_name: package.name(i.object_name)?,
                    outer_index: i.outer_index,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let exports = package
            .exports
            .iter()
            .map(|e| {
                let base = package
                    .names
                    .get(e.object_name.index as usize)
                    .ok_or_else(|| {
                        Error::invalid(format!(
                            "name index {} is outside the name map",
                            e.object_name.index
                        ))
                    })?;
                Ok(SourceExport {
                    object_name: base.text.clone(),
                    object_name_number: e.object_name.number,
                    outer_index: e.outer_index,
                    class_index: e.class_index,
                    super_index: e.super_index,
                    template_index: e.template_index,
                    object_flags: e.object_flags,
                    serial_offset: e.serial_offset,
                    serial_size: e.serial_size,
                    not_for_client: e.not_for_client,
                    not_for_server: e.not_for_server,
                    generate_public_hash: e.generate_public_hash.unwrap_or(false),
                    first_export_dependency: e.first_export_dependency,
                    serialize_before_serialize: e.serialization_before_serialization_dependencies,
                    create_before_serialize: e.create_before_serialization_dependencies,
                    serialize_before_create: e.serialization_before_create_dependencies,
                    create_before_create: e.create_before_create_dependencies,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let data_resources = package
            .data_resources
            .iter()
            .flat_map(|d| &d.entries)
            .map(|r| SourceDataResource {
                serial_offset: r.serial_offset,
                duplicate_serial_offset: r.duplicate_serial_offset,
                serial_size: r.serial_size,
                legacy_bulk_data_flags: r.legacy_bulk_data_flags,
                cooked_index: r.cooked_index.unwrap_or(0),
            })
            .collect();
        let versioning = (!s.is_unversioned()).then(|| SourceVersioning {
            file_version_ue4: s.file_version_ue4,
            file_version_ue5: s.file_version_ue5.unwrap_or(0),
            licensee_version: s.file_version_licensee_ue4,
            custom_versions: s
                .custom_versions
                .iter()
                .map(|c| (c.key, c.version))
                .collect(),
        });
        if s.total_header_size < 0 {
            return Err(Error::invalid("the legacy header size is negative"));
        }
        Ok(SourcePackage {
            package_flags: s.package_flags,
            total_header_size: s.total_header_size as u32,
            names: package.names.iter().map(|n| n.text.clone()).collect(),
            names_referenced_from_export_data: s
                .names_referenced_from_export_data_count
                .map(|n| n.max(0) as usize),
            imports,
            exports,
            preload_dependencies: package.preload_dependencies.clone(),
            data_resources,
            versioning,
            soft_package_references: package
                .soft_package_references
                .iter()
                .map(|n| package.name(*n))
                .collect::<Result<Vec<_>>>()?,
        })
    }

    /// Names from the outermost object down to import `import`, the first
    /// being its package.
    pub(super) fn import_path(&self, import: usize) -> Result<Vec<&str>> {
        let mut path = Vec::new();
        let mut current = import;
        loop {
            let entry = self.imports.get(current).ok_or_else(|| {
                Error::invalid(format!("outer chain refers to missing import {current}"))
                    .within(format!("import {import}"))
            })?;
            path.push(entry.object_name.as_str());
            if path.len() > self.imports.len() {
                return Err(Error::invalid("outer chain loops").within(format!("import {import}")));
            }
            match entry.outer_index.resolve() {
                ResolvedIndex::Null => break,
                ResolvedIndex::Import(outer) => current = outer,
                ResolvedIndex::Export(_) => {
                    return Err(Error::invalid("outer is an export of this package")
                        .within(format!("import {import}")))
                }
            }
        }
        path.reverse();
        Ok(path)
    }

    /// Names from the top-level export down to export `export` (without the package).
    pub(super) fn export_path(&self, export: usize) -> Result<Vec<String>> {
        let mut path = Vec::new();
        let mut current = export;
        loop {
            let entry = self.exports.get(current).ok_or_else(|| {
                Error::invalid(format!("outer chain refers to missing export {current}"))
                    .within(format!("export {export}"))
            })?;
            path.push(with_number(&entry.object_name, entry.object_name_number).into_owned());
            if path.len() > self.exports.len() {
                return Err(Error::invalid("outer chain loops").within(format!("export {export}")));
            }
            match entry.outer_index.resolve() {
                ResolvedIndex::Null => break,
                ResolvedIndex::Export(outer) => current = outer,
                ResolvedIndex::Import(_) => {
                    return Err(
                        Error::invalid("outer is an import").within(format!("export {export}"))
                    )
                }
            }
        }
        path.reverse();
        Ok(path)
    }
}
