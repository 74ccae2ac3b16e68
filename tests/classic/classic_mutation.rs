//! Hostile input: truncated files, flipped bytes and absurd counts give
//! clean errors with offsets, never a panic, never an allocation sized by
//! an unchecked number, and quickly. The object-data decoder, the writer and
//! the consolidator get the same treatment: whatever parses must decode,
//! write and consolidate without panicking, and refusals name offsets.

use crate::classic_maps;
use crate::common;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use classic_maps::{external_package, test_map, MapKind};
use zenpak::classic::consolidate::{consolidate, Mode, PackageSpec, Problem, Request};
use zenpak::classic::deps::{dependency_report, PackageCache};
use zenpak::classic::object_data::ObjectData;
use zenpak::classic::report::PackageReport;
use zenpak::classic::writer::{write_edited, ExportEdit};
use zenpak::classic::Package;
use zenpak::legacy::PACKAGE_FILE_TAG;

fn small_corpus_files() -> Vec<PathBuf> {
    let Some(corpus) = common::corpus() else {
        return Vec::new();
    };
    let dir = corpus.join("classic/ut99");
    [
        "Maps/Entry.unr",
        "Textures/AlfaFX.utx",
        "Music/Run.umx",
        "Sounds/DDay.uax",
        "Sounds/Announcer.uax",
    ]
    .iter()
    .map(|f| dir.join(f))
    .filter(|p| p.is_file())
    .collect()
}

/// Parses `bytes`; on success exercises everything built on a parsed
/// package (paths, report, dependency listing, writer) so that a mutated
/// file that parses cannot make later stages panic either.
fn parse_and_use(bytes: &[u8]) -> Result<(), zenpak::Error> {
    let package = Package::parse(bytes, "Mutant")?;
    let report = PackageReport::new(&package);
    assert_eq!(report.imports.len(), package.imports.len());
    dependency_report(&package, &[], &mut PackageCache::new());
    let regions = package.write_tables();
    assert!(!regions.is_empty());
    // Every export's data decodes (perhaps not completely), and undecoded
    // parts say where in the file decoding stopped.
    for (index, export) in package.exports.iter().enumerate() {
        let range = export
            .serial_range()
            .map_or(0..0, |r| r.start as usize..r.end as usize);
        let decoded = ObjectData::decode(&package, index, &bytes[range.clone()]);
        if let Some(why) = decoded.undecoded() {
            assert!(why.offset <= bytes.len() as u64, "{why:?}");
        }
        let rewritten = decoded.rewrite(&bytes[range.clone()], &|_| None)?;
        assert_eq!(rewritten.bytes.len(), range.len());
    }
    // The writer takes whatever parsed, and what it writes parses.
    let unchanged = vec![ExportEdit::Unchanged; package.exports.len()];
    let written = write_edited(bytes, &package, &package, &unchanged)?;
    Package::parse(&written.bytes, "Mutant")?;
    Ok(())
}

fn assert_clean_error(error: &zenpak::Error, len: usize, what: &str) {
    assert!(error.is_format(), "{what}: not a format error: {error}");
    let offset = error
        .offset()
        .unwrap_or_else(|| panic!("{what}: no byte offset: {error}"));
    assert!(
        offset <= len as u64,
        "{what}: offset {offset} beyond {len}: {error}"
    );
    assert!(!error.message().is_empty());
}

#[test]
fn truncation_at_every_byte() {
    let files = small_corpus_files();
    let started = Instant::now();
    let mut errors = 0;
    for file in &files {
        let data = std::fs::read(file).unwrap();
        // The tables end the file, so every proper prefix loses part of one.
        for len in 0..data.len() {
            match parse_and_use(&data[..len]) {
                Ok(()) => panic!("{}: truncated to {len} bytes still parses", file.display()),
                Err(e) => assert_clean_error(&e, len, &format!("{} cut at {len}", file.display())),
            }
            errors += 1;
        }
        parse_and_use(&data).unwrap();
    }
    if !files.is_empty() {
        assert!(errors > 10_000);
    }
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "took {:?}",
        started.elapsed()
    );
}

