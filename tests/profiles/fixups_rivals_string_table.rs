//! Issue 15, row 5: the game's 4-byte field after each StringTable entry's
//! value. A 5.3 unversioned table written with zenpak's legacy writer and
//! the 5.6 tagged table of the example mod (also written by it): exactly 4
//! zero bytes after each value, nothing else changed once shifted; a table
//! already in the game's layout passes through; the option turns it off.

use crate::fixups_support;

use std::path::{Path, PathBuf};

use fixups_support::{edited, options, V53, V56};
use zenpak::binary::Writer;
use zenpak::fixups::{Profile, ProfileOptions};
use zenpak::legacy::{
    FName, LegacyPackage, NameEntry, ObjectExport, ObjectImport, PackageFiles, PackageIndex,
};
use zenpak::EngineVersion;

fn name(p: &mut LegacyPackage, text: &str) -> FName {
    let i = match p.names.iter().position(|n| n.text == text) {
        Some(i) => i,
        None => {
            p.names.push(NameEntry::new(text));
            p.names.len() - 1
        }
    };
    FName::new(i as u32, 0)
}

/// An unversioned 5.3 string table: three entries (one value in UTF-16),
/// one key with metadata. Returns the files and each value's end offset
/// relative to the export's start.
fn table_53() -> (PackageFiles, Vec<usize>) {
    let mut p = LegacyPackage::new_cooked(V53, Some("/Game/Text/ST_Test"));
    let comment = name(&mut p, "Comment");
    p.summary.names_referenced_from_export_data_count = Some(p.names.len() as i32);
    let import = |p: &mut LegacyPackage, cp: &str, cn: &str, outer: PackageIndex, on: &str| {
        let i = ObjectImport {
            class_package: name(p, cp),
            class_name: name(p, cn),
            outer_index: outer,
            object_name: name(p, on),
            package_name: None,
            import_optional: Some(false),
        };
        p.imports.push(i);
        PackageIndex::from_import(p.imports.len() - 1)
    };
    let engine = import(
        &mut p,
        "/Script/CoreUObject",
        "Package",
        PackageIndex::NULL,
        "/Script/Engine",
    );
    let class = import(
        &mut p,
        "/Script/CoreUObject",
        "Class",
        engine,
        "StringTable",
    );
    let template = import(
        &mut p,
        "/Script/Engine",
        "StringTable",
        engine,
        "Default__StringTable",
    );
    let object_name = name(&mut p, "ST_Test");
    p.exports.push(ObjectExport {
        class_index: class,
        super_index: PackageIndex::NULL,
        template_index: template,
        outer_index: PackageIndex::NULL,
        object_name,
        object_flags: 0x0000_000B,
        serial_size: 0,
        serial_offset: 0,
        forced_export: false,
        not_for_client: false,
        not_for_server: false,
        package_guid: None,
        is_inherited_instance: Some(false),
        package_flags: 0,
        not_always_loaded_for_editor_game: false,
        is_asset: true,
        generate_public_hash: Some(false),
        first_export_dependency: -1,
        serialization_before_serialization_dependencies: 0,
        create_before_serialization_dependencies: 0,
        serialization_before_create_dependencies: 0,
        create_before_create_dependencies: 0,
        script_serialization_start_offset: None,
        script_serialization_end_offset: None,
    });
    let mut w = Writer::new();
    w.u16(0x0100); // unversioned header: no values
    w.bool32(false); // no object GUID
    w.fstring("Test");
    let entries = [("A", "First"), ("B", "Zweite Straße ✓"), ("C", "")];
    w.i32(entries.len() as i32);
    let mut ends = Vec::new();
    for (k, v) in entries {
        w.fstring(k);
        w.fstring(v);
        ends.push(w.pos());
    }
    w.i32(1);
    w.fstring("A");
    w.i32(1);
    comment.write(&mut w);
    w.fstring("a comment");
    let (header, uexp) = p.write_cooked(&[w.into_inner()]).unwrap();
    let path = PathBuf::from("/virtual/ST_Test.uasset");
    let files = PackageFiles {
        uexp_path: path.with_extension("uexp"),
        path,
        header,
        uexp,
        bulk: Vec::new(),
    };
    (files, ends)
}

