//! The `marvel-rivals` profile. Marvel Rivals runs a modified UE 5.3 (TOC version 5, container
//! header version 3) whose packages differ from stock cooks in a few structures; stock-cooked mods
//! need them changed or the game crashes or ignores them. `[marvel-rivals]` in `mod.toml`
//! (`MarvelRivalsSection` in `config.rs`, documented in `mod.toml.example`) holds the modder's
//! choices; defaults are what the game requires. One file per change:
//!
//! - [`skeletal`]: SkeletalMesh materials get a gameplay-tag container (`i32` count + FNames)
//!   after each entry (the slot's tags from `[[marvel-rivals.mesh]] tags`, new names added, else
//!   the [`carrier`], else empty); meshes already in the game's layout pass through unchanged
//!   (with mappings: which schema walks and parses; without: exactly one structure match in
//!   exactly one layout; both or neither → refused).
//! - [`carrier`]: an export of a `/Script/MaterialTagPlugin` or `/Script/RivalsMeshMaterialManager`
//!   class (`MaterialSlotTags`, `LODHiddenMaterials`); its imports become `/Script/Engine`,
//!   `/Script/Engine.AssetUserData`, `/Script/Engine.Default__AssetUserData`. Read with the walker,
//!   so its class must be in the mappings, else refused (unlike peers, which skip what fails) unless
//!   `carrier = false`.
//! - [`lod_info`]: `FSkeletalMeshLODInfo` gets the game's `TArray<bool> DefaultHiddenMaterials`
//!   (after `LODMaterialMap`): `lod_info::stock_view` (game schema minus it) walks the stock mesh,
//!   every LOD info header is re-encoded in the game's numbering, and `i32` count + one byte per
//!   slot inserted when masks are given (manifest `hidden-materials`, bit i = slot i, fewer masks
//!   than LODs reuse the last; else the carrier). More masks than LODs, bits past the slots or long
//!   carrier lists are refused; a stock mesh without game mappings holding the property is refused
//!   (`hidden-materials = false` only for content already in the game's layout).
//! - [`static_mesh`]: 8 LOD screen sizes of 16 bytes each (cooked bool 1, value, `i32` 1, then
//!   `0.0` for LOD 0 with a positive size, word `0x55000000` otherwise), +64 bytes per mesh;
//!   anchored at the export's end, chain must hold in exactly one layout; SpeedTree wind refused.
//! - [`string_table`]: 4 zero bytes after each entry's value (`string-tables = true` default);
//!   tables already in the game's layout pass; ambiguous tables with entries are refused.
//! - [`companion`]: companion pak entry `chunknames` = the container's own paths, sorted,
//!   `\n`-joined, no trailing newline (peers list the packed folder, incl. `.uexp`); the
//!   `_9999999_P` suffix unless present (`MarvelRivalsSection::artifact_stem`).
//! - [`pak_cipher`]: AES-256-ECB, key = published key with each 4-byte word reversed, each block's
//!   words reversed before and after; only the first `((u64 LE of BLAKE3(11 22 33 44 ‖ lowercased
//!   root path)[0..8] % 61) · 63 + 319) & !63` bytes (256…4096) of an entry are encrypted, shorter
//!   entries zero-padded to 16 and encrypted whole; root path = mount point + `/` + path, repeated
//!   `/` collapsed, leading `../../../` dropped; index parts padded and encrypted; key GUID zero; 35
//!   fixed bytes before the footer. `encrypt-pak = true` by default with the modder's key
//!   (`ZENPAK_AES_KEY` / `[output] key-file`; none built in). The IoStore container is unaffected.
//! - [`unmounted`]: `check` warning `marvel-rivals-unmounted-class` per package importing a class
//!   matching `unmounted-classes` (default `/Script/GameplayAbilities.*`,
//!   `/Script/*.*CameraShake*`).
//!
//! Everything is located exactly: with the game's mappings (the property
//! walker) and by structure where that is unambiguous; otherwise the profile
//! refuses with an error that says what to give it. After editing, each
//! changed structure is read back in the game's layout.
//!
//! # Sources (facts only, no code taken)
//! Seed `docs/reference/004_52958316f11cda1a.txt`; XzantGaming/UAssetToolRivals `3dad2d4` (and
//! UassetToolRivals `8685e68`); natimerry/repak-rivals `5f441e7` (`retoc-rivals-cli`,
//! `docs/retoc-rivals-cli.md`); PSYLOCKE-GG/CUE4Parse `66894e5` (Rivals branch).
//! - Pass-through: UAssetToolRivals `ZenConverter.cs` `SourceHadGameplayTags` (`2ce9eef`).
//! - Tags: seed "FSkeletalMaterial Structure"; CUE4Parse `FSkeletalMaterial.cs` from build
//!   1.1.1573788; carrier: UAssetToolRivals `MaterialTagReader.cs` (`f9a55cf`), `BuildImportMap`.
//! - Hidden materials: UAssetToolRivals `HiddenMaterialsReader.cs` (`3cd915e`, `8d6a92d`);
//!   repak-rivals docs (masks per LOD).
//! - Screen sizes: UAssetToolRivals `PatchStaticMeshScreenSize` (`227c93e`, "182+ game meshes");
//!   its `TECHNICAL_ANALYSIS.md` says "8 bytes (zeros)", but zenpak follows the code, which matches
//!   the game's meshes.
//! - String tables: CUE4Parse `FStringTable.cs` reads an `int32` from build 1.1.1933977, an
//!   `FString` from 1.1.3006564 (game files have it). UAssetToolRivals added it always (`838cd4b`)
//!   then only when the source had it (`d0d2d03`, `e5d16ee`); zenpak follows the game's files.
//! - `chunknames`: UAssetToolRivals `ChunkNamesPakWriter.cs`, repak-rivals `pack.rs`
//!   (`write_chunknames_pak`) and `iotoc.rs`. Suffix: repak-rivals docs.
//! - Cipher: repak-rivals `data.rs`, `pak.rs` (35 bytes: `3de2989`), `footer.rs`, `utils.rs`
//!   (`9903df8`); UAssetToolRivals `PakWriter.cs`; CUE4Parse `PartialEncryptionPakFileReader.cs`.
//!   Required: trumank/repak #37, #39, FabianFG/CUE4Parse #186; both tools always encrypt. IoStore
//!   is not: seed reader needs no key, retoc-rivals obfuscates only with `--obfuscate`.
//! - Unmounted classes: issue 15 only, no peer source.
//!
//! # Wiring
//! `Manifest::marvel_rivals` → `build::package::Settings::profile_options` (`apply_with`, cache
//! key). `Profile` hooks: `companion_pak_files`, `artifact_stem`, `requires_pak_key` /
//! `pak_cipher` (for `PakWriter::with_cipher`), `package_warnings`. Not yet wired: the calls in
//! `build::package` (`ContainerWriter`), `release::artifact_paths`, `build::check`.
//!
//! # Tests (`tests/profiles/`)
//! `fixups_marvel_rivals.rs` (SkeletalMesh rows on `SKM_Quinn_Simple` 5.6 and a 5.3 rebuild,
//! byte for byte), `fixups_rivals_carrier.rs`, `fixups_rivals_static_mesh.rs` (exactly 8 × 8
//! bytes, idempotent, hostile tails), `fixups_rivals_string_table.rs`,
//! `fixups_rivals_container.rs` (chunknames, suffix, cipher, unmounted),
//! `fixups_rivals_corpus.rs` (other corpus packages byte-identical; StaticMesh +64, StringTable
//! +4 per entry).

