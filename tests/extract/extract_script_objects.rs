//! The game's script objects as the engine stores them: the UE5.3
//! ScriptObjects chunk and the UE4.27 initial load meta + global names of
//! the corpus, and extraction against them alone — where every import's
//! class has to be inferred, since those chunks hold no classes.

use crate::common;
use crate::extract_game;

use zenpak::extract::{extract_package, ExtractContext, ExtractOptions, ScriptObjects, ZenInput};
use zenpak::hash::object_path_hash;
use zenpak::legacy::LegacyPackage;
use zenpak::zen::PackageObjectIndex;

use extract_game::Game;

fn script(path: &str) -> PackageObjectIndex {
    PackageObjectIndex::script_import(object_path_hash(path))
}

fn read(corpus: &std::path::Path, rel: &str) -> Vec<u8> {
    std::fs::read(corpus.join(rel)).unwrap()
}

/// For every `/Script/` import of `original`: whether `extracted` gives it
/// the same class. Returns (matched, total, mismatches).
fn script_classes(
    original: &LegacyPackage,
    extracted: &LegacyPackage,
) -> (usize, usize, Vec<String>) {
    let mut matched = 0;
    let mut total = 0;
    let mut mismatches = Vec::new();
    for i in 0..original.imports.len() {
        let path = original.import_path(i).unwrap();
        if !path.starts_with("/Script/") {
            continue;
        }
        total += 1;
        let class = |p: &LegacyPackage| {
            let im = &p.imports[i];
            format!(
                "{}.{}",
                p.name(im.class_package).unwrap(),
                p.name(im.class_name).unwrap()
            )
        };
        let (a, b) = (class(original), class(extracted));
        if a == b && extracted.import_path(i).unwrap() == path {
            matched += 1;
        } else {
            mismatches.push(format!("{path}: {a} vs {b}"));
        }
    }
    (matched, total, mismatches)
}

#[test]
fn ue5_script_objects_chunk_reads() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let table = ScriptObjects::read_ue5(&read(&corpus, "retoc/UE5.3/ScriptObjects.bin")).unwrap();
    assert_eq!(table.len(), 30_977);
    let actor = script("/Script/Engine/Actor");
    assert_eq!(table.path(actor).as_deref(), Some("/Script/Engine.Actor"));
    assert!(
        table.is_class(actor),
        "Default__Actor names Actor as its class"
    );
    let cdo = table.get(script("/Script/Engine/Default__Actor")).unwrap();
    assert_eq!(cdo.cdo_class, Some(actor));
    assert!(table.get(script("/Script/Engine")).unwrap().outer.is_none());
    // A truncated chunk is an error, not a panic.
    let data = read(&corpus, "retoc/UE5.3/ScriptObjects.bin");
    for cut in [0, 4, 100, data.len() / 2, data.len() - 1] {
        assert!(
            ScriptObjects::read_ue5(&data[..cut]).is_err(),
            "cut at {cut}"
        );
    }
}

/// The 5.3 engine maps extracted with the real 5.3 script objects only:
/// every script import resolves, every class is inferred as the cook wrote
/// it, and converting back gives the same Zen package.
#[test]
fn ue5_3_maps_extract_with_the_real_script_objects() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let table = ScriptObjects::read_ue5(&read(&corpus, "retoc/UE5.3/ScriptObjects.bin")).unwrap();
    let folder = extract_game::corpus_folders(&corpus)
        .into_iter()
        .find(|(f, _, _)| f == "uassetapi/TestUE5_3/Engine")
        .expect("the 5.3 folder");
    let game = Game::load(&folder.2, folder.1);
    let cx = ExtractContext {
        script_objects: Some(&table),
        headers: &game.headers,
        options: ExtractOptions {
            allow_unresolved: false,
            verify: true,
        },
    };
    let (mut matched, mut total) = (0, 0);
    let mut mismatches = Vec::new();
    for p in &game.packages {
        let out = extract_package(
            ZenInput {
                engine: game.engine,
                package: &p.converted.package_bytes,
                imported_packages: Some(&p.converted.store_entry.imported_packages),
            },
            &cx,
        )
        .unwrap_or_else(|e| panic!("{}: {e}", p.path.display()));
        assert!(out.report.unresolved.is_empty());
        assert!(
            !out.report.warnings.iter().any(|w| w.code == "round-trip"),
            "{}: {:?}",
            p.path.display(),
            out.report.warnings
        );
        let extracted = LegacyPackage::read(&out.header, Some(game.engine)).unwrap();
        let (m, t, bad) = script_classes(&p.legacy, &extracted);
        matched += m;
        total += t;
        mismatches.extend(bad);
    }
    eprintln!("5.3 script import classes inferred: {matched} of {total}");
    assert!(total > 50, "the maps import many script objects");
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

