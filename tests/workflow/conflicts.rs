//! `zenpak conflicts` on the game fixture (the real binary): two installed
//! mods providing the same package are both named with the winner the
//! engine's mount order picks, and the winner changes when the loser is
//! renamed to a higher `_N_P`; inside a mod its last build is mounted with
//! the game; `install` warns (JSON diagnostics with codes) about a mod name
//! another installed mod has, a suffix below the game's patch and an
//! installed mod without its `.pak`, and a renamed copy that keeps the
//! mod's container id (which `conflicts` shows as a shared container
//! header chunk). The library function `doctor` calls
//! (`installed_mod_overrides`) gives the same answer.

use crate::common::game_fixture::{GameFixture, OVERRIDDEN_PACKAGE};
use crate::common::run;
use serde_json::Value;
use std::path::Path;

/// Every JSON line of stdout.
/// Runs `conflicts` in `cwd` with the fixture's key, in JSON: the conflict
/// rows and the summary line.
fn conflicts_json(game: &GameFixture, cwd: &Path, extra: &[&str]) -> (Vec<Value>, Value) {
    let root = game.root.to_str().unwrap();
    let mut args = vec![
        "conflicts",
        "--game-dir",
        root,
        "--aes-key",
        game.aes_key.as_str(),
        "--message-format",
        "json",
    ];
    args.extend_from_slice(extra);
    let listed = run(Some(cwd), &args);
    let rows = listed.ok().lines_of("conflict");
    let summary = listed.line_of("conflicts");
    assert_eq!(listed.json().last().unwrap()["reason"], "finished");
    assert_eq!(summary["conflicts"], rows.len());
    (rows, summary)
}

/// The conflict row of the package `/Game/...` (by its stored path).
fn package_row<'a>(rows: &'a [Value], package: &str) -> &'a Value {
    let path = format!(
        "Game/Content/{}.uasset",
        package.trim_start_matches("/Game/")
    );
    rows.iter()
        .find(|r| r["kind"] == "package" && r["path"].as_str() == Some(path.as_str()))
        .unwrap_or_else(|| panic!("no package conflict for {path} in {rows:#?}"))
}

fn names(row: &Value) -> Vec<&str> {
    row["providers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect()
}

fn mod_entry<'a>(summary: &'a Value, name: &str) -> &'a Value {
    summary["mods"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == name)
        .unwrap_or_else(|| panic!("no mod {name} in {:#}", summary["mods"]))
}

#[test]
fn two_mods_on_one_package_name_both_and_the_winner_and_renaming_the_loser_changes_it() {
    let Some(mut game) = GameFixture::build("conflicts-winner") else {
        return;
    };
    let cwd = game.temp().to_path_buf();
    let (rows, summary) = conflicts_json(&game, &cwd, &[]);
    let cube = package_row(&rows, OVERRIDDEN_PACKAGE);
    // Both mods have order 103; ZenMod_P sorts after RetocMod_P in the
    // engine's descending path order, so RetocMod_P is mounted last and
    // wins the chunk; the base game (order 3) comes last.
    assert_eq!(
        names(cube),
        ["RetocMod_P.pak", "ZenMod_P.pak", "pakchunk0-Windows.pak"]
    );
    assert_eq!(cube["winner"]["name"], "RetocMod_P.pak");
    assert_eq!(cube["winner"]["order"], 103);
    assert_eq!(cube["winner"]["role"], "mod");
    assert_eq!(cube["rule"], "chunk");
    assert_eq!(cube["chunk_type"], "ExportBundleData");
    let id = format!("{:#018x}", zenpak::hash::package_id(OVERRIDDEN_PACKAGE));
    assert_eq!(cube["package_id"], id.as_str());
    let providers = cube["providers"].as_array().unwrap();
    assert_eq!(providers[2]["role"], "game");
    assert_eq!(providers[2]["order"], 3);
    assert!(providers[0]["sequence"].as_u64() > providers[1]["sequence"].as_u64());

    let zen = mod_entry(&summary, "ZenMod_P.pak");
    assert_eq!(zen["state"], "wholly");
    assert_eq!(zen["shadowed_by"], serde_json::json!(["RetocMod_P.pak"]));
    let overrides = zen["overrides"].as_array().unwrap();
    let over = overrides
        .iter()
        .find(|o| o["package_id"] == id.as_str())
        .expect("ZenMod overrides the game's SM_Cube");
    assert_eq!(over["wins"], false);
    assert_eq!(
        over["game_sources"],
        serde_json::json!(["pakchunk0-Windows.pak"])
    );
    let retoc = mod_entry(&summary, "RetocMod_P.pak");
    assert_eq!(retoc["state"], "none");
    assert_eq!(retoc["shadows"], serde_json::json!(["ZenMod_P.pak"]));

    // The library call doctor uses says the same.
    let mut keys = zenpak::pak::crypto::KeyRing::default();
    keys.add_spec(&game.aes_key).unwrap();
    let view = zenpak::game::GameView::open(&game.paks, &keys).unwrap();
    let mods = zenpak::game::conflicts::installed_mod_overrides(&view, &game.paks);
    let names_of: Vec<String> = mods.iter().map(|m| m.provider.name.clone()).collect();
    assert_eq!(names_of.len(), 2, "{names_of:?}");
    assert!(mods
        .iter()
        .any(|m| m.provider.name == "ZenMod_P.pak" && m.overrides.iter().any(|o| !o.wins)));

    // The loser renamed to a higher `_N_P`: order 303, it wins now.
    game.rename_mod(1, "ZenMod_2_P");
    let (rows, summary) = conflicts_json(&game, &cwd, &[]);
    let cube = package_row(&rows, OVERRIDDEN_PACKAGE);
    assert_eq!(
        names(cube),
        ["ZenMod_2_P.pak", "RetocMod_P.pak", "pakchunk0-Windows.pak"]
    );
    assert_eq!(cube["winner"]["name"], "ZenMod_2_P.pak");
    assert_eq!(cube["winner"]["order"], 303);
    let retoc = mod_entry(&summary, "RetocMod_P.pak");
    assert_eq!(retoc["state"], "partly");
    assert_eq!(retoc["shadowed_by"], serde_json::json!(["ZenMod_2_P.pak"]));
    assert_eq!(mod_entry(&summary, "ZenMod_2_P.pak")["state"], "none");

    // Text: a table, exit 0.
    let root = game.root.to_str().unwrap();
    let table = run(
        Some(&cwd),
        &["conflicts", "--game-dir", root, "--aes-key", &game.aes_key],
    );
    let stdout = &table.ok().stdout;
    assert!(stdout.contains("ZenMod_2_P.pak"), "{stdout}");
}

