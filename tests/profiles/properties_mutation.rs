//! Mutated property data and mutated mappings: the walker gives clean errors, never panics.

use crate::common::{self, run};

use std::collections::BTreeMap;

use zenpak::legacy::PackageFiles;
use zenpak::mappings::{BodyCompression, Mappings, PropertyType};
use zenpak::properties::{walk_package, ExportWalk, WalkOutcome};

/// The error codes a damaged input may give: bad bytes, a size over a
/// limit, a layout that cannot be known.
const CLEAN_CODES: [&str; 3] = ["format", "limit", "unsupported"];

/// Checks one walk of a damaged input against the walk of the intact one:
/// one outcome per export, in order; a walked block inside the package's
/// bytes; a failure with a clean error code. Counts the outcomes by kind
/// (`walked`, `unchanged` — the same as the intact walk — or the code).
fn check_walk(
    walk: &[ExportWalk],
    intact: &[ExportWalk],
    package_len: u64,
    counts: &mut BTreeMap<&'static str, usize>,
) {
    assert_eq!(walk.len(), intact.len(), "one outcome per export");
    for (export, before) in walk.iter().zip(intact) {
        assert_eq!(export.index, before.index);
        match &export.outcome {
            WalkOutcome::Walked {
                block_start,
                block_end,
                ..
            } => {
                assert!(
                    block_start <= block_end && *block_end <= package_len,
                    "export {}: block {block_start}..{block_end} of {package_len} bytes",
                    export.index
                );
                let same = matches!(&before.outcome, WalkOutcome::Walked { block_start: s, block_end: e, .. } if s == block_start && e == block_end);
                *counts
                    .entry(if same { "unchanged" } else { "walked" })
                    .or_default() += 1;
            }
            WalkOutcome::Failed { code, error } => {
                assert!(
                    CLEAN_CODES.contains(code),
                    "export {}: {code}: {error}",
                    export.index
                );
                *counts.entry(code).or_default() += 1;
            }
        }
    }
}

fn next(seed: &mut u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}

#[test]
fn mutated_property_data_gives_clean_errors() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let cases = [
        (
            "uassetapi/TestUE5_6/BpThirdPerson/BP_ThirdPersonCharacter.uasset",
            "uassetapi/TestUE5_6/BpThirdPerson/ExplicitEnumValuesExample.usmap",
        ),
        (
            "uassetapi/TestUE5_6/BpThirdPerson/SM_Cube.uasset",
            "uassetapi/TestUE5_6/BpThirdPerson/ExplicitEnumValuesExample.usmap",
        ),
        (
            "uassetapi/TestUE5_6/BpThirdPerson/M_Mannequin.uasset",
            "uassetapi/TestUE5_6/BpThirdPerson/ExplicitEnumValuesExample.usmap",
        ),
    ];
    let mut seed = 0xD1B54A32D192ED03u64;
    let mut counts = BTreeMap::new();
    let mut checked = 0;
    for (package, usmap) in cases {
        let path = corpus.join(package);
        if !path.exists() {
            continue;
        }
        let mappings = Mappings::load(corpus.join(usmap)).unwrap();
        let files = PackageFiles::load(&path).unwrap();
        let engine = common::engine_of(&corpus, &path).unwrap();
        let package = files.read_package(Some(engine)).unwrap();
        let intact = walk_package(&files, &package, Some(&mappings), true);
        let package_len = (files.header.len() + files.uexp.len()) as u64;
        checked += 1;
        // Mutate bytes of the first part of the export data (property blocks).
        let span = files.uexp.len().min(4096);
        for _ in 0..300 {
            let mut m = files.clone();
            let at = (next(&mut seed) as usize) % span;
            m.uexp[at] ^= (next(&mut seed) >> 40) as u8 | 1;
            if next(&mut seed).is_multiple_of(4) {
                // A length-like field set to a huge or negative value.
                let at = at & !3;
                if at + 4 <= m.uexp.len() {
                    m.uexp[at..at + 4]
                        .copy_from_slice(&(next(&mut seed) as i32 | 0x4000_0000).to_le_bytes());
                }
            }
            let walk = walk_package(&m, &package, Some(&mappings), true);
            check_walk(&walk, &intact, package_len, &mut counts);
        }
    }
    assert_eq!(
        checked,
        cases.len(),
        "a case's package is missing from the corpus"
    );
    eprintln!("mutated property data: {counts:?}");
    // The damage is seen: some exports fail (with a clean code) or walk
    // to another end, and the exports it does not reach are unchanged.
    let failed: usize = CLEAN_CODES.iter().filter_map(|c| counts.get(c)).sum();
    assert!(failed > 0, "no mutation was detected: {counts:?}");
    assert!(
        counts.get("unchanged").is_some_and(|&n| n > 0),
        "{counts:?}"
    );
}

