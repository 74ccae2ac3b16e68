//! A stand-in for a game's files, for the extraction tests: the legacy
//! packages of a corpus folder converted to Zen with zenpak's converter,
//! the script objects their `/Script/` imports name (as the game's
//! ScriptObjects chunk would), and, for packages they import that the
//! corpus does not have, minimal Zen packages holding just the imported
//! objects (named, nested and classed as the importing packages say) — what
//! the game's own containers would provide.
#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use zenpak::extract::{PackageHeaders, ScriptObjects};
use zenpak::legacy::{
    LegacyPackage, NameEntry, ObjectExport, ObjectImport, PackageFiles, PackageIndex, ResolvedIndex,
};
use zenpak::zen::{convert, ConvertedPackage};
use zenpak::EngineVersion;

/// UE4 cooks do not write the package name; MANIFEST.md gives the one we need.
pub fn fallback_name(path: &Path) -> &'static str {
    if path.ends_with("retoc/UE4.27/TestModUI.uasset") {
        "/Game/_AssemblyStorm/TestMod/TestModUI"
    } else {
        ""
    }
}

/// One corpus package and its Zen conversion.
pub struct GamePackage {
    pub path: PathBuf,
    pub files: PackageFiles,
    pub legacy: LegacyPackage,
    pub converted: ConvertedPackage,
}

/// The stand-in game.
pub struct Game {
    pub engine: EngineVersion,
    pub packages: Vec<GamePackage>,
    pub script_objects: ScriptObjects,
    pub headers: PackageHeaders,
    /// The packages made up from imports: (name, Zen package chunk, imported package ids).
    pub stubs: Vec<(String, Vec<u8>, Vec<u64>)>,
}

/// An object another package imports: its names from the package down, and its class.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct ImportedObject {
    /// Only the class is known to exist, from another import naming it.
    guessed: bool,
    chain: Vec<String>,
    class_package: String,
    class_name: String,
}

fn import_chain(p: &LegacyPackage, index: usize) -> Vec<String> {
    let mut chain = Vec::new();
    let mut current = index;
    loop {
        let import = &p.imports[current];
        chain.push(p.name(import.object_name).unwrap());
        match import.outer_index.resolve() {
            ResolvedIndex::Import(o) => current = o,
            _ => break,
        }
    }
    chain.reverse();
    chain
}

impl Game {
    /// Converts `paths` (legacy packages of `engine`) and builds the rest.
    pub fn load(paths: &[PathBuf], engine: EngineVersion) -> Game {
        let mut packages = Vec::new();
        let mut script_objects = ScriptObjects::new();
        for path in paths {
            let files = PackageFiles::load(path).unwrap();
            let legacy = files.read_package(Some(engine)).unwrap();
            let converted = convert(&files, &legacy, engine, fallback_name(path))
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            script_objects.add_legacy_package(&legacy).unwrap();
            packages.push(GamePackage {
                path: path.clone(),
                files,
                legacy,
                converted,
            });
        }
        let mut headers = PackageHeaders::new(engine);
        let present: BTreeSet<String> = packages
            .iter()
            .map(|p| p.converted.package_name.clone())
            .collect();
        for p in &packages {
            headers
                .insert(
                    &p.converted.package_bytes,
                    p.converted.store_entry.imported_packages.clone(),
                )
                .unwrap();
        }
        // Objects the packages import from packages the corpus lacks.
        let mut wanted: BTreeMap<String, BTreeSet<ImportedObject>> = BTreeMap::new();
        for p in &packages {
            let l = &p.legacy;
            for i in 0..l.imports.len() {
                let chain = import_chain(l, i);
                if chain[0].starts_with("/Script/")
                    || present.contains(&chain[0])
                    || chain.len() < 2
                {
                    continue;
                }
                let object = ImportedObject {
                    guessed: false,
                    chain,
                    class_package: l.name(l.imports[i].class_package).unwrap(),
                    class_name: l.name(l.imports[i].class_name).unwrap(),
                };
                let class_home = object.class_package.clone();
                if !class_home.starts_with("/Script/") && !present.contains(&class_home) {
                    wanted
                        .entry(class_home.clone())
                        .or_default()
                        .insert(ImportedObject {
                            guessed: true,
                            chain: vec![class_home, object.class_name.clone()],
                            class_package: "/Script/Engine".into(),
                            class_name: "BlueprintGeneratedClass".into(),
                        });
                }
                wanted
                    .entry(object.chain[0].clone())
                    .or_default()
                    .insert(object);
            }
        }
        let mut stubs = Vec::new();
        for (name, objects) in &wanted {
            let (bytes, imported) = stub_package(name, objects, engine);
            headers.insert(&bytes, imported.clone()).unwrap();
            stubs.push((name.clone(), bytes, imported));
        }
        Game {
            engine,
            packages,
            script_objects,
            headers,
            stubs,
        }
    }
}

/// Name map of a package being built.
#[derive(Default)]
struct Names(Vec<String>);

impl Names {
    fn fname(&mut self, text: &str) -> zenpak::legacy::FName {
        let (base, number) = zenpak::names::split_number(text);
        let index = match self.0.iter().position(|n| n == base) {
            Some(i) => i,
            None => {
                self.0.push(base.to_string());
                self.0.len() - 1
            }
        };
        zenpak::legacy::FName::new(index as u32, number)
    }
}

/// (object name, outer import, class package, class name)
type StubImport = (String, Option<usize>, String, String);

fn stub_import(
    imports: &mut Vec<StubImport>,
    object: &str,
    outer: Option<usize>,
    cp: &str,
    cn: &str,
) -> usize {
    match imports.iter().position(|i| i.0 == object && i.1 == outer) {
        Some(i) => i,
        None => {
            imports.push((object.to_string(), outer, cp.to_string(), cn.to_string()));
            imports.len() - 1
        }
    }
}

