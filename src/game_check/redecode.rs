//! The mod's packages re-decoded against the game's current mappings
//! (`check --game-dir`): after a game update a struct the mod's data uses
//! may have changed (a property inserted, one whose type changed, a class
//! whose own properties grew and moved its super's), and the engine then
//! reads the mod's unversioned property data with the wrong layout — the
//! usual crash after an update. Each export of each unversioned package of
//! the mod is read by the property codec ([`Codec::decode_error`]) with the
//! mappings; what the data and the mappings disagree on is an
//! `export-does-not-decode` error naming the package, the export and the
//! property path the codec failed at, with the property as the mappings
//! describe it ([`ExportSubject`]).
//!
//! What is an error and what is not:
//! - a failure of kind `format` or `limit` (the header names a slot the
//!   struct does not have, a value runs past the export's end, a count or
//!   name index that cannot be, bytes left after a DataTable's rows) is the
//!   data disagreeing with the mappings: an error;
//! - a failure of kind `unsupported` (a natively serialized struct whose
//!   layout zenpak does not know, a type the dumper could not name, a
//!   struct or class the mappings lack, such as a blueprint's whose package
//!   is not in the mod) is a layout the codec cannot read at all: not
//!   checked, counted in [`Redecode::exports_unchecked`] and said in one
//!   `exports-not-rechecked` note;
//! - data the codec reads but would write back otherwise (a non-canonical
//!   string) decodes: the data fits the mappings.
//!
//! A property appended at the end of a struct with no properties from its
//! super chain after it is not an error: the header of old data never
//! names the new slot, and the engine reads such data with the new
//! property left at its default.
//!
//! Tagged (versioned) packages carry their types in their tags and are
//! not checked. Packages are checked in parallel, each read, decoded and
//! dropped on its own.

use rayon::prelude::*;
use serde::Serialize;

use crate::build::mod_package::ModPackage;
use crate::diagnostic::{Diagnostic, ExportSubject, Level};
use crate::error::{data_path_text, DataStep, Error, ErrorKind};
use crate::legacy::{LegacyPackage, PackageFiles};
use crate::mappings::Mappings;
use crate::properties::{
    export_class_name, mappings_with_content_schemas, Codec, PackageContext, SchemaSources,
};
use crate::version::EngineVersion;

/// How many `export-does-not-decode` errors are given one by one; the
/// rest are counted in one more (the `game` section lists them all).
const SHOWN: usize = 50;

/// What the re-decode found, for the `game` section.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Redecode {
    /// The mappings the packages were decoded with.
    pub mappings: String,
    /// Unversioned packages decoded, and their exports.
    pub packages_checked: usize,
    pub exports_checked: usize,
    /// Exports whose layout the codec cannot read (not checked).
    pub exports_unchecked: usize,
    /// Exports whose data the mappings disagree with.
    pub not_decoding: Vec<ExportSubject>,
}

/// What one package gave.
#[derive(Default)]
struct PackageResult {
    checked: bool,
    exports: usize,
    unchecked: usize,
    /// The first export the codec cannot read, for the note.
    first_unchecked: Option<String>,
    errors: Vec<Diagnostic>,
}

/// Decodes every export of the mod's unversioned packages with `mappings`
/// (read as `engine`); `content_root`: where schemas defined in the mod's
/// content are looked for.
pub(crate) fn redecode(
    packages: &[ModPackage],
    mappings: (&Mappings, &std::path::Path),
    engine: EngineVersion,
    content_root: &std::path::Path,
) -> (Redecode, Vec<Diagnostic>) {
    let results: Vec<PackageResult> = packages
        .par_iter()
        .map(|p| check_package(p, mappings.0, engine, content_root))
        .collect();
    let mut report = Redecode {
        mappings: mappings.1.display().to_string(),
        ..Redecode::default()
    };
    let mut errors = Vec::new();
    let mut first_unchecked = None;
    for result in results {
        report.packages_checked += usize::from(result.checked);
        report.exports_checked += result.exports;
        report.exports_unchecked += result.unchecked;
        first_unchecked = first_unchecked.or(result.first_unchecked);
        errors.extend(result.errors);
    }
    report.not_decoding = errors
        .iter()
        .filter_map(|d| d.export.as_deref().cloned())
        .collect();
    let mut diagnostics = shown(errors);
    if let Some(first) = first_unchecked {
        diagnostics.push(Diagnostic::note(
            "exports-not-rechecked",
            format!(
                "{} of the mod's {} exports were not re-checked against the mappings: the codec cannot read their layout ({first})",
                report.exports_unchecked, report.exports_checked
            ),
        ));
    }
    (report, diagnostics)
}

/// The first [`SHOWN`] errors, and one more counting the rest.
fn shown(mut errors: Vec<Diagnostic>) -> Vec<Diagnostic> {
    if errors.len() > SHOWN {
        let more = errors.len() - SHOWN;
        errors.truncate(SHOWN);
        errors.push(
            Diagnostic::error(
                "export-does-not-decode",
                format!("{more} more exports do not decode with these mappings"),
            )
            .with_hint("the `game` section of `--message-format json` lists them all"),
        );
    }
    errors
}

