//! IoStore containers: the `.utoc` table of contents, the `.ucas` chunk
//! data and the container header chunk.
//!
//! Formats as the engine writes them (facts from the engine's IoStore
//! sources as published, trumank/retoc and CUE4Parse; see
//! `docs-iostore.md` for the per-version field table).

pub mod chunk;
pub mod container_header;
pub mod directory_index;
pub mod reader;
pub mod toc;
pub mod writer;

pub use reader::Container;
pub use writer::{validate_relative_path, ContainerBuilder, ContainerOptions, WrittenContainer};
