//! `check --game-dir` decodes the mod's packages with the game's current
//! mappings (`zenpak::game_check::redecode`), through the binary: a mod
//! whose content is NanosWorld's `DT_ChatEntry` (5.7, rows of
//! `RichTextStyleRow`, whose `TextStyle.Font` is a `SlateFontInfo`), a
//! fixture game holding the table (as the patch tests build it), and the
//! game's `.usmap` changed by the test the way an update changes it — a
//! struct the rows use gained a property, a property changed type. Each
//! is an `export-does-not-decode` error whose `export` fields name the
//! package, the export and the property; the mappings the table was
//! cooked with give none, and neither does a property appended at the end
//! of a struct (old data never names its slot: the engine reads it).

use crate::common::{self, run, Run};

use std::path::{Path, PathBuf};

use serde_json::Value;

use zenpak::mappings::{Mappings, PropertySchema, PropertyType, StructSchema};

const NANOS: &str = "uassetapi/TestUE5_7/NanosWorld";
const CHAT_FILE: &str = "Content/NanosWorld/Core/Chat/DT_ChatEntry";
const CHAT: &str = "/Game/NanosWorld/Core/Chat/DT_ChatEntry";

/// A mod repository whose content is the chat table, with `usmap` as its
/// `[game] mappings`.
fn mod_repo(dir: &Path, nanos: &Path, usmap: &[u8]) -> PathBuf {
    let repo = dir.join("ChatMod");
    let content = repo.join("Cooked/TestGame/Content/NanosWorld/Core/Chat");
    std::fs::create_dir_all(&content).unwrap();
    for ext in ["uasset", "uexp"] {
        std::fs::copy(
            nanos.join(CHAT_FILE).with_extension(ext),
            content.join("DT_ChatEntry").with_extension(ext),
        )
        .unwrap();
    }
    std::fs::write(repo.join("Game.usmap"), usmap).unwrap();
    std::fs::write(
        repo.join("mod.toml"),
        "[mod]\nname = \"ChatMod\"\nversion = \"1.0.0\"\n\n[game]\nengine = \"5.7\"\nproject = \"TestGame\"\nmappings = \"Game.usmap\"\n\n[output]\nsuffix = \"_1_P\"\n",
    )
    .unwrap();
    repo
}

/// The mappings with `change` made to the schema of struct `name`.
fn changed(mappings: &Mappings, name: &str, change: impl Fn(&mut StructSchema)) -> Vec<u8> {
    let mut structs = mappings.structs.clone();
    let schema = structs.iter_mut().find(|s| s.name == name).unwrap();
    change(schema);
    Mappings::new(mappings.version, mappings.enums.clone(), structs)
        .write(zenpak::mappings::BodyCompression::None)
        .unwrap()
}

/// A float property `name` inserted at own slot `at` (the ones from there on move up).
fn gains_property(at: u16, name: &'static str) -> impl Fn(&mut StructSchema) {
    move |s| {
        for p in &mut s.properties {
            if p.schema_index >= at {
                p.schema_index += 1;
            }
        }
        s.properties.push(PropertySchema {
            schema_index: at,
            array_size: 1,
            name: name.to_string(),
            ty: PropertyType::Float,
        });
        s.property_count += 1;
    }
}

fn check(repo: &Path, game: &Path) -> Run {
    run(
        Some(repo),
        &[
            "--message-format",
            "json",
            "check",
            "--game-dir",
            game.to_str().unwrap(),
        ],
    )
}

/// The one `export-does-not-decode` error's `export` fields.
fn not_decoding(checked: &Run) -> Value {
    let found = checked.coded("error", "export-does-not-decode");
    assert_eq!(found.len(), 1, "{}", checked.text());
    assert!(found[0]["file"]
        .as_str()
        .unwrap()
        .ends_with("DT_ChatEntry.uasset"));
    found[0]["export"].clone()
}

