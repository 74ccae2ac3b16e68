//! Issue 15, rows 6–9: what a Marvel Rivals mod needs beside its packages.
//! Row 6: the companion pak's `chunknames` entry lists exactly the paths of
//! a container built from corpus packages. Row 7: the `_9999999_P` suffix.
//! Row 8: the game's pak cipher (key words and block words reversed, only a
//! path-derived prefix of each entry encrypted, the 35 bytes before the
//! footer, key GUID zero). Row 9: `check` warnings for packages that use
//! classes the game unmounts a container for.

use crate::fixups_support;

use std::path::Path;
use std::sync::Arc;

use fixups_support::common;
use zenpak::binary::Reader;
use zenpak::compression::Compression;
use zenpak::fixups::marvel_rivals::companion::{chunknames, CHUNKNAMES};
use zenpak::fixups::marvel_rivals::pak_cipher::{
    encrypted_prefix, root_path, RivalsPakCipher, FOOTER_PREFIX,
};
use zenpak::fixups::marvel_rivals::unmounted;
use zenpak::fixups::MarvelRivalsSection;
use zenpak::iostore::chunk::ChunkType;
use zenpak::iostore::{Container, ContainerBuilder, ContainerOptions};
use zenpak::legacy::PackageFiles;
use zenpak::pak::crypto::AesKey;
use zenpak::pak::entry::PakEntry;
use zenpak::pak::index::{FullDirectoryIndex, PakFooter, PrimaryIndex};
use zenpak::pak::{PakReader, PakWriter, FOOTER_SIZE_V11};
use zenpak::version::PakVersion;
use zenpak::EngineVersion;

/// A 5.6 container of three corpus packages (one with a bulk-data chunk);
/// returns the `.utoc` path.
fn build_container(dir: &Path) -> Option<std::path::PathBuf> {
    let corpus = common::corpus()?;
    let engine = EngineVersion::UE5_6;
    let mut b =
        ContainerBuilder::create(dir, "Skin_9999999_P", engine, ContainerOptions::default())
            .unwrap();
    for (rel, name, path) in [
        (
            "retoc/UE5.6/SM_Cube.uasset",
            "/Game/Meshes/SM_Cube",
            "Marvel/Content/Meshes/SM_Cube",
        ),
        (
            "retoc/UE5.6/T_Quinn_01_D.uasset",
            "/Game/Characters/Textures/T_Quinn_01_D",
            "Marvel/Content/Characters/Textures/T_Quinn_01_D",
        ),
        (
            "retoc/UE5.6/BP_ThirdPersonCharacter.uasset",
            "/Game/ThirdPerson/BP_ThirdPersonCharacter",
            "Marvel/Content/ThirdPerson/BP_ThirdPersonCharacter",
        ),
    ] {
        let files = PackageFiles::load(corpus.join(rel)).unwrap();
        let package = files.read_package(Some(engine)).unwrap();
        let c = zenpak::zen::convert(&files, &package, engine, name).unwrap();
        b.add_package(
            c.package_id,
            &c.package_bytes,
            c.store_entry.clone(),
            &format!("{path}.uasset"),
        )
        .unwrap();
        for (kind, data) in &c.bulk_data {
            let chunk = ChunkType::of_bulk(*kind);
            b.add_bulk_chunk(
                c.package_id,
                chunk,
                0,
                data,
                &format!("{path}.{}", kind.extension()),
            )
            .unwrap();
        }
    }
    Some(b.finish().unwrap().utoc)
}

