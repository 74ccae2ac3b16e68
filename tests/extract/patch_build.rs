//! Patch files applied at build time, through the binary: a fixture game
//! whose container holds NanosWorld's `DT_ChatEntry` (5.7, with its
//! `.usmap`; the game built as `extract_cli.rs` builds one), a mod
//! repository holding only `mod.toml`, the mappings and `patches/*.toml`,
//! and `zenpak build --game-dir GAME`. The built container's package, read
//! back with `zenpak to-json … --game-dir GAME`, must be the game's
//! document with exactly the patch's changes — the expected document is
//! made in the test from the game's by hand, never from zenpak's output of
//! the patch. Then the game is "updated" (another row changed, one added,
//! one removed) and the same mod built again keeps the update.

use crate::common::{self, run, Run};
use crate::extract_game::Game;

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use zenpak::patch::node::Node;
use zenpak::EngineVersion;

pub(crate) const NANOS: &str = "uassetapi/TestUE5_7/NanosWorld";
pub(crate) const CHAT_FILE: &str = "Content/NanosWorld/Core/Chat/DT_ChatEntry.uasset";
pub(crate) const CHAT: &str = "/Game/NanosWorld/Core/Chat/DT_ChatEntry";

const PATCH: &str = r#"
[[patch]]
asset = "/Game/NanosWorld/Core/Chat/DT_ChatEntry"
set = { "Default.TextStyle.Font.Size" = 18.0, "Cyan.TextStyle.ShadowOffset" = { X = 2.5 }, "Bold.TextStyle.Font.TypefaceFontName" = "ExtraBold" }
add-rows = { Magenta = { copy-of = "Purple", "TextStyle.Font.Size" = 20.0 } }
remove-rows = ["Grey"]
"#;

/// A game folder (`<dir>/<name>/TestGame/Content/Paks`) whose own
/// container holds the legacy package `chat`, converted.
pub(crate) fn game_with(dir: &Path, name: &str, chat: &Path) -> PathBuf {
    game_of(dir, name, &[chat.to_path_buf()], EngineVersion::UE5_7)
}

/// [`game_with`] of several packages of one release.
fn game_of(dir: &Path, name: &str, packages: &[PathBuf], engine: EngineVersion) -> PathBuf {
    let game = Game::load(packages, engine);
    let work = dir.join(format!("{name}-work"));
    std::fs::create_dir_all(&work).unwrap();
    let (mod_toc, paks, _) = crate::extract_cli::build(&work, &game);
    let install = dir.join(name);
    let content = install.join("TestGame/Content");
    std::fs::create_dir_all(&content).unwrap();
    let game_paks = content.join("Paks");
    std::fs::rename(&paks, &game_paks).unwrap();
    for ext in ["utoc", "ucas", "pak"] {
        std::fs::rename(
            mod_toc.with_extension(ext),
            game_paks.join(format!("pakchunk1-Windows.{ext}")),
        )
        .unwrap();
    }
    install
}

/// A mod repository of patches only (NanosWorld's, 5.7).
fn repo(dir: &Path, nanos: &Path, patch: &str) -> PathBuf {
    repo_for(dir, &nanos.join("NanosWorld.usmap"), "5.7", patch)
}

/// A mod repository of patches only, for a game of `engine` with `usmap`.
pub(crate) fn repo_for(dir: &Path, usmap: &Path, engine: &str, patch: &str) -> PathBuf {
    let repo = dir.join("PatchMod");
    std::fs::create_dir_all(repo.join("patches")).unwrap();
    std::fs::create_dir_all(repo.join("Cooked")).unwrap();
    std::fs::copy(usmap, repo.join("Game.usmap")).unwrap();
    std::fs::write(
        repo.join("mod.toml"),
        format!("[mod]\nname = \"PatchMod\"\nversion = \"1.0.0\"\n\n[game]\nengine = \"{engine}\"\nproject = \"TestGame\"\nmappings = \"Game.usmap\"\n\n[output]\nsuffix = \"_1_P\"\n"),
    )
    .unwrap();
    std::fs::write(repo.join("patches/chat.toml"), patch).unwrap();
    repo
}