pub(crate) mod carrier;
pub mod companion;
mod config;
pub(crate) mod lod_info;
pub mod pak_cipher;
pub(crate) mod skeletal;
pub mod static_mesh;
pub(crate) mod string_table;
pub mod unmounted;

use crate::legacy::{FName, LegacyPackage, PackageFiles, ResolvedIndex};
use crate::mappings::Mappings;
use crate::properties::PackageContext;
use crate::version::EngineVersion;
use crate::{Error, Result};

use super::{EditRecord, ExportFixup, FixupReport, GameProfile, LocatedBy, ProfileOptions};
use crate::legacy::edit::{apply_edits, export_data_name, Edit, Shift};

pub use config::{MarvelRivalsSection, MeshSettings, DEFAULT_SUFFIX, DEFAULT_UNMOUNTED_CLASSES};
pub use skeletal::is_skeletal_mesh;

pub struct MarvelRivals;

/// A planned change to one export.
#[derive(Debug, Clone)]
pub(crate) struct Change {
    pub(crate) export_index: usize,
    pub(crate) what: super::Change,
    pub(crate) located_by: LocatedBy,
    pub(crate) edits: Vec<Edit>,
}

/// A gameplay tag to write: a name the export data already uses, or one
/// given by text (added to the name map if the package lacks it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Tag {
    Existing(FName),
    Text(String),
}

