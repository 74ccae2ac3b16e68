//! StaticMesh LOD screen sizes. A cooked `UStaticMesh` ends with the tail
//! of `FStaticMeshRenderData` — bounds (7 reals), `bLODsShareStaticLighting`
//! (a 32-bit bool; a flags byte from 5.6), eight `FPerPlatformFloat` screen
//! sizes (32-bit "cooked" bool + float), from 5.4 an `FStripDataFlags` —
//! then the SpeedTree wind flag (32-bit bool) and `StaticMaterials` (count +
//! entries of `static_material_size` bytes), which end the export. The
//! game's fork stores each screen size in 16 bytes: cooked bool, value, a
//! 32-bit count that is 1 in the game's meshes, and a 32-bit value (0.0 for
//! LOD 0 with a screen size, `0x55000000` for the others), +64 bytes per mesh.
//!
//! The tail is located from the export's end: the materials count comes
//! from the `StaticMaterials` property (with mappings) or is the one count
//! for which the whole chain parses (structure); either way the chain —
//! count, wind flag 0, strip flags, eight cooked screen sizes, the lighting
//! flag, finite bounds with non-negative extent — must hold. It must hold in
//! exactly one of the stock and the game's layout: the game's is left as it
//! is, a mesh that reads both ways or neither is refused.

use crate::binary::Reader;
use crate::fixups::LocatedBy;
use crate::legacy::{LegacyPackage, PackageFiles};
use crate::mappings::Mappings;
use crate::properties::{walk_export_recorded, PackageContext};
use crate::version::EngineVersion;
use crate::{Error, Result};

use super::{refuse, Change};
use crate::legacy::edit::Edit;

/// `MAX_STATIC_MESH_LODS`: the screen size array's fixed length.
pub(crate) const SCREEN_SIZES: usize = 8;
/// Bytes of a stock cooked screen size and of the game's.
const STOCK_ENTRY: usize = 8;
const GAME_ENTRY: usize = 16;
/// The 32-bit value the game's meshes carry in the extra field of LODs past 0.
pub const UNUSED_LOD_VALUE: u32 = 0x5500_0000;
/// StaticMaterials counts above this are not considered (real meshes have a few).
const MAX_MATERIALS: usize = 1024;

/// The screen sizes of a mesh: where the first starts and the values.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ScreenSizes {
    /// Absolute offset of the first entry.
    pub(crate) offset: u64,
    pub(crate) values: [f32; SCREEN_SIZES],
    /// Offset of the StaticMaterials count.
    pub(crate) materials_offset: u64,
}

/// The 8 bytes the game adds after a stock screen size entry.
pub(crate) fn game_extra(lod: usize, value: f32) -> [u8; 8] {
    let second = if lod == 0 && value > 0.0 {
        0.0f32.to_bits()
    } else {
        UNUSED_LOD_VALUE
    };
    let mut out = [0u8; 8];
    out[..4].copy_from_slice(&1i32.to_le_bytes());
    out[4..].copy_from_slice(&second.to_le_bytes());
    out
}

/// The chain from a materials count at slice position `count_at` back to
/// the bounds, in the stock (`game` false) or the game's layout.
fn chain(
    data: &[u8],
    base: u64,
    count_at: usize,
    engine: EngineVersion,
    game: bool,
) -> Option<ScreenSizes> {
    let r = |at: usize| -> Option<[u8; 4]> { data.get(at..at + 4)?.try_into().ok() };
    let wind_at = count_at.checked_sub(4)?;
    if i32::from_le_bytes(r(wind_at)?) != 0 {
        return None;
    }
    let strip = if engine.static_mesh_render_data_ends_with_strip_flags() {
        2
    } else {
        0
    };
    let entry = if game { GAME_ENTRY } else { STOCK_ENTRY };
    let start = wind_at.checked_sub(strip + SCREEN_SIZES * entry)?;
    let mut values = [0f32; SCREEN_SIZES];
    for (lod, v) in values.iter_mut().enumerate() {
        let at = start + lod * entry;
        if i32::from_le_bytes(r(at)?) != 1 {
            return None;
        }
        *v = f32::from_le_bytes(r(at + 4)?);
        if !v.is_finite() || *v < 0.0 {
            return None;
        }
        if game && i32::from_le_bytes(r(at + 8)?) != 1 {
            return None;
        }
    }
    let flags_at = if engine.static_mesh_render_flags_are_a_byte() {
        let at = start.checked_sub(1)?;
        if data[at] > 0x0f {
            return None;
        }
        at
    } else {
        let at = start.checked_sub(4)?;
        if !matches!(i32::from_le_bytes(r(at)?), 0 | 1) {
            return None;
        }
        at
    };
    let real = engine.real_size();
    let bounds_at = flags_at.checked_sub(7 * real)?;
    let mut reader = Reader::new(&data[bounds_at..flags_at]);
    for i in 0..7 {
        let v = if real == 8 {
            reader.f64().ok()?
        } else {
            reader.f32().ok()? as f64
        };
        if !v.is_finite() || (i >= 3 && v < 0.0) {
            return None;
        }
    }
    Some(ScreenSizes {
        offset: base + start as u64,
        values,
        materials_offset: base + count_at as u64,
    })
}

/// Where the StaticMaterials count would be for `n` materials, if it says `n`.
fn count_position(data: &[u8], n: usize, size: usize) -> Option<usize> {
    let at = data.len().checked_sub(4 + n.checked_mul(size)?)?;
    let stored = i32::from_le_bytes(data.get(at..at + 4)?.try_into().ok()?);
    (stored >= 0 && stored as usize == n).then_some(at)
}

