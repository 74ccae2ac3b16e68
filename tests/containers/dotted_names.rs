//! Containers and paks whose base name holds a dot (`Mod.v2.pak`,
//! `Hello.Mod_P.utoc`): every command reads the companions named by the
//! whole base name (only the last extension replaced), never a decoy whose
//! name is cut at the first dot, and a missing companion is an error
//! naming it. The binary is run for every case.

use crate::common::{self, run};

use std::path::{Path, PathBuf};

use zenpak::iostore::container_header::StoreEntry;
use zenpak::iostore::{ContainerBuilder, ContainerOptions};
use zenpak::EngineVersion;

/// Writes `<stem>.utoc/.ucas/.pak` holding one package `A` and one loose
/// file, both named after `tag`, so a reader that opened another
/// container shows other paths.
fn container(dir: &Path, stem: &str, tag: &str) -> PathBuf {
    let mut b =
        ContainerBuilder::create(dir, stem, EngineVersion::UE5_6, ContainerOptions::default())
            .unwrap();
    let package = format!("/Game/{tag}");
    b.add_package(
        zenpak::hash::package_id(&package),
        &vec![7u8; 5000],
        StoreEntry::default(),
        &format!("MyGame/Content/{tag}.uasset"),
    )
    .unwrap();
    b.add_loose_file(&format!("MyGame/Config/{tag}.ini"), b"[x]\n")
        .unwrap();
    b.finish().unwrap().utoc
}

/// The paths `list --json` shows for `path`.
fn listed(path: &Path) -> Vec<String> {
    let v: serde_json::Value = run(None, &["list", path.to_str().unwrap(), "--json"])
        .assert_code_for(0, format_args!("list {}", path.display()))
        .doc();
    let mut paths: Vec<String> = v["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap().to_string())
        .filter(|p| !p.starts_with("_chunks/"))
        .collect();
    paths.sort();
    paths
}

fn expected(tag: &str) -> Vec<String> {
    vec![
        format!("MyGame/Config/{tag}.ini"),
        format!("MyGame/Content/{tag}.uzenasset"),
    ]
}

/// The `verify --json` report of `path` and the exit code.
fn verified(path: &Path) -> (i32, serde_json::Value) {
    let verified = run(None, &["verify", path.to_str().unwrap(), "--json"]);
    (verified.code, verified.doc())
}

#[test]
fn a_dotted_pak_lists_unpacks_and_verifies_its_own_files() {
    let dir = common::temp_dir("dotted-pak");
    container(&dir, "Mod.v2", "Versioned");
    // The decoy a stem cut at the first dot would read.
    container(&dir, "Mod", "Decoy");
    let pak = dir.join("Mod.v2.pak");
    assert_eq!(listed(&pak), expected("Versioned"));
    let (code, report) = verified(&pak);
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["chunks_checked"], 2, "{report}");
    assert_eq!(report["pak_entries"], 1, "{report}");
    let out = dir.join("out");
    run(
        None,
        &["unpack", pak.to_str().unwrap(), out.to_str().unwrap()],
    )
    .ok();
    assert!(out.join("MyGame/Config/Versioned.ini").is_file());
    assert!(out.join("MyGame/Content/Versioned.uzenasset").is_file());
    assert!(!out.join("MyGame/Config/Decoy.ini").exists());
    // The .ucas names its container too.
    assert_eq!(listed(&dir.join("Mod.v2.ucas")), expected("Versioned"));
}

