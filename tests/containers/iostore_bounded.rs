//! Containers made by hand, to test what a writer would never produce: real
//! Oodle streams (Kraken, Mermaid, Selkie, Leviathan) as compression blocks,
//! a corrupt Oodle block, decompression bombs (chunks sharing blocks, blocks
//! sharing `.ucas` bytes, hostile counts), a flipped `.ucas` byte, a wrong
//! key, and a 2 GiB chunk read in bounded memory. Peak memory is measured
//! on the real binary (`wait4`'s `ru_maxrss`).

use crate::common;

use std::path::{Path, PathBuf};

use zenpak::iostore::chunk::{ChunkId, ChunkType};
use zenpak::iostore::directory_index::DirectoryIndex;
use zenpak::iostore::toc::{
    build_perfect_hash, container_flags, ChunkMeta, CompressionBlock, OffsetAndLength, Toc,
    TocHeader,
};
use zenpak::pak::crypto::{pad_like_engine, AesKey};
use zenpak::pak::PakWriter;
use zenpak::version::TocVersion;
use zenpak::EngineVersion;

const MIB: u64 = 1 << 20;

/// A chunk of a hand-made container: its blocks' `.ucas` offsets are given.
struct HandChunk {
    id: ChunkId,
    path: Option<String>,
    length: u64,
    hash: [u8; 20],
    blocks: Vec<CompressionBlock>,
}

fn blake3_20(data: &[u8]) -> [u8; 20] {
    blake3::hash(data).as_bytes()[..20].try_into().unwrap()
}

/// Writes `name.utoc` (TOC version 8, UE 5.5 layout) and an empty
/// companion pak; the caller writes `name.ucas`.
fn write_toc(
    dir: &Path,
    name: &str,
    block_size: u32,
    methods: &[&str],
    chunks: Vec<HandChunk>,
    flags: u8,
) -> PathBuf {
    let ids: Vec<ChunkId> = chunks.iter().map(|c| c.id).collect();
    let ph = build_perfect_hash(&ids);
    let mut blocks = Vec::new();
    let mut offsets = Vec::new();
    let mut metas = Vec::new();
    let mut index = DirectoryIndex::new("../../../");
    for (slot, &original) in ph.order.iter().enumerate() {
        let c = &chunks[original];
        offsets.push(OffsetAndLength {
            offset: blocks.len() as u64 * block_size as u64,
            length: c.length,
        });
        blocks.extend_from_slice(&c.blocks);
        metas.push(ChunkMeta {
            hash: c.hash,
            flags: 0,
        });
        if let Some(p) = &c.path {
            index.add_file(p, slot as u32).unwrap();
        }
    }
    let directory_index = index.write();
    let toc = Toc {
        header: TocHeader {
            version: TocVersion::ReplaceIoChunkHashWithIoHash,
            entry_count: ids.len() as u32,
            compressed_block_entry_count: blocks.len() as u32,
            compression_method_name_count: methods.len() as u32,
            compression_block_size: block_size,
            directory_index_size: directory_index.len() as u32,
            partition_count: 1,
            container_id: zenpak::hash::hash_lower_utf16(name),
            encryption_key_guid: [0; 16],
            container_flags: container_flags::INDEXED | flags,
            perfect_hash_seeds_count: ph.seeds.len() as u32,
            partition_size: u64::MAX,
            chunks_without_perfect_hash_count: ph.overflow.len() as u32,
        },
        chunk_ids: ph.order.iter().map(|&i| ids[i]).collect(),
        offsets,
        perfect_hash_seeds: ph.seeds,
        chunks_without_perfect_hash: ph.overflow,
        blocks,
        compression_methods: methods.iter().map(|m| m.to_string()).collect(),
        directory_index,
        metas,
    };
    let utoc = dir.join(format!("{name}.utoc"));
    std::fs::write(&utoc, toc.write()).unwrap();
    let pak = PakWriter::create(
        &dir.join(format!("{name}.pak")),
        zenpak::version::PakVersion::V11,
        "../../../",
        zenpak::compression::Compression::None,
        None,
        [0; 16],
    )
    .unwrap();
    pak.finish().unwrap();
    utoc
}

fn bulk_id(n: u64) -> ChunkId {
    ChunkId::new(
        0x1234_0000 + n,
        0,
        ChunkType::BulkData,
        EngineVersion::UE5_5,
    )
}

