//! Two patch files, and two mods, on one table: the fixture game of
//! `patch_build.rs` (NanosWorld's `DT_ChatEntry`), mods built from patch
//! files through the binary, then `zenpak conflicts` and `zenpak merge` on
//! the built mods. The merged table is compared with the table a single mod
//! carrying every patch builds (made by the patch path, not by merge).

use crate::common::{run, Run};
use crate::patch_build::{build, document_of, setup, Setup, CHAT};

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

/// A mod repository named `name` of the patch files `patches` (file name, text).
fn mod_repo(
    dir: &Path,
    s: &Setup,
    (name, suffix): (&str, &str),
    patches: &[(&str, &str)],
    later_wins: bool,
) -> PathBuf {
    let repo = dir.join(name);
    std::fs::create_dir_all(repo.join("patches")).unwrap();
    std::fs::create_dir_all(repo.join("Cooked")).unwrap();
    std::fs::copy(s.nanos.join("NanosWorld.usmap"), repo.join("Game.usmap")).unwrap();
    std::fs::write(
        repo.join("mod.toml"),
        format!(
            "[mod]\nname = \"{name}\"\nversion = \"1.0.0\"\n\n[game]\nengine = \"5.7\"\nproject = \"TestGame\"\nmappings = \"Game.usmap\"\n\n[output]\nsuffix = \"{suffix}\"\n\n[patches]\nlater-wins = {later_wins}\n"
        ),
    )
    .unwrap();
    for (file, text) in patches {
        std::fs::write(repo.join("patches").join(file), text).unwrap();
    }
    repo
}

fn patch(body: &str) -> String {
    format!("[[patch]]\nasset = \"{CHAT}\"\n{body}\n")
}

const A_BODY: &str = "set = { \"Default.TextStyle.Font.Size\" = 18.0 }\nadd-rows = { Magenta = { copy-of = \"Purple\", \"TextStyle.Font.Size\" = 20.0 } }";
const B_BODY: &str =
    "set = { \"Cyan.TextStyle.ShadowOffset\" = { X = 2.5 } }\nremove-rows = [\"Grey\"]";
const C_BODY: &str = "set = { \"Default.TextStyle.Font.Size\" = 24.0 }";

/// The mod built from `body`, as `name` with `suffix`: its `.pak`.
fn built_mod(s: &Setup, (name, suffix): (&str, &str), body: &str) -> PathBuf {
    let dir = s.dir.as_ref();
    let repo = mod_repo(dir, s, (name, suffix), &[("p.toml", &patch(body))], false);
    build(&repo, &s.game).ok();
    repo.join(format!("target/{name}{suffix}.pak"))
}

/// The table's document in the container `utoc` (with the game).
fn table(s: &Setup, utoc: &Path, out: &str) -> Value {
    let usmap = s.nanos.join("NanosWorld.usmap");
    document_of(
        s.dir.as_ref(),
        &usmap,
        "5.7",
        &[
            utoc.to_str().unwrap(),
            CHAT,
            "--game-dir",
            s.game.to_str().unwrap(),
        ],
        out,
    )
}

fn with_nanos<'a>(s: &'a Setup, usmap: &'a str, args: &[&'a str]) -> Vec<&'a str> {
    let mut all = vec!["--message-format", "json"];
    all.extend(args);
    all.extend([
        "--game-dir",
        s.game.to_str().unwrap(),
        "--engine",
        "5.7",
        "--mappings",
        usmap,
    ]);
    all
}

fn merge(s: &Setup, mods: &[&Path], out: &Path, later_wins: bool) -> Run {
    let usmap = s.nanos.join("NanosWorld.usmap");
    let usmap = usmap.to_str().unwrap();
    let mut args = vec!["merge"];
    args.extend(mods.iter().map(|m| m.to_str().unwrap()));
    args.extend(["-o", out.to_str().unwrap()]);
    if later_wins {
        args.push("--later-wins");
    }
    run(None, &with_nanos(s, usmap, &args))
}