#[test]
fn a_dotted_utoc_lists_unpacks_verifies_and_inspects_its_own_files() {
    let dir = common::temp_dir("dotted-utoc");
    let utoc = container(&dir, "Hello.Mod_P", "Dotted");
    container(&dir, "Hello", "Decoy");
    assert_eq!(utoc.file_name().unwrap(), "Hello.Mod_P.utoc");
    assert_eq!(listed(&utoc), expected("Dotted"));
    let (code, report) = verified(&utoc);
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["chunks_checked"], 2, "{report}");
    assert_eq!(report["warnings"], serde_json::json!([]), "{report}");
    let out = dir.join("out");
    run(
        None,
        &["unpack", utoc.to_str().unwrap(), out.to_str().unwrap()],
    )
    .ok();
    assert!(out.join("MyGame/Content/Dotted.uzenasset").is_file());
    assert!(!out.join("MyGame/Content/Decoy.uzenasset").exists());
    // The container id is the hash of the whole base name.
    let summary = run(None, &["inspect", utoc.to_str().unwrap(), "--json"])
        .ok()
        .doc();
    assert_eq!(summary["container_id_matches_file_name"], true, "{summary}");

    // A missing companion is an error naming it, not the decoy's.
    std::fs::remove_file(dir.join("Hello.Mod_P.ucas")).unwrap();
    let error = run(
        None,
        &["list", utoc.to_str().unwrap(), "--message-format", "json"],
    )
    .assert_code(1)
    .error();
    assert!(
        error["file"]
            .as_str()
            .unwrap()
            .ends_with("Hello.Mod_P.ucas"),
        "{error}"
    );
    // Written again, then without its .utoc.
    container(&dir, "Hello.Mod_P", "Dotted");
    std::fs::remove_file(&utoc).unwrap();
    // The pak alone still lists (a pak without a container is a plain pak).
    run(
        None,
        &[
            "list",
            dir.join("Hello.Mod_P.pak").to_str().unwrap(),
            "--message-format",
            "json",
        ],
    )
    .ok();
    let error = run(
        None,
        &[
            "list",
            dir.join("Hello.Mod_P.ucas").to_str().unwrap(),
            "--message-format",
            "json",
        ],
    )
    .assert_code(1)
    .error();
    assert!(
        error["file"]
            .as_str()
            .unwrap()
            .ends_with("Hello.Mod_P.utoc"),
        "{error}"
    );
}

#[test]
fn junk_named_with_a_dot_fails_verification() {
    let dir = common::temp_dir("dotted-junk");
    // A good `Junk.pak` beside: a stem cut at the first dot would verify it.
    container(&dir, "Junk", "Decoy");
    let junk = dir.join("Junk.v2.pak");
    let bytes: Vec<u8> = (0..4096u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::fs::write(&junk, bytes).unwrap();
    let error = run(
        None,
        &["verify", junk.to_str().unwrap(), "--message-format", "json"],
    )
    .assert_code(1)
    .error();
    assert!(
        error["file"].as_str().unwrap().ends_with("Junk.v2.pak"),
        "{error}"
    );
    run(None, &["list", junk.to_str().unwrap()]).assert_code(1);
}

#[test]
fn a_mod_whose_name_has_a_dot_builds_verifies_installs_and_packages() {
    let dir = common::temp_dir("dotted-mod");
    let repo = dir.join("mod");
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/hello-mod");
    for (relative, data) in common::files_under(&example) {
        let to = repo.join(&relative);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::write(to, data).unwrap();
    }
    let manifest = repo.join("mod.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    assert!(text.contains("name = \"HelloMod\""));
    std::fs::write(
        &manifest,
        text.replace("name = \"HelloMod\"", "name = \"Hello.Mod\""),
    )
    .unwrap();
    let _ = std::fs::remove_dir_all(repo.join("target"));

    run(Some(&repo), &["build"]).ok();
    for ext in ["utoc", "ucas", "pak"] {
        assert!(
            repo.join(format!("target/Hello.Mod_P.{ext}")).is_file(),
            "no Hello.Mod_P.{ext}"
        );
    }
    let (code, report) = verified(&repo.join("target/Hello.Mod_P.utoc"));
    assert_eq!(code, 0, "{report}");
    // Two packages and the container header; the pak holds the .ini.
    assert_eq!(report["chunks_checked"], 3, "{report}");
    assert_eq!(report["packages"], 2, "{report}");
    assert_eq!(report["pak_entries"], 1, "{report}");

    let game = dir.join("Game");
    let paks = game.join("HelloGame/Content/Paks");
    std::fs::create_dir_all(&paks).unwrap();
    run(
        Some(&repo),
        &["install", "--game-dir", game.to_str().unwrap()],
    )
    .ok();
    for ext in ["utoc", "ucas", "pak"] {
        assert!(paks.join(format!("~mods/Hello.Mod_P.{ext}")).is_file());
    }
    // The game folder finds the container beside the dotted pak.
    let (code, report) = verified(&paks);
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["chunks_checked"], 3, "{report}");
    assert_eq!(report["warnings"], serde_json::json!([]), "{report}");

    let archive = run(Some(&repo), &["package", "--message-format", "json"])
        .ok()
        .line_of("release-archive");
    let names: Vec<&str> = archive["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "~mods/Hello.Mod_P.utoc",
            "~mods/Hello.Mod_P.ucas",
            "~mods/Hello.Mod_P.pak"
        ]
    );
}
