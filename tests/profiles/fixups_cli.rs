//! The command line: `inspect X.usmap`, `inspect PKG --mappings --properties`,
//! `convert --profile marvel-rivals --mappings`.

use crate::fixups_support;

use fixups_support::common;

use std::process::Command;

fn zenpak(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_zenpak"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn inspect_mappings_shows_counts() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let usmap = corpus.join("uassetapi/TestUE5_6/BpThirdPerson/ExplicitEnumValuesExample.usmap");
    let (ok, stdout, stderr) = zenpak(&["inspect", usmap.to_str().unwrap(), "--json"]);
    assert!(ok, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["kind"], "usmap");
    assert_eq!(v["version"], 4);
    let m = zenpak::mappings::Mappings::load(&usmap).unwrap();
    assert_eq!(v["names"], m.names.len());
    assert_eq!(v["enums"], m.enums.len());
    assert_eq!(v["structs"], m.structs.len());
}

#[test]
fn inspect_package_with_mappings_lists_properties() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let dir = corpus.join("uassetapi/TestUE5_6/BpThirdPerson");
    let pkg = dir.join("SKM_Quinn_Simple.uasset");
    let usmap = dir.join("ExplicitEnumValuesExample.usmap");
    let (ok, stdout, stderr) = zenpak(&[
        "inspect",
        pkg.to_str().unwrap(),
        "--engine",
        "5.6",
        "--mappings",
        usmap.to_str().unwrap(),
        "--properties",
    ]);
    assert!(ok, "{stderr}");
    assert!(
        stdout.contains("export 0 SKM_Quinn_Simple (class SkeletalMesh)"),
        "{stdout}"
    );
    assert!(stdout.contains("properties 3274..3740"), "{stdout}");
    assert!(stdout.contains("Skeleton: ObjectProperty"), "{stdout}");
}

#[test]
fn convert_with_marvel_rivals_profile() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let dir = corpus.join("uassetapi/TestUE5_6/BpThirdPerson");
    let pkg = dir.join("SKM_Quinn_Simple.uasset");
    let usmap = dir.join("ExplicitEnumValuesExample.usmap");
    let tmp = common::temp_dir("fixups-cli");
    std::fs::create_dir_all(&tmp).unwrap();
    let generic = tmp.join("generic.uzenasset");
    let padded = tmp.join("padded.uzenasset");
    // The game's layout of SkeletalMeshLODInfo (see fixups_support::game_mappings).
    let stock = zenpak::mappings::Mappings::load(&usmap).unwrap();
    let game_usmap = tmp.join("game.usmap");
    std::fs::write(
        &game_usmap,
        fixups_support::game_mappings(&stock)
            .write(zenpak::mappings::BodyCompression::None)
            .unwrap(),
    )
    .unwrap();
    let usmap = game_usmap;
    let (ok, _, stderr) = zenpak(&[
        "convert",
        pkg.to_str().unwrap(),
        "--engine",
        "5.6",
        "-o",
        generic.to_str().unwrap(),
    ]);
    assert!(ok, "{stderr}");
    let (ok, stdout, stderr) = zenpak(&[
        "convert",
        pkg.to_str().unwrap(),
        "--engine",
        "5.6",
        "--profile",
        "marvel-rivals",
        "--mappings",
        usmap.to_str().unwrap(),
        "-o",
        padded.to_str().unwrap(),
    ]);
    assert!(ok, "{stderr}");
    assert!(
        stdout.contains("8 bytes inserted; located by mappings and structure"),
        "{stdout}"
    );
    assert!(
        stdout.contains("24 bytes inserted; located by mappings"),
        "{stdout}"
    );
    let g = std::fs::read(&generic).unwrap();
    let p = std::fs::read(&padded).unwrap();
    assert_eq!(g.len() + 14, p.len());
    // inspect --profile shows the same edits, before and after, without writing.
    let (ok, stdout, stderr) = zenpak(&[
        "inspect",
        pkg.to_str().unwrap(),
        "--engine",
        "5.6",
        "--profile",
        "marvel-rivals",
        "--mappings",
        usmap.to_str().unwrap(),
        "--json",
    ]);
    assert!(ok, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["kind"], "profile-preview");
    assert_eq!(
        v["uexp_bytes"][1].as_u64().unwrap(),
        v["uexp_bytes"][0].as_u64().unwrap() + 14
    );
    let tags = &v["report"]["exports"][1]["edits"];
    assert_eq!(tags[0]["before"], 3274 + 528 + 4 + 44);
    assert_eq!(tags[0]["after"], 3274 + 528 + 4 + 44 + 6);
    assert_eq!(tags[0]["inserted"], 4);
    assert_eq!(
        v["exports"][0]["after"][1].as_i64().unwrap(),
        v["exports"][0]["before"][1].as_i64().unwrap() + 14
    );
    let (ok, stdout, _) = zenpak(&[
        "inspect",
        pkg.to_str().unwrap(),
        "--engine",
        "5.6",
        "--profile",
        "marvel-rivals",
        "--mappings",
        usmap.to_str().unwrap(),
    ]);
    assert!(ok);
    assert!(
        stdout.contains("at 3850 -> 3856: 0 bytes replaced by 4"),
        "{stdout}"
    );
    // Without the game's mappings the SkeletalMesh is refused, with a hint.
    let (ok, _, stderr) = zenpak(&[
        "inspect",
        pkg.to_str().unwrap(),
        "--engine",
        "5.6",
        "--profile",
        "marvel-rivals",
    ]);
    assert!(!ok);
    assert!(stderr.contains("hidden-materials = false"), "{stderr}");
    let (ok, _, stderr) = zenpak(&[
        "convert",
        pkg.to_str().unwrap(),
        "--engine",
        "5.6",
        "--profile",
        "nope",
        "-o",
        "x",
    ]);
    assert!(!ok);
    assert!(stderr.contains("marvel-rivals"), "{stderr}");
    std::fs::remove_dir_all(&tmp).ok();
}
