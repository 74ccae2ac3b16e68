//! Malformed input never panics: every engine-written Zen package of the
//! corpus is truncated at many points and has bytes and length fields
//! overwritten; reading must return a clean error (or a package) each time.
//! Mutated legacy packages that still parse must convert or fail cleanly.

use crate::common;

use zenpak::legacy::{LegacyPackage, PackageFiles};
use zenpak::zen::convert::{convert_source, SourcePackage};
use zenpak::zen::ZenPackage;

/// A small deterministic generator (no dependency needed for test noise).
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

#[test]
fn mutated_zen_packages_give_clean_errors() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let mut rng = Lcg(0x5eed);
    let mut errors = 0usize;
    let mut cases = 0usize;
    for (path, engine) in common::zen_packages(&corpus) {
        let original = std::fs::read(&path).unwrap();
        let header_size = ZenPackage::read(&original, engine)
            .unwrap()
            .write_header()
            .0
            .len();
        let mut check = |bytes: &[u8]| -> bool {
            cases += 1;
            match ZenPackage::read(bytes, engine) {
                Ok(_) => true,
                Err(e) => {
                    errors += 1;
                    assert!(!e.message().is_empty(), "{}: {e}", path.display());
                    if let Some(offset) = e.offset() {
                        assert!(
                            offset <= bytes.len() as u64,
                            "{}: error offset {offset} outside the {}-byte input: {e}",
                            path.display(),
                            bytes.len()
                        );
                    }
                    false
                }
            }
        };
        // Truncations: every byte of the first 128, then 64 points over
        // the header. A header cut anywhere cannot be read.
        for cut in (0..header_size.min(128)).chain((0..64).map(|k| header_size * k / 64)) {
            assert!(
                !check(&original[..cut]),
                "{}: the header cut at {cut} of {header_size} bytes was read",
                path.display()
            );
        }
        // 32-bit words of the header (all of the first 256 bytes, then a
        // spread over the rest) set to hostile values.
        let stride = (header_size / 256).max(1) * 4;
        let words = (0..256.min(header_size.saturating_sub(4)))
            .step_by(4)
            .chain((256..header_size.saturating_sub(4)).step_by(stride));
        for at in words {
            for value in [0xFFFF_FFFFu32, 0x7FFF_FFFF, 0x8000_0000, 0, 1] {
                let mut m = original.clone();
                m[at..at + 4].copy_from_slice(&value.to_le_bytes());
                let _ = check(&m);
            }
        }
        // Random byte flips inside the header.
        for _ in 0..200 {
            let mut m = original.clone();
            for _ in 0..1 + rng.next() % 4 {
                let at = (rng.next() as usize) % header_size;
                m[at] ^= 1 << (rng.next() % 8);
            }
            let _ = check(&m);
        }
    }
    assert!(
        errors > 0 && cases > 1000,
        "{errors} errors in {cases} cases"
    );
}

#[test]
fn mutated_legacy_packages_convert_or_fail_cleanly() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let mut rng = Lcg(0xc0ffee);
    let mut converted = 0usize;
    for (path, engine) in common::legacy_packages(&corpus)
        .into_iter()
        .filter(|(p, _)| p.with_extension("uzenasset").is_file())
    {
        let files = PackageFiles::load(&path).unwrap();
        for _ in 0..400 {
            let mut header = files.header.clone();
            for _ in 0..1 + rng.next() % 3 {
                let at = (rng.next() as usize) % header.len();
                header[at] = rng.next() as u8;
            }
            let Ok(legacy) = LegacyPackage::read(&header, Some(engine)) else {
                continue;
            };
            let Ok(source) = SourcePackage::from_legacy(&legacy) else {
                continue;
            };
            if convert_source(&source, &files.uexp, Vec::new(), engine, "/Game/Mutated").is_ok() {
                converted += 1;
            }
        }
    }
    assert!(converted > 0);
}
