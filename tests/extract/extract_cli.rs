//! `zenpak extract` as a user runs it: containers zenpak builds from the
//! corpus's packages (with the game beside them: a `global.utoc` holding
//! the script objects, and a container with the packages they import),
//! extracted by the real binary.

use crate::common::{self, run};
use crate::extract_game;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use zenpak::compression::Compression;
use zenpak::extract::container::{extract, ExtractEvent, ExtractRequest, ViewSource};
use zenpak::extract::ExtractOptions;
use zenpak::iostore::chunk::ChunkType;
use zenpak::iostore::directory_index::DirectoryIndex;
use zenpak::iostore::toc::Toc;
use zenpak::iostore::{ContainerBuilder, ContainerOptions};
use zenpak::legacy::PackageFiles;
use zenpak::zen::convert;
use zenpak::EngineVersion;

use extract_game::{fallback_name, Game};

/// Where a package of `name` lives in a container (as a cook lays it out).
fn container_path(name: &str, is_map: bool) -> String {
    let ext = if is_map { "umap" } else { "uasset" };
    match name.strip_prefix("/Game/") {
        Some(rest) => format!("TestGame/Content/{rest}.{ext}"),
        None => {
            let (mount, rest) = name[1..].split_once('/').unwrap();
            match mount {
                "Engine" => format!("Engine/Content/{rest}.{ext}"),
                plugin => format!("TestGame/Plugins/{plugin}/Content/{rest}.{ext}"),
            }
        }
    }
}

fn options() -> ContainerOptions {
    ContainerOptions {
        compression: Compression::Zlib,
        block_size: 65536,
        aes_key: None,
        encryption_key_guid: [0; 16],
        mount_point: "../../../".into(),
        hash_ucas: true,
    }
}

/// Builds `Mod_P` from the game's corpus packages, and the game folder: the
/// script objects in `global.utoc`, the made-up imported packages in `Game_0_P`.
pub(crate) fn build(dir: &Path, game: &Game) -> (PathBuf, PathBuf, PathBuf) {
    let engine = game.engine;
    let mut b = ContainerBuilder::create(dir, "Mod_P", engine, options()).unwrap();
    let mut packages: Vec<_> = game.packages.iter().collect();
    packages.sort_by_key(|p| p.converted.package_name.clone());
    // One package per name (a corpus folder may hold two versions of one).
    packages.dedup_by_key(|p| p.converted.package_id);
    for (i, p) in packages.iter().enumerate() {
        let is_map = p.path.extension().is_some_and(|x| x == "umap");
        let path = container_path(&p.converted.package_name, is_map);
        b.add_package(
            p.converted.package_id,
            &p.converted.package_bytes,
            zenpak::iostore::container_header::StoreEntry {
                load_order: i as u32,
                ..p.converted.store_entry.clone()
            },
            &path,
        )
        .unwrap();
        for (kind, data) in &p.converted.bulk_data {
            let t = ChunkType::of_bulk(*kind);
            let stem = path.rsplit_once('.').unwrap().0;
            b.add_bulk_chunk(
                p.converted.package_id,
                t,
                0,
                data,
                &format!("{stem}.{}", kind.extension()),
            )
            .unwrap();
        }
    }
    b.add_loose_file("TestGame/Config/DefaultMod.ini", b"[Mod]\nEnabled=True\n")
        .unwrap();
    let mod_toc = b.finish().unwrap().utoc;

    let game_dir = dir.join("Paks");
    std::fs::create_dir_all(&game_dir).unwrap();
    let mut g = ContainerBuilder::create(&game_dir, "Game_0_P", engine, options()).unwrap();
    for (i, (name, bytes, imported)) in game.stubs.iter().enumerate() {
        let entry = zenpak::iostore::container_header::StoreEntry {
            export_bundles_size: bytes.len() as u64,
            load_order: i as u32,
            export_count: 0,
            export_bundle_count: 1,
            imported_packages: imported.clone(),
            shader_map_hashes: Vec::new(),
        };
        g.add_package(
            zenpak::hash::package_id(name),
            bytes,
            entry,
            &container_path(name, false),
        )
        .unwrap();
    }
    g.finish().unwrap();
    let script_objects = dir.join("ScriptObjects.bin");
    std::fs::write(&script_objects, game.script_objects.write_ue5()).unwrap();
    if engine.is_ue5() {
        let mut global = ContainerBuilder::create(&game_dir, "global", engine, options()).unwrap();
        global
            .add_bulk_chunk(
                0,
                ChunkType::ScriptObjects,
                0,
                &game.script_objects.write_ue5(),
                "Engine/ScriptObjects.bin",
            )
            .unwrap();
        global.finish().unwrap();
    }
    (mod_toc, game_dir, script_objects)
}

