//! Dependency analysis of classic packages: which packages a package needs
//! before it will load, which objects it needs from each, and — given the
//! game's folders — which of those packages are present and which objects
//! are missing from them (the engine's "can't find X in package Y").
//!
//! A package is required when an import is a top-level `Core.Package`
//! (outer null); the objects needed from it are the imports whose outer
//! chain ends there (reference 000 describes the algorithm).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::flags::{RF_LOAD_CONTEXT, RF_NATIVE, RF_PUBLIC};
use super::{ObjectRef, Package, Target};

/// File extensions of classic packages, in the order the engine's default paths list them.
pub const PACKAGE_EXTENSIONS: &[&str] = &["u", "utx", "uax", "umx", "unr", "usx", "ukx", "uvx"];

/// An object a package imports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RequiredObject {
    /// Index in the import table.
    pub(crate) import: usize,
    /// Full dotted path, e.g. `SkyCity.Deco.runeSgn2`.
    pub path: String,
    /// Full class path, e.g. `Engine.Texture`.
    pub class: String,
}

/// A package another package needs, with the objects needed from it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Requirement {
    /// The package name as the importing package spells it.
    pub package: String,
    /// Imports below it, in import-table order (groups included).
    pub objects: Vec<RequiredObject>,
}

/// What a package needs from others.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Requirements {
    /// Required packages, sorted by name (case-insensitively, as the engine compares names).
    pub packages: Vec<Requirement>,
    /// Imports whose outer chain does not end at a top-level `Core.Package`
    /// import (malformed, or pointing into this package): they cannot be
    /// attributed to a package.
    pub unattributed: Vec<RequiredObject>,
    /// Objects the package imports from itself: it does not store them, the
    /// engine's native code creates them (intrinsic classes such as
    /// `Core.TextBuffer` in Core.u). The package is not its own requirement.
    pub(crate) own_objects: Vec<RequiredObject>,
}

/// The packages `package` imports from and the objects it imports from each.
pub fn requirements(package: &Package) -> Requirements {
    let mut by_name: BTreeMap<String, Requirement> = BTreeMap::new();
    let mut unattributed = Vec::new();
    let is_package_class = |import: usize| {
        let entry = &package.imports[import];
        package
            .name_text(entry.class_package)
            .eq_ignore_ascii_case("Core")
            && package
                .name_text(entry.class_name)
                .eq_ignore_ascii_case("Package")
    };
    for (index, import) in package.imports.iter().enumerate() {
        let reference = ObjectRef::import(index);
        if import.outer.is_null() && is_package_class(index) {
            let name = package.object_name(reference).to_string();
            by_name
                .entry(name.to_ascii_lowercase())
                .or_insert_with(|| Requirement {
                    package: name,
                    objects: Vec::new(),
                });
        }
    }
    for index in 0..package.imports.len() {
        let reference = ObjectRef::import(index);
        let top = top_of(package, reference);
        let object = RequiredObject {
            import: index,
            path: package.path(reference),
            class: package.class_path(reference),
        };
        match top.target() {
            Target::Import(top_index)
                if is_package_class(top_index) && package.imports[top_index].outer.is_null() =>
            {
                if top_index == index {
                    continue;
                }
                let key = package.object_name(top).to_ascii_lowercase();
                if let Some(requirement) = by_name.get_mut(&key) {
                    requirement.objects.push(object);
                }
            }
            _ => unattributed.push(object),
        }
    }
    let own_objects = by_name
        .remove(&package.name.to_ascii_lowercase())
        .map(|own| own.objects)
        .unwrap_or_default();
    Requirements {
        packages: by_name.into_values().collect(),
        unattributed,
        own_objects,
    }
}

/// The outermost object of a chain.
fn top_of(package: &Package, reference: ObjectRef) -> ObjectRef {
    let mut current = reference;
    let limit = package.imports.len() + package.exports.len() + 1;
    for _ in 0..limit {
        let outer = package.outer(current);
        if outer.is_null() {
            break;
        }
        current = outer;
    }
    current
}

