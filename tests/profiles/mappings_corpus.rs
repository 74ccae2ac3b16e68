//! Every `.usmap` of the shared corpus parses, writes back, and survives mutation.

use crate::common;

use zenpak::mappings::{BodyCompression, Mappings};

fn usmaps() -> Vec<std::path::PathBuf> {
    let Some(corpus) = common::corpus() else {
        return Vec::new();
    };
    let files = common::files_with_ext(&corpus.join("uassetapi"), &["usmap"]);
    assert!(
        files.len() >= 6,
        "expected the corpus's six mappings files, found {}",
        files.len()
    );
    files
}

#[test]
fn every_corpus_usmap_parses_and_round_trips() {
    for path in usmaps() {
        let bytes = std::fs::read(&path).unwrap();
        let m = Mappings::read(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let s = m.summary();
        eprintln!(
            "{}: v{} {:?} names {} enums {} structs {} properties {}",
            path.display(),
            s.version,
            s.compression,
            s.names,
            s.enums,
            s.structs,
            s.properties
        );
        assert!(
            s.names > 1000 && s.enums > 100 && s.structs > 1000,
            "{}: counts too small",
            path.display()
        );
        // Every engine build has these; their absence means a desynchronised parse.
        for name in ["Object", "Actor", "SkeletalMesh", "Vector"] {
            assert!(
                m.struct_schema(name).is_some(),
                "{}: no schema for {name}",
                path.display()
            );
        }
        assert_eq!(m.chain("Actor").unwrap().last().unwrap().name, "Object");
        let plain = m.write(BodyCompression::None).unwrap();
        // Name tables may hold duplicates (Engine.usmap has two `None`), so the
        // writer's indices can differ from the file's: compare what they mean.
        let back = Mappings::read(&plain).unwrap();
        assert_eq!(back.names, m.names);
        assert_eq!(back.enums, m.enums);
        assert_eq!(back.structs, m.structs);
    }
}

#[test]
fn explicit_enum_values_are_kept() {
    for path in usmaps() {
        let m = Mappings::load(&path).unwrap();
        if m.version < zenpak::mappings::UsmapVersion::ExplicitEnumValues {
            continue;
        }
        // Some enum somewhere has a value that is not its position.
        let explicit = m.enums.iter().any(|e| {
            e.entries
                .iter()
                .enumerate()
                .any(|(i, (v, _))| *v != i as u64)
        });
        assert!(
            explicit,
            "{}: no enum has an explicit value",
            path.display()
        );
    }
}

#[test]
fn mutated_usmaps_give_clean_errors() {
    for path in usmaps() {
        let original = std::fs::read(&path).unwrap();
        let plain = Mappings::read(&original)
            .unwrap()
            .write(BodyCompression::None)
            .unwrap();
        for bytes in [&original, &plain] {
            let step = (bytes.len() / 97).max(1);
            for cut in (0..bytes.len()).step_by(step * 3) {
                assert!(
                    Mappings::read(&bytes[..cut]).is_err(),
                    "{}: cut at {cut} parsed",
                    path.display()
                );
            }
            let mut seed = 0x2545F4914F6CDD1Du64;
            for _ in 0..40 {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                let mut m = bytes.clone();
                let at = (seed as usize) % m.len();
                m[at] ^= (seed >> 32) as u8 | 1;
                // Either parses (a harmless byte) or fails cleanly; never panics.
                let _ = Mappings::read(&m);
            }
        }
    }
}