#[test]
fn chunknames_lists_exactly_the_containers_paths() {
    let dir = tempfile::tempdir().unwrap();
    let Some(utoc) = build_container(dir.path()) else {
        return;
    };
    let container = Container::open(&utoc, None).unwrap();
    let paths: Vec<String> = container.paths.values().map(str::to_string).collect();
    assert_eq!(
        paths.len(),
        5,
        "three packages and two bulk chunks: {paths:?}"
    );
    let files = MarvelRivalsSection::default().companion_pak_files(&paths);
    assert_eq!(files.len(), 1);
    assert_eq!(files[0].0, CHUNKNAMES);
    // The pak the build writes: the entry reads back as the sorted paths, one per line.
    let pak = dir.path().join("companion.pak");
    let mut w = PakWriter::create(
        &pak,
        PakVersion::V11,
        "../../../",
        Compression::None,
        None,
        [0; 16],
    )
    .unwrap();
    w.add_file(&files[0].0, &files[0].1).unwrap();
    w.finish().unwrap();
    let reader = PakReader::open(&pak, None).unwrap();
    assert_eq!(reader.entries.len(), 1);
    let text = String::from_utf8(reader.read(&reader.entries[0]).unwrap()).unwrap();
    let mut expected = paths.clone();
    expected.sort();
    assert_eq!(text.split('\n').collect::<Vec<_>>(), expected);
    assert_eq!(text.as_bytes(), chunknames(&paths));
    assert!(!text.ends_with('\n'));
}

/// Reads a pak written with the game's cipher: footer, the bytes before it,
/// the index parts decrypted, each entry's stored bytes unsealed.
fn read_rivals_pak(
    bytes: &[u8],
    cipher: &RivalsPakCipher,
) -> (PakFooter, Vec<(String, PakEntry, Vec<u8>)>) {
    let footer_at = bytes.len() - FOOTER_SIZE_V11;
    let footer = PakFooter::read(&mut Reader::new(&bytes[footer_at..]), PakVersion::V11).unwrap();
    assert_eq!(bytes[footer_at - 35..footer_at], FOOTER_PREFIX);
    let part = |offset: u64, size: u64| {
        let mut b = bytes[offset as usize..(offset + size) as usize].to_vec();
        assert_eq!(b.len() % 16, 0);
        cipher.decrypt(&mut b);
        b
    };
    let primary = PrimaryIndex::read(
        &mut Reader::new(&part(footer.index_offset, footer.index_size)),
        PakVersion::V11,
    )
    .unwrap();
    let fdi_at = primary.full_directory_index.as_ref().unwrap();
    let fdi = FullDirectoryIndex::read(
        &mut Reader::new(&part(fdi_at.offset, fdi_at.size)),
        PakVersion::V11,
    )
    .unwrap();
    let mut out = Vec::new();
    for (dir, files) in &fdi.0 {
        for (file, offset) in files {
            let path = if dir == "/" {
                file.clone()
            } else {
                format!("{dir}{file}")
            };
            let entry = PakEntry::read_encoded(
                &mut Reader::new(&primary.encoded_entries[*offset as usize..]),
                PakVersion::V11,
            )
            .unwrap();
            let data_at = (entry.offset
                + PakEntry::record_size(PakVersion::V11, entry.blocks.len(), entry.method != 0))
                as usize;
            // Uncompressed entries record their plain size; on disk they are padded to 16.
            let stored_len = if entry.method == 0 {
                entry
                    .size
                    .next_multiple_of(16)
                    .min((bytes.len() - data_at) as u64)
            } else {
                entry.size
            };
            let stored = bytes[data_at..data_at + stored_len as usize].to_vec();
            let plain = cipher.unseal(&root_path(&primary.mount_point, &path), stored);
            out.push((path, entry, plain));
        }
    }
    (footer, out)
}

