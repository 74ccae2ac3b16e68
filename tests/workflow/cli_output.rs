//! One output policy for every command, checked on the real binary: with
//! `--message-format json` every stdout line is one JSON object of the one
//! schema below (errors included), the last one `finished` with the exit
//! code; exit codes are 0 ok / 1 failed / 2 usage or manifest error; and
//! `--quiet` prints nothing on stdout for a success.

use crate::common::{self, Run};

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// Every `reason` a JSON line may have.
const REASONS: &[&str] = &[
    "diagnostic",
    "finished",
    "doctor",
    "package",
    "build-finished",
    "check",
    "mod-created",
    "diff",
    "converted",
    "inspected",
    "files",
    "verified",
    "unpacked",
    "written",
    "dependencies",
    "consolidated",
    "extracted",
    "release-archive",
    "release-plan",
    "installed",
    "watching",
    "added",
    "uninstalled",
    "cleaned",
    "man-pages",
    "version",
    "conflict",
    "conflicts",
];

fn optional_string(line: &Value, key: &str) {
    let value = &line[key];
    assert!(
        value.is_null() || value.is_string(),
        "`{key}` must be a string when present: {line}"
    );
}

/// Checks one diagnostic line's fields and their JSON types.
fn check_diagnostic(line: &Value) {
    let level = line["level"].as_str().unwrap_or_default();
    assert!(
        ["error", "warning", "note"].contains(&level),
        "diagnostic level: {line}"
    );
    assert!(
        line["code"].as_str().is_some_and(|c| !c.is_empty()),
        "diagnostic code: {line}"
    );
    assert!(
        line["message"].as_str().is_some_and(|m| !m.is_empty()),
        "diagnostic message: {line}"
    );
    optional_string(line, "file");
    optional_string(line, "hint");
    assert!(
        line["structure"].is_null() || line["structure"].is_array(),
        "diagnostic structure: {line}"
    );
    for key in ["offset", "line", "column"] {
        assert!(
            line[key].is_null() || line[key].is_u64(),
            "diagnostic {key}: {line}"
        );
    }
}

/// Parses and checks every stdout line of a `--message-format json` run.
fn check_json_lines(run: &Run, command: &str, expected_code: i32) {
    assert_eq!(
        run.code, expected_code,
        "{command}: exit code\nstdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    let lines: Vec<Value> = run
        .stdout
        .lines()
        .map(|l| {
            serde_json::from_str(l)
                .unwrap_or_else(|e| panic!("{command}: not a JSON line ({e}): {l}"))
        })
        .collect();
    assert!(!lines.is_empty(), "{command}: no JSON output");
    for line in &lines {
        let reason = line["reason"].as_str().unwrap_or_default();
        assert!(
            REASONS.contains(&reason),
            "{command}: unknown reason `{reason}`: {line}"
        );
        if reason == "diagnostic" {
            check_diagnostic(line);
        }
        super::message_schema::validate(line);
    }
    let last = lines.last().unwrap();
    assert_eq!(last["reason"], "finished", "{command}: last line: {last}");
    assert_eq!(last["exit_code"], expected_code, "{command}: {last}");
    assert_eq!(last["success"], expected_code == 0, "{command}: {last}");
    assert!(last["warnings"].is_u64() && last["errors"].is_u64());
    if expected_code != 0 {
        assert!(
            !run.diagnostics("error").is_empty(),
            "{command}: a failure says why as an error diagnostic: {}",
            run.stdout
        );
    }
}

/// Runs `args` with `--message-format json` and checks the stream.
pub(crate) fn json(dir: &Path, args: &[&str], expected_code: i32) -> Run {
    let mut all = vec!["--message-format", "json"];
    all.extend_from_slice(args);
    let run = common::run(Some(dir), &all);
    check_json_lines(&run, &args.join(" "), expected_code);
    run
}

/// Runs `args` with `--quiet`: success, nothing on stdout.
fn quiet(dir: &Path, args: &[&str]) {
    let mut all = vec!["--quiet"];
    all.extend_from_slice(args);
    let run = common::run(Some(dir), &all);
    run.assert_code_for(0, format_args!("{args:?}"));
    assert!(
        run.stdout.is_empty(),
        "{args:?} --quiet printed: {}",
        run.stdout
    );
}

/// Copies the folder `from` to `to`, less a `target` folder at its top.
pub(crate) fn copy_dir(from: &Path, to: &Path) {
    for entry in walkdir::WalkDir::new(from) {
        let entry = entry.unwrap();
        let rel = entry.path().strip_prefix(from).unwrap();
        if rel.starts_with("target") {
            continue;
        }
        let dest = to.join(rel);
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&dest).unwrap();
        } else {
            std::fs::copy(entry.path(), &dest).unwrap();
        }
    }
}

