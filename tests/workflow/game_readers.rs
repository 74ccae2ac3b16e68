//! The game readers (`doctor`, `conflicts`, `check --game-dir`, `verify`,
//! `extract`, `get`) on hostile game folders built in the test: containers
//! that are symbolic links (each file, the `~mods` folder, the `Paks`
//! folder), a mod previewed where `install` will put it, a renamed copy
//! sharing a container id, a container that does not read and one whose
//! file name is not UTF-8, pak entry names holding control characters and
//! a game of many paks.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::game_fixture::{GameFixture, OVERRIDDEN_PACKAGE};
use crate::common::run;

/// Moves `<dir>/<stem>.{pak,utoc,ucas}` to `to` and puts a symbolic link
/// to each in its place.
#[cfg(unix)]
fn link_triplet(dir: &Path, stem: &str, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for ext in ["pak", "utoc", "ucas"] {
        let at = dir.join(format!("{stem}.{ext}"));
        if at.is_file() {
            let target = to.join(format!("{stem}.{ext}"));
            std::fs::rename(&at, &target).unwrap();
            std::os::unix::fs::symlink(&target, &at).unwrap();
        }
    }
}

/// Moves folder `dir` to `to` and links `dir` to it.
#[cfg(unix)]
fn link_folder(dir: &Path, to: &Path) {
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    std::fs::rename(dir, to).unwrap();
    std::os::unix::fs::symlink(to, dir).unwrap();
}

/// `zenpak <command> --game-dir <game> --aes-key <its key> --message-format json <extra>` in `cwd`.
fn against_game(
    game: &GameFixture,
    cwd: &Path,
    command: &str,
    extra: &[&str],
) -> crate::common::Run {
    let root = game.root.to_str().unwrap();
    let mut args = vec![
        command,
        "--game-dir",
        root,
        "--aes-key",
        &game.aes_key,
        "--message-format",
        "json",
    ];
    args.extend_from_slice(extra);
    run(Some(cwd), &args)
}

/// A mod repository `name` in the fixture's scratch space holding the
/// retoc/UE5.6 package `package`, with its `mod.toml`.
fn mod_with(game: &GameFixture, name: &str, package: &str) -> PathBuf {
    let repo = game.mod_repo(name);
    game.place_ue56_package(&repo, package);
    std::fs::write(repo.join("mod.toml"), GameFixture::manifest_text(name)).unwrap();
    repo
}

/// `doctor --message-format json`: (exit code, the doctor object, the run).
fn doctor(game: &GameFixture, cwd: &Path) -> (i32, Value, crate::common::Run) {
    let done = against_game(game, cwd, "doctor", &[]);
    let report = done
        .lines_of("doctor")
        .into_iter()
        .next()
        .unwrap_or_default();
    (done.code, report, done)
}

/// `conflicts --message-format json` in `cwd`: (exit code, the summary, the run).
fn conflicts(game: &GameFixture, cwd: &Path, extra: &[&str]) -> (i32, Value, crate::common::Run) {
    let done = against_game(game, cwd, "conflicts", extra);
    let summary = done
        .lines_of("conflicts")
        .into_iter()
        .next()
        .unwrap_or_default();
    (done.code, summary, done)
}

fn installed_names(report: &Value) -> Vec<String> {
    let mut names: Vec<String> = report["installed_mods"]
        .as_array()
        .unwrap_or_else(|| panic!("no installed_mods in {report:#}"))
        .iter()
        .map(|m| m["name"].as_str().unwrap().to_string())
        .collect();
    names.sort();
    names
}

fn mod_state<'a>(summary: &'a Value, name: &str) -> &'a Value {
    &summary["mods"]
        .as_array()
        .unwrap_or_else(|| panic!("no mods in {summary:#}"))
        .iter()
        .find(|m| m["name"] == name)
        .unwrap_or_else(|| panic!("no mod {name} in {:#}", summary["mods"]))["state"]
}

/// The number of packages `verify --json`-less JSON messages report.
fn verified_packages(paks: &Path, key: &str) -> Value {
    let done = run(
        None,
        &[
            "verify",
            paks.to_str().unwrap(),
            "--aes-key",
            key,
            "--message-format",
            "json",
        ],
    );
    done.ok();
    done.json()
        .into_iter()
        .rev()
        .find(|l| l.get("packages").is_some())
        .map(|l| l["packages"].clone())
        .unwrap_or_else(|| panic!("no package count in {}", done.stdout))
}

