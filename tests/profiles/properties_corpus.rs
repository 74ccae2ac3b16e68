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
    // here: schemas that live in another content package (blueprint classes
    // and user-defined structs the dumper did not load, and which this
    // package does not define), and structs with a native serializer whose
    // layout zenpak does not step over.
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
        (1930, 1975),
        "exports walked of all uassetapi exports"
    );
    assert_eq!((exact_end, native), (1028, 902));
}
