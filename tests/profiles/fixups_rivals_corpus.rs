//! The marvel-rivals profile changes nothing in a package that holds none of
//! the structures it edits (every corpus package but the meshes and string
//! tables), with and without the package folder's mappings; every StaticMesh
//! of the corpus (5.1, 5.4, 5.5, 5.6) gets exactly its 64 bytes, every
//! StringTable (SN2, 5.6) 4 bytes per entry.

use crate::fixups_support;

use std::collections::BTreeMap;

use fixups_support::common;
use zenpak::fixups::marvel_rivals::is_skeletal_mesh;
use zenpak::fixups::Profile;
use zenpak::legacy::{LegacyPackage, PackageFiles, ResolvedIndex};
use zenpak::mappings::Mappings;

fn class_of(package: &LegacyPackage, index: usize) -> String {
    match package.exports[index].class_index.resolve() {
        ResolvedIndex::Import(i) => package.import_path(i).unwrap_or_default(),
        _ => String::new(),
    }
}

#[test]
fn only_the_targets_change() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let mut cache = BTreeMap::new();
    let (mut untouched, mut statics, mut tables) = (0, 0, 0);
    let mut skeletal = Vec::new();
    for (path, engine) in common::legacy_packages(&corpus) {
        let files = PackageFiles::load(&path).unwrap();
        let package = files.read_package(Some(engine)).unwrap();
        let static_meshes: Vec<usize> = (0..package.exports.len())
            .filter(|&i| class_of(&package, i) == "/Script/Engine.StaticMesh")
            .collect();
        let has_target = !static_meshes.is_empty()
            || (0..package.exports.len()).any(|i| {
                is_skeletal_mesh(&package, i)
                    || class_of(&package, i) == "/Script/Engine.StringTable"
            });
        let usmap = common::mappings_for(&path, &mut cache);
        let maps: Vec<Option<&Mappings>> = match &usmap {
            Some(p) => vec![None, Some(&cache[p])],
            None => vec![None],
        };
        if (0..package.exports.len()).any(|i| is_skeletal_mesh(&package, i)) {
            skeletal.push(path.clone());
            continue;
        }
        for m in maps {
            let mut out = files.clone();
            let result = Profile::from_name("marvel-rivals")
                .unwrap()
                .apply(&mut out, engine, m);
            if !has_target {
                let report = result.unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                assert!(!report.changed(), "{}", path.display());
                assert_eq!(out.header, files.header, "{}", path.display());
                assert_eq!(out.uexp, files.uexp, "{}", path.display());
                untouched += 1;
                continue;
            }
            let report = result.unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            // StaticMeshes: 8 × 8 bytes each; string tables: 4 bytes per entry.
            for f in &report.exports {
                let class = class_of(&package, f.export_index);
                let each = match class.as_str() {
                    "/Script/Engine.StaticMesh" => {
                        assert_eq!(f.edits.len(), 8, "{}", path.display());
                        8
                    }
                    "/Script/Engine.StringTable" => 4,
                    other => panic!("{}: export of class {other} changed", path.display()),
                };
                assert!(f.edits.iter().all(|e| e.removed == 0 && e.inserted == each));
            }
            let meshes = report
                .exports
                .iter()
                .filter(|f| static_meshes.contains(&f.export_index))
                .count();
            assert_eq!(meshes, static_meshes.len(), "{}", path.display());
            assert_eq!(
                out.uexp.len() as u64,
                files.uexp.len() as u64 + report.inserted_bytes
            );
            statics += meshes;
            tables += report.exports.len() - meshes;
        }
    }
    eprintln!(
        "{untouched} package runs unchanged; {statics} StaticMesh and {tables} StringTable changes; SkeletalMesh packages (fixups_marvel_rivals.rs): {skeletal:?}"
    );
    assert!(tables > 0);
    assert!(untouched > 400);
    assert!(statics >= 12);
    assert_eq!(skeletal.len(), 1);
}
