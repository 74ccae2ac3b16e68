//! The one glob dialect of zenpak, used wherever a modder writes a pattern:
//! `[content] include`/`exclude`, `list`/`unpack`/`extract --filter`, and the
//! Marvel Rivals `unmounted-classes` and `[[marvel-rivals.mesh]] package`.
//!
//! * Case-insensitive: the engine's paths are (`FPaths`, `FName` compare
//!   ignoring case), and so is Windows, where the content is cooked.
//! * `*`, `?` and `[...]` stay within one folder; `**` crosses folders;
//!   `{a,b}` is either.
//! * A pattern without `/` matches a file name at any depth (`*.ini`), as
//!   `.gitignore` does; a pattern with `/` matches the whole path.
//! * A leading `/` in a pattern or a path is ignored, so `/Game/Maps/**`
//!   and `Game/Maps/**` are the same pattern, matched against `/Game/Maps/X`
//!   or `Game/Maps/X` alike.

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

use crate::error::{Error, Result};

/// A compiled list of patterns.
#[derive(Debug, Clone)]
pub struct Globs {
    set: GlobSet,
    len: usize,
}

impl Globs {
    /// Compiles `patterns`; `what` names where they come from
    /// (`` `[content] include` ``, `--filter`) in the error of a bad one.
    pub fn new(what: &str, patterns: &[String]) -> Result<Globs> {
        let mut builder = GlobSetBuilder::new();
        for pattern in patterns {
            builder.add(compile(pattern).map_err(|e| bad(what, pattern, e))?);
        }
        let set = builder
            .build()
            .map_err(|e| Error::usage(format!("{what}: {e}")))?;
        Ok(Globs {
            set,
            len: patterns.len(),
        })
    }

    /// Whether no pattern was given.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether any pattern matches `path`.
    pub fn is_match(&self, path: &str) -> bool {
        self.set.is_match(path.trim_start_matches('/'))
    }

    /// The indices of the patterns that match `path`.
    pub(crate) fn matches(&self, path: &str) -> Vec<usize> {
        self.set.matches(path.trim_start_matches('/'))
    }
}

/// Checks one pattern (for validating a manifest before anything is read):
/// the parser's message when it is not a valid glob.
pub(crate) fn check(pattern: &str) -> std::result::Result<(), String> {
    compile(pattern).map(|_| ()).map_err(|e| e.to_string())
}

fn compile(pattern: &str) -> std::result::Result<globset::Glob, globset::Error> {
    let pattern = pattern.trim_start_matches('/');
    let pattern = if pattern.contains('/') {
        pattern.to_string()
    } else {
        format!("**/{pattern}")
    };
    GlobBuilder::new(&pattern)
        .case_insensitive(true)
        .literal_separator(true)
        .build()
}

fn bad(what: &str, pattern: &str, e: globset::Error) -> Error {
    Error::usage(format!("{what}: `{pattern}` is not a valid glob: {e}"))
        .with_hint("`*` stays in one folder, `**` crosses folders, `{a,b}` is either; `/` between folders on every system")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn globs(patterns: &[&str]) -> Globs {
        let patterns: Vec<String> = patterns.iter().map(|p| p.to_string()).collect();
        Globs::new("test", &patterns).unwrap()
    }

    #[test]
    fn one_dialect() {
        let g = globs(&["Game/Content/Maps/**", "*.ini"]);
        assert!(g.is_match("Game/Content/Maps/A/B.uzenmap"));
        assert!(g.is_match("game/content/maps/x.ubulk"), "case-insensitive");
        assert!(g.is_match("/Game/Content/Maps/x"), "a leading / is ignored");
        assert!(
            g.is_match("Game/Config/DefaultGame.INI"),
            "no / : any depth"
        );
        assert!(g.is_match("DefaultGame.ini"));
        assert!(!g.is_match("Game/Content/Other/X.uzenasset"));
        let star = globs(&["/Game/*.txt"]);
        assert!(star.is_match("Game/a.txt"));
        assert!(star.is_match("/game/A.TXT"));
        assert!(!star.is_match("Game/sub/a.txt"), "* stays in a folder");
        assert_eq!(globs(&["a/*", "*.txt"]).matches("a/b.txt"), [0, 1]);
        assert!(globs(&[]).is_empty());
    }

    #[test]
    fn a_bad_pattern_is_a_usage_error_naming_it() {
        let e = Globs::new("--filter", &["[".into()]).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(check("[").is_err());
        assert!(check("Game/**/*.uasset").is_ok());
    }
}
