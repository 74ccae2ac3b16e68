//! With its folder's mappings, the property walker finds the end of the
//! property block of every export of every package in `uassetapi/`.

use crate::common;

use std::collections::BTreeMap;

use zenpak::legacy::PackageFiles;
use zenpak::properties::{walk_package, AfterBlock, WalkOutcome};

#[test]
fn walker_finds_every_property_block_end() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let mut cache = BTreeMap::new();
    let (mut total, mut handled, mut exact_end, mut native) = (0, 0, 0, 0);
    let mut failures: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut unexpected = Vec::new();
    for (path, engine) in common::legacy_packages(&corpus)
        .into_iter()
        .filter(|(p, _)| p.starts_with(corpus.join("uassetapi")))
    {
        let usmap =
            common::mappings_for(&path, &mut cache).expect("every uassetapi folder has mappings");
        let mappings = &cache[&usmap];
        let files = PackageFiles::load(&path).unwrap();
        let package = files.read_package(Some(engine)).unwrap();
        for walk in walk_package(&files, &package, Some(mappings), false) {
            total += 1;
            match walk.outcome {
                WalkOutcome::Walked { after, .. } => {
                    handled += 1;
                    match after {
                        AfterBlock::ExportEnd => exact_end += 1,
                        AfterBlock::NativeData { .. } => native += 1,
                    }
                }
                WalkOutcome::Failed { code, error } => {
                    if code != "unsupported" {
                        unexpected.push(format!("{}: {error}", path.display()));
                    }
                    let rel = path.strip_prefix(&corpus).unwrap().display().to_string();
                    failures
                        .entry(walk.class.clone())
                        .or_default()
                        .push(format!(
                            "{rel} export {} {}: {error}",
                            walk.index, walk.name
                        ));
                }
            }
        }
    }
    eprintln!(
        "exports: {total}, handled {handled} (export ends right after: {exact_end}, native data follows: {native})"
    );
    for (class, list) in &failures {
        eprintln!("class {class}: {} failed; first: {}", list.len(), list[0]);
    }
    assert!(total > 0);
    // The only exports not walked are the ones whose layout cannot be known
    // here: structs with a native serializer whose layout zenpak does not
    // step over (28 `MovieSceneCompiledData`, 2 Niagara, 1 `FSpline`), and
    // one schema that lives in a content package the corpus lacks
    // (`Temperature_Volume_C`'s parent `UDS_Volume_Actor_C`). Blueprint
    // parents, components' classes and user-defined structs defined in a
    // package beside the one read are read from it (13 exports: 9 of
    // MotorTown, 3 of SN2, 1 of Clay).
    let skipped: usize = failures.values().map(|l| l.len()).sum();
    eprintln!("skipped (reason stated): {skipped}");
    assert!(
        unexpected.is_empty(),
        "failures other than an unknown layout: {unexpected:#?}"
    );
    assert_eq!(handled + skipped, total);
    // Pinned: a change in either count is a change in what the walker
    // can do, to be explained in ARCHITECTURE.md (section "src/properties/").
    assert_eq!(
        (handled, total),
        (1943, 1975),
        "exports walked of all uassetapi exports"
    );
    assert_eq!((exact_end, native), (1033, 910));
}
