//! One package as the conversion made it ([`BuiltPackage`]): what the
//! container gets and the cache keeps. Data the stages and the cache share;
//! A leaf of `build`: it uses no other module of `build`.

use std::path::PathBuf;

use crate::error::{Error, Result};
use crate::iostore::container_header::StoreEntry;
use crate::iostore::ChunkPiece;
use crate::legacy::BulkKind;
use crate::version::EngineVersion;

/// A bulk-data chunk: one companion file, streamed from disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BulkChunk {
    pub kind: BulkKind,
    pub path: PathBuf,
    pub len: u64,
}

/// One package ready for the container: what the conversion made of it.
#[derive(Debug, Clone, PartialEq)]
pub struct BuiltPackage {
    /// What the game profile changed (one line per export; not kept in the cache).
    pub fixups: Vec<String>,
    /// Warnings about the package that do not stop the build (not kept in the cache).
    pub(crate) warnings: Vec<crate::diagnostic::Diagnostic>,
    pub package_id: u64,
    pub package_name: String,
    /// The start of the package's export-bundle chunk (Zen header, and the
    /// export data unless it is [`uexp_tail`](Self::uexp_tail)).
    pub(crate) head: Vec<u8>,
    /// The rest of the chunk when it is the package's `.uexp` exactly as it
    /// is on disk: that file and its length. Streamed, and kept by reference
    /// in the cache.
    pub uexp_tail: Option<(PathBuf, u64)>,
    /// Bulk-data chunks: the companions as they are on disk.
    pub bulk: Vec<BulkChunk>,
    pub store_entry: StoreEntry,
    /// Names of the packages the package references softly.
    pub soft_package_references: Vec<String>,
    /// 5.0–5.2: the package's commands and their dependencies, for the
    /// container-wide bundle pass (`zen::container_bundles`).
    pub(crate) export_graph: Option<crate::zen::ExportGraph>,
}

impl BuiltPackage {
    /// The export-bundle chunk as pieces: the head, then the `.uexp` tail.
    pub fn package_pieces(&self) -> Vec<ChunkPiece<'_>> {
        let mut pieces = vec![ChunkPiece::Bytes(&self.head)];
        if let Some((path, len)) = &self.uexp_tail {
            pieces.push(ChunkPiece::File {
                path,
                offset: 0,
                len: *len,
            });
        }
        pieces
    }

    /// Length of the export-bundle chunk.
    pub fn package_len(&self) -> u64 {
        self.head.len() as u64 + self.uexp_tail.as_ref().map_or(0, |(_, len)| *len)
    }
}

impl BuiltPackage {
    /// 5.0–5.2: what the container-wide bundle pass needs of the package
    /// (`None` for other layouts).
    pub(crate) fn bundle_graph(
        &self,
        engine: EngineVersion,
    ) -> Result<Option<crate::zen::BundleGraph>> {
        let Some(graph) = &self.export_graph else {
            return Ok(None);
        };
        let package = crate::zen::ZenPackage::read_header(&self.head, engine)?;
        crate::zen::BundleGraph::new(
            self.package_id,
            &package,
            graph,
            &self.store_entry.imported_packages,
        )
        .map(Some)
    }

    /// Lays the package out for the bundles the container-wide pass gave
    /// it (`zen::rebundle`): header, export data and store entry.
    pub fn rebundle(
        &mut self,
        engine: EngineVersion,
        bundles: &crate::zen::ExportBundles,
    ) -> Result<()> {
        let graph = self
            .export_graph
            .as_ref()
            .ok_or_else(|| Error::internal("a package without an export graph was rebundled"))?;
        let mut chunk = std::mem::take(&mut self.head);
        if let Some((path, _)) = self.uexp_tail.take() {
            let mut file = std::fs::File::open(&path).map_err(|e| Error::io(&path, e))?;
            std::io::Read::read_to_end(&mut file, &mut chunk).map_err(|e| Error::io(&path, e))?;
        }
        let imported = self.store_entry.imported_packages.len();
        let (bytes, bundle_count) = crate::zen::rebundle(&chunk, engine, graph, bundles, imported)?;
        self.head = bytes;
        self.store_entry.export_bundle_count = bundle_count as i32;
        self.store_entry.export_bundles_size = self.head.len() as u64;
        Ok(())
    }
}
