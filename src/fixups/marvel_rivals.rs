//! The `marvel-rivals` profile. Marvel Rivals (UE 5.3-based) reads an
//! `FGameplayTagContainer` after every `FSkeletalMaterial` of a
//! SkeletalMesh's materials array; stock cooked meshes lack it and crash the
//! game. This profile inserts the empty container (`i32` 0) after each entry
//! of every SkeletalMesh export. StaticMesh materials are not touched.
//!
//! The array is located by walking the export's property block with the
//! game's mappings (when given) and, independently, by structure (the only
//! position where strip flags, bounds, materials and reference skeleton all
//! parse). Both must agree where both work; without mappings the structure
//! search must find exactly one position. After padding, the export is
//! re-parsed with the padded layout and must still hold its skeleton.

use crate::legacy::{LegacyPackage, PackageFiles, ResolvedIndex};
use crate::mappings::Mappings;
use crate::properties::{walk_export, PackageContext};
use crate::version::EngineVersion;
use crate::{Error, Result};

use super::edit::{apply_insertions, Insertion};
use super::skeletal_mesh::{
    bounds_size, parse_at, search_by_structure, MeshLayout, STRIP_FLAGS_SIZE,
};
use super::{ExportFixup, FixupReport, GameProfile};

pub struct MarvelRivals;

/// The empty `FGameplayTagContainer`: a zero tag count.
const EMPTY_TAG_CONTAINER: [u8; 4] = [0, 0, 0, 0];

/// Whether export `index` is a `/Script/Engine.SkeletalMesh`.
pub fn is_skeletal_mesh(package: &LegacyPackage, index: usize) -> bool {
    match package.exports[index].class_index.resolve() {
        ResolvedIndex::Import(i) => {
            package
                .name(package.imports[i].object_name)
                .is_ok_and(|n| n == "SkeletalMesh")
                && package
                    .import_package_name(i)
                    .is_ok_and(|p| p == "/Script/Engine")
        }
        _ => false,
    }
}

/// Locates the materials array of SkeletalMesh export `index`.
/// Returns the layout and how it was found.
pub fn locate_materials(
    files: &PackageFiles,
    package: &LegacyPackage,
    cx: &PackageContext,
    mappings: Option<&Mappings>,
    index: usize,
) -> Result<(MeshLayout, &'static str)> {
    let export = &package.exports[index];
    let data = files.export_data(package, index)?;
    let base = export.serial_offset as u64;
    let object = export.object_name.display(&package.names).to_string();
    let by_structure = search_by_structure(data, base, cx);
    let by_mappings = match mappings {
        None => None,
        Some(m) => {
            let (_, native_start, _) = walk_export(files, package, cx, Some(m), index, false)?;
            let pos = (native_start - base) as usize + STRIP_FLAGS_SIZE + bounds_size(cx);
            let layout = parse_at(data, base, pos, cx, false).map_err(|e| {
                e.within(format!(
                    "SkeletalMesh export {index} `{object}`: materials and reference skeleton after the properties"
                ))
                .with_hint("the mappings may belong to another game or version, or the package is already padded")
            })?;
            Some(layout)
        }
    };
    match (by_mappings, by_structure.len()) {
        (Some(layout), 1) => {
            if by_structure[0] != layout {
                return Err(Error::invalid(format!(
                    "SkeletalMesh export {index} `{object}`: the mappings place the materials at offset {} but the structure search at {}; refusing to guess",
                    layout.materials_offset, by_structure[0].materials_offset
                )));
            }
            Ok((layout, "mappings and structure"))
        }
        (Some(layout), _) => Ok((layout, "mappings")),
        (None, 1) => Ok((
            by_structure.into_iter().next().expect("one layout"),
            "structure",
        )),
        (None, n) => Err(Error::unsupported(format!(
            "the materials array cannot be located by structure alone ({n} candidate positions)"
        ))
        .within(format!("SkeletalMesh export {index} `{object}`"))
        .with_hint(
            "give the game's mappings: `[game] mappings` in mod.toml, or --mappings Game.usmap",
        )),
    }
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
    ) -> Result<FixupReport> {
        let mut package = files.read_package(Some(engine))?;
        let mut report = FixupReport {
            profile: self.name().to_string(),
            ..FixupReport::default()
        };
        let meshes: Vec<usize> = (0..package.exports.len())
            .filter(|&i| is_skeletal_mesh(&package, i))
            .collect();
        if meshes.is_empty() {
            return Ok(report);
        }
        let mut insertions = Vec::new();
        // Where each fixed mesh's materials start, relative to its export start.
        let mut checks = Vec::new();
        {
            let cx = PackageContext::of(&package);
            for &index in &meshes {
                let (layout, located_by) = locate_materials(files, &package, &cx, mappings, index)?;
                let export = &package.exports[index];
                let points: Vec<u64> = layout.entry_ends.clone();
                insertions.extend(points.iter().map(|&offset| Insertion {
                    offset,
                    bytes: EMPTY_TAG_CONTAINER.to_vec(),
                }));
                checks.push((
                    index,
                    layout.materials_offset - export.serial_offset as u64,
                    layout.clone(),
                ));
                report.exports.push(ExportFixup {
                    export_index: index,
                    export_name: export.object_name.display(&package.names).to_string(),
                    what: format!(
                        "empty FGameplayTagContainer after each of {} FSkeletalMaterial entries",
                        layout.material_count()
                    ),
                    located_by: located_by.to_string(),
                    inserted_bytes: 4 * points.len() as u64,
                    insertions: points,
                });
            }
        }
        apply_insertions(files, &mut package, &insertions)?;
        report.inserted_bytes = insertions.iter().map(|i| i.bytes.len() as u64).sum();
        verify(files, engine, &checks)?;
        Ok(report)
    }
}

/// Re-reads the padded package and re-parses each fixed mesh with the
/// padded entry layout: same materials, same skeleton, or the package fails.
fn verify(
    files: &PackageFiles,
    engine: EngineVersion,
    checks: &[(usize, u64, MeshLayout)],
) -> Result<()> {
    let package = files.read_package(Some(engine))?;
    let cx = PackageContext::of(&package);
    for (index, relative, before) in checks {
        let data = files.export_data(&package, *index)?;
        let base = package.exports[*index].serial_offset as u64;
        let after = parse_at(data, base, *relative as usize, &cx, true).map_err(|e| {
            e.within(format!("SkeletalMesh export {index} after padding")).with_hint(
                "the padded export no longer parses; the mappings or the structure search found the wrong place",
            )
        })?;
        if after.material_count() != before.material_count()
            || after.bone_count != before.bone_count
        {
            return Err(Error::internal(format!(
                "SkeletalMesh export {index}: after padding it reads {} materials and {} bones, before {} and {}",
                after.material_count(),
                after.bone_count,
                before.material_count(),
                before.bone_count
            )));
        }
    }
    Ok(())
}