pub(crate) fn build(repo: &Path, game: &Path) -> Run {
    run(
        Some(repo),
        &[
            "--message-format",
            "json",
            "build",
            "--game-dir",
            game.to_str().unwrap(),
        ],
    )
}

/// `zenpak to-json` of the chat table in `source` (a container, with the
/// game for its imports; or a legacy file).
pub(crate) fn document(dir: &Path, nanos: &Path, args: &[&str], name: &str) -> Value {
    document_of(dir, &nanos.join("NanosWorld.usmap"), "5.7", args, name)
}

/// [`document`] of a package of `engine` with `usmap`.
pub(crate) fn document_of(
    dir: &Path,
    usmap: &Path,
    engine: &str,
    args: &[&str],
    name: &str,
) -> Value {
    let out = dir.join(name);
    let mut all = vec!["to-json"];
    all.extend(args);
    all.extend(["--engine", engine, "--mappings", usmap.to_str().unwrap()]);
    all.extend(["-o", out.to_str().unwrap()]);
    run(None, &all).ok();
    serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap()
}

/// The document of the chat table in the mod `repo` built.
fn built_document(dir: &Path, nanos: &Path, repo: &Path, game: &Path, name: &str) -> Value {
    let utoc = repo.join("target/PatchMod_1_P.utoc");
    document(
        dir,
        nanos,
        &[
            utoc.to_str().unwrap(),
            CHAT,
            "--game-dir",
            game.to_str().unwrap(),
        ],
        name,
    )
}

/// The document of `package` in the mod `repo` built (usmap, engine).
fn built_package(
    dir: &Path,
    repo: &Path,
    game: &Path,
    (usmap, engine): (&Path, &str),
    package: &str,
) -> Value {
    let utoc = repo.join("target/PatchMod_1_P.utoc");
    let name = format!("built-{}.json", package.rsplit('/').next().unwrap());
    document_of(
        dir,
        usmap,
        engine,
        &[
            utoc.to_str().unwrap(),
            package,
            "--game-dir",
            game.to_str().unwrap(),
        ],
        &name,
    )
}

/// The rows of a document, in their order.
pub(crate) fn row_names(doc: &Value, text_of: &Path) -> Vec<String> {
    // serde_json's map forgets order: the names are read in order from the text.
    let text = std::fs::read_to_string(text_of).unwrap();
    let mut node = zenpak::patch::node::Node::parse(&text).unwrap();
    let rows = node
        .get_mut("exports")
        .and_then(|e| e.items_mut())
        .and_then(|e| e.get_mut(0))
        .and_then(|e| e.get_mut("data"))
        .and_then(|d| d.get_mut("rows"))
        .unwrap();
    let names = rows.keys();
    assert_eq!(
        names.len(),
        doc["exports"][0]["data"]["rows"].as_object().unwrap().len()
    );
    names
}

/// The game's rows with PATCH's changes, made by hand.
fn patched_by_hand(game: &Value) -> Value {
    let mut expected = game["exports"][0]["data"].clone();
    let rows = &mut expected["rows"];
    rows["Default"]["TextStyle"]["Font"]["Size"] = json!(18.0);
    rows["Cyan"]["TextStyle"]["ShadowOffset"]["X"] = json!(2.5);
    rows["Bold"]["TextStyle"]["Font"]["TypefaceFontName"] = json!("ExtraBold");
    let mut magenta = rows["Purple"].clone();
    magenta["TextStyle"]["Font"]["Size"] = json!(20.0);
    rows["Magenta"] = magenta;
    rows.as_object_mut().unwrap().remove("Grey");
    expected
}

pub(crate) struct Setup {
    pub(crate) dir: common::TestDir,
    pub(crate) nanos: PathBuf,
    pub(crate) game: PathBuf,
    pub(crate) original: Value,
}

