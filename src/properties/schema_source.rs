//! Schemas that live in content, not in the mappings: a blueprint class
//! whose parent is another blueprint (`Atlas_6x4_Semi_C` derives from
//! `MTVehicleBaseBP_C`), a component of a blueprint class, a
//! `UserDefinedStruct` (`F_AnimSyncSettings`). A dumper only records what
//! was loaded when it ran, so these are often missing from a `.usmap`;
//! their layout is the `UStruct` record of the class or struct export in
//! the package that defines it (read by `class_schema`: a
//! `UserDefinedStruct` serializes as a `UScriptStruct`, the same
//! `UStruct::Serialize` record followed by its flags and defaults).
//!
//! The defining package is named by the import table: the import of the
//! class or struct (object name `MTVehicleBaseBP_C`, outermost import the
//! package `/Game/Cars/MTVehicleBaseBP`). It is looked for, in order:
//! - beside the package: in the content folder it sits under (the folder
//!   its own name maps to: `…/Content/Cars/Models/Atlas/Atlas_6x4_Semi.uasset`
//!   named `/Game/Cars/Models/Atlas/Atlas_6x4_Semi` sits under `…/Content`,
//!   and a `Content` folder's project folder is searched, so plugin content
//!   is found too; a package whose folders do not spell its name, its own
//!   folder);
//! - in the folders given (`--schemas DIR`, the mod's content root);
//! - in the game ([`PackageSource`], `--game-dir`: `extract::single`).
//!
//! A folder is listed once (its `.uasset`/`.umap` files by name); a file of
//! the wanted name is taken when the package name its summary stores is the
//! one wanted, or, when it stores none (4.x), when its path below the
//! folder ends with the package's path below its mount point. Then the
//! schema's own needs (its super struct, the structs its properties hold)
//! are resolved the same way in the package that defines it, through that
//! package's imports. Every (name, package) is visited once, at most
//! [`MAX_SCHEMA_DEPTH`] deep and through at most [`MAX_SCHEMA_PACKAGES`]
//! packages, so packages whose classes name each other as parents end (the
//! codec then reports the loop in the super chain), never hang.
//!
//! What was looked for and not found is recorded
//! ([`SchemaSources::missing`]) for the command to say where it looked.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use serde::Serialize;

use crate::error::Result;
use crate::legacy::{LegacyPackage, PackageFiles, ResolvedIndex};
use crate::limits::{MAX_SCHEMA_DEPTH, MAX_SCHEMA_FOLDER_FILES, MAX_SCHEMA_PACKAGES};
use crate::mappings::{ExtraStructs, Mappings, PropertyType, StructSchema};
use crate::version::EngineVersion;

use super::class_schema::{class_schema, package_class_schemas};
use super::PackageContext;

/// Packages found by name somewhere else than a folder: the game
/// (`extract::single` implements it over a game view).
pub trait PackageSource {
    /// The package named `name` (`/Game/Cars/MTVehicleBaseBP`) as legacy
    /// files, `Ok(None)` when the source does not have it.
    fn find_package(&self, name: &str) -> Result<Option<PackageFiles>>;
}

/// A schema looked for in content and not found (or not readable).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MissingSchema {
    /// The class or struct (`MTVehicleBaseBP_C`).
    pub name: String,
    /// The package that defines it (`/Game/Cars/MTVehicleBaseBP`).
    pub package: String,
    /// Why it was not read.
    pub reason: String,
}

/// Where packages that define schemas are looked for (see the module docs).
#[derive(Default)]
pub struct SchemaSources<'a> {
    /// The package's own file: its content folder is searched first.
    beside: Option<PathBuf>,
    folders: Vec<PathBuf>,
    game: Option<&'a dyn PackageSource>,
    /// Each folder's `.uasset`/`.umap` files by lower-case stem, listed once.
    listed: RefCell<HashMap<PathBuf, Rc<FolderFiles>>>,
    missing: RefCell<Vec<MissingSchema>>,
}

