//! Consolidation of classic maps (reference 000, "Consolidation
//! algorithm"; CLI `zenpak classic consolidate`): a map that carries embedded copies of
//! packages is made to use the real, external packages instead (`Mode::Embedded`), and
//! imports that name the wrong external package are re-targeted to the right one
//! (`Mode::Retarget`). Reference 000 asks whether this "requires shifting the whole package
//! layout": it does not.
//!
//! Embedded mode, for each package name asked for:
//! 1. the map's top-level `Core.Package` exports of that name are the
//!    embedded copies; everything whose outer chain passes through one of
//!    them is a member of the copy;
//! 2. every reference to a member from outside the copy — export class and
//!    super fields, import outers, and object references inside the object
//!    data of every other export — is found; each member referenced, and
//!    its outers up to the package, is checked against the external
//!    package (found in the search folders; the object exists there at the
//!    same path, with the same class, `RF_Public`: `ULinkerLoad::VerifyImport` throws
//!    otherwise) and gets an import: class package = name of the class's outer, class name,
//!    outer = the outer's import, object name (reused when the map already has the same
//!    one). Members referenced only from inside the copy get none;
//! 3. the references are re-pointed in place (in object data via `ObjectData::rewrite`; an
//!    object whose data grows moves after the last object). The tables are only
//!    appended to — names and imports are added at the end, nothing is
//!    reordered or removed — so every compact index elsewhere in the object
//!    data keeps resolving to the object it did. Names are matched without case and added
//!    with `RF_LoadForClient | RF_LoadForServer | RF_LoadForEdit | RF_TagExp`: the loader
//!    maps a name whose flags do not match its context to `None`;
//! 4. the copy's exports stay in the export table (removing them would
//!    renumber every later export) but lose their load flags
//!    (`RF_LoadForClient`/`Server`/`Edit`), so `ULinkerLoad::CreateExport` no longer
//!    creates them (and an editor re-save drops them); their object data stays where it is,
//!    unreferenced (see [`super::writer`] on why object data never moves).
//!
//! Retarget (`--retarget --package FROM=TO`): top-level `Core.Package` imports named FROM
//! (and class packages named FROM) are renamed TO after every import below them is checked
//! in TO's file (same path, class, public). Object data is untouched.
//!
//! If any reference cannot be resolved (missing package; missing, private or differently
//! classed object; name too long for the version), or an export's object data cannot
//! be decoded far enough to be sure it holds no reference to the copy (its class and the
//! offset where decoding stopped are named), nothing is written and every such object is
//! named. Writer limits apply (file over 2^31−1 bytes, name over 63 bytes: limit error).
//!
//! `write_output` writes a temporary file in the output's folder and renames it; the input
//! is never written (same path, or the same file through links, is refused). A map that
//! embeds (or imports, re-targeting) none of the packages comes out byte-identical, as do the
//! corpus maps (`tests/classic/classic_consolidate.rs`). Tests build maps with the writer
//! (`tests/classic_maps/`: object data encoded by hand, checked by an independent walker):
//! an embedded texture package with a group referenced from actor properties, polys, a model
//! surface and another texture's property, with references that shrink and grow; the same
//! objects imported from another package (retarget); maps without the package.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::deps::{locate_package, PackageCache};
use super::flags::{RF_LOAD_CONTEXT, RF_PUBLIC, RF_TAG_EXP};
use super::header::guid_string;
use super::object_data::ObjectData;
use super::tables::{ImportEntry, NameEntry};
use super::writer::{write_edited, ExportEdit};
use super::{ObjectRef, Package, Target};
use crate::error::{Error, ErrorKind, Result};

/// Which way references are re-pointed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// Embedded copies of packages become imports of the external packages.
    Embedded,
    /// Imports of one external package become imports of another.
    Retarget,
}

/// A package named on the command line: `NAME` (embedded mode) or
/// `FROM=TO` (retarget mode).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PackageSpec {
    pub(crate) name: String,
    /// The package to re-target to (retarget mode).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) target: Option<String>,
}

