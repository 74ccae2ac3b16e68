//! The AES key options and the "what to read" argument shared by the
//! commands that read containers, paks and game folders.

use std::path::PathBuf;

use zenpak::pak::crypto::KeyRing;
use zenpak::Result;

#[derive(Debug, Clone, clap::Args)]
pub struct KeyArgs {
    /// AES-256 key: 64 hex digits (0x optional) or base64; `GUID:KEY` for a
    /// key that only files with that key GUID use. Repeatable.
    #[arg(long = "aes-key", value_name = "KEY")]
    pub aes_keys: Vec<String>,
    /// File holding keys: one key, lines of GUID:KEY, or an UnrealPak
    /// Crypto.json. The `ZENPAK_AES_KEY` environment variable is read too.
    #[arg(long, value_name = "FILE")]
    pub aes_key_file: Option<PathBuf>,
}

impl KeyArgs {
    /// Every key given: environment first, then the key file, then
    /// `--aes-key` (a later source wins for the same GUID).
    pub fn keys(&self) -> Result<KeyRing> {
        let mut ring = KeyRing::from_env()?;
        if let Some(path) = &self.aes_key_file {
            ring.extend(KeyRing::from_file(path)?);
        }
        for spec in &self.aes_keys {
            ring.add_spec(spec)
                .map_err(|e| zenpak::Error::usage(format!("--aes-key: {}", e.message())))?;
        }
        Ok(ring)
    }
}

/// A container, pak or game folder to read, `--json`, and the AES keys.
#[derive(Debug, clap::Args)]
pub struct SourceArgs {
    /// A `.utoc` (with its `.pak`), a `.pak` (with its `.utoc`), or a game's
    /// `Paks` folder (every pak and container, in the engine's mount order).
    pub path: PathBuf,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub key: KeyArgs,
}
