//! Conformance: every legacy package in the corpus that has the engine's
//! own Zen package beside it (`NAME.uzenasset`) is converted for its engine
//! version and compared byte for byte, section by section. Any section that
//! differs fails the test.

use crate::common;

use zenpak::legacy::PackageFiles;
use zenpak::zen::diff::{first_difference, section_table, SECTIONS};
use zenpak::zen::{convert, ZenPackage};

/// UE4 cooks do not write the package name into the summary; MANIFEST.md
/// gives it for the one UE4 pair.
fn fallback_name(stem: &str) -> &'static str {
    match stem {
        "TestModUI" => "/Game/_AssemblyStorm/TestMod/TestModUI",
        _ => "",
    }
}

#[test]
fn conversion_matches_the_engine() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let pairs: Vec<_> = common::legacy_packages(&corpus)
        .into_iter()
        .filter(|(p, _)| p.with_extension("uzenasset").is_file())
        .collect();
    assert_eq!(pairs.len(), 7, "expected the 7 engine pairs of MANIFEST.md");

    let mut table = format!("{:<30}", "package");
    for s in SECTIONS {
        table += &format!(" {s:>18}");
    }
    table += "  whole file\n";
    let mut failures = Vec::new();
    for (path, engine) in &pairs {
        let stem = path.file_stem().unwrap().to_string_lossy().to_string();
        let label = format!("{engine} {stem}");
        let expected_bytes = std::fs::read(path.with_extension("uzenasset")).unwrap();
        let expected = ZenPackage::read(&expected_bytes, *engine).expect("engine package reads");
        let files = PackageFiles::load(path).unwrap();
        let legacy = files.read_package(Some(*engine)).unwrap();
        let converted = match convert(&files, &legacy, *engine, fallback_name(&stem)) {
            Ok(c) => c,
            Err(e) => {
                table += &format!("{label:<30} conversion failed: {e}\n");
                failures.push(format!("{label}: {e}"));
                continue;
            }
        };
        let sections = section_table(&expected, &converted.package);
        table += &format!("{label:<30}");
        for (_, same) in &sections {
            table += &format!(" {:>18}", if *same { "identical" } else { "DIFFERS" });
        }
        let identical = converted.package_bytes == expected_bytes;
        table += &format!("  {}\n", if identical { "identical" } else { "DIFFER" });
        if !identical || sections.iter().any(|(_, same)| !same) {
            let why = first_difference(&expected, &converted.package)
                .map(|d| d.to_string())
                .unwrap_or_else(|| "layout".into());
            failures.push(format!(
                "{label}: {} vs {} bytes; first difference (engine vs zenpak): {why}",
                expected_bytes.len(),
                converted.package_bytes.len()
            ));
        }
    }
    eprintln!("\n{table}");
    assert!(
        failures.is_empty(),
        "{} of {} packages differ from the engine:\n{}",
        failures.len(),
        pairs.len(),
        failures.join("\n")
    );
}

/// The store entry that comes out of the conversion agrees with the one the
/// engine wrote into its container header (MANIFEST: TestModUI.metadata.json).
#[test]
fn store_entry_matches_the_engine() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let dir = corpus.join("retoc/UE4.27");
    let meta: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("TestModUI.metadata.json")).unwrap())
            .unwrap();
    let expected = &meta["store_entry"];
    let files = PackageFiles::load(dir.join("TestModUI.uasset")).unwrap();
    let engine = zenpak::EngineVersion::UE4_27;
    let legacy = files.read_package(Some(engine)).unwrap();
    let converted = convert(&files, &legacy, engine, fallback_name("TestModUI")).unwrap();
    let entry = &converted.store_entry;
    assert_eq!(
        entry.export_count as u64,
        expected["export_count"].as_u64().unwrap()
    );
    assert_eq!(
        entry.export_bundle_count as u64,
        expected["export_bundle_count"].as_u64().unwrap()
    );
    assert_eq!(
        converted.package_bytes.len() as u64,
        expected["export_bundles_size"].as_u64().unwrap()
    );
    let imported: Vec<u64> = expected["imported_packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    assert_eq!(entry.imported_packages, imported);
    assert!(entry.shader_map_hashes.is_empty());
}
