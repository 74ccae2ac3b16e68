//! SkeletalMeshes for Marvel Rivals: the game reads an
//! `FGameplayTagContainer` after every `FSkeletalMaterial` of the materials
//! array (stock cooks have none and crash the game) and has an extra
//! property in `FSkeletalMeshLODInfo` ([`super::lod_info`]).
//!
//! Each mesh is first classified. In stock layout when, with mappings, the
//! walk with the stock view of the game's schema reaches the native data
//! and the materials parse there without containers (or, without mappings,
//! the structure search finds exactly one such position); in the game's
//! layout when the same holds with the game's schema and containers after
//! each entry. A mesh in the game's layout (extracted from the game and
//! re-packed) passes through unchanged; one that reads both ways, or
//! neither, is refused. For a stock mesh a container is inserted after each
//! entry: empty, or the slot's tags from `[[marvel-rivals.mesh]]` or the
//! mesh's carrier export.

use std::borrow::Cow;

use crate::fixups::LocatedBy;
use crate::legacy::{FName, LegacyPackage, PackageFiles, ResolvedIndex};
use crate::mappings::Mappings;
use crate::properties::{walk_export_recorded, PackageContext, Recording};
use crate::{Error, Result};

use super::super::skeletal_mesh::{
    bounds_size, parse_at, search_by_structure, MeshLayout, STRIP_FLAGS_SIZE,
};
use super::carrier::{self, Carrier};
use super::lod_info::{self, FieldSlot};
use super::{refuse, Change, MarvelRivalsSection, Tag, TagInsertions};
use crate::legacy::edit::Shift;

/// Whether export `index` is a `/Script/Engine.SkeletalMesh`.
pub fn is_skeletal_mesh(package: &LegacyPackage, index: usize) -> bool {
    super::export_class_is(package, index, "/Script/Engine", "SkeletalMesh")
}

/// What the profile will do to a package's SkeletalMeshes.
#[derive(Default)]
pub(crate) struct Plan {
    pub(crate) changes: Vec<Change>,
    pub(crate) tags: Vec<TagInsertions>,
    pub(crate) unchanged: Vec<crate::fixups::Unchanged>,
    pub(crate) checks: Vec<MeshCheck>,
    pub(crate) remap_carriers: bool,
}

/// Which layout a mesh's materials are in, where, and how that was found.
#[derive(Debug)]
pub(crate) enum Found {
    Stock {
        layout: MeshLayout,
        located_by: LocatedBy,
        /// The walk with the stock view (with mappings only).
        recording: Option<Recording>,
    },
    Game {
        layout: MeshLayout,
        located_by: LocatedBy,
    },
}

/// The schemas to read a mesh with: the game's own, and the stock view of
/// them (the game's minus what only the game has) that stock cooks follow.
pub(crate) struct Views<'m> {
    pub(crate) game: Option<&'m Mappings>,
    pub(crate) stock: Option<Cow<'m, Mappings>>,
    /// Where the game's `DefaultHiddenMaterials` is, when the profile renumbers for it.
    pub(crate) field: Option<FieldSlot>,
}

impl<'m> Views<'m> {
    pub(crate) fn new(
        mappings: Option<&'m Mappings>,
        settings: &MarvelRivalsSection,
    ) -> Result<Self> {
        let Some(game) = mappings else {
            return Ok(Views {
                game: None,
                stock: None,
                field: None,
            });
        };
        if settings.hidden_materials {
            if let Some((stock, field)) = lod_info::stock_view(game)? {
                return Ok(Views {
                    game: Some(game),
                    stock: Some(Cow::Owned(stock)),
                    field: Some(field),
                });
            }
        }
        Ok(Views {
            game: Some(game),
            stock: Some(Cow::Borrowed(game)),
            field: None,
        })
    }
}

