//! One package of a [`ViewSource`] as a legacy package in memory, found by
//! name (`zenpak to-json SOURCE PACKAGE`, `zenpak to-json --game-dir GAME
//! PACKAGE`).
//!
//! The package is named by its package name (`/Game/Data/DT_Weapons`) or
//! by a path as `zenpak list` shows it (its `.uzenasset`, or the stored
//! `.uasset`/`.umap` path). Only what the user named is looked in (the
//! source's selected containers and paks; the whole game when the game
//! itself is the source), and the copy found is the one the game loads
//! (the view's mount order). A package chunk is converted as `extract`
//! converts it — imports through the source's script objects (or the ones
//! given) and the headers of the packages it holds, with the store entry of
//! the container header that wins — and its bulk-data chunks are held as
//! its companions. A package of a pak without a container (its `.uasset` or
//! `.umap` entry) is read as it is, with its `.uexp` and companions.
//! Nothing is written. [`SourcePackages`] finds the packages that define a
//! package's content schemas the same way. Tests: `tests/extract/extract_to_json.rs`.

use std::path::PathBuf;

use crate::error::{Error, Result};
use crate::game::FileOrigin;
use crate::hash::package_id;
use crate::iostore::chunk::ChunkType;
use crate::legacy::{BulkCompanion, BulkKind, PackageFiles};
use crate::version::EngineVersion;

use super::container::{
    script_objects, SourceChunk, SourceHeaders, ViewSource, SCRIPT_OBJECT_CHUNKS,
};
use super::{
    extract_package, ExtractContext, ExtractOptions, PackageReport, ScriptObjects, ZenInput,
};

/// What to look for and how to convert it.
#[derive(Clone, Copy)]
pub struct Lookup<'a> {
    /// A package name or a path as `zenpak list` shows it.
    pub package: &'a str,
    /// Needed for a Zen package (its layout); a legacy one may say its own.
    pub engine: Option<EngineVersion>,
    /// Overrides the source's own script objects.
    pub script_objects: Option<&'a ScriptObjects>,
    pub options: ExtractOptions,
}

/// A package found in a source, as legacy files.
#[derive(Debug)]
pub struct FoundPackage {
    /// The legacy files, in memory: `path` is the package's path in the
    /// view with `.uasset`/`.umap`, its companions beside it.
    pub files: PackageFiles,
    /// The container or pak (file name) it was read from.
    pub source: String,
    /// How it was converted from Zen (`None`: a legacy package of a pak).
    pub report: Option<PackageReport>,
}

/// Where a package is.
enum Place {
    Chunk(SourceChunk),
    /// A `.uasset`/`.umap` entry of a pak (view path).
    Pak(String),
}

/// Finds `lookup.package` in `source` and reads it as a legacy package;
/// `Ok(None)` when the source does not have it.
pub fn find_package(source: &ViewSource, lookup: &Lookup<'_>) -> Result<Option<FoundPackage>> {
    let Some(place) = locate(source, lookup.package)? else {
        return Ok(None);
    };
    match place {
        Place::Chunk(chunk) => convert_chunk(source, lookup, &chunk).map(Some),
        Place::Pak(path) => read_pak_package(source, &path).map(Some),
    }
}

/// The packages of a source found by name for the schemas they define
/// (a blueprint parent or user-defined struct in the game: `zenpak to-json
/// --game-dir`), each converted as [`find_package`] converts it; `lookup`
/// gives everything but the name.
pub struct SourcePackages<'a> {
    pub source: &'a ViewSource,
    pub lookup: Lookup<'a>,
}

impl crate::properties::PackageSource for SourcePackages<'_> {
    fn find_package(&self, name: &str) -> Result<Option<PackageFiles>> {
        let lookup = Lookup {
            package: name,
            ..self.lookup
        };
        Ok(find_package(self.source, &lookup)?.map(|found| found.files))
    }
}

fn is_header_path(path: &str) -> bool {
    path.rsplit_once('.').is_some_and(|(_, ext)| {
        ["uasset", "umap", "uzenasset", "uzenmap"]
            .iter()
            .any(|e| ext.eq_ignore_ascii_case(e))
    })
}

/// The package's place: a path names a file of the view (the package chunk
/// or the pak's header entry); a name is matched to package chunks by id,
/// then to pak header entries by the package name their path gives.
fn locate(source: &ViewSource, wanted: &str) -> Result<Option<Place>> {
    if is_header_path(wanted) {
        let Some(file) = source.view().find_file(wanted) else {
            return Ok(None);
        };
        return Ok(match source.handle_of(&file) {
            (false, _) => None,
            (true, Some(handle)) => source
                .chunks_of(|t| t == ChunkType::ExportBundleData)?
                .into_iter()
                .find(|c| c.handle == handle)
                .map(Place::Chunk),
            (true, None) => Some(Place::Pak(file.path.into_owned())),
        });
    }
    let name = wanted.trim_end_matches('/');
    let id = package_id(name);
    if let Some(chunk) = source
        .chunks_of(|t| t == ChunkType::ExportBundleData)?
        .into_iter()
        .find(|c| c.id == id && c.index == 0 && c.selected)
    {
        return Ok(Some(Place::Chunk(chunk)));
    }
    Ok(source
        .files()?
        .into_iter()
        .find(|f| {
            f.selected
                && is_header_path(&f.path)
                && crate::build::placement::package_name_of_stored(&f.path)
                    .is_some_and(|n| n.eq_ignore_ascii_case(name))
        })
        .map(|f| Place::Pak(f.path)))
}

