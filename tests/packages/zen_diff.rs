//! `diff` names the first differing section, entry and field.

use crate::common;

use zenpak::zen::diff::{first_difference, section_table};
use zenpak::zen::ZenPackage;

#[test]
fn diff_names_section_entry_and_field() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let path = corpus.join("retoc/UE5.6/BP_ThirdPersonCharacter.uzenasset");
    let bytes = std::fs::read(&path).unwrap();
    let engine = zenpak::EngineVersion::UE5_6;
    let original = ZenPackage::read(&bytes, engine).unwrap();
    assert!(first_difference(&original, &original).is_none());

    let mut changed = original.clone();
    changed.exports[4].public_export_hash ^= 1;
    let d = first_difference(&original, &changed).unwrap();
    assert_eq!(
        (d.section, d.entry, d.field.as_str()),
        ("exports", Some(4), "public_export_hash")
    );
    let table = section_table(&original, &changed);
    assert!(
        table.iter().all(|(s, same)| *same == (*s != "exports")),
        "{table:?}"
    );

    // A dependency entry dropped: the bundle section differs and so do the offsets after it.
    let mut shorter = original.clone();
    shorter.dependency_bundle_entries.pop();
    let reread = ZenPackage::read(&shorter.write(), engine).unwrap_err();
    assert!(reread.to_string().contains("dependency bundle"), "{reread}");

    let mut renamed = original.clone();
    renamed.imported_package_names.numbers[0] += 1;
    let d = first_difference(&original, &renamed).unwrap();
    assert_eq!((d.section, d.entry), ("imported names", Some(0)));
}
