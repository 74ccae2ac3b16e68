//! Paks made by hand: Oodle-compressed entries (the corpus's real Oodle
//! streams), entries that overlap (all names pointing at one compressed
//! entry: a decompression bomb), and hostile counts. Peak memory is
//! measured on the real binary.

use crate::common;

use std::path::Path;

use zenpak::binary::Writer;
use zenpak::pak::entry::{PakBlock, PakEntry};
use zenpak::pak::index::{
    FullDirectoryIndex, IndexLocation, PakFooter, PathHashIndex, PrimaryIndex,
};
use zenpak::version::PakVersion;

const MIB: u64 = 1 << 20;

/// One entry of a hand-made pak: its stored blocks (already compressed)
/// and sizes.
struct HandEntry {
    path: String,
    blocks: Vec<Vec<u8>>,
    uncompressed_size: u64,
    block_size: u32,
}

/// Writes a version 11 pak whose entries use method 1 = `method`; `alias`
/// extra names all point at the first entry's record.
fn write_pak(path: &Path, method: &str, entries: &[HandEntry], alias: usize) {
    write_pak_with(path, method, entries, alias, false)
}

/// [`write_pak`]; with `repeat`, the first entry lists every block at the
/// first block's bytes (kept as an unencoded record, which can say so).
fn write_pak_with(path: &Path, method: &str, entries: &[HandEntry], alias: usize, repeat: bool) {
    let version = PakVersion::V11;
    let mut file = Writer::new();
    let mut encoded = Writer::new();
    let mut fdi = FullDirectoryIndex::default();
    let mut hashes = Vec::new();
    let mut first_location = 0;
    let mut unencoded = Vec::new();
    for (n, e) in entries.iter().enumerate() {
        let offset = file.pos() as u64;
        let record = PakEntry::record_size(version, e.blocks.len(), true);
        let mut at = record;
        let mut blocks = Vec::new();
        let mut stored = Vec::new();
        for b in &e.blocks {
            blocks.push(PakBlock {
                start: at,
                end: at + b.len() as u64,
            });
            at += b.len() as u64;
            stored.extend_from_slice(b);
        }
        if repeat && n == 0 {
            let first = blocks[0];
            blocks.fill(first);
            stored.truncate(e.blocks[0].len());
        }
        let entry = PakEntry {
            offset,
            size: stored.len() as u64,
            uncompressed_size: e.uncompressed_size,
            method: 1,
            timestamp: 0,
            hash: {
                use sha1::Digest;
                sha1::Sha1::digest(&stored).into()
            },
            blocks,
            encrypted: false,
            deleted: false,
            block_size: e.block_size,
        };
        entry.write_full(&mut file, version, true);
        file.bytes(&stored);
        let location = if repeat && n == 0 {
            unencoded.push(entry.clone());
            -(unencoded.len() as i32)
        } else {
            let at = encoded.pos() as i32;
            entry.write_encoded(&mut encoded);
            at
        };
        if n == 0 {
            first_location = location;
        }
        fdi.add_file(&e.path, location);
        hashes.push((zenpak::pak::path_hash(&e.path, 0), location));
    }
    for i in 0..alias {
        let name = format!("Alias/{i}.bin");
        fdi.add_file(&name, first_location);
        hashes.push((zenpak::pak::path_hash(&name, 0), first_location));
    }
    let index_offset = file.pos() as u64;
    let mut phi = Writer::new();
    PathHashIndex(hashes.clone()).write(&mut phi);
    let mut fdi_bytes = Writer::new();
    fdi.write(&mut fdi_bytes, version);
    let sha = |b: &[u8]| -> [u8; 20] {
        use sha1::Digest;
        sha1::Sha1::digest(b).into()
    };
    let mut primary = PrimaryIndex {
        mount_point: "../../../".into(),
        entry_count: hashes.len() as u32,
        path_hash_seed: 0,
        path_hash_index: Some(IndexLocation {
            offset: 0,
            size: phi.pos() as u64,
            hash: sha(phi.as_slice()),
        }),
        full_directory_index: Some(IndexLocation {
            offset: 0,
            size: fdi_bytes.pos() as u64,
            hash: sha(fdi_bytes.as_slice()),
        }),
        encoded_entries: encoded.into_inner(),
        unencoded_entries: unencoded,
    };
    let mut probe = Writer::new();
    primary.write(&mut probe, version);
    let phi_at = index_offset + probe.pos() as u64;
    primary.path_hash_index.as_mut().unwrap().offset = phi_at;
    primary.full_directory_index.as_mut().unwrap().offset = phi_at + phi.pos() as u64;
    let mut index = Writer::new();
    primary.write(&mut index, version);
    file.bytes(index.as_slice());
    file.bytes(phi.as_slice());
    file.bytes(fdi_bytes.as_slice());
    PakFooter {
        version,
        encryption_key_guid: [0; 16],
        encrypted_index: false,
        index_offset,
        index_size: index.pos() as u64,
        index_hash: sha(index.as_slice()),
        frozen_index: false,
        compression_methods: vec![method.into()],
        pakchunk_index: None,
    }
    .write(&mut file);
    std::fs::write(path, file.into_inner()).unwrap();
}