/// A minimal cooked package `name` holding `objects` (and their outers),
/// converted to Zen. Returns the package chunk and its imported package ids.
fn stub_package(
    name: &str,
    objects: &BTreeSet<ImportedObject>,
    engine: EngineVersion,
) -> (Vec<u8>, Vec<u64>) {
    // Every object and outer, by path below the package, with its class.
    let mut all: BTreeMap<Vec<String>, Option<(String, String)>> = BTreeMap::new();
    for o in objects {
        for depth in 2..=o.chain.len() {
            let entry = all.entry(o.chain[1..depth].to_vec()).or_default();
            if depth == o.chain.len() && entry.is_none() {
                *entry = Some((o.class_package.clone(), o.class_name.clone()));
            }
        }
    }
    let own_classes: Vec<String> = all
        .values()
        .flatten()
        .filter(|(cp, _)| cp == name)
        .map(|(_, cn)| cn.clone())
        .collect();
    for cn in own_classes {
        all.entry(vec![cn]).or_insert(Some((
            "/Script/Engine".into(),
            "BlueprintGeneratedClass".into(),
        )));
    }
    let export_of: BTreeMap<Vec<String>, usize> = all
        .keys()
        .enumerate()
        .map(|(i, p)| (p.clone(), i))
        .collect();
    let mut imports: Vec<StubImport> = Vec::new();
    let mut exports = Vec::new();
    for (path, class) in &all {
        let (cp, cn) = class
            .clone()
            .unwrap_or(("/Script/CoreUObject".into(), "Object".into()));
        let class_index = if cp == name {
            PackageIndex::from_export(export_of[&vec![cn.clone()]])
        } else {
            let package = stub_import(&mut imports, &cp, None, "/Script/CoreUObject", "Package");
            let (ccp, ccn) = if cp.starts_with("/Script/") {
                ("/Script/CoreUObject", "Class")
            } else {
                ("/Script/Engine", "BlueprintGeneratedClass")
            };
            PackageIndex::from_import(stub_import(&mut imports, &cn, Some(package), ccp, ccn))
        };
        let outer = if path.len() > 1 {
            PackageIndex::from_export(export_of[&path[..path.len() - 1].to_vec()])
        } else {
            PackageIndex::NULL
        };
        let leaf = path.last().unwrap().clone();
        let flags = if leaf.starts_with("Default__") {
            0x31
        } else {
            0x9
        };
        exports.push((class_index, outer, leaf, flags));
    }
    let v5 = engine.is_ue5();
    let mut names = Names::default();
    let mut package = LegacyPackage::new_cooked(engine, Some(name));
    package.imports = imports
        .iter()
        .map(|(object, outer, cp, cn)| ObjectImport {
            class_package: names.fname(cp),
            class_name: names.fname(cn),
            outer_index: outer.map_or(PackageIndex::NULL, PackageIndex::from_import),
            object_name: names.fname(object),
            package_name: None,
            import_optional: v5.then_some(false),
        })
        .collect();
    package.exports = exports
        .iter()
        .map(|(class, outer, leaf, flags)| ObjectExport {
            class_index: *class,
            super_index: PackageIndex::NULL,
            template_index: PackageIndex::NULL,
            outer_index: *outer,
            object_name: names.fname(leaf),
            object_flags: *flags,
            serial_size: 0,
            serial_offset: 0,
            forced_export: false,
            not_for_client: false,
            not_for_server: false,
            package_guid: (!v5).then_some([0; 16]),
            is_inherited_instance: v5.then_some(false),
            package_flags: 0,
            not_always_loaded_for_editor_game: true,
            is_asset: false,
            generate_public_hash: v5.then_some(false),
            first_export_dependency: -1,
            serialization_before_serialization_dependencies: 0,
            create_before_serialization_dependencies: 0,
            serialization_before_create_dependencies: 0,
            create_before_create_dependencies: 0,
            script_serialization_start_offset: None,
            script_serialization_end_offset: None,
        })
        .collect();
    names.fname(name);
    package.names = names.0.iter().map(|n| NameEntry::new(n.clone())).collect();
    package.summary.names_referenced_from_export_data_count = v5.then_some(0);
    let data = vec![Vec::new(); package.exports.len()];
    let (header, uexp) = package.write_cooked(&data).unwrap();
    let files = PackageFiles {
        path: PathBuf::from(format!("{name}.uasset")),
        header,
        uexp_path: PathBuf::from(format!("{name}.uexp")),
        uexp,
        bulk: Vec::new(),
    };
    let read = files.read_package(Some(engine)).unwrap();
    let converted =
        convert(&files, &read, engine, name).unwrap_or_else(|e| panic!("stub {name}: {e}"));
    (
        converted.package_bytes,
        converted.store_entry.imported_packages,
    )
}

/// The corpus's legacy packages grouped by folder (`engines.tsv` rows),
/// each with its engine.
pub fn corpus_folders(corpus: &Path) -> Vec<(String, EngineVersion, Vec<PathBuf>)> {
    let table = std::fs::read_to_string(corpus.join("engines.tsv")).unwrap();
    let mut out = Vec::new();
    for line in table.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let mut parts = line.split('\t');
        let folder = parts.next().unwrap().to_string();
        let engine: EngineVersion = parts.next().unwrap().trim().parse().unwrap();
        let paths: Vec<PathBuf> = super::common::legacy_packages(corpus)
            .into_iter()
            .filter(|(p, e)| *e == engine && p.starts_with(corpus.join(&folder)))
            .map(|(p, _)| p)
            .collect();
        if !paths.is_empty() {
            out.push((folder, engine, paths));
        }
    }
    out
}
