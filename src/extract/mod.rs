//! Zen → legacy: turns a Zen package (its package chunk, its bulk-data chunks, its store entry
//! when known) back into a cooked legacy package — `.uasset`/`.umap` header and `.uexp` export
//! data; bulk-data chunks become `.ubulk`, `.uptnl` and `.m.ubulk` unchanged — for every layout
//! zenpak reads (4.26/4.27, 5.0–5.2 graph data, 5.3+ dependency bundles, 5.6 cell maps, 5.7).
//! It is the inverse of [`crate::zen::convert()`]: converting the result back gives the Zen
//! package it came from. Verse cells (non-empty cell maps) are refused, as in the forward
//! conversion.
//!
//! [`extract_package`] runs the stages, one module each:
//! 1. [`imports`] — the import map, resolved through the game's
//!    [`ScriptObjects`] and the headers of the imported packages
//!    ([`HeaderProvider`]); [`classes`] gives each import its class;
//! 2. [`exports`] — the export map and the export flags Zen does not store;
//! 3. [`dependencies`] — the preload dependencies;
//! 4. [`names`] — the name map;
//! 5. [`package`] — summary, header size, `.uexp`, saved hash / GUID.
//!
//! [`container`] extracts whole containers (selection, dependencies,
//! streaming bulk data to files, progress events); [`single`] converts one
//! package of a container or game, found by name, in memory (`to-json`).
//!
//! # What the Zen package keeps, and what is chosen
//!
//! Kept one for one: import and export maps in legacy order, the export data (the `.uexp` for
//! 5.3+, its exports in load order before), the bulk chunks. Everything else is rebuilt the way
//! engine cooks of the corpus write it (details and evidence in each stage's module):
//!
//! - **Imports**: script objects via the script objects table; other packages' objects by
//!   matching the UE5 public export hash (package name from the 5.3+ header, package id from
//!   the 5.0–5.2 store entry) or UE4 full-path hash against *every* export's path (an import's
//!   outer need not be public). An outer missing from the Zen import map becomes an extra
//!   import at the end. Package entries (null in Zen) are the imported packages sorted by name.
//! - **Import classes** (Zen stores none): from the other package's export map, the table
//!   (legacy-built tables), else inferred — 1,349/1,349 script imports of the engine cooks and
//!   57/57 of the 5.3 maps with the real `ScriptObjects.bin` (`extract_script_objects.rs`).
//! - **Export flags**, **name map** (count found by replaying the conversion; the rest sorted
//!   by lowercase text): see `exports`, `names`.
//! - **Preload dependencies** (`dependencies`): 5.3+ script roles (class, template, super) are
//!   not added for functions and structs, nor on `Object`/`Default__Object`, as cooks list
//!   them. 5.0–5.2: arcs are placed so the conversion meets them in their stored order (first
//!   command of the bundle when it can); if converting back does not reproduce the graph
//!   data, the placement putting every arc where the conversion meets it earliest is tried.
//!   Script dependencies other than class, template and super are lost: Zen drops them.
//! - **Summary** (`package`): `PackageSource`, `SavedHash` (5.6+) / GUID (before 5.6), data
//!   resources (table version 1 for 5.2–5.4, 2 for 5.5+:
//!   `version::legacy_data_resource_version`);
//!   the header is padded to `CookedHeaderSize` (UE4: first export's offset); a longer header
//!   is reported.
//! - **`.umap` or `.uasset`**: the container path's extension; without a path, a top-level
//!   `/Script/Engine.World` export makes a map.
//!
//! Unresolved imports fail the package with one error (`import map`: how many, the first few
//! named, why); with [`ExtractOptions::allow_unresolved`] they become placeholders
//! (`/Script/Unresolved.Unresolved_<hash>`, `<package>.Unresolved_<hash>`,
//! `/Unresolved/Package_<n>`), listed in the report's `unresolved` (one warning per package
//! is the caller's: `extract` gives it with the list). `verify` converts each result back and
//! warns on a difference.
//!
//! # Tests (`tests/extract/`)
//!
//! - `extract_round_trip.rs`: every corpus folder converted, extracted (script objects and
//!   stand-ins for imported packages built from its legacy packages, `tests/extract_game`),
//!   converted back: Zen bytes identical for all 260 packages, every `.uexp` the cooked one,
//!   the 7 engine `.uzenasset` byte for byte. `.uasset` differences must be of a known kind
//!   per folder, else the test fails. Not carried by Zen: the GUID (random per save), preload
//!   dependencies on script objects (and before 5.3 the per-export lists), the export owning a
//!   bulk payload, hence the saved hash. Clay, SN2 and BP_Table_Lamp were written by a
//!   Zen → legacy tool (`PackageSource` 0, zero saved hashes, every name an export-data name,
//!   names in first-use order, `Object` as class of script functions/structs); zenpak writes
//!   what cooks write instead.
//! - `extract_script_objects.rs`: the real 5.3 chunk and UE4.27 loader chunks; extraction with
//!   them alone; class inference on every engine cook.
//! - `extract_cli.rs`: corpus containers (plus a game folder) through the binary and back;
//!   filters, `--with-deps` (exactly the transitive imports), unresolved imports,
//!   `--allow-unresolved`, `--force`, a file as output, a climbing directory index path
//!   refused, progress events.
//! - `extract_to_json.rs`: `to-json` of a package in a container, a pak and
//!   a game folder (the copy the game loads, the engine the game's files
//!   name) gives the document of the legacy package it was built from.
//! - `extract_mutation.rs`: truncated / flipped / hostile packages of every layout, cut engine
//!   headers, mutated ScriptObjects chunks and imported headers: errors, no panic.
//!
//! # Limits
//!
//! Not recoverable: the bulk payload's owning export, the script dependencies an export's
//! data caused. A package whose export data named its own export with a name sorting last
//! among the export-data names would get that name moved (not seen in any cook). A legacy
//! package written by a tool with other import classes than the engine's can come back with
//! a longer header than its `CookedHeaderSize` (e.g. SN2's `BPI_TargetActorData` with the
//! script objects chunk alone).