/// Every corpus folder: build, extract with the binary (script objects from
/// the folder's legacy packages, as the tests' stand-in for the game),
/// compare with the cooked files, convert back.
#[test]
fn extracts_every_corpus_container() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    for (folder, engine, paths) in extract_game::corpus_folders(&corpus) {
        let folder_path = corpus.join(&folder);
        let game = Game::load(&paths, engine);
        let dir = common::temp_dir(&folder.replace('/', "_"));
        let (mod_toc, game_dir, script_objects) = build(&dir, &game);
        let out = dir.join("out");
        let mut args = vec![
            "extract",
            mod_toc.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--engine",
            engine.as_str(),
            "--game",
            game_dir.to_str().unwrap(),
        ];
        args.extend(["--script-objects", folder_path.to_str().unwrap()]);
        let _ = &script_objects;
        args.extend(["--message-format", "json"]);
        let extracted = run(None, &args);
        let summary = extracted.ok().line_of("extracted");
        let names: BTreeSet<u64> = game
            .packages
            .iter()
            .map(|p| p.converted.package_id)
            .collect();
        assert_eq!(summary["packages"], names.len(), "{summary}");
        // The container header is skipped (a note), and nothing warns.
        assert_eq!(extracted.codes("note"), ["skipped"], "{}", extracted.stdout);
        assert_eq!(summary["skipped"].as_array().unwrap().len(), 1, "{summary}");
        assert!(
            extracted.codes("warning").is_empty(),
            "{folder}: {}",
            extracted.stdout
        );
        assert_eq!(
            std::fs::read(out.join("TestGame/Config/DefaultMod.ini")).unwrap(),
            b"[Mod]\nEnabled=True\n"
        );
        let mut seen = BTreeSet::new();
        for p in game
            .packages
            .iter()
            .filter(|p| seen.insert(p.converted.package_id))
        {
            let is_map = p.path.extension().is_some_and(|x| x == "umap");
            let header = out.join(container_path(&p.converted.package_name, is_map));
            let files = PackageFiles::load(&header).unwrap();
            assert_eq!(files.uexp, p.files.uexp, "{}: .uexp", p.path.display());
            for companion in &p.files.bulk {
                let written = header.with_extension(companion.kind.extension());
                assert_eq!(
                    std::fs::read(&written).unwrap(),
                    companion.read().unwrap(),
                    "{}",
                    written.display()
                );
            }
            let legacy = files.read_package(Some(engine)).unwrap();
            let back = convert(&files, &legacy, engine, fallback_name(&p.path)).unwrap();
            assert!(
                back.package_bytes == p.converted.package_bytes,
                "{}: converting the extracted package back differs",
                p.path.display()
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// An engine-cooked folder with the script objects only from `global.utoc`
/// (no classes: every import class is inferred) round-trips as well.
#[test]
fn engine_cooks_extract_with_the_global_chunk_alone() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let (_, engine, paths) = extract_game::corpus_folders(&corpus)
        .into_iter()
        .find(|(f, _, _)| f.ends_with("NanosWorld"))
        .unwrap();
    let game = Game::load(&paths, engine);
    let dir = common::temp_dir("global");
    let (mod_toc, game_dir, _) = build(&dir, &game);
    let out = dir.join("out");
    let verified = run(
        None,
        &[
            "extract",
            mod_toc.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--engine",
            engine.as_str(),
            "--game",
            game_dir.to_str().unwrap(),
            "--verify",
            "--message-format",
            "json",
        ],
    );
    verified.ok();
    assert!(verified.codes("warning").is_empty(), "{}", verified.stdout);
    let _ = std::fs::remove_dir_all(&dir);
}

fn clay(corpus: &Path) -> Game {
    let (_, engine, paths) = extract_game::corpus_folders(corpus)
        .into_iter()
        .find(|(f, _, _)| f.ends_with("Clay"))
        .unwrap();
    Game::load(&paths, engine)
}

fn listed(dir: &Path) -> BTreeSet<String> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            e.path()
                .strip_prefix(dir)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/")
        })
        .collect()
}

