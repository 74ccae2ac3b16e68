//! `check --game-dir` and `build --game-dir`: a mod against the game it is
//! for (the test game of `common::game_fixture`), driven through the real
//! binary and read back as `--message-format json` lines, field by field.
//!
//! The import tests use SN2's blueprint structs and enums (UE 5.6): the
//! game gets a base container `pakchunk4-Windows` of SN2 packages and, as
//! a game built from these packages ships one, a `global.utoc` whose
//! script objects are those the game's packages import (the fixture's
//! retoc-written UE5.3 table has no `/Script/UWEAbilitySystem`, SN2's game
//! module).

use std::path::{Path, PathBuf};

use serde_json::Value;
use zenpak::iostore::chunk::ChunkType;
use zenpak::iostore::{ContainerBuilder, ContainerOptions};
use zenpak::EngineVersion;

use crate::common;
use crate::common::game_fixture::{zenpak_build, GameFixture, FIXTURE_AES_KEY};

const SN2_CHARACTER: &str = "uassetapi/TestManyAssets/SN2/Content/Blueprints/Character";
const IMPORTER: &str = "/Game/Blueprints/Character/F_AnimSyncSettings";
const IMPORTED: &str = "/Game/Blueprints/Character/E_AnimSyncMethodOptions.E_AnimSyncMethodOptions";

/// Copies SN2 package `name` into `<repo>/Cooked/Game/Content/Blueprints/Character/`,
/// every occurrence of `rename.0` in its header replaced by `rename.1` (same length).
fn place_sn2(corpus: &Path, repo: &Path, name: &str, rename: Option<(&str, &str)>) {
    place_sn2_in(corpus, repo, "Blueprints/Character", name, rename, name);
}

/// [`place_sn2`] into `<repo>/Cooked/Game/Content/<folder>/<target>.*`.
fn place_sn2_in(
    corpus: &Path,
    repo: &Path,
    folder: &str,
    name: &str,
    rename: Option<(&str, &str)>,
    target: &str,
) {
    let to = repo.join("Cooked/Game/Content").join(folder);
    std::fs::create_dir_all(&to).unwrap();
    let target = rename.map_or(target, |r| if name == r.0 { r.1 } else { target });
    for ext in ["uasset", "uexp"] {
        let mut bytes =
            std::fs::read(corpus.join(SN2_CHARACTER).join(format!("{name}.{ext}"))).unwrap();
        if let Some((from, to_name)) = rename {
            assert_eq!(from.len(), to_name.len());
            let (from, to_name) = (from.as_bytes(), to_name.as_bytes());
            let mut i = 0;
            while i + from.len() <= bytes.len() {
                if &bytes[i..i + from.len()] == from {
                    bytes[i..i + from.len()].copy_from_slice(to_name);
                    i += from.len();
                } else {
                    i += 1;
                }
            }
        }
        std::fs::write(to.join(format!("{target}.{ext}")), bytes).unwrap();
    }
}

/// The fixture game plus `pakchunk4-Windows` holding the SN2 packages
/// `base`, and a global container with the script objects the game's
/// packages import.
fn sn2_game(name: &str, base: &[&str]) -> Option<GameFixture> {
    let fixture = GameFixture::build(name)?;
    let corpus = common::corpus()?;
    let repo = fixture.mod_repo("sn2-base");
    for package in base {
        place_sn2(&corpus, &repo, package, None);
    }
    let pak = zenpak_build(&repo, &GameFixture::manifest_text("Sn2Base"), None);
    for ext in ["pak", "utoc", "ucas"] {
        std::fs::rename(
            pak.with_extension(ext),
            fixture.paks.join(format!("pakchunk4-Windows.{ext}")),
        )
        .unwrap();
    }
    // The game's script objects: what its packages (SN2's and the fixture's) import.
    let sources = fixture.temp().join("script-sources");
    for (i, dir) in [
        corpus.join("uassetapi/TestManyAssets/SN2/Content"),
        corpus.join("retoc/UE5.6"),
    ]
    .iter()
    .enumerate()
    {
        let to = sources.join(i.to_string());
        std::fs::create_dir_all(&to).unwrap();
        for entry in walkdir::WalkDir::new(dir).into_iter().flatten() {
            let path = entry.path();
            if path
                .extension()
                .is_some_and(|e| e == "uasset" || e == "uexp")
            {
                let rel = path
                    .strip_prefix(dir)
                    .unwrap()
                    .to_string_lossy()
                    .replace('/', "_");
                std::fs::copy(path, to.join(rel)).unwrap();
            }
        }
    }
    let table = zenpak::extract::script_objects::ScriptObjects::from_legacy_folder(
        &sources,
        EngineVersion::UE5_6,
    )
    .unwrap();
    for ext in ["utoc", "ucas"] {
        std::fs::remove_file(fixture.paks.join(format!("global.{ext}"))).unwrap();
    }
    let mut global = ContainerBuilder::create(
        &fixture.paks,
        "global",
        EngineVersion::UE5_6,
        ContainerOptions::default(),
    )
    .unwrap();
    global
        .add_bulk_chunk(
            0,
            ChunkType::ScriptObjects,
            0,
            &table.write_ue5(),
            "Engine/ScriptObjects.bin",
        )
        .unwrap();
    global.finish().unwrap();
    Some(fixture)
}

