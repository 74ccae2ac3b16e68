//! The engine-written container headers in the corpus parse, and writing
//! them back gives the same bytes.

mod common;

use zenpak::iostore::container_header::{ContainerHeader, ContainerHeaderVersion};

fn round_trip(folder: &str, expected: ContainerHeaderVersion) {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let path = corpus
        .join("retoc")
        .join(folder)
        .join("ContainerHeader_1.bin");
    let bytes = std::fs::read(&path).unwrap();
    let header =
        ContainerHeader::read(&bytes, None).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(header.version, expected);
    assert!(!header.packages.is_empty());
    let written = header.write().unwrap();
    if written != bytes {
        let first = written.iter().zip(&bytes).position(|(a, b)| a != b);
        panic!(
            "{folder}: written {} bytes vs {} engine bytes; first difference at {first:?}",
            written.len(),
            bytes.len()
        );
    }
}

#[test]
fn ue4_27_header_round_trips() {
    round_trip("UE4.27", ContainerHeaderVersion::Initial);
}

#[test]
fn ue5_0_header_round_trips() {
    round_trip("UE5.0", ContainerHeaderVersion::LocalizedPackages);
}

#[test]
fn ue5_3_header_round_trips() {
    round_trip("UE5.3", ContainerHeaderVersion::NoExportInfo);
}

/// The store entries match what the corpus metadata says for a package.
#[test]
fn ue4_27_store_entry_matches_metadata() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let bytes = std::fs::read(corpus.join("retoc/UE4.27/ContainerHeader_1.bin")).unwrap();
    let header = ContainerHeader::read(&bytes, None).unwrap();
    // BP_Aphid_Meat_Prop's metadata: 7 exports, 1 bundle, load order 28391, one import.
    let found = header.packages.iter().find(|(_, e)| {
        e.load_order == 28391 && e.export_count == 7 && e.export_bundles_size == 5859
    });
    let (_, entry) = found.expect("store entry of BP_Aphid_Meat_Prop");
    assert_eq!(entry.export_bundle_count, 1);
    assert_eq!(entry.imported_packages, vec![12088545253770535616]);
}

/// Headers from games whose UE4 store entries lack the bundle size and
/// load order (`PreInitial`): retoc's regression files.
#[test]
fn pre_initial_headers_round_trip() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    for issue in ["issue7", "issue18"] {
        let path = corpus.join("retoc/issues").join(issue).join("header.bin");
        let bytes = std::fs::read(&path).unwrap();
        let header = ContainerHeader::read(&bytes, Some(ContainerHeaderVersion::PreInitial))
            .unwrap_or_else(|e| panic!("{issue}: {e}"));
        assert!(!header.packages.is_empty());
        assert_eq!(header.write().unwrap(), bytes, "{issue}");
    }
}