impl PackageSpec {
    /// Parses `NAME` or `FROM=TO`.
    pub fn parse(text: &str) -> Result<PackageSpec> {
        let (name, target) = match text.split_once('=') {
            Some((from, to)) => (from.trim(), Some(to.trim().to_string())),
            None => (text.trim(), None),
        };
        let valid = |n: &str| !n.is_empty() && !n.contains(['.', ' ', '\0']);
        if !valid(name) || target.as_deref().is_some_and(|t| !valid(t)) {
            return Err(Error::usage(format!("{text:?} is not a package name"))
                .with_hint("give a package name without extension, e.g. SkyCity, or FROM=TO with --retarget"));
        }
        Ok(PackageSpec {
            name: name.to_string(),
            target,
        })
    }
}

/// What to consolidate.
#[derive(Debug, Clone)]
pub struct Request {
    pub mode: Mode,
    pub packages: Vec<PackageSpec>,
    /// Folders the external packages are looked for in, in order.
    pub search: Vec<PathBuf>,
}

/// What happened to one package asked for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PackageOutcome {
    pub package: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    pub status: PackageStatus,
    /// The external package's file, when it was looked for and found.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<PathBuf>,
    /// Exports of the embedded copy (embedded mode).
    pub members: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PackageStatus {
    /// Embedded in the map; its references now point at the external package.
    Consolidated,
    /// The map does not embed it: nothing to do.
    NotEmbedded,
    /// Its imports now point at the target package.
    Retargeted,
    /// The map does not import it: nothing to do.
    NotImported,
    /// It could not be done; see the problems.
    Failed,
}

/// One object whose references were re-pointed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Repointed {
    /// The object before: an embedded export's path inside the map, or the imported path.
    pub from: String,
    /// The imported object now referred to.
    pub to: String,
    pub class: String,
    /// The import's reference (`-index - 1`).
    pub import: i32,
    /// Whether the import was added (false: the map already had it).
    pub added: bool,
    /// The external package file it was checked against.
    pub(crate) checked_in: PathBuf,
}

/// An export whose references changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ChangedExport {
    pub export: String,
    /// Export-table fields re-pointed (`class`, `super`).
    pub fields: Vec<&'static str>,
    /// References re-pointed inside its object data.
    pub data_references: usize,
}

/// Why something could not be re-pointed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "problem", rename_all = "kebab-case")]
pub enum Problem {
    /// No search folder holds the external package.
    PackageNotFound,
    /// The external package's file could not be read.
    PackageUnreadable {
        file: PathBuf,
        #[serde(skip_serializing_if = "Option::is_none")]
        offset: Option<u64>,
        error: String,
    },
    /// The external package has no object at `path`.
    NotFound { path: String },
    /// The external package's object has another class.
    WrongClass { found: String },
    /// The external package's object is not `RF_Public`, so it cannot be imported.
    NotPublic,
    /// An export's object data could not be decoded far enough to find
    /// every reference it holds.
    UndecodedData { offset: u64, reason: String },
    /// The new name cannot be stored (too long for the file version).
    NameTooLong { limit: usize },
}

/// An object that could not be resolved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unresolved {
    /// The object (or, for undecoded data, the export) concerned.
    pub object: String,
    pub(crate) class: String,
    /// The external package concerned.
    pub(crate) package: String,
    #[serde(flatten)]
    pub problem: Problem,
}

/// The plan and result of a consolidation (`zenpak classic consolidate`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ConsolidationReport {
    pub kind: &'static str,
    pub map: String,
    pub mode: Mode,
    pub packages: Vec<PackageOutcome>,
    pub repointed: Vec<Repointed>,
    pub changed_exports: Vec<ChangedExport>,
    pub added_names: Vec<String>,
    pub added_imports: Vec<String>,
    /// Exports of embedded copies that the loader no longer creates.
    pub unloaded_exports: Vec<String>,
    pub problems: Vec<Unresolved>,
    /// Whether the output differs from the input.
    pub changed: bool,
    /// The package GUID of the output.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub guid: Option<String>,
    pub output_size: u64,
}

impl ConsolidationReport {
    /// The problems as one error naming every object (none when there are none).
    pub fn problems_error(&self) -> Option<Error> {
        if self.problems.is_empty() {
            return None;
        }
        let failures = self.problems.iter().map(problem_error).collect();
        Some(
            Error::new(ErrorKind::Many {
                what: "references",
                total: self.problems.len(),
                failures,
            })
            .with_hint("nothing was written; the map is unchanged"),
        )
    }
}

