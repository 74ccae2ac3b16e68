//! Pak versions after 11, through the real binary.
//!
//! * 12 (`Utf8PakDirectory`): the full directory index stores file names as
//!   `FUtf8String`s (`FPakFile::LoadIndexInternal` in the engine's
//!   `IPlatformFilePak.cpp` reads `FUtf8String FileNameUtf8` from version 12;
//!   directory names stay `FString`s). Seen in shipping games.
//! * 13 (`SortedDirectoryIndex`): the full directory index may be flat,
//!   recognised by its magic; in the map form it is version 12's layout.
//! * 14 (`PakchunkIndex`): the footer ends with an i32 pakchunk index.
//! * 15 and later: refused as `unsupported`, naming the version.
//!
//! Paks of these versions are made here with zenpak's writer (12), then
//! re-labelled (13: the footer's version field; 14: a 4-byte-longer footer),
//! since no engine release that writes them ships in the corpus.

use std::path::Path;

use crate::common::{self, run};
use zenpak::pak::index::PakFooter;
use zenpak::pak::{PakWriter, PakWriterOptions};
use zenpak::version::PakVersion;

/// Files with names only UTF-8 (or UTF-16) can hold, and a Latin-1 one.
const FILES: [(&str, &[u8]); 3] = [
    ("Game/Content/日本/ファイル.ini", b"[Section]\nKey=1\n"),
    ("Game/Content/Übung/Straße.txt", b"latin-1 name\n"),
    ("Game/Config/DefaultGame.ini", b"[/Script/Game]\n"),
];

fn write_pak(path: &Path, version: PakVersion) {
    let mut pak = PakWriter::create_with(
        path,
        PakWriterOptions {
            version,
            ..PakWriterOptions::default()
        },
    )
    .unwrap();
    for (name, bytes) in FILES {
        pak.add_file(name, bytes).unwrap();
    }
    pak.finish().unwrap();
}

/// The pak with its footer rewritten as `version`'s layout.
fn relabel(from: &Path, to: &Path, version: PakVersion) {
    let bytes = std::fs::read(from).unwrap();
    let mut footer = PakFooter::find(&bytes, 0).unwrap();
    let body = &bytes[..bytes.len() - footer.version.footer_size()];
    footer.version = version;
    footer.pakchunk_index = version.has_pakchunk_index().then_some(3);
    let mut w = zenpak::binary::Writer::new();
    w.bytes(body);
    footer.write(&mut w);
    std::fs::write(to, w.into_inner()).unwrap();
}

fn listed(pak: &Path) -> Vec<String> {
    let listing: serde_json::Value = run(None, &["list", pak.to_str().unwrap(), "--json"])
        .assert_code_for(0, pak.display())
        .doc();
    let mut paths: Vec<String> = listing["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap().to_string())
        .collect();
    paths.sort();
    paths
}

fn expected() -> Vec<String> {
    let mut paths: Vec<String> = FILES.iter().map(|(n, _)| n.to_string()).collect();
    paths.sort();
    paths
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[test]
fn version_12_stores_file_names_as_utf8_and_round_trips_them() {
    let dir = common::temp_dir("pak-v12");
    let v11 = dir.join("Names_11.pak");
    let v12 = dir.join("Names_12.pak");
    write_pak(&v11, PakVersion::V11);
    write_pak(&v12, PakVersion::V12);
    let (b11, b12) = (std::fs::read(&v11).unwrap(), std::fs::read(&v12).unwrap());
    let utf8 = "ファイル.ini".as_bytes();
    assert!(contains(&b12, utf8), "v12 names are UTF-8");
    assert!(!contains(&b11, utf8), "v11 names are UTF-16");
    assert_eq!(PakFooter::find(&b12, 0).unwrap().version, PakVersion::V12);

    for pak in [&v11, &v12] {
        assert_eq!(listed(pak), expected(), "{}", pak.display());
        run(None, &["verify", pak.to_str().unwrap()]).assert_code_for(0, pak.display());
        for (name, bytes) in FILES {
            let out = dir.join("got.bin");
            run(
                None,
                &[
                    "get",
                    pak.to_str().unwrap(),
                    name,
                    "-o",
                    out.to_str().unwrap(),
                ],
            )
            .assert_code_for(0, name);
            assert_eq!(std::fs::read(&out).unwrap(), bytes, "{name}");
        }
    }
}

#[test]
fn versions_13_and_14_in_the_map_form_are_read() {
    let dir = common::temp_dir("pak-v13-v14");
    let v12 = dir.join("Base.pak");
    write_pak(&v12, PakVersion::V12);
    for version in [PakVersion::V13, PakVersion::V14] {
        let pak = dir.join(format!("Relabelled_{version}.pak"));
        relabel(&v12, &pak, version);
        let bytes = std::fs::read(&pak).unwrap();
        let footer = PakFooter::find(&bytes, 0).unwrap();
        assert_eq!(footer.version, version);
        assert_eq!(
            footer.pakchunk_index,
            version.has_pakchunk_index().then_some(3)
        );
        assert_eq!(listed(&pak), expected(), "{version}");
        let inspected = run(
            None,
            &["inspect", pak.to_str().unwrap(), "--message-format", "json"],
        )
        .ok()
        .line_of("inspected");
        assert_eq!(inspected["version"], version.name(), "{inspected}");
    }
}

#[test]
fn a_newer_version_is_refused_naming_it() {
    let dir = common::temp_dir("pak-v15");
    let v12 = dir.join("Base.pak");
    write_pak(&v12, PakVersion::V12);
    // Version 15's footer is 37 bytes longer than 14's (encryption method
    // and three IVs); any layout with the magic and version 15 is refused.
    let mut bytes = std::fs::read(&v12).unwrap();
    bytes.extend_from_slice(&[0; 17]);
    bytes.extend_from_slice(&zenpak::pak::PAK_MAGIC.to_le_bytes());
    bytes.extend_from_slice(&15u32.to_le_bytes());
    bytes.extend_from_slice(&[0; 241]);
    let pak = dir.join("Newer.pak");
    std::fs::write(&pak, bytes).unwrap();
    let error = run(
        None,
        &["list", pak.to_str().unwrap(), "--message-format", "json"],
    )
    .assert_code(1)
    .error();
    assert_eq!(error["code"], "unsupported", "{error}");
}