/// UE4.27: the corpus's initial load meta and global names give the script
/// objects. They are not the chunks of TestModUI's game (which adds its
/// module `/Script/FSD`), so its imports of that module stay unresolved;
/// every other script import resolves with the class the cook wrote.
#[test]
fn ue4_global_chunks_resolve_test_mod_ui() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let table = ScriptObjects::read_ue4(
        &read(&corpus, "retoc/UE4.27/LoaderInitialLoadMeta_1.bin"),
        &read(&corpus, "retoc/UE4.27/LoaderGlobalNames_1.bin"),
        &read(&corpus, "retoc/UE4.27/LoaderGlobalNameHashes_1.bin"),
    )
    .unwrap();
    assert_eq!(table.len(), 23_393);
    let path = corpus.join("retoc/UE4.27/TestModUI.uasset");
    let engine = zenpak::EngineVersion::UE4_27;
    let game = Game::load(std::slice::from_ref(&path), engine);
    let p = &game.packages[0];
    let cx = ExtractContext {
        script_objects: Some(&table),
        headers: &game.headers,
        options: ExtractOptions {
            allow_unresolved: true,
            verify: false,
        },
    };
    let engine_bytes = std::fs::read(path.with_extension("uzenasset")).unwrap();
    let out = extract_package(
        ZenInput {
            engine,
            package: &engine_bytes,
            imported_packages: Some(&p.converted.store_entry.imported_packages),
        },
        &cx,
    )
    .unwrap();
    let extracted = LegacyPackage::read(&out.header, Some(engine)).unwrap();
    let unresolved: Vec<usize> = out.report.unresolved.iter().map(|u| u.import).collect();
    for &i in &unresolved {
        let path = p.legacy.import_path(i).unwrap();
        assert!(
            path.starts_with("/Script/FSD"),
            "import {i} `{path}` should resolve"
        );
    }
    let (matched, total, mismatches) = script_classes(&p.legacy, &extracted);
    let fsd = (0..p.legacy.imports.len())
        .filter(|&i| p.legacy.import_path(i).unwrap().starts_with("/Script/FSD"))
        .count();
    eprintln!(
        "4.27 script imports: {matched} of {total} with the cook's class; {} of the game module unresolved",
        unresolved.len()
    );
    assert_eq!(
        unresolved.len(),
        fsd,
        "exactly the game module's objects are unresolved"
    );
    // Everything but the game module's objects (and what refers to them by path) matches.
    assert_eq!(matched + mismatches.len(), total);
    assert!(
        mismatches.iter().all(|m| m.starts_with("/Script/FSD")),
        "{}",
        mismatches.join("\n")
    );
}

/// Over every engine-cooked folder of the corpus, with a script-object
/// table that holds only what the engine's chunk holds: every script import
/// gets the class the cook wrote. (The tool-written folders Clay and SN2,
/// and retoc's BP_Table_Lamp, name `Object` for what the engine calls a
/// function or structure, so they are not a reference for classes.)
#[test]
fn inferred_classes_match_every_engine_cook() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let (mut matched, mut total) = (0, 0);
    let mut mismatches = Vec::new();
    for (folder, engine, paths) in extract_game::corpus_folders(&corpus) {
        if folder.contains("Clay") || folder.contains("SN2") {
            continue;
        }
        let paths: Vec<_> = paths
            .into_iter()
            .filter(|p| !p.ends_with("BP_Table_Lamp.uasset"))
            .collect();
        let mut game = Game::load(&paths, engine);
        game.script_objects.forget_classes();
        let cx = ExtractContext {
            script_objects: Some(&game.script_objects),
            headers: &game.headers,
            options: ExtractOptions::default(),
        };
        for p in &game.packages {
            let out = extract_package(
                ZenInput {
                    engine,
                    package: &p.converted.package_bytes,
                    imported_packages: Some(&p.converted.store_entry.imported_packages),
                },
                &cx,
            )
            .unwrap();
            let extracted = LegacyPackage::read(&out.header, Some(engine)).unwrap();
            let (m, t, bad) = script_classes(&p.legacy, &extracted);
            matched += m;
            total += t;
            mismatches.extend(
                bad.into_iter()
                    .map(|b| format!("{}: {b}", p.path.display())),
            );
        }
    }
    eprintln!("engine cooks: {matched} of {total} script import classes inferred");
    assert!(total > 1000);
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}
