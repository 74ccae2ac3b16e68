//! `mod.toml`, the mod manifest: its schema, defaults, validation (errors
//! carry the file, line and column, and a "did you mean" for unknown keys
//! and values), and discovery by walking up from a folder, as cargo finds
//! `Cargo.toml`.
//!
//! Values that become file names (the mod's name, version, prefix, suffix)
//! are checked to be one safe file-name component each: a manifest is data,
//! and nothing in it may make zenpak write outside its output folder.
//!
//! Every key is documented in `mod.toml.example` at the top of the repo.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use crate::compression::Compression;
use crate::diagnostic::Diagnostic;
use crate::error::{Error, Result};
use crate::version::EngineVersion;

/// Extensions of the three files of a built mod, in the order they are listed.
pub(crate) const ARTIFACT_EXTENSIONS: [&str; 3] = ["utoc", "ucas", "pak"];

/// The manifest's file name.
pub(crate) const MANIFEST_NAME: &str = "mod.toml";

/// A parsed, validated manifest. Paths in it are still as written; use
/// [`Manifest::content_root`] and friends for paths resolved against the
/// manifest's folder.
// Not `deny_unknown_fields` (serde cannot with a flattened map):
// `check_known_keys` refuses unknown tables and keys before this parse.
#[derive(Debug, Clone, Deserialize)]
pub struct Manifest {
    #[serde(rename = "mod")]
    pub package: ModSection,
    pub game: GameSection,
    #[serde(default)]
    pub content: ContentSection,
    #[serde(default)]
    pub(crate) output: OutputSection,
    #[serde(default)]
    pub(crate) release: Option<ReleaseSection>,
    #[serde(default)]
    pub patches: PatchesSection,
    /// The game profiles' tables (`[marvel-rivals]`), each read by its
    /// profile; `check_known_keys` lets only registered profiles' tables through.
    #[serde(flatten)]
    pub(crate) profile_tables: std::collections::BTreeMap<String, toml::Value>,
    /// The folder holding `mod.toml`; every relative path is resolved against it.
    #[serde(skip)]
    pub(crate) dir: PathBuf,
    /// The manifest file itself.
    #[serde(skip)]
    pub(crate) path: PathBuf,
}

/// Every key the manifest's own tables know (for unknown-key suggestions);
/// each game profile's table and keys come from the profile
/// (`GameProfile::settings_keys`).
const KNOWN_KEYS: [(&str, &[&str]); 6] = [
    (
        "release",
        &[
            "icon",
            "changelog",
            "readme",
            "nexus",
            "modio",
            "thunderstore",
        ],
    ),
    ("mod", &["name", "version", "authors", "description"]),
    ("patches", &["dir", "later-wins"]),
    (
        "game",
        &["engine", "project", "profile", "mappings", "mount-point"],
    ),
    (
        "content",
        &["root", "include", "exclude", "paks", "follow-links"],
    ),
    (
        "output",
        &[
            "dir",
            "prefix",
            "suffix",
            "compression",
            "encrypt",
            "key-file",
        ],
    ),
];

/// `[release]`: what the platforms players download from need besides
/// `[mod]` (`zenpak package --for`, `crate::platform`).
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(crate) struct ReleaseSection {
    /// A 256×256 PNG (Thunderstore), relative to the manifest.
    pub(crate) icon: Option<PathBuf>,
    /// The changelog shipped with the release, relative to the manifest.
    pub(crate) changelog: Option<PathBuf>,
    /// The README shipped to Thunderstore (default: the mod's `README.md`).
    pub(crate) readme: Option<PathBuf>,
    pub(crate) nexus: Option<NexusSection>,
    pub(crate) modio: Option<ModioSection>,
    pub(crate) thunderstore: Option<ThunderstoreSection>,
}

impl ReleaseSection {
    /// The files `[release]` names, with their keys.
    pub(crate) fn files(&self) -> [(&'static str, Option<&Path>); 3] {
        [
            ("icon", self.icon.as_deref()),
            ("changelog", self.changelog.as_deref()),
            ("readme", self.readme.as_deref()),
        ]
    }

    fn files_mut(&mut self) -> [Option<&mut PathBuf>; 3] {
        [
            self.icon.as_mut(),
            self.changelog.as_mut(),
            self.readme.as_mut(),
        ]
    }
}

/// `[release] nexus = { game = "…", mod-id = N, file-group = N }`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(crate) struct NexusSection {
    /// The game's domain name on Nexus Mods (`marvelrivals`).
    pub(crate) game: String,
    pub(crate) mod_id: u64,
    pub(crate) file_group: u64,
}

