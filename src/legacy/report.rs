//! A readable account of a legacy package for `zenpak inspect`: resolved
//! names and paths instead of indices. Serializes to the stable JSON shape
//! (`"kind": "legacy-package"`) and renders as text.

use std::fmt::Write as _;

use serde::Serialize;

use super::{BulkCompanion, LegacyPackage, PackageFiles, PackageIndex, Summary};
use crate::error::Result;
use crate::version::EngineVersion;

/// One import, resolved.
#[derive(Debug, Clone, Serialize)]
pub struct ImportReport {
    pub(crate) index: usize,
    /// Full object path, e.g. `/Script/Engine.StaticMesh`.
    pub path: String,
    /// Class as `ClassPackage.ClassName`, e.g. `/Script/CoreUObject.Class`.
    pub class: String,
    pub(crate) outer: i32,
    pub(crate) optional: bool,
}

/// One export, resolved.
#[derive(Debug, Clone, Serialize)]
pub struct ExportReport {
    pub(crate) index: usize,
    pub(crate) name: String,
    pub path: Option<String>,
    pub class: String,
    pub(crate) outer: String,
    #[serde(rename = "super")]
    pub(crate) super_: String,
    pub(crate) template: String,
    pub(crate) object_flags: u32,
    pub serial_offset: i64,
    pub serial_size: i64,
    pub(crate) is_asset: bool,
    pub(crate) generate_public_hash: Option<bool>,
    pub(crate) is_inherited_instance: Option<bool>,
    /// Preload dependencies by kind (resolved paths).
    pub(crate) serialize_before_serialize: Vec<String>,
    pub(crate) create_before_serialize: Vec<String>,
    pub(crate) serialize_before_create: Vec<String>,
    pub(crate) create_before_create: Vec<String>,
}

/// One header section: where it starts and how many bytes it has.
#[derive(Debug, Clone, Serialize)]
pub struct SectionReport {
    pub(crate) section: super::Section,
    pub(crate) offset: i64,
    pub(crate) size: i64,
}

/// Everything `inspect` shows about a legacy package.
#[derive(Debug, Clone, Serialize)]
pub struct PackageReport {
    pub(crate) kind: &'static str,
    pub(crate) path: String,
    pub(crate) engine: EngineVersion,
    pub(crate) versioned: bool,
    pub(crate) package_name: Option<String>,
    pub(crate) file_versions: super::FileVersions,
    pub(crate) header_size: usize,
    pub(crate) uexp_size: usize,
    pub(crate) summary: Summary,
    /// The header's sections in file order.
    pub(crate) sections: Vec<SectionReport>,
    pub names: Vec<String>,
    pub imports: Vec<ImportReport>,
    pub exports: Vec<ExportReport>,
    pub(crate) soft_package_references: Vec<String>,
    pub(crate) soft_object_paths: Vec<String>,
    pub(crate) preload_dependency_count: usize,
    pub(crate) data_resource_count: usize,
    pub(crate) bulk_companions: Vec<BulkCompanion>,
}

impl PackageReport {
    pub fn new(files: &PackageFiles, package: &LegacyPackage) -> Result<PackageReport> {
        let path_or = |index: PackageIndex| -> String {
            if index.is_null() {
                return String::new();
            }
            package
                .object_path(index, None)
                .unwrap_or_else(|_| format!("{index}"))
        };
        let names = package.names.iter().map(|n| n.text.clone()).collect();
        let mut imports = Vec::with_capacity(package.imports.len());
        for (index, import) in package.imports.iter().enumerate() {
            imports.push(ImportReport {
                index,
                path: package.import_path(index)?,
                class: format!(
                    "{}.{}",
                    import.class_package.display(&package.names),
                    import.class_name.display(&package.names)
                ),
                outer: import.outer_index.0,
                optional: import.import_optional.unwrap_or(false),
            });
        }
        let mut exports = Vec::with_capacity(package.exports.len());
        for (index, export) in package.exports.iter().enumerate() {
            let deps = package.export_preload_dependencies(index)?;
            let list = |d: &[PackageIndex]| d.iter().map(|&i| path_or(i)).collect::<Vec<_>>();
            exports.push(ExportReport {
                index,
                name: package.name(export.object_name)?,
                path: package.export_path(index, None).ok(),
                class: path_or(export.class_index),
                outer: path_or(export.outer_index),
                super_: path_or(export.super_index),
                template: path_or(export.template_index),
                object_flags: export.object_flags,
                serial_offset: export.serial_offset,
                serial_size: export.serial_size,
                is_asset: export.is_asset,
                generate_public_hash: export.generate_public_hash,
                is_inherited_instance: export.is_inherited_instance,
                serialize_before_serialize: list(deps[0]),
                create_before_serialize: list(deps[1]),
                serialize_before_create: list(deps[2]),
                create_before_create: list(deps[3]),
            });
        }
        let soft_object_paths = package
            .soft_object_paths
            .iter()
            .map(|p| {
                let mut s = format!(
                    "{}.{}",
                    p.package_name.display(&package.names),
                    p.asset_name.display(&package.names)
                );
                if !p.sub_path.text.is_empty() {
                    s.push(':');
                    s.push_str(&p.sub_path.text);
                }
                s
            })
            .collect();
        Ok(PackageReport {
            kind: "legacy-package",
            path: files.path.display().to_string(),
            engine: package.engine,
            versioned: !package.summary.is_unversioned(),
            package_name: package.package_name().map(str::to_string),
            file_versions: package.versions,
            header_size: files.header.len(),
            uexp_size: files.uexp.len(),
            summary: package.summary.clone(),
            sections: package
                .section_extents()
                .into_iter()
                .map(|(section, offset, size)| SectionReport {
                    section,
                    offset,
                    size,
                })
                .collect(),
            names,
            imports,
            exports,
            soft_package_references: package
                .soft_package_references
                .iter()
                .map(|n| n.display(&package.names).to_string())
                .collect(),
            soft_object_paths,
            preload_dependency_count: package.preload_dependencies.len(),
            data_resource_count: package
                .data_resources
                .as_ref()
                .map_or(0, |d| d.entries.len()),
            bulk_companions: files.bulk.clone(),
        })
    }

