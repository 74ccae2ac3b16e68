//! zenpak as a modder's machine runs it: several builds at once, Ctrl-C and
//! kills at any moment, a mod folder beside other work, damaged caches and
//! huge bulk data. Every test drives the real binary.

use crate::common::{self, run};

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

pub(crate) const MANIFEST: &str =
    "[mod]\nname = \"Big\"\nversion = \"1.0.0\"\n[game]\nengine = \"5.6\"\nproject = \"Game\"\n";

/// A mod with the corpus's 5.6 texture whose `.ubulk` is grown (sparsely) to
/// `bulk_size` bytes, plus the 5.6 SM_Cube and a config file.
pub(crate) fn big_mod(corpus: &Path, dir: &Path, bulk_size: u64) -> PathBuf {
    let content = dir.join("Cooked/Game/Content");
    // Each package where it was cooked (its name says where).
    for (folder, name) in [
        ("Characters/Mannequins/Textures/Quinn", "T_Quinn_01_D"),
        ("LevelPrototyping/Meshes", "SM_Cube"),
    ] {
        std::fs::create_dir_all(content.join(folder)).unwrap();
        for ext in ["uasset", "uexp", "ubulk"] {
            let from = corpus.join(format!("retoc/UE5.6/{name}.{ext}"));
            std::fs::copy(&from, content.join(folder).join(format!("{name}.{ext}"))).unwrap();
        }
    }
    let bulk = std::fs::OpenOptions::new()
        .write(true)
        .open(content.join("Characters/Mannequins/Textures/Quinn/T_Quinn_01_D.ubulk"))
        .unwrap();
    bulk.set_len(bulk_size).unwrap();
    std::fs::create_dir_all(dir.join("Cooked/Game/Config")).unwrap();
    std::fs::write(dir.join("Cooked/Game/Config/DefaultGame.ini"), "[x]\ny=1\n").unwrap();
    std::fs::write(dir.join("mod.toml"), MANIFEST).unwrap();
    dir.to_path_buf()
}

fn file_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

fn temporaries(dir: &Path) -> Vec<String> {
    file_names(dir)
        .into_iter()
        .filter(|n| n.ends_with(".zenpak-tmp"))
        .collect()
}

fn triplet(dir: &Path) -> Vec<Option<Vec<u8>>> {
    ["utoc", "ucas", "pak"]
        .iter()
        .map(|ext| std::fs::read(dir.join(format!("target/Big_P.{ext}"))).ok())
        .collect()
}

fn verify_ok(dir: &Path) -> bool {
    run(Some(dir), &["verify", "target/Big_P.utoc"]).code == 0
}

/// A `build` with JSON messages that succeeds: its `build-finished` line.
fn fresh_build(root: &Path) -> serde_json::Value {
    let out = run(Some(root), &["build", "--message-format", "json"]);
    out.ok().line_of("build-finished")
}

