//! Game profiles: per-game changes to a legacy package before it is
//! converted, for games that ship a modified engine.
//!
//! A profile transforms the LEGACY package (header model + export data): it
//! may insert bytes into exports, and [`crate::legacy::edit`] then recomputes every size and
//! offset that follows (export serial sizes, later exports' serial offsets,
//! the bulk data start offset, inline data resource offsets (no `PayloadAtEndOfFile` /
//! `PayloadInSeperateFile` flag)) and rewrites the header. The normal Zen conversion runs
//! afterwards, unaware of the profile.
//!
//! Each game is one module implementing [`GameProfile`] (every per-game
//! behaviour and its settings table); `PROFILES` registers them. Adding a
//! game means adding a module and a line there; the generic profile is the
//! trait's defaults.
//!
//! - `Profile::apply` uses default options, `apply_with` the modder's
//!   (`ProfileOptions::from_manifest`); `Profile::preview` applies to a copy and reports each edit's
//!   old/new offset and each export's old/new offset and size (`zenpak inspect --profile`, JSON
//!   `"kind": "profile-preview"`). `zenpak convert --profile` applies it, then converts.
//! - Byte edits, names added to the header and every offset they move go
//!   through `legacy::edit` (see its docs).
//! - `skeletal_mesh.rs`: SkeletalMesh native data after the GUID flag — `FStripDataFlags` (2),
//!   bounds (7 reals), materials (`i32` count + entries; in the game's layout each followed by a
//!   tag container), `FReferenceSkeleton` (root parent −1, every other parent below its index, pose
//!   count = bone count = map count). `search_by_structure` keeps the positions where the whole
//!   chain parses. Version facts: see `crate::properties`.
//!
//! Tests: `tests/profiles/fixups_convert.rs` (Zen conversion after a profile = generic conversion
//! of the changed `.uexp`, header equal apart from export size and inline bulk data offset),
//! `fixups_cli.rs`; per-game tests in the game's module.

mod generic;
pub mod marvel_rivals;
pub mod skeletal_mesh;

use serde::Serialize;

use crate::legacy::PackageFiles;
use crate::mappings::Mappings;
use crate::version::EngineVersion;
use crate::{Error, Result};

pub use generic::Generic;
pub use marvel_rivals::{MarvelRivals, MarvelRivalsSection, MeshSettings};

/// Everything zenpak does differently for one game: its changes to
/// packages and its hooks into the build, `check` and `doctor`, with its
/// settings (a table of `mod.toml` named after it). Every method but
/// [`name`](Self::name) has the stock engine's behaviour as its default, so
/// the generic profile is the trait's defaults.
pub trait GameProfile: Sync {
    /// The name used in manifests and on the command line.
    fn name(&self) -> &'static str;

    /// The keys of its `mod.toml` table (`[<name>]`); none when it takes no
    /// settings. `check_known_keys` refuses other keys with a suggestion.
    fn settings_keys(&self) -> &'static [&'static str] {
        &[]
    }

    /// Checks its settings (the manifest's `[<name>]` table).
    fn validate(&self, _options: &ProfileOptions) -> Result<()> {
        Ok(())
    }

    /// Whether a game folder looks like this game (`doctor --write`): its
    /// project folder name and the releases its files allow.
    fn recognise(&self, _project: &str, _releases: &[EngineVersion]) -> bool {
        false
    }

    /// Transforms the package in place (header and export data) and says
    /// what was changed. A package the profile does not concern is left
    /// byte-identical.
    fn apply(
        &self,
        _files: &mut PackageFiles,
        _engine: EngineVersion,
        _mappings: Option<&Mappings>,
        _options: &ProfileOptions,
    ) -> Result<FixupReport> {
        Ok(FixupReport {
            profile: self.name().to_string(),
            ..FixupReport::default()
        })
    }

    /// Whether [`apply`](Self::apply) may read or change a package's export
    /// data. When it cannot, a build passes each `.uexp` through without
    /// reading it (5.3+, where the chunk keeps the `.uexp` as it is).
    fn reads_export_data(&self) -> bool {
        false
    }

    /// Whether [`companion_pak_files`](Self::companion_pak_files) looks at
    /// the container's paths (a build keeps them only then).
    fn needs_container_paths(&self) -> bool {
        false
    }

    /// Files the companion pak must hold besides the mod's loose files,
    /// given the container's paths.
    fn companion_pak_files(
        &self,
        _options: &ProfileOptions,
        _container_paths: &[String],
    ) -> Vec<(String, Vec<u8>)> {
        Vec::new()
    }

    /// Base name of the output files.
    fn artifact_stem(&self, _options: &ProfileOptions, artifact: &ArtifactName) -> String {
        artifact.plain()
    }

    /// The game's own cipher for the companion pak, if it needs one and the
    /// options ask for it (`None`: the engine's AES or none, as `[output]` says).
    fn pak_cipher(
        &self,
        _options: &ProfileOptions,
        _key: &crate::pak::crypto::AesKey,
    ) -> Option<std::sync::Arc<dyn crate::pak::PakCipher>> {
        None
    }

    /// Whether the companion pak must be encrypted (so a build needs a key).
    fn requires_pak_key(&self, _options: &ProfileOptions) -> bool {
        false
    }

    /// Warnings `check` and `build` give about one package.
    fn package_warnings(
        &self,
        _options: &ProfileOptions,
        _file: &std::path::Path,
        _package: &crate::legacy::LegacyPackage,
    ) -> Result<Vec<crate::diagnostic::Diagnostic>> {
        Ok(Vec::new())
    }
}