/// Tag containers to insert after a mesh's material entries (one per entry).
#[derive(Debug, Clone)]
pub(crate) struct TagInsertions {
    pub(crate) export_index: usize,
    pub(crate) located_by: LocatedBy,
    /// (entry end offset, the entry's tags).
    pub(crate) containers: Vec<(u64, Vec<Tag>)>,
}

/// Whether export `index`'s class is the script class `/Script/{module}.{class}`.
pub(crate) fn export_class_is(
    package: &LegacyPackage,
    index: usize,
    module: &str,
    class: &str,
) -> bool {
    match package.exports[index].class_index.resolve() {
        ResolvedIndex::Import(i) => {
            package
                .name(package.imports[i].object_name)
                .is_ok_and(|n| n.eq_ignore_ascii_case(class))
                && package
                    .import_package_name(i)
                    .is_ok_and(|p| p.eq_ignore_ascii_case(module))
        }
        _ => false,
    }
}

/// The bytes of an `FGameplayTagContainer`: count, then the FNames.
fn tag_container(tags: &[FName]) -> Vec<u8> {
    let mut out = Vec::with_capacity(4 + 8 * tags.len());
    out.extend_from_slice(&(tags.len() as i32).to_le_bytes());
    for t in tags {
        out.extend_from_slice(&t.index.to_le_bytes());
        out.extend_from_slice(&t.number.to_le_bytes());
    }
    out
}

/// The FName a tag is written as; text tags get a name-map entry.
fn resolve_tag(package: &mut LegacyPackage, tag: &Tag) -> Result<FName> {
    match tag {
        Tag::Existing(name) => Ok(*name),
        Tag::Text(text) => {
            let (base, number) = crate::names::split_number(text);
            let index = export_data_name(package, base)?;
            Ok(FName::new(index, number))
        }
    }
}

/// The name the package goes by in `[[marvel-rivals.mesh]]` globs: the one
/// its summary carries, else its file stem.
fn package_name_of(files: &PackageFiles, package: &LegacyPackage) -> String {
    package
        .package_name()
        .map(str::to_string)
        .unwrap_or_else(|| {
            files
                .path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default()
        })
}

/// The profile's name and its `mod.toml` table.
pub(crate) const NAME: &str = "marvel-rivals";

/// The `[marvel-rivals]` settings of `options` (validated when the
/// manifest loaded; the defaults when there is no table).
pub fn settings(options: &ProfileOptions) -> std::sync::Arc<MarvelRivalsSection> {
    options.settings(NAME).unwrap_or_default()
}

/// Options holding `section` as the `[marvel-rivals]` table.
pub fn options(section: &MarvelRivalsSection) -> ProfileOptions {
    ProfileOptions::default().with_table(
        NAME,
        toml::Value::try_from(section).expect("the section serialises"),
    )
}

