//! Versioned packages say their own engine; unversioned ones need it given.
//! The corpus packages are all unversioned, so versioned ones are made from
//! them by storing the table's file versions in the summary.

mod common;

use zenpak::legacy::{LegacyPackage, NameEntry, PackageFiles};
use zenpak::EngineVersion;

fn load(rel: &str, engine: EngineVersion) -> Option<(Vec<u8>, LegacyPackage)> {
    let corpus = common::corpus()?;
    let files = PackageFiles::load(corpus.join(rel)).unwrap();
    let package = files.read_package(Some(engine)).unwrap();
    Some((files.header, package))
}

fn make_versioned(package: &LegacyPackage) -> Vec<u8> {
    let table = package.engine.legacy_file_versions();
    let mut versioned = package.clone();
    versioned.summary.file_version_ue4 = table.ue4;
    if versioned.summary.file_version_ue5.is_some() {
        versioned.summary.file_version_ue5 = Some(table.ue5);
    }
    versioned.summary.legacy_ue3_version = Some(864);
    versioned.write().unwrap()
}

#[test]
fn versioned_package_gives_its_engine() {
    let Some((_, package)) = load("retoc/UE5.6/SM_Cube.uasset", EngineVersion::UE5_6) else {
        return;
    };
    let bytes = make_versioned(&package);
    let read = LegacyPackage::read(&bytes, None).unwrap();
    assert_eq!(read.engine, EngineVersion::UE5_6);
    assert_eq!(read.versions.ue5, 1017);
    assert!(!read.summary.is_unversioned());
    assert_eq!(read.write().unwrap(), bytes);
    assert_eq!(read.exports, package.exports);
    assert!(LegacyPackage::read(&bytes, Some(EngineVersion::UE5_6)).is_ok());
    let mismatch = LegacyPackage::read(&bytes, Some(EngineVersion::UE5_7))
        .unwrap_err()
        .to_string();
    assert!(
        mismatch.contains("5.7") && mismatch.contains("1017"),
        "{mismatch}"
    );
}

#[test]
fn versioned_package_shared_by_two_releases_asks_for_the_engine() {
    let Some((_, package)) = load(
        "uassetapi/TestUE5_3/Engine/DefaultRecorderBoneCompression.uasset",
        EngineVersion::UE5_3,
    ) else {
        return;
    };
    let bytes = make_versioned(&package);
    let error = LegacyPackage::read(&bytes, None).unwrap_err().to_string();
    assert!(
        error.contains("5.2, 5.3") && error.contains("--engine"),
        "{error}"
    );
    assert_eq!(
        LegacyPackage::read(&bytes, Some(EngineVersion::UE5_3))
            .unwrap()
            .engine,
        EngineVersion::UE5_3
    );
}

#[test]
fn ue4_package_versions() {
    let Some((original, package)) = load("retoc/UE4.27/TestModUI.uasset", EngineVersion::UE4_27)
    else {
        return;
    };
    assert_eq!(package.versions.legacy, -7);
    assert_eq!(package.summary.file_version_ue5, None);
    assert_eq!(
        package.package_name(),
        None,
        "UE4 cooks do not store the package name"
    );
    assert!(package
        .imports
        .iter()
        .all(|i| i.package_name.is_none() && i.import_optional.is_none()));
    assert_eq!(package.write().unwrap(), original);
    let bytes = make_versioned(&package);
    let error = LegacyPackage::read(&bytes, None).unwrap_err().to_string();
    assert!(error.contains("4.26, 4.27"), "{error}");
    let read = LegacyPackage::read(&bytes, Some(EngineVersion::UE4_27)).unwrap();
    assert_eq!(read.imports, package.imports);
    // An unversioned UE4 package read as UE5 fails on the legacy file version.
    let error = LegacyPackage::read(&original, Some(EngineVersion::UE5_1))
        .unwrap_err()
        .to_string();
    assert!(error.contains("-7") && error.contains("5.1"), "{error}");
}

#[test]
fn object_paths_follow_engine_delimiters() {
    let Some((_, package)) = load("retoc/UE5.6/SM_Cube.uasset", EngineVersion::UE5_6) else {
        return;
    };
    let paths: Vec<String> = (0..package.imports.len())
        .map(|i| package.import_path(i).unwrap())
        .collect();
    assert!(
        paths.contains(&"/Script/Engine.StaticMesh".to_string()),
        "{paths:?}"
    );
    assert!(paths.contains(&"/Script/Engine".to_string()), "{paths:?}");
    assert_eq!(
        package.export_path(2, None).unwrap(),
        "/Game/LevelPrototyping/Meshes/SM_Cube.SM_Cube"
    );
    assert_eq!(
        package.export_path(0, None).unwrap(),
        "/Game/LevelPrototyping/Meshes/SM_Cube.SM_Cube:BodySetup_1"
    );
    assert_eq!(
        package.export_path(2, Some("/Game/Other")).unwrap(),
        "/Game/Other.SM_Cube"
    );
    let static_mesh = paths
        .iter()
        .position(|p| p == "/Script/Engine.StaticMesh")
        .unwrap();
    assert_eq!(
        package.import_package_name(static_mesh).unwrap(),
        "/Script/Engine"
    );
}

