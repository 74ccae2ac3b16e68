//! The AES key option shared by the container commands.

use std::path::PathBuf;

use zenpak::pak::crypto::AesKey;
use zenpak::Result;

#[derive(Debug, Clone, clap::Args)]
pub struct KeyArgs {
    /// File holding the AES-256 key (64 hex digits or base64); otherwise
    /// the `ZENPAK_AES_KEY` environment variable is used when set.
    #[arg(long, value_name = "FILE")]
    pub aes_key_file: Option<PathBuf>,
}

impl KeyArgs {
    pub fn key(&self) -> Result<Option<AesKey>> {
        match &self.aes_key_file {
            Some(path) => AesKey::from_file(path).map(Some),
            None => AesKey::from_env(),
        }
    }
}

/// A container to read: its `.utoc`, `--json`, and the AES key options.
#[derive(Debug, clap::Args)]
pub struct ContainerArgs {
    /// The container's `.utoc`.
    pub utoc: std::path::PathBuf,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub key: KeyArgs,
}
