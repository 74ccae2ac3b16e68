//! The corpus's 48 UnrealPak paks (versions 5, 7, 8a, 8b, 9, 11 × compressed
//! × encrypted × encrypted index): each unpacks to the `pack/root` files byte
//! for byte, keys are needed where the engine needs them, a wrong key is an
//! error, and zenpak's pak writer reproduces UnrealPak's bytes.

use crate::common;

use std::path::{Path, PathBuf};

use zenpak::compression::Compression;
use zenpak::pak::crypto::KeyRing;
use zenpak::pak::{PakReader, PakWriter, PakWriterOptions};
use zenpak::version::PakVersion;

const FILES: [&str; 4] = ["directory/nested.txt", "test.png", "test.txt", "zeros.bin"];

fn unrealpak() -> Option<PathBuf> {
    Some(common::corpus()?.join("paks/unrealpak"))
}

fn paks(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir.join("packs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "pak"))
        .collect();
    out.sort();
    out
}

fn expected_version(name: &str) -> PakVersion {
    let v = name.trim_start_matches("pack_v").split('_').next().unwrap();
    match v.trim_end_matches(".pak") {
        "5" => PakVersion::V5,
        "7" => PakVersion::V7,
        "8a" => PakVersion::V8A,
        "8b" => PakVersion::V8B,
        "9" => PakVersion::V9,
        "11" => PakVersion::V11,
        other => panic!("unexpected pak name {other}"),
    }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(|e| e.ok())
        .map(|e| e.into_path())
        .collect()
}

#[test]
fn all_48_paks_unpack_byte_for_byte() {
    let Some(dir) = unrealpak() else { return };
    let keys = KeyRing::from_file(&dir.join("crypto.json")).unwrap();
    let all = paks(&dir);
    assert_eq!(all.len(), 48);
    let out = common::temp_dir("unpack48");
    for pak_path in &all {
        let name = pak_path.file_name().unwrap().to_string_lossy().into_owned();
        let pak =
            PakReader::open_with_keys(pak_path, &keys).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(pak.version, expected_version(&name), "{name}");
        assert_eq!(pak.mount_point, "../mount/point/root/", "{name}");
        assert_eq!(pak.encrypted_index, name.contains("encryptindex"), "{name}");
        let paths: Vec<&str> = pak.entries.iter().map(|e| e.path.as_str()).collect();
        assert_eq!(paths, FILES, "{name}");
        let encrypt_entries = name.contains("_encrypt.") || name.contains("_encrypt_");
        assert_eq!(pak.has_encrypted_entries(), encrypt_entries, "{name}");
        if name.contains("compress") {
            assert!(
                pak.entries.iter().any(|e| e.compression == "Zlib"),
                "{name}"
            );
        }
        let target = out.join(&name);
        assert_eq!(pak.unpack(&target).unwrap(), 4);
        for file in FILES {
            let want = std::fs::read(dir.join("pack/root").join(file)).unwrap();
            let got = std::fs::read(target.join(file)).unwrap();
            assert!(want == got, "{name}: {file} differs");
        }
    }
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn the_cli_unpacks_with_the_crypto_json_and_refuses_without_a_key() {
    let Some(dir) = unrealpak() else { return };
    let out = common::temp_dir("cli");
    let pak = dir.join("packs/pack_v9_compress_encrypt_encryptindex.pak");
    let crypto = dir.join("crypto.json");
    common::run(
        None,
        &[
            "unpack",
            pak.to_str().unwrap(),
            out.to_str().unwrap(),
            "--aes-key-file",
            crypto.to_str().unwrap(),
        ],
    )
    .ok();
    for file in FILES {
        assert_eq!(
            std::fs::read(out.join("mount/point/root").join(file)).unwrap(),
            std::fs::read(dir.join("pack/root").join(file)).unwrap()
        );
    }
    // The key inline, as base64.
    common::run(
        None,
        &[
            "verify",
            pak.to_str().unwrap(),
            "--aes-key",
            "lNJbw660IOC+kU7cnVQ1oeqrXyhk4J6UAZrCBbcnp94=",
        ],
    )
    .ok();
    // No key: exit 1, a `key` error, nothing written.
    let empty = out.join("none");
    let missing = common::run(
        None,
        &[
            "unpack",
            pak.to_str().unwrap(),
            empty.to_str().unwrap(),
            "--message-format",
            "json",
        ],
    );
    let error = missing.assert_code(1).error();
    assert_eq!(error["code"], "key", "{error}");
    assert!(!empty.exists());
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn a_wrong_key_is_an_error_not_garbage() {
    let Some(dir) = unrealpak() else { return };
    let wrong = KeyRing::single(Some(zenpak::pak::crypto::AesKey::from_bytes([0x5a; 32])));
    for name in [
        "pack_v11_encrypt_encryptindex.pak",
        "pack_v5_compress_encryptindex.pak",
    ] {
        let e = PakReader::open_with_keys(&dir.join("packs").join(name), &wrong).unwrap_err();
        // The decrypted index does not hash to its recorded SHA-1: a
        // format error at the index, with a hint about the key.
        assert_eq!(e.code(), "format", "{name}: {e}");
        assert!(e.offset().is_some() && e.hint().is_some(), "{name}: {e}");
    }
    // Entries encrypted, index not: the index opens. The SHA-1 of an
    // encrypted entry covers its encrypted bytes, so it cannot tell a wrong
    // key; decompression can, and so can the padding of an entry whose size
    // is not a multiple of 16. An uncompressed entry of 16·n bytes
    // (`zeros.bin`, 2048) has neither: nothing in the file can tell.
    for name in ["pack_v11_encrypt.pak", "pack_v8a_compress_encrypt.pak"] {
        let pak = PakReader::open_with_keys(&dir.join("packs").join(name), &wrong).unwrap();
        for entry in &pak.entries {
            let detectable = entry.compression != "None"
                || (entry.size % 16 != 0 && pak.version >= PakVersion::V7);
            match pak.read(entry) {
                Err(e) => assert!(matches!(e.code(), "key" | "decompress"), "{name}: {e}"),
                Ok(_) => assert!(!detectable, "{name}: {} read with a wrong key", entry.path),
            }
        }
        // Unpack stops at the first entry that fails and leaves no partial file.
        let out = common::temp_dir("wrongkey");
        assert!(pak.unpack(&out).is_err());
        let leftovers: Vec<_> = walk(&out)
            .into_iter()
            .filter(|p| p.to_string_lossy().contains("zenpak-tmp"))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
        let _ = std::fs::remove_dir_all(&out);
    }
}

/// Writes the corpus input the way UnrealPak did for `reference` (same
/// files in the same order, mount point, path hash seed, key), and returns
/// the bytes.
fn write_like(
    dir: &Path,
    reference: &PakReader,
    compression: Compression,
    encrypted: bool,
) -> Vec<u8> {
    let keys = KeyRing::from_file(&dir.join("crypto.json")).unwrap();
    let folder = common::temp_dir("writer");
    let out = folder.join("out.pak");
    let mut w = PakWriter::create_with(
        &out,
        PakWriterOptions {
            mount_point: reference.mount_point.clone(),
            compression,
            key: keys.default_key(),
            encryption_key_guid: [0; 16],
            path_hash_seed: reference.path_hash_seed.unwrap(),
            encrypt_entries: encrypted,
            encrypt_index: reference.encrypted_index,
            version: PakVersion::V11,
        },
    )
    .unwrap();
    for file in FILES {
        w.add_file(
            file,
            &std::fs::read(dir.join("pack/root").join(file)).unwrap(),
        )
        .unwrap();
    }
    w.finish().unwrap();
    let bytes = std::fs::read(&out).unwrap();
    let _ = std::fs::remove_dir_all(out.parent().unwrap());
    bytes
}

#[test]
fn the_pak_writer_reproduces_unrealpak_v11() {
    let Some(dir) = unrealpak() else { return };
    let keys = KeyRing::from_file(&dir.join("crypto.json")).unwrap();
    // Uncompressed, encrypted or not, index encrypted or not: identical.
    for name in [
        "pack_v11.pak",
        "pack_v11_encrypt.pak",
        "pack_v11_encryptindex.pak",
        "pack_v11_encrypt_encryptindex.pak",
    ] {
        let path = dir.join("packs").join(name);
        let reference = PakReader::open_with_keys(&path, &keys).unwrap();
        let encrypted = reference.has_encrypted_entries();
        let ours = write_like(&dir, &reference, Compression::None, encrypted);
        let theirs = std::fs::read(&path).unwrap();
        let first_difference = ours.iter().zip(&theirs).position(|(a, b)| a != b);
        assert!(
            ours == theirs,
            "{name}: {} vs {} bytes, first difference at {first_difference:?}",
            ours.len(),
            theirs.len()
        );
    }
}
