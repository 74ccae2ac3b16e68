//! `FSkeletalMeshLODInfo.DefaultHiddenMaterials`: the game's struct has a
//! `TArray<bool>` property stock UE 5.3 lacks, declared after
//! `LODMaterialMap`. Unversioned property headers number a struct's
//! properties in declaration order, so in a stock cook every LOD info value
//! from that slot on carries a number one lower than the game reads it as,
//! and the game misreads (and crashes on) every stock mesh.
//!
//! The game's mappings say where the property is. The profile reads the
//! mesh with the stock view (the game's schema without it), then rewrites
//! each LOD info's header in the game's numbering, inserting the property's
//! value (`i32` count + one byte per material slot) when hidden materials
//! are given for that LOD (`[[marvel-rivals.mesh]] hidden-materials` masks,
//! else the mesh's carrier export); without them the property is left out,
//! as a cook leaves out a property at its default (an empty array).

use crate::legacy::{LegacyPackage, PackageFiles};
use crate::mappings::{Mappings, PropertyType};
use crate::properties::{Recording, StructVisit, UnversionedHeader};
use crate::{Error, Result};

use super::super::skeletal_mesh::MeshLayout;
use super::carrier::Carrier;
use super::skeletal::Views;
use super::{refuse, Change, MarvelRivalsSection};
use crate::legacy::edit::Edit;

/// The struct the game changed.
pub(crate) const LOD_INFO: &str = "SkeletalMeshLODInfo";
/// The property only the game's struct has.
pub(crate) const HIDDEN_MATERIALS: &str = "DefaultHiddenMaterials";

/// Where the game's property sits in the game's numbering of the struct.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FieldSlot {
    pub(crate) slot: usize,
    /// Slots it takes (its static array size).
    pub(crate) width: usize,
}

/// The stock view of the game's mappings: `SkeletalMeshLODInfo` without
/// `DefaultHiddenMaterials`, later properties one slot lower. `None` when
/// the mappings have no such property (they are not the game's).
pub(crate) fn stock_view(game: &Mappings) -> Result<Option<(Mappings, FieldSlot)>> {
    let Some(schema) = game.struct_schema(LOD_INFO) else {
        return Ok(None);
    };
    let Some(property) = schema
        .properties
        .iter()
        .find(|p| p.name.eq_ignore_ascii_case(HIDDEN_MATERIALS))
    else {
        return Ok(None);
    };
    if !matches!(&property.ty, PropertyType::Array(inner) if **inner == PropertyType::Bool) {
        return Err(Error::unsupported(format!(
            "the mappings give {LOD_INFO}.{HIDDEN_MATERIALS} the type {}, not TArray<bool>",
            property.ty.describe()
        ))
        .with_hint("use the game's own mappings"));
    }
    let field = FieldSlot {
        slot: property.schema_index as usize,
        width: property.array_size.max(1) as usize,
    };
    let mut stock = game.clone();
    let position = stock
        .structs
        .iter()
        .position(|s| s.name.eq_ignore_ascii_case(LOD_INFO))
        .expect("found above");
    let s = &mut stock.structs[position];
    s.properties
        .retain(|p| !p.name.eq_ignore_ascii_case(HIDDEN_MATERIALS));
    for p in &mut s.properties {
        if p.schema_index as usize > field.slot {
            p.schema_index -= field.width as u16;
        }
    }
    s.property_count -= field.width as u16;
    Ok(Some((stock, field)))
}

/// The LOD info changes of one mesh, and the flags each LOD info must then hold.
pub(crate) struct LodPlan {
    pub(crate) change: Change,
    pub(crate) expected: Vec<Option<Vec<bool>>>,
}

