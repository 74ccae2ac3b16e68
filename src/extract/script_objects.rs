//! The game's script objects: every native object (`/Script/...`) a Zen
//! package can import, keyed by the `FPackageObjectIndex` its import map
//! stores for it (the object path hash with the script-import bits).
//!
//! Three sources give the same table:
//! - UE5: the ScriptObjects chunk of `global.utoc` — a name batch, then an
//!   `i32` count and one 32-byte `FScriptObjectEntry` per object (object
//!   name as `FMappedName` into that batch, global index, outer index, CDO
//!   class index). Checked on `retoc/UE5.3/ScriptObjects.bin`: 30,977
//!   entries that end exactly at the end of the chunk.
//! - UE4: the LoaderInitialLoadMeta chunk (same count + entries) with the
//!   global name map in LoaderGlobalNames / LoaderGlobalNameHashes (the UE4
//!   split name form). Checked on `retoc/UE4.27/Loader*_1.bin`.
//! - The `/Script/` imports of legacy packages ([`ScriptObjects::add_legacy_package`]):
//!   the engine's ids are hashes of the paths, so the table can be rebuilt
//!   from any packages that import the objects. These imports also state
//!   each object's class, which the engine's chunk does not carry.

use std::collections::{BTreeMap, BTreeSet};

use crate::binary::Reader;
use crate::error::{Context, Error, Result};
use crate::hash::object_path_hash;
use crate::legacy::{FName, LegacyPackage, NameEntry, ResolvedIndex};
use crate::names::BatchName;
use crate::zen::names::{read_name_batch, read_split_names};
use crate::zen::PackageObjectIndex;

/// One script object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptObject {
    /// The object's name without its number, and the FName number (0: none).
    pub(crate) name: String,
    pub(crate) number: u32,
    /// The outer object (`None` for a script package such as `/Script/Engine`).
    pub outer: Option<PackageObjectIndex>,
    /// For a class default object: its class.
    pub cdo_class: Option<PackageObjectIndex>,
    /// The object's class as (class package, class name), when the source
    /// says it (legacy imports do; the engine's chunk does not).
    pub(crate) class: Option<(String, String)>,
}

impl ScriptObject {
    /// The name with its number suffix (`Name_2` for number 3).
    pub(crate) fn full_name(&self) -> String {
        crate::names::with_number(&self.name, self.number).into_owned()
    }
}

/// The table of script objects, by global index.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScriptObjects {
    objects: BTreeMap<PackageObjectIndex, ScriptObject>,
    /// Objects some class default object names as its class.
    classes: BTreeSet<PackageObjectIndex>,
}

/// Size of one `FScriptObjectEntry`.
const ENTRY_SIZE: usize = 32;
/// Outer chains longer than this are treated as loops.
const MAX_DEPTH: usize = 64;

impl ScriptObjects {
    /// An empty table.
    pub fn new() -> Self {
        ScriptObjects::default()
    }

    /// Parses the UE5 ScriptObjects chunk.
    pub fn read_ue5(chunk: &[u8]) -> Result<Self> {
        let mut r = Reader::new(chunk);
        let names = read_name_batch(&mut r).context("script objects > name batch")?;
        let table = Self::read_entries(&mut r, &names).context("script objects")?;
        if !r.at_end() {
            return Err(r
                .error(format!("{} bytes left after the entries", r.remaining()))
                .within("script objects"));
        }
        Ok(table)
    }

    /// Parses the UE4 initial load meta chunk, naming its objects from the
    /// global name map (the LoaderGlobalNames and LoaderGlobalNameHashes chunks).
    pub fn read_ue4(initial_load_meta: &[u8], names: &[u8], name_hashes: &[u8]) -> Result<Self> {
        let mut joined = Vec::with_capacity(names.len() + name_hashes.len());
        joined.extend_from_slice(names);
        joined.extend_from_slice(name_hashes);
        let mut r = Reader::new(&joined);
        let names = read_split_names(&mut r, 0, names.len(), names.len(), name_hashes.len())
            .context("global name map")?;
        let mut r = Reader::new(initial_load_meta);
        // The script objects come first; the rest of the chunk (initial
        // load packages) is not needed here.
        Self::read_entries(&mut r, &names).context("initial load meta")
    }

