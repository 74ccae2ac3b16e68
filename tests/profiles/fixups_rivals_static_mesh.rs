//! Issue 15, row 4: StaticMesh LOD screen sizes in the game's 16-byte form.
//! The corpus's `SM_Cube` (5.6 with its mappings, 5.5 by structure) and the
//! 5.5 cube rebuilt in 5.3's layout (no strip flags after the screen sizes)
//! with zenpak's legacy writer: exactly 8 × 8 bytes inserted, nothing else
//! changed once shifted; a mesh already in the game's layout passes through;
//! a tail that cannot be located is refused.

use crate::fixups_support;

use fixups_support::{edited, rebuild_as, V53, V56};
use zenpak::fixups::marvel_rivals::static_mesh::UNUSED_LOD_VALUE;
use zenpak::fixups::{FixupReport, LocatedBy, Profile, Unchanged};
use zenpak::legacy::PackageFiles;
use zenpak::mappings::Mappings;
use zenpak::EngineVersion;

const V55: EngineVersion = EngineVersion::UE5_5;

fn corpus_file(rel: &str) -> Option<PackageFiles> {
    let corpus = fixups_support::common::corpus()?;
    Some(PackageFiles::load(corpus.join(rel)).unwrap())
}

fn apply(
    files: &PackageFiles,
    engine: EngineVersion,
    m: Option<&Mappings>,
) -> (PackageFiles, FixupReport) {
    let mut out = files.clone();
    let report = Profile::from_name("marvel-rivals")
        .unwrap()
        .apply(&mut out, engine, m)
        .unwrap_or_else(|e| panic!("{e}"));
    (out, report)
}

/// The 8 bytes after screen size `lod` (value `v`): count 1, then 0.0 for a
/// used LOD 0, the game's unused-LOD word for the others.
fn extra(lod: usize, v: f32) -> Vec<u8> {
    let second = if lod == 0 && v > 0.0 {
        0
    } else {
        UNUSED_LOD_VALUE
    };
    [1u32.to_le_bytes(), second.to_le_bytes()].concat()
}

/// The edits for screen sizes starting at absolute `first` with `values`.
fn expected(first: usize, values: [f32; 8]) -> Vec<(usize, usize, Vec<u8>)> {
    (0..8)
        .map(|lod| (first + 8 * (lod + 1), 0, extra(lod, values[lod])))
        .collect()
}

/// Checks one mesh: the exact insertions, the header moved only behind
/// them, the game's layout read back, a second run changes nothing.
fn check(
    files: &PackageFiles,
    engine: EngineVersion,
    m: Option<&Mappings>,
    first: usize,
    located_by: LocatedBy,
) {
    let header = files.header.len();
    let at = first - header;
    let values: [f32; 8] = core::array::from_fn(|i| {
        f32::from_le_bytes(
            files.uexp[at + 8 * i + 4..at + 8 * i + 8]
                .try_into()
                .unwrap(),
        )
    });
    // Each stock entry is `cooked` (1) + value.
    for i in 0..8 {
        assert_eq!(files.uexp[at + 8 * i..at + 8 * i + 4], [1, 0, 0, 0]);
    }
    let (out, report) = apply(files, engine, m);
    assert_eq!(
        out.uexp,
        edited(&files.uexp, header, &expected(first, values))
    );
    assert_eq!(report.inserted_bytes, 64);
    assert_eq!(report.exports.len(), 1);
    assert_eq!(report.exports[0].located_by, located_by);
    let before = files.read_package(Some(engine)).unwrap();
    let after = out.read_package(Some(engine)).unwrap();
    let mut shifted = before.clone();
    let mesh = report.exports[0].export_index;
    shifted.exports[mesh].serial_size += 64;
    for e in &mut shifted.exports {
        if e.serial_offset > first as i64 {
            e.serial_offset += 64;
        }
    }
    shifted.summary.bulk_data_start_offset += 64;
    if let Some(r) = shifted.data_resources.as_mut() {
        for entry in &mut r.entries {
            if entry.legacy_bulk_data_flags & 0x101 == 0 && entry.serial_offset > first as i64 {
                entry.serial_offset += 64;
            }
        }
    }
    assert_eq!(shifted, after);
    assert_eq!(
        out.header.len(),
        files.header.len(),
        "only fixed-width fields moved"
    );
    // The game's layout passes through a second run.
    let (again, report) = apply(&out, engine, m);
    assert!(!report.changed(), "{report:#?}");
    assert!(matches!(
        report.unchanged[0],
        Unchanged::StaticMeshInGameLayout { .. }
    ));
    assert_eq!(again.uexp, out.uexp);
    // And it converts.
    zenpak::zen::convert(&out, &after, engine, "/Game/Meshes/SM_Cube").unwrap();
}