type FolderFiles = HashMap<String, Vec<PathBuf>>;

impl<'a> SchemaSources<'a> {
    /// No content searched: only the mappings and the package's own classes.
    pub fn none() -> Self {
        Self::default()
    }

    /// Searches the content folder the package at `path` (its `.uasset`
    /// or `.umap`, or where it is written) sits under.
    pub fn beside(path: impl Into<PathBuf>) -> Self {
        SchemaSources {
            beside: Some(path.into()),
            ..Self::default()
        }
    }

    /// Also searches `dir` (a folder of cooked content: `--schemas`).
    pub fn with_folder(mut self, dir: impl Into<PathBuf>) -> Self {
        let dir = dir.into();
        if !self.folders.contains(&dir) {
            self.folders.push(dir);
        }
        self
    }

    /// Also asks `game` (after the folders).
    pub fn with_game(mut self, game: &'a dyn PackageSource) -> Self {
        self.game = Some(game);
        self
    }

    /// The schemas looked for and not found so far, each once.
    pub fn missing(&self) -> Vec<MissingSchema> {
        self.missing.borrow().clone()
    }

    /// Where a package is looked for, for messages.
    pub fn describe(&self) -> String {
        let mut places = Vec::new();
        if self.beside.is_some() {
            places.push("beside the package".to_string());
        }
        places.extend(self.folders.iter().map(|d| format!("in {}", d.display())));
        if self.game.is_some() {
            places.push("in the game".to_string());
        }
        if places.is_empty() {
            return "nowhere (no content folder or game was given)".to_string();
        }
        places.join(", ")
    }

    fn note_missing(&self, name: &str, package: &str, reason: String) {
        let mut missing = self.missing.borrow_mut();
        if !missing
            .iter()
            .any(|m| m.name.eq_ignore_ascii_case(name) && m.package.eq_ignore_ascii_case(package))
        {
            missing.push(MissingSchema {
                name: name.to_string(),
                package: package.to_string(),
                reason,
            });
        }
    }

    /// The class (`/Script/Engine.Font`) of the object at `object_path`
    /// (`/Game/UI/Fonts/Font_Other.Font_Other`), read from the package
    /// that exports it where packages are looked for; `None` when no
    /// package found has that export. What an edit that refers to an
    /// object the package does not import yet needs to import it.
    pub fn object_class(&self, object_path: &str, engine: EngineVersion) -> Result<Option<String>> {
        let Some((package_name, _)) = object_path.split_once('.') else {
            return Ok(None);
        };
        let Some(files) = self.find(package_name, engine, package_name)? else {
            return Ok(None);
        };
        let package =
            LegacyPackage::read(&files.header, Some(engine)).map_err(|e| e.in_file(&files.path))?;
        for index in 0..package.exports.len() {
            if package
                .export_path(index, Some(package_name))?
                .eq_ignore_ascii_case(object_path)
            {
                return super::document::class_path(&package, index, package_name).map(Some);
            }
        }
        Ok(None)
    }

    /// Finds package `name` (read with `engine`); `own_name`: the name of
    /// the package being read (which content folder is "beside").
    fn find(
        &self,
        name: &str,
        engine: EngineVersion,
        own_name: &str,
    ) -> Result<Option<PackageFiles>> {
        let beside = self.beside.as_deref().map(|p| search_root(p, own_name));
        for folder in beside.iter().chain(&self.folders) {
            if let Some(files) = self.find_in_folder(folder, name, engine)? {
                return Ok(Some(files));
            }
        }
        match self.game {
            Some(game) => game.find_package(name),
            None => Ok(None),
        }
    }

