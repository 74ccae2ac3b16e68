//! Names read from a file reach `inspect`'s text escaped: a pak, a `.utoc`,
//! a game folder, a legacy package (plain, with its properties, with a
//! profile), the Zen package converted from it, a classic package and a
//! `.usmap` whose names hold an escape sequence, a bell and a carriage
//! return print no raw control character; their JSON forms escape them too.

use crate::common::{self, run};

use zenpak::iostore::container_header::StoreEntry;
use zenpak::iostore::{ContainerBuilder, ContainerOptions};
use zenpak::legacy::{LegacyPackage, NameEntry};
use zenpak::EngineVersion;

/// Clears the screen, retitles the terminal, rings and returns the
/// carriage, then a DEL, a C1 control sequence introducer (which serde_json
/// would write raw) and a right-to-left override.
const HOSTILE: &str = "\u{1b}[2J\u{1b}]0;owned\u{7}\r\u{7f}\u{9b}31m\u{202e}";
/// [`HOSTILE`] as far as a classic package's Latin-1 names can hold it.
const HOSTILE_LATIN1: &str = "\u{1b}[2J\u{1b}]0;owned\u{7}\r\u{7f}\u{9b}31m";

/// Asserts `text` holds no control character but line feeds, and shows
/// the escape sequence escaped.
fn assert_escaped(args: &[&str], text: &str) {
    assert!(
        !text.chars().any(unsafe_char),
        "{args:?}: raw control characters in: {text:?}"
    );
    assert!(text.contains("\\u{1b}"), "{args:?}: {text}");
}

/// A character a terminal acts on (a line feed ends a line of the report).
fn unsafe_char(c: char) -> bool {
    (c.is_control() && c != '\n') || ('\u{202a}'..='\u{202e}').contains(&c)
}

/// `inspect` (text, `--json`, `--message-format json`) of `args`: exit 0,
/// no raw control character on stdout or stderr.
fn inspect_everywhere(args: &[&str]) {
    let inspected = run(None, args);
    inspected.assert_code_for(0, format_args!("{args:?}"));
    assert_escaped(args, &inspected.text());
    for format in [&["--json"][..], &["--message-format", "json"]] {
        let args = [args, format].concat();
        let inspected = run(None, &args);
        inspected.assert_code_for(0, format_args!("{args:?}"));
        let (out, text) = (&inspected.stdout, inspected.text());
        assert!(
            !text.chars().any(unsafe_char),
            "{args:?}: raw control characters in: {text:?}"
        );
        // The names are all there, escaped the JSON way.
        assert!(out.contains("\\u001b"), "{args:?}: {out}");
        for line in out.lines().filter(|l| l.starts_with('{')) {
            if format.len() == 2 {
                serde_json::from_str::<serde_json::Value>(line).unwrap();
            }
        }
    }
}

#[test]
fn inspect_escapes_names_from_paks_and_containers() {
    let dir = common::temp_dir("inspect-escape");
    let paks = dir.join("Paks");
    std::fs::create_dir_all(&paks).unwrap();
    // A pak whose mount point and file names are hostile.
    let pak = paks.join("Escape.pak");
    let mut w = zenpak::pak::PakWriter::create(
        &pak,
        zenpak::version::PakVersion::V11,
        &format!("../../../Game{HOSTILE}/"),
        zenpak::compression::Compression::None,
        None,
        [0; 16],
    )
    .unwrap();
    w.add_file(&format!("Content/{HOSTILE}.txt"), b"x").unwrap();
    w.add_file("Content/fake\rsafe.txt", b"y").unwrap();
    w.finish().unwrap();
    inspect_everywhere(&["inspect", pak.to_str().unwrap()]);

    // A container whose mount point and paths are hostile.
    let mut b = ContainerBuilder::create(
        &paks,
        "Escape_P",
        EngineVersion::UE5_6,
        ContainerOptions {
            mount_point: format!("../../../Game{HOSTILE}/"),
            ..ContainerOptions::default()
        },
    )
    .unwrap();
    let package_name = format!("/Game/{HOSTILE}");
    b.add_package(
        zenpak::hash::package_id(&package_name),
        &[7u8; 64],
        StoreEntry::default(),
        &format!("Content/{HOSTILE}.uasset"),
    )
    .unwrap();
    b.add_loose_file(&format!("Config/{HOSTILE}.ini"), b"[x]\n")
        .unwrap();
    let utoc = b.finish().unwrap().utoc;
    inspect_everywhere(&["inspect", utoc.to_str().unwrap()]);

    // The game folder: the sources' names (a pak named with an escape).
    std::fs::copy(&pak, paks.join(format!("Mod{HOSTILE}.pak"))).unwrap();
    inspect_everywhere(&["inspect", paks.to_str().unwrap()]);
}

