//! IoStore containers: the `.utoc` table of contents, the `.ucas` chunk
//! data and the container header chunk.
//!
//! Formats as the engine writes them (facts from the engine's IoStore
//! sources as published, trumank/retoc and CUE4Parse; see
//! `docs-iostore.md` for the per-version field table).
//!
//! * [`writer::ContainerBuilder`] writes the triplet (`.utoc`, `.ucas`,
//!   companion `.pak`) — the API the build pipeline uses;
//! * [`reader::Container`] reads one back, lists, unpacks and verifies it;
//! * [`container_header`], [`toc`], [`directory_index`] and [`chunk`] are
//!   the on-disk records, each with its read and write side by side.

pub mod chunk;
pub mod container_header;
pub mod directory_index;
pub mod reader;
pub mod shader_library;
pub mod toc;
pub mod writer;

pub use reader::Container;
pub use writer::{
    validate_relative_path, write_pieces, ChunkPiece, ContainerBuilder, ContainerOptions,
    PreviousContainer, WrittenContainer,
};