/// The hidden-material flags of each LOD, from the manifest's masks (first
/// matching `[[marvel-rivals.mesh]]` that has some) or else the carrier.
fn hidden_flags(
    package: &LegacyPackage,
    index: usize,
    lods: usize,
    materials: usize,
    settings: &MarvelRivalsSection,
    package_name: &str,
    carrier: Option<&Carrier>,
) -> Result<Vec<Option<Vec<bool>>>> {
    let refuse_here = |message: String| refuse(package, index, "SkeletalMesh", message);
    if let Some(mesh) = settings
        .mesh_settings(package_name)
        .into_iter()
        .find(|m| !m.hidden_materials.is_empty())
    {
        let masks = &mesh.hidden_materials;
        if masks.len() > lods {
            return Err(refuse_here(format!(
                "`[[marvel-rivals.mesh]]` `{}` gives {} hidden-material masks but the mesh has {lods} LODs",
                mesh.package,
                masks.len()
            )));
        }
        return (0..lods)
            .map(|lod| {
                let mask = masks[lod.min(masks.len() - 1)];
                if materials < 64 && mask >> materials != 0 {
                    return Err(refuse_here(format!(
                        "hidden-material mask {mask:#x} for LOD {lod} sets bits past the mesh's {materials} material slots"
                    )));
                }
                Ok(Some((0..materials).map(|b| b < 64 && mask >> b & 1 == 1).collect()))
            })
            .collect();
    }
    let Some(carrier) = carrier.filter(|c| !c.lod_hidden.is_empty()) else {
        return Ok(vec![None; lods]);
    };
    if carrier.lod_hidden.len() > lods {
        return Err(refuse_here(format!(
            "the carrier export gives hidden materials for {} LODs but the mesh has {lods}",
            carrier.lod_hidden.len()
        )));
    }
    let mut out = vec![None; lods];
    for (lod, flags) in carrier.lod_hidden.iter().enumerate() {
        if flags.len() > materials {
            return Err(refuse_here(format!(
                "the carrier export gives {} hidden-material flags for LOD {lod} but the mesh has {materials} material slots",
                flags.len()
            )));
        }
        out[lod] = (!flags.is_empty()).then(|| flags.clone());
    }
    Ok(out)
}

/// The serialized value of `DefaultHiddenMaterials`: count, then a byte per flag.
fn value_bytes(flags: &[bool]) -> Vec<u8> {
    let mut out = (flags.len() as i32).to_le_bytes().to_vec();
    out.extend(flags.iter().map(|&f| f as u8));
    out
}

/// The edits that put one LOD info block into the game's numbering, with
/// `flags` inserted as `DefaultHiddenMaterials` when given.
fn block_edits(visit: &StructVisit, field: FieldSlot, flags: Option<&[bool]>) -> Result<Vec<Edit>> {
    let stock = visit.header.values()?;
    let mut slots: Vec<(usize, bool)> = stock
        .iter()
        .map(|&(s, zero)| (if s >= field.slot { s + field.width } else { s }, zero))
        .collect();
    if flags.is_some() {
        let at = slots.partition_point(|&(s, _)| s < field.slot);
        slots.insert(at, (field.slot, false));
    }
    let slot_count = visit
        .slot_count
        .ok_or_else(|| Error::internal("a LOD info block without its slot count"))?
        + field.width;
    let header = UnversionedHeader::from_values(&slots, slot_count)?.to_bytes();
    let old_len = visit.header_end - visit.header_start;
    let header_changed = header != visit.header.to_bytes();
    let mut edits = Vec::new();
    match flags {
        None if header_changed => {
            edits.push(Edit::replace(visit.header_start, old_len, header));
        }
        None => {}
        Some(flags) => {
            let value = value_bytes(flags);
            let at = visit
                .values
                .iter()
                .find(|v| v.slot >= field.slot)
                .map_or(visit.end, |v| v.start);
            if at == visit.header_end {
                edits.push(Edit::replace(
                    visit.header_start,
                    old_len,
                    [header, value].concat(),
                ));
            } else {
                edits.push(Edit::replace(visit.header_start, old_len, header));
                edits.push(Edit::insert(at, value));
            }
        }
    }
    Ok(edits)
}

/// The elements of the mesh's `LODInfo` array, in LOD order.
fn lod_elements(recording: &Recording) -> Vec<&StructVisit> {
    let Some(value) = recording.object_block().and_then(|b| b.value("LODInfo")) else {
        return Vec::new();
    };
    recording
        .elements_within(value.start, value.end)
        .into_iter()
        .filter(|s| s.name.eq_ignore_ascii_case(LOD_INFO))
        .collect()
}