#[test]
fn mutated_mappings_give_clean_errors_when_walking() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let dir = corpus.join("uassetapi/TestUE5_6/BpThirdPerson");
    let plain = Mappings::load(dir.join("ExplicitEnumValuesExample.usmap"))
        .unwrap()
        .write(BodyCompression::None)
        .unwrap();
    let files = PackageFiles::load(dir.join("SKM_Quinn_Simple.uasset")).unwrap();
    let package = files
        .read_package(Some(zenpak::EngineVersion::UE5_6))
        .unwrap();
    let intact = walk_package(
        &files,
        &package,
        Some(&Mappings::read(&plain).unwrap()),
        true,
    );
    let package_len = (files.header.len() + files.uexp.len()) as u64;
    let mut seed = 0x2545F4914F6CDD1Du64;
    let (mut walked, mut refused) = (0, BTreeMap::<&str, usize>::new());
    let mut counts = BTreeMap::new();
    for _ in 0..60 {
        let mut m = plain.clone();
        // Flip bytes in the struct section (the last part of the body).
        let at = m.len() / 2 + (next(&mut seed) as usize) % (m.len() / 2);
        m[at] ^= (next(&mut seed) >> 32) as u8 | 1;
        match Mappings::read(&m) {
            Ok(mappings) => {
                walked += 1;
                let walk = walk_package(&files, &package, Some(&mappings), true);
                check_walk(&walk, &intact, package_len, &mut counts);
            }
            Err(e) => {
                assert!(CLEAN_CODES.contains(&e.code()), "{e}");
                *refused.entry(e.code()).or_default() += 1;
            }
        }
    }
    eprintln!("mutated mappings: {walked} read and walked ({counts:?}), refused: {refused:?}");
    assert_eq!(walked + refused.values().sum::<usize>(), 60);
    assert!(walked > 0, "no mutated mappings could be read: {refused:?}");
}

/// Damaged mappings through `inspect --mappings --properties` on a blueprint
/// (whose own class schema is read from the package, at an offset the
/// mappings decide): the command fails or reports, never panics.
#[test]
fn damaged_mappings_through_the_binary_never_panic() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let package = corpus.join(
        "uassetapi/TestUE5_7/NanosWorld/Content/NanosWorld/Core/Entities/BP_WorldWeapon.uasset",
    );
    let plain = Mappings::load(corpus.join("uassetapi/TestUE5_7/NanosWorld/NanosWorld.usmap"))
        .unwrap()
        .write(BodyCompression::None)
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let usmap = dir.path().join("damaged.usmap");
    let run = |bytes: &[u8]| {
        std::fs::write(&usmap, bytes).unwrap();
        run(
            None,
            &[
                "inspect",
                package.to_str().unwrap(),
                "--engine",
                "5.7",
                "--mappings",
                usmap.to_str().unwrap(),
                "--properties",
            ],
        )
    };
    // Cut short: the mappings cannot be read, exit 1.
    run(&plain[..plain.len() * 2 / 3]).assert_code(1);
    // Bytes flipped where the structs are: read or refused, never a panic.
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    for _ in 0..12 {
        let mut m = plain.clone();
        let at = m.len() / 2 + (next(&mut seed) as usize) % (m.len() / 2);
        m[at] ^= (next(&mut seed) >> 32) as u8 | 1;
        let flipped = run(&m);
        assert!(matches!(flipped.code, 0 | 1), "{}", flipped.text());
    }
}

