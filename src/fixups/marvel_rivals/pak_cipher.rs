//! Marvel Rivals' pak encryption, which the game requires of mod paks
//! (the engine's AES alone is not accepted). It differs from the engine's:
//!
//! - the AES-256 key is the published key with each 4-byte word reversed;
//! - each 16-byte block has its 4-byte words reversed before and after the
//!   AES-ECB block operation;
//! - only a prefix of each entry's stored bytes is encrypted: its length
//!   comes from BLAKE3 over `11 22 33 44` + the entry's path (lowercased,
//!   relative to the game's root: mount point + `/` + path, repeated `/`
//!   collapsed, a leading `../../../` dropped): `((first 8 hash bytes as
//!   u64 LE % 61) * 63 + 319) & !63` — 256 to 4096 bytes. An entry not
//!   longer than that is zero-padded to 16 bytes and encrypted whole;
//! - the index parts are zero-padded to 16 bytes and encrypted whole (the
//!   footer's encrypted-index flag is set, its key GUID is zero);
//! - 35 fixed bytes ([`FOOTER_PREFIX`]) sit between the index and the footer.
//!
//! The key is the modder's (`ZENPAK_AES_KEY` or a key file), never built in.

use aes::cipher::{generic_array::GenericArray, BlockDecrypt, BlockEncrypt, KeyInit};
use aes::Aes256;

use crate::pak::crypto::AesKey;
use crate::pak::PakCipher;

/// The bytes the game's paks carry between the index and the footer.
pub const FOOTER_PREFIX: [u8; 35] = [
    0x06, 0x12, 0x24, 0x20, 0x06, 0x00, 0x00, 0x00, 0x01, 0x02, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00,
];

/// Seed bytes hashed before the path.
const PREFIX_SEED: [u8; 4] = [0x11, 0x22, 0x33, 0x44];

/// The path an entry's encrypted prefix is derived from.
pub fn root_path(mount_point: &str, path: &str) -> String {
    let joined = format!("{mount_point}/{path}");
    let mut out = String::with_capacity(joined.len());
    for c in joined.chars() {
        if c == '/' && out.ends_with('/') {
            continue;
        }
        out.push(c);
    }
    match out.strip_prefix("../../../") {
        Some(rest) => rest.to_string(),
        None => out,
    }
}

/// Bytes encrypted at the start of the entry whose root path is `root_path`.
pub fn encrypted_prefix(root_path: &str) -> usize {
    let mut hasher = blake3::Hasher::new();
    hasher.update(&PREFIX_SEED);
    hasher.update(root_path.to_ascii_lowercase().as_bytes());
    let hash = hasher.finalize();
    let word = u64::from_le_bytes(hash.as_bytes()[..8].try_into().expect("8 bytes"));
    (((word % 0x3d) * 63 + 319) & !0x3f) as usize
}

/// The game's block cipher with a key.
#[derive(Clone)]
pub struct RivalsPakCipher {
    aes: Aes256,
}

impl std::fmt::Debug for RivalsPakCipher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RivalsPakCipher(..)")
    }
}

fn reverse_words(block: &mut [u8]) {
    block.chunks_exact_mut(4).for_each(|w| w.reverse());
}

impl RivalsPakCipher {
    /// The cipher for the key as published (hex or base64 text parsed into `key`).
    pub fn new(key: &AesKey) -> Self {
        let mut bytes = *key.as_bytes();
        reverse_words(&mut bytes);
        RivalsPakCipher {
            aes: Aes256::new(GenericArray::from_slice(&bytes)),
        }
    }

    /// Encrypts whole 16-byte blocks in place (a shorter tail is left as it is).
    pub(crate) fn encrypt(&self, data: &mut [u8]) {
        for block in data.chunks_exact_mut(16) {
            reverse_words(block);
            self.aes.encrypt_block(GenericArray::from_mut_slice(block));
            reverse_words(block);
        }
    }

    /// Decrypts whole 16-byte blocks in place.
    pub fn decrypt(&self, data: &mut [u8]) {
        for block in data.chunks_exact_mut(16) {
            reverse_words(block);
            self.aes.decrypt_block(GenericArray::from_mut_slice(block));
            reverse_words(block);
        }
    }

