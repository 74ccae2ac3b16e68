//! Consolidation of classic maps (`zenpak classic consolidate`), on test
//! maps built with zenpak's writer (`classic_maps`) and on the UT99 maps of
//! the corpus: embedded copies become imports of the external package,
//! every compact index keeps resolving to the object it did, the copies end
//! up unreferenced, and anything that cannot be resolved leaves the map
//! unchanged and is named. The command line is run as a user runs it.

use crate::classic_maps;
use crate::common::{self, Run};

use std::path::{Path, PathBuf};

use classic_maps::*;
use zenpak::classic::consolidate::{
    consolidate, Consolidated, Mode, PackageSpec, PackageStatus, Problem, Request,
};
use zenpak::classic::deps::{dependency_report, requirements, Availability, PackageCache};
use zenpak::classic::{Lineage, ObjectRef, Package, Target};

fn run(map: &[u8], mode: Mode, packages: &[&str], search: &[PathBuf]) -> Consolidated {
    let package = Package::parse(map, "DM-Test").unwrap();
    let request = Request {
        mode,
        packages: packages
            .iter()
            .map(|p| PackageSpec::parse(p).unwrap())
            .collect(),
        search: search.to_vec(),
    };
    consolidate(map, &package, &request, &mut PackageCache::new()).unwrap()
}

/// A folder with `Textures/MyTex.utx` (when given) and `Maps/DM-Test.unr`.
fn game_folder(map: &[u8], external: Option<&[u8]>) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("Textures")).unwrap();
    std::fs::create_dir_all(dir.path().join("Maps")).unwrap();
    if let Some(external) = external {
        std::fs::write(dir.path().join("Textures/MyTex.utx"), external).unwrap();
    }
    std::fs::write(dir.path().join("Maps/DM-Test.unr"), map).unwrap();
    dir
}

fn data<'a>(package: &Package, bytes: &'a [u8], index: usize) -> &'a [u8] {
    match package.exports[index].serial_range() {
        Some(r) => &bytes[r.start as usize..r.end as usize],
        None => &[],
    }
}

/// Exports of the embedded copy of `MyTex` in `map`.
fn members(map: &Package) -> Vec<usize> {
    (0..map.exports.len())
        .filter(|&i| map.path(ObjectRef::export(i)).starts_with("DM-Test.MyTex"))
        .collect()
}

/// For each export outside the copy: its class, super and outer, and every
/// object reference in its data (walked by `classic_maps::walk`), as the
/// paths other packages would use.
fn resolved_references(map: &Package, bytes: &[u8], skip: &[usize]) -> Vec<Vec<(String, String)>> {
    (0..map.exports.len())
        .filter(|i| !skip.contains(i))
        .map(|i| {
            let e = &map.exports[i];
            let mut out = vec![
                ("class".to_string(), inner_path(map, e.class)),
                ("super".to_string(), inner_path(map, e.super_field)),
                ("outer".to_string(), inner_path(map, e.outer)),
            ];
            for found in walk(map, i, data(map, bytes, i)) {
                out.push((found.field, inner_path(map, found.target)));
            }
            out
        })
        .collect()
}

#[test]
fn an_embedded_texture_package_becomes_an_import() {
    // References that shrink (their data stays in place) and references
    // that grow (their data moves after the last object, lazy-array end
    // positions following).
    for shape in [Shape::SHRINKING, Shape::GROWING] {
        check_embedded_consolidation(shape);
    }
}

