//! Shader libraries in a container (issue 18): a cooked
//! `ShaderArchive-<library>-<format>.ushaderbytecode` becomes a library
//! header chunk and shader group chunks as the engine's IoStore tool makes
//! them (`ConvertToIoStoreShaderLibrary`, `CreateIoStoreShaderCodeArchiveHeader`),
//! the packages that use its shader maps list them in their store entries,
//! and `verify` checks that each listed shader map has its chunks.
//!
//! Evidence: `retoc/UE5.4/ShaderArchive-NuclearNightmare-PCD3D_SM6-PCD3D_SM6`
//! (a cooked archive's header, without code, and the engine-written library
//! header of the same library) and the engine-written global library
//! `ShaderArchive-Global-PCD3D_SM6-PCD3D_SM6.ushaderbytecode` (already in
//! the IoStore layout).

use crate::common;

use std::path::Path;

use zenpak::compression::Compression;
use zenpak::iostore::chunk::{ChunkId, ChunkType};
use zenpak::iostore::container_header::StoreEntry;
use zenpak::iostore::shader_library::{
    convert, io_store_header, IoStoreShaderArchive, ShaHash, ShaderArchive, ShaderAssetInfo,
    ShaderCodeEntry, ShaderMapEntry,
};
use zenpak::iostore::{Container, ContainerBuilder, ContainerOptions};
use zenpak::EngineVersion;

const LIBRARY: &str = "ShaderArchive-NuclearNightmare-PCD3D_SM6-PCD3D_SM6";

/// The engine's grouping of the corpus library, from its cooked header:
/// the same groups (chunk ids from the shaders' hashes and sizes), the same
/// packed shader entries and the same shader index table as the library
/// header the engine wrote. Only compressed sizes differ in kind (the
/// engine recompresses groups with Oodle).
#[test]
fn grouping_matches_the_engine_written_library() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let dir = corpus.join("retoc/UE5.4");
    let cooked = std::fs::read(dir.join(format!("{LIBRARY}.ushaderbytecode"))).unwrap();
    let engine = std::fs::read(dir.join(format!("{LIBRARY}.uzenshaderbytecode"))).unwrap();
    let archive = ShaderArchive::read(&cooked).unwrap();
    let expected = IoStoreShaderArchive::read(&engine).unwrap();
    let (ours, groups) = io_store_header(&archive, "PCD3D_SM6", EngineVersion::UE5_4).unwrap();
    assert_eq!(archive.shader_hashes.len(), 29_285);
    assert_eq!(expected.group_entries.len(), 2_423);
    assert_eq!(groups.len(), 2_423);
    assert_eq!(ours.group_chunk_ids, expected.group_chunk_ids);
    assert_eq!(ours.shader_entries, expected.shader_entries);
    assert_eq!(ours.shader_indices, expected.shader_indices);
    assert_eq!(ours.shader_map_entries, expected.shader_map_entries);
    let layout = |h: &IoStoreShaderArchive| -> Vec<(u32, u32, u32)> {
        h.group_entries
            .iter()
            .map(|g| (g.shader_indices_offset, g.num_shaders, g.uncompressed_size))
            .collect()
    };
    assert_eq!(layout(&ours), layout(&expected));
}

/// The engine-written library headers read and write back byte for byte.
#[test]
fn engine_library_headers_rewrite_identically() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let dir = corpus.join("retoc/UE5.4");
    for name in [
        format!("{LIBRARY}.uzenshaderbytecode"),
        "ShaderArchive-Global-PCD3D_SM6-PCD3D_SM6.ushaderbytecode".to_string(),
    ] {
        let bytes = std::fs::read(dir.join(&name)).unwrap();
        let library = IoStoreShaderArchive::read(&bytes).unwrap();
        assert_eq!(library.write(), bytes, "{name}");
    }
}

/// How a synthetic shader is stored in the cooked archive.
#[derive(Clone, Copy)]
enum Stored {
    Raw,
    Zstd,
    Lz4,
    /// Shorter than the code and no method zenpak knows decodes it (as
    /// Oodle-compressed shaders are to zenpak).
    Opaque,
}

/// A synthetic shader: code, how the cook stored it, frequency.
type Shader = (Vec<u8>, Stored, u8);

/// A shader's code: `size` bytes that compress well, distinct per `seed`.
fn code(seed: u8, size: usize) -> Vec<u8> {
    (0..size)
        .map(|i| seed.wrapping_add((i / 7) as u8))
        .collect()
}