/// One kind of damage done to the schemas named `targets`.
type Damage = fn(&mut Mappings, &str);

/// Damage that no byte flip is likely to produce: super chains that loop,
/// references to structs and enums the mappings lack, a struct without the
/// slots the data names, a struct that contains itself. Through
/// `inspect --mappings --properties` on a mesh and on a blueprint (whose
/// own class schema is read from the package at an offset the damaged
/// mappings decide): each damaged export is reported as not walked, with
/// an error code; the command exits 0; nothing panics.
#[test]
fn structurally_damaged_mappings_through_the_binary() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let folder = corpus.join("uassetapi/TestUE5_6/BpThirdPerson");
    let stock = Mappings::load(folder.join("ExplicitEnumValuesExample.usmap")).unwrap();
    let dir = common::temp_dir("damaged-schemas");
    let cases: [(&str, Damage); 7] = [
        ("super is itself", |m, t| {
            schema(m, t).super_name = Some(t.to_string())
        }),
        ("super chain loops through a second struct", |m, t| {
            let other = if t == "Object" { "Field" } else { "Object" };
            schema(m, t).super_name = Some(other.to_string());
            schema(m, other).super_name = Some(t.to_string());
        }),
        ("super struct missing", |m, t| {
            schema(m, t).super_name = Some(named(m, "NoSuchStruct"))
        }),
        ("properties name a missing struct", |m, t| {
            let missing = named(m, "NoSuchStruct");
            for p in &mut schema(m, t).properties {
                p.ty = PropertyType::Struct(missing.clone());
            }
        }),
        ("properties name a missing enum", |m, t| {
            let missing = named(m, "ENoSuchEnum");
            for p in &mut schema(m, t).properties {
                p.ty = PropertyType::Enum {
                    underlying: Box::new(PropertyType::Byte),
                    enum_name: missing.clone(),
                };
            }
        }),
        ("no slots", |m, t| {
            let s = schema(m, t);
            s.property_count = 0;
            s.properties.clear();
        }),
        ("every property is the struct itself", |m, t| {
            for p in &mut schema(m, t).properties {
                p.ty = PropertyType::Array(Box::new(PropertyType::Struct(t.to_string())));
            }
        }),
    ];
    let packages = [
        ("SKM_Quinn_Simple", &["SkeletalMesh"][..]),
        (
            "BP_ThirdPersonCharacter",
            &["BlueprintGeneratedClass", "Character"][..],
        ),
    ];
    for (package, targets) in packages {
        let path = folder.join(format!("{package}.uasset"));
        for (what, damage) in cases {
            let mut m = stock.clone();
            for target in targets {
                damage(&mut m, target);
            }
            let usmap = dir.join("damaged.usmap");
            std::fs::write(&usmap, m.write(BodyCompression::None).unwrap()).unwrap();
            let args = [
                "inspect",
                path.to_str().unwrap(),
                "--engine",
                "5.6",
                "--mappings",
                usmap.to_str().unwrap(),
                "--properties",
            ];
            run(None, &args).assert_code_for(0, format_args!("{package}, {what}"));
            let report = run(None, &[&args[..], &["--json"]].concat())
                .assert_code_for(0, format_args!("{package}, {what}"))
                .doc();
            let exports = report["exports"].as_array().unwrap();
            let failed: Vec<&str> = exports
                .iter()
                .filter_map(|e| e["failed"]["code"].as_str())
                .collect();
            assert!(
                !failed.is_empty(),
                "{package}, {what}: every export walked with damaged mappings"
            );
            for code in failed {
                assert!(
                    ["invalid", "unsupported", "format"].contains(&code),
                    "{package}, {what}: {code}"
                );
            }
            if what.starts_with("super") {
                // A broken super chain names the mappings file.
                assert!(
                    exports.iter().any(|e| e["failed"]["error"]
                        .as_str()
                        .is_some_and(|t| t.contains("damaged.usmap"))),
                    "{package}, {what}: {exports:?}"
                );
            }
        }
    }
}

