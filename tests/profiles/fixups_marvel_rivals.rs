//! The marvel-rivals profile on SkeletalMeshes (issue 15, rows 1–3): the
//! exact bytes it inserts (tag containers, the game's LOD info numbering,
//! hidden-material flags, tags from the manifest), everything else
//! unchanged once shifted, on the corpus's 5.6 `SKM_Quinn_Simple` and the
//! same mesh rebuilt in 5.3's layout; meshes already in the game's layout
//! pass through; what it refuses.

use crate::fixups_support;

use fixups_support::{edited, game_mappings, options, quinn, quinn_53, V53, V56};
use zenpak::fixups::skeletal_mesh::parse_at;
use zenpak::fixups::{
    Change, FixupReport, LocatedBy, MeshSettings, Profile, ProfileOptions, Unchanged,
};
use zenpak::legacy::{LegacyPackage, PackageFiles};
use zenpak::mappings::Mappings;
use zenpak::properties::PackageContext;
use zenpak::EngineVersion;

/// Where SKM_Quinn_Simple's structures are (from `zenpak inspect
/// --properties` and the walk): its three LOD info headers (offset, bytes)
/// and where the value of stock slot 3 (`BuildSettings`) starts in each.
const LOD_HEADERS: [(usize, [u8; 6]); 3] = [
    (3292, [0x80, 0x29, 0x00, 0x0e, 0x00, 0x00]),
    (3422, [0x80, 0x29, 0x02, 0x0e, 0x00, 0x00]),
    (3553, [0x80, 0x29, 0x02, 0x0e, 0x00, 0x00]),
];
const SLOT3_STARTS: [usize; 3] = [3314, 3440, 3571];
/// The length of the stock 5.6 header: the offsets here are in its files.
const STOCK_HEADER: usize = 3274;
/// The materials count (5.6: 44-byte entries follow).
const MATERIALS_AT: usize = STOCK_HEADER + 528;

/// The game's numbering of each LOD info without a hidden-materials value:
/// slots 0–2, slot 3 skipped, 4–20 (stock 3–19). LOD 0 has zero values at
/// stock 9–11 only; LODs 1 and 2 also at slot 1.
const GAME_HEADERS: [&[u8]; 3] = [
    &[0x00, 0x06, 0x81, 0x23, 0xc0, 0x01, 0x00, 0x00],
    &[0x80, 0x06, 0x81, 0x23, 0x02, 0x0e, 0x00, 0x00],
    &[0x80, 0x06, 0x81, 0x23, 0x02, 0x0e, 0x00, 0x00],
];
/// With a value at slot 3: one run of 21 slots.
const GAME_HEADERS_WITH_VALUE: [&[u8]; 3] = [
    &[0x80, 0x2b, 0x00, 0x1c, 0x00, 0x00],
    &[0x80, 0x2b, 0x02, 0x1c, 0x00, 0x00],
    &[0x80, 0x2b, 0x02, 0x1c, 0x00, 0x00],
];

fn apply(
    files: &PackageFiles,
    engine: EngineVersion,
    mappings: Option<&Mappings>,
    o: &ProfileOptions,
) -> (PackageFiles, FixupReport) {
    let mut out = files.clone();
    let report = Profile::from_name("marvel-rivals")
        .unwrap()
        .apply_with(&mut out, engine, mappings, o)
        .unwrap_or_else(|e| panic!("{e}"));
    (out, report)
}

/// The header fields a change may alter; everything else must be equal.
fn assert_header_shifted(
    before: &LegacyPackage,
    after: &LegacyPackage,
    grown: i64,
    shift: &dyn Fn(i64) -> i64,
) {
    let mut expected = before.clone();
    for e in expected.exports.iter_mut() {
        e.serial_offset += shift(e.serial_offset);
    }
    expected.exports[0].serial_size += grown;
    expected.summary.bulk_data_start_offset += grown;
    if let Some(r) = expected.data_resources.as_mut() {
        for entry in &mut r.entries {
            if entry.legacy_bulk_data_flags & 0x101 == 0 && entry.serial_offset >= 0 {
                entry.serial_offset += shift(entry.serial_offset);
            }
        }
    }
    assert_eq!(&expected, after);
}

