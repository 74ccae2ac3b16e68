//! A classic package that declares a million exports (about 12 MB on
//! disk): `inspect` streams its report (text, `--json` and
//! `--message-format json`) in bounded memory and time. Peak memory is
//! measured on the real binary.

use crate::common;

use zenpak::classic::{ObjectRef, Package};

const MIB: u64 = 1 << 20;

#[test]
fn a_million_exports_inspect_in_bounded_memory() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let source = corpus.join("classic/ut99/Maps/Entry.unr");
    let mut package = Package::read_file(&source).unwrap();
    let mut export = package.exports[0].clone();
    export.outer = ObjectRef::NULL;
    export.serial_size = 0;
    export.serial_offset = None;
    package.exports = vec![export; 1_000_000];
    let bytes = package.to_bytes(&[]).unwrap();
    let dir = common::temp_dir("million-exports");
    let path = dir.join("Million.unr");
    std::fs::write(&path, &bytes).unwrap();
    eprintln!(
        "a million exports: {} MiB on disk",
        bytes.len() as u64 / MIB
    );
    let p = path.to_str().unwrap();
    for args in [
        vec!["inspect", p, "--json"],
        vec!["inspect", p, "--message-format", "json"],
        vec!["inspect", p],
    ] {
        let started = std::time::Instant::now();
        let (measured, peak) = common::run_measured(&args);
        let took = started.elapsed();
        eprintln!(
            "a million exports: {args:?} exit {}, peak RSS {} MiB, {:.2} s",
            measured.code,
            peak / MIB,
            took.as_secs_f64()
        );
        measured.ok();
        assert!(peak < 256 * MIB, "{args:?} peaked at {} MiB", peak / MIB);
        assert!(took < time_limit(), "{args:?} took {took:?}");
    }
}

/// 20 s for the release build CI tests; the unoptimised dev build writes
/// the 300 MB of JSON about ten times slower.
fn time_limit() -> std::time::Duration {
    std::time::Duration::from_secs(if cfg!(debug_assertions) { 120 } else { 20 })
}
