//! Stage 1: the legacy import map from the Zen import map.
//!
//! The Zen import map keeps the legacy import order one for one (the
//! conversion writes one entry per legacy import), but only as 64-bit
//! references: a script object's path hash, an export of another package
//! (UE5: imported package index + public export hash index; UE4: hash of
//! the object's full path), or null for an imported package itself. This
//! stage turns each entry back into class package, class name, outer and
//! object name:
//! - script objects through the game's [`ScriptObjects`];
//! - other packages' objects through those packages' Zen headers
//!   ([`HeaderProvider`]), matching the hash against every export's path;
//! - package entries (null) get the imported packages sorted by name, the
//!   order cooks sort their import maps in (by class name, then path: the
//!   `Package` rows are consecutive and sorted; checked on every
//!   engine-cooked package of the corpus).
//!
//! An outer the Zen import map does not list becomes an extra import at the
//! end. What cannot be resolved gets a placeholder and is reported.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::hash::{object_path_hash, package_id, public_export_hash};
use crate::version::ZenLayout;
use crate::zen::{ObjectIndexKind, PackageObjectIndex, ZenPackage};

use super::classes::{self, ClassRef};
use super::provider::{HeaderProvider, ProvidedPackage};
use super::script_objects::ScriptObjects;
use super::{Name, Unresolved};

/// Where an import lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Outer {
    /// A package: the import is directly inside it.
    Package(String),
    /// Another import (by legacy import index).
    Import(usize),
    /// The import is a package itself.
    None,
}

/// A legacy import before names get their indices.
#[derive(Debug, Clone)]
pub(super) struct DraftImport {
    pub(crate) class: ClassRef,
    pub(crate) outer: Outer,
    pub(crate) object_name: Name,
    /// For a script object: its global index (class inference needs it).
    pub(crate) script: Option<PackageObjectIndex>,
}

/// The resolved import map.
#[derive(Debug, Clone)]
pub(super) struct Imports {
    pub(crate) imports: Vec<DraftImport>,
    /// Number of entries the Zen import map has (the rest are extras).
    pub(crate) zen_count: usize,
    /// Zen import value → legacy import index.
    pub(crate) by_value: BTreeMap<u64, usize>,
}

impl Imports {
    /// The legacy import index a Zen import value refers to.
    pub(crate) fn index_of(&self, value: PackageObjectIndex) -> Option<usize> {
        self.by_value.get(&value.0).copied()
    }

    /// The package an import belongs to (its outermost object's name).
    pub(crate) fn package_of(&self, index: usize) -> Option<String> {
        let mut current = index;
        for _ in 0..=self.imports.len() {
            let import = self.imports.get(current)?;
            match &import.outer {
                Outer::Import(o) => current = *o,
                Outer::Package(p) => return Some(p.clone()),
                Outer::None => return Some(import.object_name.full()),
            }
        }
        None
    }
}

/// What a Zen import entry turned out to be before outers are linked.
#[derive(Debug, Clone)]
enum Target {
    /// A package entry (null in Zen).
    Package,
    Script(PackageObjectIndex),
    /// Export `export` of the imported package `package`.
    PackageExport {
        package: Arc<ProvidedPackage>,
        export: usize,
    },
    /// Unresolved: a placeholder object, optionally in a known package.
    Placeholder {
        package: Option<String>,
        name: Name,
    },
}

/// Everything import resolution reads.
pub(super) struct ImportSources<'a> {
    pub(crate) zen: &'a ZenPackage,
    /// Imported package ids from the store entry (empty when unknown).
    pub(crate) store_imports: &'a [u64],
    pub(crate) script_objects: Option<&'a ScriptObjects>,
    pub(crate) provider: &'a dyn HeaderProvider,
}

/// Hashes of every export of an imported package, to find exports by the
/// hash a Zen import map stores.
struct ExportIndex {
    package: Arc<ProvidedPackage>,
    /// (UE5 public export hash of the relative path, UE4 full object path hash).
    hashes: Vec<(u64, u64)>,
}