#[test]
fn filters_and_dependencies_select_packages() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let game = clay(&corpus);
    let dir = common::temp_dir("filter");
    let (mod_toc, game_dir, _) = build(&dir, &game);
    let out = dir.join("widgets");
    let base = [
        "extract",
        mod_toc.to_str().unwrap(),
        "--engine",
        "5.1",
        "--game",
        game_dir.to_str().unwrap(),
        "--filter",
        "/Game/FirstPerson/Blueprints/Widgets/**",
    ];
    run(None, &[&base[..], &["-o", out.to_str().unwrap()]].concat()).ok();
    let files = listed(&out);
    let headers: Vec<&String> = files.iter().filter(|f| f.ends_with(".uasset")).collect();
    assert!(!headers.is_empty());
    assert!(
        headers
            .iter()
            .all(|f| f.starts_with("TestGame/Content/FirstPerson/Blueprints/Widgets/")),
        "{headers:?}"
    );
    // The filter also keeps other files out.
    assert!(!files.contains("TestGame/Config/DefaultMod.ini"));

    let with = dir.join("with-deps");
    run(
        None,
        &[&base[..], &["-o", with.to_str().unwrap(), "--with-deps"]].concat(),
    )
    .ok();
    let more = listed(&with);
    assert!(more.len() > files.len(), "dependencies add packages");
    // Exactly the selection's imports, transitively, among the container's packages.
    let mut wanted: BTreeSet<u64> = game
        .packages
        .iter()
        .filter(|p| {
            p.converted
                .package_name
                .starts_with("/Game/FirstPerson/Blueprints/Widgets/")
        })
        .map(|p| p.converted.package_id)
        .collect();
    loop {
        let before = wanted.len();
        for p in &game.packages {
            if wanted.contains(&p.converted.package_id) {
                wanted.extend(p.converted.store_entry.imported_packages.iter().copied());
            }
        }
        let stubs: BTreeSet<u64> = game
            .stubs
            .iter()
            .map(|s| zenpak::hash::package_id(&s.0))
            .collect();
        for (name, _, imported) in &game.stubs {
            if wanted.contains(&zenpak::hash::package_id(name)) {
                wanted.extend(imported.iter().copied());
            }
        }
        let _ = stubs;
        if wanted.len() == before {
            break;
        }
    }
    let mut expected: BTreeSet<String> = BTreeSet::new();
    for p in &game.packages {
        if wanted.contains(&p.converted.package_id) {
            expected.insert(container_path(&p.converted.package_name, false));
        }
    }
    for (name, _, _) in &game.stubs {
        if wanted.contains(&zenpak::hash::package_id(name)) {
            expected.insert(container_path(name, false));
        }
    }
    let got: BTreeSet<String> = more
        .iter()
        .filter(|f| f.ends_with(".uasset"))
        .cloned()
        .collect();
    assert_eq!(got, expected);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Unresolved imports are one diagnostic per importing package, never one