/// Every game zenpak knows. Adding a game: a module implementing
/// [`GameProfile`] and one line here.
const PROFILES: [&dyn GameProfile; 2] = [&Generic, &MarvelRivals];

/// The modder's settings of the profiles: each profile's `mod.toml` table
/// (`[marvel-rivals]`) as written, read by the profile itself. Empty: every
/// profile's defaults, which are what each game requires. Each table is
/// read into its profile's settings once (the first time a package asks),
/// not once per package.
#[derive(Clone, Default, Serialize)]
pub struct ProfileOptions {
    tables: std::collections::BTreeMap<String, toml::Value>,
    #[serde(skip)]
    read: std::collections::BTreeMap<String, std::sync::Arc<std::sync::OnceLock<ReadSettings>>>,
}

/// A table as its profile read it.
type ReadSettings = std::sync::Arc<dyn std::any::Any + Send + Sync>;

impl PartialEq for ProfileOptions {
    fn eq(&self, other: &Self) -> bool {
        self.tables == other.tables
    }
}

impl std::fmt::Debug for ProfileOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProfileOptions")
            .field("tables", &self.tables)
            .finish()
    }
}

impl ProfileOptions {
    /// Options with one profile's table.
    pub(crate) fn with_table(mut self, profile: &str, table: toml::Value) -> Self {
        self.tables.insert(profile.to_string(), table);
        self.read.insert(profile.to_string(), Default::default());
        self
    }

    /// The table of the profile named `profile`, if the manifest has one.
    pub(crate) fn table(&self, profile: &str) -> Option<&toml::Value> {
        self.tables.get(profile)
    }

    /// The settings of a profile, read from its table (its defaults without one).
    pub(crate) fn settings<T>(&self, profile: &str) -> Result<std::sync::Arc<T>>
    where
        T: serde::de::DeserializeOwned + Default + Send + Sync + 'static,
    {
        let (Some(value), Some(cell)) = (self.table(profile), self.read.get(profile)) else {
            return Ok(std::sync::Arc::new(T::default()));
        };
        if let Some(read) = cell.get().and_then(|r| r.clone().downcast::<T>().ok()) {
            return Ok(read);
        }
        let read: T = value.clone().try_into().map_err(|e: toml::de::Error| {
            Error::usage(format!("`[{profile}]`: {}", e.message().trim_end()))
        })?;
        let read = std::sync::Arc::new(read);
        let _ = cell.set(read.clone());
        Ok(read)
    }

    /// Bytes that change when any option changes (part of build cache keys).
    pub(crate) fn fingerprint(&self) -> Vec<u8> {
        serde_json::to_vec(self).unwrap_or_default()
    }
}

/// The parts of the output files' base name the manifest gives, for
/// profiles that name their output their own way.
#[derive(Debug, Clone, Copy)]
pub struct ArtifactName<'a> {
    pub(crate) prefix: &'a str,
    pub(crate) name: &'a str,
    pub(crate) suffix: &'a str,
}

impl ArtifactName<'_> {
    /// `<prefix><name><suffix>` as the manifest writes them.
    pub(crate) fn plain(&self) -> String {
        format!("{}{}{}", self.prefix, self.name, self.suffix)
    }
}

/// A known profile: one of [`PROFILES`], by name.
#[derive(Clone, Copy)]
pub struct Profile(&'static dyn GameProfile);

impl std::ops::Deref for Profile {
    type Target = dyn GameProfile;
    fn deref(&self) -> &Self::Target {
        self.0
    }
}

impl PartialEq for Profile {
    fn eq(&self, other: &Self) -> bool {
        self.0.name() == other.0.name()
    }
}

impl Eq for Profile {}

impl std::fmt::Debug for Profile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Profile({})", self.0.name())
    }
}