    /// Writes the table as a UE5 ScriptObjects chunk (names in first-use
    /// order, entries by global index). Classes from legacy imports are not
    /// part of the chunk.
    pub fn write_ue5(&self) -> Vec<u8> {
        // The chunk says "X is a class" by a default object naming X; add
        // one for classes known otherwise (as the engine has for each).
        let mut objects = self.objects.clone();
        let has_default: BTreeSet<PackageObjectIndex> =
            self.objects.values().filter_map(|o| o.cdo_class).collect();
        for class in self.classes.difference(&has_default) {
            let (Some(object), Some(path)) = (self.get(*class), self.path(*class)) else {
                continue;
            };
            let Some((module, _)) = path.split_once('.') else {
                continue;
            };
            let name = format!("Default__{}", object.full_name());
            let (base, number) = crate::names::split_number(&name);
            objects
                .entry(script_index(&[module.to_string(), name.clone()]))
                .or_insert(ScriptObject {
                    name: base.to_string(),
                    number,
                    outer: object.outer,
                    cdo_class: Some(*class),
                    class: None,
                });
        }
        let mut names: Vec<BatchName> = Vec::new();
        let mut index: BTreeMap<&str, u32> = BTreeMap::new();
        for object in objects.values() {
            index.entry(object.name.as_str()).or_insert_with(|| {
                names.push(BatchName::new(object.name.clone()));
                names.len() as u32 - 1
            });
        }
        let mut w = crate::binary::Writer::new();
        crate::zen::names::write_name_batch(&mut w, &names);
        w.i32(objects.len() as i32);
        let null = PackageObjectIndex::NULL;
        for (global, object) in &objects {
            w.u32(index[object.name.as_str()]);
            w.u32(object.number);
            w.u64(global.0);
            w.u64(object.outer.unwrap_or(null).0);
            w.u64(object.cdo_class.unwrap_or(null).0);
        }
        w.into_inner()
    }

    fn read_entries(r: &mut Reader, names: &[BatchName]) -> Result<Self> {
        let count = r.count_i32(ENTRY_SIZE).context("script object count")?;
        let mut table = ScriptObjects::new();
        for i in 0..count {
            let at = r.pos();
            let index = r.u32()?;
            let number = r.u32()?;
            let global = PackageObjectIndex(r.u64()?);
            let outer = PackageObjectIndex(r.u64()?);
            let cdo_class = PackageObjectIndex(r.u64()?);
            let name = names
                .get((index & ((1 << 30) - 1)) as usize)
                .ok_or_else(|| {
                    r.error_at(
                        at,
                        format!(
                            "script object {i} names entry {} of a {}-name map",
                            index & ((1 << 30) - 1),
                            names.len()
                        ),
                    )
                })?
                .text
                .clone();
            if global.kind() != crate::zen::ObjectIndexKind::ScriptImport {
                return Err(r.error_at(
                    at + 8,
                    format!(
                        "script object {i} (`{name}`) has global index {}, not a script import",
                        global.describe()
                    ),
                ));
            }
            table.insert(
                global,
                ScriptObject {
                    name,
                    number,
                    outer: (!outer.is_null()).then_some(outer),
                    cdo_class: (!cdo_class.is_null()).then_some(cdo_class),
                    class: None,
                },
            );
        }
        Ok(table)
    }

    /// Adds the `/Script/` imports of a legacy package: each object with its
    /// outer, its class and (for a class default object) the class it is the
    /// default of. An object already in the table keeps what it has, but
    /// gains a class it did not know.
    pub fn add_legacy_package(&mut self, package: &LegacyPackage) -> Result<()> {
        self.add_facts(&package.names, import_facts(package)?)
    }