/// per import: a failure each without `--allow-unresolved`, a warning each with.
#[test]
fn unresolved_imports_are_reported_once_per_package() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let game = clay(&corpus);
    let dir = common::temp_dir("unresolved");
    let (mod_toc, _, _) = build(&dir, &game);
    let out = dir.join("out");
    let args = [
        "--message-format",
        "json",
        "extract",
        mod_toc.to_str().unwrap(),
        "--engine",
        "5.1",
        "-o",
        out.to_str().unwrap(),
    ];
    let failed = run(None, &args);
    let summary = failed.assert_code(1).line_of("extracted");
    let packages = summary["unresolved_packages"].as_u64().unwrap() as usize;
    let imports = summary["unresolved_imports"].as_u64().unwrap() as usize;
    assert!(packages > 0 && imports > packages, "{summary}");
    assert_eq!(summary["failed_packages"], packages, "{summary}");
    // All of them listed in JSON, one note per package.
    let notes = failed.coded("note", "unresolved-import");
    assert_eq!(notes.len(), packages);
    let named: BTreeSet<&str> = notes.iter().map(|n| n["file"].as_str().unwrap()).collect();
    assert_eq!(named.len(), packages, "one per package");
    // One error per failed package, in the import map.
    let errors = failed.diagnostics("error");
    assert_eq!(errors.len(), packages);
    assert!(errors.iter().all(|e| e["structure"]
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s == "import map")));
    assert_eq!(summary["failures"].as_array().unwrap().len(), packages);

    let allowed = run(
        None,
        &[&args[..], &["--allow-unresolved", "--force"]].concat(),
    );
    let summary = allowed.ok().line_of("extracted");
    assert_eq!(summary["packages"], 167, "{summary}");
    assert_eq!(summary["unresolved_packages"], packages, "{summary}");
    assert_eq!(summary["unresolved_imports"], imports, "{summary}");
    let warnings = allowed.coded("warning", "unresolved-import");
    assert_eq!(warnings.len(), packages);
    let all_warnings = allowed.diagnostics("warning").len();

    // Human output: the same warnings, one line each (no line per import).
    let human = [&args[2..], &["--allow-unresolved", "--force", "--verbose"]].concat();
    let human = run(None, &human);
    let err = &human.ok().stderr;
    let lines = err.lines().filter(|l| l.starts_with("warning:")).count();
    assert_eq!(lines, all_warnings, "{err}");
    assert!(lines < imports);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Inside a mod, `extract` takes the engine from mod.toml; `--game-dir`