/// What the profile does to one StaticMesh.
pub(crate) enum Planned {
    Change(Change, ScreenSizes),
    AlreadyGameLayout(crate::fixups::Unchanged),
}

/// Locates the screen sizes of StaticMesh export `index` and plans their change.
pub(crate) fn plan(
    files: &PackageFiles,
    package: &LegacyPackage,
    cx: &PackageContext,
    mappings: Option<&Mappings>,
    index: usize,
) -> Result<Planned> {
    let (stock, game, located_by) = locate(files, package, cx, mappings, index)?;
    match (stock, game) {
        (Some(sizes), None) => {
            let edits = (0..SCREEN_SIZES)
                .map(|lod| {
                    Edit::insert(
                        sizes.offset + ((lod + 1) * STOCK_ENTRY) as u64,
                        game_extra(lod, sizes.values[lod]).to_vec(),
                    )
                })
                .collect();
            Ok(Planned::Change(
                Change {
                    export_index: index,
                    what: crate::fixups::Change::ScreenSizesWidened {
                        marker: UNUSED_LOD_VALUE,
                    },
                    located_by,
                    edits,
                },
                sizes,
            ))
        }
        (None, Some(sizes)) => Ok(Planned::AlreadyGameLayout(
            crate::fixups::Unchanged::StaticMeshInGameLayout {
                export: index,
                offset: sizes.offset,
            },
        )),
        (Some(_), Some(_)) => Err(refuse(
            package,
            index,
            "StaticMesh",
            "its screen sizes read both in the stock and in the game's layout; refusing to guess",
        )),
        (None, None) => Err(refuse(
            package,
            index,
            "StaticMesh",
            "its render data tail (bounds, lighting flag, 8 screen sizes, SpeedTree wind flag, StaticMaterials) cannot be located from the export's end",
        )
        .with_hint(
            "meshes with SpeedTree wind data are not supported; otherwise give the game's mappings, or set `[marvel-rivals] screen-sizes = false`",
        )),
    }
}

/// The screen sizes in the stock and in the game's layout (each `None` when
/// that layout does not hold), and how the materials count was found.
#[allow(clippy::type_complexity)]
pub(crate) fn locate(
    files: &PackageFiles,
    package: &LegacyPackage,
    cx: &PackageContext,
    mappings: Option<&Mappings>,
    index: usize,
) -> Result<(Option<ScreenSizes>, Option<ScreenSizes>, LocatedBy)> {
    let data = files.export_data(package, index)?;
    let base = package.exports[index].serial_offset as u64;
    let size = cx.engine.static_material_size();
    if let Some(m) = mappings {
        let (recording, native_start, _) = walk_export_recorded(files, package, cx, Some(m), index)
            .map_err(|e| e.within(format!("StaticMesh export {index}")))?;
        let count = match recording
            .object_block()
            .and_then(|b| b.value("StaticMaterials"))
        {
            Some(v) if !v.zero => {
                let at = (v.start - base) as usize;
                let raw = data
                    .get(at..at + 4)
                    .ok_or_else(|| Error::internal("StaticMaterials outside the export"))?;
                i32::from_le_bytes(raw.try_into().expect("4 bytes")).max(0) as usize
            }
            _ => 0,
        };
        let native = (native_start - base) as usize;
        let Some(at) = count_position(data, count, size).filter(|&at| at > native) else {
            return Err(refuse(
                package,
                index,
                "StaticMesh",
                format!(
                    "its StaticMaterials property has {count} entries but the export does not end with that many {size}-byte materials"
                ),
            ));
        };
        let stock = chain(data, base, at, cx.engine, false).filter(|s| s.offset >= native_start);
        let game = chain(data, base, at, cx.engine, true).filter(|s| s.offset >= native_start);
        let structure = structural(data, base, cx.engine, size);
        let agrees = match &structure {
            (Some(s), None) => stock.as_ref() == Some(s),
            (None, Some(g)) => game.as_ref() == Some(g),
            _ => false,
        };
        return Ok((
            stock,
            game,
            if agrees {
                LocatedBy::MappingsAndStructure
            } else {
                LocatedBy::Mappings
            },
        ));
    }
    let (stock, game) = structural(data, base, cx.engine, size);
    Ok((stock, game, LocatedBy::Structure))
}

/// The layouts that hold for exactly one materials count (else `None`).
fn structural(
    data: &[u8],
    base: u64,
    engine: EngineVersion,
    size: usize,
) -> (Option<ScreenSizes>, Option<ScreenSizes>) {
    let mut stock = Vec::new();
    let mut game = Vec::new();
    for n in 0..=MAX_MATERIALS {
        let Some(at) = count_position(data, n, size) else {
            if 4 + n * size > data.len() {
                break;
            }
            continue;
        };
        stock.extend(chain(data, base, at, engine, false));
        game.extend(chain(data, base, at, engine, true));
    }
    let one = |mut v: Vec<ScreenSizes>| (v.len() == 1).then(|| v.remove(0));
    (one(stock), one(game))
}

/// Checks a changed mesh: its screen sizes read in the game's layout with the same values.
pub(crate) fn verify(
    files: &PackageFiles,
    package: &LegacyPackage,
    cx: &PackageContext,
    index: usize,
    before: &ScreenSizes,
) -> Result<()> {
    let data = files.export_data(package, index)?;
    let base = package.exports[index].serial_offset as u64;
    let size = cx.engine.static_material_size();
    let (stock, game) = structural(data, base, cx.engine, size);
    match (stock, game) {
        (None, Some(g)) if g.values == before.values => Ok(()),
        _ => Err(Error::internal(format!(
            "StaticMesh export {index}: after the change its screen sizes do not read in the game's layout"
        ))),
    }
}
