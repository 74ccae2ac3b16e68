//! `convert` with the marvel-rivals profile against the generic conversion:
//! the Zen package differs only by the inserted bytes and the sizes/offsets
//! that follow them.

use crate::fixups_support;

use fixups_support::common;
use zenpak::fixups::Profile;
use zenpak::legacy::PackageFiles;
use zenpak::mappings::Mappings;
use zenpak::zen::{convert, ZenPackage};
use zenpak::EngineVersion;

#[test]
fn quinn_converted_with_marvel_rivals_is_the_generic_conversion_plus_padding() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let engine = EngineVersion::UE5_6;
    let dir = corpus.join("uassetapi/TestUE5_6/BpThirdPerson");
    let files = PackageFiles::load(dir.join("SKM_Quinn_Simple.uasset")).unwrap();
    let mappings = Mappings::load(dir.join("ExplicitEnumValuesExample.usmap")).unwrap();
    let legacy = files.read_package(Some(engine)).unwrap();
    let generic = convert(&files, &legacy, engine, "").unwrap();

    // With the game's mappings: LOD infos renumbered (+2 bytes each) and an
    // empty tag container after each material (+4 each); the exact legacy
    // bytes are checked in fixups_marvel_rivals.rs.
    let game = fixups_support::game_mappings(&mappings);
    let mut padded_files = files.clone();
    let report = Profile::from_name("marvel-rivals")
        .unwrap()
        .apply(&mut padded_files, engine, Some(&game))
        .unwrap();
    let padded_legacy = padded_files.read_package(Some(engine)).unwrap();
    let padded = convert(&padded_files, &padded_legacy, engine, "").unwrap();
    let grown = 14;
    assert_eq!(report.inserted_bytes - report.removed_bytes, grown);

    let g = ZenPackage::read(&generic.package_bytes, engine).unwrap();
    let p = ZenPackage::read(&padded.package_bytes, engine).unwrap();
    // Export data (5.3+): the changed .uexp as it is.
    assert_eq!(g.export_data, files.uexp);
    assert_eq!(p.export_data, padded_files.uexp);
    // Header: the same, apart from the export's size and what lies after the changes.
    let mut g_header = g.clone();
    g_header.export_data.clear();
    g_header.exports[0].cooked_serial_size += grown;
    // Inline bulk data inside the export, after the materials, moved with it
    // (the legacy data resource offsets are carried over unchanged).
    let first_tag = report.exports[1].insertions[0] as i64;
    for entry in &mut g_header.bulk_data {
        if entry.serial_offset >= first_tag {
            entry.serial_offset += grown as i64;
        }
    }
    let mut p_header = p.clone();
    p_header.export_data.clear();
    let g_json = serde_json::to_value(&g_header).unwrap();
    let p_json = serde_json::to_value(&p_header).unwrap();
    let mut differences = Vec::new();
    diff("", &g_json, &p_json, &mut differences);
    assert!(
        differences.is_empty(),
        "unexpected header differences: {differences:#?}"
    );
    assert_eq!(
        generic.package_bytes.len() + grown as usize,
        padded.package_bytes.len()
    );
}

fn diff(path: &str, a: &serde_json::Value, b: &serde_json::Value, out: &mut Vec<String>) {
    use serde_json::Value;
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for (k, v) in x {
                diff(
                    &format!("{path}/{k}"),
                    v,
                    y.get(k).unwrap_or(&Value::Null),
                    out,
                );
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (v, w)) in x.iter().zip(y).enumerate() {
                diff(&format!("{path}/{i}"), v, w, out);
            }
        }
        _ if a != b => out.push(format!("{path}: {a} -> {b}")),
        _ => {}
    }
}
