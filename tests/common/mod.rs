//! Shared test helpers: finding the shared corpus, the one runner of the
//! binary ([`run`], [`Run`]) and snapshot files ([`assert_snapshot`]).
#![allow(dead_code)]

pub mod cache_pack;
pub mod corpus;
pub mod game_fixture;

pub use corpus::corpus;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// The engine version of a corpus folder, from `engines.tsv` (longest matching prefix).
pub fn engine_of(corpus: &Path, file: &Path) -> Option<zenpak::EngineVersion> {
    let table = std::fs::read_to_string(corpus.join("engines.tsv")).ok()?;
    let rel = file
        .strip_prefix(corpus)
        .ok()?
        .to_string_lossy()
        .replace('\\', "/");
    let mut best: Option<(usize, zenpak::EngineVersion)> = None;
    for line in table.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let mut parts = line.split('\t');
        let (Some(folder), Some(ver)) = (parts.next(), parts.next()) else {
            continue;
        };
        if rel.starts_with(&format!("{folder}/")) && best.is_none_or(|(l, _)| folder.len() > l) {
            best = Some((folder.len(), ver.trim().parse().ok()?));
        }
    }
    best.map(|(_, v)| v)
}

/// Every file under `dir` (sorted) whose name ends with one of `exts`.
pub fn files_with_ext(dir: &Path, exts: &[&str]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_file())
        .map(|e| e.into_path())
        .filter(|p| {
            let name = p
                .file_name()
                .unwrap()
                .to_string_lossy()
                .to_ascii_lowercase();
            exts.iter().any(|x| name.ends_with(&format!(".{x}")))
        })
        .collect();
    out.sort();
    out
}

/// Every legacy package (`.uasset`/`.umap` starting with `C1 83 2A 9E` and a
/// negative legacy version) in the corpus, with its engine version.
pub fn legacy_packages(corpus: &Path) -> Vec<(PathBuf, zenpak::EngineVersion)> {
    files_with_ext(corpus, &["uasset", "umap"])
        .into_iter()
        .filter(|p| {
            let head = std::fs::read(p).unwrap_or_default();
            head.len() >= 8
                && head[..4] == [0xC1, 0x83, 0x2A, 0x9E]
                && i32::from_le_bytes([head[4], head[5], head[6], head[7]]) < 0
        })
        .filter_map(|p| engine_of(corpus, &p).map(|v| (p, v)))
        .collect()
}

/// Corpus packages whose bulk data the corpus lacks: their headers list a
/// `.ubulk` payload (data resources) but the file was not published with
/// them. A build must refuse them; tests that need buildable packages use
/// [`complete_legacy_packages`].
pub const INCOMPLETE_PACKAGES: [&str; 2] = ["A_EmptySound", "SM_BlueCube"];

fn is_incomplete(path: &Path) -> bool {
    path.file_stem()
        .and_then(|s| s.to_str())
        .is_some_and(|s| INCOMPLETE_PACKAGES.contains(&s))
}

/// [`legacy_packages`] without the [`INCOMPLETE_PACKAGES`].
pub fn complete_legacy_packages(corpus: &Path) -> Vec<(PathBuf, zenpak::EngineVersion)> {
    legacy_packages(corpus)
        .into_iter()
        .filter(|(p, _)| !is_incomplete(p))
        .collect()
}

/// Every engine-written Zen package in the corpus (`retoc/**/*.uzenasset`,
/// and the `.uasset` files there without the legacy tag), with its engine version.
pub fn zen_packages(corpus: &Path) -> Vec<(PathBuf, zenpak::EngineVersion)> {
    files_with_ext(&corpus.join("retoc"), &["uzenasset", "uasset"])
        .into_iter()
        .filter(|p| {
            let head = std::fs::read(p).unwrap_or_default();
            !(head.len() >= 4 && head[..4] == [0xC1, 0x83, 0x2A, 0x9E])
        })
        .filter_map(|p| engine_of(corpus, &p).map(|v| (p, v)))
        .collect()
}