impl Serialize for Profile {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.0.name())
    }
}

impl Profile {
    /// Every known profile, in registration order.
    pub(crate) fn all() -> impl Iterator<Item = Profile> {
        PROFILES.into_iter().map(Profile)
    }

    pub fn from_name(name: &str) -> Result<Profile> {
        Profile::all().find(|p| p.name() == name).ok_or_else(|| {
            let names: Vec<&str> = Profile::all().map(|p| p.0.name()).collect();
            Error::usage(format!(
                "unknown game profile `{name}`; known: {}",
                names.join(", ")
            ))
        })
    }

    /// The profile a game folder looks like, if any but the generic one.
    pub(crate) fn recognise(project: &str, releases: &[EngineVersion]) -> Option<Profile> {
        Profile::all().find(|p| p.0.recognise(project, releases))
    }

    pub(crate) fn name(self) -> &'static str {
        self.0.name()
    }

    /// Applies the profile with its default options.
    pub fn apply(
        self,
        files: &mut PackageFiles,
        engine: EngineVersion,
        mappings: Option<&Mappings>,
    ) -> Result<FixupReport> {
        self.apply_with(files, engine, mappings, &ProfileOptions::default())
    }

    /// Applies the profile with the modder's options.
    pub fn apply_with(
        self,
        files: &mut PackageFiles,
        engine: EngineVersion,
        mappings: Option<&Mappings>,
        options: &ProfileOptions,
    ) -> Result<FixupReport> {
        self.0
            .apply(files, engine, mappings, options)
            .map_err(|e| e.in_file(&files.path))
    }
}

impl std::str::FromStr for Profile {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        Profile::from_name(s)
    }
}

/// What a profile did to one package.
#[derive(Debug, Clone, Default, Serialize)]
pub struct FixupReport {
    pub profile: String,
    /// One entry per change to an export (an export may have several).
    pub exports: Vec<ExportFixup>,
    /// Changes to the header alone (names added, imports remapped).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub header: Vec<String>,
    /// Structures found already in the game's layout and left as they are.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unchanged: Vec<Unchanged>,
    /// Bytes inserted in total (replaced bytes count here as inserted).
    pub inserted_bytes: u64,
    /// Bytes replaced in total.
    #[serde(skip_serializing_if = "is_zero")]
    pub removed_bytes: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl FixupReport {
    /// Whether the package's bytes changed.
    pub fn changed(&self) -> bool {
        !self.exports.is_empty() || !self.header.is_empty()
    }
}

/// How a profile found the bytes it changes (JSON: the phrase).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum LocatedBy {
    /// The game's mappings alone (a structure search was not unique).
    #[serde(rename = "mappings")]
    Mappings,
    /// A structure search alone (no mappings given).
    #[serde(rename = "structure")]
    Structure,
    /// The mappings, and a unique structure search agreeing with them.
    #[serde(rename = "mappings and structure")]
    MappingsAndStructure,
    /// The whole structure read to the export's end.
    #[serde(rename = "structure (the whole table read to the export's end)")]
    WholeStructure,
}

impl std::fmt::Display for LocatedBy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            LocatedBy::Mappings => "mappings",
            LocatedBy::Structure => "structure",
            LocatedBy::MappingsAndStructure => "mappings and structure",
            LocatedBy::WholeStructure => "structure (the whole table read to the export's end)",
        })
    }
}

/// What a profile changes in an export (JSON and text: the sentence).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// An `FGameplayTagContainer` after each `FSkeletalMaterial` entry.
    TagContainers { entries: usize, tags: usize },
    /// A 4-byte field after each string table entry.
    StringTableFields { entries: usize },
    /// The 8 LOD screen sizes widened from 8 to 16 bytes.
    ScreenSizesWidened { marker: u32 },
    /// LOD info headers renumbered for the game's `DefaultHiddenMaterials`.
    HiddenMaterials {
        renumbered: usize,
        lods: usize,
        slot: usize,
        written: usize,
    },
}

