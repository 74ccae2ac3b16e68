//! The example mod (`examples/hello-mod`): its committed content is exactly
//! what `examples/make_hello_mod.rs` writes, the packages read back and
//! convert, and the mod builds into a container that verifies and holds
//! every package and the loose file.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use zenpak::binary::Reader;
use zenpak::build::{build, BuildOptions, Silent};
use zenpak::hash::package_id;
use zenpak::iostore::Container;
use zenpak::legacy::{PackageFiles, PackageIndex};
use zenpak::manifest::Manifest;
use zenpak::pak::reader::PakReader;
use zenpak::EngineVersion;

#[allow(dead_code)] // the generator's `main` is not called here
#[path = "../../examples/make_hello_mod.rs"]
mod generator;

const ENGINE: EngineVersion = EngineVersion::UE5_6;
const STRING_TABLE: &str = "HelloGame/Content/HelloMod/ST_HelloMod.uasset";
const SETTINGS: &str = "HelloGame/Content/HelloMod/DA_HelloModSettings.uasset";
const INI: &str = "HelloGame/Config/DefaultHelloMod.ini";

fn example_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/hello-mod")
}

/// Every file under `root`, relative to it, with `/` separators.
fn files_under(root: &Path) -> BTreeSet<String> {
    walkdir::WalkDir::new(root)
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            let relative = e.path().strip_prefix(root).unwrap();
            relative.to_string_lossy().replace('\\', "/")
        })
        .collect()
}

#[test]
fn committed_content_is_what_the_generator_writes() {
    let first = generator::generate().unwrap();
    assert_eq!(
        first,
        generator::generate().unwrap(),
        "the generator is not deterministic"
    );

    let dir = tempfile::tempdir().unwrap();
    generator::write_to(dir.path()).unwrap();
    let committed_root = example_dir().join("Cooked");
    let generated = files_under(dir.path());
    assert_eq!(
        files_under(&committed_root),
        generated,
        "examples/hello-mod/Cooked has other files than the generator writes; run `cargo run --example make_hello_mod`"
    );
    for relative in &generated {
        let committed = std::fs::read(committed_root.join(relative)).unwrap();
        let fresh = std::fs::read(dir.path().join(relative)).unwrap();
        assert!(
            committed == fresh,
            "{relative} differs from the generator's output; run `cargo run --example make_hello_mod`"
        );
    }
}

/// Reads an `FString` and checks it is `expected`.
fn expect_string(r: &mut Reader, expected: &str) {
    assert_eq!(r.fstring().unwrap(), expected);
}

#[test]
fn packages_read_back_and_convert() {
    let root = example_dir().join("Cooked");

    // The string table: header, then the layout the engine's UStringTable
    // serializer writes (checked in the corpus's SN2 ST_Attributes).
    let files = PackageFiles::load(root.join(STRING_TABLE)).unwrap();
    let table = files.read_package(Some(ENGINE)).unwrap();
    assert!(table.summary.is_unversioned());
    assert_eq!(table.package_name(), Some("/Game/HelloMod/ST_HelloMod"));
    assert_eq!(
        table.write().unwrap(),
        files.header,
        "the header does not rewrite byte for byte"
    );
    assert_eq!(table.exports.len(), 1);
    assert_eq!(
        table
            .import_path(table.exports[0].class_index.import().unwrap())
            .unwrap(),
        "/Script/Engine.StringTable"
    );
    assert!(files
        .uexp
        .ends_with(&zenpak::legacy::PACKAGE_FILE_TAG.to_le_bytes()));
    assert_eq!(
        table.summary.bulk_data_start_offset,
        files.combined_len() as i64 - 4
    );
    let data = files.export_data(&table, 0).unwrap();
    let mut r = Reader::new(data);
    let end = table.exports[0].script_serialization_end_offset.unwrap() as usize;
    r.seek(end).unwrap();
    assert!(!r.bool32().unwrap(), "no object GUID");
    expect_string(&mut r, "HelloMod");
    assert_eq!(r.i32().unwrap(), 3);
    for key in ["Farewell", "Greeting", "Tip"] {
        expect_string(&mut r, key);
        r.fstring().unwrap();
    }
    assert_eq!(r.i32().unwrap(), 1);
    expect_string(&mut r, "Greeting");
    assert_eq!(r.i32().unwrap(), 1);
    let id = r.u32().unwrap();
    assert_eq!(table.names[id as usize].text, "Comment");
    r.u32().unwrap();
    r.fstring().unwrap();
    assert!(r.at_end(), "bytes after the string table's metadata");

    // The settings asset imports the string table's object.
    let files = PackageFiles::load(root.join(SETTINGS)).unwrap();
    let settings = files.read_package(Some(ENGINE)).unwrap();
    assert_eq!(settings.write().unwrap(), files.header);
    files.check_exports(&settings).unwrap();
    let import_paths: Vec<String> = (0..settings.imports.len())
        .map(|i| settings.import_path(i).unwrap())
        .collect();
    assert!(
        import_paths.contains(&"/Game/HelloMod/ST_HelloMod.ST_HelloMod".to_string()),
        "{import_paths:?}"
    );
    let [_, create_before_serialize, _, _] = settings.export_preload_dependencies(0).unwrap();
    assert_eq!(
        create_before_serialize
            .iter()
            .map(|i| settings.object_path(*i, None).unwrap())
            .collect::<Vec<_>>(),
        ["/Game/HelloMod/ST_HelloMod.ST_HelloMod"]
    );
    // The `Texts` property's value is that import: the class serialization
    // control byte, then a 5.4+ tag (name, type tree
    // `ObjectProperty(StringTable(/Script/Engine))`, size, flags) and the value.
    let data = files.export_data(&settings, 0).unwrap();
    let mut r = Reader::new(data);
    let name = |r: &mut Reader| {
        let index = r.u32().unwrap() as usize;
        assert_eq!(r.u32().unwrap(), 0, "name number");
        settings.names[index].text.clone()
    };
    assert_eq!(r.u8().unwrap(), 0, "serialization control");
    assert_eq!(name(&mut r), "Texts");
    for (node, inner) in [
        ("ObjectProperty", 1),
        ("StringTable", 1),
        ("/Script/Engine", 0),
    ] {
        assert_eq!((name(&mut r), r.i32().unwrap()), (node.to_string(), inner));
    }
    assert_eq!(
        (r.i32().unwrap(), r.u8().unwrap()),
        (4, 0),
        "size and flags"
    );
    let table_import = import_paths
        .iter()
        .position(|p| p.ends_with(".ST_HelloMod"))
        .unwrap();
    assert_eq!(
        PackageIndex(r.i32().unwrap()),
        PackageIndex::from_import(table_import)
    );

    // Conversion: the export data's names keep their indices in the Zen
    // name map, and the settings package imports the string table package.
    let converted = zenpak::zen::convert(
        &files,
        &settings,
        ENGINE,
        "/Game/HelloMod/DA_HelloModSettings",
    )
    .unwrap();
    let referenced = settings
        .summary
        .names_referenced_from_export_data_count
        .unwrap() as usize;
    for (legacy, zen) in settings.names[..referenced]
        .iter()
        .zip(&converted.package.names)
    {
        assert_eq!(legacy.text, zen.text);
    }
    assert_eq!(
        converted.store_entry.imported_packages,
        [package_id("/Game/HelloMod/ST_HelloMod")]
    );
}

