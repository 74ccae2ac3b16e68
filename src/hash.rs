//! The engine's 64-bit hashes: CityHash64 (via the `cityhasher` crate) over
//! strings normalised the way the engine normalises them.
//!
//! Used for package ids, script-import and public-export hashes, name-batch
//! hashes and container ids.

/// Plain CityHash64 of bytes.
pub fn city_hash64(data: &[u8]) -> u64 {
    cityhasher::hash::<u64>(data)
}

/// Lowercases ASCII and, for non-ASCII text, Unicode lower case; the engine's
/// `ToLower` on `TCHAR` strings.
pub fn engine_lowercase(s: &str) -> String {
    s.chars().flat_map(char::to_lowercase).collect()
}

/// Hash of a string as the engine hashes `FString`/`TCHAR` text for ids:
/// CityHash64 over the UTF-16LE bytes of the lowercased string.
pub fn hash_lower_utf16(s: &str) -> u64 {
    let lower = engine_lowercase(s);
    let mut bytes = Vec::with_capacity(lower.len() * 2);
    for unit in lower.encode_utf16() {
        bytes.extend_from_slice(&unit.to_le_bytes());
    }
    city_hash64(&bytes)
}

/// The id of a package (`FPackageId::FromName`): hash of its lowercased name
/// (e.g. `/Game/Maps/Entry`) as UTF-16.
pub fn package_id(package_name: &str) -> u64 {
    hash_lower_utf16(package_name)
}

/// Name-batch hash of one name: CityHash64 of its lowercased text, as
/// one byte per character when the name is Latin-1, else as UTF-16LE.
pub fn name_hash(name: &str) -> u64 {
    let lower = engine_lowercase(name);
    if crate::binary::is_latin1(&lower) {
        let bytes: Vec<u8> = lower.chars().map(|c| c as u32 as u8).collect();
        city_hash64(&bytes)
    } else {
        hash_lower_utf16(name)
    }
}