/// Finds the file of package `name` in `search` folders: the first folder
/// (in the order given) holding `<name>.<ext>` for a classic package
/// extension, compared case-insensitively as on the game's platform.
pub fn locate_package(name: &str, search: &[PathBuf]) -> Option<PathBuf> {
    for folder in search {
        let Ok(entries) = std::fs::read_dir(folder) else {
            continue;
        };
        let mut candidates: Vec<PathBuf> = entries
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| p.is_file())
            .filter(|p| {
                let stem_matches = p
                    .file_stem()
                    .is_some_and(|s| s.to_string_lossy().eq_ignore_ascii_case(name));
                let ext = p
                    .extension()
                    .map(|e| e.to_string_lossy().to_ascii_lowercase())
                    .unwrap_or_default();
                stem_matches && PACKAGE_EXTENSIONS.contains(&ext.as_str())
            })
            .collect();
        candidates.sort_by_key(|p| {
            let ext = p
                .extension()
                .map(|e| e.to_string_lossy().to_ascii_lowercase())
                .unwrap_or_default();
            (PACKAGE_EXTENSIONS.iter().position(|x| *x == ext), p.clone())
        });
        if let Some(first) = candidates.into_iter().next() {
            return Some(first);
        }
    }
    None
}

/// Why a required object is not usable from the package that should hold it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "problem", rename_all = "kebab-case")]
pub enum Problem {
    /// No export of the package has this path.
    NotFound,
    /// An export has this path but another class.
    WrongClass { found: String },
    /// The export exists but is not `RF_Public`, so other packages cannot import it.
    NotPublic,
}

/// A required object that the located package does not provide.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MissingObject {
    pub path: String,
    pub class: String,
    #[serde(flatten)]
    pub problem: Problem,
}

/// Where a required package was looked for and what was found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum Availability {
    /// No search folder holds it.
    Missing,
    /// Found and read: `missing_objects` lists what it lacks; `intrinsic`
    /// lists needed objects the file does not store because the engine's
    /// native code creates them (see [`Intrinsic`]).
    Present {
        file: PathBuf,
        missing_objects: Vec<MissingObject>,
        intrinsic: Vec<Intrinsic>,
    },
    /// A file was found but could not be read as a classic package.
    Unreadable { file: PathBuf, error: String },
}

/// A needed object that the package file does not store, but that the
/// engine creates from native code, so it loads without being in the file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Intrinsic {
    pub path: String,
    pub evidence: IntrinsicEvidence,
}

/// Why an object not stored in a package is taken to be intrinsic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum IntrinsicEvidence {
    /// The package imports the object from itself (Core.u imports
    /// `Core.TextBuffer`, Engine.u imports `Engine.Level`): certain.
    ImportedByItsPackage,
    /// A class missing from a package that has native classes (`RF_Native`),
    /// like `Engine.Polys`: intrinsic classes are registered by the
    /// package's native code and never written to its file. Likely, but the
    /// file alone cannot prove it.
    ClassOfNativePackage,
}