pub(crate) fn setup(name: &str) -> Option<Setup> {
    let corpus = common::corpus()?;
    let nanos = corpus.join(NANOS);
    let dir = common::temp_dir(name);
    let game = game_with(dir.as_ref(), "Game", &nanos.join(CHAT_FILE));
    let original = document(
        dir.as_ref(),
        &nanos,
        &[nanos.join(CHAT_FILE).to_str().unwrap()],
        "original.json",
    );
    Some(Setup {
        dir,
        nanos,
        game,
        original,
    })
}

#[test]
fn a_patch_changes_the_games_table_by_exactly_what_it_says() {
    let Some(s) = setup("patch-build") else {
        return;
    };
    let dir = s.dir.as_ref();
    let repo = repo(dir, &s.nanos, PATCH);
    let built = build(&repo, &s.game);
    built.ok();
    let patched = built.line_of("patched");
    assert_eq!(patched["asset"], CHAT);
    assert_eq!(
        patched["path"],
        "TestGame/Content/NanosWorld/Core/Chat/DT_ChatEntry.uasset"
    );
    assert_eq!(patched["operations"], 5);
    assert!(built.diagnostics("warning").is_empty(), "{}", built.text());

    let found = built_document(dir, &s.nanos, &repo, &s.game, "built.json");
    assert_eq!(found["exports"][0]["data"], patched_by_hand(&s.original));
    assert_eq!(found["imports"], s.original["imports"]);
    // The new row is last, the removed one gone, the others in their order.
    let mut order = row_names(&s.original, &dir.join("original.json"));
    order.retain(|r| r != "Grey");
    order.push("Magenta".into());
    assert_eq!(row_names(&found, &dir.join("built.json")), order);
    // verify and extract read the built container.
    let utoc = repo.join("target/PatchMod_1_P.utoc");
    run(None, &["verify", utoc.to_str().unwrap()]).ok();
    let out = dir.join("extracted");
    run(
        None,
        &[
            "extract",
            utoc.to_str().unwrap(),
            "--game-dir",
            s.game.to_str().unwrap(),
            "--engine",
            "5.7",
            "-o",
            out.to_str().unwrap(),
        ],
    )
    .ok();
    assert!(out
        .join("TestGame/Content/NanosWorld/Core/Chat/DT_ChatEntry.uexp")
        .is_file());

    // A build again changes nothing; the same patch built once more from
    // scratch gives the same bytes.
    let first = std::fs::read(repo.join("target/PatchMod_1_P.ucas")).unwrap();
    build(&repo, &s.game).ok();
    run(
        Some(&repo),
        &["build", "--force", "--game-dir", s.game.to_str().unwrap()],
    )
    .ok();
    assert_eq!(
        std::fs::read(repo.join("target/PatchMod_1_P.ucas")).unwrap(),
        first
    );
}

/// `zenpak from-json JSON` into `folder/DT_ChatEntry.uasset` (created).
fn cook(json: &Path, mappings: &Path, folder: &Path) -> PathBuf {
    let cooked = folder.join("DT_ChatEntry.uasset");
    std::fs::create_dir_all(folder).unwrap();
    run(
        None,
        &[
            "from-json",
            json.to_str().unwrap(),
            "--mappings",
            mappings.to_str().unwrap(),
            "-o",
            cooked.to_str().unwrap(),
        ],
    )
    .ok();
    cooked
}

