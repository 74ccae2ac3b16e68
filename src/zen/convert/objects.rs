//! Stage 2, object mapping: the Zen name map, the import map (script
//! imports, imports of other packages' exports, the imported packages and
//! public export hashes) and the export map, as the engine's
//! `FPackageStoreOptimizer::ProcessImports` / `ProcessExports` build them.

use std::collections::HashMap;

use crate::error::{Error, Result};
use crate::hash::{object_path_hash, package_id, public_export_hash};
use crate::legacy::{PackageIndex, ResolvedIndex};
use crate::names::{BatchName, MappedName};
use crate::version::ZenLayout;

use super::super::records::{ExportMapEntry, PackageObjectIndex};
use super::source::SourcePackage;

/// `RF_Public`.
const OBJECT_FLAG_PUBLIC: u32 = 0x1;

/// Builds the Zen name map: adds names as the optimizer meets them.
pub(super) struct NameMapBuilder {
    pub(crate) names: Vec<BatchName>,
    lookup: HashMap<String, u32>,
}

impl NameMapBuilder {
    /// UE5 starts from the names referenced from export data (the rest of
    /// the legacy name map served only the legacy header); UE4 keeps all.
    pub(crate) fn for_source(source: &SourcePackage, layout: ZenLayout) -> Self {
        let initial = match (layout, source.names_referenced_from_export_data) {
            (ZenLayout::Ue4, _) | (_, None) => &source.names[..],
            (_, Some(n)) => &source.names[..n.min(source.names.len())],
        };
        let mut builder = NameMapBuilder {
            names: Vec::new(),
            lookup: HashMap::new(),
        };
        for name in initial {
            builder.add(name);
        }
        builder
    }

    fn add(&mut self, base: &str) -> u32 {
        if let Some(&i) = self.lookup.get(base) {
            return i;
        }
        let i = self.names.len() as u32;
        self.names.push(BatchName::new(base));
        self.lookup.insert(base.to_string(), i);
        i
    }

    pub(crate) fn map(&mut self, base: &str, number: u32) -> MappedName {
        MappedName::package(self.add(base), number)
    }
}

/// What a Zen package stores for an import, from the import's legacy path
/// (names from its package down, numbers included): how the engine finds
/// the object when the package loads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ImportReference {
    /// A script object (`/Script/...`), by its global index.
    Script(PackageObjectIndex),
    /// A package itself (no Zen entry; the package must exist).
    Package { package_id: u64 },
    /// UE5: an export of another package, by that package's id and the
    /// export's public export hash.
    Export {
        package_id: u64,
        public_export_hash: u64,
    },
    /// UE4: an export of another package, by the hash of its full path
    /// (what that package stores as the export's global import index).
    Ue4Export {
        package_id: u64,
        index: PackageObjectIndex,
    },
}

/// The [`ImportReference`] of an import whose path (package first) is `path`.
pub(crate) fn import_reference(path: &[&str], layout: ZenLayout) -> ImportReference {
    let package = path.first().copied().unwrap_or_default();
    if package.starts_with("/Script/") {
        let hash = object_path_hash(&path.join("/"));
        return ImportReference::Script(PackageObjectIndex::script_import(hash));
    }
    let id = package_id(package);
    if path.len() <= 1 {
        return ImportReference::Package { package_id: id };
    }
    if layout == ZenLayout::Ue4 {
        let hash = object_path_hash(&path.join("/"));
        return ImportReference::Ue4Export {
            package_id: id,
            index: PackageObjectIndex::package_import_from_hash(hash),
        };
    }
    ImportReference::Export {
        package_id: id,
        public_export_hash: public_export_hash(&path[1..].join("/")),
    }
}

/// The import map and what it refers to.
pub(super) struct ImportMap {
    pub(crate) imports: Vec<PackageObjectIndex>,
    /// Imported packages in header order (UE5: by id; UE4: first seen).
    pub(crate) imported_package_names: Vec<String>,
    /// UE5: one hash per import of another package's export, in import order.
    pub(crate) imported_public_export_hashes: Vec<u64>,
    /// UE4: the package id of each import's package (by import index).
    pub(crate) import_package_ids: Vec<Option<u64>>,
    /// The id of each of `imported_package_names` (each hashed once).
    imported_ids: Vec<u64>,
}