    fn find_in_folder(
        &self,
        folder: &Path,
        name: &str,
        engine: EngineVersion,
    ) -> Result<Option<PackageFiles>> {
        let listed = {
            let mut listed = self.listed.borrow_mut();
            listed
                .entry(folder.to_path_buf())
                .or_insert_with(|| Rc::new(list_folder(folder)))
                .clone()
        };
        let leaf = name.rsplit('/').next().unwrap_or(name).to_ascii_lowercase();
        for path in listed.get(&leaf).into_iter().flatten() {
            // A file that does not read as a package of this engine is not it.
            let Ok((header, _)) = PackageFiles::load_header_only(path) else {
                continue;
            };
            let Ok(package) = LegacyPackage::read(&header.header, Some(engine)) else {
                continue;
            };
            let named = match package.package_name() {
                Some(stored) => stored.eq_ignore_ascii_case(name),
                None => path_spells(path.strip_prefix(folder).unwrap_or(path), name),
            };
            if named {
                return PackageFiles::load(path).map(Some);
            }
        }
        Ok(None)
    }
}

/// The folder searched for packages beside the one at `path` named
/// `own_name`: the folder its name's folders lead up to (a `Content`
/// folder's parent, so that plugins' content is searched too), or its own
/// folder when its folders do not spell its name.
fn search_root(path: &Path, own_name: &str) -> PathBuf {
    let mut dir = path.parent().unwrap_or(Path::new("")).to_path_buf();
    let parts: Vec<&str> = own_name.trim_start_matches('/').split('/').collect();
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned());
    let spelled = parts.len() >= 2
        && stem
            .as_deref()
            .is_some_and(|s| s.eq_ignore_ascii_case(parts[parts.len() - 1]));
    if !spelled {
        return dir;
    }
    // The folders below the mount point, innermost first.
    for part in parts[1..parts.len() - 1].iter().rev() {
        let matches = dir
            .file_name()
            .is_some_and(|f| f.to_string_lossy().eq_ignore_ascii_case(part));
        match dir.parent() {
            Some(parent) if matches => dir = parent.to_path_buf(),
            _ => return dir,
        }
    }
    if dir
        .file_name()
        .is_some_and(|f| f.eq_ignore_ascii_case("Content"))
    {
        if let Some(project) = dir.parent() {
            return project.to_path_buf();
        }
    }
    dir
}

/// Whether `rel` (a file's path below a searched folder) ends with the
/// package `name`'s path below its mount point (`/Game/Cars/X` → `Cars/X`).
fn path_spells(rel: &Path, name: &str) -> bool {
    let wanted: Vec<&str> = name
        .trim_start_matches('/')
        .split('/')
        .skip(1)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    let Some(stem) = rel.file_stem() else {
        return false;
    };
    let have = std::iter::once(stem.to_string_lossy().into_owned()).chain(
        rel.parent()
            .into_iter()
            .flat_map(|p| p.iter().rev())
            .map(|c| c.to_string_lossy().into_owned()),
    );
    let have: Vec<String> = have.take(wanted.len()).collect();
    have.len() == wanted.len()
        && have
            .iter()
            .zip(&wanted)
            .all(|(h, w)| h.eq_ignore_ascii_case(w))
}

/// The `.uasset`/`.umap` files below `folder`, by lower-case stem (links
/// not followed; at most [`MAX_SCHEMA_FOLDER_FILES`] entries looked at). A
/// folder that cannot be listed has none.
fn list_folder(folder: &Path) -> FolderFiles {
    let mut out: FolderFiles = HashMap::new();
    let walk = walkdir::WalkDir::new(folder)
        .max_depth(32)
        .sort_by_file_name()
        .into_iter()
        .take(MAX_SCHEMA_FOLDER_FILES);
    for entry in walk.flatten() {
        if !entry.file_type().is_file() {
            continue;
        }
        let path = entry.path();
        let is_package = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("uasset") || e.eq_ignore_ascii_case("umap"));
        if let (true, Some(stem)) = (is_package, path.file_stem()) {
            out.entry(stem.to_string_lossy().to_ascii_lowercase())
                .or_default()
                .push(path.to_path_buf());
        }
    }
    out
}

