//! The marvel-rivals profile: exact padding of SkeletalMesh materials, and
//! nothing else changes.

mod common;

use zenpak::fixups::skeletal_mesh::parse_at;
use zenpak::fixups::{FixupReport, Profile};
use zenpak::legacy::{LegacyPackage, PackageFiles, PackageIndex, ResolvedIndex};
use zenpak::mappings::Mappings;
use zenpak::properties::PackageContext;
use zenpak::EngineVersion;

const V56: EngineVersion = EngineVersion::UE5_6;

fn quinn() -> Option<(PackageFiles, Mappings)> {
    let corpus = common::corpus()?;
    let dir = corpus.join("uassetapi/TestUE5_6/BpThirdPerson");
    let files = PackageFiles::load(dir.join("SKM_Quinn_Simple.uasset")).unwrap();
    let mappings = Mappings::load(dir.join("ExplicitEnumValuesExample.usmap")).unwrap();
    Some((files, mappings))
}

/// `original` with `insert` (uexp offset → bytes) applied.
fn with_insertions(original: &[u8], points: &[usize], bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(original.len() + points.len() * bytes.len());
    let mut last = 0;
    for &p in points {
        out.extend_from_slice(&original[last..p]);
        out.extend_from_slice(bytes);
        last = p;
    }
    out.extend_from_slice(&original[last..]);
    out
}

/// The header fields a padding may change; everything else must be equal.
fn assert_header_shifted(
    before: &LegacyPackage,
    after: &LegacyPackage,
    grown: &[(usize, i64)],
    shift_after: &dyn Fn(i64) -> i64,
) {
    let mut expected = before.clone();
    for e in expected.exports.iter_mut() {
        e.serial_offset += shift_after(e.serial_offset);
    }
    for &(index, by) in grown {
        expected.exports[index].serial_size += by;
    }
    let total: i64 = grown.iter().map(|g| g.1).sum();
    expected.summary.bulk_data_start_offset += total;
    if let Some(r) = expected.data_resources.as_mut() {
        for entry in &mut r.entries {
            if entry.legacy_bulk_data_flags & 0x101 == 0 && entry.serial_offset >= 0 {
                entry.serial_offset += shift_after(entry.serial_offset);
            }
        }
    }
    assert_eq!(&expected, after);
}

fn apply(files: &PackageFiles, mappings: Option<&Mappings>) -> (PackageFiles, FixupReport) {
    let mut out = files.clone();
    let report = Profile::MarvelRivals
        .apply(&mut out, V56, mappings)
        .unwrap();
    (out, report)
}

#[test]
fn quinn_gets_one_empty_tag_container_after_each_material() {
    let Some((files, mappings)) = quinn() else {
        return;
    };
    let before = files.read_package(Some(V56)).unwrap();
    let (padded, report) = apply(&files, Some(&mappings));
    // Two materials of 44 bytes (5.6) at .uexp offset 528: 8 bytes inserted, one after each entry.
    assert_eq!(V56.skeletal_material_size(), 44);
    assert_eq!(report.inserted_bytes, 8);
    assert_eq!(report.exports.len(), 1);
    assert_eq!(report.exports[0].located_by, "mappings and structure");
    let header_len = files.header.len();
    let materials = header_len + 528;
    let entry_ends = [materials + 4 + 44, materials + 4 + 88];
    assert_eq!(
        report.exports[0].insertions,
        entry_ends.iter().map(|&e| e as u64).collect::<Vec<_>>()
    );
    // The 89-bone reference skeleton (root parent -1) follows the materials.
    let cx = PackageContext::of(&before);
    let layout = parse_at(
        files.export_data(&before, 0).unwrap(),
        before.exports[0].serial_offset as u64,
        materials - header_len,
        &cx,
        false,
    )
    .unwrap();
    assert_eq!(layout.bone_count, 89);
    assert_eq!(layout.material_count(), 2);
    // .uexp: the original with 4 zero bytes at each entry end, nothing else.
    let points: Vec<usize> = entry_ends.iter().map(|e| e - header_len).collect();
    assert_eq!(
        padded.uexp,
        with_insertions(&files.uexp, &points, &[0, 0, 0, 0])
    );
    // Header: only the sizes and offsets that follow the insertions moved.
    let after = padded.read_package(Some(V56)).unwrap();
    let first = entry_ends[0] as i64;
    assert_header_shifted(&before, &after, &[(0, 8)], &|o| {
        if o >= first {
            8
        } else {
            0
        }
    });
    // The padded export re-parses with the padded layout.
    let relayout = parse_at(
        padded.export_data(&after, 0).unwrap(),
        after.exports[0].serial_offset as u64,
        materials - header_len,
        &PackageContext::of(&after),
        true,
    )
    .unwrap();
    assert_eq!(relayout.bone_count, 89);
}

