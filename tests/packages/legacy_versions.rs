//! Versioned packages say their own engine; unversioned ones need it given.
//! The corpus packages are all unversioned, so versioned ones are made from
//! them by storing the table's file versions in the summary.

use crate::common;

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
    // Given another release (a 5.6 package in a 5.7 game), the package is read
    // with its own versions, as the engine reads it, and that is a warning.
    let other = LegacyPackage::read(&bytes, Some(EngineVersion::UE5_7)).unwrap();
    assert_eq!(other.engine, EngineVersion::UE5_6);
    assert_eq!(other.versions, read.versions);
    assert_eq!(other.exports, package.exports);
    let warning = other.version_warning.as_ref().expect("a warning");
    assert_eq!(warning.level, zenpak::diagnostic::Level::Warning);
    assert_eq!(warning.code, "versioned-package");
    assert!(read.version_warning.is_none());
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
    // Two releases share these versions: the reader asks for the engine.
    let error = LegacyPackage::read(&bytes, None).unwrap_err();
    assert_eq!(error.code(), "format", "{error}");
    assert_eq!(error.offset(), Some(4), "{error}");
    assert!(error.hint().is_some(), "{error}");
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
    let error = LegacyPackage::read(&bytes, None).unwrap_err();
    assert_eq!(error.code(), "format", "{error}");
    assert!(error.hint().is_some(), "{error}");
    let read = LegacyPackage::read(&bytes, Some(EngineVersion::UE4_27)).unwrap();
    assert_eq!(read.imports, package.imports);
    // An unversioned UE4 package read as UE5 fails on the legacy file version.
    // (The legacy file version is the summary's first field after the tag.)
    let error = LegacyPackage::read(&original, Some(EngineVersion::UE5_1)).unwrap_err();
    assert_eq!(error.code(), "format", "{error}");
    assert_eq!(error.offset(), Some(4), "{error}");
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

/// A small package built from scratch for every release: names (one wide),
/// script and package imports, two exports with preload dependencies, a soft
/// package reference and (5.2+) a data resource. It must read back equal.
#[test]
fn synthetic_package_round_trips_for_every_release() {
    use zenpak::legacy::{
        DataResource, DataResources, FName, ObjectExport, ObjectImport, PackageIndex,
    };
    use zenpak::version::ue5_object_version as ue5v;
    for engine in EngineVersion::ALL {
        let mut package = LegacyPackage::new_cooked(engine, Some("/Game/Mods/Thing"));
        for text in [
            "/Script/CoreUObject",
            "/Script/Engine",
            "Class",
            "Package",
            "StaticMesh",
            "Default__StaticMesh",
            "Thing",
            "Größe日本",
            "/Game/Other",
        ] {
            package.names.push(NameEntry::new(text));
        }
        let name = |i: u32| FName::new(i, 0);
        let ue5 = engine.is_ue5();
        let ue5_version = engine.legacy_file_versions().ue5;
        let import = |class_package, class_name, outer, object_name| ObjectImport {
            class_package: name(class_package),
            class_name: name(class_name),
            outer_index: outer,
            object_name: name(object_name),
            package_name: None,
            import_optional: ue5.then_some(false),
        };
        package.imports = vec![
            import(0, 3, PackageIndex::NULL, 1),           // /Script/Engine
            import(0, 2, PackageIndex::from_import(0), 4), // /Script/Engine.StaticMesh
            import(1, 4, PackageIndex::from_import(0), 5), // /Script/Engine.Default__StaticMesh
        ];
        let export =
            |outer: PackageIndex, object: u32, size: i64, first_dep: i32, deps: [i32; 4]| {
                ObjectExport {
                    class_index: PackageIndex::from_import(1),
                    super_index: PackageIndex::NULL,
                    template_index: PackageIndex::from_import(2),
                    outer_index: outer,
                    object_name: FName::new(object, if outer.is_null() { 0 } else { 2 }),
                    object_flags: 0x0000_0001,
                    serial_size: size,
                    serial_offset: 0,
                    forced_export: false,
                    not_for_client: false,
                    not_for_server: false,
                    package_guid: (ue5_version < ue5v::REMOVE_OBJECT_EXPORT_PACKAGE_GUID)
                        .then_some([0; 16]),
                    is_inherited_instance: (ue5_version >= ue5v::TRACK_OBJECT_EXPORT_IS_INHERITED)
                        .then_some(false),
                    package_flags: 0,
                    not_always_loaded_for_editor_game: true,
                    is_asset: outer.is_null(),
                    generate_public_hash: ue5.then_some(outer.is_null()),
                    first_export_dependency: first_dep,
                    serialization_before_serialization_dependencies: deps[0],
                    create_before_serialization_dependencies: deps[1],
                    serialization_before_create_dependencies: deps[2],
                    create_before_create_dependencies: deps[3],
                    script_serialization_start_offset: None,
                    script_serialization_end_offset: None,
                }
            };
        package.exports = vec![
            export(PackageIndex::NULL, 6, 100, 0, [0, 1, 2, 0]),
            export(PackageIndex::from_export(0), 6, 40, 3, [0, 0, 1, 1]),
        ];
        package.depends_map = vec![Vec::new(), Vec::new()];
        package.preload_dependencies = vec![
            PackageIndex::from_export(1),
            PackageIndex::from_import(1),
            PackageIndex::from_import(2),
            PackageIndex::from_import(1),
            PackageIndex::from_export(0),
        ];
        package.soft_package_references = vec![name(8)];
        if engine >= EngineVersion::UE5_2 {
            package.data_resources = Some(DataResources {
                version: 2,
                entries: vec![DataResource {
                    flags: 0,
                    cooked_index: Some(0),
                    serial_offset: 0,
                    duplicate_serial_offset: -1,
                    serial_size: 16,
                    raw_size: 16,
                    outer_index: PackageIndex::from_export(0),
                    legacy_bulk_data_flags: 0x48,
                }],
            });
        }
        package.summary.generations[0] = zenpak::legacy::Generation {
            export_count: 2,
            name_count: 9,
        };
        package.assign_export_offsets().unwrap();
        let bytes = package.write().unwrap();
        let read =
            LegacyPackage::read(&bytes, Some(engine)).unwrap_or_else(|e| panic!("{engine}: {e}"));
        assert_eq!(read.write().unwrap(), bytes, "{engine}");
        assert_eq!(read.names, package.names, "{engine}");
        assert_eq!(read.imports, package.imports, "{engine}");
        assert_eq!(read.exports, package.exports, "{engine}");
        assert_eq!(
            read.preload_dependencies, package.preload_dependencies,
            "{engine}"
        );
        assert_eq!(
            read.soft_package_references, package.soft_package_references,
            "{engine}"
        );
        assert_eq!(read.data_resources, package.data_resources, "{engine}");
        assert_eq!(
            read.exports[0].serial_offset,
            bytes.len() as i64,
            "{engine}"
        );
        assert_eq!(
            read.summary.bulk_data_start_offset,
            bytes.len() as i64 + 140,
            "{engine}"
        );
        assert!(read.names.iter().all(|n| n.hashes_match()));
        assert_eq!(read.import_path(1).unwrap(), "/Script/Engine.StaticMesh");
        assert_eq!(
            read.export_path(1, None).unwrap(),
            "/Game/Mods/Thing.Thing:Thing_1"
        );
        let deps = read.export_preload_dependencies(0).unwrap();
        assert_eq!(deps[1], &[PackageIndex::from_export(1)][..]);
        assert!(
            LegacyPackage::read(&bytes, None).is_err(),
            "{engine}: unversioned needs an engine"
        );
    }
}