fn conflicts(s: &Setup, mods: &[&Path]) -> Run {
    let usmap = s.nanos.join("NanosWorld.usmap");
    let usmap = usmap.to_str().unwrap();
    let mut args = vec!["conflicts"];
    for m in mods {
        args.extend(["--mod", m.to_str().unwrap()]);
    }
    run(None, &with_nanos(s, usmap, &args))
}

#[test]
fn two_patch_files_setting_one_path_differently_stop_the_build_or_the_later_wins() {
    let Some(s) = setup("patch-two-files") else {
        return;
    };
    let dir = s.dir.as_ref();
    let files = [("a.toml", patch(A_BODY)), ("b.toml", patch(C_BODY))];
    let files: Vec<(&str, &str)> = files.iter().map(|(f, t)| (*f, t.as_str())).collect();
    let repo = mod_repo(dir, &s, ("TwoFiles", "_P"), &files, false);
    let built = build(&repo, &s.game);
    built.assert_code(2);
    let error = &built.diagnostics("error")[0];
    assert!(
        error["file"].as_str().unwrap().ends_with("b.toml"),
        "{error}"
    );
    assert_eq!(error["line"], 3, "the line of b.toml's `set`");
    assert!(!repo.join("target/TwoFiles_P.utoc").exists());

    // `[patches] later-wins = true`: a warning, and b.toml's value.
    let repo = mod_repo(dir, &s, ("TwoFilesLater", "_P"), &files, true);
    let built = build(&repo, &s.game);
    built.ok();
    let warnings = built.coded("warning", "patch-overridden");
    assert_eq!(warnings.len(), 1, "{}", built.text());
    assert!(warnings[0]["file"].as_str().unwrap().ends_with("b.toml"));
    let found = table(&s, &repo.join("target/TwoFilesLater_P.utoc"), "later.json");
    let rows = &found["exports"][0]["data"]["rows"];
    assert_eq!(rows["Default"]["TextStyle"]["Font"]["Size"], json!(24.0));
    assert!(
        rows.get("Magenta").is_some(),
        "a.toml's other change is kept"
    );
}