/// Checks the objects a package needs against the package that should
/// hold them. Returns the objects missing from it, and the objects it does
/// not store but imports from itself (intrinsic).
pub(crate) fn missing_objects(
    required: &Requirement,
    provider: &Package,
) -> (Vec<MissingObject>, Vec<Intrinsic>) {
    let mut exports: BTreeMap<String, (String, u32)> = BTreeMap::new();
    for index in 0..provider.exports.len() {
        let reference = ObjectRef::export(index);
        exports
            .entry(provider.path(reference).to_ascii_lowercase())
            .or_insert_with(|| {
                (
                    provider.class_path(reference),
                    provider.exports[index].flags,
                )
            });
    }
    // A package that imports one of its own objects does not store it: the
    // engine's native code creates it (Core.u imports Core.TextBuffer,
    // Engine.u imports Engine.Level).
    let own_prefix = format!("{}.", provider.name.to_ascii_lowercase());
    let self_imports: BTreeSet<String> = (0..provider.imports.len())
        .map(|i| provider.path(ObjectRef::import(i)).to_ascii_lowercase())
        .filter(|path| path.starts_with(&own_prefix))
        .collect();
    let has_native_classes = (0..provider.exports.len())
        .any(|i| provider.exports[i].flags & RF_NATIVE != 0 && provider.exports[i].class.is_null());
    let mut missing = Vec::new();
    let mut intrinsic = Vec::new();
    for object in &required.objects {
        // The provider's own paths start with its file name; the importer's
        // with the name it imports; they agree case-insensitively.
        let key = match object.path.split_once('.') {
            Some((_, rest)) => format!("{}.{}", provider.name, rest).to_ascii_lowercase(),
            None => object.path.to_ascii_lowercase(),
        };
        let problem = match exports.get(&key) {
            None if self_imports.contains(&key) => {
                let evidence = IntrinsicEvidence::ImportedByItsPackage;
                intrinsic.push(Intrinsic {
                    path: object.path.clone(),
                    evidence,
                });
                None
            }
            None if has_native_classes && object.class.eq_ignore_ascii_case("Core.Class") => {
                let evidence = IntrinsicEvidence::ClassOfNativePackage;
                intrinsic.push(Intrinsic {
                    path: object.path.clone(),
                    evidence,
                });
                None
            }
            None => Some(Problem::NotFound),
            Some((class, _)) if !class.eq_ignore_ascii_case(&object.class) => {
                Some(Problem::WrongClass {
                    found: class.clone(),
                })
            }
            Some((_, flags)) if flags & RF_PUBLIC == 0 => Some(Problem::NotPublic),
            Some(_) => None,
        };
        if let Some(problem) = problem {
            missing.push(MissingObject {
                path: object.path.clone(),
                class: object.class.clone(),
                problem,
            });
        }
    }
    (missing, intrinsic)
}

/// Looks for one required package in `search` and checks the objects needed from it.
/// `load` reads a package file (callers may cache).
pub(crate) fn check_requirement(
    required: &Requirement,
    search: &[PathBuf],
    load: &mut dyn FnMut(&Path) -> crate::Result<Package>,
) -> Availability {
    let Some(file) = locate_package(&required.package, search) else {
        return Availability::Missing;
    };
    match load(&file) {
        Ok(provider) => {
            let (missing_objects, intrinsic) = missing_objects(required, &provider);
            Availability::Present {
                file,
                missing_objects,
                intrinsic,
            }
        }
        Err(error) => Availability::Unreadable {
            file,
            error: error.to_string(),
        },
    }
}

/// Packages read while checking dependencies, by file: each file is read once.
#[derive(Default)]
pub struct PackageCache {
    packages: BTreeMap<PathBuf, crate::Result<Package>>,
}

impl PackageCache {
    pub fn new() -> Self {
        Self::default()
    }

    pub(crate) fn load(&mut self, file: &Path) -> crate::Result<Package> {
        let entry = self
            .packages
            .entry(file.to_path_buf())
            .or_insert_with(|| Package::read_file(file));
        entry.clone()
    }
}

/// One required package in a [`DependencyReport`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RequiredPackage {
    pub package: String,
    pub objects: Vec<RequiredObject>,
    /// Set when search folders were given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub availability: Option<Availability>,
}

/// What a package needs, and (with search folders) what is there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DependencyReport {
    pub package: String,
    pub file_version: u16,
    pub required: Vec<RequiredPackage>,
    pub unattributed: Vec<RequiredObject>,
    /// See [`Requirements::own_objects`].
    pub own_objects: Vec<RequiredObject>,
    /// Packages the package carries copies of (see [`embedded_packages`]).
    pub embedded: Vec<EmbeddedPackage>,
}

