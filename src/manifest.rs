//! `mod.toml`, the mod manifest: its schema, defaults, validation (errors
//! carry line and column), and discovery by walking up from a folder, as
//! cargo finds `Cargo.toml`.
//!
//! Every key is documented in `mod.toml.example` at the top of the repo.

use std::path::{Path, PathBuf};

use serde::Deserialize;

pub use crate::compression::Compression;
use crate::error::{Error, Result};
use crate::version::EngineVersion;

/// The manifest's file name.
pub const MANIFEST_NAME: &str = "mod.toml";

/// A parsed, validated manifest. Paths in it are still as written; use
/// [`Manifest::content_root`] and friends for paths resolved against the
/// manifest's folder.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    #[serde(rename = "mod")]
    pub package: ModSection,
    pub game: GameSection,
    #[serde(default)]
    pub content: ContentSection,
    #[serde(default)]
    pub output: OutputSection,
    /// `[marvel-rivals]`: settings of the `marvel-rivals` profile (its module documents them).
    #[serde(default, rename = "marvel-rivals")]
    pub marvel_rivals: Option<crate::fixups::MarvelRivalsSection>,
    /// The folder holding `mod.toml`; every relative path is resolved against it.
    #[serde(skip)]
    pub dir: PathBuf,
}

/// `[mod]`: what the mod is called and who made it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModSection {
    /// Base name of the output files (`<name><suffix>.utoc`).
    pub name: String,
    pub version: String,
    #[serde(default)]
    pub authors: Vec<String>,
    #[serde(default)]
    pub description: String,
}

/// `[game]`: which game and engine the mod is for.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct GameSection {
    pub engine: EngineVersion,
    /// The game's project folder name (`<root>/<project>/Content/X` is `/Game/X`).
    pub project: String,
    /// Game fixups applied during conversion.
    #[serde(default = "default_profile")]
    pub profile: String,
    /// `.usmap` mappings for the game's classes (relative to the manifest).
    #[serde(default)]
    pub mappings: Option<PathBuf>,
    /// Mount point of the container and pak.
    #[serde(default = "default_mount_point")]
    pub mount_point: String,
}

/// `[content]`: where the cooked files are and which of them belong to the mod.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContentSection {
    #[serde(default = "default_root")]
    pub root: PathBuf,
    /// Globs (relative to `root`) of files to take; empty takes everything.
    #[serde(default)]
    pub include: Vec<String>,
    /// Globs (relative to `root`) of files to leave out.
    #[serde(default)]
    pub exclude: Vec<String>,
}

impl Default for ContentSection {
    fn default() -> Self {
        ContentSection {
            root: default_root(),
            include: Vec::new(),
            exclude: Vec::new(),
        }
    }
}

/// `[output]`: where and how the triplet is written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct OutputSection {
    #[serde(default = "default_output_dir")]
    pub dir: PathBuf,
    /// Put before the mod name, e.g. `"100-"` to sort the mod after others.
    #[serde(default)]
    pub prefix: String,
    /// Put after the mod name; `_P` makes the game mount it as a patch, above the base game.
    #[serde(default = "default_suffix")]
    pub suffix: String,
    #[serde(default)]
    pub compression: Compression,
    /// Encrypt the container and the pak index with AES-256. The key comes
    /// from `ZENPAK_AES_KEY` or `key-file`, never from the manifest.
    #[serde(default)]
    pub encrypt: bool,
    /// File holding the AES key (hex or base64), relative to the manifest.
    #[serde(default)]
    pub key_file: Option<PathBuf>,
}

impl Default for OutputSection {
    fn default() -> Self {
        OutputSection {
            dir: default_output_dir(),
            prefix: String::new(),
            suffix: default_suffix(),
            compression: Compression::None,
            encrypt: false,
            key_file: None,
        }
    }
}

fn default_profile() -> String {
    "generic".into()
}
fn default_mount_point() -> String {
    "../../../".into()
}
fn default_root() -> PathBuf {
    PathBuf::from("Cooked")
}
fn default_output_dir() -> PathBuf {
    PathBuf::from("target")
}
fn default_suffix() -> String {
    "_P".into()
}

impl Manifest {
    /// Parses manifest text; `path` is used in error messages and as the base folder.
    pub fn parse(text: &str, path: &Path) -> Result<Manifest> {
        let mut manifest: Manifest = toml::from_str(text).map_err(|e| {
            let location = e
                .span()
                .map(|span| {
                    let (line, column) = line_column(text, span.start);
                    format!(":{line}:{column}")
                })
                .unwrap_or_default();
            Error::usage(format!(
                "{}{location}: {}",
                path.display(),
                e.message().trim_end()
            ))
        })?;
        manifest.dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        manifest.validate(text, path)?;
        Ok(manifest)
    }

