//! A whole legacy package as one JSON document (`zenpak to-json` /
//! `from-json`): what the package is (its engine, name, name map, imports
//! and exports as paths) and each export's data as the codec's tree.
//!
//! # Format 1
//!
//! ```text
//! { "format": 1, "engine": "5.1", "package": "/Game/Data/DT_Weapons",
//!   "names": [...], "imports": [{"path", "class"}],
//!   "exports": [{"path", "class", "data": {tree}}            decoded
//!              |{"path", "class", "reason", "opaque": hex}], kept as bytes
//!   "header": {"reason", "opaque": hex},                    the .uasset as read
//!   "uexp_runs": [{"offset", "opaque": hex}],               .uexp bytes outside exports
//!   "companions": [{"extension", "opaque": hex}] }          .ubulk, .uptnl, .m.ubulk
//! ```
//!
//! Only the exports' data is edited. `names`, `imports` and each export's
//! `path` and `class` say what the package holds; [`AssetDocument::write`]
//! refuses a document where they no longer match its header, so that an
//! edit there is not silently lost. The one edit outside export data:
//! entries appended to `imports` (`{"path": "/Game/Meshes/SM_Rock.SM_Rock",
//! "class": "/Script/Engine.StaticMesh"}`) are added to the import table
//! ([`crate::legacy::edit::add_import`], with their package's import when
//! it lacks one), so that the data can refer to them. A name the edited data needs and the
//! name map lacks is added the way the cooker lays names out
//! ([`crate::legacy::edit::export_data_names`]), and every size and offset
//! that moves with it, or with an export's new size, is recomputed
//! ([`crate::legacy::edit::apply_edits`]): an unchanged document writes the
//! package's bytes again, an edited one differs by what the edit implies.
//!
//! The header's other tables (preload dependencies, soft paths, data
//! resources, …) are kept in `header` as the bytes read, written back
//! through the header writer with the offsets recomputed.
//!
//! Export data is plain JSON (`"Damage": 42`; see
//! [`codec::json`](super::codec::json)), so reading it back needs its
//! types: [`AssetDocument::from_json`] parses the document with each
//! export's data kept as raw text, reads the header, then types each
//! export's data by the export's class — through the mappings, and for
//! exports of the package's own classes (blueprints) through the schemas
//! those classes' exports give.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::legacy::edit::{add_import, apply_edits, export_data_names, Edit};
use crate::legacy::{BulkKind, LegacyPackage, PackageFiles};
use crate::mappings::{Mappings, SchemaView};
use crate::version::EngineVersion;

use super::codec::json::{ExportTreeSeed, Schemas};
use super::tree::{ExportData, ExportTree, Hex, SharedNames};
use super::{
    export_class_name, mappings_with_content_schemas, Codec, PackageContext, SchemaSources,
};

/// The document format this zenpak writes. Readers accept it and every
/// older one.
pub const FORMAT: u32 = 1;

/// A legacy package as JSON (see the module docs). Read with
/// [`AssetDocument::from_json`]: export data is typed by the schema.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AssetDocument {
    pub format: u32,
    /// The release the package was read with (`5.1`).
    pub engine: String,
    /// The package's name as its summary stores it; 4.x cooks store none,
    /// and the file's name stands for it (object paths start with it).
    pub package: String,
    /// The name map, in order (read-only).
    pub names: Vec<String>,
    /// Each import's full path and class (read-only).
    pub imports: Vec<ImportEntry>,
    pub exports: Vec<ExportEntry>,
    /// The `.uasset` as read; its tables other than the name map are written
    /// from it.
    pub header: OpaqueRun,
    /// Bytes of the `.uexp` that belong to no export (the package tag,
    /// inline bulk data), at their offset in the `.uexp` as read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub uexp_runs: Vec<UexpRun>,
    /// Bulk-data companion files, as read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub companions: Vec<Companion>,
}

