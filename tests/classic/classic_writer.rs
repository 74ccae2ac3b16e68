//! The classic package writer against the engine's own files: every
//! corpus package, parsed and written again, gives its bytes back — laid
//! out fresh (`Package::to_bytes`, the engine's order) and rewritten in
//! place (`write_edited`). A write that changes the package changes its
//! GUID (deterministically) and nothing else that was not asked for.

use crate::common;

use std::path::PathBuf;

use zenpak::classic::header::guid_string;
use zenpak::classic::writer::{write_edited, ExportEdit, ObjectBytes};
use zenpak::classic::{Lineage, NameEntry, Package};

fn classic_files() -> Vec<PathBuf> {
    let Some(corpus) = common::corpus() else {
        return Vec::new();
    };
    common::files_with_ext(&corpus.join("classic"), &["u", "utx", "uax", "umx", "unr"])
}

fn object_data(package: &Package, bytes: &[u8]) -> Vec<Vec<u8>> {
    package
        .exports
        .iter()
        .map(|e| match e.serial_range() {
            Some(r) => bytes[r.start as usize..r.end as usize].to_vec(),
            None => Vec::new(),
        })
        .collect()
}

#[test]
fn every_corpus_package_writes_back_byte_for_byte() {
    let files = classic_files();
    if files.is_empty() {
        return;
    }
    assert!(files.len() >= 12, "{} classic files", files.len());
    for file in &files {
        let bytes = std::fs::read(file).unwrap();
        let package = Package::read_file(file).unwrap();

        // Fresh layout, from the parsed tables and the objects' data.
        let fresh = package.to_bytes(&object_data(&package, &bytes)).unwrap();
        assert!(
            fresh == bytes,
            "{}: fresh layout differs ({} vs {} bytes)",
            file.display(),
            fresh.len(),
            bytes.len()
        );

        // In-place rewrite with nothing changed: same bytes, same GUID.
        let unchanged = vec![ExportEdit::Unchanged; package.exports.len()];
        let written = write_edited(&bytes, &package, &package, &unchanged).unwrap();
        assert!(!written.changed, "{}", file.display());
        assert!(
            written.bytes == bytes,
            "{}: rewrite differs",
            file.display()
        );

        // Replacing every object's data with the same bytes is no change either.
        let same: Vec<ExportEdit> = object_data(&package, &bytes)
            .into_iter()
            .map(|d| ExportEdit::Replaced(ObjectBytes::plain(d)))
            .collect();
        let written = write_edited(&bytes, &package, &package, &same).unwrap();
        assert!(
            !written.changed && written.bytes == bytes,
            "{}",
            file.display()
        );
    }
}

#[test]
fn a_real_change_gets_a_new_guid_and_keeps_object_data_in_place() {
    let files = classic_files();
    if files.is_empty() {
        return;
    }
    for file in &files {
        let bytes = std::fs::read(file).unwrap();
        let package = Package::read_file(file).unwrap();
        let mut edited = package.clone();
        edited.names.push(NameEntry {
            name: "ZenpakAdded".to_string(),
            flags: 0x0007_0010,
        });
        let unchanged = vec![ExportEdit::Unchanged; package.exports.len()];
        let written = write_edited(&bytes, &package, &edited, &unchanged).unwrap();
        assert!(written.changed, "{}", file.display());
        let again = write_edited(&bytes, &package, &edited, &unchanged).unwrap();
        assert_eq!(written, again, "{}: not deterministic", file.display());

        let read = Package::parse(&written.bytes, &package.name).unwrap();
        assert_eq!(read.names.len(), package.names.len() + 1);
        assert_eq!(read.names[..package.names.len()], package.names[..]);
        assert_eq!(read.imports, package.imports);
        // Every object's data is where it was, byte for byte.
        for (old, new) in package.exports.iter().zip(&read.exports) {
            assert_eq!(old.serial_offset, new.serial_offset, "{}", file.display());
            assert_eq!(old.serial_size, new.serial_size);
            if let Some(r) = old.serial_range() {
                let r = r.start as usize..r.end as usize;
                assert_eq!(bytes[r.clone()], written.bytes[r]);
            }
            assert_eq!(
                (old.class, old.outer, old.flags),
                (new.class, new.outer, new.flags)
            );
        }
        match (&package.header.lineage, &read.header.lineage) {
            (
                Lineage::Generations { guid: old, .. },
                Lineage::Generations { guid, generations },
            ) => {
                assert_ne!(old, guid, "{}", file.display());
                assert_eq!(Some(*guid), written.guid);
                // One generation with the new counts, as the engine's save writes.
                assert_eq!(generations.len(), 1);
                assert_eq!(generations[0].name_count, read.names.len() as i32);
                assert_eq!(generations[0].export_count, read.exports.len() as i32);
            }
            (Lineage::Heritage { .. }, Lineage::Heritage { .. }) => {
                assert_eq!(read.heritage.len(), package.heritage.len());
                assert_ne!(read.heritage.last(), package.heritage.last());
                assert_eq!(read.heritage.last().map(|h| h.0), written.guid);
            }
            other => panic!("{}: lineage changed kind: {other:?}", file.display()),
        }
        eprintln!(
            "{}: new GUID {}",
            file.display(),
            guid_string(&written.guid.unwrap())
        );
    }
}