/// The game updated: row `Italic` changed, `Whisper` added, `Orange`
/// removed (made with from-json of an edited document, then built into a
/// game as the first). Returns the game and the document of its table.
fn updated_game(dir: &Path, s: &Setup) -> (PathBuf, Value) {
    let mut updated = s.original.clone();
    let rows = &mut updated["exports"][0]["data"]["rows"];
    rows["Italic"]["TextStyle"]["Font"]["Size"] = json!(31.0);
    rows["Whisper"] = rows["Green"].clone();
    rows.as_object_mut().unwrap().remove("Orange");
    let edited = dir.join("updated.json");
    std::fs::write(&edited, serde_json::to_vec(&updated).unwrap()).unwrap();
    let cooked = cook(
        &edited,
        &s.nanos.join("NanosWorld.usmap"),
        &dir.join("Updated"),
    );
    let new_game = game_with(dir, "NewGame", &cooked);
    let update = document(dir, &s.nanos, &[cooked.to_str().unwrap()], "update.json");
    (new_game, update)
}

/// The game updated: a row the patch does not touch changed, one added,
/// one removed. The mod built again carries the update and the patch; a
/// patch on the removed row fails naming it, before anything is written.
#[test]
fn a_patch_keeps_the_games_update_and_names_a_row_the_update_removed() {
    let Some(s) = setup("patch-update") else {
        return;
    };
    let dir = s.dir.as_ref();
    let (new_game, update) = updated_game(dir, &s);

    let repo = repo(dir, &s.nanos, PATCH);
    build(&repo, &new_game).ok();
    let found = built_document(dir, &s.nanos, &repo, &new_game, "built.json");
    let expected = patched_by_hand(&update);
    assert_eq!(
        expected["rows"]["Italic"]["TextStyle"]["Font"]["Size"],
        json!(31.0)
    );
    assert!(expected["rows"].get("Whisper").is_some());
    assert_eq!(found["exports"][0]["data"], expected);

    // A patch on the row the update removed: exit 2, the patch file's
    // line, the closest row suggested; the previous build's files stay as
    // they were.
    let before = common::files_under(&repo.join("target"));
    std::fs::write(
        repo.join("patches/orange.toml"),
        "[[patch]]\nasset = \"/Game/NanosWorld/Core/Chat/DT_ChatEntry\"\n\nset = { \"Orange.TextStyle.Font.Size\" = 12.0 }\n",
    )
    .unwrap();
    let failed = build(&repo, &new_game);
    failed.assert_code(2);
    let error = failed.error();
    assert!(error["file"].as_str().unwrap().ends_with("orange.toml"));
    assert_eq!(error["line"], 4);
    assert!(error["hint"].as_str().is_some());
    assert_eq!(common::files_under(&repo.join("target")), before);
    // `check --game-dir` says the table's patches are broken, and why.
    let checked = run(
        Some(&repo),
        &[
            "--message-format",
            "json",
            "check",
            "--game-dir",
            new_game.to_str().unwrap(),
        ],
    );
    checked.assert_code(1);
    let line = checked.line_of("patch-check");
    assert_eq!(
        (line["asset"].as_str(), line["state"].as_str()),
        (Some(CHAT), Some("broken"))
    );
    assert!(checked.error()["file"]
        .as_str()
        .unwrap()
        .ends_with("orange.toml"));
}