#[test]
fn inspect_escapes_names_from_packages_and_mappings() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let folder = corpus.join("uassetapi/TestUE5_6/BpThirdPerson");
    let usmap = folder.join("ExplicitEnumValuesExample.usmap");
    let dir = common::temp_dir("inspect-escape-packages");

    // A legacy package whose export is renamed (same length: the header
    // keeps its size, the .uexp its offsets).
    let source = folder.join("SM_Cube.uasset");
    let header = std::fs::read(&source).unwrap();
    let mut package = LegacyPackage::read(&header, Some(EngineVersion::UE5_6)).unwrap();
    let hostile = "S\u{1b}[2J\u{7}\r"; // as long as "SM_Cube"
    let entry = package
        .names
        .iter_mut()
        .find(|n| n.text == "SM_Cube")
        .unwrap();
    *entry = NameEntry::new(hostile);
    let uasset = dir.join("SM_Cube.uasset");
    std::fs::write(&uasset, package.write().unwrap()).unwrap();
    for companion in ["uexp", "ubulk"] {
        std::fs::copy(
            source.with_extension(companion),
            uasset.with_extension(companion),
        )
        .unwrap();
    }
    let p = uasset.to_str().unwrap();
    inspect_everywhere(&["inspect", p, "--engine", "5.6"]);
    let m = usmap.to_str().unwrap();
    inspect_everywhere(&[
        "inspect",
        p,
        "--engine",
        "5.6",
        "--mappings",
        m,
        "--properties",
    ]);
    // The profile's preview names no export when nothing changes: only
    // the absence of raw control characters is asserted.
    let args = ["inspect", p, "--engine", "5.6", "--profile", "generic"];
    let inspected = run(None, &args);
    inspected.ok();
    assert!(!inspected.text().chars().any(unsafe_char));

    // The Zen package converted from it.
    let zen = dir.join("SM_Cube.uzenasset");
    run(
        None,
        &[
            "convert",
            p,
            "--engine",
            "5.6",
            "--package-name",
            "/Game/LevelPrototyping/Meshes/SM_Cube",
            "-o",
            zen.to_str().unwrap(),
        ],
    )
    .ok();
    inspect_everywhere(&["inspect", zen.to_str().unwrap(), "--engine", "5.6"]);

    // Mappings with an extension block whose id is an escape sequence.
    let mut mappings = zenpak::mappings::Mappings::load(&usmap).unwrap();
    let mut trailing = b"CEXT\0".to_vec();
    trailing.extend_from_slice(&1i32.to_le_bytes());
    trailing.extend_from_slice(b"\x1b[2J");
    trailing.extend_from_slice(&0u32.to_le_bytes());
    mappings.trailing = trailing;
    let hostile_usmap = dir.join("Hostile.usmap");
    std::fs::write(
        &hostile_usmap,
        mappings
            .write(zenpak::mappings::BodyCompression::None)
            .unwrap(),
    )
    .unwrap();
    inspect_everywhere(&["inspect", hostile_usmap.to_str().unwrap()]);
}

#[test]
fn inspect_escapes_names_from_classic_packages() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let source = corpus.join("classic/ut99/Maps/Entry.unr");
    let bytes = std::fs::read(&source).unwrap();
    let package = zenpak::classic::Package::read_file(&source).unwrap();
    let mut edited = package.clone();
    // The name of the first export (and of whatever else shares it).
    let first = edited.exports[0].object_name;
    edited.names[first].name = format!("Entry{HOSTILE_LATIN1}");
    let unchanged = vec![zenpak::classic::writer::ExportEdit::Unchanged; edited.exports.len()];
    let written =
        zenpak::classic::writer::write_edited(&bytes, &package, &edited, &unchanged).unwrap();
    let dir = common::temp_dir("inspect-escape-classic");
    let path = dir.join("Entry.unr");
    std::fs::write(&path, &written.bytes).unwrap();
    inspect_everywhere(&["inspect", path.to_str().unwrap()]);
}