/// A document as parsed before its export data is typed.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDocument<'a> {
    format: u32,
    engine: String,
    package: String,
    names: Vec<String>,
    imports: Vec<ImportEntry>,
    #[serde(borrow)]
    exports: Vec<RawExport<'a>>,
    header: OpaqueRun,
    #[serde(default)]
    uexp_runs: Vec<UexpRun>,
    #[serde(default)]
    companions: Vec<Companion>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawExport<'a> {
    path: String,
    class: String,
    #[serde(borrow, default)]
    data: Option<&'a serde_json::value::RawValue>,
    #[serde(default)]
    reason: Option<String>,
    #[serde(default)]
    opaque: Option<Hex>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ImportEntry {
    pub path: String,
    pub class: String,
}

/// One export: its path and class (read-only), and its data: decoded
/// (`data`) or kept as bytes (`opaque`, with the `reason`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExportEntry {
    pub path: String,
    pub class: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<ExportTree>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opaque: Option<Hex>,
}

/// Bytes kept as they are, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpaqueRun {
    pub reason: String,
    pub opaque: Hex,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UexpRun {
    pub offset: u64,
    pub opaque: Hex,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Companion {
    /// `ubulk`, `uptnl` or `m.ubulk`.
    pub extension: String,
    pub opaque: Hex,
}

/// A package's files as [`AssetDocument::write`] makes them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrittenPackage {
    pub header: Vec<u8>,
    pub uexp: Vec<u8>,
    /// Companion files: (extension, bytes).
    pub companions: Vec<(BulkKind, Vec<u8>)>,
}

/// What [`AssetDocument::read`] decoded: exports in all and decoded.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct DocumentCounts {
    pub exports: usize,
    pub decoded: usize,
}

/// How far past the bytes a document holds its header may place export
/// data (decoded exports hold no byte count until written).
const MAX_LAYOUT_SLACK: u64 = 256 << 20;

const HEADER_REASON: &str = "the package header: the name map, imports and exports are listed above; its other tables are written from these bytes, offsets recomputed";

impl AssetDocument {
    /// Reads a loaded package (`files`, parsed as `package`) into a document.
    /// `mappings` give unversioned packages their schemas; without them an
    /// unversioned export's data is kept opaque with that reason. The
    /// schemas of classes and structs defined in content (the package's
    /// own, and those `sources` find) are added to them.
    pub fn read(
        files: &PackageFiles,
        package: &LegacyPackage,
        mappings: Option<&Mappings>,
        sources: &SchemaSources,
    ) -> Result<AssetDocument> {
        files.check_exports(package)?;
        let fallback_name = files
            .path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let own_name = package
            .package_name()
            .map(str::to_string)
            .unwrap_or(fallback_name);
        let extra = mappings
            .and_then(|m| mappings_with_content_schemas(files, package, &own_name, m, sources));
        let mappings = mappings.map(|m| m.view(extra.as_ref()));
        let cx = PackageContext::of_named(package, &own_name);
        let codec = Codec::new(&cx, mappings);
        let imports = (0..package.imports.len())
            .map(|i| import_entry(package, i))
            .collect::<Result<Vec<_>>>()?;
        let mut exports = Vec::with_capacity(package.exports.len());
        let header_len = files.header.len();
        let mut covered: Vec<(usize, usize)> = Vec::with_capacity(package.exports.len());
        for index in 0..package.exports.len() {
            let class = export_class_name(package, index)?;
            let class_path = class_path(package, index, &own_name)?;
            let data = files.export_data(package, index)?;
            let base = package.exports[index].serial_offset as u64;
            let start = (base as usize).checked_sub(header_len).ok_or_else(|| {
                Error::unsupported(format!(
                    "export {index} lies in the .uasset, not the .uexp (an uncooked package)"
                ))
                .in_file(&files.path)
            })?;
            covered.push((start, start + data.len()));
            let path = package.export_path(index, Some(&own_name))?;
            let entry = match codec.read_export(data, base, &class) {
                ExportData::Decoded(tree) => ExportEntry {
                    path,
                    class: class_path,
                    data: Some(*tree),
                    reason: None,
                    opaque: None,
                },
                ExportData::Opaque { reason, opaque } => ExportEntry {
                    path,
                    class: class_path,
                    data: None,
                    reason: Some(reason),
                    opaque: Some(opaque),
                },
            };
            exports.push(entry);
        }
        let uexp_runs =
            uncovered_runs(&files.uexp, covered).map_err(|e| e.in_file(&files.uexp_path))?;
        let mut companions = Vec::with_capacity(files.bulk.len());
        for companion in &files.bulk {
            companions.push(Companion {
                extension: companion.kind.extension().to_string(),
                opaque: Hex(companion.read()?),
            });
        }
        Ok(AssetDocument {
            format: FORMAT,
            engine: package.engine.as_str().to_string(),
            package: own_name,
            names: package.names.iter().map(|n| n.text.clone()).collect(),
            imports,
            exports,
            header: OpaqueRun {
                reason: HEADER_REASON.to_string(),
                opaque: Hex(files.header.clone()),
            },
            uexp_runs,
            companions,
        })
    }

