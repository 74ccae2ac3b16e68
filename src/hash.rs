//! The engine's 64-bit hashes: CityHash64 (via the `cityhasher` crate) over
//! strings normalised the way the engine normalises them.
//!
//! Used for package ids, script-import and public-export hashes, name-batch
//! hashes and container ids.
//!
//! The engine lowercases with `TChar::ToLower`, which only maps `A`–`Z`;
//! every other character (including Latin-1 and other non-ASCII letters) is
//! hashed unchanged. Checked against the engine-written Zen packages in the
//! corpus (name-batch hashes, package ids in store entries, import hashes).

/// Plain CityHash64 of bytes.
pub fn city_hash64(data: &[u8]) -> u64 {
    cityhasher::hash::<u64>(data)
}

/// The engine's `ToLower`: ASCII letters only.
pub fn engine_lowercase(s: &str) -> String {
    s.chars().map(|c| c.to_ascii_lowercase()).collect()
}

fn utf16_le_bytes(s: &str) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(s.len() * 2);
    for unit in s.encode_utf16() {
        bytes.extend_from_slice(&unit.to_le_bytes());
    }
    bytes
}

/// Hash of a string as the engine hashes `FString`/`TCHAR` text for ids:
/// CityHash64 over the UTF-16LE bytes of the lowercased string.
pub fn hash_lower_utf16(s: &str) -> u64 {
    city_hash64(&utf16_le_bytes(&engine_lowercase(s)))
}

/// The id of a package (`FPackageId::FromName`): hash of its lowercased name
/// (e.g. `/Game/Maps/Entry`) as UTF-16.
pub fn package_id(package_name: &str) -> u64 {
    hash_lower_utf16(package_name)
}

/// Name-batch hash of one name: CityHash64 of its lowercased text, as one
/// byte per character when the name is pure ASCII (an ANSI name entry),
/// else as UTF-16LE (a wide entry).
pub fn name_hash(name: &str) -> u64 {
    let lower = engine_lowercase(name);
    if lower.is_ascii() {
        city_hash64(lower.as_bytes())
    } else {
        city_hash64(&utf16_le_bytes(&lower))
    }
}

/// The 62-bit hash of an object path used by `FPackageObjectIndex` for
/// script imports (and, in UE4 Zen packages, for package imports and public
/// exports): `.` and `:` become `/`, ASCII is lowercased, CityHash64 of the
/// UTF-16LE bytes, top two bits cleared (they hold the index type).
pub fn object_path_hash(path: &str) -> u64 {
    let normalised: String = path
        .chars()
        .map(|c| match c {
            '.' | ':' => '/',
            c => c.to_ascii_lowercase(),
        })
        .collect();
    city_hash64(&utf16_le_bytes(&normalised)) & !(3u64 << 62)
}

/// Public export hash (UE5): CityHash64 of the UTF-16LE bytes of the
/// export's package-relative path, lowercased, `/`-separated, without the
/// leading slash (e.g. `default__bp_c` or `bp_c/node_1`).
pub fn public_export_hash(relative_path: &str) -> u64 {
    city_hash64(&utf16_le_bytes(&engine_lowercase(relative_path)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lowercase_is_ascii_only() {
        assert_eq!(engine_lowercase("ÄbC"), "Äbc");
        assert_ne!(name_hash("Ä"), name_hash("ä"));
        assert_eq!(name_hash("ABC"), name_hash("abc"));
    }

    #[test]
    fn object_path_hash_normalises_separators() {
        assert_eq!(
            object_path_hash("/Script/Engine.StaticMesh"),
            object_path_hash("/script/engine/staticmesh")
        );
        assert_eq!(object_path_hash("/Script/Engine") >> 62, 0);
    }
}