fn check_embedded_consolidation(shape: Shape) {
    let map_bytes = test_map_with(MapKind::Embedded, shape, |_| {});
    let dir = game_folder(&map_bytes, Some(&external_package()));
    let search = [dir.path().join("Textures")];
    let result = run(&map_bytes, Mode::Embedded, &["MyTex"], &search);
    let report = &result.report;
    assert!(report.problems.is_empty(), "{:?}", report.problems);
    assert_eq!(report.packages[0].status, PackageStatus::Consolidated);
    assert_eq!(report.packages[0].members, 5);
    let out_bytes = result.bytes.clone().unwrap();
    assert!(report.changed);

    let before = Package::parse(&map_bytes, "DM-Test").unwrap();
    let after = Package::parse(&out_bytes, "DM-Test").unwrap();
    let copy = members(&before);
    assert_eq!(copy.len(), 5);

    // Tables only grew at their ends.
    assert_eq!(after.names[..before.names.len()], before.names[..]);
    assert_eq!(after.imports[..before.imports.len()], before.imports[..]);
    assert_eq!(after.exports.len(), before.exports.len());
    // The map now imports MyTex: the package, its group and the two textures
    // referenced from outside the copy (the palette is referenced only from
    // inside it and is not imported).
    let added: Vec<String> = (before.imports.len()..after.imports.len())
        .map(|i| {
            format!(
                "{} [{}]",
                after.path(ObjectRef::import(i)),
                after.class_path(ObjectRef::import(i))
            )
        })
        .collect();
    assert_eq!(
        added,
        [
            "MyTex [Core.Package]",
            "MyTex.Walls [Core.Package]",
            "MyTex.Walls.Brick [Engine.Texture]",
            "MyTex.Sky [Engine.Texture]"
        ]
    );

    // Every reference outside the copy resolves to the same path as before:
    // those to the copy now to the import of the same path, all others to
    // the very same object.
    assert_eq!(
        resolved_references(&before, &map_bytes, &copy),
        resolved_references(&after, &out_bytes, &copy)
    );
    let changed: usize = report
        .changed_exports
        .iter()
        .map(|c| c.data_references)
        .sum();
    // The light's skin and texture, the screenshot's detail texture, a poly, a surface.
    assert_eq!(changed, 5, "{:?}", report.changed_exports);

    // The copy is unreferenced and no longer loaded; its data is where it was.
    for i in (0..after.exports.len()).filter(|i| !copy.contains(i)) {
        let e = &after.exports[i];
        let mut targets = vec![e.class, e.super_field, e.outer];
        targets.extend(
            walk(&after, i, data(&after, &out_bytes, i))
                .iter()
                .map(|f| f.target),
        );
        for t in targets {
            if let Target::Export(x) = t.target() {
                assert!(
                    !copy.contains(&x),
                    "export {i} still refers to the copy's {x}"
                );
            }
        }
    }
    for import in &after.imports {
        assert!(!matches!(import.outer.target(), Target::Export(_)));
    }
    for &i in &copy {
        assert_eq!(after.exports[i].flags & RF_LOAD, 0);
        assert_eq!(
            after.exports[i].serial_offset,
            before.exports[i].serial_offset
        );
        assert_eq!(data(&after, &out_bytes, i), data(&before, &map_bytes, i));
    }
    // Exports whose data did not change kept their offsets and bytes; those
    // whose data changed stayed where they were when it shrank and moved
    // past the old end of the object data when it grew.
    let old_end = before.header.import_offset;
    for i in 0..before.exports.len() {
        let changed = report
            .changed_exports
            .iter()
            .any(|c| c.export == before.path(ObjectRef::export(i)) && c.data_references > 0);
        let (old, new) = (&before.exports[i], &after.exports[i]);
        if !changed {
            assert_eq!(new.serial_offset, old.serial_offset);
            assert_eq!(data(&after, &out_bytes, i), data(&before, &map_bytes, i));
        } else if shape == Shape::SHRINKING {
            assert!(new.serial_size < old.serial_size);
            assert_eq!(new.serial_offset, old.serial_offset);
        } else {
            assert!(new.serial_size > old.serial_size);
            assert!(
                new.serial_offset.unwrap() >= old_end,
                "{shape:?}: export {i}"
            );
        }
    }

    // `deps` lists the external package, found, with nothing missing.
    let needs = requirements(&after);
    let mytex = needs
        .packages
        .iter()
        .find(|r| r.package == "MyTex")
        .unwrap();
    let objects: Vec<&str> = mytex.objects.iter().map(|o| o.path.as_str()).collect();
    assert_eq!(objects, ["MyTex.Walls", "MyTex.Walls.Brick", "MyTex.Sky"]);
    let report_deps = dependency_report(&after, &search, &mut PackageCache::new());
    // The copy is reported as kept but no longer loaded (before: loaded).
    let before_deps = dependency_report(&before, &[], &mut PackageCache::new());
    assert_eq!(
        (before_deps.embedded.len(), before_deps.embedded[0].loaded),
        (1, true)
    );
    assert_eq!(report_deps.embedded[0].package, "MyTex");
    assert_eq!(report_deps.embedded[0].exports, 4);
    assert!(!report_deps.embedded[0].loaded);
    let found = report_deps
        .required
        .iter()
        .find(|r| r.package == "MyTex")
        .unwrap();
    match &found.availability {
        Some(Availability::Present {
            missing_objects, ..
        }) => assert!(missing_objects.is_empty()),
        other => panic!("{other:?}"),
    }

    // A new GUID and one generation, deterministically.
    let (Lineage::Generations { guid: old, .. }, Lineage::Generations { guid, generations }) =
        (&before.header.lineage, &after.header.lineage)
    else {
        panic!("version 69 has generations")
    };
    assert_ne!(old, guid);
    assert_eq!(generations.len(), 1);
    assert_eq!(generations[0].name_count as usize, after.names.len());
    let again = run(&map_bytes, Mode::Embedded, &["MyTex"], &search);
    assert_eq!(again.bytes.unwrap(), out_bytes);

    // Consolidating the result again changes nothing.
    let twice = run(&out_bytes, Mode::Embedded, &["MyTex"], &search);
    assert!(
        twice.report.problems.is_empty(),
        "{:?}",
        twice.report.problems
    );
    assert!(!twice.report.changed);
    assert_eq!(twice.bytes.unwrap(), out_bytes);
}

