//! `zenpak inspect --json` on every corpus legacy package: the JSON is a
//! `legacy-package` whose name/import/export lists have the summary's counts.

use crate::common::{self, run};

#[test]
fn inspect_json_counts_match_the_summary() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let packages = common::legacy_packages(&corpus);
    assert!(!packages.is_empty());
    for (path, engine) in &packages {
        let json = run(
            None,
            &[
                "inspect",
                "--json",
                "--engine",
                engine.as_str(),
                path.to_str().unwrap(),
            ],
        )
        .ok()
        .doc();
        assert_eq!(json["kind"], "legacy-package");
        assert_eq!(json["engine"], engine.as_str());
        let summary = &json["summary"];
        for (list, count) in [
            ("names", "name_count"),
            ("imports", "import_count"),
            ("exports", "export_count"),
        ] {
            assert_eq!(
                json[list].as_array().unwrap().len() as u64,
                summary[count].as_u64().unwrap(),
                "{}: {list}",
                path.display()
            );
        }
        // Every import resolves to a full path; script classes look like /Script/Module.Class.
        for import in json["imports"].as_array().unwrap() {
            let p = import["path"].as_str().unwrap();
            assert!(p.starts_with('/'), "{}: import path {p}", path.display());
        }
    }
}

#[test]
fn inspect_text_names_paths_and_companions() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let path = corpus.join("retoc/UE5.6/SM_Cube.uasset");
    let out = run(
        None,
        &["inspect", "--engine", "5.6", path.to_str().unwrap()],
    );
    common::assert_snapshot(
        "inspect_legacy_sm_cube",
        &common::normalize(&out.ok().stdout, &[(&corpus, "CORPUS")]),
    );
}

#[test]
fn inspect_unversioned_without_engine_fails_cleanly() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let path = corpus.join("retoc/UE5.6/SM_Cube.uasset");
    let out = run(
        None,
        &[
            "inspect",
            path.to_str().unwrap(),
            "--message-format",
            "json",
        ],
    );
    let error = out.assert_code(1).error();
    // The summary's file versions (at offset 4) are 0: a format error
    // there, with a hint to give the engine.
    assert_eq!(error["code"], "format", "{error}");
    assert_eq!(common::file_tail(&error, 1), "SM_Cube.uasset", "{error}");
    assert_eq!(error["offset"], 4, "{error}");
    assert_eq!(error["structure"], serde_json::json!(["package summary"]));
    assert!(error["hint"].is_string(), "{error}");
}

#[test]
fn inspect_truncated_package_names_file_structure_and_offset() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let dir = common::temp_dir("legacy-inspect");
    std::fs::create_dir_all(&dir).unwrap();
    let source = corpus.join("retoc/UE5.6/SM_Cube.uasset");
    let bytes = std::fs::read(&source).unwrap();
    let target = dir.join("SM_Cube.uasset");
    std::fs::write(&target, &bytes[..900]).unwrap();
    std::fs::copy(source.with_extension("uexp"), target.with_extension("uexp")).unwrap();
    let out = run(
        None,
        &[
            "inspect",
            "--engine",
            "5.6",
            target.to_str().unwrap(),
            "--message-format",
            "json",
        ],
    );
    let error = out.assert_code(1).error();
    assert_eq!(error["code"], "format", "{error}");
    assert_eq!(common::file_tail(&error, 1), "SM_Cube.uasset", "{error}");
    assert!(error["offset"].is_u64(), "{error}");
    assert!(
        error["structure"][0]
            .as_str()
            .is_some_and(|s| !s.is_empty()),
        "{error}"
    );
}

/// A package cut inside its header, even inside its four-byte tag, is a
/// truncated package (exit 1, offset named), not an unknown file (exit 2):
/// classic maps and UE packages alike (issue 18).
#[test]
fn package_cut_inside_its_tag_is_a_truncation() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("classic/ut99/Maps/CTF-Face.unr", "CTF-Face.unr", None),
        ("retoc/UE5.6/SM_Cube.uasset", "SM_Cube.uasset", Some("5.6")),
    ];
    for (source, name, engine) in cases {
        let source = corpus.join(source);
        let bytes = std::fs::read(&source).unwrap();
        let target = dir.path().join(name);
        if engine.is_some() {
            std::fs::copy(source.with_extension("uexp"), target.with_extension("uexp")).unwrap();
        }
        for cut in [0, 1, 2, 3, 5, 7] {
            std::fs::write(&target, &bytes[..cut]).unwrap();
            let mut args = vec![
                "inspect",
                target.to_str().unwrap(),
                "--message-format",
                "json",
            ];
            if let Some(engine) = engine {
                args.extend(["--engine", engine]);
            }
            // A truncation: a format error at an offset, in the file.
            let error = run(None, &args).assert_code(1).error();
            assert_eq!(error["code"], "format", "{name} cut at {cut}: {error}");
            assert!(error["offset"].is_u64(), "{name} cut at {cut}: {error}");
            assert_eq!(common::file_tail(&error, 1), name, "{error}");
        }
    }
}
