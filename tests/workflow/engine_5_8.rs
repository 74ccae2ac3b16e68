//! UE 5.8 through the real binary (issue 30).
//!
//! Facts pinned here (also in `src/version.rs` and
//! `src/iostore/container_header.rs`):
//! * 5.8 adds no TOC, container header or UE5 object version over 5.7
//!   (trumank/retoc PR #75, checked there against the 5.7 and 5.8 release
//!   branches and a retail 5.8.1 title);
//! * its store entries' `ShaderMapHashes` elements are 8 bytes, not a
//!   20-byte `FSHAHash`, under the same header version (trumank/retoc issue
//!   #72, a retail 5.8 game);
//! * its companion pak is version 12 (`Utf8PakDirectory`).
//!
//! No engine-written 5.8 file is in the corpus: the mod is built from the
//! corpus's real 5.7 cooks (`uassetapi/TestUE5_7`; 5.8 adds no object
//! version, so a 5.7 cook is what a 5.8 cook of the same asset is as far as
//! the package layout goes), and the 5.8 container headers are written by
//! zenpak's writer from the facts above.

use crate::common::{self, run, temp_dir};
use serde_json::Value;
use std::path::Path;
use zenpak::iostore::container_header::StoreEntry;
use zenpak::iostore::{ContainerBuilder, ContainerOptions};
use zenpak::EngineVersion;

#[test]
fn a_5_8_mod_builds_and_reads_back() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let dir = temp_dir("engine-5-8-build");
    run(
        Some(dir.as_ref()),
        &[
            "new",
            "M58",
            "--engine",
            "5.8",
            "--project",
            "NanosWorld",
            "--quiet",
        ],
    )
    .ok();
    let repo = dir.as_ref().join("M58");
    let sky = "NanosWorld/Core/World/Sky";
    let from = corpus
        .join("uassetapi/TestUE5_7/NanosWorld/Content")
        .join(sky);
    let to = repo.join("Cooked/NanosWorld/Content").join(sky);
    std::fs::create_dir_all(&to).unwrap();
    for name in ["Curve_SkyLight_Intensity", "Curve_Sun_Temperature"] {
        for ext in ["uasset", "uexp"] {
            let file = format!("{name}.{ext}");
            std::fs::copy(from.join(&file), to.join(&file)).unwrap();
        }
    }
    run(Some(&repo), &["build", "--quiet"]).ok();
    let utoc = repo.join("target/M58_P.utoc");
    let u = utoc.to_str().unwrap();

    let summary = run(None, &["inspect", u, "--json"]).ok().doc();
    assert_eq!(summary["toc_version"], "ReplaceIoChunkHashWithIoHash");
    assert_eq!(
        summary["container_header"]["version"],
        "SoftPackageReferencesOffset"
    );
    assert_eq!(summary["container_header"]["packages"], 2);
    let pak = repo.join("target/M58_P.pak");
    assert_eq!(
        run(None, &["inspect", pak.to_str().unwrap(), "--json"])
            .ok()
            .doc()["version"],
        "12"
    );

    let listing = run(None, &["list", u, "--json"]).ok().doc();
    let packages: Vec<&str> = listing["files"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == "ExportBundleData")
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        packages,
        [
            "NanosWorld/Content/NanosWorld/Core/World/Sky/Curve_SkyLight_Intensity.uzenasset",
            "NanosWorld/Content/NanosWorld/Core/World/Sky/Curve_Sun_Temperature.uzenasset"
        ]
    );
    run(None, &["verify", u]).ok();
}

const HASH64: u64 = 0x0123_4567_89ab_cdef;

/// A 5.8 shader map hash as zenpak keeps it: the 8 stored bytes, then zeros.
fn hash64() -> [u8; 20] {
    let mut h = [0; 20];
    h[..8].copy_from_slice(&HASH64.to_le_bytes());
    h
}

/// `dir/<stem>.{utoc,ucas,pak}` for `engine`: package `/Game/S/A` (the
/// lower id) with one shader map hash, then `/Game/S/B` with two imports,
/// so that entry 0's hash is followed by 16 bytes of entry 1's imports: an
/// 8-byte hash read as 20 bytes would still fit the buffer, and only the
/// buffer's size tells the layouts apart.
fn container_with_hash(dir: &Path, stem: &str, engine: EngineVersion, hash: [u8; 20]) {
    std::fs::create_dir_all(dir).unwrap();
    let mut b = ContainerBuilder::create(dir, stem, engine, ContainerOptions::default()).unwrap();
    let with_hash = StoreEntry {
        shader_map_hashes: vec![hash],
        ..StoreEntry::default()
    };
    let with_imports = StoreEntry {
        imported_packages: vec![11, 12],
        ..StoreEntry::default()
    };
    b.add_package(1, b"first package", with_hash, "Game/Content/S/A.uasset")
        .unwrap();
    b.add_package(
        2,
        b"second package",
        with_imports,
        "Game/Content/S/B.uasset",
    )
    .unwrap();
    b.finish().unwrap();
}

