//! `UnversionedHeader::from_values` encodes a header exactly as the engine's
//! cooker does: every struct and class block of every corpus export that the
//! walker reads, re-encoded from its (slot, is-zero) list, gives back the
//! engine's bytes. Game profiles rely on this when they renumber a header.

use crate::common;

use std::collections::BTreeMap;

use zenpak::legacy::PackageFiles;
use zenpak::properties::{walk_export_recorded, PackageContext, UnversionedHeader};

#[test]
fn every_corpus_header_re_encodes_to_the_engine_bytes() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let mut cache = BTreeMap::new();
    let (mut blocks, mut multi_fragment, mut with_zeroes) = (0usize, 0usize, 0usize);
    let mut leading_zero_words = 0usize;
    for (path, engine) in common::legacy_packages(&corpus)
        .into_iter()
        .filter(|(p, _)| p.starts_with(corpus.join("uassetapi")))
    {
        let usmap = common::mappings_for(&path, &mut cache).unwrap();
        let mappings = &cache[&usmap];
        let files = PackageFiles::load(&path).unwrap();
        let package = files.read_package(Some(engine)).unwrap();
        if !package.summary.unversioned_properties() {
            continue;
        }
        let cx = PackageContext::of(&package);
        let stream = [files.header.as_slice(), files.uexp.as_slice()].concat();
        for index in 0..package.exports.len() {
            let Ok((recording, _, _)) =
                walk_export_recorded(&files, &package, &cx, Some(mappings), index)
            else {
                continue;
            };
            for visit in &recording.structs {
                let slots: Vec<(usize, bool)> = visit.header.values().unwrap();
                let Some(slot_count) = visit.slot_count else {
                    // Only empty blocks of structs the mappings lack get here.
                    assert!(slots.is_empty());
                    continue;
                };
                let encoded = UnversionedHeader::from_values(&slots, slot_count)
                    .unwrap()
                    .to_bytes();
                let original = &stream[visit.header_start as usize..visit.header_end as usize];
                if encoded != original {
                    // The 5.4 BlankGame objects start with four zero bytes
                    // that the walker reads as two empty fragments; every
                    // other header is the engine's bytes.
                    assert!(
                        visit.depth == 0
                            && original.starts_with(&[0, 0, 0, 0])
                            && original[4..] == encoded[..],
                        "{} export {index}: block `{}` at {}: ours {encoded:?}, engine {original:?}",
                        path.display(),
                        visit.name,
                        visit.header_start
                    );
                    leading_zero_words += 1;
                    continue;
                }
                // The recorded values are the header's slots, in order, each inside the block.
                let recorded: Vec<(usize, bool)> =
                    visit.values.iter().map(|v| (v.slot, v.zero)).collect();
                assert_eq!(recorded, slots);
                assert!(visit.values.iter().all(|v| v.start >= visit.header_end
                    && v.end <= visit.end
                    && (!v.zero || v.start == v.end)));
                blocks += 1;
                multi_fragment += (visit.header.fragments.len() > 1) as usize;
                with_zeroes += (!visit.header.zero_mask.is_empty()) as usize;
            }
        }
    }
    eprintln!(
        "{blocks} headers re-encoded identically ({multi_fragment} with several fragments, {with_zeroes} with a zero mask); {leading_zero_words} object blocks with a leading zero word"
    );
    assert!(blocks > 1000 && multi_fragment > 100 && with_zeroes > 10);
    assert!(leading_zero_words < 20);
}

#[test]
fn long_runs_split_into_fragments() {
    // 130 skipped slots then 130 values: skip runs and value runs stop at 127.
    let slots: Vec<(usize, bool)> = (130..260).map(|s| (s, s == 200)).collect();
    let h = UnversionedHeader::from_values(&slots, 300).unwrap();
    let runs: Vec<(u8, u8, bool)> = h
        .fragments
        .iter()
        .map(|f| (f.skip, f.values, f.has_zeroes))
        .collect();
    assert_eq!(runs, [(127, 0, false), (3, 127, true), (0, 3, false)]);
    assert!(h.fragments.last().unwrap().is_last);
    assert_eq!(h.zero_mask.len(), 127);
    assert_eq!(h.values().unwrap(), slots);
    assert!(UnversionedHeader::from_values(&[(3, false), (2, false)], 4).is_err());
    // No values: one last fragment skipping the struct's slots, at most 127.
    assert_eq!(
        UnversionedHeader::from_values(&[], 44).unwrap().to_bytes(),
        [44, 0x01]
    );
    assert_eq!(
        UnversionedHeader::from_values(&[], 300).unwrap().to_bytes(),
        [127, 0x01]
    );
}