struct Resolver<'a> {
    src: ImportSources<'a>,
    layout: ZenLayout,
    targets: Vec<Target>,
    /// Per imported package id, its export index (None: not available).
    packages: BTreeMap<u64, Option<Arc<ExportIndex>>>,
    unresolved: Vec<Unresolved>,
}

/// Resolves the import map. Unresolved entries get placeholders and are
/// listed in the returned [`Unresolved`]s.
pub(super) fn resolve(src: ImportSources<'_>) -> Result<(Imports, Vec<Unresolved>)> {
    let layout = src.zen.engine.zen_layout();
    let count = src.zen.imports.len();
    let mut resolver = Resolver {
        src,
        layout,
        targets: Vec::with_capacity(count),
        packages: BTreeMap::new(),
        unresolved: Vec::new(),
    };
    for i in 0..count {
        let target = resolver.target_of(i)?;
        resolver.targets.push(target);
    }
    let imports = resolver.link()?;
    Ok((imports, resolver.unresolved))
}

impl Resolver<'_> {
    fn target_of(&mut self, index: usize) -> Result<Target> {
        let value = self.src.zen.imports[index];
        match value.kind() {
            ObjectIndexKind::Null => Ok(Target::Package),
            ObjectIndexKind::ScriptImport => match self.src.script_objects {
                Some(table) if table.has_chain(value) => Ok(Target::Script(value)),
                _ => {
                    let why = if self.src.script_objects.is_none() {
                        "no script objects were given"
                    } else {
                        "the script objects do not list it (or its outer)"
                    };
                    Ok(self.placeholder(index, None, value.0, why))
                }
            },
            ObjectIndexKind::PackageImport => self.package_target(index, value),
            ObjectIndexKind::Export => Err(Error::invalid(format!(
                "import {index} is {}, but an import map lists only imports",
                value.describe()
            ))
            .within("import map")),
        }
    }

    /// A placeholder for import `index`, named after the hash that identifies it.
    fn placeholder(
        &mut self,
        index: usize,
        package: Option<String>,
        hash: u64,
        why: &str,
    ) -> Target {
        let name = Name::new(format!("Unresolved_{:016x}", hash & ((1 << 62) - 1)), 0);
        let value = self.src.zen.imports[index];
        let what = match (&package, value.kind()) {
            (Some(p), _) => {
                format!("the object with public export hash 0x{hash:016x} in package {p}")
            }
            (None, ObjectIndexKind::ScriptImport) => {
                format!(
                    "the script object with path hash 0x{:016x}",
                    value.0 & ((1 << 62) - 1)
                )
            }
            (None, _) => format!("the object {} of another package", value.describe()),
        };
        self.unresolved.push(Unresolved {
            import: index,
            what,
            reason: why.to_string(),
            placeholder: match &package {
                Some(p) => format!("{p}.{}", name.full()),
                None => format!("{}.{}", classes::UNRESOLVED_SCRIPT_PACKAGE, name.full()),
            },
        });
        Target::Placeholder { package, name }
    }

    /// The export of another package a UE5 or UE4 package import refers to.
    fn package_target(&mut self, index: usize, value: PackageObjectIndex) -> Result<Target> {
        if self.layout == ZenLayout::Ue4 {
            return Ok(self.ue4_package_target(index, value));
        }
        let (package_index, hash_index) = value.package_import_parts().unwrap_or((0, 0));
        let hash = *self
            .src
            .zen
            .imported_public_export_hashes
            .get(hash_index as usize)
            .ok_or_else(|| {
                Error::invalid(format!(
                    "import {index} uses public export hash {hash_index}, but the package lists {}",
                    self.src.zen.imported_public_export_hashes.len()
                ))
                .within("import map")
            })?;
        let (id, name) = match self.imported_package(package_index) {
            Some(p) => p,
            None => {
                return Ok(self.placeholder(
                    index,
                    None,
                    value.0,
                    &format!(
                        "imported package {package_index} is unknown (the store entry of the package was not given)"
                    ),
                ))
            }
        };
        let Some(exports) = self.export_index(id)? else {
            let why = match &name {
                Some(_) => "its package is not among the packages given".to_string(),
                None => format!(
                    "its package (id 0x{id:016x}, public export hash 0x{hash:016x}) is not among the packages given"
                ),
            };
            return Ok(self.placeholder(index, name, hash, &why));
        };
        match exports.hashes.iter().position(|(h, _)| *h == hash) {
            Some(export) => Ok(Target::PackageExport {
                package: exports.package.clone(),
                export,
            }),
            None => {
                let package = Some(exports.package.header.package_name());
                Ok(self.placeholder(
                    index,
                    package,
                    hash,
                    "no export of that package has that path",
                ))
            }
        }
    }

    /// UE4: the hash of the object's full path, searched in every imported package.
    fn ue4_package_target(&mut self, index: usize, value: PackageObjectIndex) -> Target {
        let hash = value.0 & ((1 << 62) - 1);
        let mut searched_any = false;
        for &id in self.src.store_imports {
            let Ok(Some(exports)) = self.export_index(id) else {
                continue;
            };
            searched_any = true;
            if let Some(export) = exports.hashes.iter().position(|(_, h)| *h == hash) {
                return Target::PackageExport {
                    package: exports.package.clone(),
                    export,
                };
            }
        }
        let why = if searched_any {
            "none of the imported packages given has an export with that path"
        } else {
            "none of its imported packages was given (UE4 packages need the store entry and the imported packages)"
        };
        self.placeholder(index, None, value.0, why)
    }

    /// Id and (when known) name of imported package `index`.
    fn imported_package(&mut self, index: u32) -> Option<(u64, Option<String>)> {
        let index = index as usize;
        if self.layout == ZenLayout::DependencyBundles {
            let names = &self.src.zen.imported_package_names;
            let base = names.names.get(index)?;
            let number = *names.numbers.get(index)?;
            let name = Name::new(base.text.clone(), number.max(0) as u32).full();
            return Some((package_id(&name), Some(name)));
        }
        let id = *self.src.store_imports.get(index)?;
        let name = self
            .export_index(id)
            .ok()
            .flatten()
            .map(|e| e.package.header.package_name());
        Some((id, name))
    }

    fn export_index(&mut self, id: u64) -> Result<Option<Arc<ExportIndex>>> {
        if let Some(known) = self.packages.get(&id) {
            return Ok(known.clone());
        }
        let index = self.src.provider.package(id)?.map(|package| {
            let header = &package.header;
            let own = header.package_name();
            let hashes = (0..header.exports.len())
                .map(|e| {
                    let relative = export_relative_path(header, e).join("/");
                    (
                        public_export_hash(&relative),
                        object_path_hash(&format!("{own}/{relative}")),
                    )
                })
                .collect();
            Arc::new(ExportIndex { package, hashes })
        });
        self.packages.insert(id, index.clone());
        Ok(index)
    }
}