    /// Adds what [`import_facts`] found in one package (whose name map is
    /// `names`), in import order.
    fn add_facts(&mut self, names: &[NameEntry], facts: Vec<ImportFacts>) -> Result<()> {
        for fact in facts {
            if let Some(native) = &fact.native_class {
                self.add_native_class(names, native)?;
            }
            let Some(object) = fact.object else {
                continue;
            };
            // The engine's chunk has a default object for every native
            // class; an import that is a class stands for that evidence.
            if object.is_class {
                self.classes.insert(object.global);
            }
            match self.objects.get_mut(&object.global) {
                Some(known) => {
                    if known.class.is_none() {
                        known.class = Some(object.class_text(names)?);
                    }
                    if known.cdo_class.is_none() {
                        if let Some(c) = object.cdo_class {
                            known.cdo_class = Some(c);
                            self.classes.insert(c);
                        }
                    }
                }
                None => self.insert(object.global, object.entry(names)?),
            }
        }
        Ok(())
    }

    /// The script objects the cooked legacy packages under `dir`
    /// (`.uasset`/`.umap` with their `.uexp`, cooked for `engine`) import.
    /// Files that are no legacy package are passed over; a package that
    /// does not read is an error naming it. Headers are read and parsed on
    /// the thread pool, a group at a time; what they give is added in path
    /// order, so the table is the one reading them one by one gives.
    pub fn from_legacy_folder(dir: &std::path::Path, engine: crate::EngineVersion) -> Result<Self> {
        let headers = walkdir::WalkDir::new(dir)
            .sort_by_file_name()
            .into_iter()
            .filter_map(|entry| {
                let entry = match entry {
                    Ok(entry) => entry,
                    Err(e) => {
                        return Some(Err(Error::io(dir, std::io::Error::other(e.to_string()))))
                    }
                };
                let is_header = entry.path().extension().is_some_and(|x| {
                    x.eq_ignore_ascii_case("uasset") || x.eq_ignore_ascii_case("umap")
                });
                (is_header && entry.file_type().is_file()).then(|| Ok(entry.into_path()))
            });
        /// Headers read and parsed together (their facts are held until added).
        const GROUP: usize = 64;
        Self::from_legacy_files(headers, engine, GROUP)
    }

    /// The table of the legacy packages `paths` (headers; other files are
    /// passed over), read `group` at a time on the pool and added in order:
    /// while a group is read, the one before is added and the paths of the
    /// next are listed. The first error in path order is the one returned.
    fn from_legacy_files(
        mut paths: impl Iterator<Item = Result<std::path::PathBuf>> + Send,
        engine: crate::EngineVersion,
        group: usize,
    ) -> Result<Self> {
        use rayon::prelude::*;
        let mut table = ScriptObjects::new();
        type Found = Result<Option<(Vec<NameEntry>, Vec<ImportFacts>)>>;
        let facts_of = |path: &std::path::PathBuf| -> Found {
            let head = std::fs::read(path).map_err(|e| Error::io(path, e))?;
            if !head.starts_with(&crate::legacy::PACKAGE_FILE_TAG.to_le_bytes()) {
                return Ok(None);
            }
            let package =
                LegacyPackage::read_imports(&head, Some(engine)).map_err(|e| e.in_file(path))?;
            let facts = import_facts(&package).map_err(|e| e.in_file(path))?;
            Ok(Some((package.names, facts)))
        };
        let add = |table: &mut ScriptObjects,
                   (group, found): (Vec<std::path::PathBuf>, Vec<Found>)| {
            for (path, found) in group.iter().zip(found) {
                if let Some((names, facts)) = found? {
                    table
                        .add_facts(&names, facts)
                        .map_err(|e| e.in_file(path))?;
                }
            }
            Ok::<(), Error>(())
        };
        let group = group.max(1);
        let list = |paths: &mut dyn Iterator<Item = Result<std::path::PathBuf>>| {
            paths.take(group).collect::<Result<Vec<_>>>()
        };
        let mut found = (Vec::new(), Vec::new());
        let mut listed = list(&mut paths);
        loop {
            let current = match listed {
                Ok(current) if current.is_empty() => break,
                Ok(current) => current,
                Err(e) => {
                    // The groups before the listing's error come first.
                    add(&mut table, found)?;
                    return Err(e);
                }
            };
            let ((next, added), next_listed) = rayon::join(
                || {
                    rayon::join(
                        || current.par_iter().map(facts_of).collect(),
                        || add(&mut table, std::mem::take(&mut found)),
                    )
                },
                || list(&mut paths),
            );
            added?;
            found = (current, next);
            listed = next_listed;
        }
        add(&mut table, found)?;
        Ok(table)
    }

