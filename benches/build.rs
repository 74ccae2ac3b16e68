//! Benchmark of `zenpak build` on a large generated mod (not a timed test).
//!
//! `cargo bench --bench build` generates a mod of `ZENPAK_BENCH_PACKAGES`
//! packages (default 10,000) by placing the shared corpus's UE 5.6 packages
//! under many paths (each renamed with zenpak's legacy writer to the name its
//! new path gives it), then times:
//!
//! - the I/O floor: reading every input file and writing the bytes to one
//!   file, synced; and again in three pairs interleaved with `build
//!   --force`, whose median ratio is the one to read (a single floor run
//!   moves by a factor of three on a disk that has just deleted much); each
//!   pair also has a floor that replaces its previous copy through a
//!   rename, as `--force` replaces its output (the file system frees the
//!   old file inside the rename: 1 GiB takes most of a second on a disk
//!   mounted with `discard`);
//! - a full build (empty cache), and `--force`, after which it prints the
//!   SHA-256 of each file of the triplet (speed work must leave them equal);
//! - a rebuild with nothing changed, beside its floor: one `fstatat` per
//!   input folder and file on the same threads (the stat floor);
//! - three rebuilds, each after one `.uexp` changed (development builds:
//!   they extend the previous `.ucas`; their median is the one to read),
//!   and the same with `--release` (the canonical layout, written anew);
//! - reading the built container back: `zenpak unpack` (Zen packages as
//!   they are) and `zenpak extract` (Zen → legacy, script objects taken
//!   from the generated packages' `/Script/` imports), in three
//!   interleaved pairs with the median ratio, written to memory
//!   (`/dev/shm`, when it has room: zenpak's own work) and to the bench's
//!   folder (the disk's: see [`read_back`]);
//! - large inputs (`ZENPAK_BENCH_LARGE=0` leaves them out; about 30 s):
//!   small mods, each with one input of 1 GiB (sparse: mostly holes): a
//!   loose file (into the companion pak), the same with Marvel Rivals'
//!   pak cipher, a package's `.ubulk`, and a shader library (a valid cooked
//!   archive whose shaders are 64 MiB and 256 KiB of code), each built as a
//!   development build (empty cache) and with `--force`; the peak memory of
//!   each must stay below 256 MiB whatever the input's size;
//!
//! - the property codec (`ZENPAK_BENCH_JSON=0` leaves it out; a few
//!   seconds): `to-json` + `from-json` of every corpus package through the
//!   library (MiB/s of package bytes), and a DataTable of about 10 MB
//!   (`ZENPAK_BENCH_TABLE_MB`; DT_ChatEntry's rows copied under new names) written by `zenpak
//!   from-json` and read by `zenpak to-json`, each timed as a process;
//!
//! each phase running the real `zenpak build` binary as a user does, and
//! reports per phase wall time, CPU time (user + system), minor page faults
//! and peak resident memory of that process (from `wait4`; Linux counts
//! the bench's own resident set at the spawn in it, which the last line
//! gives), and how many cores were kept busy (CPU / wall). `ZENPAK_BENCH_DIR` keeps the generated
//! mod in a folder of your choice instead of a temporary one;
//! `RAYON_NUM_THREADS=1` measures one thread; `ZENPAK_BENCH_PEER` names a
//! peer's binary run as `PEER to-zen <content folder> <out.utoc> --version
//! UE5_6` (retoc's command line) on the same tree, timed like zenpak's in
//! five interleaved pairs with `build --force` (median and ratio), as run
//! and durable (with the `sync` that puts each one's output on disk).
//!
//! Linearity: `ZENPAK_BENCH_PACKAGES=1000,10000,30000` (several counts)
//! or `ZENPAK_BENCH_THREADS=1,2` runs, for each count, a tree of its own in
//! `<bench dir>/packages-<count>` with its copy floor, and for each thread
//! count (default 1 and 2) a first build, `--force`, a no-change rebuild
//! and three one-file-changed rebuilds (the row has their median), then
//! prints one table row per count and thread count (wall, CPU, peak memory,
//! `--force` per 1,000 packages).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use zenpak::legacy::{EngineString, PackageFiles};
use zenpak::EngineVersion;

const ENGINE: EngineVersion = EngineVersion::UE5_6;

fn corpus() -> PathBuf {
    std::env::var_os("ZENPAK_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus"))
}

/// A corpus package to copy: header, export data and bulk companions.
struct Template {
    stem: String,
    files: PackageFiles,
    package: zenpak::legacy::LegacyPackage,
    extension: String,
}

fn templates(corpus: &Path) -> Vec<Template> {
    let folders = [
        "retoc/UE5.6",
        "uassetapi/TestUE5_6/BpThirdPerson",
        "uassetapi/TestManyAssets/SN2",
    ];
    let mut out = Vec::new();
    for folder in folders {
        for entry in walkdir::WalkDir::new(corpus.join(folder)).sort_by_file_name() {
            let entry = entry.expect("walk corpus");
            let path = entry.path();
            let extension = path
                .extension()
                .and_then(|e| e.to_str())
                .unwrap_or("")
                .to_string();
            if extension != "uasset" && extension != "umap" {
                continue;
            }
            let files = PackageFiles::load(path).expect("load corpus package");
            let Ok(package) = files.read_package(Some(ENGINE)) else {
                continue;
            };
            let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
            out.push(Template {
                stem,
                files,
                package,
                extension,
            });
        }
    }
    out
}

/// Writes `template` as the package `/Game/<relative folder>/<stem>` under `content`.
fn place(template: &Template, content: &Path, folder: &str, stem: &str) {
    let mut package = template.package.clone();
    package.summary.package_name = EngineString::new(format!("/Game/{folder}/{stem}"));
    let old_size = i64::from(template.package.summary.total_header_size);
    let first = package.write().expect("write header");
    let shift = first.len() as i64 - old_size;
    // Export data follows the header in the combined stream: move it with the header.
    for export in &mut package.exports {
        export.serial_offset += shift;
    }
    package.summary.bulk_data_start_offset += shift;
    let header = package.write().expect("write header");
    let dir = content.join(folder);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(format!("{stem}.{}", template.extension)), header).unwrap();
    std::fs::write(dir.join(format!("{stem}.uexp")), &template.files.uexp).unwrap();
    for bulk in &template.files.bulk {
        let name = bulk
            .path
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let suffix = &name[name.find('.').unwrap()..];
        std::fs::copy(&bulk.path, dir.join(format!("{stem}{suffix}"))).unwrap();
    }
}

