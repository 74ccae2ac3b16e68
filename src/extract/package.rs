//! Stage 5: the legacy package itself — summary, tables, header size, the
//! `.uexp` — from the stages before.
//!
//! Summary values the Zen package does not carry (each as the engine's
//! cook writes it, checked against the engine-cooked packages of the corpus):
//! - file versions: the Zen versioning info when the package is versioned,
//!   else 0 (unversioned) with the release's legacy file version;
//! - `PackageName`: the package name (UE5), `None` (UE4 cooks);
//! - `PackageSource`: `StrCrc_DEPRECATED` of the upper-cased file base name,
//!   as non-shipping editors cook it (every engine cook of the corpus);
//! - `SavedHash` (5.6+): BLAKE3-160 of the header (hash field zeroed) and the
//!   `.uexp` without its closing tag (every 5.6/5.7 engine cook of the corpus);
//! - `Guid` (before 5.6): the engine writes a fresh random GUID per save;
//!   zenpak writes the first 16 bytes of the same BLAKE3 hash, so it is
//!   unique per package and the output stays reproducible;
//! - one generation (export count, name count), empty engine versions, no
//!   chunk ids, payload TOC -1, asset registry data `0` (no tags), an empty
//!   depends list per export — as in every cooked package of the corpus;
//! - the header is padded with zeros to the size the package was cooked
//!   with (`CookedHeaderSize`, or for UE4 the first export's offset) when it
//!   comes out shorter, so serial offsets and the Zen summary match again;
//! - data resources (5.2+): the Zen bulk-data map with flags 0, raw size =
//!   serial size and the release's table version; the owning export is not
//!   carried and becomes the package's asset export.

use std::borrow::Cow;

use crate::error::{Error, Result};
use crate::legacy::{
    str_crc_deprecated, DataResource, DataResources, FileVersions, Generation, LegacyPackage,
    ObjectExport, ObjectImport, PackageIndex, Section, DATA_RESOURCE_VERSION_COOKED_INDEX,
    PACKAGE_FILE_TAG,
};
use crate::version::{EngineVersion, ZenLayout};
use crate::zen::{ExportCommand, ZenPackage};

use super::dependencies::ExportDependencies;
use super::exports::DraftExport;
use super::imports::{Imports, Outer};
use super::names::NameMap;

/// The finished legacy package (its `.uexp` borrowed from the Zen export
/// data when it is that data as it is: 5.3+).
pub(super) struct Assembled<'a> {
    pub(crate) header: Vec<u8>,
    pub(crate) export_data: Cow<'a, [u8]>,
    /// Things the output had to approximate.
    pub(crate) notes: Vec<String>,
}

/// The header sections in the order UE 4.26–5.7 cooks write them (corpus:
/// every cooked package). Data resources follow when there are any.
fn section_layout(engine: EngineVersion) -> Vec<Section> {
    let mut layout = vec![Section::Names];
    let versions = FileVersions::of_engine(engine);
    if versions.has_soft_object_path_list() {
        layout.push(Section::SoftObjectPaths);
    }
    layout.extend([Section::Imports, Section::Exports]);
    if versions.has_verse_cells() {
        layout.extend([Section::CellImports, Section::CellExports]);
    }
    layout.extend([
        Section::Depends,
        Section::AssetRegistryData,
        Section::PreloadDependencies,
    ]);
    layout
}

pub(super) struct Parts<'a, 'd> {
    /// The header (its `export_data` is not used: see `export_data`).
    pub(crate) zen: &'a ZenPackage,
    /// The export data that follows the Zen header in the chunk.
    pub(crate) export_data: &'d [u8],
    pub(crate) package_name: &'a str,
    pub(crate) imports: &'a Imports,
    pub(crate) exports: &'a [DraftExport],
    pub(crate) dependencies: &'a [ExportDependencies],
    pub(crate) names: NameMap,
}

