//! Windows cases in a mod (issue 27, item 2): backslashes in mod.toml's
//! paths, and names that differ only in case, which Windows and the engine
//! take for one file.

use crate::build_incremental::corpus_mod;
use crate::common;

use std::path::Path;

/// Runs zenpak in `dir` with JSON messages.
fn run(dir: &Path, args: &[&str]) -> common::Run {
    common::run(Some(dir), &[&["--message-format", "json"], args].concat())
}

fn set_root(repo: &Path, root: &str, extra: &str) {
    let manifest = repo.join("mod.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    let text = text.replace("root = \"Cooked\"", &format!("root = {root}\n{extra}"));
    std::fs::write(&manifest, text).unwrap();
}

/// `root = ".\Cooked"` is a TOML escape error today: said at the line and
/// the backslash, with what to write instead.
#[test]
fn a_bare_backslash_is_pointed_at() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let repo = corpus_mod(&corpus, dir.path());
    set_root(&repo, r#"".\Cooked""#, "");
    let text = std::fs::read_to_string(repo.join("mod.toml")).unwrap();
    let (line, source) = text
        .lines()
        .enumerate()
        .find(|(_, l)| l.starts_with("root ="))
        .unwrap();
    for command in ["check", "build"] {
        let refused = run(&repo, &[command]);
        let found = refused.assert_code(2).coded("error", "usage");
        assert_eq!(found.len(), 1, "{}", refused.stdout);
        assert_eq!(found[0]["line"], line + 1);
        assert_eq!(found[0]["column"], source.find('\\').unwrap() + 1);
        assert!(found[0]["hint"].is_string());
    }
}

/// Single-quoted and `\\`-escaped backslash paths (and globs) build, the
/// same container as with `/`.
#[test]
fn backslash_paths_are_normalised() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let mut built = Vec::new();
    for (root, include) in [
        (r#""Cooked""#, r#"include = ["Proj/Content/**"]"#),
        (r"'.\Cooked'", r"include = ['Proj\Content\**']"),
        (r#"".\\Cooked""#, r#"include = ["Proj\\Content\\**"]"#),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let repo = corpus_mod(&corpus, dir.path());
        set_root(&repo, root, include);
        run(&repo, &["check"]).assert_code_for(0, root);
        let built_run = run(&repo, &["build", "--release"]);
        let finished = built_run.assert_code_for(0, root).line_of("build-finished");
        assert_eq!(finished["packages"], 3, "{root}: {finished}");
        assert!(
            built_run
                .json()
                .iter()
                .all(|l| l["code"] != "include-matched-nothing"),
            "{root}: {}",
            built_run.stdout
        );
        built.push(std::fs::read(repo.join("target/Repro_P.ucas")).unwrap());
    }
    assert!(built.windows(2).all(|w| w[0] == w[1]));
}

/// Two packages or files whose paths differ only in case: an error naming
/// both, from `check` and from `build`.
#[test]
fn names_that_differ_only_in_case_are_refused() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let repo = corpus_mod(&corpus, dir.path());
    let meshes = repo.join("Cooked/Proj/Content/LevelPrototyping/Meshes");
    for ext in ["uasset", "uexp", "ubulk"] {
        std::fs::copy(
            meshes.join(format!("SM_Cube.{ext}")),
            meshes.join(format!("sm_cube.{ext}")),
        )
        .unwrap();
    }
    let config = repo.join("Cooked/Proj/Config");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(config.join("DefaultGame.ini"), "[A]\n").unwrap();
    std::fs::write(config.join("defaultgame.ini"), "[B]\n").unwrap();
    for command in ["check", "build"] {
        let refused = run(&repo, &[command]);
        let clashes = refused
            .assert_code_for(1, command)
            .coded("error", "case-clash");
        assert_eq!(clashes.len(), 2, "{command}: {}", refused.stdout);
        let files: Vec<&str> = clashes
            .iter()
            .map(|c| c["file"].as_str().unwrap())
            .collect();
        assert!(files.iter().any(|f| f.ends_with(".uasset")), "{files:?}");
        assert!(files.iter().any(|f| f.ends_with(".ini")), "{files:?}");
    }
    assert!(!repo.join("target/Repro_P.utoc").exists());
}
