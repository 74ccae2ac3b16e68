//! Pak files (`.pak`): the engine's archive of loose files. zenpak writes
//! the companion pak of an IoStore container (the mod's non-package files
//! under the container's mount point; it must exist, even empty, with the
//! container's base name) and reads every pak version the engine has
//! written since UE 4.0 (format versions 1 … 14 with 8a/8b; `PakVersion` has one predicate per
//! layout difference).
//!
//! Format facts from the engine's pak sources as published
//! (`IPlatformFilePak.h` `FPakInfo`/`FPakEntry`, `PakFileUtilities.cpp`),
//! trumank/repak, and the 48 UnrealPak-written paks of the corpus
//! (`paks/unrealpak/`, versions 5, 7, 8a, 8b, 9 and 11, by UE 4.20 … 4.27).
//!
//! # Reading
//!
//! * Footer (`PakFooter::find`): each version's layout is tried, newest first: 44 bytes (v1–3), 45
//!   (v4–6: + encrypted-index flag), 61 (v7: + key GUID), 189 (8a, UE 4.22: four 32-byte method
//!   names), 221 (8b, 10, 11: five), 222 (9: + frozen-index flag; a frozen index is refused).
//! * `FPakEntry`: offset, size, uncompressed size, method (one byte in 8a, else four), a timestamp in
//!   v1, SHA-1, then from v3 the block list (when compressed), a flag byte (bit 0 encrypted, bit 1
//!   deleted from v6) and the block size. Block offsets are absolute before v5 and relative from v5;
//!   the reader keeps them relative. Before v8 the method is `ECompressionFlags` (1 zlib, 2 gzip, 4
//!   the game's custom codec, read as Oodle), from v8 an index into the footer's names.
//! * Versions after 11: 12 (`Utf8PakDirectory`) stores the full directory index's file names as
//!   `FUtf8String`s (i32 length with terminator, UTF-8; the engine's `FPakFile::LoadIndexInternal`
//!   reads `FUtf8String FileNameUtf8` from 12, directory names stay `FString`s; the path hash is
//!   unchanged, over UTF-16); 13 (`SortedDirectoryIndex`) may store that index flat, recognised by
//!   the magic `PFDQ` (`index::FlatDirectoryIndex`; layout as FabianFG/CUE4Parse reads it); 14
//!   (`PakchunkIndex`) ends the footer with an i32 pakchunk index. A newer version's footer is
//!   recognised by its magic and refused as `unsupported`, naming the version.
//!   `tests/containers/pak_new_versions.rs` pins these.
//! * Index: before v10 a flat list (path + full record); from v10 the primary index with encoded
//!   entries (plus full records for those the encoded form cannot hold, found by negative values),
//!   the path-hash index and the full directory index. Patch-pak delete records are listed apart
//!   (`PakReader::deleted`).
//! * Bounds, checked at open before any data is read: index parts lie in the file and match their
//!   SHA-1s; every count fits the bytes that remain; two names on one record are refused before it is
//!   decoded; every entry's record and data lie before the index, no two entries share bytes, blocks
//!   are in order without overlap, their count is exactly what the size needs, block size ≤ 16 MiB
//!   (`MAX_PAK_BLOCK_SIZE`), a stored block ≤ 2 × its output + 4 KiB. Data then streams a block (or
//!   1 MiB of an uncompressed entry) at a time, the SHA-1 checked at the end.
//! * Wrong keys: an encrypted index fails its SHA-1. An entry's SHA-1 covers its encrypted bytes, so
//!   cannot tell a wrong key; decompression can, and so can the padding of an uncompressed entry
//!   whose size is not a multiple of 16 (UnrealPak 4.21+ pads with the data's first bytes, others with
//!   zeros; 4.20/v5 with random data bytes, not checked). An uncompressed encrypted entry of 16·n
//!   bytes in a pak with an unencrypted index cannot reveal a wrong key: a limit of the format.
//!
//! # Writing (`PakWriter`: the version [`crate::version::EngineVersion::pak_version`] gives, 11 or 12)
//!
//! Layout: entries, each an inline `FPakEntry` (offset 0) then its data (64 KiB blocks when
//! compressed, block size = entry size when smaller, each block padded to 16 and encrypted); then the
//! primary index (mount point, count, path hash seed, location/size/SHA-1 of the path-hash index
//! (`FNV-64 of the lowercased UTF-16 path + seed` → encoded offset) and of the full directory index
//! (the root `/` and every parent first), encoded entries, then full records); both index orders are
//! entry order, directories in first-seen order; then the footer ([`PakVersion::footer_size`]).
//! AES pads data and each index part to 16 with its own first bytes (the engine's fill); the index
//! SHA-1s are of the padded plain text.
//!
//! Facts checked on the corpus's UnrealPak 4.27 `pack_v11*.pak`: the entry SHA-1 covers the stored
//! bytes as on disk (after encryption; an encrypted compressed entry's `size` includes each block's
//! padding, an uncompressed one's does not); the path hash seed is `FCrc::StrCrc32` of the lowercased
//! pak file name as UnrealPak was given it (machine-dependent), so it is an option
//! (`PakWriterOptions::path_hash_seed`, 0 by default; `engine_path_hash_seed` computes the engine's).
//! `tests/containers/pak_unrealpak.rs` pins the writer byte-identical to UnrealPak for `pack_v11`,
//! `pack_v11_encrypt`, `pack_v11_encryptindex` and `pack_v11_encrypt_encryptindex`, and reads all 48
//! paks; the compressed variants are not reproduced (UnrealPak stores some files uncompressed by its
//! own choice, and flate2 does not reproduce zlib's level-6 bytes). `tests/containers/pak_bounded.rs`
//! covers Oodle entries, shared-byte bombs and hostile counts in bounded memory.

pub mod crypto;
pub mod entry;
pub mod index;
pub mod reader;
pub mod writer;

use crate::version::PakVersion;

pub use reader::{PakEntryInfo, PakReader};
pub use writer::{PakCipher, PakWriter, PakWriterOptions};

/// Footer magic.
pub const PAK_MAGIC: u32 = 0x5A6F_12E1;

/// Footer size of versions 8b, 10 and 11 (version 9 has one more byte).
pub const FOOTER_SIZE_V11: usize = PakVersion::V11.footer_size();

/// How many bytes at the end of a file are searched for a footer: every
/// known layout, and room to recognise a newer version's magic.
pub const FOOTER_SEARCH_BYTES: usize = 512;

/// `FPakFile::HashPath` from version 11: FNV-64 (offset basis + seed) over
/// the lowercased path as UTF-16LE.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn footer_sizes_per_version() {
        assert_eq!(PakVersion::V11.footer_size(), 221);
        assert_eq!(PakVersion::V9.footer_size(), 222);
        assert_eq!(PakVersion::V8A.footer_size(), 189);
        assert_eq!(PakVersion::V7.footer_size(), 61);
        assert_eq!(PakVersion::V5.footer_size(), 45);
        assert_eq!(PakVersion::V3.footer_size(), 44);
    }
}