/// Mistakes in patch files: each exit 2 with the file and line, nothing built.
#[test]
fn bad_patches_name_the_file_and_line_and_build_nothing() {
    let Some(s) = setup("patch-bad") else {
        return;
    };
    let dir = s.dir.as_ref();
    let asset = "[[patch]]\nasset = \"/Game/NanosWorld/Core/Chat/DT_ChatEntry\"\n";
    for (name, patch, line) in [
        (
            "unknown key",
            format!("{asset}sett = {{ \"Default.X\" = 1 }}\n"),
            3,
        ),
        (
            "wrong type",
            format!("{asset}set = {{ \"Default.TextStyle.Font.Size\" = \"big\" }}\n"),
            3,
        ),
        (
            "no such property",
            format!("{asset}set = {{ \"Default.TextStyle.Font.Sise\" = 1.0 }}\n"),
            3,
        ),
        (
            "no such row",
            format!("{asset}set = {{ \"Defualt.TextStyle.Font.Size\" = 1.0 }}\n"),
            3,
        ),
        (
            "bad path",
            format!("{asset}set = {{ \"Default..Size\" = 1.0 }}\n"),
            3,
        ),
        ("syntax", format!("{asset}set = {{ \"Default.X\" = }}\n"), 3),
        (
            "index past the end",
            format!("{asset}remove = [\"Default.TextStyle.Font.Size[3]\"]\n"),
            3,
        ),
        (
            "object the game lacks",
            format!("{asset}set = {{ \"Default.TextStyle.Font.FontObject\" = \"/Game/Nope/Font_Nope.Font_Nope\" }}\n"),
            3,
        ),
        // The `[[patch]]` line.
        (
            "asset the game lacks",
            "[[patch]]\nasset = \"/Game/Nope/DT_Nope\"\nset = { \"A.B\" = 1 }\n".to_string(),
            1,
        ),
    ] {
        let repo = repo(&dir.join(name.replace(' ', "-")), &s.nanos, &patch);
        let failed = build(&repo, &s.game);
        failed.assert_code_for(2, name);
        let error = failed.error();
        assert!(
            error["file"].as_str().unwrap().ends_with("chat.toml"),
            "{name}: {error}"
        );
        assert_eq!(error["line"], line, "{name}: {error}");
        assert!(!repo.join("target/PatchMod_1_P.utoc").exists(), "{name}");
    }
    // Without a game, a patch of a game asset says how to give one.
    let repo = repo(&dir.join("no-game"), &s.nanos, PATCH);
    let failed = run(Some(&repo), &["--message-format", "json", "build"]);
    failed.assert_code(2);
    let error = failed.error();
    assert!(error["file"].as_str().unwrap().ends_with("chat.toml"));
    assert_eq!(error["line"], 2, "the patch's `[[patch]]` line");
    assert!(error["hint"].is_string());
}

const CURVE_FILE: &str = "Content/NanosWorld/Core/World/Sky/Curve_SkyLight_Intensity.uasset";
const CURVE: &str = "/Game/NanosWorld/Core/World/Sky/Curve_SkyLight_Intensity";

/// A curve's keys (a value set, a key appended as a table, one removed),
/// an enum by name, an object reference, a StringTable's line changed and
/// one added — each built and read back as the game's document plus
/// exactly those changes.
#[test]
fn patches_change_curves_enums_references_and_string_tables() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let nanos = corpus.join(NANOS);
    let usmap = nanos.join("NanosWorld.usmap");
    let dir = common::temp_dir("patch-kinds");
    let dir = dir.as_ref();
    let game = game_of(
        dir,
        "Game",
        &[nanos.join(CHAT_FILE), nanos.join(CURVE_FILE)],
        EngineVersion::UE5_7,
    );
    let patch = r#"
[[patch]]
asset = "/Game/NanosWorld/Core/World/Sky/Curve_SkyLight_Intensity"
set = { "Curve_SkyLight_Intensity.FloatCurve.Keys[1].Value" = 2.5 }
append = { "Curve_SkyLight_Intensity.FloatCurve.Keys" = [{ InterpMode = 2, TangentMode = 0, TangentWeightMode = 0, Time = 1200.0, Value = 3.0, ArriveTangent = 0.0, ArriveTangentWeight = 0.0, LeaveTangent = 0.0, LeaveTangentWeight = 0.0 }] }
remove = ["Curve_SkyLight_Intensity.FloatCurve.Keys[3]"]