#[test]
fn check_names_the_export_and_property_the_games_new_mappings_do_not_describe() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let nanos = corpus.join(NANOS);
    let temp = common::temp_dir("redecode-check");
    let dir: &Path = temp.as_ref();
    let game =
        crate::patch_build::game_with(dir, "Game", &nanos.join(CHAT_FILE).with_extension("uasset"));
    let usmap = nanos.join("NanosWorld.usmap");
    let mappings = Mappings::load(&usmap).unwrap();

    // The mappings the table was cooked with: it decodes.
    let repo = mod_repo(dir, &nanos, &std::fs::read(&usmap).unwrap());
    let fits = check(&repo, &game);
    fits.ok();
    assert!(fits.coded("error", "export-does-not-decode").is_empty());
    let section = &fits.line_of("check")["game"]["redecode"];
    assert_eq!(section["packages_checked"], 1);
    assert_eq!(section["exports_checked"], 1);
    assert_eq!(section["not_decoding"], Value::Array(vec![]));

    // The update inserted a property into the rows' `TextBlockStyle`
    // before `Font`: the row's first struct no longer reads.
    std::fs::write(
        repo.join("Game.usmap"),
        changed(&mappings, "TextBlockStyle", gains_property(0, "LineHeight")),
    )
    .unwrap();
    let grown = check(&repo, &game);
    grown.assert_code(1);
    let export = not_decoding(&grown);
    assert_eq!(export["package"], CHAT);
    assert_eq!(export["export_index"], 0);
    assert_eq!(export["export"], format!("{CHAT}.DT_ChatEntry"));
    assert_eq!(export["class"], "/Script/Engine.DataTable");
    assert_eq!(export["property_path"], "Default.TextStyle.Font");
    assert_eq!(export["owner"], "TextBlockStyle");
    assert_eq!(export["property"], "Font");
    assert_eq!(export["property_type"], "StructProperty<SlateFontInfo>");
    let section = &grown.line_of("check")["game"]["redecode"];
    assert_eq!(section["not_decoding"][0], export);
    assert_eq!(grown.line_of("check")["problems"], 1);

    // A property changed type: `SlateFontInfo.TypefaceFontName` a string
    // where the data holds a name.
    std::fs::write(
        repo.join("Game.usmap"),
        changed(&mappings, "SlateFontInfo", |s| {
            let p = s
                .properties
                .iter_mut()
                .find(|p| p.name == "TypefaceFontName")
                .unwrap();
            p.ty = PropertyType::Str;
        }),
    )
    .unwrap();
    let retyped = check(&repo, &game);
    retyped.assert_code(1);
    let export = not_decoding(&retyped);
    assert_eq!(export["package"], CHAT);
    assert_eq!(export["export_index"], 0);
    assert_eq!(
        export["property_path"],
        "Default.TextStyle.Font.TypefaceFontName"
    );
    assert_eq!(export["owner"], "SlateFontInfo");
    assert_eq!(export["property"], "TypefaceFontName");
    assert_eq!(export["property_type"], "StrProperty");

    // `--mappings` names the game's current mappings over mod.toml's.
    let old = dir.join("Cooked-with.usmap");
    std::fs::copy(&usmap, &old).unwrap();
    let given = run(
        Some(&repo),
        &[
            "--message-format",
            "json",
            "check",
            "--game-dir",
            game.to_str().unwrap(),
            "--mappings",
            old.to_str().unwrap(),
        ],
    );
    given.ok();
    assert_eq!(
        given.line_of("check")["game"]["redecode"]["mappings"],
        old.to_str().unwrap()
    );

    // A property appended at the end of a struct with nothing after it in
    // its super chain: old data never names the new slot, the engine reads
    // it with the property at its default. Not an error.
    let slots = mappings
        .struct_schema("SlateFontInfo")
        .unwrap()
        .property_count;
    std::fs::write(
        repo.join("Game.usmap"),
        changed(&mappings, "SlateFontInfo", gains_property(slots, "Leading")),
    )
    .unwrap();
    let appended = check(&repo, &game);
    appended.ok();
    assert!(appended.coded("error", "export-does-not-decode").is_empty());
}