pub(super) fn assemble<'d>(parts: Parts<'_, 'd>) -> Result<Assembled<'d>> {
    let zen = parts.zen;
    let engine = zen.engine;
    let layout = engine.zen_layout();
    let mut notes = Vec::new();
    let mut package = LegacyPackage::new_cooked(
        engine,
        (layout != ZenLayout::Ue4).then_some(parts.package_name),
    );
    apply_versioning(&mut package, zen);
    let s = &mut package.summary;
    s.package_flags = zen.summary.package_flags;
    s.package_source = str_crc_deprecated(
        &parts
            .package_name
            .rsplit('/')
            .next()
            .unwrap_or_default()
            .to_uppercase(),
    );
    if layout != ZenLayout::Ue4 {
        s.names_referenced_from_export_data_count =
            Some(parts.names.referenced_from_export_data as i32);
    }
    package.imports = legacy_imports(&parts);
    package.exports = legacy_exports(&parts);
    package.names = parts.names.entries;
    package.depends_map = vec![Vec::new(); package.exports.len()];
    flatten_dependencies(&mut package, parts.dependencies);
    package.data_resources = data_resources(zen, parts.exports);
    package.layout = section_layout(engine);
    package
        .raw_sections
        .insert(Section::AssetRegistryData, vec![0; 4]);
    package.summary.generations = vec![Generation {
        export_count: package.exports.len() as i32,
        name_count: package.names.len() as i32,
    }];

    let natural = package.header_size()?;
    let target = cooked_header_size(zen, parts.exports);
    match target {
        Some(t) if t > natural => package.header_padding = t - natural,
        Some(t) if t < natural => notes.push(format!(
            "the rebuilt header is {} bytes longer than the {t}-byte header the package was cooked with",
            natural - t
        )),
        _ => {}
    }
    let header_size = natural + package.header_padding;
    let export_data = place_exports(
        &mut package,
        zen,
        parts.export_data,
        parts.exports,
        header_size,
        target,
        &mut notes,
    )?;
    let header = seal(&mut package, &export_data)?;
    Ok(Assembled {
        header,
        export_data,
        notes,
    })
}

fn apply_versioning(package: &mut LegacyPackage, zen: &ZenPackage) {
    let Some(v) = &zen.versioning else {
        return;
    };
    let s = &mut package.summary;
    s.file_version_ue4 = v.file_version_ue4;
    if s.file_version_ue5.is_some() {
        s.file_version_ue5 = Some(v.file_version_ue5);
    }
    s.file_version_licensee_ue4 = v.licensee_version;
    s.custom_versions = v
        .custom_versions
        .iter()
        .map(|(key, version)| crate::legacy::CustomVersion {
            key: *key,
            version: *version,
        })
        .collect();
    package.versions = FileVersions {
        legacy: s.legacy_file_version,
        ue4: v.file_version_ue4,
        ue5: v.file_version_ue5,
        licensee: v.licensee_version,
    };
}

fn legacy_imports(parts: &Parts<'_, '_>) -> Vec<ObjectImport> {
    let optional = parts.zen.engine.is_ue5().then_some(false);
    parts
        .imports
        .imports
        .iter()
        .map(|d| ObjectImport {
            class_package: parts.names.fname(&d.class.package),
            class_name: parts.names.fname(&d.class.name),
            outer_index: match d.outer {
                Outer::Import(o) => PackageIndex::from_import(o),
                _ => PackageIndex::NULL,
            },
            object_name: parts.names.fname(&d.object_name),
            package_name: None,
            import_optional: optional,
        })
        .collect()
}

fn legacy_exports(parts: &Parts<'_, '_>) -> Vec<ObjectExport> {
    let engine = parts.zen.engine;
    let versions = FileVersions::of_engine(engine);
    parts
        .exports
        .iter()
        .map(|e| ObjectExport {
            class_index: e.class,
            super_index: e.super_index,
            template_index: e.template,
            outer_index: e.outer,
            object_name: parts.names.fname(&e.name),
            object_flags: e.flags,
            serial_size: e.serial_size,
            serial_offset: 0,
            forced_export: false,
            not_for_client: e.not_for_client,
            not_for_server: e.not_for_server,
            package_guid: versions.export_has_package_guid().then_some([0; 16]),
            is_inherited_instance: versions
                .export_has_inherited_instance()
                .then_some(e.inherited_instance),
            package_flags: 0,
            not_always_loaded_for_editor_game: e.not_always_loaded_for_editor_game,
            is_asset: e.is_asset,
            generate_public_hash: versions
                .has_optional_resources()
                .then_some(e.generate_public_hash),
            first_export_dependency: -1,
            serialization_before_serialization_dependencies: 0,
            create_before_serialization_dependencies: 0,
            serialization_before_create_dependencies: 0,
            create_before_create_dependencies: 0,
            // Only versioned-property packages have them; the Zen package
            // does not say where the property block ends, so it spans the export.
            script_serialization_start_offset: Some(0),
            script_serialization_end_offset: Some(e.serial_size),
        })
        .collect()
}

