//! A newcomer's rough edges (issue 27): the release archive's checksum file,
//! OS errors on files zenpak needs, a mod inside the game's `Paks` folder,
//! Git LFS pointer files, and the smaller ones of `unpack`/`uninstall`/`get`.
//! Each runs the real binary on a copy of the example mod.

use std::path::{Path, PathBuf};

use crate::common::{run, temp_dir, Run};

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A copy of the example mod in `parent/name`.
fn example_mod(parent: &Path, name: &str) -> PathBuf {
    let to = parent.join(name);
    crate::cli_output::copy_dir(&repo().join("examples/hello-mod"), &to);
    to
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn package_writes_a_sha256_file_beside_the_zip() {
    let dir = temp_dir("sha256-beside");
    let m = example_mod(dir.as_ref(), "Sums");
    let packaged = run(Some(&m), &["package", "--message-format", "json"]);
    let archive = packaged.ok().line_of("release-archive");
    let zip = PathBuf::from(archive["path"].as_str().unwrap());
    let sums = PathBuf::from(archive["checksum_file"].as_str().unwrap());
    assert_eq!(sums.parent(), zip.parent(), "beside the zip");
    let zip_bytes = std::fs::read(&zip).unwrap();
    let digest = sha256_hex(&zip_bytes);
    assert_eq!(archive["sha256"], digest.as_str());
    // `sha256sum -c` format: hex, two spaces, the file name relative to its folder.
    let text = std::fs::read_to_string(&sums).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1, "{text}");
    let (hash, name) = lines[0].split_once("  ").expect("`<hex>  <name>`");
    assert_eq!(hash, digest);
    assert_eq!(name, zip.file_name().unwrap().to_str().unwrap());
    assert!(text.ends_with('\n'));
    // The build's own JSON gives BLAKE3 per artifact (as the README says).
    let finished = packaged.line_of("build-finished");
    for artifact in finished["artifacts"].as_array().unwrap() {
        let bytes = std::fs::read(artifact["path"].as_str().unwrap()).unwrap();
        assert_eq!(
            artifact["blake3"],
            blake3::hash(&bytes).to_hex().as_str(),
            "{artifact}"
        );
    }
    // `clean` removes both (they are recorded as written by zenpak).
    run(Some(&m), &["clean"]).ok();
    assert!(!zip.exists() && !sums.exists());
}

/// Runs the real binary in `cwd` as a user without special rights: as
/// `nobody` when the tests run as root (root ignores permission bits), as
/// this user otherwise.
fn zenpak_unprivileged(cwd: &Path, args: &[&str]) -> Run {
    use std::os::unix::process::CommandExt;
    let mut cmd = crate::common::command(Some(cwd), args);
    cmd.env("HOME", cwd);
    if unsafe { libc::geteuid() } == 0 {
        cmd.uid(65534).gid(65534);
    }
    crate::common::run_command(&mut cmd)
}

/// Whether the unprivileged user of [`zenpak_unprivileged`] can create a
/// file in `dir` (then a permission test proves nothing and is skipped).
fn unprivileged_can_write(dir: &Path) -> bool {
    use std::os::unix::process::CommandExt;
    let mut cmd = std::process::Command::new("sh");
    cmd.args(["-c", "touch \"$1/.probe\" 2>/dev/null", "sh"])
        .arg(dir);
    if unsafe { libc::geteuid() } == 0 {
        cmd.uid(65534).gid(65534);
    }
    let wrote = cmd.status().is_ok_and(|s| s.success());
    let _ = std::fs::remove_file(dir.join(".probe"));
    wrote
}

fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Every folder under `dir` (and `dir`) open to everyone, for a test run as `nobody`.
fn open_to_all(dir: &Path) {
    for entry in walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
    {
        let mode = if entry.file_type().is_dir() {
            0o777
        } else {
            0o666
        };
        set_mode(entry.path(), mode);
    }
}