#[test]
fn two_builds_at_once_never_interleave() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let root = big_mod(&corpus, dir.path(), 256 << 20);
    let children: Vec<_> = (0..2)
        .map(|_| {
            common::command(Some(&root), &["build", "--force"])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let outputs: Vec<_> = children
        .into_iter()
        .map(|c| common::Run::from(c.wait_with_output().unwrap()))
        .collect();
    for out in &outputs {
        out.ok();
    }
    let waited = outputs
        .iter()
        .any(|o| o.text().contains("Waiting for another zenpak"));
    assert!(waited, "one of the builds must have waited for the other");
    assert!(verify_ok(&root));
    assert!(temporaries(&root.join("target")).is_empty());
    assert_eq!(fresh_build(&root)["up_to_date"], true);
}

/// Starts a build, lets it run for `after`, then sends `signal`.
fn interrupted_build(root: &Path, after: Duration, signal: libc::c_int) -> common::Run {
    interrupted(root, &["build", "--force"], after, signal)
}

/// Starts `zenpak args`, lets it run for `after`, then sends `signal`.
fn interrupted(root: &Path, args: &[&str], after: Duration, signal: libc::c_int) -> common::Run {
    let child = common::command(Some(root), args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(after);
    // SAFETY: signalling our own child.
    unsafe {
        libc::kill(child.id() as libc::pid_t, signal);
    }
    common::Run::from(child.wait_with_output().unwrap())
}

/// A development build extends the previous `.ucas` in place: Ctrl-C
/// while it appends leaves the old triplet byte for byte (the `.ucas` is cut
/// back), and SIGKILL leaves a triplet that still verifies (the old `.utoc`
/// never describes the appended bytes).
#[test]
fn interrupting_a_development_build_leaves_the_previous_triplet() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let root = big_mod(&corpus, dir.path(), 384 << 20);
    let bulk =
        root.join("Cooked/Game/Content/Characters/Mannequins/Textures/Quinn/T_Quinn_01_D.ubulk");
    // Writes `value` in the middle of the texture's bulk data: the package
    // changes, and a development build appends its 384 MiB again.
    let set_bulk_byte = |value: u8| {
        use std::io::{Seek, SeekFrom, Write};
        let mut f = std::fs::OpenOptions::new().write(true).open(&bulk).unwrap();
        f.seek(SeekFrom::Start(200 << 20)).unwrap();
        f.write_all(&[value]).unwrap();
    };
    for (round, (millis, signal)) in [
        (400, libc::SIGINT),
        (900, libc::SIGINT),
        (500, libc::SIGKILL),
        (1000, libc::SIGKILL),
    ]
    .into_iter()
    .enumerate()
    {
        set_bulk_byte(round as u8 * 2);
        run(Some(&root), &["build", "--quiet"]).ok();
        let before = triplet(&root);
        set_bulk_byte(round as u8 * 2 + 1);
        let out = interrupted(&root, &["build"], Duration::from_millis(millis), signal);
        let after = triplet(&root);
        if out.code == 0 {
            assert!(verify_ok(&root));
            continue;
        }
        if signal == libc::SIGINT {
            out.assert_code(130);
            assert!(
                after == before || verify_ok(&root),
                "Ctrl-C after {millis} ms left a triplet that is neither the old nor a whole new one"
            );
            assert!(temporaries(&root.join("target")).is_empty());
        } else {
            assert!(
                after[2].is_none() || verify_ok(&root),
                "kill after {millis} ms left a pak beside a container it does not describe"
            );
        }
        // The next build recovers.
        let next = run(Some(&root), &["build"]);
        next.ok();
        assert!(verify_ok(&root));
    }
}

#[test]
fn ctrl_c_and_kill_never_leave_a_mixed_or_half_written_triplet() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let root = big_mod(&corpus, dir.path(), 384 << 20);
    run(Some(&root), &["build"]).ok();
    let before = triplet(&root);
    assert!(before.iter().all(Option::is_some));
    // The next build makes other bytes: a changed config file.
    std::fs::write(
        root.join("Cooked/Game/Config/DefaultGame.ini"),
        "[x]\ny=2\n",
    )
    .unwrap();

    // Ctrl-C at several points: the previous triplet stays as it was, no temporaries.
    for millis in [50, 300, 800, 1500] {
        let out = interrupted_build(&root, Duration::from_millis(millis), libc::SIGINT);
        let after = triplet(&root);
        if out.code == 0 {
            // The build finished before the signal: a complete new triplet.
            assert!(verify_ok(&root));
        } else {
            out.assert_code(130);
            assert!(out.stderr.contains("interrupted"), "{}", out.text());
            // Either the previous triplet, untouched, or (when the signal came
            // while the new one was being published, which an interrupt
            // waits for) the complete new one.
            assert!(
                after == before || (after.iter().all(Option::is_some) && verify_ok(&root)),
                "Ctrl-C after {millis} ms left a triplet that is neither the old nor a whole new one"
            );
        }
        assert!(
            temporaries(&root.join("target")).is_empty(),
            "Ctrl-C after {millis} ms left {:?}",
            temporaries(&root.join("target"))
        );
        // Put the old triplet back for the next round if a build got through.
        if out.code == 0 {
            for (ext, bytes) in ["utoc", "ucas", "pak"].iter().zip(&before) {
                std::fs::write(
                    root.join(format!("target/Big_P.{ext}")),
                    bytes.as_ref().unwrap(),
                )
                .unwrap();
            }
        }
    }

    // SIGKILL at several points: temporaries may stay behind, but the files
    // the game would load (a .pak and its .utoc/.ucas) always belong together.
    for millis in [100, 400, 900, 1600, 2500] {
        let out = interrupted_build(&root, Duration::from_millis(millis), libc::SIGKILL);
        let now = triplet(&root);
        if now[2].is_some() {
            assert!(
                verify_ok(&root),
                "kill after {millis} ms left a pak beside a mismatched container"
            );
        }
        let _ = out;
        // The next build recovers: removes stale temporaries, rebuilds, verifies.
        let next = run(Some(&root), &["build"]);
        next.ok();
        assert!(temporaries(&root.join("target")).is_empty());
        assert!(verify_ok(&root));
    }
}

