//! `.usmap` files whose header claims more than the file holds: an
//! uncompressed body declared larger than the rest of the file is read
//! with a warning (shipped mappings do this), and a small zstd file cannot
//! make zenpak allocate gigabytes. Peak memory is measured on the binary.

use crate::common;

use std::path::Path;

use zenpak::mappings::{BodyCompression, Mappings};

/// Offset of the compression byte: after magic, version and (version ≥ 1)
/// the versioning flag and block.
fn compression_at(bytes: &[u8]) -> usize {
    let version = bytes[2];
    let mut at = 3;
    if version >= 1 {
        let flag = i32::from_le_bytes(bytes[3..7].try_into().unwrap());
        at = 7;
        if flag == 1 {
            let n = i32::from_le_bytes(bytes[15..19].try_into().unwrap()) as usize;
            at = 19 + 20 * n + 4;
        }
    }
    at
}

/// `zenpak inspect FILE` with JSON messages, and its peak RSS in bytes
/// ([`common::run_measured`]).
fn inspect_measured(file: &Path) -> (common::Run, u64) {
    common::run_measured(&[
        "inspect",
        file.to_str().unwrap(),
        "--message-format",
        "json",
    ])
}

#[test]
fn a_declared_size_larger_than_the_file_is_read_with_a_warning() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let original = corpus.join("uassetapi/TestManyAssets/Clay/Clay.usmap");
    let bytes = std::fs::read(&original).unwrap();
    let at = compression_at(&bytes);
    assert_eq!(bytes[at], 0, "Clay.usmap is uncompressed");
    let mut grown = bytes.clone();
    let declared = (bytes.len() as u32) * 3;
    grown[at + 1..at + 5].copy_from_slice(&declared.to_le_bytes());
    grown[at + 5..at + 9].copy_from_slice(&declared.to_le_bytes());
    let want = Mappings::read(&bytes).unwrap();
    let got = Mappings::read(&grown).unwrap();
    assert_eq!(got.structs, want.structs);
    assert_eq!(got.enums, want.enums);
    assert_eq!(got.diagnostics.len(), 1);
    assert_eq!(got.diagnostics[0].code, "usmap-size-mismatch");
    let dir = common::temp_dir("grown");
    let file = dir.join("Grown.usmap");
    std::fs::write(&file, &grown).unwrap();
    let (out, _) = inspect_measured(&file);
    out.ok();
    assert_eq!(
        out.codes("warning"),
        ["usmap-size-mismatch"],
        "{}",
        out.stdout
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_small_usmap_cannot_claim_gigabytes() {
    // 1 GiB of zeros compresses to about 33 KB of zstd: once accepted, it
    // took 2 GB to read.
    let zeros = vec![0u8; 256 << 20];
    let mut encoder = zstd::stream::Encoder::new(Vec::new(), 19).unwrap();
    for _ in 0..4 {
        std::io::Write::write_all(&mut encoder, &zeros).unwrap();
    }
    let body = encoder.finish().unwrap();
    drop(zeros);
    let mut file = vec![0xC4, 0x30, 0];
    file.push(BodyCompression::Zstd as u8);
    file.extend_from_slice(&(body.len() as u32).to_le_bytes());
    file.extend_from_slice(&(1u32 << 30).to_le_bytes());
    file.extend_from_slice(&body);
    assert!(file.len() < 100_000, "{} bytes", file.len());
    let dir = common::temp_dir("bomb");
    let path = dir.join("Bomb.usmap");
    std::fs::write(&path, &file).unwrap();
    let e = Mappings::read(&file).unwrap_err();
    assert_eq!(e.code(), "limit", "{e}");
    let (out, peak) = inspect_measured(&path);
    let error = out.assert_code(1).error();
    assert_eq!(error["code"], "limit", "{error}");
    assert_eq!(common::file_tail(&error, 1), "Bomb.usmap", "{error}");
    if peak > 0 {
        eprintln!(
            "zstd .usmap bomb ({} bytes): exit 1, peak RSS {} KiB",
            file.len(),
            peak / 1024
        );
        assert!(peak < 64 << 20, "peaked at {} MiB", peak >> 20);
    }
    // Hostile counts in an uncompressed body: a name count of 2^31 in a
    // tiny file is refused before anything is allocated.
    let mut counts = vec![0xC4, 0x30, 0, 0];
    counts.extend_from_slice(&16u32.to_le_bytes());
    counts.extend_from_slice(&16u32.to_le_bytes());
    counts.extend_from_slice(&0x8000_0000u32.to_le_bytes());
    counts.extend_from_slice(&[0; 12]);
    let e = Mappings::read(&counts).unwrap_err();
    assert_eq!(e.code(), "format", "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}