/// The edits of the default run: LOD headers renumbered, one empty tag
/// container after each material (`entry` bytes each).
fn default_edits(entry: usize, shift_lod: usize) -> Vec<(usize, usize, Vec<u8>)> {
    let mut edits: Vec<(usize, usize, Vec<u8>)> = LOD_HEADERS
        .iter()
        .zip(GAME_HEADERS)
        .map(|((at, old), new)| (*at, old.len(), new.to_vec()))
        .collect();
    let first = MATERIALS_AT - shift_lod + 4;
    edits.push((first + entry, 0, vec![0; 4]));
    edits.push((first + 2 * entry, 0, vec![0; 4]));
    edits
}

#[test]
fn quinn_56_gets_tag_containers_and_the_games_lod_info_numbering() {
    let Some((files, stock)) = quinn() else {
        return;
    };
    let game = game_mappings(&stock);
    let before = files.read_package(Some(V56)).unwrap();
    let (out, report) = apply(&files, V56, Some(&game), &ProfileOptions::default());
    let header = files.header.len();
    // The LOD header as stored: 6 bytes each, exactly what LOD_HEADERS says.
    for (at, bytes) in LOD_HEADERS {
        assert_eq!(files.uexp[at - header..at - header + 6], bytes);
    }
    let edits = default_edits(44, 0);
    assert_eq!(out.uexp, edited(&files.uexp, header, &edits));
    assert_eq!(report.inserted_bytes, 3 * 8 + 8);
    assert_eq!(report.removed_bytes, 3 * 6);
    assert_eq!(report.exports.len(), 2, "{report:#?}");
    assert_eq!(
        report.exports[1].located_by,
        LocatedBy::MappingsAndStructure
    );
    // Header: only sizes and offsets behind the changes moved (+6 +8).
    let after = out.read_package(Some(V56)).unwrap();
    assert_header_shifted(&before, &after, 14, &|o| {
        if o >= MATERIALS_AT as i64 {
            14
        } else {
            0
        }
    });
    // inspect's before/after offsets: the second tag container lands 4 + 6 bytes later.
    let last = report.exports[1].edits.last().unwrap();
    assert_eq!(last.before, (MATERIALS_AT + 4 + 88) as u64);
    assert_eq!(last.after, last.before + 6 + 4);
}

#[test]
fn quinn_53_layout_gets_the_same_changes_with_40_byte_materials() {
    let Some((files, stock)) = quinn_53() else {
        return;
    };
    assert_eq!(V53.skeletal_material_size(), 40);
    let game = game_mappings(&stock);
    let (out, report) = apply(&files, V53, Some(&game), &ProfileOptions::default());
    let header = files.header.len();
    // The 5.3 header is laid out by the writer (shorter than the 5.6 one
    // the offsets above are in); the export data starts the .uexp as before.
    assert!(header < STOCK_HEADER, "5.3 header: {header} bytes");
    let edits: Vec<(usize, usize, Vec<u8>)> = default_edits(40, 0)
        .into_iter()
        .map(|(at, removed, bytes)| (at - STOCK_HEADER + header, removed, bytes))
        .collect();
    assert_eq!(out.uexp, edited(&files.uexp, header, &edits));
    assert_eq!(report.inserted_bytes, 32);
    // The padded 5.3 mesh reads with 44-byte entries (40 + empty container).
    let p = out.read_package(Some(V53)).unwrap();
    let layout = parse_at(
        out.export_data(&p, 0).unwrap(),
        p.exports[0].serial_offset as u64,
        528 + 6,
        &PackageContext::of(&p),
        true,
    )
    .unwrap();
    assert_eq!((layout.material_count(), layout.bone_count), (2, 89));
    // It converts to a Zen package.
    zenpak::zen::convert(&out, &p, V53, "/Game/SKM_Quinn_Simple").unwrap();
}