#[cfg(unix)]
#[test]
fn linked_containers_are_read_and_never_written_through() {
    let Some(game) = GameFixture::build("readers-links") else {
        return;
    };
    let cwd = game.temp().to_path_buf();
    let staging = game.temp().join("staging");
    let before_packages = verified_packages(&game.paks, &game.aes_key);
    let (_, before, _) = doctor(&game, &cwd);
    assert_eq!(installed_names(&before), ["RetocMod_P", "ZenMod_P"]);

    // Vortex's deployment: each installed container a link to its staging copy.
    for stem in ["RetocMod_P", "ZenMod_P"] {
        link_triplet(&game.mods, stem, &staging.join(stem));
    }
    // And a base container too.
    link_triplet(&game.paks, "pakchunk0-Windows", &staging.join("base"));
    let (code, report, done) = doctor(&game, &cwd);
    assert_eq!(code, 0, "{}{}", done.stdout, done.stderr);
    assert_eq!(installed_names(&report), ["RetocMod_P", "ZenMod_P"]);
    // The links point outside the game: one note names them.
    let outside = done.coded("note", "link-outside-game");
    assert_eq!(outside.len(), 1, "{}", done.stdout);
    assert_eq!(
        verified_packages(&game.paks, &game.aes_key),
        before_packages
    );
    let (code, summary, done) = conflicts(&game, &cwd, &[]);
    assert_eq!(code, 0, "{}{}", done.stdout, done.stderr);
    assert_eq!(mod_state(&summary, "ZenMod_P.pak"), "wholly");
    assert_eq!(mod_state(&summary, "RetocMod_P.pak"), "none");

    // `~mods` itself a link, then `Paks` itself a link.
    link_folder(&game.mods, &game.temp().join("linked-mods"));
    let (_, report, done) = doctor(&game, &cwd);
    assert_eq!(
        installed_names(&report),
        ["RetocMod_P", "ZenMod_P"],
        "{}",
        done.stdout
    );
    link_folder(&game.paks, &game.temp().join("elsewhere/Paks"));
    let (_, report, done) = doctor(&game, &cwd);
    assert_eq!(
        installed_names(&report),
        ["RetocMod_P", "ZenMod_P"],
        "{}",
        done.stdout
    );
    assert_eq!(
        verified_packages(&game.paks, &game.aes_key),
        before_packages
    );
    let (_, summary, _) = conflicts(&game, &cwd, &[]);
    assert_eq!(mod_state(&summary, "ZenMod_P.pak"), "wholly");

    // Writing: a link in the way of an install is not replaced through, and
    // an installed file replaced by a link is not deleted by uninstall.
    let repo = mod_with(&game, "ZenMod", "T_Quinn_01_D");
    let root = game.root.to_str().unwrap();
    let target = staging.join("ZenMod_P/ZenMod_P.pak");
    let bytes = std::fs::read(&target).unwrap();
    run(Some(&repo), &["install", "--game-dir", root]).assert_code(1);
    assert_eq!(std::fs::read(&target).unwrap(), bytes);
    assert!(std::fs::symlink_metadata(game.mods.join("ZenMod_P.pak"))
        .unwrap()
        .file_type()
        .is_symlink());
    let repo = mod_with(&game, "Other", "T_Quinn_01_D");
    run(Some(&repo), &["install", "--game-dir", root]).ok();
    let installed = game.mods.join("Other_P.pak");
    let copy = game.temp().join("other-copy.pak");
    std::fs::copy(&installed, &copy).unwrap();
    std::fs::remove_file(&installed).unwrap();
    std::os::unix::fs::symlink(&copy, &installed).unwrap();
    run(Some(&repo), &["uninstall", "--game-dir", root]).ok();
    assert!(copy.is_file());
    assert!(std::fs::symlink_metadata(&installed).is_ok());
}

