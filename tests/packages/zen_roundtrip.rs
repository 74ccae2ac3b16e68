//! Every engine-written Zen package in the corpus (`*.uzenasset`, and the
//! `.uasset` files without the legacy tag, which are Zen headers cut out of
//! containers) reads and writes back to identical bytes.

use crate::common;

use zenpak::zen::ZenPackage;

#[test]
fn engine_zen_packages_round_trip() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let files = common::zen_packages(&corpus);
    assert!(
        files.len() >= 14,
        "expected the corpus's Zen packages, found {}",
        files.len()
    );
    let mut failures = Vec::new();
    for (path, engine) in &files {
        let bytes = std::fs::read(path).unwrap();
        match ZenPackage::read(&bytes, *engine) {
            Ok(package) => {
                let written = package.write();
                if written != bytes {
                    let first = written
                        .iter()
                        .zip(&bytes)
                        .position(|(a, b)| a != b)
                        .unwrap_or(written.len().min(bytes.len()));
                    failures.push(format!(
                        "{}: written {} bytes vs {} original, first difference at {first}",
                        path.display(),
                        written.len(),
                        bytes.len()
                    ));
                } else {
                    eprintln!(
                        "ok {} ({engine}): {} names, {} imports, {} exports",
                        path.display(),
                        package.names.len(),
                        package.imports.len(),
                        package.exports.len()
                    );
                }
            }
            Err(e) => failures.push(format!("{}: {e}", path.display())),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} failed:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
}

/// The UE4 Zen headers come with the store entry the engine wrote for them
/// (`NAME.metadata.json`); what the reader recovers without it (export
/// count, bundle count from the bundle section) agrees with it.
#[test]
fn ue4_headers_agree_with_their_store_entries() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let mut checked = 0;
    for (path, engine) in common::zen_packages(&corpus) {
        let meta_path = path.with_extension("metadata.json");
        let Ok(meta) = std::fs::read(&meta_path) else {
            continue;
        };
        let meta: serde_json::Value = serde_json::from_slice(&meta).unwrap();
        let entry = &meta["store_entry"];
        if entry.is_null() {
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        let package = ZenPackage::read(&bytes, engine).unwrap();
        assert_eq!(
            package.exports.len() as u64,
            entry["export_count"].as_u64().unwrap(),
            "{}",
            path.display()
        );
        assert_eq!(
            package.export_bundle_headers.len() as u64,
            entry["export_bundle_count"].as_u64().unwrap(),
            "{}",
            path.display()
        );
        assert_eq!(
            bytes.len() as u64,
            entry["export_bundles_size"].as_u64().unwrap(),
            "{}",
            path.display()
        );
        // The graph data is sorted by package id. (It is not limited to the
        // imported packages: SPR_UI_Battle, a localized package split into
        // two bundles, lists arcs from ~90 packages of its container.)
        assert!(
            package
                .package_arcs
                .windows(2)
                .all(|w| w[0].package_id < w[1].package_id),
            "{}",
            path.display()
        );
        checked += 1;
    }
    assert!(checked >= 7, "checked {checked}");
}