#[test]
fn a_damaged_cache_entry_is_rebuilt_with_a_warning() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let root = big_mod(&corpus, dir.path(), 1 << 20);
    run(Some(&root), &["build"]).ok();
    let good = triplet(&root);
    // Flip one byte in every cache entry, and make the outputs stale.
    let cache = root.join("target/.zenpak-cache/Big_P");
    let mut entries = common::cache_pack::cache_entries(&cache);
    assert!(!entries.is_empty());
    for (_, bytes) in &mut entries {
        let middle = bytes.len() / 2;
        bytes[middle] ^= 0x20;
    }
    common::cache_pack::write_cache_entries(&cache, &entries);
    std::fs::remove_file(root.join("target/Big_P.utoc")).unwrap();
    let out = run(Some(&root), &["build", "--message-format", "json"]);
    out.ok();
    let warnings = out.codes("warning");
    assert!(
        !warnings.is_empty() && warnings.iter().all(|c| c == "cache-damaged"),
        "{}",
        out.stdout
    );
    assert_eq!(
        triplet(&root),
        good,
        "a damaged cache must never change the output"
    );
    assert!(verify_ok(&root));
}

#[test]
fn a_2_gib_bulk_file_builds_in_bounded_memory() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let root = big_mod(&corpus, dir.path(), 2 << 30);
    let (status, peak_kib, output) = common::run_measuring_memory(
        common::command(Some(&root), &["build", "--quiet"]).stdin(Stdio::null()),
    );
    let out = common::Run::from(output);
    assert!(status.success(), "{}", out.text());
    eprintln!("build of a 2 GiB .ubulk: peak RSS {} MiB", peak_kib / 1024);
    assert!(peak_kib < 256 * 1024, "peak RSS {} MiB", peak_kib / 1024);
    let ucas = std::fs::metadata(root.join("target/Big_P.ucas"))
        .unwrap()
        .len();
    assert!(ucas > 2 << 30);
}

#[test]
fn clean_removes_only_what_zenpak_wrote() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // Two mods sharing one output folder outside both, next to a user's own files.
    let shared = dir.path().join("shared-out");
    std::fs::create_dir_all(shared.join("package")).unwrap();
    std::fs::write(shared.join("package/notes.txt"), "mine").unwrap();
    std::fs::write(shared.join("keep.txt"), "mine").unwrap();
    let mut roots = Vec::new();
    for name in ["A", "B"] {
        let root = dir.path().join(name);
        big_mod(&corpus, &root, 1 << 20);
        let manifest = MANIFEST.replace("\"Big\"", &format!("\"{name}\""));
        std::fs::write(
            root.join("mod.toml"),
            format!("{manifest}[output]\ndir = \"../shared-out\"\n"),
        )
        .unwrap();
        let out = run(Some(&root), &["package"]);
        out.ok();
        roots.push(root);
    }
    assert!(shared.join("package/A-1.0.0.zip").is_file());
    assert!(shared.join("package/B-1.0.0.zip").is_file());

    let out = run(Some(&roots[0]), &["clean"]);
    out.ok();
    assert!(!shared.join("A_P.utoc").exists() && !shared.join("package/A-1.0.0.zip").exists());
    assert!(
        shared.join("B_P.utoc").is_file(),
        "mod A's clean removed mod B's build"
    );
    assert!(
        shared.join("package/B-1.0.0.zip").is_file(),
        "mod A's clean removed mod B's release"
    );
    assert_eq!(
        std::fs::read_to_string(shared.join("keep.txt")).unwrap(),
        "mine"
    );
    assert_eq!(
        std::fs::read_to_string(shared.join("package/notes.txt")).unwrap(),
        "mine"
    );
    // B still builds fresh: its cache was not touched.
    assert_eq!(fresh_build(&roots[1])["up_to_date"], true);

    // A file replaced by the user after zenpak wrote it is left alone, with a warning.
    std::fs::write(shared.join("B_P.pak"), "the user's own").unwrap();
    let out = run(Some(&roots[1]), &["clean", "--message-format", "json"]);
    assert_eq!(out.codes("warning"), ["clean-kept"], "{}", out.stdout);
    assert_eq!(
        std::fs::read_to_string(shared.join("B_P.pak")).unwrap(),
        "the user's own"
    );
}

