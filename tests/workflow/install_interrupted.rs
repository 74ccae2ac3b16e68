//! An `install` stopped at any point of its publication (Ctrl-C, a kill)
//! leaves a game's `~mods` in a state the next `install` and `uninstall`
//! handle: the ownership record and the triplet change together, and the
//! temporaries a killed install left are removed by the next run.
//! The publication is held up with `strace` (its `inject` delay), so the
//! signal lands at a known point; the tests say so and skip where strace
//! cannot run.
#![cfg(target_os = "linux")]

use crate::common::{self, run};

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The example mod in `dir`, a game folder for it, and its `~mods`.
fn setup(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let repo = super::cli_output::built_example(dir);
    let game = dir.join("Game");
    std::fs::create_dir_all(game.join("HelloGame/Content/Paks")).unwrap();
    let game = game.canonicalize().unwrap();
    let mods = game.join("HelloGame/Content/Paks/~mods");
    (repo, game, mods)
}

/// Changes the mod's config file: the next build's `.pak` holds `marker`.
fn edit(repo: &Path, marker: &str) {
    let ini = repo.join("Cooked/HelloGame/Config/DefaultHelloMod.ini");
    let mut text = std::fs::read_to_string(&ini).unwrap();
    text.push_str(&format!("\n; {marker}\n"));
    std::fs::write(&ini, text).unwrap();
}

fn contains(path: &Path, marker: &str) -> bool {
    std::fs::read(path).is_ok_and(|b| b.windows(marker.len()).any(|w| w == marker.as_bytes()))
}

fn temporaries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".zenpak-tmp"))
                .collect()
        })
        .unwrap_or_default()
}

fn strace_works() -> bool {
    let works = Command::new("strace")
        .args(["-f", "-qq", "-o", "/dev/null", "true"])
        .status()
        .is_ok_and(|s| s.success());
    if !works {
        // CI installs strace (`.ci/run`): there a missing one is a failure.
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "strace cannot run here; CI needs it (apt-get install strace)"
        );
        eprintln!("strace cannot run here (missing, or ptrace not allowed): skipping");
    }
    works
}

/// `zenpak install` under strace, which holds it for 3 s right after it
/// removed the old `pak` (the first step of the publication: the renames
/// of the new triplet follow in the same critical section); `signal` is
/// sent to zenpak (not strace) meanwhile.
fn install_signalled_in_the_publication(
    repo: &Path,
    game: &Path,
    pak: &Path,
    signal: libc::c_int,
) -> common::Run {
    let prefix: Vec<&OsStr> = vec![
        "strace".as_ref(),
        "-f".as_ref(),
        "-qq".as_ref(),
        "-o".as_ref(),
        "/dev/null".as_ref(),
        "-P".as_ref(),
        pak.as_os_str(),
        "-e".as_ref(),
        "trace=unlink,unlinkat".as_ref(),
        "-e".as_ref(),
        "inject=unlink,unlinkat:delay_exit=3000000".as_ref(),
        "--".as_ref(),
    ];
    let mut command = common::command_through(
        &prefix,
        Some(repo),
        &["install", "--game-dir", game.to_str().unwrap()],
    );
    command.stdout(Stdio::piped()).stderr(Stdio::piped());
    let child = command.spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while pak.exists() {
        assert!(Instant::now() < deadline, "the install never got there");
        std::thread::sleep(Duration::from_millis(20));
    }
    let children = format!("/proc/{0}/task/{0}/children", child.id());
    let pid: libc::pid_t = std::fs::read_to_string(children)
        .unwrap()
        .split_whitespace()
        .next()
        .expect("zenpak runs under strace")
        .parse()
        .unwrap();
    // SAFETY: signalling the zenpak this test started (strace's child).
    unsafe {
        libc::kill(pid, signal);
    }
    common::Run::from(child.wait_with_output().unwrap())
}

