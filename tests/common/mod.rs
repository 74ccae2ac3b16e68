//! Shared test helpers: finding the shared corpus.
#![allow(dead_code)]

pub mod game_fixture;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The corpus folder: `$ZENPAK_CORPUS`, else `../shared/corpus` beside the repo.
/// Returns `None` (after saying so) when it is missing; under `CI=true` a
/// missing corpus fails the test instead.
pub fn corpus() -> Option<PathBuf> {
    let dir = match std::env::var_os("ZENPAK_CORPUS") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus"),
    };
    if dir.join("MANIFEST.md").is_file() {
        return Some(dir);
    }
    if std::env::var("CI").map(|v| v == "true").unwrap_or(false) {
        panic!(
            "corpus not found at {} (set ZENPAK_CORPUS); under CI=true a missing corpus is a failure",
            dir.display()
        );
    }
    eprintln!(
        "corpus not found at {}: skipping corpus test",
        dir.display()
    );
    None
}

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
/// memory in KiB (from the kernel's accounting of that one child, `wait4`).
#[cfg(unix)]
pub fn run_measuring_memory(
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

/// Runs the real binary and returns (exit code, stderr, peak RSS in bytes).
///
/// The peak is measured by `/usr/bin/time` (GNU time's `%M`), which forks
/// the binary from a small process: a child forked from this test process
/// would report the test's own memory as its high-water mark, because
/// Linux carries the pre-`exec` peak into `ru_maxrss`. Without GNU time the
/// peak is sampled from `/proc/<pid>/status` (`VmHWM`) while it runs.
pub fn run_measured(args: &[&str]) -> (i32, String, u64) {
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let base = std::env::temp_dir().join(format!("zenpak-run-{}-{n}", std::process::id()));
    let err_path = base.with_extension("stderr");
    let peak_path = base.with_extension("peak");
    let time = Path::new("/usr/bin/time");
    let mut command = if time.is_file() {
        let mut c = Command::new(time);
        c.arg("-f").arg("%M").arg("-o").arg(&peak_path);
        c.arg(env!("CARGO_BIN_EXE_zenpak"));
        c
    } else {
        Command::new(env!("CARGO_BIN_EXE_zenpak"))
    };
    let mut child = command
        .args(args)
        .env_remove("ZENPAK_AES_KEY")
        .stdout(Stdio::null())
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
    let _ = std::fs::remove_file(&err_path);
    let _ = std::fs::remove_file(&peak_path);
    (status.code().unwrap_or(-1), stderr, peak)
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

/// Runs the real binary in `cwd` with `args`, no AES key or game folder
/// from the environment: exit code, stdout, stderr. A panic's text on
/// stderr fails the test (zenpak never prints one, whatever the input).
pub fn zenpak_in(cwd: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_zenpak"))
        .args(args)
        .current_dir(cwd)
        .env_remove("ZENPAK_AES_KEY")
        .env_remove("ZENPAK_GAME_DIR")
        .output()
        .expect("run zenpak");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        !stderr.contains("panicked"),
        "zenpak {args:?} panicked:\n{stderr}"
    );
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr,
    )
}

/// [`zenpak_in`] the current folder.
pub fn zenpak(args: &[&str]) -> (i32, String, String) {
    zenpak_in(Path::new("."), args)
}

/// The `code` of every JSON line (`--message-format json` diagnostics) that has one.
pub fn diagnostic_codes(lines: &[serde_json::Value]) -> Vec<String> {
    lines
        .iter()
        .filter_map(|l| l["code"].as_str().map(String::from))
        .collect()
}