/// Lays the four lists of each export out in the flat preload list, in the
/// order the legacy format stores them.
fn flatten_dependencies(package: &mut LegacyPackage, deps: &[ExportDependencies]) {
    for (export, d) in package.exports.iter_mut().zip(deps) {
        if d.is_empty() {
            continue;
        }
        export.first_export_dependency = package.preload_dependencies.len() as i32;
        export.serialization_before_serialization_dependencies =
            d.serialize_before_serialize.len() as i32;
        export.create_before_serialization_dependencies = d.create_before_serialize.len() as i32;
        export.serialization_before_create_dependencies = d.serialize_before_create.len() as i32;
        export.create_before_create_dependencies = d.create_before_create.len() as i32;
        for list in [
            &d.serialize_before_serialize,
            &d.create_before_serialize,
            &d.serialize_before_create,
            &d.create_before_create,
        ] {
            package.preload_dependencies.extend(list.iter().copied());
        }
    }
}

fn data_resources(zen: &ZenPackage, exports: &[DraftExport]) -> Option<DataResources> {
    if !zen.engine.zen_has_bulk_data_map() || zen.bulk_data.is_empty() {
        return None;
    }
    let version = zen.engine.legacy_data_resource_version();
    let owner = exports
        .iter()
        .position(|e| e.is_asset)
        .map_or(PackageIndex::NULL, PackageIndex::from_export);
    Some(DataResources {
        version,
        entries: zen
            .bulk_data
            .iter()
            .map(|b| DataResource {
                flags: 0,
                cooked_index: (version >= DATA_RESOURCE_VERSION_COOKED_INDEX)
                    .then_some(b.cooked_index),
                serial_offset: b.serial_offset,
                duplicate_serial_offset: b.duplicate_serial_offset,
                serial_size: b.serial_size,
                raw_size: b.serial_size,
                outer_index: owner,
                legacy_bulk_data_flags: b.flags,
            })
            .collect(),
    })
}

/// The legacy header size the package was cooked with, when the Zen
/// package says it: `CookedHeaderSize`, or for UE4 (whose export offsets
/// are absolute) the first export's offset.
fn cooked_header_size(zen: &ZenPackage, exports: &[DraftExport]) -> Option<usize> {
    if zen.summary.cooked_header_size > 0 {
        let size = zen
            .engine
            .legacy_header_size_from_cooked(zen.summary.cooked_header_size);
        return Some(size as usize);
    }
    if zen.engine.zen_layout() == ZenLayout::Ue4 {
        return exports
            .iter()
            .filter(|e| e.serial_size > 0)
            .map(|e| e.cooked_offset as usize)
            .min();
    }
    None
}