    /// How many exports the document has and how many are decoded.
    pub fn counts(&self) -> DocumentCounts {
        DocumentCounts {
            exports: self.exports.len(),
            decoded: self.exports.iter().filter(|e| e.data.is_some()).count(),
        }
    }

    /// Exports of a class whose own data is decoded (DataTable,
    /// StringTable, enum) with that data kept as bytes, and why.
    pub fn undecoded_tables(&self) -> Vec<(usize, &ExportEntry, &str)> {
        self.exports
            .iter()
            .enumerate()
            .filter(|(_, e)| {
                super::codec::has_decoded_tail(e.class.rsplit(['.', ':']).next().unwrap_or(""))
            })
            .filter_map(|(i, e)| {
                let reason = match &e.data {
                    Some(tree) => tree.native.as_ref().map(|n| n.reason.as_str()),
                    None => e.reason.as_deref(),
                }?;
                Some((i, e, reason))
            })
            .collect()
    }

    /// Parses a document, naming the JSON path of what does not fit.
    /// Export data is read through the types its schema gives (`mappings`
    /// for unversioned packages, with the schemas of classes and structs
    /// defined in content added: the package's own, and those `sources` find).
    pub fn from_json(
        text: &[u8],
        mappings: Option<&Mappings>,
        sources: &SchemaSources,
    ) -> Result<AssetDocument> {
        let raw: RawDocument = deserialize_tracked(
            || serde_json::Deserializer::from_slice(text),
            std::marker::PhantomData,
        )
        .map_err(|(path, e)| json_error(&path, &e))?;
        if raw.format == 0 || raw.format > FORMAT {
            return Err(Error::unsupported(format!(
                "the document is format {}; this zenpak reads formats 1 to {FORMAT}",
                raw.format
            ))
            .within("format")
            .with_hint("use the zenpak that wrote it, or a newer one"));
        }
        let raw_exports = raw.exports;
        let mut doc = AssetDocument {
            format: raw.format,
            engine: raw.engine,
            package: raw.package,
            names: raw.names,
            imports: raw.imports,
            exports: Vec::with_capacity(raw_exports.len()),
            header: raw.header,
            uexp_runs: raw.uexp_runs,
            companions: raw.companions,
        };
        let engine = doc.engine()?;
        let package = LegacyPackage::read(&doc.header.opaque.0, Some(engine))
            .map_err(|e| e.within("header.opaque"))?;
        if raw_exports.len() != package.exports.len() {
            return Err(read_only("exports", "the export table"));
        }
        let unversioned = PackageContext::of_named(&package, &doc.package).unversioned;
        let names = SharedNames::default();
        let schemas = |mappings| Schemas {
            mappings,
            names: &names,
            engine,
            unversioned,
        };
        let mut untyped = Vec::new();
        for (index, e) in raw_exports.iter().enumerate() {
            let data = match e.data {
                Some(json) => {
                    match type_export(json, schemas(mappings.map(Into::into)), &package, index) {
                        Ok(tree) => Some(tree),
                        Err(error) => {
                            untyped.push((index, error));
                            None
                        }
                    }
                }
                None => None,
            };
            doc.exports.push(ExportEntry {
                path: e.path.clone(),
                class: e.class.clone(),
                data,
                reason: e.reason.clone(),
                opaque: e.opaque.clone(),
            });
        }
        // Exports of classes defined in content (the package's own
        // blueprints, and those found through `sources`) are typed by
        // schemas read from the exports typed above and from those packages.
        if let (Some((_, first)), Some(m)) = (untyped.first(), mappings) {
            let extra = doc
                .layout(&package)
                .ok()
                .and_then(|(mut files, starts, sizes)| {
                    doc.place_exports(&package, Some(m.into()), &mut files, &starts, &sizes);
                    mappings_with_content_schemas(&files, &package, &doc.package, m, sources)
                });
            let Some(extra) = extra else {
                return Err(with_missing_schemas(first.clone(), sources));
            };
            for (index, _) in untyped {
                let json = raw_exports[index].data.expect("typed only with data");
                let tree = type_export(json, schemas(Some(m.view(Some(&extra)))), &package, index)
                    .map_err(|e| with_missing_schemas(e, sources))?;
                doc.exports[index].data = Some(tree);
            }
        } else if let Some((_, first)) = untyped.into_iter().next() {
            if unversioned && mappings.is_none() {
                // Not the document's fault: its values need the mappings.
                return Err(Error::usage(
                    "the package's properties are unversioned: their values are typed by the game's mappings",
                )
                .with_hint(
                    "give the game's .usmap: `[game] mappings` in mod.toml, or --mappings Game.usmap",
                ));
            }
            return Err(first);
        }
        Ok(doc)
    }

