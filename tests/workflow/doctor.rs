//! `zenpak doctor --game-dir` on the game fixture (`tests/common/game_fixture.rs`),
//! the real binary: the engine range and what tells its releases apart,
//! compression (Oodle included), encryption (key GUID, opened or not),
//! signing, IoStore and where mods go, the installed mods with their mount
//! order, in text and in the one JSON object; `--write` sets `[game]` in a
//! mod.toml keeping its comments; a folder that is not a game is a usage error.

use crate::common::game_fixture::GameFixture;
use crate::common::{run, temp_dir};
use serde_json::Value;
use std::path::Path;
use zenpak::iostore::container_header::StoreEntry;
use zenpak::iostore::{ContainerBuilder, ContainerOptions};
use zenpak::EngineVersion;

/// Writes `dir/<stem>.{utoc,ucas,pak}` for `engine` holding one package.
fn container(dir: &Path, stem: &str, engine: EngineVersion) {
    std::fs::create_dir_all(dir).unwrap();
    let mut b = ContainerBuilder::create(dir, stem, engine, ContainerOptions::default()).unwrap();
    b.add_package(
        zenpak::hash::package_id("/Game/Doctor/P"),
        b"package bytes",
        StoreEntry::default(),
        "Game/Content/Doctor/P.uasset",
    )
    .unwrap();
    b.finish().unwrap();
}

