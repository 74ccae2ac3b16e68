//! Every legacy package of the shared corpus parses with its folder's
//! engine version, its tables match the summary's counts, every export's
//! data lies in the `.uexp`, and writing the parsed header gives the
//! original bytes.

use crate::common;

use zenpak::legacy::{LegacyPackage, PackageFiles};

#[test]
fn every_corpus_package_parses_and_round_trips() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let packages = common::legacy_packages(&corpus);
    assert!(
        packages.len() > 250,
        "expected the corpus's ~260 legacy packages, found {}",
        packages.len()
    );
    let mut failures = Vec::new();
    let mut tagged = 0usize;
    for (path, engine) in &packages {
        let result = (|| -> zenpak::Result<()> {
            let files = PackageFiles::load(path)?;
            let package = files.read_package(Some(*engine))?;
            let s = &package.summary;
            assert_eq!(
                package.names.len() as i32,
                s.name_count,
                "{}",
                path.display()
            );
            assert_eq!(
                package.imports.len() as i32,
                s.import_count,
                "{}",
                path.display()
            );
            assert_eq!(
                package.exports.len() as i32,
                s.export_count,
                "{}",
                path.display()
            );
            assert_eq!(
                s.total_header_size as usize,
                files.header.len(),
                "{}",
                path.display()
            );
            files.check_exports(&package)?;
            // Cooked layout facts the converter and fixups rely on: exports
            // lie back to back in the .uexp (in serial offset order), which
            // ends with the package tag; bulk data "starts" right after them.
            let mut ranges: Vec<(i64, i64)> = package
                .exports
                .iter()
                .map(|e| (e.serial_offset, e.serial_size))
                .collect();
            ranges.sort();
            let mut next = files.header.len() as i64;
            for (offset, size) in ranges {
                assert_eq!(
                    offset,
                    next,
                    "{}: exports are not contiguous",
                    path.display()
                );
                next = offset + size;
            }
            // The .uexp ends with the package tag, except in the 36 SN2
            // packages (re-saved by a tool, which also zero-pads their headers).
            let tail = files.combined_len() as i64 - next;
            assert_eq!(
                tail,
                if files.uexp_has_tag() { 4 } else { 0 },
                "{}",
                path.display()
            );
            let sn2 = path.to_string_lossy().contains("/SN2/");
            assert_eq!(files.uexp_has_tag(), !sn2, "{}", path.display());
            assert_eq!(
                s.bulk_data_start_offset,
                next,
                "{}: bulk data start",
                path.display()
            );
            if !sn2 {
                tagged += 1;
            }
            let mut relaid = package.clone();
            relaid.assign_export_offsets()?;
            assert_eq!(
                relaid,
                package,
                "{}: recomputed export offsets differ",
                path.display()
            );
            for i in 0..package.imports.len() {
                package.import_path(i)?;
            }
            let written = package.write()?;
            if written != files.header {
                let at = written.iter().zip(&files.header).position(|(a, b)| a != b);
                return Err(zenpak::Error::invalid(format!(
                    "rewrite differs (first difference at {at:?}, lengths {} vs {})",
                    written.len(),
                    files.header.len()
                )));
            }
            // A second parse of the written bytes gives the same model.
            assert_eq!(LegacyPackage::read(&written, Some(*engine))?, package);
            Ok(())
        })();
        if let Err(e) = result {
            failures.push(format!("{} ({engine}): {e}", path.display()));
        }
    }
    eprintln!(
        "{} legacy packages checked ({tagged} with a tagged .uexp), {} failed",
        packages.len(),
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert_eq!(
        tagged,
        packages.len() - 36,
        "every package but SN2's 36 has a tagged .uexp"
    );
}

#[test]
fn name_map_hashes_match_the_engine() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    // Some packages (tool-written: retoc's BP_Table_Lamp, uassetapi's Clay and
    // SN2) store zero hashes; every non-zero pair must be the engine's.
    let (mut names, mut wide, mut zero, mut mismatches) = (0usize, 0usize, 0usize, Vec::new());
    for (path, engine) in common::legacy_packages(&corpus) {
        let files = PackageFiles::load(&path).unwrap();
        let package = files.read_package(Some(engine)).unwrap();
        for name in &package.names {
            names += 1;
            wide += name.utf16 as usize;
            if name.non_case_preserving_hash == 0 && name.case_preserving_hash == 0 {
                zero += 1;
                if name.utf16 {
                    eprintln!("unhashed UTF-16 name {:?} in {}", name.text, path.display());
                }
            } else if !name.hashes_match() {
                let (a, b) = zenpak::legacy::name_map_hashes(&name.text, name.utf16);
                mismatches.push(format!(
                    "{}: {:?} (utf16 {}): stored {:04x}/{:04x}, computed {a:04x}/{b:04x}",
                    path.display(),
                    name.text,
                    name.utf16,
                    name.non_case_preserving_hash,
                    name.case_preserving_hash
                ));
            }
        }
    }
    eprintln!(
        "{names} names ({wide} UTF-16), {zero} with zero hashes, {} hash mismatches",
        mismatches.len()
    );
    assert!(
        names - zero > 3000,
        "too few hashed names to check ({})",
        names - zero
    );
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

#[test]
fn section_extents_tile_the_header() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    for (path, engine) in common::legacy_packages(&corpus) {
        let files = PackageFiles::load(&path).unwrap();
        let package = files.read_package(Some(engine)).unwrap();
        let extents = package.section_extents();
        let mut next = extents.first().map_or(0, |e| e.1);
        for (section, offset, size) in &extents {
            assert_eq!(*offset, next, "{}: {section:?}", path.display());
            assert!(*size >= 0);
            next = offset + size;
        }
        assert_eq!(
            next as usize + package.header_padding,
            files.header.len(),
            "{}",
            path.display()
        );
    }
}