    /// The document as JSON (pretty, ending in a newline).
    pub fn to_json(&self) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        self.write_json(&mut out).map_err(Error::json)?;
        Ok(out)
    }

    /// Writes the document as [`to_json`](Self::to_json) gives it to `out`,
    /// value by value (no copy of the text is held). The error is the
    /// writer's (`is_io`) or the serializer's.
    pub fn write_json(&self, out: impl std::io::Write) -> serde_json::Result<()> {
        let mut out = out;
        serde_json::to_writer_pretty(&mut out, self)?;
        out.write_all(b"\n").map_err(serde_json::Error::io)
    }

    /// The engine release the document names.
    pub fn engine(&self) -> Result<EngineVersion> {
        self.engine.parse().map_err(|_| {
            invalid_at(
                "engine",
                format!("`{}` is not an engine release zenpak knows", self.engine),
            )
        })
    }

    /// Writes the package the document describes (see the module docs);
    /// `mappings` and `sources` as [`from_json`](Self::from_json) takes them.
    pub fn write(
        &self,
        mappings: Option<&Mappings>,
        sources: &SchemaSources,
    ) -> Result<WrittenPackage> {
        let engine = self.engine()?;
        let mut package = LegacyPackage::read(&self.header.opaque.0, Some(engine))
            .map_err(|e| e.within("header.opaque"))?;
        self.check_read_only(&package)?;
        let imports_before = package.imports.len();
        for (i, import) in self.imports.iter().enumerate().skip(imports_before) {
            add_import(&mut package, &import.path, &import.class)
                .map_err(|e| e.within(format!("imports[{i}]")))?;
        }
        let imports_added = package.imports.len() != imports_before;
        let (mut files, starts, sizes) = self.layout(&package)?;
        // The package's own classes (blueprints) give their schemas to the
        // exports of those classes: their bytes first. Then the classes
        // and structs defined in other packages.
        let extra = mappings.and_then(|m| {
            self.place_exports(&package, Some(m.into()), &mut files, &starts, &sizes);
            mappings_with_content_schemas(&files, &package, &self.package, m, sources)
        });
        let mappings = mappings.map(|m| m.view(extra.as_ref()));
        // Written once, collecting the names the data needs and the name
        // map lacks; when there are some, they are added and their indexes
        // fixed in the bytes (written again only when that cannot be done).
        let (written, missing) = self.write_collecting(&mut package, mappings, &sizes)?;
        let written = match written {
            Some(written) => written,
            None => self.write_exports(&package, mappings, &sizes),
        };
        let mut edits = Vec::new();
        for (index, bytes) in written.into_iter().enumerate() {
            let bytes = bytes.map_err(|e| with_missing_schemas(e, sources))?;
            let offset = package.exports[index].serial_offset as u64;
            if bytes.len() == sizes[index] {
                let at = starts[index];
                files.uexp[at..at + bytes.len()].copy_from_slice(&bytes);
            } else {
                edits.push(Edit::replace(offset, sizes[index] as u64, bytes));
            }
        }
        if missing.is_empty() && edits.is_empty() && !imports_added {
            // Nothing moved: the header is the one read.
        } else {
            apply_edits(&mut files, &mut package, &edits)?;
        }
        let mut companions = Vec::with_capacity(self.companions.len());
        for (i, c) in self.companions.iter().enumerate() {
            let kind = BulkKind::ALL
                .into_iter()
                .find(|k| k.extension() == c.extension)
                .ok_or_else(|| {
                    invalid_at(
                        &format!("companions[{i}].extension"),
                        format!("`{}` is not ubulk, uptnl or m.ubulk", c.extension),
                    )
                })?;
            companions.push((kind, c.opaque.0.clone()));
        }
        Ok(WrittenPackage {
            header: files.header,
            uexp: files.uexp,
            companions,
        })
    }

    /// The package's files as far as the document holds their bytes (the
    /// `.uexp` runs; export data is placed by [`place_exports`](Self::place_exports)),
    /// each export's start in the `.uexp` and size as the header says.
    fn layout(&self, package: &LegacyPackage) -> Result<(PackageFiles, Vec<usize>, Vec<usize>)> {
        // Every stored run of the .uexp within the budget's reach before
        // anything is laid out.
        for (i, run) in self.uexp_runs.iter().enumerate() {
            if run.offset.saturating_add(run.opaque.0.len() as u64)
                > MAX_LAYOUT_SLACK.saturating_mul(16)
            {
                return Err(invalid_at(
                    &format!("uexp_runs[{i}].offset"),
                    format!("offset {} is past any .uexp zenpak lays out", run.offset),
                ));
            }
        }
        let sizes: Vec<usize> = package
            .exports
            .iter()
            .map(|e| usize::try_from(e.serial_size).unwrap_or(0))
            .collect();
        let header_len = self.header.opaque.0.len();
        let mut uexp_len = self
            .uexp_runs
            .iter()
            .map(|r| (r.offset as usize).saturating_add(r.opaque.0.len()))
            .max()
            .unwrap_or(0);
        let mut starts = Vec::with_capacity(sizes.len());
        for (index, (export, size)) in package.exports.iter().zip(&sizes).enumerate() {
            let start = usize::try_from(export.serial_offset)
                .ok()
                .and_then(|o| o.checked_sub(header_len))
                .ok_or_else(|| {
                    invalid_at(
                        "header.opaque",
                        format!(
                            "export {index}'s serial offset {} is not in the .uexp",
                            export.serial_offset
                        ),
                    )
                })?;
            starts.push(start);
            uexp_len = uexp_len.max(start.saturating_add(*size));
        }
        let declared: u64 = self
            .exports
            .iter()
            .map(|e| e.opaque.as_ref().map_or(0, |h| h.0.len() as u64))
            .sum::<u64>()
            + self
                .uexp_runs
                .iter()
                .map(|r| r.opaque.0.len() as u64)
                .sum::<u64>();
        if uexp_len as u64 > declared.saturating_mul(2).saturating_add(MAX_LAYOUT_SLACK) {
            return Err(invalid_at(
                "header.opaque",
                format!("the header places export data up to byte {uexp_len} of the .uexp, far past what the document holds"),
            ));
        }
        let mut uexp = vec![0u8; uexp_len];
        for run in &self.uexp_runs {
            let at = run.offset as usize;
            uexp[at..at + run.opaque.0.len()].copy_from_slice(&run.opaque.0);
        }
        let files = PackageFiles {
            path: "document.uasset".into(),
            header: self.header.opaque.0.clone(),
            uexp_path: "document.uexp".into(),
            uexp,
            bulk: Vec::new(),
        };
        Ok((files, starts, sizes))
    }

    /// Places the bytes of each export that is the class of another (the
    /// exports [`mappings_with_content_schemas`] reads) and writes with
    /// `mappings` at its size as read.
    fn place_exports(
        &self,
        package: &LegacyPackage,
        mappings: Option<SchemaView>,
        files: &mut PackageFiles,
        starts: &[usize],
        sizes: &[usize],
    ) {
        let mut classes: Vec<usize> = package
            .exports
            .iter()
            .filter_map(|e| match e.class_index.resolve() {
                crate::legacy::ResolvedIndex::Export(c) if c < package.exports.len() => Some(c),
                _ => None,
            })
            .collect();
        classes.sort_unstable();
        classes.dedup();
        if classes.is_empty() {
            return;
        }
        let cx = PackageContext::of_named(package, &self.package);
        let codec = Codec::new(&cx, mappings).collecting_missing_names();
        for index in classes {
            let bytes = self.export_bytes(&codec, package, index, &self.exports[index], 0);
            if let Some(bytes) = bytes.ok().filter(|b| b.len() == sizes[index]) {
                let at = starts[index];
                files.uexp[at..at + bytes.len()].copy_from_slice(&bytes);
            }
        }
    }

    /// Every export's bytes (or why not), written once through a codec that
    /// collects the names the data needs and `package`'s name map lacks,
    /// and those names. When there are some, they are added to `package`
    /// and the indexes written for them fixed in the bytes; `None` when
    /// the bytes cannot be fixed so (a name index written moved, or an
    /// export failed) and must be written again on the new `package`.
    #[allow(clippy::type_complexity)]
    fn write_collecting(
        &self,
        package: &mut LegacyPackage,
        mappings: Option<SchemaView>,
        sizes: &[usize],
    ) -> Result<(Option<Vec<Result<Vec<u8>>>>, Vec<String>)> {
        let (written, missing, highest) = {
            let cx = PackageContext::of_named(package, &self.package);
            let codec = Codec::new(&cx, mappings).collecting_missing_names();
            let written: Vec<_> = (0..self.exports.len())
                .map(|index| {
                    let export = &self.exports[index];
                    let bytes = self.export_bytes(&codec, package, index, export, sizes[index]);
                    (bytes, codec.take_name_fixups())
                })
                .collect();
            (written, codec.missing_names(), codec.highest_name_index())
        };
        if missing.is_empty() {
            let written = written.into_iter().map(|(bytes, _)| bytes).collect();
            return Ok((Some(written), missing));
        }
        // The names the bytes refer to by index, which must not move.
        let kept: Vec<String> = package
            .names
            .iter()
            .take(highest.saturating_add(1))
            .map(|n| n.text.clone())
            .collect();
        export_data_names(package, &missing).map_err(|e| e.within("adding names"))?;
        let moved = kept
            .iter()
            .zip(&package.names)
            .any(|(before, after)| *before != after.text);
        // An added name that is itself a base and number (`Sword_2`): a
        // name written as `Sword` number 3 would now be written as it.
        let renumbered = missing.iter().any(|n| crate::names::split_number(n).1 != 0);
        if moved || renumbered || written.iter().any(|(bytes, _)| bytes.is_err()) {
            return Ok((None, missing));
        }
        let Some(indexes) = first_indexes(package, &missing) else {
            return Ok((None, missing));
        };
        let mut fixed = Vec::with_capacity(written.len());
        for (bytes, fixups) in written {
            let mut bytes = bytes?;
            if fixups.apply(&mut bytes, &indexes).is_none() {
                return Ok((None, missing));
            }
            fixed.push(Ok(bytes));
        }
        Ok((Some(fixed), missing))
    }

    /// Every export's bytes (or why not), through a codec on `package`
    /// (`sizes`: each export's size as read, for the buffers).
    fn write_exports(
        &self,
        package: &LegacyPackage,
        mappings: Option<SchemaView>,
        sizes: &[usize],
    ) -> Vec<Result<Vec<u8>>> {
        let cx = PackageContext::of_named(package, &self.package);
        let codec = Codec::new(&cx, mappings);
        self.exports
            .iter()
            .enumerate()
            .map(|(index, export)| self.export_bytes(&codec, package, index, export, sizes[index]))
            .collect()
    }

    /// Export `index`'s bytes (`size`: its size as read, for the buffer).
    fn export_bytes(
        &self,
        codec: &Codec,
        package: &LegacyPackage,
        index: usize,
        export: &ExportEntry,
        size: usize,
    ) -> Result<Vec<u8>> {
        match (&export.data, &export.opaque) {
            (Some(tree), None) => {
                let class = export_class_name(package, index)?;
                codec.write_export_sized(tree, &class, size).map_err(|e| {
                    e.within(format!("exports[{index}].data ({})", export.path))
                        .with_hint(
                            "fix the value, or write the document again with `zenpak to-json`",
                        )
                })
            }
            (None, Some(bytes)) => Ok(bytes.0.clone()),
            _ => Err(invalid_at(
                &format!("exports[{index}]"),
                "an export has either `data` (decoded) or `opaque` (bytes), one of them",
            )),
        }
    }

    /// The read-only parts must still say what the header says.
    fn check_read_only(&self, package: &LegacyPackage) -> Result<()> {
        let names: Vec<&str> = package.names.iter().map(|n| n.text.as_str()).collect();
        if names.len() != self.names.len() || names.iter().zip(&self.names).any(|(a, b)| a != b) {
            let at = names
                .iter()
                .zip(&self.names)
                .position(|(a, b)| a != b)
                .unwrap_or(names.len().min(self.names.len()));
            return Err(read_only(&format!("names[{at}]"), "the name map"));
        }
        if self.imports.len() < package.imports.len() {
            return Err(read_only("imports", "the import table"));
        }
        // Entries after the package's are imports to add.
        for (i, import) in self.imports.iter().enumerate().take(package.imports.len()) {
            let entry = import_entry(package, i)?;
            if entry.path != import.path {
                return Err(read_only(&format!("imports[{i}].path"), "the import table"));
            }
            if entry.class != import.class {
                return Err(read_only(
                    &format!("imports[{i}].class"),
                    "the import table",
                ));
            }
        }
        if self.exports.len() != package.exports.len() {
            return Err(read_only("exports", "the export table"));
        }
        let own_name = &self.package;
        for (i, export) in self.exports.iter().enumerate() {
            if class_path(package, i, own_name)? != export.class {
                return Err(read_only(
                    &format!("exports[{i}].class"),
                    "the export table",
                ));
            }
        }
        Ok(())
    }
}