/// Plans the LOD info changes of SkeletalMesh export `index` (in stock layout).
#[allow(clippy::too_many_arguments)]
pub(crate) fn plan(
    package: &LegacyPackage,
    index: usize,
    views: &Views,
    recording: Option<&Recording>,
    layout: &MeshLayout,
    settings: &MarvelRivalsSection,
    package_name: &str,
    carrier: Option<&Carrier>,
) -> Result<LodPlan> {
    let (Some(field), Some(recording)) = (views.field, recording) else {
        let message = if views.game.is_none() {
            "its LOD infos need the game's `DefaultHiddenMaterials` layout, which only the game's mappings can place"
        } else {
            "its LOD infos need the game's `DefaultHiddenMaterials` layout, but the mappings' SkeletalMeshLODInfo has no DefaultHiddenMaterials (they are not Marvel Rivals' mappings)"
        };
        return Err(refuse(package, index, "SkeletalMesh", message).with_hint(
            "give the game's mappings (`[game] mappings`, or --mappings), or set `[marvel-rivals] hidden-materials = false` if the content already has the game's LOD info layout",
        ));
    };
    let elements = lod_elements(recording);
    let flags = hidden_flags(
        package,
        index,
        elements.len(),
        layout.material_count(),
        settings,
        package_name,
        carrier,
    )?;
    let mut edits = Vec::new();
    let mut renumbered = 0;
    for visit in recording.structs_named(LOD_INFO) {
        let lod = elements
            .iter()
            .position(|e| e.header_start == visit.header_start);
        let lod_flags = lod.and_then(|l| flags[l].as_deref());
        let block = block_edits(visit, field, lod_flags)?;
        renumbered += (!block.is_empty()) as usize;
        edits.extend(block);
    }
    let with_flags = flags.iter().filter(|f| f.is_some()).count();
    Ok(LodPlan {
        change: Change {
            export_index: index,
            what: crate::fixups::Change::HiddenMaterials {
                renumbered,
                lods: elements.len(),
                slot: field.slot,
                written: with_flags,
            },
            located_by: crate::fixups::LocatedBy::Mappings,
            edits,
        },
        expected: flags,
    })
}

/// Checks the LOD infos of a changed mesh, walked with the game's schema:
/// each holds exactly the flags written (none where none were).
pub(crate) fn verify(
    files: &PackageFiles,
    recording: &Recording,
    expected: &[Option<Vec<bool>>],
) -> Result<()> {
    let elements = lod_elements(recording);
    if elements.len() != expected.len() {
        return Err(Error::internal(format!(
            "{} LOD infos after the change, {} before",
            elements.len(),
            expected.len()
        )));
    }
    let stream = |at: u64, len: usize| -> Result<Vec<u8>> {
        let header = files.header.len() as u64;
        let start = at
            .checked_sub(header)
            .ok_or_else(|| Error::internal("a LOD info value inside the header"))?
            as usize;
        files
            .uexp
            .get(start..start + len)
            .map(<[u8]>::to_vec)
            .ok_or_else(|| Error::internal("a LOD info value past the .uexp"))
    };
    for (lod, (visit, flags)) in elements.iter().zip(expected).enumerate() {
        let value = visit.value(HIDDEN_MATERIALS);
        match (flags, value) {
            (None, None) => {}
            (None, Some(v)) if v.zero => {}
            (Some(flags), Some(v)) if !v.zero => {
                let bytes = stream(v.start, (v.end - v.start) as usize)?;
                if bytes != value_bytes(flags) {
                    return Err(Error::internal(format!(
                        "LOD info {lod}: DefaultHiddenMaterials reads {bytes:?} after the change"
                    )));
                }
            }
            _ => {
                return Err(Error::internal(format!(
                    "LOD info {lod}: DefaultHiddenMaterials is not what was written"
                )))
            }
        }
    }
    Ok(())
}
