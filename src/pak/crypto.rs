//! AES-256 as the engine uses it for pak indexes, pak entries and IoStore
//! blocks: ECB, each 16-byte block on its own, data padded to 16 bytes
//! before encryption.
//!
//! A key is written as 64 hex digits (optionally `0x`-prefixed) or 44
//! characters of base64, and comes from the command line, the
//! `ZENPAK_AES_KEY` environment variable or a key file — never from a
//! manifest. A game may use several keys, each named by a GUID in the
//! footer of the paks it encrypts: [`KeyRing`] holds them.

use std::collections::BTreeMap;

use aes::cipher::{generic_array::GenericArray, BlockDecrypt, BlockEncrypt, KeyInit};
use aes::Aes256;

use crate::error::{Error, Result};

/// The environment variable that holds the AES key.
pub(crate) const AES_KEY_ENV: &str = "ZENPAK_AES_KEY";

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

    pub(crate) fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// Parses a key written as hex or base64.
    pub fn parse(text: &str) -> Result<Self> {
        let t = text.trim();
        let hex = t
            .strip_prefix("0x")
            .or_else(|| t.strip_prefix("0X"))
            .unwrap_or(t);
        if let Some(key) = crate::hash::from_hex(hex) {
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
    pub(crate) fn from_env() -> Result<Option<Self>> {
        match std::env::var(AES_KEY_ENV) {
            Ok(v) if !v.trim().is_empty() => AesKey::parse(&v)
                .map(Some)
                .map_err(|e| Error::usage(format!("{AES_KEY_ENV}: {e}"))),
            _ => Ok(None),
        }
    }

    /// The key from a key file (hex or base64 text).
    pub(crate) fn from_file(path: &std::path::Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        AesKey::parse(&text).map_err(|e| Error::usage(format!("{}: {e}", path.display())))
    }

    /// Encrypts in place; `data.len()` must be a multiple of 16.
    pub(crate) fn encrypt(&self, data: &mut [u8]) {
        debug_assert_eq!(data.len() % AES_BLOCK, 0);
        let cipher = Aes256::new(GenericArray::from_slice(&self.0));
        for block in data.chunks_exact_mut(AES_BLOCK) {
            cipher.encrypt_block(GenericArray::from_mut_slice(block));
        }
    }

    /// Decrypts in place; a length that is not a multiple of 16 is an error.
    pub(crate) fn decrypt(&self, data: &mut [u8]) -> Result<()> {
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

/// The keys a command may use: one for files whose key GUID is zero (or has
/// no key of its own), and keys by GUID.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct KeyRing {
    default: Option<AesKey>,
    by_guid: BTreeMap<[u8; 16], AesKey>,
}

impl std::fmt::Debug for KeyRing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "KeyRing({} default, {} by GUID)",
            self.default.is_some() as u8,
            self.by_guid.len()
        )
    }
}