impl WrittenPackage {
    /// Writes the files: `path` is the `.uasset`/`.umap`; the `.uexp` and
    /// companions go beside it. Each file appears whole or not at all.
    pub fn write_to(&self, path: &Path) -> Result<Vec<PathBuf>> {
        use std::io::Write;
        let mut files = vec![
            (path.to_path_buf(), &self.header),
            (path.with_extension("uexp"), &self.uexp),
        ];
        for (kind, bytes) in &self.companions {
            files.push((path.with_extension(kind.extension()), bytes));
        }
        let mut staged = Vec::with_capacity(files.len());
        for (path, bytes) in &files {
            let mut temp = crate::publish::temporary::TempFile::create(path)?;
            temp.write_all(bytes)
                .map_err(|e| Error::io(temp.path(), e))?;
            staged.push(temp.stage()?);
        }
        crate::publish::publish(Vec::new(), staged)?;
        Ok(files.into_iter().map(|(p, _)| p).collect())
    }
}

/// The index of each of `texts` in `package`'s name map (the first
/// entry with the text); `None` when one is not there.
fn first_indexes(package: &LegacyPackage, texts: &[String]) -> Option<Vec<i32>> {
    let mut first: std::collections::HashMap<&str, i32> =
        texts.iter().map(|n| (n.as_str(), -1)).collect();
    for (i, n) in package.names.iter().enumerate() {
        if let Some(at) = first.get_mut(n.text.as_str()) {
            if *at < 0 {
                *at = i32::try_from(i).unwrap_or(-1);
            }
        }
    }
    texts
        .iter()
        .map(|n| first.get(n.as_str()).copied().filter(|&i| i >= 0))
        .collect()
}

