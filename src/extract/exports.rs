//! Stage 2: the legacy export map from the Zen export map (one entry per
//! export, same order).
//!
//! Kept by the Zen package: name, class / super / template / outer, object
//! flags, serial size, the serial offset relative to the export data, the
//! filter flags, whether the export is public. The rest the engine's cook
//! derives from the objects; zenpak derives it from the export map by the
//! rules every engine-cooked package of the corpus follows (4.27–5.7, 56
//! packages, 1,187 exports):
//! - `bIsAsset`: a top-level, public export that is not a class default object;
//! - `bIsInheritedInstance`: a default subobject (`RF_DefaultSubObject`)
//!   whose template is itself a subobject (it comes from a parent class's
//!   default object, e.g. `Default__Character:CharMoveComp`);
//! - `bNotAlwaysLoadedForEditorGame`: false for classes, class default
//!   objects and what a class (not a default object) contains, true for
//!   everything else;
//! - `bGeneratePublicHash` (UE5): the export has a public hash without `RF_Public`;
//! - `bForcedExport`, the package GUID (before 5.0's removal) and package
//!   flags: false / zero, as in every cooked package.

use crate::error::{Error, Result};
use crate::legacy::{PackageIndex, ResolvedIndex};
use crate::version::ZenLayout;
use crate::zen::{ObjectIndexKind, PackageObjectIndex, ZenPackage};

use super::imports::{Imports, Outer};
use super::Name;

const RF_PUBLIC: u32 = 0x1;
const RF_CLASS_DEFAULT_OBJECT: u32 = 0x10;
const RF_DEFAULT_SUB_OBJECT: u32 = 0x40000;

/// Zen filter flag values.
const FILTER_NOT_FOR_CLIENT: u8 = 1;
const FILTER_NOT_FOR_SERVER: u8 = 2;

/// A legacy export before names get their indices and data its offsets.
#[derive(Debug, Clone)]
pub(super) struct DraftExport {
    pub(crate) class: PackageIndex,
    pub(crate) super_index: PackageIndex,
    pub(crate) template: PackageIndex,
    pub(crate) outer: PackageIndex,
    pub(crate) name: Name,
    pub(crate) flags: u32,
    pub(crate) serial_size: i64,
    /// The Zen export map's serial offset (UE5: in the export data; UE4:
    /// in the legacy header + `.uexp` stream).
    pub(crate) cooked_offset: u64,
    pub(crate) not_for_client: bool,
    pub(crate) not_for_server: bool,
    pub(crate) is_asset: bool,
    pub(crate) inherited_instance: bool,
    pub(crate) not_always_loaded_for_editor_game: bool,
    pub(crate) generate_public_hash: bool,
}

/// Maps a Zen object reference to a legacy package index.
pub(super) fn legacy_index(
    value: PackageObjectIndex,
    zen: &ZenPackage,
    imports: &Imports,
) -> std::result::Result<PackageIndex, String> {
    match value.kind() {
        ObjectIndexKind::Null => Ok(PackageIndex::NULL),
        ObjectIndexKind::Export => {
            if value.0 < zen.exports.len() as u64 {
                Ok(PackageIndex::from_export(value.0 as usize))
            } else {
                Err(format!(
                    "refers to export {}, but there are {}",
                    value.0,
                    zen.exports.len()
                ))
            }
        }
        _ => imports
            .index_of(value)
            .map(PackageIndex::from_import)
            .ok_or_else(|| {
                format!(
                    "refers to {}, which the import map does not list",
                    value.describe()
                )
            }),
    }
}

pub(super) fn build(zen: &ZenPackage, imports: &Imports) -> Result<Vec<DraftExport>> {
    let layout = zen.engine.zen_layout();
    let mut exports = Vec::with_capacity(zen.exports.len());
    for (i, e) in zen.exports.iter().enumerate() {
        let map = |value: PackageObjectIndex, field: &str| -> Result<PackageIndex> {
            legacy_index(value, zen, imports).map_err(|m| {
                Error::invalid(format!("its {field} {m}"))
                    .within(format!("export {i}"))
                    .within("export map")
            })
        };
        let base = zen
            .names
            .get(e.object_name.index() as usize)
            .filter(|_| e.object_name.kind() == Some(crate::names::MappedNameKind::Package))
            .ok_or_else(|| {
                Error::invalid(format!(
                    "its name refers to entry {} of a {}-name map",
                    e.object_name.index(),
                    zen.names.len()
                ))
                .within(format!("export {i}"))
                .within("export map")
            })?;
        let serial_size = i64::try_from(e.cooked_serial_size).map_err(|_| {
            Error::invalid("serial size out of range")
                .within(format!("export {i}"))
                .within("export map")
        })?;
        let public = match layout {
            ZenLayout::Ue4 => e.public_export_hash != PackageObjectIndex::NULL.0,
            _ => e.public_export_hash != 0,
        };
        exports.push(DraftExport {
            class: map(e.class_index, "class")?,
            super_index: map(e.super_index, "super")?,
            template: map(e.template_index, "template")?,
            outer: map(e.outer_index, "outer")?,
            name: Name::new(base.text.clone(), e.object_name.number),
            flags: e.object_flags,
            serial_size,
            cooked_offset: e.cooked_serial_offset,
            not_for_client: e.filter_flags == FILTER_NOT_FOR_CLIENT,
            not_for_server: e.filter_flags == FILTER_NOT_FOR_SERVER,
            is_asset: e.outer_index.is_null()
                && e.object_flags & RF_PUBLIC != 0
                && e.object_flags & RF_CLASS_DEFAULT_OBJECT == 0,
            inherited_instance: false,
            not_always_loaded_for_editor_game: true,
            generate_public_hash: public && e.object_flags & RF_PUBLIC == 0,
        });
        if exports[i].outer.is_import() {
            return Err(Error::invalid(
                "its outer is an import; a cooked export's outer is an export or the package",
            )
            .within(format!("export {i}"))
            .within("export map"));
        }
    }
    for i in 0..exports.len() {
        exports[i].inherited_instance = is_inherited_instance(&exports, imports, i);
        exports[i].not_always_loaded_for_editor_game = !needs_load_for_editor_game(&exports, i);
    }
    Ok(exports)
}

/// A default subobject whose template is a subobject (not a top-level object).
fn is_inherited_instance(exports: &[DraftExport], imports: &Imports, i: usize) -> bool {
    let e = &exports[i];
    if e.flags & RF_DEFAULT_SUB_OBJECT == 0 {
        return false;
    }
    match e.template.resolve() {
        ResolvedIndex::Export(t) => !exports[t].outer.is_null(),
        ResolvedIndex::Import(t) => match imports.imports.get(t).map(|d| &d.outer) {
            Some(Outer::Import(o)) => imports.imports[*o].outer != Outer::None,
            _ => false,
        },
        ResolvedIndex::Null => false,
    }
}

fn is_class(exports: &[DraftExport], i: usize) -> bool {
    exports
        .iter()
        .any(|e| e.class == PackageIndex::from_export(i))
}

/// Classes, class default objects and everything a class (not a default
/// object) contains are loaded in the editor's game mode.
fn needs_load_for_editor_game(exports: &[DraftExport], i: usize) -> bool {
    let mut current = i;
    for _ in 0..=exports.len() {
        let e = &exports[current];
        if is_class(exports, current) || e.flags & RF_CLASS_DEFAULT_OBJECT != 0 {
            return current == i || exports[current].flags & RF_CLASS_DEFAULT_OBJECT == 0;
        }
        let Some(outer) = e.outer.export() else {
            return false;
        };
        current = outer;
    }
    false
}
