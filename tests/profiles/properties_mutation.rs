//! Mutated property data and mutated mappings: the walker gives clean errors, never panics.

use crate::common;

use zenpak::legacy::PackageFiles;
use zenpak::mappings::{Compression, Mappings};
use zenpak::properties::walk_package;

fn next(seed: &mut u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}

#[test]
fn mutated_property_data_gives_clean_errors() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let cases = [
        (
            "uassetapi/TestUE5_6/BpThirdPerson/BP_ThirdPersonCharacter.uasset",
            "uassetapi/TestUE5_6/BpThirdPerson/ExplicitEnumValuesExample.usmap",
        ),
        (
            "uassetapi/TestUE5_6/BpThirdPerson/SM_Cube.uasset",
            "uassetapi/TestUE5_6/BpThirdPerson/ExplicitEnumValuesExample.usmap",
        ),
        (
            "uassetapi/TestUE5_6/BpThirdPerson/M_Mannequin.uasset",
            "uassetapi/TestUE5_6/BpThirdPerson/ExplicitEnumValuesExample.usmap",
        ),
    ];
    let mut seed = 0xD1B54A32D192ED03u64;
    for (package, usmap) in cases {
        let path = corpus.join(package);
        if !path.exists() {
            continue;
        }
        let mappings = Mappings::load(corpus.join(usmap)).unwrap();
        let files = PackageFiles::load(&path).unwrap();
        let engine = common::engine_of(&corpus, &path).unwrap();
        let package = files.read_package(Some(engine)).unwrap();
        // Mutate bytes of the first part of the export data (property blocks).
        let span = files.uexp.len().min(4096);
        for _ in 0..300 {
            let mut m = files.clone();
            let at = (next(&mut seed) as usize) % span;
            m.uexp[at] ^= (next(&mut seed) >> 40) as u8 | 1;
            if next(&mut seed).is_multiple_of(4) {
                // A length-like field set to a huge or negative value.
                let at = at & !3;
                if at + 4 <= m.uexp.len() {
                    m.uexp[at..at + 4]
                        .copy_from_slice(&(next(&mut seed) as i32 | 0x4000_0000).to_le_bytes());
                }
            }
            let _ = walk_package(&m, &package, Some(&mappings), true);
        }
    }
}

#[test]
fn mutated_mappings_give_clean_errors_when_walking() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let dir = corpus.join("uassetapi/TestUE5_6/BpThirdPerson");
    let plain = Mappings::load(dir.join("ExplicitEnumValuesExample.usmap"))
        .unwrap()
        .write(Compression::None)
        .unwrap();
    let files = PackageFiles::load(dir.join("SKM_Quinn_Simple.uasset")).unwrap();
    let package = files
        .read_package(Some(zenpak::EngineVersion::UE5_6))
        .unwrap();
    let mut seed = 0x2545F4914F6CDD1Du64;
    let mut walked = 0;
    for _ in 0..60 {
        let mut m = plain.clone();
        // Flip bytes in the struct section (the last part of the body).
        let at = m.len() / 2 + (next(&mut seed) as usize) % (m.len() / 2);
        m[at] ^= (next(&mut seed) >> 32) as u8 | 1;
        if let Ok(mappings) = Mappings::read(&m) {
            walked += 1;
            let _ = walk_package(&files, &package, Some(&mappings), true);
        }
    }
    eprintln!("{walked} mutated mappings parsed and were used for a walk");
}

/// Damaged mappings through `inspect --mappings --properties` on a blueprint
/// (whose own class schema is read from the package, at an offset the
/// mappings decide): the command fails or reports, never panics.
#[test]
fn damaged_mappings_through_the_binary_never_panic() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let package = corpus.join(
        "uassetapi/TestUE5_7/NanosWorld/Content/NanosWorld/Core/Entities/BP_WorldWeapon.uasset",
    );
    let plain = Mappings::load(corpus.join("uassetapi/TestUE5_7/NanosWorld/NanosWorld.usmap"))
        .unwrap()
        .write(Compression::None)
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let usmap = dir.path().join("damaged.usmap");
    let run = |bytes: &[u8]| {
        std::fs::write(&usmap, bytes).unwrap();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_zenpak"))
            .args(["inspect", package.to_str().unwrap(), "--engine", "5.7"])
            .args(["--mappings", usmap.to_str().unwrap(), "--properties"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(!err.contains("panicked"), "{err}");
        (out.status.code(), err)
    };
    // Cut short: the mappings cannot be read, exit 1.
    let (code, err) = run(&plain[..plain.len() * 2 / 3]);
    assert_eq!(code, Some(1), "{err}");
    // Bytes flipped where the structs are: read or refused, never a panic.
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    for _ in 0..12 {
        let mut m = plain.clone();
        let at = m.len() / 2 + (next(&mut seed) as usize) % (m.len() / 2);
        m[at] ^= (next(&mut seed) >> 32) as u8 | 1;
        let (code, err) = run(&m);
        assert!(matches!(code, Some(0 | 1)), "exit {code:?}: {err}");
    }
}