/// Names (with number suffixes) from the top-level export down to `export`.
pub(crate) fn export_relative_path(package: &ZenPackage, export: usize) -> Vec<String> {
    let mut path = Vec::new();
    let mut current = export;
    while let Some(entry) = package.exports.get(current) {
        path.push(package.name_text(entry.object_name));
        if path.len() > package.exports.len() {
            break;
        }
        match entry.outer_index.kind() {
            ObjectIndexKind::Export => current = entry.outer_index.0 as usize,
            _ => break,
        }
    }
    path.reverse();
    path
}

impl Resolver<'_> {
    /// Turns the targets into imports: names, outers (adding the outers the
    /// Zen import map lacks), package entries, classes.
    fn link(&mut self) -> Result<Imports> {
        let zen_count = self.targets.len();
        let mut linker = Linker {
            imports: Vec::with_capacity(zen_count),
            by_value: BTreeMap::new(),
            by_export: BTreeMap::new(),
            script_objects: self.src.script_objects,
            provider: self.src.provider,
        };
        for (i, value) in self.src.zen.imports.iter().enumerate() {
            if !value.is_null() {
                linker.by_value.entry(value.0).or_insert(i);
            }
            if let Target::PackageExport { package, export } = &self.targets[i] {
                linker
                    .by_export
                    .entry((package.header.package_name(), *export))
                    .or_insert(i);
            }
        }
        // Placeholders for every entry first, so extras land after them.
        for _ in 0..zen_count {
            linker.imports.push(DraftImport {
                class: ClassRef::package(),
                outer: Outer::None,
                object_name: Name::new("None", 0),
                script: None,
            });
        }
        for i in 0..zen_count {
            let target = self.targets[i].clone();
            linker.fill(i, &target)?;
        }
        self.assign_packages(&mut linker, zen_count);
        let mut imports = Imports {
            imports: linker.imports,
            zen_count,
            by_value: linker.by_value,
        };
        classes::assign_script_classes(&mut imports, self.src.zen, self.src.script_objects);
        Ok(imports)
    }

    /// Gives the null entries the imported packages, sorted by name; adds
    /// entries for packages no null entry is left for.
    fn assign_packages(&mut self, linker: &mut Linker, zen_count: usize) {
        let mut needed: BTreeSet<(String, String)> = BTreeSet::new();
        for import in &linker.imports {
            if let Outer::Package(p) = &import.outer {
                needed.insert((p.to_ascii_lowercase(), p.clone()));
            }
        }
        let names = &self.src.zen.imported_package_names;
        for (base, number) in names.names.iter().zip(&names.numbers) {
            let p = Name::new(base.text.clone(), (*number).max(0) as u32).full();
            needed.insert((p.to_ascii_lowercase(), p));
        }
        let slots: Vec<usize> = (0..zen_count)
            .filter(|&i| matches!(self.targets[i], Target::Package))
            .collect();
        let mut packages = needed.into_iter().map(|(_, p)| p);
        for (n, &slot) in slots.iter().enumerate() {
            let name = match packages.next() {
                Some(p) => p,
                None => {
                    let placeholder = format!("{}/Package_{n}", classes::UNRESOLVED_PACKAGE_ROOT);
                    self.unresolved.push(Unresolved {
                        import: slot,
                        what: "an imported package".into(),
                        reason: "more package entries than packages the header names (a package imported without any of its objects)".into(),
                        placeholder: placeholder.clone(),
                    });
                    placeholder
                }
            };
            linker.imports[slot] = DraftImport {
                class: ClassRef::package(),
                outer: Outer::None,
                object_name: Name::from_full(&name),
                script: None,
            };
        }
        for name in packages {
            linker.imports.push(DraftImport {
                class: ClassRef::package(),
                outer: Outer::None,
                object_name: Name::from_full(&name),
                script: None,
            });
        }
        // Objects directly inside a package point at its entry.
        let mut entry_of: BTreeMap<String, usize> = BTreeMap::new();
        for (i, import) in linker.imports.iter().enumerate() {
            if import.outer == Outer::None && import.script.is_none() {
                entry_of.entry(import.object_name.full()).or_insert(i);
            }
        }
        let mut missing = Vec::new();
        for import in linker.imports.iter_mut() {
            if let Outer::Package(p) = &import.outer {
                match entry_of.get(p) {
                    Some(&i) => import.outer = Outer::Import(i),
                    None => missing.push(p.clone()),
                }
            }
        }
        debug_assert!(missing.is_empty(), "every needed package has an entry");
    }
}