#[test]
fn clean_through_a_symlinked_target_removes_only_zenpaks_files() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let root = big_mod(&corpus, &dir.path().join("mod"), 1 << 20);
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir_all(elsewhere.join("package")).unwrap();
    std::fs::write(elsewhere.join("package/mine.txt"), "mine").unwrap();
    std::fs::write(elsewhere.join("mine.txt"), "mine").unwrap();
    std::os::unix::fs::symlink(&elsewhere, root.join("target")).unwrap();
    run(Some(&root), &["build"]).ok();
    assert!(elsewhere.join("Big_P.utoc").is_file());
    run(Some(&root), &["clean"]).ok();
    assert!(!elsewhere.join("Big_P.utoc").exists());
    assert_eq!(file_names(&elsewhere), ["mine.txt", "package"]);
    assert_eq!(file_names(&elsewhere.join("package")), ["mine.txt"]);
}

#[test]
fn output_folders_that_would_mix_with_the_users_files_are_refused() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let root = big_mod(&corpus, dir.path(), 1 << 20);
    std::fs::create_dir_all(root.join("package")).unwrap();
    std::fs::write(root.join("package/mine.txt"), "mine").unwrap();
    for (output, content) in [(".", "Cooked"), ("Cooked/out", "Cooked"), ("target", ".")] {
        std::fs::write(
            root.join("mod.toml"),
            format!("{MANIFEST}[content]\nroot = \"{content}\"\n[output]\ndir = \"{output}\"\n"),
        )
        .unwrap();
        for command in ["build", "check", "clean"] {
            let out = run(Some(&root), &[command, "--message-format", "json"]);
            if command == "clean" {
                // clean never needs to refuse: it removes only recorded files.
                out.ok();
                continue;
            }
            assert_eq!(
                Some(out.code),
                Some(2),
                "{output}/{content} {command}: {}",
                out.text()
            );
            // A manifest error at the `[output] dir` line.
            let error = out.error();
            assert_eq!(error["code"], "usage", "{error}");
            assert_eq!(common::file_tail(&error, 1), "mod.toml", "{error}");
        }
    }
    assert_eq!(
        std::fs::read_to_string(root.join("package/mine.txt")).unwrap(),
        "mine"
    );
    assert!(root.join("mod.toml").is_file());
}

#[test]
fn manifest_values_are_data_not_paths() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let root = big_mod(&corpus, &dir.path().join("mod"), 1 << 20);
    for (key, value) in [
        ("version", "1/../../../x"),
        ("name", "../Evil"),
        ("version", "C:\\\\x"),
    ] {
        let manifest = MANIFEST.replace(
            &format!(
                "{key} = \"{}\"",
                if key == "name" { "Big" } else { "1.0.0" }
            ),
            &format!("{key} = \"{value}\""),
        );
        std::fs::write(root.join("mod.toml"), &manifest).unwrap();
        let out = run(Some(&root), &["package", "--message-format", "json"]);
        out.assert_code_for(2, format_args!("{key} = {value}"));
        // A manifest error at the line of `key`.
        let error = out.error();
        assert_eq!(error["code"], "usage", "{error}");
        assert_eq!(common::file_tail(&error, 1), "mod.toml", "{error}");
        let line = manifest
            .lines()
            .position(|l| l.starts_with(&format!("{key} =")))
            .unwrap();
        assert_eq!(error["line"], line + 1, "{error}");
    }
    assert_eq!(
        file_names(dir.path()),
        ["mod"],
        "nothing may be written outside the mod"
    );
}