#[test]
fn quinn_structure_search_alone_gives_the_same_bytes() {
    let Some((files, mappings)) = quinn() else {
        return;
    };
    let (with_mappings, a) = apply(&files, Some(&mappings));
    let (without, b) = apply(&files, None);
    assert_eq!(b.exports[0].located_by, "structure");
    assert_eq!(a.exports[0].insertions, b.exports[0].insertions);
    assert_eq!(with_mappings.header, without.header);
    assert_eq!(with_mappings.uexp, without.uexp);
}

#[test]
fn generic_profile_changes_nothing() {
    let Some((files, mappings)) = quinn() else {
        return;
    };
    let mut out = files.clone();
    let report = Profile::from_name("generic")
        .unwrap()
        .apply(&mut out, V56, Some(&mappings))
        .unwrap();
    assert!(!report.changed());
    assert_eq!(out.header, files.header);
    assert_eq!(out.uexp, files.uexp);
    assert!(Profile::from_name("nope").is_err());
}

#[test]
fn padding_twice_is_refused() {
    let Some((files, mappings)) = quinn() else {
        return;
    };
    let (padded, _) = apply(&files, Some(&mappings));
    let mut again = padded.clone();
    let e = Profile::MarvelRivals
        .apply(&mut again, V56, Some(&mappings))
        .unwrap_err();
    eprintln!("{e}");
    assert_eq!(again.uexp, padded.uexp);
    let mut again = padded.clone();
    let e = Profile::MarvelRivals
        .apply(&mut again, V56, None)
        .unwrap_err();
    assert!(e.hint().is_some_and(|h| h.contains("--mappings")), "{e}");
}

#[test]
fn mappings_of_another_game_fail_cleanly() {
    let Some((files, _)) = quinn() else { return };
    let corpus = common::corpus().unwrap();
    for other in [
        "uassetapi/TestManyAssets/Clay/Clay.usmap",
        "uassetapi/TestUE5_4/BlankGame/BlankGame_Dumper-7.usmap",
    ] {
        let m = Mappings::load(corpus.join(other)).unwrap();
        let mut out = files.clone();
        match Profile::MarvelRivals.apply(&mut out, V56, Some(&m)) {
            // Either the walk fails, or it lands on the same (only) valid position.
            Ok(r) => assert_eq!(r.exports[0].located_by, "mappings and structure"),
            Err(e) => {
                eprintln!("{other}: {e}");
                assert_eq!(out.uexp, files.uexp);
            }
        }
    }
}

#[test]
fn packages_without_skeletal_mesh_are_byte_identical() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let mut checked = 0;
    for (path, engine) in common::legacy_packages(&corpus) {
        let files = PackageFiles::load(&path).unwrap();
        let mut out = files.clone();
        let report = Profile::MarvelRivals.apply(&mut out, engine, None).unwrap();
        if path.ends_with("SKM_Quinn_Simple.uasset") {
            assert!(report.changed());
            continue;
        }
        assert!(!report.changed(), "{}", path.display());
        assert_eq!(out.header, files.header, "{}", path.display());
        assert_eq!(out.uexp, files.uexp, "{}", path.display());
        checked += 1;
    }
    eprintln!("{checked} packages without a SkeletalMesh come out byte-identical");
    assert!(checked > 200);
}

