//! The property walker on tagged (versioned) 5.6 packages: the example mod's
//! content, written by zenpak's legacy writer with property tags. Its object
//! blocks start with the class serialization control byte of 5.4+.

use std::path::Path;

use zenpak::legacy::PackageFiles;
use zenpak::properties::{walk_package, WalkOutcome};
use zenpak::EngineVersion;

#[test]
fn tagged_example_packages_walk_to_their_ends() {
    let content = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples/hello-mod/Cooked/HelloGame/Content/HelloMod");
    let files = PackageFiles::load(content.join("DA_HelloModSettings.uasset")).unwrap();
    let package = files.read_package(Some(EngineVersion::UE5_6)).unwrap();
    let walks = walk_package(&files, &package, None, true);
    let WalkOutcome::Walked {
        properties,
        block_end,
        ..
    } = &walks[0].outcome
    else {
        panic!("not walked: {:?}", walks[0].outcome);
    };
    let names: Vec<&str> = properties.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "Texts",
            "GreetingKey",
            "GreetingDelaySeconds",
            "bShowOnStartup"
        ]
    );
    // The block ends 4 bytes (the object GUID flag) before the export does.
    let export = &package.exports[0];
    assert_eq!(
        *block_end as i64 + 4,
        export.serial_offset + export.serial_size
    );

    let files = PackageFiles::load(content.join("ST_HelloMod.uasset")).unwrap();
    let package = files.read_package(Some(EngineVersion::UE5_6)).unwrap();
    let walks = walk_package(&files, &package, None, true);
    let WalkOutcome::Walked {
        properties,
        block_start,
        block_end,
        ..
    } = &walks[0].outcome
    else {
        panic!("not walked: {:?}", walks[0].outcome);
    };
    // A string table has no properties: control byte, `None` (8 bytes), then native data.
    assert!(properties.is_empty());
    assert_eq!(block_end - block_start, 9);
}
