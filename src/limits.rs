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
//! - [`MAX_VIEW_TABLE_BYTES`], 64 MiB: every `.utoc` of one game view
//!   together, with the paths their directory indexes spell (`list`,
//!   `verify`, `doctor`, `conflicts`, `check --game-dir` of a folder). A
//!   view keeps every container's tables: a chunk's id, offsets and meta
//!   (about its TOC bytes), 20 bytes for its winning copy by id and 8 for
//!   its file (`GameView` makes a file's path, kind and source only when
//!   asked), each path in its bytes and 16 more
//!   (`iostore::reader::ChunkPaths`); a TOC is read whole before it is
//!   parsed. A view at the budget (1.46 million chunks) peaks at about
//!   140 MiB (`verify`, with its lookup table, 190 MiB); four sparse TOCs
//!   at the brim took `doctor` to 4 GiB before.
//!   A real game's TOCs total a few MiB to tens of MiB (hundreds of
//!   thousands of chunks are about 20 MiB of TOC and as much of paths).
//!   A container that would take the view over is refused (`limit`; the
//!   game readers name it and read the rest): checked on the `.utoc`'s
//!   length before it is read, and with its paths once they are. A
//!   directory index is read as long as it spells at most this many bytes
//!   of paths (`DirectoryIndex::each_file`): twelve bytes of a file entry
//!   can name a path of any length.
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
//! | every `.utoc` of a game view and its chunks' paths (summed) | 64 MiB | `GameView::mount`, `MAX_VIEW_TABLE_BYTES` |
//! | the paths a directory index spells (summed) | 64 MiB | `DirectoryIndex::each_file` |
//! | the container header chunk (declared length) | 32 MiB | `Container::container_header` |
//! | one pak index part (declared size) | 64 MiB | `PakReader::open`, `MAX_PAK_INDEX_BYTES` |
//! | a classic package's report | streamed row by row | `classic::report::Rows` |
//! | a release file (changelog, README, icon; read bounded, its size as read) | 16 MiB | `platform::open_release_file`, `MAX_RELEASE_FILE_BYTES` |
//! | what a container, pak or `inspect` opens | regular files only (a link to one is followed) | [`open_regular`] |
//! | a cooked shader archive's header (its code is streamed) | counts ≤ bytes left; 64 MiB | `ShaderArchive::read_header_from`, `MAX_ARCHIVE_HEADER_BYTES` |
//!
//! Output has a budget of its own ([`OutputBudget`]): what `unpack`,
//! `extract` and `get` will write is summed before anything is written
//! (the files' sizes as their records declare them). More than
//! [`EXPANSION_RATIO`] times the bytes of the containers and paks read is a
//! `large-output` warning with the total (a 1.4 MB pak of zeros declares
//! 6.4 GB: no real compression comes near 64×); with `CI=true` in the
//! environment it is refused instead, unless `--max-output` says how much
//! may be written; `--max-output SIZE` refuses more than SIZE anywhere.
//!
//! Pinned by `tests/containers/iostore_bounded.rs` and `pak_bounded.rs` (bombs refused and a 2 GiB
//! chunk unpacked within 256 MiB, measured on the real binary), and by
//! `tests/workflow/game_view_memory.rs` (sparse TOCs at the budget, four in one game, a directory
//! index spelling a gigabyte of paths).

use std::fs::File;
use std::path::Path;

use crate::error::{Error, Result};

/// Largest `.utoc` read (see the module doc).
pub(crate) const MAX_TOC_BYTES: u64 = 64 << 20;
/// Largest total of the `.utoc` files one game view reads and of their
/// chunks' paths; also the most a directory index spells (see the module doc).
pub(crate) const MAX_VIEW_TABLE_BYTES: u64 = 64 << 20;
/// Largest container header chunk read (see the module doc).
pub(crate) const MAX_CONTAINER_HEADER_BYTES: u64 = 32 << 20;
/// Largest part of a pak index read (see the module doc).
pub(crate) const MAX_PAK_INDEX_BYTES: u64 = 64 << 20;
/// Largest file `[release]` names (see the module doc).
pub(crate) const MAX_RELEASE_FILE_BYTES: u64 = 16 << 20;

/// Most packages one package's schemas are read from (blueprint parents,
/// user-defined structs, component classes found in content; see
/// `properties::schema_source`). A blueprint's chain of content parents is
/// a handful deep and its structs a few dozen; a chain that keeps naming
/// new packages is hostile or broken, and stops here.
pub(crate) const MAX_SCHEMA_PACKAGES: usize = 256;
/// Deepest chain of schemas resolved through other packages (a parent's
/// parent's struct …): bounds a chain of packages that name each other.
pub(crate) const MAX_SCHEMA_DEPTH: usize = 32;
/// Most files listed in one folder searched for schema packages (a game's
/// whole cooked content is tens of thousands of packages).
pub(crate) const MAX_SCHEMA_FOLDER_FILES: usize = 1_000_000;

/// Output more than this many times the input read is announced before it
/// is written (see the module doc).
pub const EXPANSION_RATIO: u64 = 64;

/// How much `unpack`, `extract` or `get` may write (see the module doc).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OutputBudget {
    /// `--max-output`: refuse more than this many bytes.
    pub max: Option<u64>,
    /// Running in CI (`CI=true`): without `max`, output over
    /// [`EXPANSION_RATIO`] times the input is refused, not only announced.
    pub ci: bool,
}

