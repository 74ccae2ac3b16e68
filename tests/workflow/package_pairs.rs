//! A package's files must be one cook's and its tables must make sense to
//! the engine (issue 51): a `.uexp` of another cook beside a `.uasset`, an
//! export that is its own class, super or template. `check` and `build`
//! refuse them, `verify` refuses the latter inside a container. Every
//! hostile input is made in the test from the corpus's `SM_Cube` (5.6).

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::cli_output::built_example;
use crate::common::{self, Run};

/// Where `SM_Cube` belongs in the example mod (HelloGame, 5.6).
const PLACE: &str = "Cooked/HelloGame/Content/LevelPrototyping/Meshes";

/// `zenpak --message-format json ARGS` in `dir`.
fn json(dir: &Path, args: &[&str]) -> Run {
    let mut all = vec!["--message-format", "json"];
    all.extend_from_slice(args);
    let out = common::run(Some(dir), &all);
    out.json().iter().for_each(super::message_schema::validate);
    out
}

/// The example mod with the 5.6 `SM_Cube` in place; its `.uexp` from `uexp`.
fn mod_with_cube(root: &Path, corpus: &Path, uexp: &Path) -> (PathBuf, PathBuf) {
    let repo = built_example(root);
    let place = repo.join(PLACE);
    std::fs::create_dir_all(&place).unwrap();
    for ext in ["uasset", "ubulk"] {
        std::fs::copy(
            corpus.join(format!("retoc/UE5.6/SM_Cube.{ext}")),
            place.join(format!("SM_Cube.{ext}")),
        )
        .unwrap();
    }
    std::fs::copy(uexp, place.join("SM_Cube.uexp")).unwrap();
    (repo, place)
}

/// No container was written into the mod's output folder.
fn no_container(repo: &Path) -> bool {
    !common::files_under(&repo.join("target"))
        .keys()
        .any(|name| name.ends_with(".utoc") || name.ends_with(".ucas"))
}

#[test]
fn a_uexp_of_another_cook_is_refused_by_check_and_build_naming_both_files() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    // The 5.5 cook's `.uexp` beside the 5.6 header: 9,795 bytes where the
    // header's bulk-data start offset (8,547) leaves 6,807 with the tag.
    let (repo, place) = mod_with_cube(
        tmp.path(),
        &corpus,
        &corpus.join("retoc/UE5.5/SM_Cube.uexp"),
    );
    for command in ["check", "build"] {
        let out = json(&repo, &[command]);
        out.assert_code_for(1, command);
        let errors = out.coded("error", "uexp-mismatch");
        assert_eq!(errors.len(), 1, "{command}: {}", out.text());
        assert_eq!(
            errors[0]["file"],
            place.join("SM_Cube.uasset").to_str().unwrap()
        );
        assert!(errors[0]["hint"]
            .as_str()
            .unwrap()
            .contains(place.join("SM_Cube.uexp").to_str().unwrap()));
    }
    assert!(no_container(&repo));
    // A `.uexp` one byte longer than its own cook's (the tag moved) is refused too.
    let mut uexp = std::fs::read(corpus.join("retoc/UE5.6/SM_Cube.uexp")).unwrap();
    let tag = uexp.split_off(uexp.len() - 4);
    uexp.push(0);
    uexp.extend_from_slice(&tag);
    std::fs::write(place.join("SM_Cube.uexp"), &uexp).unwrap();
    json(&repo, &["build"]).assert_code_for(1, "a byte added");
    // The pair of one cook builds.
    std::fs::copy(
        corpus.join("retoc/UE5.6/SM_Cube.uexp"),
        place.join("SM_Cube.uexp"),
    )
    .unwrap();
    json(&repo, &["check"]).ok();
    json(&repo, &["build"]).ok();
}

/// The offset of the export map in a legacy header, from `inspect --json`.
fn export_map_offset(header: &Path) -> usize {
    let inspected = common::run(
        None,
        &[
            "inspect",
            "--json",
            "--engine",
            "5.6",
            header.to_str().unwrap(),
        ],
    );
    let doc = inspected.ok().doc();
    let section = doc["sections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["section"] == "exports")
        .unwrap()
        .clone();
    section["offset"].as_u64().unwrap() as usize
}

/// The error of `out` about export 0 of the export map.
fn export_error(out: &Run) -> Option<Value> {
    out.diagnostics("error").into_iter().find(|d| {
        let structure: Vec<&str> = d["structure"]
            .as_array()
            .map(|s| s.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        d["code"] == "format" && structure.ends_with(&["export map", "export 0"])
    })
}

#[test]
fn an_export_that_is_its_own_class_super_or_template_is_refused() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let (repo, place) = mod_with_cube(
        tmp.path(),
        &corpus,
        &corpus.join("retoc/UE5.6/SM_Cube.uexp"),
    );
    let header = place.join("SM_Cube.uasset");
    let original = std::fs::read(&header).unwrap();
    let at = export_map_offset(&header);
    // An export-map entry starts with its class, super and template
    // indices (i32 each); export 0 is package index 1.
    for (field, offset) in [("class", 0), ("super", 4), ("template", 8)] {
        let mut bytes = original.clone();
        bytes[at + offset..at + offset + 4].copy_from_slice(&1i32.to_le_bytes());
        std::fs::write(&header, &bytes).unwrap();
        for command in ["check", "build"] {
            let out = json(&repo, &[command]);
            out.assert_code_for(1, format_args!("{field}: {command}"));
            assert!(
                export_error(&out).is_some(),
                "{field}: {command}: {}",
                out.text()
            );
        }
        assert!(no_container(&repo), "{field}");
    }
    std::fs::write(&header, &original).unwrap();
    json(&repo, &["build"]).ok();

    // Inside a container: export 0 of SM_Cube's Zen export map made its own class.
    let utoc = repo.join("target/HelloMod_P.utoc");
    let ucas = utoc.with_extension("ucas");
    assert!(json(&repo, &["verify", utoc.to_str().unwrap()])
        .ok()
        .diagnostics("error")
        .is_empty());
    let unpacked = tmp.path().join("unpacked");
    common::run(
        None,
        &["unpack", utoc.to_str().unwrap(), unpacked.to_str().unwrap()],
    )
    .ok();
    let zen = walkdir::WalkDir::new(&unpacked)
        .into_iter()
        .filter_map(|e| e.ok())
        .find(|e| e.file_name() == "SM_Cube.uzenasset")
        .unwrap()
        .into_path();
    let inspected = common::run(
        None,
        &[
            "inspect",
            "--json",
            "--engine",
            "5.6",
            zen.to_str().unwrap(),
        ],
    );
    let export_map = inspected.ok().doc()["summary"]["export_map_offset"]
        .as_u64()
        .unwrap() as usize;
    // The header lies whole in the container's (uncompressed) first block of the chunk.
    let zen_bytes = std::fs::read(&zen).unwrap();
    let head = &zen_bytes[..export_map + 72];
    let mut container = std::fs::read(&ucas).unwrap();
    let found = container
        .windows(head.len())
        .position(|w| w == head)
        .expect("the Zen header stored as it is");
    // ExportMapEntry: serial offset, serial size, name (8 each), outer, then class (u64).
    let class = found + export_map + 32;
    container[class..class + 8].copy_from_slice(&0u64.to_le_bytes());
    std::fs::write(&ucas, &container).unwrap();
    let verified = json(&repo, &["verify", utoc.to_str().unwrap()]);
    verified.assert_code(1);
    assert!(
        export_error(&verified).is_some(),
        "verify: {}",
        verified.text()
    );
}