    /// Adds the native class `/Script/Module.Class` (and its package) unless
    /// known, its text copied out of the package's `names`.
    fn add_native_class(&mut self, names: &[NameEntry], native: &NativeClass) -> Result<()> {
        let NativeClass {
            module,
            class,
            package_index,
            class_index,
        } = native;
        let (package_index, class_index) = (*package_index, *class_index);
        if !self.objects.contains_key(&package_index) {
            self.insert(
                package_index,
                ScriptObject {
                    name: module.resolve(names)?,
                    number: 0,
                    outer: None,
                    cdo_class: None,
                    class: Some(("/Script/CoreUObject".into(), "Package".into())),
                },
            );
        }
        self.classes.insert(class_index);
        if !self.objects.contains_key(&class_index) {
            let class = class.text(names)?;
            let (base, number) = crate::names::split_number(&class);
            self.insert(
                class_index,
                ScriptObject {
                    name: base.to_string(),
                    number,
                    outer: Some(package_index),
                    cdo_class: None,
                    class: Some(("/Script/CoreUObject".into(), "Class".into())),
                },
            );
        }
        Ok(())
    }

    fn insert(&mut self, global: PackageObjectIndex, object: ScriptObject) {
        if let Some(class) = object.cdo_class {
            self.classes.insert(class);
        }
        self.objects.insert(global, object);
    }

    /// Forgets the classes legacy imports gave, keeping what the engine's
    /// chunk holds (names, outers, default objects' classes): imports are
    /// then classed by inference, as with the game's own chunk.
    pub fn forget_classes(&mut self) {
        for object in self.objects.values_mut() {
            object.class = None;
        }
    }

    pub fn len(&self) -> usize {
        self.objects.len()
    }

    pub fn is_empty(&self) -> bool {
        self.objects.is_empty()
    }

    pub fn get(&self, index: PackageObjectIndex) -> Option<&ScriptObject> {
        self.objects.get(&index)
    }

    /// Whether a class default object names this object as its class.
    pub fn is_class(&self, index: PackageObjectIndex) -> bool {
        self.classes.contains(&index)
    }

    /// The chain of objects from the script package down to `index`
    /// (package first), or `None` if an object of the chain is unknown or
    /// the chain loops.
    pub(crate) fn chain(&self, index: PackageObjectIndex) -> Option<Vec<PackageObjectIndex>> {
        let mut chain = vec![index; self.chain_len(index)?];
        for i in (0..chain.len() - 1).rev() {
            chain[i] = self.get(chain[i + 1])?.outer?;
        }
        Some(chain)
    }

    /// Whether [`chain`](Self::chain) has a chain for `index` (without making it).
    pub(crate) fn has_chain(&self, index: PackageObjectIndex) -> bool {
        self.chain_len(index).is_some()
    }

    /// The length of the chain of `index`, if it has one.
    fn chain_len(&self, index: PackageObjectIndex) -> Option<usize> {
        let mut len = 1;
        let mut current = self.get(index)?;
        while let Some(outer) = current.outer {
            if len > MAX_DEPTH {
                return None;
            }
            len += 1;
            current = self.get(outer)?;
        }
        Some(len)
    }