/// A package read for its schemas.
struct Loaded {
    files: PackageFiles,
    package: LegacyPackage,
    name: String,
}

/// Collects the schemas a package's data needs from content.
struct Resolver<'r, 's> {
    sources: &'r SchemaSources<'s>,
    mappings: &'r Mappings,
    engine: EngineVersion,
    /// The package being read (for "beside").
    own_name: &'r str,
    found: Vec<StructSchema>,
    /// Packages looked for, by lower-case name (`None`: not found).
    loaded: HashMap<String, Option<Rc<Loaded>>>,
    /// (lower-case schema name, lower-case package name) visited.
    visited: HashSet<(String, String)>,
}

/// The schemas of the package's own classes and of the classes and
/// structs its data needs from other packages found through `sources` (see
/// the module docs), to lay over `mappings` ([`Mappings::view`]); `None`
/// when there are none to add.
/// `own_name` names the package (a 4.x cook stores no name).
pub fn mappings_with_content_schemas(
    files: &PackageFiles,
    package: &LegacyPackage,
    own_name: &str,
    mappings: &Mappings,
    sources: &SchemaSources,
) -> Option<ExtraStructs> {
    let mut resolver = Resolver {
        sources,
        mappings,
        engine: package.engine,
        own_name,
        found: package_class_schemas(files, package, mappings),
        loaded: HashMap::new(),
        visited: HashSet::new(),
    };
    // What the package's own classes need, then the classes of its
    // exports that other packages define.
    let mut needs: Vec<String> = resolver.found.iter().flat_map(needs_of).collect();
    for export in &package.exports {
        if let ResolvedIndex::Import(i) = export.class_index.resolve() {
            if let Some(import) = package.imports.get(i) {
                if let Ok(name) = package.name(import.object_name) {
                    needs.push(name);
                }
            }
        }
    }
    for name in needs {
        resolver.need(&name, files, package, own_name, 0);
    }
    if resolver.found.is_empty() {
        return None;
    }
    Some(ExtraStructs::new(resolver.found))
}

/// The structs a schema needs: its super struct and the structs its
/// properties hold.
fn needs_of(schema: &StructSchema) -> Vec<String> {
    fn structs(ty: &PropertyType, out: &mut Vec<String>) {
        match ty {
            PropertyType::Struct(name) => out.push(name.clone()),
            PropertyType::Array(t) | PropertyType::Set(t) | PropertyType::Optional(t) => {
                structs(t, out)
            }
            PropertyType::Map(k, v) => {
                structs(k, out);
                structs(v, out);
            }
            _ => {}
        }
    }
    let mut out: Vec<String> = schema.super_name.iter().cloned().collect();
    for p in &schema.properties {
        structs(&p.ty, &mut out);
    }
    out
}

impl Resolver<'_, '_> {
    fn known(&self, name: &str) -> bool {
        self.mappings.struct_schema(name).is_some()
            || self.found.iter().any(|s| s.name.eq_ignore_ascii_case(name))
    }