/// Builds the drafts, adding the outers the Zen import map lacks.
struct Linker<'a> {
    imports: Vec<DraftImport>,
    by_value: BTreeMap<u64, usize>,
    /// (package name, export index) → import index.
    by_export: BTreeMap<(String, usize), usize>,
    script_objects: Option<&'a ScriptObjects>,
    provider: &'a dyn HeaderProvider,
}

impl Linker<'_> {
    fn fill(&mut self, slot: usize, target: &Target) -> Result<()> {
        match target {
            Target::Package => {}
            Target::Script(index) => self.fill_script(slot, *index)?,
            Target::PackageExport { package, export } => {
                self.fill_export(slot, package, *export)?
            }
            Target::Placeholder { package, name } => {
                let outer = match package {
                    Some(p) => Outer::Package(p.clone()),
                    None => Outer::Import(self.unresolved_script_package()),
                };
                self.imports[slot] = DraftImport {
                    class: ClassRef::object(),
                    outer,
                    object_name: name.clone(),
                    script: None,
                };
            }
        }
        Ok(())
    }

    /// The entry `/Script/Unresolved` placeholders of unknown script objects live in.
    fn unresolved_script_package(&mut self) -> usize {
        let name = classes::UNRESOLVED_SCRIPT_PACKAGE;
        if let Some(i) = self.imports.iter().position(|d| {
            d.outer == Outer::None && d.object_name.full() == name && d.script.is_some()
        }) {
            return i;
        }
        let value = PackageObjectIndex::script_import(object_path_hash(name));
        self.imports.push(DraftImport {
            class: ClassRef::package(),
            outer: Outer::None,
            object_name: Name::from_full(name),
            script: Some(value),
        });
        self.imports.len() - 1
    }

    /// A script object and, through extras, its outer chain.
    fn fill_script(&mut self, slot: usize, index: PackageObjectIndex) -> Result<()> {
        let table = self
            .script_objects
            .ok_or_else(|| Error::internal("script target without script objects"))?;
        let object = table
            .get(index)
            .ok_or_else(|| Error::internal("script target not in the table"))?;
        let outer = match object.outer {
            None => Outer::None,
            Some(outer) => Outer::Import(self.script_slot(outer)?),
        };
        self.imports[slot] = DraftImport {
            class: ClassRef::object(),
            outer,
            object_name: Name::new(object.name.clone(), object.number),
            script: Some(index),
        };
        Ok(())
    }

    /// The import of a script object, added at the end when the Zen import map lacks it.
    fn script_slot(&mut self, index: PackageObjectIndex) -> Result<usize> {
        if let Some(&i) = self.by_value.get(&index.0) {
            return Ok(i);
        }
        let slot = self.imports.len();
        self.imports.push(DraftImport {
            class: ClassRef::object(),
            outer: Outer::None,
            object_name: Name::new("None", 0),
            script: Some(index),
        });
        self.by_value.insert(index.0, slot);
        self.fill_script(slot, index)?;
        Ok(slot)
    }

    /// An export of another package and, through extras, its outer chain.
    fn fill_export(
        &mut self,
        slot: usize,
        package: &Arc<ProvidedPackage>,
        export: usize,
    ) -> Result<()> {
        let header = &package.header;
        let entry = header.exports.get(export).ok_or_else(|| {
            Error::internal(format!(
                "export {export} of {} is missing",
                header.package_name()
            ))
        })?;
        let outer = match entry.outer_index.kind() {
            ObjectIndexKind::Export => {
                Outer::Import(self.export_slot(package, entry.outer_index.0 as usize)?)
            }
            _ => Outer::Package(header.package_name()),
        };
        let name = entry.object_name;
        let base = header
            .names
            .get(name.index() as usize)
            .map(|n| n.text.clone())
            .unwrap_or_else(|| "None".into());
        self.imports[slot] = DraftImport {
            class: ClassRef::object(),
            outer,
            object_name: Name::new(base, name.number),
            script: None,
        };
        self.imports[slot].class =
            classes::class_of_export(package, export, self.script_objects, self.provider);
        Ok(())
    }

    fn export_slot(&mut self, package: &Arc<ProvidedPackage>, export: usize) -> Result<usize> {
        let key = (package.header.package_name(), export);
        if let Some(&i) = self.by_export.get(&key) {
            return Ok(i);
        }
        if key.1 >= package.header.exports.len() || self.imports.len() > 1 << 20 {
            return Err(Error::invalid(format!(
                "the outer chain of an export of {} is broken",
                key.0
            )));
        }
        let slot = self.imports.len();
        self.imports.push(DraftImport {
            class: ClassRef::object(),
            outer: Outer::None,
            object_name: Name::new("None", 0),
            script: None,
        });
        self.by_export.insert(key, slot);
        self.fill_export(slot, package, export)?;
        Ok(slot)
    }
}
