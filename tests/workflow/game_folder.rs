//! What zenpak may touch: in a game's `~mods` only the files an `install`
//! of the same mod wrote (and still as it wrote them), one `install` or
//! `uninstall` at a time; records are data that never lead outside their
//! folder; a killed zenpak's temporaries are never packed and `clean`
//! removes them. Every test drives the real binary.

use crate::common::{self, run};
use crate::reliability::{big_mod, MANIFEST};

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Stdio;

/// A mod named `name` (its triplet is `<name>_P.*`) in `dir/<folder>`.
fn named_mod(corpus: &Path, dir: &Path, folder: &str, name: &str) -> PathBuf {
    let root = big_mod(corpus, &dir.join(folder), 1 << 20);
    std::fs::write(
        root.join("mod.toml"),
        MANIFEST.replace("\"Big\"", &format!("\"{name}\"")),
    )
    .unwrap();
    root
}

/// A game install folder for project `Game`; returns (game, ~mods).
fn game_folder(dir: &Path, name: &str) -> (PathBuf, PathBuf) {
    let game = dir.join(name);
    std::fs::create_dir_all(game.join("Game/Content/Paks")).unwrap();
    let mods = game.join("Game/Content/Paks/~mods");
    (game, mods)
}

fn diagnostics<'a>(lines: &'a [Value], code: &str) -> Vec<&'a Value> {
    lines
        .iter()
        .filter(|l| l["reason"] == "diagnostic" && l["code"] == code)
        .collect()
}

fn names_in(dir: &Path) -> Vec<String> {
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

fn manifest_of(root: &Path) -> String {
    root.join("mod.toml")
        .canonicalize()
        .unwrap()
        .display()
        .to_string()
}

#[test]
fn install_never_replaces_a_file_it_did_not_write() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // Two mods of the same name, from two repositories.
    let first = named_mod(&corpus, dir.path(), "first", "Same");
    let second = named_mod(&corpus, dir.path(), "second", "Same");
    std::fs::write(
        second.join("Cooked/Game/Config/DefaultGame.ini"),
        "[x]\ny=2\n",
    )
    .unwrap();
    let (game, mods) = game_folder(dir.path(), "Game1");
    let game_arg = game.to_str().unwrap();
    let out = run(Some(&first), &["install", "--game-dir", game_arg]);
    out.ok();
    let installed = std::fs::read(mods.join("Same_P.pak")).unwrap();

    // The dry run says the install would be refused, and whose the files are.
    let out = run(
        Some(&second),
        &[
            "install",
            "--game-dir",
            game_arg,
            "--dry-run",
            "--message-format",
            "json",
        ],
    );
    let report = out.ok().line_of("installed");
    assert_eq!(report["refused"], true);
    let conflicts = report["conflicts"].as_array().unwrap();
    assert_eq!(conflicts.len(), 3, "{report}");
    for conflict in conflicts {
        assert_eq!(conflict["owner"]["kind"], "other-mod");
        assert_eq!(conflict["owner"]["manifest"], manifest_of(&first).as_str());
    }
    assert_eq!(diagnostics(&out.json(), "install-would-refuse").len(), 3);

    // The install itself is refused, naming each file; nothing changes.
    let out = run(
        Some(&second),
        &[
            "install",
            "--game-dir",
            game_arg,
            "--message-format",
            "json",
        ],
    );
    out.assert_code(1);
    let lines = out.json();
    let refused = diagnostics(&lines, "not-owned");
    assert_eq!(refused.len(), 3, "{}", out.text());
    assert!(refused
        .iter()
        .any(|d| d["file"] == mods.join("Same_P.pak").to_str().unwrap()));
    assert_eq!(std::fs::read(mods.join("Same_P.pak")).unwrap(), installed);

    // A file no record names is nobody's: refused too.
    let (game2, mods2) = game_folder(dir.path(), "Game2");
    std::fs::create_dir_all(&mods2).unwrap();
    std::fs::write(mods2.join("Same_P.utoc"), "someone else's build").unwrap();
    let out = run(
        Some(&first),
        &[
            "install",
            "--game-dir",
            game2.to_str().unwrap(),
            "--message-format",
            "json",
        ],
    );
    out.assert_code(1);
    assert_eq!(diagnostics(&out.json(), "not-owned").len(), 1);
    assert_eq!(
        std::fs::read_to_string(mods2.join("Same_P.utoc")).unwrap(),
        "someone else's build"
    );
    assert!(!mods2.join("Same_P.pak").exists());

    // --force replaces, and the files are the second mod's from then on:
    // the first mod's uninstall leaves them, the second's removes them.
    let out = run(
        Some(&second),
        &["install", "--game-dir", game_arg, "--force"],
    );
    out.ok();
    assert_ne!(std::fs::read(mods.join("Same_P.pak")).unwrap(), installed);
    let out = run(Some(&first), &["uninstall", "--game-dir", game_arg]);
    out.ok();
    assert!(mods.join("Same_P.pak").is_file());
    let out = run(Some(&second), &["uninstall", "--game-dir", game_arg]);
    out.ok();
    assert_eq!(names_in(&mods), Vec::<String>::new());
}