/// The `doctor` line of a `--message-format json` run (every line checked
/// against the schema the other commands use).
fn doctor_json(cwd: &std::path::Path, args: &[&str], code: i32) -> Value {
    let run = crate::cli_output::json(cwd, args, code);
    let doctors = run.lines_of("doctor");
    assert_eq!(doctors.len(), 1, "one doctor object: {}", run.stdout);
    doctors[0].clone()
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn doctor_reports_engine_compression_encryption_signing_and_mods() {
    let Some(game) = GameFixture::build("doctor-report") else {
        return;
    };
    let root = game.root.to_str().unwrap();
    let key = game.aes_key.as_str();

    let report = doctor_json(
        game.temp(),
        &["doctor", "--game-dir", root, "--aes-key", key],
        0,
    );
    assert_eq!(report["project"], "Game");
    // Engine: TOC 8 allows 5.5–5.7, the container header 5.6–5.7.
    assert_eq!(strings(&report["engine"]["releases"]), ["5.6", "5.7"]);
    assert_eq!(report["engine"]["range"], "5.6–5.7");
    assert!(report["engine"]["release"].is_null());
    let facts: Vec<String> = report["engine"]["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["fact"].as_str().unwrap().to_string())
        .collect();
    for fact in [
        "toc-version",
        "container-header-version",
        "pak-version",
        "script-objects",
    ] {
        assert!(facts.iter().any(|f| f == fact), "{fact} in {facts:?}");
    }
    let apart: Vec<&Value> = report["engine"]["tells_apart"]
        .as_array()
        .unwrap()
        .iter()
        .collect();
    assert!(apart
        .iter()
        .any(|d| d["fact"] == "legacy-ue5-object-version"
            && d["values"]["5.6"] != d["values"]["5.7"]));
    assert!(!apart.iter().any(|d| d["fact"] == "toc-version"));

    // Compression: Oodle with its 256 KiB blocks, zlib of the base containers and the pak.
    let compression = report["compression"].as_array().unwrap();
    let method = |m: &str| {
        compression
            .iter()
            .find(|c| {
                c["method"]
                    .as_str()
                    .is_some_and(|x| x.eq_ignore_ascii_case(m))
            })
            .unwrap_or_else(|| panic!("{m} in {compression:?}"))
    };
    assert_eq!(
        method("Oodle")["block_sizes"],
        serde_json::json!([game.oodle_block_size])
    );
    assert!(strings(&method("Oodle")["sources"]).contains(&"pakchunk2-Windows.pak".to_string()));
    assert!(strings(&method("zlib")["sources"]).contains(&"pakchunk3-Windows.pak".to_string()));
    assert!(strings(&method("zlib")["sources"]).contains(&"pakchunk0-Windows.pak".to_string()));

    // Encryption: opened with the key.
    let encryption = report["encryption"].as_array().unwrap();
    assert_eq!(encryption.len(), 1, "{encryption:?}");
    assert_eq!(encryption[0]["source"], "pakchunk1-Windows.pak");
    assert_eq!(encryption[0]["key_guid"], game.aes_key_guid.as_str());
    assert_eq!(encryption[0]["opened"], true);
    assert_eq!(encryption[0]["key"], "opened");

    // Signing: .sig files and the Signed container.
    assert_eq!(report["signing"]["signed"], true);
    assert_eq!(report["signing"]["sig_files"].as_array().unwrap().len(), 4);
    assert_eq!(
        strings(&report["signing"]["signed_containers"]),
        ["pakchunk0-Windows.pak"]
    );
    assert!(report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .any(|d| d["code"] == "game-signed"));

    // IoStore, a pak-only base pak, where mods go.
    assert_eq!(report["loading"]["io_store"], true);
    assert_eq!(report["loading"]["global_container"], true);
    assert_eq!(
        strings(&report["loading"]["pak_only_sources"]),
        ["pakchunk3-Windows.pak"]
    );
    assert_eq!(report["loading"]["mod_packages"], "io-store");
    let folders = report["mod_folders"].as_array().unwrap();
    assert_eq!(folders[0]["placement"], "mods");
    assert_eq!(folders[0]["exists"], true);
    assert_eq!(folders[1]["placement"], "logic-mods");
    assert_eq!(folders[1]["exists"], false);

    // Installed mods in mount sequence: ZenMod_P sorts above RetocMod_P, so it mounts first.
    let mods = report["installed_mods"].as_array().unwrap();
    let names: Vec<&str> = mods.iter().map(|m| m["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["ZenMod_P", "RetocMod_P"]);
    for m in mods {
        assert_eq!(m["order"], 103);
        assert_eq!(m["placement"], "mods");
        assert!(m["container_id"].as_str().is_some_and(|id| id.len() == 16));
        assert!(m["sequence"].is_u64());
        // Both override the game's SM_Cube (pakchunk0); the one mounted
        // last (RetocMod_P) is the copy the engine reads.
        let cube: Vec<&serde_json::Value> = m["overrides"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|o| o["kind"] == "package" && o["path"].as_str().unwrap().contains("/SM_Cube."))
            .collect();
        assert_eq!(cube.len(), 1, "{m}");
        assert_eq!(
            cube[0]["game_sources"],
            serde_json::json!(["pakchunk0-Windows.pak"])
        );
        assert_eq!(cube[0]["wins"], m["name"] == "RetocMod_P", "{m}");
    }
    assert_eq!(mods[1]["container_id"], "8f049c02adfc5c8e");
    assert!(mods[0]["sequence"].as_u64() < mods[1]["sequence"].as_u64());

    // Without the key: the encrypted container is reported, not opened, and nothing fails.
    let report = doctor_json(game.temp(), &["doctor", "--game-dir", root], 0);
    let encryption = report["encryption"].as_array().unwrap();
    assert_eq!(encryption[0]["source"], "pakchunk1-Windows.pak");
    assert_eq!(encryption[0]["opened"], false);
    assert_eq!(encryption[0]["key"], "no-key");
    assert_eq!(encryption[0]["key_guid"], game.aes_key_guid.as_str());
    assert_eq!(strings(&report["engine"]["releases"]), ["5.6", "5.7"]);

    // A wrong key: said, not fatal.
    let wrong = "11".repeat(32);
    let report = doctor_json(
        game.temp(),
        &["doctor", "--game-dir", root, "--aes-key", &wrong],
        0,
    );
    let encryption = report["encryption"].as_array().unwrap();
    assert_eq!(encryption[0]["opened"], false);
    assert_eq!(encryption[0]["key"], "wrong-key");

    // Text: the same facts, from any folder of the game.
    let text = run(
        None,
        &[
            "doctor",
            "--game-dir",
            game.mods.to_str().unwrap(),
            "--aes-key",
            key,
        ],
    );
    let (stdout, stderr) = (&text.ok().stdout, &text.stderr);
    for needle in [
        "5.6–5.7",
        "Oodle",
        "262144",
        "pakchunk1-Windows.pak",
        &game.aes_key_guid,
        "RetocMod_P",
        "ZenMod_P",
        "8f049c02adfc5c8e",
        ".sig",
    ] {
        assert!(stdout.contains(needle), "{needle} in:\n{stdout}");
    }
    assert!(
        stderr.contains("game-dir-adjusted") || stderr.contains("install folder"),
        "{stderr}"
    );
}

const MOD_TOML: &str = r#"# My mod's manifest.
[mod]
name = "Mine" # the output name
version = "0.1.0"

[game]
# The engine: set by doctor.
engine = "5.3" # was a guess
project = "Wrong"

[content]
root = "Cooked"
"#;

#[test]
fn doctor_write_sets_the_game_keeping_comments() {
    let Some(game) = GameFixture::build("doctor-write") else {
        return;
    };
    let repo = game.mod_repo("mine");
    std::fs::write(repo.join("mod.toml"), MOD_TOML).unwrap();
    let root = game.root.to_str().unwrap();

    // The range has two releases: engine is left as it is (a warning), project is set.
    let written = crate::cli_output::json(&repo, &["doctor", "--game-dir", root, "--write"], 0);
    assert!(!written.coded("warning", "engine-not-written").is_empty());
    let report = written.line_of("doctor");
    let changes = report["written"]["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert_eq!(changes[0]["key"], "game.project");
    assert_eq!(changes[0]["before"], "Wrong");
    assert_eq!(changes[0]["after"], "Game");
    let text = std::fs::read_to_string(repo.join("mod.toml")).unwrap();
    let parsed: toml::Value = toml::from_str(&text).unwrap();
    assert_eq!(parsed["game"]["project"].as_str(), Some("Game"));
    assert_eq!(parsed["game"]["engine"].as_str(), Some("5.3"));
    for comment in [
        "# My mod's manifest.",
        "# the output name",
        "# The engine: set by doctor.",
        "# was a guess",
    ] {
        assert!(text.contains(comment), "{comment} kept in:\n{text}");
    }

    // A second run changes nothing.
    run(Some(&repo), &["doctor", "--game-dir", root, "--write"]).ok();
    assert_eq!(
        std::fs::read_to_string(repo.join("mod.toml")).unwrap(),
        text
    );
}

#[test]
fn doctor_write_without_a_manifest_and_a_folder_that_is_no_game_are_usage_errors() {
    let Some(game) = GameFixture::build("doctor-usage") else {
        return;
    };
    let empty = game.mod_repo("empty");
    let root = game.root.to_str().unwrap();
    run(Some(&empty), &["doctor", "--game-dir", root, "--write"]).assert_code(2);
    crate::cli_output::json(&empty, &["doctor", "--game-dir", root, "--write"], 2).error();

    run(None, &["doctor", "--game-dir", empty.to_str().unwrap()]).assert_code(2);
    crate::cli_output::json(
        &empty,
        &["doctor", "--game-dir", empty.to_str().unwrap()],
        2,
    );
}

#[test]
fn doctor_write_sets_the_one_engine_release_and_the_recognised_profile() {
    // A Marvel Rivals-like layout: project `Marvel`, UE 5.3 containers
    // (TOC version 5 allows 5.0–5.3, container header NoExportInfo 5.3–5.4).
    let dir = temp_dir("doctor-marvel");
    let paks = dir.as_ref().join("Install/Marvel/Content/Paks");
    container(&paks, "pakchunk0-Windows", EngineVersion::UE5_3);
    let repo = dir.as_ref().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    std::fs::write(
        repo.join("mod.toml"),
        MOD_TOML.replace("\"5.3\"", "\"5.6\""),
    )
    .unwrap();
    let root = dir.as_ref().join("Install");
    let report = doctor_json(
        &repo,
        &["doctor", "--game-dir", root.to_str().unwrap(), "--write"],
        0,
    );
    assert_eq!(report["engine"]["release"], "5.3");
    assert_eq!(report["profile"], "marvel-rivals");
    let keys: Vec<&str> = report["written"]["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["key"].as_str().unwrap())
        .collect();
    assert_eq!(keys, ["game.engine", "game.project", "game.profile"]);
    assert_eq!(report["written"]["changes"][0]["before"], "5.6");
    let text = std::fs::read_to_string(repo.join("mod.toml")).unwrap();
    let parsed: toml::Value = toml::from_str(&text).unwrap();
    assert_eq!(parsed["game"]["engine"].as_str(), Some("5.3"));
    assert_eq!(parsed["game"]["project"].as_str(), Some("Marvel"));
    assert_eq!(parsed["game"]["profile"].as_str(), Some("marvel-rivals"));
    assert!(text.contains("engine = \"5.3\" # was a guess"), "{text}");
    // The manifest still loads as zenpak's own.
    zenpak::manifest::Manifest::load(&repo.join("mod.toml")).unwrap();
}

#[test]
fn contradicting_and_missing_evidence_is_said_not_guessed() {
    // 5.3 and 5.6 containers side by side: no release writes both.
    let dir = temp_dir("doctor-contradiction");
    let paks = dir.as_ref().join("Install/Game/Content/Paks");
    container(&paks, "pakchunk0-Windows", EngineVersion::UE5_3);
    container(&paks, "pakchunk1-Windows", EngineVersion::UE5_6);
    let root = dir.as_ref().join("Install");
    let report = crate::cli_output::json(
        dir.as_ref(),
        &["doctor", "--game-dir", root.to_str().unwrap()],
        1,
    )
    .line_of("doctor");
    assert_eq!(report["engine"]["releases"].as_array().unwrap().len(), 0);
    assert!(report["engine"]["range"].is_null());
    assert!(report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .any(|d| d["code"] == "engine-contradictory" && d["level"] == "error"));
    // No global container beside IoStore containers: said as a warning.
    assert!(report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .any(|d| d["code"] == "no-global-container"));
}
