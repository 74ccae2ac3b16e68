//! 5.0–5.2 graph data by the engine's rule (issue 18), checked on the
//! corpus's UE 5.1 game (Clay, 167 packages).
//!
//! The rule (`PackageStoreOptimizer.cpp` of 5.1 and 5.2:
//! `CreateExportBundles`, `OptimizeExportBundles`, `FinalizePackage`,
//! `SerializeGraphData`): every command starts as its own bundle; the
//! container-wide optimizer orders all bundles (packages in import order,
//! each drained while it has ready bundles) and merges a package's
//! consecutive ones; arcs are added per command (its own create first for a
//! serialize) with a set per command, so a bundle's commands can add the
//! same arc more than once; internal arcs are sorted by (to, from) and
//! external ones by (to, import, command). The engine's 5.0 container
//! header in the corpus shows the result: 22,343 of 22,559 packages have
//! exactly one export bundle.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};

use zenpak::iostore::container_header::ContainerHeader;
use zenpak::legacy::PackageFiles;
use zenpak::zen::{optimize_export_bundles, ConvertedPackage, ExportCommand, ZenPackage};
use zenpak::EngineVersion;

fn clay(corpus: &std::path::Path) -> Vec<ConvertedPackage> {
    let engine = EngineVersion::UE5_1;
    common::legacy_packages(corpus)
        .into_iter()
        .filter(|(p, _)| p.starts_with(corpus.join("uassetapi/TestManyAssets/Clay")))
        .map(|(path, _)| {
            let files = PackageFiles::load(&path).unwrap();
            let legacy = files.read_package(Some(engine)).unwrap();
            zenpak::zen::convert(&files, &legacy, engine, "").unwrap()
        })
        .collect()
}

/// Each command's bundle.
fn bundle_of(package: &ZenPackage) -> BTreeMap<(u32, ExportCommand), usize> {
    let mut out = BTreeMap::new();
    for (bundle, h) in package.export_bundle_headers.iter().enumerate() {
        let first = h.first_entry_index as usize;
        for e in &package.export_bundle_entries[first..first + h.entry_count as usize] {
            out.insert((e.export_index, e.command), bundle);
        }
    }
    out
}

/// Arc order and uniqueness as `SerializeGraphData` leaves them; every
/// serialize comes after its own create, and in a later bundle only with
/// an arc from the create's bundle.
fn check_graph(c: &ConvertedPackage) {
    let p = &c.package;
    let name = &c.package_name;
    assert!(
        p.internal_arcs
            .windows(2)
            .all(|w| (w[0].to_bundle, w[0].from_bundle) <= (w[1].to_bundle, w[1].from_bundle)),
        "{name}: internal arcs not sorted"
    );
    for list in &p.external_arcs {
        let keys: Vec<_> = list
            .iter()
            .map(|a| (a.to_bundle, a.from_import, a.from_command))
            .collect();
        assert!(
            keys.windows(2).all(|w| w[0] < w[1]),
            "{name}: external arcs not sorted and unique"
        );
    }
    let bundles = bundle_of(p);
    let arcs: BTreeSet<(i32, i32)> = p
        .internal_arcs
        .iter()
        .map(|a| (a.from_bundle, a.to_bundle))
        .collect();
    for export in 0..p.exports.len() as u32 {
        let create = bundles[&(export, ExportCommand::Create)];
        let serialize = bundles[&(export, ExportCommand::Serialize)];
        assert!(create <= serialize, "{name}: export {export}");
        if create != serialize {
            assert!(
                arcs.contains(&(create as i32, serialize as i32)),
                "{name}: export {export}: no arc from its create's bundle to its serialize's"
            );
        }
    }
    let back = ZenPackage::read(&c.package_bytes, p.engine).unwrap();
    assert!(&back == p, "{name}: read-back differs");
    assert_eq!(
        c.store_entry.export_bundle_count as usize,
        p.export_bundle_headers.len()
    );
    assert_eq!(
        c.store_entry.export_bundles_size,
        c.package_bytes.len() as u64
    );
}

#[test]
fn engine_5_0_header_shows_one_bundle_per_package() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let bytes = std::fs::read(corpus.join("retoc/UE5.0/ContainerHeader_1.bin")).unwrap();
    let header = ContainerHeader::read(&bytes, None).unwrap();
    let one = header
        .packages
        .iter()
        .filter(|(_, e)| e.export_bundle_count == 1)
        .count();
    assert_eq!((one, header.packages.len()), (22_343, 22_559));
}

/// Converted alone, a package's commands interleave with no one's: one
/// bundle with the whole load order, no internal arcs.
#[test]
fn clay_packages_alone_have_one_bundle() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let packages = clay(&corpus);
    assert_eq!(packages.len(), 167);
    for c in &packages {
        let p = &c.package;
        assert_eq!(p.export_bundle_headers.len(), 1, "{}", c.package_name);
        assert_eq!(p.export_bundle_entries.len(), 2 * p.exports.len());
        assert!(p.internal_arcs.is_empty());
        check_graph(c);
    }
    let external: usize = packages
        .iter()
        .map(|c| c.package.external_arcs.iter().map(Vec::len).sum::<usize>())
        .sum();
    assert_eq!(external, 313);
}

/// The whole game in one container: the packages whose commands interleave
/// through import cycles get two bundles, with the create→serialize arcs
/// across them and the engine's duplicate arcs.
#[test]
fn clay_in_one_container_splits_interleaved_packages() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let mut packages = clay(&corpus);
    optimize_export_bundles(&mut packages).unwrap();
    let bundles: usize = packages
        .iter()
        .map(|c| c.package.export_bundle_headers.len())
        .sum();
    let single = packages
        .iter()
        .filter(|c| c.package.export_bundle_headers.len() == 1)
        .count();
    let internal: usize = packages.iter().map(|c| c.package.internal_arcs.len()).sum();
    let duplicates: usize = packages
        .iter()
        .map(|c| {
            let unique: BTreeSet<_> = c
                .package
                .internal_arcs
                .iter()
                .map(|a| (a.from_bundle, a.to_bundle))
                .collect();
            c.package.internal_arcs.len() - unique.len()
        })
        .sum();
    assert_eq!((bundles, single, internal, duplicates), (177, 157, 35, 25));
    for c in &packages {
        check_graph(c);
    }
    let split: BTreeSet<&str> = packages
        .iter()
        .filter(|c| c.package.export_bundle_headers.len() > 1)
        .map(|c| c.package_name.as_str())
        .collect();
    assert!(
        split.contains("/Game/FirstPerson/Blueprints/Boomerang"),
        "{split:?}"
    );
    // Optimizing twice changes nothing.
    let again = packages.clone();
    optimize_export_bundles(&mut packages).unwrap();
    for (a, b) in again.iter().zip(&packages) {
        assert_eq!(a.package_bytes, b.package_bytes, "{}", a.package_name);
    }
}