/// Runs a command to its end and returns its exit status and peak resident
/// memory in KiB. Measured by `/usr/bin/time` (GNU time's `%M`) where it is
/// there, as [`run_measured`] does: the kernel's accounting of a child of
/// this test process (`wait4`) starts from this process's own peak, which
/// other tests of the binary running beside it raise. Without GNU time,
/// from `wait4`.
#[cfg(unix)]
pub fn run_measuring_memory(
    command: &mut std::process::Command,
) -> (std::process::ExitStatus, u64, std::process::Output) {
    let time = Path::new("/usr/bin/time");
    if !time.is_file() {
        return run_measuring_memory_of_child(command);
    }
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let peak_path =
        std::env::temp_dir().join(format!("zenpak-peak-{}-{n}.txt", std::process::id()));
    let mut timed = Command::new(time);
    timed.arg("-f").arg("%M").arg("-o").arg(&peak_path);
    timed.arg(command.get_program()).args(command.get_args());
    if let Some(dir) = command.get_current_dir() {
        timed.current_dir(dir);
    }
    for (key, value) in command.get_envs() {
        match value {
            Some(value) => timed.env(key, value),
            None => timed.env_remove(key),
        };
    }
    let (status, _, mut output) = run_measuring_memory_of_child(&mut timed);
    let peak = std::fs::read_to_string(&peak_path)
        .ok()
        .and_then(|t| t.lines().last().and_then(|l| l.trim().parse::<u64>().ok()))
        .expect("GNU time wrote the peak");
    let _ = std::fs::remove_file(&peak_path);
    // GNU time reports a non-zero exit on stderr; that line is its, not ours.
    let stderr = String::from_utf8_lossy(&output.stderr)
        .lines()
        .filter(|l| !l.starts_with("Command exited with non-zero status"))
        .collect::<Vec<_>>()
        .join("\n");
    output.stderr = stderr.into_bytes();
    (status, peak, output)
}

/// [`run_measuring_memory`] from the kernel's accounting of the child (`wait4`).
#[cfg(unix)]
fn run_measuring_memory_of_child(
    command: &mut std::process::Command,
) -> (std::process::ExitStatus, u64, std::process::Output) {
    use std::os::unix::process::ExitStatusExt;
    let child = command
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    let pid = child.id() as libc::pid_t;
    // Drain the pipes on threads so the child never blocks on a full pipe.
    let mut child = child;
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out_thread = std::thread::spawn(move || {
        let mut b = Vec::new();
        std::io::Read::read_to_end(&mut stdout, &mut b).ok();
        b
    });
    let err_thread = std::thread::spawn(move || {
        let mut b = Vec::new();
        std::io::Read::read_to_end(&mut stderr, &mut b).ok();
        b
    });
    let mut status: libc::c_int = 0;
    // SAFETY: rusage is plain data; wait4 fills it for our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid, "wait4 failed");
    let exit = std::process::ExitStatus::from_raw(status);
    let output = std::process::Output {
        status: exit,
        stdout: out_thread.join().unwrap(),
        stderr: err_thread.join().unwrap(),
    };
    // Linux reports ru_maxrss in KiB.
    (exit, usage.ru_maxrss as u64, output)
}

