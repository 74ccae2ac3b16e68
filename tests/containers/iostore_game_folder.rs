//! A game's Paks folder as one view, in the engine's mount order: which
//! copy of a chunk and of a pak file wins (see `src/game.rs` for the rule
//! and its engine sources), `global.utoc`'s ScriptObjects chunk, a `.utoc`
//! without `.pak` left out, and `list --filter`, `get`, `unpack --filter`
//! on the real binary.

use crate::common::{self, run};
use std::path::{Path, PathBuf};

use zenpak::game::GameView;
use zenpak::iostore::chunk::ChunkType;
use zenpak::iostore::container_header::StoreEntry;
use zenpak::iostore::{ContainerBuilder, ContainerOptions};
use zenpak::pak::crypto::KeyRing;
use zenpak::EngineVersion;

/// Writes `dir/name.{utoc,ucas,pak}` with the given packages (path, bytes)
/// and loose files (path, bytes).
fn container(dir: &Path, name: &str, packages: &[(&str, &[u8])], loose: &[(&str, &[u8])]) {
    std::fs::create_dir_all(dir).unwrap();
    let mut b =
        ContainerBuilder::create(dir, name, EngineVersion::UE5_3, ContainerOptions::default())
            .unwrap();
    for (path, bytes) in packages {
        let package = path
            .trim_end_matches(".uasset")
            .replace("Game/Content", "/Game");
        b.add_package(
            zenpak::hash::package_id(&package),
            bytes,
            StoreEntry::default(),
            path,
        )
        .unwrap();
    }
    for (path, bytes) in loose {
        b.add_loose_file(path, bytes).unwrap();
    }
    b.finish().unwrap();
}

/// `Proj/Content/Paks` with a base pak, a patch pak, three mods, the
/// project's main pak, a container without pak and a global container.
fn game(name: &str) -> (common::TestDir, PathBuf) {
    let root = common::temp_dir(name);
    let paks = root.join("Proj/Content/Paks");
    let mods = paks.join("~mods");
    const X: &str = "Game/Content/X.uasset";
    const Y: &str = "Game/Content/Y.uasset";
    const Z: &str = "Game/Content/Z.uasset";
    const F: &str = "Game/Config/F.ini";
    const G: &str = "Game/Config/G.ini";
    const H: &str = "Game/Config/H.ini";
    container(
        &paks,
        "pakchunk0-Windows",
        &[(X, b"base")],
        &[(F, b"base"), (G, b"base"), (H, b"base")],
    );
    container(
        &paks,
        "pakchunk0-Windows_P",
        &[(X, b"patch")],
        &[(F, b"patch"), (G, b"patch")],
    );
    container(
        &mods,
        "ModA_P",
        &[(X, b"A"), (Y, b"A"), (Z, b"A")],
        &[(F, b"A")],
    );
    container(
        &mods,
        "ModB_P",
        &[(X, b"B"), (Y, b"B"), (Z, b"B")],
        &[(F, b"B")],
    );
    container(&mods, "Mod_2_P", &[(Y, b"two")], &[]);
    container(&paks, "Proj-Extra", &[], &[(H, b"main")]);
    container(
        &paks,
        "Orphan",
        &[("Game/Content/O.uasset", b"orphan")],
        &[],
    );
    std::fs::remove_file(paks.join("Orphan.pak")).unwrap();
    // global.utoc: a ScriptObjects chunk, no pak.
    let mut b = ContainerBuilder::create(
        &paks,
        "global",
        EngineVersion::UE5_3,
        ContainerOptions::default(),
    )
    .unwrap();
    b.add_bulk_chunk(
        0,
        ChunkType::ScriptObjects,
        0,
        b"script objects",
        "Engine/ScriptObjects.bin",
    )
    .unwrap();
    b.finish().unwrap();
    std::fs::remove_file(paks.join("global.pak")).unwrap();
    (root, paks)
}

fn read(view: &GameView, path: &str) -> Vec<u8> {
    let file = view
        .find_file(path)
        .unwrap_or_else(|| panic!("{path} not found"));
    let mut out = Vec::new();
    view.read_file_to(&file, &mut out).unwrap();
    out
}