#[test]
fn example_builds_into_a_container_that_verifies() {
    // Build a copy, so nothing is written into the repository.
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("hello-mod");
    std::fs::create_dir_all(&repo).unwrap();
    std::fs::copy(example_dir().join("mod.toml"), repo.join("mod.toml")).unwrap();
    let cooked = example_dir().join("Cooked");
    for relative in files_under(&cooked) {
        let to = repo.join("Cooked").join(&relative);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(cooked.join(&relative), to).unwrap();
    }

    let manifest = Manifest::load(&repo.join("mod.toml")).unwrap();
    assert_eq!(manifest.game.engine, ENGINE);
    let summary = build(&manifest, &BuildOptions::default(), &Silent).unwrap();
    assert_eq!((summary.packages, summary.loose_files), (2, 1));

    let container = Container::open(&repo.join("target/HelloMod_P.utoc"), None).unwrap();
    let report = container.verify();
    assert!(report.errors.is_empty(), "verify: {:?}", report.errors);
    assert_eq!(report.packages, 2);
    let header = container
        .container_header()
        .unwrap()
        .expect("container header");
    let store_ids: BTreeSet<u64> = header.packages.iter().map(|(id, _)| *id).collect();

    for (relative, package_name) in [
        (STRING_TABLE, "/Game/HelloMod/ST_HelloMod"),
        (SETTINGS, "/Game/HelloMod/DA_HelloModSettings"),
    ] {
        let index = container.find_path(relative).unwrap_or_else(|| {
            panic!(
                "{relative} is not in the directory index: {:?}",
                container.paths.values().collect::<Vec<_>>()
            )
        });
        assert!(
            store_ids.contains(&package_id(package_name)),
            "no store entry for {package_name}"
        );
        let files = PackageFiles::load(cooked.join(relative)).unwrap();
        let package = files.read_package(Some(ENGINE)).unwrap();
        let converted = zenpak::zen::convert(&files, &package, ENGINE, package_name).unwrap();
        assert!(
            container.read_chunk(index).unwrap() == converted.package_bytes,
            "{package_name}: chunk differs from the conversion"
        );
    }
    let (_, settings_entry) = header
        .packages
        .iter()
        .find(|(id, _)| *id == package_id("/Game/HelloMod/DA_HelloModSettings"))
        .unwrap();
    assert_eq!(
        settings_entry.imported_packages,
        [package_id("/Game/HelloMod/ST_HelloMod")]
    );

    let pak = PakReader::open(&repo.join("target/HelloMod_P.pak"), None).unwrap();
    let entry = pak
        .entries
        .iter()
        .find(|e| e.path == INI)
        .expect("the loose file in the pak");
    assert_eq!(
        pak.read(entry).unwrap(),
        std::fs::read(cooked.join(INI)).unwrap()
    );
}

/// The `build` summary, where the wording is the product: a first build, a
/// rebuild with nothing to do, and a rebuild after one package changed,
/// against `tests/snapshots/build_summary_hello_mod.txt`.
#[test]
fn the_build_summary_reads_as_its_snapshot() {
    let dir = crate::common::temp_dir("build-summary");
    let root = dir.join("hello-mod");
    for (relative, bytes) in crate::common::files_under(&example_dir()) {
        if relative.starts_with("target/") {
            continue;
        }
        let path = root.join(&relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }
    let build = || {
        crate::common::run(Some(&root), &["build"])
            .ok()
            .stderr
            .clone()
    };
    let mut transcript = build();
    transcript += &build();
    // One package's export data changed, its size kept: converted again.
    let uexp = root.join("Cooked").join(SETTINGS).with_extension("uexp");
    let mut bytes = std::fs::read(&uexp).unwrap();
    let last = bytes.len() - 5;
    bytes[last] ^= 1;
    std::fs::write(&uexp, bytes).unwrap();
    transcript += &build();
    crate::common::assert_snapshot(
        "build_summary_hello_mod",
        &crate::common::normalize(&transcript, &[(&root, "DIR")]),
    );
}
