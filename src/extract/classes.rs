//! The class of each import (`ClassPackage` + `ClassName` of the legacy
//! import map), which no Zen package stores.
//!
//! - An object of another package: the class its own export map gives.
//! - A script object: what the script objects table says when it was built
//!   from legacy imports; otherwise inferred from the shape of the object,
//!   by the rules every engine-cooked package of the corpus follows (with
//!   only what the engine's chunk holds, 1,349 of 1,349 script imports of
//!   the 4.27–5.7 cooks, and 57 of 57 with the real 5.3 chunk):
//!   a script package is a `Package`; a class default object is an object of
//!   the class it names; an object some default object names as its class,
//!   or that an export uses as its class, is a `Class`; an object inside a
//!   class is a `Function` (`DelegateFunction` for `…__DelegateSignature`);
//!   a top-level object that is no class is a `DelegateFunction`
//!   (`…__DelegateSignature`), an `Enum` (`E` + capital letter, the engine's
//!   naming rule for enums) or a `ScriptStruct`; a subobject of a default
//!   object has the class of the export that uses it as its template.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use crate::zen::{ObjectIndexKind, PackageObjectIndex, ZenPackage};

use super::imports::{export_relative_path, Imports, Outer};
use super::provider::{HeaderProvider, ProvidedPackage};
use super::script_objects::ScriptObjects;
use super::Name;

/// Where placeholders for unknown script objects live.
pub(super) const UNRESOLVED_SCRIPT_PACKAGE: &str = "/Script/Unresolved";
/// Where placeholders for unknown packages live.
pub(super) const UNRESOLVED_PACKAGE_ROOT: &str = "/Unresolved";

const CORE_UOBJECT: &str = "/Script/CoreUObject";

/// An import's class: the package of the class and the class's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ClassRef {
    pub(crate) package: Name,
    pub(crate) name: Name,
}

impl ClassRef {
    fn core(name: &str) -> Self {
        ClassRef {
            package: Name::new(CORE_UOBJECT, 0),
            name: Name::new(name, 0),
        }
    }
    pub(crate) fn package() -> Self {
        Self::core("Package")
    }
    pub(crate) fn object() -> Self {
        Self::core("Object")
    }
    fn class() -> Self {
        Self::core("Class")
    }
}

/// The class of a script object as (script package, object name).
fn script_class_ref(table: &ScriptObjects, class: PackageObjectIndex) -> Option<ClassRef> {
    let chain = table.chain(class)?;
    let package = table.get(chain[0])?;
    let object = table.get(class)?;
    Some(ClassRef {
        package: Name::new(package.name.clone(), package.number),
        name: Name::new(object.name.clone(), object.number),
    })
}

/// The class of export `export` of another package, from its export map.
pub(super) fn class_of_export(
    package: &Arc<ProvidedPackage>,
    export: usize,
    table: Option<&ScriptObjects>,
    provider: &dyn HeaderProvider,
) -> ClassRef {
    let header = &package.header;
    let Some(entry) = header.exports.get(export) else {
        return ClassRef::object();
    };
    let class = entry.class_index;
    let found = match class.kind() {
        ObjectIndexKind::Export => header.exports.get(class.0 as usize).map(|c| ClassRef {
            package: Name::from_full(&header.package_name()),
            name: Name::new(
                header
                    .names
                    .get(c.object_name.index() as usize)
                    .map(|n| n.text.clone())
                    .unwrap_or_default(),
                c.object_name.number,
            ),
        }),
        ObjectIndexKind::ScriptImport => table.and_then(|t| script_class_ref(t, class)),
        ObjectIndexKind::PackageImport => class_from_other_package(package, class, provider),
        ObjectIndexKind::Null => None,
    };
    found.unwrap_or_else(ClassRef::object)
}

/// A class that lives in a third package (a blueprint class): its name from
/// that package's header.
fn class_from_other_package(
    package: &ProvidedPackage,
    class: PackageObjectIndex,
    provider: &dyn HeaderProvider,
) -> Option<ClassRef> {
    let header = &package.header;
    let (package_index, hash_index) = class.package_import_parts()?;
    let id = match header.engine.zen_layout() {
        crate::version::ZenLayout::DependencyBundles => {
            let names = &header.imported_package_names;
            let base = names.names.get(package_index as usize)?;
            let number = *names.numbers.get(package_index as usize)?;
            crate::hash::package_id(&Name::new(base.text.clone(), number.max(0) as u32).full())
        }
        crate::version::ZenLayout::GraphData => {
            *package.imported_packages.get(package_index as usize)?
        }
        // UE4 class imports are full-path hashes; search the imported packages.
        crate::version::ZenLayout::Ue4 => {
            return package.imported_packages.iter().find_map(|&id| {
                let other = provider.package(id).ok()??;
                let own = other.header.package_name();
                let hash = class.0 & ((1 << 62) - 1);
                (0..other.header.exports.len()).find_map(|e| {
                    let relative = export_relative_path(&other.header, e);
                    let full = format!("{own}/{}", relative.join("/"));
                    let last = relative.last()?;
                    (crate::hash::object_path_hash(&full) == hash).then(|| ClassRef {
                        package: Name::from_full(&own),
                        name: Name::from_full(last),
                    })
                })
            });
        }
    };
    let hash = *header
        .imported_public_export_hashes
        .get(hash_index as usize)?;
    let other = provider.package(id).ok()??;
    let own = other.header.package_name();
    (0..other.header.exports.len()).find_map(|e| {
        let relative = export_relative_path(&other.header, e);
        let last = relative.last()?;
        (crate::hash::public_export_hash(&relative.join("/")) == hash).then(|| ClassRef {
            package: Name::from_full(&own),
            name: Name::from_full(last),
        })
    })
}