#[test]
fn the_games_pak_cipher() {
    let dir = tempfile::tempdir().unwrap();
    let key =
        AesKey::parse("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f").unwrap();
    let cipher = RivalsPakCipher::new(&key);
    // Not periodic, so that any 32 bytes of it occur once.
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let long: Vec<u8> = (0..10_000)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 24) as u8
        })
        .collect();
    let chunk = b"Marvel/Content/A.uasset\nMarvel/Content/B.uasset".to_vec();
    for compression in [Compression::None, Compression::Zlib] {
        let pak = dir
            .path()
            .join(format!("rivals_{}.pak", compression.engine_name()));
        let mut w = PakWriter::create(
            &pak,
            PakVersion::V11,
            "../../../",
            compression,
            None,
            [0; 16],
        )
        .unwrap()
        .with_cipher(Arc::new(cipher.clone()));
        w.add_file(CHUNKNAMES, &chunk).unwrap();
        w.add_file("Marvel/Config/Long.ini", &long).unwrap();
        w.finish().unwrap();
        let bytes = std::fs::read(&pak).unwrap();
        let (footer, entries) = read_rivals_pak(&bytes, &cipher);
        assert!(footer.encrypted_index);
        assert_eq!(footer.encryption_key_guid, [0; 16]);
        assert_eq!(entries.len(), 2);
        for (path, entry, plain) in entries {
            assert!(entry.encrypted, "{path}");
            let original = if path == CHUNKNAMES { &chunk } else { &long };
            let data = if entry.method == 0 {
                plain[..original.len()].to_vec()
            } else {
                let header = PakEntry::record_size(PakVersion::V11, entry.blocks.len(), true);
                let mut out = Vec::new();
                for b in &entry.blocks {
                    let block = &plain[(b.start - header) as usize..(b.end - header) as usize];
                    let size = (original.len() - out.len()).min(entry.block_size as usize);
                    out.extend(compression.decompress(block, size).unwrap());
                }
                out
            };
            assert_eq!(&data, original, "{path}");
        }
        // Uncompressed: past the path's prefix the bytes are stored in the clear.
        if compression == Compression::None {
            let n = encrypted_prefix("Marvel/Config/Long.ini");
            let at = bytes
                .windows(64)
                .position(|w| w == &long[n..n + 64])
                .expect("the clear tail is in the file");
            assert!(
                !bytes.windows(32).any(|w| w == &long[..32]),
                "the prefix is encrypted"
            );
            let _ = at;
            // The short entry was padded to 16 and encrypted whole.
            assert!(!bytes.windows(chunk.len()).any(|w| w == chunk.as_slice()));
        }
    }
    // The engine's own reader cannot read it with the key as the engine would use it.
    let pak = dir.path().join("rivals_None.pak");
    assert!(PakReader::open(&pak, Some(key.clone()))
        .and_then(|r| r.read(&r.entries[0]))
        .map_or(true, |d| d != chunk));
}

#[test]
fn classes_that_get_a_container_unmounted_are_warned_about() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let section = MarvelRivalsSection::default();
    let mut flagged = Vec::new();
    let mut clean = 0;
    for (path, engine) in common::legacy_packages(&corpus) {
        let files = PackageFiles::load(&path).unwrap();
        let package = files.read_package(Some(engine)).unwrap();
        let warnings = unmounted::warnings(&section, &path, &package).unwrap();
        let imports_shake_or_ability = (0..package.imports.len()).any(|i| {
            let p = package.import_path(i).unwrap();
            (p.starts_with("/Script/GameplayAbilities.") || p.contains("CameraShake"))
                && package.name(package.imports[i].class_name).unwrap() == "Class"
        });
        assert_eq!(
            !warnings.is_empty(),
            imports_shake_or_ability,
            "{}",
            path.display()
        );
        match warnings.as_slice() {
            [] => clean += 1,
            [w] => {
                assert_eq!(w.code, unmounted::CODE);
                assert_eq!(w.file.as_deref(), Some(path.display().to_string().as_str()));
                assert!(
                    w.message.contains("CameraShake")
                        || w.message.contains("/Script/GameplayAbilities."),
                    "{}",
                    w.message
                );
                assert!(w.hint.is_some());
                flagged.push(path.file_name().unwrap().to_string_lossy().into_owned());
            }
            more => panic!("one warning per package, got {more:?}"),
        }
    }
    flagged.sort();
    eprintln!("flagged: {flagged:?}; {clean} packages without such classes");
    for shake in [
        "Elevator_Stop_Shake.uasset",
        "Head_Bobbing_Walk.uasset",
        "Jumpscare_Camera_Shake.uasset",
    ] {
        assert!(
            flagged.iter().any(|f| f == shake),
            "{shake} not flagged: {flagged:?}"
        );
    }
    assert!(clean > 200);
    // The list is the modder's: an empty one warns about nothing.
    let none = MarvelRivalsSection {
        unmounted_classes: Vec::new(),
        ..MarvelRivalsSection::default()
    };
    let path = corpus.join("uassetapi/TestManyAssets/Clay/Clay/Content/FirstPerson/Blueprints/Camera_Shakes/Elevator_Stop_Shake.uasset");
    let files = PackageFiles::load(&path).unwrap();
    let package = files.read_package(Some(EngineVersion::UE5_1)).unwrap();
    assert!(unmounted::warnings(&none, &path, &package)
        .unwrap()
        .is_empty());
    assert_eq!(
        unmounted::listed_classes(&section, &package).unwrap(),
        [
            "/Script/GameplayCameras.LegacyCameraShake",
            "/Script/GameplayCameras.LegacyCameraShakePattern"
        ]
    );
}