    /// The object's path as the engine prints it (`/Script/Engine.Actor:Sub`).
    pub fn path(&self, index: PackageObjectIndex) -> Option<String> {
        let chain = self.chain(index)?;
        let mut path = String::new();
        for (depth, i) in chain.iter().enumerate() {
            match depth {
                0 => {}
                1 => path.push('.'),
                _ => path.push(':'),
            }
            path.push_str(&self.get(*i)?.full_name());
        }
        Some(path)
    }
}

/// What one import of a legacy package says about script objects, found
/// without the table (packages are read in parallel, added in order). Names
/// stay indices into the package's name map: most imports name objects the
/// table already has, so their text is copied only when added.
struct ImportFacts {
    /// The import's class, when it is a native class.
    native_class: Option<NativeClass>,
    /// The import itself, when it is a script object.
    object: Option<ImportedObject>,
}

/// A native class `/Script/Module.Class` an import names, with the global
/// indices of its package and of itself.
struct NativeClass {
    module: FName,
    class: FName,
    package_index: PackageObjectIndex,
    class_index: PackageObjectIndex,
}

/// A `/Script/` import: its global index, name, outer, class and (for a
/// class default object) the class it is the default of.
struct ImportedObject {
    global: PackageObjectIndex,
    name: FName,
    outer: Option<PackageObjectIndex>,
    cdo_class: Option<PackageObjectIndex>,
    /// Class package and class name.
    class: (FName, FName),
    /// Whether the class is `/Script/CoreUObject.Class`.
    is_class: bool,
}

impl ImportedObject {
    /// The table's entry, its names copied out of the package's `names`.
    fn entry(&self, names: &[NameEntry]) -> Result<ScriptObject> {
        let base = names
            .get(self.name.index as usize)
            .ok_or_else(|| Error::invalid("an import's name index is out of range"))?;
        Ok(ScriptObject {
            name: base.text.clone(),
            number: self.name.number,
            outer: self.outer,
            cdo_class: self.cdo_class,
            class: Some(self.class_text(names)?),
        })
    }

    fn class_text(&self, names: &[NameEntry]) -> Result<(String, String)> {
        Ok((
            self.class.0.text(names)?.into_owned(),
            self.class.1.text(names)?.into_owned(),
        ))
    }
}

/// What each import says about script objects, in import order. A native
/// class named by several imports (every package import's class is
/// `/Script/CoreUObject.Package`) is given once: adding it again changes
/// nothing. Each path is hashed once: an import's outer is the import
/// before it in its chain, whose index is kept.
fn import_facts(package: &LegacyPackage) -> Result<Vec<ImportFacts>> {
    let names = &package.names;
    let mut facts = Vec::new();
    let mut classes_given = BTreeSet::new();
    let mut globals: Vec<Option<PackageObjectIndex>> = vec![None; package.imports.len()];
    let mut chain = Vec::new();
    let mut path = String::new();
    for (i, import) in package.imports.iter().enumerate() {
        import_chain(package, i, &mut chain)?;
        // The class an import names is a script object too (a native class).
        let class_package = import.class_package.text(names)?;
        let native_class = if class_package.starts_with("/Script/")
            && classes_given.insert((import.class_package, import.class_name))
        {
            let class_name = import.class_name.text(names)?;
            Some(NativeClass {
                module: import.class_package,
                class: import.class_name,
                package_index: script_index(&[class_package.as_ref()]),
                class_index: script_index(&[class_package.as_ref(), class_name.as_ref()]),
            })
        } else {
            None
        };
        let root = package.imports[chain[0]].object_name.text(names)?;
        if !root.starts_with("/Script/") {
            if native_class.is_some() {
                facts.push(ImportFacts {
                    native_class,
                    object: None,
                });
            }
            continue;
        }
        // The path, `/`-joined as `script_index` joins it.
        path.clear();
        let mut outer_len = 0;
        for (depth, &link) in chain.iter().enumerate() {
            if depth > 0 {
                outer_len = path.len();
                path.push('/');
            }
            path.push_str(&package.imports[link].object_name.text(names)?);
        }
        let global = PackageObjectIndex::script_import(object_path_hash(&path));
        globals[i] = Some(global);
        let outer = (chain.len() > 1).then(|| {
            globals[chain[chain.len() - 2]].unwrap_or_else(|| {
                PackageObjectIndex::script_import(object_path_hash(&path[..outer_len]))
            })
        });
        let class_name = import.class_name.text(names)?;
        let cdo_class =
            (chain.len() == 2 && path[outer_len + 1..].starts_with("Default__")).then(|| {
                // The class of a default object is `/Script/Module.Class`.
                script_index(&[class_package.as_ref(), class_name.as_ref()])
            });
        facts.push(ImportFacts {
            native_class,
            object: Some(ImportedObject {
                global,
                name: import.object_name,
                outer,
                cdo_class,
                class: (import.class_package, import.class_name),
                is_class: class_package == "/Script/CoreUObject" && class_name == "Class",
            }),
        });
    }
    Ok(facts)
}

