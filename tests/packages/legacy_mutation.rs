//! Hostile input: every corpus legacy package, truncated at many points and
//! with bytes and length fields overwritten, must give a clean error (or a
//! valid parse) and never panic. Points are chosen deterministically so a
//! failure reproduces.

use crate::common;

use std::panic::{catch_unwind, AssertUnwindSafe};

use zenpak::binary::Reader;
use zenpak::legacy::{
    FieldPositions, LegacyPackage, PackageFiles, PackageReport, Section, Summary,
};
use zenpak::{EngineVersion, Error};

/// A small deterministic generator (xorshift64*), seeded per file.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Values that break length and offset fields in interesting ways.
const HOSTILE_WORDS: [u32; 8] = [
    0x7fff_ffff,
    0xffff_ffff,
    0x8000_0000,
    0x0010_0000,
    0xffff_fff0,
    0,
    1,
    0x0000_ffff,
];

/// Parses, and on success exercises everything a consumer would call.
/// Returns the error, if any; panics propagate to the caller's catch_unwind.
fn exercise(header: &[u8], uexp: &[u8], engine: EngineVersion) -> Option<Error> {
    match LegacyPackage::read(header, Some(engine)) {
        Err(e) => Some(e),
        Ok(package) => {
            let files = PackageFiles {
                path: "mutated.uasset".into(),
                header: header.to_vec(),
                uexp_path: "mutated.uexp".into(),
                uexp: uexp.to_vec(),
                bulk: Vec::new(),
            };
            for i in 0..package.exports.len() {
                let _ = files.export_data(&package, i);
            }
            let _ = PackageReport::new(&files, &package);
            let _ = package.write();
            None
        }
    }
}

fn check_clean(error: &Error, len: usize, what: &str) {
    let text = error.to_string();
    assert!(!text.is_empty(), "{what}: empty error message");
    if let Some(offset) = error.offset() {
        assert!(
            offset <= (len as u64).saturating_add(16),
            "{what}: error offset {offset} is far outside the {len}-byte input: {text}"
        );
    }
}

#[test]
fn mutated_corpus_packages_never_panic() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let packages = common::legacy_packages(&corpus);
    assert!(!packages.is_empty());
    let started = std::time::Instant::now();
    let (mut cases, mut errors) = (0usize, 0usize);
    for (path, engine) in &packages {
        let files = PackageFiles::load(path).unwrap();
        let header = &files.header;
        let uexp = &files.uexp;
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ header.len() as u64 ^ (uexp.len() as u64) << 20);
        let name = path.display().to_string();

        // Truncation: every 4th byte through the summary region, then evenly spread points.
        let mut cuts: Vec<usize> = (0..header.len().min(400)).step_by(4).collect();
        cuts.extend((0..48).map(|i| header.len() * i / 48));
        cuts.push(header.len() - 1);
        for cut in cuts {
            cases += 1;
            let result = catch_unwind(AssertUnwindSafe(|| exercise(&header[..cut], uexp, *engine)));
            let error =
                result.unwrap_or_else(|_| panic!("{name}: panic when truncated to {cut} bytes"));
            let error =
                error.unwrap_or_else(|| panic!("{name}: truncated to {cut} bytes but parsed"));
            check_clean(&error, cut, &name);
            errors += 1;
        }

        // Overwrites: single bytes and whole 32-bit words with hostile values.
        for round in 0..64 {
            cases += 1;
            let mut bytes = header.clone();
            let at = rng.below(bytes.len().saturating_sub(4));
            if round % 2 == 0 {
                bytes[at] ^= (1 + rng.below(255)) as u8;
            } else {
                let word = HOSTILE_WORDS[rng.below(HOSTILE_WORDS.len())];
                bytes[at..at + 4].copy_from_slice(&word.to_le_bytes());
            }
            let result = catch_unwind(AssertUnwindSafe(|| exercise(&bytes, uexp, *engine)));
            match result {
                Err(_) => panic!("{name}: panic after mutating byte {at} (round {round})"),
                Ok(Some(error)) => {
                    check_clean(&error, bytes.len(), &name);
                    errors += 1;
                }
                Ok(None) => {}
            }
        }

        // Length and offset fields of the summary, each set to every hostile value.
        let mut positions = FieldPositions::default();
        Summary::read_with_positions(&mut Reader::new(header), Some(*engine), &mut positions)
            .unwrap();
        let mut fields = vec![positions.total_header_size];
        for &at in positions.section_offsets.values() {
            fields.push(at);
            fields.push(at - 4); // the count before it (or the previous field)
        }
        // The first name's length too.
        if let Some(&names_at) = positions.section_offsets.get(&Section::Names) {
            let names_offset =
                i32::from_le_bytes(header[names_at..names_at + 4].try_into().unwrap());
            if names_offset > 0 {
                fields.push(names_offset as usize);
            }
        }
        for at in fields {
            // The values that break lengths: huge, negative, just past the sign bit, large.
            for word in &HOSTILE_WORDS[..4] {
                let word = *word;
                cases += 1;
                let mut bytes = header.clone();
                bytes[at..at + 4].copy_from_slice(&word.to_le_bytes());
                let result = catch_unwind(AssertUnwindSafe(|| exercise(&bytes, uexp, *engine)));
                match result {
                    Err(_) => panic!("{name}: panic with {word:#x} in the field at {at}"),
                    Ok(Some(error)) => {
                        check_clean(&error, bytes.len(), &name);
                        errors += 1;
                    }
                    Ok(None) => {}
                }
            }
        }

        // The .uexp side: truncated export data and hostile serial ranges.
        let package = LegacyPackage::read(header, Some(*engine)).unwrap();
        for cut in [
            0,
            uexp.len() / 3,
            uexp.len() / 2,
            uexp.len().saturating_sub(5),
        ] {
            cases += 1;
            let truncated = PackageFiles {
                path: path.clone(),
                header: header.clone(),
                uexp_path: path.with_extension("uexp"),
                uexp: uexp[..cut].to_vec(),
                bulk: Vec::new(),
            };
            let last_end = package
                .exports
                .iter()
                .map(|e| e.serial_offset + e.serial_size)
                .max();
            let result = truncated.check_exports(&package);
            if last_end.is_some_and(|end| end as usize > header.len() + cut) {
                let error = result.expect_err("export past the end of a truncated .uexp");
                assert!(error.to_string().contains(".uexp"), "{name}: {error}");
                errors += 1;
            }
        }
        for (offset, size) in [
            (-1i64, 4i64),
            (0, -1),
            (i64::MAX, 1),
            (i64::MAX - 1, i64::MAX),
            (header.len() as i64 - 2, 8),
        ] {
            cases += 1;
            let mut hostile = package.clone();
            if let Some(export) = hostile.exports.first_mut() {
                export.serial_offset = offset;
                export.serial_size = size;
                let result = catch_unwind(AssertUnwindSafe(|| {
                    files.export_data(&hostile, 0).map(|d| d.len())
                }));
                let error = result
                    .unwrap_or_else(|_| panic!("{name}: panic on serial range {offset}+{size}"))
                    .expect_err("hostile serial range accepted");
                check_clean(&error, usize::MAX, &name);
                errors += 1;
            }
        }
    }
    let elapsed = started.elapsed();
    eprintln!(
        "{} packages, {cases} mutated inputs, {errors} clean errors, {:.1}s",
        packages.len(),
        elapsed.as_secs_f64()
    );
}
