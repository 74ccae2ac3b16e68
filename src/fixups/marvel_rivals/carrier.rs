//! The carrier: an asset-user-data export that the Marvel Rivals editor
//! plugins attach to a SkeletalMesh to carry what a stock editor cannot
//! author — per material slot gameplay tags (`MaterialSlotTags`: entries of
//! `MaterialSlotName` + `GameplayTags`) and per-LOD hidden materials
//! (`LODHiddenMaterials`: entries with a `HiddenMaterials` bool array).
//! The game does not have the plugins' classes, so the carrier's imports
//! of them are remapped to `/Script/Engine.AssetUserData` (the engine class
//! they derive from); the carrier itself stays in the package.
//!
//! Reading its (unversioned) properties needs the plugin's class schema in
//! the mappings; without it the profile refuses rather than skip the tags.

use crate::legacy::{FName, LegacyPackage, PackageFiles, ResolvedIndex};
use crate::mappings::{Mappings, PropertyType};
use crate::properties::{walk_export_recorded, PackageContext};
use crate::{Error, Result};

use super::refuse;
use crate::legacy::edit::header_name;

/// The plugin modules whose classes carry the data.
pub(crate) const PLUGIN_MODULES: [&str; 2] = [
    "/Script/MaterialTagPlugin",
    "/Script/RivalsMeshMaterialManager",
];

/// What a carrier export holds.
#[derive(Debug, Clone)]
pub(crate) struct Carrier {
    pub(crate) export_index: usize,
    /// (material slot name, tags) in the carrier's order.
    pub(crate) slot_tags: Vec<(FName, Vec<FName>)>,
    /// Per LOD: one flag per material slot.
    pub(crate) lod_hidden: Vec<Vec<bool>>,
}

fn is_plugin_module(name: &str) -> bool {
    PLUGIN_MODULES.iter().any(|m| m.eq_ignore_ascii_case(name))
}

/// The carrier exports of a package: those whose class is a plugin module's class.
pub(crate) fn find(package: &LegacyPackage) -> Vec<usize> {
    (0..package.exports.len())
        .filter(|&i| match package.exports[i].class_index.resolve() {
            ResolvedIndex::Import(c) => package
                .import_package_name(c)
                .is_ok_and(|p| is_plugin_module(&p)),
            _ => false,
        })
        .collect()
}

/// The FName stored at an absolute offset of the header + .uexp stream.
fn fname_at(files: &PackageFiles, offset: u64) -> Result<FName> {
    let header = files.header.len() as u64;
    let bytes = offset
        .checked_sub(header)
        .and_then(|at| files.uexp.get(at as usize..at as usize + 8))
        .ok_or_else(|| Error::internal(format!("no FName at offset {offset}")))?;
    let word = |i: usize| u32::from_le_bytes([bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]]);
    Ok(FName::new(word(0), word(4)))
}

