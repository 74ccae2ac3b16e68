//! The Zen package: the form cooked packages take inside IoStore containers
//! (the export-bundle chunk), and the conversion legacy → Zen.
//!
//! Owns the whole Zen package model for UE 4.26–5.7: summary, name map
//! (name batch), bulk-data map, imported public export hashes, import map
//! (`FPackageObjectIndex`), export map, export bundles, dependency bundles
//! (5.3+) or graph data (4.26–5.2), imported package names, and the export
//! data after the header. Reader and byte-exact writer in [`package`];
//! layout differences per release come from [`crate::version::ZenLayout`].
//!
//! Format facts were checked against the engine-written packages of
//! `../shared/corpus/retoc` (see `docs-zen.md`), and read from the public
//! implementations trumank/retoc and FabianFG/CUE4Parse.

pub mod convert;
pub mod diff;
pub mod localization;
pub mod names;
pub mod package;
pub mod records;
pub mod verify;

pub use convert::{
    container_bundles, convert, convert_with, optimize_export_bundles, rebundle, BulkDataKind,
    BundleGraph, ConvertedPackage, ExportBundles, ExportData, ExportGraph, SourcePackage,
    StoreEntryReport,
};
pub use names::{ImportedPackageNames, ZenName};
pub use package::{PackageArcs, ZenPackage, ZenSummary};
pub use records::*;
