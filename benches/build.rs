//! Benchmark of `zenpak build` on a large generated mod (not a timed test).
//!
//! `cargo bench --bench build` generates a mod of `ZENPAK_BENCH_PACKAGES`
//! packages (default 10,000) by placing the shared corpus's UE 5.6 packages
//! under many paths (each renamed with zenpak's legacy writer to the name its
//! new path gives it), then times:
//!
//! - the I/O floor: reading every input file and writing the bytes to one file;
//! - a full build (empty cache);
//! - a rebuild with nothing changed;
//! - a rebuild after one `.uexp` changed;
//!
//! and reports wall time, peak resident memory of each phase (VmHWM, reset
//! between phases), and bytes in/out. `ZENPAK_BENCH_DIR` keeps the
//! generated mod in a folder of your choice instead of a temporary one.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use zenpak::build::{build, BuildOptions, BuildSummary, Silent};
use zenpak::legacy::{EngineString, PackageFiles};
use zenpak::manifest::Manifest;
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

fn reset_peak_memory() {
    // Writing 5 to clear_refs resets the peak resident set size (Linux).
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

fn peak_memory_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

fn phase(name: &str, manifest: &Manifest, options: &BuildOptions) -> (Duration, BuildSummary) {
    reset_peak_memory();
    let started = Instant::now();
    let summary = build(manifest, options, &Silent).unwrap_or_else(|e| panic!("{name}: {e}"));
    let elapsed = started.elapsed();
    println!(
        "{name:<28} {:>10.1} ms  peak {:>7.1} MiB  converted {:>6}  in {:>8.1} MiB  out {:>8.1} MiB",
        elapsed.as_secs_f64() * 1000.0,
        peak_memory_mib(),
        summary.converted,
        summary.bytes_in as f64 / 1048576.0,
        summary.bytes_out as f64 / 1048576.0
    );
    (elapsed, summary)
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
    let count: usize = std::env::var("ZENPAK_BENCH_PACKAGES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000);
    let temporary = tempfile::tempdir().unwrap();
    let root = std::env::var_os("ZENPAK_BENCH_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| temporary.path().to_path_buf());
    let _ = std::fs::remove_dir_all(root.join("target"));

    let templates = templates(&corpus);
    assert!(!templates.is_empty(), "no UE 5.6 packages in the corpus");
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
    let manifest_path = root.join("mod.toml");
    std::fs::write(
        &manifest_path,
        "[mod]\nname = \"Bench\"\nversion = \"1.0.0\"\n[game]\nengine = \"5.6\"\nproject = \"BenchGame\"\n",
    )
    .unwrap();
    let manifest = Manifest::load(&manifest_path).unwrap();

    // The I/O floor: every input byte read once and written once.
    let inputs: Vec<PathBuf> = walkdir::WalkDir::new(root.join("Cooked"))
        .sort_by_file_name()
        .into_iter()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_file())
        .map(|e| e.into_path())
        .collect();
    reset_peak_memory();
    let started = Instant::now();
    let floor_path = root.join("copy-floor.bin");
    let mut floor = std::io::BufWriter::new(std::fs::File::create(&floor_path).unwrap());
    let mut copied = 0u64;
    for path in &inputs {
        let bytes = std::fs::read(path).unwrap();
        copied += bytes.len() as u64;
        floor.write_all(&bytes).unwrap();
    }
    floor.into_inner().unwrap().sync_all().unwrap();
    let floor_time = started.elapsed();
    std::fs::remove_file(&floor_path).unwrap();
    println!(
        "{:<28} {:>10.1} ms  peak {:>7.1} MiB  ({} files, {:.1} MiB)",
        "copy floor",
        floor_time.as_secs_f64() * 1000.0,
        peak_memory_mib(),
        inputs.len(),
        copied as f64 / 1048576.0
    );

    let options = BuildOptions::default();
    let (full, _) = phase("full build", &manifest, &options);
    let (fresh, _) = phase("no-change rebuild", &manifest, &options);
    let changed = inputs
        .iter()
        .find(|p| p.extension().is_some_and(|e| e == "uexp"))
        .unwrap();
    let mut bytes = std::fs::read(changed).unwrap();
    let at = bytes.len() - 5;
    bytes[at] ^= 1;
    std::fs::write(changed, bytes).unwrap();
    let (one, _) = phase("one-file-changed rebuild", &manifest, &options);
    println!(
        "full build / copy floor = {:.2}x; no-change rebuild {:.1} ms; one-file-changed rebuild {:.1} ms",
        full.as_secs_f64() / floor_time.as_secs_f64(),
        fresh.as_secs_f64() * 1000.0,
        one.as_secs_f64() * 1000.0
    );
}