#[test]
fn a_read_only_output_folder_is_a_permission_error_naming_the_file() {
    let dir = temp_dir("read-only-out");
    let m = example_mod(dir.as_ref(), "ReadOnly");
    open_to_all(dir.as_ref());
    let target = m.join("target");
    std::fs::create_dir_all(&target).unwrap();
    set_mode(&target, 0o555);
    if unprivileged_can_write(&target) {
        eprintln!("this user can write into a 0o555 folder: skipping");
        return;
    }
    let built = zenpak_unprivileged(&m, &["build", "--message-format", "json"]);
    set_mode(&target, 0o755);
    // An environment problem is exit code 2.
    let errors = built.assert_code(2).diagnostics("error");
    let stdout = &built.stdout;
    assert_eq!(errors.len(), 1, "{stdout}");
    assert_eq!(errors[0]["code"], "permission-denied", "{stdout}");
    let file = PathBuf::from(errors[0]["file"].as_str().expect("the file is named"));
    assert_eq!(file.parent(), Some(target.as_path()), "{stdout}");
    assert!(errors[0]["hint"].as_str().is_some_and(|h| !h.is_empty()));
    let finished = built.line_of("finished");
    assert_eq!(finished["exit_code"], 2);
}

#[test]
fn a_game_folder_the_user_may_not_write_is_a_permission_error_naming_the_file() {
    let dir = temp_dir("read-only-game");
    let m = example_mod(dir.as_ref(), "Locked");
    let game = dir.as_ref().join("Game");
    let mods = game.join("HelloGame/Content/Paks/~mods");
    std::fs::create_dir_all(&mods).unwrap();
    open_to_all(dir.as_ref());
    set_mode(&mods, 0o555);
    if unprivileged_can_write(&mods) {
        eprintln!("this user can write into a 0o555 folder: skipping");
        return;
    }
    let game_arg = game.to_str().unwrap();
    let installed = zenpak_unprivileged(
        &m,
        &[
            "install",
            "--game-dir",
            game_arg,
            "--message-format",
            "json",
        ],
    );
    set_mode(&mods, 0o755);
    let errors = installed.assert_code(2).diagnostics("error");
    let stdout = &installed.stdout;
    assert_eq!(errors.len(), 1, "{stdout}");
    assert_eq!(errors[0]["code"], "permission-denied", "{stdout}");
    let file = PathBuf::from(errors[0]["file"].as_str().unwrap());
    assert!(file.starts_with(&mods), "{stdout}");
    // The hint names the game's mod folder (what zenpak was doing there).
    assert!(
        errors[0]["hint"]
            .as_str()
            .unwrap()
            .contains(mods.to_str().unwrap()),
        "{stdout}"
    );
    assert!(
        std::fs::read_dir(&mods).unwrap().next().is_none(),
        "nothing written"
    );
}

#[test]
fn a_mod_inside_the_games_paks_folder_is_warned_by_check_and_build() {
    let dir = temp_dir("inside-paks");
    let paks = dir.as_ref().join("Game/HelloGame/Content/Paks");
    std::fs::create_dir_all(&paks).unwrap();
    let inside = example_mod(&paks, "MyMod");
    for command in ["check", "build"] {
        let checked = run(Some(&inside), &[command, "--message-format", "json"]);
        assert!(
            checked
                .ok()
                .codes("warning")
                .iter()
                .any(|c| c == "mod-inside-game"),
            "{command}: {}",
            checked.stdout
        );
    }
    run(
        Some(&inside),
        &["build", "--message-format", "json", "--deny-warnings"],
    )
    .assert_code(1);
    // The same mod outside the game: no such warning.
    let outside = example_mod(dir.as_ref(), "MyMod");
    let checked = run(Some(&outside), &["check", "--message-format", "json"]);
    assert!(
        !checked
            .ok()
            .codes("warning")
            .iter()
            .any(|c| c == "mod-inside-game"),
        "{}",
        checked.stdout
    );
}

#[test]
fn install_checks_the_game_folder_before_building() {
    let dir = temp_dir("game-first");
    let m = example_mod(dir.as_ref(), "First");
    let missing = dir.as_ref().join("NoSuchGame");
    run(
        Some(&m),
        &[
            "install",
            "--game-dir",
            missing.to_str().unwrap(),
            "--message-format",
            "json",
        ],
    )
    .assert_code(2)
    .error();
    assert!(
        !m.join("target").exists(),
        "nothing may be built for a wrong game folder"
    );
    // A folder that is not this game's (no HelloGame/Content/Paks): refused before building too.
    let other = dir.as_ref().join("Other/OtherGame/Content/Paks");
    std::fs::create_dir_all(&other).unwrap();
    run(
        Some(&m),
        &[
            "install",
            "--game-dir",
            dir.as_ref().join("Other").to_str().unwrap(),
            "--message-format",
            "json",
        ],
    )
    .assert_code(2);
    assert!(!m.join("target").exists());
}

