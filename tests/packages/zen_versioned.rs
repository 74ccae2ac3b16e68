//! Versioned packages (issue 18): a package that states its own file
//! versions is read with them, as the engine's `LoadCookedHeader` reads the
//! summary and the versioning info keeps them (`FPackageStoreOptimizer::
//! CreatePackageFromCookedHeader` copies `Summary.GetFileVersionUE()` into
//! the Zen package), and the Zen package is written in the layout of the
//! release the container is for. A release other than the package's own is
//! a warning, not an error. The corpus packages are unversioned; versioned
//! ones are made from them by storing their release's versions.

use crate::common;

use zenpak::legacy::{LegacyPackage, PackageFiles};
use zenpak::zen::{convert, ZenPackage};
use zenpak::EngineVersion;

fn versioned(package: &LegacyPackage) -> Vec<u8> {
    let table = package.engine.legacy_file_versions();
    let mut versioned = package.clone();
    versioned.summary.file_version_ue4 = table.ue4;
    versioned.summary.file_version_ue5 = Some(table.ue5);
    versioned.write().unwrap()
}

#[test]
fn a_5_4_package_in_a_5_5_container_keeps_its_versions_and_warns() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let path = corpus.join("retoc/UE5.4/BP_Table_Lamp.uasset");
    let mut files = PackageFiles::load(&path).unwrap();
    let unversioned = files.read_package(Some(EngineVersion::UE5_4)).unwrap();
    files.header = versioned(&unversioned);

    let package = files.read_package(Some(EngineVersion::UE5_5)).unwrap();
    assert_eq!(package.engine, EngineVersion::UE5_4);
    assert_eq!(package.versions.ue5, 1012);
    let warning = package.version_warning.as_ref().expect("a warning");
    assert_eq!(warning.code, "versioned-package", "{}", warning.message);

    let target = EngineVersion::UE5_5;
    let converted = convert(&files, &package, target, "").unwrap();
    let zen = ZenPackage::read(&converted.package_bytes, target).unwrap();
    let info = zen.versioning.as_ref().expect("versioning info");
    assert_eq!(info.file_version_ue4, 522);
    assert_eq!(info.file_version_ue5, 1012);
    assert_eq!(info.zen_version, target.zen_package_version());

    // Apart from the versioning info, the package is the one the unversioned
    // package gives for 5.5.
    let plain = convert(&files, &unversioned, target, "").unwrap();
    let mut without_info = zen.clone();
    without_info.versioning = None;
    let plain_zen = ZenPackage::read(&plain.package_bytes, target).unwrap();
    assert_eq!(without_info.exports, plain_zen.exports);
    assert_eq!(without_info.imports, plain_zen.imports);
    assert_eq!(without_info.names, plain_zen.names);
    assert_eq!(
        without_info.dependency_bundle_entries,
        plain_zen.dependency_bundle_entries
    );
    assert_eq!(without_info.export_data, plain_zen.export_data);
    // The versioning info makes the chunk longer; the rest of the entry is the same.
    assert_eq!(
        converted.store_entry.export_bundles_size,
        converted.package_bytes.len() as u64
    );
    let mut entry = converted.store_entry.clone();
    entry.export_bundles_size = plain.store_entry.export_bundles_size;
    assert_eq!(entry, plain.store_entry);
}

#[test]
fn a_versioned_package_of_the_given_release_is_silent() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let path = corpus.join("retoc/UE5.4/BP_Table_Lamp.uasset");
    let mut files = PackageFiles::load(&path).unwrap();
    let unversioned = files.read_package(Some(EngineVersion::UE5_4)).unwrap();
    files.header = versioned(&unversioned);
    let package = files.read_package(Some(EngineVersion::UE5_4)).unwrap();
    assert!(package.version_warning.is_none());
    assert_eq!(package.engine, EngineVersion::UE5_4);
}