impl GameProfile for MarvelRivals {
    fn name(&self) -> &'static str {
        NAME
    }

    fn settings_keys(&self) -> &'static [&'static str] {
        config::KEYS
    }

    fn validate(&self, options: &ProfileOptions) -> Result<()> {
        options.settings::<MarvelRivalsSection>(NAME)?.validate()
    }

    /// Project folder `Marvel`, a modified UE 5.3.
    fn recognise(&self, project: &str, releases: &[EngineVersion]) -> bool {
        project.eq_ignore_ascii_case("Marvel") && releases.contains(&EngineVersion::UE5_3)
    }

    fn reads_export_data(&self) -> bool {
        true
    }

    fn needs_container_paths(&self) -> bool {
        true
    }

    /// `chunknames`, given the container's paths.
    fn companion_pak_files(
        &self,
        options: &ProfileOptions,
        container_paths: &[String],
    ) -> Vec<(String, Vec<u8>)> {
        settings(options).companion_pak_files(container_paths)
    }

    /// The `_9999999_P` suffix.
    fn artifact_stem(&self, options: &ProfileOptions, artifact: &super::ArtifactName) -> String {
        settings(options).artifact_stem(artifact)
    }

    fn pak_cipher(
        &self,
        options: &ProfileOptions,
        key: &crate::pak::crypto::AesKey,
    ) -> Option<std::sync::Arc<dyn crate::pak::PakCipher>> {
        settings(options)
            .encrypt_pak
            .then(|| std::sync::Arc::new(pak_cipher::RivalsPakCipher::new(key)) as _)
    }

    fn requires_pak_key(&self, options: &ProfileOptions) -> bool {
        settings(options).encrypt_pak
    }

    /// Classes that get a container unmounted.
    fn package_warnings(
        &self,
        options: &ProfileOptions,
        file: &std::path::Path,
        package: &LegacyPackage,
    ) -> Result<Vec<crate::diagnostic::Diagnostic>> {
        unmounted::warnings(&settings(options), file, package)
    }

    fn apply(
        &self,
        files: &mut PackageFiles,
        engine: EngineVersion,
        mappings: Option<&Mappings>,
        options: &ProfileOptions,
    ) -> Result<FixupReport> {
        let settings = &options.settings::<MarvelRivalsSection>(NAME)?;
        let mut package = files.read_package(Some(engine))?;
        let mut report = FixupReport {
            profile: self.name().to_string(),
            ..FixupReport::default()
        };
        let meshes: Vec<usize> = (0..package.exports.len())
            .filter(|&i| is_skeletal_mesh(&package, i))
            .collect();
        let statics: Vec<usize> = if settings.screen_sizes {
            (0..package.exports.len())
                .filter(|&i| export_class_is(&package, i, "/Script/Engine", "StaticMesh"))
                .collect()
        } else {
            Vec::new()
        };
        let tables: Vec<usize> = if settings.string_tables {
            (0..package.exports.len())
                .filter(|&i| export_class_is(&package, i, "/Script/Engine", "StringTable"))
                .collect()
        } else {
            Vec::new()
        };
        if meshes.is_empty() && statics.is_empty() && tables.is_empty() {
            return Ok(report);
        }
        let package_name = package_name_of(files, &package);
        let mut changes = Vec::new();
        let mut tag_insertions = Vec::new();
        let mut checks = Checks::default();
        let mut remap_carriers = false;
        {
            let cx = PackageContext::of(&package);
            if !meshes.is_empty() {
                let plan = skeletal::plan(
                    files,
                    &package,
                    &cx,
                    mappings,
                    settings,
                    &package_name,
                    &meshes,
                )?;
                changes.extend(plan.changes);
                tag_insertions.extend(plan.tags);
                report.unchanged.extend(plan.unchanged);
                checks.meshes.extend(plan.checks);
                remap_carriers = plan.remap_carriers;
            }
            for &index in &statics {
                match static_mesh::plan(files, &package, &cx, mappings, index)? {
                    static_mesh::Planned::Change(change, sizes) => {
                        changes.push(change);
                        checks.statics.push((index, sizes));
                    }
                    static_mesh::Planned::AlreadyGameLayout(note) => report.unchanged.push(note),
                }
            }
            for &index in &tables {
                match string_table::plan(files, &package, &cx, mappings, index)? {
                    string_table::Planned::Change(change, entries) => {
                        changes.push(change);
                        checks.tables.push((index, entries));
                    }
                    string_table::Planned::Unchanged(note) => report.unchanged.push(note),
                }
            }
        }
        // Header changes: tag names the export data will refer to, then the
        // carrier's plugin imports.
        changes.extend(tag_changes(
            &mut package,
            tag_insertions,
            &mut checks.meshes,
        )?);
        if remap_carriers {
            report.header.extend(carrier::remap_imports(&mut package)?);
        }
        if changes.iter().all(|c| c.edits.is_empty()) && report.header.is_empty() {
            return Ok(report);
        }
        let all: Vec<Edit> = changes.iter().flat_map(|c| c.edits.clone()).collect();
        let shift = apply_edits(files, &mut package, &all)?;
        changes.sort_by_key(|c| (c.export_index, c.edits.first().map(|e| e.offset)));
        for change in changes.into_iter().filter(|c| !c.edits.is_empty()) {
            report.exports.push(fixup_record(&package, change, &shift));
        }
        report.inserted_bytes = all.iter().map(|e| e.bytes.len() as u64).sum();
        report.removed_bytes = all.iter().map(|e| e.removed).sum();
        checks.verify(files, engine, mappings, &shift)?;
        Ok(report)
    }
}

