//! Finding the shared corpus, for the integration tests (`common::corpus`)
//! and the library's own unit tests (`src/lib.rs` includes this file).

use std::path::{Path, PathBuf};

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