/// Runs the real binary (the environment of [`command`]) and returns its
/// [`Run`] and its peak RSS in bytes.
///
/// The peak is measured by `/usr/bin/time` (GNU time's `%M`), which forks
/// the binary from a small process: a child forked from this test process
/// would report the test's own memory as its high-water mark, because
/// Linux carries the pre-`exec` peak into `ru_maxrss`. Without GNU time the
/// peak is sampled from `/proc/<pid>/status` (`VmHWM`) while it runs.
pub fn run_measured(args: &[&str]) -> (Run, u64) {
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let base = std::env::temp_dir().join(format!("zenpak-run-{}-{n}", std::process::id()));
    let err_path = base.with_extension("stderr");
    let out_path = base.with_extension("stdout");
    let peak_path = base.with_extension("peak");
    let time = Path::new("/usr/bin/time");
    let mut command = command(None, args);
    if time.is_file() {
        let mut timed = Command::new(time);
        timed.arg("-f").arg("%M").arg("-o").arg(&peak_path);
        timed.arg(command.get_program()).args(command.get_args());
        for (key, value) in command.get_envs() {
            match value {
                Some(value) => timed.env(key, value),
                None => timed.env_remove(key),
            };
        }
        command = timed;
    }
    let mut child = command
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .spawn()
        .unwrap();
    let mut sampled = 0u64;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if let Ok(s) = std::fs::read_to_string(format!("/proc/{}/status", child.id())) {
            if let Some(kb) = s
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            {
                sampled = sampled.max(kb * 1024);
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    };
    let peak = std::fs::read_to_string(&peak_path)
        .ok()
        .and_then(|t| t.lines().last().and_then(|l| l.trim().parse::<u64>().ok()))
        .map(|kb| kb * 1024)
        .unwrap_or(sampled);
    let mut stderr = std::fs::read_to_string(&err_path).unwrap_or_default();
    // GNU time reports a non-zero exit on stderr; that line is its, not ours.
    stderr = stderr
        .lines()
        .filter(|l| !l.starts_with("Command exited with non-zero status"))
        .collect::<Vec<_>>()
        .join("\n");
    let stdout = std::fs::read_to_string(&out_path).unwrap_or_default();
    for path in [&err_path, &out_path, &peak_path] {
        let _ = std::fs::remove_file(path);
    }
    let run = Run {
        code: status.code().unwrap_or(-1),
        stdout,
        stderr,
    };
    assert!(
        !run.stderr.contains("panicked"),
        "zenpak {args:?} panicked:\n{}",
        run.stderr
    );
    (run, peak)
}

/// The `.usmap` of a package's corpus folder (the nearest folder that holds one), loaded once into `cache`.
pub fn mappings_for(
    package: &Path,
    cache: &mut std::collections::BTreeMap<PathBuf, zenpak::mappings::Mappings>,
) -> Option<PathBuf> {
    let mut dir = package.parent();
    while let Some(d) = dir {
        let found = std::fs::read_dir(d)
            .ok()?
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|x| x == "usmap"));
        if let Some(p) = found {
            if !cache.contains_key(&p) {
                cache.insert(p.clone(), zenpak::mappings::Mappings::load(&p).unwrap());
            }
            return Some(p);
        }
        dir = d.parent();
    }
    None
}

/// A temporary folder from `tempfile`, removed when dropped (also when the
/// test fails); it derefs to its path.
pub struct TestDir(tempfile::TempDir);

impl std::ops::Deref for TestDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        self.0.path()
    }
}

impl AsRef<Path> for TestDir {
    fn as_ref(&self) -> &Path {
        self.0.path()
    }
}

/// A new temporary folder named after the test's `name`.
pub fn temp_dir(name: &str) -> TestDir {
    TestDir(
        tempfile::Builder::new()
            .prefix(&format!("zenpak-{name}-"))
            .tempdir()
            .expect("create a temporary folder"),
    )
}

/// Every file under `dir` (relative `/`-separated path → contents).
pub fn files_under(dir: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    walkdir::WalkDir::new(dir)
        .sort_by_file_name()
        .into_iter()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            let relative = e.path().strip_prefix(dir).unwrap().to_string_lossy();
            (
                relative.replace('\\', "/"),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect()
}

/// The binary's command line with the tests' environment: in `cwd` (the
/// current folder when `None`), no AES key, game folder or user
/// configuration from the environment, no colour. Every test runs the
/// binary through this: [`run`], or [`run_command`] after adding what a test
/// needs (an environment variable, stdin), or `spawn()` for a test that
/// must hold the running process.
pub fn command(cwd: Option<&Path>, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_zenpak"));
    command
        .args(args)
        .env_remove("ZENPAK_AES_KEY")
        .env_remove("ZENPAK_GAME_DIR")
        .env(
            "ZENPAK_CONFIG",
            std::env::temp_dir().join("zenpak-tests-no-user-config.toml"),
        )
        .env("NO_COLOR", "1");
    if let Some(cwd) = cwd {
        command.current_dir(cwd);
    }
    command
}

/// [`command`] run through another program (`strace …`, `bash -c …`):
/// `prefix` (the program and its arguments) first, then the binary and
/// `args`, with the same folder and environment.
pub fn command_through(prefix: &[&std::ffi::OsStr], cwd: Option<&Path>, args: &[&str]) -> Command {
    let zenpak = command(cwd, args);
    let mut through = Command::new(prefix[0]);
    through
        .args(&prefix[1..])
        .arg(zenpak.get_program())
        .args(zenpak.get_args());
    for (key, value) in zenpak.get_envs() {
        match value {
            Some(value) => through.env(key, value),
            None => through.env_remove(key),
        };
    }
    if let Some(cwd) = cwd {
        through.current_dir(cwd);
    }
    through
}

/// Runs the binary with `args` in `cwd` (see [`command`]).
pub fn run(cwd: Option<&Path>, args: &[&str]) -> Run {
    run_command(&mut command(cwd, args))
}

/// Runs a prepared [`command`] to its end. A panic's text on stderr fails
/// the test: zenpak never prints one, whatever the input.
pub fn run_command(command: &mut Command) -> Run {
    Run::from(command.output().expect("run zenpak"))
}

/// The output of a finished zenpak process (a spawned [`command`]'s
/// `wait_with_output`); a panic's text on stderr fails the test.
impl From<std::process::Output> for Run {
    fn from(out: std::process::Output) -> Run {
        let run = Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        };
        assert!(
            !run.stderr.contains("panicked"),
            "zenpak panicked:\n{}",
            run.stderr
        );
        run
    }
}