/// A copy of the example mod, built.
pub(crate) fn built_example(root: &Path) -> PathBuf {
    let repo = root.join("hello-mod");
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/hello-mod"),
        &repo,
    );
    repo
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn mod_workflow_commands_follow_the_policy() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = built_example(tmp.path());

    // build: success (a line per package, then the summary), then the same quiet.
    let built = json(&repo, &["build", "--force"], 0);
    assert!(!built.lines_of("package").is_empty());
    assert!(!built.lines_of("build-finished").is_empty());
    quiet(&repo, &["build"]);
    json(&repo, &["check"], 0);
    quiet(&repo, &["check"]);
    json(&repo, &["build", "--no-such-flag"], 2);
    json(&repo, &["check", "--manifest-path", "missing/mod.toml"], 2);

    // list / verify / unpack / get / inspect on the built container.
    let utoc = repo.join("target/HelloMod_P.utoc");
    let listed = json(&repo, &["list", s(&utoc)], 0).line_of("files");
    assert!(!listed["files"].as_array().unwrap().is_empty());
    quiet(&repo, &["list", s(&utoc)]);
    json(&repo, &["verify", s(&utoc)], 0);
    quiet(&repo, &["verify", s(&utoc)]);
    let unpacked = tmp.path().join("unpacked");
    json(&repo, &["unpack", s(&utoc), s(&unpacked)], 0);
    let first = listed["files"][0]["path"].as_str().unwrap();
    let got = tmp.path().join("got.bin");
    json(&repo, &["get", s(&utoc), first, "-o", s(&got)], 0);
    json(&repo, &["get", s(&utoc), "No/Such/File.txt"], 1);
    json(&repo, &["inspect", s(&utoc)], 0);
    quiet(&repo, &["inspect", s(&utoc)]);
    json(&repo, &["list"], 2);

    // A damaged container: verify fails with exit 1 and says where.
    let ucas = repo.join("target/HelloMod_P.ucas");
    let mut bytes = std::fs::read(&ucas).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0xff;
    let damaged = tmp.path().join("damaged");
    std::fs::create_dir_all(&damaged).unwrap();
    for ext in ["utoc", "pak"] {
        std::fs::copy(
            repo.join(format!("target/HelloMod_P.{ext}")),
            damaged.join(format!("HelloMod_P.{ext}")),
        )
        .unwrap();
    }
    std::fs::write(damaged.join("HelloMod_P.ucas"), bytes).unwrap();
    let lines = json(&repo, &["verify", s(&damaged.join("HelloMod_P.utoc"))], 1).json();
    assert!(lines
        .iter()
        .any(|l| l["level"] == "error" && l["file"].is_string()));

    // package / install / uninstall / clean.
    json(&repo, &["package"], 0);
    let game = tmp.path().join("Game");
    std::fs::create_dir_all(game.join("HelloGame/Content/Paks")).unwrap();
    json(&repo, &["install", "--game-dir", s(&game), "--dry-run"], 0);
    json(&repo, &["install", "--game-dir", s(&game)], 0);
    json(&repo, &["uninstall", "--game-dir", s(&game)], 0);
    json(&repo, &["install"], 2);
    json(&repo, &["clean"], 0);
    quiet(&repo, &["clean"]);

    // A build that fails: a package's export data cut short.
    let uexp = walkdir::WalkDir::new(repo.join("Cooked"))
        .into_iter()
        .map(|e| e.unwrap().into_path())
        .find(|p| p.extension().is_some_and(|x| x == "uexp"))
        .unwrap();
    std::fs::write(&uexp, b"short").unwrap();
    let lines = json(&repo, &["build"], 1).json();
    assert!(lines
        .iter()
        .any(|l| l["level"] == "error" && l["offset"].is_u64() && l["file"].is_string()));
    json(&repo, &["package"], 1);
    json(&repo, &["check"], 1);
}

#[test]
fn new_init_and_shell_commands_follow_the_policy() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let created = json(
        dir,
        &[
            "new",
            "JsonMod",
            "--engine",
            "5.6",
            "--project",
            "Game",
            "--vcs",
            "none",
        ],
        0,
    );
    assert!(!created.lines_of("mod-created").is_empty());
    // The folder exists now.
    json(
        dir,
        &["new", "JsonMod", "--engine", "5.6", "--project", "Game"],
        2,
    );
    json(
        dir,
        &["new", "Bad", "--engine", "9.9", "--project", "Game"],
        2,
    );
    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    json(
        &empty,
        &[
            "init",
            "--name",
            "InitMod",
            "--engine",
            "5.4",
            "--project",
            "Game",
            "--vcs",
            "none",
        ],
        0,
    );
    json(dir, &["man", "--out-dir", s(&dir.join("man"))], 0);
    quiet(dir, &["man", "--out-dir", s(&dir.join("man2"))]);
    json(dir, &["--version"], 0);
    json(dir, &["no-such-command"], 2);
}