/// Runs zenpak in `cwd` with JSON messages; returns (exit code, JSON lines).
fn run_json(cwd: &Path, args: &[&str]) -> (i32, Vec<Value>) {
    let mut all = vec!["--message-format", "json"];
    all.extend_from_slice(args);
    let out = common::run(Some(cwd), &all);
    (out.code, out.json())
}

fn line<'a>(lines: &'a [Value], reason: &str) -> &'a Value {
    lines
        .iter()
        .find(|l| l["reason"] == reason)
        .unwrap_or_else(|| panic!("no `{reason}` line in {lines:#?}"))
}

fn diagnostics<'a>(lines: &'a [Value], code: &str) -> Vec<&'a Value> {
    lines
        .iter()
        .filter(|l| l["reason"] == "diagnostic" && l["code"] == code)
        .collect()
}

fn mod_repo(fixture: &GameFixture, name: &str) -> PathBuf {
    let repo = fixture.mod_repo(name);
    std::fs::write(repo.join("mod.toml"), GameFixture::manifest_text(name)).unwrap();
    repo
}

/// `zenpak <command> --game-dir <fixture> --aes-key <its key>` in `repo`.
fn against_game(fixture: &GameFixture, repo: &Path, command: &str) -> (i32, Vec<Value>) {
    let game = fixture.root.to_str().unwrap();
    run_json(
        repo,
        &[command, "--game-dir", game, "--aes-key", FIXTURE_AES_KEY],
    )
}

fn check(fixture: &GameFixture, repo: &Path) -> (i32, Vec<Value>) {
    against_game(fixture, repo, "check")
}

