//! `zenpak to-json` of a package inside a container, a pak or a game
//! folder, through the binary: NanosWorld's `DT_ChatEntry` (5.7, with its
//! `.usmap`) built into a container as `extract_cli.rs` builds one (the
//! game beside it: script objects in `global.utoc`, the package it imports
//! in `Game_0_P`). The document of the package found there is the document
//! of the legacy package it was built from: the same exports with the same
//! property trees, the same imports and names — compared as parsed JSON
//! values, never as text, so this holds whatever shape the values take.

use crate::common::{self, run, Run};
use crate::extract_game::Game;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::Value;

use zenpak::iostore::container_header::StoreEntry;
use zenpak::iostore::ContainerBuilder;
use zenpak::EngineVersion;

const NANOS: &str = "uassetapi/TestUE5_7/NanosWorld";
const CHAT_FILE: &str = "Content/NanosWorld/Core/Chat/DT_ChatEntry.uasset";
const CHAT: &str = "/Game/NanosWorld/Core/Chat/DT_ChatEntry";

/// `zenpak to-json ARGS -o OUT --mappings <NanosWorld's> --message-format json` in `cwd`.
fn to_json(cwd: Option<&Path>, args: &[&str], out: &Path, nanos: &Path) -> Run {
    let mappings = nanos.join("NanosWorld.usmap");
    let mut all = args.to_vec();
    all.extend(["--mappings", mappings.to_str().unwrap()]);
    to_json_plain(cwd, &all, out)
}

/// `zenpak to-json ARGS -o OUT --message-format json` in `cwd`.
fn to_json_plain(cwd: Option<&Path>, args: &[&str], out: &Path) -> Run {
    let mut all = vec!["--message-format", "json", "to-json"];
    all.extend(args);
    all.extend(["-o", out.to_str().unwrap()]);
    run(cwd, &all)
}

/// The document `run` wrote at `out`.
fn document(run: &Run, out: &Path) -> Value {
    run.assert_code(0);
    serde_json::from_slice(&std::fs::read(out).unwrap()).unwrap()
}

