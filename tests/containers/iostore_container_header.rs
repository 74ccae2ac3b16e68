//! The engine-written container headers in the corpus parse, and writing
//! them back gives the same bytes.

use crate::common;

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

/// The UE4 culture map as an engine-written header has it (the corpus's
/// `issues/issue7` header: 11 cultures, two localized packages each): the
/// engine walks its packages by id and appends each localized one to its
/// culture, so cultures appear in the order of their first package and each
/// list is in localized-id order. Feeding the same triples, shuffled, in id
/// order gives the same map and the same bytes.
#[test]
fn ue4_culture_map_follows_package_id_order() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let bytes = std::fs::read(corpus.join("retoc/issues/issue7/header.bin")).unwrap();
    let engine = ContainerHeader::read(&bytes, Some(ContainerHeaderVersion::PreInitial)).unwrap();
    assert_eq!(engine.culture_packages.len(), 11);
    let mut triples: Vec<(u64, String, u64)> = engine
        .culture_packages
        .iter()
        .flat_map(|c| c.packages.iter().map(|&(s, l)| (l, c.culture.clone(), s)))
        .collect();
    assert_eq!(triples.len(), 22);
    triples.reverse();
    triples.sort();
    let mut rebuilt = engine.clone();
    rebuilt.culture_packages.clear();
    for (localized, culture, source) in &triples {
        rebuilt.add_culture_package(culture, *source, *localized);
    }
    assert_eq!(rebuilt.culture_packages, engine.culture_packages);
    assert_eq!(rebuilt.write().unwrap(), bytes);
}

/// UE5 localized packages (`LocalizedPackages` 5.0 … `SoftPackageReferencesOffset`
/// 5.6+): the source package once, its name in the header's name batch as a
/// container-kind mapped name with its number; no culture is stored. Every
/// UE5 layout writes and reads the table back; UE4 keeps the culture map.
#[test]
fn localized_table_per_header_version() {
    use zenpak::names::MappedNameKind;
    for engine in zenpak::EngineVersion::ALL {
        let version = engine.container_header_version();
        let mut header = ContainerHeader::new(version, 7);
        let fr = zenpak::hash::package_id("/Game/L10N/fr/UI/Title_2");
        let de = zenpak::hash::package_id("/Game/L10N/de/UI/Title_2");
        let mut ids = [(fr, "fr"), (de, "de")];
        ids.sort();
        for (id, culture) in ids {
            header.add_localized_package(culture, "/Game/UI/Title_2", id);
        }
        let back = ContainerHeader::read(&header.write().unwrap(), Some(version)).unwrap();
        let source = zenpak::hash::package_id("/Game/UI/Title_2");
        if engine.is_ue5() {
            assert_eq!(back.localized_packages.len(), 1, "{engine}");
            let entry = &back.localized_packages[0];
            assert_eq!(entry.source_package_id, source);
            assert_eq!(
                entry.source_package_name.kind(),
                Some(MappedNameKind::Container)
            );
            assert_eq!(
                entry
                    .source_package_name
                    .resolve(&back.redirect_names)
                    .unwrap(),
                "/Game/UI/Title_2"
            );
            assert_eq!(back.redirect_names[0].text, "/Game/UI/Title");
            assert!(back.culture_packages.is_empty());
        } else {
            let cultures: Vec<(&str, Vec<(u64, u64)>)> = back
                .culture_packages
                .iter()
                .map(|c| (c.culture.as_str(), c.packages.clone()))
                .collect();
            let expected: Vec<(&str, Vec<(u64, u64)>)> =
                ids.iter().map(|&(id, c)| (c, vec![(source, id)])).collect();
            assert_eq!(cultures, expected, "{engine}");
            assert!(back.localized_packages.is_empty());
        }
    }
}