#[test]
fn an_import_the_game_lacks_fails_and_passes_once_the_game_has_it() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    // The game has the SN2 enums but not the one the mod's struct uses.
    let Some(fixture) = sn2_game("gamecheck-missing", &["E_GAAnimEndOptions"]) else {
        return;
    };
    let repo = mod_repo(&fixture, "Structs");
    place_sn2(&corpus, &repo, "F_AnimSyncSettings", None);
    let (code, lines) = check(&fixture, &repo);
    assert_eq!(code, 1, "{lines:#?}");
    let game = &line(&lines, "check")["game"];
    let unresolved = game["unresolved_imports"].as_array().unwrap();
    assert_eq!(unresolved.len(), 1, "{unresolved:#?}");
    assert_eq!(unresolved[0]["importer"], IMPORTER);
    assert_eq!(unresolved[0]["import"], IMPORTED);
    assert_eq!(
        unresolved[0]["looked_in"],
        serde_json::json!(["mod", "game-packages"])
    );
    let errors = diagnostics(&lines, "unresolved-import");
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0]["level"], "error");
    assert!(errors[0]["file"]
        .as_str()
        .unwrap()
        .ends_with("F_AnimSyncSettings.uasset"));
    assert_eq!(line(&lines, "finished")["exit_code"], 1);
    // Every other import (script objects included) was found.
    assert!(game["imports_checked"].as_u64().unwrap() > 5);
    assert!(game["script_objects"].as_u64().unwrap() > 0);

    // `build --game-dir` stops before writing anything.
    let (code, lines) = against_game(&fixture, &repo, "build");
    assert_eq!(code, 1, "{lines:#?}");
    assert_eq!(diagnostics(&lines, "unresolved-import").len(), 1);
    assert!(!repo.join("out").exists(), "nothing is built");

    // The same mod once the game has the enum: passes, and builds.
    let Some(fixture) = sn2_game(
        "gamecheck-present",
        &["E_GAAnimEndOptions", "E_AnimSyncMethodOptions"],
    ) else {
        return;
    };
    let repo = mod_repo(&fixture, "Structs");
    place_sn2(&corpus, &repo, "F_AnimSyncSettings", None);
    let (code, lines) = check(&fixture, &repo);
    assert_eq!(code, 0, "{lines:#?}");
    let game = &line(&lines, "check")["game"];
    assert_eq!(game["unresolved_imports"], serde_json::json!([]));
    assert_eq!(game["overrides"], serde_json::json!([]));
    assert_eq!(game["facts"]["engines"], serde_json::json!(["5.6", "5.7"]));
    assert!(diagnostics(&lines, "unresolved-import").is_empty());
    let (code, lines) = against_game(&fixture, &repo, "build");
    assert_eq!(code, 0, "{lines:#?}");
    assert_eq!(
        line(&lines, "game-check")["unresolved_imports"],
        serde_json::json!([])
    );
    assert!(repo.join("out/Structs_P.utoc").is_file());
}

#[test]
fn an_override_is_listed_and_a_different_class_is_an_error() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let Some(fixture) = sn2_game(
        "gamecheck-override",
        &["E_GAAnimEndOptions", "E_AnimSyncMethodOptions"],
    ) else {
        return;
    };
    // The mod replaces the game's enum with its own copy: same class.
    let repo = mod_repo(&fixture, "Enums");
    place_sn2(&corpus, &repo, "E_GAAnimEndOptions", None);
    let (code, lines) = check(&fixture, &repo);
    assert_eq!(code, 0, "{lines:#?}");
    let overrides = line(&lines, "check")["game"]["overrides"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(overrides.len(), 1, "{overrides:#?}");
    let o = &overrides[0];
    assert_eq!(
        o["package"],
        "/Game/Blueprints/Character/E_GAAnimEndOptions"
    );
    assert_eq!(o["game_container"], "pakchunk4-Windows.pak");
    assert_eq!(o["game_order"], 3);
    assert_eq!(o["mod_order"], 103);
    assert_eq!(o["mod_wins"], true);
    assert_eq!(o["class_check"], "same");
    assert_eq!(o["mod_class"], "/Script/Engine.UserDefinedEnum");
    assert_eq!(o["game_class"], "/Script/Engine.UserDefinedEnum");
    let notes = diagnostics(&lines, "overrides-game-package");
    assert_eq!(notes.len(), 1);
    assert_eq!(notes[0]["level"], "note");

    // Once the mod is installed, its own copy in ~mods is not the game's.
    let pak = zenpak_build(&repo, &GameFixture::manifest_text("Enums"), None);
    let mut fixture = fixture;
    fixture.add_mod(
        &pak,
        "Enums_P",
        vec![o["package"].as_str().unwrap().to_string()],
        false,
    );
    let (code, lines) = check(&fixture, &repo);
    assert_eq!(code, 0, "{lines:#?}");
    let o = &line(&lines, "check")["game"]["overrides"][0];
    assert_eq!(o["game_container"], "pakchunk4-Windows.pak");
    assert_eq!(
        o["game_containers"],
        serde_json::json!(["pakchunk4-Windows.pak"])
    );

    // A struct under the enum's name: the game's object is an enum.
    let repo = mod_repo(&fixture, "Clash");
    place_sn2(
        &corpus,
        &repo,
        "F_AnimSyncSettings",
        Some(("F_AnimSyncSettings", "E_GAAnimEndOptions")),
    );
    let (code, lines) = check(&fixture, &repo);
    assert_eq!(code, 1, "{lines:#?}");
    let o = &line(&lines, "check")["game"]["overrides"][0];
    assert_eq!(
        o["package"],
        "/Game/Blueprints/Character/E_GAAnimEndOptions"
    );
    assert_eq!(o["class_check"], "differs");
    assert_eq!(o["game_class"], "/Script/Engine.UserDefinedEnum");
    assert_eq!(o["mod_class"], "/Script/CoreUObject.UserDefinedStruct");
    let errors = diagnostics(&lines, "override-class-differs");
    assert_eq!(errors.len(), 1, "{lines:#?}");
    assert_eq!(errors[0]["level"], "error");
    assert!(errors[0]["file"]
        .as_str()
        .unwrap()
        .ends_with("E_GAAnimEndOptions.uasset"));
}