#[test]
fn uninstall_removes_only_what_is_still_as_installed() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let root = named_mod(&corpus, dir.path(), "mod", "Mine");
    let (game, mods) = game_folder(dir.path(), "Game");
    let game_arg = game.to_str().unwrap();
    let out = run(Some(&root), &["install", "--game-dir", game_arg]);
    out.ok();
    // The .pak replaced by the user (same size, other bytes); the .utoc
    // copied back over itself (new inode and times, same bytes).
    let pak = mods.join("Mine_P.pak");
    let mut bytes = std::fs::read(&pak).unwrap();
    bytes[0] ^= 0xff;
    std::fs::remove_file(&pak).unwrap();
    std::fs::write(&pak, &bytes).unwrap();
    let utoc = mods.join("Mine_P.utoc");
    let same = std::fs::read(&utoc).unwrap();
    std::fs::remove_file(&utoc).unwrap();
    std::fs::write(&utoc, &same).unwrap();
    let out = run(
        Some(&root),
        &[
            "uninstall",
            "--game-dir",
            game_arg,
            "--message-format",
            "json",
        ],
    );
    out.ok();
    assert_eq!(diagnostics(&out.json(), "uninstall-kept").len(), 1);
    assert_eq!(std::fs::read(&pak).unwrap(), bytes, "the user's file went");
    assert!(!utoc.exists() && !mods.join("Mine_P.ucas").exists());
}

/// Two installs of two mods into one game, started at once, again and
/// again: every time both records survive, and both uninstalls (also at
/// once) leave `~mods` empty.
#[test]
fn installs_at_once_into_one_game_keep_every_record() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let roots = [
        named_mod(&corpus, dir.path(), "a", "Alpha"),
        named_mod(&corpus, dir.path(), "b", "Beta"),
    ];
    for root in &roots {
        run(Some(root), &["build"]).ok();
    }
    let (game, mods) = game_folder(dir.path(), "Game");
    let game_arg = game.to_str().unwrap();
    let at_once = |command: &str| {
        let children: Vec<_> = roots
            .iter()
            .map(|root| {
                common::command(Some(root), &[command, "--game-dir", game_arg])
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for child in children {
            let out = common::Run::from(child.wait_with_output().unwrap());
            out.assert_code_for(0, command);
        }
    };
    for round in 0..6 {
        at_once("install");
        let record: Value =
            serde_json::from_slice(&std::fs::read(mods.join(".zenpak-owned.json")).unwrap())
                .unwrap();
        assert_eq!(
            record["files"].as_array().unwrap().len(),
            6,
            "round {round}: an install's record was lost: {record}"
        );
        at_once("uninstall");
        assert_eq!(
            names_in(&mods),
            Vec::<String>::new(),
            "round {round}: left in ~mods"
        );
    }
}

/// The stamp zenpak records for a file (as in `FileStamp`).
fn stamp_of(path: &Path) -> Value {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::symlink_metadata(path).unwrap();
    let modified = meta
        .modified()
        .unwrap()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    serde_json::json!({
        "size": meta.len(),
        "modified_ns": modified,
        "inode": meta.ino(),
        "changed_ns": i128::from(meta.ctime()) * 1_000_000_000 + i128::from(meta.ctime_nsec()),
    })
}

fn edit_json(path: &Path, edit: impl FnOnce(&mut Value)) {
    let mut value: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    edit(&mut value);
    std::fs::write(path, serde_json::to_vec_pretty(&value).unwrap()).unwrap();
}

/// Records that name `../x` (with the stamp of the file there, so that it
/// looks unchanged) are damaged records: `uninstall` and `clean` warn and
/// delete nothing outside their folder.
#[test]
fn records_naming_paths_outside_their_folder_are_damaged() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let root = named_mod(&corpus, dir.path(), "mod", "Rec");
    let (game, mods) = game_folder(dir.path(), "Game");
    let game_arg = game.to_str().unwrap();
    let out = run(Some(&root), &["install", "--game-dir", game_arg]);
    out.ok();
    let out = run(Some(&root), &["package"]);
    out.ok();

    // The ownership record in ~mods names a file beside ~mods.
    let victim = mods.parent().unwrap().join("victim.pak");
    std::fs::write(&victim, "the game's own").unwrap();
    edit_json(&mods.join(".zenpak-owned.json"), |record| {
        record["files"][0]["name"] = "../victim.pak".into();
        record["files"][0]["stamp"] = stamp_of(&victim);
    });
    let out = run(
        Some(&root),
        &[
            "uninstall",
            "--game-dir",
            game_arg,
            "--message-format",
            "json",
        ],
    );
    out.ok();
    assert!(!diagnostics(&out.json(), "damaged-record").is_empty());
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "the game's own");

    // The build record and the release archives' record name files beside target/.
    let target = root.join("target");
    let outside = [root.join("victim-build.txt"), root.join("victim-zip.txt")];
    for file in &outside {
        std::fs::write(file, "the user's own").unwrap();
    }
    let build_record = walkdir::WalkDir::new(&target)
        .into_iter()
        .flatten()
        .find(|e| e.file_name() == "build.json")
        .expect("a build record")
        .into_path();
    edit_json(&build_record, |record| {
        record["artifacts"][0]["path"] =
            target.join("../victim-build.txt").to_str().unwrap().into();
        record["artifacts"][0]["stamp"] = stamp_of(&outside[0]);
    });
    edit_json(&target.join("package/.zenpak-owned.json"), |record| {
        record["files"][0]["name"] = "../../victim-zip.txt".into();
        record["files"][0]["stamp"] = stamp_of(&outside[1]);
    });
    let out = run(Some(&root), &["clean", "--message-format", "json"]);
    out.ok();
    assert_eq!(
        diagnostics(&out.json(), "damaged-record").len(),
        2,
        "{}",
        out.text()
    );
    for file in &outside {
        assert_eq!(std::fs::read_to_string(file).unwrap(), "the user's own");
    }
}