/// The corpus's Oodle streams: (file, bytes before the stream, expected output).
fn oodle_streams(corpus: &Path) -> Vec<(String, Vec<u8>, Vec<u8>)> {
    let dir = corpus.join("oodle");
    let xml_of = |name: &str, prefix: usize| {
        let raw = std::fs::read(dir.join(name)).unwrap();
        (name.to_string(), raw[prefix..].to_vec())
    };
    let mut out = Vec::new();
    let mut xml = None;
    for (name, prefix) in [
        ("xml.kraken", 4),
        ("xml.mermaid", 4),
        ("xml.selkie", 4),
        ("xml.leviathan", 8),
    ] {
        let (name, stream) = xml_of(name, prefix);
        let expected = xml.get_or_insert_with(|| {
            // Decoded once with the library and checked against the
            // manifest's SHA-256 prefix, then used for the other codecs.
            let out = zenpak::compression::Compression::Oodle
                .decompress(&stream, 5_345_280)
                .unwrap();
            use sha2::Digest;
            let sha = sha2::Sha256::digest(&out);
            assert!(sha.starts_with(&[0x0e, 0x82, 0xe5, 0x4e, 0x69, 0x5c, 0x19, 0x38]));
            out
        });
        out.push((name, stream, expected.clone()));
    }
    let bundle = std::fs::read(dir.join("sample.bundle")).unwrap();
    out.push((
        "sample.bundle".into(),
        bundle[8..].to_vec(),
        std::fs::read(dir.join("sample.raw")).unwrap(),
    ));
    out
}

/// A container whose chunk i is Oodle stream i as one block.
fn oodle_container(dir: &Path, streams: &[(String, Vec<u8>, Vec<u8>)]) -> PathBuf {
    let mut ucas = Vec::new();
    let mut chunks = Vec::new();
    for (i, (name, stream, expected)) in streams.iter().enumerate() {
        let offset = ucas.len() as u64;
        let mut stored = stream.clone();
        pad_like_engine(&mut stored);
        ucas.extend_from_slice(&stored);
        chunks.push(HandChunk {
            id: bulk_id(i as u64),
            path: Some(format!("Game/Oodle/{name}.bin")),
            length: expected.len() as u64,
            hash: blake3_20(expected),
            blocks: vec![CompressionBlock {
                offset,
                compressed_size: stream.len() as u32,
                uncompressed_size: expected.len() as u32,
                method_index: 1,
            }],
        });
    }
    std::fs::write(dir.join("Oodle_P.ucas"), &ucas).unwrap();
    write_toc(
        dir,
        "Oodle_P",
        8 << 20,
        &["Oodle"],
        chunks,
        container_flags::COMPRESSED,
    )
}

