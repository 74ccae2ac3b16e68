//! Dependency analysis: the packages the corpus maps need, which of them the
//! corpus folders hold, and — with a package built by the writer — objects
//! missing from a package that is present.

use crate::common;

use std::path::{Path, PathBuf};

use zenpak::classic::deps::{
    dependency_report, locate_package, requirements, Availability, IntrinsicEvidence, PackageCache,
    Problem,
};
use zenpak::classic::flags::RF_PUBLIC;
use zenpak::classic::{
    ExportEntry, Generation, Header, ImportEntry, Lineage, NameEntry, ObjectRef, Package,
};

fn ut99() -> Option<PathBuf> {
    let dir = common::corpus()?.join("classic/ut99");
    dir.is_dir().then_some(dir)
}

fn search_folders(ut99: &Path) -> Vec<PathBuf> {
    ["System", "Textures", "Sounds", "Music", "Maps"]
        .iter()
        .map(|f| ut99.join(f))
        .collect()
}

fn availability<'a>(
    report: &'a zenpak::classic::deps::DependencyReport,
    package: &str,
) -> &'a Availability {
    report
        .required
        .iter()
        .find(|r| r.package == package)
        .unwrap_or_else(|| panic!("{package} is not required"))
        .availability
        .as_ref()
        .expect("search folders were given")
}

#[test]
fn ctf_face_requirements() {
    let Some(ut99) = ut99() else { return };
    let package = Package::read_file(&ut99.join("Maps/CTF-Face.unr")).unwrap();
    let needs = requirements(&package);
    let names: Vec<&str> = needs.packages.iter().map(|r| r.package.as_str()).collect();
    for expected in [
        "Botpack",
        "Core",
        "Engine",
        "SkyCity",
        "ShaneChurch",
        "UnrealShare",
    ] {
        assert!(
            names.contains(&expected),
            "{expected} missing from {names:?}"
        );
    }
    // Sorted case-insensitively, each package once.
    let mut sorted = names.clone();
    sorted.sort_by_key(|n| n.to_ascii_lowercase());
    sorted.dedup_by_key(|n| n.to_ascii_lowercase());
    assert_eq!(names, sorted);
    assert!(needs.unattributed.is_empty());
    // Every import is either a required package or an object below one.
    let objects: usize = needs.packages.iter().map(|r| r.objects.len()).sum();
    assert_eq!(objects + needs.packages.len(), package.imports.len());

    let skycity = needs
        .packages
        .iter()
        .find(|r| r.package == "SkyCity")
        .unwrap();
    let rune = skycity
        .objects
        .iter()
        .find(|o| o.path == "SkyCity.Deco.runeSgn2")
        .unwrap();
    assert_eq!(rune.class, "Engine.Texture");
    assert!(skycity
        .objects
        .iter()
        .any(|o| o.path == "SkyCity.Deco" && o.class == "Core.Package"));
}

#[test]
fn corpus_maps_against_corpus_folders() {
    let Some(ut99) = ut99() else { return };
    let search = search_folders(&ut99);
    let mut cache = PackageCache::new();
    for map in ["CTF-Face.unr", "Entry.unr"] {
        let package = Package::read_file(&ut99.join("Maps").join(map)).unwrap();
        let report = dependency_report(&package, &search, &mut cache);
        // Botpack is not in the corpus: reported missing.
        assert_eq!(
            availability(&report, "Botpack"),
            &Availability::Missing,
            "{map}"
        );
        let missing: Vec<&str> = report
            .missing_packages()
            .map(|r| r.package.as_str())
            .collect();
        assert!(missing.contains(&"Botpack"));
        // Core and Engine are found in System, with nothing missing: the
        // classes the files do not store are intrinsic.
        for (name, file) in [("Core", "System/Core.u"), ("Engine", "System/Engine.u")] {
            match availability(&report, name) {
                Availability::Present {
                    file: found,
                    missing_objects,
                    intrinsic,
                } => {
                    assert_eq!(found, &ut99.join(file));
                    assert!(
                        missing_objects.is_empty(),
                        "{map}: {name}: {missing_objects:?}"
                    );
                    if name == "Engine" {
                        let level = intrinsic.iter().find(|i| i.path == "Engine.Level").unwrap();
                        assert_eq!(level.evidence, IntrinsicEvidence::ImportedByItsPackage);
                    }
                }
                other => panic!("{map}: {name}: {other:?}"),
            }
        }
        assert_eq!(report.missing_objects().count(), 0, "{map}");
    }
    let package = Package::read_file(&ut99.join("Maps/CTF-Face.unr")).unwrap();
    let report = dependency_report(&package, &search, &mut cache);
    assert_eq!(availability(&report, "UnrealShare"), &Availability::Missing);
    assert_eq!(availability(&report, "SkyCity"), &Availability::Missing);
    // Without search folders, nothing is looked up.
    let report = dependency_report(&package, &[], &mut cache);
    assert!(report.required.iter().all(|r| r.availability.is_none()));
}

