//! Real engine data through the container writer and reader: the UE4.27
//! global chunks and an engine-written Zen package with the store entry
//! its metadata gives, and the UE5.3 script objects chunk.

use crate::common;

use zenpak::iostore::chunk::{ChunkId, ChunkType};
use zenpak::iostore::container_header::StoreEntry;
use zenpak::iostore::{Container, ContainerBuilder, ContainerOptions};
use zenpak::EngineVersion;

#[test]
fn ue4_27_package_and_global_chunks() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let dir = common::temp_dir("corpus-ue427");
    let _ = std::fs::remove_dir_all(&dir);
    let folder = corpus.join("retoc/UE4.27");
    let engine = EngineVersion::UE4_27;
    let meta: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(folder.join("TestModUI.metadata.json")).unwrap(),
    )
    .unwrap();
    let se = &meta["store_entry"];
    let entry = StoreEntry {
        export_bundles_size: se["export_bundles_size"].as_u64().unwrap(),
        load_order: se["load_order"].as_u64().unwrap() as u32,
        export_count: se["export_count"].as_i64().unwrap() as i32,
        export_bundle_count: se["export_bundle_count"].as_i64().unwrap() as i32,
        imported_packages: se["imported_packages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect(),
        shader_map_hashes: vec![],
    };
    let package = std::fs::read(folder.join("TestModUI.uzenasset")).unwrap();
    let package_id = zenpak::hash::package_id("/Game/_AssemblyStorm/TestMod/TestModUI");
    let globals = [
        (ChunkType::LoaderGlobalNames, "LoaderGlobalNames_1.bin"),
        (
            ChunkType::LoaderGlobalNameHashes,
            "LoaderGlobalNameHashes_1.bin",
        ),
        (
            ChunkType::LoaderInitialLoadMeta,
            "LoaderInitialLoadMeta_1.bin",
        ),
    ];
    for compression in [
        zenpak::compression::Compression::None,
        zenpak::compression::Compression::Zlib,
    ] {
        let options = ContainerOptions {
            compression,
            ..Default::default()
        };
        let mut b = ContainerBuilder::create(&dir, "pakchunk99-WindowsNoEditor_P", engine, options)
            .unwrap();
        b.add_package(
            package_id,
            &package,
            entry.clone(),
            "AssemblyStorm/Content/_AssemblyStorm/TestMod/TestModUI.uasset",
        )
        .unwrap();
        for (kind, file) in globals {
            b.add_chunk(
                ChunkId::new(0, 0, kind, engine),
                &std::fs::read(folder.join(file)).unwrap(),
                None,
            )
            .unwrap();
        }
        let written = b.finish().unwrap();

        let c = Container::open(&written.utoc, None).unwrap();
        assert!(c.verify().errors.is_empty());
        let i = c.find(&ChunkId::package_data(package_id, engine)).unwrap();
        assert_eq!(c.read_chunk(i).unwrap(), package);
        // UE4 numbering: export bundle data is type 2, the header type 10.
        assert_eq!(c.toc.chunk_ids[i].raw_type(), 2);
        for (kind, file) in globals {
            let i = c.find(&ChunkId::new(0, 0, kind, engine)).unwrap();
            assert_eq!(
                c.read_chunk(i).unwrap(),
                std::fs::read(folder.join(file)).unwrap()
            );
        }
        let header = c.container_header().unwrap().unwrap();
        assert_eq!(header.packages, vec![(package_id, entry.clone())]);
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn ue5_3_script_objects_chunk() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let dir = common::temp_dir("corpus-ue53");
    let _ = std::fs::remove_dir_all(&dir);
    let data = std::fs::read(corpus.join("retoc/UE5.3/ScriptObjects.bin")).unwrap();
    let engine = EngineVersion::UE5_3;
    let options = ContainerOptions {
        compression: zenpak::compression::Compression::Lz4,
        ..Default::default()
    };
    let mut b = ContainerBuilder::create(&dir, "global", engine, options).unwrap();
    let id = ChunkId::new(0, 0, ChunkType::ScriptObjects, engine);
    assert_eq!(id.raw_type(), 5);
    b.add_chunk(id, &data, None).unwrap();
    let written = b.finish().unwrap();
    let c = Container::open(&written.utoc, None).unwrap();
    assert!(c.verify().errors.is_empty());
    assert_eq!(c.read_chunk(c.find(&id).unwrap()).unwrap(), data);
    let _ = std::fs::remove_dir_all(&dir);
}