/// A package a package carries a copy of: a top-level export of class
/// `Core.Package` (the map's own objects live directly in the map, so in a
/// map such an export is an embedded copy of another package, or the
/// mapper's own "MyLevel"-style package).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EmbeddedPackage {
    pub package: String,
    /// Exports inside it, groups included.
    pub exports: usize,
    /// False when the loader no longer creates it (no `RF_LoadFor*` flag),
    /// as after `zenpak classic consolidate`.
    pub loaded: bool,
}

/// The packages `package` embeds, in export order.
pub(crate) fn embedded_packages(package: &Package) -> Vec<EmbeddedPackage> {
    let is_package = |i: usize| {
        package
            .class_path(ObjectRef::export(i))
            .eq_ignore_ascii_case("Core.Package")
    };
    let roots: Vec<usize> = (0..package.exports.len())
        .filter(|&i| package.exports[i].outer.is_null() && is_package(i))
        .collect();
    roots
        .iter()
        .map(|&root| EmbeddedPackage {
            package: package.object_name(ObjectRef::export(root)).to_string(),
            exports: (0..package.exports.len())
                .filter(|&i| {
                    i != root && top_of(package, ObjectRef::export(i)) == ObjectRef::export(root)
                })
                .count(),
            loaded: package.exports[root].flags & RF_LOAD_CONTEXT != 0,
        })
        .collect()
}

impl DependencyReport {
    /// Required packages not found in any search folder.
    pub fn missing_packages(&self) -> impl Iterator<Item = &RequiredPackage> {
        self.required
            .iter()
            .filter(|r| matches!(r.availability, Some(Availability::Missing)))
    }

    /// Objects missing from packages that were found, with the package that should hold them.
    pub fn missing_objects(&self) -> impl Iterator<Item = (&RequiredPackage, &MissingObject)> {
        self.required.iter().flat_map(|r| match &r.availability {
            Some(Availability::Present {
                missing_objects, ..
            }) => missing_objects.iter().map(move |m| (r, m)).collect(),
            _ => Vec::new(),
        })
    }
}

/// Lists what `package` needs; when `search` is not empty, also looks each
/// required package up there and checks the objects needed from it.
pub fn dependency_report(
    package: &Package,
    search: &[PathBuf],
    cache: &mut PackageCache,
) -> DependencyReport {
    let requirements = requirements(package);
    let required = requirements
        .packages
        .into_iter()
        .map(|requirement| {
            let availability = (!search.is_empty()).then(|| {
                check_requirement(&requirement, search, &mut |file: &Path| cache.load(file))
            });
            RequiredPackage {
                package: requirement.package,
                objects: requirement.objects,
                availability,
            }
        })
        .collect();
    DependencyReport {
        package: package.name.clone(),
        file_version: package.version().0,
        required,
        unattributed: requirements.unattributed,
        own_objects: requirements.own_objects,
        embedded: embedded_packages(package),
    }
}

/// Reports for `roots` and then, breadth first, for every required package
/// found in `search` (each file once): what the game loads, package by
/// package, before the roots load. Errors reading a root are returned;
/// unreadable dependencies appear as [`Availability::Unreadable`] in the
/// report that needs them.
pub fn dependency_closure(
    roots: &[PathBuf],
    search: &[PathBuf],
    cache: &mut PackageCache,
) -> crate::Result<Vec<(PathBuf, DependencyReport)>> {
    let mut seen = BTreeSet::new();
    let mut queue: std::collections::VecDeque<(PathBuf, bool)> =
        roots.iter().map(|r| (r.clone(), true)).collect();
    let mut reports = Vec::new();
    while let Some((file, is_root)) = queue.pop_front() {
        let key = std::fs::canonicalize(&file).unwrap_or_else(|_| file.clone());
        if !seen.insert(key) {
            continue;
        }
        let package = if is_root {
            Package::read_file(&file)?
        } else {
            cache.load(&file)?
        };
        let report = dependency_report(&package, search, cache);
        for required in &report.required {
            if let Some(Availability::Present { file, .. }) = &required.availability {
                queue.push_back((file.clone(), false));
            }
        }
        reports.push((file, report));
    }
    Ok(reports)
}