/// Classifies SkeletalMesh export `index` (see the module doc).
pub(crate) fn locate(
    files: &PackageFiles,
    package: &LegacyPackage,
    cx: &PackageContext,
    views: &Views,
    index: usize,
) -> Result<Found> {
    let export = &package.exports[index];
    let data = files.export_data(package, index)?;
    let base = export.serial_offset as u64;
    let offset_after_bounds = STRIP_FLAGS_SIZE + bounds_size(cx);
    let (Some(game), Some(stock)) = (views.game, views.stock.as_deref()) else {
        let stock = search_by_structure(data, base, cx, false);
        let game = search_by_structure(data, base, cx, true);
        return match (stock.len(), game.len()) {
            (1, 0) => Ok(Found::Stock {
                layout: stock.into_iter().next().expect("one layout"),
                located_by: LocatedBy::Structure,
                recording: None,
            }),
            (0, 1) => Ok(Found::Game {
                layout: game.into_iter().next().expect("one layout"),
                located_by: LocatedBy::Structure,
            }),
            (s, g) => Err(refuse(
                package,
                index,
                "SkeletalMesh",
                format!(
                    "the materials array cannot be located by structure alone ({s} candidate positions without tag containers, {g} with)"
                ),
            )
            .with_hint(
                "give the game's mappings: `[game] mappings` in mod.toml, or --mappings Game.usmap",
            )),
        };
    };
    // Stock layout: the stock view walks to the native data, materials parse without containers.
    let stock_try = walk_export_recorded(files, package, cx, Some(stock), index).and_then(
        |(recording, native_start, _)| {
            let pos = (native_start - base) as usize + offset_after_bounds;
            parse_at(data, base, pos, cx, false).map(|layout| (layout, recording))
        },
    );
    // Game layout: the game's schema walks to the native data, materials parse with containers.
    let game_try = walk_export_recorded(files, package, cx, Some(game), index).and_then(
        |(_, native_start, _)| {
            let pos = (native_start - base) as usize + offset_after_bounds;
            parse_at(data, base, pos, cx, true)
        },
    );
    match (stock_try, game_try) {
        (Ok(_), Ok(_)) => Err(refuse(
            package,
            index,
            "SkeletalMesh",
            "the materials read both with and without the game's tag containers; refusing to guess",
        )),
        (Ok((layout, recording)), Err(_)) => {
            let located_by = agree(&layout, data, base, cx, false)
                .map_err(|e| refuse(package, index, "SkeletalMesh", e))?;
            Ok(Found::Stock {
                layout,
                located_by,
                recording: Some(recording),
            })
        }
        (Err(_), Ok(layout)) => {
            let located_by = agree(&layout, data, base, cx, true)
                .map_err(|e| refuse(package, index, "SkeletalMesh", e))?;
            Ok(Found::Game { layout, located_by })
        }
        (Err(stock_error), Err(_)) => Err(stock_error
            .within(format!(
                "SkeletalMesh export {index}: materials and reference skeleton after the properties"
            ))
            .with_hint(
                "the mappings may belong to another game or version (for Marvel Rivals use the game's own mappings)",
            )),
    }
}

/// Whether the structure search agrees with the mappings' position: the
/// mappings decide alone when the structure search is not unique.
fn agree(
    layout: &MeshLayout,
    data: &[u8],
    base: u64,
    cx: &PackageContext,
    tagged: bool,
) -> std::result::Result<LocatedBy, String> {
    let found = search_by_structure(data, base, cx, tagged);
    match found.as_slice() {
        [one] if one.materials_offset == layout.materials_offset => {
            Ok(LocatedBy::MappingsAndStructure)
        }
        [one] => Err(format!(
            "the mappings place the materials at offset {} but the structure search at {}; refusing to guess",
            layout.materials_offset, one.materials_offset
        )),
        _ => Ok(LocatedBy::Mappings),
    }
}

/// The tags of each material slot of a stock mesh: `[[marvel-rivals.mesh]]`
/// entries first, then the carrier's, else none.
fn slot_tags(
    package: &LegacyPackage,
    index: usize,
    layout: &MeshLayout,
    settings: &MarvelRivalsSection,
    package_name: &str,
    carrier: Option<&Carrier>,
) -> Result<Vec<Vec<Tag>>> {
    let slot_names: Vec<String> = layout
        .slot_names
        .iter()
        .map(|n| package.name(*n))
        .collect::<Result<_>>()?;
    let mut out: Vec<Vec<Tag>> = vec![Vec::new(); slot_names.len()];
    if let Some(carrier) = carrier {
        for (slot, tags) in &carrier.slot_tags {
            let text = package.name(*slot)?;
            match slot_names.iter().position(|s| s.eq_ignore_ascii_case(&text)) {
                Some(i) => out[i] = tags.iter().map(|t| Tag::Existing(*t)).collect(),
                None => {
                    return Err(refuse(
                        package,
                        carrier.export_index,
                        "carrier",
                        format!(
                            "the carrier gives tags for material slot `{text}`, which the mesh does not have (slots: {})",
                            slot_names.join(", ")
                        ),
                    ))
                }
            }
        }
    }
    for mesh in settings.mesh_settings(package_name) {
        for (slot, tags) in &mesh.tags {
            match slot_names.iter().position(|s| s.eq_ignore_ascii_case(slot)) {
                Some(i) => out[i] = tags.iter().map(|t| Tag::Text(t.clone())).collect(),
                None => {
                    return Err(refuse(
                        package,
                        index,
                        "SkeletalMesh",
                        format!(
                            "`[[marvel-rivals.mesh]]` `{}` gives tags for material slot `{slot}`, which the mesh does not have (slots: {})",
                            mesh.package,
                            slot_names.join(", ")
                        ),
                    )
                    .with_hint("use the slot names the mesh was cooked with"))
                }
            }
        }
    }
    Ok(out)
}

