//! What a newcomer's half-configured mod gets (issue 27, items 3 and 5):
//! `package` and `install` refuse an empty mod that `build` only warns
//! about, and `check` refuses exactly the manifests `build` refuses, with
//! the same exit code and error code.

use std::path::{Path, PathBuf};

use crate::common::{run, temp_dir};

/// A mod in `dir` whose manifest takes the example mod's cooked files in
/// place, at `engine`, with the `include` line in `[content]` (or none) and
/// `[output] compression`.
fn write_mod(dir: &Path, engine: &str, include: &str, compression: &str) -> PathBuf {
    let cooked = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/hello-mod/Cooked");
    let root = cooked.to_string_lossy().replace('\\', "/");
    let manifest = format!(
        "[mod]\nname = \"m\"\nversion = \"0.1.0\"\n\n[game]\nengine = \"{engine}\"\nproject = \"HelloGame\"\n\n\
         [content]\nroot = \"{root}\"\n{include}\n\n[output]\ndir = \"target\"\ncompression = \"{compression}\"\n"
    );
    std::fs::write(dir.join("mod.toml"), manifest).unwrap();
    dir.to_path_buf()
}

const JSON: [&str; 2] = ["--message-format", "json"];

#[test]
fn empty_mod_builds_with_a_warning_but_package_and_install_refuse() {
    let tmp = temp_dir("empty-mod");
    let dir = write_mod(&tmp, "5.6", "include = [\"Typo/**\"]", "none");

    assert!(run(Some(&dir), &["build", JSON[0], JSON[1]])
        .ok()
        .codes("warning")
        .contains(&"empty-mod".to_string()));

    let packaged = run(Some(&dir), &["package", JSON[0], JSON[1]]);
    let errors = packaged.assert_code(1).diagnostics("error");
    assert_eq!(errors.len(), 1, "{}", packaged.stdout);
    assert_eq!(errors[0]["code"], "empty-mod");
    assert!(errors[0]["file"].as_str().unwrap().ends_with("mod.toml"));
    assert!(errors[0]["hint"].is_string());
    assert!(
        !dir.join("target/package").exists()
            || std::fs::read_dir(dir.join("target/package"))
                .unwrap()
                .next()
                .is_none(),
        "no archive is written"
    );

    let game = &tmp.join("game");
    std::fs::create_dir_all(game.join("HelloGame/Content/Paks")).unwrap();
    let game_arg = game.to_string_lossy().into_owned();
    let installed = run(
        Some(&dir),
        &["install", "--game-dir", &game_arg, JSON[0], JSON[1]],
    );
    assert_eq!(installed.assert_code(1).codes("error"), ["empty-mod"]);
    assert!(
        !game.join("HelloGame/Content/Paks/~mods").exists(),
        "nothing is written into the game folder"
    );

    // The same mod with its content selected ships.
    let dir = write_mod(&tmp, "5.6", "", "none");
    run(Some(&dir), &["package", JSON[0], JSON[1]]).ok();
}

/// `check` and `build` on the same manifest: exit code and error codes.
fn check_and_build(dir: &Path) -> [(i32, Vec<String>); 2] {
    ["check", "build"].map(|command| {
        let checked = run(Some(dir), &[command, JSON[0], JSON[1]]);
        (checked.code, checked.codes("error"))
    })
}

#[test]
fn check_refuses_what_build_refuses_with_the_same_codes() {
    let tmp = temp_dir("check-agrees");
    let dir = write_mod(&tmp, "5.6", "", "oodle");
    let [check, build] = check_and_build(&dir);
    assert_eq!(check, build);
    assert_eq!(check, (1, vec!["unsupported".to_string()]));

    let dir = write_mod(&tmp, "4.27", "", "none");
    let [check, build] = check_and_build(&dir);
    assert_eq!(check, build);
    assert_eq!(check, (2, vec!["usage".to_string()]));

    let dir = write_mod(&tmp, "5.6", "", "none");
    let [check, build] = check_and_build(&dir);
    assert_eq!((check.0, build.0), (0, 0));
}

#[test]
fn example_lists_the_compression_values_check_and_build_accept() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let example = std::fs::read_to_string(repo.join("mod.toml.example")).unwrap();
    let line = example
        .lines()
        .find(|l| l.starts_with("# Compression of container blocks"))
        .expect("mod.toml.example documents [output] compression");
    let listed: Vec<&str> = line.split('"').skip(1).step_by(2).collect();
    let writable: Vec<String> = zenpak::manifest::Compression::WRITABLE
        .iter()
        .map(|m| m.engine_name().to_ascii_lowercase())
        .collect();
    assert_eq!(listed, writable);
    // Every listed value builds and checks; the read-only one is refused by both.
    let tmp = temp_dir("compression-values");
    for value in &writable {
        let dir = write_mod(&tmp, "5.6", "", value);
        let [check, _] = check_and_build(&dir);
        assert_eq!(check.0, 0, "check refuses {value}");
    }
}