#[test]
fn sm_cube_56_with_mappings_and_by_structure() {
    let Some(files) = corpus_file("uassetapi/TestUE5_6/BpThirdPerson/SM_Cube.uasset") else {
        return;
    };
    let dir = fixups_support::third_person_dir().unwrap();
    let m = Mappings::load(dir.join("ExplicitEnumValuesExample.usmap")).unwrap();
    // Screen sizes at .uexp 0x1a21 (after the bounds and the 5.6 flags byte 0x03).
    assert_eq!(files.uexp[0x1a20], 0x03);
    check(
        &files,
        V56,
        Some(&m),
        1744 + 0x1a21,
        LocatedBy::MappingsAndStructure,
    );
    check(&files, V56, None, 1744 + 0x1a21, LocatedBy::Structure);
    let retoc = corpus_file("retoc/UE5.6/SM_Cube.uasset").unwrap();
    let first = retoc.header.len() + (retoc.uexp.len() - 4 - 40 - 4 - 4 - 2 - 64);
    check(&retoc, V56, None, first, LocatedBy::Structure);
}

#[test]
fn sm_cube_55_by_structure() {
    let Some(files) = corpus_file("retoc/UE5.5/SM_Cube.uasset") else {
        return;
    };
    // 5.5: 36-byte materials (2), wind flag, strip flags, then the screen sizes end.
    check(&files, V55, None, 11284, LocatedBy::Structure);
}

#[test]
fn sm_cube_in_53_layout() {
    let Some(files) = corpus_file("retoc/UE5.5/SM_Cube.uasset") else {
        return;
    };
    let package = files.read_package(Some(V55)).unwrap();
    // 5.3 has no strip flags after the screen sizes: drop the two bytes.
    let strip_at = 11348 - package.exports[2].serial_offset as usize;
    let mut datas: Vec<Vec<u8>> = (0..3)
        .map(|i| files.export_data(&package, i).unwrap().to_vec())
        .collect();
    assert_eq!(datas[2][strip_at..strip_at + 2], [5, 0]);
    datas[2].drain(strip_at..strip_at + 2);
    let shrink = |rel: i64| if rel > strip_at as i64 { rel - 2 } else { rel };
    let path = files.path.with_file_name("SM_Cube_53.uasset");
    let mut built = rebuild_as(V53, &package, &datas, &shrink, path);
    built.bulk = files.bulk.clone();
    let p = built.read_package(Some(V53)).unwrap();
    let first = p.exports[2].serial_offset as usize + strip_at - 64;
    check(&built, V53, None, first, LocatedBy::Structure);
}

#[test]
fn a_tail_that_cannot_be_located_is_refused() {
    let Some(files) = corpus_file("retoc/UE5.5/SM_Cube.uasset") else {
        return;
    };
    // SpeedTree wind data present (flag 1): the chain from the end no longer holds.
    let mut wind = files.clone();
    let at = 11350 - files.header.len();
    wind.uexp[at] = 1;
    let e = Profile::from_name("marvel-rivals")
        .unwrap()
        .apply(&mut wind.clone(), V55, None)
        .unwrap_err();
    assert!(e.hint().unwrap().contains("SpeedTree"), "{e}");
    // With the option off the mesh is left alone.
    let o = fixups_support::options(|s| s.screen_sizes = false);
    let mut out = wind.clone();
    let r = Profile::from_name("marvel-rivals")
        .unwrap()
        .apply_with(&mut out, V55, None, &o)
        .unwrap();
    assert!(!r.changed());
    assert_eq!(out.uexp, wind.uexp);
    // Hostile tails: errors or changes, never a panic.
    let mut seed = 0x2545F4914F6CDD1Du64;
    for _ in 0..200 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let mut m = files.clone();
        let at = m.uexp.len() - 1 - (seed as usize % 400);
        m.uexp[at] ^= (seed >> 32) as u8 | 1;
        let _ = Profile::from_name("marvel-rivals")
            .unwrap()
            .apply(&mut m, V55, None);
    }
}