/// The JSON values of text printed one per line (`--message-format json`,
/// or a log written from it); fails the test on a line that is not JSON.
pub fn json_lines(text: &str) -> Vec<Value> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not a JSON line ({e}): {l}")))
        .collect()
}

/// One finished run of the binary.
#[derive(Debug, Clone)]
pub struct Run {
    /// The exit code (-1 when killed by a signal).
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// Stdout as JSON: one value per line for `--message-format json`, or
    /// the single document a `--json` option prints (also when it spans
    /// several lines). Fails the test when stdout is neither.
    pub fn json(&self) -> Vec<Value> {
        let lines: Result<Vec<Value>, _> = self
            .stdout
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(serde_json::from_str)
            .collect();
        match lines {
            Ok(lines) => lines,
            Err(_) => vec![self.doc()],
        }
    }

    /// Stdout as one JSON document (a `--json` output).
    pub fn doc(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not one JSON document ({e}):\n{}\nstderr:\n{}",
                self.stdout, self.stderr
            )
        })
    }

    /// The JSON lines with this `reason`.
    pub fn lines_of(&self, reason: &str) -> Vec<Value> {
        self.json()
            .into_iter()
            .filter(|l| l["reason"] == reason)
            .collect()
    }

    /// The first JSON line with this `reason` (fails the test when there
    /// is none).
    pub fn line_of(&self, reason: &str) -> Value {
        self.lines_of(reason)
            .into_iter()
            .next()
            .unwrap_or_else(|| panic!("no `{reason}` line:\n{}{}", self.stdout, self.stderr))
    }

    /// The diagnostic lines of `level` (`error`, `warning`, `note`).
    pub fn diagnostics(&self, level: &str) -> Vec<Value> {
        self.lines_of("diagnostic")
            .into_iter()
            .filter(|l| l["level"] == level)
            .collect()
    }

    /// The `code`s of the diagnostics of `level`, in order.
    pub fn codes(&self, level: &str) -> Vec<String> {
        self.diagnostics(level)
            .iter()
            .map(|d| d["code"].as_str().unwrap_or_default().to_string())
            .collect()
    }

    /// The first error diagnostic of a failed run (fails the test when
    /// there is none).
    pub fn error(&self) -> Value {
        let errors = self.diagnostics("error");
        assert!(
            !errors.is_empty(),
            "an error expected:\n{}{}",
            self.stdout,
            self.stderr
        );
        errors.into_iter().next().unwrap()
    }

    /// Stdout then stderr, for a failed assertion's message.
    pub fn text(&self) -> String {
        format!("{}{}", self.stdout, self.stderr)
    }

    /// The diagnostics of `level` with this `code`.
    pub fn coded(&self, level: &str, code: &str) -> Vec<Value> {
        self.diagnostics(level)
            .into_iter()
            .filter(|d| d["code"] == code)
            .collect()
    }

    /// Asserts the exit code, showing both streams when it differs.
    #[track_caller]
    pub fn assert_code(&self, code: i32) -> &Self {
        self.assert_code_for(code, "zenpak")
    }

    /// [`Run::assert_code`] for one of many runs: `what` (the input, the
    /// case) heads the failure message.
    #[track_caller]
    pub fn assert_code_for(&self, code: i32, what: impl std::fmt::Display) -> &Self {
        assert_eq!(
            self.code, code,
            "{what}: exit code\nstdout:\n{}\nstderr:\n{}",
            self.stdout, self.stderr
        );
        self
    }

    /// Asserts a successful run (exit code 0).
    #[track_caller]
    pub fn ok(&self) -> &Self {
        self.assert_code(0)
    }
}