#[test]
fn hidden_material_masks_are_written_into_each_lod_info() {
    let Some((files, stock)) = quinn() else {
        return;
    };
    let game = game_mappings(&stock);
    // Bit i hides slot i; the last mask repeats for LOD 2.
    let o = options(|s| {
        s.meshes.push(MeshSettings {
            package: "/Game/**".into(),
            tags: Default::default(),
            hidden_materials: vec![0b01, 0b10],
        })
    });
    let (out, report) = apply(&files, V56, Some(&game), &o);
    let header = files.header.len();
    let values: [[u8; 6]; 3] = [[2, 0, 0, 0, 1, 0], [2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 1]];
    let mut edits: Vec<(usize, usize, Vec<u8>)> = Vec::new();
    for lod in 0..3 {
        let (at, old) = LOD_HEADERS[lod];
        edits.push((at, old.len(), GAME_HEADERS_WITH_VALUE[lod].to_vec()));
        edits.push((SLOT3_STARTS[lod], 0, values[lod].to_vec()));
    }
    edits.push((MATERIALS_AT + 4 + 44, 0, vec![0; 4]));
    edits.push((MATERIALS_AT + 4 + 88, 0, vec![0; 4]));
    assert_eq!(out.uexp, edited(&files.uexp, header, &edits));
    assert!(matches!(
        report.exports[0].what,
        Change::HiddenMaterials { written: 3, .. }
    ));
    // More masks than LODs, or bits past the material slots: refused.
    for masks in [vec![1, 1, 1, 1], vec![0b100]] {
        let o = options(|s| {
            s.meshes.push(MeshSettings {
                package: "/Game/**".into(),
                tags: Default::default(),
                hidden_materials: masks,
            })
        });
        let mut copy = files.clone();
        let e = Profile::from_name("marvel-rivals")
            .unwrap()
            .apply_with(&mut copy, V56, Some(&game), &o)
            .unwrap_err();
        assert_eq!(copy.uexp, files.uexp, "{e}");
    }
}

#[test]
fn manifest_tags_add_names_and_fill_the_slot_containers() {
    let Some((files, stock)) = quinn() else {
        return;
    };
    let game = game_mappings(&stock);
    let package = files.read_package(Some(V56)).unwrap();
    let cx = PackageContext::of(&package);
    let layout = parse_at(
        files.export_data(&package, 0).unwrap(),
        package.exports[0].serial_offset as u64,
        528,
        &cx,
        false,
    )
    .unwrap();
    let slot1 = package.name(layout.slot_names[1]).unwrap();
    let o = options(|s| {
        s.meshes.push(MeshSettings {
            package: "/Game/Characters/**".into(),
            tags: [(
                slot1.to_uppercase(),
                vec!["MaterialTag.Weapon".into(), "MaterialTag.Equip_2".into()],
            )]
            .into_iter()
            .collect(),
            hidden_materials: Vec::new(),
        })
    });
    assert!(package
        .package_name()
        .unwrap()
        .starts_with("/Game/Characters/"));
    let (out, report) = apply(&files, V56, Some(&game), &o);
    let after = out.read_package(Some(V56)).unwrap();
    // Two names at the end of the export-data names (91 before), `_2` as number 3.
    assert_eq!(
        after.summary.names_referenced_from_export_data_count,
        Some(93)
    );
    assert_eq!(after.names[91].text, "MaterialTag.Weapon");
    assert_eq!(after.names[92].text, "MaterialTag.Equip");
    assert_eq!(after.names.len(), package.names.len() + 2);
    // Header names after them moved up by two; the import paths are the same.
    for i in 0..package.imports.len() {
        assert_eq!(
            after.import_path(i).unwrap(),
            package.import_path(i).unwrap()
        );
    }
    let container = [
        2u32.to_le_bytes(),
        91u32.to_le_bytes(),
        0u32.to_le_bytes(),
        92u32.to_le_bytes(),
        3u32.to_le_bytes(),
    ]
    .concat();
    let header = files.header.len();
    let mut edits = default_edits(44, 0);
    edits.pop();
    edits.push((MATERIALS_AT + 4 + 88, 0, container));
    assert_eq!(out.uexp, edited(&files.uexp, header, &edits));
    assert!(matches!(
        report.exports[1].what,
        Change::TagContainers { tags: 2, .. }
    ));
    // The header grew by the two names (each: length, text + NUL, two hashes).
    assert_eq!(
        out.header.len(),
        header + (4 + 19 + 4) + (4 + 18 + 4),
        "{report:#?}"
    );
    // A slot the mesh does not have is refused.
    let o = options(|s| {
        s.meshes.push(MeshSettings {
            package: "/Game/**".into(),
            tags: [("NoSuchSlot".to_string(), vec!["A.B".to_string()])]
                .into_iter()
                .collect(),
            hidden_materials: Vec::new(),
        })
    });
    let e = Profile::from_name("marvel-rivals")
        .unwrap()
        .apply_with(&mut files.clone(), V56, Some(&game), &o)
        .unwrap_err();
    assert!(e.to_string().contains("NoSuchSlot"), "{e}");
}