/// How the package being extracted uses its imports.
struct Usage {
    /// Imports some export has as its class.
    classes: BTreeSet<usize>,
    /// For imports some export has as its template: the first such export.
    template_users: BTreeMap<usize, usize>,
}

fn usage(imports: &Imports, zen: &ZenPackage) -> Usage {
    let mut usage = Usage {
        classes: BTreeSet::new(),
        template_users: BTreeMap::new(),
    };
    for (e, export) in zen.exports.iter().enumerate() {
        if let Some(i) = imports.index_of(export.class_index) {
            usage.classes.insert(i);
        }
        if let Some(i) = imports.index_of(export.template_index) {
            usage.template_users.entry(i).or_insert(e);
        }
    }
    usage
}

/// The class (as a reference to a class object) an export of the package being extracted has.
fn class_of_own_export(imports: &Imports, zen: &ZenPackage, export: usize) -> Option<ClassRef> {
    let class = zen.exports.get(export)?.class_index;
    match class.kind() {
        ObjectIndexKind::Export => {
            let c = zen.exports.get(class.0 as usize)?;
            Some(ClassRef {
                package: Name::from_full(&zen.package_name()),
                name: Name::from_full(&zen.name_text(c.object_name)),
            })
        }
        _ => {
            let i = imports.index_of(class)?;
            Some(ClassRef {
                package: Name::from_full(&imports.package_of(i)?),
                name: imports.imports.get(i)?.object_name.clone(),
            })
        }
    }
}

/// Sets the class of every script import (see the module documentation).
pub(super) fn assign_script_classes(
    imports: &mut Imports,
    zen: &ZenPackage,
    table: Option<&ScriptObjects>,
) {
    let Some(table) = table else {
        return;
    };
    let usage = usage(imports, zen);
    let is_class = |i: usize, imports: &Imports| -> bool {
        usage.classes.contains(&i)
            || imports.imports[i]
                .script
                .is_some_and(|index| table.is_class(index))
    };
    let mut classes = Vec::with_capacity(imports.imports.len());
    for (i, import) in imports.imports.iter().enumerate() {
        let Some(index) = import.script else {
            classes.push(None);
            continue;
        };
        let object = table.get(index);
        let name = import.object_name.full();
        let class = if import.outer == Outer::None {
            Some(ClassRef::package())
        } else if let Some((package, class)) = object.and_then(|o| o.class.clone()) {
            Some(ClassRef {
                package: Name::from_full(&package),
                name: Name::from_full(&class),
            })
        } else if let Some(cdo_class) = object.and_then(|o| o.cdo_class).filter(
            |_| matches!(import.outer, Outer::Import(o) if imports.imports[o].outer == Outer::None),
        ) {
            // A class default object (the engine's chunk also names the
            // class for the default object's subobjects; those are not of it).
            script_class_ref(table, cdo_class)
        } else if is_class(i, imports) {
            Some(ClassRef::class())
        } else {
            match &import.outer {
                Outer::Import(o) if imports.imports[*o].outer == Outer::None => {
                    Some(top_level_class(&name))
                }
                Outer::Import(o) if is_class(*o, imports) => Some(if is_delegate(&name) {
                    ClassRef::core("DelegateFunction")
                } else {
                    ClassRef::core("Function")
                }),
                Outer::Import(_) => usage
                    .template_users
                    .get(&i)
                    .and_then(|&e| class_of_own_export(imports, zen, e)),
                _ => None,
            }
        };
        classes.push(class);
    }
    for (import, class) in imports.imports.iter_mut().zip(classes) {
        if let Some(class) = class {
            import.class = class;
        }
    }
}

fn is_delegate(name: &str) -> bool {
    name.ends_with("__DelegateSignature")
}

/// A top-level script object that is not a class.
fn top_level_class(name: &str) -> ClassRef {
    let mut chars = name.chars();
    if is_delegate(name) {
        ClassRef::core("DelegateFunction")
    } else if chars.next() == Some('E') && chars.next().is_some_and(|c| c.is_ascii_uppercase()) {
        ClassRef::core("Enum")
    } else {
        ClassRef::core("ScriptStruct")
    }
}