/// `path` with its extension replaced (`Maps/Entry.umap` → `Maps/Entry.uexp`).
fn with_extension(path: &str, ext: &str) -> String {
    let stem = path.rsplit_once('.').map_or(path, |(stem, _)| stem);
    format!("{stem}.{ext}")
}

fn convert_chunk(
    source: &ViewSource,
    lookup: &Lookup<'_>,
    chunk: &SourceChunk,
) -> Result<FoundPackage> {
    // The caller knows where an engine can come from: the hint is its own.
    let engine = lookup.engine.ok_or_else(|| {
        Error::usage(
            "which engine wrote this package? A Zen package is read by its engine's layout",
        )
    })?;
    let chunks = source.chunks_of(|t| {
        t == ChunkType::ExportBundleData
            || SCRIPT_OBJECT_CHUNKS.contains(&t)
            || t.bulk_kind().is_some()
    })?;
    let store = source.store_entries()?;
    let own_script_objects;
    let table = match lookup.script_objects {
        Some(t) => Some(t),
        None => {
            own_script_objects = script_objects(source, &chunks)?;
            own_script_objects.as_ref()
        }
    };
    let headers = SourceHeaders::new(source, engine, &chunks, &store);
    let cx = ExtractContext {
        script_objects: table,
        headers: &headers,
        options: lookup.options,
    };
    let bytes = source.read_chunk(chunk)?;
    let legacy = extract_package(
        ZenInput {
            engine,
            package: &bytes,
            imported_packages: store.get(&chunk.id).map(Vec::as_slice),
        },
        &cx,
    )
    .map_err(|e| source.name_chunk_file(e, chunk))?;
    let ext = if legacy.is_map { "umap" } else { "uasset" };
    let path = match &chunk.path {
        Some(p) => with_extension(p, ext),
        None => format!("{}.{ext}", legacy.package_name.trim_start_matches('/')),
    };
    let mut bulk = Vec::new();
    for kind in BulkKind::ALL {
        let t = ChunkType::of_bulk(kind);
        if let Some(c) = chunks
            .iter()
            .find(|c| c.id == chunk.id && c.index == 0 && c.chunk_type == t)
        {
            let data = source.read_chunk(c)?;
            bulk.push(BulkCompanion::held(
                kind,
                with_extension(&path, kind.extension()).into(),
                data,
            ));
        }
    }
    Ok(FoundPackage {
        files: PackageFiles {
            uexp_path: with_extension(&path, "uexp").into(),
            path: PathBuf::from(path),
            header: legacy.header,
            uexp: legacy.export_data,
            bulk,
        },
        source: source.source_name(chunk.handle),
        report: Some(legacy.report),
    })
}

/// A legacy package of a pak: its header entry at view path `path`, its
/// `.uexp` and companions (the copies the game loads).
fn read_pak_package(source: &ViewSource, path: &str) -> Result<FoundPackage> {
    let view = source.view();
    // The bytes and the mounted source (index) of a file of the view.
    let read = |path: &str| -> Result<Option<(Vec<u8>, usize)>> {
        let Some(file) = view.find_file(path) else {
            return Ok(None);
        };
        let mut data = Vec::new();
        view.read_file_to(&file, &mut data)?;
        let index = match file.origin {
            FileOrigin::Chunk(c) => c.source,
            FileOrigin::PakEntry { source, .. } => source,
        };
        Ok(Some((data, index)))
    };
    let (header, from) =
        read(path)?.ok_or_else(|| Error::internal("a pak entry found is no longer in the view"))?;
    let from = &view.sources()[from];
    let uexp_path = with_extension(path, "uexp");
    let (uexp, _) = read(&uexp_path)?.ok_or_else(|| {
        Error::invalid(format!(
            "{path} has no {uexp_path} beside it in the view: a cooked package keeps its export data there"
        ))
        .in_file(&from.path)
    })?;
    let mut bulk = Vec::new();
    for kind in BulkKind::ALL {
        let companion = with_extension(path, kind.extension());
        if let Some((data, _)) = read(&companion)? {
            bulk.push(BulkCompanion::held(kind, companion.into(), data));
        }
    }
    Ok(FoundPackage {
        files: PackageFiles {
            path: PathBuf::from(path),
            header,
            uexp_path: uexp_path.into(),
            uexp,
            bulk,
        },
        source: from.name().to_string(),
        report: None,
    })
}