mod classes;
pub mod container;
mod dependencies;
mod exports;
mod imports;
mod names;
mod package;
pub(crate) mod provider;
pub mod script_objects;
pub mod single;

pub(crate) use imports::export_relative_path;

use std::borrow::Cow;
use std::collections::BTreeSet;

use serde::Serialize;

use crate::diagnostic::Diagnostic;
use crate::error::{Error, Result};
use crate::names::split_number;
use crate::version::{EngineVersion, ZenLayout};
use crate::zen::ZenPackage;

use dependencies::ArcPlacement;

pub use provider::{HeaderProvider, NoPackages, PackageHeaders, ProvidedPackage};
pub use script_objects::{ScriptObject, ScriptObjects};

/// An `FName` as the stages carry it: the text the name map stores and the number.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Name {
    pub(crate) base: String,
    pub(crate) number: u32,
}

impl Name {
    pub(crate) fn new(base: impl Into<String>, number: u32) -> Self {
        Name {
            base: base.into(),
            number,
        }
    }

    /// Splits `Name_3` into `Name` and number 4, as the engine stores FNames.
    pub(crate) fn from_full(full: &str) -> Self {
        let (base, number) = split_number(full);
        Name::new(base, number)
    }

    /// The text with its number suffix.
    pub(crate) fn full(&self) -> String {
        crate::names::with_number(&self.base, self.number).into_owned()
    }
}

/// An import that could not be resolved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unresolved {
    /// Index in the Zen import map.
    pub import: usize,
    /// What the entry is known to be.
    pub(crate) what: String,
    /// Why it could not be resolved.
    pub(crate) reason: String,
    /// The placeholder written in its place (with `allow_unresolved`).
    pub(crate) placeholder: String,
}

/// How to extract.
#[derive(Debug, Clone, Copy, Default)]
pub struct ExtractOptions {
    /// Write placeholders for imports that cannot be resolved (and report
    /// them) instead of failing.
    pub allow_unresolved: bool,
    /// Convert each extracted package back and warn when the result is not
    /// the Zen package it came from.
    pub verify: bool,
}

/// What imports are resolved against.
#[derive(Clone, Copy)]
pub struct ExtractContext<'a> {
    pub script_objects: Option<&'a ScriptObjects>,
    pub headers: &'a dyn HeaderProvider,
    pub options: ExtractOptions,
}

/// One Zen package to extract.
#[derive(Debug, Clone, Copy)]
pub struct ZenInput<'a> {
    pub engine: EngineVersion,
    /// The package chunk: Zen header followed by the export data.
    pub package: &'a [u8],
    /// The imported package ids of its store entry (the container header),
    /// when known. UE 4.26–5.2 packages name their imported packages only there.
    pub imported_packages: Option<&'a [u64]>,
}

/// What happened to one package.
#[derive(Debug, Clone, Serialize)]
pub struct PackageReport {
    pub(crate) package_name: String,
    pub imports: usize,
    pub exports: usize,
    /// Imports replaced by placeholders.
    pub unresolved: Vec<Unresolved>,
    /// Approximations the output had to make.
    pub warnings: Vec<Diagnostic>,
}

/// A legacy package made from a Zen package.
#[derive(Debug, Clone)]
pub struct LegacyOutput {
    pub package_name: String,
    /// `.uasset` / `.umap` bytes.
    pub header: Vec<u8>,
    /// `.uexp` bytes.
    pub export_data: Vec<u8>,
    /// Whether the package holds a world (a map: `.umap`).
    pub is_map: bool,
    pub report: PackageReport,
}