impl ImportMap {
    pub(crate) fn build(source: &SourcePackage, layout: ZenLayout) -> Result<ImportMap> {
        let mut map = ImportMap {
            imports: Vec::with_capacity(source.imports.len()),
            imported_package_names: Vec::new(),
            imported_public_export_hashes: Vec::new(),
            import_package_ids: vec![None; source.imports.len()],
            imported_ids: Vec::new(),
        };
        let paths = (0..source.imports.len())
            .map(|i| source.import_path(i))
            .collect::<Result<Vec<_>>>()?;
        if layout != ZenLayout::Ue4 {
            // The engine lists every non-script package it imports, sorted by id.
            let mut packages: Vec<(u64, &str)> = paths
                .iter()
                .filter(|p| p.len() == 1 && !p[0].starts_with("/Script/"))
                .map(|p| (package_id(p[0]), p[0]))
                .collect();
            // FNames compare without case: one entry per package id (the
            // first, as the sort keeps the order of equals).
            packages.sort_by_key(|&(id, _)| id);
            packages.dedup_by_key(|&mut (id, _)| id);
            map.imported_ids = packages.iter().map(|&(id, _)| id).collect();
            map.imported_package_names = packages.iter().map(|&(_, p)| p.to_string()).collect();
        }
        for (i, path) in paths.iter().enumerate() {
            let index = map
                .map_import(path, layout)
                .map_err(|e| e.within(format!("import {i}")))?;
            if let Some(id) = index.1 {
                map.import_package_ids[i] = Some(id);
            }
            map.imports.push(index.0);
        }
        Ok(map)
    }

    /// One import: its Zen index and (for imports of other packages'
    /// objects) its package id.
    fn map_import(
        &mut self,
        path: &[&str],
        layout: ZenLayout,
    ) -> Result<(PackageObjectIndex, Option<u64>)> {
        let package = path[0];
        let (id, hash) = match import_reference(path, layout) {
            ImportReference::Script(index) => return Ok((index, None)),
            // The package object itself has no Zen representation.
            ImportReference::Package { .. } => return Ok((PackageObjectIndex::NULL, None)),
            ImportReference::Ue4Export { package_id, index } => {
                if !self.imported_package_names.iter().any(|p| p == package) {
                    self.imported_package_names.push(package.to_string());
                    self.imported_ids.push(package_id);
                }
                return Ok((index, Some(package_id)));
            }
            ImportReference::Export {
                package_id,
                public_export_hash,
            } => (package_id, public_export_hash),
        };
        let package_index = self
            .imported_ids
            .iter()
            .position(|&p| p == id)
            .ok_or_else(|| Error::invalid(format!("package `{package}` is not imported")))?;
        // One hash per import, in import order (no sharing between imports).
        let hash_index = self.imported_public_export_hashes.len();
        self.imported_public_export_hashes.push(hash);
        Ok((
            PackageObjectIndex::package_import(package_index as u32, hash_index as u32),
            Some(id),
        ))
    }

    /// The Zen index of a legacy package index used by an export.
    fn zen_index(&self, index: PackageIndex, export_count: usize) -> Result<PackageObjectIndex> {
        match index.resolve() {
            ResolvedIndex::Null => Ok(PackageObjectIndex::NULL),
            ResolvedIndex::Export(e) if e < export_count => {
                Ok(PackageObjectIndex::export(e as u32))
            }
            ResolvedIndex::Import(i) if i < self.imports.len() => Ok(self.imports[i]),
            _ => Err(Error::invalid(format!("{index} does not exist"))),
        }
    }
}

/// The export map.
pub(super) fn export_map(
    source: &SourcePackage,
    imports: &ImportMap,
    names: &mut NameMapBuilder,
    layout: ZenLayout,
    package_name: &str,
) -> Result<Vec<ExportMapEntry>> {
    let count = source.exports.len();
    let mut exports = Vec::with_capacity(count);
    for (i, e) in source.exports.iter().enumerate() {
        let within = |err: Error| err.within(format!("export {i}"));
        let cooked_serial_offset = match layout {
            ZenLayout::Ue4 => e.serial_offset,
            _ => e.serial_offset - source.total_header_size as i64,
        };
        if cooked_serial_offset < 0 || e.serial_size < 0 {
            return Err(within(Error::invalid("serial offset/size out of range")));
        }
        let object_name = names.map(&e.object_name, e.object_name_number);
        let public = e.object_flags & OBJECT_FLAG_PUBLIC != 0 || e.generate_public_hash;
        let public_export_hash = match (layout, public) {
            (ZenLayout::Ue4, true) => {
                let path = format!("{package_name}/{}", source.export_path(i)?.join("/"));
                PackageObjectIndex::package_import_from_hash(object_path_hash(&path)).0
            }
            (ZenLayout::Ue4, false) => PackageObjectIndex::NULL.0,
            (_, true) => public_export_hash(&source.export_path(i)?.join("/")),
            (_, false) => 0,
        };
        let filter_flags = if e.not_for_server {
            2
        } else if e.not_for_client {
            1
        } else {
            0
        };
        let index = |p: PackageIndex, what: &str| {
            imports
                .zen_index(p, count)
                .map_err(|err| within(err.within(what.to_string())))
        };
        exports.push(ExportMapEntry {
            cooked_serial_offset: cooked_serial_offset as u64,
            cooked_serial_size: e.serial_size as u64,
            object_name,
            outer_index: index(e.outer_index, "outer")?,
            class_index: index(e.class_index, "class")?,
            super_index: index(e.super_index, "super")?,
            template_index: index(e.template_index, "template")?,
            public_export_hash,
            object_flags: e.object_flags,
            filter_flags,
            padding: [0; 3],
        });
    }
    Ok(exports)
}