#[test]
fn two_mods_on_disjoint_rows_merge_into_one_that_has_both() {
    let Some(s) = setup("patch-merge-disjoint") else {
        return;
    };
    let dir = s.dir.as_ref();
    let a = built_mod(&s, ("ModA", "_1_P"), A_BODY);
    let b = built_mod(&s, ("ModB", "_2_P"), B_BODY);
    // The table one mod with both patches builds: what the merge must equal.
    let both_repo = mod_repo(
        dir,
        &s,
        ("BothFiles", "_P"),
        &[("a.toml", &patch(A_BODY)), ("b.toml", &patch(B_BODY))],
        false,
    );
    build(&both_repo, &s.game).ok();
    let expected = table(
        &s,
        &both_repo.join("target/BothFiles_P.utoc"),
        "expected.json",
    );

    // conflicts: which rows each changed, no overlap.
    let listed = conflicts(&s, &[&b, &a]);
    listed.ok();
    let changes = listed.line_of("asset-changes");
    assert!(changes["path"]
        .as_str()
        .unwrap()
        .ends_with("DT_ChatEntry.uasset"));
    assert_eq!(
        changes["changes"][0]["provider"], "ModA_1_P.pak",
        "mount order: B wins, so it is last"
    );
    assert_eq!(
        changes["changes"][0]["set"],
        json!(["Default.TextStyle.Font.Size"])
    );
    assert_eq!(changes["changes"][0]["added_rows"], json!(["Magenta"]));
    assert_eq!(changes["changes"][1]["provider"], "ModB_2_P.pak");
    assert_eq!(
        changes["changes"][1]["set"],
        json!(["Cyan.TextStyle.ShadowOffset.X"])
    );
    assert_eq!(changes["changes"][1]["removed_rows"], json!(["Grey"]));
    assert_eq!(changes["overlaps"], json!([]));

    // merge: one mod whose table has both mods' changes.
    let out = dir.join("Merged");
    let merged = merge(&s, &[&b, &a], &out, false);
    merged.ok();
    let line = merged.line_of("merged");
    assert_eq!(line["mods"], json!(["ModA_1_P.pak", "ModB_2_P.pak"]));
    assert_eq!(line["assets"], 1);
    assert_eq!(line["overlaps"], 0);
    assert!(merged.coded("error", "merge-overlap").is_empty());
    let utoc = out.join("target/Merged_P.utoc");
    assert!(out.join("mod.toml").is_file() && !out.join(".zenpak-merge").exists());
    let found = table(&s, &utoc, "merged.json");
    assert_eq!(found["exports"], expected["exports"]);
    assert_eq!(found["imports"], expected["imports"]);
    run(None, &["verify", utoc.to_str().unwrap()]).ok();
    // The merged package is the one the two patch files build, byte for byte.
    let package = "TestGame/Content/NanosWorld/Core/Chat/DT_ChatEntry.uasset";
    let stored = |utoc: &Path, name: &str| {
        let file = dir.join(name);
        let (utoc, file_arg) = (utoc.to_str().unwrap(), file.to_str().unwrap());
        run(None, &["get", utoc, package, "-o", file_arg]).ok();
        std::fs::read(file).unwrap()
    };
    assert_eq!(
        stored(&utoc, "merged.uzenasset"),
        stored(&both_repo.join("target/BothFiles_P.utoc"), "both.uzenasset")
    );
    // A second merge into the same folder is refused: it is not empty.
    merge(&s, &[&a, &b], &out, false).assert_code(2);
}

#[test]
fn two_mods_on_one_row_do_not_merge_unless_the_later_wins() {
    let Some(s) = setup("patch-merge-overlap") else {
        return;
    };
    let dir = s.dir.as_ref();
    let a = built_mod(&s, ("ModA", "_1_P"), A_BODY);
    let c = built_mod(&s, ("ModC", "_3_P"), C_BODY);

    let listed = conflicts(&s, &[&a, &c]);
    listed.ok();
    let overlaps = &listed.line_of("asset-changes")["overlaps"];
    assert_eq!(overlaps[0]["path"], "Default.TextStyle.Font.Size");
    assert_eq!(
        overlaps[0]["providers"],
        json!(["ModA_1_P.pak", "ModC_3_P.pak"])
    );

    let out = dir.join("Merged");
    let failed = merge(&s, &[&c, &a], &out, false);
    failed.assert_code(1);
    let errors = failed.coded("error", "merge-overlap");
    assert_eq!(errors.len(), 1, "{}", failed.text());
    assert!(errors[0]["file"]
        .as_str()
        .unwrap()
        .ends_with("DT_ChatEntry.uasset"));
    assert_eq!(
        failed.line_of("asset-changes")["overlaps"][0]["changes"],
        json!(["set", "set"])
    );
    assert!(!out.exists(), "nothing is left of a merge that stopped");
    let temporaries = std::fs::read_dir(dir)
        .unwrap()
        .filter(|e| {
            let name = e.as_ref().unwrap().file_name();
            name.to_string_lossy().ends_with(".zenpak-tmp")
        })
        .count();
    assert_eq!(temporaries, 0, "nor its temporary folder");

    // An empty folder given stays, empty.
    std::fs::create_dir_all(&out).unwrap();
    merge(&s, &[&c, &a], &out, false).assert_code(1);
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 0);

    let merged = merge(&s, &[&c, &a], &out, true);
    merged.ok();
    let warnings = merged.coded("warning", "merge-overlap");
    assert_eq!(warnings.len(), 1, "{}", merged.text());
    let found = table(&s, &out.join("target/Merged_P.utoc"), "merged.json");
    let rows = &found["exports"][0]["data"]["rows"];
    assert_eq!(
        rows["Default"]["TextStyle"]["Font"]["Size"],
        json!(24.0),
        "ModC is mounted last"
    );
    assert!(
        rows.get("Magenta").is_some(),
        "ModA's change that overlaps nothing is kept"
    );
}