fn problem_error(problem: &Unresolved) -> Error {
    let subject = format!("{} [{}]", problem.object, problem.class);
    let package = &problem.package;
    match &problem.problem {
        Problem::PackageNotFound => Error::invalid(format!(
            "{subject}: package {package} is not in any search folder"
        ))
        .with_hint("add the folder holding it with --search"),
        Problem::PackageUnreadable {
            file,
            offset,
            error,
        } => {
            let message = format!("{subject}: package {package} cannot be read: {error}");
            match offset {
                Some(offset) => Error::format(*offset, message).in_file(file),
                None => Error::invalid(message).in_file(file),
            }
        }
        Problem::NotFound { path } => {
            Error::invalid(format!("{subject}: package {package} has no {path}"))
        }
        Problem::WrongClass { found } => Error::invalid(format!(
            "{subject}: package {package} has it with class {found}"
        )),
        Problem::NotPublic => Error::invalid(format!(
            "{subject}: package {package} has it, but not public (RF_Public), so it cannot be imported"
        )),
        Problem::UndecodedData { offset, reason } => Error::format(
            *offset,
            format!("object data of {subject} cannot be checked for references to {package}: {reason}"),
        )
        .within(problem.object.clone()),
        Problem::NameTooLong { limit } => Error::limit(
            format!("name {:?}", problem.object),
            problem.object.len() as u64,
            *limit as u64,
        ),
    }
}

/// The report and, when nothing stood in the way, the bytes of the new map.
#[derive(Debug, Clone)]
pub struct Consolidated {
    pub report: ConsolidationReport,
    pub bytes: Option<Vec<u8>>,
}

/// Consolidates `map` (parsed from `map_bytes`). Packages are read through `cache`.
pub fn consolidate(
    map_bytes: &[u8],
    map: &Package,
    request: &Request,
    cache: &mut PackageCache,
) -> Result<Consolidated> {
    check_request(map, request)?;
    let mut work = Work::new(map, request.mode);
    match request.mode {
        Mode::Embedded => {
            work.plan_embedded(map_bytes, &request.packages, &request.search, cache);
            if work.report.problems.is_empty() {
                work.apply_embedded(map_bytes)?;
            }
        }
        Mode::Retarget => {
            for spec in &request.packages {
                work.plan_retarget(spec, &request.search, cache)?;
            }
        }
    }
    if !work.report.problems.is_empty() {
        work.report.changed = false;
        return Ok(Consolidated {
            report: work.report,
            bytes: None,
        });
    }
    let data = std::mem::take(&mut work.data);
    let written = write_edited(map_bytes, map, &work.edited, &data)?;
    work.report.changed = written.changed;
    work.report.guid = written.guid.as_ref().map(guid_string);
    work.report.output_size = written.bytes.len() as u64;
    Ok(Consolidated {
        report: work.report,
        bytes: Some(written.bytes),
    })
}

fn check_request(map: &Package, request: &Request) -> Result<()> {
    if request.packages.is_empty() {
        return Err(Error::usage("no package given").with_hint("name one with --package NAME"));
    }
    for spec in &request.packages {
        match (request.mode, &spec.target) {
            (Mode::Embedded, Some(_)) => {
                return Err(Error::usage(format!(
                    "{}={}: FROM=TO is for --retarget",
                    spec.name,
                    spec.target.as_deref().unwrap_or_default()
                )))
            }
            (Mode::Retarget, None) => {
                return Err(
                    Error::usage(format!("--retarget needs FROM=TO, got {}", spec.name))
                        .with_hint("e.g. --package OldTextures=NewTextures"),
                )
            }
            (Mode::Retarget, Some(to)) if to.eq_ignore_ascii_case(&spec.name) => {
                return Err(Error::usage(format!(
                    "{}={to} re-targets a package to itself",
                    spec.name
                )))
            }
            _ => {}
        }
        let names = [Some(&spec.name), spec.target.as_ref()];
        if names
            .into_iter()
            .flatten()
            .any(|n| n.eq_ignore_ascii_case(&map.name))
        {
            return Err(Error::usage(format!("{} is the map itself", map.name)));
        }
    }
    Ok(())
}

/// The edit in progress.
struct Work<'a> {
    map: &'a Package,
    edited: Package,
    data: Vec<ExportEdit>,
    /// Name lookup (lowercase text to index), covering added names.
    names: BTreeMap<String, usize>,
    /// Old reference (a member of an embedded copy) to the import replacing it.
    mapping: BTreeMap<ObjectRef, ObjectRef>,
    /// All members of embedded copies.
    members: BTreeSet<usize>,
    report: ConsolidationReport,
}