fn hash(tag: u8, seed: u8) -> ShaHash {
    let mut h = [tag; 20];
    h[0] = seed;
    h
}

/// A cooked archive of `shaders` (code, storage, frequency) used by
/// `maps` (shader indices per map), laid out as `Finalize` lays it out.
fn cooked_archive(shaders: &[Shader], maps: &[Vec<u32>]) -> Vec<u8> {
    let mut archive_code = Vec::new();
    let mut entries = Vec::new();
    for (code, stored, frequency) in shaders {
        let bytes = match stored {
            Stored::Raw => code.clone(),
            Stored::Zstd => Compression::Zstd.compress(code).unwrap(),
            Stored::Lz4 => Compression::Lz4.compress(code).unwrap(),
            Stored::Opaque => vec![0xFF; code.len() / 2],
        };
        entries.push(ShaderCodeEntry {
            offset: archive_code.len() as u64,
            size: bytes.len() as u32,
            uncompressed_size: code.len() as u32,
            frequency: *frequency,
        });
        archive_code.extend_from_slice(&bytes);
    }
    let mut indices = Vec::new();
    let mut map_entries = Vec::new();
    for shaders in maps {
        map_entries.push(ShaderMapEntry {
            shader_indices_offset: indices.len() as u32,
            num_shaders: shaders.len() as u32,
            first_preload_index: 0,
            num_preload_entries: 0,
        });
        indices.extend_from_slice(shaders);
    }
    let mut archive = ShaderArchive {
        shader_map_hashes: (0..maps.len() as u8).map(|m| hash(0xAA, m)).collect(),
        shader_hashes: (0..shaders.len() as u8).map(|s| hash(0x55, s)).collect(),
        shader_map_entries: map_entries,
        shader_entries: entries,
        preload_entries: Vec::new(),
        shader_indices: indices,
        code_offset: 0,
    };
    archive.set_preload_entries();
    archive.write(&archive_code)
}

/// Five shaders: two maps sharing shader 0; raw, zstd and LZ4 storage.
fn sample_shaders() -> (Vec<Shader>, Vec<Vec<u32>>) {
    let shaders = vec![
        (code(1, 3000), Stored::Zstd, 0),
        (code(2, 1200), Stored::Raw, 5),
        (code(3, 4000), Stored::Lz4, 0),
        (code(4, 900), Stored::Zstd, 5),
        (code(5, 2500), Stored::Raw, 5),
    ];
    let maps = vec![vec![0, 1, 2], vec![0, 3, 4]];
    (shaders, maps)
}