#[test]
fn inside_a_mod_its_last_build_is_mounted_with_the_game() {
    let Some(game) = GameFixture::build("conflicts-inside") else {
        return;
    };
    let repo = game.mod_repo("Inner");
    let quinn = game.place_ue56_package(&repo, "T_Quinn_01_D");
    std::fs::write(repo.join("mod.toml"), GameFixture::manifest_text("Inner")).unwrap();
    // Not built yet: a note says so, the game's own conflicts are shown.
    let (rows, _) = conflicts_json(&game, &repo, &[]);
    assert!(!names(package_row(&rows, OVERRIDDEN_PACKAGE)).is_empty());
    run(Some(&repo), &["build"]).ok();

    for extra in [&[][..], &["--mod", "out/Inner_P.utoc"][..]] {
        let (rows, summary) = conflicts_json(&game, &repo, extra);
        let row = package_row(&rows, &quinn);
        // Mounted after the game folder with the same order as RetocMod_P:
        // the last mounted container wins the chunk.
        assert_eq!(
            names(row),
            ["Inner_P.pak", "RetocMod_P.pak", "pakchunk0-Windows.pak"],
            "{extra:?}"
        );
        assert_eq!(row["winner"]["role"], "mod");
        let inner = mod_entry(&summary, "Inner_P.pak");
        assert_eq!(inner["state"], "none");
        assert!(inner["overrides"]
            .as_array()
            .unwrap()
            .iter()
            .any(|o| o["wins"] == true && o["path"] == row["path"]));
    }
}

