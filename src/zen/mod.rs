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
//! `../shared/corpus/retoc` (described in its `MANIFEST.md`), and read from the public
//! implementations trumank/retoc and FabianFG/CUE4Parse.
//!
//! Submodules: `records` (fixed-size records, `read`/`write` side by side; `ExternalArc` is 9 B,
//! a one-byte command), `names` (UE5 name batch with hash algorithm id `0xC1640000` and
//! big-endian 16-bit headers; UE4 split form with an 8-aligned hash block; reading checks every
//! stored hash, which is how `crate::hash` is verified), `package` (`read` follows the summary's
//! offsets with checked spans; counts the layout does not store are recovered from the bytes,
//! so no store entry is needed), `convert` (`convert` is the public API used by `build`;
//! returns `ConvertedPackage` incl. the `StoreEntryInfo`), `verify` (headers only: outer
//! chains, 5.0–5.2 bundle cycles), `diff` (first difference as section › entry › field).
//!
//! # Layouts (`EngineVersion::zen_layout`)
//!
//! | release | layout | differences |
//! |---|---|---|
//! | 4.26, 4.27 | `Ue4` | 64 B summary; no imported public export hashes; bundle headers (no serial offset) before the entries; graph data = per imported package (id order) its arcs to our bundles; export data in bundle order, `.uexp` tag dropped; serial offsets = legacy; public export "hash" = package-import index of the full path, all bits set if not public |
//! | 5.0, 5.1 | `GraphData` | 44 B summary; name batch; graph data = bundle headers (with serial offset), internal arcs, one external-arc list per imported package |
//! | 5.2 | `GraphData` | + bulk-data map after the name batch |
//! | 5.3 | `DependencyBundles` | 52 B summary; one export bundle; dependency bundles; imported package names; export data = `.uexp` unchanged; serial offset = legacy − legacy header size |
//! | 5.4, 5.5 | `DependencyBundles` | bulk-data map size preceded by u64 pad count + pad so it is 8-aligned |
//! | 5.6 | `DependencyBundles` | cell map offsets after the versioning info; cell maps after the export map |
//! | 5.7 | `DependencyBundles` | `CookedHeaderSize` is `_Unused`; written as 0 (no 5.7 engine output to check) |
//!
//! # Conversion rules (all checked against engine output in the corpus)
//!
//! - Name map: UE5 starts from the legacy names referenced from export data, UE4 from all;
//!   export object names are added as met, the package name last.
//! - Imports: `/Script/...` → script import (hash of the `/`-joined, ASCII-lowercased path);
//!   a package object → null; else UE5: (index of its package among imported packages sorted
//!   by id) << 32 | index of its deduplicated public export hash (CityHash64 of the lowercased
//!   package-relative path); UE4: package import from the hash of the full path, packages in
//!   first-seen order.
//! - Exports: public (RF_Public or `generate_public_hash`) get a public export hash; filter
//!   flags 2 not-for-server, 1 not-for-client.
//! - Load order: topological order of (export, create/serialize) over preload dependencies
//!   (serialize after own create). Among ready commands UE5 takes public first, then creates,
//!   then lowest export index; UE4 the lowest (export, command). Alone, a package is one bundle.
//! - Bundles 5.0–5.2 (`container_bundles` = engine `OptimizeExportBundles`): a container's
//!   packages are laid out together; consecutive commands of a package merge, so one in an
//!   import cycle gets several bundles. `build` reruns this from each cache entry's
//!   `ExportGraph` and `rebundle`s affected packages (chunk keyed by its bundles too);
//!   `verify` warns `bundle-cycle`.
//! - Dependency bundles (5.3+): per export, create/serialize-before-create/serialize in legacy
//!   order, keeping imports of other packages' exports. **An export's dependency on itself is
//!   kept** (the engine lists it; retoc drops it, hence its 24/40 B short
//!   `BP_ThirdPersonCharacter` 5.5/5.6 headers). retoc also splits 4.27 bundles after every
//!   public export; the engine's `TestModUI` is one 440-entry bundle with one `(0 → 0)` arc per
//!   imported package, sorted by id.
//! - Store entry: export count, bundle count (1 in 5.3+), imported package ids in header
//!   order, soft package references; shader map hashes stay empty. 4.27 matches the engine's.
//! - Refused: packages with Verse cells (nothing to verify against); outer chains that loop
//!   (`LegacyPackage::check_outer_chains`; `zen::verify` inside containers).
//!
//! # Tests (`tests/packages/`)
//!
//! `zen_roundtrip.rs` (14 engine packages byte-identical), `zen_conformance.rs` (the 7 engine
//! pairs converted byte-identical; 4.27 store entry), `zen_corpus.rs` (260 legacy packages
//! convert and read back), `zen_mutation.rs` (no panic), `zen_diff.rs`, `zen_cli.rs`.

pub mod convert;
pub mod diff;
pub(crate) mod localization;
pub(crate) mod names;
pub(crate) mod package;
pub(crate) mod records;
pub mod verify;

pub use convert::{
    container_bundles, convert, convert_with, optimize_export_bundles, rebundle, BundleGraph,
    ConvertedPackage, ExportBundles, ExportData, ExportGraph, SourcePackage, StoreEntryReport,
};
pub use names::ImportedPackageNames;
pub use package::{PackageArcs, ZenPackage, ZenSummary};
pub use records::*;
