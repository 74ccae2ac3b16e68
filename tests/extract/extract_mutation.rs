//! Hostile Zen input to `zenpak::extract`: truncated packages, flipped
//! bytes, hostile 32/64-bit words in every header section, mutated script
//! objects and mutated headers of imported packages. Extraction must return
//! (an error or a package), never panic.

use crate::common;
use crate::extract_game;

use std::panic::{catch_unwind, AssertUnwindSafe};

use zenpak::extract::{
    extract_package, ExtractContext, ExtractOptions, PackageHeaders, ScriptObjects, ZenInput,
};
use zenpak::EngineVersion;

use extract_game::Game;

/// A small deterministic generator (no randomness between runs).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
}

const HOSTILE: [u64; 6] = [
    0,
    1,
    0x7fff_ffff,
    0xffff_ffff,
    0x8000_0000_0000_0000,
    u64::MAX,
];

/// Mutations of `data`: truncations, byte flips and hostile words.
fn mutations(data: &[u8], seed: u64) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut rng = Lcg(seed);
    let len = data.len();
    for i in 0..40 {
        out.push(data[..len * i / 40].to_vec());
    }
    for _ in 0..60 {
        let mut m = data.to_vec();
        if len > 0 {
            let at = rng.next() as usize % len;
            m[at] ^= 1 << (rng.next() % 8);
        }
        out.push(m);
    }
    for k in 0..60 {
        let mut m = data.to_vec();
        if len >= 8 {
            let at = (rng.next() as usize % (len - 7)) & !3;
            let word = HOSTILE[k % HOSTILE.len()].to_le_bytes();
            let width = if k % 2 == 0 { 4 } else { 8 };
            m[at..at + width].copy_from_slice(&word[..width]);
        }
        out.push(m);
    }
    out
}

fn must_not_panic(label: &str, f: impl FnOnce()) {
    if catch_unwind(AssertUnwindSafe(f)).is_err() {
        panic!("{label}: extraction panicked");
    }
}

/// Every Zen package of a few corpus folders (all layouts), mutated.
#[test]
fn hostile_zen_packages_do_not_panic() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let mut runs = 0;
    for (folder, engine, paths) in extract_game::corpus_folders(&corpus) {
        // A handful of packages per folder keeps the test short; every layout is covered.
        let sample: Vec<_> = paths
            .iter()
            .step_by((paths.len() / 4).max(1))
            .cloned()
            .collect();
        let game = Game::load(&paths, engine);
        let cx = ExtractContext {
            script_objects: Some(&game.script_objects),
            headers: &game.headers,
            options: ExtractOptions {
                allow_unresolved: true,
                verify: true,
            },
        };
        for p in game.packages.iter().filter(|p| sample.contains(&p.path)) {
            let mut inputs = vec![p.converted.package_bytes.clone()];
            if let Ok(engine_bytes) = std::fs::read(p.path.with_extension("uzenasset")) {
                inputs.push(engine_bytes);
            }
            for (k, input) in inputs.iter().enumerate() {
                for m in mutations(input, runs as u64 + k as u64) {
                    must_not_panic(&format!("{folder} {}", p.path.display()), || {
                        let _ = extract_package(
                            ZenInput {
                                engine,
                                package: &m,
                                imported_packages: Some(&p.converted.store_entry.imported_packages),
                            },
                            &cx,
                        );
                    });
                    runs += 1;
                }
            }
        }
    }
    eprintln!("{runs} hostile packages extracted without a panic");
    assert!(runs > 2000);
}

/// The Zen-only headers cut from engine containers (`retoc/**/*.uasset`
/// without the legacy tag): header-only or header + exports, extracted
/// without a game. Clean errors or packages, no panic.
#[test]
fn zen_headers_from_engine_containers_do_not_panic() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let empty = PackageHeaders::new(EngineVersion::UE5_3);
    let cx = ExtractContext {
        script_objects: None,
        headers: &empty,
        options: ExtractOptions {
            allow_unresolved: true,
            verify: false,
        },
    };
    let mut checked = 0;
    for (path, engine) in common::zen_packages(&corpus) {
        let data = std::fs::read(&path).unwrap();
        for m in std::iter::once(data.clone()).chain(mutations(&data, checked)) {
            must_not_panic(&path.display().to_string(), || {
                let _ = extract_package(
                    ZenInput {
                        engine,
                        package: &m,
                        imported_packages: None,
                    },
                    &cx,
                );
            });
        }
        checked += 1;
    }
    assert!(checked >= 10, "the corpus's Zen packages");
}

/// Mutated script objects chunks and mutated headers of the imported
/// packages: still no panic.
#[test]
fn hostile_script_objects_and_imported_headers_do_not_panic() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let chunk = std::fs::read(corpus.join("retoc/UE5.3/ScriptObjects.bin")).unwrap();
    // The name batch is large; mutate the entries after it as well.
    for m in mutations(&chunk, 7) {
        must_not_panic("ScriptObjects.bin", || {
            let _ = ScriptObjects::read_ue5(&m);
        });
    }
    let folder = extract_game::corpus_folders(&corpus)
        .into_iter()
        .find(|(f, _, _)| f == "uassetapi/TestUE5_6/BpThirdPerson")
        .expect("the 5.6 folder");
    let game = Game::load(&folder.2, folder.1);
    let target = &game.packages[0];
    for (i, other) in game.packages.iter().enumerate().skip(1) {
        for m in mutations(&other.converted.package_bytes, i as u64) {
            let mut headers = PackageHeaders::new(folder.1);
            for p in game.packages.iter().filter(|p| p.path != other.path) {
                headers
                    .insert(
                        &p.converted.package_bytes,
                        p.converted.store_entry.imported_packages.clone(),
                    )
                    .unwrap();
            }
            // A mutated header that still parses stands in for the real one.
            let _ = headers.insert(&m, other.converted.store_entry.imported_packages.clone());
            let cx = ExtractContext {
                script_objects: Some(&game.script_objects),
                headers: &headers,
                options: ExtractOptions {
                    allow_unresolved: true,
                    verify: false,
                },
            };
            must_not_panic("imported header", || {
                let _ = extract_package(
                    ZenInput {
                        engine: folder.1,
                        package: &target.converted.package_bytes,
                        imported_packages: Some(&target.converted.store_entry.imported_packages),
                    },
                    &cx,
                );
            });
        }
    }
}