#[test]
fn a_package_the_game_has_in_several_containers_names_the_engines_pick() {
    let Some(fixture) = GameFixture::build("gamecheck-several") else {
        return;
    };
    // SM_Cube: in the base game and in both installed mods.
    let repo = mod_repo(&fixture, "Cube");
    let cube = fixture.place_ue56_package(&repo, "SM_Cube");
    let (_, lines) = check(&fixture, &repo);
    let overrides = line(&lines, "check")["game"]["overrides"]
        .as_array()
        .unwrap()
        .clone();
    let o = overrides
        .iter()
        .find(|o| o["package"] == cube.as_str())
        .unwrap_or_else(|| panic!("{overrides:#?}"));
    let containers = o["game_containers"].as_array().unwrap();
    assert_eq!(containers.len(), 3, "{o:#?}");
    // Equal order 103 in ~mods: the last mounted (lowest path) wins a chunk.
    assert_eq!(o["game_container"], "~mods/RetocMod_P.pak");
    assert_eq!(containers[0], "~mods/RetocMod_P.pak");
    assert!(containers.contains(&Value::from("pakchunk0-Windows.pak")));
    // `~mods/Cube_P.pak` sorts below RetocMod_P, so it mounts later and wins.
    assert_eq!(o["mod_wins"], true);
    let several = diagnostics(&lines, "game-package-in-several-containers");
    assert_eq!(several.len(), 1, "{lines:#?}");
}

#[test]
fn without_script_objects_script_imports_are_not_checked_and_it_says_so() {
    let Some(fixture) = GameFixture::build("gamecheck-noglobal") else {
        return;
    };
    for ext in ["utoc", "ucas"] {
        std::fs::remove_file(fixture.paks.join(format!("global.{ext}"))).unwrap();
    }
    let repo = mod_repo(&fixture, "Texture");
    fixture.place_ue56_package(&repo, "T_Quinn_01_D");
    let (code, lines) = check(&fixture, &repo);
    assert_eq!(code, 0, "{lines:#?}");
    let game = &line(&lines, "check")["game"];
    assert_eq!(game["script_objects"], Value::Null);
    assert_eq!(game["unresolved_imports"], serde_json::json!([]));
    assert_eq!(diagnostics(&lines, "game-without-script-objects").len(), 1);
    // The texture is the base game's and the retoc mod's; the mod wins that one.
    let o = &game["overrides"][0];
    assert_eq!(o["game_container"], "~mods/RetocMod_P.pak");
    assert!(o["game_containers"]
        .as_array()
        .unwrap()
        .contains(&Value::from("pakchunk0-Windows.pak")));
    assert_eq!(game["overrides"][0]["class_check"], "same");
}

#[test]
fn check_game_dir_of_a_folder_that_is_no_game_is_a_usage_error() {
    let dir = common::temp_dir("gamecheck-nogame");
    let repo = dir.as_ref().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    std::fs::write(repo.join("mod.toml"), GameFixture::manifest_text("NoGame")).unwrap();
    std::fs::create_dir_all(repo.join("Cooked/Game/Content")).unwrap();
    let (code, lines) = run_json(
        &repo,
        &[
            "check",
            "--game-dir",
            dir.as_ref().join("nothing").to_str().unwrap(),
        ],
    );
    assert_eq!(code, 2, "{lines:#?}");
}

/// SN2's enum moved under `/Game/Mods/BlueprintModNam/` (the same length
/// as `Blueprints/Character`, so the header stays consistent).
const MODS_FOLDER: &str = "Mods/BlueprintModNam";

