//! The lock file zenpak takes in an output folder (`target/.zenpak-lock`)
//! and in a game's `~mods` is never written through a link: a cloned mod
//! repository or an unpacked mod archive can carry one aimed at a file of
//! the user's. Every command that locks (`build`, `package`, `clean`,
//! `install`, `uninstall`) refuses it with `unsafe-output`, naming the
//! lock file, and the file the link leads to stays as it was.
#![cfg(unix)]

use crate::common::{self, run};

use std::path::Path;

const PRECIOUS: &str = "export PATH=$HOME/bin:$PATH\n";

/// `zenpak args` in `repo` fails with `unsafe-output` on the lock file, and
/// `victim` is untouched.
fn refused(repo: &Path, args: &[&str], victim: &Path) {
    let mut all = vec!["--message-format", "json"];
    all.extend_from_slice(args);
    let out = run(Some(repo), &all);
    let what = args.join(" ");
    out.assert_code_for(1, &what);
    let error = out.error();
    assert_eq!(error["code"], "unsafe-output", "{what}: {}", out.text());
    assert_eq!(common::file_tail(&error, 1), ".zenpak-lock", "{what}");
    assert!(
        error["hint"].is_string(),
        "{what}: the error says what to do"
    );
    assert_eq!(
        std::fs::read_to_string(victim).unwrap(),
        PRECIOUS,
        "{what} wrote through the link"
    );
}

#[test]
fn a_lock_file_that_is_a_link_is_refused_and_what_it_leads_to_is_untouched() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = super::cli_output::built_example(tmp.path());
    let victim = tmp.path().join("bashrc");
    std::fs::write(&victim, PRECIOUS).unwrap();
    let game = tmp.path().join("Game");
    std::fs::create_dir_all(game.join("HelloGame/Content/Paks")).unwrap();
    let game_arg = game.to_str().unwrap();

    // A repository that commits `target/.zenpak-lock -> ~/.bashrc`.
    let target = repo.join("target");
    std::fs::create_dir_all(&target).unwrap();
    let lock = target.join(".zenpak-lock");
    std::os::unix::fs::symlink(&victim, &lock).unwrap();
    for args in [
        &["build"][..],
        &["package"],
        &["clean"],
        &["install", "--game-dir", game_arg],
    ] {
        refused(&repo, args, &victim);
        assert!(lock.is_symlink(), "the link itself stays");
    }
    // A hard link (an archive can carry one) is another name of the file.
    std::fs::remove_file(&lock).unwrap();
    std::fs::hard_link(&victim, &lock).unwrap();
    refused(&repo, &["build"], &victim);
    std::fs::remove_file(&lock).unwrap();

    // A mod archive unpacked into `Paks/` carrying `~mods/.zenpak-lock`.
    run(Some(&repo), &["install", "--game-dir", game_arg]).ok();
    let mods = game.join("HelloGame/Content/Paks/~mods");
    let lock = mods.join(".zenpak-lock");
    let _ = std::fs::remove_file(&lock);
    std::os::unix::fs::symlink(&victim, &lock).unwrap();
    refused(&repo, &["install", "--game-dir", game_arg], &victim);
    refused(&repo, &["uninstall", "--game-dir", game_arg], &victim);
    assert!(
        mods.join("HelloMod_P.pak").is_file(),
        "a refused uninstall removes nothing"
    );
    // Once the link is gone, both work again.
    std::fs::remove_file(&lock).unwrap();
    run(Some(&repo), &["uninstall", "--game-dir", game_arg]).ok();
    assert!(!mods.join("HelloMod_P.pak").exists());
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), PRECIOUS);
}