impl OutputBudget {
    /// `--max-output` as given, and whether the environment says CI
    /// (`CI` set to `true` or `1`, as CI services set it).
    pub fn from_env(max: Option<u64>) -> Self {
        let ci = std::env::var("CI").is_ok_and(|v| v.eq_ignore_ascii_case("true") || v == "1");
        OutputBudget { max, ci }
    }

    /// Checks `planned` bytes of output against `input` bytes read from
    /// `source`, before anything is written: an error when over the
    /// budget, else a `large-output` warning when over [`EXPANSION_RATIO`]
    /// times the input.
    pub fn check(
        &self,
        planned: u64,
        input: u64,
        source: &Path,
    ) -> Result<Option<crate::diagnostic::Diagnostic>> {
        let ratio_limit = input.saturating_mul(EXPANSION_RATIO);
        let over_ratio = planned > ratio_limit;
        let refuse = |limit: u64, hint: &str| {
            Err(Error::limit("the output to write", planned, limit)
                .in_file(source)
                .with_hint(hint.to_string()))
        };
        match self.max {
            Some(max) if planned > max => {
                return refuse(
                    max,
                    "nothing was written: pass a larger --max-output if this much is wanted, or select fewer files with --filter",
                )
            }
            None if self.ci && over_ratio => {
                return refuse(
                    ratio_limit,
                    "nothing was written: with CI=true, output over 64 times the input is refused; pass --max-output SIZE to allow it",
                )
            }
            _ => {}
        }
        Ok(over_ratio.then(|| {
            crate::diagnostic::Diagnostic::warning(
                "large-output",
                format!(
                    "{planned} bytes will be written, {}× the {input} bytes read: the files declare far more than their containers hold",
                    planned / input.max(1)
                ),
            )
            .with_file(source)
            .with_hint("make sure the disk has room; --max-output SIZE caps what is written, --filter selects fewer files")
        }))
    }
}

/// Parses a size as `--max-output` takes it: bytes, or a number with a
/// unit `K`, `M`, `G`, `T` (powers of 1024; `KiB`, `MB` and the like too).
pub fn parse_size(text: &str) -> std::result::Result<u64, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let number: f64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not a size (e.g. 512M, 20G, 1048576)"))?;
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        other => return Err(format!("unknown size unit `{other}` (use K, M, G or T)")),
    };
    let bytes = number * (1u64 << shift) as f64;
    if !bytes.is_finite() || bytes < 0.0 || bytes > u64::MAX as f64 {
        return Err(format!("`{text}` is not a size zenpak can count"));
    }
    Ok(bytes as u64)
}

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

/// Opens `path` to read, a regular file only (a link to one is
/// followed): a FIFO would block the open or the first read forever, and a
/// device such as `/dev/zero` has no length and never ends, so no budget
/// above means anything for them. The kind is checked before the open (a
/// FIFO's open blocks until a writer comes) and again on the handle.
pub(crate) fn open_regular(path: &Path) -> Result<File> {
    let refuse = |kind: &str| {
        Err(Error::usage(format!("this is {kind}, not a regular file"))
        .in_file(path)
        .with_hint("give the file itself (a link to one works): zenpak reads regular files only, never pipes or devices"))
    };
    let meta = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
    if !meta.is_file() {
        return refuse(file_kind(&meta.file_type()));
    }
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let meta = file.metadata().map_err(|e| Error::io(path, e))?;
    if !meta.is_file() {
        return refuse(file_kind(&meta.file_type()));
    }
    Ok(file)
}

/// What a file that is not a regular one is, in words.
fn file_kind(kind: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if kind.is_char_device() {
            return "a character device";
        }
        if kind.is_block_device() {
            return "a block device";
        }
        if kind.is_socket() {
            return "a socket";
        }
    }
    if kind.is_dir() {
        "a folder"
    } else {
        "not a file"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_binary_units() {
        assert_eq!(parse_size("1048576"), Ok(1 << 20));
        assert_eq!(parse_size("512M"), Ok(512 << 20));
        assert_eq!(parse_size("20GiB"), Ok(20 << 30));
        assert_eq!(parse_size("1.5k"), Ok(1536));
        assert!(parse_size("ten").is_err());
        assert!(parse_size("5X").is_err());
    }

    #[test]
    fn output_over_the_ratio_is_announced_and_refused_in_ci() {
        let at = Path::new("x.pak");
        let free = OutputBudget::default();
        assert!(free.check(64, 1, at).unwrap().is_none());
        assert!(free.check(65, 1, at).unwrap().is_some());
        let ci = OutputBudget {
            max: None,
            ci: true,
        };
        assert!(ci.check(65, 1, at).is_err());
        let allowed = OutputBudget {
            max: Some(100),
            ci: true,
        };
        assert!(allowed.check(65, 1, at).unwrap().is_some());
        assert!(allowed.check(101, 1, at).is_err());
    }

    #[test]
    fn a_declared_size_over_its_budget_is_refused() {
        assert!(check_declared("TOC", MAX_TOC_BYTES, MAX_TOC_BYTES, 1).is_ok());
        let e = check_declared("TOC", MAX_TOC_BYTES + 1, MAX_TOC_BYTES, 4096).unwrap_err();
        let text = e.to_string();
        assert!(text.contains(&(MAX_TOC_BYTES + 1).to_string()), "{text}");
        assert!(text.contains("4096"), "{text}");
    }
}