#[test]
fn package_commands_follow_the_policy() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let cube = corpus.join("retoc/UE5.6/SM_Cube.uasset");
    let zen = corpus.join("retoc/UE5.6/SM_Cube.uzenasset");
    let out = dir.join("SM_Cube.uzenasset");
    json(
        dir,
        &["convert", s(&cube), "--engine", "5.6", "-o", s(&out)],
        0,
    );
    quiet(
        dir,
        &[
            "convert",
            s(&cube),
            "--engine",
            "5.6",
            "-o",
            s(&dir.join("q.uzenasset")),
        ],
    );
    json(
        dir,
        &[
            "convert",
            s(&dir.join("missing.uasset")),
            "--engine",
            "5.6",
            "-o",
            s(&out),
        ],
        1,
    );
    json(dir, &["convert", s(&cube), "-o", s(&out)], 2);

    let diff = json(dir, &["diff", s(&zen), s(&out), "--engine", "5.6"], 0).line_of("diff");
    assert_eq!(diff["identical"], true, "zenpak equals the engine: {diff}");
    let other = corpus.join("retoc/UE5.6/T_Quinn_01_D.uzenasset");
    json(dir, &["diff", s(&zen), s(&other), "--engine", "5.6"], 1);

    json(dir, &["inspect", s(&cube), "--engine", "5.6"], 0);
    json(dir, &["inspect", s(&zen), "--engine", "5.6"], 0);
    quiet(dir, &["inspect", s(&zen), "--engine", "5.6"]);
    // A file zenpak does not know is bad input (1), not a usage error.
    let unknown = dir.join("notes.txt");
    std::fs::write(&unknown, b"hello").unwrap();
    json(dir, &["inspect", s(&unknown)], 1);
    // A Zen package needs its engine: a usage error.
    json(dir, &["inspect", s(&zen)], 2);
    let usmap = corpus.join("uassetapi/TestUE5_6/BpThirdPerson/ExplicitEnumValuesExample.usmap");
    json(dir, &["inspect", s(&usmap)], 0);

    // Classic packages: dependencies found and missing.
    let ut99 = corpus.join("classic/ut99");
    if ut99.is_dir() {
        let map = ut99.join("Maps/Entry.unr");
        json(dir, &["inspect", s(&map)], 0);
        json(dir, &["deps", s(&map)], 0);
        json(
            dir,
            &["deps", s(&map), "--search", s(&ut99.join("Textures"))],
            1,
        );
    }
}

#[test]
fn extract_follows_the_policy() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = built_example(tmp.path());
    json(&repo, &["build"], 0);
    let utoc = repo.join("target/HelloMod_P.utoc");
    let out = tmp.path().join("extracted");
    // Script imports cannot be resolved without the game: exit 1, named.
    let lines = json(
        &repo,
        &["extract", s(&utoc), "-o", s(&out), "--engine", "5.6"],
        1,
    )
    .json();
    assert!(lines.iter().any(|l| l["level"] == "error"));
    let extracted = json(
        &repo,
        &[
            "extract",
            s(&utoc),
            "-o",
            s(&out),
            "--engine",
            "5.6",
            "--allow-unresolved",
            "--force",
        ],
        0,
    );
    assert!(!extracted.lines_of("extracted").is_empty());
    json(&repo, &["extract", s(&utoc)], 2);
}

#[test]
fn conflicts_follows_the_policy() {
    let Some(game) = common::game_fixture::GameFixture::build("policy-conflicts") else {
        return;
    };
    let dir = game.temp();
    let root = s(&game.root);
    let key = game.aes_key.as_str();
    let listed = json(dir, &["conflicts", "--game-dir", root, "--aes-key", key], 0);
    assert!(!listed.lines_of("conflict").is_empty());
    quiet(dir, &["conflicts", "--game-dir", root, "--aes-key", key]);
    // The encrypted base container without its key: the work fails.
    json(dir, &["conflicts", "--game-dir", root], 1);
    // Not a game folder: a usage error.
    json(dir, &["conflicts", "--game-dir", s(dir)], 2);
}