/// takes any folder of the game, as `install` does.
#[test]
fn extract_inside_a_mod_uses_its_engine_and_the_game_folder() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let game = clay(&corpus);
    let dir = common::temp_dir("inside-mod");
    let (mod_toc, paks, _) = build(&dir, &game);
    let install = dir.join("Install");
    let content = install.join("TestGame/Content");
    std::fs::create_dir_all(&content).unwrap();
    std::fs::rename(&paks, content.join("Paks")).unwrap();
    let repo = dir.join("MyMod");
    std::fs::create_dir_all(&repo).unwrap();
    let out = dir.join("out");
    let args = |game_dir: &Path| {
        vec![
            "--message-format".to_string(),
            "json".into(),
            "extract".into(),
            mod_toc.display().to_string(),
            "--game-dir".into(),
            game_dir.display().to_string(),
            "-o".into(),
            out.display().to_string(),
            "--force".into(),
        ]
    };
    let run_in = |cwd: &Path, game_dir: &Path| {
        let args = args(game_dir);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        run(Some(cwd), &args)
    };
    // No mod.toml and no --engine: a usage error.
    run_in(&repo, &install).assert_code(2);
    std::fs::write(
        repo.join("mod.toml"),
        "[mod]\nname = \"MyMod\"\nversion = \"1\"\n[game]\nengine = \"5.1\"\nproject = \"TestGame\"\n",
    )
    .unwrap();
    for game_dir in [install.clone(), content.clone(), content.join("Paks")] {
        let extracted = run_in(&repo, &game_dir);
        let summary = extracted
            .assert_code_for(0, game_dir.display())
            .line_of("extracted");
        assert_eq!(summary["packages"], 167, "{summary}");
        assert_eq!(summary["unresolved_packages"], 0, "{summary}");
        assert!(summary["script_objects"].as_u64().unwrap() > 0, "{summary}");
        let adjusted = extracted.coded("note", "game-dir-adjusted");
        assert_eq!(
            adjusted.len(),
            usize::from(game_dir != install),
            "{}",
            game_dir.display()
        );
    }
    // A broken mod.toml is said, not passed over.
    std::fs::write(repo.join("mod.toml"), "[game]\nengine = \"9.9\"\n").unwrap();
    run_in(&repo, &install).assert_code(2);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn output_folder_rules() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let game = clay(&corpus);
    let dir = common::temp_dir("output");
    let (mod_toc, game_dir, _) = build(&dir, &game);
    let out = dir.join("out");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("mine.txt"), b"keep me").unwrap();
    let args = [
        "extract",
        mod_toc.to_str().unwrap(),
        "--engine",
        "5.1",
        "--game",
        game_dir.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ];
    // A folder that is not empty needs --force: a usage error naming it.
    let refused = run(None, &[&args[..], &["--message-format", "json"]].concat());
    let error = refused.assert_code(2).error();
    assert_eq!(error["code"], "usage", "{error}");
    assert!(error["hint"].is_string(), "{error}");
    run(None, &[&args[..], &["--force", "--json"]].concat()).ok();
    assert_eq!(std::fs::read(out.join("mine.txt")).unwrap(), b"keep me");
    assert!(
        !listed(&out).iter().any(|f| f.contains("zenpak-tmp")),
        "no temporary files are left"
    );
    let file = dir.join("a-file");
    std::fs::write(&file, b"x").unwrap();
    run(
        None,
        &[
            "extract",
            mod_toc.to_str().unwrap(),
            "--engine",
            "5.1",
            "-o",
            file.to_str().unwrap(),
        ],
    )
    .assert_code(2);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn paths_never_leave_the_output_folder() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let game = clay(&corpus);
    let dir = common::temp_dir("escape");
    let (mod_toc, game_dir, _) = build(&dir, &game);
    // A directory index whose first package claims a path that climbs out.
    let mut toc = Toc::read(&std::fs::read(&mod_toc).unwrap()).unwrap();
    let package = (0..toc.chunk_ids.len())
        .find(|&i| toc.chunk_ids[i].chunk_type(true) == ChunkType::ExportBundleData)
        .unwrap();
    let mut index = DirectoryIndex::new("../../../");
    index
        .add_file("../../escaped.uasset", package as u32)
        .unwrap();
    toc.directory_index = index.write();
    toc.header.directory_index_size = toc.directory_index.len() as u32;
    std::fs::write(&mod_toc, toc.write()).unwrap();
    let out = dir.join("a/b/out");
    let refused = run(
        None,
        &[
            "extract",
            mod_toc.to_str().unwrap(),
            "--engine",
            "5.1",
            "--game",
            game_dir.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--message-format",
            "json",
        ],
    );
    // A path that leaves the output folder: a format error naming the package.
    let error = refused.assert_code(1).error();
    assert_eq!(error["code"], "format", "{error}");
    assert!(
        error["structure"][0]
            .as_str()
            .is_some_and(|s| s.starts_with("package /")),
        "{error}"
    );
    assert!(!dir.join("a/escaped.uasset").exists() && !dir.join("a/b/escaped.uasset").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// The library reports progress: one plan, then one event per package.
#[test]
fn progress_events() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let game = clay(&corpus);
    let dir = common::temp_dir("events");
    let (mod_toc, game_dir, _) = build(&dir, &game);
    let source = ViewSource::open(&[mod_toc], Some(&game_dir), &Default::default()).unwrap();
    let request = ExtractRequest {
        engine: EngineVersion::UE5_1,
        output: dir.join("out"),
        filters: Vec::new(),
        with_dependencies: false,
        force: false,
        options: ExtractOptions::default(),
        output_budget: Default::default(),
    };
    let mut events = Vec::new();
    let summary = extract(&source, &request, None, &mut |e| events.push(e.clone())).unwrap();
    assert!(summary.failures.is_empty(), "{:?}", summary.failures);
    assert!(
        matches!(events[0], ExtractEvent::Planned { packages: 167, .. }),
        "{:?}",
        events[0]
    );
    let done: Vec<usize> = events
        .iter()
        .filter_map(|e| match e {
            ExtractEvent::Package { done, .. } => Some(*done),
            _ => None,
        })
        .collect();
    assert_eq!(done, (1..=167).collect::<Vec<_>>());
    assert_eq!(summary.packages, 167);
    assert!(summary.script_objects > 0);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A game's whole `Paks/` folder as the input: the base game, the mod in
/// `~mods/`, and an encrypted patch pak whose copy of a file wins (its
/// `_1_P` name mounts it above the mod's `_P`). Every container's packages
/// are selected (the filters pick folders only the mod has: the game's are
/// made-up headers), each file as the game would load it.
#[test]
fn extracts_a_whole_paks_folder_in_mount_order() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let game = clay(&corpus);
    let dir = common::temp_dir("paks-folder");
    let (mod_toc, game_dir, _) = build(&dir, &game);
    let mods = game_dir.join("~mods");
    std::fs::create_dir_all(&mods).unwrap();
    for ext in ["utoc", "ucas", "pak"] {
        std::fs::rename(
            mod_toc.with_extension(ext),
            mods.join(format!("Mod_P.{ext}")),
        )
        .unwrap();
    }
    let key_hex = "0x".to_string() + &"5a".repeat(32);
    let key = zenpak::pak::crypto::AesKey::parse(&key_hex).unwrap();
    let mut patch = zenpak::pak::PakWriter::create_with(
        &mods.join("Patch_1_P.pak"),
        zenpak::pak::PakWriterOptions {
            key: Some(key),
            ..Default::default()
        },
    )
    .unwrap();
    patch
        .add_file("TestGame/Config/DefaultMod.ini", b"[Mod]\nEnabled=False\n")
        .unwrap();
    patch.finish().unwrap();

    let (folder, _, _) = extract_game::corpus_folders(&corpus)
        .into_iter()
        .find(|(f, _, _)| f.ends_with("Clay"))
        .unwrap();
    let folder = corpus.join(folder);
    let out = dir.join("out");
    let args = [
        "extract",
        game_dir.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--engine",
        game.engine.as_str(),
        "--filter",
        "/Game/FirstPerson/Blueprints/Widgets/**",
        "--filter",
        "/Engine/EngineSounds/**",
        "--filter",
        "TestGame/Config/**",
        "--script-objects",
        folder.to_str().unwrap(),
    ];
    // Without the key the encrypted patch cannot be read: a clean error.
    run(None, &args).assert_code(1);
    let error = run(None, &[&args[..], &["--message-format", "json"]].concat())
        .assert_code(1)
        .error();
    assert_eq!(error["code"], "key", "{error}");
    assert_eq!(common::file_tail(&error, 1), "Patch_1_P.pak", "{error}");

    let extracted = run(
        None,
        &[
            &args[..],
            &["--aes-key", &key_hex, "--message-format", "json"],
        ]
        .concat(),
    );
    let summary = extracted.ok().line_of("extracted");
    assert!(
        extracted.codes("warning").is_empty(),
        "{}",
        extracted.stdout
    );
    assert_eq!(
        std::fs::read(out.join("TestGame/Config/DefaultMod.ini")).unwrap(),
        b"[Mod]\nEnabled=False\n",
        "the patch pak mounts above the mod, so its copy wins"
    );
    let wanted: Vec<_> = game
        .packages
        .iter()
        .filter(|p| {
            let name = &p.converted.package_name;
            name.starts_with("/Game/FirstPerson/Blueprints/Widgets/")
                || name.starts_with("/Engine/EngineSounds/")
        })
        .collect();
    assert!(!wanted.is_empty());
    let mut seen = BTreeSet::new();
    for p in wanted
        .iter()
        .filter(|p| seen.insert(p.converted.package_id))
    {
        let is_map = p.path.extension().is_some_and(|x| x == "umap");
        let header = out.join(container_path(&p.converted.package_name, is_map));
        let files = PackageFiles::load(&header).unwrap();
        assert_eq!(files.uexp, p.files.uexp, "{}", p.path.display());
    }
    assert_eq!(summary["packages"], seen.len(), "{summary}");
    let _ = std::fs::remove_dir_all(&dir);
}
