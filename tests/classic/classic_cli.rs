//! The command line on classic packages: `zenpak inspect` (text and JSON)
//! and `zenpak deps`.

use crate::common::{self, run};

use std::path::PathBuf;

fn ut99() -> Option<PathBuf> {
    let dir = common::corpus()?.join("classic/ut99");
    dir.is_dir().then_some(dir)
}

/// Human output with the corpus folder as `[CORPUS]`.
fn normalized(text: &str) -> String {
    let corpus = common::corpus().unwrap();
    common::normalize(text, &[(&corpus, "CORPUS")])
}

#[test]
fn inspect_json_resolves_every_reference() {
    let Some(ut99) = ut99() else { return };
    for file in common::files_with_ext(&ut99, &["u", "utx", "uax", "umx", "unr"]) {
        let json = run(None, &["inspect", file.to_str().unwrap(), "--json"])
            .ok()
            .doc();
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
    let json = run(
        None,
        &[
            "inspect",
            ut99.join("Maps/CTF-Face.unr").to_str().unwrap(),
            "--json",
        ],
    )
    .ok()
    .doc();
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
    // IpDrv is the reference's example of a server-side-only package
    // (flags 0x5); AlfaFX.utx has file version 61 and a heritage table.
    for (file, snapshot) in [
        ("System/IpDrv.u", "classic_inspect_ipdrv"),
        ("Textures/AlfaFX.utx", "classic_inspect_alfafx"),
    ] {
        let out = run(None, &["inspect", ut99.join(file).to_str().unwrap()]);
        out.ok();
        common::assert_snapshot(snapshot, &normalized(&out.stdout));
    }
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
    let out = run(None, &args);
    out.assert_code(1);
    common::assert_snapshot("classic_deps_ctf_face", &normalized(&out.stdout));
    let mut json_messages = args.clone();
    json_messages.extend(["--message-format", "json"]);
    let error = run(None, &json_messages).assert_code(1).error();
    assert_eq!(error["code"], "format", "{error}");
    assert!(error["hint"].is_string(), "{error}");

    args.push("--json");
    let json = run(None, &args).assert_code(1).doc();
    let required = json["packages"][0]["required"].as_array().unwrap();
    let missing = required
        .iter()
        .filter(|r| r["availability"]["status"] == "missing")
        .count();
    assert_eq!(missing, 16, "{json}");
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
    let out = run(None, &recursive);
    out.assert_code(1); // the map's missing packages are still missing
    common::assert_snapshot("classic_deps_ctf_face_recursive", &normalized(&out.stdout));

    // Without search folders it only lists.
    let out = run(
        None,
        &[
            "deps",
            ut99.join("Maps/Entry.unr").to_str().unwrap(),
            "--objects",
        ],
    );
    out.ok();
    common::assert_snapshot("classic_deps_entry_objects", &normalized(&out.stdout));
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
    for command in ["inspect", "deps"] {
        let out = run(
            None,
            &[command, file.to_str().unwrap(), "--message-format", "json"],
        );
        let error = out.assert_code(1).error();
        assert_eq!(common::file_tail(&error, 1), "Broken.u", "{error}");
        assert_eq!(error["offset"], 12, "{error}");
        assert_eq!(error["code"], "format", "{error}");
        assert_eq!(
            error["structure"],
            serde_json::json!(["header > name table count"]),
            "{error}"
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}
