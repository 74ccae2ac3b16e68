//! `check --game-dir`'s re-decode (`zenpak::game_check::redecode`) on
//! every corpus package against its own game's mappings: the mappings the
//! package was cooked with never disagree with its data. An export the
//! codec decodes gives nothing; one it cannot read is "not checked",
//! never an error — so no false `export-does-not-decode` on a mod that
//! fits its game.

use crate::common;

use std::collections::BTreeMap;
use std::path::PathBuf;

use zenpak::game_check::redecode::decode_package;
use zenpak::legacy::PackageFiles;
use zenpak::mappings::Mappings;
use zenpak::properties::SchemaSources;

#[test]
fn no_corpus_package_disagrees_with_its_own_mappings() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let mut cache: BTreeMap<PathBuf, Mappings> = BTreeMap::new();
    let (mut packages, mut exports, mut unchecked) = (0, 0, 0);
    let mut mismatches = Vec::new();
    for (_, path, engine) in crate::properties_codec::packages(&corpus) {
        let files = PackageFiles::load(&path).unwrap();
        let package = files.read_package(Some(engine)).unwrap();
        if !package.summary.unversioned_properties() {
            continue;
        }
        let Some(usmap) = common::mappings_for(&path, &mut cache) else {
            continue;
        };
        let name = package.package_name().map_or_else(
            || path.file_stem().unwrap().to_string_lossy().into_owned(),
            str::to_string,
        );
        let decoded = decode_package(
            (&files, &package),
            &name,
            &cache[&usmap],
            &SchemaSources::beside(&path),
        );
        packages += 1;
        exports += decoded.exports;
        unchecked += decoded.unchecked.len();
        for (subject, error) in decoded.mismatches {
            mismatches.push(format!("{}: {subject:?}: {error}", path.display()));
        }
    }
    eprintln!("{packages} packages, {exports} exports, {unchecked} not checked");
    assert!(
        packages > 100,
        "the corpus's unversioned packages: {packages}"
    );
    assert!(
        mismatches.is_empty(),
        "{} exports disagree with their own mappings:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
}