/// Sets every export's serial offset and builds the `.uexp`: 5.3+ export
/// data is the `.uexp` as it was; before, the exports come in load order
/// and go back to the places their serial offsets give, followed by what
/// came after them and the package tag.
fn place_exports<'d>(
    package: &mut LegacyPackage,
    zen: &ZenPackage,
    export_data: &'d [u8],
    exports: &[DraftExport],
    header_size: usize,
    cooked_header: Option<usize>,
    notes: &mut Vec<String>,
) -> Result<Cow<'d, [u8]>> {
    let header_size = header_size as i64;
    if zen.engine.zen_layout() == ZenLayout::DependencyBundles {
        let mut end = 0u64;
        for (i, e) in exports.iter().enumerate() {
            let stop = e.cooked_offset.checked_add(e.serial_size as u64);
            if stop.is_none_or(|s| s > export_data.len() as u64) {
                return Err(Error::invalid(format!(
                    "its data {}..+{} is outside the {}-byte export data",
                    e.cooked_offset,
                    e.serial_size,
                    export_data.len()
                ))
                .within(format!("export {i}"))
                .within("export map"));
            }
            package.exports[i].serial_offset = header_size + e.cooked_offset as i64;
            end = end.max(stop.unwrap_or(0));
        }
        package.summary.bulk_data_start_offset = header_size + end as i64;
        return Ok(Cow::Borrowed(export_data));
    }
    let blobs = blobs_in_load_order(zen, export_data, exports)?;
    let consumed: usize = blobs.iter().flatten().map(|b| b.len()).sum();
    let tail = &export_data[consumed..];
    // UE4 offsets count from the start of the header the package was cooked with.
    let base = match zen.engine.zen_layout() {
        ZenLayout::Ue4 => cooked_header.unwrap_or(header_size as usize) as u64,
        _ => 0,
    };
    let mut order: Vec<usize> = (0..exports.len()).collect();
    order.sort_by_key(|&i| (exports[i].cooked_offset, i));
    let mut uexp = Vec::with_capacity(export_data.len() + 4);
    for i in order {
        let e = &exports[i];
        let relative = e.cooked_offset.checked_sub(base).ok_or_else(|| {
            Error::invalid(format!(
                "its serial offset {} lies inside the {base}-byte header",
                e.cooked_offset
            ))
            .within(format!("export {i}"))
            .within("export map")
        })?;
        let at = uexp.len() as u64;
        // A gap can hold no more than the whole export data (cooks leave none).
        if relative > at && relative - at > export_data.len() as u64 {
            return Err(Error::invalid(format!(
                "its serial offset {} leaves a gap of {} bytes, more than the {}-byte export data",
                e.cooked_offset,
                relative - at,
                export_data.len()
            ))
            .within(format!("export {i}"))
            .within("export map"));
        }
        if relative > at {
            notes.push(format!(
                "export {i}: {} bytes between the previous export and this one are not in the Zen package; zeros written",
                relative - at
            ));
            uexp.resize(relative as usize, 0);
        } else if relative < at && e.serial_size > 0 {
            return Err(Error::invalid(format!(
                "its data at {relative} overlaps the export before it (which ends at {at})"
            ))
            .within(format!("export {i}"))
            .within("export map"));
        }
        package.exports[i].serial_offset = header_size + uexp.len() as i64;
        if let Some(blob) = blobs[i] {
            uexp.extend_from_slice(blob);
        }
    }
    package.summary.bulk_data_start_offset = header_size + uexp.len() as i64;
    uexp.extend_from_slice(tail);
    uexp.extend_from_slice(&PACKAGE_FILE_TAG.to_le_bytes());
    Ok(Cow::Owned(uexp))
}

/// Each export's data, cut from the export data in load order (4.26–5.2).
fn blobs_in_load_order<'d>(
    zen: &ZenPackage,
    export_data: &'d [u8],
    exports: &[DraftExport],
) -> Result<Vec<Option<&'d [u8]>>> {
    let mut blobs: Vec<Option<&[u8]>> = vec![None; exports.len()];
    let mut position = 0usize;
    for entry in &zen.export_bundle_entries {
        if entry.command != ExportCommand::Serialize {
            continue;
        }
        let i = entry.export_index as usize;
        let size = exports
            .get(i)
            .map(|e| e.serial_size as usize)
            .ok_or_else(|| {
                Error::invalid(format!(
                    "a bundle entry names export {i}, but there are {}",
                    exports.len()
                ))
                .within("export bundles")
            })?;
        let end = position
            .checked_add(size)
            .filter(|&end| end <= export_data.len())
            .ok_or_else(|| {
                Error::invalid(format!(
                    "its {size} bytes at {position} run past the {}-byte export data",
                    export_data.len()
                ))
                .within(format!("export {i}"))
                .within("export bundles")
            })?;
        if blobs[i].replace(&export_data[position..end]).is_some() {
            return Err(
                Error::invalid(format!("export {i} is serialized twice")).within("export bundles")
            );
        }
        position = end;
    }
    if let Some(i) = (0..exports.len()).find(|&i| blobs[i].is_none() && exports[i].serial_size > 0)
    {
        return Err(Error::invalid(format!(
            "export {i} has {} bytes of data but no bundle serializes it",
            exports[i].serial_size
        ))
        .within("export bundles"));
    }
    Ok(blobs)
}