/// Import `i` as the document lists it.
fn import_entry(package: &LegacyPackage, i: usize) -> Result<ImportEntry> {
    let import = &package.imports[i];
    Ok(ImportEntry {
        path: package.import_path(i)?,
        class: format!(
            "{}.{}",
            package.name(import.class_package)?,
            package.name(import.class_name)?
        ),
    })
}

/// The full path of export `index`'s class (`/Script/Engine.DataTable`;
/// a class without a class is `/Script/CoreUObject.Class`).
pub(crate) fn class_path(package: &LegacyPackage, index: usize, own_name: &str) -> Result<String> {
    let class = package.exports[index].class_index;
    if class.is_null() {
        return Ok("/Script/CoreUObject.Class".to_string());
    }
    package.object_path(class, Some(own_name))
}

/// The runs of `uexp` that no export covers (`covered`: export ranges in
/// the `.uexp`). Exports may not overlap.
fn uncovered_runs(uexp: &[u8], mut covered: Vec<(usize, usize)>) -> Result<Vec<UexpRun>> {
    covered.sort_unstable();
    let mut runs = Vec::new();
    let mut at = 0usize;
    for (start, end) in covered {
        if start < at {
            return Err(Error::unsupported(format!(
                "two exports share the .uexp bytes at {start}: a document keeps each export's bytes once"
            )));
        }
        if start > at {
            runs.push(UexpRun {
                offset: at as u64,
                opaque: Hex(uexp[at..start].to_vec()),
            });
        }
        at = end;
    }
    if at < uexp.len() {
        runs.push(UexpRun {
            offset: at as u64,
            opaque: Hex(uexp[at..].to_vec()),
        });
    }
    Ok(runs)
}