/// The text Git leaves in place of a file kept in LFS until `git lfs pull`.
pub(crate) fn lfs_pointer_text(bytes: &[u8]) -> String {
    format!(
        "version https://git-lfs.github.com/spec/v1\noid sha256:{}\nsize {}\n",
        sha256_hex(bytes),
        bytes.len()
    )
}

#[test]
fn git_lfs_pointers_are_named_by_check_build_and_inspect() {
    let dir = temp_dir("lfs");
    let m = example_mod(dir.as_ref(), "Lfs");
    let content = m.join("Cooked/HelloGame/Content/HelloMod");
    let header = content.join("ST_HelloMod.uasset");
    let ini = m.join("Cooked/HelloGame/Config/DefaultHelloMod.ini");
    for file in [&header, &ini] {
        let bytes = std::fs::read(file).unwrap();
        std::fs::write(file, lfs_pointer_text(&bytes)).unwrap();
    }
    for command in ["check", "build"] {
        let refused = run(Some(&m), &[command, "--message-format", "json"]);
        let errors = refused.assert_code_for(1, command).diagnostics("error");
        let stdout = &refused.stdout;
        let mut named: Vec<PathBuf> = errors
            .iter()
            .filter(|e| e["code"] == "lfs-pointer")
            .map(|e| PathBuf::from(e["file"].as_str().unwrap()))
            .collect();
        named.sort();
        let mut expected = vec![ini.clone(), header.clone()];
        expected.sort();
        assert_eq!(named, expected, "{command}: {stdout}");
        // Nothing else is said about a file (no parse error of the pointer text).
        let with_file = errors.iter().filter(|e| e["file"].is_string()).count();
        assert_eq!(with_file, 2, "{command}: {stdout}");
        assert!(!m.join("target/Lfs_P.pak").exists() && !m.join("target/HelloMod_P.pak").exists());
    }
    let error = run(
        Some(&m),
        &[
            "inspect",
            header.to_str().unwrap(),
            "--message-format",
            "json",
        ],
    )
    .assert_code(1)
    .error();
    assert_eq!(error["code"], "lfs-pointer", "{error}");
}

/// The example mod built: its folder and `.utoc`.
fn built_example(parent: &Path, name: &str) -> (PathBuf, PathBuf) {
    let m = example_mod(parent, name);
    run(Some(&m), &["build", "-q"]).ok();
    let utoc = m.join("target/HelloMod_P.utoc");
    assert!(utoc.is_file());
    (m, utoc)
}

#[test]
fn unpack_refuses_a_folder_that_is_not_empty_unless_forced() {
    let dir = temp_dir("unpack-force");
    let (_, utoc) = built_example(dir.as_ref(), "Unpack");
    let out = dir.as_ref().join("out");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("mine.txt"), b"keep me").unwrap();
    let utoc = utoc.to_str().unwrap();
    let out_arg = out.to_str().unwrap();
    let error = run(
        Some(dir.as_ref()),
        &["unpack", utoc, out_arg, "--message-format", "json"],
    )
    .assert_code(2)
    .error();
    assert_eq!(error["code"], "usage", "{error}");
    let files = crate::common::files_under(&out);
    assert_eq!(
        files.keys().collect::<Vec<_>>(),
        ["mine.txt"],
        "nothing written"
    );
    let unpacked = run(
        Some(dir.as_ref()),
        &[
            "unpack",
            utoc,
            out_arg,
            "--force",
            "--message-format",
            "json",
        ],
    )
    .ok()
    .line_of("unpacked");
    assert!(unpacked["files"].as_u64().unwrap() >= 3, "{unpacked}");
    assert!(out
        .join("HelloGame/Content/HelloMod/ST_HelloMod.uzenasset")
        .is_file());
    assert_eq!(std::fs::read(out.join("mine.txt")).unwrap(), b"keep me");
    // An empty or missing folder needs no --force.
    let fresh = dir.as_ref().join("fresh");
    run(
        Some(dir.as_ref()),
        &["unpack", utoc, fresh.to_str().unwrap()],
    )
    .ok();
}

