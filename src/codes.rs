//! Every diagnostic `code` zenpak prints, in one list. A code names one
//! finding (what the JSON consumer switches on); the list says what each
//! means. [`crate::diagnostic::Diagnostic`] checks (in debug builds) that
//! its code is here, a test scans the sources for codes given as literals,
//! and `docs/message-format.schema.json` lists the same names.

/// One code and what it means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Code {
    pub name: &'static str,
    pub summary: &'static str,
}

macro_rules! codes {
    ($($ident:ident = $name:literal: $summary:literal,)*) => {
        $(#[doc = $summary] pub const $ident: &str = $name;)*
        /// Every code, sorted by name.
        pub const ALL: &[Code] = &[$(Code { name: $name, summary: $summary },)*];
    };
}

codes! {
    APPROXIMATED = "approximated": "extract: a value was written as the nearest legacy equivalent",
    BUNDLE_CYCLE = "bundle-cycle": "verify: export bundles depend on each other in a cycle",
    BUSY = "busy": "another zenpak holds the output folder's lock",
    CACHE_DAMAGED = "cache-damaged": "a build cache entry did not read back; the package was converted again",
    CASE_CLASH = "case-clash": "two content paths differ only in case (the engine lowercases paths)",
    CLEAN_KEPT = "clean-kept": "clean left a file it did not write",
    COMPRESSION = "compression": "the manifest's compression setting is questionable",
    CONTAINER_HEADER_UNREADABLE = "container-header-unreadable": "doctor: a container's header chunk does not read",
    CONTAINER_WITHOUT_PAK = "container-without-pak": "a .utoc/.ucas has no companion .pak",
    DAMAGED_RECORD = "damaged-record": "an install record did not read",
    DECOMPRESS = "decompress": "a compressed block does not decompress",
    EMPTY_MOD = "empty-mod": "the mod has no packages and no files",
    ENGINE_CONTRADICTORY = "engine-contradictory": "doctor: the game's files name contradictory engine releases",
    ENGINE_FACT_UNKNOWN = "engine-fact-unknown": "doctor: a fact of the game's files that no known release writes",
    ENGINE_NOT_WRITTEN = "engine-not-written": "doctor --write: several engine releases fit, [game] engine left as it is",
    ENGINE_RANGE = "engine-range": "doctor: the game's files allow a range of engine releases",
    ENGINE_UNKNOWN = "engine-unknown": "doctor: no engine release could be told from the game's files",
    FOREIGN_PACKAGE = "foreign-package": "a package was cooked by another engine release than the mod's",
    FORMAT = "format": "a file's bytes do not match the format being read",
    GAME_DIR_ADJUSTED = "game-dir-adjusted": "the game folder given was taken as the game's root",
    GAME_SIGNED = "game-signed": "doctor: the game ships signatures",
    GLOB_BACKSLASH = "glob-backslash": "a manifest pattern uses backslashes",
    HASH_MISMATCH = "hash-mismatch": "data does not hash to the value recorded for it",
    INCLUDE_MATCHED_NOTHING = "include-matched-nothing": "an include pattern matched no file",
    INSTALL_KEPT = "install-kept": "install left a file it did not write",
    INSTALL_REPLACED = "install-replaced": "install --force replaced a file it did not own",
    INSTALL_WOULD_REFUSE = "install-would-refuse": "install would refuse to replace a file it does not own",
    INSTALL_WOULD_REPLACE = "install-would-replace": "install --dry-run --force would replace a file it does not own",
    INTERNAL = "internal": "a bug in zenpak",
    INTERRUPTED = "interrupted": "the user stopped the command",
    IO = "io": "reading or writing a file failed",
    JSON = "json": "encoding a report as JSON failed",
    KEY = "key": "encrypted data and no key, or a key that does not fit",
    LEFTOVER_TEMPORARY = "leftover-temporary": "a temporary file of an interrupted tool is in the content",
    LIMIT = "limit": "a declared size or count is over zenpak's limit",
    LOCKED = "locked": "doctor: a container is encrypted and no key opens it",
    MANY = "many": "several inputs failed",
    MOD_FORMAT_DIFFERS = "mod-format-differs": "doctor: the mod's format differs from the game's",
    MOUNT_POINT = "mount-point": "a pak's mount point differs from its container's",
    MUST_EXIST_IN_GAME = "must-exist-in-game": "check: the mod imports packages the game must have",
    NEVER_SHIP = "never-ship": "a file a mod must never contain",
    NO_CHUNK_HASH = "no-chunk-hash": "a chunk records no hash",
    NO_CONTAINER_HEADER = "no-container-header": "a container has no container header chunk",
    NO_GLOBAL_CONTAINER = "no-global-container": "doctor: the game has no global.utoc",
    NOT_OWNED = "not-owned": "a file zenpak would replace is not its own",
    PACKAGE_PATH_MISMATCH = "package-path-mismatch": "the package's name and its path disagree",
    PAK_VERSION_OLDER = "pak-version-older": "doctor: a pak version older than any release writes (newer engines still read it)",
    RENAMED_CONTAINER = "renamed-container": "a container was renamed after it was built",
    ROUND_TRIP = "round-trip": "extract: converting back does not give the same Zen package",
    SHADER_ASSET_INFO_MISSING = "shader-asset-info-missing": "a shader library has no asset info",
    SHADER_GROUPS_SPLIT = "shader-groups-split": "a shader library's groups are split",
    SHADER_LIBRARY_IN_PAK = "shader-library-in-pak": "a shader library is in the pak, not the container",
    SHADER_MAP = "shader-map": "a container's shader map does not read",
    SIGNED = "signed": "the container is flagged Signed",
    SKIPPED = "skipped": "extract skipped an entry",
    STRAY_FILE = "stray-file": "a file in the content that no package owns",
    SUFFIX = "suffix": "the manifest's suffix is questionable",
    SUGGESTED_EXCLUDE = "suggested-exclude": "check: exclude patterns that leave out never-ship files",
    TOC_UNREADABLE = "toc-unreadable": "doctor: a .utoc does not read",
    UNINSTALL_KEPT = "uninstall-kept": "uninstall left a file it did not write",
    UNMOUNTED_FILE = "unmounted-file": "a file the game will not mount",
    UNPADDED_BLOCKS = "unpadded-blocks": "a container's blocks are not padded",
    UNRESOLVED_IMPORT = "unresolved-import": "extract: an import was not found",
    UNSUPPORTED = "unsupported": "the input uses something zenpak does not handle",
    USAGE = "usage": "a bad argument or manifest value (exit code 2)",
    USMAP_SIZE_MISMATCH = "usmap-size-mismatch": "a .usmap's sizes disagree",
    VERSIONED_PACKAGE = "versioned-package": "a package carries its own engine version",
}

/// Whether `name` is a code of [`ALL`].
pub fn is_known(name: &str) -> bool {
    ALL.iter().any(|c| c.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_is_sorted_and_has_no_duplicates() {
        for pair in ALL.windows(2) {
            assert!(
                pair[0].name < pair[1].name,
                "{} before {}",
                pair[0].name,
                pair[1].name
            );
        }
    }

    /// Every code written as a literal where a diagnostic is made is in the list.
    #[test]
    fn every_literal_code_in_the_sources_is_listed() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let callers = [
            "Diagnostic::warning(",
            "Diagnostic::note(",
            "Diagnostic::error(",
            ".warning(",
            ".note(",
            ".warn(",
            "code: ",
        ];
        let mut unknown = Vec::new();
        let mut seen = 0;
        for entry in walkdir::WalkDir::new(&root) {
            let entry = entry.unwrap();
            if entry.path().extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let text = std::fs::read_to_string(entry.path()).unwrap();
            for caller in callers {
                for (at, _) in text.match_indices(caller) {
                    let rest = text[at + caller.len()..].trim_start();
                    let Some(rest) = rest.strip_prefix('"') else {
                        continue;
                    };
                    let Some(end) = rest.find('"') else { continue };
                    let code = &rest[..end];
                    if code.is_empty()
                        || !code
                            .chars()
                            .all(|c| c.is_ascii_lowercase() || c == '-' || c.is_ascii_digit())
                    {
                        continue;
                    }
                    seen += 1;
                    if !is_known(code) {
                        unknown.push(format!("{}: {code}", entry.path().display()));
                    }
                }
            }
        }
        assert!(seen > 30, "the scan found only {seen} codes");
        assert!(
            unknown.is_empty(),
            "codes missing from codes::ALL: {unknown:?}"
        );
    }

    /// Codes chosen before the call: `let code = if … { "a" } else { "b" };`,
    /// `let (code, verb) = match … { … => ("a", "…"), … };`.
    #[test]
    fn every_code_chosen_in_a_let_is_listed() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut unknown = Vec::new();
        for entry in walkdir::WalkDir::new(&root) {
            let entry = entry.unwrap();
            if entry.path().extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let text = std::fs::read_to_string(entry.path()).unwrap();
            for start in ["let code =", "let (code,"] {
                for (at, _) in text.match_indices(start) {
                    let statement = &text[at..];
                    let statement = &statement[..statement.find(';').unwrap_or(statement.len())];
                    let pieces: Vec<&str> = statement.split('"').collect();
                    // Odd pieces are literals; one compared against (`== "x"`) is no code.
                    for (i, literal) in pieces.iter().enumerate().skip(1).step_by(2) {
                        if pieces[i - 1].trim_end().ends_with("==") {
                            continue;
                        }
                        let kebab = !literal.is_empty()
                            && literal.contains('-')
                            && literal
                                .chars()
                                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
                        if kebab && !is_known(literal) {
                            unknown.push(format!("{}: {literal}", entry.path().display()));
                        }
                    }
                }
            }
        }
        assert!(
            unknown.is_empty(),
            "codes missing from codes::ALL: {unknown:?}"
        );
    }
}
