//! The native data of a cooked `USkeletalMesh` export, as far as the
//! materials and the reference skeleton: after the property block and the
//! object GUID flag come `FStripDataFlags` (2 bytes), the imported
//! `FBoxSphereBounds` (origin, extent, radius: 7 reals), the materials array
//! (`i32` count, then `FSkeletalMaterial` entries) and `FReferenceSkeleton`
//! (bone infos: FName + parent `i32`; reference pose: `FTransform` of 10
//! reals each; name → bone index map). Layout facts per release are in the
//! version table (`skeletal_material_size`, `real_size`).

use serde::Serialize;

use crate::binary::Reader;
use crate::error::{Context, Result};
use crate::legacy::FName;
use crate::properties::PackageContext;

/// Bytes of `FStripDataFlags`.
pub(crate) const STRIP_FLAGS_SIZE: usize = 2;

/// Materials array entries are at most this many in any real mesh; the
/// structure search rejects larger counts at once.
const MAX_MATERIALS: usize = 4096;
const MAX_BONES: usize = 65536;
/// Tags in one material slot's container; real containers hold a handful.
const MAX_TAGS: usize = 256;

/// `FBoxSphereBounds`: origin, box extent, sphere radius.
pub(crate) fn bounds_size(cx: &PackageContext) -> usize {
    7 * cx.engine.real_size()
}

/// Where a mesh's materials and reference skeleton are (absolute offsets,
/// header + .uexp stream).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MeshLayout {
    /// Offset of the materials count.
    pub(crate) materials_offset: u64,
    /// End offset of each material entry (where a tag container goes, or
    /// starts in a package already in the game's layout).
    pub(crate) entry_ends: Vec<u64>,
    /// Each material's `MaterialSlotName`.
    pub slot_names: Vec<FName>,
    /// In a package already in the game's layout: each entry's tags.
    pub(crate) tags: Vec<Vec<FName>>,
    pub bone_count: usize,
    /// End of the reference skeleton's name → index map.
    pub(crate) skeleton_end: u64,
}

impl MeshLayout {
    pub fn material_count(&self) -> usize {
        self.entry_ends.len()
    }
}

/// Parses materials + reference skeleton at slice position `pos` of an
/// export's data (`data` starts at absolute offset `base`). `tagged` says
/// each entry is followed by an `FGameplayTagContainer` (a package already
/// in Marvel Rivals' layout).
pub fn parse_at(
    data: &[u8],
    base: u64,
    pos: usize,
    cx: &PackageContext,
    tagged: bool,
) -> Result<MeshLayout> {
    let mut r = Reader::with_base(data, base);
    r.seek(pos)?;
    let materials_offset = r.offset();
    let count = r.count_i32(40).context("materials count")?;
    if count == 0 || count > MAX_MATERIALS {
        return Err(r.error(format!("implausible material count {count}")));
    }
    let mut entry_ends = Vec::with_capacity(count);
    let mut slot_names = Vec::with_capacity(count);
    let mut tags = Vec::new();
    for i in 0..count {
        slot_names.push(material(&mut r, cx).with_context(|| format!("material {i}"))?);
        entry_ends.push(r.offset());
        if tagged {
            tags.push(tag_container(&mut r, cx).with_context(|| format!("material {i} tags"))?);
        }
    }
    let bone_count = reference_skeleton(&mut r, cx).context("reference skeleton")?;
    Ok(MeshLayout {
        materials_offset,
        entry_ends,
        slot_names,
        tags,
        bone_count,
        skeleton_end: r.offset(),
    })
}

/// An `FGameplayTagContainer`: `i32` count, then that many tag FNames.
fn tag_container(r: &mut Reader, cx: &PackageContext) -> Result<Vec<FName>> {
    let at = r.pos();
    let n = r.count_i32(8).context("gameplay tag count")?;
    if n > MAX_TAGS {
        return Err(r.error_at(at, format!("implausible gameplay tag count {n}")));
    }
    (0..n).map(|_| name(r, cx)).collect()
}

/// One cooked `FSkeletalMaterial` (see `EngineVersion::skeletal_material_size`);
/// returns its slot name.
fn material(r: &mut Reader, cx: &PackageContext) -> Result<FName> {
    package_index(r, cx).context("material interface")?;
    let slot_name = name(r, cx).context("material slot name")?;
    if r.bool32().context("has imported slot name")? {
        name(r, cx).context("imported material slot name")?;
    }
    // FMeshUVChannelInfo: initialized, override densities (bool32 each), 4 densities.
    r.bool32().context("UV channel data")?;
    r.bool32().context("UV channel data")?;
    for _ in 0..4 {
        real_f32(r).context("UV density")?;
    }
    if cx.engine.skeletal_material_has_overlay() {
        package_index(r, cx).context("overlay material interface")?;
    }
    Ok(slot_name)
}