    /// An entry's stored bytes as written to disk (see the module doc).
    pub(crate) fn seal(&self, root_path: &str, mut stored: Vec<u8>) -> Vec<u8> {
        let prefix = encrypted_prefix(root_path);
        if prefix >= stored.len() {
            stored.resize(stored.len().next_multiple_of(16), 0);
            self.encrypt(&mut stored);
        } else {
            self.encrypt(&mut stored[..prefix]);
        }
        stored
    }

    /// The stored bytes of an entry from what is on disk.
    pub fn unseal(&self, root_path: &str, mut on_disk: Vec<u8>) -> Vec<u8> {
        let prefix = encrypted_prefix(root_path).min(on_disk.len() / 16 * 16);
        self.decrypt(&mut on_disk[..prefix]);
        on_disk
    }
}

impl PakCipher for RivalsPakCipher {
    fn seal_entry(&self, mount_point: &str, path: &str, stored: Vec<u8>) -> Vec<u8> {
        self.seal(&root_path(mount_point, path), stored)
    }

    fn encrypt_index(&self, part: &mut [u8]) {
        self.encrypt(part);
    }

    fn footer_prefix(&self) -> &[u8] {
        &FOOTER_PREFIX
    }

    /// Only the prefix is encrypted in an entry longer than it.
    fn sealed_prefix(&self, mount_point: &str, path: &str) -> Option<usize> {
        Some(encrypted_prefix(&root_path(mount_point, path)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_paths_drop_the_mount_point_prefix() {
        assert_eq!(root_path("../../../", "chunknames"), "chunknames");
        assert_eq!(
            root_path("../../../", "Marvel/Content/A.uasset"),
            "Marvel/Content/A.uasset"
        );
        assert_eq!(
            root_path("../../../Marvel/", "Content/A.uasset"),
            "Marvel/Content/A.uasset"
        );
    }

    #[test]
    fn prefixes_are_multiples_of_64_between_256_and_4096() {
        for path in ["chunknames", "Marvel/Content/A.uasset", "x", ""] {
            let n = encrypted_prefix(path);
            assert!(
                (256..=4096).contains(&n) && n.is_multiple_of(64),
                "{path}: {n}"
            );
            assert_eq!(n, encrypted_prefix(&path.to_uppercase()));
        }
    }

    #[test]
    fn the_block_cipher_is_the_engines_aes_on_reversed_words() {
        let published = AesKey::from_bytes(core::array::from_fn(|i| i as u8 * 7 + 1));
        let mut swapped = *published.as_bytes();
        reverse_words(&mut swapped);
        let engine = AesKey::from_bytes(swapped);
        let plain: Vec<u8> = (0..48u8).collect();
        let mut ours = plain.clone();
        RivalsPakCipher::new(&published).encrypt(&mut ours);
        let mut theirs = plain.clone();
        reverse_words(&mut theirs);
        engine.encrypt(&mut theirs);
        reverse_words(&mut theirs);
        assert_eq!(ours, theirs);
        RivalsPakCipher::new(&published).decrypt(&mut ours);
        assert_eq!(ours, plain);
    }

    #[test]
    fn only_the_prefix_is_encrypted() {
        let cipher = RivalsPakCipher::new(&AesKey::from_bytes([9; 32]));
        let path = "Marvel/Content/Long.uasset";
        let n = encrypted_prefix(path);
        let long: Vec<u8> = (0..n + 100).map(|i| i as u8).collect();
        let sealed = cipher.seal(path, long.clone());
        assert_eq!(sealed.len(), long.len());
        assert_ne!(sealed[..n], long[..n]);
        assert_eq!(sealed[n..], long[n..]);
        assert_eq!(cipher.unseal(path, sealed), long);
        // Shorter than the prefix: padded to 16 and encrypted whole.
        let short = b"Marvel/Content/A.uasset".to_vec();
        let sealed = cipher.seal(path, short.clone());
        assert_eq!(sealed.len(), 32);
        assert_eq!(cipher.unseal(path, sealed)[..short.len()], short[..]);
    }
}