#[test]
fn a_map_without_the_package_comes_out_byte_identical() {
    for kind in [MapKind::Plain, MapKind::ImportsOldTex] {
        let map_bytes = test_map(kind);
        let dir = game_folder(&map_bytes, Some(&external_package()));
        let result = run(
            &map_bytes,
            Mode::Embedded,
            &["MyTex"],
            &[dir.path().join("Textures")],
        );
        assert_eq!(result.report.packages[0].status, PackageStatus::NotEmbedded);
        assert!(!result.report.changed);
        assert!(result.bytes.unwrap() == map_bytes);
    }
}

#[test]
fn retarget_points_imports_at_another_package() {
    let map_bytes = test_map(MapKind::ImportsOldTex);
    let dir = game_folder(&map_bytes, Some(&external_package()));
    let search = [dir.path().join("Textures")];
    let result = run(&map_bytes, Mode::Retarget, &["OldTex=MyTex"], &search);
    assert!(
        result.report.problems.is_empty(),
        "{:?}",
        result.report.problems
    );
    assert_eq!(result.report.packages[0].status, PackageStatus::Retargeted);
    let repointed: Vec<(&str, &str)> = result
        .report
        .repointed
        .iter()
        .map(|r| (r.from.as_str(), r.to.as_str()))
        .collect();
    assert_eq!(
        repointed,
        [
            ("OldTex.Walls", "MyTex.Walls"),
            ("OldTex.Walls.Brick", "MyTex.Walls.Brick"),
            ("OldTex.Sky", "MyTex.Sky")
        ]
    );
    let out_bytes = result.bytes.unwrap();
    let before = Package::parse(&map_bytes, "DM-Test").unwrap();
    let after = Package::parse(&out_bytes, "DM-Test").unwrap();
    // Same number of imports, each at its index: only the package's name changed.
    assert_eq!(after.imports.len(), before.imports.len());
    let needs = requirements(&after);
    let packages: Vec<&str> = needs.packages.iter().map(|r| r.package.as_str()).collect();
    assert!(
        packages.contains(&"MyTex") && !packages.contains(&"OldTex"),
        "{packages:?}"
    );
    // Object data is untouched: every export's bytes and offset are the same.
    for i in 0..before.exports.len() {
        assert_eq!(
            after.exports[i].serial_offset,
            before.exports[i].serial_offset
        );
        assert_eq!(data(&after, &out_bytes, i), data(&before, &map_bytes, i));
    }
    let old: Vec<(String, String)> = resolved_references(&before, &map_bytes, &[])
        .concat()
        .into_iter()
        .map(|(f, p)| (f, p.replace("OldTex.", "MyTex.")))
        .collect();
    assert_eq!(old, resolved_references(&after, &out_bytes, &[]).concat());
    // Not imported: nothing to do, same bytes.
    let result = run(&map_bytes, Mode::Retarget, &["Nope=MyTex"], &search);
    assert_eq!(result.report.packages[0].status, PackageStatus::NotImported);
    assert!(result.bytes.unwrap() == map_bytes);
}

