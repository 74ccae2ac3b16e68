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
//!   the on-disk records, each with its read and write side by side;
//! * [`companion`], [`container_file`] and [`container_stem`] are the one
//!   place where a container's file names are derived from one another.
//!
//! A container's `.utoc`, `.ucas` and `.pak` share one base name, which may
//! itself hold dots (`Hello.Mod_P.utoc`, `Mod.v2.pak`): a companion is the
//! same file name with only its last extension replaced, and the base name
//! is the file name without its last extension — never cut at the first dot.

use std::path::{Path, PathBuf};

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

/// The file beside `path` with the same name and only its last extension
/// replaced by `extension`: `Mod.v2.pak` → `Mod.v2.utoc`. (A path whose name
/// has no extension gets `extension` appended.)
pub fn companion(path: &Path, extension: &str) -> PathBuf {
    path.with_extension(extension)
}

/// `dir/<stem>.<extension>`: a container file named by its base name, which
/// may hold dots (`Hello.Mod_P` → `Hello.Mod_P.utoc`).
pub fn container_file(dir: &Path, stem: &str, extension: &str) -> PathBuf {
    dir.join(format!("{stem}.{extension}"))
}

/// The base name of a container file: its name without the last extension
/// (`Hello.Mod_P.utoc` → `Hello.Mod_P`), the name the container id hashes.
pub fn container_stem(path: &Path) -> Option<&str> {
    path.file_stem().and_then(|s| s.to_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn companions_replace_only_the_last_extension() {
        let p = Path::new("dir/Hello.Mod_P.utoc");
        assert_eq!(companion(p, "ucas"), Path::new("dir/Hello.Mod_P.ucas"));
        assert_eq!(companion(p, "pak"), Path::new("dir/Hello.Mod_P.pak"));
        assert_eq!(container_stem(p), Some("Hello.Mod_P"));
        assert_eq!(
            companion(Path::new("Mod.v2.pak"), "utoc"),
            Path::new("Mod.v2.utoc")
        );
        assert_eq!(
            container_file(Path::new("out"), "Hello.Mod_P", "pak"),
            Path::new("out/Hello.Mod_P.pak")
        );
        assert_eq!(
            companion(&container_file(Path::new("out"), "A.B", "utoc"), "ucas"),
            Path::new("out/A.B.ucas")
        );
    }
}