impl std::fmt::Display for Change {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Change::TagContainers { entries, tags } => write!(
                f,
                "FGameplayTagContainer after each of {entries} FSkeletalMaterial entries ({tags} tags)"
            ),
            Change::StringTableFields { entries } => {
                write!(f, "4-byte field after each of {entries} string table entries")
            }
            Change::ScreenSizesWidened { marker } => write!(
                f,
                "8 LOD screen sizes widened from 8 to 16 bytes (count 1 and {marker:#010x} / 0.0 after each)"
            ),
            Change::HiddenMaterials {
                renumbered,
                lods,
                slot,
                written,
            } => write!(
                f,
                "{renumbered} of {lods} SkeletalMeshLODInfo headers renumbered for the game's DefaultHiddenMaterials (slot {slot}), hidden materials written for {written} LODs"
            ),
        }
    }
}

impl Serialize for Change {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// A structure found already in the game's layout and left as it is (JSON
/// and text: the sentence).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unchanged {
    /// A string table without entries.
    EmptyStringTable { export: usize },
    /// A string table whose entries already carry the game's field.
    StringTableInGameLayout { export: usize, entries: usize },
    /// A static mesh whose screen sizes are already 16 bytes each.
    StaticMeshInGameLayout { export: usize, offset: u64 },
    /// A skeletal mesh whose materials already carry tag containers.
    SkeletalMeshTagged {
        export: usize,
        materials: usize,
        located_by: LocatedBy,
    },
}

impl std::fmt::Display for Unchanged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Unchanged::EmptyStringTable { export } => {
                write!(f, "StringTable export {export}: no entries")
            }
            Unchanged::StringTableInGameLayout { export, entries } => write!(
                f,
                "StringTable export {export}: its {entries} entries already carry the game's field; left as they are"
            ),
            Unchanged::StaticMeshInGameLayout { export, offset } => write!(
                f,
                "StaticMesh export {export}: its screen sizes at {offset} are already 16 bytes each; left as they are"
            ),
            Unchanged::SkeletalMeshTagged {
                export,
                materials,
                located_by,
            } => write!(
                f,
                "SkeletalMesh export {export}: its {materials} materials already carry gameplay tag containers (located by {located_by}); left as it is"
            ),
        }
    }
}

impl Serialize for Unchanged {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// One change to an export.
#[derive(Debug, Clone, Serialize)]
pub struct ExportFixup {
    pub export_index: usize,
    pub(crate) export_name: String,
    pub what: Change,
    /// Where the change was located and how.
    pub located_by: LocatedBy,
    /// Absolute offsets (header + .uexp stream, before the change) of each edit.
    pub insertions: Vec<u64>,
    /// Bytes written (inserted or replacing others).
    pub inserted_bytes: u64,
    /// Each edit with its offset before and after the whole profile ran.
    pub edits: Vec<EditRecord>,
}

/// One edit as `zenpak inspect --profile` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EditRecord {
    /// Offset in the original header + .uexp stream.
    pub before: u64,
    /// Offset of the same bytes in the changed stream.
    pub after: u64,
    /// Original bytes replaced (0 for an insertion).
    pub removed: u64,
    /// Bytes written there.
    pub inserted: u64,
}

/// What `zenpak inspect PKG --profile P` shows: what the profile would
/// change in a package, without writing anything.
#[derive(Debug, Clone, Serialize)]
pub struct ProfilePreview {
    pub(crate) kind: &'static str,
    pub(crate) file: String,
    pub(crate) profile: String,
    pub(crate) engine: EngineVersion,
    /// Header and `.uexp` sizes before and after.
    pub(crate) header_bytes: [u64; 2],
    pub(crate) uexp_bytes: [u64; 2],
    /// Every export's serial offset and size before and after.
    pub(crate) exports: Vec<ExportMove>,
    /// The changes, each edit with its offset before and after.
    pub(crate) report: FixupReport,
}

/// One export's place before and after the profile.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct ExportMove {
    pub(crate) index: usize,
    pub(crate) name: String,
    pub(crate) before: [i64; 2],
    pub(crate) after: [i64; 2],
}

impl Profile {
    /// Applies the profile to a copy of `files` and reports what moved.
    pub fn preview(
        self,
        files: &PackageFiles,
        engine: EngineVersion,
        mappings: Option<&Mappings>,
        options: &ProfileOptions,
    ) -> Result<ProfilePreview> {
        let before = files.read_package(Some(engine))?;
        let mut changed = files.clone();
        let report = self.apply_with(&mut changed, engine, mappings, options)?;
        let after = changed.read_package(Some(engine))?;
        let exports = before
            .exports
            .iter()
            .zip(&after.exports)
            .enumerate()
            .map(|(index, (b, a))| ExportMove {
                index,
                name: b.object_name.display(&before.names).to_string(),
                before: [b.serial_offset, b.serial_size],
                after: [a.serial_offset, a.serial_size],
            })
            .collect();
        Ok(ProfilePreview {
            kind: "profile-preview",
            file: files.path.display().to_string(),
            profile: self.name().to_string(),
            engine,
            header_bytes: [files.header.len() as u64, changed.header.len() as u64],
            uexp_bytes: [files.uexp.len() as u64, changed.uexp.len() as u64],
            exports,
            report,
        })
    }
}