#[test]
fn a_mesh_in_the_games_layout_goes_through_unchanged() {
    let Some((files, stock)) = quinn() else {
        return;
    };
    let game = game_mappings(&stock);
    let (padded, _) = apply(&files, V56, Some(&game), &ProfileOptions::default());
    for (mappings, by) in [
        (Some(&game), LocatedBy::MappingsAndStructure),
        (None, LocatedBy::Structure),
    ] {
        let (again, report) = apply(&padded, V56, mappings, &ProfileOptions::default());
        assert!(!report.changed(), "{report:#?}");
        assert_eq!(again.header, padded.header);
        assert_eq!(again.uexp, padded.uexp);
        assert!(
            matches!(
                report.unchanged[0],
                Unchanged::SkeletalMeshTagged { located_by, .. } if located_by == by
            ),
            "{report:#?}"
        );
    }
    // Also with tags in the containers and hidden-material flags.
    let slot0 = {
        let package = files.read_package(Some(V56)).unwrap();
        let layout = parse_at(
            files.export_data(&package, 0).unwrap(),
            package.exports[0].serial_offset as u64,
            528,
            &PackageContext::of(&package),
            false,
        )
        .unwrap();
        package.name(layout.slot_names[0]).unwrap()
    };
    let o = options(|s| {
        s.meshes.push(MeshSettings {
            package: "/Game/**".into(),
            tags: [(slot0, vec!["A.B".to_string(), "A.C".to_string()])]
                .into_iter()
                .collect(),
            hidden_materials: vec![3],
        })
    });
    let (with_flags, _) = apply(&files, V56, Some(&game), &o);
    let (again, report) = apply(&with_flags, V56, Some(&game), &o);
    assert!(!report.changed());
    assert_eq!(again.uexp, with_flags.uexp);
}

#[test]
fn without_the_games_mappings_a_stock_mesh_is_refused_unless_lod_info_is_left_alone() {
    let Some((files, stock)) = quinn() else {
        return;
    };
    for mappings in [None, Some(&stock)] {
        let mut copy = files.clone();
        let e = Profile::from_name("marvel-rivals")
            .unwrap()
            .apply_with(&mut copy, V56, mappings, &ProfileOptions::default())
            .unwrap_err();
        assert!(
            e.hint().unwrap().contains("hidden-materials = false"),
            "{e}"
        );
        assert_eq!(copy.uexp, files.uexp);
    }
    // Left alone: only the empty containers, by mappings or structure, same bytes.
    let o = options(|s| s.hidden_materials = false);
    let (a, ra) = apply(&files, V56, Some(&stock), &o);
    let (b, rb) = apply(&files, V56, None, &o);
    assert_eq!(ra.exports[0].located_by, LocatedBy::MappingsAndStructure);
    assert_eq!(rb.exports[0].located_by, LocatedBy::Structure);
    assert_eq!(a.uexp, b.uexp);
    assert_eq!(a.header, b.header);
    let header = files.header.len();
    assert_eq!(
        a.uexp,
        edited(
            &files.uexp,
            header,
            &[
                (MATERIALS_AT + 4 + 44, 0, vec![0; 4]),
                (MATERIALS_AT + 4 + 88, 0, vec![0; 4])
            ]
        )
    );
}