impl<'a> Work<'a> {
    fn new(map: &'a Package, mode: Mode) -> Work<'a> {
        let mut names = BTreeMap::new();
        for (index, entry) in map.names.iter().enumerate() {
            names
                .entry(entry.name.to_ascii_lowercase())
                .or_insert(index);
        }
        Work {
            map,
            edited: map.clone(),
            data: vec![ExportEdit::Unchanged; map.exports.len()],
            names,
            mapping: BTreeMap::new(),
            members: BTreeSet::new(),
            report: ConsolidationReport {
                kind: "classic-consolidation",
                map: map.name.clone(),
                mode,
                packages: Vec::new(),
                repointed: Vec::new(),
                changed_exports: Vec::new(),
                added_names: Vec::new(),
                added_imports: Vec::new(),
                unloaded_exports: Vec::new(),
                problems: Vec::new(),
                changed: false,
                guid: None,
                output_size: 0,
            },
        }
    }

    fn problem(&mut self, object: String, class: String, package: &str, problem: Problem) {
        self.report.problems.push(Unresolved {
            object,
            class,
            package: package.to_string(),
            problem,
        });
    }

    /// The index of a name, added (with the load flags the engine gives
    /// names) when the map does not have it. Names compare without case,
    /// as the engine's do.
    fn name(&mut self, text: &str) -> Option<usize> {
        if let Some(&index) = self.names.get(&text.to_ascii_lowercase()) {
            return Some(index);
        }
        let limit = self.map.version().limits().max_name_len;
        if text.len() > limit {
            self.problem(
                text.to_string(),
                "name".to_string(),
                text,
                Problem::NameTooLong { limit },
            );
            return None;
        }
        let index = self.edited.names.len();
        self.edited.names.push(NameEntry {
            name: text.to_string(),
            flags: RF_LOAD_CONTEXT | RF_TAG_EXP,
        });
        self.names.insert(text.to_ascii_lowercase(), index);
        self.report.added_names.push(text.to_string());
        Some(index)
    }

    /// An import of `object` (in `outer`) of class `class_package.class_name`:
    /// the map's own when it has one, else a new one at the end.
    fn import(
        &mut self,
        class_package: &str,
        class_name: &str,
        outer: ObjectRef,
        object: &str,
    ) -> Option<(ObjectRef, bool)> {
        let same = |a: usize, b: &str| self.edited.name_text(a).eq_ignore_ascii_case(b);
        if let Some(index) = self.edited.imports.iter().position(|i| {
            i.outer == outer
                && same(i.object_name, object)
                && same(i.class_name, class_name)
                && same(i.class_package, class_package)
        }) {
            return Some((ObjectRef::import(index), false));
        }
        let entry = ImportEntry {
            class_package: self.name(class_package)?,
            class_name: self.name(class_name)?,
            outer,
            object_name: self.name(object)?,
        };
        self.edited.imports.push(entry);
        let reference = ObjectRef::import(self.edited.imports.len() - 1);
        self.report.added_imports.push(self.edited.path(reference));
        Some((reference, true))
    }

    fn plan_embedded(
        &mut self,
        map_bytes: &[u8],
        specs: &[PackageSpec],
        search: &[PathBuf],
        cache: &mut PackageCache,
    ) {
        let map = self.map;
        // Every copy's members first: references between copies do not count.
        let mut copies = Vec::new();
        for spec in specs {
            let roots: Vec<usize> = (0..map.exports.len())
                .filter(|&i| {
                    let e = &map.exports[i];
                    e.outer.is_null()
                        && map
                            .name_text(e.object_name)
                            .eq_ignore_ascii_case(&spec.name)
                        && map
                            .class_path(ObjectRef::export(i))
                            .eq_ignore_ascii_case("Core.Package")
                })
                .collect();
            let members = members_of(map, &roots);
            self.members.extend(members.iter().copied());
            copies.push(members);
        }
        if self.members.is_empty() {
            for spec in specs {
                self.report.packages.push(PackageOutcome {
                    package: spec.name.clone(),
                    target: None,
                    status: PackageStatus::NotEmbedded,
                    file: None,
                    members: 0,
                });
            }
            return;
        }
        let embedded: Vec<&str> = specs
            .iter()
            .zip(&copies)
            .filter(|(_, m)| !m.is_empty())
            .map(|(s, _)| s.name.as_str())
            .collect();
        let referenced = self.referenced_members(map_bytes, &embedded.join(", "));
        for (spec, members) in specs.iter().zip(&copies) {
            let mut outcome = PackageOutcome {
                package: spec.name.clone(),
                target: None,
                status: PackageStatus::NotEmbedded,
                file: None,
                members: members.len(),
            };
            if members.is_empty() {
                self.report.packages.push(outcome);
                continue;
            }
            let problems_before = self.report.problems.len();
            if let Some((file, external)) = self.external(&spec.name, search, cache, &mut outcome) {
                for &member in referenced.intersection(members) {
                    self.map_member(member, members, &external, &file);
                }
            }
            outcome.status = if self.report.problems.len() > problems_before {
                PackageStatus::Failed
            } else {
                PackageStatus::Consolidated
            };
            self.report.packages.push(outcome);
        }
    }

    /// Finds and reads the external package `name`; records a problem when it cannot.
    fn external(
        &mut self,
        name: &str,
        search: &[PathBuf],
        cache: &mut PackageCache,
        outcome: &mut PackageOutcome,
    ) -> Option<(PathBuf, Package)> {
        let subject = || format!("{name} (external package)");
        let Some(file) = locate_package(name, search) else {
            self.problem(
                subject(),
                "Core.Package".into(),
                name,
                Problem::PackageNotFound,
            );
            return None;
        };
        outcome.file = Some(file.clone());
        match cache.load(&file) {
            Ok(package) => Some((file, package)),
            Err(error) => {
                self.problem(
                    subject(),
                    "Core.Package".into(),
                    name,
                    Problem::PackageUnreadable {
                        file,
                        offset: error.offset(),
                        error: error.message(),
                    },
                );
                None
            }
        }
    }

    /// The members of the copies referenced from outside them. Exports
    /// whose data cannot be decoded are recorded as problems: they might
    /// hold such references.
    fn referenced_members(&mut self, map_bytes: &[u8], packages: &str) -> BTreeSet<usize> {
        let map = self.map;
        let mut referenced = BTreeSet::new();
        let members = &self.members;
        let mut undecoded = Vec::new();
        let mut note = |r: ObjectRef| {
            if let Target::Export(i) = r.target() {
                if members.contains(&i) {
                    referenced.insert(i);
                }
            }
        };
        for import in &map.imports {
            note(import.outer);
        }
        for (index, export) in map.exports.iter().enumerate() {
            if members.contains(&index) {
                continue;
            }
            note(export.class);
            note(export.super_field);
            let Some(range) = export.serial_range() else {
                continue;
            };
            let data = &map_bytes[range.start as usize..range.end as usize];
            let decoded = ObjectData::decode(map, index, data);
            match decoded.undecoded() {
                Some(why) => undecoded.push((index, why.clone())),
                None => decoded.references().iter().for_each(|r| note(r.target)),
            }
        }
        for (index, why) in undecoded {
            let reference = ObjectRef::export(index);
            self.problem(
                map.path(reference),
                map.class_path(reference),
                packages,
                Problem::UndecodedData {
                    offset: why.offset,
                    reason: why.reason,
                },
            );
        }
        referenced
    }

    /// Gives member `index` (and its outers) an import of the external
    /// package after checking the object there.
    fn map_member(
        &mut self,
        index: usize,
        members: &BTreeSet<usize>,
        external: &Package,
        file: &Path,
    ) -> Option<ObjectRef> {
        let map = self.map;
        let reference = ObjectRef::export(index);
        if let Some(&mapped) = self.mapping.get(&reference) {
            return Some(mapped);
        }
        let export = &map.exports[index];
        let outer = if export.outer.is_null() {
            ObjectRef::NULL
        } else {
            let Target::Export(outer) = export.outer.target() else {
                return None;
            };
            if !members.contains(&outer) {
                return None;
            }
            self.map_member(outer, members, external, file)?
        };
        let path = inner_path(map, reference);
        let class = inner_path(map, export.class);
        let class = if export.class.is_null() {
            "Core.Class".to_string()
        } else {
            class
        };
        if !export.outer.is_null() {
            // The package itself is the file; everything below must be there.
            self.check_external(&path, &path, &class, external)?;
        }
        let (class_package, class_name) = class_parts(map, export.class);
        let name = map.name_text(export.object_name).to_string();
        let (import, added) = self.import(&class_package, &class_name, outer, &name)?;
        self.mapping.insert(reference, import);
        self.report.repointed.push(Repointed {
            from: path,
            to: self.edited.path(import),
            class,
            import: import.0,
            added,
            checked_in: file.to_path_buf(),
        });
        Some(import)
    }

    /// Checks that `external` exports `path` (relative, starting with the
    /// package name) with class `class`, publicly; problems name `subject`.
    fn check_external(
        &mut self,
        subject: &str,
        path: &str,
        class: &str,
        external: &Package,
    ) -> Option<()> {
        let problem = match find_export(external, path) {
            None => Some(Problem::NotFound {
                path: path.to_string(),
            }),
            Some(i) => {
                let found_class = external.class_path(ObjectRef::export(i));
                if !found_class.eq_ignore_ascii_case(class) {
                    Some(Problem::WrongClass { found: found_class })
                } else if external.exports[i].flags & RF_PUBLIC == 0 {
                    Some(Problem::NotPublic)
                } else {
                    None
                }
            }
        };
        match problem {
            Some(problem) => {
                let package = external.name.clone();
                self.problem(subject.to_string(), class.to_string(), &package, problem);
                None
            }
            None => Some(()),
        }
    }

    /// Re-points every reference to a member and stops the loader from
    /// creating the members.
    fn apply_embedded(&mut self, map_bytes: &[u8]) -> Result<()> {
        let map = self.map;
        if self.members.is_empty() {
            return Ok(());
        }
        let mapping = self.mapping.clone();
        let replace = |r: ObjectRef| mapping.get(&r).copied();
        for import in &mut self.edited.imports {
            if let Some(new) = replace(import.outer) {
                import.outer = new;
            }
        }
        for index in 0..map.exports.len() {
            let reference = ObjectRef::export(index);
            if self.members.contains(&index) {
                self.edited.exports[index].flags &= !RF_LOAD_CONTEXT;
                self.report.unloaded_exports.push(map.path(reference));
                continue;
            }
            let mut fields = Vec::new();
            let export = &mut self.edited.exports[index];
            if let Some(new) = replace(export.class) {
                export.class = new;
                fields.push("class");
            }
            if let Some(new) = replace(export.super_field) {
                export.super_field = new;
                fields.push("super");
            }
            let mut data_references = 0;
            if let Some(range) = map.exports[index].serial_range() {
                let data = &map_bytes[range.start as usize..range.end as usize];
                let decoded = ObjectData::decode(map, index, data);
                data_references = decoded
                    .references()
                    .iter()
                    .filter(|r| mapping.contains_key(&r.target))
                    .count();
                if data_references > 0 {
                    self.data[index] = ExportEdit::Replaced(decoded.rewrite(data, &replace)?);
                }
            }
            if !fields.is_empty() || data_references > 0 {
                self.report.changed_exports.push(ChangedExport {
                    export: map.path(reference),
                    fields,
                    data_references,
                });
            }
        }
        Ok(())
    }

    fn plan_retarget(
        &mut self,
        spec: &PackageSpec,
        search: &[PathBuf],
        cache: &mut PackageCache,
    ) -> Result<()> {
        let map = self.map;
        let to = spec.target.clone().unwrap_or_default();
        let roots: Vec<usize> = (0..map.imports.len())
            .filter(|&i| {
                let import = &map.imports[i];
                import.outer.is_null()
                    && map
                        .name_text(import.object_name)
                        .eq_ignore_ascii_case(&spec.name)
                    && map
                        .class_path(ObjectRef::import(i))
                        .eq_ignore_ascii_case("Core.Package")
            })
            .collect();
        let mut outcome = PackageOutcome {
            package: spec.name.clone(),
            target: Some(to.clone()),
            status: PackageStatus::NotImported,
            file: None,
            members: 0,
        };
        if roots.is_empty() {
            self.report.packages.push(outcome);
            return Ok(());
        }
        let problems_before = self.report.problems.len();
        if let Some((file, external)) = self.external(&to, search, cache, &mut outcome) {
            for index in 0..map.imports.len() {
                let reference = ObjectRef::import(index);
                let top = top_of(map, reference);
                let Target::Import(top) = top.target() else {
                    continue;
                };
                if !roots.contains(&top) || roots.contains(&index) {
                    continue;
                }
                let path = map.path(reference);
                let inner = path.split_once('.').map_or("", |(_, rest)| rest);
                let new_path = format!("{to}.{inner}");
                // Classes the old package defined are the new package's now.
                let class = retargeted(&map.class_path(reference), &spec.name, &to);
                if self
                    .check_external(&path, &new_path, &class, &external)
                    .is_some()
                {
                    self.report.repointed.push(Repointed {
                        from: path,
                        to: new_path,
                        class,
                        import: reference.0,
                        added: false,
                        checked_in: file.clone(),
                    });
                }
            }
            if self.report.problems.len() == problems_before {
                if let Some(name) = self.name(&to) {
                    for &root in &roots {
                        self.edited.imports[root].object_name = name;
                    }
                    for import in &mut self.edited.imports {
                        if map
                            .name_text(import.class_package)
                            .eq_ignore_ascii_case(&spec.name)
                        {
                            import.class_package = name;
                        }
                    }
                }
            }
        }
        outcome.status = if self.report.problems.len() > problems_before {
            PackageStatus::Failed
        } else {
            PackageStatus::Retargeted
        };
        self.report.packages.push(outcome);
        Ok(())
    }
}

/// `path` with a leading `from.` replaced by `to.`.
fn retargeted(path: &str, from: &str, to: &str) -> String {
    match path.split_once('.') {
        Some((first, rest)) if first.eq_ignore_ascii_case(from) => format!("{to}.{rest}"),
        _ => path.to_string(),
    }
}

/// The exports whose outer chain passes through one of `roots` (the roots included).
fn members_of(map: &Package, roots: &[usize]) -> BTreeSet<usize> {
    let mut members = BTreeSet::new();
    for index in 0..map.exports.len() {
        let mut current = ObjectRef::export(index);
        // Parsed packages have outer chains of bounded depth.
        for _ in 0..=super::MAX_OUTER_DEPTH {
            match current.target() {
                Target::Export(i) if roots.contains(&i) => {
                    members.insert(index);
                    break;
                }
                Target::Export(_) => current = map.outer(current),
                _ => break,
            }
        }
    }
    members
}

/// The outermost object of a chain.
fn top_of(package: &Package, reference: ObjectRef) -> ObjectRef {
    let mut current = reference;
    for _ in 0..=super::MAX_OUTER_DEPTH {
        let outer = package.outer(current);
        if outer.is_null() {
            break;
        }
        current = outer;
    }
    current
}

/// An object's path as seen from outside the package: exports without
/// the package's own name in front.
fn inner_path(package: &Package, reference: ObjectRef) -> String {
    let path = package.path(reference);
    match reference.target() {
        Target::Export(_) => path
            .strip_prefix(&format!("{}.", package.name))
            .map(str::to_string)
            .unwrap_or(path),
        _ => path,
    }
}

/// The class package and class name an import of an object of class
/// `class` records: the name of the class's outer and the class's name
/// (`Core`, `Class` for classes themselves).
fn class_parts(package: &Package, class: ObjectRef) -> (String, String) {
    if class.is_null() {
        return ("Core".to_string(), "Class".to_string());
    }
    let outer = package.outer(class);
    (
        package.object_name(outer).to_string(),
        package.object_name(class).to_string(),
    )
}

/// The export of `package` at `path` (its first component being the
/// package's name), compared without case.
fn find_export(package: &Package, path: &str) -> Option<usize> {
    let inner = path.split_once('.').map(|(_, rest)| rest)?;
    let wanted = format!("{}.{}", package.name, inner);
    (0..package.exports.len()).find(|&i| {
        package
            .path(ObjectRef::export(i))
            .eq_ignore_ascii_case(&wanted)
    })
}

/// Writes the consolidated map to `output` through a temporary file in
/// its folder. Refuses to write over `input`.
pub fn write_output(input: &Path, output: &Path, bytes: &[u8]) -> Result<()> {
    if crate::publish::same_file(input, output) {
        return Err(Error::usage(format!(
            "{} is the input map; consolidate never writes over its input",
            output.display()
        ))
        .with_hint("give another file with -o"));
    }
    crate::publish::write_file(output, |file| {
        std::io::Write::write_all(file, bytes).map_err(|e| Error::io(file.path(), e))
    })
}