#[test]
fn conflicts_previews_the_mod_where_install_puts_it_and_install_warns() {
    let Some(game) = GameFixture::build("readers-preview") else {
        return;
    };
    let repo = mod_with(&game, "ThirdMod", "SM_Cube");
    run(Some(&repo), &["build"]).ok();
    // In `~mods`, `ThirdMod_P.pak` sorts above `RetocMod_P.pak` in the
    // engine's descending path order: mounted first, it loses the chunk.
    let (code, before, done) = conflicts(&game, &repo, &[]);
    assert_eq!(code, 0, "{}", done.stderr);
    assert_eq!(mod_state(&before, "ThirdMod_P.pak"), "wholly");
    let root = game.root.to_str().unwrap();
    // `check --game-dir` warns the same way.
    let checked = against_game(&game, &repo, "check", &[]);
    let lost = checked.coded("warning", "override-not-loaded");
    assert_eq!(lost.len(), 1, "{}", checked.stdout);
    assert!(lost[0]["message"]
        .as_str()
        .unwrap()
        .contains("RetocMod_P.pak"));
    assert!(lost[0]["hint"].as_str().unwrap().contains("ThirdMod_1_P"));
    let installed = run(
        Some(&repo),
        &["install", "--game-dir", root, "--message-format", "json"],
    );
    installed.ok();
    let lost = installed.coded("warning", "override-not-loaded");
    assert_eq!(lost.len(), 1, "{}", installed.stdout);
    assert!(lost[0]["message"]
        .as_str()
        .unwrap()
        .contains("RetocMod_P.pak"));
    assert!(lost[0]["hint"].as_str().unwrap().contains("_1_P"));
    let (_, after, _) = conflicts(&game, &repo, &[]);
    assert_eq!(mod_state(&after, "ThirdMod_P.pak"), "wholly");
    // Renamed as the hint says, it wins and nothing is said.
    run(Some(&repo), &["uninstall", "--game-dir", root]).ok();
    let mut text = GameFixture::manifest_text("ThirdMod");
    text = text.replace("suffix = \"_P\"", "suffix = \"_1_P\"");
    std::fs::write(repo.join("mod.toml"), text).unwrap();
    let installed = run(
        Some(&repo),
        &["install", "--game-dir", root, "--message-format", "json"],
    );
    assert!(installed
        .ok()
        .coded("warning", "override-not-loaded")
        .is_empty());
    let (_, after, _) = conflicts(&game, &repo, &[]);
    assert_eq!(mod_state(&after, "ThirdMod_1_P.pak"), "none");
    // The package's row names it the winner.
    let row = after["mods"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "ThirdMod_1_P.pak")
        .unwrap();
    assert!(row["overrides"]
        .as_array()
        .unwrap()
        .iter()
        .any(|o| o["wins"] == true && o["path"].as_str().unwrap().contains("SM_Cube")));
    let _ = OVERRIDDEN_PACKAGE;
}

#[test]
fn two_containers_with_one_container_id_are_flagged_by_doctor_and_conflicts() {
    let Some(game) = GameFixture::build("readers-same-id") else {
        return;
    };
    let cwd = game.temp().to_path_buf();
    for ext in ["pak", "utoc", "ucas"] {
        std::fs::copy(
            game.mods.join(format!("ZenMod_P.{ext}")),
            game.mods.join(format!("ZenMod_Copy_P.{ext}")),
        )
        .unwrap();
    }
    let (code, _, done) = doctor(&game, &cwd);
    assert_eq!(code, 0, "{}", done.stderr);
    let same = done.coded("warning", "same-container-id");
    assert_eq!(same.len(), 1, "{}", done.stdout);
    let message = same[0]["message"].as_str().unwrap();
    assert!(message.contains("ZenMod_P.utoc") && message.contains("ZenMod_Copy_P.utoc"));
    let (code, _, done) = conflicts(&game, &cwd, &[]);
    assert_eq!(code, 0, "{}", done.stderr);
    assert_eq!(
        done.coded("warning", "same-container-id").len(),
        1,
        "{}",
        done.stdout
    );
}

/// Bytes that are no pak and no container.
fn garbage(path: &Path) {
    std::fs::write(path, vec![0x5Au8; 4096]).unwrap();
}

/// `Bad\xff_P.pak` in `dir`, where a file name may be any bytes (Unix).
fn non_utf8_name(dir: &Path) -> Option<PathBuf> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        Some(dir.join(std::ffi::OsStr::from_bytes(b"Bad\xff_P.pak")))
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        None
    }
}

