//! Where the extractor finds the packages a package imports from: a
//! [`HeaderProvider`] gives the Zen header of a package by id. The
//! container extraction ([`super::container`]) provides the headers of the
//! packages it can read; tests and tools can fill a [`PackageHeaders`] map.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::binary::Reader;
use crate::error::{Context, Error, Result};
use crate::hash::package_id;
use crate::version::EngineVersion;
use crate::zen::{ZenPackage, ZenSummary};

/// A package another package imports from: its Zen header and, when the
/// container header is known, the ids of the packages it imports in turn
/// (UE 4.26–5.2 headers refer to their imported packages through that list).
#[derive(Debug, Clone)]
pub struct ProvidedPackage {
    pub(crate) header: ZenPackage,
    pub(crate) imported_packages: Vec<u64>,
}

/// Gives the Zen header of a package by id.
pub trait HeaderProvider: Sync {
    /// The package with id `package_id`, or `None` when it is not known here.
    fn package(&self, package_id: u64) -> Result<Option<Arc<ProvidedPackage>>>;
}

/// A provider that knows no package (every package import stays unresolved).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoPackages;

impl HeaderProvider for NoPackages {
    fn package(&self, _package_id: u64) -> Result<Option<Arc<ProvidedPackage>>> {
        Ok(None)
    }
}

/// An in-memory set of package headers, by package id.
#[derive(Debug, Clone)]
pub struct PackageHeaders {
    engine: EngineVersion,
    packages: BTreeMap<u64, Arc<ProvidedPackage>>,
}

impl PackageHeaders {
    pub fn new(engine: EngineVersion) -> Self {
        PackageHeaders {
            engine,
            packages: BTreeMap::new(),
        }
    }

    /// Adds a package from its chunk (the export data, if present, is not
    /// kept). Returns its package id.
    pub fn insert(&mut self, package_chunk: &[u8], imported_packages: Vec<u64>) -> Result<u64> {
        let header = read_header(package_chunk, self.engine)?;
        let id = package_id(&header.package_name());
        self.packages.insert(
            id,
            Arc::new(ProvidedPackage {
                header,
                imported_packages,
            }),
        );
        Ok(id)
    }
}

impl HeaderProvider for PackageHeaders {
    fn package(&self, package_id: u64) -> Result<Option<Arc<ProvidedPackage>>> {
        Ok(self.packages.get(&package_id).cloned())
    }
}

/// Reads only the header of a package chunk (the export data is left out,
/// so a provider does not keep it in memory).
pub(crate) fn read_header(package_chunk: &[u8], engine: EngineVersion) -> Result<ZenPackage> {
    let mut r = Reader::new(package_chunk);
    let summary = ZenSummary::read(&mut r, engine.zen_layout()).context("zen package > summary")?;
    let size = summary.header_size as usize;
    if size > package_chunk.len() {
        return Err(Error::format(
            4,
            format!(
                "header size {size} is larger than the package ({} bytes)",
                package_chunk.len()
            ),
        )
        .within("zen package > summary"));
    }
    ZenPackage::read(&package_chunk[..size], engine)
}