#[test]
fn completions_and_man_pages_are_generated() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let bash = common::run(Some(dir), &["completions", "bash"]);
    bash.ok();
    for command in ["build", "package", "install", "extract", "verify"] {
        assert!(
            bash.stdout.contains(command),
            "bash completion lacks {command}"
        );
    }
    assert!(
        bash.stdout.contains("complete -F"),
        "not a bash completion script"
    );
    for shell in ["zsh", "fish", "powershell", "elvish"] {
        let run = common::run(Some(dir), &["completions", shell]);
        run.assert_code_for(0, shell);
        assert!(run.stdout.contains("build"), "{shell}");
    }
    common::run(Some(dir), &["completions", "tcsh"]).assert_code(2);

    let man = dir.join("man");
    let run = common::run(Some(dir), &["man", "--out-dir", s(&man)]);
    run.ok();
    let page = std::fs::read_to_string(man.join("zenpak.1")).unwrap();
    assert!(
        page.starts_with(".ie") || page.contains(".TH zenpak"),
        "{page}"
    );
    assert!(page.contains(".TH"), "a man page has a title header");
    let build = std::fs::read_to_string(man.join("zenpak-build.1")).unwrap();
    assert!(build.contains(".TH") && build.contains("deny"), "{build}");
}

/// `git` is needed to test `new`'s repository; CI machines have it.
fn git_available() -> bool {
    let found = Command::new("git").arg("--version").output().is_ok();
    if !found {
        assert!(
            std::env::var_os("CI").is_none_or(|v| v != "true"),
            "git is missing on CI"
        );
        eprintln!("skipping: git is not installed");
    }
    found
}

#[test]
fn new_makes_a_git_repository_unless_inside_one() {
    if !git_available() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let run = common::run(
        Some(dir),
        &["new", "GitMod", "--engine", "5.6", "--project", "Game"],
    );
    run.ok();
    assert!(dir.join("GitMod/.git").is_dir(), "new runs git init");
    // Inside that repository, a second mod is not a repository of its own.
    let inner = dir.join("GitMod/mods");
    std::fs::create_dir_all(&inner).unwrap();
    let run = common::run(
        Some(&inner),
        &["new", "Inner", "--engine", "5.6", "--project", "Game"],
    );
    run.ok();
    assert!(inner.join("Inner/mod.toml").is_file());
    assert!(
        !inner.join("Inner/.git").exists(),
        "no repository inside a repository"
    );
    // --vcs none: no repository.
    let run = common::run(
        Some(dir),
        &[
            "new",
            "Plain",
            "--engine",
            "5.6",
            "--project",
            "Game",
            "--vcs",
            "none",
        ],
    );
    run.ok();
    assert!(!dir.join("Plain/.git").exists());
}

/// Issue 51: a manifest error on a 1 MB line shows about 120 characters of
/// it around the caret, `…` where it is cut, not the whole line; the caret
/// stays under the column the error names.
#[test]
fn a_manifest_error_on_a_long_line_shows_a_window_around_the_caret() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = built_example(tmp.path());
    let manifest = std::fs::read_to_string(repo.join("mod.toml")).unwrap();
    let long = "x".repeat(1 << 20);
    for (what, line) in [
        // The error at the end of the line (a TOML syntax error after the string).
        ("at the end", format!("description = \"{long}\" junk")),
        // The error at its start (an unknown key whose value is the long part).
        ("at the start", format!("descripton = \"{long}\"")),
        // In the middle, with a tab and a control character around it.
        (
            "in the middle",
            format!("description = \"{long}\"\t\u{7}{long}"),
        ),
    ] {
        let text = manifest.replace(
            "description = \"A string table and a settings asset that uses it, for the game HelloGame.\"",
            &line,
        );
        assert_ne!(text, manifest);
        std::fs::write(repo.join("mod.toml"), &text).unwrap();
        let out = common::run(Some(&repo), &["check"]);
        out.assert_code_for(2, what);
        let longest = out.stderr.lines().map(|l| l.chars().count()).max().unwrap();
        assert!(longest <= 400, "{what}: a line of {longest} characters");
        let lines: Vec<&str> = out.stderr.lines().collect();
        let caret = lines
            .iter()
            .position(|l| l.trim_end().ends_with('^') && l.contains('|'))
            .unwrap_or_else(|| panic!("{what}: no caret line:\n{}", out.stderr));
        let source = lines[caret - 1];
        assert!(source.contains('…'), "{what}: {source}");
        assert!(
            !source.contains('\u{7}') && !source.contains('\t'),
            "{what}"
        );
        let json = json(&repo, &["check"], 2).error();
        let column = json["column"].as_u64().unwrap() as usize;
        // The caret's character in the window is the one at the column.
        let at = lines[caret].chars().position(|c| c == '^').unwrap();
        let shown: Vec<char> = source.chars().collect();
        let full: Vec<char> = text
            .lines()
            .nth(json["line"].as_u64().unwrap() as usize - 1)
            .unwrap()
            .chars()
            .collect();
        let expected = full.get(column - 1).copied().unwrap_or(' ');
        let expected = match expected {
            '\t' => ' ',
            c if c.is_control() => '\u{fffd}',
            c => c,
        };
        assert_eq!(
            shown.get(at).copied().unwrap_or(' '),
            expected,
            "{what}: {source}\n{}",
            lines[caret]
        );
    }
}