/// `found` is the document of the legacy package `original`: the same
/// exports (paths, classes, property trees), imports and names (as a set:
/// the name map of a package rebuilt from Zen is in its own order), and
/// its DataTable decoded.
fn assert_same_package(found: &Value, original: &Value) {
    assert_eq!(found["package"], original["package"]);
    assert_eq!(found["exports"], original["exports"]);
    assert_eq!(found["imports"], original["imports"]);
    let names = |doc: &Value| -> BTreeSet<String> {
        doc["names"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(names(found), names(original));
    assert!(
        !found["exports"][0]["data"].is_null(),
        "the DataTable is decoded"
    );
}

/// Without --engine or a mod.toml, the engine is the one release the
/// game's files allow (5.5: its TOC and container header versions are its
/// own); where they allow several (5.6–5.8), a usage error. The package's
/// bulk data comes from its chunk, as the legacy package's `.ubulk`.
#[test]
fn to_json_takes_the_engine_the_game_names() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let cube = corpus.join("retoc/UE5.5/SM_Cube.uasset");
    let game = Game::load(std::slice::from_ref(&cube), EngineVersion::UE5_5);
    let dir = common::temp_dir("to-json-engine");
    let dir = dir.as_ref();
    let (mod_toc, paks, _) = crate::extract_cli::build(dir, &game);
    let out = dir.join("original.json");
    let run = to_json_plain(None, &[cube.to_str().unwrap(), "--engine", "5.5"], &out);
    let original = document(&run, &out);
    assert!(!original["companions"].as_array().unwrap().is_empty());
    let found_out = dir.join("found.json");
    let run = to_json_plain(
        None,
        &[
            mod_toc.to_str().unwrap(),
            original["package"].as_str().unwrap(),
            "--game",
            paks.to_str().unwrap(),
        ],
        &found_out,
    );
    let found = document(&run, &found_out);
    assert_eq!(found["engine"], "5.5");
    for key in ["package", "exports", "imports", "companions"] {
        assert_eq!(found[key], original[key], "{key}");
    }

    let Some(s) = setup("to-json-engine-range") else {
        return;
    };
    let out = s.dir.as_ref().join("found.json");
    let (toc, paks) = (s.mod_toc.to_str().unwrap(), s.paks.to_str().unwrap());
    let run = to_json(None, &[toc, CHAT, "--game", paks], &out, &s.nanos);
    run.assert_code(2);
    let error = run.error();
    assert_eq!(error["code"], "usage");
    assert!(error["hint"].is_string(), "{error}");
    assert!(!out.exists());
}

/// The built container, the game's `Paks` folder beside it, the legacy
/// package and the document of it.
struct Setup {
    dir: common::TestDir,
    nanos: PathBuf,
    chat: PathBuf,
    mod_toc: PathBuf,
    paks: PathBuf,
    /// The made-up package the game provides (`Font_Roboto`), as a Zen chunk.
    stub: (String, Vec<u8>, Vec<u64>),
    original: Value,
}

fn setup(name: &str) -> Option<Setup> {
    let corpus = common::corpus()?;
    let nanos = corpus.join(NANOS);
    let chat = nanos.join(CHAT_FILE);
    let game = Game::load(std::slice::from_ref(&chat), EngineVersion::UE5_7);
    let dir = common::temp_dir(name);
    let (mod_toc, paks, _) = crate::extract_cli::build(dir.as_ref(), &game);
    let out = dir.as_ref().join("original.json");
    let run = to_json(
        None,
        &[chat.to_str().unwrap(), "--engine", "5.7"],
        &out,
        &nanos,
    );
    let original = document(&run, &out);
    Some(Setup {
        stub: game.stubs[0].clone(),
        dir,
        nanos,
        chat,
        mod_toc,
        paks,
        original,
    })
}

#[test]
fn to_json_reads_a_package_inside_a_container() {
    let Some(s) = setup("to-json-container") else {
        return;
    };
    let dir = s.dir.as_ref();
    let out = dir.join("found.json");
    let (toc, paks) = (s.mod_toc.to_str().unwrap(), s.paks.to_str().unwrap());
    // By its package name and by its path as `zenpak list` shows it.
    let listed = "TestGame/Content/NanosWorld/Core/Chat/DT_ChatEntry.uzenasset";
    for package in [CHAT, listed] {
        let run = to_json(
            None,
            &[toc, package, "--game", paks, "--engine", "5.7"],
            &out,
            &s.nanos,
        );
        assert_same_package(&document(&run, &out), &s.original);
        let report = run.line_of("to-json");
        assert_eq!(report["source"], "Mod_P.pak", "{report}");
        std::fs::remove_file(&out).unwrap();
    }

    // Without the game, its imports cannot be resolved: an error naming
    // the container and the import map, nothing written.
    let run = to_json(None, &[toc, CHAT, "--engine", "5.7"], &out, &s.nanos);
    run.assert_code(1);
    let error = run.error();
    assert!(error["file"].as_str().unwrap().ends_with("Mod_P.utoc"));
    assert!(error["structure"]
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s == "import map"));
    assert!(!out.exists());

    // With --allow-unresolved the imports become placeholders, said once.
    let run = to_json(
        None,
        &[toc, CHAT, "--engine", "5.7", "--allow-unresolved"],
        &out,
        &s.nanos,
    );
    let placeholders = document(&run, &out);
    assert_ne!(placeholders["imports"], s.original["imports"]);
    assert_eq!(run.coded("warning", "unresolved-import").len(), 1);
    std::fs::remove_file(&out).unwrap();

    // A package the container does not have: exit 1, the error names the
    // package and the container; nothing written.
    let missing = "/Game/NanosWorld/Core/Chat/DT_Missing";
    let run = to_json(
        None,
        &[toc, missing, "--game", paks, "--engine", "5.7"],
        &out,
        &s.nanos,
    );
    run.assert_code(1);
    let error = run.error();
    assert!(error["file"].as_str().unwrap().ends_with("Mod_P.utoc"));
    assert!(error["message"].as_str().unwrap().contains(missing));
    assert!(error["hint"].as_str().unwrap().contains("zenpak list"));
    assert!(!out.exists());

    // A package of the game is not one of the container's: only what was
    // named is looked in (the game resolves imports).
    let run = to_json(
        None,
        &[toc, &s.stub.0, "--game", paks, "--engine", "5.7"],
        &out,
        &s.nanos,
    );
    run.assert_code(1);
    assert!(!out.exists());

    // The Zen package alone, as `zenpak get` writes it: a usage error
    // whose hint gives the forms that read it, with its package name.
    let lone = dir.join("DT_ChatEntry.uzenasset");
    common::run(None, &["get", toc, listed, "-o", lone.to_str().unwrap()]).assert_code(0);
    let run = to_json(
        None,
        &[lone.to_str().unwrap(), "--engine", "5.7"],
        &out,
        &s.nanos,
    );
    run.assert_code(2);
    let error = run.error();
    assert_eq!(error["code"], "usage");
    let hint = error["hint"].as_str().unwrap();
    assert!(hint.contains(&format!("--game-dir GAME {CHAT}")), "{hint}");
    assert!(hint.contains(&format!("CONTAINER.utoc {CHAT}")), "{hint}");
    assert!(!out.exists());

    // A legacy package in a pak without a container: read as it is, so
    // the document is the legacy package's own, whole.
    let pak = dir.join("Legacy_P.pak");
    let mut writer = zenpak::pak::PakWriter::create_with(&pak, Default::default()).unwrap();
    for ext in ["uasset", "uexp"] {
        writer
            .add_file(
                &format!("NanosWorld/Content/NanosWorld/Core/Chat/DT_ChatEntry.{ext}"),
                &std::fs::read(s.chat.with_extension(ext)).unwrap(),
            )
            .unwrap();
    }
    writer.finish().unwrap();
    let run = to_json(
        None,
        &[pak.to_str().unwrap(), CHAT, "--engine", "5.7"],
        &out,
        &s.nanos,
    );
    assert_eq!(document(&run, &out), s.original);
    assert_eq!(run.line_of("to-json")["source"], "Legacy_P.pak");
    std::fs::remove_file(&out).unwrap();

    // Its header without the .uexp: an error naming the pak, nothing written.
    let cut = dir.join("Cut_P.pak");
    let mut writer = zenpak::pak::PakWriter::create_with(&cut, Default::default()).unwrap();
    writer
        .add_file(
            "NanosWorld/Content/NanosWorld/Core/Chat/DT_ChatEntry.uasset",
            &std::fs::read(&s.chat).unwrap(),
        )
        .unwrap();
    writer.finish().unwrap();
    let run = to_json(
        None,
        &[cut.to_str().unwrap(), CHAT, "--engine", "5.7"],
        &out,
        &s.nanos,
    );
    run.assert_code(1);
    assert_eq!(Path::new(run.error()["file"].as_str().unwrap()), cut);
    assert!(!out.exists());
}