#[test]
fn a_blueprint_mod_is_told_about_logicmods_and_the_reverse() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let Some(mut fixture) = sn2_game("gamecheck-logicmods", &["E_AnimSyncMethodOptions"]) else {
        return;
    };
    assert_eq!("Blueprints/Character".len(), MODS_FOLDER.len());
    let repo = mod_repo(&fixture, "BlueprintModNam");
    place_sn2_in(
        &corpus,
        &repo,
        MODS_FOLDER,
        "E_GAAnimEndOptions",
        Some(("Blueprints/Character", MODS_FOLDER)),
        "E_GAAnimEndOptions",
    );
    let (code, lines) = check(&fixture, &repo);
    assert_eq!(code, 0, "a warning, not an error: {lines:#?}");
    let blueprint = &line(&lines, "check")["game"]["blueprint"];
    assert_eq!(blueprint["blueprint_mod"], true);
    assert_eq!(blueprint["install_folder"], "~mods");
    assert_eq!(blueprint["installed_in"], serde_json::json!([]));
    let warnings = diagnostics(&lines, "blueprint-mod-not-in-logicmods");
    assert_eq!(warnings.len(), 1, "{lines:#?}");
    assert_eq!(warnings[0]["level"], "warning");
    assert!(warnings[0]["hint"].as_str().unwrap().contains("LogicMods"));

    // Copied into LogicMods (as the hint says): no warning.
    let pak = zenpak_build(&repo, &GameFixture::manifest_text("BlueprintModNam"), None);
    fixture.add_mod(&pak, "BlueprintModNam_P", Vec::new(), true);
    let (code, lines) = check(&fixture, &repo);
    assert_eq!(code, 0, "{lines:#?}");
    assert_eq!(
        line(&lines, "check")["game"]["blueprint"]["installed_in"],
        serde_json::json!(["LogicMods"])
    );
    assert!(diagnostics(&lines, "blueprint-mod-not-in-logicmods").is_empty());

    // The reverse: a mod without blueprint content sitting in LogicMods.
    let repo = mod_repo(&fixture, "Plain");
    place_sn2(&corpus, &repo, "E_GAAnimEndConditions", None);
    let pak = zenpak_build(&repo, &GameFixture::manifest_text("Plain"), None);
    fixture.add_mod(&pak, "Plain_P", Vec::new(), true);
    let (code, lines) = check(&fixture, &repo);
    assert_eq!(code, 0, "{lines:#?}");
    assert_eq!(
        line(&lines, "check")["game"]["blueprint"]["blueprint_mod"],
        false
    );
    let warnings = diagnostics(&lines, "logicmods-without-modactor");
    assert_eq!(warnings.len(), 1, "{lines:#?}");
    assert!(warnings[0]["file"]
        .as_str()
        .unwrap()
        .ends_with("Plain_P.pak"));
}