/// `[release] modio = { game-id = N, mod-id = N }`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(crate) struct ModioSection {
    pub(crate) game_id: u64,
    pub(crate) mod_id: u64,
}

/// `[release] thunderstore = { namespace = "…", website = "…", dependencies = [...] }`.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(crate) struct ThunderstoreSection {
    /// The team the package is uploaded under.
    pub(crate) namespace: String,
    #[serde(default)]
    pub(crate) website: String,
    #[serde(default)]
    pub(crate) dependencies: Vec<String>,
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
    pub(crate) description: String,
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
    pub(crate) mappings: Option<PathBuf>,
    /// Mount point of the container and pak.
    #[serde(default = "default_mount_point")]
    pub(crate) mount_point: String,
}

/// `[patches]`: text patches to the game's data, applied at build
/// ([`crate::patch`]).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct PatchesSection {
    /// The folder of patch files (`**/*.toml`), relative to the manifest.
    #[serde(default = "default_patches_dir")]
    pub(crate) dir: PathBuf,
    /// Two patch files that set one path to different values: the later
    /// one (by file path) wins with a warning, instead of an error.
    #[serde(default)]
    pub later_wins: bool,
}

impl Default for PatchesSection {
    fn default() -> Self {
        PatchesSection {
            dir: default_patches_dir(),
            later_wins: false,
        }
    }
}

fn default_patches_dir() -> PathBuf {
    PathBuf::from("patches")
}

/// `[content]`: where the cooked files are and which of them belong to the mod.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContentSection {
    #[serde(default = "default_root")]
    pub(crate) root: PathBuf,
    /// Globs (relative to `root`) of files to take; empty takes everything.
    #[serde(default)]
    pub include: Vec<String>,
    /// Globs (relative to `root`) of files to leave out.
    #[serde(default)]
    pub exclude: Vec<String>,
    /// Legacy `.pak` files (relative to the manifest's folder) whose
    /// packages are converted and whose other files go into the companion
    /// pak, as if they were cooked content under `root`.
    #[serde(default)]
    pub(crate) paks: Vec<PathBuf>,
    /// Whether a symbolic link inside `root` may point outside it (what it
    /// points to is then packed). Off, such a link is an error: a cloned
    /// mod must not pack a file from elsewhere on the machine. `root`
    /// itself may always be a link.
    #[serde(default, rename = "follow-links")]
    pub follow_links: bool,
}

impl Default for ContentSection {
    fn default() -> Self {
        ContentSection {
            root: default_root(),
            include: Vec::new(),
            exclude: Vec::new(),
            paks: Vec::new(),
            follow_links: false,
        }
    }
}

