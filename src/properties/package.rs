//! Walking every export of a legacy package: the glue between the legacy
//! reader (where each export's data is, what its class is) and the walker.

use std::cell::RefCell;

use serde::Serialize;

use crate::binary::Reader;
use crate::legacy::{LegacyPackage, PackageFiles, PackageIndex, ResolvedIndex};
use crate::mappings::{Mappings, SchemaView};
use crate::{Error, Result};

use super::{PackageContext, PropertyBlock, PropertyInfo, Recording, Walker};

impl<'a> PackageContext<'a> {
    /// The context of a legacy package (its exports' paths start with the
    /// name its summary stores, or with `Package` when it stores none; see
    /// [`of_named`](Self::of_named)).
    pub fn of(package: &'a LegacyPackage) -> Self {
        Self::of_named(package, package.package_name().unwrap_or("Package"))
    }

    /// [`of`](Self::of) with the package's name given (a 4.x cook stores none).
    pub fn of_named(package: &'a LegacyPackage, package_name: &str) -> Self {
        PackageContext {
            engine: package.engine,
            names: package.names.iter().map(|n| n.text.as_str()).collect(),
            import_count: package.imports.len(),
            export_count: package.exports.len(),
            object_paths: (0..package.imports.len())
                .map(|i| package.import_path(i))
                .chain(
                    (0..package.exports.len()).map(|e| package.export_path(e, Some(package_name))),
                )
                .map(|p| p.unwrap_or_default())
                .collect(),
            soft_object_path_count: package.soft_object_paths.len(),
            unversioned: package.summary.unversioned_properties(),
        }
    }
}

/// The class name of export `index` (the object name of its class import or export).
pub fn export_class_name(package: &LegacyPackage, index: usize) -> Result<String> {
    let export = &package.exports[index];
    class_name_of(package, export.class_index)
}

fn class_name_of(package: &LegacyPackage, class: PackageIndex) -> Result<String> {
    match class.resolve() {
        ResolvedIndex::Null => Ok("Class".to_string()),
        ResolvedIndex::Import(i) => package.name(package.imports[i].object_name),
        ResolvedIndex::Export(e) => package.name(package.exports[e].object_name),
    }
}

/// What comes right after an export's property block.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum AfterBlock {
    /// The object GUID flag (and GUID) ends the export exactly: no native data.
    ExportEnd,
    /// The object GUID flag is there and native data of this many bytes follows.
    NativeData { bytes: u64 },
}

