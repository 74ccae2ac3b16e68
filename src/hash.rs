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
pub(crate) fn city_hash64(data: &[u8]) -> u64 {
    cityhasher::hash::<u64>(data)
}

/// The engine's `ToLower`: ASCII letters only.
pub(crate) fn engine_lowercase(s: &str) -> String {
    s.chars().map(|c| c.to_ascii_lowercase()).collect()
}

/// Bytes as lowercase hexadecimal (how hashes and ids are shown).
pub(crate) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut text = String::with_capacity(bytes.len() * 2);
    for &byte in bytes {
        text.push(DIGITS[usize::from(byte >> 4)] as char);
        text.push(DIGITS[usize::from(byte & 0xf)] as char);
    }
    text
}

/// Bytes from exactly `2 × N` hexadecimal digits (either case); `None`
/// for any other text.
pub(crate) fn from_hex<const N: usize>(text: &str) -> Option<[u8; N]> {
    let digits = text.as_bytes();
    if digits.len() != N * 2 {
        return None;
    }
    let value = |digit: u8| char::from(digit).to_digit(16);
    let mut bytes = [0u8; N];
    for (byte, pair) in bytes.iter_mut().zip(digits.chunks_exact(2)) {
        *byte = (value(pair[0])? << 4 | value(pair[1])?) as u8;
    }
    Some(bytes)
}

/// CityHash64 of `text` after mapping each character with `map` (which
/// must map ASCII to ASCII), encoded as the engine hashes it: UTF-16LE when
/// `wide`, else one byte per character (Latin-1). Short text (nearly every
/// name and path) is encoded on the stack: these hashes run for every name,
/// import and export of every package.
pub(crate) fn city_hash_mapped(text: &str, wide: bool, map: impl Fn(char) -> char) -> u64 {
    const INLINE: usize = 512;
    let mut inline = [0u8; INLINE];
    let mut heap = Vec::new();
    // UTF-16 needs at most two bytes per UTF-8 byte, Latin-1 at most one.
    let most = if wide { text.len() * 2 } else { text.len() };
    let buffer: &mut [u8] = if most <= INLINE {
        &mut inline
    } else {
        heap.resize(most, 0);
        &mut heap
    };
    let mut len = 0;
    if text.is_ascii() {
        for byte in text.bytes() {
            buffer[len] = map(byte as char) as u8;
            len += if wide { 2 } else { 1 };
        }
    } else {
        for c in text.chars().map(map) {
            if wide {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    buffer[len..len + 2].copy_from_slice(&unit.to_le_bytes());
                    len += 2;
                }
            } else {
                buffer[len] = c as u32 as u8;
                len += 1;
            }
        }
    }
    city_hash64(&buffer[..len])
}

/// Hash of a string as the engine hashes `FString`/`TCHAR` text for ids:
/// CityHash64 over the UTF-16LE bytes of the lowercased string.
pub fn hash_lower_utf16(s: &str) -> u64 {
    city_hash_mapped(s, true, |c| c.to_ascii_lowercase())
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
    let normalised = |c: char| match c {
        '.' | ':' => '/',
        c => c.to_ascii_lowercase(),
    };
    city_hash_mapped(path, true, normalised) & !(3u64 << 62)
}

/// Public export hash (UE5): CityHash64 of the UTF-16LE bytes of the
/// export's package-relative path, lowercased, `/`-separated, without the
/// leading slash (e.g. `default__bp_c` or `bp_c/node_1`).
pub(crate) fn public_export_hash(relative_path: &str) -> u64 {
    hash_lower_utf16(relative_path)
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

    /// The stack encoding gives the bytes a plain encoding gives, for
    /// ASCII, Latin-1, other UTF-16 and text too long for the stack.
    #[test]
    fn mapped_hash_is_the_hash_of_the_encoded_text() {
        let long = "/Game/ÄÖ/".repeat(100);
        for text in ["", "/Game/Maps/Entry", "Título", "名前/𝄞", long.as_str()] {
            let lower = engine_lowercase(text);
            let utf16: Vec<u8> = lower.encode_utf16().flat_map(u16::to_le_bytes).collect();
            assert_eq!(hash_lower_utf16(text), city_hash64(&utf16), "{text}");
            let latin1: Vec<u8> = lower.chars().map(|c| c as u32 as u8).collect();
            assert_eq!(
                city_hash_mapped(text, false, |c| c.to_ascii_lowercase()),
                city_hash64(&latin1),
                "{text}"
            );
        }
    }

    #[test]
    fn hex_is_lowercase_two_digits_a_byte() {
        assert_eq!(hex(&[0x00, 0x0f, 0xa5, 0xff]), "000fa5ff");
        assert_eq!(hex(&[]), "");
        assert_eq!(from_hex::<4>("000FA5ff"), Some([0x00, 0x0f, 0xa5, 0xff]));
        for bad in ["000fa5f", "000fa5fff", "+00fa5ff", "000fa5fg", "é0fa5ff"] {
            assert_eq!(from_hex::<4>(bad), None, "{bad}");
        }
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