#[test]
fn package_lookup_ignores_case_and_unknown_extensions() {
    let Some(ut99) = ut99() else { return };
    let search = search_folders(&ut99);
    assert_eq!(
        locate_package("engine", &search),
        Some(ut99.join("System/Engine.u"))
    );
    assert_eq!(
        locate_package("ALFAFX", &search),
        Some(ut99.join("Textures/AlfaFX.utx"))
    );
    assert_eq!(
        locate_package("MANIFEST", std::slice::from_ref(&ut99)),
        None
    );
    assert_eq!(locate_package("Botpack", &search), None);
}

fn name(text: &str) -> NameEntry {
    NameEntry {
        name: text.to_string(),
        flags: 0x0007_0010,
    }
}

/// A `Logo` texture package written by our writer: of the five objects
/// `Entry.unr` takes from `Logo`, it holds `black1` and `UTLogo1` as public
/// textures, `UTLogo2` as a palette (wrong class), `MyTex1` as a fire texture
/// without `RF_Public`, and no `UTLogo3` at all.
fn synthetic_logo() -> (Package, Vec<Vec<u8>>) {
    let names = [
        "None",
        "Core",
        "Package",
        "Engine",
        "Class",
        "Texture",
        "Palette",
        "Fire",
        "FireTexture",
        "black1",
        "UTLogo1",
        "UTLogo2",
        "MyTex1",
    ];
    let index = |text: &str| names.iter().position(|n| *n == text).unwrap();
    let import =
        |class_package: &str, class_name: &str, outer: ObjectRef, object: &str| ImportEntry {
            class_package: index(class_package),
            class_name: index(class_name),
            outer,
            object_name: index(object),
        };
    let imports = vec![
        import("Core", "Package", ObjectRef::NULL, "Engine"), // -1
        import("Core", "Class", ObjectRef::import(0), "Texture"), // -2
        import("Core", "Class", ObjectRef::import(0), "Palette"), // -3
        import("Core", "Package", ObjectRef::NULL, "Fire"),   // -4
        import("Core", "Class", ObjectRef::import(3), "FireTexture"), // -5
    ];
    let export = |class: ObjectRef, object: &str, flags: u32| ExportEntry {
        class,
        super_field: ObjectRef::NULL,
        outer: ObjectRef::NULL,
        object_name: index(object),
        flags,
        serial_size: 0,
        serial_offset: None,
    };
    let standalone = 0x0008_0000;
    let exports = vec![
        export(ObjectRef::import(1), "black1", RF_PUBLIC | standalone),
        export(ObjectRef::import(1), "UTLogo1", RF_PUBLIC | standalone),
        export(ObjectRef::import(2), "UTLogo2", RF_PUBLIC | standalone),
        export(ObjectRef::import(4), "MyTex1", standalone),
    ];
    let package = Package {
        name: "Logo".to_string(),
        header: Header {
            version_word: 69,
            package_flags: 0x1,
            name_count: 0,
            name_offset: 0,
            export_count: 0,
            export_offset: 0,
            import_count: 0,
            import_offset: 0,
            lineage: Lineage::Generations {
                guid: *b"zenpak synthetic",
                generations: vec![Generation {
                    export_count: exports.len() as i32,
                    name_count: names.len() as i32,
                }],
            },
        },
        names: names.iter().map(|n| name(n)).collect(),
        imports,
        exports,
        heritage: Vec::new(),
        file_size: 0,
    };
    let data = (0..4).map(|i| vec![i as u8; 10 + i]).collect();
    (package, data)
}