/// `to-json --game-dir GAME PACKAGE`: the package is looked for in the
/// whole game, and the copy read is the one the game loads — the mod in
/// `~mods`, not the base game's container holding another package under
/// the same name.
#[test]
fn to_json_reads_the_copy_the_game_loads() {
    let Some(s) = setup("to-json-game") else {
        return;
    };
    let dir = s.dir.as_ref();
    let install = dir.join("Install");
    let content = install.join("TestGame/Content");
    std::fs::create_dir_all(&content).unwrap();
    let paks = content.join("Paks");
    std::fs::rename(&s.paks, &paks).unwrap();
    // The base game's copy: the made-up Font_Roboto package stored under
    // DT_ChatEntry's id and path.
    let mut base = ContainerBuilder::create(
        &paks,
        "pakchunk5-Windows",
        EngineVersion::UE5_7,
        zenpak::iostore::ContainerOptions::default(),
    )
    .unwrap();
    let (_, bytes, imported) = &s.stub;
    base.add_package(
        zenpak::hash::package_id(CHAT),
        bytes,
        StoreEntry {
            export_bundles_size: bytes.len() as u64,
            load_order: 0,
            export_count: 0,
            export_bundle_count: 1,
            imported_packages: imported.clone(),
            shader_map_hashes: Vec::new(),
        },
        "TestGame/Content/NanosWorld/Core/Chat/DT_ChatEntry.uasset",
    )
    .unwrap();
    base.finish().unwrap();
    let mods = paks.join("~mods");
    std::fs::create_dir_all(&mods).unwrap();
    for ext in ["utoc", "ucas", "pak"] {
        let from = s.mod_toc.with_extension(ext);
        std::fs::rename(&from, mods.join(from.file_name().unwrap())).unwrap();
    }
    let out = dir.join("found.json");
    let game_dir = install.to_str().unwrap();
    let run = to_json(
        None,
        &["--game-dir", game_dir, CHAT, "--engine", "5.7"],
        &out,
        &s.nanos,
    );
    assert_same_package(&document(&run, &out), &s.original);
    assert_eq!(run.line_of("to-json")["source"], "Mod_P.pak");
    std::fs::remove_file(&out).unwrap();

    // Without the mod, the base game's copy is the one read: a document of
    // another package.
    std::fs::rename(&mods, dir.join("mods-away")).unwrap();
    let run = to_json(
        None,
        &["--game-dir", game_dir, CHAT, "--engine", "5.7"],
        &out,
        &s.nanos,
    );
    let decoy = document(&run, &out);
    assert_eq!(decoy["package"], s.stub.0.as_str());
    assert_eq!(run.line_of("to-json")["source"], "pakchunk5-Windows.pak");
    std::fs::rename(dir.join("mods-away"), &mods).unwrap();
    std::fs::remove_file(&out).unwrap();

    // Inside a mod, the engine comes from its mod.toml.
    let repo = dir.join("MyMod");
    std::fs::create_dir_all(&repo).unwrap();
    std::fs::write(
        repo.join("mod.toml"),
        "[mod]\nname = \"MyMod\"\nversion = \"1\"\n[game]\nengine = \"5.7\"\nproject = \"TestGame\"\n",
    )
    .unwrap();
    let run = to_json(Some(&repo), &["--game-dir", game_dir, CHAT], &out, &s.nanos);
    assert_same_package(&document(&run, &out), &s.original);

    // A package the game does not have: the error names it and the game's
    // Paks folder.
    let missing = "/Game/NanosWorld/Core/Chat/DT_Missing";
    std::fs::remove_file(&out).unwrap();
    let run = to_json(
        Some(&repo),
        &["--game-dir", game_dir, missing],
        &out,
        &s.nanos,
    );
    run.assert_code(1);
    let error = run.error();
    assert!(error["message"].as_str().unwrap().contains(missing));
    assert!(Path::new(error["file"].as_str().unwrap()).ends_with("TestGame/Content/Paks"));
    assert!(!out.exists());
}