    /// Human-readable text.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let s = &self.summary;
        let _ = writeln!(out, "{}: legacy package", self.path);
        let _ = writeln!(
            out,
            "  engine {} ({}), file versions: legacy {}, UE4 {}, UE5 {}, licensee {}",
            self.engine,
            if self.versioned {
                "versioned"
            } else {
                "unversioned"
            },
            self.file_versions.legacy,
            self.file_versions.ue4,
            self.file_versions.ue5,
            self.file_versions.licensee
        );
        let _ = writeln!(
            out,
            "  package name: {}",
            self.package_name.as_deref().unwrap_or("(not stored)")
        );
        let _ = writeln!(out, "  package flags: 0x{:08x}", s.package_flags);
        let _ = writeln!(
            out,
            "  header: {} bytes (total header size {}), .uexp: {} bytes, bulk data start offset {}",
            self.header_size, s.total_header_size, self.uexp_size, s.bulk_data_start_offset
        );
        let _ = writeln!(
            out,
            "  names {}, imports {}, exports {}, preload dependencies {}, soft package references {}, data resources {}",
            self.names.len(),
            self.imports.len(),
            self.exports.len(),
            self.preload_dependency_count,
            self.soft_package_references.len(),
            self.data_resource_count
        );
        let _ = writeln!(out, "\nsections:");
        for section in &self.sections {
            let _ = writeln!(
                out,
                "  {:>8}  {:>8} bytes  {}",
                section.offset,
                section.size,
                section.section.label()
            );
        }
        let _ = writeln!(out, "\nnames:");
        for (i, n) in self.names.iter().enumerate() {
            let _ = writeln!(out, "  {i:4}  {n}");
        }
        let _ = writeln!(out, "\nimports:");
        for i in &self.imports {
            let _ = writeln!(out, "  {:4}  {}  ({})", i.index, i.path, i.class);
        }
        let _ = writeln!(out, "\nexports:");
        for e in &self.exports {
            let _ = writeln!(
                out,
                "  {:4}  {}\n        class {}\n        outer {}  super {}  template {}\n        flags 0x{:08x}  serial offset {}  size {}",
                e.index,
                e.path.as_deref().unwrap_or(&e.name),
                e.class,
                or_none(&e.outer),
                or_none(&e.super_),
                or_none(&e.template),
                e.object_flags,
                e.serial_offset,
                e.serial_size
            );
            for (label, list) in [
                ("serialize before serialize", &e.serialize_before_serialize),
                ("create before serialize", &e.create_before_serialize),
                ("serialize before create", &e.serialize_before_create),
                ("create before create", &e.create_before_create),
            ] {
                if !list.is_empty() {
                    let _ = writeln!(out, "        {label}: {}", list.join(", "));
                }
            }
        }
        if !self.soft_package_references.is_empty() {
            let _ = writeln!(out, "\nsoft package references:");
            for r in &self.soft_package_references {
                let _ = writeln!(out, "  {r}");
            }
        }
        let _ = writeln!(out, "\nbulk companions:");
        if self.bulk_companions.is_empty() {
            let _ = writeln!(out, "  (none)");
        }
        for b in &self.bulk_companions {
            let _ = writeln!(out, "  {}  {} bytes", b.path.display(), b.size);
        }
        out
    }
}

fn or_none(s: &str) -> &str {
    if s.is_empty() {
        "-"
    } else {
        s
    }
}
