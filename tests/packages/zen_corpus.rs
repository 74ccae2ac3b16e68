//! Every legacy package of the corpus (retoc pairs and the ~250 real game
//! packages of uassetapi/, UE 5.1–5.7) converts for its engine version
//! without error, and the result reads back and writes back identically.

use crate::common;

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
                    return Err(zenpak::Error::invalid(
                        "read-back model differs from the converted one",
                    ));
                }
                if back.write() != converted.package_bytes {
                    return Err(zenpak::Error::invalid(
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

/// Every layout (4.26 … 5.7) writes and reads back the same model: the
/// corpus has no engine packages for 4.26, 5.0, 5.2 or 5.7, so the same
/// sources are converted for every release and read back.
#[test]
fn every_layout_reads_back_what_it_writes() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    for stem in [
        "UE5.6/SM_Cube",
        "UE5.6/BP_ThirdPersonCharacter",
        "UE5.4/BP_Table_Lamp",
    ] {
        let path = corpus.join(format!("retoc/{stem}.uasset"));
        let source_engine = common::engine_of(&corpus, &path).unwrap();
        let files = PackageFiles::load(&path).unwrap();
        let legacy = files.read_package(Some(source_engine)).unwrap();
        let mut source = zenpak::zen::SourcePackage::from_legacy(&legacy).unwrap();
        let name = legacy.package_name().unwrap().to_string();
        for versioned in [false, true] {
            if versioned {
                source.versioning = Some(zenpak::zen::convert::SourceVersioning {
                    file_version_ue4: 522,
                    file_version_ue5: 1010,
                    licensee_version: 0,
                    custom_versions: vec![([7u8; 16], 3)],
                });
            }
            for engine in zenpak::EngineVersion::ALL {
                let converted = zenpak::zen::convert::convert_source(
                    &source,
                    &files.uexp,
                    Vec::new(),
                    engine,
                    &name,
                )
                .unwrap_or_else(|e| panic!("{stem} as {engine}: {e}"));
                let back = ZenPackage::read(&converted.package_bytes, engine)
                    .unwrap_or_else(|e| panic!("{stem} as {engine}: {e}"));
                if back != converted.package {
                    let d = zenpak::zen::diff::first_difference(&converted.package, &back);
                    panic!("{stem} as {engine} (versioned {versioned}): read-back differs: {d:?}");
                }
                assert!(
                    back.write() == converted.package_bytes,
                    "{stem} as {engine}: bytes differ"
                );
                assert_eq!(back.package_name(), name);
                if engine.zen_has_bulk_data_map() {
                    assert_eq!(
                        back.bulk_data.len(),
                        legacy
                            .data_resources
                            .as_ref()
                            .map_or(0, |d| d.entries.len())
                    );
                }
            }
        }
    }
}

/// The summary field that was `CookedHeaderSize`: the legacy header size up
/// to 5.6 (the engine pairs of 5.4–5.6 match byte for byte with it), the size
/// minus 8 in 5.7 (`FinalizePackageHeader`'s
/// `CookedHeaderSizeOffsetToMinimizePatchSize`: the 5.7 summary grew by the
/// two import-type-hierarchy fields and the value stays at its 5.6 size).
#[test]
fn former_cooked_header_size_per_release() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let packages = common::legacy_packages(&corpus);
    let sevens: Vec<_> = packages
        .iter()
        .filter(|(_, v)| *v == zenpak::EngineVersion::UE5_7)
        .collect();
    assert_eq!(sevens.len(), 38);
    for (path, engine) in sevens {
        let files = PackageFiles::load(path).unwrap();
        let legacy = files.read_package(Some(*engine)).unwrap();
        let size = legacy.summary.total_header_size as u32;
        let converted = zenpak::zen::convert(&files, &legacy, *engine, "").unwrap();
        assert_eq!(
            converted.package.summary.cooked_header_size,
            size - 8,
            "{}",
            path.display()
        );
        let as_56 =
            zenpak::zen::convert(&files, &legacy, zenpak::EngineVersion::UE5_6, "").unwrap();
        assert_eq!(as_56.package.summary.cooked_header_size, size);
    }
}

/// A build converts a 5.3+ package without reading its `.uexp`
/// (`ExportData::Unread`): the header it gives, followed by the `.uexp` as
/// it is on disk, must be the very chunk the full conversion gives, with
/// the same store entry. Checked on every corpus package of those engines
/// (and refused for the layouts that reorder the export data).
#[test]
fn converting_without_reading_the_uexp_gives_the_same_chunk() {
    use zenpak::version::ZenLayout;
    use zenpak::zen::{convert_with, ExportData};
    let Some(corpus) = common::corpus() else {
        return;
    };
    let mut checked = 0;
    for (path, engine) in common::legacy_packages(&corpus) {
        let files = PackageFiles::load(&path).unwrap();
        let legacy = files.read_package(Some(engine)).unwrap();
        let Ok(full) = convert(&files, &legacy, engine, "") else {
            continue;
        };
        let (header_only, uexp_len) = PackageFiles::load_header_only(&path).unwrap();
        assert_eq!(uexp_len, files.uexp.len() as u64);
        assert!(header_only.uexp.is_empty());
        let unread = ExportData::Unread { len: uexp_len };
        let result = convert_with(&header_only, &legacy, engine, "", unread);
        if engine.zen_layout() != ZenLayout::DependencyBundles {
            assert!(result.is_err(), "{}", path.display());
            continue;
        }
        let lean = result.unwrap();
        assert_eq!(lean.unread_export_data, uexp_len, "{}", path.display());
        let mut chunk = lean.package_bytes.clone();
        chunk.extend_from_slice(&files.uexp);
        assert!(chunk == full.package_bytes, "{}", path.display());
        assert_eq!(lean.store_entry, full.store_entry, "{}", path.display());
        checked += 1;
    }
    eprintln!("{checked} packages of 5.3+ converted without reading their .uexp");
    assert!(checked > 50, "only {checked} 5.3+ packages were checked");
}