/// Reads carrier export `index` with `mappings` (which must hold its class).
pub(crate) fn read(
    files: &PackageFiles,
    package: &LegacyPackage,
    cx: &PackageContext,
    mappings: Option<&Mappings>,
    index: usize,
) -> Result<Carrier> {
    let class = crate::properties::export_class_name(package, index)?;
    let unreadable = |why: String| {
        refuse(package, index, "carrier", why).with_hint(
            "add the plugin's classes to the mappings (`[game] mappings`), give the tags and hidden materials in `[[marvel-rivals.mesh]]`, or set `[marvel-rivals] carrier = false`",
        )
    };
    if !cx.unversioned {
        return Err(unreadable(
            "a carrier in a package with tagged (versioned) properties is not supported".into(),
        ));
    }
    if mappings.is_none_or(|m| m.struct_schema(&class).is_none()) {
        return Err(unreadable(format!(
            "its class `{class}` is not in the mappings, so its tags and hidden materials cannot be read"
        )));
    }
    let (recording, _, _) = walk_export_recorded(files, package, cx, mappings, index)
        .map_err(|e| e.within(format!("carrier export {index}")))?;
    let object = recording
        .object_block()
        .ok_or_else(|| Error::internal("the carrier walk has no object block"))?;
    let referenced = package
        .summary
        .names_referenced_from_export_data_count
        .map_or(package.names.len(), |n| n.max(0) as usize);
    let mut carrier = Carrier {
        export_index: index,
        slot_tags: Vec::new(),
        lod_hidden: Vec::new(),
    };
    if let Some(list) = object.value("MaterialSlotTags") {
        for entry in recording.elements_within(list.start, list.end) {
            let Some(slot) = entry.value("MaterialSlotName") else {
                continue;
            };
            let slot_names = recording.names_within(slot.start, slot.end);
            let [slot_at] = slot_names.as_slice() else {
                return Err(unreadable(
                    "a MaterialSlotTags entry has no slot name".into(),
                ));
            };
            let tags = match entry.value("GameplayTags") {
                Some(t) => recording
                    .names_within(t.start, t.end)
                    .into_iter()
                    .map(|at| fname_at(files, at))
                    .collect::<Result<Vec<_>>>()?,
                None => Vec::new(),
            };
            if let Some(t) = tags.iter().find(|t| t.index as usize >= referenced) {
                return Err(Error::invalid(format!(
                    "the carrier's tag name {} is not among the names the export data refers to",
                    t.index
                )));
            }
            carrier.slot_tags.push((fname_at(files, *slot_at)?, tags));
        }
    }
    if let Some(list) = object.value("LODHiddenMaterials") {
        for entry in recording.elements_within(list.start, list.end) {
            let Some(flags) = entry.value("HiddenMaterials") else {
                carrier.lod_hidden.push(Vec::new());
                continue;
            };
            let one_byte = matches!(&flags.ty, PropertyType::Array(inner)
                if matches!(**inner, PropertyType::Bool | PropertyType::Byte));
            if !one_byte {
                return Err(unreadable(format!(
                    "HiddenMaterials has the type {}, not an array of bool or uint8",
                    flags.ty.describe()
                )));
            }
            if flags.zero {
                carrier.lod_hidden.push(Vec::new());
                continue;
            }
            let header = files.header.len() as u64;
            let bytes = flags
                .start
                .checked_sub(header)
                .and_then(|s| {
                    files
                        .uexp
                        .get(s as usize + 4..(flags.end - header) as usize)
                })
                .ok_or_else(|| Error::internal("HiddenMaterials outside the .uexp"))?;
            carrier
                .lod_hidden
                .push(bytes.iter().map(|&b| b != 0).collect());
        }
    }
    Ok(carrier)
}

/// The carrier of SkeletalMesh export `mesh`, if any (a carrier belongs to
/// the mesh it is inside of, or to the package's only mesh).
pub(crate) fn for_mesh<'c>(
    package: &LegacyPackage,
    carriers: &'c [Carrier],
    mesh: usize,
    meshes: &[usize],
) -> Result<Option<&'c Carrier>> {
    let mut found = carriers
        .iter()
        .filter(|c| super::skeletal::owning_mesh(package, c.export_index, meshes) == Some(mesh));
    let first = found.next();
    if found.next().is_some() {
        return Err(refuse(
            package,
            mesh,
            "SkeletalMesh",
            "it has more than one carrier export; keep one",
        ));
    }
    Ok(first)
}

/// Remaps every import of the plugin modules to the engine's
/// `AssetUserData`: the module to `/Script/Engine`, its classes to
/// `AssetUserData`, their default objects to `Default__AssetUserData`.
/// Returns one line per import changed.
pub(crate) fn remap_imports(package: &mut LegacyPackage) -> Result<Vec<String>> {
    let mut notes = Vec::new();
    let plugin_imports: Vec<usize> = (0..package.imports.len())
        .filter(|&i| {
            package
                .import_package_name(i)
                .is_ok_and(|p| is_plugin_module(&p))
        })
        .collect();
    let befores: Vec<String> = plugin_imports
        .iter()
        .map(|&i| package.import_path(i))
        .collect::<Result<_>>()?;
    for (i, before) in plugin_imports.into_iter().zip(befores) {
        let import = &package.imports[i];
        let object = package.name(import.object_name)?;
        let class = package.name(import.class_name)?;
        let (object_name, class_package, class_name) = if import.outer_index.is_null() {
            ("/Script/Engine", None, None)
        } else if class == "Class" {
            ("AssetUserData", None, None)
        } else if object.starts_with("Default__") {
            (
                "Default__AssetUserData",
                Some("/Script/Engine"),
                Some("AssetUserData"),
            )
        } else {
            return Err(Error::unsupported(format!(
                "the package imports `{before}` from a Marvel Rivals editor plugin; only its carrier class can be remapped to /Script/Engine.AssetUserData"
            ))
            .with_hint("remove the reference from the asset, or set `[marvel-rivals] carrier = false`"));
        };
        let object_name = header_name(package, object_name);
        let class_package = class_package.map(|n| header_name(package, n));
        let class_name = class_name.map(|n| header_name(package, n));
        let import = &mut package.imports[i];
        import.object_name = object_name;
        if let Some(p) = class_package {
            import.class_package = p;
        }
        if let Some(c) = class_name {
            import.class_name = c;
        }
        notes.push(format!(
            "import {i} `{before}` remapped to `{}`",
            package.import_path(i)?
        ));
    }
    Ok(notes)
}
