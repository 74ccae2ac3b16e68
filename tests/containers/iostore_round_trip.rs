//! Containers written by the builder read back identically, for every
//! engine (TOC version), every compression, with and without AES; writing
//! twice gives identical bytes; `verify` catches corruption.

use crate::common;
use std::path::Path;

use zenpak::compression::Compression;
use zenpak::iostore::chunk::{ChunkId, ChunkType};
use zenpak::iostore::container_header::StoreEntry;
use zenpak::iostore::{Container, ContainerBuilder, ContainerOptions};
use zenpak::pak::crypto::AesKey;
use zenpak::pak::PakReader;
use zenpak::EngineVersion;

const BLOCK: usize = 64 * 1024;

/// Deterministic, partly compressible test data.
fn data(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..len)
        .map(|i| {
            if (i / 4096) % 2 == 0 {
                (i % 7) as u8
            } else {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            }
        })
        .collect()
}

struct Input {
    package_id: u64,
    path: String,
    bytes: Vec<u8>,
    entry: StoreEntry,
}

fn inputs(engine: EngineVersion) -> Vec<Input> {
    let sizes = [0, 1, 100, BLOCK - 1, BLOCK, BLOCK + 1, 5 * BLOCK + 123];
    sizes
        .iter()
        .enumerate()
        .map(|(i, &len)| {
            let name = format!("/Game/Test/Package{i}");
            let mut entry = StoreEntry {
                imported_packages: vec![zenpak::hash::package_id("/Game/Other")],
                ..Default::default()
            };
            if engine < EngineVersion::UE5_3 {
                entry.export_count = i as i32 + 1;
                entry.export_bundle_count = 1;
            }
            if !engine.is_ue5() {
                entry.export_bundles_size = len as u64;
                entry.load_order = i as u32;
            }
            Input {
                package_id: zenpak::hash::package_id(&name),
                path: format!("MyGame/Content/Test/Package{i}.uasset"),
                bytes: data(len, i as u64 + 1),
                entry,
            }
        })
        .collect()
}

fn key() -> AesKey {
    AesKey::parse("00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff").unwrap()
}

fn build(
    dir: &Path,
    engine: EngineVersion,
    compression: Compression,
    aes: bool,
) -> zenpak::iostore::WrittenContainer {
    let options = ContainerOptions {
        compression,
        aes_key: aes.then(key),
        ..Default::default()
    };
    let mut b = ContainerBuilder::create(dir, "TestMod_P", engine, options).unwrap();
    for input in inputs(engine) {
        b.add_package(
            input.package_id,
            &input.bytes,
            input.entry.clone(),
            &input.path,
        )
        .unwrap();
    }
    let first = inputs(engine)[6].package_id;
    b.add_bulk_chunk(
        first,
        ChunkType::BulkData,
        0,
        &data(3 * BLOCK, 99),
        "MyGame/Content/Test/Package6.ubulk",
    )
    .unwrap();
    b.add_loose_file(
        "MyGame/Config/DefaultGame.ini",
        b"[/Script/EngineSettings.GeneralProjectSettings]\nProjectName=Test\n",
    )
    .unwrap();
    b.add_loose_file(
        "MyGame/Content/Localization/Game/en/Game.locres",
        &data(200_000, 7),
    )
    .unwrap();
    b.finish().unwrap()
}