// ---------------------------------------------------------------------------
// Synthetic packages made with the legacy writer from SKM_Quinn_Simple.
// ---------------------------------------------------------------------------

/// An export data blob for a plain object: empty unversioned header, no object GUID.
fn plain_object_data(payload: &[u8]) -> Vec<u8> {
    let mut d = vec![0x00, 0x01, 0, 0, 0, 0];
    d.extend_from_slice(payload);
    d
}

/// Rebuilds `files` with `package` and the given export data blobs (in
/// export order), recomputing serial offsets and the bulk data start.
fn rebuild(
    files: &PackageFiles,
    mut package: LegacyPackage,
    datas: &[Vec<u8>],
    data_resource_shift: i64,
) -> PackageFiles {
    let old_header = files.header.len() as i64;
    let header_len = package.write().unwrap().len() as i64;
    let mut offset = header_len;
    for (e, d) in package.exports.iter_mut().zip(datas) {
        e.serial_offset = offset;
        e.serial_size = d.len() as i64;
        offset += d.len() as i64;
    }
    let mut uexp: Vec<u8> = datas.concat();
    uexp.extend_from_slice(&[0xC1, 0x83, 0x2A, 0x9E]);
    package.summary.bulk_data_start_offset = header_len + uexp.len() as i64 - 4;
    if let Some(r) = package.data_resources.as_mut() {
        for entry in &mut r.entries {
            entry.serial_offset += header_len - old_header + data_resource_shift;
        }
    }
    let header = package.write().unwrap();
    assert_eq!(header.len() as i64, header_len);
    let out = PackageFiles {
        header,
        uexp,
        ..files.clone()
    };
    out.read_package(Some(V56))
        .expect("synthetic package reads back");
    out
}

/// Adds the class import `/Script/Engine.Skeleton` (modelled on the
/// package's `/Script/Engine.SkeletalMesh` class import) and returns it.
fn add_skeleton_class(package: &mut LegacyPackage) -> PackageIndex {
    let mesh_class = package.imports[0].clone();
    assert_eq!(
        package.name(mesh_class.object_name).unwrap(),
        "SkeletalMesh"
    );
    let skeleton_name = package
        .imports
        .iter()
        .map(|i| i.class_name)
        .find(|n| package.name(*n).unwrap() == "Skeleton")
        .expect("the name Skeleton is in the name map");
    let mut import = mesh_class;
    import.object_name = skeleton_name;
    package.imports.push(import);
    PackageIndex::from_import(package.imports.len() - 1)
}