fn problems(result: &Consolidated) -> Vec<(String, Problem)> {
    assert!(result.bytes.is_none(), "a map with problems was written");
    assert!(!result.report.changed);
    result
        .report
        .problems
        .iter()
        .map(|p| (p.object.clone(), p.problem.clone()))
        .collect()
}

#[test]
fn unresolvable_references_leave_the_map_unchanged_and_are_named() {
    let map_bytes = test_map(MapKind::Embedded);
    // The external package (none: not in the search folder), and the problems expected.
    type Case = (Option<Vec<u8>>, Vec<(String, Problem)>);
    let cases: Vec<Case> = vec![
        (
            Some(external_package_with(
                "Brick",
                RF_LOAD | RF_STANDALONE,
                "Texture",
            )),
            vec![("MyTex.Walls.Brick".into(), Problem::NotPublic)],
        ),
        (
            Some(external_package_with("Brick", ASSET, "Palette")),
            vec![(
                "MyTex.Walls.Brick".into(),
                Problem::WrongClass {
                    found: "Engine.Palette".into(),
                },
            )],
        ),
        (
            Some(external_package_with("Bricks", ASSET, "Texture")),
            vec![(
                "MyTex.Walls.Brick".into(),
                Problem::NotFound {
                    path: "MyTex.Walls.Brick".into(),
                },
            )],
        ),
        (
            None,
            vec![("MyTex (external package)".into(), Problem::PackageNotFound)],
        ),
    ];
    for (external, expected) in cases {
        let dir = game_folder(&map_bytes, external.as_deref());
        let result = run(
            &map_bytes,
            Mode::Embedded,
            &["MyTex"],
            &[dir.path().join("Textures")],
        );
        assert_eq!(problems(&result), expected);
        assert_eq!(result.report.packages[0].status, PackageStatus::Failed);
        let error = result.report.problems_error().unwrap();
        assert!(error.to_string().contains(&expected[0].0), "{error}");
    }

    // An export whose native data is not decoded might hold a reference to
    // the copy: named, with the offset where decoding stopped.
    let map_bytes = test_map_with(MapKind::Embedded, Shape::SHRINKING, |b| {
        let class = b.class("Botpack", "Mystery");
        let mystery = b.export(class, ObjectRef::NULL, "Mystery0", RF_LOAD);
        let data = ObjectDataBuilder::new().none(b).raw(&[1, 2, 3]);
        b.set_data(mystery, data);
    });
    let dir = game_folder(&map_bytes, Some(&external_package()));
    let result = run(
        &map_bytes,
        Mode::Embedded,
        &["MyTex"],
        &[dir.path().join("Textures")],
    );
    let found = problems(&result);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].0, "DM-Test.Mystery0");
    let map = Package::parse(&map_bytes, "DM-Test").unwrap();
    let mystery = map.exports.last().unwrap();
    match &found[0].1 {
        Problem::UndecodedData { offset, reason } => {
            // After the one-byte `None` that ends its properties.
            assert_eq!(*offset, mystery.serial_offset.unwrap() as u64 + 1);
            assert!(reason.contains("Botpack.Mystery"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
    let error = result.report.problems_error().unwrap();
    assert!(error.failures()[0].offset().is_some());
}

#[test]
fn a_name_longer_than_the_version_allows_is_refused() {
    let map_bytes = test_map(MapKind::ImportsOldTex);
    let long = "T".repeat(70);
    let dir = game_folder(&map_bytes, None);
    std::fs::write(
        dir.path().join(format!("Textures/{long}.utx")),
        external_package(),
    )
    .unwrap();
    let spec = format!("OldTex={long}");
    let result = run(
        &map_bytes,
        Mode::Retarget,
        &[&spec],
        &[dir.path().join("Textures")],
    );
    assert_eq!(
        problems(&result),
        [(long.clone(), Problem::NameTooLong { limit: 63 })]
    );
    let error = result.report.problems_error().unwrap();
    assert_eq!(error.failures()[0].code(), "limit");
}

#[test]
fn requests_that_make_no_sense_are_usage_errors() {
    let map_bytes = test_map(MapKind::Embedded);
    let map = Package::parse(&map_bytes, "DM-Test").unwrap();
    for (mode, spec) in [
        (Mode::Embedded, "MyTex=Other"),
        (Mode::Retarget, "MyTex"),
        (Mode::Retarget, "MyTex=mytex"),
        (Mode::Embedded, "DM-Test"),
    ] {
        let request = Request {
            mode,
            packages: vec![PackageSpec::parse(spec).unwrap()],
            search: Vec::new(),
        };
        let error = consolidate(&map_bytes, &map, &request, &mut PackageCache::new()).unwrap_err();
        assert!(error.is_usage(), "{spec}: {error}");
    }
    assert!(PackageSpec::parse("My.Tex").is_err());
    assert!(PackageSpec::parse("").is_err());
}

#[test]
fn corpus_maps_with_packages_they_do_not_embed_are_unchanged() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let ut99 = corpus.join("classic/ut99");
    let search: Vec<PathBuf> = ["System", "Textures", "Sounds", "Music"]
        .iter()
        .map(|f| ut99.join(f))
        .collect();
    for map in ["Maps/CTF-Face.unr", "Maps/Entry.unr"] {
        let bytes = std::fs::read(ut99.join(map)).unwrap();
        let package = Package::read_file(&ut99.join(map)).unwrap();
        // Packages the maps import, and ones they have nothing to do with.
        for packages in [
            vec!["SkyCity", "Botpack", "Engine"],
            vec!["AlfaFX", "DDay", "Logo"],
        ] {
            let request = Request {
                mode: Mode::Embedded,
                packages: packages
                    .iter()
                    .map(|p| PackageSpec::parse(p).unwrap())
                    .collect(),
                search: search.clone(),
            };
            let result = consolidate(&bytes, &package, &request, &mut PackageCache::new()).unwrap();
            assert!(result.report.problems.is_empty());
            assert!(!result.report.changed, "{map}");
            assert!(result.bytes.unwrap() == bytes, "{map}: bytes differ");
        }
    }
}

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

#[test]
fn cli_consolidates_and_deps_lists_the_external_package() {
    let map_bytes = test_map(MapKind::Embedded);
    let dir = game_folder(&map_bytes, Some(&external_package()));
    let map = dir.path().join("Maps/DM-Test.unr");
    let textures = dir.path().join("Textures");
    let out = dir.path().join("Maps/DM-Test-fixed.unr");
    let snapshot = |name: &str, run: &Run| {
        common::assert_snapshot(
            name,
            &common::normalize(&run.stdout, &[(dir.path(), "DIR")]),
        );
    };

    // `deps` points at the embedded copy.
    let deps = common::run(None, &["deps", s(&map)]);
    snapshot("consolidate_deps_embedded", deps.ok());

    // A dry run writes nothing.
    let consolidate = [
        "classic",
        "consolidate",
        s(&map),
        "--package",
        "MyTex",
        "--search",
        s(&textures),
    ];
    let dry = common::run(None, &[&consolidate[..], &["--dry-run"]].concat());
    snapshot("consolidate_dry_run", dry.ok());
    assert!(!out.exists());

    let written = common::run(None, &[&consolidate[..], &["-o", s(&out)]].concat());
    snapshot("consolidate_written", written.ok());
    assert!(out.is_file());
    assert_eq!(
        std::fs::read(&map).unwrap(),
        map_bytes,
        "the input was modified"
    );
    // No temporary file is left beside the output.
    let leftovers: Vec<_> = std::fs::read_dir(dir.path().join("Maps"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(leftovers.len(), 2, "{leftovers:?}");

    // Only the textures folder is searched: the map's other packages are
    // missing, which fails the check after the report.
    let deps = ["deps", s(&out), "--search", s(&textures), "--objects"];
    snapshot(
        "consolidate_deps_fixed_objects",
        common::run(None, &deps).assert_code(1),
    );
    let error = common::run(None, &[&deps[..], &["--message-format", "json"]].concat())
        .assert_code(1)
        .error();
    assert_eq!(error["code"], "format", "{error}");
    assert!(error["hint"].is_string(), "{error}");

    // JSON.
    let json = common::run(None, &[&consolidate[..], &["--dry-run", "--json"]].concat())
        .ok()
        .doc();
    assert_eq!(json["kind"], "classic-consolidation");
    assert_eq!(json["packages"][0]["status"], "consolidated");
    assert_eq!(json["added_imports"].as_array().unwrap().len(), 4);
    assert_eq!(json["written"], serde_json::Value::Null);

    // Never over the input.
    let over = common::run(
        None,
        &[
            &consolidate[..],
            &["-o", s(&map), "--message-format", "json"],
        ]
        .concat(),
    );
    let error = over.assert_code(2).error();
    assert_eq!(error["code"], "usage", "{error}");
    assert_eq!(std::fs::read(&map).unwrap(), map_bytes);

    // Re-targeting through the command line.
    let old = test_map(MapKind::ImportsOldTex);
    std::fs::write(dir.path().join("Maps/DM-Old.unr"), &old).unwrap();
    let fixed = dir.path().join("Maps/DM-Old-fixed.unr");
    let retarget = common::run(
        None,
        &[
            "classic",
            "consolidate",
            s(&dir.path().join("Maps/DM-Old.unr")),
            "--retarget",
            "--package",
            "OldTex=MyTex",
            "--search",
            s(&textures),
            "-o",
            s(&fixed),
        ],
    );
    snapshot("consolidate_retarget", retarget.ok());
    // The fixed map needs MyTex, not OldTex (the rest is missing: only the
    // textures folder is searched).
    let json = common::run(
        None,
        &["deps", s(&fixed), "--search", s(&textures), "--json"],
    )
    .assert_code(1)
    .doc();
    let required: Vec<&str> = json["packages"][0]["required"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["package"].as_str().unwrap())
        .collect();
    assert!(
        required.contains(&"MyTex") && !required.contains(&"OldTex"),
        "{required:?}"
    );
}

#[test]
fn cli_refuses_unresolvable_objects_and_writes_nothing() {
    let map_bytes = test_map(MapKind::Embedded);
    let external = external_package_with("Brick", RF_LOAD, "Texture");
    let dir = game_folder(&map_bytes, Some(&external));
    let map = dir.path().join("Maps/DM-Test.unr");
    let out = dir.path().join("out.unr");
    let textures = dir.path().join("Textures");
    let args = [
        "classic",
        "consolidate",
        s(&map),
        "--package",
        "MyTex",
        "--search",
        s(&textures),
        "-o",
        s(&out),
    ];
    let failed = common::run(None, &args);
    common::assert_snapshot(
        "consolidate_refused",
        &common::normalize(&failed.assert_code(1).stdout, &[(dir.path(), "DIR")]),
    );
    let json = common::run(None, &[&args[..], &["--json"]].concat())
        .assert_code(1)
        .doc();
    assert_eq!(json["packages"][0]["status"], "failed", "{json}");
    let messages = common::run(None, &[&args[..], &["--message-format", "json"]].concat());
    let error = messages.assert_code(1).error();
    assert_eq!(error["code"], "format", "{error}");
    assert!(!out.exists());
    assert_eq!(std::fs::read(&map).unwrap(), map_bytes);

    // Usage errors exit with 2.
    let usage = common::run(
        None,
        &[
            "classic",
            "consolidate",
            s(&map),
            "--retarget",
            "--package",
            "MyTex",
            "--search",
            s(dir.path()),
            "--dry-run",
            "--message-format",
            "json",
        ],
    );
    assert_eq!(usage.assert_code(2).error()["code"], "usage");
}
