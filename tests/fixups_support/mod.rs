//! Shared helpers of the `fixups_*` tests: corpus packages, the game-like
//! mappings, packages rebuilt in another release's layout with zenpak's own
//! legacy writer, and byte-exact expectations.
#![allow(dead_code)]

use std::path::PathBuf;

use zenpak::fixups::{MarvelRivalsSection, ProfileOptions};
use zenpak::legacy::{LegacyPackage, PackageFiles};
use zenpak::mappings::{Mappings, PropertySchema, PropertyType};
use zenpak::EngineVersion;

pub(crate) use crate::common;

pub const V53: EngineVersion = EngineVersion::UE5_3;
pub const V56: EngineVersion = EngineVersion::UE5_6;

pub fn third_person_dir() -> Option<PathBuf> {
    Some(common::corpus()?.join("uassetapi/TestUE5_6/BpThirdPerson"))
}

/// `SKM_Quinn_Simple` (5.6) and its folder's (stock) mappings.
pub fn quinn() -> Option<(PackageFiles, Mappings)> {
    let dir = third_person_dir()?;
    let files = PackageFiles::load(dir.join("SKM_Quinn_Simple.uasset")).unwrap();
    let mappings = Mappings::load(dir.join("ExplicitEnumValuesExample.usmap")).unwrap();
    Some((files, mappings))
}

/// The stock mappings with Marvel Rivals' change: `SkeletalMeshLODInfo`
/// gets `DefaultHiddenMaterials: TArray<bool>` right after `LODMaterialMap`
/// (slot 3), later properties one slot up.
pub fn game_mappings(stock: &Mappings) -> Mappings {
    let mut m = stock.clone();
    let s = m
        .structs
        .iter_mut()
        .find(|s| s.name == "SkeletalMeshLODInfo")
        .unwrap();
    assert_eq!(s.properties[2].name, "LODMaterialMap");
    for p in &mut s.properties {
        if p.schema_index >= 3 {
            p.schema_index += 1;
        }
    }
    s.properties.insert(
        3,
        PropertySchema {
            schema_index: 3,
            array_size: 1,
            name: "DefaultHiddenMaterials".into(),
            ty: PropertyType::Array(Box::new(PropertyType::Bool)),
        },
    );
    s.property_count += 1;
    if !m.names.iter().any(|n| n == "DefaultHiddenMaterials") {
        m.names.push("DefaultHiddenMaterials".into());
    }
    m
}

pub fn options(edit: impl FnOnce(&mut MarvelRivalsSection)) -> ProfileOptions {
    let mut section = MarvelRivalsSection::default();
    edit(&mut section);
    zenpak::fixups::marvel_rivals::options(&section)
}

/// `original` (a .uexp) with edits at absolute stream offsets (header
/// length `header`): (offset, removed, bytes), any order.
pub fn edited(original: &[u8], header: usize, edits: &[(usize, usize, Vec<u8>)]) -> Vec<u8> {
    let mut sorted: Vec<&(usize, usize, Vec<u8>)> = edits.iter().collect();
    sorted.sort_by_key(|e| (e.0, e.1));
    let mut out = Vec::new();
    let mut at = 0;
    for (offset, removed, bytes) in sorted {
        let o = offset - header;
        out.extend_from_slice(&original[at..o]);
        out.extend_from_slice(bytes);
        at = o + removed;
    }
    out.extend_from_slice(&original[at..]);
    out
}

/// A copy of `package`'s tables in a fresh cooked package of `engine`,
/// with `datas` as export data (offsets and sizes laid out by the writer);
/// `resource_at` maps each inline data resource's offset (relative to its
/// export's start) into the new data.
pub fn rebuild_as(
    engine: EngineVersion,
    package: &LegacyPackage,
    datas: &[Vec<u8>],
    resource_at: &dyn Fn(i64) -> i64,
    path: PathBuf,
) -> PackageFiles {
    let mut p = LegacyPackage::new_cooked(engine, package.package_name());
    p.summary.package_flags = package.summary.package_flags;
    p.names = package.names.clone();
    p.summary.names_referenced_from_export_data_count =
        package.summary.names_referenced_from_export_data_count;
    p.imports = package.imports.clone();
    p.exports = package.exports.clone();
    p.soft_object_paths = package.soft_object_paths.clone();
    p.soft_package_references = package.soft_package_references.clone();
    p.preload_dependencies = package.preload_dependencies.clone();
    p.data_resources = package.data_resources.clone();
    // A first layout gives the export offsets; then the inline resources are placed.
    let first = p.clone().write_cooked(datas).unwrap();
    let laid_out = LegacyPackage::read(&first.0, Some(engine)).unwrap();
    if let (Some(old), Some(new)) = (&package.data_resources, p.data_resources.as_mut()) {
        for (o, n) in old.entries.iter().zip(new.entries.iter_mut()) {
            if o.legacy_bulk_data_flags & 0x101 == 0 && o.serial_offset >= 0 {
                let owner = o.outer_index.export().unwrap_or(0);
                let relative = o.serial_offset - package.exports[owner].serial_offset;
                n.serial_offset = laid_out.exports[owner].serial_offset + resource_at(relative);
            }
        }
    }
    let (header, uexp) = p.write_cooked(datas).unwrap();
    let files = PackageFiles {
        path: path.clone(),
        uexp_path: path.with_extension("uexp"),
        header,
        uexp,
        bulk: Vec::new(),
    };
    files
        .read_package(Some(engine))
        .expect("the rebuilt package reads back");
    files
}

/// `SKM_Quinn_Simple` in UE 5.3's (and so Marvel Rivals') layout: its
/// materials without 5.6's overlay interface (40 bytes each), rebuilt with
/// zenpak's legacy writer as a 5.3 package.
pub fn quinn_53() -> Option<(PackageFiles, Mappings)> {
    let (files, mappings) = quinn()?;
    let package = files.read_package(Some(V56)).unwrap();
    let mesh = files.export_data(&package, 0).unwrap();
    let count_at = 528; // .uexp offset of the materials count (the mesh starts the .uexp)
    let mut data = mesh[..count_at + 4].to_vec();
    for i in 0..2 {
        let entry = count_at + 4 + 44 * i;
        data.extend_from_slice(&mesh[entry..entry + 40]);
    }
    data.extend_from_slice(&mesh[count_at + 4 + 88..]);
    let shrink = |relative: i64| {
        if relative > count_at as i64 {
            relative - 8
        } else {
            relative
        }
    };
    let files = rebuild_as(
        V53,
        &package,
        &[data],
        &shrink,
        files.path.with_file_name("SKM_Quinn_Simple_53.uasset"),
    );
    Some((files, mappings))
}

/// The header length of a package's files.
pub fn header_len(files: &PackageFiles) -> usize {
    files.header.len()
}