/// Writes the header with its content hash: the saved hash (5.6+) or the
/// package GUID (before), over the header and the `.uexp` without its tag.
/// The header is written once, its hash field zero, and the hash put in
/// its place.
fn seal(package: &mut LegacyPackage, export_data: &[u8]) -> Result<Vec<u8>> {
    let saved_hash = package.versions.has_saved_hash();
    if saved_hash {
        package.summary.saved_hash = Some([0; 20]);
    } else {
        package.summary.guid = Some([0; 16]);
    }
    let mut header = package.write()?;
    let field = hash_field(package, saved_hash);
    if header
        .get(field.clone())
        .is_none_or(|f| f.iter().any(|&b| b != 0))
    {
        return Err(Error::internal(
            "the header's content hash is not where the summary puts it",
        ));
    }
    let tagged = export_data.ends_with(&PACKAGE_FILE_TAG.to_le_bytes());
    let body = &export_data[..export_data.len() - if tagged { 4 } else { 0 }];
    let mut hasher = blake3::Hasher::new();
    hasher.update(&header);
    hasher.update(body);
    let hash = hasher.finalize();
    let bytes = &hash.as_bytes()[..field.len()];
    header[field].copy_from_slice(bytes);
    if saved_hash {
        package.summary.saved_hash = bytes.try_into().ok();
    } else {
        package.summary.guid = bytes.try_into().ok();
    }
    Ok(header)
}

/// Where the content hash (the saved hash, else the GUID) lies in the
/// header, which starts with the summary.
fn hash_field(package: &LegacyPackage, saved_hash: bool) -> std::ops::Range<usize> {
    let len = if saved_hash { 20 } else { 16 };
    let mut w = crate::binary::Writer::new();
    let start = package
        .summary
        .write_marking_hash(&mut w, &package.versions);
    start..start + len
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The header sealed by putting the hash in its field is the header
    /// written whole with that hash, and the hash is over the header with
    /// the field zero and the export data without its tag: for a saved hash
    /// (5.6) and a GUID (4.27, 5.5).
    #[test]
    fn a_header_sealed_in_place_is_the_header_written_with_its_hash() {
        let Some(corpus) = crate::test_corpus::corpus() else {
            return;
        };
        for (file, engine, saved_hash) in [
            ("retoc/UE5.6/SM_Cube.uasset", EngineVersion::UE5_6, true),
            ("retoc/UE5.5/SM_Cube.uasset", EngineVersion::UE5_5, false),
            (
                "retoc/UE4.27/TestModUI.uasset",
                EngineVersion::UE4_27,
                false,
            ),
        ] {
            let files = crate::legacy::PackageFiles::load(corpus.join(file)).unwrap();
            let mut package = files.read_package(Some(engine)).unwrap();
            assert_eq!(package.versions.has_saved_hash(), saved_hash, "{file}");
            let header = seal(&mut package, &files.uexp).unwrap();
            assert_eq!(header, package.write().unwrap(), "{file}");
            let field = hash_field(&package, saved_hash);
            let mut zeroed = header.clone();
            zeroed[field.clone()].fill(0);
            let body = files.uexp.strip_suffix(&PACKAGE_FILE_TAG.to_le_bytes());
            let mut hasher = blake3::Hasher::new();
            hasher.update(&zeroed);
            hasher.update(body.unwrap_or(&files.uexp));
            assert_eq!(
                header[field.clone()],
                hasher.finalize().as_bytes()[..field.len()],
                "{file}"
            );
            assert!(header[field].iter().any(|&b| b != 0), "{file}");
        }
    }
}
