//! Sources that are not what their names say, or that cost more than they
//! should: a FIFO or a device named `.utoc`/`.pak`, a pak listing one path
//! twice or a name with `..`, a TOC without perfect-hash seeds, a pak that
//! expands far past its size. Each is built here and run through the binary.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::common;

/// Runs the binary with `args`, killing it (and failing the test) if it has
/// not finished within `limit`: a guard against a hang, not a timing.
pub(crate) fn run_guarded(args: &[&str], env: &[(&str, &str)], limit: Duration) -> common::Run {
    let mut command = common::command(None, args);
    command.env_remove("CI");
    for (k, v) in env {
        command.env(k, v);
    }
    let mut child = command
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn zenpak");
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            return common::Run::from(child.wait_with_output().unwrap());
        }
        if start.elapsed() > limit {
            child.kill().ok();
            child.wait().ok();
            panic!("zenpak {args:?} did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[cfg(unix)]
#[test]
fn a_fifo_or_a_device_named_utoc_or_pak_is_refused_by_every_reader() {
    let dir = common::temp_dir("not-regular");
    let fifo = dir.join("Fifo_P.utoc");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let zero = dir.join("Zero_P.pak");
    std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
    let out = dir.join("out");
    let out = out.to_str().unwrap();
    for source in [&fifo, &zero] {
        let s = source.to_str().unwrap();
        let commands: Vec<Vec<&str>> = vec![
            vec!["verify", s],
            vec!["list", s],
            vec!["inspect", s],
            vec!["unpack", s, out],
            vec!["get", s, "x.ini", "-o", out],
            vec!["extract", s, "-o", out, "--engine", "5.6"],
        ];
        for args in commands {
            let mut args = args.clone();
            args.extend(["--message-format", "json"]);
            let run = run_guarded(&args, &[], Duration::from_secs(120));
            run.assert_code_for(2, format!("{args:?}"));
            let error = run.error();
            assert_eq!(error["code"], "usage", "{args:?}: {error}");
            assert_eq!(
                Path::new(error["file"].as_str().unwrap()),
                source.as_path(),
                "{args:?}: {error}"
            );
        }
    }
    assert!(!dir.join("out").exists(), "nothing is written");
}

/// Runs `args` with JSON messages (checked against the schema), expecting `code`.
fn json(args: &[&str], code: i32) -> common::Run {
    let dir = std::env::temp_dir();
    crate::cli_output::json(&dir, args, code)
}

/// A pak (version 11, written by zenpak) whose directory index lists
/// `Proj/Config/A.ini` twice: first the record holding `[first]`, then the
/// one holding `[last]`.
fn pak_listing_a_path_twice(dir: &Path) -> std::path::PathBuf {
    let pak = dir.join("Twice_P.pak");
    crate::build_pak_input::write_pak(
        &pak,
        &[
            ("Proj/Config/A.ini".to_string(), b"[first]\n".to_vec()),
            ("Proj/Config/B.ini".to_string(), b"[last]\n".to_vec()),
        ],
    );
    crate::inputs::rename_in_directory_index(&pak, "B.ini", "A.ini");
    pak
}

#[test]
fn a_pak_listing_one_path_twice_reads_the_last_one_listed_with_a_warning() {
    let dir = common::temp_dir("pak-path-twice");
    let pak = pak_listing_a_path_twice(&dir);
    let p = pak.to_str().unwrap();
    let twice = |run: &common::Run| {
        let warnings = run.coded("warning", "pak-path-twice");
        assert_eq!(warnings.len(), 1, "{}{}", run.stdout, run.stderr);
        assert!(warnings[0]["file"]
            .as_str()
            .unwrap()
            .ends_with("Twice_P.pak"));
    };
    let verified = json(&["verify", p], 0);
    twice(&verified);
    assert_eq!(verified.line_of("verified")["pak_entries"], 1);
    let listed = json(&["list", p], 0);
    twice(&listed);
    let files = listed.line_of("files")["files"].as_array().unwrap().clone();
    assert_eq!(files.len(), 1, "{files:?}");
    assert_eq!(files[0]["size"], b"[last]\n".len());
    let got = dir.join("got.ini");
    let run = json(
        &["get", p, "Proj/Config/A.ini", "-o", got.to_str().unwrap()],
        0,
    );
    twice(&run);
    assert_eq!(std::fs::read(&got).unwrap(), b"[last]\n");
    let out = dir.join("out");
    let run = json(&["unpack", p, out.to_str().unwrap()], 0);
    twice(&run);
    assert_eq!(
        common::files_under(&out),
        [("Proj/Config/A.ini".to_string(), b"[last]\n".to_vec())].into()
    );
}

#[test]
fn verify_reports_pak_entries_and_container_paths_no_game_path_can_name() {
    let dir = common::temp_dir("unreachable-names");
    // A pak whose `Pr/Cf/` folder is renamed `../../`: `../../A.ini`.
    let pak = dir.join("Dots_P.pak");
    crate::build_pak_input::write_pak(&pak, &[("Pr/Cf/A.ini".to_string(), b"[a]\n".to_vec())]);
    crate::inputs::rename_in_directory_index(&pak, "Pr/Cf/", "../../");
    let p = pak.to_str().unwrap();
    let verified = json(&["verify", p], 0);
    let warnings = verified.coded("warning", "entry-name-unreachable");
    assert_eq!(warnings.len(), 1, "{}{}", verified.stdout, verified.stderr);
    assert!(warnings[0]["file"]
        .as_str()
        .unwrap()
        .ends_with("Dots_P.pak"));
    // unpack refuses to write it, and writes nothing outside its folder.
    let out = dir.join("a/b/out");
    let run = json(&["unpack", p, out.to_str().unwrap()], 1);
    assert_eq!(run.error()["code"], "format");
    assert!(!dir.join("a/A.ini").exists() && !dir.join("A.ini").exists());

    // A container whose directory index names a folder `..`.
    let cdir = dir.join("container");
    std::fs::create_dir_all(&cdir).unwrap();
    let mut b = zenpak::iostore::ContainerBuilder::create(
        &cdir,
        "Dots_P",
        zenpak::EngineVersion::UE5_6,
        Default::default(),
    )
    .unwrap();
    for (id, path) in [(1, "G/Qz/A.uasset"), (2, "G/Wy/B.uasset")] {
        b.add_package(
            id,
            &[0u8; 64],
            zenpak::iostore::container_header::StoreEntry::default(),
            path,
        )
        .unwrap();
    }
    let written = b.finish().unwrap();
    let mut utoc = std::fs::read(&written.utoc).unwrap();
    let at: Vec<usize> = utoc
        .windows(3)
        .enumerate()
        .filter(|(_, w)| w == b"Qz\0")
        .map(|(i, _)| i)
        .collect();
    assert_eq!(at.len(), 1, "one folder name `Qz`");
    utoc[at[0]..at[0] + 2].copy_from_slice(b"..");
    std::fs::write(&written.utoc, utoc).unwrap();
    let verified = json(&["verify", written.utoc.to_str().unwrap()], 0);
    let warnings = verified.coded("warning", "entry-name-unreachable");
    assert_eq!(warnings.len(), 1, "{}{}", verified.stdout, verified.stderr);
    assert!(warnings[0]["file"]
        .as_str()
        .unwrap()
        .ends_with("Dots_P.utoc"));
}

#[test]
fn verify_of_a_toc_without_perfect_hash_seeds_is_linear_and_caps_its_errors() {
    use zenpak::iostore::chunk::{ChunkId, ChunkType};
    use zenpak::iostore::toc::{container_flags, ChunkMeta, OffsetAndLength, Toc, TocHeader};
    use zenpak::version::TocVersion;
    let dir = common::temp_dir("seedless");
    // 300,000 chunks sharing one id, as a UE 4.27 TOC (no seeds) lists
    // them: the engine's map finds the last; every other is an error.
    const N: usize = 300_000;
    let id = ChunkId::new(7, 0, ChunkType::BulkData, zenpak::EngineVersion::UE4_27);
    let toc = Toc {
        header: TocHeader {
            version: TocVersion::PartitionSize,
            entry_count: N as u32,
            compressed_block_entry_count: 0,
            compression_method_name_count: 0,
            compression_block_size: 65536,
            directory_index_size: 0,
            partition_count: 1,
            container_id: zenpak::hash::hash_lower_utf16("Seedless_P"),
            encryption_key_guid: [0; 16],
            container_flags: container_flags::INDEXED,
            perfect_hash_seeds_count: 0,
            partition_size: u64::MAX,
            chunks_without_perfect_hash_count: 0,
        },
        chunk_ids: vec![id; N],
        offsets: vec![
            OffsetAndLength {
                offset: 0,
                length: 0
            };
            N
        ],
        perfect_hash_seeds: Vec::new(),
        chunks_without_perfect_hash: Vec::new(),
        blocks: Vec::new(),
        compression_methods: Vec::new(),
        directory_index: Vec::new(),
        metas: vec![
            ChunkMeta {
                hash: [0; 20],
                flags: 0
            };
            N
        ],
    };
    let utoc = dir.join("Seedless_P.utoc");
    std::fs::write(&utoc, toc.write()).unwrap();
    std::fs::write(dir.join("Seedless_P.ucas"), b"").unwrap();
    crate::build_pak_input::write_pak(&dir.join("Seedless_P.pak"), &[]);
    // A guard against a hang, not a timing: the quadratic look-up took
    // minutes for this; the linear one takes well under a second.
    let run = run_guarded(
        &["verify", utoc.to_str().unwrap(), "--message-format", "json"],
        &[],
        Duration::from_secs(300),
    );
    run.assert_code(1);
    let errors = run.diagnostics("error");
    assert!(
        errors.len() <= 2 * zenpak_shown(),
        "{} errors printed",
        errors.len()
    );
    let more: Vec<_> = errors
        .iter()
        .filter(|e| e["code"] == "more-of-kind")
        .collect();
    assert_eq!(more.len(), 1, "{more:?}");
    let hidden: usize = more[0]["message"]
        .as_str()
        .unwrap()
        .split_whitespace()
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(
        hidden + zenpak_shown(),
        N - 1,
        "every chunk but the last is reported"
    );
}

/// Findings shown per kind before the rest are counted.
fn zenpak_shown() -> usize {
    20
}

#[test]
fn output_far_larger_than_its_source_is_announced_and_capped() {
    let dir = common::temp_dir("expansion");
    let pak = dir.join("Zeros_P.pak");
    // 8 MiB of zeros: a few KiB compressed, over 64 times that unpacked.
    crate::build_pak_input::write_pak(
        &pak,
        &[("Proj/Config/Zeros.bin".to_string(), vec![0u8; 8 << 20])],
    );
    assert!(std::fs::metadata(&pak).unwrap().len() * 64 < 8 << 20);
    let p = pak.to_str().unwrap();
    let limit = Duration::from_secs(120);
    let out_dir = |name: &str| dir.join(name).to_str().unwrap().to_string();

    // Announced with its total, then written.
    let out = out_dir("free");
    let run = run_guarded(&["unpack", p, &out, "--message-format", "json"], &[], limit);
    run.assert_code(0);
    let large = run.coded("warning", "large-output");
    assert_eq!(large.len(), 1, "{}", run.stderr);
    assert!(large[0]["message"]
        .as_str()
        .unwrap()
        .contains(&(8u64 << 20).to_string()));
    assert_eq!(common::files_under(Path::new(&out)).len(), 1);

    // In CI, refused before anything is written, for each writer.
    let ci = [("CI", "true")];
    let out = out_dir("ci");
    let got = out_dir("got.bin");
    for args in [
        vec!["unpack", p, &out],
        vec!["get", p, "Proj/Config/Zeros.bin", "-o", &got],
        vec!["extract", p, "-o", &out, "--engine", "5.6"],
    ] {
        let mut args = args.clone();
        args.extend(["--message-format", "json"]);
        let run = run_guarded(&args, &ci, limit);
        run.assert_code_for(1, format!("{args:?}"));
        assert_eq!(run.error()["code"], "limit", "{args:?}");
        assert!(!Path::new(&out).exists(), "{args:?} wrote nothing");
        assert!(!Path::new(&got).exists(), "{args:?} wrote nothing");
    }
    // --max-output allows it in CI, and caps it anywhere.
    let run = run_guarded(
        &[
            "unpack",
            p,
            &out,
            "--max-output",
            "16M",
            "--message-format",
            "json",
        ],
        &ci,
        limit,
    );
    run.assert_code(0);
    assert_eq!(run.coded("warning", "large-output").len(), 1);
    let run = run_guarded(
        &[
            "get",
            p,
            "Proj/Config/Zeros.bin",
            "-o",
            &got,
            "--max-output",
            "1M",
            "--message-format",
            "json",
        ],
        &[],
        limit,
    );
    run.assert_code(1);
    assert_eq!(run.error()["code"], "limit");
    assert!(!Path::new(&got).exists());
}

#[test]
fn extract_errors_about_a_package_name_its_container() {
    let dir = common::temp_dir("extract-names-file");
    let mut b = zenpak::iostore::ContainerBuilder::create(
        &dir,
        "Broken_P",
        zenpak::EngineVersion::UE5_6,
        Default::default(),
    )
    .unwrap();
    // Not a Zen package: its conversion fails.
    b.add_package(
        0x77,
        &[0xAB; 256],
        zenpak::iostore::container_header::StoreEntry::default(),
        "G/Content/Broken.uasset",
    )
    .unwrap();
    let written = b.finish().unwrap();
    let out = dir.join("out");
    let run = json(
        &[
            "extract",
            written.utoc.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--engine",
            "5.6",
            "--allow-unresolved",
        ],
        1,
    );
    let errors = run.diagnostics("error");
    assert!(!errors.is_empty(), "{}", run.stderr);
    for e in &errors {
        let file = e["file"].as_str().unwrap_or_else(|| panic!("no file: {e}"));
        assert!(!file.is_empty(), "{e}");
    }
    assert!(
        errors
            .iter()
            .any(|e| e["file"].as_str().unwrap().ends_with("Broken_P.utoc")),
        "{errors:?}"
    );
}
