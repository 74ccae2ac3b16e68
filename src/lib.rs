//! zenpak: turns cooked Unreal Engine legacy packages into IoStore containers
//! (`.utoc` + `.ucas` + companion `.pak`) that UE5 games load as mods, and
//! reads such containers back.
//!
//! The crate is a library; the `zenpak` binary is a thin command-line layer
//! over it. See `ARCHITECTURE.md` for the module map and the data flow of a
//! build.

pub(crate) mod arena;
pub mod binary;
pub mod build;
pub mod classic;
pub mod codes;
pub mod compression;
pub mod diagnostic;
pub mod error;
pub mod extract;
pub mod fixups;
pub mod game;
pub mod game_check;
pub mod glob;
pub mod hash;
pub mod iostore;
pub mod legacy;
pub mod limits;
pub mod manifest;
pub mod mappings;
pub mod mount;
pub mod names;
pub mod pak;
pub mod patch;
pub mod platform;
pub(crate) mod pool;
pub mod properties;
pub mod publish;
pub mod release;
pub mod scaffold;
pub mod sniff;
pub mod version;
pub mod zen;

/// The shared corpus for unit tests, found as the integration tests find it.
#[cfg(test)]
#[path = "../tests/common/corpus.rs"]
mod test_corpus;

pub use error::{Error, Result};
pub use version::EngineVersion;