/// Texts: a string sets a localized text's source (its namespace and key
/// kept); a table of another history replaces it (a string-table entry).
/// The base is a cooked widget in the repository; what the build converts
/// (the patched legacy package it stages) is read back with `to-json`.
#[test]
fn a_text_is_set_by_its_source_string_or_by_a_string_table_entry() {
    let Some(corpus) = crate::common::corpus() else {
        return;
    };
    let nanos = corpus.join(crate::patch_build::NANOS);
    let usmap = nanos.join("NanosWorld.usmap");
    let dir = crate::common::temp_dir("patch-text");
    let dir = dir.as_ref();
    let widget = "Content/NanosWorld/Core/Chat/WBP_Chat";
    let original = document_of(
        dir,
        &usmap,
        "5.7",
        &[nanos.join(format!("{widget}.uasset")).to_str().unwrap()],
        "original.json",
    );
    let hint_of = |doc: &Value| {
        let export = doc["exports"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| {
                e["path"]
                    .as_str()
                    .unwrap()
                    .ends_with("WidgetTree.WBP_InputText")
            })
            .unwrap();
        export["data"]["properties"]["HintText"].clone()
    };
    let before = hint_of(&original);
    assert_eq!(
        before["base"]["source"], "enter text",
        "read by hand from the package"
    );

    for (value, expected) in [
        (
            "\"type a message\"".to_string(),
            json!({ "base": { "namespace": before["base"]["namespace"], "key": before["base"]["key"], "source": "type a message" } }),
        ),
        (
            "{ string_table = { table = \"/Game/ST_Chat\", key = \"Hint\" } }".to_string(),
            json!({ "string_table": { "table": "/Game/ST_Chat", "key": "Hint" } }),
        ),
    ] {
        let case = dir.join(if value.starts_with('"') {
            "source"
        } else {
            "table"
        });
        let patch = format!(
            "[[patch]]\nbase = \"Base/WBP_Chat.uasset\"\nset = {{ \"WBP_InputText.HintText\" = {value} }}\n"
        );
        let repo = crate::patch_build::repo_for(&case, &usmap, "5.7", &patch);
        std::fs::create_dir_all(repo.join("Base")).unwrap();
        for ext in ["uasset", "uexp"] {
            std::fs::copy(
                nanos.join(format!("{widget}.{ext}")),
                repo.join(format!("Base/WBP_Chat.{ext}")),
            )
            .unwrap();
        }
        let built = run(Some(&repo), &["--message-format", "json", "build"]);
        built.ok();
        assert_eq!(built.line_of("patched")["operations"], 1);
        let staged = repo.join(format!(
            "target/.zenpak-cache/PatchMod_1_P/staged/TestGame/{widget}.uasset"
        ));
        let found = document_of(
            &case,
            &usmap,
            "5.7",
            &[staged.to_str().unwrap()],
            "found.json",
        );
        assert_eq!(hint_of(&found), expected, "{value}");
        // Nothing else of the widget changed.
        let mut rest = found.clone();
        let mut was = original.clone();
        for doc in [&mut rest, &mut was] {
            for export in doc["exports"].as_array_mut().unwrap() {
                if export["path"]
                    .as_str()
                    .unwrap()
                    .ends_with("WidgetTree.WBP_InputText")
                {
                    export["data"]["properties"]
                        .as_object_mut()
                        .unwrap()
                        .remove("HintText");
                }
            }
        }
        assert_eq!(rest["exports"], was["exports"], "{value}");
    }
}