/// How a property holds a struct type (directly, in an array, …).
type Holder = fn(PropertyType) -> PropertyType;

/// A struct that contains itself, with data that really nests (each level
/// an unversioned header naming slot 0): the walk stops at the nesting
/// limit with an error, whether the struct is held directly, in an array
/// or in an optional — no stack overflow.
#[test]
fn a_struct_that_contains_itself_stops_at_the_nesting_limit() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let folder = corpus.join("uassetapi/TestUE5_6/BpThirdPerson");
    let dir = common::temp_dir("self-containing-struct");
    let source = folder.join("SKM_Quinn_Simple.uasset");
    std::fs::copy(&source, dir.join("SKM_Quinn_Simple.uasset")).unwrap();
    let uexp = std::fs::read(source.with_extension("uexp")).unwrap();
    // (how the struct is held, the bytes of one level: a header with one
    // value at slot 0, then what the holder reads before the struct)
    let holders: [(Holder, &[u8]); 3] = [
        (|t| t, &[0x00, 0x03]),
        (
            |t| PropertyType::Array(Box::new(t)),
            &[0x00, 0x03, 1, 0, 0, 0],
        ),
        (|t| PropertyType::Optional(Box::new(t)), &[0x00, 0x03, 1]),
    ];
    for (hold, level) in holders {
        let mut m = Mappings::load(folder.join("ExplicitEnumValuesExample.usmap")).unwrap();
        let inner = |name: &str| zenpak::mappings::PropertySchema {
            schema_index: 0,
            array_size: 1,
            name: "Inner".to_string(),
            ty: hold(PropertyType::Struct(name.to_string())),
        };
        let mesh = schema(&mut m, "SkeletalMesh");
        mesh.super_name = None;
        mesh.property_count = 1;
        mesh.properties = vec![inner("Loop")];
        m.structs.push(zenpak::mappings::StructSchema {
            name: "Loop".into(),
            super_name: None,
            property_count: 1,
            properties: vec![inner("Loop")],
        });
        for n in ["Loop", "Inner"] {
            named(&mut m, n);
        }
        let usmap = dir.join("Loop.usmap");
        std::fs::write(&usmap, m.write(BodyCompression::None).unwrap()).unwrap();
        // The mesh's data starts the .uexp: 200 levels of nesting.
        let mut data = uexp.clone();
        for (i, b) in data.iter_mut().take(200 * level.len()).enumerate() {
            *b = level[i % level.len()];
        }
        let package = dir.join("SKM_Quinn_Simple.uasset");
        std::fs::write(package.with_extension("uexp"), &data).unwrap();
        let report = run(
            None,
            &[
                "inspect",
                package.to_str().unwrap(),
                "--engine",
                "5.6",
                "--mappings",
                usmap.to_str().unwrap(),
                "--properties",
                "--json",
            ],
        )
        .ok()
        .doc();
        let failed = &report["exports"][0]["failed"];
        assert_eq!(failed["code"], "format", "{failed}");
        assert!(
            failed["error"].as_str().unwrap().contains("Loop.Inner"),
            "{failed}"
        );
    }
}

/// The schema named `name` (which the stock mappings have).
fn schema<'m>(m: &'m mut Mappings, name: &str) -> &'m mut zenpak::mappings::StructSchema {
    m.structs
        .iter_mut()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("the mappings have no `{name}`"))
}

/// `name`, added to the name table (a written file refers to names by index).
fn named(m: &mut Mappings, name: &str) -> String {
    if !m.names.iter().any(|n| n == name) {
        m.names.push(name.to_string());
    }
    name.to_string()
}