#[test]
fn synthetic_mesh_with_three_materials_not_last() {
    let Some((files, mappings)) = quinn() else {
        return;
    };
    let package = files.read_package(Some(V56)).unwrap();
    let mesh = files.export_data(&package, 0).unwrap().to_vec();
    // Third material: a copy of the second, inserted after it; count 2 → 3.
    let at = 528; // .uexp offset of the count; the mesh data starts at .uexp 0
    let mut mesh3 = mesh[..at].to_vec();
    mesh3.extend_from_slice(&3i32.to_le_bytes());
    mesh3.extend_from_slice(&mesh[at + 4..at + 4 + 88]);
    mesh3.extend_from_slice(&mesh[at + 4 + 44..at + 4 + 88]);
    mesh3.extend_from_slice(&mesh[at + 4 + 88..]);
    // Two more exports after the mesh, of another class, named like the mesh with suffixes.
    let mut synthetic = package.clone();
    let other_class = add_skeleton_class(&mut synthetic);
    for k in 1..=2u32 {
        let mut e = package.exports[0].clone();
        e.class_index = other_class;
        e.object_name.number = k;
        e.outer_index = PackageIndex::NULL;
        e.is_asset = false;
        e.first_export_dependency = -1;
        e.serialization_before_serialization_dependencies = 0;
        e.create_before_serialization_dependencies = 0;
        e.serialization_before_create_dependencies = 0;
        e.create_before_create_dependencies = 0;
        synthetic.exports.push(e);
        if synthetic.depends_map.len() == synthetic.exports.len() - 1 {
            synthetic.depends_map.push(Vec::new());
        }
    }
    let a = plain_object_data(&[1, 2, 3, 4, 5, 6, 7, 8]);
    let b = plain_object_data(&[9; 13]);
    let built = rebuild(&files, synthetic, &[mesh3, a.clone(), b.clone()], 44);
    let before = built.read_package(Some(V56)).unwrap();
    for maps in [Some(&mappings), None] {
        let mut out = built.clone();
        let report = Profile::MarvelRivals.apply(&mut out, V56, maps).unwrap();
        assert_eq!(report.inserted_bytes, 12);
        assert_eq!(report.exports.len(), 1);
        let expected_route = if maps.is_some() {
            "mappings and structure"
        } else {
            "structure"
        };
        assert_eq!(report.exports[0].located_by, expected_route);
        let header_len = built.header.len();
        let first_entry = header_len + at + 4;
        let ends: Vec<usize> = (1..=3).map(|k| first_entry + 44 * k).collect();
        assert_eq!(
            report.exports[0].insertions,
            ends.iter().map(|&e| e as u64).collect::<Vec<_>>()
        );
        let points: Vec<usize> = ends.iter().map(|e| e - header_len).collect();
        assert_eq!(
            out.uexp,
            with_insertions(&built.uexp, &points, &[0, 0, 0, 0])
        );
        let after = out.read_package(Some(V56)).unwrap();
        let first = ends[0] as i64;
        assert_header_shifted(&before, &after, &[(0, 12)], &|o| {
            if o >= first {
                12
            } else {
                0
            }
        });
        // The later exports moved by 12 bytes and kept their data.
        assert_eq!(out.export_data(&after, 1).unwrap(), &a[..]);
        assert_eq!(out.export_data(&after, 2).unwrap(), &b[..]);
        assert_eq!(
            after.exports[1].serial_offset,
            before.exports[1].serial_offset + 12
        );
    }
}

#[test]
fn synthetic_skeleton_asset_is_untouched() {
    let Some((files, _)) = quinn() else { return };
    let package = files.read_package(Some(V56)).unwrap();
    let cx = PackageContext::of(&package);
    let mesh = files.export_data(&package, 0).unwrap();
    let base = package.exports[0].serial_offset as u64;
    let layout = parse_at(mesh, base, 528, &cx, false).unwrap();
    // A Skeleton's data: its (empty) property block, then a reference skeleton
    // (here the mesh's own) and more native data.
    let skeleton_start = (*layout.entry_ends.last().unwrap() - base) as usize;
    let skeleton_end = (layout.skeleton_end - base) as usize;
    let data = plain_object_data(&mesh[skeleton_start..skeleton_end + 64]);
    let mut synthetic = package.clone();
    synthetic.exports[0].class_index = add_skeleton_class(&mut synthetic);
    let built = rebuild(&files, synthetic, &[data], 0);
    let p = built.read_package(Some(V56)).unwrap();
    assert!(matches!(
        p.exports[0].class_index.resolve(),
        ResolvedIndex::Import(_)
    ));
    // Its reference skeleton alone is not mistaken for a mesh's materials chain.
    let data = built.export_data(&p, 0).unwrap();
    let found = zenpak::fixups::skeletal_mesh::search_by_structure(
        data,
        p.exports[0].serial_offset as u64,
        &PackageContext::of(&p),
    );
    assert!(found.is_empty());
    let mut out = built.clone();
    let report = Profile::MarvelRivals.apply(&mut out, V56, None).unwrap();
    assert!(!report.changed());
    assert_eq!(out.header, built.header);
    assert_eq!(out.uexp, built.uexp);
}

#[test]
fn mutated_mesh_data_never_panics() {
    let Some((files, mappings)) = quinn() else {
        return;
    };
    let mut seed = 0x9E3779B97F4A7C15u64;
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
        let maps = if round % 2 == 0 {
            Some(&mappings)
        } else {
            None
        };
        let _ = Profile::MarvelRivals.apply(&mut m, V56, maps);
    }
}