#[test]
fn flipped_bytes_never_panic() {
    let started = Instant::now();
    let mut outcomes = [0usize; 2];
    for file in small_corpus_files() {
        let data = std::fs::read(&file).unwrap();
        // Every byte of the header and tables; object data (which the
        // reader only locates) is sampled.
        let regions = Package::parse(&data, "Original").unwrap().write_tables();
        let in_tables = |pos: usize| {
            regions
                .iter()
                .any(|r| (r.offset as usize..r.offset as usize + r.bytes.len()).contains(&pos))
        };
        let mut mutant = data.clone();
        for pos in (0..data.len()).filter(|&pos| in_tables(pos) || pos % 61 == 0) {
            for flip in [0xFF, 0x80, 0x40, 0x01] {
                mutant[pos] = data[pos] ^ flip;
                match parse_and_use(&mutant) {
                    Ok(()) => outcomes[0] += 1,
                    Err(e) => {
                        assert_clean_error(
                            &e,
                            mutant.len(),
                            &format!("{} byte {pos} ^ {flip:#x}", file.display()),
                        );
                        outcomes[1] += 1;
                    }
                }
            }
            mutant[pos] = data[pos];
        }
    }
    eprintln!(
        "flipped bytes: {} still parse (object data, flags), {} rejected",
        outcomes[0], outcomes[1]
    );
    assert!(
        started.elapsed() < Duration::from_secs(120),
        "took {:?}",
        started.elapsed()
    );
}

/// A 1 KB version-69 package whose header says what `edit` makes it say.
fn header_1k(edit: impl FnOnce(&mut [u8])) -> Vec<u8> {
    let mut bytes = vec![0u8; 1024];
    bytes[0..4].copy_from_slice(&PACKAGE_FILE_TAG.to_le_bytes());
    bytes[4..8].copy_from_slice(&69u32.to_le_bytes());
    let mut put = |at: usize, v: i32| bytes[at..at + 4].copy_from_slice(&v.to_le_bytes());
    put(12, 1); // one name at 64: "None"
    put(16, 64);
    put(20, 0);
    put(24, 80);
    put(28, 0);
    put(32, 80);
    put(52, 0); // no generations
    bytes[64..70].copy_from_slice(&[5, b'N', b'o', b'n', b'e', 0]);
    edit(&mut bytes);
    bytes
}