/// Measures [`stat_floor`] (the best of three) and prints it beside the
/// no-change rebuild `fresh`; returns it.
fn print_stat_floor(root: &Path, threads: usize, fresh: &Measured) -> Duration {
    let (time, stats) = (0..3).map(|_| stat_floor(root, threads)).min().unwrap();
    println!(
        "{:<28} {:>9.1} ms  ({stats} stats on {threads} threads; the no-change rebuild is {:.2}x this)",
        "stat floor",
        time.as_secs_f64() * 1000.0,
        fresh.wall.as_secs_f64() / time.as_secs_f64()
    );
    time
}

/// The floor of a no-change check: one `fstatat` per folder and per file
/// under `<root>/Cooked`, each file's relative to its folder (opened once),
/// on `threads` threads — what checking that nothing changed cannot go
/// below without trusting something it did not look at. Returns the time
/// and the number of stats.
fn stat_floor(root: &Path, threads: usize) -> (Duration, usize) {
    use std::os::unix::ffi::OsStrExt;
    let c = |bytes: &[u8]| std::ffi::CString::new(bytes).unwrap();
    let mut by_folder: std::collections::BTreeMap<PathBuf, Vec<std::ffi::CString>> =
        Default::default();
    for entry in walkdir::WalkDir::new(root.join("Cooked"))
        .into_iter()
        .filter_map(|e| e.ok())
    {
        if entry.file_type().is_dir() {
            by_folder.entry(entry.into_path()).or_default();
        } else if let Some(parent) = entry.path().parent() {
            let name = c(entry.file_name().as_bytes());
            by_folder
                .entry(parent.to_path_buf())
                .or_default()
                .push(name);
        }
    }
    let folders: Vec<(std::ffi::CString, Vec<std::ffi::CString>)> = by_folder
        .into_iter()
        .map(|(path, files)| (c(path.as_os_str().as_bytes()), files))
        .collect();
    let stats = folders.iter().map(|(_, f)| 1 + f.len()).sum();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let started = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..threads.max(1) {
            scope.spawn(|| {
                // SAFETY: an all-zero `stat` is valid; every call is given
                // NUL-terminated names and a `stat` to fill.
                let mut st: libc::stat = unsafe { std::mem::zeroed() };
                while let Some((folder, files)) =
                    folders.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
                {
                    unsafe {
                        libc::fstatat(
                            libc::AT_FDCWD,
                            folder.as_ptr(),
                            &mut st,
                            libc::AT_SYMLINK_NOFOLLOW,
                        );
                        let fd = libc::open(
                            folder.as_ptr(),
                            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
                        );
                        for name in files {
                            libc::fstatat(fd, name.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW);
                        }
                        libc::close(fd);
                    }
                }
            });
        }
    });
    (started.elapsed(), stats)
}

/// Flips one bit near the end of `file`, in place (a second call flips it back).
fn flip(file: &Path) {
    let mut bytes = std::fs::read(file).unwrap();
    let at = bytes.len() - 5;
    bytes[at] ^= 1;
    std::fs::write(file, bytes).unwrap();
}

/// [`ONE_FILE_RUNS`] one-file-changed rebuilds by `run`, each after one
/// more flip of `changed`'s byte (a change every time), the byte put back
/// after: the median's time with the highest peak of them.
fn one_file_changed(changed: &Path, mut run: impl FnMut() -> Measured) -> Measured {
    let mut runs: Vec<Measured> = (0..ONE_FILE_RUNS)
        .map(|_| {
            flip(changed);
            run()
        })
        .collect();
    if ONE_FILE_RUNS % 2 == 1 {
        flip(changed);
    }
    let peak_mib = runs.iter().map(|m| m.peak_mib).fold(0.0, f64::max);
    runs.sort_by_key(|m| m.wall);
    Measured {
        peak_mib,
        ..runs.swap_remove(ONE_FILE_RUNS / 2)
    }
}

