//! Every classic package of the corpus parses, its tables agree with its
//! header, every object reference resolves to a dotted path, and writing the
//! tables back reproduces the file's bytes region by region. Facts about
//! CTF-Face are checked against the walk-through in reference 003.

use crate::common;

use std::path::{Path, PathBuf};

use zenpak::classic::header::guid_string;
use zenpak::classic::{Lineage, ObjectRef, Package};

fn classic_dir() -> Option<PathBuf> {
    let dir = common::corpus()?.join("classic");
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!("no classic corpus at {}: skipping", dir.display());
        None
    }
}

fn classic_files(dir: &Path) -> Vec<PathBuf> {
    common::files_with_ext(dir, &["u", "utx", "uax", "umx", "unr"])
}

#[test]
fn every_corpus_package_parses_and_round_trips() {
    let Some(dir) = classic_dir() else { return };
    let files = classic_files(&dir);
    assert!(
        files.len() >= 12,
        "expected the 12 UT99 files of MANIFEST.md, found {}",
        files.len()
    );
    let mut versions = std::collections::BTreeSet::new();
    for file in &files {
        let data = std::fs::read(file).unwrap();
        let package =
            Package::read_file(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        versions.insert(package.version().0);
        assert_eq!(
            package.names.len() as i32,
            package.header.name_count,
            "{}",
            file.display()
        );
        assert_eq!(
            package.imports.len() as i32,
            package.header.import_count,
            "{}",
            file.display()
        );
        assert_eq!(
            package.exports.len() as i32,
            package.header.export_count,
            "{}",
            file.display()
        );
        if let Lineage::Generations { generations, .. } = &package.header.lineage {
            // The newest generation records the counts the file was saved with.
            let last = generations.last().expect("at least one generation");
            assert_eq!(
                last.export_count,
                package.header.export_count,
                "{}",
                file.display()
            );
            assert_eq!(
                last.name_count,
                package.header.name_count,
                "{}",
                file.display()
            );
        }

        // Each table, written back, equals the file's bytes where it was read.
        let regions = package.write_tables();
        let tables: Vec<&str> = regions.iter().map(|r| r.table).collect();
        for region in &regions {
            let start = region.offset as usize;
            let end = start + region.bytes.len();
            assert!(
                end <= data.len(),
                "{}: {} runs past the end",
                file.display(),
                region.table
            );
            assert!(
                data[start..end] == region.bytes[..],
                "{}: {} table ({} bytes at {}) differs when written back",
                file.display(),
                region.table,
                region.bytes.len(),
                start
            );
        }
        for table in ["header", "names", "imports", "exports"] {
            assert!(
                tables.contains(&table),
                "{}: no {table} region",
                file.display()
            );
        }
        if !package.version().has_generations() {
            assert!(
                tables.contains(&"heritage"),
                "{}: no heritage region",
                file.display()
            );
        }

        // Header, tables and object data tile the file: no overlap, no gap,
        // so no table holds more entries than its count says. Rebuilding the
        // file from the written tables plus the object data gives it back.
        let mut spans: Vec<(u64, u64, String)> = regions
            .iter()
            .map(|r| {
                (
                    r.offset,
                    r.offset + r.bytes.len() as u64,
                    r.table.to_string(),
                )
            })
            .collect();
        for (i, export) in package.exports.iter().enumerate() {
            if let Some(range) = export.serial_range() {
                spans.push((range.start, range.end, format!("export {i}")));
            }
        }
        spans.sort();
        let mut covered = 0;
        for span in &spans {
            assert_eq!(
                span.0,
                covered,
                "{}: gap or overlap before {span:?}",
                file.display()
            );
            covered = span.1;
        }
        assert_eq!(
            covered,
            data.len() as u64,
            "{}: bytes after the last region",
            file.display()
        );
        let mut rebuilt = vec![0u8; data.len()];
        for region in &regions {
            rebuilt[region.offset as usize..][..region.bytes.len()].copy_from_slice(&region.bytes);
        }
        for export in &package.exports {
            if let Some(range) = export.serial_range() {
                let (start, end) = (range.start as usize, range.end as usize);
                rebuilt[start..end].copy_from_slice(&data[start..end]);
            }
        }
        assert!(rebuilt == data, "{}: rebuilt file differs", file.display());

        // Every reference resolves to a dotted path made of real names.
        for i in 0..package.imports.len() {
            let path = package.path(ObjectRef::import(i));
            assert!(
                !path.contains('<') && !path.is_empty(),
                "{}: import {i} -> {path}",
                file.display()
            );
            let class = package.class_path(ObjectRef::import(i));
            assert_eq!(
                class.matches('.').count(),
                1,
                "{}: import {i} class {class}",
                file.display()
            );
        }
        for (i, export) in package.exports.iter().enumerate() {
            let path = package.path(ObjectRef::export(i));
            assert!(
                path.starts_with(&format!("{}.", package.name)),
                "{}: export {i} -> {path}",
                file.display()
            );
            assert!(!path.contains('<'));
            assert!(!package.class_path(ObjectRef::export(i)).contains('<'));
            assert!(!package.path(export.super_field).contains('<'));
        }
    }
    assert_eq!(versions.into_iter().collect::<Vec<_>>(), [61, 68, 69]);
}

#[test]
fn serial_offset_is_stored_only_for_nonzero_sizes() {
    let Some(dir) = classic_dir() else { return };
    let mut zero_sized = 0;
    for file in classic_files(&dir) {
        let package = Package::read_file(&file).unwrap();
        for export in &package.exports {
            assert_eq!(export.serial_offset.is_some(), export.serial_size != 0);
            zero_sized += (export.serial_size == 0) as usize;
        }
    }
    // The corpus does hold zero-sized exports, so the rule is exercised (a
    // reader that always read an offset would fail the round trip above).
    assert!(zero_sized > 0);
}

#[test]
fn ctf_face_matches_reference_walkthrough() {
    let Some(dir) = classic_dir() else { return };
    let package = Package::read_file(&dir.join("ut99/Maps/CTF-Face.unr")).unwrap();
    let header = &package.header;
    assert_eq!(package.version().0, 68);
    assert_eq!(header.package_flags, 0x1);
    assert_eq!((header.name_count, header.name_offset), (1347, 64));
    assert_eq!((header.export_count, header.export_offset), (1073, 961_834));
    assert_eq!((header.import_count, header.import_offset), (143, 960_475));
    let Lineage::Generations { guid, generations } = &header.lineage else {
        panic!("version 68 has generations")
    };
    assert_eq!(guid_string(guid), "68722E6411D38195E0006BA2D2321081");
    assert_eq!(generations.len(), 1);
    assert_eq!(
        (generations[0].export_count, generations[0].name_count),
        (1073, 1347)
    );

    let names: Vec<(&str, u32)> = package.names[..5]
        .iter()
        .map(|n| (n.name.as_str(), n.flags))
        .collect();
    assert_eq!(
        names,
        [
            ("None", 0x0407_0410),
            ("Vector", 0x0407_0410),
            ("OUTSIDE", 0x0007_0010),
            ("PointRegion", 0x0007_0010),
            ("Region", 0x0007_0010)
        ]
    );

    let import_paths: Vec<String> = (0..5).map(|i| package.path(ObjectRef::import(i))).collect();
    assert_eq!(
        import_paths,
        [
            "Engine",
            "SkyCity",
            "ShaneChurch",
            "Engine.Brush",
            "SkyCity.Base"
        ]
    );
    assert_eq!(package.class_path(ObjectRef::import(3)), "Core.Class");
    assert_eq!(package.class_path(ObjectRef::import(4)), "Core.Package");

    // Import 71 (reference -72) is runeSgn2 in the Deco group of SkyCity.
    let rune = package
        .imports
        .iter()
        .position(|i| package.name_text(i.object_name) == "runeSgn2")
        .expect("runeSgn2 is imported");
    assert_eq!(
        package.path(ObjectRef::import(rune)),
        "SkyCity.Deco.runeSgn2"
    );
    assert_eq!(
        package.class_path(ObjectRef::import(rune)),
        "Engine.Texture"
    );
    let deco = package.imports[rune].outer;
    assert_eq!(deco, ObjectRef(-72));
    assert_eq!(package.imports[71].outer, ObjectRef(-2));

    let first: Vec<(String, String, u32, i32, Option<i32>)> = (0..3)
        .map(|i| {
            let e = &package.exports[i];
            (
                package.path(ObjectRef::export(i)),
                package.class_path(ObjectRef::export(i)),
                e.flags,
                e.serial_size,
                e.serial_offset,
            )
        })
        .collect();
    assert_eq!(
        first,
        [
            (
                "CTF-Face.LevelInfo0".into(),
                "Engine.LevelInfo".into(),
                0x0207_0001,
                270,
                Some(19_691)
            ),
            (
                "CTF-Face.Light0".into(),
                "Engine.Light".into(),
                0x0207_0001,
                80,
                Some(19_961)
            ),
            (
                "CTF-Face.Light5".into(),
                "Engine.Light".into(),
                0x0207_0001,
                80,
                Some(20_041)
            ),
        ]
    );
    assert_eq!(package.exports[0].class, ObjectRef(-120));
}

#[test]
fn version_61_has_zero_terminated_names_and_heritage() {
    let Some(dir) = classic_dir() else { return };
    let package = Package::read_file(&dir.join("ut99/Textures/AlfaFX.utx")).unwrap();
    assert_eq!(package.version().0, 61);
    assert_eq!(
        package.header.lineage,
        Lineage::Heritage {
            count: 1,
            offset: 44
        }
    );
    assert_eq!(package.heritage.len(), 1);
    assert_eq!(package.header.name_offset, 60);
    assert_eq!(package.names[0].name, "None");
    assert_eq!(package.names[1].name, "InternalTime");
}