/// The store entry buffer's shader map hash size as `inspect` reports it.
fn inspected_hash_size(utoc: &Path) -> Value {
    run(None, &["inspect", utoc.to_str().unwrap(), "--json"])
        .ok()
        .doc()["container_header"]["shader_map_hash_size"]
        .clone()
}

#[test]
fn shader_map_hash_size_follows_the_engine_and_is_read_by_size() {
    let dir = temp_dir("engine-5-8-hashes");
    let d = dir.as_ref();
    container_with_hash(d, "Hash58_P", EngineVersion::UE5_8, hash64());
    container_with_hash(d, "Hash57_P", EngineVersion::UE5_7, [0x5A; 20]);
    // Written from the engine setting: 8 bytes for 5.8, 20 for 5.7.
    let header_len = |stem: &str| {
        let c = zenpak::iostore::Container::open(&d.join(format!("{stem}.utoc")), None).unwrap();
        let h = c.container_header().unwrap().unwrap();
        (h.packages[0].1.shader_map_hashes.clone(), h)
    };
    let (hashes, h58) = header_len("Hash58_P");
    assert_eq!(hashes, vec![hash64()]);
    let (hashes, h57) = header_len("Hash57_P");
    assert_eq!(hashes, vec![[0x5A; 20]]);
    // Same header version, 12 bytes apart: one hash's difference.
    assert_eq!(h58.version, h57.version);
    assert_eq!(
        h57.write().unwrap().len() - h58.write().unwrap().len(),
        20 - 8
    );
    // Read back through the binary: neither is taken for the other.
    assert_eq!(inspected_hash_size(&d.join("Hash58_P.utoc")), 8);
    assert_eq!(inspected_hash_size(&d.join("Hash57_P.utoc")), 20);
    for stem in ["Hash58_P", "Hash57_P"] {
        let utoc = d.join(format!("{stem}.utoc"));
        run(None, &["verify", utoc.to_str().unwrap()]).assert_code_for(0, stem);
    }
    // A 20-byte hash does not fit a 5.8 header: refused, nothing written.
    let mut b = ContainerBuilder::create(
        d,
        "Bad58_P",
        EngineVersion::UE5_8,
        ContainerOptions::default(),
    )
    .unwrap();
    let entry = StoreEntry {
        shader_map_hashes: vec![[0x5A; 20]],
        ..StoreEntry::default()
    };
    b.add_package(1, b"p", entry, "Game/Content/S/A.uasset")
        .unwrap();
    assert!(b.finish().is_err());
    assert!(!d.join("Bad58_P.utoc").exists());
}

/// `doctor --game-dir` JSON report of the game at `root`.
fn doctor(root: &Path) -> Value {
    crate::cli_output::json(root, &["doctor", "--game-dir", root.to_str().unwrap()], 0)
        .line_of("doctor")
}

fn releases(report: &Value) -> Vec<String> {
    report["engine"]["releases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn doctor_and_check_name_5_8_where_the_files_allow_it() {
    let dir = temp_dir("engine-5-8-doctor");
    // A 5.8 game: its header's 8-byte shader map hashes and its v12 pak.
    let game58 = dir.as_ref().join("Game58");
    container_with_hash(
        &game58.join("Game/Content/Paks"),
        "pakchunk0-Windows",
        EngineVersion::UE5_8,
        hash64(),
    );
    let report = doctor(&game58);
    assert_eq!(report["engine"]["release"], "5.8");
    let facts: Vec<(&str, &str)> = report["engine"]["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["fact"].as_str().unwrap(), e["value"].as_str().unwrap()))
        .collect();
    assert!(facts.contains(&("shader-map-hash-size", "8")), "{facts:?}");
    assert!(facts.contains(&("pak-version", "12")), "{facts:?}");

    // A 5.7 game with 20-byte hashes: 5.6–5.7, never 5.8.
    let game57 = dir.as_ref().join("Game57");
    container_with_hash(
        &game57.join("Game/Content/Paks"),
        "pakchunk0-Windows",
        EngineVersion::UE5_7,
        [0x5A; 20],
    );
    assert_eq!(releases(&doctor(&game57)), ["5.6", "5.7"]);

    // `check --game-dir`: a 5.8 mod fits the 5.8 game; a 5.7 one does not.
    for (engine, differs) in [("5.8", false), ("5.7", true)] {
        let repo = dir.as_ref().join(format!("mod-{engine}"));
        run(
            Some(dir.as_ref()),
            &[
                "new",
                repo.to_str().unwrap(),
                "--engine",
                engine,
                "--project",
                "Game",
                "--quiet",
            ],
        )
        .ok();
        let lines = crate::cli_output::json(
            &repo,
            &["check", "--game-dir", game58.to_str().unwrap()],
            i32::from(differs),
        )
        .json();
        let codes: Vec<&str> = lines.iter().filter_map(|l| l["code"].as_str()).collect();
        assert_eq!(
            codes.contains(&"game-engine-differs"),
            differs,
            "{engine}: {codes:?}"
        );
    }
}