/// Export `index`'s data, typed by `schemas` and the export's class.
fn type_export(
    json: &serde_json::value::RawValue,
    schemas: Schemas,
    package: &LegacyPackage,
    index: usize,
) -> Result<ExportTree> {
    let class = export_class_name(package, index)?;
    let seed = ExportTreeSeed {
        s: schemas,
        class: &class,
    };
    deserialize_tracked(|| serde_json::Deserializer::from_str(json.get()), seed).map_err(
        |(inner, e)| {
            let path = if inner == "." || inner == "?" {
                format!("exports[{index}].data")
            } else {
                format!("exports[{index}].data.{inner}")
            };
            json_error(&path, &e)
        },
    )
}

/// `seed` read from what `reader` makes, and on failure the JSON path
/// where (as `serde_path_to_error` names it) with the error. The path is
/// tracked only on a second reading, after the first failed: tracking
/// copies every key, the largest cost of reading a big document.
fn deserialize_tracked<'de, R, S>(
    reader: impl Fn() -> serde_json::Deserializer<R>,
    seed: S,
) -> std::result::Result<S::Value, (String, serde_json::Error)>
where
    R: serde_json::de::Read<'de>,
    S: serde::de::DeserializeSeed<'de> + Clone,
{
    let first = match seed.clone().deserialize(&mut reader()) {
        Ok(value) => return Ok(value),
        Err(e) => e,
    };
    let mut track = serde_path_to_error::Track::new();
    let mut de = reader();
    match seed.deserialize(serde_path_to_error::Deserializer::new(&mut de, &mut track)) {
        Err(e) => Err((track.path().to_string(), e)),
        // Reading is deterministic: the second reading fails as the first.
        Ok(_) => Err((".".to_string(), first)),
    }
}

