//! Object data decoding against the engine's files: every export of the
//! UT99 maps decodes to its last byte (lazy-array end positions included),
//! the references found point at objects of the classes the engine's
//! structures hold there, and writing the data again gives it back.

use crate::common;

use std::collections::BTreeMap;
use std::path::PathBuf;

use zenpak::classic::object_data::ObjectData;
use zenpak::classic::{ObjectRef, Package};

fn ut99() -> Option<PathBuf> {
    let dir = common::corpus()?.join("classic/ut99");
    dir.is_dir().then_some(dir)
}

fn data<'a>(package: &Package, bytes: &'a [u8], index: usize) -> &'a [u8] {
    match package.exports[index].serial_range() {
        Some(r) => &bytes[r.start as usize..r.end as usize],
        None => &[],
    }
}

#[test]
fn every_export_of_the_corpus_maps_decodes_completely() {
    let Some(ut99) = ut99() else { return };
    for map in ["Maps/CTF-Face.unr", "Maps/Entry.unr"] {
        let file = ut99.join(map);
        let bytes = std::fs::read(&file).unwrap();
        let package = Package::read_file(&file).unwrap();
        let mut references = 0;
        let mut by_class: BTreeMap<String, usize> = BTreeMap::new();
        for index in 0..package.exports.len() {
            let object = data(&package, &bytes, index);
            let decoded = ObjectData::decode(&package, index, object);
            let class = package.class_path(ObjectRef::export(index));
            assert!(
                decoded.undecoded().is_none(),
                "{map}: export {index} ({class}): {:?}",
                decoded.undecoded()
            );
            *by_class.entry(class.clone()).or_default() += 1;
            // Nothing replaced: the same bytes, lazy-array end positions
            // included once placed where the data was.
            let written = decoded.rewrite(object, &|_| None).unwrap();
            let offset = package.exports[index].serial_offset.unwrap_or(0) as u64;
            assert!(
                written.placed_at(offset).unwrap() == object,
                "{map}: export {index} ({class}) is not written back as it was"
            );
            references += decoded.references().len();
        }
        assert!(references > 0);
        // The native classes of a map are all among them.
        for class in [
            "Engine.Level",
            "Engine.Model",
            "Engine.Polys",
            "Core.TextBuffer",
        ] {
            assert!(by_class.contains_key(class), "{map}: {by_class:?}");
        }
    }
}

#[test]
fn references_in_native_data_point_at_the_right_kinds_of_object() {
    let Some(ut99) = ut99() else { return };
    let file = ut99.join("Maps/CTF-Face.unr");
    let bytes = std::fs::read(&file).unwrap();
    let package = Package::read_file(&file).unwrap();
    let mut surface_textures = 0;
    for index in 0..package.exports.len() {
        let class = package.class_path(ObjectRef::export(index));
        let decoded = ObjectData::decode(&package, index, data(&package, &bytes, index));
        // An object with an execution stack starts with its state, which
        // for objects other than actors is its own class.
        let own_class = package.exports[index].class;
        let targets: Vec<String> = decoded
            .references()
            .iter()
            .filter(|r| !r.target.is_null() && r.target != own_class)
            .map(|r| package.class_path(r.target))
            .collect();
        match class.as_str() {
            // Polys hold actor (a brush) and texture references only.
            "Engine.Polys" => {
                for target in &targets {
                    assert!(
                        target.ends_with("Texture")
                            || target == "Engine.Brush"
                            || target.starts_with("Engine.") && target.ends_with("Mover"),
                        "Polys {index}: {target}"
                    );
                }
                surface_textures += targets.iter().filter(|t| t.ends_with("Texture")).count();
            }
            // The level lists its actors and its model and text buffers.
            "Engine.Level" => {
                assert!(targets.iter().any(|t| t == "Engine.Model"));
                assert!(targets.iter().any(|t| t == "Engine.LevelInfo"));
                assert!(targets.iter().any(|t| t == "Core.TextBuffer"));
            }
            _ => {}
        }
    }
    assert!(surface_textures > 100, "{surface_textures}");
    // The screenshot texture is referenced from the level info's tagged properties.
    let info = (0..package.exports.len())
        .find(|&i| package.class_path(ObjectRef::export(i)) == "Engine.LevelInfo")
        .unwrap();
    let decoded = ObjectData::decode(&package, info, data(&package, &bytes, info));
    assert!(decoded
        .references()
        .iter()
        .any(|r| package.path(r.target) == "CTF-Face.Screenshot"));
}

#[test]
fn sounds_music_and_palettes_decode() {
    let Some(ut99) = ut99() else { return };
    for file in [
        "Sounds/DDay.uax",
        "Sounds/Announcer.uax",
        "Music/Run.umx",
        "Textures/AlfaFX.utx",
    ] {
        let file = ut99.join(file);
        let bytes = std::fs::read(&file).unwrap();
        let package = Package::read_file(&file).unwrap();
        for index in 0..package.exports.len() {
            let class = package.class_path(ObjectRef::export(index));
            let decoded = ObjectData::decode(&package, index, data(&package, &bytes, index));
            let fully = decoded.undecoded().is_none();
            match class.as_str() {
                "Engine.Sound" | "Engine.Music" | "Engine.Palette" | "Core.Package" => {
                    assert!(
                        fully,
                        "{}: {index} {class}: {:?}",
                        file.display(),
                        decoded.undecoded()
                    )
                }
                // Fire textures have native data of their own: not decoded, and said so.
                "Fire.FireTexture" => assert!(!fully),
                _ => {}
            }
        }
    }
}