/// Plans the changes to a package's SkeletalMeshes (`meshes`: their export indices).
pub(crate) fn plan(
    files: &PackageFiles,
    package: &LegacyPackage,
    cx: &PackageContext,
    mappings: Option<&Mappings>,
    settings: &MarvelRivalsSection,
    package_name: &str,
    meshes: &[usize],
) -> Result<Plan> {
    let views = Views::new(mappings, settings)?;
    let mut plan = Plan::default();
    let carriers: Vec<Carrier> = if settings.carrier {
        carrier::find(package)
            .into_iter()
            .map(|i| carrier::read(files, package, cx, views.stock.as_deref(), i))
            .collect::<Result<_>>()?
    } else {
        Vec::new()
    };
    plan.remap_carriers = !carriers.is_empty();
    for &index in meshes {
        let mesh_carrier = carrier::for_mesh(package, &carriers, index, meshes)?;
        match locate(files, package, cx, &views, index)? {
            Found::Game { layout, located_by } => {
                plan.unchanged
                    .push(crate::fixups::Unchanged::SkeletalMeshTagged {
                        export: index,
                        materials: layout.material_count(),
                        located_by,
                    });
            }
            Found::Stock {
                layout,
                located_by,
                recording,
            } => {
                let tags = slot_tags(
                    package,
                    index,
                    &layout,
                    settings,
                    package_name,
                    mesh_carrier,
                )?;
                let mut check = MeshCheck {
                    export_index: index,
                    materials_offset: layout.materials_offset,
                    material_count: layout.material_count(),
                    bone_count: layout.bone_count,
                    tags: Vec::new(),
                    hidden: None,
                };
                if settings.hidden_materials {
                    let lod = lod_info::plan(
                        package,
                        index,
                        &views,
                        recording.as_ref(),
                        &layout,
                        settings,
                        package_name,
                        mesh_carrier,
                    )?;
                    check.hidden = Some(lod.expected);
                    if !lod.change.edits.is_empty() {
                        plan.changes.push(lod.change);
                    }
                }
                plan.tags.push(TagInsertions {
                    export_index: index,
                    located_by,
                    containers: layout.entry_ends.iter().copied().zip(tags).collect(),
                });
                plan.checks.push(check);
            }
        }
    }
    Ok(plan)
}

/// What a changed mesh must read back as.
#[derive(Debug, Clone)]
pub(crate) struct MeshCheck {
    pub(crate) export_index: usize,
    /// Offset of the materials count before the edits.
    pub(crate) materials_offset: u64,
    pub(crate) material_count: usize,
    pub(crate) bone_count: usize,
    /// Each entry's tags as written.
    pub(crate) tags: Vec<Vec<FName>>,
    /// Per LOD info: the hidden-material flags expected (`None`: none written).
    pub(crate) hidden: Option<Vec<Option<Vec<bool>>>>,
}

impl MeshCheck {
    /// Re-reads the changed mesh in the game's layout: same materials and
    /// skeleton, the tags written, and (with mappings) the LOD infos walk
    /// with the game's schema and hold the flags written.
    pub(crate) fn verify(
        &self,
        files: &PackageFiles,
        package: &LegacyPackage,
        cx: &PackageContext,
        mappings: Option<&Mappings>,
        shift: &Shift,
    ) -> Result<()> {
        let index = self.export_index;
        let data = files.export_data(package, index)?;
        let base = package.exports[index].serial_offset as u64;
        let at = shift.position(self.materials_offset, true);
        let pos = at
            .checked_sub(base)
            .ok_or_else(|| Error::internal("the materials moved before their export"))?;
        let layout = parse_at(data, base, pos as usize, cx, true)
            .map_err(|e| e.within(format!("SkeletalMesh export {index} after the change")))?;
        if layout.material_count() != self.material_count
            || layout.bone_count != self.bone_count
            || layout.tags != self.tags
        {
            return Err(Error::internal(format!(
                "SkeletalMesh export {index}: after the change it reads {} materials, {} bones and tags {:?}; expected {}, {} and {:?}",
                layout.material_count(),
                layout.bone_count,
                layout.tags,
                self.material_count,
                self.bone_count,
                self.tags
            )));
        }
        let Some(game) = mappings else {
            return Ok(());
        };
        // The game's schema must now walk to the materials (with LOD infos
        // left alone, the mappings are taken as they are).
        let (recording, native_start, _) =
            walk_export_recorded(files, package, cx, Some(game), index)?;
        if native_start + (STRIP_FLAGS_SIZE + bounds_size(cx)) as u64 != at {
            return Err(Error::internal(format!(
                "SkeletalMesh export {index}: after the change its properties end at {native_start}, not before the materials at {at}"
            )));
        }
        if let Some(expected) = &self.hidden {
            lod_info::verify(files, &recording, expected)
                .map_err(|e| e.within(format!("SkeletalMesh export {index}")))?;
        }
        Ok(())
    }
}

/// The mesh export a carrier belongs to: its outer, else the package's only mesh.
pub(crate) fn owning_mesh(
    package: &LegacyPackage,
    carrier: usize,
    meshes: &[usize],
) -> Option<usize> {
    let mut outer = package.exports[carrier].outer_index;
    while let ResolvedIndex::Export(e) = outer.resolve() {
        if meshes.contains(&e) {
            return Some(e);
        }
        outer = package.exports[e].outer_index;
    }
    (meshes.len() == 1).then(|| meshes[0])
}