#[test]
fn export_data_comes_from_the_uexp() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let files = PackageFiles::load(corpus.join("retoc/UE5.6/SM_Cube.uasset")).unwrap();
    let package = files.read_package(Some(EngineVersion::UE5_6)).unwrap();
    let mut total = 0;
    for i in 0..package.exports.len() {
        let data = files.export_data(&package, i).unwrap();
        assert_eq!(data.len() as i64, package.exports[i].serial_size);
        total += data.len();
    }
    // The .uexp holds the exports back to back, then the 4-byte package tag.
    assert_eq!(total + 4, files.uexp.len());
    assert_eq!(files.uexp[files.uexp.len() - 4..], [0xC1, 0x83, 0x2A, 0x9E]);
    assert_eq!(files.bulk.len(), 1);
    assert_eq!(
        files.bulk[0].size,
        std::fs::metadata(corpus.join("retoc/UE5.6/SM_Cube.ubulk"))
            .unwrap()
            .len()
    );
    assert_eq!(
        package.summary.bulk_data_start_offset as u64,
        files.combined_len() - 4
    );
}

#[test]
fn edited_package_writes_consistent_offsets() {
    let Some((original, package)) = load(
        "retoc/UE5.6/BP_ThirdPersonCharacter.uasset",
        EngineVersion::UE5_6,
    ) else {
        return;
    };
    let mut edited = package.clone();
    edited.names.push(NameEntry {
        text: "ZenpakAddedName".into(),
        utf16: false,
        non_case_preserving_hash: 0,
        case_preserving_hash: 0,
    });
    edited.names.push(NameEntry {
        text: "Größe日本".into(),
        utf16: true,
        non_case_preserving_hash: 1,
        case_preserving_hash: 2,
    });
    let bytes = edited.write().unwrap();
    let grown = bytes.len() - original.len();
    assert_eq!(grown, (4 + 16 + 4) + (4 + 2 * 8 + 4));
    let read = LegacyPackage::read(&bytes, Some(EngineVersion::UE5_6)).unwrap();
    assert_eq!(read.names, edited.names);
    assert_eq!(read.imports, package.imports);
    assert_eq!(read.exports, package.exports);
    assert_eq!(read.preload_dependencies, package.preload_dependencies);
    assert_eq!(read.summary.total_header_size as usize, bytes.len());
    assert_eq!(
        read.summary.import_offset,
        package.summary.import_offset + grown as i32
    );
}

#[test]
fn grown_export_shifts_later_exports_and_rebuilds_the_uexp() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let files = PackageFiles::load(corpus.join("retoc/UE5.6/SM_Cube.uasset")).unwrap();
    let package = files.read_package(Some(EngineVersion::UE5_6)).unwrap();
    let mut data: Vec<Vec<u8>> = (0..package.exports.len())
        .map(|i| files.export_data(&package, i).unwrap().to_vec())
        .collect();
    // Unchanged: the rebuilt .uexp is the original.
    assert_eq!(
        PackageFiles::build_uexp(&package, &data, true).unwrap(),
        files.uexp
    );
    // Grow export 0 (the first in the file) by 8 bytes.
    let mut grown = package.clone();
    data[0].extend_from_slice(&[0; 8]);
    grown.exports[0].serial_size += 8;
    assert!(
        PackageFiles::build_uexp(&grown, &data, true).is_err(),
        "stale offsets must be refused"
    );
    grown.assign_export_offsets().unwrap();
    let uexp = PackageFiles::build_uexp(&grown, &data, true).unwrap();
    assert_eq!(uexp.len(), files.uexp.len() + 8);
    assert_eq!(
        grown.exports[1].serial_offset,
        package.exports[1].serial_offset + 8
    );
    assert_eq!(
        grown.exports[0].serial_offset,
        package.exports[0].serial_offset
    );
    assert_eq!(
        grown.summary.bulk_data_start_offset,
        package.summary.bulk_data_start_offset + 8
    );
    assert_eq!(grown.write().unwrap().len(), files.header.len());
}