/// `FReferenceSkeleton`; returns the bone count.
fn reference_skeleton(r: &mut Reader, cx: &PackageContext) -> Result<usize> {
    let bones = r.count_i32(12).context("bone count")?;
    if bones == 0 || bones > MAX_BONES {
        return Err(r.error(format!("implausible bone count {bones}")));
    }
    for i in 0..bones {
        name(r, cx).with_context(|| format!("bone {i} name"))?;
        let at = r.pos();
        let parent = r.i32()?;
        let ok = if i == 0 {
            parent == -1
        } else {
            parent >= 0 && (parent as usize) < i
        };
        if !ok {
            return Err(r.error_at(at, format!("bone {i} has parent {parent}")));
        }
    }
    let real = cx.engine.real_size();
    let poses = r.count_i32(10 * real).context("reference pose count")?;
    if poses != bones {
        return Err(r.error(format!("{poses} reference poses for {bones} bones")));
    }
    for _ in 0..poses * 10 {
        let v = if real == 8 { r.f64()? } else { r.f32()? as f64 };
        if !v.is_finite() {
            return Err(r.error("reference pose value is not finite"));
        }
    }
    let mapped = r.count_i32(12).context("bone name map count")?;
    if mapped != bones {
        return Err(r.error(format!(
            "bone name map has {mapped} entries for {bones} bones"
        )));
    }
    for _ in 0..mapped {
        name(r, cx)?;
        let at = r.pos();
        let index = r.i32()?;
        if index < 0 || index as usize >= bones {
            return Err(r.error_at(at, format!("bone name map points at bone {index}")));
        }
    }
    Ok(bones)
}

/// Checks strip flags and bounds that end at `pos` (plausible, finite, non-negative extent).
pub(crate) fn bounds_plausible(data: &[u8], pos: usize, cx: &PackageContext) -> bool {
    let size = bounds_size(cx);
    let Some(start) = pos.checked_sub(size) else {
        return false;
    };
    let real = cx.engine.real_size();
    let mut r = Reader::new(&data[start..pos]);
    let mut values = [0f64; 7];
    for v in &mut values {
        *v = match if real == 8 {
            r.f64()
        } else {
            r.f32().map(f64::from)
        } {
            Ok(v) => v,
            Err(_) => return false,
        };
    }
    values.iter().all(|v| v.is_finite()) && values[3..].iter().all(|&v| v >= 0.0)
}

/// Every position of `data` where the chain strip flags → bounds →
/// materials (with tag containers when `tagged`) → reference skeleton
/// parses. A real mesh has exactly one in its own layout.
pub(crate) fn search_by_structure(
    data: &[u8],
    base: u64,
    cx: &PackageContext,
    tagged: bool,
) -> Vec<MeshLayout> {
    let first = STRIP_FLAGS_SIZE + bounds_size(cx);
    let mut found = Vec::new();
    if data.len() < first + 4 {
        return found;
    }
    for pos in first..data.len() - 4 {
        let count = i32::from_le_bytes([data[pos], data[pos + 1], data[pos + 2], data[pos + 3]]);
        if count <= 0 || count as usize > MAX_MATERIALS {
            continue;
        }
        if !bounds_plausible(data, pos, cx) {
            continue;
        }
        if let Ok(layout) = parse_at(data, base, pos, cx, tagged) {
            found.push(layout);
        }
    }
    found
}

fn package_index(r: &mut Reader, cx: &PackageContext) -> Result<i32> {
    let index = crate::legacy::PackageIndex::read_checked(r, cx.import_count, cx.export_count)?;
    Ok(index.0)
}

fn name(r: &mut Reader, cx: &PackageContext) -> Result<FName> {
    let at = r.pos();
    let index = r.i32()?;
    let number = r.i32()?;
    if index < 0 || index as usize >= cx.names.len() || number < 0 {
        return Err(r.error_at(
            at,
            format!("FName ({index}, {number}) is not a valid name of this package"),
        ));
    }
    Ok(FName::new(index as u32, number as u32))
}

fn real_f32(r: &mut Reader) -> Result<f32> {
    let at = r.pos();
    let v = r.f32()?;
    if !v.is_finite() {
        return Err(r.error_at(at, "value is not a finite float"));
    }
    Ok(v)
}