fn check(files: &PackageFiles, engine: EngineVersion, value_ends: &[usize]) {
    let header = files.header.len();
    let (mut out, mut again) = (files.clone(), files.clone());
    let report = Profile::from_name("marvel-rivals")
        .unwrap()
        .apply(&mut out, engine, None)
        .unwrap_or_else(|e| panic!("{e}"));
    let edits: Vec<(usize, usize, Vec<u8>)> =
        value_ends.iter().map(|&at| (at, 0, vec![0; 4])).collect();
    assert_eq!(out.uexp, edited(&files.uexp, header, &edits));
    assert_eq!(report.inserted_bytes, 4 * value_ends.len() as u64);
    let before = files.read_package(Some(engine)).unwrap();
    let after = out.read_package(Some(engine)).unwrap();
    let mut expected = before.clone();
    expected.exports[0].serial_size += 4 * value_ends.len() as i64;
    expected.summary.bulk_data_start_offset += 4 * value_ends.len() as i64;
    assert_eq!(expected, after);
    // In the game's layout now: a second run leaves it.
    again.uexp = out.uexp.clone();
    again.header = out.header.clone();
    let report = Profile::from_name("marvel-rivals")
        .unwrap()
        .apply(&mut again, engine, None)
        .unwrap();
    assert!(!report.changed());
    assert!(
        matches!(
            report.unchanged[0],
            zenpak::fixups::Unchanged::StringTableInGameLayout { .. }
        ),
        "{report:#?}"
    );
    assert_eq!(again.uexp, out.uexp);
    // Off: untouched.
    let mut off = files.clone();
    let o = options(|s| s.string_tables = false);
    assert!(!Profile::from_name("marvel-rivals")
        .unwrap()
        .apply_with(&mut off, engine, None, &o)
        .unwrap()
        .changed());
    assert_eq!(off.uexp, files.uexp);
    zenpak::zen::convert(
        &out,
        &after,
        engine,
        after.package_name().unwrap_or("/Game/Text/ST_Test"),
    )
    .unwrap();
}

#[test]
fn table_53_gets_four_bytes_after_each_value() {
    let (files, ends) = table_53();
    let p = files.read_package(Some(V53)).unwrap();
    let base = p.exports[0].serial_offset as usize;
    let ends: Vec<usize> = ends.iter().map(|e| base + e).collect();
    check(&files, V53, &ends);
}

#[test]
fn example_table_56_tagged() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples/hello-mod/Cooked/HelloGame/Content/HelloMod/ST_HelloMod.uasset");
    let files = PackageFiles::load(&path).unwrap();
    // Each value's FString (length, text, NUL) ends where the field goes.
    let header = files.header.len();
    let ends: Vec<usize> = [
        "See you next time, {PlayerName}.",
        "Hello from HelloMod!",
        "Press H to say hello.",
    ]
    .iter()
    .map(|v| {
        let mut w = Writer::new();
        w.fstring(v);
        let bytes = w.into_inner();
        let at = files
            .uexp
            .windows(bytes.len())
            .position(|win| win == bytes.as_slice())
            .unwrap();
        header + at + bytes.len()
    })
    .collect();
    check(&files, V56, &ends);
}

#[test]
fn empty_and_broken_tables() {
    let (files, ends) = table_53();
    // A table that does not read to the export's end in either layout is refused.
    let mut broken = files.clone();
    let p = files.read_package(Some(V53)).unwrap();
    let at = p.exports[0].serial_offset as usize + ends[0] - files.header.len() - 9;
    broken.uexp[at] = 0x7f; // the first value's length
    let e = Profile::from_name("marvel-rivals")
        .unwrap()
        .apply_with(&mut broken.clone(), V53, None, &ProfileOptions::default())
        .unwrap_err();
    assert!(e.to_string().contains("StringTable export 0"), "{e}");
}

/// Value ends of an engine-cooked table, read here on their own: the
/// unversioned header (no values), the object GUID flag, the namespace,
/// then key/value FStrings.
fn value_ends_of(files: &PackageFiles, engine: EngineVersion) -> Vec<usize> {
    let p = files.read_package(Some(engine)).unwrap();
    let start = p.exports[0].serial_offset as usize - files.header.len();
    let mut r = zenpak::binary::Reader::new(&files.uexp[start..]);
    loop {
        let fragment = r.u16().unwrap();
        assert_eq!(
            fragment >> 9,
            0,
            "a StringTable object has no property values"
        );
        if fragment & 0x100 != 0 {
            break;
        }
    }
    assert!(!r.bool32().unwrap());
    r.fstring().unwrap();
    let n = r.i32().unwrap();
    (0..n)
        .map(|_| {
            r.fstring().unwrap();
            r.fstring().unwrap();
            files.header.len() + start + r.pos()
        })
        .collect()
}

#[test]
fn engine_cooked_table_56() {
    let Some(corpus) = fixups_support::common::corpus() else {
        return;
    };
    let files = PackageFiles::load(
        corpus.join("uassetapi/TestManyAssets/SN2/Content/StringTables/ST_Attributes.uasset"),
    )
    .unwrap();
    let ends = value_ends_of(&files, V56);
    assert_eq!(ends.len(), 1);
    check(&files, V56, &ends);
}