fn reset_peak_memory() {
    // Writing 5 to clear_refs resets the peak resident set size (Linux).
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

fn peak_memory_mib() -> f64 {
    status_kib("VmHWM:").map_or(f64::NAN, |kib| kib as f64 / 1024.0)
}

/// The bench's own resident set (KiB), 0 when unknown.
fn resident_kib() -> u64 {
    status_kib("VmRSS:").unwrap_or(0)
}

/// A `kB` field of `/proc/self/status`.
fn status_kib(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let value = status.lines().find_map(|l| l.strip_prefix(field))?;
    value.trim().trim_end_matches("kB").trim().parse().ok()
}

/// The largest resident set the bench had when it spawned a measured
/// child: no child's peak reads below it (see [`measure_with`]).
static BENCH_RSS_KIB: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// The last line of every run: what a peak cannot go below.
fn print_peak_floor() {
    println!(
        "peaks include the bench's own resident set at each spawn: at most {:.1} MiB",
        BENCH_RSS_KIB.load(std::sync::atomic::Ordering::Relaxed) as f64 / 1024.0
    );
}

/// What one run of a process cost.
struct Measured {
    wall: Duration,
    cpu: Duration,
    minor_faults: i64,
    peak_mib: f64,
}

/// Runs `program args` in `dir` and measures it with `wait4` (its own
/// rusage, not this process's).
fn measure(program: &Path, args: &[&str], dir: &Path) -> Measured {
    measure_with(program, args, dir, &[])
}

/// [`measure`] with `env` added to the child's environment.
fn measure_with(program: &Path, args: &[&str], dir: &Path, env: &[(&str, &str)]) -> Measured {
    // Kept in a file, shown only if the command fails (an extract without
    // the game warns once per unresolved import).
    // Outside the mod: a file made in its folder is a change the next
    // build's no-change check must notice (and then scans).
    let stderr_path =
        std::env::temp_dir().join(format!("zenpak-bench-stderr-{}.txt", std::process::id()));
    let stderr = std::fs::File::create(&stderr_path).unwrap();
    // Linux counts in a child's peak (`ru_maxrss`) the memory of the
    // process it was spawned from, as it was at the `exec`: the bench gives
    // freed memory back and resets its own high-water mark first, so that a
    // peak is the child's own unless the child stays below the bench's
    // resident set, which is recorded for the last line.
    // SAFETY: malloc_trim only returns free heap memory to the system.
    #[cfg(target_env = "gnu")]
    unsafe {
        libc::malloc_trim(0);
    }
    reset_peak_memory();
    BENCH_RSS_KIB.fetch_max(resident_kib(), std::sync::atomic::Ordering::Relaxed);
    // Each run starts with nothing waiting to be written: otherwise a run
    // that leaves a GiB for the kernel to write later (the peer does not
    // sync its output) slows down whichever run comes next.
    // SAFETY: sync takes no arguments and cannot fail.
    unsafe { libc::sync() };
    let started = Instant::now();
    // Reaped by `wait4` below, which also gives its rusage.
    #[allow(clippy::zombie_processes)]
    let child = std::process::Command::new(program)
        .args(args)
        .envs(env.iter().copied())
        .current_dir(dir)
        .stdout(std::process::Stdio::null())
        .stderr(stderr)
        .spawn()
        .unwrap_or_else(|e| panic!("{}: {e}", program.display()));
    let mut status = 0;
    // SAFETY: an all-zero rusage is valid; wait4 fills it for our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut usage) };
    let wall = started.elapsed();
    assert_eq!(pid, child.id() as libc::pid_t, "wait4 failed");
    let output = std::fs::read_to_string(&stderr_path).unwrap_or_default();
    let _ = std::fs::remove_file(&stderr_path);
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "{} {args:?} failed:\n{}",
        program.display(),
        output.lines().rev().take(20).collect::<Vec<_>>().join("\n")
    );
    let time = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    Measured {
        wall,
        cpu: time(usage.ru_utime) + time(usage.ru_stime),
        minor_faults: usage.ru_minflt,
        peak_mib: usage.ru_maxrss as f64 / 1024.0,
    }
}

fn report(name: &str, m: &Measured) {
    println!(
        "{name:<28} {:>9.1} ms  cpu {:>8.1} ms  cores busy {:>4.2}  faults {:>8}  peak {:>6.1} MiB",
        m.wall.as_secs_f64() * 1000.0,
        m.cpu.as_secs_f64() * 1000.0,
        m.cpu.as_secs_f64() / m.wall.as_secs_f64(),
        m.minor_faults,
        m.peak_mib
    );
}

fn phase(name: &str, root: &Path, args: &[&str]) -> Measured {
    command_phase(name, root, "build", args)
}

fn command_phase(name: &str, root: &Path, command: &str, args: &[&str]) -> Measured {
    let zenpak = Path::new(env!("CARGO_BIN_EXE_zenpak"));
    let mut all = vec![command, "--quiet"];
    all.extend_from_slice(args);
    let measured = measure(zenpak, &all, root);
    report(name, &measured);
    measured
}

/// The SHA-256 of each file of the built triplet: a change that is meant to
/// be about speed alone must leave these as they were.
fn print_triplet_digest(root: &Path) {
    use sha2::Digest;
    let mut files: Vec<PathBuf> = walkdir::WalkDir::new(root.join("target"))
        .sort_by_file_name()
        .into_iter()
        .filter_map(|e| e.ok())
        .map(|e| e.into_path())
        .filter(|p| {
            p.extension()
                .is_some_and(|e| e == "utoc" || e == "ucas" || e == "pak")
        })
        .collect();
    files.sort();
    for file in files {
        let mut hasher = sha2::Sha256::new();
        std::io::copy(&mut std::fs::File::open(&file).unwrap(), &mut hasher).unwrap();
        println!(
            "sha256 {:x}  {}",
            hasher.finalize(),
            file.strip_prefix(root).unwrap_or(&file).display()
        );
    }
}

/// Reads the built container back with `unpack` and `extract`, in
/// interleaved pairs, into two places: memory (a folder in `/dev/shm`, when
/// it has room), which measures zenpak's own work, and the bench's folder.
/// On a disk, both commands' time is mostly the file system creating
/// files: on an ext4 without a journal, each new inode is looked for past
/// every inode deleted in the last minutes (`recently_deleted`), so each
/// pair, run after the last one's files were deleted, costs the kernel more
/// than the one before, and `extract`, which creates two files per package
/// where `unpack` creates one, twice as much more.
fn read_back(root: &Path) {
    let utoc = walkdir::WalkDir::new(root.join("target"))
        .sort_by_file_name()
        .into_iter()
        .filter_map(|e| e.ok())
        .map(|e| e.into_path())
        .find(|p| p.extension().is_some_and(|e| e == "utoc"))
        .expect("the build wrote a .utoc");
    let ucas_bytes = std::fs::metadata(utoc.with_extension("ucas")).map_or(0, |m| m.len());
    // Read once first, so that `unpack` and `extract` both start with it
    // cached, whatever the build left in memory.
    std::io::copy(
        &mut std::fs::File::open(utoc.with_extension("ucas")).unwrap(),
        &mut std::io::sink(),
    )
    .unwrap();
    // Room for both outputs, with a margin.
    let memory = Path::new("/dev/shm");
    let memory = (memory.is_dir() && free_bytes(memory) > 3 * ucas_bytes)
        .then(|| tempfile::tempdir_in(memory).ok())
        .flatten();
    if let Some(memory) = &memory {
        read_back_pairs(
            root,
            &utoc,
            ucas_bytes,
            memory.path(),
            "in memory (/dev/shm)",
        );
    }
    read_back_pairs(
        root,
        &utoc,
        ucas_bytes,
        &root.join("read-back"),
        "on the bench's disk",
    );
    let _ = std::fs::remove_dir(root.join("read-back"));
}

/// Free bytes of the file system holding `path` (0 when unknown).
fn free_bytes(path: &Path) -> u64 {
    use std::os::unix::ffi::OsStrExt;
    let Ok(path) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return 0;
    };
    // SAFETY: an all-zero statvfs is valid; statvfs fills it for a valid path.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    match unsafe { libc::statvfs(path.as_ptr(), &mut st) } {
        0 => st.f_bavail as u64 * st.f_frsize as u64,
        _ => 0,
    }
}