fn asset_info(maps: &[(ShaHash, &str)]) -> String {
    let entries: Vec<String> = maps
        .iter()
        .map(|(h, package)| {
            let hex: String = h.iter().map(|b| format!("{b:02X}")).collect();
            format!(r#"{{"ShaderMapHash":"{hex}","Assets":["{package}"]}}"#)
        })
        .collect();
    format!(
        r#"{{"AssetInfoVersion":2,"ShaderCodeToAssets":[{}]}}"#,
        entries.join(",")
    )
}

/// Each shader's code back from a library and its groups.
fn shaders_back(
    library: &IoStoreShaderArchive,
    group: impl Fn(&ChunkId) -> Vec<u8>,
) -> Vec<Vec<u8>> {
    let (archive, code) = ShaderArchive::from_io_store(library, |_, id| Ok(group(id))).unwrap();
    archive
        .shader_entries
        .iter()
        .map(|e| {
            // Kept as the cook compressed it when a group of one.
            uncompressed(
                &code[e.offset as usize..(e.offset + e.size as u64) as usize],
                e,
            )
        })
        .collect()
}

/// A shader's code uncompressed, from its stored `bytes`.
fn uncompressed(bytes: &[u8], e: &ShaderCodeEntry) -> Vec<u8> {
    if e.size == e.uncompressed_size {
        return bytes.to_vec();
    }
    [Compression::Zstd, Compression::Lz4]
        .iter()
        .find_map(|m| m.decompress(bytes, e.uncompressed_size as usize).ok())
        .unwrap()
}

/// A new UE 5.4 mod `LampMod` (project `LampGame`) in `dir`: its folder
/// and its content folder.
fn lamp_mod(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    use zenpak::scaffold::{write_mod, NewMod};
    let repo = dir.join("LampMod");
    let new = NewMod {
        name: "LampMod".into(),
        engine: EngineVersion::UE5_4,
        project: "LampGame".into(),
        git: false,
    };
    write_mod(&repo, &new).unwrap();
    let content = repo.join("Cooked/LampGame/Content");
    (repo, content)
}

/// A UE 5.4 mod with a package and a shader library the package uses,
/// built as a user builds it: the library becomes chunks (the asset info is
/// not packed), the package's store entry lists its shader maps sorted,
/// `zenpak verify` passes, and the shaders come back from the container.
#[test]
fn a_library_goes_through_a_build_and_back() {
    use zenpak::build::{build, BuildOptions, Silent};
    use zenpak::manifest::Manifest;
    let Some(corpus) = common::corpus() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (repo, content) = lamp_mod(dir.path());
    let blueprints = content.join("Billiards/Blueprints");
    std::fs::create_dir_all(&blueprints).unwrap();
    for ext in ["uasset", "uexp"] {
        let from = corpus.join(format!("retoc/UE5.4/BP_Table_Lamp.{ext}"));
        std::fs::copy(from, blueprints.join(format!("BP_Table_Lamp.{ext}"))).unwrap();
    }
    let (shaders, maps) = sample_shaders();
    let library_name = "ShaderArchive-LampGame-PCD3D_SM6.ushaderbytecode";
    std::fs::write(content.join(library_name), cooked_archive(&shaders, &maps)).unwrap();
    let package = "/Game/Billiards/Blueprints/BP_Table_Lamp";
    // Listed out of order: the store entry sorts them.
    let info = asset_info(&[(hash(0xAA, 1), package), (hash(0xAA, 0), package)]);
    std::fs::write(
        content.join("ShaderAssetInfo-LampGame-PCD3D_SM6.assetinfo.json"),
        info,
    )
    .unwrap();

    let manifest = Manifest::load(&repo.join("mod.toml")).unwrap();
    build(&manifest, &BuildOptions::default(), &Silent).unwrap();
    let utoc = &zenpak::release::artifact_paths(&manifest)[0];
    common::run(None, &["verify", utoc.to_str().unwrap()]).ok();

    let container = Container::open(utoc, None).unwrap();
    let header = container.container_header().unwrap().unwrap();
    let (_, entry) = header
        .packages
        .iter()
        .find(|(id, _)| *id == zenpak::hash::package_id(package))
        .unwrap();
    assert_eq!(entry.shader_map_hashes, vec![hash(0xAA, 0), hash(0xAA, 1)]);
    let chunks = container.chunks();
    let library_chunk = chunks
        .iter()
        .find(|c| c.chunk_type == ChunkType::ShaderCodeLibrary)
        .unwrap();
    assert_eq!(
        library_chunk.path.as_deref(),
        Some(format!("LampGame/Content/{library_name}").as_str())
    );
    let pak = zenpak::pak::PakReader::open(&utoc.with_extension("pak"), None).unwrap();
    assert!(pak
        .entries
        .iter()
        .all(|e| !e.path.contains("ShaderAssetInfo")));
    assert!(pak
        .entries
        .iter()
        .all(|e| !e.path.contains("ShaderArchive")));

    let library =
        IoStoreShaderArchive::read(&container.read_chunk(library_chunk.index).unwrap()).unwrap();
    let back = shaders_back(&library, |id| {
        container.read_chunk(container.find(id).unwrap()).unwrap()
    });
    let original: Vec<Vec<u8>> = shaders.iter().map(|(c, _, _)| c.clone()).collect();
    assert_eq!(back, original);
}

/// Builds a 5.4 container holding the sample library (with `drop_group`
/// group chunks left out) and one package that uses both shader maps;
/// returns what `verify` reports.
fn container_with_library(dir: &Path, drop_group: Option<usize>) -> (Vec<String>, Vec<String>) {
    let (shaders, maps) = sample_shaders();
    let engine = EngineVersion::UE5_4;
    let name = "ShaderArchive-Lib-PCD3D_SM6.ushaderbytecode";
    let package = "/Game/Lib";
    let info = ShaderAssetInfo::read(
        asset_info(&[(hash(0xAA, 0), package), (hash(0xAA, 1), package)]).as_bytes(),
    )
    .unwrap();
    let mut library = convert(name, &cooked_archive(&shaders, &maps), Some(&info), engine).unwrap();
    if let Some(group) = drop_group {
        library.group_chunks.remove(group);
    }
    let mut builder =
        ContainerBuilder::create(dir, "Lib_P", engine, ContainerOptions::default()).unwrap();
    let id = zenpak::hash::package_id(package);
    builder
        .add_package(
            id,
            b"zen package",
            StoreEntry::default(),
            "Game/Content/Lib.uasset",
        )
        .unwrap();
    builder
        .add_shader_library(&library, &format!("Game/Content/{name}"))
        .unwrap();
    let written = builder.finish().unwrap();
    let report = Container::open(&written.utoc, None).unwrap().verify();
    let text = |list: Vec<zenpak::diagnostic::Diagnostic>| -> Vec<String> {
        list.into_iter().map(|d| d.message).collect()
    };
    (text(report.errors), text(report.warnings))
}

/// `verify` checks every shader map a store entry lists: with all groups
/// present it reports nothing; without one group, the shader maps using it
/// are reported.
#[test]
fn verify_checks_each_listed_shader_map_has_its_chunks() {
    let dir = tempfile::tempdir().unwrap();
    let (errors, warnings) = container_with_library(&dir.path().join("whole"), None);
    assert!(errors.is_empty(), "{errors:?}");
    assert!(
        warnings.iter().all(|w| !w.contains("shader")),
        "{warnings:?}"
    );
    let (errors, _) = container_with_library(&dir.path().join("cut"), Some(0));
    let missing: Vec<&String> = errors
        .iter()
        .filter(|e| e.contains("shader group chunk"))
        .collect();
    assert!(!missing.is_empty(), "{errors:?}");
}

/// The groups, fewest shader maps first: {1, 2} (map 0 only), {3, 4}
/// (map 1 only), then shader 0 (both maps) alone; each sorted by size. A
/// group of one keeps the cook's compressed bytes; a larger group holds
/// its shaders uncompressed.
#[test]
fn groups_follow_the_shader_maps_that_use_them() {
    let (shaders, maps) = sample_shaders();
    let bytes = cooked_archive(&shaders, &maps);
    let library = convert(
        "ShaderArchive-L-PCD3D_SM6.ushaderbytecode",
        &bytes,
        None,
        EngineVersion::UE5_4,
    )
    .unwrap();
    let groups: Vec<Vec<u32>> = library
        .header
        .group_entries
        .iter()
        .map(|g| {
            let start = g.shader_indices_offset as usize;
            library.header.shader_indices[start..start + g.num_shaders as usize].to_vec()
        })
        .collect();
    assert_eq!(groups, vec![vec![1, 2], vec![3, 4], vec![0]]);
    let zstd = Compression::Zstd.compress(&shaders[0].0).unwrap();
    assert_eq!(library.group_bytes(2).unwrap(), zstd);
    let compressed = library.header.group_entries[2].compressed_size;
    assert_eq!(compressed as usize, zstd.len());
    let group_0 = [shaders[1].0.clone(), shaders[2].0.clone()].concat();
    assert_eq!(library.group_bytes(0).unwrap(), group_0);
    let compressed = library.header.group_entries[0].compressed_size;
    assert_eq!(compressed as usize, group_0.len());
    assert_eq!(library.split_groups, 0);
}

/// A group holding a shader no known method decodes (Oodle, to zenpak) is
/// stored one shader per group, each as the cook stored it.
#[test]
fn undecodable_groups_are_stored_one_shader_per_group() {
    let (mut shaders, maps) = sample_shaders();
    shaders[2].1 = Stored::Opaque;
    let bytes = cooked_archive(&shaders, &maps);
    let library = convert(
        "ShaderArchive-L-PCD3D_SM6.ushaderbytecode",
        &bytes,
        None,
        EngineVersion::UE5_4,
    )
    .unwrap();
    assert_eq!(library.split_groups, 1);
    assert_eq!(library.header.group_entries.len(), 4);
    let opaque = (0..library.group_chunks.len())
        .map(|i| library.group_bytes(i).unwrap())
        .find(|data| data.iter().all(|&b| b == 0xFF))
        .unwrap();
    assert_eq!(opaque.len(), 2000);
}

/// Preload ranges as `Finalize` computes them: a shader map's code merged
/// across gaps of at most 1 KiB, split beyond.
#[test]
fn preload_ranges_merge_small_gaps() {
    let shaders = vec![
        (code(1, 100), Stored::Raw, 0),
        (code(2, 1024), Stored::Raw, 0),
        (code(3, 100), Stored::Raw, 0),
        (code(4, 1025), Stored::Raw, 0),
        (code(5, 100), Stored::Raw, 0),
    ];
    let bytes = cooked_archive(&shaders, &[vec![4, 2, 0]]);
    let archive = ShaderArchive::read(&bytes).unwrap();
    // 0 at 0..100, 2 at 1124..1224 (gap 1024: merged), 4 at 2249..2349 (gap 1025).
    assert_eq!(archive.preload_entries, vec![(0, 1224), (2249, 100)]);
    assert_eq!(archive.shader_map_entries[0].num_preload_entries, 2);
}

/// UE 5.8 store entries keep 8-byte shader map hashes (trumank/retoc issue
/// #72) and how 5.8 derives them from a library's 20-byte hashes is not
/// public: a library whose packages use shader maps is refused for 5.8
/// (`unsupported`), not written with made-up hashes; 5.7 takes it.
#[test]
fn a_5_8_container_refuses_shader_maps_it_cannot_hash() {
    let (shaders, maps) = sample_shaders();
    let name = "ShaderArchive-Lib-PCD3D_SM6.ushaderbytecode";
    let info =
        ShaderAssetInfo::read(asset_info(&[(hash(0xAA, 0), "/Game/Lib")]).as_bytes()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    for (engine, accepted) in [(EngineVersion::UE5_7, true), (EngineVersion::UE5_8, false)] {
        let library = convert(name, &cooked_archive(&shaders, &maps), Some(&info), engine).unwrap();
        let stem = format!("Lib{}_P", engine.as_str().replace('.', ""));
        let mut builder =
            ContainerBuilder::create(dir.path(), &stem, engine, ContainerOptions::default())
                .unwrap();
        let added = builder.add_shader_library(&library, &format!("Game/Content/{name}"));
        match added {
            Ok(()) => assert!(accepted, "{engine}"),
            Err(e) => {
                assert!(!accepted, "{engine}: {e}");
                assert_eq!(e.code(), "unsupported");
            }
        }
    }
}

/// Each group chunk's bytes as the library was converted before it was
/// streamed (the archive read whole): a group of one shader is its stored
/// bytes, a larger group its shaders decompressed one after the other.
fn groups_read_whole(bytes: &[u8], header: &IoStoreShaderArchive) -> Vec<Vec<u8>> {
    let archive = ShaderArchive::read(bytes).unwrap();
    let code = |s: u32| {
        let e = archive.shader_entries[s as usize];
        let start = archive.code_offset + e.offset as usize;
        (&bytes[start..start + e.size as usize], e)
    };
    header
        .group_entries
        .iter()
        .map(|g| {
            let start = g.shader_indices_offset as usize;
            let shaders = &header.shader_indices[start..start + g.num_shaders as usize];
            if let [only] = shaders {
                return code(*only).0.to_vec();
            }
            shaders
                .iter()
                .flat_map(|&s| {
                    let (bytes, e) = code(s);
                    uncompressed(bytes, &e)
                })
                .collect()
        })
        .collect()
}

/// The three files of a container: `.utoc`, `.ucas`, `.pak`.
fn triplet(written: &zenpak::iostore::WrittenContainer) -> [Vec<u8>; 3] {
    [&written.utoc, &written.ucas, &written.pak].map(|p| std::fs::read(p).unwrap())
}

/// A library streamed from its file (`convert_file`: header read, group
/// chunks read a group at a time as they are written) gives the container
/// byte for byte what the same library read whole gives (`convert` of the
/// file's bytes), and what adding each group's bytes as the archive read
/// whole gives them (the writer's path before groups were streamed): raw,
/// zstd and LZ4 shaders, a group split for an undecodable shader.
#[test]
fn a_streamed_library_writes_the_bytes_a_library_read_whole_wrote() {
    let (mut shaders, mut maps) = sample_shaders();
    // A map of its own for a shader no method decodes: its group is split.
    shaders.push((code(6, 700), Stored::Opaque, 0));
    shaders.push((code(7, 300), Stored::Zstd, 0));
    maps.push(vec![5, 6]);
    let bytes = cooked_archive(&shaders, &maps);
    let engine = EngineVersion::UE5_4;
    let dir = tempfile::tempdir().unwrap();
    let name = "ShaderArchive-Lib-PCD3D_SM6.ushaderbytecode";
    let file = dir.path().join(name);
    std::fs::write(&file, &bytes).unwrap();
    let path = format!("Game/Content/{name}");
    let build = |folder: &str, add: &dyn Fn(&mut ContainerBuilder)| {
        let mut builder = ContainerBuilder::create(
            &dir.path().join(folder),
            "Lib_P",
            engine,
            ContainerOptions::default(),
        )
        .unwrap();
        add(&mut builder);
        triplet(&builder.finish().unwrap())
    };
    let streamed = zenpak::iostore::shader_library::convert_file(&file, engine).unwrap();
    let library = streamed.library.unwrap();
    assert_eq!(library.split_groups, 1);
    let whole = convert(name, &bytes, None, engine).unwrap();
    assert_eq!(library.header_bytes, whole.header_bytes);
    let expected = groups_read_whole(&bytes, &library.header);
    for (i, group) in expected.iter().enumerate() {
        assert_eq!(&library.group_bytes(i).unwrap(), group, "group {i}");
    }
    let from_file = build("streamed", &|b| {
        b.add_shader_library(&library, &path).unwrap()
    });
    let from_memory = build("memory", &|b| b.add_shader_library(&whole, &path).unwrap());
    let by_hand = build("by-hand", &|b| {
        b.add_chunk(whole.library_chunk_id, &whole.header_bytes, Some(&path))
            .unwrap();
        for ((id, _), data) in whole.group_chunks.iter().zip(&expected) {
            b.add_chunk(*id, data, None).unwrap();
        }
    });
    assert!(
        from_file == by_hand,
        "the streamed library's container differs"
    );
    assert!(
        from_memory == by_hand,
        "the library read whole's container differs"
    );
}

/// A cooked library whose header lies about sizes fails the build with a
/// `format` error naming the library and the offset of the lying field in
/// its header, within bounded memory (nothing the header claims is
/// allocated): a shader whose code would end 4 GiB past a 1 MiB file, and
/// a table count of 100 million records.
#[test]
fn a_library_whose_header_lies_about_sizes_is_an_error_at_its_offset() {
    let (shaders, maps) = sample_shaders();
    let honest = cooked_archive(&shaders, &maps);
    let archive = ShaderArchive::read(&honest).unwrap();
    // Version, then the shader map hashes, shader hashes and map entries.
    let map_hashes = 4;
    let shader_hashes = map_hashes + 4 + 20 * archive.shader_map_hashes.len();
    let map_entries = shader_hashes + 4 + 20 * archive.shader_hashes.len();
    let shader_entries = map_entries + 4 + 16 * archive.shader_map_entries.len() + 4;
    // Shader 3's size field (offset u64, then size u32).
    let shader_3 = shader_entries + 3 * 17;
    let mut huge_code = honest.clone();
    huge_code[shader_3 + 8..shader_3 + 12].copy_from_slice(&u32::MAX.to_le_bytes());
    huge_code.resize(1 << 20, 0);
    let mut huge_count = honest.clone();
    huge_count[shader_hashes..shader_hashes + 4].copy_from_slice(&100_000_000i32.to_le_bytes());
    for (what, bytes, offset) in [
        ("huge code", huge_code, shader_3),
        ("huge count", huge_count, shader_hashes),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let (repo, content) = lamp_mod(dir.path());
        std::fs::create_dir_all(&content).unwrap();
        let name = "ShaderArchive-LampGame-PCD3D_SM6.ushaderbytecode";
        std::fs::write(content.join(name), &bytes).unwrap();
        let manifest = repo.join("mod.toml");
        let (out, peak) = common::run_measured(&[
            "build",
            "--manifest-path",
            manifest.to_str().unwrap(),
            "--message-format",
            "json",
        ]);
        let error = out.assert_code(1).error();
        assert_eq!(error["code"], "format", "{what}: {error}");
        assert_eq!(common::file_tail(&error, 1), name, "{what}: {error}");
        assert_eq!(error["offset"], offset as u64, "{what}: {error}");
        assert!(
            peak < 64 << 20,
            "{what}: the build peaked at {} MiB",
            peak >> 20
        );
    }
}