/// Converts one Zen package into a legacy package.
pub fn extract_package(input: ZenInput<'_>, cx: &ExtractContext<'_>) -> Result<LegacyOutput> {
    extract_borrowed(input, cx).map(Extracted::into_owned)
}

/// A legacy package made from a Zen package, its `.uexp` borrowed from the
/// package chunk where it is the chunk's export data as it is (5.3+): the
/// container extraction writes it from the chunk, never copying it.
pub(crate) struct Extracted<'a> {
    pub(crate) package_name: String,
    pub(crate) header: Vec<u8>,
    pub(crate) export_data: Cow<'a, [u8]>,
    pub(crate) is_map: bool,
    pub(crate) report: PackageReport,
}

impl Extracted<'_> {
    fn into_owned(self) -> LegacyOutput {
        LegacyOutput {
            package_name: self.package_name,
            header: self.header,
            export_data: self.export_data.into_owned(),
            is_map: self.is_map,
            report: self.report,
        }
    }
}

/// [`extract_package`] without copying the export data: the Zen header is
/// read alone and the export data stays in `input.package`.
pub(crate) fn extract_borrowed<'a>(
    input: ZenInput<'a>,
    cx: &ExtractContext<'_>,
) -> Result<Extracted<'a>> {
    let zen = ZenPackage::read_header(input.package, input.engine)?;
    // `read_header` succeeded: the header size lies inside the chunk.
    let export_data = &input.package[zen.summary.header_size as usize..];
    let package_name = zen.package_name();
    extract_parsed(
        &zen,
        export_data,
        input.imported_packages.unwrap_or(&[]),
        cx,
    )
    .map_err(|e| e.within(format!("package {package_name}")))
}

/// `zen` is the package's header (its `export_data` empty); `export_data`
/// is what follows the header in the chunk.
fn extract_parsed<'a>(
    zen: &ZenPackage,
    export_data: &'a [u8],
    store_imports: &[u64],
    cx: &ExtractContext<'_>,
) -> Result<Extracted<'a>> {
    let package_name = zen.package_name();
    if !package_name.starts_with('/') {
        return Err(Error::invalid(format!(
            "the summary names the package `{package_name}`, not a long package name"
        ))
        .within("summary"));
    }
    if !zen.cell_imports.is_empty() || !zen.cell_exports.is_empty() {
        return Err(Error::unsupported(format!(
            "the package has {} Verse cell imports and {} cell exports; zenpak does not convert Verse cells",
            zen.cell_imports.len(),
            zen.cell_exports.len()
        )));
    }
    let (imports, unresolved) = imports::resolve(imports::ImportSources {
        zen,
        store_imports,
        script_objects: cx.script_objects,
        provider: cx.headers,
    })?;
    if !unresolved.is_empty() && !cx.options.allow_unresolved {
        return Err(unresolved_error(&unresolved));
    }
    let exports = exports::build(zen, &imports)?;
    let build = |placement| build_legacy(zen, export_data, &imports, &exports, placement);
    let mut result = build(ArcPlacement::FirstCommand)?;
    let mut difference = None;
    if zen.engine.zen_layout() == ZenLayout::GraphData || cx.options.verify {
        difference = round_trip_difference(zen, export_data, &package_name, &result)?;
        if difference.is_some() && zen.engine.zen_layout() == ZenLayout::GraphData {
            let other = build(ArcPlacement::EarliestVisit)?;
            if round_trip_difference(zen, export_data, &package_name, &other)?.is_none() {
                result = other;
                difference = None;
            }
        }
    }
    // Placeholders are reported once per package by the caller, from `unresolved`.
    let mut warnings: Vec<Diagnostic> = result
        .notes
        .iter()
        .map(|n| Diagnostic::warning("approximated", n.clone()))
        .collect();
    // Placeholders never convert back to the same hashes; they are reported already.
    if let Some(d) = difference.filter(|_| unresolved.is_empty()) {
        warnings.push(
            Diagnostic::warning(
                "round-trip",
                format!(
                    "converting the extracted package back does not give the same Zen package: {d}"
                ),
            )
            .with_hint(
                "the legacy package is usable, but building it gives a different container entry",
            ),
        );
    }
    let is_map = is_map(zen, &imports);
    Ok(Extracted {
        header: result.header,
        export_data: result.export_data,
        is_map,
        report: PackageReport {
            package_name: package_name.clone(),
            imports: imports.imports.len(),
            exports: exports.len(),
            unresolved,
            warnings,
        },
        package_name,
    })
}

