//! `zenpak install --watch` as a real process: it installs, reinstalls
//! after a cooked file changes, and on Ctrl-C (SIGINT) exits 0 leaving an
//! installed triplet that verifies.
#![cfg(unix)]

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde_json::Value;

struct Watch {
    child: Child,
    lines: Receiver<Value>,
    seen: Vec<Value>,
}

impl Watch {
    fn start(repo: &Path, game: &Path) -> Watch {
        let mut child = crate::common::command(
            Some(repo),
            &[
                "--message-format",
                "json",
                "install",
                "--watch",
                "--game-dir",
            ],
        )
        .arg(game)
        .env_remove("ZENPAK_GAME_DIR")
        .env("ZENPAK_CONFIG", repo.join("no-user-config.toml"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start zenpak install --watch");
        let stdout = child.stdout.take().unwrap();
        let (send, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let value: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("not a JSON line ({e}): {line}"));
                if send.send(value).is_err() {
                    break;
                }
            }
        });
        Watch {
            child,
            lines,
            seen: Vec::new(),
        }
    }

    /// Waits (at most a minute) for a line `pred` accepts.
    fn wait_for(&mut self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    super::message_schema::validate(&line);
                    self.seen.push(line.clone());
                    if pred(&line) {
                        return line;
                    }
                }
                Err(RecvTimeoutError::Timeout) => {
                    let _ = self.child.kill();
                    panic!("no {what} within a minute; saw {:?}", self.seen)
                }
                Err(RecvTimeoutError::Disconnected) => {
                    panic!("zenpak ended before {what}; saw {:?}", self.seen)
                }
            }
        }
    }

    fn interrupt_and_wait(mut self) -> (i32, Vec<Value>) {
        // SAFETY: sending a signal to the child this test started.
        unsafe {
            libc::kill(self.child.id() as libc::pid_t, libc::SIGINT);
        }
        let deadline = Instant::now() + Duration::from_secs(30);
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("zenpak did not stop after SIGINT; saw {:?}", self.seen);
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        while let Ok(line) = self.lines.recv_timeout(Duration::from_secs(5)) {
            self.seen.push(line);
        }
        (status.code().unwrap_or(-1), self.seen)
    }
}

fn verify(utoc: &Path) {
    let out = crate::common::run(None, &["verify", utoc.to_str().unwrap()]);
    assert_eq!(
        out.code, 0,
        "the installed triplet verifies: {}",
        out.stdout
    );
}

fn setup(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let repo = super::cli_output::built_example(dir);
    let game = dir.join("Game");
    std::fs::create_dir_all(game.join("HelloGame/Content/Paks")).unwrap();
    let installed = game.join("HelloGame/Content/Paks/~mods/HelloMod_P.utoc");
    (repo, game, installed)
}

#[test]
fn install_watch_reinstalls_after_a_change_and_stops_cleanly_on_sigint() {
    let tmp = tempfile::tempdir().unwrap();
    let (repo, game, installed) = setup(tmp.path());
    let mut watch = Watch::start(&repo, &game);
    watch.wait_for("the first install", |l| l["reason"] == "installed");
    watch.wait_for("watching", |l| {
        l["reason"] == "watching" && l["installs"] == 1
    });
    let first = std::fs::read(installed.with_extension("pak")).unwrap();

    // A cooked file changes (a config file too): one rebuild, one install.
    let ini = repo.join("Cooked/HelloGame/Config/DefaultHelloMod.ini");
    let mut text = std::fs::read_to_string(&ini).unwrap();
    text.push_str("\n; changed while watching\n");
    std::fs::write(&ini, text).unwrap();
    let built = watch.wait_for("the rebuild", |l| l["reason"] == "build-finished");
    assert_eq!(built["up_to_date"], false);
    assert_eq!(built["layout"], "extended", "the development build");
    let second = watch.wait_for("the second install", |l| l["reason"] == "installed");
    assert_eq!(second["dry_run"], false);
    watch.wait_for("watching again", |l| {
        l["reason"] == "watching" && l["installs"] == 2
    });
    assert_ne!(
        std::fs::read(installed.with_extension("pak")).unwrap(),
        first,
        "the changed file reached the game"
    );

    let (code, lines) = watch.interrupt_and_wait();
    assert_eq!(code, 0, "{lines:?}");
    let last = lines.last().unwrap();
    assert_eq!(last["reason"], "finished");
    assert_eq!(last["exit_code"], 0);
    for ext in ["utoc", "ucas", "pak"] {
        assert!(installed.with_extension(ext).is_file(), "{ext} installed");
    }
    verify(&installed);
}

/// Ctrl-C right after a change (while it settles or rebuilds): whatever
/// moment it lands, the installed triplet is a whole one.
#[test]
fn sigint_during_a_rebuild_leaves_a_whole_triplet() {
    let tmp = tempfile::tempdir().unwrap();
    let (repo, game, installed) = setup(tmp.path());
    let mut watch = Watch::start(&repo, &game);
    watch.wait_for("watching", |l| l["reason"] == "watching");
    let uexp = repo.join("Cooked/HelloGame/Content/HelloMod/ST_HelloMod.uexp");
    let bytes = std::fs::read(&uexp).unwrap();
    std::fs::write(&uexp, &bytes).unwrap();
    // Past the settling time: the rebuild is starting or under way.
    std::thread::sleep(Duration::from_millis(650));
    let (code, lines) = watch.interrupt_and_wait();
    assert!(matches!(code, 0 | 130), "exit {code}: {lines:?}");
    verify(&installed);
    let leftovers: Vec<_> = std::fs::read_dir(installed.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| zenpak::publish::temporary::is_temporary_name(n))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// An edit saved while a rebuild's install is under way is not lost: the
/// watch sees it and installs again, so the game ends with the last edit
/// (it used to stay one edit behind).
#[test]
fn an_edit_saved_during_a_rebuild_is_installed_too() {
    let Some(corpus) = crate::common::corpus() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    // A 256 MiB container: the rebuild's install copies it for a while.
    let repo = crate::reliability::big_mod(&corpus, &tmp.path().join("mod"), 256 << 20);
    let game = tmp.path().join("Game");
    std::fs::create_dir_all(game.join("Game/Content/Paks")).unwrap();
    let pak = game.join("Game/Content/Paks/~mods/Big_P.pak");
    let holds = |marker: &str| {
        std::fs::read(&pak).is_ok_and(|b| b.windows(marker.len()).any(|w| w == marker.as_bytes()))
    };
    let mut watch = Watch::start(&repo, &game);
    watch.wait_for("watching", |l| l["reason"] == "watching");
    let ini = repo.join("Cooked/Game/Config/DefaultGame.ini");
    std::fs::write(&ini, "[x]\ny=first-edit\n").unwrap();
    watch.wait_for("the rebuild", |l| l["reason"] == "build-finished");
    // The rebuild has read its inputs; its install is copying now.
    std::fs::write(&ini, "[x]\ny=later-edit\n").unwrap();
    watch.wait_for("the rebuild's install", |l| {
        l["reason"] == "watching" && l["installs"] == 2
    });
    assert!(holds("first-edit"), "the first edit was installed");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !holds("later-edit") && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    let installed = holds("later-edit");
    let (code, lines) = watch.interrupt_and_wait();
    assert!(
        installed,
        "the edit saved during the rebuild never reached the game: {lines:?}"
    );
    assert_eq!(code, 0, "{lines:?}");
}