/// A killed zenpak's temporaries (here: one left in the content folder by
/// an interrupted `unpack`, others in target/) are never packed, and
/// `clean` removes those in target/.
#[test]
fn leftover_temporaries_are_never_packed_and_clean_removes_them() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let root = named_mod(&corpus, dir.path(), "mod", "Tmp");
    let leftover =
        root.join("Cooked/Game/Config/.DefaultGame.ini.4242-00000000deadbeef.zenpak-tmp");
    std::fs::write(&leftover, "[x]\ny=half-writ").unwrap();
    let out = run(Some(&root), &["build", "--message-format", "json"]);
    out.ok();
    assert_eq!(
        diagnostics(&out.json(), "leftover-temporary").len(),
        1,
        "{}",
        out.text()
    );
    let list = run(Some(&root), &["list", "target/Tmp_P.utoc", "--json"]);
    list.ok();
    let listing: Value = serde_json::from_str(&list.stdout).unwrap();
    let paths: Vec<&str> = listing["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert!(
        paths.iter().any(|p| p.ends_with("DefaultGame.ini")),
        "{paths:?}"
    );
    assert!(
        paths.iter().all(|p| !p.contains("zenpak-tmp")),
        "a temporary was packed: {paths:?}"
    );

    // Leftovers in the output folder, the release folder and the cache.
    let out = run(Some(&root), &["package"]);
    out.ok();
    let target = root.join("target");
    let cache = walkdir::WalkDir::new(&target)
        .into_iter()
        .flatten()
        .find(|e| e.file_name() == "build.json")
        .unwrap()
        .into_path();
    let leftovers = [
        target.join(".Tmp_P.ucas.4242-0000000000000001.zenpak-tmp"),
        target.join("package/.Tmp-1.0.0.zip.4242-0000000000000002.zenpak-tmp"),
        cache.with_file_name(".build.json.4242-0000000000000003.zenpak-tmp"),
    ];
    for file in &leftovers {
        std::fs::write(file, "half").unwrap();
    }
    let out = run(Some(&root), &["clean"]);
    out.ok();
    for file in &leftovers {
        assert!(!file.exists(), "{} was left", file.display());
    }
    assert!(!target.exists(), "left in target/: {:?}", names_in(&target));
    assert!(leftover.exists(), "clean reached into the content folder");
}