[[patch]]
asset = "/Game/NanosWorld/Core/Chat/DT_ChatEntry"
set = { "Default.TextStyle.SelectedBackgroundColor.ColorUseRule" = "UseColor_Specified", "Cyan.TextStyle.Font.FontObject" = "", "Bold.TextStyle.Font.FontObject" = "/Game/NanosWorld/Core/World/Sky/Curve_SkyLight_Intensity.Curve_SkyLight_Intensity" }
"#;
    let repo = repo(dir, &nanos, patch);
    build(&repo, &game).ok();

    let original_curve = document(
        dir,
        &nanos,
        &[nanos.join(CURVE_FILE).to_str().unwrap()],
        "curve.json",
    );
    let mut expected = original_curve["exports"][0]["data"].clone();
    let keys = expected["properties"]["FloatCurve"]["Keys"]
        .as_array_mut()
        .unwrap();
    keys[1]["Value"] = json!(2.5);
    let mut added = keys[0].clone();
    added["Time"] = json!(1200.0);
    added["Value"] = json!(3.0);
    added["InterpMode"] = json!(2);
    keys.push(added);
    keys.remove(3);
    let found = built_package(dir, &repo, &game, (&usmap, "5.7"), CURVE);
    assert_eq!(found["exports"][0]["data"], expected);

    let original_chat = document(
        dir,
        &nanos,
        &[nanos.join(CHAT_FILE).to_str().unwrap()],
        "chat.json",
    );
    let mut expected = original_chat["exports"][0]["data"].clone();
    assert_eq!(
        expected["rows"]["Default"]["TextStyle"]["SelectedBackgroundColor"]["ColorUseRule"],
        "UseColor_Foreground"
    );
    expected["rows"]["Default"]["TextStyle"]["SelectedBackgroundColor"]["ColorUseRule"] =
        json!("UseColor_Specified");
    assert!(expected["rows"]["Cyan"]["TextStyle"]["Font"]["FontObject"].is_string());
    expected["rows"]["Cyan"]["TextStyle"]["Font"]["FontObject"] = json!("");
    // An object the table did not import (`FontObject` is a `UObject*`):
    // imported, its class read from the game's package that exports it.
    let curve_object = format!("{CURVE}.Curve_SkyLight_Intensity");
    expected["rows"]["Bold"]["TextStyle"]["Font"]["FontObject"] = json!(curve_object);
    let found = built_package(dir, &repo, &game, (&usmap, "5.7"), CHAT);
    assert_eq!(found["exports"][0]["data"], expected);
    // (Read back from the container through extract, whose import order is
    // the Zen package's: compared as sets.)
    let sorted = |v: &Value| {
        let mut list: Vec<String> = v
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i.to_string())
            .collect();
        list.sort();
        list
    };
    let mut imports = original_chat["imports"].clone();
    let list = imports.as_array_mut().unwrap();
    list.push(json!({ "path": CURVE, "class": "/Script/CoreUObject.Package" }));
    list.push(json!({ "path": curve_object, "class": "/Script/Engine.CurveFloat" }));
    assert_eq!(sorted(&found["imports"]), sorted(&imports));

    // SN2's string table (5.6).
    let sn2 = corpus.join("uassetapi/TestManyAssets/SN2");
    let st_file = sn2.join("Content/StringTables/ST_Attributes.uasset");
    let sn2_usmap = sn2.join("SN2.usmap");
    let st_dir = dir.join("strings");
    let game = game_of(
        &st_dir,
        "Game",
        std::slice::from_ref(&st_file),
        EngineVersion::UE5_6,
    );
    let patch = "[[patch]]\nasset = \"/Game/StringTables/ST_Attributes\"\nset = { PlayerHasDied = \"{0} fell\", PlayerJoined = \"{0} joined\" }\n";
    let repo = repo_for(&st_dir, &sn2_usmap, "5.6", patch);
    build(&repo, &game).ok();
    let original = document_of(
        &st_dir,
        &sn2_usmap,
        "5.6",
        &[st_file.to_str().unwrap()],
        "st.json",
    );
    let mut expected = original["exports"][0]["data"].clone();
    assert_eq!(
        expected["string_table"]["entries"]["PlayerHasDied"],
        "Player {0} has died"
    );
    expected["string_table"]["entries"]["PlayerHasDied"] = json!("{0} fell");
    expected["string_table"]["entries"]["PlayerJoined"] = json!("{0} joined");
    let found = built_package(
        &st_dir,
        &repo,
        &game,
        (&sn2_usmap, "5.6"),
        "/Game/StringTables/ST_Attributes",
    );
    assert_eq!(found["exports"][0]["data"], expected);
}