#[test]
fn generic_profile_changes_nothing() {
    let Some((files, stock)) = quinn() else {
        return;
    };
    let mut out = files.clone();
    let report = Profile::from_name("generic")
        .unwrap()
        .apply(&mut out, V56, Some(&stock))
        .unwrap();
    assert!(!report.changed());
    assert_eq!(out.header, files.header);
    assert_eq!(out.uexp, files.uexp);
    assert!(Profile::from_name("nope").is_err());
}

#[test]
fn mappings_of_another_game_fail_cleanly() {
    let Some((files, _)) = quinn() else { return };
    let corpus = fixups_support::common::corpus().unwrap();
    for other in [
        "uassetapi/TestManyAssets/Clay/Clay.usmap",
        "uassetapi/TestUE5_4/BlankGame/BlankGame_Dumper-7.usmap",
    ] {
        let m = Mappings::load(corpus.join(other)).unwrap();
        let mut out = files.clone();
        let o = options(|s| s.hidden_materials = false);
        match Profile::from_name("marvel-rivals")
            .unwrap()
            .apply_with(&mut out, V56, Some(&m), &o)
        {
            // Either the walk fails, or it lands on the same (only) valid position.
            Ok(r) => assert_eq!(r.exports[0].located_by, LocatedBy::MappingsAndStructure),
            Err(e) => {
                eprintln!("{other}: {e}");
                assert_eq!(out.uexp, files.uexp);
            }
        }
    }
}

#[test]
fn mutated_mesh_data_is_fixed_or_refused_cleanly() {
    let Some((files, stock)) = quinn() else {
        return;
    };
    let game = game_mappings(&stock);
    let mut seed = 0x9E3779B97F4A7C15u64;
    let (mut fixed, mut refused) = (0, std::collections::BTreeMap::<&str, usize>::new());
    // Bytes of the property block, native header, materials and the start of the skeleton.
    for round in 0..60 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let mut m = files.clone();
        let at = (seed as usize) % 1400;
        m.uexp[at] ^= (seed >> 40) as u8 | 1;
        if round % 3 == 0 {
            m.uexp.truncate(at + 1);
        }
        let maps = if round % 2 == 0 { Some(&game) } else { None };
        let before = m.clone();
        match Profile::from_name("marvel-rivals")
            .unwrap()
            .apply(&mut m, V56, maps)
        {
            Ok(report) => {
                // What was reported is what was done, and the result reads.
                fixed += 1;
                let grown = report.inserted_bytes as i64 - report.removed_bytes as i64;
                assert_eq!(
                    m.uexp.len() as i64 - before.uexp.len() as i64,
                    grown,
                    "round {round}: {report:?}"
                );
                m.read_package(Some(V56)).unwrap_or_else(|e| {
                    panic!("round {round}: the fixed package does not read: {e}")
                });
            }
            Err(e) => {
                // A clean refusal: a known kind, the file named, nothing changed.
                assert!(
                    ["format", "limit", "unsupported"].contains(&e.code()),
                    "round {round}: {}: {e}",
                    e.code()
                );
                assert_eq!(
                    e.file().and_then(|f| f.file_stem()),
                    files.path.file_stem(),
                    "round {round}: {e}"
                );
                assert!(
                    m.header == before.header && m.uexp == before.uexp,
                    "round {round}: a refused package was changed"
                );
                *refused.entry(e.code()).or_default() += 1;
            }
        }
    }
    eprintln!("mutated meshes: {fixed} fixed, refused {refused:?}");
    // Without the game's mappings the mesh is always refused (30 rounds);
    // with them some damaged meshes are still fixed.
    assert!(refused.values().sum::<usize>() >= 30, "{refused:?}");
    assert!(fixed > 0, "no mutated mesh was fixed: {refused:?}");
}
