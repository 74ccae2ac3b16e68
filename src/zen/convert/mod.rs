//! Conversion of a cooked legacy package (`.uasset` + `.uexp` + bulk
//! companions) into the Zen package the engine's package store optimizer
//! would write for it, for every Zen layout.
//!
//! The conversion runs in named stages, each in its own module, in the
//! order [`convert_source`] calls them:
//!
//! 1. `source`: the source model, what the conversion needs of the legacy package;
//! 2. `objects`: object mapping — name map, import map, export map;
//! 3. `load_order`: preload dependencies as commands, and their order;
//! 4. `bundles`: export bundles and the graph data of each layout;
//! 5. `layout`: the export data after the header;
//! 6. `store_entry`: the package's container store entry.
//!
//! For 5.0–5.2 the engine settles export bundles across all packages of a
//! container: `optimize` ([`optimize_export_bundles`]) does that for a set
//! of converted packages.

mod bundles;
mod layout;
mod load_order;
mod objects;
mod optimize;
mod source;
mod store_entry;

pub(crate) use objects::{import_reference, ImportReference};
pub use optimize::{
    container_bundles, optimize_export_bundles, rebundle, BundleGraph, ExportBundles, ExportGraph,
};
pub use source::{SourceDataResource, SourceExport, SourceImport, SourcePackage, SourceVersioning};
pub use store_entry::StoreEntryReport;

use crate::error::{Error, Result};
use crate::hash::package_id;
use crate::iostore::container_header::StoreEntry;
use crate::legacy::{LegacyPackage, PackageFiles, PKG_COOKED, PKG_FILTER_EDITOR_ONLY};
use crate::names::{split_number, BatchName};
use crate::version::{EngineVersion, ZenLayout};

use super::names::ImportedPackageNames;
use super::package::{ZenPackage, ZenSummary};
use super::records::*;

/// Which companion a bulk-data chunk comes from (the legacy package's own kind).
use crate::legacy::BulkKind;

/// The result of converting one package.
#[derive(Debug, Clone)]
pub struct ConvertedPackage {
    pub package_name: String,
    pub package_id: u64,
    /// The export-bundle chunk: Zen header followed by the export data.
    pub package_bytes: Vec<u8>,
    /// The model the bytes were written from.
    pub package: ZenPackage,
    pub bulk_data: Vec<(BulkKind, Vec<u8>)>,
    /// The container store entry (its bundle size is the chunk's length).
    pub store_entry: StoreEntry,
    /// Names of the packages the legacy package references softly.
    pub(crate) soft_package_references: Vec<String>,
    /// 5.0–5.2: what [`optimize_export_bundles`] needs to give the package
    /// the bundles the engine gives it among the container's other packages.
    pub(crate) export_graph: Option<ExportGraph>,
    /// Bytes of the `.uexp` that follow `package_bytes` in the chunk but
    /// were not read ([`ExportData::Unread`]); 0 when `package_bytes` is
    /// the whole chunk.
    pub unread_export_data: u64,
}

/// The export data a conversion is given.
#[derive(Debug, Clone, Copy)]
pub enum ExportData<'a> {
    /// The `.uexp` bytes.
    Bytes(&'a [u8]),
    /// A `.uexp` of `len` bytes that was not read. Only for layouts that
    /// keep the `.uexp` as it is (5.3+): the chunk is the Zen header
    /// followed by the file unchanged, which the caller appends.
    Unread { len: u64 },
}

impl<'a> From<&'a [u8]> for ExportData<'a> {
    fn from(bytes: &'a [u8]) -> Self {
        ExportData::Bytes(bytes)
    }
}

impl<'a> From<&'a Vec<u8>> for ExportData<'a> {
    fn from(bytes: &'a Vec<u8>) -> Self {
        ExportData::Bytes(bytes)
    }
}

impl ConvertedPackage {}