/// The walk of one export.
#[derive(Debug, Clone, Serialize)]
pub struct ExportWalk {
    pub index: usize,
    pub name: String,
    pub class: String,
    pub serial_offset: i64,
    pub serial_size: i64,
    /// The walk's result, or why it failed.
    #[serde(flatten)]
    pub outcome: WalkOutcome,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum WalkOutcome {
    Walked {
        block_start: u64,
        block_end: u64,
        after: AfterBlock,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        properties: Vec<PropertyInfo>,
    },
    Failed {
        /// The error's kind ([`crate::error::ErrorKind::code`]): `unsupported`
        /// when the layout cannot be known here, `format` for bad bytes.
        code: &'static str,
        error: String,
    },
}

/// Walks export `index`: its property block, then checks the object GUID
/// flag that `UObject::Serialize` writes after it. Cooked class default
/// objects carry the flag too: all 67 of the corpus end exactly after it.
/// Returns the block and the offset where the class's native data starts.
pub fn walk_export(
    files: &PackageFiles,
    package: &LegacyPackage,
    cx: &PackageContext,
    mappings: Option<&Mappings>,
    index: usize,
    collect: bool,
) -> Result<(PropertyBlock, u64, AfterBlock)> {
    walk_export_with(
        files,
        package,
        cx,
        mappings.map(Into::into),
        index,
        collect,
        None,
    )
}

/// [`walk_export`], also recording where each struct block, value and FName
/// of the export's property data is (see [`Recording`]).
pub fn walk_export_recorded(
    files: &PackageFiles,
    package: &LegacyPackage,
    cx: &PackageContext,
    mappings: Option<&Mappings>,
    index: usize,
) -> Result<(Recording, u64, AfterBlock)> {
    let recording = RefCell::new(Recording::default());
    let (_, native_start, after) = walk_export_with(
        files,
        package,
        cx,
        mappings.map(Into::into),
        index,
        false,
        Some(&recording),
    )?;
    Ok((recording.into_inner(), native_start, after))
}

fn walk_export_with(
    files: &PackageFiles,
    package: &LegacyPackage,
    cx: &PackageContext,
    mappings: Option<SchemaView>,
    index: usize,
    collect: bool,
    recording: Option<&RefCell<Recording>>,
) -> Result<(PropertyBlock, u64, AfterBlock)> {
    let export = &package.exports[index];
    let data = files.export_data(package, index)?;
    let class = export_class_name(package, index)?;
    let object = package.name(export.object_name)?;
    let base = export.serial_offset as u64;
    let mut r = Reader::with_base(data, base);
    let mut walker = Walker::new(cx, mappings);
    if let Some(recording) = recording {
        walker = walker.recording_into(recording);
    }
    let describe = || format!("export {index} `{object}` (class {class})");
    // Blueprint classes (defined in this package or in another content
    // package) have schemas only if the dumper loaded them.
    let blueprint_class = match export.class_index.resolve() {
        ResolvedIndex::Export(_) => true,
        ResolvedIndex::Import(i) => !package
            .import_package_name(i)
            .is_ok_and(|p| p.starts_with("/Script/")),
        ResolvedIndex::Null => false,
    };
    let local_class_without_schema = blueprint_class
        && cx.unversioned
        && mappings.is_some_and(|m| m.struct_schema(&class).is_none());
    let block = walker.walk(&mut r, &class, collect).map_err(|e| {
        if local_class_without_schema {
            Error::unsupported(
                "its class is a blueprint class (defined in content, not in /Script) and the mappings have no schema for it",
            )
            .within(describe())
        } else {
            e.within(describe())
        }
    })?;
    let end = base + data.len() as u64;
    let at = r.pos();
    let has_guid = r.bool32().map_err(|e| {
        e.within(format!("object GUID flag after the properties of {}", describe()))
            .with_hint("the property block probably ended at the wrong place (mappings for another game or version?)")
    })?;
    let _ = at;
    if has_guid {
        r.guid().map_err(|e| e.within(describe()))?;
    }
    let native_start = r.offset();
    let after = if native_start == end {
        AfterBlock::ExportEnd
    } else {
        AfterBlock::NativeData {
            bytes: end - native_start,
        }
    };
    Ok((block, native_start, after))
}

/// Walks every export of a package; failures are reported per export.
pub fn walk_package(
    files: &PackageFiles,
    package: &LegacyPackage,
    mappings: Option<&Mappings>,
    collect: bool,
) -> Vec<ExportWalk> {
    let cx = PackageContext::of(package);
    // Blueprint classes and user-defined structs defined in the package or
    // beside it: their schemas come from the package that defines them.
    let own_name = package.package_name().map_or_else(
        || {
            files
                .path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default()
        },
        str::to_string,
    );
    let sources = super::SchemaSources::beside(&files.path);
    let extra = mappings
        .and_then(|m| super::mappings_with_content_schemas(files, package, &own_name, m, &sources));
    let mappings = mappings.map(|m| m.view(extra.as_ref()));
    (0..package.exports.len())
        .map(|index| {
            let export = &package.exports[index];
            let outcome =
                match walk_export_with(files, package, &cx, mappings, index, collect, None) {
                    Ok((block, _, after)) => WalkOutcome::Walked {
                        block_start: block.start,
                        block_end: block.end,
                        after,
                        properties: block.properties,
                    },
                    Err(e) => WalkOutcome::Failed {
                        code: e.code(),
                        error: e.to_string(),
                    },
                };
            ExportWalk {
                index,
                name: export.object_name.display(&package.names).to_string(),
                class: export_class_name(package, index).unwrap_or_else(|e| format!("<{e}>")),
                serial_offset: export.serial_offset,
                serial_size: export.serial_size,
                outcome,
            }
        })
        .collect()
}
