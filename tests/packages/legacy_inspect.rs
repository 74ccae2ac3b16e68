//! `zenpak inspect --json` on every corpus legacy package: the JSON is a
//! `legacy-package` whose name/import/export lists have the summary's counts.

use crate::common;

use std::process::Command;

#[test]
fn inspect_json_counts_match_the_summary() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let packages = common::legacy_packages(&corpus);
    assert!(!packages.is_empty());
    for (path, engine) in &packages {
        let output = Command::new(env!("CARGO_BIN_EXE_zenpak"))
            .args(["inspect", "--json", "--engine", engine.as_str()])
            .arg(path)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}: {}",
            path.display(),
            String::from_utf8_lossy(&output.stderr)
        );
        let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
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
    let output = Command::new(env!("CARGO_BIN_EXE_zenpak"))
        .args(["inspect", "--engine", "5.6"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(output.status.success());
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.contains("/Script/Engine.StaticMesh"), "{text}");
    assert!(
        text.contains("/Game/LevelPrototyping/Meshes/SM_Cube.SM_Cube:BodySetup_1"),
        "{text}"
    );
    assert!(text.contains("SM_Cube.ubulk"), "{text}");
}

#[test]
fn inspect_unversioned_without_engine_fails_cleanly() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let path = corpus.join("retoc/UE5.6/SM_Cube.uasset");
    let output = Command::new(env!("CARGO_BIN_EXE_zenpak"))
        .arg("inspect")
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("SM_Cube.uasset"), "{stderr}");
    assert!(stderr.contains("unversioned"), "{stderr}");
    assert!(stderr.contains("--engine"), "{stderr}");
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
    let output = Command::new(env!("CARGO_BIN_EXE_zenpak"))
        .args(["inspect", "--engine", "5.6"])
        .arg(&target)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).to_string();
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("SM_Cube.uasset"), "{stderr}");
    assert!(stderr.contains("byte offset"), "{stderr}");
    assert!(stderr.contains("total header size"), "{stderr}");
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
            let mut command = Command::new(env!("CARGO_BIN_EXE_zenpak"));
            command.arg("inspect").arg(&target);
            if let Some(engine) = engine {
                command.args(["--engine", engine]);
            }
            let output = command.output().unwrap();
            let stderr = String::from_utf8_lossy(&output.stderr).to_string();
            assert_eq!(
                output.status.code(),
                Some(1),
                "{name} cut at {cut}: {stderr}"
            );
            assert!(
                stderr.contains("truncated"),
                "{name} cut at {cut}: {stderr}"
            );
            assert!(
                stderr.contains("byte offset"),
                "{name} cut at {cut}: {stderr}"
            );
            assert!(
                !stderr.contains("recognises"),
                "{name} cut at {cut}: {stderr}"
            );
        }
    }
}