#[test]
fn every_engine_every_compression_with_and_without_aes() {
    for engine in EngineVersion::ALL {
        for compression in [
            Compression::None,
            Compression::Zlib,
            Compression::Zstd,
            Compression::Lz4,
        ] {
            for aes in [false, true] {
                let label = format!("{engine} {compression:?} aes={aes}");
                let dir = common::temp_dir(&format!("rt-{engine}-{compression:?}-{aes}"));
                let written = build(&dir, engine, compression, aes);
                let container = Container::open(&written.utoc, aes.then(key))
                    .unwrap_or_else(|e| panic!("{label}: {e}"));
                assert_eq!(
                    container.toc.header.version,
                    engine.toc_version(),
                    "{label}"
                );
                let flags = container.toc.header.container_flags;
                assert_ne!(flags & 8, 0, "{label}: Indexed");
                assert_eq!(flags & 4, 0, "{label}: never Signed");
                assert_eq!(flags & 2 != 0, aes, "{label}: Encrypted only with AES");
                assert_eq!(
                    flags & 1 != 0,
                    compression != Compression::None,
                    "{label}: Compressed only when blocks are"
                );
                for input in inputs(engine) {
                    let id = ChunkId::package_data(input.package_id, engine);
                    let index = container
                        .find(&id)
                        .unwrap_or_else(|| panic!("{label}: chunk of {}", input.path));
                    assert_eq!(
                        container.read_chunk(index).unwrap(),
                        input.bytes,
                        "{label}: {}",
                        input.path
                    );
                    assert_eq!(
                        container.paths.get(index),
                        Some(input.path.as_str()),
                        "{label}"
                    );
                }
                let bulk =
                    ChunkId::new(inputs(engine)[6].package_id, 0, ChunkType::BulkData, engine);
                let index = container.find(&bulk).unwrap();
                assert_eq!(container.read_chunk(index).unwrap(), data(3 * BLOCK, 99));
                let header = container
                    .container_header()
                    .unwrap()
                    .expect("container header");
                assert_eq!(header.version, engine.container_header_version());
                assert_eq!(header.container_id, written.container_id);
                assert_eq!(
                    header.container_id,
                    zenpak::hash::hash_lower_utf16("testmod_p")
                );
                let mut expected: Vec<(u64, StoreEntry)> = inputs(engine)
                    .into_iter()
                    .map(|i| (i.package_id, i.entry))
                    .collect();
                // The engine's container header lists packages by id.
                expected.sort_by_key(|(id, _)| *id);
                assert_eq!(header.packages, expected, "{label}");
                // The container header chunk is never compressed.
                let ue5 = engine.is_ue5();
                let h = (0..container.toc.chunk_ids.len())
                    .find(|&i| {
                        container.toc.chunk_ids[i].chunk_type(ue5) == ChunkType::ContainerHeader
                    })
                    .unwrap();
                let blocks = container.toc.chunk_blocks(h).unwrap();
                assert!(
                    container.toc.blocks[blocks]
                        .iter()
                        .all(|b| b.method_index == 0),
                    "{label}"
                );
                let report = container.verify();
                assert!(report.errors.is_empty(), "{label}: {:?}", report.errors);
                assert!(report.warnings.is_empty(), "{label}: {:?}", report.warnings);
                assert_eq!(report.pak_entries, 2);
                let pak = PakReader::open(&written.pak, aes.then(key)).unwrap();
                assert_eq!(pak.version, engine.pak_version());
                assert_eq!(pak.mount_point, "../../../");
                let locres = pak
                    .entries
                    .iter()
                    .find(|e| e.path.ends_with("Game.locres"))
                    .unwrap();
                assert_eq!(pak.read(locres).unwrap(), data(200_000, 7));
                let _ = std::fs::remove_dir_all(&dir);
            }
        }
    }
}

#[test]
fn writing_twice_gives_identical_bytes() {
    for (engine, compression, aes) in [
        (EngineVersion::UE5_6, Compression::Zstd, true),
        (EngineVersion::UE4_27, Compression::Zlib, false),
    ] {
        let a = common::temp_dir(&format!("det-a-{engine}"));
        let b = common::temp_dir(&format!("det-b-{engine}"));
        let wa = build(&a, engine, compression, aes);
        let wb = build(&b, engine, compression, aes);
        for (x, y) in [
            (&wa.utoc, &wb.utoc),
            (&wa.ucas, &wb.ucas),
            (&wa.pak, &wb.pak),
        ] {
            assert_eq!(
                std::fs::read(x).unwrap(),
                std::fs::read(y).unwrap(),
                "{}",
                x.display()
            );
        }
        let _ = std::fs::remove_dir_all(&a);
        let _ = std::fs::remove_dir_all(&b);
    }
}