/// `[output]`: where and how the triplet is written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(crate) struct OutputSection {
    #[serde(default = "default_output_dir")]
    pub(crate) dir: PathBuf,
    /// Put before the mod name, e.g. `"100-"` to sort the mod after others.
    #[serde(default)]
    pub(crate) prefix: String,
    /// Put after the mod name; `_P` makes the game mount it as a patch, above the base game.
    #[serde(default = "default_suffix")]
    pub(crate) suffix: String,
    #[serde(default)]
    pub(crate) compression: Compression,
    /// Encrypt the container and the pak index with AES-256. The key comes
    /// from `ZENPAK_AES_KEY` or `key-file`, never from the manifest.
    #[serde(default)]
    pub(crate) encrypt: bool,
    /// File holding the AES key (hex or base64), relative to the manifest.
    #[serde(default)]
    pub(crate) key_file: Option<PathBuf>,
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
        check_known_keys(text, path)?;
        let mut manifest: Manifest = toml::from_str(text).map_err(|e| {
            let at = e.span().map(|span| line_column(text, span.start));
            if let Some((line, column)) = at.and_then(|(line, _)| bad_backslash(text, line)) {
                return Error::usage(
                    "a `\\` in a double-quoted string starts an escape, so this path does not read",
                )
                .in_file(path)
                .at_line(line, column)
                .with_hint(
                    "write paths with `/` on every system (\"./Cooked\"), or in single quotes ('.\\Cooked'), which take `\\` as it is",
                );
            }
            let error = Error::usage(e.message().trim_end()).in_file(path);
            match at {
                Some((line, column)) => error.at_line(line, column),
                None => error,
            }
        })?;
        manifest.normalise_separators();
        manifest.dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        manifest.path = path.to_path_buf();
        manifest.validate(text, path)?;
        Ok(manifest)
    }

    /// Paths and globs written with Windows' `\` (`'.\Cooked'`,
    /// `".\\Cooked"`) mean what they mean on Windows, on every system: `\`
    /// becomes `/` (which Windows takes too), so a manifest written on
    /// Windows builds the same in CI.
    fn normalise_separators(&mut self) {
        fn path(p: &mut PathBuf) {
            if let Some(text) = p.to_str().filter(|t| t.contains('\\')) {
                *p = PathBuf::from(text.replace('\\', "/"));
            }
        }
        path(&mut self.content.root);
        self.content.paks.iter_mut().for_each(path);
        path(&mut self.output.dir);
        path(&mut self.patches.dir);
        if let Some(p) = &mut self.game.mappings {
            path(p);
        }
        if let Some(p) = &mut self.output.key_file {
            path(p);
        }
        if let Some(release) = &mut self.release {
            for p in release.files_mut().into_iter().flatten() {
                path(p);
            }
        }
        for glob in self
            .content
            .include
            .iter_mut()
            .chain(self.content.exclude.iter_mut())
        {
            if glob.contains('\\') {
                *glob = glob.replace('\\', "/");
            }
        }
    }

    /// Reads and parses the manifest at `path`.
    pub fn load(path: &Path) -> Result<Manifest> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            Error::usage(format!("cannot read the manifest: {e}"))
                .in_file(path)
                .with_hint("run `zenpak new NAME` to start a mod, or pass --manifest-path")
        })?;
        Manifest::parse(&text, path)
    }

    /// The manifest file.
    pub fn manifest_path(&self) -> &Path {
        &self.path
    }

    /// Everything about the manifest itself that a build checks before it
    /// converts anything: where the output goes and whether zenpak can write
    /// `[output] compression`. `build`, `package`, `install` and `check` all
    /// call this one function, so they accept and refuse the same manifests.
    pub(crate) fn check_buildable(&self) -> Result<()> {
        self.check_output_location()?;
        self.output
            .compression
            .check_writable()
            .map_err(|e| e.in_file(&self.path).within("[output] compression"))
    }

    /// Refuses an output folder that would mix zenpak's files with the
    /// user's: the mod's own folder (it holds the manifest), the content
    /// root, or a folder inside the content root (the next build would pack
    /// the previous one's output).
    pub(crate) fn check_output_location(&self) -> Result<()> {
        let output = normalize(&self.output_dir());
        let mod_root = normalize(&self.dir);
        let content = normalize(&self.content_root());
        let refuse = |why: String| {
            Err(Error::usage(why)
                .in_file(&self.path)
                .with_hint("set `[output] dir` to a folder of its own, such as \"target\""))
        };
        if output == mod_root {
            return refuse(format!(
                "`[output] dir` is the mod's own folder ({}); zenpak writes and cleans its output there",
                output.display()
            ));
        }
        if output.starts_with(&content) {
            return refuse(format!(
                "`[output] dir` ({}) is inside `[content] root` ({}); the next build would pack the previous one",
                output.display(),
                content.display()
            ));
        }
        Ok(())
    }

    /// What in the manifest builds but is probably not what the modder wants.
    pub(crate) fn warnings(&self) -> Vec<Diagnostic> {
        let mut out = Vec::new();
        let stem = self.artifact_stem();
        // The engine raises the mount order of paks whose name ends with `_P`
        // (`FPakPlatformFile::Mount`: `EndsWith(TEXT("_P.pak"))`, which ignores case).
        if !stem.to_ascii_lowercase().ends_with("_p") {
            out.push(
                Diagnostic::warning(
                    "suffix",
                    format!(
                        "`{stem}.pak` does not end with `_P`: the game mounts it below its own paks, so the mod's files lose to the game's"
                    ),
                )
                .with_file(&self.path)
                .with_hint("set `[output] suffix = \"_P\"` (or e.g. \"_9_P\" to order several mods)"),
            );
        }
        if self.output.compression == Compression::Zstd {
            out.push(
                Diagnostic::warning(
                    "compression",
                    "`[output] compression = \"zstd\"`: a stock engine cannot decompress zstd (it ships zlib, gzip, LZ4 and Oodle)",
                )
                .with_file(&self.path)
                .with_hint("use \"zlib\", \"lz4\" or \"none\" unless the game is known to ship a zstd codec"),
            );
        }
        for pattern in self.content.include.iter().chain(&self.content.exclude) {
            if pattern.contains('\\') {
                out.push(
                    Diagnostic::warning(
                        "glob-backslash",
                        format!("pattern `{pattern}` uses `\\`; patterns separate folders with `/` on every system"),
                    )
                    .with_file(&self.path),
                );
            }
        }
        out
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
            let error = Error::usage(format!("`{key}`: {message}")).in_file(path);
            Err(match find_key(text, key) {
                Some((line, column)) => error.at_line(line, column),
                None => error,
            })
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
        if !is_file_name_safe(&self.package.version) {
            return bad(
                "version",
                format!(
                    "`{}` cannot be part of a file name; use letters, digits, `.`, `-`, `_` (e.g. \"1.2.0\")",
                    self.package.version
                ),
            );
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
            let known: Vec<&str> = crate::fixups::Profile::all().map(|p| p.name()).collect();
            let error = bad("profile", e.message());
            return match did_you_mean(&self.game.profile, &known) {
                Some(name) => error.map_err(|e| e.with_hint(format!("did you mean `{name}`?"))),
                None => error,
            };
        }
        let options = self.profile_options();
        for profile in crate::fixups::Profile::all() {
            if options.table(profile.name()).is_some() {
                profile.validate(&options).map_err(|e| {
                    let e = e.in_file(path);
                    match find_table(text, profile.name()) {
                        Some((line, column)) => e.at_line(line, column),
                        None => e,
                    }
                })?;
            }
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
                if let Err(e) = crate::glob::check(glob) {
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
        if !is_inside_path(&self.patches.dir) {
            let error = Error::usage(format!(
                "`dir`: `{}` is not a folder inside the mod's folder (absolute, or climbing out with `..`); patches are part of the mod",
                self.patches.dir.display()
            ))
            .in_file(path)
            .with_hint("name the folder relative to mod.toml (`dir = \"patches\"`)");
            return Err(match find_key_in_table(text, "patches", "dir") {
                Some((line, column)) => error.at_line(line, column),
                None => error,
            });
        }
        if let Some(release) = &self.release {
            for (key, file) in release.files() {
                if let Some(file) = file.filter(|f| !is_inside_path(f)) {
                    return bad(
                        key,
                        format!(
                            "`{}` is not a path inside the mod's folder (absolute, or climbing out with `..`); a release ships only the mod's own files",
                            file.display()
                        ),
                    )
                    .map_err(|e| e.with_hint("copy the file next to mod.toml and name it relative to it (`changelog = \"CHANGELOG.md\"`)"));
                }
            }
        }
        Ok(())
    }

    /// Base name of the three output files, e.g. `MyMod_P`: the game
    /// profile's naming (Marvel Rivals sorts mods above its patches with
    /// `_9999999_P`), else [`plain_artifact_stem`](Self::plain_artifact_stem).
    pub fn artifact_stem(&self) -> String {
        match crate::fixups::Profile::from_name(&self.game.profile) {
            Ok(profile) => profile.artifact_stem(&self.profile_options(), &self.artifact_name()),
            Err(_) => self.plain_artifact_stem(),
        }
    }

    /// `<prefix><name><suffix>` as the manifest writes them.
    pub(crate) fn plain_artifact_stem(&self) -> String {
        self.artifact_name().plain()
    }

    /// The three output files of the build, in [`ARTIFACT_EXTENSIONS`] order.
    pub fn artifact_paths(&self) -> [PathBuf; 3] {
        let dir = self.output_dir();
        let stem = self.artifact_stem();
        ARTIFACT_EXTENSIONS.map(|ext| crate::iostore::container_file(&dir, &stem, ext))
    }

    /// The parts of the output files' base name.
    pub fn artifact_name(&self) -> crate::fixups::ArtifactName<'_> {
        crate::fixups::ArtifactName {
            prefix: &self.output.prefix,
            name: &self.package.name,
            suffix: &self.output.suffix,
        }
    }

    /// The game profiles' settings (tables such as `[marvel-rivals]`).
    pub fn profile_options(&self) -> crate::fixups::ProfileOptions {
        self.profile_tables.iter().fold(
            crate::fixups::ProfileOptions::default(),
            |o, (name, table)| o.with_table(name, table.clone()),
        )
    }

    /// A usage error about `key` of this manifest, at its line when the
    /// file still says it (for checks made after loading).
    pub(crate) fn key_error(&self, key: &str, message: String) -> Error {
        let error = Error::usage(format!("`{key}`: {message}")).in_file(&self.path);
        let at = std::fs::read_to_string(&self.path)
            .ok()
            .and_then(|text| find_key(&text, key));
        match at {
            Some((line, column)) => error.at_line(line, column),
            None => error,
        }
    }

    /// The cooked content root, resolved against the manifest's folder.
    pub fn content_root(&self) -> PathBuf {
        self.dir.join(&self.content.root)
    }

    /// `[content] paks`, resolved against the manifest's folder.
    pub fn content_paks(&self) -> Vec<PathBuf> {
        self.content.paks.iter().map(|p| self.dir.join(p)).collect()
    }

    /// The output folder, resolved against the manifest's folder.
    pub fn output_dir(&self) -> PathBuf {
        self.dir.join(&self.output.dir)
    }

    /// The mappings file, resolved against the manifest's folder.
    pub fn mappings_path(&self) -> Option<PathBuf> {
        self.game.mappings.as_ref().map(|m| self.dir.join(m))
    }

    /// The patch files' folder (`[patches] dir`), resolved against the manifest's folder.
    pub fn patches_dir(&self) -> PathBuf {
        self.dir.join(&self.patches.dir)
    }

    /// The AES key file, resolved against the manifest's folder.
    pub(crate) fn key_file_path(&self) -> Option<PathBuf> {
        self.output.key_file.as_ref().map(|k| self.dir.join(k))
    }
}