/// The `file` field of a diagnostic, `/`-separated, as its last `n` path
/// components (`file_tail(d, 1)` is the file name).
pub fn file_tail(diagnostic: &Value, n: usize) -> String {
    let file = diagnostic["file"]
        .as_str()
        .unwrap_or_default()
        .replace('\\', "/");
    let parts: Vec<&str> = file.split('/').collect();
    parts[parts.len().saturating_sub(n)..].join("/")
}

/// Text with what changes from run to run made stable: each `(path, name)`
/// pair's path (a temporary folder) replaced by `[name]`, `\` separators as
/// `/`, and durations (`1.23 s`, `12 ms`) as `[TIME]`.
pub fn normalize(text: &str, paths: &[(&Path, &str)]) -> String {
    let mut text = text.to_string();
    for (path, name) in paths {
        // The canonical form first: it contains the plain one on macOS.
        if let Ok(canonical) = path.canonicalize() {
            text = text.replace(&*canonical.to_string_lossy(), &format!("[{name}]"));
        }
        text = text.replace(&*path.to_string_lossy(), &format!("[{name}]"));
    }
    let text = text.replace('\\', "/");
    let mut out = String::with_capacity(text.len());
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let starts_number =
            bytes[i].is_ascii_digit() && (i == 0 || !bytes[i - 1].is_ascii_alphanumeric());
        if starts_number {
            let mut j = i;
            while j < bytes.len() && (bytes[j].is_ascii_digit() || bytes[j] == b'.') {
                j += 1;
            }
            let rest = &text[j..];
            let unit = [" ms", " s", "ms", "s"].into_iter().find(|u| {
                rest.starts_with(u)
                    && !rest[u.len()..]
                        .chars()
                        .next()
                        .is_some_and(|c| c.is_alphanumeric())
            });
            if let Some(unit) = unit {
                out.push_str("[TIME]");
                i = j + unit.len();
                continue;
            }
            out.push_str(&text[i..j]);
            i = j;
            continue;
        }
        let c = text[i..].chars().next().unwrap();
        out.push(c);
        i += c.len_utf8();
    }
    out
}

/// Compares `actual` with the snapshot file `tests/snapshots/<name>.txt`,
/// where the wording of human output is the product (`inspect`, `deps`,
/// `classic consolidate`, the `build` summary). Normalise it first
/// ([`normalize`]).
///
/// To accept a changed output, run the tests with
/// `ZENPAK_UPDATE_SNAPSHOTS=1` (e.g. `ZENPAK_UPDATE_SNAPSHOTS=1 cargo test
/// --test classic`): the files are rewritten, and `git diff tests/snapshots`
/// shows what changed. A missing snapshot fails the test unless updating.
#[track_caller]
pub fn assert_snapshot(name: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/snapshots")
        .join(format!("{name}.txt"));
    let update = std::env::var_os("ZENPAK_UPDATE_SNAPSHOTS").is_some_and(|v| v != "0");
    let expected = std::fs::read_to_string(&path).ok();
    if expected.as_deref() == Some(actual) {
        return;
    }
    if update {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return;
    }
    match expected {
        None => panic!(
            "no snapshot {}; run with ZENPAK_UPDATE_SNAPSHOTS=1 to write it. Output:\n{actual}",
            path.display()
        ),
        Some(expected) => {
            let first = expected
                .lines()
                .zip(actual.lines())
                .position(|(a, b)| a != b)
                .unwrap_or(expected.lines().count().min(actual.lines().count()));
            panic!(
                "snapshot {} differs from line {} (ZENPAK_UPDATE_SNAPSHOTS=1 accepts the new output)\n--- expected\n{expected}\n--- actual\n{actual}",
                path.display(),
                first + 1
            )
        }
    }
}