    /// Resolves schema `name` as package `package` (named `package_name`)
    /// refers to it: defined by one of its exports, or imported from a
    /// content package.
    fn need(
        &mut self,
        name: &str,
        files: &PackageFiles,
        package: &LegacyPackage,
        package_name: &str,
        depth: usize,
    ) {
        if self.known(name)
            || !self
                .visited
                .insert((name.to_ascii_lowercase(), package_name.to_ascii_lowercase()))
        {
            return;
        }
        if depth >= MAX_SCHEMA_DEPTH {
            self.sources.note_missing(
                name,
                package_name,
                format!("schemas nest more than {MAX_SCHEMA_DEPTH} packages deep"),
            );
            return;
        }
        let exported = package.exports.iter().position(|e| {
            package
                .name(e.object_name)
                .is_ok_and(|n| n.eq_ignore_ascii_case(name))
        });
        if let Some(index) = exported {
            let cx = PackageContext::of_named(package, package_name);
            match class_schema(files, package, &cx, self.mappings, index, name) {
                Ok(schema) => {
                    let needs = needs_of(&schema);
                    self.found.push(schema);
                    for n in needs {
                        self.need(&n, files, package, package_name, depth + 1);
                    }
                }
                Err(e) => self.sources.note_missing(
                    name,
                    package_name,
                    format!("its record does not read: {}", e.summary()),
                ),
            }
            return;
        }
        // Imported from a content package (a /Script one's schemas are the mappings').
        let defining = (0..package.imports.len()).find_map(|i| {
            let import = &package.imports[i];
            let named = package
                .name(import.object_name)
                .is_ok_and(|n| n.eq_ignore_ascii_case(name));
            let from = package.import_package_name(i).ok()?;
            (named && !from.starts_with("/Script/") && !from.eq_ignore_ascii_case(package_name))
                .then_some(from)
        });
        let Some(defining) = defining else {
            return;
        };
        let Some(loaded) = self.load(name, &defining) else {
            return;
        };
        self.need(
            name,
            &loaded.files,
            &loaded.package,
            &loaded.name,
            depth + 1,
        );
    }

    /// Package `package` (where schema `name` is defined), read once.
    fn load(&mut self, name: &str, package: &str) -> Option<Rc<Loaded>> {
        let key = package.to_ascii_lowercase();
        if let Some(loaded) = self.loaded.get(&key) {
            return loaded.clone();
        }
        if self.loaded.len() >= MAX_SCHEMA_PACKAGES {
            self.sources.note_missing(
                name,
                package,
                format!("more than {MAX_SCHEMA_PACKAGES} packages were read for schemas"),
            );
            return None;
        }
        let found = self
            .sources
            .find(package, self.engine, self.own_name)
            .and_then(|files| {
                files
                    .map(|files| {
                        let package = files.read_package(Some(self.engine))?;
                        files.check_exports(&package)?;
                        Ok((files, package))
                    })
                    .transpose()
            });
        let loaded = match found {
            Ok(Some((files, p))) => Some(Rc::new(Loaded {
                name: p
                    .package_name()
                    .map_or_else(|| package.to_string(), str::to_string),
                files,
                package: p,
            })),
            Ok(None) => {
                self.sources.note_missing(
                    name,
                    package,
                    format!(
                        "the package that defines it was not found ({})",
                        self.sources.describe()
                    ),
                );
                None
            }
            Err(e) => {
                self.sources.note_missing(
                    name,
                    package,
                    format!("the package that defines it does not read: {}", e.summary()),
                );
                None
            }
        };
        self.loaded.insert(key, loaded.clone());
        loaded
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_search_root_is_the_folder_the_name_leads_up_to() {
        let p = Path::new("/m/Proj/Content/Cars/Models/Atlas/Atlas_6x4_Semi.uasset");
        assert_eq!(
            search_root(p, "/Game/Cars/Models/Atlas/Atlas_6x4_Semi"),
            Path::new("/m/Proj")
        );
        let flat = Path::new("/c/MotorTown/Atlas_6x4_Semi.uasset");
        assert_eq!(
            search_root(flat, "/Game/Cars/Models/Atlas/Atlas_6x4_Semi"),
            Path::new("/c/MotorTown")
        );
        let plugin = Path::new("/m/Plug/Content/X/Y.uasset");
        assert_eq!(search_root(plugin, "/Plug/X/Y"), Path::new("/m/Plug"));
    }

    #[test]
    fn a_nameless_package_is_taken_when_its_path_spells_the_name() {
        assert!(path_spells(Path::new("Cars/X.uasset"), "/Game/Cars/X"));
        assert!(path_spells(
            Path::new("Content/Cars/X.uasset"),
            "/Game/Cars/X"
        ));
        assert!(!path_spells(Path::new("Other/X.uasset"), "/Game/Cars/X"));
        assert!(!path_spells(Path::new("X.uasset"), "/Game/Cars/X"));
    }
}
