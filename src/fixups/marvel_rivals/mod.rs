//! The `marvel-rivals` profile. Marvel Rivals runs a modified UE 5.3 whose
//! packages differ from stock cooks in a few structures; stock-cooked mods
//! need them changed or the game crashes or ignores them. What it does, one
//! file each (ARCHITECTURE.md, "Marvel Rivals", gives every fact's source):
//!
//! - [`skeletal`]: SkeletalMesh materials get a gameplay-tag container
//!   after each entry (empty, or the slot's tags from the manifest or the
//!   mesh's [`carrier`] export); meshes already in the game's layout pass
//!   through unchanged;
//! - [`lod_info`]: every `FSkeletalMeshLODInfo` gets the game's
//!   `DefaultHiddenMaterials` property (its unversioned header renumbered,
//!   the per-LOD flags inserted when given);
//! - [`static_mesh`]: StaticMesh LOD screen sizes in the game's 16-byte form;
//! - [`string_table`]: the game's 4-byte field after each entry's value;
//! - [`companion`]: the companion pak's `chunknames` entry and the mod's
//!   file name suffix; [`pak_cipher`]: the game's pak encryption;
//!   [`unmounted`]: `check` warnings for classes that get a container unmounted.
//!
//! Everything is located exactly: with the game's mappings (the property
//! walker) and by structure where that is unambiguous; otherwise the profile
//! refuses with an error that says what to give it. After editing, each
//! changed structure is read back in the game's layout.

pub mod carrier;
pub mod companion;
mod config;
pub mod lod_info;
pub mod pak_cipher;
pub mod skeletal;
pub mod static_mesh;
pub mod string_table;
pub mod unmounted;

use crate::legacy::{FName, LegacyPackage, PackageFiles, ResolvedIndex};
use crate::mappings::Mappings;
use crate::properties::PackageContext;
use crate::version::EngineVersion;
use crate::{Error, Result};

use super::edit::{apply_edits, export_data_name, Edit, Shift};
use super::{EditRecord, ExportFixup, FixupReport, GameProfile, ProfileOptions};

pub use config::{MarvelRivalsSection, MeshSettings, DEFAULT_SUFFIX, DEFAULT_UNMOUNTED_CLASSES};
pub use skeletal::is_skeletal_mesh;

pub struct MarvelRivals;

/// A planned change to one export.
#[derive(Debug, Clone)]
pub(crate) struct Change {
    pub export_index: usize,
    pub what: String,
    pub located_by: String,
    pub edits: Vec<Edit>,
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
    pub export_index: usize,
    pub located_by: String,
    /// (entry end offset, the entry's tags).
    pub containers: Vec<(u64, Vec<Tag>)>,
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

impl GameProfile for MarvelRivals {
    fn name(&self) -> &'static str {
        "marvel-rivals"
    }

    fn apply(
        &self,
        files: &mut PackageFiles,
        engine: EngineVersion,
        mappings: Option<&Mappings>,
        options: &ProfileOptions,
    ) -> Result<FixupReport> {
        let settings = &options.marvel_rivals;
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
            what: format!(
                "FGameplayTagContainer after each of {} FSkeletalMaterial entries ({tags_total} tags)",
                insertion.containers.len()
            ),
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
