//! Pak files (`.pak`): the companion pak of an IoStore container. It holds
//! the mod's loose, non-package files under the container's mount point,
//! and must exist (even empty) with the container's base name.
//!
//! Format facts from the engine's pak sources as published and
//! trumank/repak. Layout of a version 11 (`Fnv64BugFix`) pak, which every
//! supported engine (4.26 .. 5.7) uses:
//!
//! * entries, each an inline `FPakEntry` header (offset written as 0)
//!   followed by its data (compressed blocks, each padded to 16 bytes when
//!   encrypted);
//! * the primary index: mount point, entry count, path hash seed, the
//!   location/size/SHA-1 of the path-hash index and of the full directory
//!   index, the encoded entries, and a zero count of unencoded entries;
//! * the path-hash index: `(FNV-64 of lowercased UTF-16 path + seed,
//!   encoded entry offset)` pairs, then an empty pruned-directory count;
//! * the full directory index: every directory (with trailing `/`, the
//!   root as `/`) and its files with their encoded entry offsets;
//! * the 221-byte footer: key GUID, encrypted-index flag, magic, version,
//!   index offset/size/SHA-1 and five 32-byte compression method names.
//!
//! With AES, entry data and all three index parts are encrypted; each
//! part's size and SHA-1 are those of its zero-padded plain text.

pub mod crypto;
pub mod entry;
pub mod index;
pub mod reader;
pub mod writer;

pub use reader::{PakEntryInfo, PakReader};
pub use writer::{PakCipher, PakWriter};

/// Footer magic.
pub const PAK_MAGIC: u32 = 0x5A6F_12E1;

/// Footer size of versions 8, 10 and 11 (version 9 has one more byte).
pub const FOOTER_SIZE_V11: usize = 16 + 1 + 4 + 4 + 8 + 8 + 20 + 5 * 32;

/// `FPakFile::HashPath`: FNV-64 (offset basis + seed) over the lowercased
/// path as UTF-16LE.
pub fn path_hash(relative_path: &str, seed: u64) -> u64 {
    let mut hash = 0xcbf2_9ce4_8422_2325u64.wrapping_add(seed);
    for unit in crate::hash::engine_lowercase(relative_path).encode_utf16() {
        for b in unit.to_le_bytes() {
            hash ^= b as u64;
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    hash
}

/// SHA-1 of bytes.
pub(crate) fn sha1(data: &[u8]) -> [u8; 20] {
    use sha1::{Digest, Sha1};
    Sha1::digest(data).into()
}

/// Splits `dir/sub/file` into (`dir/sub/`, `file`); top-level files go in `/`.
pub(crate) fn split_directory(path: &str) -> (String, String) {
    match path.rfind('/') {
        Some(i) => (path[..=i].to_string(), path[i + 1..].to_string()),
        None => ("/".to_string(), path.to_string()),
    }
}
