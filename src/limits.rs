//! Budgets on the sizes a file declares for the structures zenpak reads
//! whole into memory. Each is checked against the declared size *before*
//! anything is allocated or read, so a hostile or sparse file (a 4 GiB
//! `.utoc` that holds 4 KiB on disk, a container header chunk claiming
//! 1 GiB of blocks) fails in milliseconds with the size it declared and what
//! the file holds, and every read path (`inspect`, `list`, `verify`,
//! `unpack`, `get`, `extract`, `GameView`) stays far below 256 MiB of peak
//! memory. Chunk and entry *data* is never read whole by these paths: it is
//! streamed a block at a time (see `Container::read_chunk_to` and
//! `PakReader::read_to`), so only the structures below need a budget.
//!
//! The budgets are set as strict as the engine needs, not stricter: each is
//! several times the largest real file of its kind, and parsing a structure
//! of that size takes at most about twice its bytes, which keeps the peak of
//! a hostile file that fills a budget to the brim under 256 MiB.
//!
//! - [`MAX_TOC_BYTES`], 64 MiB: a whole `.utoc`. A real game's largest TOC
//!   is tens of MiB at most (a container of a million chunks is about
//!   46 MiB of chunk ids, offsets and metas; its blocks at 64 KiB each are
//!   12 bytes per 64 KiB of data, 12 MiB for a 64 GiB container). The
//!   engine reads the TOC whole too (`FIoStoreTocResource::Read`).
//! - [`MAX_CONTAINER_HEADER_BYTES`], 32 MiB: the container header chunk
//!   (the package store entries of a container). The largest real one in
//!   the corpus is 3.6 MiB (a whole UE 4.27 game); a header lists about
//!   40–100 bytes per package, so 32 MiB is several hundred thousand
//!   packages in one container.
//! - [`MAX_PAK_INDEX_BYTES`], 64 MiB: one part of a pak's index (the
//!   primary index, the path-hash index or the full directory index; the
//!   flat index before version 10). A real pak's index is about 100 bytes
//!   per file before version 10 and less after, so 64 MiB is over half a
//!   million files in one pak.
//! - [`MAX_RELEASE_FILE_BYTES`], 16 MiB: one file `[release]` names (a
//!   changelog, a README, Thunderstore's 256×256 icon). Real ones are a few
//!   KiB to a few hundred KiB (a long changelog of years of releases is
//!   under 1 MiB; a 256×256 PNG is at most 256 KiB); it is read a block at a
//!   time into the archive, whole only for mod.io's changelog, which its
//!   upload metadata carries as text.
//!
//! | what | limit | where |
//! |---|---|---|
//! | a TOC count (chunks, blocks, seeds, methods, directory index) | bytes left in the `.utoc` | `Toc::read` |
//! | an IoStore block | 16 MiB stored and decompressed, ≤ the block size | `check_chunk_blocks` |
//! | chunks sharing blocks, blocks sharing `.ucas` data (slack aside) | refused | `Container::layout_errors` |
//! | a pak count | bytes left in its index part | `PakFooter`, `PrimaryIndex`, `FlatIndex`, `FullDirectoryIndex` |
//! | pak names sharing a record, entries sharing bytes | refused | `PakReader::open` |
//! | a pak block | size ≤ 16 MiB; stored ≤ 2 × size + 4 KiB | `entry_extent` |
//! | memory while reading data | one block, or 1 MiB of an uncompressed pak entry | `read_chunk_to`, `read_to` |
//! | a whole `.utoc` (declared size and file length) | 64 MiB | `Toc::read_file`, `MAX_TOC_BYTES` |
//! | the container header chunk (declared length) | 32 MiB | `Container::container_header` |
//! | one pak index part (declared size) | 64 MiB | `PakReader::open`, `MAX_PAK_INDEX_BYTES` |
//! | a classic package's report | streamed row by row | `classic::report::Rows` |
//! | a release file (changelog, README, icon; read bounded, its size as read) | 16 MiB | `platform::open_release_file`, `MAX_RELEASE_FILE_BYTES` |
//! | a cooked shader archive's header (its code is streamed) | counts ≤ bytes left; 64 MiB | `ShaderArchive::read_header_from`, `MAX_ARCHIVE_HEADER_BYTES` |
//!
//! Pinned by `tests/containers/iostore_bounded.rs` and `pak_bounded.rs` (bombs refused and a 2 GiB
//! chunk unpacked within 256 MiB, measured on the real binary).

use crate::error::{Error, Result};

/// Largest `.utoc` read (see the module doc).
pub(crate) const MAX_TOC_BYTES: u64 = 64 << 20;
/// Largest container header chunk read (see the module doc).
pub(crate) const MAX_CONTAINER_HEADER_BYTES: u64 = 32 << 20;
/// Largest part of a pak index read (see the module doc).
pub(crate) const MAX_PAK_INDEX_BYTES: u64 = 64 << 20;
/// Largest file `[release]` names (see the module doc).
pub(crate) const MAX_RELEASE_FILE_BYTES: u64 = 16 << 20;

/// Checks that `what` (declared as `declared` bytes) fits `budget`; the
/// error names both and what the file holds (`file_len`), and says the
/// file is damaged or not what it claims.
pub(crate) fn check_declared(what: &str, declared: u64, budget: u64, file_len: u64) -> Result<()> {
    if declared <= budget {
        return Ok(());
    }
    Err(Error::invalid(format!(
        "the {what} declares {declared} bytes, more than the {} MiB zenpak reads for it (real files stay far below); the file holds {file_len} bytes",
        budget >> 20
    ))
    .with_hint("the file is damaged or hostile, or was written with wrong sizes; no game writes one this large"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_declared_size_over_its_budget_is_refused() {
        assert!(check_declared("TOC", MAX_TOC_BYTES, MAX_TOC_BYTES, 1).is_ok());
        let e = check_declared("TOC", MAX_TOC_BYTES + 1, MAX_TOC_BYTES, 4096).unwrap_err();
        let text = e.to_string();
        assert!(text.contains(&(MAX_TOC_BYTES + 1).to_string()), "{text}");
        assert!(text.contains("4096"), "{text}");
    }
}