#[test]
fn the_suffix_sorts_the_mod_above_the_games_patches() {
    let text = "[mod]\nname = \"Skin\"\nversion = \"1\"\n[game]\nengine = \"5.3\"\nproject = \"Marvel\"\nprofile = \"marvel-rivals\"\n[marvel-rivals]\nencrypt-pak = false\n";
    let m = zenpak::manifest::Manifest::parse(text, Path::new("/m/mod.toml")).unwrap();
    let section = zenpak::fixups::marvel_rivals::settings(&m.profile_options());
    assert!(!section.encrypt_pak && section.chunknames);
    assert_eq!(section.artifact_stem(&m.artifact_name()), "Skin_9999999_P");
    // Bad values name the key.
    let bad = text.replace("encrypt-pak = false", "suffix = \"a b\"");
    let e = zenpak::manifest::Manifest::parse(&bad, Path::new("/m/mod.toml")).unwrap_err();
    assert!(e.to_string().contains("suffix"), "{e}");
    let unknown = text.replace("encrypt-pak = false", "encrypt = true");
    assert!(zenpak::manifest::Manifest::parse(&unknown, Path::new("/m/mod.toml")).is_err());
}

#[test]
fn the_profile_hooks_for_the_build() {
    use zenpak::fixups::{Profile, ProfileOptions};
    let o = ProfileOptions::default();
    let paths = vec!["Marvel/Content/A.uasset".to_string()];
    assert!(Profile::from_name("generic")
        .unwrap()
        .companion_pak_files(&o, &paths)
        .is_empty());
    assert_eq!(
        Profile::from_name("marvel-rivals")
            .unwrap()
            .companion_pak_files(&o, &paths),
        [(CHUNKNAMES.to_string(), b"Marvel/Content/A.uasset".to_vec())]
    );
    let key = AesKey::from_bytes([3; 32]);
    assert!(Profile::from_name("marvel-rivals")
        .unwrap()
        .requires_pak_key(&o));
    assert!(Profile::from_name("marvel-rivals")
        .unwrap()
        .pak_cipher(&o, &key)
        .is_some());
    assert!(Profile::from_name("generic")
        .unwrap()
        .pak_cipher(&o, &key)
        .is_none());
    let off = fixups_support::options(|s| s.encrypt_pak = false);
    assert!(!Profile::from_name("marvel-rivals")
        .unwrap()
        .requires_pak_key(&off));
    assert!(Profile::from_name("marvel-rivals")
        .unwrap()
        .pak_cipher(&off, &key)
        .is_none());
    let text =
        "[mod]\nname = \"Skin\"\nversion = \"1\"\n[game]\nengine = \"5.3\"\nproject = \"Marvel\"\n";
    let m = zenpak::manifest::Manifest::parse(text, Path::new("/m/mod.toml")).unwrap();
    assert_eq!(
        Profile::from_name("generic")
            .unwrap()
            .artifact_stem(&o, &m.artifact_name()),
        "Skin_P"
    );
    assert_eq!(
        Profile::from_name("marvel-rivals")
            .unwrap()
            .artifact_stem(&o, &m.artifact_name()),
        "Skin_9999999_P"
    );
}
