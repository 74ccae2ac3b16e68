//! The build cache's entry pack as a test sees it from outside: its
//! entries by key (read through the index), and a pack written anew with
//! other entries (to damage, swap or copy them as a disk or a user would).
//! The layout is `src/build/cache/entry_pack.rs`'s: a 16-byte head (magic,
//! generation) in both files; index records of 48 bytes (key, offset u64,
//! length u32, CRC-32 of those 44 bytes).

use std::path::{Path, PathBuf};

pub type Key = [u8; 32];

const HEAD: usize = 16;
const RECORD: usize = 48;

fn files(cache: &Path) -> (PathBuf, PathBuf) {
    (cache.join("packages.zpk"), cache.join("packages.zpi"))
}

/// The entries the index names, in index order (after a finished build:
/// one record per entry).
pub fn cache_entries(cache: &Path) -> Vec<(Key, Vec<u8>)> {
    let (pack, index) = files(cache);
    let (pack, index) = (std::fs::read(pack).unwrap(), std::fs::read(index).unwrap());
    assert_eq!(pack[8..HEAD], index[8..HEAD], "one generation");
    index[HEAD..]
        .chunks_exact(RECORD)
        .map(|record| {
            let mut crc = flate2::Crc::new();
            crc.update(&record[..44]);
            assert_eq!(crc.sum().to_le_bytes(), record[44..], "a whole record");
            let key: Key = record[..32].try_into().unwrap();
            let offset = u64::from_le_bytes(record[32..40].try_into().unwrap()) as usize;
            let len = u32::from_le_bytes(record[40..44].try_into().unwrap()) as usize;
            (key, pack[offset..offset + len].to_vec())
        })
        .collect()
}

/// Writes the pack and its index anew (same generation) holding `entries`.
pub fn write_cache_entries(cache: &Path, entries: &[(Key, Vec<u8>)]) {
    let (pack_path, index_path) = files(cache);
    let mut pack = std::fs::read(&pack_path).unwrap()[..HEAD].to_vec();
    let mut index = std::fs::read(&index_path).unwrap()[..HEAD].to_vec();
    for (key, bytes) in entries {
        let mut record = key.to_vec();
        record.extend_from_slice(&(pack.len() as u64).to_le_bytes());
        record.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
        let mut crc = flate2::Crc::new();
        crc.update(&record);
        record.extend_from_slice(&crc.sum().to_le_bytes());
        index.extend_from_slice(&record);
        pack.extend_from_slice(bytes);
    }
    std::fs::write(pack_path, pack).unwrap();
    std::fs::write(index_path, index).unwrap();
}