/// One package: read, each export decoded, dropped. A package that does
/// not read is not this check's to report (`check` already did).
fn check_package(
    package: &ModPackage,
    mappings: &Mappings,
    engine: EngineVersion,
    content_root: &std::path::Path,
) -> PackageResult {
    let Ok(files) = PackageFiles::load(&package.file) else {
        return PackageResult::default();
    };
    let Ok(legacy) = files.read_package(Some(engine)) else {
        return PackageResult::default();
    };
    if !legacy.summary.unversioned_properties() || files.check_exports(&legacy).is_err() {
        return PackageResult::default();
    }
    let sources = SchemaSources::beside(&package.file).with_folder(content_root);
    let decoded = decode_package((&files, &legacy), &package.name, mappings, &sources);
    PackageResult {
        checked: true,
        exports: decoded.exports,
        unchecked: decoded.unchecked.len(),
        first_unchecked: decoded.unchecked.first().map(|(index, error)| {
            format!(
                "the first: {} export {index}: {}",
                package.name,
                error.message()
            )
        }),
        errors: decoded
            .mismatches
            .into_iter()
            .map(|(subject, error)| diagnostic(subject, &error, &package.file))
            .collect(),
    }
}

/// What decoding one package's exports with mappings found.
#[derive(Debug, Default)]
pub struct PackageDecode {
    pub exports: usize,
    /// Exports whose layout the codec cannot read: index and why.
    pub unchecked: Vec<(usize, Error)>,
    /// Exports whose data the mappings disagree with.
    pub mismatches: Vec<(ExportSubject, Error)>,
}

/// Decodes each export of an unversioned package (`files` read as
/// `legacy`, named `name`) with `mappings` and the schemas of content
/// `sources` finds, and sorts the failures: the data disagreeing with the
/// mappings, or a layout the codec cannot read (see the module docs).
pub fn decode_package(
    (files, legacy): (&PackageFiles, &LegacyPackage),
    name: &str,
    mappings: &Mappings,
    sources: &SchemaSources,
) -> PackageDecode {
    let extra = mappings_with_content_schemas(files, legacy, name, mappings, sources);
    let cx = PackageContext::of_named(legacy, name);
    let codec = Codec::new(&cx, Some(mappings.view(extra.as_ref())));
    let mut result = PackageDecode {
        exports: legacy.exports.len(),
        ..PackageDecode::default()
    };
    for index in 0..legacy.exports.len() {
        let error = match export_error(files, legacy, &codec, index) {
            Ok(None) => continue,
            Ok(Some(error)) => error,
            // The package's own tables, not its data: `check` reads them.
            Err(error) => {
                result.unchecked.push((index, error));
                continue;
            }
        };
        if mismatch(&error) {
            result
                .mismatches
                .push((subject(name, legacy, index, &error), error));
        } else {
            result.unchecked.push((index, error));
        }
    }
    result
}

/// Why export `index` does not decode, if it does not; `Err`: its class
/// or its data could not be found in the package.
fn export_error(
    files: &PackageFiles,
    legacy: &LegacyPackage,
    codec: &Codec,
    index: usize,
) -> Result<Option<Error>, Error> {
    let class = export_class_name(legacy, index)?;
    let data = files.export_data(legacy, index)?;
    let base = legacy.exports[index].serial_offset as u64;
    Ok(codec.decode_error(data, base, &class))
}

/// Whether the codec's failure is the data disagreeing with the mappings
/// (not a layout the codec cannot read).
fn mismatch(error: &Error) -> bool {
    matches!(error.kind(), ErrorKind::Format(_) | ErrorKind::Limit { .. })
}

/// The export and the property `error` names.
fn subject(package: &str, legacy: &LegacyPackage, index: usize, error: &Error) -> ExportSubject {
    let path = &error.context().data_path;
    let innermost = path.iter().rev().find_map(|step| match step {
        DataStep::Property { owner, name, ty } => Some((owner, name, ty)),
        _ => None,
    });
    ExportSubject {
        package: package.to_string(),
        export_index: index,
        export: legacy
            .export_path(index, Some(package))
            .unwrap_or_else(|_| format!("export {index}")),
        class: crate::properties::document::class_path(legacy, index, package).unwrap_or_default(),
        property_path: (!path.is_empty()).then(|| data_path_text(path)),
        owner: innermost.map(|(owner, _, _)| owner.clone()),
        property: innermost.map(|(_, name, _)| name.clone()),
        property_type: innermost.map(|(_, _, ty)| ty.clone()),
    }
}

fn diagnostic(subject: ExportSubject, error: &Error, file: &std::path::Path) -> Diagnostic {
    let mut d = Diagnostic::of(error);
    d.level = Level::Error;
    d.code = "export-does-not-decode".into();
    let at = match &subject.property_path {
        Some(path) => format!(" at `{path}`"),
        None => String::new(),
    };
    let property = match (&subject.owner, &subject.property, &subject.property_type) {
        (Some(owner), Some(name), Some(ty)) => {
            format!(" (the mappings' `{owner}.{name}`, {ty})")
        }
        _ => String::new(),
    };
    d.message = format!(
        "`{}` (export {}) does not decode with the game's mappings{at}{property}: {}",
        subject.export,
        subject.export_index,
        error.message()
    );
    d.file = Some(crate::diagnostic::path_text(file));
    d.hint = Some(
        "the game's update changed a struct this export's data uses: cook the asset again against the updated game (or, for a patched asset, update the patch), then build again".into(),
    );
    d.export = Some(Box::new(subject));
    d
}
