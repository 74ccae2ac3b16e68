//! Conversion of a cooked legacy package (`.uasset` + `.uexp` + bulk
//! companions) into the Zen package the engine's package store optimizer
//! would write for it, for every Zen layout.
//!
//! The conversion works on a [`SourcePackage`]: the few facts of a legacy
//! package it needs (names, imports, exports, preload dependencies, data
//! resources), taken from [`crate::legacy::LegacyPackage`] by
//! [`SourcePackage::from_legacy`].

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap};

use serde::Serialize;

use crate::error::{Error, Result};
use crate::hash::{object_path_hash, package_id, public_export_hash};
use crate::version::{EngineVersion, ZenLayout};

use super::names::{ImportedPackageNames, ZenName};
use super::package::{PackageArcs, ZenPackage, ZenSummary};
use super::records::*;
use crate::names::{split_number, with_number};

/// `RF_Public`.
const OBJECT_FLAG_PUBLIC: u32 = 0x1;
/// The legacy package file tag that ends a `.uexp`.
const PACKAGE_FILE_TAG: u32 = 0x9E2A_83C1;

/// An import of the legacy package, as far as the conversion needs it.
#[derive(Debug, Clone)]
pub struct SourceImport {
    pub object_name: String,
    /// Legacy package index of the outer (0: none, the import is a package).
    pub outer_index: i32,
}

/// An export of the legacy package, as far as the conversion needs it.
#[derive(Debug, Clone)]
pub struct SourceExport {
    /// Name without its number, and the FName number (0: none, n: `_{n-1}`).
    pub object_name: String,
    pub object_name_number: u32,
    pub outer_index: i32,
    pub class_index: i32,
    pub super_index: i32,
    pub template_index: i32,
    pub object_flags: u32,
    /// Offset in the combined header + `.uexp` stream.
    pub serial_offset: i64,
    pub serial_size: i64,
    pub not_for_client: bool,
    pub not_for_server: bool,
    pub generate_public_hash: bool,
    pub first_export_dependency: i32,
    pub serialize_before_serialize: i32,
    pub create_before_serialize: i32,
    pub serialize_before_create: i32,
    pub create_before_create: i32,
}

/// A data resource (bulk data) of a 5.2+ legacy package.
#[derive(Debug, Clone, Copy)]
pub struct SourceDataResource {
    pub serial_offset: i64,
    pub duplicate_serial_offset: i64,
    pub serial_size: i64,
    pub legacy_bulk_data_flags: u32,
    pub cooked_index: u8,
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
    pub package_flags: u32,
    /// Size of the `.uasset` header (`TotalHeaderSize`).
    pub total_header_size: u32,
    /// Name map texts (without numbers).
    pub names: Vec<String>,
    /// UE5: names referenced from export data (the Zen name map starts with these).
    pub names_referenced_from_export_data: Option<usize>,
    pub imports: Vec<SourceImport>,
    pub exports: Vec<SourceExport>,
    /// Legacy package indices.
    pub preload_dependencies: Vec<i32>,
    pub data_resources: Vec<SourceDataResource>,
    /// Versioning of a versioned legacy package (None: unversioned).
    pub versioning: Option<SourceVersioning>,
    pub soft_package_references: Vec<String>,
}

/// The package's entry in the container header's package store.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StoreEntryInfo {
    pub package_id: u64,
    pub package_name: String,
    pub export_count: u32,
    pub export_bundle_count: u32,
    /// Ids of the imported packages, in the order the header refers to them.
    pub imported_packages: Vec<u64>,
    /// SHA-1 hashes of shader maps the package uses (filled by whoever knows
    /// the shader library; the package alone does not say).
    pub shader_map_hashes: Vec<[u8; 20]>,
    /// Names of packages referenced softly (5.5+ container headers keep them).
    pub soft_package_references: Vec<String>,
}

impl ConvertedPackage {
    /// The package's entry for the container header writer
    /// ([`crate::iostore::container_header::StoreEntry`]). `load_order` is
    /// the UE4 package load order, which only the container builder knows
    /// (position among the container's packages); UE5 ignores it.
    pub fn container_store_entry(
        &self,
        load_order: u32,
    ) -> crate::iostore::container_header::StoreEntry {
        self.store_entry
            .container_store_entry(self.package_bytes.len() as u64, load_order)
    }
}

