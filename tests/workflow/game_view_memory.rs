//! Issue 51 item 13: a game view's memory. A sparse `.utoc` that fills the
//! 64 MiB TOC budget with chunk entries (each a few dozen bytes on disk)
//! must not cost the game readers many times that, and a game folder of
//! several of them must stay within `limits.rs`' 256 MiB, measured on the
//! real binary with the peak-RSS helper.

use std::io::Write;
use std::path::{Path, PathBuf};

use zenpak::iostore::chunk::{ChunkId, ChunkType};
use zenpak::iostore::toc::{container_flags, Toc};
use zenpak::EngineVersion;

use crate::common;

const MIB: u64 = 1 << 20;
/// `limits.rs`: every read path stays far below this.
const BOUND: u64 = 256 * MIB;
/// `limits::MAX_TOC_BYTES` (crate-private): the largest `.utoc` read.
const TOC_BUDGET: u64 = 64 * MIB;

/// A 5.6 container `<dir>/<stem>.{pak,utoc,ucas}` of one loose file (in
/// its `.pak`), whose TOC the tests below replace.
fn one_file_container(dir: &Path, stem: &str) -> zenpak::iostore::WrittenContainer {
    let mut b = zenpak::iostore::ContainerBuilder::create(
        dir,
        stem,
        EngineVersion::UE5_6,
        zenpak::iostore::ContainerOptions {
            compression: zenpak::compression::Compression::None,
            block_size: 65536,
            aes_key: None,
            encryption_key_guid: [0; 16],
            mount_point: "../../../".into(),
            hash_ucas: true,
        },
    )
    .unwrap();
    b.add_loose_file(&format!("Game/Config/{stem}.ini"), b"[Config]\n")
        .unwrap();
    b.finish().unwrap()
}

/// A container `<dir>/<stem>.{pak,utoc,ucas}` whose `.utoc` lists as many
/// chunks as fit in `toc_bytes` (distinct bulk-data ids, each of length 0):
/// the ids written, the offsets and metas left as a hole of zeros. The
/// `.pak` is a real one with one file. Returns the chunk count.
fn sparse_container(dir: &Path, stem: &str, toc_bytes: u64) -> u64 {
    let engine = EngineVersion::UE5_6;
    let written = one_file_container(dir, stem);
    assert_eq!(written.pak, dir.join(format!("{stem}.pak")));
    let mut toc = Toc::read(&std::fs::read(&written.utoc).unwrap()).unwrap();
    let version = toc.header.version;
    let per_chunk = 12 + 10 + version.meta_size() as u64;
    let count = (toc_bytes - 144) / per_chunk;
    toc.header.entry_count = count as u32;
    toc.header.compressed_block_entry_count = 0;
    toc.header.compression_method_name_count = 0;
    toc.header.perfect_hash_seeds_count = 0;
    toc.header.chunks_without_perfect_hash_count = 0;
    toc.header.directory_index_size = 0;
    toc.header.container_flags &= !(container_flags::INDEXED | container_flags::COMPRESSED);
    let header = Toc {
        header: toc.header.clone(),
        chunk_ids: Vec::new(),
        offsets: Vec::new(),
        perfect_hash_seeds: Vec::new(),
        chunks_without_perfect_hash: Vec::new(),
        blocks: Vec::new(),
        compression_methods: Vec::new(),
        directory_index: Vec::new(),
        metas: Vec::new(),
    }
    .write();
    assert_eq!(header.len(), 144);
    let file = std::fs::File::create(&written.utoc).unwrap();
    let mut out = std::io::BufWriter::new(&file);
    out.write_all(&header).unwrap();
    let base = u64::from(toc.header.container_id as u32) << 32;
    for i in 0..count {
        let id = ChunkId::new(base | i, 0, ChunkType::BulkData, engine);
        out.write_all(&id.0).unwrap();
    }
    out.flush().unwrap();
    drop(out);
    file.set_len(144 + count * per_chunk).unwrap();
    assert!(144 + count * per_chunk <= TOC_BUDGET);
    std::fs::write(&written.ucas, b"").unwrap();
    count
}

/// `<root>/Game/Content/Paks` with `n` sparse containers filling the TOC budget.
fn sparse_game(name: &str, n: usize) -> (common::TestDir, PathBuf, PathBuf, u64) {
    let dir = common::temp_dir(name);
    let root = dir.as_ref().join("Install");
    let paks = root.join("Game/Content/Paks");
    std::fs::create_dir_all(&paks).unwrap();
    let mut chunks = 0;
    for i in 0..n {
        chunks += sparse_container(&paks, &format!("pakchunk{i}-Windows"), TOC_BUDGET);
    }
    (dir, root, paks, chunks)
}