#[test]
fn oodle_entries_decompress_inside_a_pak() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let dir = corpus.join("oodle");
    let mut entries = Vec::new();
    let mut expected = Vec::new();
    for (name, prefix, raw) in [
        ("xml.kraken", 4, None),
        ("xml.mermaid", 4, None),
        ("xml.selkie", 4, None),
        ("xml.leviathan", 8, None),
        ("sample.bundle", 8, Some("sample.raw")),
    ] {
        let stream = std::fs::read(dir.join(name)).unwrap()[prefix..].to_vec();
        let size = match raw {
            Some(r) => std::fs::metadata(dir.join(r)).unwrap().len(),
            None => 5_345_280,
        };
        entries.push(HandEntry {
            path: format!("Oodle/{name}.bin"),
            blocks: vec![stream],
            uncompressed_size: size,
            block_size: size as u32,
        });
        expected.push((format!("Oodle/{name}.bin"), raw));
    }
    let out_dir = common::temp_dir("oodle");
    let pak = out_dir.join("Oodle.pak");
    write_pak(&pak, "Oodle", &entries, 0);
    let out = out_dir.join("out");
    common::run_measured(&["unpack", pak.to_str().unwrap(), out.to_str().unwrap()])
        .0
        .ok();
    let xml = std::fs::read(out.join("Oodle/xml.kraken.bin")).unwrap();
    {
        use sha2::Digest;
        let sha = sha2::Sha256::digest(&xml);
        assert!(sha.starts_with(&[0x0e, 0x82, 0xe5, 0x4e, 0x69, 0x5c, 0x19, 0x38]));
    }
    for (path, raw) in expected {
        let got = std::fs::read(out.join(&path)).unwrap();
        match raw {
            Some(r) => assert_eq!(got, std::fs::read(dir.join(r)).unwrap(), "{path}"),
            None => assert!(got == xml, "{path}"),
        }
    }
    let _ = std::fs::remove_dir_all(&out_dir);
}

fn zeros_entry(path: &str, blocks: usize) -> HandEntry {
    let block = vec![0u8; 64 << 10];
    let packed = zenpak::compression::Compression::Zlib
        .compress(&block)
        .unwrap();
    HandEntry {
        path: path.into(),
        blocks: vec![packed; blocks],
        uncompressed_size: (blocks * block.len()) as u64,
        block_size: block.len() as u32,
    }
}