/// `error` (typing a document's data), with what was looked for in
/// content and not found: the likely cause when there is any.
fn with_missing_schemas(error: Error, sources: &SchemaSources) -> Error {
    let missing = sources.missing();
    let Some(first) = missing.first() else {
        return error;
    };
    error.replace_hint(format!(
        "the schema of `{}` is in {}, which was not read ({}): give the folder that holds it with --schemas DIR, or the game with --game-dir",
        first.name, first.package, first.reason
    ))
}

/// A JSON error at `path` (serde_path_to_error names the document `.` or `?`).
fn json_error(path: &str, error: &serde_json::Error) -> Error {
    let e = Error::invalid(error.to_string());
    let e = if path == "." || path == "?" {
        e.within("the document")
    } else {
        e.within(path)
    };
    e.with_hint("fix the value at that path, or write the document again with `zenpak to-json`")
}

/// An error in the document at JSON path `path` (`exports[3].class`).
fn invalid_at(path: &str, message: impl std::fmt::Display) -> Error {
    Error::invalid(message.to_string()).within(path)
}

fn read_only(path: &str, what: &str) -> Error {
    invalid_at(
        path,
        format!("{what} is read-only in a document: it must stay as `to-json` wrote it"),
    )
    .with_hint("edit export data only; a name or an import the data needs is added when the package is written")
}