fn put(bytes: &mut [u8], at: usize, v: i32) {
    bytes[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

fn expect_error(bytes: &[u8], offset: u64, needle: &str) {
    let started = Instant::now();
    let error = Package::parse(bytes, "Hostile").expect_err("hostile input must be rejected");
    assert!(
        started.elapsed() < Duration::from_millis(500),
        "slow rejection: {:?}",
        started.elapsed()
    );
    assert!(error.is_format(), "not a format error: {error}");
    assert_eq!(error.offset(), Some(offset), "{error}");
    assert!(
        error.to_string().contains(needle),
        "{error} does not mention {needle:?}"
    );
}

#[test]
fn huge_and_negative_counts_are_errors_not_allocations() {
    Package::parse(&header_1k(|_| {}), "Fine").unwrap();
    // Two billion names in a 1 KB file: rejected at the name count.
    expect_error(
        &header_1k(|b| put(b, 12, 2_000_000_000)),
        12,
        "count 2000000000",
    );
    expect_error(
        &header_1k(|b| put(b, 20, 2_000_000_000)),
        20,
        "count 2000000000",
    );
    expect_error(&header_1k(|b| put(b, 28, i32::MAX)), 28, "count 2147483647");
    expect_error(&header_1k(|b| put(b, 12, -5)), 12, "negative count");
    expect_error(
        &header_1k(|b| put(b, 52, 2_000_000_000)),
        52,
        "count 2000000000",
    );
    expect_error(&header_1k(|b| put(b, 16, 5000)), 16, "outside the file");
    expect_error(&header_1k(|b| put(b, 16, -1)), 16, "outside the file");
    // A version-61 file with a huge heritage count.
    let old = header_1k(|b| {
        put(b, 4, 61);
        put(b, 36, 1_000_000_000);
        put(b, 40, 44);
    });
    expect_error(&old, 36, "count 1000000000");
    // Not a classic package at all.
    expect_error(&header_1k(|b| put(b, 4, 70)), 4, "file version 70");
    expect_error(&header_1k(|b| b[0] = 0), 0, "tag");
    expect_error(&header_1k(|_| {})[..30], 28, "needs 4 bytes");
}

#[test]
fn bad_table_entries_are_errors_with_offsets() {
    // A name whose length says 200 bytes but whose terminator is missing.
    expect_error(&header_1k(|b| b[64] = 3), 64, "not zero-terminated");
    // A name with a zero byte inside it ("No\0e"): the offset is that byte's.
    expect_error(&header_1k(|b| b[67] = 0), 67, "zero byte before its end");
    // A name with an oversized compact length.
    expect_error(
        &header_1k(|b| b[64..69].copy_from_slice(&[0x7F, 0xFF, 0xFF, 0xFF, 0x07])),
        64,
        "name length",
    );
    // An import whose outer points at itself (a cycle), at offset 80.
    let cyclic = header_1k(|b| {
        put(b, 28, 1);
        put(b, 32, 80);
        put(b, 24, 90);
        b[80..87].copy_from_slice(&[0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0]);
    });
    expect_error(&cyclic, 80, "loops back");
    // An import whose name index is past the name table.
    let bad_name = header_1k(|b| {
        put(b, 28, 1);
        put(b, 32, 80);
        put(b, 24, 90);
        b[80..87].copy_from_slice(&[0, 0, 0, 0, 0, 0, 9]);
    });
    expect_error(&bad_name, 86, "name index 9");
    // An export whose class reference points past the import table.
    let bad_ref = header_1k(|b| {
        put(b, 20, 1);
        put(b, 24, 80);
        b[80..92].copy_from_slice(&[0x85, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    });
    expect_error(&bad_ref, 80, "object reference -5");
    // An export whose object data lies past the end of the file.
    let past_end = header_1k(|b| {
        put(b, 20, 1);
        put(b, 24, 80);
        b[80..94].copy_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x40, 0x40, 0x40, 0x40]);
    });
    expect_error(&past_end, 80, "past the end of the file");
    // A chain of 100 nested imports, each inside the previous: too deep.
    let deep = header_1k(|b| {
        put(b, 28, 100);
        put(b, 32, 80);
        put(b, 24, 1000);
        for i in 0..100usize {
            let at = 80 + i * 7;
            b[at..at + 7].copy_from_slice(&[0, 0, 0, 0, 0, 0, 0]);
            put(b, at + 2, -(i as i32)); // import i's outer is import i-1 (null for the first)
        }
    });
    expect_error(&deep, 80 + 64 * 7, "deeper than 64");
}

#[test]
fn large_corpus_files_truncated_at_sampled_points() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let started = Instant::now();
    for file in [
        "classic/ut99/Maps/CTF-Face.unr",
        "classic/ut99/System/Engine.u",
    ] {
        let path = corpus.join(file);
        if !path.is_file() {
            continue;
        }
        let data = std::fs::read(&path).unwrap();
        let package = Package::parse(&data, "Original").unwrap();
        // Sample the whole file, and every byte of the first and last 64 of each table.
        let mut cuts: Vec<usize> = (0..data.len()).step_by(4099).collect();
        for region in package.write_tables() {
            let (start, end) = (
                region.offset as usize,
                region.offset as usize + region.bytes.len(),
            );
            cuts.extend(start..(start + 64).min(end));
            cuts.extend(end.saturating_sub(64)..end);
        }
        for len in cuts {
            let error = Package::parse(&data[..len], "Cut").expect_err("truncated file parses");
            assert_clean_error(&error, len, &format!("{file} cut at {len}"));
        }
        // Two billion names claimed by a real file.
        let mut hostile = data.clone();
        put(&mut hostile, 12, 2_000_000_000);
        expect_error(&hostile, 12, "count 2000000000");
    }
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "took {:?}",
        started.elapsed()
    );
}

