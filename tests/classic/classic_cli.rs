//! The command line on classic packages: `zenpak inspect` (text and JSON)
//! and `zenpak deps`.

use crate::common;

use std::path::PathBuf;
use std::process::Command;

fn ut99() -> Option<PathBuf> {
    let dir = common::corpus()?.join("classic/ut99");
    dir.is_dir().then_some(dir)
}

fn zenpak(args: &[&str]) -> (bool, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_zenpak"))
        .args(args)
        .output()
        .unwrap();
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn inspect_json_resolves_every_reference() {
    let Some(ut99) = ut99() else { return };
    for file in common::files_with_ext(&ut99, &["u", "utx", "uax", "umx", "unr"]) {
        let (ok, stdout, stderr) = zenpak(&["inspect", file.to_str().unwrap(), "--json"]);
        assert!(ok, "{}: {stderr}", file.display());
        let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!(json["kind"], "classic-package");
        let package = json["package"].as_str().unwrap();
        assert_eq!(
            json["names"].as_array().unwrap().len() as i64,
            json["name_table"]["count"].as_i64().unwrap()
        );
        for import in json["imports"].as_array().unwrap() {
            let path = import["path"].as_str().unwrap();
            let class = import["class"].as_str().unwrap();
            assert!(
                !path.is_empty() && !path.contains('<') && !path.starts_with('.'),
                "{path}"
            );
            assert_eq!(class.split('.').count(), 2, "{class}");
            if let Some(outer) = import["outer"].as_str() {
                assert!(
                    path.starts_with(&format!("{outer}.")),
                    "{path} is not inside {outer}"
                );
            }
        }
        for export in json["exports"].as_array().unwrap() {
            let path = export["path"].as_str().unwrap();
            assert!(path.starts_with(&format!("{package}.")), "{path}");
            assert!(export["class"].as_str().unwrap().contains('.'));
            assert_eq!(
                export["serial_offset"].is_null(),
                export["serial_size"] == 0
            );
            assert!(export["flags"]["names"].is_array());
        }
    }
    let (_, stdout, _) = zenpak(&[
        "inspect",
        ut99.join("Maps/CTF-Face.unr").to_str().unwrap(),
        "--json",
    ]);
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let rune = json["imports"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["path"] == "SkyCity.Deco.runeSgn2")
        .unwrap();
    assert_eq!(rune["class"], "Engine.Texture");
    assert_eq!(rune["outer"], "SkyCity.Deco");
    assert_eq!(
        json["package_flags"]["names"],
        serde_json::json!(["PKG_AllowDownload"])
    );
    assert_eq!(json["guid"], "68722E6411D38195E0006BA2D2321081");
}

#[test]
fn inspect_text_decodes_flags() {
    let Some(ut99) = ut99() else { return };
    let (ok, stdout, stderr) = zenpak(&["inspect", ut99.join("System/IpDrv.u").to_str().unwrap()]);
    assert!(ok, "{stderr}");
    // IpDrv is the reference's example of a server-side-only package (flags 0x5).
    assert!(
        stdout.contains("package flags  0x00000005 PKG_AllowDownload | PKG_ServerSideOnly"),
        "{stdout}"
    );
    assert!(stdout.contains("RF_Public"));
    assert!(stdout.contains("RF_Native"));
    assert!(stdout.contains("[Core.Class]"));
    let (ok, stdout, _) = zenpak(&[
        "inspect",
        ut99.join("Textures/AlfaFX.utx").to_str().unwrap(),
    ]);
    assert!(ok);
    assert!(stdout.contains("file version   61"));
    assert!(stdout.contains("heritage       1 at offset 44"));
}

#[test]
fn deps_reports_missing_packages() {
    let Some(ut99) = ut99() else { return };
    let map = ut99.join("Maps/CTF-Face.unr");
    let folders: Vec<String> = ["System", "Textures", "Sounds", "Music", "Maps"]
        .iter()
        .map(|f| ut99.join(f).to_string_lossy().into_owned())
        .collect();
    let mut args = vec!["deps", map.to_str().unwrap(), "--search"];
    args.extend(folders.iter().map(String::as_str));
    // Missing packages fail the check (exit 1), after the full report.
    let (ok, stdout, stderr) = zenpak(&args);
    assert!(!ok, "{stderr}");
    assert!(
        stderr.contains("16 required package(s) are in no search folder"),
        "{stderr}"
    );
    assert!(stdout.contains("needs 18 package(s)"), "{stdout}");
    assert!(
        stdout
            .lines()
            .any(|l| l.trim_start().starts_with("Botpack") && l.contains("MISSING")),
        "{stdout}"
    );
    assert!(stdout
        .lines()
        .any(|l| l.trim_start().starts_with("UnrealShare") && l.contains("MISSING")));
    assert!(stdout
        .lines()
        .any(|l| l.trim_start().starts_with("Engine") && l.contains("present")));

    args.push("--json");
    let (ok, stdout, _) = zenpak(&args);
    assert!(!ok);
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let required = json["packages"][0]["required"].as_array().unwrap();
    let botpack = required.iter().find(|r| r["package"] == "Botpack").unwrap();
    assert_eq!(botpack["availability"]["status"], "missing");
    let engine = required.iter().find(|r| r["package"] == "Engine").unwrap();
    assert_eq!(engine["availability"]["status"], "present");
    assert_eq!(
        engine["availability"]["missing_objects"],
        serde_json::json!([])
    );

    // --recursive goes on to the packages found.
    let mut recursive = args.clone();
    recursive.pop();
    recursive.push("--recursive");
    let (ok, stdout, _) = zenpak(&recursive);
    assert!(!ok, "the map's missing packages are still missing");
    assert!(
        stdout.contains("package Engine (file version 69) needs 1 package(s)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("package Core (file version 69) needs 0 package(s)"),
        "{stdout}"
    );

    // Without search folders it only lists.
    let (ok, stdout, _) = zenpak(&[
        "deps",
        ut99.join("Maps/Entry.unr").to_str().unwrap(),
        "--objects",
    ]);
    assert!(ok);
    assert!(stdout.contains("needs 5 package(s)"), "{stdout}");
    assert!(stdout.contains("Logo.UTLogo1  [Engine.Texture]"));
    assert!(!stdout.contains("MISSING"));
}

#[test]
fn bad_files_give_errors_with_offsets() {
    let dir = common::temp_dir("classic-cli");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("Broken.u");
    let mut bytes = vec![0xC1, 0x83, 0x2A, 0x9E, 69, 0, 0, 0, 1, 0, 0, 0];
    bytes.extend_from_slice(&2_000_000_000i32.to_le_bytes());
    bytes.resize(1024, 0);
    std::fs::write(&file, &bytes).unwrap();
    let (ok, _, stderr) = zenpak(&["inspect", file.to_str().unwrap()]);
    assert!(!ok);
    assert!(stderr.contains("Broken.u"), "{stderr}");
    assert!(stderr.contains("at byte offset 12"), "{stderr}");
    let (ok, _, stderr) = zenpak(&["deps", file.to_str().unwrap()]);
    assert!(!ok);
    assert!(stderr.contains("count 2000000000"), "{stderr}");
    std::fs::remove_dir_all(&dir).ok();
}