/// A relative path that stays below the folder it is resolved against:
/// no root, no drive, no `..` (what `[release]` paths must be; links are
/// checked when the file is opened, `platform::open_release_file`).
/// Whether `path` stays inside the folder it is relative to (no root, no `..`).
pub(crate) fn is_inside_path(path: &Path) -> bool {
    path.components().all(|c| {
        matches!(
            c,
            std::path::Component::Normal(_) | std::path::Component::CurDir
        )
    })
}

fn is_file_name_safe(s: &str) -> bool {
    !s.is_empty()
        && s != "."
        && s != ".."
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

/// The closest of `candidates` to `word`, if it is close enough to be a typo.
pub(crate) fn did_you_mean<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    candidates
        .iter()
        .map(|c| (strsim::jaro_winkler(word, c), *c))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

/// Refuses keys the manifest does not know, naming the closest known one.
fn check_known_keys(text: &str, path: &Path) -> Result<()> {
    let Ok(table) = text.parse::<toml::Table>() else {
        // Syntax errors are reported by the typed parse, with their position.
        return Ok(());
    };
    let known: Vec<(&str, &[&str])> = KNOWN_KEYS
        .into_iter()
        .chain(
            crate::fixups::Profile::all()
                .filter(|p| !p.settings_keys().is_empty())
                .map(|p| (p.name(), p.settings_keys())),
        )
        .collect();
    let tables: Vec<&str> = known.iter().map(|(t, _)| *t).collect();
    for (name, value) in &table {
        let Some((_, keys)) = known.iter().find(|(t, _)| t == name) else {
            let mut error = Error::usage(format!("unknown table `[{name}]`")).in_file(path);
            if let Some((line, column)) = find_table(text, name) {
                error = error.at_line(line, column);
            }
            return Err(match did_you_mean(name, &tables) {
                Some(t) => error.with_hint(format!("did you mean `[{t}]`?")),
                None => error.with_hint(format!(
                    "the manifest's tables are {}",
                    tables
                        .iter()
                        .map(|t| format!("[{t}]"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            });
        };
        let Some(inner) = value.as_table() else {
            continue;
        };
        for key in inner.keys() {
            if keys.contains(&key.as_str()) {
                continue;
            }
            let mut error =
                Error::usage(format!("unknown key `{key}` in `[{name}]`")).in_file(path);
            if let Some((line, column)) = find_key_in_table(text, name, key) {
                error = error.at_line(line, column);
            }
            return Err(match did_you_mean(key, keys) {
                Some(k) => error.with_hint(format!("did you mean `{k}`?")),
                None => error.with_hint(format!(
                    "`[{name}]` knows {}",
                    keys.iter()
                        .map(|k| format!("`{k}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            });
        }
    }
    Ok(())
}

/// Line and column of the `[name]` header.
fn find_table(text: &str, name: &str) -> Option<(usize, usize)> {
    text.lines().enumerate().find_map(|(i, line)| {
        let trimmed = line.trim_start();
        (trimmed.trim_end() == format!("[{name}]")).then(|| (i + 1, line.len() - trimmed.len() + 1))
    })
}

/// Line and column of `key =` inside the `[table]` section.
fn find_key_in_table(text: &str, table: &str, key: &str) -> Option<(usize, usize)> {
    let mut current = String::new();
    for (index, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        if let Some(rest) = trimmed.strip_prefix('[') {
            current = rest.split(']').next().unwrap_or("").trim().to_string();
            continue;
        }
        if current == table {
            if let Some(rest) = trimmed.strip_prefix(key) {
                if rest.trim_start().starts_with('=') {
                    return Some((index + 1, line.len() - trimmed.len() + 1));
                }
            }
        }
    }
    None
}

/// An absolute path with `.` and `..` resolved: the longest existing
/// ancestor through `canonicalize` (symlinks followed), the rest lexically.
fn normalize(path: &Path) -> PathBuf {
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(path)
    };
    let mut existing = absolute.clone();
    let mut rest = Vec::new();
    while !existing.exists() {
        match (existing.file_name(), existing.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name.to_os_string());
                existing = parent.to_path_buf();
            }
            _ => break,
        }
    }
    let mut out = existing.canonicalize().unwrap_or(existing);
    for part in rest.into_iter().rev() {
        if part == ".." {
            out.pop();
        } else if part != "." {
            out.push(part);
        }
    }
    out
}

/// 1-based line and column of a byte offset.
/// Line and column of a `\` in a double-quoted (basic) string of line
/// `line` that is not one of TOML's escapes: a Windows path written as
/// `".\Cooked"`.
fn bad_backslash(text: &str, line: usize) -> Option<(usize, usize)> {
    let source = text.lines().nth(line.checked_sub(1)?)?;
    let chars: Vec<char> = source.chars().collect();
    let mut in_basic = false;
    let mut in_literal = false;
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '#' if !in_basic && !in_literal => return None,
            '\'' if !in_basic => in_literal = !in_literal,
            '"' if !in_literal => in_basic = !in_basic,
            '\\' if in_basic => {
                let next = chars.get(i + 1).copied();
                let hex = |n: usize| {
                    chars.len() > i + 1 + n
                        && chars[i + 2..i + 2 + n].iter().all(char::is_ascii_hexdigit)
                };
                let valid = match next {
                    Some('b' | 't' | 'n' | 'f' | 'r' | 'e' | '"' | '\\') => true,
                    Some('u') => hex(4),
                    Some('U') => hex(8),
                    _ => false,
                };
                if !valid {
                    return Some((line, i + 1));
                }
                i += 1;
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// 1-based line and column of byte `offset` of `text` (a TOML file: the
/// manifest, a patch file).
pub(crate) fn line_column(text: &str, offset: usize) -> (usize, usize) {
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

/// One key [`edit_game_keys`] changed.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct KeyChange {
    /// `game.engine`, `game.project`, `game.profile`.
    pub key: String,
    /// The value before (`None`: the key was not set).
    pub before: Option<String>,
    pub after: String,
}

/// Sets string keys of the manifest's `[game]` table in `text`, keeping
/// every comment and the layout (`toml_edit`); returns the new text (checked
/// to parse as a manifest) and the keys whose value changed.
pub fn edit_game_keys(
    text: &str,
    path: &Path,
    values: &[(&str, &str)],
) -> Result<(String, Vec<KeyChange>)> {
    let mut doc: toml_edit::DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| {
        Error::usage(format!("the manifest does not parse: {}", e.message())).in_file(path)
    })?;
    let game = doc
        .entry("game")
        .or_insert_with(|| toml_edit::Item::Table(toml_edit::Table::new()))
        .as_table_like_mut()
        .ok_or_else(|| Error::usage("`game` is not a table").in_file(path))?;
    let mut changes = Vec::new();
    for (key, value) in values {
        let before = game.get(key).map(|v| match v.as_str() {
            Some(s) => s.to_string(),
            None => v.to_string().trim().to_string(),
        });
        if before.as_deref() == Some(*value) {
            continue;
        }
        match game.get_mut(key).and_then(|item| item.as_value_mut()) {
            // Keeps the comment and spacing around the old value.
            Some(old) => {
                let decor = old.decor().clone();
                *old = toml_edit::Value::from(*value);
                *old.decor_mut() = decor;
            }
            None => {
                game.insert(key, toml_edit::value(*value));
            }
        }
        changes.push(KeyChange {
            key: format!("game.{key}"),
            before,
            after: value.to_string(),
        });
    }
    let new_text = doc.to_string();
    Manifest::parse(&new_text, path)?;
    Ok((new_text, changes))
}