impl StoreEntryInfo {
    /// The entry as the container header stores it, for a package chunk of
    /// `export_bundles_size` bytes (UE4 stores the size and a load order).
    pub fn container_store_entry(
        &self,
        export_bundles_size: u64,
        load_order: u32,
    ) -> crate::iostore::container_header::StoreEntry {
        crate::iostore::container_header::StoreEntry {
            export_bundles_size,
            load_order,
            export_count: self.export_count as i32,
            export_bundle_count: self.export_bundle_count as i32,
            imported_packages: self.imported_packages.clone(),
            shader_map_hashes: self.shader_map_hashes.clone(),
        }
    }
}

/// Which companion a bulk-data chunk comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum BulkDataKind {
    /// `.ubulk`
    Bulk,
    /// `.uptnl`
    Optional,
    /// `.m.ubulk`
    MemoryMapped,
}

impl BulkDataKind {
    pub fn extension(self) -> &'static str {
        match self {
            BulkDataKind::Bulk => "ubulk",
            BulkDataKind::Optional => "uptnl",
            BulkDataKind::MemoryMapped => "m.ubulk",
        }
    }
}

/// The result of converting one package.
#[derive(Debug, Clone)]
pub struct ConvertedPackage {
    pub package_name: String,
    pub package_id: u64,
    /// The export-bundle chunk: Zen header followed by the export data.
    pub package_bytes: Vec<u8>,
    /// The model the bytes were written from.
    pub package: ZenPackage,
    pub bulk_data: Vec<(BulkDataKind, Vec<u8>)>,
    pub store_entry: StoreEntryInfo,
}

/// A node of the export load graph: one command of one export.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
struct Node {
    export: usize,
    command: ExportCommand,
}

/// A dependency of a node: a command on a legacy package index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Dependency {
    package_index: i32,
    command: ExportCommand,
}

struct Resolver<'a> {
    source: &'a SourcePackage,
}