/// [`read_back`]'s pairs into `dir` (emptied before each pair and after).
fn read_back_pairs(root: &Path, utoc: &Path, ucas_bytes: u64, dir: &Path, place: &str) {
    const PAIRS: usize = 3;
    let ucas_mib = ucas_bytes as f64 / 1048576.0;
    let unpacked = dir.join("unpacked");
    let extracted = dir.join("extracted");
    let utoc_arg = utoc.to_str().unwrap();
    let content = root.join("Cooked");
    println!("read back {place}:");
    // In interleaved pairs: a ratio is read from runs side by side.
    let (mut unpacks, mut extracts) = (Vec::new(), Vec::new());
    let mut extract_peak = 0.0f64;
    for _ in 0..PAIRS {
        let _ = std::fs::remove_dir_all(&unpacked);
        let _ = std::fs::remove_dir_all(&extracted);
        let unpack = command_phase(
            "unpack",
            root,
            "unpack",
            &[utoc_arg, unpacked.to_str().unwrap()],
        );
        let extract = command_phase(
            "extract (Zen -> legacy)",
            root,
            "extract",
            &[
                utoc_arg,
                "-o",
                extracted.to_str().unwrap(),
                "--engine",
                ENGINE.as_str(),
                "--script-objects",
                content.to_str().unwrap(),
                // The generated packages import the game's, which are not there.
                "--allow-unresolved",
            ],
        );
        println!(
            "  extract / unpack = {:.2}x wall, {:.2}x page faults",
            extract.wall.as_secs_f64() / unpack.wall.as_secs_f64(),
            extract.minor_faults as f64 / unpack.minor_faults.max(1) as f64
        );
        unpacks.push(unpack.wall);
        extracts.push(extract.wall);
        extract_peak = extract_peak.max(extract.peak_mib);
    }
    unpacks.sort();
    extracts.sort();
    let (unpack, extract) = (unpacks[PAIRS / 2], extracts[PAIRS / 2]);
    println!(
        "container {ucas_mib:.0} MiB read back {place}, median of {PAIRS} interleaved pairs: extract / unpack = {:.2}x wall; unpack {:.0} MiB/s, extract {:.0} MiB/s; extract peak {:.1} MiB",
        extract.as_secs_f64() / unpack.as_secs_f64(),
        ucas_mib / unpack.as_secs_f64(),
        ucas_mib / extract.as_secs_f64(),
        extract_peak
    );
    let _ = std::fs::remove_dir_all(&unpacked);
    let _ = std::fs::remove_dir_all(&extracted);
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` passes nothing and must stay fast.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let corpus = corpus();
    if !corpus.join("MANIFEST.md").is_file() {
        eprintln!(
            "corpus not found at {}; set ZENPAK_CORPUS",
            corpus.display()
        );
        std::process::exit(1);
    }
    let sizes = bench_sizes();
    let temporary = tempfile::tempdir().unwrap();
    let root = std::env::var_os("ZENPAK_BENCH_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| temporary.path().to_path_buf());
    let templates = templates(&corpus);
    assert!(!templates.is_empty(), "no UE 5.6 packages in the corpus");
    if sizes.len() > 1 || std::env::var_os("ZENPAK_BENCH_THREADS").is_some() {
        linearity(&root, &sizes, &bench_threads(), &templates);
        print_peak_floor();
        return;
    }
    let count = sizes[0];
    let _ = std::fs::remove_dir_all(root.join("target"));
    generate(&root, count, &templates);
    let (floor_time, changed) = copy_floor(&root);

    let full = phase("first build", &root, &[]);
    let forced = phase("build --force", &root, &["--force"]);
    print_triplet_digest(&root);
    let fresh = phase("no-change rebuild", &root, &[]);
    let threads = std::env::var("RAYON_NUM_THREADS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    print_stat_floor(&root, threads, &fresh);
    // The byte is put back after: a change again for `--release`.
    let one = one_file_changed(&changed, || phase("one-file-changed rebuild", &root, &[]));
    let one_release = phase("one-file-changed --release", &root, &["--release"]);
    let ratio = |a: &Measured, b: Duration| a.wall.as_secs_f64() / b.as_secs_f64();
    println!(
        "threads {}: first build / copy floor = {:.2}x; --force / floor = {:.2}x; no-change rebuild {:.1} ms",
        std::env::var("RAYON_NUM_THREADS").unwrap_or_else(|_| "all".into()),
        ratio(&full, floor_time),
        ratio(&forced, floor_time),
        fresh.wall.as_secs_f64() * 1000.0
    );
    println!(
        "one-file-changed (median of {ONE_FILE_RUNS}, {:.1} ms): {:.0}% of the first build, {:.1}% of --force (with --release: {:.0}% of --force)",
        one.wall.as_secs_f64() * 1000.0,
        100.0 * ratio(&one, full.wall),
        100.0 * ratio(&one, forced.wall),
        100.0 * ratio(&one_release, forced.wall)
    );
    compare_with_floor(&root);
    read_back(&root);
    if std::env::var_os("ZENPAK_BENCH_LARGE").is_none_or(|v| v != "0") {
        large_inputs(&root, &templates);
    }
    if std::env::var_os("ZENPAK_BENCH_JSON").is_none_or(|v| v != "0") {
        asset_json(&corpus, &root);
    }
    if let Some(peer) = std::env::var_os("ZENPAK_BENCH_PEER") {
        compare_with_peer(Path::new(&peer), &root);
    }
    print_peak_floor();
}

/// The engine `engines.tsv` gives a corpus file (longest folder prefix).
fn corpus_engine(corpus: &Path, file: &Path) -> Option<EngineVersion> {
    let table = std::fs::read_to_string(corpus.join("engines.tsv")).ok()?;
    let rel = file
        .strip_prefix(corpus)
        .ok()?
        .to_string_lossy()
        .replace('\\', "/");
    table
        .lines()
        .filter_map(|l| l.split_once('\t'))
        .filter(|(prefix, _)| rel.starts_with(prefix))
        .max_by_key(|(prefix, _)| prefix.len())
        .and_then(|(_, v)| v.trim().parse().ok())
}

/// The `.usmap` nearest above a corpus file.
fn corpus_mappings(file: &Path) -> Option<PathBuf> {
    file.ancestors().skip(1).find_map(|dir| {
        std::fs::read_dir(dir)
            .ok()?
            .flatten()
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|x| x == "usmap"))
    })
}

/// The property codec: the corpus through `to-json` + `from-json` in the
/// library, and a 10 MB DataTable through the two commands.
fn asset_json(corpus: &Path, root: &Path) {
    use zenpak::mappings::Mappings;
    use zenpak::properties::document::AssetDocument;
    use zenpak::properties::SchemaSources;
    let mut packages = Vec::new();
    for entry in walkdir::WalkDir::new(corpus.join("uassetapi")).sort_by_file_name() {
        let path = entry.unwrap().into_path();
        if path
            .extension()
            .is_some_and(|x| x == "uasset" || x == "umap")
        {
            if let Some(engine) = corpus_engine(corpus, &path) {
                packages.push((path, engine));
            }
        }
    }
    let mut cache: std::collections::BTreeMap<PathBuf, Mappings> = Default::default();
    let mut loaded = Vec::new();
    for (path, engine) in packages {
        let Ok(files) = PackageFiles::load(&path) else {
            continue;
        };
        let usmap = corpus_mappings(&path);
        if let Some(u) = &usmap {
            if !cache.contains_key(u) {
                cache.insert(u.clone(), Mappings::load(u).unwrap());
            }
        }
        loaded.push((files, engine, usmap));
    }
    let bytes: usize = loaded
        .iter()
        .map(|(f, _, _)| f.header.len() + f.uexp.len())
        .sum();
    let start = Instant::now();
    let mut json_bytes = 0usize;
    for (files, engine, usmap) in &loaded {
        let mappings = usmap.as_ref().map(|u| &cache[u]);
        let package = files.read_package(Some(*engine)).unwrap();
        let sources = SchemaSources::beside(&files.path);
        let doc = AssetDocument::read(files, &package, mappings, &sources).unwrap();
        let json = doc.to_json().unwrap();
        json_bytes += json.len();
        let back = AssetDocument::from_json(&json, mappings, &sources).unwrap();
        let written = back.write(mappings, &sources).unwrap();
        assert!(written.header == files.header && written.uexp == files.uexp);
    }
    let took = start.elapsed().as_secs_f64();
    println!(
        "to-json + from-json of {} corpus packages ({:.1} MiB, {:.1} MiB of JSON) in {:.0} ms: {:.1} MiB/s",
        loaded.len(),
        bytes as f64 / 1048576.0,
        json_bytes as f64 / 1048576.0,
        took * 1000.0,
        bytes as f64 / 1048576.0 / took
    );

    // A ~10 MB DataTable: DT_ChatEntry with its first row copied under new names.
    let game = corpus.join("uassetapi/TestUE5_7/NanosWorld");
    let source = game.join("Content/NanosWorld/Core/Chat/DT_ChatEntry.uasset");
    let usmap = corpus_mappings(&source).unwrap();
    let mappings = Mappings::load(&usmap).unwrap();
    let files = PackageFiles::load(&source).unwrap();
    let package = files.read_package(Some(EngineVersion::UE5_7)).unwrap();
    let mut doc =
        AssetDocument::read(&files, &package, Some(&mappings), &SchemaSources::none()).unwrap();
    let row_bytes = files.uexp.len() / 13;
    let rows = doc.exports[0].data.as_mut().unwrap().rows.as_mut().unwrap();
    let first = rows.0[0].1.clone();
    let target: usize = std::env::var("ZENPAK_BENCH_TABLE_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10);
    for i in 0..(target << 20) / row_bytes {
        rows.0.push((format!("Row_{i}"), first.clone()));
    }
    let dir = root.join("asset-json");
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("DT_Big.json");
    std::fs::write(&json, doc.to_json().unwrap()).unwrap();
    let zenpak = Path::new(env!("CARGO_BIN_EXE_zenpak"));
    let out = dir.join("DT_Big.uasset");
    let (json_s, out_s, usmap_s) = (
        json.to_str().unwrap(),
        out.to_str().unwrap(),
        usmap.to_str().unwrap(),
    );
    let from = measure(
        zenpak,
        &[
            "from-json",
            json_s,
            "-o",
            out_s,
            "--mappings",
            usmap_s,
            "-q",
        ],
        &dir,
    );
    let size = std::fs::metadata(out.with_extension("uexp")).unwrap().len() as f64 / 1048576.0;
    report(&format!("from-json {size:.1} MiB table"), &from);
    let back = dir.join("DT_Big.back.json");
    let to = measure(
        zenpak,
        &[
            "to-json",
            out_s,
            "--engine",
            "5.7",
            "--mappings",
            usmap_s,
            "-o",
            back.to_str().unwrap(),
            "-q",
        ],
        &dir,
    );
    report(&format!("to-json {size:.1} MiB table"), &to);
    let json_mib = std::fs::metadata(&back).unwrap().len() as f64 / 1048576.0;
    println!("  the table's document is {json_mib:.0} MiB of JSON");
    let _ = std::fs::remove_file(&back);
    let _ = std::fs::remove_file(&json);
}

/// Size of each large input.
const LARGE: u64 = 1 << 30;

/// Builds a mod per kind of large input (see the module doc) and reports
/// each build's peak memory.
fn large_inputs(root: &Path, templates: &[Template]) {
    let started = Instant::now();
    let base = root.join("large-inputs");
    let _ = std::fs::remove_dir_all(&base);
    const GENERIC: &str = "engine = \"5.6\"\nproject = \"LargeGame\"\n";
    // Marvel Rivals' profile seals each pak entry with its own cipher
    // (the modder's key in a key file).
    const RIVALS: &str = "engine = \"5.3\"\nproject = \"LargeGame\"\nprofile = \"marvel-rivals\"\n[output]\nkey-file = \"key.txt\"\n";
    type Make<'a> = &'a dyn Fn(&Path);
    let loose = |content: &Path| {
        let dir = content.join("Movies");
        std::fs::create_dir_all(&dir).unwrap();
        sparse_file(&dir.join("Intro.bk2"), &[], LARGE);
    };
    let kinds: [(&str, &str, Make); 4] = [
        ("loose file", GENERIC, &loose),
        ("loose file, game cipher", RIVALS, &loose),
        ("bulk file", GENERIC, &|content: &Path| {
            let template = templates
                .iter()
                .find(|t| {
                    t.files
                        .bulk
                        .iter()
                        .any(|b| b.path.extension().is_some_and(|e| e == "ubulk"))
                })
                .expect("a corpus package with a .ubulk");
            place(template, content, "Textures", "T_Large");
            let ubulk = content.join("Textures/T_Large.ubulk");
            let file = std::fs::OpenOptions::new()
                .write(true)
                .open(&ubulk)
                .unwrap();
            file.set_len(LARGE).unwrap();
        }),
        ("shader library", GENERIC, &|content: &Path| {
            std::fs::create_dir_all(content).unwrap();
            let path = content.join("ShaderArchive-LargeGame-PCD3D_SM6.ushaderbytecode");
            large_shader_library(&path);
        }),
    ];
    for (kind, game, make) in kinds {
        let dir = base.join(kind.replace([' ', ','], "-"));
        make(&dir.join("Cooked/LargeGame/Content"));
        std::fs::write(dir.join("key.txt"), "ab".repeat(32)).unwrap();
        std::fs::write(
            dir.join("mod.toml"),
            format!("[mod]\nname = \"Large\"\nversion = \"1.0.0\"\n[game]\n{game}"),
        )
        .unwrap();
        let dev = phase(&format!("1 GiB {kind}: build"), &dir, &[]);
        let forced = phase(&format!("1 GiB {kind}: --force"), &dir, &["--force"]);
        let peak = dev.peak_mib.max(forced.peak_mib);
        println!(
            "1 GiB {kind}: peak {peak:.1} MiB ({} 256 MiB)",
            if peak < 256.0 { "below" } else { "NOT below" }
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
    println!(
        "large inputs: {:.1} s in all",
        started.elapsed().as_secs_f64()
    );
}

/// Writes `head` and extends the file to `len` bytes with a hole.
fn sparse_file(path: &Path, head: &[u8], len: u64) {
    let mut file = std::fs::File::create(path).unwrap();
    file.write_all(head).unwrap();
    file.set_len(len).unwrap();
}

/// A cooked shader archive of about [`LARGE`] bytes whose code is a hole:
/// twelve 64 MiB shaders, each the only shader of its shader map (a group of
/// its own), and 1,024 shaders of 256 KiB shared by four shader maps
/// (grouped four to a 1 MiB group), all stored uncompressed.
fn large_shader_library(path: &Path) {
    use zenpak::iostore::shader_library::{ShaderArchive, ShaderCodeEntry, ShaderMapEntry};
    const BIG: u32 = 64 << 20;
    const SMALL: u32 = 256 << 10;
    let mut sizes = vec![BIG; 12];
    sizes.extend(std::iter::repeat_n(SMALL, 1024));
    let hash = |tag: u8, i: usize| {
        let mut h = [tag; 20];
        h[..8].copy_from_slice(&(i as u64).to_le_bytes());
        h
    };
    let mut offset = 0u64;
    let shader_entries: Vec<ShaderCodeEntry> = sizes
        .iter()
        .map(|&size| {
            let entry = ShaderCodeEntry {
                offset,
                size,
                uncompressed_size: size,
                frequency: 5,
            };
            offset += size as u64;
            entry
        })
        .collect();
    // Maps 0..12: one big shader each; maps 12..16: all the small shaders.
    let mut maps: Vec<Vec<u32>> = (0..12).map(|s| vec![s]).collect();
    maps.extend((0..4).map(|_| (12..sizes.len() as u32).collect()));
    let mut shader_indices = Vec::new();
    let shader_map_entries = maps
        .iter()
        .map(|shaders| {
            let entry = ShaderMapEntry {
                shader_indices_offset: shader_indices.len() as u32,
                num_shaders: shaders.len() as u32,
                first_preload_index: 0,
                num_preload_entries: 0,
            };
            shader_indices.extend_from_slice(shaders);
            entry
        })
        .collect();
    let mut archive = ShaderArchive {
        shader_map_hashes: (0..maps.len()).map(|m| hash(0xAA, m)).collect(),
        shader_hashes: (0..sizes.len()).map(|s| hash(0x55, s)).collect(),
        shader_map_entries,
        shader_entries,
        preload_entries: Vec::new(),
        shader_indices,
        code_offset: 0,
    };
    archive.set_preload_entries();
    let mut header = zenpak::binary::Writer::new();
    archive.write_header(&mut header);
    let header = header.into_inner();
    sparse_file(path, &header, header.len() as u64 + offset);
}

/// `zenpak build --force` and the peer's `to-zen` on the same tree, in
/// interleaved pairs (this disk makes single runs vary by a third). Each
/// writes over its own previous output, as a rebuild does: the peer runs
/// once untimed first so that it, too, replaces a container every time.
fn compare_with_peer(peer: &Path, root: &Path) {
    const PAIRS: usize = 5;
    let out = root.join("peer/Bench_P.utoc");
    std::fs::create_dir_all(out.parent().unwrap()).unwrap();
    let content = root.join("Cooked/BenchGame");
    let peer_args = [
        "to-zen",
        content.to_str().unwrap(),
        out.to_str().unwrap(),
        "--version",
        "UE5_6",
    ];
    measure(peer, &peer_args, root);
    // As run, and durable: with the `sync` after each run that puts what it
    // left in the page cache on disk (zenpak syncs its output itself; the
    // peer does not).
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    let (mut ours_durable, mut theirs_durable) = (Vec::new(), Vec::new());
    for _ in 0..PAIRS {
        let measured = phase("build --force", root, &["--force"]);
        let synced = sync_time();
        ours.push(measured.wall);
        ours_durable.push(measured.wall + synced);
        let measured = measure(peer, &peer_args, root);
        report("peer to-zen", &measured);
        let peer_synced = sync_time();
        println!(
            "{:<28} {:>9.1} ms  (zenpak's {:.1} ms)",
            "  sync after the peer",
            peer_synced.as_secs_f64() * 1000.0,
            synced.as_secs_f64() * 1000.0
        );
        theirs.push(measured.wall);
        theirs_durable.push(measured.wall + peer_synced);
    }
    print_median_pair("as run", "peer", &mut ours, &mut theirs);
    print_median_pair(
        "both durable (+ sync)",
        "peer",
        &mut ours_durable,
        &mut theirs_durable,
    );
}

/// How long a `sync` takes: what a run left for the kernel to write.
fn sync_time() -> Duration {
    let started = Instant::now();
    // SAFETY: as in `measure`.
    unsafe { libc::sync() };
    started.elapsed()
}

/// The medians of zenpak's and the other's (`them`: the peer, the copy
/// floor) times and their ratio.
fn print_median_pair(what: &str, them: &str, ours: &mut [Duration], theirs: &mut [Duration]) {
    ours.sort();
    theirs.sort();
    let pairs = ours.len();
    let (ours, theirs) = (ours[pairs / 2], theirs[pairs / 2]);
    println!(
        "median of {pairs} interleaved pairs, {what}: zenpak build --force {:.0} ms, {them} {:.0} ms: zenpak / {them} = {:.2}x ({:.2}x {})",
        ours.as_secs_f64() * 1000.0,
        theirs.as_secs_f64() * 1000.0,
        ours.as_secs_f64() / theirs.as_secs_f64(),
        if ours <= theirs {
            theirs.as_secs_f64() / ours.as_secs_f64()
        } else {
            ours.as_secs_f64() / theirs.as_secs_f64()
        },
        if ours <= theirs { "faster" } else { "slower" }
    );
}

/// `zenpak build --force` against the copy floor in interleaved pairs:
/// one floor run alone moves by a factor of three on this disk between
/// runs (ext4 slows writing for a while after large deletes), so the
/// ratio is taken from runs made side by side. Both are durable: the floor
/// syncs its file, zenpak its output.
///
/// Each pair has a second floor, which replaces its previous copy as
/// `--force` replaces the previous output (a new file, synced, renamed over
/// the old one): the file system frees the old file's blocks inside the
/// rename, which the first floor never pays. The two floors' difference is
/// that cost alone.
fn compare_with_floor(root: &Path) {
    const PAIRS: usize = 3;
    let (mut ours, mut floors, mut replacing) = (Vec::new(), Vec::new(), Vec::new());
    // The previous copy the first replacing floor replaces.
    copy_floor_to(root, FloorOutput::Replacing);
    for _ in 0..PAIRS {
        floors.push(copy_floor(root).0);
        replacing.push(copy_floor_to(root, FloorOutput::Replacing).0);
        ours.push(phase("build --force", root, &["--force"]).wall);
    }
    let _ = std::fs::remove_file(root.join(FloorOutput::Replacing.file_name()));
    print_median_pair("durable", "copy floor", &mut ours.clone(), &mut floors);
    print_median_pair(
        "durable, both replacing their previous output",
        "copy floor",
        &mut ours,
        &mut replacing,
    );
}

/// Generates `count` packages under `<root>/Cooked` (unless a tree of that
/// size is there already) and writes `<root>/mod.toml`.
fn generate(root: &Path, count: usize, templates: &[Template]) {
    let content = root.join("Cooked/BenchGame/Content");
    if !content
        .join(format!("Gen/D{:03}", (count - 1) / 100))
        .is_dir()
    {
        let started = Instant::now();
        let _ = std::fs::remove_dir_all(&content);
        for i in 0..count {
            let template = &templates[i % templates.len()];
            place(
                template,
                &content,
                &format!("Gen/D{:03}", i / 100),
                &format!("{}_{i}", template.stem),
            );
        }
        println!(
            "generated {count} packages from {} corpus packages in {:.1} s",
            templates.len(),
            started.elapsed().as_secs_f64()
        );
    }
    std::fs::write(
        root.join("mod.toml"),
        "[mod]\nname = \"Bench\"\nversion = \"1.0.0\"\n[game]\nengine = \"5.6\"\nproject = \"BenchGame\"\n",
    )
    .unwrap();
}

/// Where the copy floor writes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum FloorOutput {
    /// A new file, removed after the time is taken.
    Fresh,
    /// A new file renamed over the previous run's copy (kept for the next).
    Replacing,
}

impl FloorOutput {
    fn file_name(self) -> &'static str {
        match self {
            FloorOutput::Fresh => "copy-floor.bin",
            FloorOutput::Replacing => "copy-floor-previous.bin",
        }
    }
}

/// The I/O floor: every input byte under `<root>/Cooked` read once and
/// written once to one new file, synced. Prints its line; returns the time
/// and the first `.uexp` (in name order: the file the one-file-changed runs
/// flip). The files are walked as they are copied: the bench holds no list
/// of them, whose memory every child's peak would include (see [`measure_with`]).
fn copy_floor(root: &Path) -> (Duration, PathBuf) {
    copy_floor_to(root, FloorOutput::Fresh)
}

/// [`copy_floor`], writing as `output` says.
fn copy_floor_to(root: &Path, output: FloorOutput) -> (Duration, PathBuf) {
    reset_peak_memory();
    // SAFETY: as in `measure`.
    unsafe { libc::sync() };
    let started = Instant::now();
    let floor_path = root.join(output.file_name());
    let written_path = match output {
        FloorOutput::Fresh => floor_path.clone(),
        FloorOutput::Replacing => root.join("copy-floor-next.bin"),
    };
    let mut floor = std::io::BufWriter::new(std::fs::File::create(&written_path).unwrap());
    let (mut copied, mut files, mut first_uexp) = (0u64, 0usize, None);
    let walk = walkdir::WalkDir::new(root.join("Cooked")).sort_by_file_name();
    for entry in walk.into_iter().filter_map(|e| e.ok()) {
        if !entry.file_type().is_file() {
            continue;
        }
        let bytes = std::fs::read(entry.path()).unwrap();
        copied += bytes.len() as u64;
        files += 1;
        floor.write_all(&bytes).unwrap();
        if first_uexp.is_none() && entry.path().extension().is_some_and(|e| e == "uexp") {
            first_uexp = Some(entry.into_path());
        }
    }
    floor.into_inner().unwrap().sync_all().unwrap();
    if output == FloorOutput::Replacing {
        std::fs::rename(&written_path, &floor_path).unwrap();
        std::fs::File::open(root).unwrap().sync_all().unwrap();
    }
    let floor_time = started.elapsed();
    if output == FloorOutput::Fresh {
        std::fs::remove_file(&floor_path).unwrap();
    }
    println!(
        "{:<28} {:>10.1} ms  peak {:>7.1} MiB  ({} files, {:.1} MiB)",
        match output {
            FloorOutput::Fresh => "copy floor",
            FloorOutput::Replacing => "copy floor, replacing",
        },
        floor_time.as_secs_f64() * 1000.0,
        peak_memory_mib(),
        files,
        copied as f64 / 1048576.0
    );
    (
        floor_time,
        first_uexp.expect("the generated tree has a .uexp"),
    )
}

/// `ZENPAK_BENCH_PACKAGES`: one package count (default 10,000), or several
/// separated by commas for [`linearity`].
fn bench_sizes() -> Vec<usize> {
    let sizes: Vec<usize> = std::env::var("ZENPAK_BENCH_PACKAGES")
        .ok()
        .map(|v| {
            v.split(',')
                .map(|n| {
                    n.trim().replace('_', "").parse().unwrap_or_else(|_| {
                        panic!("ZENPAK_BENCH_PACKAGES: `{n}` is not a package count")
                    })
                })
                .collect()
        })
        .unwrap_or_else(|| vec![10_000]);
    assert!(
        !sizes.is_empty() && !sizes.contains(&0),
        "ZENPAK_BENCH_PACKAGES needs counts above 0"
    );
    sizes
}

/// `ZENPAK_BENCH_THREADS`: the thread counts [`linearity`] runs each size
/// with (default 1 and 2).
fn bench_threads() -> Vec<usize> {
    std::env::var("ZENPAK_BENCH_THREADS")
        .ok()
        .map(|v| {
            v.split(',')
                .map(|n| {
                    n.trim().parse().unwrap_or_else(|_| {
                        panic!("ZENPAK_BENCH_THREADS: `{n}` is not a thread count")
                    })
                })
                .collect()
        })
        .unwrap_or_else(|| vec![1, 2])
}

/// One-file-changed rebuilds per row of the linearity table (odd: the
/// row takes the median; one run of about a second is at the mercy of
/// whatever else the disk is doing).
const ONE_FILE_RUNS: usize = 3;

/// One row of the linearity table.
struct LinearRow {
    packages: usize,
    threads: usize,
    floor: Duration,
    first: Measured,
    forced: Measured,
    fresh: Measured,
    /// [`stat_floor`] on the same tree and threads.
    stat: Duration,
    one: Measured,
}

/// How the build scales: for each package count a tree of its own in
/// `<root>/packages-<count>` (kept between runs, like the single-size
/// tree), its copy floor, and for each thread count (`RAYON_NUM_THREADS`
/// of the build) a first build, `--force`, a no-change rebuild and a
/// one-file-changed (development) rebuild; then one table row per size
/// and thread count.
fn linearity(root: &Path, sizes: &[usize], threads: &[usize], templates: &[Template]) {
    let zenpak = Path::new(env!("CARGO_BIN_EXE_zenpak"));
    let mut rows = Vec::new();
    for &packages in sizes {
        let dir = root.join(format!("packages-{packages}"));
        std::fs::create_dir_all(&dir).unwrap();
        generate(&dir, packages, templates);
        let (floor, changed) = copy_floor(&dir);
        for &thread_count in threads {
            let _ = std::fs::remove_dir_all(dir.join("target"));
            let count = thread_count.to_string();
            let env = [("RAYON_NUM_THREADS", count.as_str())];
            let run = |name: &str, args: &[&str]| {
                let mut all = vec!["build", "--quiet"];
                all.extend_from_slice(args);
                let m = measure_with(zenpak, &all, &dir, &env);
                report(&format!("{packages} x{thread_count} {name}"), &m);
                m
            };
            let first = run("first build", &[]);
            let forced = run("build --force", &["--force"]);
            let fresh = run("no-change rebuild", &[]);
            let stat = print_stat_floor(&dir, thread_count, &fresh);
            let one = one_file_changed(&changed, || run("one-file-changed", &[]));
            rows.push(LinearRow {
                packages,
                threads: thread_count,
                floor,
                first,
                forced,
                fresh,
                stat,
                one,
            });
        }
        let _ = std::fs::remove_dir_all(dir.join("target"));
    }
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!();
    println!(
        "{:>8} {:>3} | {:>8} | {:>8} {:>6} | {:>8} {:>8} {:>6} {:>9} {:>7} | {:>8} {:>7} {:>7} | {:>8} {:>7}",
        "packages", "thr", "floor ms", "first ms", "peak", "force ms", "cpu ms", "/floor", "ms/1k pkg", "peak",
        "nochg ms", "stat ms", "peak", "1chg ms", "peak"
    );
    for r in &rows {
        println!(
            "{:>8} {:>3} | {:>8.0} | {:>8.0} {:>6.1} | {:>8.0} {:>8.0} {:>5.2}x {:>9.1} {:>7.1} | {:>8.1} {:>7.1} {:>7.1} | {:>8.1} {:>7.1}",
            r.packages,
            r.threads,
            ms(r.floor),
            ms(r.first.wall),
            r.first.peak_mib,
            ms(r.forced.wall),
            ms(r.forced.cpu),
            r.forced.wall.as_secs_f64() / r.floor.as_secs_f64(),
            ms(r.forced.wall) * 1000.0 / r.packages as f64,
            r.forced.peak_mib,
            ms(r.fresh.wall),
            ms(r.stat),
            r.fresh.peak_mib,
            ms(r.one.wall),
            r.one.peak_mib,
        );
    }
    println!(
        "(peak in MiB; ms/1k pkg: --force wall per 1,000 packages; stat ms: the stat floor of the no-change check; \
         1chg ms: the median of {ONE_FILE_RUNS} one-file-changed rebuilds, with their highest peak)"
    );
}
