//! Schemas that live in content, through the binary: a blueprint whose
//! parent is another blueprint (`uassetapi/TestJson/MotorTown`:
//! `Atlas_6x4_Semi_C` derives from `MTVehicleBaseBP_C`, and holds components
//! of the light blueprints' classes) is read with its parent's schema found
//! beside it or in `--schemas DIR`; without the parent it stays bytes with
//! the reason; packages whose classes name each other as parents end.

use crate::common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use common::Run;

const MOTOR_TOWN: &str = "uassetapi/TestJson/MotorTown";
const ATLAS: &str = "Atlas_6x4_Semi";
const BASE: &str = "MTVehicleBaseBP";
/// The packages whose classes Atlas_6x4_Semi's components are.
const LIGHTS: [&str; 4] = [
    "BlinkerLight_01",
    "ReverseLight_01",
    "TaliLight_01",
    "FrontDomeLight_2m",
];

/// `zenpak ARGS --message-format json` in `cwd`, killed (and the test
/// failed) when it has not ended after a minute: a loop would hang here.
fn run_bounded(cwd: &Path, args: &[&str]) -> Run {
    let mut args = args.to_vec();
    args.extend(["--message-format", "json"]);
    let mut child = common::command(Some(cwd), &args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(60) {
            child.kill().unwrap();
            panic!("zenpak {args:?} did not end within a minute");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Run::from(child.wait_with_output().unwrap())
}

/// `to-json PACKAGE -o OUT --mappings USMAP EXTRA` (with `--engine 5.5`,
/// MotorTown's, unless `extra` names one).
fn to_json(dir: &Path, package: &Path, out: &Path, usmap: &Path, extra: &[&str]) -> Run {
    let mut args = vec![
        "to-json",
        package.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--mappings",
        usmap.to_str().unwrap(),
    ];
    if !extra.contains(&"--engine") {
        args.extend(["--engine", "5.5"]);
    }
    args.extend(extra);
    run_bounded(dir, &args)
}

fn from_json(dir: &Path, json: &Path, out: &Path, usmap: &Path, extra: &[&str]) -> Run {
    let mut args = vec![
        "from-json",
        json.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--mappings",
        usmap.to_str().unwrap(),
    ];
    args.extend(extra);
    run_bounded(dir, &args)
}

/// A to-json run that succeeded, decoded all of its `exports` and missed
/// no schema.
fn assert_all_decoded(run: &Run, exports: u64) {
    run.ok();
    assert_eq!(counts(run), (exports, exports));
    assert!(run.coded("warning", "schema-not-found").is_empty());
}

/// (exports, decoded) of a to-json run's report.
fn counts(run: &Run) -> (u64, u64) {
    let report = run.line_of("to-json");
    (
        report["exports"].as_u64().unwrap(),
        report["decoded"].as_u64().unwrap(),
    )
}

fn document(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// Copies `name`'s `.uasset` and `.uexp` from `from` into `to`.
fn copy_package(from: &Path, to: &Path, name: &str) -> PathBuf {
    for ext in ["uasset", "uexp"] {
        std::fs::copy(
            from.join(format!("{name}.{ext}")),
            to.join(format!("{name}.{ext}")),
        )
        .unwrap();
    }
    to.join(format!("{name}.uasset"))
}

fn same_files(a: &Path, b: &Path) -> bool {
    ["uasset", "uexp"].iter().all(|ext| {
        std::fs::read(a.with_extension(ext)).ok() == std::fs::read(b.with_extension(ext)).ok()
    })
}

#[test]
fn a_blueprint_parent_is_read_beside_the_package_or_from_schemas() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let game = corpus.join(MOTOR_TOWN);
    let usmap = game.join("MotorTown.usmap");
    let atlas = game.join(format!("{ATLAS}.uasset"));
    let dir = common::temp_dir("content-schemas");

    // Read by hand from the package once: the class default object (export
    // 0, the first 847 bytes of the .uexp) holds `BodyMaterialNames` as an
    // array of two FNames, name-map entries 22 and 23 (`Body_01`,
    // `Body_02`), at .uexp byte 55; `FuelTankCapacityInLiter` (a float,
    // 400.0) at byte 798; `BrakeTorqueMultiplier` (1.5) at byte 701. These
    // are properties of the native `MTVehicle`, which the CDO reaches
    // through `MTVehicleBaseBP_C`: their unversioned slots come after the
    // two blueprints' own, so they are found only with the parent's schema.
    let uexp = std::fs::read(atlas.with_extension("uexp")).unwrap();
    let names: Vec<u8> = [2i32, 22, 0, 23, 0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    assert_eq!(uexp[55..75], names[..]);
    assert_eq!(uexp[798..802], 400.0f32.to_le_bytes());
    assert_eq!(uexp[701..705], 1.5f32.to_le_bytes());

    // Beside the package (the corpus folder holds the parent and the
    // components' classes): every export decodes.
    let beside_json = dir.join("beside.json");
    let run = to_json(&dir, &atlas, &beside_json, &usmap, &[]);
    assert_all_decoded(&run, 78);
    let doc = document(&beside_json);
    let cdo = &doc["exports"][0];
    assert_eq!(
        cdo["class"],
        format!("/Game/Cars/Models/Atlas/{ATLAS}.{ATLAS}_C")
    );
    let props = &cdo["data"]["properties"];
    assert_eq!(props["BodyMaterialNames"], json!(["Body_01", "Body_02"]));
    assert_eq!(props["FuelTankCapacityInLiter"], json!(400.0));
    assert_eq!(props["BrakeTorqueMultiplier"], json!(1.5));
    // A component of a light blueprint's class (defined in BlinkerLight_01).
    let blinker = doc["exports"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["class"] == "/Game/Cars/Parts/Light/BlinkerLight_01.BlinkerLight_01_C")
        .expect("a BlinkerLight_01_C component");
    assert!(blinker.get("data").is_some(), "{blinker}");

    // The package alone: the exports that need a schema from another
    // package stay bytes, with the reason, and each missing schema is named.
    let alone = dir.join("alone");
    std::fs::create_dir(&alone).unwrap();
    let lone = copy_package(&game, &alone, ATLAS);
    let alone_json = dir.join("alone.json");
    let run = to_json(&dir, &lone, &alone_json, &usmap, &[]);
    run.ok();
    assert_eq!(counts(&run), (78, 69));
    let missing = run.coded("warning", "schema-not-found");
    assert_eq!(missing.len(), 5, "{missing:#?}");
    assert!(missing.iter().all(|d| d["file"] == lone.to_str().unwrap()));
    let cdo = &document(&alone_json)["exports"][0];
    assert!(cdo.get("data").is_none());
    assert!(cdo["reason"].is_string() && cdo["opaque"].is_string());

    // --schemas DIR: the same document as beside it.
    let given_json = dir.join("given.json");
    let run = to_json(
        &dir,
        &lone,
        &given_json,
        &usmap,
        &["--schemas", game.to_str().unwrap()],
    );
    assert_all_decoded(&run, 78);
    assert_eq!(
        std::fs::read(&given_json).unwrap(),
        std::fs::read(&beside_json).unwrap()
    );

    // from-json types the data with the same schemas: not found where the
    // package is written, an error naming the export and nothing written;
    // with --schemas, the package's bytes.
    let out = dir.join("out");
    std::fs::create_dir(&out).unwrap();
    let written = out.join(format!("{ATLAS}.uasset"));
    let run = from_json(&dir, &beside_json, &written, &usmap, &[]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(run.error()["structure"][0]
        .as_str()
        .unwrap()
        .starts_with("exports[0]"));
    assert!(!written.exists());
    let run = from_json(
        &dir,
        &beside_json,
        &written,
        &usmap,
        &["--schemas", game.to_str().unwrap()],
    );
    run.ok();
    assert!(same_files(&written, &atlas));
    // Written beside its parent, the package finds it there.
    std::fs::remove_file(&written).unwrap();
    std::fs::remove_file(written.with_extension("uexp")).unwrap();
    copy_package(&game, &out, BASE);
    for light in LIGHTS {
        copy_package(&game, &out, light);
    }
    from_json(&dir, &beside_json, &written, &usmap, &[]).ok();
    assert!(same_files(&written, &atlas));
}

/// Makes the class of `package` (a copy, rewritten in place) derive from
/// the class at `parent`: from-json adds its import, then the class
/// record's SuperStruct (the first of the `record` words, found once in the
/// `.uexp`) is pointed at it.
fn repoint_super(
    work: &Path,
    package: &Path,
    usmap: &Path,
    engine: &str,
    parent: &str,
    record: &[i32],
) {
    let json = work.join("repoint.json");
    to_json(work, package, &json, usmap, &["--engine", engine]).ok();
    let text = std::fs::read_to_string(&json).unwrap();
    let step = work.join("repoint-step.json");
    std::fs::write(
        &step,
        append_import(&text, parent, "/Script/Engine.BlueprintGeneratedClass"),
    )
    .unwrap();
    from_json(work, &step, package, usmap, &[]).ok();
    to_json(work, package, &json, usmap, &["--engine", engine]).ok();
    let doc = document(&json);
    let index = doc["imports"]
        .as_array()
        .unwrap()
        .iter()
        .position(|i| i["path"] == parent)
        .expect("the added import") as i32;
    let mut uexp = std::fs::read(package.with_extension("uexp")).unwrap();
    let record: Vec<u8> = record.iter().flat_map(|v| v.to_le_bytes()).collect();
    let at: Vec<usize> = (0..uexp.len())
        .filter(|&i| uexp[i..].starts_with(&record))
        .collect();
    assert_eq!(at.len(), 1, "the class record is found once");
    uexp[at[0]..at[0] + 4].copy_from_slice(&(-(index + 1)).to_le_bytes());
    std::fs::write(package.with_extension("uexp"), &uexp).unwrap();
}

/// Appends an import entry to a document's text.
fn append_import(text: &str, path: &str, class: &str) -> String {
    let end = "\n  ],\n  \"exports\": [";
    let at = text.find(end).expect("the imports end");
    format!(
        "{},\n    {{\"path\": \"{path}\", \"class\": \"{class}\"}}{}",
        &text[..at],
        &text[at..]
    )
}

#[test]
fn packages_whose_classes_name_each_other_as_parents_end() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let game = corpus.join(MOTOR_TOWN);
    let usmap = game.join("MotorTown.usmap");
    let dir = common::temp_dir("content-schema-cycle");
    let work = dir.join("work");
    let cycle = dir.join("cycle");
    std::fs::create_dir(&work).unwrap();
    std::fs::create_dir(&cycle).unwrap();
    let atlas = copy_package(&game, &cycle, ATLAS);
    for light in LIGHTS {
        copy_package(&game, &cycle, light);
    }

    // MTVehicleBaseBP_C's parent is made Atlas_6x4_Semi_C, whose parent is
    // MTVehicleBaseBP_C. Its class record starts with -27 (import 26,
    // /Script/MotorTown.MTVehicle), the `Children` count 3 and its entries.
    let base = copy_package(&game, &cycle, BASE);
    repoint_super(
        &work,
        &base,
        &usmap,
        "5.5",
        &format!("/Game/Cars/Models/Atlas/{ATLAS}.{ATLAS}_C"),
        &[-27, 3, 6, 5, 7],
    );

    // Each package, read beside the other, finds the other's class (no
    // schema is missing), and the exports whose class chain loops stay
    // bytes: the class default objects and nothing else.
    for (package, exports) in [(&atlas, 78), (&base, 27)] {
        let out = dir.join("out.json");
        let run = to_json(&dir, package, &out, &usmap, &[]);
        run.ok();
        assert!(run.coded("warning", "schema-not-found").is_empty());
        let (total, decoded) = counts(&run);
        assert_eq!(total, exports);
        let doc = document(&out);
        let opaque: Vec<&Value> = doc["exports"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e.get("data").is_none())
            .collect();
        assert_eq!(decoded, total - opaque.len() as u64);
        assert!(!opaque.is_empty(), "{}", package.display());
        for e in opaque {
            assert!(
                e["path"].as_str().unwrap().contains(".Default__"),
                "{}",
                e["path"]
            );
            assert!(e["reason"].is_string());
        }
        // What is written is what was read.
        let written = dir.join("written").join(package.file_name().unwrap());
        std::fs::create_dir_all(written.parent().unwrap()).unwrap();
        from_json(
            &dir,
            &out,
            &written,
            &usmap,
            &["--schemas", cycle.to_str().unwrap()],
        )
        .ok();
        assert!(same_files(&written, package));
    }
}

/// A user-defined struct (SN2's `F_AnimSyncSettings`, a property of
/// `BP_SyncedAnimationNotifyState_C`) is read from its package beside the
/// one read; a document that needs a schema is not written without it —
/// not even an empty property block, whose header counts the schema's slots.
#[test]
fn a_user_defined_struct_is_read_from_its_package_and_needed_to_write() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let game = corpus.join("uassetapi/TestManyAssets/SN2");
    let usmap = game.join("SN2.usmap");
    let dir = common::temp_dir("content-struct");
    let sync = game.join("Content/Blueprints/Character/BP_SyncedAnimationNotifyState.uasset");

    // Read by hand: the class default object (export 1, .uexp bytes 292 to
    // 305) is `00 07` (3 values from slot 0, last fragment), two bools
    // `01 01`, then `SyncSettings`: `80 19` (12 values, a zero mask), mask
    // `fb 0f` (all zero but slot 2), the bool `01`; the object GUID flag.
    let uexp = std::fs::read(sync.with_extension("uexp")).unwrap();
    assert_eq!(
        uexp[292..305],
        *b"\x00\x07\x01\x01\x80\x19\xfb\x0f\x01\x00\x00\x00\x00"
    );
    let out = dir.join("sync.json");
    let run = to_json(&dir, &sync, &out, &usmap, &["--engine", "5.6"]);
    run.ok();
    assert_eq!(counts(&run), (4, 4));
    let doc = document(&out);
    let settings = doc["exports"][1]["data"]["properties"]["SyncSettings"]
        .as_object()
        .expect("SyncSettings decoded");
    assert_eq!(settings.len(), 12);
    for (name, value) in settings {
        // The field names are the struct's own (F_AnimSyncSettings' name map).
        if name == "AttachToDriver_29_AC3F44BF45FB3073C4D7A7A95C58B4EC" {
            assert_eq!(value, &json!(true));
        } else {
            assert!(value.is_null(), "{name}: {value}");
        }
    }

    // BP_SN2PlayerController holds a component of a plugin's blueprint
    // class (`/UWEMusicVolumeManager/BPC_MusicManager`, under
    // `Plugins/UWEMusicVolumeManager/Content`) with no property set.
    let controller = game.join("Content/Blueprints/Core/BP_SN2PlayerController.uasset");
    let out = dir.join("controller.json");
    to_json(&dir, &controller, &out, &usmap, &["--engine", "5.6"]).ok();
    let written = dir.join("out").join("BP_SN2PlayerController.uasset");
    std::fs::create_dir(written.parent().unwrap()).unwrap();
    let core = controller.parent().unwrap().to_str().unwrap();
    let run = from_json(&dir, &out, &written, &usmap, &["--schemas", core]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(run.error()["structure"][0]
        .as_str()
        .unwrap()
        .starts_with("exports["));
    assert!(!written.exists());
    from_json(
        &dir,
        &out,
        &written,
        &usmap,
        &["--schemas", game.to_str().unwrap()],
    )
    .ok();
    assert!(same_files(&written, &controller));
}

/// `to-json --game-dir GAME PKG.uasset`: a mod's package whose parent
/// blueprint and components' classes are the game's (in a pak of the game,
/// `MotorTown/Content/Cars/...`) is read with their schemas.
#[test]
fn the_game_gives_the_schemas_a_mod_package_needs() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let game = corpus.join(MOTOR_TOWN);
    let usmap = game.join("MotorTown.usmap");
    let dir = common::temp_dir("content-schema-game");
    let alone = dir.join("mod");
    std::fs::create_dir(&alone).unwrap();
    let lone = copy_package(&game, &alone, ATLAS);
    let paks = dir.join("Install/MotorTown/Content/Paks");
    std::fs::create_dir_all(&paks).unwrap();
    let mut writer = zenpak::pak::PakWriter::create_with(
        &paks.join("pakchunk0-Windows.pak"),
        Default::default(),
    )
    .unwrap();
    for (name, folder) in [
        (BASE, "Cars"),
        ("BlinkerLight_01", "Cars/Parts/Light"),
        ("ReverseLight_01", "Cars/Parts/Light"),
        ("TaliLight_01", "Cars/Parts/Light"),
        ("FrontDomeLight_2m", "Cars/Parts/InteriorLight"),
    ] {
        for ext in ["uasset", "uexp"] {
            writer
                .add_file(
                    &format!("MotorTown/Content/{folder}/{name}.{ext}"),
                    &std::fs::read(game.join(format!("{name}.{ext}"))).unwrap(),
                )
                .unwrap();
        }
    }
    writer.finish().unwrap();
    let install = dir.join("Install");
    let out = dir.join("game.json");
    let run = to_json(
        &dir,
        &lone,
        &out,
        &usmap,
        &["--game-dir", install.to_str().unwrap()],
    );
    assert_all_decoded(&run, 78);
    let doc = document(&out);
    assert_eq!(
        doc["exports"][0]["data"]["properties"]["FuelTankCapacityInLiter"],
        json!(400.0)
    );
}

/// A parent's parent: `BP_SN2WorldGameMode_CreativeMode_C` derives from
/// `BP_SN2WorldGameMode_C`, made here to derive from
/// `BP_SyncedAnimationNotifyState_C` (another folder, a package the
/// creative mode's own imports never name). Its schema is looked for
/// through the parent's package: found beside, no schema is missing; taken
/// away, exactly that one is.
#[test]
fn a_parents_parent_is_read_through_the_parents_package() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let source = corpus.join("uassetapi/TestManyAssets/SN2");
    let dir = common::temp_dir("content-schema-chain");
    let game = dir.join("SN2");
    for entry in walkdir::WalkDir::new(&source) {
        let entry = entry.unwrap();
        let to = game.join(entry.path().strip_prefix(&source).unwrap());
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&to).unwrap();
        } else {
            std::fs::copy(entry.path(), &to).unwrap();
        }
    }
    let usmap = game.join("SN2.usmap");
    let core = game.join("Content/Blueprints/Core");
    let synced = game.join("Content/Blueprints/Character/BP_SyncedAnimationNotifyState");
    // BP_SN2WorldGameMode_C's record starts with -58 (import 57,
    // /Script/Subnautica2.SN2WorldGameMode) and one child, export 3.
    repoint_super(
        &dir,
        &core.join("BP_SN2WorldGameMode.uasset"),
        &usmap,
        "5.6",
        "/Game/Blueprints/Character/BP_SyncedAnimationNotifyState.BP_SyncedAnimationNotifyState_C",
        &[-58, 1, 3],
    );
    let creative = core.join("BP_SN2WorldGameMode_CreativeMode.uasset");
    let out = dir.join("creative.json");
    let run = to_json(&dir, &creative, &out, &usmap, &["--engine", "5.6"]);
    run.ok();
    assert!(run.coded("warning", "schema-not-found").is_empty());
    for ext in ["uasset", "uexp"] {
        std::fs::remove_file(synced.with_extension(ext)).unwrap();
    }
    let run = to_json(&dir, &creative, &out, &usmap, &["--engine", "5.6"]);
    run.ok();
    assert_eq!(run.coded("warning", "schema-not-found").len(), 1);
}