impl Resolver<'_> {
    /// Names from the outermost object down to the import, the first being its package.
    fn import_path(&self, import: usize) -> Result<Vec<&str>> {
        let mut path = Vec::new();
        let mut current = import;
        loop {
            let entry = self.source.imports.get(current).ok_or_else(|| {
                Error::invalid(format!("outer chain refers to missing import {current}"))
                    .within(format!("import {import}"))
            })?;
            path.push(entry.object_name.as_str());
            if path.len() > self.source.imports.len() {
                return Err(Error::invalid("outer chain loops").within(format!("import {import}")));
            }
            match entry.outer_index {
                0 => break,
                o if o < 0 => current = (-o - 1) as usize,
                _ => {
                    return Err(Error::invalid("outer is an export of this package")
                        .within(format!("import {import}")))
                }
            }
        }
        path.reverse();
        Ok(path)
    }

    /// Names from the top-level export down to the export (without the package).
    fn export_path(&self, export: usize) -> Result<Vec<String>> {
        let mut path = Vec::new();
        let mut current = export;
        loop {
            let entry = self.source.exports.get(current).ok_or_else(|| {
                Error::invalid(format!("outer chain refers to missing export {current}"))
                    .within(format!("export {export}"))
            })?;
            path.push(with_number(&entry.object_name, entry.object_name_number).into_owned());
            if path.len() > self.source.exports.len() {
                return Err(Error::invalid("outer chain loops").within(format!("export {export}")));
            }
            match entry.outer_index {
                0 => break,
                o if o > 0 => current = (o - 1) as usize,
                _ => {
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

/// Builds the Zen name map: adds names as the optimizer meets them.
struct NameMapBuilder {
    names: Vec<ZenName>,
    lookup: BTreeMap<String, u32>,
}

impl NameMapBuilder {
    fn new(initial: &[String]) -> Self {
        let mut b = NameMapBuilder {
            names: Vec::new(),
            lookup: BTreeMap::new(),
        };
        for n in initial {
            b.add(n);
        }
        b
    }
    fn add(&mut self, base: &str) -> u32 {
        if let Some(&i) = self.lookup.get(base) {
            return i;
        }
        let i = self.names.len() as u32;
        self.names.push(ZenName::new(base));
        self.lookup.insert(base.to_string(), i);
        i
    }
    fn map(&mut self, base: &str, number: u32) -> MappedName {
        MappedName::package(self.add(base), number)
    }
}

/// Converts a legacy package into a Zen package for `engine`.
///
/// `export_data` is the `.uexp` content; `bulk_data` the companions found
/// beside the package. `package_name` is the package's long name (e.g.
/// `/Game/Maps/Entry`).
pub fn convert_source(
    source: &SourcePackage,
    export_data: &[u8],
    bulk_data: Vec<(BulkDataKind, Vec<u8>)>,
    engine: EngineVersion,
    package_name: &str,
) -> Result<ConvertedPackage> {
    let layout = engine.zen_layout();
    let resolver = Resolver { source };
    let import_count = source.imports.len();
    let export_count = source.exports.len();

    // Name map: UE5 keeps the names referenced from export data (the rest
    // of the legacy name map served only the legacy header); UE4 keeps all.
    let initial = match (layout, source.names_referenced_from_export_data) {
        (ZenLayout::Ue4, _) | (_, None) => &source.names[..],
        (_, Some(n)) => &source.names[..n.min(source.names.len())],
    };
    let mut names = NameMapBuilder::new(initial);

    // Imports.
    let mut imports = Vec::with_capacity(import_count);
    let mut imported_package_names: Vec<String> = Vec::new();
    let mut imported_public_export_hashes: Vec<u64> = Vec::new();
    // For UE4: package id of each package import (by import index).
    let mut import_package_ids: Vec<Option<u64>> = vec![None; import_count];
    for (i, package_id_of_import) in import_package_ids.iter_mut().enumerate() {
        let path = resolver.import_path(i)?;
        let package = path[0];
        if package.starts_with("/Script/") {
            imports.push(PackageObjectIndex::script_import(object_path_hash(
                &path.join("/"),
            )));
            continue;
        }
        if path.len() == 1 {
            // The package object itself has no Zen representation.
            imports.push(PackageObjectIndex::NULL);
            continue;
        }
        let package_index = match imported_package_names.iter().position(|p| p == package) {
            Some(p) => p,
            None => {
                imported_package_names.push(package.to_string());
                imported_package_names.len() - 1
            }
        };
        *package_id_of_import = Some(package_id(package));
        if layout == ZenLayout::Ue4 {
            imports.push(PackageObjectIndex::package_import_from_hash(
                object_path_hash(&path.join("/")),
            ));
        } else {
            let hash = public_export_hash(&path[1..].join("/"));
            let hash_index = match imported_public_export_hashes
                .iter()
                .position(|h| *h == hash)
            {
                Some(h) => h,
                None => {
                    imported_public_export_hashes.push(hash);
                    imported_public_export_hashes.len() - 1
                }
            };
            imports.push(PackageObjectIndex::package_import(
                package_index as u32,
                hash_index as u32,
            ));
        }
    }
    if layout != ZenLayout::Ue4 {
        // The engine orders imported packages by id.
        let mut order: Vec<usize> = (0..imported_package_names.len()).collect();
        order.sort_by_key(|&i| package_id(&imported_package_names[i]));
        let mut remap = vec![0u32; order.len()];
        for (new, &old) in order.iter().enumerate() {
            remap[old] = new as u32;
        }
        for import in &mut imports {
            if let Some((package, hash)) = import.package_import_parts() {
                *import = PackageObjectIndex::package_import(remap[package as usize], hash);
            }
        }
        imported_package_names = order
            .iter()
            .map(|&i| imported_package_names[i].clone())
            .collect();
    }

    let map_index = |index: i32, what: &str, export: usize| -> Result<PackageObjectIndex> {
        if index == 0 {
            Ok(PackageObjectIndex::NULL)
        } else if index > 0 {
            if index as usize > export_count {
                return Err(Error::invalid(format!(
                    "{what} refers to missing export {}",
                    index - 1
                ))
                .within(format!("export {export}")));
            }
            Ok(PackageObjectIndex::export((index - 1) as u32))
        } else {
            let i = (-(index as i64) - 1) as usize;
            imports.get(i).copied().ok_or_else(|| {
                Error::invalid(format!("{what} refers to missing import {i}"))
                    .within(format!("export {export}"))
            })
        }
    };

    // Exports.
    let mut exports = Vec::with_capacity(export_count);
    for (i, e) in source.exports.iter().enumerate() {
        let cooked_serial_offset = match layout {
            ZenLayout::Ue4 => e.serial_offset,
            _ => e.serial_offset - source.total_header_size as i64,
        };
        if cooked_serial_offset < 0 || e.serial_size < 0 {
            return Err(
                Error::invalid("serial offset/size out of range").within(format!("export {i}"))
            );
        }
        let object_name = names.map(&e.object_name, e.object_name_number);
        let public = e.object_flags & OBJECT_FLAG_PUBLIC != 0 || e.generate_public_hash;
        let public_export_hash = match (layout, public) {
            (ZenLayout::Ue4, true) => {
                let path = format!("{package_name}/{}", resolver.export_path(i)?.join("/"));
                PackageObjectIndex::package_import_from_hash(object_path_hash(&path)).0
            }
            (ZenLayout::Ue4, false) => PackageObjectIndex::NULL.0,
            (_, true) => public_export_hash(&resolver.export_path(i)?.join("/")),
            (_, false) => 0,
        };
        let filter_flags = if e.not_for_server {
            2
        } else if e.not_for_client {
            1
        } else {
            0
        };
        exports.push(ExportMapEntry {
            cooked_serial_offset: cooked_serial_offset as u64,
            cooked_serial_size: e.serial_size as u64,
            object_name,
            outer_index: map_index(e.outer_index, "outer", i)?,
            class_index: map_index(e.class_index, "class", i)?,
            super_index: map_index(e.super_index, "super", i)?,
            template_index: map_index(e.template_index, "template", i)?,
            public_export_hash,
            object_flags: e.object_flags,
            filter_flags,
            padding: [0; 3],
        });
    }

    // The package name is added to the name map last.
    let (pkg_base, pkg_number) = split_number(package_name);
    let summary_name = names.map(pkg_base, pkg_number);

    // Preload dependencies of each command.
    let deps = preload_dependencies(source)?;
    let is_public = |export: usize| match layout {
        ZenLayout::Ue4 => exports[export].public_export_hash != PackageObjectIndex::NULL.0,
        _ => exports[export].public_export_hash != 0,
    };
    let order = load_order(export_count, &deps, layout, &is_public)?;

    let mut package = ZenPackage {
        engine,
        summary: ZenSummary {
            name: summary_name,
            // Only UE4 summaries have a source name.
            source_name: if layout == ZenLayout::Ue4 {
                summary_name
            } else {
                MappedName::default()
            },
            package_flags: source.package_flags,
            cooked_header_size: if engine.zen_writes_cooked_header_size() {
                source.total_header_size
            } else {
                0
            },
            ..ZenSummary::default()
        },
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
        names: names.names,
        bulk_data: Vec::new(),
        imported_public_export_hashes,
        imports,
        exports,
        cell_imports: Vec::new(),
        cell_exports: Vec::new(),
        export_bundle_headers: Vec::new(),
        export_bundle_entries: Vec::new(),
        dependency_bundle_headers: Vec::new(),
        dependency_bundle_entries: Vec::new(),
        imported_package_names: ImportedPackageNames::default(),
        internal_arcs: Vec::new(),
        external_arcs: Vec::new(),
        package_arcs: Vec::new(),
        export_data: Vec::new(),
    };
    if engine.zen_has_bulk_data_map() {
        package.bulk_data = source
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
            .collect();
    }

    let imported_package_ids: Vec<u64>;
    match layout {
        ZenLayout::DependencyBundles => {
            package.export_bundle_entries = order
                .iter()
                .map(|n| ExportBundleEntry {
                    export_index: n.export as u32,
                    command: n.command,
                })
                .collect();
            build_dependency_bundles(&mut package, &deps);
            let mut ipn = ImportedPackageNames::default();
            for name in &imported_package_names {
                let (base, number) = split_number(name);
                ipn.names.push(ZenName::new(base));
                ipn.numbers.push(number as i32);
            }
            package.imported_package_names = ipn;
            imported_package_ids = imported_package_names
                .iter()
                .map(|n| package_id(n))
                .collect();
            package.export_data = export_data.to_vec();
        }
        ZenLayout::GraphData => {
            imported_package_ids = imported_package_names
                .iter()
                .map(|n| package_id(n))
                .collect();
            build_graph_data(&mut package, &order, &deps, imported_package_ids.len());
            package.export_data = exports_in_bundle_order(&package, source, export_data)?;
        }
        ZenLayout::Ue4 => {
            imported_package_ids = imported_package_names
                .iter()
                .map(|n| package_id(n))
                .collect();
            build_ue4_graph(&mut package, &order, &deps, &import_package_ids);
            package.export_data = exports_in_bundle_order(&package, source, export_data)?;
        }
    }

    // Keep the summary as written (offsets, header size) so the model
    // matches what reading the bytes back gives.
    let (mut package_bytes, written_summary) = package.write_header();
    package.summary = written_summary;
    package_bytes.extend_from_slice(&package.export_data);
    let store_entry = StoreEntryInfo {
        package_id: package_id(package_name),
        package_name: package_name.to_string(),
        export_count: package.exports.len() as u32,
        export_bundle_count: match layout {
            ZenLayout::DependencyBundles => 1,
            _ => package.export_bundle_headers.len() as u32,
        },
        imported_packages: imported_package_ids,
        shader_map_hashes: Vec::new(),
        soft_package_references: source.soft_package_references.clone(),
    };
    Ok(ConvertedPackage {
        package_name: package_name.to_string(),
        package_id: package_id(package_name),
        package_bytes,
        package,
        bulk_data,
        store_entry,
    })
}

/// For each export: (create dependencies, serialize dependencies) in the
/// order the optimizer lists them: create-before-create, then
/// serialize-before-create; and create-before-serialize, then
/// serialize-before-serialize.
fn preload_dependencies(source: &SourcePackage) -> Result<Vec<(Vec<Dependency>, Vec<Dependency>)>> {
    let mut out = Vec::with_capacity(source.exports.len());
    let deps = &source.preload_dependencies;
    for (i, e) in source.exports.iter().enumerate() {
        let mut create = Vec::new();
        let mut serialize = Vec::new();
        if e.first_export_dependency >= 0 {
            let counts = [
                e.serialize_before_serialize,
                e.create_before_serialize,
                e.serialize_before_create,
                e.create_before_create,
            ];
            if counts.iter().any(|&c| c < 0) {
                return Err(Error::invalid("negative preload dependency count")
                    .within(format!("export {i}")));
            }
            let first = e.first_export_dependency as usize;
            let total: usize = counts.iter().map(|&c| c as usize).sum();
            if first + total > deps.len() {
                return Err(Error::invalid(format!(
                    "preload dependencies {first}..{} are past the end of the list ({})",
                    first + total,
                    deps.len()
                ))
                .within(format!("export {i}")));
            }
            // Stored order: S-before-S, C-before-S, S-before-C, C-before-C.
            let sbs = first;
            let cbs = sbs + counts[0] as usize;
            let sbc = cbs + counts[1] as usize;
            let cbc = sbc + counts[2] as usize;
            let end = cbc + counts[3] as usize;
            let check = |d: i32| -> Result<i32> {
                let ok = if d > 0 {
                    d as usize <= source.exports.len()
                } else if d < 0 {
                    ((-(d as i64)) as usize) <= source.imports.len()
                } else {
                    false
                };
                if ok {
                    Ok(d)
                } else {
                    Err(Error::invalid(format!(
                        "preload dependency {d} refers to no import or export"
                    ))
                    .within(format!("export {i}")))
                }
            };
            // (waits before serialize?, on which command of the dependency, its slice of the list)
            let groups = [
                (false, ExportCommand::Create, cbc..end),
                (false, ExportCommand::Serialize, sbc..cbc),
                (true, ExportCommand::Create, cbs..sbc),
                (true, ExportCommand::Serialize, sbs..cbs),
            ];
            for (before_serialize, command, range) in groups {
                let list = if before_serialize {
                    &mut serialize
                } else {
                    &mut create
                };
                for &d in &deps[range] {
                    list.push(Dependency {
                        package_index: check(d)?,
                        command,
                    });
                }
            }
        }
        out.push((create, serialize));
    }
    Ok(out)
}

/// Priority of a ready command in the load order: (not public, command, tie-break).
type ReadyKey = (bool, ExportCommand, usize);

/// Orders all export commands so that every command comes after the
/// export commands it depends on (a serialize always after its own create).
/// Among the commands that are ready, UE5 takes public exports first, then
/// creates before serializes, then the lowest export index; UE4 takes the
/// lowest (export index, command).
fn load_order(
    export_count: usize,
    deps: &[(Vec<Dependency>, Vec<Dependency>)],
    layout: ZenLayout,
    is_public: &dyn Fn(usize) -> bool,
) -> Result<Vec<Node>> {
    let node_id = |n: Node| n.export * 2 + n.command as usize;
    let total = export_count * 2;
    let mut incoming = vec![0usize; total];
    let mut dependants: Vec<Vec<Node>> = vec![Vec::new(); total];
    for (export, (create, serialize)) in deps.iter().enumerate() {
        let own_create = Node {
            export,
            command: ExportCommand::Create,
        };
        let own_serialize = Node {
            export,
            command: ExportCommand::Serialize,
        };
        let mut edges: Vec<(Node, Node)> = vec![(own_create, own_serialize)];
        for d in create {
            if d.package_index > 0 {
                edges.push((
                    Node {
                        export: (d.package_index - 1) as usize,
                        command: d.command,
                    },
                    own_create,
                ));
            }
        }
        for d in serialize {
            if d.package_index > 0 {
                edges.push((
                    Node {
                        export: (d.package_index - 1) as usize,
                        command: d.command,
                    },
                    own_serialize,
                ));
            }
        }
        for (from, to) in edges {
            dependants[node_id(from)].push(to);
            incoming[node_id(to)] += 1;
        }
    }
    // Priority key: smaller is taken first.
    let key = |n: Node| -> ReadyKey {
        match layout {
            ZenLayout::Ue4 => (
                false,
                ExportCommand::Create,
                n.export * 2 + n.command as usize,
            ),
            _ => (!is_public(n.export), n.command, n.export),
        }
    };
    let mut ready: BinaryHeap<Reverse<(ReadyKey, Node)>> = BinaryHeap::new();
    for export in 0..export_count {
        for command in [ExportCommand::Create, ExportCommand::Serialize] {
            let n = Node { export, command };
            if incoming[node_id(n)] == 0 {
                ready.push(Reverse((key(n), n)));
            }
        }
    }
    let mut order = Vec::with_capacity(total);
    while let Some(Reverse((_, n))) = ready.pop() {
        order.push(n);
        for &to in &dependants[node_id(n)] {
            incoming[node_id(to)] -= 1;
            if incoming[node_id(to)] == 0 {
                ready.push(Reverse((key(to), to)));
            }
        }
    }
    if order.len() != total {
        return Err(Error::invalid(
            "preload dependencies form a cycle; the exports cannot be ordered",
        ));
    }
    Ok(order)
}

/// 5.3+: one dependency bundle per export, listing the package indices
/// each command waits for (exports, and imports of other packages' exports).
fn build_dependency_bundles(package: &mut ZenPackage, deps: &[(Vec<Dependency>, Vec<Dependency>)]) {
    for (create, serialize) in deps.iter() {
        // An export's dependency on itself (a function's serialize waiting for
        // its own create) is kept: the engine lists every preload dependency.
        let keep = |d: &&Dependency, command: ExportCommand| -> bool {
            if d.command != command {
                return false;
            }
            if d.package_index > 0 {
                return true;
            }
            let import = (-(d.package_index as i64) - 1) as usize;
            package
                .imports
                .get(import)
                .map(|i| i.kind() == ObjectIndexKind::PackageImport)
                .unwrap_or(false)
        };
        let pick = |list: &[_], command| -> Vec<i32> {
            list.iter()
                .filter(|d| keep(d, command))
                .map(|d| d.package_index)
                .collect()
        };
        let groups: [Vec<i32>; 4] = [
            pick(create, ExportCommand::Create),
            pick(create, ExportCommand::Serialize),
            pick(serialize, ExportCommand::Create),
            pick(serialize, ExportCommand::Serialize),
        ];
        package
            .dependency_bundle_headers
            .push(DependencyBundleHeader {
                first_entry_index: package.dependency_bundle_entries.len() as i32,
                create_before_create: groups[0].len() as u32,
                serialize_before_create: groups[1].len() as u32,
                create_before_serialize: groups[2].len() as u32,
                serialize_before_serialize: groups[3].len() as u32,
            });
        for g in groups {
            package.dependency_bundle_entries.extend(
                g.into_iter()
                    .map(|package_index| DependencyBundleEntry { package_index }),
            );
        }
    }
}

/// Splits the load order into export bundles: a bundle closes after a public export (5.0–5.2).
fn split_bundles(package: &mut ZenPackage, order: &[Node], close_after_public: bool) -> Vec<usize> {
    let mut bundle_of = vec![0usize; package.exports.len() * 2];
    let mut open = false;
    let mut offset = 0u64;
    for n in order {
        if !open {
            package.export_bundle_headers.push(ExportBundleHeader {
                serial_offset: Some(offset),
                first_entry_index: package.export_bundle_entries.len() as u32,
                entry_count: 0,
            });
            open = true;
        }
        let bundle = package.export_bundle_headers.len() - 1;
        package.export_bundle_entries.push(ExportBundleEntry {
            export_index: n.export as u32,
            command: n.command,
        });
        package.export_bundle_headers[bundle].entry_count += 1;
        bundle_of[n.export * 2 + n.command as usize] = bundle;
        if n.command == ExportCommand::Serialize {
            offset += package.exports[n.export].cooked_serial_size;
        }
        if close_after_public && package.exports[n.export].public_export_hash != 0 {
            open = false;
        }
    }
    bundle_of
}

fn build_graph_data(
    package: &mut ZenPackage,
    order: &[Node],
    deps: &[(Vec<Dependency>, Vec<Dependency>)],
    imported_packages: usize,
) {
    let bundle_of = split_bundles(package, order, true);
    let mut internal = BTreeSet::new();
    let mut internal_list = Vec::new();
    let mut external: Vec<Vec<ExternalArc>> = vec![Vec::new(); imported_packages];
    let mut seen_external = BTreeSet::new();
    for (export, (create, serialize)) in deps.iter().enumerate() {
        for (list, command) in [
            (create, ExportCommand::Create),
            (serialize, ExportCommand::Serialize),
        ] {
            let to_bundle = bundle_of[export * 2 + command as usize] as i32;
            for d in list {
                if d.package_index > 0 {
                    let from =
                        bundle_of[(d.package_index as usize - 1) * 2 + d.command as usize] as i32;
                    let arc = BundleArc {
                        from_bundle: from,
                        to_bundle,
                    };
                    if from != to_bundle && internal.insert(arc) {
                        internal_list.push(arc);
                    }
                } else {
                    let import = (-(d.package_index as i64) - 1) as usize;
                    if let Some((package_index, _)) = package.imports[import].package_import_parts()
                    {
                        let arc = ExternalArc {
                            from_import: import as i32,
                            from_command: d.command,
                            to_bundle,
                        };
                        if seen_external.insert(arc) {
                            if let Some(list) = external.get_mut(package_index as usize) {
                                list.push(arc);
                            }
                        }
                    }
                }
            }
        }
    }
    package.internal_arcs = internal_list;
    package.external_arcs = external;
}

/// UE4: one bundle for the package (the engine closes bundles only where
/// another package's commands interleave in its global load order, which a
/// single converted package never has); graph data lists, per imported
/// package (by id), one arc from that package's bundle to ours.
fn build_ue4_graph(
    package: &mut ZenPackage,
    order: &[Node],
    deps: &[(Vec<Dependency>, Vec<Dependency>)],
    import_package_ids: &[Option<u64>],
) {
    let bundle_of = split_bundles(package, order, false);
    for h in &mut package.export_bundle_headers {
        h.serial_offset = None;
    }
    let mut arcs: BTreeMap<u64, BTreeSet<BundleArc>> = BTreeMap::new();
    for (export, (create, serialize)) in deps.iter().enumerate() {
        for (list, command) in [
            (create, ExportCommand::Create),
            (serialize, ExportCommand::Serialize),
        ] {
            let to_bundle = bundle_of[export * 2 + command as usize] as i32;
            for d in list {
                if d.package_index < 0 {
                    let import = (-(d.package_index as i64) - 1) as usize;
                    if let Some(Some(id)) = import_package_ids.get(import) {
                        arcs.entry(*id).or_default().insert(BundleArc {
                            from_bundle: 0,
                            to_bundle,
                        });
                    }
                }
            }
        }
    }
    package.package_arcs = arcs
        .into_iter()
        .map(|(package_id, arcs)| PackageArcs {
            package_id,
            arcs: arcs.into_iter().collect(),
        })
        .collect();
}

/// UE4 and 5.0–5.2: the export data is the exports in bundle order (the
/// loader reads them sequentially), then whatever followed the last export
/// in the `.uexp` except its closing package tag.
fn exports_in_bundle_order(
    package: &ZenPackage,
    source: &SourcePackage,
    uexp: &[u8],
) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(uexp.len());
    let mut end_of_exports = 0usize;
    for entry in &package.export_bundle_entries {
        if entry.command != ExportCommand::Serialize {
            continue;
        }
        let e = &source.exports[entry.export_index as usize];
        let start = e.serial_offset - source.total_header_size as i64;
        let end = start + e.serial_size;
        if start < 0 || end as u64 > uexp.len() as u64 {
            return Err(Error::invalid(format!(
                "export {}: data {start}..{end} is outside the .uexp ({} bytes)",
                entry.export_index,
                uexp.len()
            )));
        }
        out.extend_from_slice(&uexp[start as usize..end as usize]);
        end_of_exports = end_of_exports.max(end as usize);
    }
    let mut tail = &uexp[end_of_exports..];
    if tail.len() >= 4
        && u32::from_le_bytes(tail[tail.len() - 4..].try_into().unwrap()) == PACKAGE_FILE_TAG
    {
        tail = &tail[..tail.len() - 4];
    }
    out.extend_from_slice(tail);
    Ok(out)
}

impl SourcePackage {
    /// Takes what the conversion needs from a parsed legacy package.
    pub fn from_legacy(package: &crate::legacy::LegacyPackage) -> Result<SourcePackage> {
        let s = &package.summary;
        let name_of = |n: crate::legacy::FName| package.name(n);
        let base_of = |n: crate::legacy::FName| -> Result<String> {
            package
                .names
                .get(n.index as usize)
                .map(|e| e.text.clone())
                .ok_or_else(|| {
                    Error::invalid(format!("name index {} is outside the name map", n.index))
                })
        };
        let imports = package
            .imports
            .iter()
            .map(|i| {
                Ok(SourceImport {
                    object_name: name_of(i.object_name)?,
                    outer_index: i.outer_index.0,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let exports = package
            .exports
            .iter()
            .map(|e| {
                Ok(SourceExport {
                    object_name: base_of(e.object_name)?,
                    object_name_number: e.object_name.number,
                    outer_index: e.outer_index.0,
                    class_index: e.class_index.0,
                    super_index: e.super_index.0,
                    template_index: e.template_index.0,
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
            .as_ref()
            .map(|d| {
                d.entries
                    .iter()
                    .map(|r| SourceDataResource {
                        serial_offset: r.serial_offset,
                        duplicate_serial_offset: r.duplicate_serial_offset,
                        serial_size: r.serial_size,
                        legacy_bulk_data_flags: r.legacy_bulk_data_flags,
                        cooked_index: r.cooked_index.unwrap_or(0),
                    })
                    .collect()
            })
            .unwrap_or_default();
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
            preload_dependencies: package.preload_dependencies.iter().map(|p| p.0).collect(),
            data_resources,
            versioning,
            soft_package_references: package
                .soft_package_references
                .iter()
                .map(|n| package.name(*n))
                .collect::<Result<Vec<_>>>()?,
        })
    }
}

/// `PKG_Cooked` (UE5 cooks set it).
const PKG_COOKED: u32 = 0x0000_0200;
/// `PKG_FilterEditorOnly` (every cooked package has it).
const PKG_FILTER_EDITOR_ONLY: u32 = 0x8000_0000;

/// Converts a cooked legacy package into its Zen package for `engine`.
///
/// The package name is the one the package carries (5.x cooks write it);
/// `package_name` is used when the package does not (UE4 cooks write
/// `None`); if neither gives one, this is an error.
pub fn convert(
    files: &crate::legacy::PackageFiles,
    package: &crate::legacy::LegacyPackage,
    engine: EngineVersion,
    package_name: &str,
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
    let source = SourcePackage::from_legacy(package).map_err(|e| e.in_file(&files.path))?;
    let mut bulk = Vec::new();
    for companion in &files.bulk {
        let kind = match companion.kind {
            crate::legacy::BulkKind::Bulk => BulkDataKind::Bulk,
            crate::legacy::BulkKind::Optional => BulkDataKind::Optional,
            crate::legacy::BulkKind::MemoryMapped => BulkDataKind::MemoryMapped,
        };
        bulk.push((kind, companion.read()?));
    }
    convert_source(&source, &files.uexp, bulk, engine, &name).map_err(|e| e.in_file(&files.path))
}
