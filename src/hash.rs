//! The engine's 64-bit hashes: CityHash64 (via the `cityhasher` crate) over
//! strings normalised the way the engine normalises them.
//!
//! Used for package ids, script-import and public-export hashes and
//! container ids; name-batch hashes are [`crate::names::BatchName::hash`].
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

/// Bytes as lowercase hexadecimal (how hashes and ids are shown).
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The UTF-16LE bytes of a string (how the engine's `TCHAR` text is hashed).
pub fn utf16_le_bytes(s: &str) -> Vec<u8> {
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
        assert_ne!(package_id("/Game/Ä"), package_id("/Game/ä"));
        assert_eq!(package_id("/Game/ABC"), package_id("/game/abc"));
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
