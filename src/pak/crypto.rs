//! AES-256 as the engine uses it for pak indexes, pak entries and IoStore
//! blocks: ECB, each 16-byte block on its own, data padded to 16 bytes
//! before encryption.
//!
//! The key comes from the `ZENPAK_AES_KEY` environment variable or a key
//! file, as 64 hex digits (optionally `0x`-prefixed) or 44 characters of
//! base64 — never from a manifest.

use aes::cipher::{generic_array::GenericArray, BlockDecrypt, BlockEncrypt, KeyInit};
use aes::Aes256;

use crate::error::{Error, Result};

/// The environment variable that holds the AES key.
pub const AES_KEY_ENV: &str = "ZENPAK_AES_KEY";

/// The engine's AES block size.
pub const AES_BLOCK: usize = 16;

/// A 32-byte AES-256 key.
#[derive(Clone, PartialEq, Eq)]
pub struct AesKey([u8; 32]);

impl std::fmt::Debug for AesKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print key material.
        f.write_str("AesKey(..)")
    }
}

impl AesKey {
    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        AesKey(bytes)
    }

    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// Parses a key written as hex or base64.
    pub fn parse(text: &str) -> Result<Self> {
        let t = text.trim();
        let hex = t
            .strip_prefix("0x")
            .or_else(|| t.strip_prefix("0X"))
            .unwrap_or(t);
        if hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            let mut key = [0u8; 32];
            for (i, byte) in key.iter_mut().enumerate() {
                *byte = u8::from_str_radix(&hex[i * 2..i * 2 + 2], 16)
                    .map_err(|_| Error::usage("AES key is not valid hex"))?;
            }
            return Ok(AesKey(key));
        }
        let bytes = base64::Engine::decode(&base64::engine::general_purpose::STANDARD, t)
            .map_err(|_| Error::usage("AES key must be 64 hex digits or base64 of 32 bytes"))?;
        let key: [u8; 32] = bytes.try_into().map_err(|b: Vec<u8>| {
            Error::usage(format!(
                "AES key must be 32 bytes, the base64 text holds {}",
                b.len()
            ))
        })?;
        Ok(AesKey(key))
    }

    /// The key from `ZENPAK_AES_KEY`, if set.
    pub fn from_env() -> Result<Option<Self>> {
        match std::env::var(AES_KEY_ENV) {
            Ok(v) if !v.trim().is_empty() => AesKey::parse(&v)
                .map(Some)
                .map_err(|e| Error::usage(format!("{AES_KEY_ENV}: {e}"))),
            _ => Ok(None),
        }
    }

    /// The key from a key file (hex or base64 text).
    pub fn from_file(path: &std::path::Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        AesKey::parse(&text).map_err(|e| Error::usage(format!("{}: {e}", path.display())))
    }

    /// Encrypts in place; `data.len()` must be a multiple of 16.
    pub fn encrypt(&self, data: &mut [u8]) {
        debug_assert_eq!(data.len() % AES_BLOCK, 0);
        let cipher = Aes256::new(GenericArray::from_slice(&self.0));
        for block in data.chunks_exact_mut(AES_BLOCK) {
            cipher.encrypt_block(GenericArray::from_mut_slice(block));
        }
    }

    /// Decrypts in place; a length that is not a multiple of 16 is an error.
    pub fn decrypt(&self, data: &mut [u8]) -> Result<()> {
        if !data.len().is_multiple_of(AES_BLOCK) {
            return Err(Error::invalid(format!(
                "encrypted data of {} bytes is not a whole number of AES blocks",
                data.len()
            )));
        }
        let cipher = Aes256::new(GenericArray::from_slice(&self.0));
        for block in data.chunks_exact_mut(AES_BLOCK) {
            cipher.decrypt_block(GenericArray::from_mut_slice(block));
        }
        Ok(())
    }
}

/// Pads `data` to a multiple of 16 the way the engine does before
/// encrypting: the pad repeats the data from its start.
pub fn pad_like_engine(data: &mut Vec<u8>) {
    let len = data.len();
    if len == 0 || len.is_multiple_of(AES_BLOCK) {
        return;
    }
    let target = len.next_multiple_of(AES_BLOCK);
    for i in len..target {
        let b = data[(i - len) % len];
        data.push(b);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_and_base64_keys_agree() {
        let hex = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
        let b64 = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";
        assert_eq!(AesKey::parse(hex).unwrap(), AesKey::parse(b64).unwrap());
        assert_eq!(
            AesKey::parse(&format!("0x{hex}")).unwrap().as_bytes()[31],
            0x1f
        );
        assert!(AesKey::parse("abcd").is_err());
    }

    #[test]
    fn encrypt_decrypt_round_trip() {
        let key = AesKey::from_bytes([7; 32]);
        let mut data = b"hello world, this is a test!".to_vec();
        pad_like_engine(&mut data);
        assert_eq!(data.len(), 32);
        let plain = data.clone();
        key.encrypt(&mut data);
        assert_ne!(data, plain);
        key.decrypt(&mut data).unwrap();
        assert_eq!(data, plain);
    }
}