/// Stages 3–5 for resolved imports and exports.
fn build_legacy<'a>(
    zen: &ZenPackage,
    export_data: &'a [u8],
    imports: &imports::Imports,
    exports: &[exports::DraftExport],
    placement: ArcPlacement,
) -> Result<package::Assembled<'a>> {
    let package_name = zen.package_name();
    let dependencies = dependencies::rebuild(zen, imports, exports, placement)?;
    let export_names: Vec<&str> = exports.iter().map(|e| e.name.base.as_str()).collect();
    let package_fname = Name::from_full(&package_name);
    let mut header_names: BTreeSet<&str> = BTreeSet::new();
    for d in &imports.imports {
        header_names.extend([
            d.class.package.base.as_str(),
            d.class.name.base.as_str(),
            d.object_name.base.as_str(),
        ]);
    }
    header_names.extend(&export_names);
    if zen.engine.is_ue5() {
        header_names.insert(&package_fname.base);
    }
    let names = names::build(
        zen,
        &names::NameNeeds {
            header: header_names,
            export_names,
            package_name: &package_fname.base,
        },
    );
    package::assemble(package::Parts {
        zen,
        export_data,
        package_name: &package_name,
        imports,
        exports,
        dependencies: &dependencies,
        names,
    })
}

/// Converts the extracted package back and says where it differs from the
/// Zen package it came from (`zen`'s header and `export_data`; `None`:
/// identical).
fn round_trip_difference(
    zen: &ZenPackage,
    export_data: &[u8],
    package_name: &str,
    legacy: &package::Assembled<'_>,
) -> Result<Option<String>> {
    let files = crate::legacy::PackageFiles {
        path: format!("{package_name}.uasset").into(),
        header: legacy.header.clone(),
        uexp_path: format!("{package_name}.uexp").into(),
        uexp: legacy.export_data.to_vec(),
        bulk: Vec::new(),
    };
    let read = files.read_package(Some(zen.engine))?;
    let mut converted = crate::zen::convert(&files, &read, zen.engine, package_name)?.package;
    let converted_data = std::mem::take(&mut converted.export_data);
    if converted == *zen && converted_data == export_data {
        return Ok(None);
    }
    converted.export_data = converted_data;
    let original = ZenPackage {
        export_data: export_data.to_vec(),
        ..zen.clone()
    };
    Ok(Some(
        crate::zen::diff::first_difference(&original, &converted)
            .map(|d| d.to_string())
            .unwrap_or_else(|| "the bytes differ".into()),
    ))
}

/// How many unresolved imports a message names (the rest are counted).
pub const UNRESOLVED_SHOWN: usize = 3;

/// `count` imports, the first `shown` named (`import N (what)`), the rest counted.
pub fn unresolved_list(unresolved: &[Unresolved], shown: usize) -> String {
    let mut list = unresolved
        .iter()
        .take(shown)
        .map(|u| format!("import {} ({})", u.import, u.what))
        .collect::<Vec<_>>()
        .join(", ");
    if unresolved.len() > shown {
        list.push_str(&format!(", and {} more", unresolved.len() - shown));
    }
    list
}

/// The one error of a package whose imports cannot be resolved: how many,
/// the first few by name, and why the first could not be.
pub(crate) fn unresolved_error(unresolved: &[Unresolved]) -> Error {
    let why = unresolved.first().map_or("", |u| u.reason.as_str());
    Error::invalid(format!(
        "{} imports cannot be resolved: {} (the first: {why})",
        unresolved.len(),
        unresolved_list(unresolved, UNRESOLVED_SHOWN)
    ))
    .within("import map")
    .with_hint(UNRESOLVED_HINT)
}

const UNRESOLVED_HINT: &str = "give the game (--game-dir with its install folder, or --game with its Paks folder: its global.utoc holds the script objects, its containers the packages imported from), or --script-objects, or pass --allow-unresolved to write placeholders";

/// A package whose top-level export is a `World` is a map (`.umap`).
fn is_map(zen: &ZenPackage, imports: &imports::Imports) -> bool {
    zen.exports.iter().any(|e| {
        e.outer_index.is_null()
            && imports.index_of(e.class_index).is_some_and(|i| {
                imports.imports[i].object_name.full() == "World"
                    && imports.package_of(i).as_deref() == Some("/Script/Engine")
            })
    })
}

#[cfg(test)]
mod tests {
    use super::Name;

    #[test]
    fn names_split_their_number_as_the_engine_does() {
        assert_eq!(Name::from_full("BodySetup_1"), Name::new("BodySetup", 2));
        assert_eq!(
            Name::from_full("Level_01").number,
            0,
            "a leading zero is text"
        );
        assert_eq!(
            Name::from_full("/Game/Maps/Level_2").base,
            "/Game/Maps/Level"
        );
        assert_eq!(Name::new("Cube", 3).full(), "Cube_2");
        assert_eq!(Name::new("Cube", 0).full(), "Cube");
    }
}