#[test]
fn writer_output_reads_back_identically() {
    let (package, data) = synthetic_logo();
    let bytes = package.to_bytes(&data).unwrap();
    let read = Package::parse(&bytes, "Logo").unwrap();
    assert_eq!(read.names, package.names);
    assert_eq!(read.imports, package.imports);
    assert_eq!(read.version().0, 69);
    for (i, export) in read.exports.iter().enumerate() {
        let range = export.serial_range().unwrap();
        assert_eq!(
            &bytes[range.start as usize..range.end as usize],
            &data[i][..]
        );
    }
    assert_eq!(read.path(ObjectRef::export(3)), "Logo.MyTex1");
    assert_eq!(read.class_path(ObjectRef::export(3)), "Fire.FireTexture");
    // Writing the read tables back gives the same file.
    let mut rebuilt = bytes.clone();
    for region in read.write_tables() {
        let start = region.offset as usize;
        assert_eq!(
            &rebuilt[start..start + region.bytes.len()],
            &region.bytes[..],
            "{}",
            region.table
        );
        rebuilt[start..start + region.bytes.len()].copy_from_slice(&region.bytes);
    }
    assert_eq!(rebuilt, bytes);
    // And an old-version package (zero-terminated names, heritage table) too.
    let mut old = package.clone();
    old.header.version_word = 61;
    old.header.lineage = Lineage::Heritage {
        count: 0,
        offset: 0,
    };
    old.heritage = vec![zenpak::classic::HeritageEntry(*b"0123456789abcdef")];
    let bytes = old.to_bytes(&[]).unwrap();
    let read = Package::parse(&bytes, "Logo").unwrap();
    assert_eq!(read.names, old.names);
    assert_eq!(read.heritage, old.heritage);
    assert!(read
        .exports
        .iter()
        .all(|e| e.serial_size == 0 && e.serial_offset.is_none()));
}

#[test]
fn missing_objects_in_a_present_package_are_reported() {
    let Some(ut99) = ut99() else { return };
    let (package, data) = synthetic_logo();
    let folder = common::temp_dir("classic-deps");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("Logo.utx"), package.to_bytes(&data).unwrap()).unwrap();

    let entry = Package::read_file(&ut99.join("Maps/Entry.unr")).unwrap();
    let mut search = search_folders(&ut99);
    search.push(folder.to_path_buf());
    let report = dependency_report(&entry, &search, &mut PackageCache::new());
    std::fs::remove_dir_all(&folder).ok();

    let Availability::Present {
        file,
        missing_objects,
        intrinsic,
    } = availability(&report, "Logo")
    else {
        panic!("Logo should be found")
    };
    assert_eq!(file, &folder.join("Logo.utx"));
    assert!(intrinsic.is_empty());
    let found: Vec<(&str, &str, &Problem)> = missing_objects
        .iter()
        .map(|m| (m.path.as_str(), m.class.as_str(), &m.problem))
        .collect();
    assert_eq!(
        found,
        [
            (
                "Logo.UTLogo2",
                "Engine.Texture",
                &Problem::WrongClass {
                    found: "Engine.Palette".to_string()
                }
            ),
            ("Logo.UTLogo3", "Engine.Texture", &Problem::NotFound),
            ("Logo.MyTex1", "Fire.FireTexture", &Problem::NotPublic),
        ]
    );
    let listed: Vec<(&str, &str)> = report
        .missing_objects()
        .map(|(r, m)| (r.package.as_str(), m.path.as_str()))
        .collect();
    assert_eq!(
        listed,
        [
            ("Logo", "Logo.UTLogo2"),
            ("Logo", "Logo.UTLogo3"),
            ("Logo", "Logo.MyTex1")
        ]
    );
    assert_eq!(availability(&report, "Botpack"), &Availability::Missing);
}

#[test]
fn closure_follows_present_packages_once() {
    let Some(ut99) = ut99() else { return };
    let search = search_folders(&ut99);
    let roots = [ut99.join("Maps/Entry.unr"), ut99.join("Maps/CTF-Face.unr")];
    let reports =
        zenpak::classic::deps::dependency_closure(&roots, &search, &mut PackageCache::new())
            .unwrap();
    let packages: Vec<&str> = reports.iter().map(|(_, r)| r.package.as_str()).collect();
    // Both maps need Core and Engine; each appears once, after the roots.
    assert_eq!(packages, ["Entry", "CTF-Face", "Core", "Engine"]);
    let core = &reports[2].1;
    // Core needs nothing else; the objects it imports from itself are intrinsic.
    assert!(core.required.is_empty());
    assert!(core.own_objects.iter().any(|o| o.path == "Core.TextBuffer"));
    let engine = &reports[3].1;
    let needs: Vec<&str> = engine.required.iter().map(|r| r.package.as_str()).collect();
    assert_eq!(needs, ["Core"]);
    assert_eq!(engine.missing_objects().count(), 0);
    assert!(engine.own_objects.iter().any(|o| o.path == "Engine.Level"));
}