/// Ctrl-C in the publication (right after the old `.pak` went): the
/// interrupt waits for it, so the new triplet is installed, and the
/// next `install` knows it for this mod's (it used to refuse it as
/// changed since the install), and `uninstall` removes it all.
#[test]
fn ctrl_c_during_the_publication_leaves_a_state_install_and_uninstall_handle() {
    if !strace_works() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (repo, game, mods) = setup(tmp.path());
    let game_arg = game.to_str().unwrap();
    run(Some(&repo), &["install", "--game-dir", game_arg]).ok();
    let pak = mods.join("HelloMod_P.pak");
    edit(&repo, "second build");
    let out = install_signalled_in_the_publication(&repo, &game, &pak, libc::SIGINT);
    out.assert_code(130);
    // The interrupt waited for the publication: the new triplet is in place.
    assert!(contains(&pak, "second build"));
    assert!(temporaries(&mods).is_empty(), "{:?}", temporaries(&mods));

    let out = run(
        Some(&repo),
        &[
            "install",
            "--game-dir",
            game_arg,
            "--message-format",
            "json",
        ],
    );
    out.ok();
    assert!(
        out.coded("warning", "install-kept").is_empty(),
        "{}",
        out.text()
    );
    assert!(contains(&pak, "second build"));
    // Stopped again, and uninstalled from that state.
    edit(&repo, "third build");
    install_signalled_in_the_publication(&repo, &game, &pak, libc::SIGINT).assert_code(130);
    assert!(contains(&pak, "third build"));
    let out = run(
        Some(&repo),
        &[
            "uninstall",
            "--game-dir",
            game_arg,
            "--message-format",
            "json",
        ],
    );
    out.ok();
    assert!(
        out.coded("warning", "uninstall-kept").is_empty(),
        "{}",
        out.text()
    );
    assert!(
        !mods.exists(),
        "uninstall left {:?}",
        std::fs::read_dir(&mods).map(|d| d.count())
    );
}

/// A kill in the publication, right after the old `.pak` went: the new
/// triplet is three full-size temporaries beside the old `.utoc` and
/// `.ucas`. The next `uninstall` removes the mod and the temporaries.
#[test]
fn a_kill_during_the_publication_leaves_a_state_uninstall_cleans_up() {
    if !strace_works() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (repo, game, mods) = setup(tmp.path());
    let game_arg = game.to_str().unwrap();
    run(Some(&repo), &["install", "--game-dir", game_arg]).ok();
    let pak = mods.join("HelloMod_P.pak");
    edit(&repo, "second build");
    let out = install_signalled_in_the_publication(&repo, &game, &pak, libc::SIGKILL);
    assert_ne!(out.code, 0);
    assert!(!pak.exists());
    assert_eq!(temporaries(&mods).len(), 3, "the new triplet, unnamed");

    let out = run(
        Some(&repo),
        &[
            "uninstall",
            "--game-dir",
            game_arg,
            "--message-format",
            "json",
        ],
    );
    out.ok();
    assert!(
        out.coded("warning", "uninstall-kept").is_empty(),
        "{}",
        out.text()
    );
    assert!(!mods.exists(), "uninstall left {:?}", temporaries(&mods));
}

/// What kills leave in `~mods` (full-size temporaries of an install, of
/// `install --watch`, of the record) goes with the next `install` or
/// `uninstall`; files that only look like them stay.
#[test]
fn install_and_uninstall_remove_the_temporaries_a_killed_install_left() {
    let tmp = tempfile::tempdir().unwrap();
    let (repo, game, mods) = setup(tmp.path());
    let game_arg = game.to_str().unwrap();
    run(Some(&repo), &["install", "--game-dir", game_arg]).ok();
    let leftovers = [
        ".HelloMod_P.ucas.4242-00000000deadbeef.zenpak-tmp",
        ".HelloMod_P.pak.17-0123456789abcdef.zenpak-tmp",
        "..zenpak-owned.json.99-fedcba9876543210.zenpak-tmp",
    ];
    // Not zenpak's: the name does not follow its pattern, or not a file.
    let others = [".notes.zenpak-tmp", "Other_P.pak.zenpak-tmp"];
    let folder = ".Folder.1-0000000000000000.zenpak-tmp";
    let place = || {
        for name in leftovers {
            std::fs::write(mods.join(name), vec![0u8; 1 << 16]).unwrap();
        }
    };
    for name in others {
        std::fs::write(mods.join(name), "the user's").unwrap();
    }
    std::fs::create_dir(mods.join(folder)).unwrap();
    for args in [
        &["install", "--game-dir", game_arg][..],
        &["uninstall", "--game-dir", game_arg],
    ] {
        place();
        run(Some(&repo), args).ok();
        for name in leftovers {
            assert!(!mods.join(name).exists(), "{args:?} left {name}");
        }
        for name in others {
            assert!(mods.join(name).is_file(), "{args:?} removed {name}");
        }
        assert!(mods.join(folder).is_dir());
    }
}
