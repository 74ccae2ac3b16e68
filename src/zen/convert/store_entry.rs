//! Stage 6, store entry: the package's entry in the container header
//! (`FPackageStoreOptimizer::CreatePackageStoreEntry`).

use serde::Serialize;

use crate::iostore::container_header::StoreEntry;
use crate::version::ZenLayout;

use super::super::package::ZenPackage;

/// The store entry of a converted package whose chunk is `chunk_len` bytes.
pub(super) fn store_entry(
    package: &ZenPackage,
    imported_packages: Vec<u64>,
    chunk_len: u64,
) -> StoreEntry {
    StoreEntry {
        export_bundles_size: chunk_len,
        load_order: 0,
        export_count: package.exports.len() as i32,
        export_bundle_count: match package.engine.zen_layout() {
            ZenLayout::DependencyBundles => 1,
            _ => package.export_bundle_headers.len() as i32,
        },
        imported_packages,
        // Only the shader library knows the package's shader maps.
        shader_map_hashes: Vec::new(),
    }
}

/// A store entry with the package it belongs to, as `zenpak convert
/// --store-entry` writes it.
#[derive(Debug, Clone, Serialize)]
pub struct StoreEntryReport<'a> {
    pub package_id: u64,
    pub package_name: &'a str,
    #[serde(flatten)]
    pub entry: &'a StoreEntry,
    /// Names of packages referenced softly.
    pub soft_package_references: &'a [String],
}