#[test]
fn uninstall_removes_the_mods_folder_install_created_and_only_that() {
    let dir = temp_dir("uninstall-folder");
    let m = example_mod(dir.as_ref(), "Gone");
    for (game, mods_existed) in [("Fresh", false), ("Modded", true)] {
        let game = dir.as_ref().join(game);
        let paks = game.join("HelloGame/Content/Paks");
        std::fs::create_dir_all(&paks).unwrap();
        if mods_existed {
            std::fs::create_dir_all(paks.join("~mods")).unwrap();
        }
        let game = game.to_str().unwrap();
        run(Some(&m), &["install", "--game-dir", game, "-q"]).ok();
        assert!(paks.join("~mods/HelloMod_P.pak").is_file());
        let report = run(
            Some(&m),
            &["uninstall", "--game-dir", game, "--message-format", "json"],
        )
        .ok()
        .line_of("uninstalled");
        let removed: Vec<&str> = report["removed"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p.as_str().unwrap())
            .collect();
        if mods_existed {
            // The folder was there before: it stays, empty (no record, no lock file).
            assert!(paks.join("~mods").is_dir());
            assert_eq!(std::fs::read_dir(paks.join("~mods")).unwrap().count(), 0);
            assert_eq!(removed.len(), 3, "{report}");
        } else {
            assert!(!paks.join("~mods").exists(), "{report}");
            assert_eq!(removed.len(), 4, "{report}");
            assert!(
                removed.iter().any(|p| Path::new(p) == paks.join("~mods")),
                "{report}"
            );
        }
    }
    // A folder install created but that holds someone else's file stays.
    let game = dir.as_ref().join("Shared");
    let paks = game.join("HelloGame/Content/Paks");
    std::fs::create_dir_all(&paks).unwrap();
    let game = game.to_str().unwrap();
    assert_eq!(
        run(Some(&m), &["install", "--game-dir", game, "-q"]).code,
        0
    );
    std::fs::write(paks.join("~mods/Other_P.pak"), b"not zenpak's").unwrap();
    assert_eq!(
        run(Some(&m), &["uninstall", "--game-dir", game, "-q"]).code,
        0
    );
    assert!(paks.join("~mods/Other_P.pak").is_file());
}

#[test]
fn get_writes_to_standard_output_and_points_zen_packages_at_extract() {
    let dir = temp_dir("get-stdout");
    let (hello, utoc) = built_example(dir.as_ref(), "Get");
    let utoc = utoc.to_str().unwrap();
    let file = "HelloGame/Content/HelloMod/ST_HelloMod.uzenasset";
    let to_file = dir.as_ref().join("got.uzenasset");
    let got = run(
        Some(dir.as_ref()),
        &[
            "get",
            utoc,
            file,
            "-o",
            to_file.to_str().unwrap(),
            "--message-format",
            "json",
        ],
    );
    let notes = got.ok().coded("note", "zen-package");
    assert!(!notes.is_empty(), "no zen-package note: {}", got.stdout);
    // The command the hint gives, run in the mod (which names the engine),
    // extracts that package (placeholders for the game's imports).
    let hint = notes[0]["hint"].as_str().unwrap();
    let command = hint.split('`').nth(1).unwrap();
    let extracted = dir.as_ref().join("extracted");
    let mut args: Vec<&str> = command
        .split(' ')
        .skip(1)
        .map(|a| {
            if a == "DIR" {
                extracted.to_str().unwrap()
            } else {
                a
            }
        })
        .collect();
    assert_eq!(args[1], utoc, "{hint}");
    args.extend(["--allow-unresolved", "--message-format", "json"]);
    let summary = run(Some(&hello), &args).ok().line_of("extracted");
    assert_eq!(summary["packages"], 1, "{hint}");
    assert!(extracted
        .join("HelloGame/Content/HelloMod/ST_HelloMod.uasset")
        .is_file());
    let expected = std::fs::read(&to_file).unwrap();
    assert_eq!(got.line_of("written")["bytes"], expected.len() as u64);

    // `-o -`: the bytes on stdout, nothing else there.
    let out = crate::common::command(Some(dir.as_ref()), &["get", utoc, file, "-o", "-"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(out.stdout, expected);
    assert!(!dir.as_ref().join("-").exists());
    // A loose file: no note.
    let out = crate::common::command(
        Some(dir.as_ref()),
        &[
            "get",
            utoc,
            "HelloGame/Config/DefaultHelloMod.ini",
            "-o",
            "-",
        ],
    )
    .output()
    .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        out.stdout,
        std::fs::read(
            repo().join("examples/hello-mod/Cooked/HelloGame/Config/DefaultHelloMod.ini")
        )
        .unwrap()
    );
    // JSON messages and the file cannot share stdout.
    run(
        Some(dir.as_ref()),
        &["get", utoc, file, "-o", "-", "--message-format", "json"],
    )
    .assert_code(2);
}