/// `zenpak patch vendor --game-dir GAME` in `repo`.
fn vendor(repo: &Path, game: &str) -> Run {
    run(
        Some(repo),
        &[
            "--message-format",
            "json",
            "patch",
            "vendor",
            "--game-dir",
            game,
        ],
    )
}

/// The three files of the mod `repo` built.
fn artifacts(repo: &Path) -> Vec<Vec<u8>> {
    ["utoc", "ucas", "pak"]
        .iter()
        .map(|ext| std::fs::read(repo.join(format!("target/PatchMod_1_P.{ext}"))).unwrap())
        .collect()
}

/// `patch vendor` copies the game's table into `patches/base/` with a
/// lock; a release build without the game then makes the same bytes as
/// one with it. After a game update, a build with the game says the base
/// is outdated and `patch vendor` changes the lock; a vendored file edited
/// by hand is refused.
#[test]
fn vendored_bases_build_the_same_mod_without_the_game() {
    let Some(s) = setup("patch-vendor") else {
        return;
    };
    let dir = s.dir.as_ref();
    let repo = repo(dir, &s.nanos, PATCH);
    let game = s.game.to_str().unwrap();
    let vendored = vendor(&repo, game);
    vendored.ok();
    let line = vendored.line_of("vendored");
    assert_eq!(line["asset"], CHAT);
    assert_eq!(line["changed"], true);
    let base = repo.join("patches/base/TestGame/Content/NanosWorld/Core/Chat/DT_ChatEntry");
    assert!(base.with_extension("uasset").is_file() && base.with_extension("uexp").is_file());
    let lock_path = repo.join("patches/base/lock.toml");
    let lock = std::fs::read_to_string(&lock_path).unwrap();
    let parsed: toml::Value = toml::from_str(&lock).unwrap();
    assert_eq!(parsed["base"][0]["asset"].as_str(), Some(CHAT));

    run(Some(&repo), &["build", "--release", "--game-dir", game]).ok();
    let with_game = artifacts(&repo);
    let without = run(
        Some(&repo),
        &["--message-format", "json", "build", "--release", "--force"],
    );
    without.ok();
    assert!(without.line_of("patched")["base"]
        .as_str()
        .unwrap()
        .contains("patches/base"));
    assert_eq!(artifacts(&repo), with_game);

    // Vendored again from the same game: nothing changes.
    let again = vendor(&repo, game);
    assert_eq!(again.line_of("vendored")["changed"], false);
    assert_eq!(std::fs::read_to_string(&lock_path).unwrap(), lock);

    // The game updated: the build with it warns, the vendor changes the lock.
    let (new_game, _) = updated_game(dir, &s);
    let new_game = new_game.to_str().unwrap();
    let built = run(
        Some(&repo),
        &["--message-format", "json", "build", "--game-dir", new_game],
    );
    built.ok();
    assert_eq!(built.codes("warning"), ["patch-base-outdated"]);
    let checked = run(
        Some(&repo),
        &["--message-format", "json", "check", "--game-dir", new_game],
    );
    checked.ok();
    assert_eq!(
        checked.line_of("patch-check")["state"],
        "applies-with-drift"
    );
    let refreshed = vendor(&repo, new_game);
    assert_eq!(refreshed.line_of("vendored")["changed"], true);
    assert_ne!(std::fs::read_to_string(&lock_path).unwrap(), lock);

    // A vendored file edited by hand: a build without the game refuses it.
    let uexp = base.with_extension("uexp");
    let mut bytes = std::fs::read(&uexp).unwrap();
    bytes[0] ^= 1;
    std::fs::write(&uexp, bytes).unwrap();
    let failed = run(Some(&repo), &["--message-format", "json", "build"]);
    failed.assert_code(2);
    assert!(failed.error()["file"]
        .as_str()
        .unwrap()
        .ends_with("DT_ChatEntry.uasset"));
}