fn measured(what: &str, args: &[&str]) -> (common::Run, u64) {
    let started = std::time::Instant::now();
    let (run, peak) = common::run_measured(args);
    eprintln!(
        "{what}: {} exit {}, peak RSS {} MiB, {:.2} s",
        args[0],
        run.code,
        peak / MIB,
        started.elapsed().as_secs_f64()
    );
    (run, peak)
}

/// One sparse `.utoc` at the TOC budget (1,458,885 chunks): `list` reads
/// it whole and `verify` checks it, each within the bound (the base code's
/// `list` took 1,006 MiB: a `String` path, kind and source per chunk and a
/// second map keyed by the lowercased path).
#[test]
fn one_sparse_toc_at_the_budget_reads_in_bounded_memory() {
    let (_dir, _root, paks, chunks) = sparse_game("sparse-toc-one", 1);
    let utoc = paks.join("pakchunk0-Windows.utoc");
    let u = utoc.to_str().unwrap();
    let what = format!("one TOC of {chunks} chunks");
    let (run, peak) = measured(&what, &["list", u, "--filter", "*.nothing"]);
    run.assert_code(0);
    assert!(peak < BOUND, "list peaked at {} MiB", peak / MIB);
    // Every chunk is there (the filter keeps them all).
    let (run, peak) = measured(&what, &["list", u, "--filter", "_chunks/*.bulkdata"]);
    run.assert_code(0);
    assert_eq!(run.stdout.lines().count() as u64, chunks + 1);
    assert!(peak < BOUND, "list peaked at {} MiB", peak / MIB);
    // (The chunks have no data and the container no header: verify fails
    // on them, within the bound.)
    let (run, peak) = measured(&what, &["verify", u, "--message-format", "json"]);
    run.assert_code(1);
    assert!(peak < BOUND, "verify peaked at {} MiB", peak / MIB);
}

/// Four of them in one game folder (5.8 million chunks; `doctor` took
/// 4,002 MiB on the base code, `check --game-dir` 4,472 MiB): the view
/// reads containers up to `MAX_VIEW_TABLE_BYTES` in all, and the game
/// readers name each container left out (`source-unreadable`, exit 1) and
/// read the rest; `list` of the folder refuses it (`limit`). All within
/// the bound.
#[test]
fn four_sparse_tocs_in_a_game_folder_read_in_bounded_memory() {
    let (_dir, root, paks, chunks) = sparse_game("sparse-toc-four", 4);
    let r = root.to_str().unwrap();
    let p = paks.to_str().unwrap();
    let what = format!("four TOCs of {chunks} chunks");
    for command in ["doctor", "conflicts"] {
        let args = [command, "--game-dir", r, "--message-format", "json"];
        let (run, peak) = measured(&what, &args);
        run.assert_code(1);
        assert!(peak < BOUND, "{command} peaked at {} MiB", peak / MIB);
        let left_out: Vec<_> = run
            .diagnostics("error")
            .into_iter()
            .filter(|d| d["code"] == "source-unreadable")
            .collect();
        assert_eq!(left_out.len(), 3, "{command}: {}", run.stdout);
        for d in left_out {
            let file = d["file"].as_str().unwrap();
            assert!(file.ends_with("-Windows.utoc"), "{d}");
        }
    }
    let (run, peak) = measured(&what, &["list", p, "--message-format", "json"]);
    run.assert_code(1);
    assert_eq!(run.error()["code"], "limit", "{}", run.stdout);
    assert!(peak < BOUND, "list peaked at {} MiB", peak / MIB);
    // `check --game-dir` of a mod (the corpus's SM_Cube) against it.
    let Some(corpus) = common::corpus() else {
        return;
    };
    let repo = root.parent().unwrap().join("mod");
    let meshes = repo.join("Cooked/Game/Content/LevelPrototyping/Meshes");
    std::fs::create_dir_all(&meshes).unwrap();
    for ext in ["uasset", "uexp", "ubulk"] {
        let name = format!("SM_Cube.{ext}");
        std::fs::copy(corpus.join("retoc/UE5.6").join(&name), meshes.join(&name)).unwrap();
    }
    let manifest = repo.join("mod.toml");
    std::fs::write(
        &manifest,
        common::game_fixture::GameFixture::manifest_text("Mod"),
    )
    .unwrap();
    let m = manifest.to_str().unwrap();
    let args = [
        "check",
        "--manifest-path",
        m,
        "--game-dir",
        r,
        "--message-format",
        "json",
    ];
    let (run, peak) = measured(&what, &args);
    run.assert_code(1);
    assert!(peak < BOUND, "check peaked at {} MiB", peak / MIB);
    let left_out = run
        .codes("error")
        .iter()
        .filter(|c| *c == "source-unreadable")
        .count();
    assert_eq!(left_out, 3, "{}", run.stdout);
}