/// The tag container insertions as edits, their tags resolved to FNames
/// (text tags get name-map entries); each mesh's check learns its tags.
fn tag_changes(
    package: &mut LegacyPackage,
    insertions: Vec<TagInsertions>,
    checks: &mut [skeletal::MeshCheck],
) -> Result<Vec<Change>> {
    let mut changes = Vec::new();
    for insertion in insertions {
        let mut edits = Vec::new();
        let mut tags_total = 0;
        for (offset, tags) in &insertion.containers {
            let names: Vec<FName> = tags
                .iter()
                .map(|t| resolve_tag(package, t))
                .collect::<Result<_>>()?;
            tags_total += names.len();
            edits.push(Edit::insert(*offset, tag_container(&names)));
            if let Some(check) = checks
                .iter_mut()
                .find(|c| c.export_index == insertion.export_index)
            {
                check.tags.push(names);
            }
        }
        changes.push(Change {
            export_index: insertion.export_index,
            what: super::Change::TagContainers {
                entries: insertion.containers.len(),
                tags: tags_total,
            },
            located_by: insertion.located_by,
            edits,
        });
    }
    Ok(changes)
}

fn fixup_record(package: &LegacyPackage, change: Change, shift: &Shift) -> ExportFixup {
    let export = &package.exports[change.export_index];
    ExportFixup {
        export_index: change.export_index,
        export_name: export.object_name.display(&package.names).to_string(),
        what: change.what,
        located_by: change.located_by,
        insertions: change.edits.iter().map(|e| e.offset).collect(),
        inserted_bytes: change.edits.iter().map(|e| e.bytes.len() as u64).sum(),
        edits: change
            .edits
            .iter()
            .map(|e| EditRecord {
                before: e.offset,
                after: shift.position(e.offset, false),
                removed: e.removed,
                inserted: e.bytes.len() as u64,
            })
            .collect(),
    }
}

/// What must read back in the game's layout once the edits are applied.
#[derive(Default)]
struct Checks {
    meshes: Vec<skeletal::MeshCheck>,
    statics: Vec<(usize, static_mesh::ScreenSizes)>,
    tables: Vec<(usize, usize)>,
}

impl Checks {
    fn verify(
        &self,
        files: &PackageFiles,
        engine: EngineVersion,
        mappings: Option<&Mappings>,
        shift: &Shift,
    ) -> Result<()> {
        let package = files.read_package(Some(engine))?;
        let cx = PackageContext::of(&package);
        for check in &self.meshes {
            check
                .verify(files, &package, &cx, mappings, shift)
                .map_err(|e| {
                    e.with_hint(
                        "the changed SkeletalMesh does not read back in the game's layout; this is a zenpak bug or the mappings are not the game's",
                    )
                })?;
        }
        for (index, sizes) in &self.statics {
            static_mesh::verify(files, &package, &cx, *index, sizes)?;
        }
        for &(index, entries) in &self.tables {
            string_table::verify(files, &package, &cx, mappings, index, entries)?;
        }
        Ok(())
    }
}

/// A structure in an unexpected state, as an error naming the export.
pub(crate) fn refuse(
    package: &LegacyPackage,
    index: usize,
    class: &str,
    message: impl Into<String>,
) -> Error {
    let name = package.exports[index]
        .object_name
        .display(&package.names)
        .to_string();
    Error::unsupported(message.into()).within(format!("{class} export {index} `{name}`"))
}