#[test]
fn oodle_blocks_decompress_inside_a_container() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let streams = oodle_streams(&corpus);
    let dir = common::temp_dir("oodle");
    let utoc = oodle_container(&dir, &streams);
    common::run_measured(&["verify", utoc.to_str().unwrap()])
        .0
        .ok();
    let out = dir.join("out");
    common::run_measured(&["unpack", utoc.to_str().unwrap(), out.to_str().unwrap()])
        .0
        .ok();
    for (name, _, expected) in &streams {
        let got = std::fs::read(out.join(format!("Game/Oodle/{name}.bin"))).unwrap();
        assert!(&got == expected, "{name} decoded differently");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_corrupt_oodle_block_names_its_chunk_and_block() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let streams = oodle_streams(&corpus);
    let dir = common::temp_dir("oodle-corrupt");
    let utoc = oodle_container(&dir, &streams);
    let container = zenpak::iostore::Container::open(&utoc, None).unwrap();
    let victim = container
        .find_path("Game/Oodle/xml.kraken.bin")
        .expect("indexed");
    let block = container.toc.blocks[container.toc.chunk_blocks(victim).unwrap().start];
    // Overwrite the stream's first block header: the decoder must refuse it.
    let ucas_path = dir.join("Oodle_P.ucas");
    let mut ucas = std::fs::read(&ucas_path).unwrap();
    for b in &mut ucas[block.offset as usize..block.offset as usize + 8] {
        *b = 0xff;
    }
    std::fs::write(&ucas_path, &ucas).unwrap();
    let container = zenpak::iostore::Container::open(&utoc, None).unwrap();
    let e = container.read_chunk(victim).unwrap_err();
    assert_eq!(e.code(), "decompress", "{e}");
    // Outermost first: the chunk (its id and path), then its block 0.
    let structure = &e.context().structure;
    assert_eq!(structure.len(), 2, "{structure:?}");
    assert!(
        structure[0].starts_with(&format!("chunk {victim} ("))
            && structure[0].ends_with("xml.kraken.bin)"),
        "{structure:?}"
    );
    assert!(
        structure[1].starts_with("block 0 (TOC block"),
        "{structure:?}"
    );
    assert_eq!(e.offset(), Some(block.offset));
    // The CLI says the same and writes nothing for it.
    let out = dir.join("out");
    let (run, _) = common::run_measured(&[
        "unpack",
        utoc.to_str().unwrap(),
        out.to_str().unwrap(),
        "--message-format",
        "json",
    ]);
    let error = run.assert_code(1).error();
    assert_eq!(error["code"], "decompress", "{error}");
    assert_eq!(error["offset"], block.offset, "{error}");
    assert_eq!(error["structure"][1], structure[1].as_str(), "{error}");
    assert!(!out.join("Game/Oodle/xml.kraken.bin").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// A 1-chunk container of `blocks` zlib blocks of 64 KiB of zeros, all
/// stored once (about 100 bytes) and then listed again and again.
fn bomb_container(
    dir: &Path,
    name: &str,
    chunks: usize,
    blocks_per_chunk: usize,
    share_chunks: bool,
) -> PathBuf {
    let block = vec![0u8; 64 << 10];
    let packed = zenpak::compression::Compression::Zlib
        .compress(&block)
        .unwrap();
    let mut stored = packed.clone();
    pad_like_engine(&mut stored);
    std::fs::write(dir.join(format!("{name}.ucas")), &stored).unwrap();
    let one = CompressionBlock {
        offset: 0,
        compressed_size: packed.len() as u32,
        uncompressed_size: block.len() as u32,
        method_index: 1,
    };
    let length = (blocks_per_chunk * block.len()) as u64;
    let hash = {
        let mut h = blake3::Hasher::new();
        for _ in 0..blocks_per_chunk {
            h.update(&block);
        }
        h.finalize().as_bytes()[..20].try_into().unwrap()
    };
    let list: Vec<HandChunk> = (0..chunks)
        .map(|i| HandChunk {
            id: bulk_id(i as u64),
            path: Some(format!("Game/Bomb/{i}.ubulk")),
            length,
            hash,
            blocks: vec![one; blocks_per_chunk],
        })
        .collect();
    let utoc = write_toc(
        dir,
        name,
        64 << 10,
        &["Zlib"],
        list,
        container_flags::COMPRESSED,
    );
    if share_chunks {
        // Every chunk starts at block 0: they all share the same blocks.
        let mut toc = Toc::read(&std::fs::read(&utoc).unwrap()).unwrap();
        toc.blocks.truncate(blocks_per_chunk);
        toc.header.compressed_block_entry_count = blocks_per_chunk as u32;
        for o in &mut toc.offsets {
            o.offset = 0;
        }
        std::fs::write(&utoc, toc.write()).unwrap();
    }
    utoc
}

fn assert_refused(utoc: &Path, dir: &Path, what: &str) {
    let u = utoc.to_str().unwrap();
    let (measured, peak) = common::run_measured(&["verify", u]);
    measured.assert_code_for(1, format_args!("{what}: verify accepted it"));
    assert!(
        peak < 64 * MIB,
        "{what}: verify peaked at {} MiB",
        peak / MIB
    );
    let out = dir.join(format!("out-{what}"));
    let (measured, peak) = common::run_measured(&["unpack", u, out.to_str().unwrap()]);
    measured.assert_code_for(1, format_args!("{what}: unpack accepted it"));
    assert!(
        peak < 64 * MIB,
        "{what}: unpack peaked at {} MiB",
        peak / MIB
    );
    let written = walkdir::WalkDir::new(&out)
        .into_iter()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_file())
        .count();
    assert_eq!(written, 0, "{what}: unpack wrote {written} files");
    eprintln!("{what}: refused, verify/unpack peak under 64 MiB");
}

#[test]
fn chunks_sharing_blocks_are_refused_in_bounded_memory() {
    // 400 chunks × 64 MiB each = 25 GiB claimed from a tiny .ucas.
    let dir = common::temp_dir("bomb-shared-chunks");
    let utoc = bomb_container(&dir, "Bomb_P", 400, 1024, true);
    assert!(std::fs::metadata(&utoc).unwrap().len() < 64 << 10);
    assert_refused(&utoc, &dir, "chunks sharing blocks");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn blocks_sharing_ucas_bytes_are_refused_in_bounded_memory() {
    // 8 chunks of 4096 blocks each, every block the same 100 stored bytes.
    let dir = common::temp_dir("bomb-shared-bytes");
    let utoc = bomb_container(&dir, "Bomb_P", 8, 4096, false);
    assert_refused(&utoc, &dir, "blocks sharing bytes");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn hostile_toc_counts_fail_fast_in_bounded_memory() {
    let dir = common::temp_dir("bomb-counts");
    let utoc = bomb_container(&dir, "Bomb_P", 2, 2, false);
    let good = std::fs::read(&utoc).unwrap();
    // entry count, block count, method count, directory index size, seeds, overflow.
    for (field, at) in [
        ("entry count", 24),
        ("block count", 28),
        ("method count", 36),
        ("directory index size", 48),
        ("perfect hash seeds", 84),
        ("chunks without perfect hash", 96),
    ] {
        let mut bytes = good.clone();
        bytes[at..at + 4].copy_from_slice(&0x7fff_fff0u32.to_le_bytes());
        std::fs::write(&utoc, &bytes).unwrap();
        for cmd in ["list", "verify"] {
            let (run, peak) =
                common::run_measured(&[cmd, utoc.to_str().unwrap(), "--message-format", "json"]);
            let error = run.assert_code(1).error();
            assert!(
                peak < 64 * MIB,
                "{field}: {cmd} peaked at {} MiB",
                peak / MIB
            );
            assert_eq!(
                common::file_tail(&error, 1),
                "Bomb_P.utoc",
                "{field}: {error}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A one-chunk container of `blocks` blocks of `block_len` bytes in a
/// container written by the real writer, to corrupt afterwards.
fn real_container(dir: &Path, key: Option<AesKey>) -> zenpak::iostore::WrittenContainer {
    let mut b = zenpak::iostore::ContainerBuilder::create(
        dir,
        "Real_P",
        EngineVersion::UE5_5,
        zenpak::iostore::ContainerOptions {
            compression: zenpak::compression::Compression::Zlib,
            block_size: 65536,
            aes_key: key,
            encryption_key_guid: [0; 16],
            mount_point: "../../../".into(),
            hash_ucas: true,
        },
    )
    .unwrap();
    let data: Vec<u8> = (0..300_000u32)
        .map(|i| (i % 251) as u8 ^ (i >> 11) as u8)
        .collect();
    let id = zenpak::hash::package_id("/Game/Real");
    b.add_bulk_chunk(id, ChunkType::BulkData, 0, &data, "Game/Content/Real.ubulk")
        .unwrap();
    b.add_loose_file("Game/Config/Real.ini", b"[Real]\nvalue=1\n")
        .unwrap();
    b.finish().unwrap()
}

#[test]
fn unpack_fails_on_a_flipped_ucas_byte_and_on_a_wrong_key() {
    let dir = common::temp_dir("corrupt");
    let written = real_container(&dir, None);
    let u = written.utoc.to_str().unwrap().to_string();
    let mut ucas = std::fs::read(&written.ucas).unwrap();
    let mid = ucas.len() / 2;
    ucas[mid] ^= 0x10;
    std::fs::write(&written.ucas, &ucas).unwrap();
    let out = dir.join("out");
    common::run_measured(&["unpack", &u, out.to_str().unwrap()])
        .0
        .assert_code(1);
    assert!(!out.join("Game/Content/Real.ubulk").exists());
    let temps = walkdir::WalkDir::new(&dir)
        .into_iter()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains("zenpak-tmp"))
        .count();
    assert_eq!(temps, 0);

    let enc = common::temp_dir("wrong-key");
    let key = AesKey::from_bytes([0x42; 32]);
    let written = real_container(&enc, Some(key));
    let u = written.utoc.to_str().unwrap().to_string();
    let good_key = "42".repeat(32);
    let bad_key = "43".repeat(32);
    let out = enc.join("out");
    common::run_measured(&["unpack", &u, out.to_str().unwrap(), "--aes-key", &bad_key])
        .0
        .assert_code(1);
    assert!(!out.join("Game/Content/Real.ubulk").exists());
    common::run_measured(&["unpack", &u, out.to_str().unwrap(), "--aes-key", &good_key])
        .0
        .ok();
    assert!(out.join("Game/Content/Real.ubulk").exists());
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&enc);
}

#[test]
fn a_2_gib_chunk_verifies_and_unpacks_under_256_mib() {
    const BLOCK: u64 = 64 << 10;
    const SIZE: u64 = 2 << 30;
    let dir = common::temp_dir("2gib");
    // The .ucas is a sparse file of zeros; the chunk is 32768 stored blocks.
    let ucas = std::fs::File::create(dir.join("Big_P.ucas")).unwrap();
    ucas.set_len(SIZE).unwrap();
    drop(ucas);
    let zeros = vec![0u8; 1 << 20];
    let mut hasher = blake3::Hasher::new();
    for _ in 0..SIZE / zeros.len() as u64 {
        hasher.update(&zeros);
    }
    let hash: [u8; 20] = hasher.finalize().as_bytes()[..20].try_into().unwrap();
    let blocks = (0..SIZE / BLOCK)
        .map(|i| CompressionBlock {
            offset: i * BLOCK,
            compressed_size: BLOCK as u32,
            uncompressed_size: BLOCK as u32,
            method_index: 0,
        })
        .collect();
    let utoc = write_toc(
        &dir,
        "Big_P",
        BLOCK as u32,
        &[],
        vec![HandChunk {
            id: bulk_id(7),
            path: Some("Game/Content/Huge.ubulk".into()),
            length: SIZE,
            hash,
            blocks,
        }],
        0,
    );
    let u = utoc.to_str().unwrap();
    let (measured, peak) = common::run_measured(&["verify", u]);
    measured.ok();
    eprintln!("verify of a 2 GiB chunk: peak RSS {} MiB", peak / MIB);
    assert!(peak < 256 * MIB, "verify peaked at {} MiB", peak / MIB);
    let out = dir.join("out");
    let (measured, peak) = common::run_measured(&["unpack", u, out.to_str().unwrap()]);
    measured.ok();
    eprintln!("unpack of a 2 GiB chunk: peak RSS {} MiB", peak / MIB);
    assert!(peak < 256 * MIB, "unpack peaked at {} MiB", peak / MIB);
    let written = out.join("Game/Content/Huge.ubulk");
    assert_eq!(std::fs::metadata(&written).unwrap().len(), SIZE);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Two zlib chunks stored back to back without alignment padding, as retoc
/// writes them: block 0's aligned range reaches into block 1, block 1's
/// past the end of the `.ucas`. `overlap` moves block 1 back by that many
/// bytes onto block 0's data; `cut` removes bytes from the end.
fn unpadded_container(dir: &Path, name: &str, overlap: u64, cut: u64) -> PathBuf {
    let data: Vec<Vec<u8>> = (0..2u8)
        .map(|n| (0..5000u32).map(|i| (i % 251) as u8 ^ n).collect())
        .collect();
    let packed: Vec<Vec<u8>> = data
        .iter()
        .map(|d| zenpak::compression::Compression::Zlib.compress(d).unwrap())
        .collect();
    assert!(packed.iter().all(|p| p.len() % 16 != 0));
    let mut ucas = packed.concat();
    ucas.truncate(ucas.len() - cut as usize);
    std::fs::write(dir.join(format!("{name}.ucas")), &ucas).unwrap();
    let chunks = (0..2)
        .map(|n| HandChunk {
            id: bulk_id(n as u64),
            path: Some(format!("Game/Unpadded/{n}.ubulk")),
            length: data[n].len() as u64,
            hash: blake3_20(&data[n]),
            blocks: vec![CompressionBlock {
                offset: if n == 0 {
                    0
                } else {
                    packed[0].len() as u64 - overlap
                },
                compressed_size: packed[n].len() as u32,
                uncompressed_size: data[n].len() as u32,
                method_index: 1,
            }],
        })
        .collect();
    write_toc(
        dir,
        name,
        64 << 10,
        &["Zlib"],
        chunks,
        container_flags::COMPRESSED,
    )
}

/// The reader policy: a block's alignment slack may reach into the next
/// block or past the end of the file (the peers' layout, which games
/// load), its data may not.
#[test]
fn alignment_slack_is_read_and_shared_data_is_refused() {
    let dir = common::temp_dir("unpadded");
    let utoc = unpadded_container(&dir, "Slack_P", 0, 0);
    let container = zenpak::iostore::Container::open(&utoc, None).unwrap();
    assert!(container.layout_errors().is_empty());
    assert_eq!(container.layout_notes().len(), 1);
    let u = utoc.to_str().unwrap();
    common::run_measured(&["verify", u]).0.ok();
    let out = dir.join("out");
    common::run_measured(&["unpack", u, out.to_str().unwrap()])
        .0
        .ok();
    assert_eq!(common::files_under(&out).len(), 2);

    // One byte of data shared by two blocks, or one byte of data missing.
    for (what, overlap, cut) in [("shared data byte", 1, 0), ("data past the end", 0, 1)] {
        let sub = dir.join(what.replace(' ', "-"));
        std::fs::create_dir_all(&sub).unwrap();
        let utoc = unpadded_container(&sub, "Slack_P", overlap, cut);
        let container = zenpak::iostore::Container::open(&utoc, None).unwrap();
        assert_eq!(container.layout_errors().len(), 1, "{what}");
        assert_refused(&utoc, &sub, what);
    }
}

/// Blocks that each start 15 bytes after the previous one (inside the
/// alignment slack of a 16-byte step, but sharing data) are the bomb the
/// slack must not reopen.
#[test]
fn blocks_stepping_inside_the_slack_are_refused_in_bounded_memory() {
    let dir = common::temp_dir("bomb-slack-step");
    let utoc = bomb_container(&dir, "Bomb_P", 8, 4096, false);
    let mut toc = Toc::read(&std::fs::read(&utoc).unwrap()).unwrap();
    for (i, b) in toc.blocks.iter_mut().enumerate() {
        b.offset = i as u64 * 15 % 64;
    }
    std::fs::write(&utoc, toc.write()).unwrap();
    assert_refused(&utoc, &dir, "blocks stepping by 15 bytes");
}

/// Every read command on `path` (a `.utoc` or `.pak`): exit 1 within
/// 20 s and under 256 MiB, the error naming the file.
fn assert_every_command_fails_fast(path: &Path, dir: &Path, what: &str) {
    let p = path.to_str().unwrap();
    let name = path.file_name().unwrap().to_str().unwrap();
    let out = dir.join(format!("out-{}", what.replace(' ', "-")));
    let o = out.to_str().unwrap();
    let commands: Vec<Vec<&str>> = vec![
        vec!["inspect", p, "--json"],
        vec!["list", p],
        vec!["verify", p],
        vec!["unpack", p, o],
        vec!["get", p, "Game/Content/Real.ubulk", "-o", o],
        vec!["extract", p, "--engine", "5.5", "-o", o],
    ];
    for mut args in commands {
        args.extend(["--message-format", "json"]);
        let started = std::time::Instant::now();
        let (run, peak) = common::run_measured(&args);
        let (code, err) = (run.code, &run.stderr);
        let took = started.elapsed();
        eprintln!(
            "{what}: {} exit {code}, peak RSS {} MiB, {:.2} s",
            args[0],
            peak / MIB,
            took.as_secs_f64()
        );
        assert_eq!(code, 1, "{what}: {} accepted it: {err}", args[0]);
        assert!(
            peak < 256 * MIB,
            "{what}: {} peaked at {} MiB",
            args[0],
            peak / MIB
        );
        assert!(
            took < std::time::Duration::from_secs(20),
            "{what}: {} took {took:?}",
            args[0]
        );
        let error = run.error();
        assert_eq!(common::file_tail(&error, 1), name, "{what}: {error}");
    }
    assert!(!out.join("Game/Content/Real.ubulk").exists());
}

#[test]
fn a_sparse_4_gib_utoc_fails_fast_in_bounded_memory() {
    const SIZE: u64 = 4 << 30;
    let dir = common::temp_dir("sparse-utoc");
    let written = real_container(&dir, None);
    let good = std::fs::read(&written.utoc).unwrap();
    // A real TOC, then zeros up to 4 GiB (4 KiB on disk).
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(&written.utoc)
        .unwrap();
    file.set_len(SIZE).unwrap();
    drop(file);
    assert_every_command_fails_fast(&written.utoc, &dir, "padded TOC");
    // A header whose counts declare gigabytes, in a file that big.
    let mut header = good[..144].to_vec();
    header[28..32].copy_from_slice(&0x1000_0000u32.to_le_bytes());
    let file = std::fs::File::create(&written.utoc).unwrap();
    std::io::Write::write_all(&mut &file, &header).unwrap();
    file.set_len(SIZE).unwrap();
    drop(file);
    assert_every_command_fails_fast(&written.utoc, &dir, "TOC declaring 3 GiB of blocks");
}

#[test]
fn a_container_header_chunk_declaring_1_gib_is_refused_in_bounded_memory() {
    // The container header chunk: 16384 blocks of 64 KiB, every one the
    // same 100 stored bytes of zeros.
    let dir = common::temp_dir("bomb-header");
    let utoc = bomb_container(&dir, "Header_P", 1, 16384, false);
    let mut toc = Toc::read(&std::fs::read(&utoc).unwrap()).unwrap();
    toc.chunk_ids[0] = ChunkId::new(
        zenpak::hash::hash_lower_utf16("Header_P"),
        0,
        ChunkType::ContainerHeader,
        EngineVersion::UE5_5,
    );
    assert_eq!(toc.offsets[0].length, 1 << 30);
    std::fs::write(&utoc, toc.write()).unwrap();
    let u = utoc.to_str().unwrap();
    for args in [vec!["inspect", u, "--json"], vec!["verify", u]] {
        let args = [&args[..], &["--message-format", "json"]].concat();
        let started = std::time::Instant::now();
        let (run, peak) = common::run_measured(&args);
        let (code, err) = (run.code, &run.stderr);
        eprintln!(
            "1 GiB container header: {} exit {code}, peak RSS {} MiB, {:.2} s",
            args[0],
            peak / MIB,
            started.elapsed().as_secs_f64()
        );
        assert_eq!(code, 1, "{} accepted it: {err}", args[0]);
        assert!(peak < 256 * MIB, "{} peaked at {} MiB", args[0], peak / MIB);
        assert!(started.elapsed() < std::time::Duration::from_secs(20));
        let error = run.error();
        assert_eq!(common::file_tail(&error, 1), "Header_P.utoc", "{error}");
    }
    let out = dir.join("out");
    let (measured, peak) =
        common::run_measured(&["extract", u, "--engine", "5.5", "-o", out.to_str().unwrap()]);
    measured.assert_code(1);
    assert!(peak < 256 * MIB, "extract peaked at {} MiB", peak / MIB);
}

/// A damaged Oodle block that makes the third-party decoder panic (a
/// flipped byte in the corpus's sample stream): the commands report a
/// decompression error naming the block, exit 1, and print no panic text.
#[test]
fn a_block_the_oodle_decoder_panics_on_is_a_plain_error() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let mut streams = oodle_streams(&corpus);
    streams.retain(|(name, _, _)| name == "sample.bundle");
    streams[0].1[49] ^= 0xff;
    let dir = common::temp_dir("oodle-panic");
    let utoc = oodle_container(&dir, &streams);
    let out = dir.join("out");
    for args in [
        vec!["verify", utoc.to_str().unwrap()],
        vec!["unpack", utoc.to_str().unwrap(), out.to_str().unwrap()],
    ] {
        let args = [&args[..], &["--message-format", "json"]].concat();
        // (run_measured fails the test on a panic's text.)
        let (run, _) = common::run_measured(&args);
        let error = run.assert_code(1).error();
        assert_eq!(error["code"], "decompress", "{args:?}: {error}");
        assert!(
            error["structure"]
                .as_array()
                .unwrap()
                .iter()
                .any(|s| s.as_str().unwrap().starts_with("block 0 ")),
            "{error}"
        );
    }
    assert!(!out.join("Game/Oodle/sample.bundle.bin").exists());
    let _ = std::fs::remove_dir_all(&dir);
}
