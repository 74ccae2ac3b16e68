//! IoStore containers: the `.utoc` table of contents, the `.ucas` chunk
//! data and the container header chunk.
//!
//! Formats as the engine writes them (facts from the engine's IoStore
//! sources as published, trumank/retoc and CUE4Parse; the per-release
//! field choices are in [`crate::version`]).
//!
//! * [`writer::ContainerBuilder`] writes the triplet (`.utoc`, `.ucas`,
//!   companion `.pak`) — the API the build pipeline uses;
//! * [`reader::Container`] reads one back, lists, unpacks and verifies it;
//! * [`container_header`], [`toc`], [`directory_index`] and [`chunk`] are
//!   the on-disk records, each with its read and write side by side
//!   (`ChunkId`: u64 id LE, u16 index **big-endian**, pad, type; `toc::build_perfect_hash` is
//!   the engine's `GeneratePerfectHashes`, overflow list included);
//! * [`companion`], [`container_file`] and [`container_stem`] are the one
//!   place where a container's file names are derived from one another.
//!
//! A container's `.utoc`, `.ucas` and `.pak` share one base name, which may
//! itself hold dots (`Hello.Mod_P.utoc`, `Mod.v2.pak`): a companion is the
//! same file name with only its last extension replaced, and the base name
//! is the file name without its last extension — never cut at the first dot.
//!
//! # What is written, per engine
//!
//! | engine | TOC version | header version | chunk hash (meta size) | perfect hash | partitions |
//! |---|---|---|---|---|---|
//! | 4.26 | 2 DirectoryIndex | 0 Initial | SHA-1 + 12 zeros (33) | no (add order) | fields 0 |
//! | 4.27 | 3 PartitionSize | 0 Initial | SHA-1 + 12 zeros (33) | no | 1 × `u64::MAX` |
//! | 5.0 | 5 PerfectHashWithOverflow | 1 LocalizedPackages | BLAKE3-160 + 12 zeros (33) | yes | 1 × max |
//! | 5.1, 5.2 | 5 | 2 OptionalSegmentPackages | same (33) | yes | 1 × max |
//! | 5.3 | 5 | 3 NoExportInfo | same (33) | yes | 1 × max |
//! | 5.4 | 6 OnDemandMetaData | 3 | same (33) | yes | 1 × max |
//! | 5.5 | 8 ReplaceIoChunkHashWithIoHash | 4 SoftPackageReferences | `FIoHash` (24: + flags + 3 pad) | yes | 1 × max |
//! | 5.6, 5.7 | 8 | 5 SoftPackageReferencesOffset | `FIoHash` (24) | yes | 1 × max |
//! | 5.8 | 8 | 5, with 8-byte shader map hashes (retoc #72) | `FIoHash` (24) | yes | 1 × max |
//!
//! UE4 engines use the UE4 chunk-type numbering, UE5 the UE5 one (`crate::version`). For every version:
//!
//! - container id = CityHash64 of the lowercased `.utoc` stem as UTF-16LE; `verify` warns on mismatch.
//! - flags: `Indexed` always, `Compressed` only if some block is stored compressed, `Encrypted`
//!   only with a key, never `Signed` (no signature section). A chunk meta is flagged `Compressed`
//!   when any of its blocks is.
//! - the method table lists only methods used (0 = `None` implicit); a block that does not shrink is
//!   stored uncompressed.
//! - each chunk starts on a block boundary of the uncompressed address space; every stored block is
//!   padded to 16 with the engine's fill (its own bytes repeated) and encrypted with the key; block
//!   entries record the unpadded compressed size.
//! - the container header chunk comes last, never compressed (encrypted with the container).
//! - the directory index holds every chunk with a path, padded and encrypted like a block under AES.
//!
//! Container header (`ContainerHeader::write`, all versions -1 … 5 read): UE4 `Initial` — id, package
//! count, name batch (empty names, hash-algorithm id), package ids, 32-byte store entries, culture map,
//! 16-byte redirects. UE5 — magic `nCoI`, version, id, (package count before v2), package ids, store
//! entries (24 bytes before v3, 16 from v3; views relative to the view), optional segments (v2+),
//! redirect name batch, localized packages, redirects, soft package references (v4+, offset/size
//! record from v5). The corpus's engine-written headers (4.27, 5.0, 5.3) round-trip byte for byte.
//!
//! The companion pak is always written (pak version 11 for every engine, even with no loose files,
//! with the container's mount point); see `crate::pak`.
//!
//! # Tests
//!
//! - `tests/containers/iostore_container_header.rs`: engine headers and retoc's `PreInitial` ones
//!   write back byte-identically.
//! - `iostore_round_trip.rs`: every engine × none/zlib/zstd/lz4 × AES, chunk sizes around block
//!   edges; flags, header never compressed, determinism, corruption and bad paths.
//! - `iostore_corpus.rs`: UE4.27 and UE5.3 corpus chunks through the writer and back.
//! - `iostore_hostile.rs`: flipped and truncated `.utoc`/`.pak` bytes, flipped `.ucas` bytes.
//! - `iostore_bounded.rs`: Oodle blocks, shared-block bombs, hostile counts, 2 GiB chunk, sparse
//!   4 GiB `.utoc`, 1 GiB header claim — all bounded in memory.
//! - `iostore_cli.rs`, `dotted_names.rs`, `iostore_game_folder.rs`: the commands, dotted base names
//!   and companions, game-folder mount order.

use std::path::{Path, PathBuf};

pub mod chunk;
pub mod container_header;
pub mod directory_index;
pub mod on_demand_toc;
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
pub(crate) fn companion(path: &Path, extension: &str) -> PathBuf {
    path.with_extension(extension)
}

/// `dir/<stem>.<extension>`: a container file named by its base name, which
/// may hold dots (`Hello.Mod_P` → `Hello.Mod_P.utoc`).
pub(crate) fn container_file(dir: &Path, stem: &str, extension: &str) -> PathBuf {
    dir.join(format!("{stem}.{extension}"))
}

/// The base name of a container file: its name without the last extension
/// (`Hello.Mod_P.utoc` → `Hello.Mod_P`), the name the container id hashes.
pub(crate) fn container_stem(path: &Path) -> Option<&str> {
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