/// A table's rows, in order, as the document holds them.
type Rows = Vec<(String, Node)>;

/// `patch diff` of the game's table and a copy edited as a GUI would (by
/// from-json of an edited document: a number changed, a row added as a
/// copy, one removed) writes a patch that, built against the game, makes
/// the edited copy's table; a change a patch cannot say (a property made
/// zero-masked) is refused naming it.
#[test]
fn patch_diff_writes_the_patch_that_makes_the_edited_copy() {
    let Some(s) = setup("patch-diff") else {
        return;
    };
    let dir = s.dir.as_ref();
    let mappings = s.nanos.join("NanosWorld.usmap");
    // Edited in order (serde_json's maps would sort the rows): through
    // the document's own ordered reading.
    let edit = |name: &str, change: &dyn Fn(&mut Rows)| -> PathBuf {
        let text = std::fs::read_to_string(dir.join("original.json")).unwrap();
        let mut doc = Node::parse(&text).unwrap();
        let rows = doc
            .get_mut("exports")
            .and_then(|e| e.items_mut())
            .and_then(|e| e.get_mut(0))
            .and_then(|e| e.get_mut("data"))
            .and_then(|d| d.get_mut("rows"))
            .and_then(|r| r.entries_mut())
            .unwrap();
        change(rows);
        let json = dir.join(format!("{name}.json"));
        std::fs::write(&json, doc.to_text().unwrap()).unwrap();
        cook(&json, &mappings, &dir.join(name))
    };
    let row = |rows: &mut Rows, name: &str| -> Value {
        rows.iter()
            .find(|(k, _)| k == name)
            .unwrap()
            .1
            .to_value()
            .unwrap()
    };
    let put = |rows: &mut Rows, name: &str, value: Value| {
        let at = rows.iter().position(|(k, _)| k == name).unwrap();
        rows[at].1 = Node::New(value);
    };
    let edited = edit("Edited", &|rows| {
        let mut default = row(rows, "Default");
        default["TextStyle"]["Font"]["Size"] = json!(19.5);
        put(rows, "Default", default);
        let mut copy = row(rows, "Purple");
        copy["TextStyle"]["Font"]["Size"] = json!(21.0);
        rows.push(("Magenta".into(), Node::New(copy)));
        rows.retain(|(k, _)| k != "Grey");
    });
    let repo = repo(dir, &s.nanos, "");
    std::fs::remove_file(repo.join("patches/chat.toml")).unwrap();
    let patch = repo.join("patches/diff.toml");
    let base = s.nanos.join(CHAT_FILE);
    let diffed = run(
        Some(&repo),
        &[
            "--message-format",
            "json",
            "patch",
            "diff",
            base.to_str().unwrap(),
            edited.to_str().unwrap(),
            "--asset",
            CHAT,
            "-o",
            patch.to_str().unwrap(),
        ],
    );
    diffed.ok();
    // The set, the added row (with its one field), the removed row.
    assert_eq!(diffed.line_of("patch-diff")["operations"], 3);
    build(&repo, &s.game).ok();
    let found = built_document(dir, &s.nanos, &repo, &s.game, "built.json");
    let wanted = document(dir, &s.nanos, &[edited.to_str().unwrap()], "edited.json");
    assert_eq!(found["exports"][0]["data"], wanted["exports"][0]["data"]);

    let masked = edit("Masked", &|rows| {
        let mut default = row(rows, "Default");
        default["TextStyle"]["Font"]["Size"] = Value::Null;
        put(rows, "Default", default);
    });
    let refused = run(
        Some(&repo),
        &[
            "--message-format",
            "json",
            "patch",
            "diff",
            base.to_str().unwrap(),
            masked.to_str().unwrap(),
        ],
    );
    refused.assert_code(2);
    assert!(refused.error()["file"]
        .as_str()
        .unwrap()
        .ends_with("DT_ChatEntry.uasset"));
}