#[test]
fn the_mods_engine_and_compression_against_the_games() {
    let Some(fixture) = GameFixture::build("gamecheck-facts") else {
        return;
    };
    // A mod of loose files only (no package to read at the wrong engine).
    let repo = fixture.mod_repo("Facts");
    std::fs::create_dir_all(repo.join("Cooked/Game/Config")).unwrap();
    std::fs::write(
        repo.join("Cooked/Game/Config/DefaultGame.ini"),
        "[x]\ny=1\n",
    )
    .unwrap();
    let text = GameFixture::manifest_text("Facts");
    std::fs::write(repo.join("mod.toml"), &text).unwrap();
    let (code, lines) = check(&fixture, &repo);
    assert_eq!(code, 0, "{lines:#?}");
    let facts = &line(&lines, "check")["game"]["facts"];
    assert_eq!(facts["engines"], serde_json::json!(["5.6", "5.7"]));
    assert_eq!(facts["iostore"], true);
    let compression = facts["compression"].as_array().unwrap();
    assert!(compression.contains(&Value::from("Oodle")), "{facts:#?}");
    assert!(compression.contains(&Value::from("Zlib")), "{facts:#?}");
    let kinds: Vec<&str> = facts["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["fact"].as_str().unwrap())
        .collect();
    for kind in ["toc-version", "container-header-version", "pak-version"] {
        assert!(kinds.contains(&kind), "{kinds:?}");
    }

    // The game moved on: the mod still says 5.5.
    std::fs::write(
        repo.join("mod.toml"),
        text.replace("engine = \"5.6\"", "engine = \"5.5\""),
    )
    .unwrap();
    let (code, lines) = check(&fixture, &repo);
    assert_eq!(code, 1, "{lines:#?}");
    let errors = diagnostics(&lines, "game-engine-differs");
    assert_eq!(errors.len(), 1, "{lines:#?}");
    assert!(errors[0]["file"].as_str().unwrap().ends_with("mod.toml"));

    // Zstd, which no stock engine reads and the game does not use: an error;
    // LZ4, a stock codec the game does not use: a warning.
    std::fs::write(
        repo.join("mod.toml"),
        text.replace("compression = \"none\"", "compression = \"zstd\""),
    )
    .unwrap();
    let (code, lines) = check(&fixture, &repo);
    assert_eq!(code, 1, "{lines:#?}");
    assert_eq!(diagnostics(&lines, "game-compression-unsupported").len(), 1);
    std::fs::write(
        repo.join("mod.toml"),
        text.replace("compression = \"none\"", "compression = \"lz4\""),
    )
    .unwrap();
    let (code, lines) = check(&fixture, &repo);
    assert_eq!(code, 0, "{lines:#?}");
    let warnings = diagnostics(&lines, "game-compression-unused");
    assert_eq!(warnings.len(), 1, "{lines:#?}");
    assert_eq!(warnings[0]["level"], "warning");
}

#[test]
fn a_loose_file_the_games_pak_has_is_listed_as_a_file_override() {
    let Some(fixture) = GameFixture::build("gamecheck-files") else {
        return;
    };
    // pakchunk3-Windows.pak (UnrealPak) mounts at ../mount/point/root/ and holds test.txt.
    let repo = fixture.mod_repo("Files");
    std::fs::create_dir_all(repo.join("Cooked")).unwrap();
    std::fs::write(repo.join("Cooked/test.txt"), "the mod's text\n").unwrap();
    std::fs::write(repo.join("Cooked/new.txt"), "only in the mod\n").unwrap();
    let text = GameFixture::manifest_text("Files").replace(
        "project = \"Game\"",
        "project = \"Game\"\nmount-point = \"../mount/point/root/\"",
    );
    std::fs::write(repo.join("mod.toml"), text).unwrap();
    let (code, lines) = check(&fixture, &repo);
    assert_eq!(code, 0, "{lines:#?}");
    let files = line(&lines, "check")["game"]["file_overrides"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(files.len(), 1, "{files:#?}");
    assert_eq!(files[0]["path"], "mount/point/root/test.txt");
    assert_eq!(files[0]["game_pak"], "pakchunk3-Windows.pak");
    assert_eq!(files[0]["game_order"], 3);
    assert_eq!(files[0]["mod_order"], 103);
    assert_eq!(files[0]["mod_wins"], true);
    assert_eq!(diagnostics(&lines, "overrides-game-file").len(), 1);
}

/// A mod named like an installed one (`RetocMod` → `RetocMod_P`): the
/// engine treats the two as one, and `check --game-dir` says so before any
/// build, as `install` does.
#[test]
fn a_mod_named_like_an_installed_one_is_warned_before_building() {
    let Some(fixture) = GameFixture::build("gamecheck-same-stem") else {
        return;
    };
    let repo = mod_repo(&fixture, "RetocMod");
    fixture.place_ue56_package(&repo, "T_Quinn_01_D");
    let (code, lines) = check(&fixture, &repo);
    let same = diagnostics(&lines, "same-stem");
    assert_eq!(same.len(), 1, "{lines:#?}");
    assert_eq!(same[0]["level"], "warning");
    assert!(same[0]["file"]
        .as_str()
        .is_some_and(|f| f.ends_with("RetocMod_P.pak")));
    assert_eq!(code, 0, "a warning does not fail the check");
    assert!(!repo.join("out").exists() && !repo.join("target").exists());
}
