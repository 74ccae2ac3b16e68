//! Damaged files give errors, never panics or huge allocations: every byte
//! of a small `.utoc` and `.pak` flipped, and every truncation.

use crate::common;

use zenpak::compression::Compression;
use zenpak::iostore::container_header::StoreEntry;
use zenpak::iostore::{Container, ContainerBuilder, ContainerOptions};
use zenpak::pak::PakReader;
use zenpak::EngineVersion;

fn build(
    dir: &std::path::Path,
    engine: EngineVersion,
    compression: Compression,
) -> zenpak::iostore::WrittenContainer {
    let options = ContainerOptions {
        compression,
        block_size: 4096,
        ..Default::default()
    };
    let mut b = ContainerBuilder::create(dir, "Hostile_P", engine, options).unwrap();
    let data: Vec<u8> = (0..10_000u32).map(|i| (i % 13) as u8).collect();
    b.add_package(
        1,
        &data,
        StoreEntry {
            imported_packages: vec![5],
            ..Default::default()
        },
        "G/Content/A.uasset",
    )
    .unwrap();
    b.add_package(2, &[], StoreEntry::default(), "G/Content/B.uasset")
        .unwrap();
    b.add_loose_file("G/Config/X.ini", &data[..3000]).unwrap();
    b.finish().unwrap()
}

#[test]
fn every_flipped_byte_and_truncation_of_the_utoc_is_handled() {
    for engine in [EngineVersion::UE4_26, EngineVersion::UE5_6] {
        let dir = common::temp_dir(&format!("utoc-{engine}"));
        let written = build(&dir, engine, Compression::Zlib);
        let original = std::fs::read(&written.utoc).unwrap();
        for i in 0..original.len() {
            for mask in [0x01u8, 0xff] {
                let mut bytes = original.clone();
                bytes[i] ^= mask;
                std::fs::write(&written.utoc, &bytes).unwrap();
                if let Ok(c) = Container::open(&written.utoc, None) {
                    let _ = c.verify();
                    let _ = c.summary();
                }
            }
        }
        for cut in 0..original.len() {
            std::fs::write(&written.utoc, &original[..cut]).unwrap();
            assert!(
                Container::open(&written.utoc, None).is_err(),
                "{engine}: truncated to {cut} accepted"
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn every_flipped_byte_and_truncation_of_the_pak_is_handled() {
    let dir = common::temp_dir("pak");
    let written = build(&dir, EngineVersion::UE5_3, Compression::Zlib);
    let original = std::fs::read(&written.pak).unwrap();
    for i in 0..original.len() {
        for mask in [0x01u8, 0xff] {
            let mut bytes = original.clone();
            bytes[i] ^= mask;
            std::fs::write(&written.pak, &bytes).unwrap();
            if let Ok(p) = PakReader::open(&written.pak, None) {
                for e in &p.entries {
                    let _ = p.read(e);
                }
            }
        }
    }
    for cut in 0..original.len() {
        std::fs::write(&written.pak, &original[..cut]).unwrap();
        assert!(
            PakReader::open(&written.pak, None).is_err(),
            "pak truncated to {cut} accepted"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn every_flipped_byte_of_the_ucas_is_caught_by_verify() {
    let dir = common::temp_dir("ucas");
    // Uncompressed, so every data byte matters (a flipped padding bit at the
    // end of a deflate stream changes nothing, for the engine either).
    let written = build(&dir, EngineVersion::UE5_4, Compression::None);
    let original = std::fs::read(&written.ucas).unwrap();
    let blocks = Container::open(&written.utoc, None)
        .unwrap()
        .toc
        .blocks
        .clone();
    for i in 0..original.len() {
        // Bytes of the AES padding are not part of any block's data.
        let in_data = blocks
            .iter()
            .any(|b| (b.offset..b.offset + b.compressed_size as u64).contains(&(i as u64)));
        let mut bytes = original.clone();
        bytes[i] ^= 0x10;
        std::fs::write(&written.ucas, &bytes).unwrap();
        let report = Container::open(&written.utoc, None).unwrap().verify();
        assert_eq!(
            !report.errors.is_empty(),
            in_data,
            "byte {i}: {:?}",
            report.errors
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
