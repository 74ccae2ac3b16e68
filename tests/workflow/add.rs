//! `zenpak add`: cooked packages placed by the package name their header
//! carries, with their companions; a different file at the destination is
//! refused; a package in the wrong folder is told where it belongs.

use std::path::Path;

use serde_json::Value;

use super::cli_output::{built_example as example, json};
use crate::common::Run;

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn added(run: &Run) -> Vec<Value> {
    run.line_of("added")["packages"].as_array().unwrap().clone()
}

#[test]
fn add_places_a_package_and_its_companions_by_its_name() {
    let Some(corpus) = crate::common::corpus() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let repo = example(tmp.path());
    let elsewhere = tmp.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let source = corpus.join("retoc/UE5.6/SM_Cube.uasset");
    let place = repo.join("Cooked/HelloGame/Content/LevelPrototyping/Meshes");

    // From another folder, naming the mod with --to, and a companion file.
    let packages = added(&json(
        &elsewhere,
        &["add", s(&source.with_extension("uexp")), "--to", s(&repo)],
        0,
    ));
    assert_eq!(packages.len(), 1);
    assert_eq!(
        packages[0]["package"],
        "/Game/LevelPrototyping/Meshes/SM_Cube"
    );
    assert_eq!(packages[0]["copied"], true);
    assert_eq!(packages[0]["to"], s(&place.join("SM_Cube.uasset")));
    for ext in ["uasset", "uexp", "ubulk"] {
        let copied = std::fs::read(place.join(format!("SM_Cube.{ext}"))).unwrap();
        assert_eq!(
            copied,
            std::fs::read(source.with_extension(ext)).unwrap(),
            "{ext}"
        );
    }
    assert_eq!(packages[0]["files"].as_array().unwrap().len(), 3);

    // Again, from inside the mod: the same bytes are there, nothing to do.
    assert_eq!(
        added(&json(&repo, &["add", s(&source)], 0))[0]["copied"],
        false
    );

    // The build takes it at that path, under that name.
    let built = json(&repo, &["build"], 0);
    assert!(built
        .lines_of("package")
        .iter()
        .any(|l| l["package"] == "/Game/LevelPrototyping/Meshes/SM_Cube"
            && l["path"] == "HelloGame/Content/LevelPrototyping/Meshes/SM_Cube.uasset"));

    // Other bytes at the destination: refused, named, left as they were.
    let uexp = place.join("SM_Cube.uexp");
    std::fs::write(&uexp, b"another package's export data").unwrap();
    let refusal = json(&repo, &["add", s(&source)], 1).error();
    assert_eq!(refusal["code"], "not-owned");
    assert!(refusal["message"].as_str().unwrap().contains(s(&uexp)));
    assert_eq!(
        std::fs::read(&uexp).unwrap(),
        b"another package's export data"
    );

    // Not a package: a usage error.
    json(&repo, &["add", s(&repo.join("mod.toml"))], 2);
}

#[test]
fn a_package_in_the_wrong_folder_is_told_where_it_belongs() {
    let Some(corpus) = crate::common::corpus() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let repo = example(tmp.path());
    let wrong = repo.join("Cooked/Misc");
    std::fs::create_dir_all(&wrong).unwrap();
    for ext in ["uasset", "uexp", "ubulk"] {
        std::fs::copy(
            corpus.join(format!("retoc/UE5.6/T_Quinn_01_D.{ext}")),
            wrong.join(format!("T_Quinn_01_D.{ext}")),
        )
        .unwrap();
    }
    let belongs = repo.join("Cooked/HelloGame/Content/Characters/Mannequins/Textures/Quinn");
    for command in ["check", "build"] {
        // Refused (whether as a manifest-level or a content error is the
        // business of the check/build agreement tests).
        let out = crate::common::run(Some(&repo), &["--message-format", "json", command]);
        assert!(matches!(out.code, 1 | 2), "{command}: {}", out.code);
        let lines: Vec<Value> = out.json();
        lines.iter().for_each(super::message_schema::validate);
        let problem = lines
            .iter()
            .find(|l| l["level"] == "error" && l["file"] == s(&wrong.join("T_Quinn_01_D.uasset")))
            .unwrap_or_else(|| panic!("{command}: {lines:?}"));
        assert!(
            problem["hint"].as_str().unwrap().contains(s(&belongs)),
            "{command}: the hint names the folder: {problem}"
        );
    }
    // What the hint says to run puts it there, and the mod builds.
    json(&repo, &["add", s(&wrong.join("T_Quinn_01_D.uasset"))], 0);
    assert!(belongs.join("T_Quinn_01_D.ubulk").is_file());
    std::fs::remove_dir_all(&wrong).unwrap();
    json(&repo, &["build"], 0);
}

/// Issue 51: `add SM_Cube.uasset`, a bare file name run from the folder
/// holding it, adds the package with its companions (it failed naming no
/// file: the name's folder is empty).
#[test]
fn a_bare_file_name_is_added_from_the_current_folder() {
    let Some(corpus) = crate::common::corpus() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let repo = example(tmp.path());
    let incoming = repo.join("incoming");
    std::fs::create_dir_all(&incoming).unwrap();
    for ext in ["uasset", "uexp", "ubulk"] {
        std::fs::copy(
            corpus.join(format!("retoc/UE5.6/SM_Cube.{ext}")),
            incoming.join(format!("SM_Cube.{ext}")),
        )
        .unwrap();
    }
    let packages = added(&json(&incoming, &["add", "SM_Cube.uasset"], 0));
    assert_eq!(packages.len(), 1);
    assert_eq!(packages[0]["files"].as_array().unwrap().len(), 3);
    let place = repo.join("Cooked/HelloGame/Content/LevelPrototyping/Meshes");
    for ext in ["uasset", "uexp", "ubulk"] {
        assert_eq!(
            std::fs::read(place.join(format!("SM_Cube.{ext}"))).unwrap(),
            std::fs::read(incoming.join(format!("SM_Cube.{ext}"))).unwrap(),
            "{ext}"
        );
    }
    // A bare name that is not there is an error naming it.
    let missing = json(&incoming, &["add", "SM_Sphere.uasset"], 2).error();
    assert_eq!(
        crate::common::file_tail(&missing, 2),
        "incoming/SM_Sphere.uasset"
    );
}