fn assert_clean_refusal(error: &zenpak::Error, len: usize, what: &str) {
    if error.is_format() {
        assert_clean_error(error, len, what);
    } else {
        assert!(
            matches!(error.code(), "usage" | "limit" | "many"),
            "{what}: unexpected error kind: {error}"
        );
    }
}

/// Consolidates `map` against the external package `external` (written to
/// a temporary folder); checks that nothing panics and that every refusal
/// is an error naming an offset, or a list of problems that do.
fn consolidate_mutant(
    map: &[u8],
    external: Option<&[u8]>,
    folder: &std::path::Path,
    what: &str,
) -> usize {
    let Ok(package) = Package::parse(map, "DM-Test") else {
        return 0;
    };
    if let Some(external) = external {
        std::fs::write(folder.join("MyTex.utx"), external).unwrap();
    }
    let request = Request {
        mode: Mode::Embedded,
        packages: vec![PackageSpec::parse("MyTex").unwrap()],
        search: vec![folder.to_path_buf()],
    };
    match consolidate(map, &package, &request, &mut PackageCache::new()) {
        Err(error) => {
            assert_clean_refusal(&error, map.len(), what);
            1
        }
        Ok(result) => {
            if let Some(error) = result.report.problems_error() {
                assert!(result.bytes.is_none(), "{what}: written despite problems");
                for (problem, failure) in result.report.problems.iter().zip(error.failures()) {
                    if matches!(problem.problem, Problem::UndecodedData { .. }) {
                        let offset = failure.offset().expect("undecoded data names an offset");
                        assert!(offset <= map.len() as u64, "{what}: {failure}");
                    }
                    if let Problem::PackageUnreadable { offset, .. } = &problem.problem {
                        assert!(offset.is_some(), "{what}: {failure}");
                    }
                }
                1
            } else {
                let bytes = result.bytes.expect("no problems, so written");
                Package::parse(&bytes, "DM-Test").expect("consolidated map parses");
                0
            }
        }
    }
}

#[test]
fn mutated_maps_and_external_packages_consolidate_or_are_refused_cleanly() {
    let map = test_map(MapKind::Embedded);
    let external = external_package();
    let folder = tempfile::tempdir().unwrap();
    let mut refused = 0;
    std::fs::write(folder.path().join("MyTex.utx"), &external).unwrap();
    // Every byte of the map's header and tables flipped, object data sampled.
    let regions = Package::parse(&map, "DM-Test").unwrap().write_tables();
    let in_tables = |pos: usize| {
        regions
            .iter()
            .any(|r| (r.offset as usize..r.offset as usize + r.bytes.len()).contains(&pos))
    };
    let mut mutant = map.clone();
    for pos in (0..map.len()).filter(|&pos| in_tables(pos) || pos % 5 == 0) {
        for flip in [0xFF, 0x01] {
            mutant[pos] = map[pos] ^ flip;
            let what = format!("map byte {pos} ^ {flip:#x}");
            refused += consolidate_mutant(&mutant, None, folder.path(), &what);
        }
        mutant[pos] = map[pos];
    }
    // Every byte of the external package flipped, and every truncation of it.
    let mut mutant = external.clone();
    for pos in 0..external.len() {
        for flip in [0xFF, 0x01] {
            mutant[pos] = external[pos] ^ flip;
            let what = format!("external byte {pos} ^ {flip:#x}");
            refused += consolidate_mutant(&map, Some(&mutant), folder.path(), &what);
        }
        mutant[pos] = external[pos];
    }
    for len in 0..external.len() {
        let what = format!("external cut at {len}");
        refused += consolidate_mutant(&map, Some(&external[..len]), folder.path(), &what);
    }
    // Every truncation of the map is a parse error with an offset.
    for len in 0..map.len() {
        let error = Package::parse(&map[..len], "DM-Test").expect_err("truncated map parses");
        assert_clean_error(&error, len, &format!("map cut at {len}"));
    }
    assert!(refused > 500, "{refused} refusals");
}