#[test]
fn one_bad_container_is_named_and_the_rest_is_read() {
    let Some(game) = GameFixture::build("readers-bad") else {
        return;
    };
    let cwd = game.temp().to_path_buf();
    let bad: Vec<PathBuf> = std::iter::once(game.mods.join("Broken_P.pak"))
        .chain(non_utf8_name(&game.mods))
        .collect();
    for path in &bad {
        garbage(path);
    }
    let (code, report, done) = doctor(&game, &cwd);
    assert_eq!(code, 1, "{}{}", done.stdout, done.stderr);
    assert_eq!(installed_names(&report), ["RetocMod_P", "ZenMod_P"]);
    let errors = done.coded("error", "source-unreadable");
    assert_eq!(errors.len(), bad.len(), "{}", done.stdout);
    assert!(errors
        .iter()
        .any(|e| e["file"].as_str().unwrap().ends_with("Broken_P.pak")));
    if bad.len() > 1 {
        assert!(
            errors
                .iter()
                .any(|e| e["file"].as_str().unwrap().ends_with("Bad\\xff_P.pak")),
            "{errors:#?}"
        );
    }
    let (code, summary, done) = conflicts(&game, &cwd, &[]);
    assert_eq!(code, 1, "{}", done.stderr);
    assert_eq!(mod_state(&summary, "ZenMod_P.pak"), "wholly");
    assert_eq!(done.coded("error", "source-unreadable").len(), bad.len());

    let repo = mod_with(&game, "Checked", "T_Quinn_01_D");
    let checked = against_game(&game, &repo, "check", &[]);
    checked.assert_code(1);
    assert_eq!(checked.coded("error", "source-unreadable").len(), bad.len());
    assert!(!checked.lines_of("check").is_empty(), "{}", checked.stdout);

    // `extract --game-dir`: the mod is extracted, the bad ones named, exit 1.
    let out = game.temp().join("extracted");
    let retoc = game.mods.join("RetocMod_P.utoc");
    let extracted = against_game(
        &game,
        &cwd,
        "extract",
        &[
            retoc.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--engine",
            "5.6",
        ],
    );
    extracted.assert_code(1);
    assert_eq!(
        extracted.coded("error", "source-unreadable").len(),
        bad.len()
    );
    assert!(
        !extracted.lines_of("extracted").is_empty(),
        "{}",
        extracted.stdout
    );
}

/// Clears the screen, retitles the terminal, rings, returns the carriage.
const HOSTILE: &str = "\u{1b}[2J\u{1b}]0;owned\u{7}\r";

fn hostile_pak(path: &Path) {
    let mut w = zenpak::pak::PakWriter::create(
        path,
        zenpak::version::PakVersion::V11,
        "../../../Game/",
        zenpak::compression::Compression::Zlib,
        None,
        [0; 16],
    )
    .unwrap();
    w.add_file(&format!("Content/{HOSTILE}.txt"), b"x").unwrap();
    w.finish().unwrap();
}

fn assert_no_raw_controls(what: &str, text: &str) {
    assert!(
        !text.chars().any(|c| c.is_control() && c != '\n'),
        "{what}: raw control characters in: {text:?}"
    );
}

#[test]
fn control_characters_in_entry_names_are_escaped_and_long_lists_are_bounded() {
    let Some(game) = GameFixture::build("readers-escapes") else {
        return;
    };
    let cwd = game.temp().to_path_buf();
    hostile_pak(&game.mods.join("EscA_P.pak"));
    hostile_pak(&game.mods.join("EscB_P.pak"));
    // Many paks of the game: doctor names a bounded number of them per line.
    for i in 0..40 {
        std::fs::copy(
            &game.engine_pak.pak,
            game.paks.join(format!("pakchunk{}-Windows.pak", 100 + i)),
        )
        .unwrap();
    }
    let root = game.root.to_str().unwrap();
    let paks = game.paks.to_str().unwrap();
    let key = game.aes_key.as_str();
    for args in [
        &["doctor", "--game-dir", root, "--aes-key", key][..],
        &["conflicts", "--game-dir", root, "--aes-key", key],
    ] {
        let done = run(Some(&cwd), args);
        done.ok();
        assert_no_raw_controls(args[0], &done.text());
        let longest = done
            .stdout
            .lines()
            .map(|l| l.chars().count())
            .max()
            .unwrap_or(0);
        assert!(
            longest < 1000,
            "{}: a line of {longest} characters",
            args[0]
        );
    }
    let entry = format!("Game/Content/{HOSTILE}.txt");
    let out_dir = game.temp().join("got");
    std::fs::create_dir_all(&out_dir).unwrap();
    let got = run(Some(&out_dir), &["get", paks, &entry, "--aes-key", key]);
    got.ok();
    assert_no_raw_controls("get", &got.text());
    assert!(got.text().contains("\\u{1b}"), "{}", got.text());
    let missing = run(
        Some(&out_dir),
        &[
            "get",
            paks,
            &format!("Game/Content/{HOSTILE}-missing.txt"),
            "--aes-key",
            key,
        ],
    );
    missing.assert_code(1);
    assert_no_raw_controls("get (missing)", &missing.text());
}