/// A container of `count` chunks whose directory index gives every chunk a
/// path of `name_len` bytes, all one name of the string table: a few bytes
/// each in the `.utoc` (12 per file entry), `name_len` each when spelled
/// out. Returns the `.utoc`.
fn path_bomb_container(dir: &Path, count: u32, name_len: usize) -> PathBuf {
    let written = one_file_container(dir, "PathBomb_P");
    let mut toc = Toc::read(&std::fs::read(&written.utoc).unwrap()).unwrap();
    let fstring = |out: &mut Vec<u8>, text: &[u8]| {
        out.extend_from_slice(&(text.len() as i32 + 1).to_le_bytes());
        out.extend_from_slice(text);
        out.push(0);
    };
    let mut index = Vec::new();
    fstring(&mut index, b"../../../");
    // The root: no name, no children, its first file 0.
    index.extend_from_slice(&1u32.to_le_bytes());
    for field in [u32::MAX, u32::MAX, u32::MAX, 0] {
        index.extend_from_slice(&field.to_le_bytes());
    }
    index.extend_from_slice(&count.to_le_bytes());
    for i in 0..count {
        let next = if i + 1 == count { u32::MAX } else { i + 1 };
        for field in [0, next, i] {
            index.extend_from_slice(&field.to_le_bytes());
        }
    }
    index.extend_from_slice(&1u32.to_le_bytes());
    fstring(&mut index, &vec![b'a'; name_len]);
    let engine = EngineVersion::UE5_6;
    let base = u64::from(toc.header.container_id as u32) << 32;
    toc.chunk_ids = (0..u64::from(count))
        .map(|i| ChunkId::new(base | i, 0, ChunkType::BulkData, engine))
        .collect();
    toc.offsets = vec![
        zenpak::iostore::toc::OffsetAndLength {
            offset: 0,
            length: 0
        };
        count as usize
    ];
    toc.metas = vec![toc.metas[0]; count as usize];
    toc.blocks.clear();
    toc.compression_methods.clear();
    toc.perfect_hash_seeds.clear();
    toc.chunks_without_perfect_hash.clear();
    toc.header.entry_count = count;
    toc.header.compressed_block_entry_count = 0;
    toc.header.compression_method_name_count = 0;
    toc.header.perfect_hash_seeds_count = 0;
    toc.header.chunks_without_perfect_hash_count = 0;
    toc.header.container_flags &= !container_flags::COMPRESSED;
    toc.header.container_flags |= container_flags::INDEXED;
    toc.header.directory_index_size = index.len() as u32;
    toc.directory_index = index;
    let bytes = toc.write();
    assert!(bytes.len() as u64 <= TOC_BUDGET);
    std::fs::write(&written.utoc, bytes).unwrap();
    std::fs::write(&written.ucas, b"").unwrap();
    written.utoc
}

/// A directory index that spells a gigabyte of paths from 12 MiB of file
/// entries (a million chunks, each a 1,000-byte path): `list` and
/// `verify` refuse it (`limit`, naming the file) within the bound.
#[test]
fn a_directory_index_spelling_a_gigabyte_of_paths_is_refused_in_bounded_memory() {
    let dir = common::temp_dir("path-bomb");
    let utoc = path_bomb_container(&dir, 1_000_000, 1000);
    let u = utoc.to_str().unwrap();
    for command in ["list", "verify"] {
        let (run, peak) = measured(
            "a gigabyte of index paths",
            &[command, u, "--message-format", "json"],
        );
        run.assert_code(1);
        let error = run.error();
        assert_eq!(error["code"], "limit", "{command}: {error}");
        assert_eq!(common::file_tail(&error, 1), "PathBomb_P.utoc", "{error}");
        assert!(peak < BOUND, "{command} peaked at {} MiB", peak / MIB);
    }
}