#[test]
fn overlapping_entries_are_refused_in_bounded_memory() {
    // One 16 MiB entry (about 25 KB stored) and 4000 more names pointing
    // at it: 64 GB claimed by a pak of under 200 KB.
    let dir = common::temp_dir("overlap");
    let pak = dir.join("Bomb.pak");
    write_pak(&pak, "Zlib", &[zeros_entry("Real/zeros.bin", 256)], 4000);
    assert!(std::fs::metadata(&pak).unwrap().len() < 200 << 10);
    let p = pak.to_str().unwrap();
    for cmd in ["verify", "list"] {
        let (measured, peak) = common::run_measured(&[cmd, p]);
        measured.assert_code_for(1, format_args!("{cmd} accepted it"));
        let (json, _) = common::run_measured(&[cmd, p, "--message-format", "json"]);
        let error = json.assert_code(1).error();
        assert_eq!(error["code"], "format", "{error}");
        assert_eq!(common::file_tail(&error, 1), "Bomb.pak", "{error}");
        assert!(peak < 64 * MIB, "{cmd} peaked at {} MiB", peak / MIB);
        eprintln!(
            "overlapping pak entries: {cmd} exit 1, peak RSS {} KiB",
            peak / 1024
        );
    }
    let out = dir.join("out");
    let (measured, peak) = common::run_measured(&["unpack", p, out.to_str().unwrap()]);
    measured.assert_code(1);
    assert!(peak < 64 * MIB, "unpack peaked at {} MiB", peak / MIB);
    assert!(!out.exists());
    eprintln!("overlapping pak entries: refused, peak under 64 MiB");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn blocks_repeating_within_an_entry_are_refused() {
    // One entry whose 4096 blocks (256 MiB claimed) all point at the same
    // 100 stored bytes.
    let dir = common::temp_dir("repeat");
    let pak = dir.join("Bomb.pak");
    write_pak_with(
        &pak,
        "Zlib",
        &[zeros_entry("Real/zeros.bin", 4096)],
        0,
        true,
    );
    let e = zenpak::pak::PakReader::open(&pak, None).unwrap_err();
    assert_eq!(e.code(), "format", "{e}");
    assert_eq!(
        e.context().structure,
        ["pak index", "entry `Real/zeros.bin`"],
        "{e}"
    );
    let (measured, peak) = common::run_measured(&["verify", pak.to_str().unwrap()]);
    measured.assert_code(1);
    assert!(peak < 64 * MIB, "verify peaked at {} MiB", peak / MIB);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn hostile_pak_counts_fail_fast_in_bounded_memory() {
    let dir = common::temp_dir("counts");
    let pak = dir.join("Counts.pak");
    write_pak(
        &pak,
        "Zlib",
        &[zeros_entry("a.bin", 1), zeros_entry("b/c.bin", 2)],
        0,
    );
    let good = std::fs::read(&pak).unwrap();
    let footer_at = good.len() - PakVersion::V11.footer_size();
    let index_offset =
        u64::from_le_bytes(good[footer_at + 25..footer_at + 33].try_into().unwrap()) as usize;
    // Mount point length, entry count, encoded entries size, index size.
    let cases: Vec<(&str, usize, Vec<u8>)> = vec![
        (
            "mount point length",
            index_offset,
            0x7fff_fff0u32.to_le_bytes().to_vec(),
        ),
        (
            "index size",
            footer_at + 33,
            (1u64 << 40).to_le_bytes().to_vec(),
        ),
        (
            "index offset",
            footer_at + 25,
            (1u64 << 40).to_le_bytes().to_vec(),
        ),
    ];
    for (what, at, value) in cases {
        let mut bytes = good.clone();
        bytes[at..at + value.len()].copy_from_slice(&value);
        std::fs::write(&pak, &bytes).unwrap();
        for cmd in ["list", "verify"] {
            let (run, peak) =
                common::run_measured(&[cmd, pak.to_str().unwrap(), "--message-format", "json"]);
            let error = run.assert_code(1).error();
            assert!(
                peak < 64 * MIB,
                "{what}: {cmd} peaked at {} MiB",
                peak / MIB
            );
            assert_eq!(
                common::file_tail(&error, 1),
                "Counts.pak",
                "{what}: {error}"
            );
        }
    }
    // The encoded entry claims 2^31 bytes in one block of 64 KiB.
    let mut bytes = good.clone();
    std::fs::write(&pak, &bytes).unwrap();
    let reader = zenpak::pak::PakReader::open(&pak, None).unwrap();
    assert_eq!(reader.entries.len(), 2);
    bytes.truncate(bytes.len() - 1);
    std::fs::write(&pak, &bytes).unwrap();
    assert!(zenpak::pak::PakReader::open(&pak, None).is_err());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_sparse_4_gib_pak_fails_fast_in_bounded_memory() {
    const SIZE: u64 = 4 << 30;
    let dir = common::temp_dir("sparse-pak");
    let pak = dir.join("Sparse.pak");
    write_pak(&pak, "Zlib", &[zeros_entry("a.bin", 2)], 0);
    let good = std::fs::read(&pak).unwrap();
    let footer_size = PakVersion::V11.footer_size();
    let footer_at = good.len() - footer_size;
    let index_offset = u64::from_le_bytes(good[footer_at + 25..footer_at + 33].try_into().unwrap());
    // The entries and index, zeros up to 4 GiB, and the footer at the end
    // whose index runs to it: about 4 GiB declared, 4 KiB on disk.
    let mut footer = good[footer_at..].to_vec();
    let index_size = SIZE - footer_size as u64 - index_offset;
    footer[33..41].copy_from_slice(&index_size.to_le_bytes());
    let file = std::fs::File::create(&pak).unwrap();
    std::io::Write::write_all(&mut &file, &good[..footer_at]).unwrap();
    file.set_len(SIZE - footer_size as u64).unwrap();
    std::io::Seek::seek(&mut &file, std::io::SeekFrom::End(0)).unwrap();
    std::io::Write::write_all(&mut &file, &footer).unwrap();
    drop(file);
    assert_eq!(std::fs::metadata(&pak).unwrap().len(), SIZE);
    let p = pak.to_str().unwrap();
    let out = dir.join("out");
    let o = out.to_str().unwrap();
    for args in [
        vec!["inspect", p, "--json"],
        vec!["list", p],
        vec!["verify", p],
        vec!["unpack", p, o],
        vec!["get", p, "a.bin", "-o", o],
        vec!["extract", p, "--engine", "5.5", "-o", o],
    ] {
        let args = [&args[..], &["--message-format", "json"]].concat();
        let started = std::time::Instant::now();
        let (run, peak) = common::run_measured(&args);
        let (code, err) = (run.code, &run.stderr);
        let took = started.elapsed();
        eprintln!(
            "4 GiB pak index: {} exit {code}, peak RSS {} MiB, {:.2} s",
            args[0],
            peak / MIB,
            took.as_secs_f64()
        );
        assert_eq!(code, 1, "{} accepted it: {err}", args[0]);
        assert!(peak < 256 * MIB, "{} peaked at {} MiB", args[0], peak / MIB);
        assert!(took < std::time::Duration::from_secs(20), "{took:?}");
        let error = run.error();
        assert_eq!(
            common::file_tail(&error, 1),
            "Sparse.pak",
            "{}: {error}",
            args[0]
        );
    }
    assert!(!out.join("a.bin").exists());
}

/// A pak whose file names hold terminal control characters (an escape
/// sequence, a carriage return): `list` prints them escaped, never raw.
#[test]
fn list_escapes_control_characters_in_names() {
    let dir = common::temp_dir("pak-escape");
    let pak = dir.join("Escape.pak");
    let mut w = zenpak::pak::PakWriter::create(
        &pak,
        zenpak::version::PakVersion::V11,
        "../../../",
        zenpak::compression::Compression::None,
        None,
        [0; 16],
    )
    .unwrap();
    w.add_file("Game/Content/\u{1b}[2J\u{1b}]0;owned\u{7}.txt", b"x")
        .unwrap();
    w.add_file("Game/Content/fake\rsafe.txt", b"y").unwrap();
    w.finish().unwrap();
    let out = common::run(None, &["list", pak.to_str().unwrap()]);
    let text = out.ok().text();
    assert!(
        !text.chars().any(|c| c.is_control() && c != '\n'),
        "raw control characters in: {text:?}"
    );
    assert!(text.contains("\\u{1b}[2J"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}