    /// Reads and parses the manifest at `path`.
    pub fn load(path: &Path) -> Result<Manifest> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::usage(format!("cannot read manifest {}: {e}", path.display())))?;
        Manifest::parse(&text, path)
    }

    /// Finds `mod.toml` in `start` or the nearest folder above it.
    pub fn find(start: &Path) -> Result<PathBuf> {
        let mut dir = Some(start);
        while let Some(d) = dir {
            let candidate = d.join(MANIFEST_NAME);
            if candidate.is_file() {
                return Ok(candidate);
            }
            dir = d.parent();
        }
        Err(Error::usage(format!(
            "could not find `{MANIFEST_NAME}` in `{}` or any parent folder; \
             run `zenpak new NAME` to start a mod, or pass --manifest-path",
            start.display()
        )))
    }

    fn validate(&self, text: &str, path: &Path) -> Result<()> {
        let bad = |key: &str, message: String| {
            let location = find_key(text, key)
                .map(|(l, c)| format!(":{l}:{c}"))
                .unwrap_or_default();
            Err(Error::usage(format!(
                "{}{location}: `{key}`: {message}",
                path.display()
            )))
        };
        if !is_file_name_safe(&self.package.name) {
            return bad(
                "name",
                format!(
                    "`{}` cannot be a file name; use letters, digits, `_`, `-` and `.`",
                    self.package.name
                ),
            );
        }
        if self.package.version.trim().is_empty() {
            return bad("version", "must not be empty".into());
        }
        if !is_file_name_safe(&self.game.project) {
            return bad(
                "project",
                format!(
                    "`{}` is not a project folder name (e.g. `MyGame`)",
                    self.game.project
                ),
            );
        }
        if let Err(e) = crate::fixups::Profile::from_name(&self.game.profile) {
            return bad("profile", e.to_string());
        }
        if let Some(section) = &self.marvel_rivals {
            section
                .validate()
                .map_err(|e| e.with_hint(format!("in {}", path.display())))?;
        }
        if !self.game.mount_point.ends_with('/') {
            return bad(
                "mount-point",
                format!("`{}` must end with `/`", self.game.mount_point),
            );
        }
        for (key, globs) in [
            ("include", &self.content.include),
            ("exclude", &self.content.exclude),
        ] {
            for glob in globs {
                if let Err(e) = globset::Glob::new(glob) {
                    return bad(key, format!("bad glob `{glob}`: {e}"));
                }
            }
        }
        for (key, value) in [
            ("prefix", &self.output.prefix),
            ("suffix", &self.output.suffix),
        ] {
            if !value.is_empty() && !is_file_name_safe(value) {
                return bad(key, format!("`{value}` cannot be part of a file name"));
            }
        }
        Ok(())
    }

    /// Base name of the three output files, e.g. `MyMod_P`.
    pub fn artifact_stem(&self) -> String {
        format!(
            "{}{}{}",
            self.output.prefix, self.package.name, self.output.suffix
        )
    }

    /// The cooked content root, resolved against the manifest's folder.
    pub fn content_root(&self) -> PathBuf {
        self.dir.join(&self.content.root)
    }

    /// The output folder, resolved against the manifest's folder.
    pub fn output_dir(&self) -> PathBuf {
        self.dir.join(&self.output.dir)
    }

    /// The mappings file, resolved against the manifest's folder.
    pub fn mappings_path(&self) -> Option<PathBuf> {
        self.game.mappings.as_ref().map(|m| self.dir.join(m))
    }

    /// The AES key file, resolved against the manifest's folder.
    pub fn key_file_path(&self) -> Option<PathBuf> {
        self.output.key_file.as_ref().map(|k| self.dir.join(k))
    }
}

fn is_file_name_safe(s: &str) -> bool {
    !s.is_empty()
        && s != "."
        && s != ".."
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

/// 1-based line and column of a byte offset.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

/// Line and column of the first `key =` in the text (for errors found after parsing).
fn find_key(text: &str, key: &str) -> Option<(usize, usize)> {
    for (index, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        if let Some(rest) = trimmed.strip_prefix(key) {
            if rest.trim_start().starts_with('=') {
                return Some((index + 1, line.len() - trimmed.len() + 1));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINIMAL: &str = r#"
[mod]
name = "MyMod"
version = "0.1.0"
[game]
engine = "5.6"
project = "MyGame"
[content]
root = "Cooked"
"#;

    #[test]
    fn minimal_manifest_has_the_documented_defaults() {
        let m = Manifest::parse(MINIMAL, Path::new("/x/mod.toml")).unwrap();
        assert_eq!(m.artifact_stem(), "MyMod_P");
        assert_eq!(m.game.engine, EngineVersion::UE5_6);
        assert_eq!(m.game.profile, "generic");
        assert_eq!(m.game.mount_point, "../../../");
        assert_eq!(m.output.compression, Compression::None);
        assert_eq!(m.output_dir(), Path::new("/x/target"));
        assert_eq!(m.content_root(), Path::new("/x/Cooked"));
    }

    #[test]
    fn unknown_key_names_line_and_column() {
        let text = MINIMAL.replace("version = \"0.1.0\"", "version = \"0.1.0\"\nnmae = \"x\"");
        let e = Manifest::parse(&text, Path::new("mod.toml"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("mod.toml:5:1"), "{e}");
        assert!(e.contains("nmae"), "{e}");
    }

    #[test]
    fn bad_engine_names_line_and_supported_versions() {
        let text = MINIMAL.replace("5.6", "5.9");
        let e = Manifest::parse(&text, Path::new("mod.toml"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("mod.toml:6:"), "{e}");
        assert!(e.contains("5.7"), "{e}");
    }

    #[test]
    fn bad_values_after_parsing_name_their_key() {
        let text = MINIMAL.replace("\"MyMod\"", "\"My Mod/..\"");
        let e = Manifest::parse(&text, Path::new("mod.toml"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("mod.toml:3:1: `name`"), "{e}");
        let text = format!("{MINIMAL}[output]\ncompression = \"brotli\"\n");
        let e = Manifest::parse(&text, Path::new("mod.toml"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("mod.toml:11:"), "{e}");
    }
}

#[cfg(test)]
mod example_tests {
    use super::*;

    /// `mod.toml.example` documents every key; it must stay a valid manifest.
    #[test]
    fn the_documented_example_parses() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("mod.toml.example");
        let m = Manifest::load(&path).unwrap();
        assert_eq!(m.artifact_stem(), "MyMod_P");
        assert_eq!(m.content.include.len(), 2);
    }
}