#[test]
fn empty_container_still_has_header_and_pak() {
    let dir = common::temp_dir("empty");
    let written = ContainerBuilder::create(
        &dir,
        "Empty_P",
        EngineVersion::UE5_4,
        ContainerOptions::default(),
    )
    .unwrap()
    .finish()
    .unwrap();
    assert!(written.pak.is_file());
    let container = Container::open(&written.utoc, None).unwrap();
    let report = container.verify();
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert_eq!(report.pak_entries, 0);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn verify_detects_flipped_byte_truncation_and_missing_pak() {
    let dir = common::temp_dir("corrupt");
    let written = build(&dir, EngineVersion::UE5_5, Compression::None, false);
    assert!(Container::open(&written.utoc, None)
        .unwrap()
        .verify()
        .errors
        .is_empty());

    // A flipped byte in the .ucas: hash mismatch.
    let ucas = std::fs::read(&written.ucas).unwrap();
    let mut flipped = ucas.clone();
    flipped[BLOCK + 5] ^= 0x40;
    std::fs::write(&written.ucas, &flipped).unwrap();
    let report = Container::open(&written.utoc, None).unwrap().verify();
    assert!(
        report.errors.iter().any(|e| e.code == "hash-mismatch"),
        "{:?}",
        report.errors
    );
    std::fs::write(&written.ucas, &ucas).unwrap();

    // A truncated .utoc: a clear error, no panic, at every length.
    let utoc = std::fs::read(&written.utoc).unwrap();
    for cut in [0, 10, 100, 144, 200, utoc.len() / 2, utoc.len() - 1] {
        std::fs::write(&written.utoc, &utoc[..cut]).unwrap();
        let e = Container::open(&written.utoc, None)
            .err()
            .unwrap_or_else(|| panic!("truncated to {cut} bytes was accepted"));
        assert!(e.to_string().contains("TestMod_P.utoc"), "{e}");
    }
    std::fs::write(&written.utoc, &utoc).unwrap();

    // A missing .pak.
    std::fs::remove_file(&written.pak).unwrap();
    let report = Container::open(&written.utoc, None).unwrap().verify();
    assert!(
        report
            .errors
            .iter()
            .any(|e| e.file.as_deref().is_some_and(|f| f.ends_with(".pak"))),
        "{:?}",
        report.errors
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn renamed_container_warns() {
    let dir = common::temp_dir("renamed");
    let written = build(&dir, EngineVersion::UE5_1, Compression::None, false);
    for ext in ["utoc", "ucas", "pak"] {
        std::fs::rename(
            dir.join(format!("TestMod_P.{ext}")),
            dir.join(format!("Other_P.{ext}")),
        )
        .unwrap();
    }
    let _ = written;
    let report = Container::open(&dir.join("Other_P.utoc"), None)
        .unwrap()
        .verify();
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert!(
        report
            .warnings
            .iter()
            .any(|w| w.code == "renamed-container"),
        "{:?}",
        report.warnings
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_paths_are_refused_and_nothing_is_left_behind() {
    let dir = common::temp_dir("badpath");
    let mut b = ContainerBuilder::create(
        &dir,
        "Bad_P",
        EngineVersion::UE5_6,
        ContainerOptions::default(),
    )
    .unwrap();
    for p in [
        "../evil.uasset",
        "/abs.uasset",
        "a\\b.uasset",
        "a//b.uasset",
        "",
    ] {
        assert!(
            b.add_package(1, b"x", StoreEntry::default(), p).is_err(),
            "{p}"
        );
        assert!(b.add_loose_file(p, b"x").is_err(), "{p}");
    }
    drop(b);
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        0,
        "temporary files were left"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