impl ProfilePreview {
    /// The preview as text, one line per change and per edit.
    pub fn to_text(&self) -> String {
        let mut out = format!(
            "{}: profile {} ({}); header {} -> {} bytes, .uexp {} -> {} bytes\n",
            self.file,
            self.profile,
            self.engine,
            self.header_bytes[0],
            self.header_bytes[1],
            self.uexp_bytes[0],
            self.uexp_bytes[1]
        );
        if !self.report.changed() {
            out.push_str("  no change\n");
        }
        for line in &self.report.header {
            out.push_str(&format!("  header: {line}\n"));
        }
        for fix in &self.report.exports {
            out.push_str(&format!(
                "  export {} {}: {} (located by {})\n",
                fix.export_index, fix.export_name, fix.what, fix.located_by
            ));
            for e in &fix.edits {
                out.push_str(&format!(
                    "    at {} -> {}: {} bytes replaced by {}\n",
                    e.before, e.after, e.removed, e.inserted
                ));
            }
        }
        for line in &self.report.unchanged {
            out.push_str(&format!("  unchanged: {line}\n"));
        }
        for m in self.exports.iter().filter(|m| m.before != m.after) {
            out.push_str(&format!(
                "  export {} {}: offset {} size {} -> offset {} size {}\n",
                m.index, m.name, m.before[0], m.before[1], m.after[0], m.after[1]
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A game that only names its output its own way: one impl of the
    /// trait (its module) and, in the product, one line in `PROFILES`.
    struct Toy;

    impl GameProfile for Toy {
        fn name(&self) -> &'static str {
            "toy"
        }
        fn artifact_stem(&self, _options: &ProfileOptions, artifact: &ArtifactName) -> String {
            format!("{}_toy", artifact.plain())
        }
    }

    #[test]
    fn a_profile_is_its_trait_impl_and_the_rest_is_the_stock_engine() {
        let toy = Profile(&Toy);
        let generic = Profile::from_name("generic").unwrap();
        let options = ProfileOptions::default();
        let name = ArtifactName {
            prefix: "",
            name: "Mod",
            suffix: "_P",
        };
        assert_eq!(toy.artifact_stem(&options, &name), "Mod_P_toy");
        assert_eq!(generic.artifact_stem(&options, &name), "Mod_P");
        for p in [toy, generic] {
            assert!(!p.reads_export_data() && !p.needs_container_paths());
            assert!(!p.requires_pak_key(&options));
            assert!(p.companion_pak_files(&options, &["a".into()]).is_empty());
            assert!(p.settings_keys().is_empty());
            assert!(!p.recognise("Marvel", &[EngineVersion::UE5_3]));
        }
        // Registered profiles are found by name, in order; unknown names are usage errors.
        let names: Vec<&str> = Profile::all().map(|p| p.name()).collect();
        assert_eq!(names, ["generic", "marvel-rivals"]);
        assert_eq!(Profile::from_name("toy").unwrap_err().exit_code(), 2);
        assert_eq!(
            Profile::recognise("Marvel", &[EngineVersion::UE5_3]).map(Profile::name),
            Some("marvel-rivals")
        );
    }

    #[test]
    fn a_profile_table_is_read_once_and_a_bad_one_is_a_usage_error() {
        let options = ProfileOptions::default().with_table(
            "marvel-rivals",
            toml::from_str::<toml::Value>("encrypt-pak = false").unwrap(),
        );
        let first = options
            .settings::<marvel_rivals::MarvelRivalsSection>("marvel-rivals")
            .unwrap();
        let again = options
            .settings::<marvel_rivals::MarvelRivalsSection>("marvel-rivals")
            .unwrap();
        assert!(!first.encrypt_pak);
        assert!(
            std::sync::Arc::ptr_eq(&first, &again),
            "read once, then shared"
        );
        let bad = ProfileOptions::default().with_table(
            "marvel-rivals",
            toml::from_str::<toml::Value>("encrypt-pak = 3").unwrap(),
        );
        let e = bad
            .settings::<marvel_rivals::MarvelRivalsSection>("marvel-rivals")
            .unwrap_err();
        assert_eq!(e.exit_code(), 2);
    }
}
