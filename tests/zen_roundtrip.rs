//! Every engine-written Zen package in the corpus (`*.uzenasset`, and the
//! `.uasset` files without the legacy tag, which are Zen headers cut out of
//! containers) reads and writes back to identical bytes.

mod common;

use std::path::PathBuf;

use zenpak::zen::ZenPackage;

fn zen_files(corpus: &std::path::Path) -> Vec<(PathBuf, zenpak::EngineVersion)> {
    common::files_with_ext(&corpus.join("retoc"), &["uzenasset", "uasset"])
        .into_iter()
        .filter(|p| {
            let head = std::fs::read(p).unwrap_or_default();
            !(head.len() >= 4 && head[..4] == [0xC1, 0x83, 0x2A, 0x9E])
        })
        .filter_map(|p| common::engine_of(corpus, &p).map(|v| (p, v)))
        .collect()
}

#[test]
fn engine_zen_packages_round_trip() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let files = zen_files(&corpus);
    assert!(
        files.len() >= 14,
        "expected the corpus's Zen packages, found {}",
        files.len()
    );
    let mut failures = Vec::new();
    for (path, engine) in &files {
        let bytes = std::fs::read(path).unwrap();
        match ZenPackage::read(&bytes, *engine) {
            Ok(package) => {
                let written = package.write();
                if written != bytes {
                    let first = written
                        .iter()
                        .zip(&bytes)
                        .position(|(a, b)| a != b)
                        .unwrap_or(written.len().min(bytes.len()));
                    failures.push(format!(
                        "{}: written {} bytes vs {} original, first difference at {first}",
                        path.display(),
                        written.len(),
                        bytes.len()
                    ));
                } else {
                    eprintln!(
                        "ok {} ({engine}): {} names, {} imports, {} exports",
                        path.display(),
                        package.names.len(),
                        package.imports.len(),
                        package.exports.len()
                    );
                }
            }
            Err(e) => failures.push(format!("{}: {e}", path.display())),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} failed:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
}