/// Converts a legacy package into a Zen package for `engine`: the driver
/// that runs the stages in order.
///
/// `export_data` is the `.uexp` content (or its length, see
/// [`ExportData::Unread`]); `bulk_data` the companions found beside the
/// package. `package_name` is the package's long name (e.g.
/// `/Game/Maps/Entry`).
pub fn convert_source<'a>(
    source: &SourcePackage,
    export_data: impl Into<ExportData<'a>>,
    bulk_data: Vec<(BulkKind, Vec<u8>)>,
    engine: EngineVersion,
    package_name: &str,
) -> Result<ConvertedPackage> {
    let layout = engine.zen_layout();
    let mut names = objects::NameMapBuilder::for_source(source, layout);
    let imports = objects::ImportMap::build(source, layout)?;
    let exports = objects::export_map(source, &imports, &mut names, layout, package_name)?;
    // The package name is added to the name map last.
    let (base, number) = split_number(package_name);
    let summary_name = names.map(base, number);

    let deps = load_order::preload_dependencies(source)?;
    let is_public = |export: usize| match layout {
        ZenLayout::Ue4 => exports[export].public_export_hash != PackageObjectIndex::NULL.0,
        _ => exports[export].public_export_hash != 0,
    };
    let order = load_order::load_order(&deps, layout, &is_public)?;

    let mut package = new_package(source, engine, summary_name, names.names, &imports, exports);
    let imported_package_ids: Vec<u64> = imports
        .imported_package_names
        .iter()
        .map(|n| package_id(n))
        .collect();
    match layout {
        ZenLayout::DependencyBundles => {
            bundles::dependency_bundles(&mut package, &order, &deps);
            package.imported_package_names = imported_package_names(&imports);
        }
        ZenLayout::GraphData => {
            bundles::graph_data(&mut package, &[&order], &deps, imported_package_ids.len())
        }
        ZenLayout::Ue4 => {
            bundles::ue4_graph(&mut package, &order, &deps, &imports.import_package_ids)
        }
    }
    let unread_export_data = match export_data.into() {
        ExportData::Bytes(uexp) => {
            package.export_data = layout::export_data(&package, source, uexp, layout)?;
            0
        }
        ExportData::Unread { len } if layout == ZenLayout::DependencyBundles => len,
        ExportData::Unread { .. } => {
            return Err(Error::internal(format!(
                "the {layout:?} layout reorders the export data, so the .uexp must be read"
            )))
        }
    };

    // Keep the summary as written (offsets, header size) so the model
    // matches what reading the bytes back gives.
    let (mut package_bytes, written_summary) = package.write_header();
    package.summary = written_summary;
    package_bytes.extend_from_slice(&package.export_data);
    let chunk_len = package_bytes.len() as u64 + unread_export_data;
    let store_entry = store_entry::store_entry(&package, imported_package_ids, chunk_len);
    Ok(ConvertedPackage {
        package_name: package_name.to_string(),
        package_id: package_id(package_name),
        package_bytes,
        package,
        bulk_data,
        store_entry,
        soft_package_references: source.soft_package_references.clone(),
        export_graph: (layout == ZenLayout::GraphData).then_some(ExportGraph { order, deps }),
        unread_export_data,
    })
}

