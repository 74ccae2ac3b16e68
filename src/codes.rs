//! Every diagnostic `code` zenpak prints, in one list. A code names one
//! finding (what the JSON consumer switches on); the list says what each
//! means. [`crate::diagnostic::Diagnostic`] checks (in debug builds) that
//! its code is here, a test scans the sources for codes given as literals,
//! and `docs/message-format.schema.json` lists the same names.

/// One code and what it means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Code {
    pub name: &'static str,
    pub(crate) summary: &'static str,
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
    BLUEPRINT_MOD_NOT_IN_LOGICMODS = "blueprint-mod-not-in-logicmods": "check --game-dir: a blueprint mod (ModActor) is not installed into `LogicMods`",
    BUNDLE_CYCLE = "bundle-cycle": "verify: export bundles depend on each other in a cycle",
    BUSY = "busy": "another zenpak holds the output folder's lock",
    CACHE_DAMAGED = "cache-damaged": "a build cache entry did not read back; the package was converted again",
    CASE_CLASH = "case-clash": "two content paths differ only in case (the engine lowercases paths)",
    CHANGES_NOT_COMPARED = "changes-not-compared": "conflicts: packages several mods change were not compared with the game's copy (no engine given)",
    CLEAN_KEPT = "clean-kept": "clean left a file it did not write",
    COMPANION_PAK_MISSING = "companion-pak-missing": "an installed mod's container has no companion .pak",
    COMPRESSION = "compression": "the manifest's compression setting is questionable",
    CONTAINER_HEADER_UNREADABLE = "container-header-unreadable": "doctor: a container's header chunk does not read",
    CONTAINER_WITHOUT_PAK = "container-without-pak": "a .utoc/.ucas has no companion .pak",
    DAMAGED_RECORD = "damaged-record": "an install record did not read",
    DECOMPRESS = "decompress": "a compressed block does not decompress",
    DISK_FULL = "disk-full": "the disk is full",
    EMPTY_MOD = "empty-mod": "the mod has no packages and no files",
    ENGINE_CONTRADICTORY = "engine-contradictory": "doctor: the game's files name contradictory engine releases",
    ENGINE_FACT_UNKNOWN = "engine-fact-unknown": "doctor: a fact of the game's files that no known release writes",
    ENGINE_NOT_WRITTEN = "engine-not-written": "doctor --write: several engine releases fit, `[game] engine` left as it is",
    ENGINE_RANGE = "engine-range": "doctor: the game's files allow a range of engine releases",
    ENGINE_UNKNOWN = "engine-unknown": "doctor: no engine release could be told from the game's files",
    ENTRY_NAME_UNREACHABLE = "entry-name-unreachable": "a pak entry or container path is empty, absolute or has an empty, `.` or `..` component: no path the game looks up names it",
    EXPORT_DOES_NOT_DECODE = "export-does-not-decode": "check --game-dir: an export of the mod's package does not decode with the game's current mappings (a struct it uses changed)",
    EXPORTS_NOT_RECHECKED = "exports-not-rechecked": "check --game-dir: exports of the mod not checked against the game's mappings (no mappings given, or a layout the codec cannot read)",
    FILE_IN_USE = "file-in-use": "another program holds a file zenpak must replace (e.g. the running game)",
    FILE_TOO_LARGE = "file-too-large": "a file zenpak writes would be larger than the system allows (a file-size limit, or the file system's largest file)",
    FOREIGN_PACKAGE = "foreign-package": "a package was cooked by another engine release than the mod's",
    FORMAT = "format": "a file's bytes do not match the format being read",
    GAME_COMPRESSION_UNSUPPORTED = "game-compression-unsupported": "check --game-dir: the mod's compression is one the game cannot read",
    GAME_COMPRESSION_UNUSED = "game-compression-unused": "check --game-dir: the mod's compression is not among the game's",
    GAME_DIR_ADJUSTED = "game-dir-adjusted": "the game folder given was taken as the game's root",
    GAME_ENGINE_DIFFERS = "game-engine-differs": "check --game-dir: the mod's `[game] engine` is not among the releases the game allows",
    GAME_ENGINE_UNKNOWN = "game-engine-unknown": "check --game-dir: the game's files do not tell its engine release",
    GAME_PACKAGE_IN_SEVERAL_CONTAINERS = "game-package-in-several-containers": "check --game-dir: the game has the overridden package in several containers",
    GAME_SIGNED = "game-signed": "doctor: the game ships signatures",
    GAME_WITHOUT_SCRIPT_OBJECTS = "game-without-script-objects": "check --game-dir: the game has no global.utoc script objects; script imports are not checked",
    GLOB_BACKSLASH = "glob-backslash": "a manifest pattern uses backslashes",
    HASH_MISMATCH = "hash-mismatch": "data does not hash to the value recorded for it",
    INCLUDE_MATCHED_NOTHING = "include-matched-nothing": "an include pattern matched no file",
    INPUT_CHANGED = "input-changed": "an input file changed while the build read it (build again once whatever writes it is done)",
    INSTALL_KEPT = "install-kept": "install left a file it did not write",
    INSTALL_REPLACED = "install-replaced": "install --force replaced a file it did not own",
    INSTALL_WOULD_REFUSE = "install-would-refuse": "install would refuse to replace a file it does not own",
    INSTALL_WOULD_REPLACE = "install-would-replace": "install --dry-run --force would replace a file it does not own",
    INTERNAL = "internal": "a bug in zenpak",
    INTERRUPTED = "interrupted": "the user stopped the command",
    IO = "io": "reading or writing a file failed",
    JSON = "json": "encoding a report as JSON failed",
    KEY = "key": "encrypted data and no key, or a key that does not fit",
    LARGE_OUTPUT = "large-output": "unpack/extract/get: what will be written is more than 64 times the size of what is read",
    LEFTOVER_TEMPORARY = "leftover-temporary": "a temporary file of an interrupted tool is in the content",
    LFS_POINTER = "lfs-pointer": "a content file is a Git LFS pointer, not the file (run git lfs pull)",
    LIMIT = "limit": "a declared size or count is over zenpak's limit",
    LINK_OUTSIDE_GAME = "link-outside-game": "game readers: containers or folders of the game are links to places outside it (read through the links)",
    LOCKED = "locked": "doctor: a container is encrypted and no key opens it",
    LOGICMODS_WITHOUT_MODACTOR = "logicmods-without-modactor": "check --game-dir: a copy in LogicMods has no ModActor",
    MANY = "many": "several inputs failed",
    MAPPINGS_MISMATCH = "mappings-mismatch": "to-json: mappings were given and not one export of the package decodes with them (another game's .usmap?)",
    MERGE_OVERLAP = "merge-overlap": "merge: two mods change one path, row or file differently (an error; with --later-wins a warning, the later mod wins)",
    MERGED_REPLACES = "merged-replaces": "merge: the merged mod is installed instead of the mods it merges",
    MOD_ACTOR_NAME_MISMATCH = "mod-actor-name-mismatch": "check --game-dir: the ModActor's folder is not named like the mod's pak",
    MOD_ACTOR_OUTSIDE_MODS_FOLDER = "mod-actor-outside-mods-folder": "check --game-dir: the ModActor is not under `/Game/Mods/<Name>/`",
    MOD_FORMAT_DIFFERS = "mod-format-differs": "doctor: the mod's format differs from the game's",
    MOD_INSIDE_GAME = "mod-inside-game": "the mod (or its output) is inside a game's Paks folder",
    MOD_INSTALLED = "mod-installed": "conflicts: the installed copy of this mod stands for its build",
    MOD_NOT_BUILT = "mod-not-built": "conflicts: the mod in this folder has not been built yet",
    MOD_TOC_UNREADABLE = "mod-toc-unreadable": "the mount-order checks could not read a mod's .utoc",
    MORE_OF_KIND = "more-of-kind": "how many more findings of one kind there were than are shown",
    MOUNT_ORDER_UNCHECKED = "mount-order-unchecked": "check --game-dir/install: the mount order could not be checked",
    MOUNT_POINT = "mount-point": "a pak's mount point differs from its container's",
    MUST_EXIST_IN_GAME = "must-exist-in-game": "check: the mod imports packages the game must have",
    NEVER_SHIP = "never-ship": "a file a mod must never contain",
    NO_CHUNK_HASH = "no-chunk-hash": "a chunk records no hash",
    NO_CONTAINER_HEADER = "no-container-header": "a container has no container header chunk",
    NO_GLOBAL_CONTAINER = "no-global-container": "doctor: the game has no global.utoc",
    NO_MAPPINGS = "no-mappings": "to-json: a package with unversioned properties and no mappings: its exports are kept as bytes",
    NOT_OWNED = "not-owned": "a file zenpak would replace is not its own",
    ON_DEMAND_NOT_WRITTEN = "on-demand-not-written": "unpack: a chunk of an on-demand container is not in the local .ucas, so it was not written",
    ON_DEMAND_REMOTE = "on-demand-remote": "verify: chunks of an on-demand container are remote (not in the local .ucas) and were not checked",
    OPAQUE_EXPORTS = "opaque-exports": "to-json: exports whose data is kept as bytes in the document, with the first reason",
    ORDER_BELOW_GAME_PATCH = "order-below-game-patch": "the mod's pak suffix does not sort above the game's own patch containers",
    OVERRIDE_CLASS_DIFFERS = "override-class-differs": "check --game-dir: an override's main export has another class than the game's object",
    OVERRIDE_NOT_LOADED = "override-not-loaded": "install/check --game-dir: another source wins some or all of the mod's overrides; the `_N_P` rename that fixes it",
    OVERRIDES_GAME_FILE = "overrides-game-file": "check --game-dir: a loose file replaces one of the game's pak files",
    OVERRIDES_GAME_PACKAGE = "overrides-game-package": "check --game-dir: the mod replaces a game package",
    PACKAGE_PATH_MISMATCH = "package-path-mismatch": "the package's name and its path disagree",
    PAK_PATH_TWICE = "pak-path-twice": "a pak's index lists one path twice; the engine reads the last one listed",
    PAK_VERSION_OLDER = "pak-version-older": "doctor: a pak version older than any release writes (newer engines still read it)",
    PATCH_BASE_OUTDATED = "patch-base-outdated": "build: the game's copy of a patched asset differs from the vendored base (the game was updated); `patch vendor` refreshes it",
    PATCH_BASES_DIFFER = "patch-bases-differ": "build: patches of one asset name different bases; all apply to the first one's",
    PATCH_OVERRIDDEN = "patch-overridden": "build: two patch files set one path of one asset to different values; the later file wins (`[patches] later-wins`)",
    PERMISSION_DENIED = "permission-denied": "the system refused access to a file zenpak needs (its user may not read or write it)",
    READ_ONLY = "read-only": "a file or folder zenpak must write is read-only",
    RENAMED_CONTAINER = "renamed-container": "a container was renamed after it was built",
    ROUND_TRIP = "round-trip": "extract: converting back does not give the same Zen package",
    SAME_CONTAINER_ID = "same-container-id": "install/check/doctor/conflicts: two containers have one container id (the engine treats them as one)",
    SAME_STEM = "same-stem": "install/check: another installed mod has the same file stem (the engine treats them as one)",
    SCHEMA_NOT_FOUND = "schema-not-found": "to-json/from-json: a class or struct the package uses is defined in a content package that was not found or not read (beside the package, --schemas, the game); what needs it is kept as bytes",
    SHADER_ASSET_INFO_MISSING = "shader-asset-info-missing": "a shader library has no asset info",
    SHADER_GROUPS_SPLIT = "shader-groups-split": "a shader library's groups are split",
    SHADER_LIBRARY_IN_PAK = "shader-library-in-pak": "a shader library is in the pak, not the container",
    SHADER_MAP = "shader-map": "a container's shader map does not read",
    SIGNED = "signed": "the container is flagged Signed",
    SKIPPED = "skipped": "extract skipped an entry",
    SOURCE_UNREADABLE = "source-unreadable": "game readers: a pak or container of the game does not read; it is left out and the rest is read",
    STALE_COMPANION = "stale-companion": "from-json: a bulk file beside the written package that the package does not have",
    STRAY_FILE = "stray-file": "a file in the content that no package owns",
    SUFFIX = "suffix": "the manifest's suffix is questionable",
    SUGGESTED_EXCLUDE = "suggested-exclude": "check: exclude patterns that leave out never-ship files",
    TABLE_NOT_DECODED = "table-not-decoded": "to-json: a DataTable's rows, a StringTable's table or an enum's entries are kept as bytes, with the reason",
    TOC_UNREADABLE = "toc-unreadable": "doctor: a .utoc does not read",
    UEXP_MISMATCH = "uexp-mismatch": "a package's .uexp is not the one its header was cooked with (another cook's)",
    UNINSTALL_KEPT = "uninstall-kept": "uninstall left a file it did not write",
    UNKNOWN_OBJECT = "unknown-object": "an edited document refers to an object the package neither imports nor exports",
    UNMOUNTED_FILE = "unmounted-file": "a file the game will not mount",
    UNPADDED_BLOCKS = "unpadded-blocks": "a container's blocks are not padded",
    UNRESOLVED_IMPORT = "unresolved-import": "extract: an import was not found",
    UNSAFE_OUTPUT = "unsafe-output": "a file zenpak would write or lock is a link, a hard link or not a regular file it made; nothing was written through it",
    UNSUPPORTED = "unsupported": "the input uses something zenpak does not handle",
    USAGE = "usage": "a bad argument or manifest value (exit code 2)",
    USMAP_SIZE_MISMATCH = "usmap-size-mismatch": "a .usmap's sizes disagree",
    VERSIONED_PACKAGE = "versioned-package": "a package carries its own engine version",
    ZEN_PACKAGE = "zen-package": "get: the file is a Zen package; extract gives legacy .uasset/.uexp",
    ZEN_STORE_COOK = "zen-store-cook": "the content root is empty because the project cooks into the Zen Store (bUseZenStore)",
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