#[test]
fn the_view_mounts_and_resolves_as_the_engine_does() {
    let (root, paks) = game("resolve");
    let view = GameView::open(&paks, &KeyRing::default()).unwrap();
    let order: Vec<(String, u32)> = view
        .sources()
        .iter()
        .map(|s| (s.name().to_string(), s.order))
        .collect();
    assert_eq!(
        order,
        [
            ("global.utoc".to_string(), 0),
            ("ModB_P.pak".into(), 103),
            ("ModA_P.pak".into(), 103),
            ("Mod_2_P.pak".into(), 303),
            ("Proj-Extra.pak".into(), 4),
            ("pakchunk0-Windows_P.pak".into(), 103),
            ("pakchunk0-Windows.pak".into(), 3),
        ]
    );
    // Chunks: highest order, then the container mounted last.
    assert_eq!(read(&view, "Game/Content/X.uzenasset"), b"patch");
    assert_eq!(read(&view, "Game/Content/Y.uzenasset"), b"two");
    assert_eq!(read(&view, "Game/Content/Z.uzenasset"), b"A");
    // The stored .uasset path finds the same package.
    assert_eq!(read(&view, "Game/Content/X.uasset"), b"patch");
    // Pak files: highest order, then the pak mounted first.
    assert_eq!(read(&view, "Game/Config/F.ini"), b"B");
    assert_eq!(read(&view, "Game/Config/G.ini"), b"patch");
    assert_eq!(read(&view, "Game/Config/H.ini"), b"main");
    // A container without its pak is not mounted (the engine finds paks).
    assert!(view.find_file("Game/Content/O.uzenasset").is_none());
    assert!(view
        .diagnostics
        .iter()
        .any(|d| d.code == "container-without-pak"));
    assert_eq!(
        view.script_objects().unwrap().as_deref(),
        Some(&b"script objects"[..])
    );
    let packages = view.packages();
    assert_eq!(packages.len(), 3);
    assert!(packages
        .iter()
        .any(|p| p.path.as_deref() == Some("Game/Content/Y.uasset")));
    assert!(view.shadowed().len() >= 8);
    assert!(view.verify().is_ok(), "{:?}", view.verify().errors);
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn filter_get_and_unpack_on_a_folder() {
    let (root, paks) = game("cli");
    let p = paks.to_str().unwrap();
    let listing: serde_json::Value =
        run(None, &["list", p, "--filter", "Game/Config/**", "--json"])
            .ok()
            .doc();
    let paths: Vec<&str> = listing["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        paths,
        [
            "Game/Config/F.ini",
            "Game/Config/G.ini",
            "Game/Config/H.ini"
        ]
    );
    assert_eq!(
        run(None, &["list", p, "--filter", "*.uzenasset", "--json"])
            .ok()
            .doc()["files"]
            .as_array()
            .unwrap()
            .len(),
        3
    );

    let target = root.join("got/F.ini");
    std::fs::create_dir_all(target.parent().unwrap()).unwrap();
    run(
        None,
        &[
            "get",
            p,
            "game/config/f.ini",
            "-o",
            target.to_str().unwrap(),
        ],
    )
    .ok();
    assert_eq!(std::fs::read(&target).unwrap(), b"B");
    // A path the view does not hold: the work failed (1); the arguments were fine.
    let missing = run(
        None,
        &[
            "get",
            p,
            "Game/Nope.ini",
            "-o",
            target.to_str().unwrap(),
            "--message-format",
            "json",
        ],
    );
    let error = missing.assert_code(1).error();
    assert_eq!(error["code"], "format", "{error}");
    assert!(error["hint"].is_string(), "{error}");

    let out_dir = root.join("unpacked");
    run(
        None,
        &[
            "unpack",
            p,
            out_dir.to_str().unwrap(),
            "--filter",
            "Game/Content/*",
        ],
    )
    .ok();
    assert_eq!(
        std::fs::read(out_dir.join("Game/Content/X.uzenasset")).unwrap(),
        b"patch"
    );
    assert!(!out_dir.join("Game/Config").exists());
    // A single .pak opens with its .utoc; a single .utoc with its .pak.
    let listed: Vec<String> = run(
        None,
        &[
            "list",
            paks.join("~mods/ModA_P.pak").to_str().unwrap(),
            "--json",
        ],
    )
    .ok()
    .doc()["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap().to_string())
        .collect();
    assert!(
        listed.iter().any(|p| p == "Game/Config/F.ini")
            && listed.iter().any(|p| p.ends_with("/Z.uzenasset")),
        "{listed:?}"
    );
    let summary: serde_json::Value = run(None, &["inspect", p, "--json"]).ok().doc();
    assert_eq!(summary["sources"][3]["order"], 303);
    let _ = std::fs::remove_dir_all(&root);
}