#[test]
fn install_warns_about_a_name_another_mod_has_a_low_suffix_and_a_missing_pak() {
    let Some(game) = GameFixture::build("conflicts-install") else {
        return;
    };
    // RetocMod_P moves to LogicMods (so this install does not replace it);
    // ZenMod_P loses its .pak; the game gets a patch `_1_P` (order 203).
    let logic = &game.logic_mods;
    std::fs::create_dir_all(logic).unwrap();
    for ext in ["pak", "utoc", "ucas"] {
        std::fs::rename(
            game.mods.join(format!("RetocMod_P.{ext}")),
            logic.join(format!("RetocMod_P.{ext}")),
        )
        .unwrap();
        std::fs::copy(
            game.base.pak.with_extension(ext),
            game.paks.join(format!("pakchunk0-Windows_1_P.{ext}")),
        )
        .unwrap();
    }
    std::fs::remove_file(game.mods.join("ZenMod_P.pak")).unwrap();

    let repo = game.mod_repo("RetocMod");
    game.place_ue56_package(&repo, "SM_Cube");
    std::fs::write(
        repo.join("mod.toml"),
        GameFixture::manifest_text("RetocMod"),
    )
    .unwrap();
    let root = game.root.to_str().unwrap();
    let installed = run(
        Some(&repo),
        &["install", "--game-dir", root, "--message-format", "json"],
    );
    let diagnostics = installed.ok().lines_of("diagnostic");
    let same = installed.coded("warning", "same-stem");
    assert_eq!(same.len(), 1, "{diagnostics:#?}");
    assert!(same[0]["file"]
        .as_str()
        .unwrap()
        .ends_with("RetocMod_P.pak"));
    assert!(same[0]["file"].as_str().unwrap().contains("LogicMods"));
    let low = installed.coded("warning", "order-below-game-patch");
    assert_eq!(low.len(), 1, "{diagnostics:#?}");
    assert!(low[0]["hint"].as_str().unwrap().contains("_2_P"));
    let missing = installed.coded("warning", "companion-pak-missing");
    assert_eq!(missing.len(), 1, "{diagnostics:#?}");
    assert!(missing[0]["file"]
        .as_str()
        .unwrap()
        .ends_with("ZenMod_P.utoc"));
    assert!(game.mods.join("RetocMod_P.pak").is_file());

    // Installed again: its own previous install is not "another mod".
    let again = run(
        Some(&repo),
        &["install", "--game-dir", root, "--message-format", "json"],
    )
    .ok()
    .coded("warning", "same-stem");
    assert_eq!(again.len(), 1, "only the LogicMods copy: {again:#?}");

    // Under --deny-warnings the install stops before writing.
    std::fs::remove_file(game.mods.join("RetocMod_P.pak")).unwrap();
    run(
        Some(&repo),
        &["install", "--game-dir", root, "--deny-warnings"],
    )
    .assert_code(1);
    assert!(!game.mods.join("RetocMod_P.pak").exists());
}

#[test]
fn a_renamed_copy_keeps_its_container_id_install_warns_and_conflicts_shows_the_header() {
    let Some(game) = GameFixture::build("conflicts-same-id") else {
        return;
    };
    let repo = game.mod_repo("Renamed");
    game.place_ue56_package(&repo, "BP_ThirdPersonCharacter");
    std::fs::write(repo.join("mod.toml"), GameFixture::manifest_text("Renamed")).unwrap();
    run(Some(&repo), &["build"]).ok();
    // A copy of this very build under another name in LogicMods: the
    // container id in its TOC is still the hash of `Renamed_P`.
    std::fs::create_dir_all(&game.logic_mods).unwrap();
    for ext in ["pak", "utoc", "ucas"] {
        std::fs::copy(
            repo.join(format!("out/Renamed_P.{ext}")),
            game.logic_mods.join(format!("Old_P.{ext}")),
        )
        .unwrap();
    }
    let root = game.root.to_str().unwrap();
    let installed = run(
        Some(&repo),
        &["install", "--game-dir", root, "--message-format", "json"],
    );
    let same = installed.ok().coded("warning", "same-container-id");
    assert_eq!(same.len(), 1, "{}", installed.stdout);
    assert!(same[0]["file"].as_str().unwrap().ends_with("Old_P.utoc"));
    assert!(installed.json().iter().all(|l| l["code"] != "same-stem"));

    // `conflicts` (inside the mod: the installed copy stands for the build).
    let (rows, summary) = conflicts_json(&game, &repo, &[]);
    let header = rows
        .iter()
        .find(|r| r["kind"] == "chunk" && r["chunk_type"] == "ContainerHeader")
        .expect("the shared container header chunk");
    let mut providers = names(header);
    providers.sort();
    assert_eq!(providers, ["Old_P.pak", "Renamed_P.pak"]);
    // Same order 103; `~mods/` sorts above `LogicMods/` in the engine's
    // descending path order, so the LogicMods copy is mounted later and
    // wins every chunk: the installed mod is wholly shadowed by its copy.
    assert_eq!(mod_entry(&summary, "Renamed_P.pak")["state"], "wholly");
    // (It hides RetocMod_P's BP_ThirdPersonCharacter as well.)
    assert_eq!(
        mod_entry(&summary, "Old_P.pak")["shadows"],
        serde_json::json!(["Renamed_P.pak", "RetocMod_P.pak"])
    );
    assert_eq!(
        mod_entry(&summary, "Renamed_P.pak")["shadowed_by"],
        serde_json::json!(["Old_P.pak"])
    );
}