/// The global index of a script object from its path (package first), as
/// the Zen conversion computes it.
fn script_index<S: std::borrow::Borrow<str>>(path: &[S]) -> PackageObjectIndex {
    PackageObjectIndex::script_import(object_path_hash(&path.join("/")))
}

/// The imports from the outermost one down to import `index`, into
/// `chain`; an error when an outer is missing, an export, or loops, or a
/// name's index is out of range.
fn import_chain(package: &LegacyPackage, index: usize, chain: &mut Vec<usize>) -> Result<()> {
    chain.clear();
    let mut current = index;
    loop {
        let import = package.imports.get(current).ok_or_else(|| {
            Error::invalid(format!(
                "import {index}: outer chain refers to a missing import"
            ))
        })?;
        import.object_name.text(&package.names)?;
        chain.push(current);
        if chain.len() > package.imports.len() {
            return Err(Error::invalid(format!(
                "import {index}: the outer chain loops"
            )));
        }
        match import.outer_index.resolve() {
            ResolvedIndex::Null => break,
            ResolvedIndex::Import(outer) => current = outer,
            ResolvedIndex::Export(_) => {
                return Err(Error::invalid(format!(
                    "import {index} has an export of its own package as outer"
                )))
            }
        }
    }
    chain.reverse();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_read_on_the_pool_gives_its_packages_added_one_by_one() {
        let Some(corpus) = crate::test_corpus::corpus() else {
            return;
        };
        let dir = corpus.join("uassetapi/TestManyAssets/SN2");
        let engine = crate::EngineVersion::UE5_6;
        let mut paths: Vec<_> = walkdir::WalkDir::new(&dir)
            .sort_by_file_name()
            .into_iter()
            .map(|e| e.unwrap().into_path())
            .filter(|p| p.extension().is_some_and(|x| x == "uasset" || x == "umap"))
            .collect();
        // A file that is no legacy package is passed over.
        paths.insert(3, dir.join("Content/Blueprints/BPC_WorldBlocker.uexp"));
        assert!(paths[3].is_file());
        let mut one_by_one = ScriptObjects::new();
        for path in paths
            .iter()
            .filter(|p| p.extension().is_some_and(|x| x != "uexp"))
        {
            let package = LegacyPackage::read(&std::fs::read(path).unwrap(), Some(engine)).unwrap();
            one_by_one.add_legacy_package(&package).unwrap();
        }
        assert!(
            paths.len() > 30 && one_by_one.len() > 100,
            "{}",
            one_by_one.len()
        );
        for group in [1, 5, 64] {
            let table =
                ScriptObjects::from_legacy_files(paths.iter().cloned().map(Ok), engine, group)
                    .unwrap();
            assert_eq!(table, one_by_one, "groups of {group}");
        }
        assert_eq!(
            ScriptObjects::from_legacy_folder(&dir, engine).unwrap(),
            one_by_one
        );
    }
}