#[test]
fn convert_never_overwrites_its_input_and_says_which_folder_is_missing() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let root = big_mod(&corpus, dir.path(), 1 << 20);
    let input = root.join("Cooked/Game/Content/LevelPrototyping/Meshes/SM_Cube.uasset");
    let original = std::fs::read(&input).unwrap();
    let input_text = input.to_str().unwrap();
    for output in [
        input_text.to_string(),
        input.with_extension("uexp").display().to_string(),
    ] {
        let out = run(
            Some(&root),
            &[
                "convert",
                input_text,
                "--engine",
                "5.6",
                "-o",
                &output,
                "--message-format",
                "json",
            ],
        );
        out.assert_code(2);
        assert_eq!(out.error()["code"], "usage", "{}", out.stdout);
    }
    assert_eq!(std::fs::read(&input).unwrap(), original);
    let out = run(
        Some(&root),
        &[
            "convert",
            input_text,
            "--engine",
            "5.6",
            "-o",
            "missing/dir/x.uzenasset",
            "--message-format",
            "json",
        ],
    );
    out.assert_code(2);
    let error = out.error();
    assert_eq!(error["code"], "usage", "{error}");
    assert_eq!(
        common::file_tail(&error, 3),
        "missing/dir/x.uzenasset",
        "{error}"
    );
    assert!(!root.join("missing").exists());
}

#[test]
fn a_symlinked_content_folder_is_followed() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let real = big_mod(&corpus, &dir.path().join("real"), 1 << 20);
    let root = dir.path().join("linked");
    std::fs::create_dir_all(&root).unwrap();
    std::os::unix::fs::symlink(real.join("Cooked"), root.join("Cooked")).unwrap();
    std::fs::write(root.join("mod.toml"), MANIFEST).unwrap();
    let out = run(Some(&root), &["build", "--message-format", "json"]);
    out.ok();
    assert_eq!(
        out.line_of("build-finished")["packages"],
        2,
        "{}",
        out.stdout
    );
    // A link back to a parent is a clear error, not a hang.
    std::os::unix::fs::symlink(
        real.join("Cooked"),
        real.join("Cooked/Game/Content/LevelPrototyping/loop"),
    )
    .unwrap();
    let started = Instant::now();
    let out = run(Some(&root), &["build", "--message-format", "json"]);
    out.assert_code(2);
    let error = out.error();
    assert_eq!(error["code"], "usage", "{error}");
    assert_eq!(common::file_tail(&error, 1), "loop", "{error}");
    assert!(started.elapsed() < Duration::from_secs(30));
}

/// A file-size limit (`ulimit -f`, SIGXFSZ) fails a build as a full disk
/// does: an error with its own code and hint (not a death by the signal,
/// exit 153), and no temporaries or half-written outputs left.
#[cfg(unix)]
#[test]
fn a_file_size_limit_fails_the_build_with_an_error_and_no_temporaries() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let root = big_mod(&corpus, dir.path(), 4 << 20);
    let prefix: Vec<&std::ffi::OsStr> = vec![
        "bash".as_ref(),
        "-c".as_ref(),
        // 1024 blocks of 1 KiB: the 4 MiB container cannot be written.
        "ulimit -f 1024; exec \"$0\" \"$@\"".as_ref(),
    ];
    let out = common::run_command(&mut common::command_through(
        &prefix,
        Some(&root),
        &["--message-format", "json", "build"],
    ));
    out.assert_code(2);
    let error = out.error();
    assert_eq!(error["code"], "file-too-large", "{}", out.text());
    assert!(error["hint"].is_string());
    assert!(error["file"].is_string());
    let left: Vec<_> = walkdir::WalkDir::new(root.join("target"))
        .into_iter()
        .flatten()
        .filter(|e| zenpak::publish::temporary::is_temporary_name(&e.file_name().to_string_lossy()))
        .map(|e| e.into_path())
        .collect();
    assert!(left.is_empty(), "{left:?}");
    assert_eq!(triplet(&root), vec![None, None, None]);
    // Without the limit, the same build succeeds.
    run(Some(&root), &["build"]).ok();
    assert!(verify_ok(&root));
}
