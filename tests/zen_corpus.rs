//! Every legacy package of the corpus (retoc pairs and the ~250 real game
//! packages of uassetapi/, UE 5.1–5.7) converts for its engine version
//! without error, and the result reads back and writes back identically.

mod common;

use zenpak::legacy::PackageFiles;
use zenpak::zen::{convert, ZenPackage};

#[test]
fn every_legacy_package_converts_and_reads_back() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let packages = common::legacy_packages(&corpus);
    assert!(
        packages.len() > 200,
        "expected the corpus's legacy packages, found {}",
        packages.len()
    );
    let mut failures = Vec::new();
    let mut per_engine = std::collections::BTreeMap::new();
    for (path, engine) in &packages {
        let fallback = if path.ends_with("retoc/UE4.27/TestModUI.uasset") {
            "/Game/_AssemblyStorm/TestMod/TestModUI"
        } else {
            ""
        };
        let result = PackageFiles::load(path)
            .and_then(|files| {
                let legacy = files.read_package(Some(*engine))?;
                convert(&files, &legacy, *engine, fallback)
            })
            .and_then(|converted| {
                let back = ZenPackage::read(&converted.package_bytes, *engine)?;
                if back != converted.package {
                    return Err(zenpak::Error::other(
                        "read-back model differs from the converted one",
                    ));
                }
                if back.write() != converted.package_bytes {
                    return Err(zenpak::Error::other(
                        "writing the read-back package gives other bytes",
                    ));
                }
                Ok(())
            });
        match result {
            Ok(()) => *per_engine.entry(engine.to_string()).or_insert(0) += 1,
            Err(e) => failures.push(format!("{} ({engine}): {e}", path.display())),
        }
    }
    eprintln!("converted and read back: {per_engine:?}");
    assert!(
        failures.is_empty(),
        "{} of {} failed:\n{}",
        failures.len(),
        packages.len(),
        failures.join("\n")
    );
    assert!(
        per_engine.get("5.7").copied().unwrap_or(0) >= 30,
        "the real 5.7 packages must convert"
    );
}