impl KeyRing {
    /// A ring with at most one key, used for every file.
    pub fn single(key: Option<AesKey>) -> Self {
        KeyRing {
            default: key,
            by_guid: BTreeMap::new(),
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.default.is_none() && self.by_guid.is_empty()
    }

    /// Adds a key for a GUID (`None` or the zero GUID: the default key).
    pub(crate) fn add(&mut self, guid: Option<[u8; 16]>, key: AesKey) {
        match guid {
            Some(g) if g != [0; 16] => {
                self.by_guid.insert(g, key);
            }
            _ => self.default = Some(key),
        }
    }

    /// Adds every key of `other` (its keys win).
    pub fn extend(&mut self, other: KeyRing) {
        if let Some(k) = other.default {
            self.default = Some(k);
        }
        self.by_guid.extend(other.by_guid);
    }

    /// The key for a file whose footer names `guid`: its own key, else the default.
    pub(crate) fn key_for(&self, guid: &[u8; 16]) -> Option<AesKey> {
        self.by_guid.get(guid).or(self.default.as_ref()).cloned()
    }

    /// The default key, if any.
    pub fn default_key(&self) -> Option<AesKey> {
        self.default.clone()
    }

    /// Parses `KEY` or `GUID:KEY` / `GUID=KEY` (GUID as 32 hex digits,
    /// dashes allowed, as UnrealPak's `Crypto.json` and the engine print it).
    pub fn add_spec(&mut self, spec: &str) -> Result<()> {
        let spec = spec.trim();
        match spec.split_once([':', '=']) {
            Some((guid, key)) if parse_guid(guid).is_some() => {
                self.add(parse_guid(guid), AesKey::parse(key)?);
            }
            _ => self.add(None, AesKey::parse(spec)?),
        }
        Ok(())
    }

    /// Keys from a file: one key (hex or base64), lines of `GUID:KEY`, or an
    /// UnrealPak crypto settings JSON (`EncryptionKey.Key` and
    /// `SecondaryEncryptionKeys[].{Guid, Key}`).
    pub fn from_file(path: &std::path::Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        KeyRing::parse_file_text(&text).map_err(|e| {
            Error::usage(format!("{}: {}", path.display(), e.message()))
                .with_hint("a key file holds one key (64 hex digits or base64), lines of GUID:KEY, or a Crypto.json")
        })
    }

    fn parse_file_text(text: &str) -> Result<Self> {
        let mut ring = KeyRing::default();
        if text.trim_start().starts_with('{') {
            let json: serde_json::Value = serde_json::from_str(text)
                .map_err(|e| Error::usage(format!("not valid JSON: {e}")))?;
            let mut add = |entry: &serde_json::Value| -> Result<()> {
                let key = entry.get("Key").and_then(|k| k.as_str());
                let guid = entry
                    .get("Guid")
                    .and_then(|g| g.as_str())
                    .and_then(parse_guid);
                if let Some(key) = key {
                    ring.add(guid, AesKey::parse(key)?);
                }
                Ok(())
            };
            if let Some(main) = json.get("EncryptionKey") {
                add(main)?;
            }
            if let Some(list) = json
                .get("SecondaryEncryptionKeys")
                .and_then(|l| l.as_array())
            {
                for entry in list {
                    add(entry)?;
                }
            }
            if ring.is_empty() {
                return Err(Error::usage("the JSON names no EncryptionKey.Key"));
            }
            return Ok(ring);
        }
        for line in text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
        {
            ring.add_spec(line)?;
        }
        if ring.is_empty() {
            return Err(Error::usage("the file holds no key"));
        }
        Ok(ring)
    }

    /// The key from `ZENPAK_AES_KEY` (same forms as `--aes-key`), if set.
    pub fn from_env() -> Result<Self> {
        let mut ring = KeyRing::default();
        if let Ok(v) = std::env::var(AES_KEY_ENV) {
            if !v.trim().is_empty() {
                ring.add_spec(&v)
                    .map_err(|e| Error::usage(format!("{AES_KEY_ENV}: {}", e.message())))?;
            }
        }
        Ok(ring)
    }
}

/// A GUID as 32 hex digits (dashes and braces ignored) → the bytes of an
/// `FGuid` on disk (four little-endian u32 A, B, C, D; the text is A B C D).
pub(crate) fn parse_guid(text: &str) -> Option<[u8; 16]> {
    let digits: String = text
        .chars()
        .filter(|c| !matches!(c, '-' | '{' | '}'))
        .collect();
    if digits.len() != 32 || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let mut out = [0u8; 16];
    for i in 0..4 {
        let word = u32::from_str_radix(&digits[i * 8..i * 8 + 8], 16).ok()?;
        out[i * 4..i * 4 + 4].copy_from_slice(&word.to_le_bytes());
    }
    Some(out)
}

/// The text [`parse_guid`] reads: the `FGuid` words A B C D as 32
/// uppercase hex digits.
pub(crate) fn guid_text(guid: &[u8; 16]) -> String {
    guid.chunks_exact(4)
        .map(|w| format!("{:08X}", u32::from_le_bytes([w[0], w[1], w[2], w[3]])))
        .collect()
}

/// Pads `data` to a multiple of 16 the way the engine does before
/// encrypting: the pad repeats the data from its start.
pub fn pad_like_engine(data: &mut Vec<u8>) {
    let padding = engine_padding(&data[..data.len().min(AES_BLOCK)], data.len() as u64);
    data.extend_from_slice(&padding);
}

/// The padding [`pad_like_engine`] appends to a run of `len` bytes whose
/// first bytes (up to 16) are `first`: what a writer streaming the run
/// needs at its end.
pub(crate) fn engine_padding(first: &[u8], len: u64) -> Vec<u8> {
    if len == 0 || len.is_multiple_of(AES_BLOCK as u64) {
        return Vec::new();
    }
    let pad = (len.next_multiple_of(AES_BLOCK as u64) - len) as usize;
    (0..pad).map(|k| first[(k as u64 % len) as usize]).collect()
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
    fn key_ring_forms() {
        let hex = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
        let guid = "0123456789ABCDEF0123456789ABCDEF";
        let mut ring = KeyRing::default();
        ring.add_spec(&format!("{guid}:{hex}")).unwrap();
        let g = parse_guid(guid).unwrap();
        assert_eq!(g[..4], [0x67, 0x45, 0x23, 0x01]);
        assert!(ring.key_for(&g).is_some());
        assert!(ring.key_for(&[0; 16]).is_none());
        let json = r#"{"EncryptionKey":{"Guid":"00000000000000000000000000000000","Key":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="},"SecondaryEncryptionKeys":[]}"#;
        let ring = KeyRing::parse_file_text(json).unwrap();
        assert_eq!(ring.key_for(&[9; 16]), Some(AesKey::parse(hex).unwrap()));
        assert!(KeyRing::parse_file_text("{}").is_err());
        assert!(KeyRing::parse_file_text("nonsense").is_err());
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