/// The Zen package before its bundles: summary, versioning, names, bulk
/// data map, imports and exports.
fn new_package(
    source: &SourcePackage,
    engine: EngineVersion,
    summary_name: MappedName,
    names: Vec<BatchName>,
    imports: &objects::ImportMap,
    exports: Vec<ExportMapEntry>,
) -> ZenPackage {
    let layout = engine.zen_layout();
    let bulk_data = if engine.zen_has_bulk_data_map() {
        source
            .data_resources
            .iter()
            .map(|d| BulkDataMapEntry {
                serial_offset: d.serial_offset,
                duplicate_serial_offset: d.duplicate_serial_offset,
                serial_size: d.serial_size,
                flags: d.legacy_bulk_data_flags,
                cooked_index: d.cooked_index,
                padding: [0; 3],
            })
            .collect()
    } else {
        Vec::new()
    };
    let summary = ZenSummary {
        name: summary_name,
        // Only UE4 summaries have a source name.
        source_name: if layout == ZenLayout::Ue4 {
            summary_name
        } else {
            MappedName::default()
        },
        package_flags: source.package_flags,
        cooked_header_size: engine.zen_cooked_header_size(source.total_header_size),
        ..ZenSummary::default()
    };
    ZenPackage {
        // UE4 Zen packages have no versioning info.
        versioning: source
            .versioning
            .as_ref()
            .filter(|_| layout != ZenLayout::Ue4)
            .map(|v| VersioningInfo {
                zen_version: engine.zen_package_version(),
                file_version_ue4: v.file_version_ue4,
                file_version_ue5: v.file_version_ue5,
                licensee_version: v.licensee_version,
                custom_versions: v.custom_versions.clone(),
            }),
        names,
        bulk_data,
        imported_public_export_hashes: imports.imported_public_export_hashes.clone(),
        imports: imports.imports.clone(),
        exports,
        ..ZenPackage::new(engine, summary)
    }
}

/// 5.3+: the imported packages' names, each split into name and number.
fn imported_package_names(imports: &objects::ImportMap) -> ImportedPackageNames {
    let mut names = ImportedPackageNames::default();
    for name in &imports.imported_package_names {
        let (base, number) = split_number(name);
        names.names.push(BatchName::new(base));
        names.numbers.push(number as i32);
    }
    names
}

/// Converts a cooked legacy package into its Zen package for `engine`.
///
/// The package name is the one the package carries (5.x cooks write it);
/// `package_name` is used when the package does not (UE4 cooks write
/// `None`); if neither gives one, this is an error.
pub fn convert(
    files: &PackageFiles,
    package: &LegacyPackage,
    engine: EngineVersion,
    package_name: &str,
) -> Result<ConvertedPackage> {
    convert_with(files, package, engine, package_name, (&files.uexp).into())
}

/// [`convert`] with the export data given apart from `files`: a build
/// whose `.uexp` passes through unchanged gives its length only
/// ([`ExportData::Unread`]) and appends the file itself.
pub fn convert_with(
    files: &PackageFiles,
    package: &LegacyPackage,
    engine: EngineVersion,
    package_name: &str,
    export_data: ExportData<'_>,
) -> Result<ConvertedPackage> {
    let name = match package.package_name() {
        Some(own) => own.to_string(),
        None if !package_name.is_empty() => package_name.to_string(),
        None => {
            return Err(Error::usage(format!(
                "{}: the package does not carry its name; give it with --package-name /Game/...",
                files.path.display()
            )))
        }
    };
    if !name.starts_with('/') {
        return Err(Error::usage(format!(
            "package name `{name}` must be a long package name such as /Game/Folder/Asset"
        )));
    }
    let flags = package.summary.package_flags;
    if flags & PKG_FILTER_EDITOR_ONLY == 0 || (engine.is_ue5() && flags & PKG_COOKED == 0) {
        return Err(Error::usage(format!(
            "{}: the package is not cooked (package flags {flags:#010x}); only cooked packages can become Zen packages",
            files.path.display()
        )));
    }
    let cells = package.summary.cell_import_count.unwrap_or(0).max(0)
        + package.summary.cell_export_count.unwrap_or(0).max(0);
    if cells > 0 {
        return Err(Error::unsupported(format!(
            "the package has {cells} Verse cell imports/exports; converting Verse cells is not supported"
        ))
        .in_file(&files.path));
    }
    package
        .check_outer_chains()
        .map_err(|e| e.in_file(&files.path))?;
    let source = SourcePackage::from_legacy(package).map_err(|e| e.in_file(&files.path))?;
    let mut bulk = Vec::new();
    for companion in &files.bulk {
        bulk.push((companion.kind, companion.read()?));
    }
    convert_source(&source, export_data, bulk, engine, &name).map_err(|e| e.in_file(&files.path))
}
