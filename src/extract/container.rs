//! Extracting whole containers: choose the packages, convert them, stream their bulk data to
//! files, write the other files as they are, report progress.
//!
//! [`extract`] selects packages by globs over package names (the name comes from the directory
//! index path when it maps to the chunk id, else from the header), plus with
//! `with_dependencies` everything they import transitively (found through store entries, else
//! the 5.3+ header), in path order. Pak files and chunks with a path that are no package data
//! are written as they are; the container header, shader libraries and global chunks are
//! listed as skipped. Script objects come from the caller, else from the sources'
//! ScriptObjects / Loader chunks.
//!
//! The packages come from a [`ViewSource`], over a [`GameView`]: a game's `Paks/` folder
//! (`--game`) mounted first, then the named `.utoc`/`.pak` files or folders; the engine's mount
//! order picks each chunk's and file's copy (Oodle and encrypted containers included). Only
//! what was named is selected; the game only resolves imports.
//!
//! Memory is bounded: each worker thread of the pool reads a package's chunk into a buffer it
//! keeps (no allocation per package once it has read one as large; let go past 16 MiB),
//! converts it, writes its files — the `.uexp` of 5.3+ straight from that buffer — and keeps
//! only its report; packages go to the pool a group at a time
//! ([`crate::pool::in_order_on_pool`]; each file has its own path, so results and events
//! are put back in plan order); bulk data and pak files go to their files
//! block by block; [`SourceHeaders`] keeps at most 256 imported headers (read on demand); each
//! package's warnings go to the caller as `ExtractEvent`s as they come, not kept.
//! Files are written through [`OutputDir`] (never outside the output folder, none under its
//! name before it is whole). Tests: `tests/extract/extract_cli.rs`.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;

use crate::diagnostic::Diagnostic;
use crate::error::{Error, ErrorKind, Result};
use crate::game::{ChunkRef, FileOrigin, GameView};
use crate::hash::package_id;
use crate::iostore::chunk::ChunkType;
use crate::pak::crypto::KeyRing;
use crate::pak::PakReader;
use crate::publish::output_dir::OutputDir;
use crate::version::EngineVersion;

use super::provider::{read_header, HeaderProvider, ProvidedPackage};
use super::script_objects::ScriptObjects;
use super::{
    extract_borrowed, ExtractContext, ExtractOptions, Extracted, PackageReport, Unresolved,
    ZenInput,
};

/// One chunk a source can read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceChunk {
    /// The source's handle for the chunk.
    pub(crate) handle: usize,
    /// The chunk id's 64-bit id (the package id for package and bulk chunks).
    pub(crate) id: u64,
    pub(crate) index: u16,
    pub(crate) chunk_type: ChunkType,
    /// Path from the directory index, relative to the mount point.
    pub(crate) path: Option<String>,
    pub(crate) size: u64,
    /// Whether the chunk is in what the user asked to extract (not only in
    /// the game it imports from).
    pub(crate) selected: bool,
}

/// A file of a companion pak.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceFile {
    pub(crate) handle: usize,
    pub(crate) path: String,
    pub(crate) size: u64,
    pub(crate) selected: bool,
}

/// A [`GameView`] (a game's `Paks/` folder, a mod's containers, or both)
/// as a chunk source: each chunk and file is the copy the game would load;
/// what the user named (rather than the game it imports from) is selected.
pub struct ViewSource {
    view: GameView,
    /// Per mounted source: whether its chunks and files are to be extracted.
    selected: Vec<bool>,
}

impl ViewSource {
    /// Opens `selected` (folders, `.utoc` or `.pak` files to extract) on top
    /// of `game` (the game's `Paks/` folder, mounted first, for what they
    /// import). Without `game`, everything named is both extracted and
    /// resolved against.
    pub fn open(selected: &[PathBuf], game: Option<&Path>, keys: &KeyRing) -> Result<Self> {
        let (view, named) = match game {
            // The game's unreadable sources are named and left out.
            Some(game) => GameView::open_game(game, selected, keys)?,
            None => GameView::open_all(selected, keys)?,
        };
        let mut flags = vec![false; view.sources().len()];
        for &source in named.iter().flatten() {
            flags[source] = true;
        }
        Ok(ViewSource {
            view,
            selected: flags,
        })
    }

    /// A game's `Paks/` folder as the game readers open it
    /// ([`GameView::open_game`]), all of it selected.
    pub fn open_game(paks: &Path, keys: &KeyRing) -> Result<Self> {
        let (view, _) = GameView::open_game(paks, &[], keys)?;
        let selected = vec![true; view.sources().len()];
        Ok(ViewSource { view, selected })
    }

    /// A game's `Paks/` folder with only the game's own paks and
    /// containers selected (not those of its mod folders, `~mods` and
    /// `LogicMods`): where the game's unmodded copy of a package is found.
    /// The mods stay in the view, resolving nothing a package needs.
    pub fn open_game_shipped(paks: &Path, keys: &KeyRing) -> Result<Self> {
        let (view, _) = GameView::open_game(paks, &[], keys)?;
        let selected = view
            .sources()
            .iter()
            .map(|source| {
                let relative = source.path.strip_prefix(paks).unwrap_or(&source.path);
                !relative.components().next().is_some_and(|first| {
                    crate::game::conflicts::MOD_FOLDERS
                        .iter()
                        .any(|m| first.as_os_str().eq_ignore_ascii_case(m))
                })
            })
            .collect();
        Ok(ViewSource { view, selected })
    }

    /// The mod `path` on the game of `paks` with the game's other mods
    /// left out ([`GameView::open_game_with_mod`]), only the mod selected:
    /// where the mod's own copy of each of its packages is found.
    pub fn open_mod_on_game(path: &Path, paks: &Path, keys: &KeyRing) -> Result<Self> {
        let (view, own) = GameView::open_game_with_mod(paks, path, keys)?;
        let mut selected = vec![false; view.sources().len()];
        for source in own {
            selected[source] = true;
        }
        Ok(ViewSource { view, selected })
    }

    /// Whether a file of the view is in a selected source, and its chunk
    /// handle when it is a chunk (`None`: a pak entry).
    pub(crate) fn handle_of(&self, file: &crate::game::GameFile<'_>) -> (bool, Option<usize>) {
        match file.origin {
            FileOrigin::Chunk(c) => (
                self.selected[c.source],
                Some((c.source << HANDLE_SHIFT) | c.index),
            ),
            FileOrigin::PakEntry { source, .. } => (self.selected[source], None),
        }
    }

    /// The file name of the container a chunk handle points into.
    pub(crate) fn source_name(&self, handle: usize) -> String {
        self.view.sources()[Self::chunk_ref(handle).source]
            .name()
            .to_string()
    }

    /// The view underneath (its diagnostics, its sources).
    pub fn view(&self) -> &GameView {
        &self.view
    }

    /// `error`, naming the `.utoc` that `chunk` is read from unless it
    /// names a file already (what is parsed from a chunk's bytes knows no
    /// file of its own).
    pub(crate) fn name_chunk_file(&self, error: Error, chunk: &SourceChunk) -> Error {
        let container = self.view.container(Self::chunk_ref(chunk.handle));
        error.in_file(&container.utoc_path)
    }

    /// Bytes on disk of the sources to extract (not the game they import from).
    fn selected_bytes(&self) -> u64 {
        (0..self.selected.len())
            .filter(|&i| self.selected[i])
            .map(|i| self.view.source_bytes(i))
            .sum()
    }

    fn chunk_ref(handle: usize) -> ChunkRef {
        ChunkRef {
            source: handle >> HANDLE_SHIFT,
            index: handle & ((1 << HANDLE_SHIFT) - 1),
        }
    }

    fn checked_chunk(&self, handle: usize) -> Result<ChunkRef> {
        let chunk = Self::chunk_ref(handle);
        match self.view.sources().get(chunk.source) {
            Some(s)
                if s.container
                    .as_ref()
                    .is_some_and(|c| chunk.index < c.toc.chunk_ids.len()) =>
            {
                Ok(chunk)
            }
            _ => Err(Error::internal("chunk handle names no container chunk")),
        }
    }

    fn pak_entry(&self, file: &SourceFile) -> Result<(&PakReader, &crate::pak::PakEntryInfo)> {
        let (source, entry) = (
            file.handle >> HANDLE_SHIFT,
            file.handle & ((1 << HANDLE_SHIFT) - 1),
        );
        let pak = self
            .view
            .sources()
            .get(source)
            .and_then(|s| s.pak.as_ref())
            .ok_or_else(|| Error::internal("file handle names no pak"))?;
        let entry = pak
            .entries
            .get(entry)
            .ok_or_else(|| Error::internal("file handle names no pak entry"))?;
        Ok((pak, entry))
    }
}

/// Handles pack (source index, TOC or pak entry index).
const HANDLE_SHIFT: u32 = 32;

impl ViewSource {
    /// Every chunk once: the copy the game loads.
    pub(crate) fn chunks(&self) -> Result<Vec<SourceChunk>> {
        self.chunks_of(|_| true)
    }

    /// [`chunks`](Self::chunks) of the types `keep` accepts (a game of
    /// millions of chunks is not listed whole for four of them).
    pub(crate) fn chunks_of(&self, keep: impl Fn(ChunkType) -> bool) -> Result<Vec<SourceChunk>> {
        let mut chunks: Vec<SourceChunk> = self
            .view
            .chunks()
            .filter(|&(_, chunk)| keep(self.view.container(chunk).chunk_type(chunk.index)))
            .map(|(id, chunk)| {
                let container = self.view.container(chunk);
                SourceChunk {
                    handle: (chunk.source << HANDLE_SHIFT) | chunk.index,
                    id: id.id(),
                    index: id.index(),
                    chunk_type: container.chunk_type(chunk.index),
                    path: container.paths.get(chunk.index).map(str::to_string),
                    size: container.toc.offsets[chunk.index].length,
                    selected: self.selected[chunk.source],
                }
            })
            .collect();
        chunks.sort_by_key(|c| c.handle);
        Ok(chunks)
    }

    pub(crate) fn read_chunk(&self, chunk: &SourceChunk) -> Result<Vec<u8>> {
        self.view.read_chunk(self.checked_chunk(chunk.handle)?)
    }

    pub(crate) fn copy_chunk(&self, chunk: &SourceChunk, out: &mut dyn Write) -> Result<u64> {
        self.view
            .read_chunk_to(self.checked_chunk(chunk.handle)?, out)
    }

    pub(crate) fn read_chunk_into(&self, chunk: &SourceChunk, dest: &mut [u8]) -> Result<()> {
        let chunk = self.checked_chunk(chunk.handle)?;
        self.view
            .container(chunk)
            .read_chunk_into(chunk.index, dest)
    }

    /// Package id → imported package ids, from the container headers.
    pub(crate) fn store_entries(&self) -> Result<BTreeMap<u64, Vec<u64>>> {
        // Lowest priority first, so that the copy the game loads is the
        // one left in the map (highest order, then the last mounted).
        let mut order: Vec<usize> = (0..self.view.sources().len()).collect();
        order.sort_by_key(|&s| (self.view.sources()[s].order, s));
        let mut entries = BTreeMap::new();
        for source in order {
            if let Some(header) = self.view.container_header(source)? {
                for (id, entry) in header.packages {
                    entries.insert(id, entry.imported_packages);
                }
            }
        }
        Ok(entries)
    }

    pub(crate) fn files(&self) -> Result<Vec<SourceFile>> {
        Ok(self
            .view
            .files()
            .filter_map(|f| match f.origin {
                FileOrigin::PakEntry { source, entry } => Some(SourceFile {
                    handle: (source << HANDLE_SHIFT) | entry,
                    path: f.path.into_owned(),
                    size: f.size,
                    selected: self.selected[source],
                }),
                FileOrigin::Chunk(_) => None,
            })
            .collect())
    }

    pub(crate) fn copy_file(&self, file: &SourceFile, out: &mut dyn Write) -> Result<u64> {
        let (pak, entry) = self.pak_entry(file)?;
        pak.read_to(entry, out)
    }
}

/// Package headers read from a [`ViewSource`] when an import needs them,
/// keeping the most recently used ones.
pub(crate) struct SourceHeaders<'a> {
    source: &'a ViewSource,
    engine: EngineVersion,
    packages: BTreeMap<u64, SourceChunk>,
    store: &'a BTreeMap<u64, Vec<u64>>,
    cache: std::sync::Mutex<VecDeque<(u64, Option<Arc<ProvidedPackage>>)>>,
}

/// How many headers [`SourceHeaders`] keeps.
const HEADER_CACHE: usize = 256;

impl<'a> SourceHeaders<'a> {
    pub(crate) fn new(
        source: &'a ViewSource,
        engine: EngineVersion,
        chunks: &[SourceChunk],
        store: &'a BTreeMap<u64, Vec<u64>>,
    ) -> Self {
        let packages = chunks
            .iter()
            .filter(|c| c.chunk_type == ChunkType::ExportBundleData && c.index == 0)
            .map(|c| (c.id, c.clone()))
            .collect();
        SourceHeaders {
            source,
            engine,
            packages,
            store,
            cache: std::sync::Mutex::new(VecDeque::new()),
        }
    }
}

impl HeaderProvider for SourceHeaders<'_> {
    fn package(&self, package_id: u64) -> Result<Option<Arc<ProvidedPackage>>> {
        {
            let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(pos) = cache.iter().position(|(id, _)| *id == package_id) {
                let entry = cache.remove(pos).expect("position is in range");
                let found = entry.1.clone();
                cache.push_front(entry);
                return Ok(found);
            }
        }
        let found = match self.packages.get(&package_id) {
            // A package that does not read is not a resolution source.
            Some(chunk) => self.source.read_chunk(chunk).ok().and_then(|bytes| {
                read_header(&bytes, self.engine).ok().map(|header| {
                    Arc::new(ProvidedPackage {
                        header,
                        imported_packages: self.store.get(&package_id).cloned().unwrap_or_default(),
                    })
                })
            }),
            None => None,
        };
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        if !cache.iter().any(|(id, _)| *id == package_id) {
            cache.push_front((package_id, found.clone()));
            cache.truncate(HEADER_CACHE);
        }
        Ok(found)
    }
}

/// The chunk types [`script_objects`] reads.
pub(crate) const SCRIPT_OBJECT_CHUNKS: [ChunkType; 4] = [
    ChunkType::ScriptObjects,
    ChunkType::LoaderInitialLoadMeta,
    ChunkType::LoaderGlobalNames,
    ChunkType::LoaderGlobalNameHashes,
];

/// The game's script objects from the source's global chunks, if it has them.
pub(crate) fn script_objects(
    source: &ViewSource,
    chunks: &[SourceChunk],
) -> Result<Option<ScriptObjects>> {
    let find = |t: ChunkType| chunks.iter().find(|c| c.chunk_type == t);
    if let Some(chunk) = find(ChunkType::ScriptObjects) {
        return ScriptObjects::read_ue5(&source.read_chunk(chunk)?)
            .map(Some)
            .map_err(|e| source.name_chunk_file(e, chunk).within("script objects"));
    }
    if let (Some(meta), Some(names), Some(hashes)) = (
        find(ChunkType::LoaderInitialLoadMeta),
        find(ChunkType::LoaderGlobalNames),
        find(ChunkType::LoaderGlobalNameHashes),
    ) {
        return ScriptObjects::read_ue4(
            &source.read_chunk(meta)?,
            &source.read_chunk(names)?,
            &source.read_chunk(hashes)?,
        )
        .map(Some)
        .map_err(|e| source.name_chunk_file(e, meta).within("script objects"));
    }
    Ok(None)
}

/// What to extract and where.
#[derive(Debug, Clone)]
pub struct ExtractRequest {
    pub engine: EngineVersion,
    pub output: PathBuf,
    /// Globs over package names (`/Game/Characters/**`); empty: every package.
    pub filters: Vec<String>,
    /// Also extract the packages the selected ones import (transitively).
    pub with_dependencies: bool,
    /// Write into an output folder that is not empty.
    pub force: bool,
    pub options: ExtractOptions,
    /// How much may be written (checked before anything is).
    pub output_budget: crate::limits::OutputBudget,
}

/// Progress, as extraction goes.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum ExtractEvent {
    /// What will be done, and what to know before it is (`large-output`).
    Planned {
        packages: usize,
        files: usize,
        skipped: usize,
        warnings: Vec<Diagnostic>,
    },
    /// A package is done (written or failed), with the warnings about it
    /// (given here as they come, not kept: memory stays flat however many
    /// packages warn).
    Package {
        done: usize,
        total: usize,
        package_name: String,
        ok: bool,
        warnings: Vec<Diagnostic>,
        /// Its imports that cannot be resolved: written as placeholders
        /// (`ok`), or why it failed (not `ok`, without `allow_unresolved`).
        unresolved: Vec<Unresolved>,
    },
}

/// Something in the containers that is not extracted, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Skipped {
    pub what: String,
    pub reason: String,
}

/// What an extraction did.
#[derive(Debug, Clone, Serialize)]
pub struct ExtractSummary {
    pub output: PathBuf,
    /// Legacy packages written.
    pub packages: usize,
    /// Other files written (pak files, container files with a path).
    pub files: usize,
    pub bytes_written: u64,
    /// Script objects imports were resolved against.
    pub script_objects: usize,
    pub skipped: Vec<Skipped>,
    /// Packages written with warnings (unresolved imports, approximations;
    /// the warnings themselves come with [`ExtractEvent::Package`]).
    pub(crate) warned_packages: usize,
    /// Warnings about those packages.
    pub(crate) warnings: usize,
    /// Packages with imports that cannot be resolved (written with
    /// placeholders, or failed), and how many imports that is in all.
    pub(crate) unresolved_packages: usize,
    pub(crate) unresolved_imports: usize,
    /// Packages chosen for extraction.
    pub(crate) planned: usize,
    /// Packages that could not be extracted.
    pub(crate) failed_packages: usize,
    /// What went wrong with them (a package may have several problems).
    pub failures: Vec<Diagnostic>,
}

impl ExtractSummary {
    /// An error listing the failed packages, if any failed: one entry per
    /// package (its first problem; the JSON summary lists them all).
    pub fn failure_error(&self) -> Option<Error> {
        if self.failures.is_empty() {
            return None;
        }
        let mut by_package: Vec<(&str, Vec<&Diagnostic>)> = Vec::new();
        for d in &self.failures {
            let package = d.structure.first().map_or("", String::as_str);
            match by_package.last_mut() {
                Some((p, list)) if *p == package => list.push(d),
                _ => by_package.push((package, vec![d])),
            }
        }
        let failures = by_package
            .into_iter()
            .map(|(_, list)| {
                let error = list[0].to_error();
                match list.len() {
                    1 => error,
                    n => {
                        let more = format!(
                            "{} more problems in this package; `--json` lists them all",
                            n - 1
                        );
                        let hint = match error.hint() {
                            Some(h) => format!("{h}\n  {more}"),
                            None => more,
                        };
                        error.with_hint(hint)
                    }
                }
            })
            .collect();
        Some(Error::new(ErrorKind::Many {
            what: "packages",
            total: self.planned,
            failures,
        }))
    }
}

/// A package's report and the bytes written for it, or why it failed.
type Written = Result<(PackageReport, u64)>;

/// A package chosen for extraction.
struct Planned {
    chunk: SourceChunk,
    name: String,
    /// Output path of its header, relative to the output folder.
    path: Option<String>,
}

/// Extracts the selected packages of `source` (and their other files) into
/// `request.output`. `script_objects` overrides the source's own.
pub fn extract(
    source: &ViewSource,
    request: &ExtractRequest,
    script_objects_given: Option<&ScriptObjects>,
    on_event: &mut (dyn FnMut(&ExtractEvent) + Send),
) -> Result<ExtractSummary> {
    let chunks = source.chunks()?;
    let store = source.store_entries()?;
    let mut skipped = Vec::new();
    let plan = plan_packages(source, request, &chunks, &store, &mut skipped)?;
    let files = plan_files(source, request, &chunks, &mut skipped)?;
    let bulk = bulk_chunks(&chunks);
    let large = request.output_budget.check(
        planned_bytes(&plan, &files, &bulk),
        source.selected_bytes(),
        &request.output,
    )?;
    check_output(&request.output, request.force)?;
    let output = OutputDir::new(&request.output)?;
    on_event(&ExtractEvent::Planned {
        packages: plan.len(),
        files: files.len(),
        skipped: skipped.len(),
        warnings: large.into_iter().collect(),
    });
    let own_script_objects;
    let table = match script_objects_given {
        Some(t) => Some(t),
        None => {
            own_script_objects = script_objects(source, &chunks)?;
            own_script_objects.as_ref()
        }
    };
    let headers = SourceHeaders::new(source, request.engine, &chunks, &store);
    // Placeholders are always made; a package with any fails here unless
    // they are allowed (so its unresolved imports are known either way).
    let cx = ExtractContext {
        script_objects: table,
        headers: &headers,
        options: ExtractOptions {
            allow_unresolved: true,
            ..request.options
        },
    };
    let mut summary = ExtractSummary {
        output: request.output.clone(),
        packages: 0,
        files: 0,
        bytes_written: 0,
        script_objects: table.map_or(0, ScriptObjects::len),
        skipped,
        warned_packages: 0,
        warnings: 0,
        unresolved_packages: 0,
        unresolved_imports: 0,
        planned: plan.len(),
        failed_packages: 0,
        failures: Vec::new(),
    };
    let total = plan.len();
    // Packages are converted and written on the pool a group at a time
    // (every file goes to its own path, so the order of writing does not
    // matter); results and events come back in plan order. Memory holds a
    // package per worker (its chunk in the worker's buffer) and the
    // reports of two groups.
    let mut done = 0;
    crate::pool::in_order_on_pool(
        &plan,
        |p| {
            with_chunk_buffer(|buffer| {
                let mut out =
                    match convert_planned(source, (request.engine, &cx), p, &store, buffer) {
                        Ok(out) => out,
                        Err(e) => return (Err(e), Vec::new()),
                    };
                let unresolved = std::mem::take(&mut out.report.unresolved);
                if !unresolved.is_empty() && !request.options.allow_unresolved {
                    return (Err(super::unresolved_error(&unresolved)), unresolved);
                }
                (write_converted(source, &output, p, out, &bulk), unresolved)
            })
        },
        |p, (result, unresolved): (Written, Vec<Unresolved>)| {
            let ok = result.is_ok();
            let mut warnings = Vec::new();
            if !unresolved.is_empty() {
                summary.unresolved_packages += 1;
                summary.unresolved_imports += unresolved.len();
            }
            match result {
                Ok((report, bytes)) => {
                    summary.packages += 1;
                    summary.bytes_written += bytes;
                    // Placeholders are one warning for the package.
                    let placeholders = usize::from(!unresolved.is_empty());
                    if !report.warnings.is_empty() || placeholders > 0 {
                        summary.warned_packages += 1;
                        summary.warnings += report.warnings.len() + placeholders;
                        warnings = report.warnings;
                    }
                }
                Err(e) => {
                    summary.failed_packages += 1;
                    let e = source.name_chunk_file(e, &p.chunk);
                    for mut d in Diagnostic::from_error(&e) {
                        d.structure.insert(0, format!("package {}", p.name));
                        summary.failures.push(d);
                    }
                }
            }
            done += 1;
            on_event(&ExtractEvent::Package {
                done,
                total,
                package_name: p.name.clone(),
                ok,
                warnings,
                unresolved,
            });
            Ok(())
        },
    )?;
    let written = output.write_each(
        &files,
        |(path, _)| path,
        |(_, what), w| match what {
            FileSource::Pak(f) => source.copy_file(f, w),
            FileSource::Chunk(c) => source.copy_chunk(c, w),
        },
        |_| (),
    )?;
    summary.files += written.len();
    summary.bytes_written += written.iter().sum::<u64>();
    Ok(summary)
}

/// An existing output folder must be empty unless `force` (`extract`, `unpack`).
pub fn check_output(output: &Path, force: bool) -> Result<()> {
    if output.is_file() {
        return Err(Error::usage(format!(
            "the output `{}` is a file, not a folder",
            output.display()
        )));
    }
    if output.is_dir() && !force {
        let mut entries = std::fs::read_dir(output).map_err(|e| Error::io(output, e))?;
        if entries.next().is_some() {
            return Err(Error::usage(format!(
                "the output folder `{}` is not empty",
                output.display()
            ))
            .with_hint(
                "pass --force to write into it (existing files with the same names are replaced)",
            ));
        }
    }
    std::fs::create_dir_all(output).map_err(|e| Error::io(output, e))
}

/// What extraction will write, as the chunks and files declare it: each
/// package's chunk and its bulk-data chunks (the legacy files add a header
/// of about the same size), and the other files.
fn planned_bytes(
    plan: &[Planned],
    files: &[(String, FileSource)],
    bulk: &BTreeMap<(u64, ChunkType), SourceChunk>,
) -> u64 {
    let packages = plan.iter().map(|p| {
        let bulk: u64 = bulk
            .range((p.chunk.id, ChunkType::Invalid)..)
            .take_while(|((id, _), _)| *id == p.chunk.id)
            .map(|(_, c)| c.size)
            .sum();
        p.chunk.size.saturating_add(bulk)
    });
    let files = files.iter().map(|(_, what)| match what {
        FileSource::Pak(f) => f.size,
        FileSource::Chunk(c) => c.size,
    });
    packages.chain(files).fold(0u64, u64::saturating_add)
}

/// Bulk-data chunks by (package id, type).
fn bulk_chunks(chunks: &[SourceChunk]) -> BTreeMap<(u64, ChunkType), SourceChunk> {
    chunks
        .iter()
        .filter(|c| c.index == 0 && bulk_extension(c.chunk_type).is_some())
        .map(|c| ((c.id, c.chunk_type), c.clone()))
        .collect()
}

/// The companion file extension of a bulk-data chunk type.
fn bulk_extension(t: ChunkType) -> Option<&'static str> {
    t.bulk_kind().map(crate::legacy::BulkKind::extension)
}

/// The package name of a package chunk: from its path when the path maps
/// to the chunk's id, else from its header.
fn package_name_of(
    source: &ViewSource,
    chunk: &SourceChunk,
    engine: EngineVersion,
) -> Result<String> {
    if let Some(path) = &chunk.path {
        if let Some(name) = crate::build::placement::package_name_of_stored(path) {
            if package_id(&name) == chunk.id {
                return Ok(name);
            }
        }
    }
    let bytes = source.read_chunk(chunk)?;
    let header = read_header(&bytes, engine).map_err(|e| {
        let at = chunk
            .path
            .clone()
            .unwrap_or_else(|| format!("0x{:016x}", chunk.id));
        source
            .name_chunk_file(e, chunk)
            .within(format!("package chunk {at}"))
    })?;
    Ok(header.package_name())
}

fn glob_set(filters: &[String]) -> Result<Option<crate::glob::Globs>> {
    if filters.is_empty() {
        return Ok(None);
    }
    crate::glob::Globs::new("--filter", filters).map(Some)
}

/// The packages to extract: the selected ones the filters match, plus (with
/// dependencies) what they import, sorted by output path.
fn plan_packages(
    source: &ViewSource,
    request: &ExtractRequest,
    chunks: &[SourceChunk],
    store: &BTreeMap<u64, Vec<u64>>,
    skipped: &mut Vec<Skipped>,
) -> Result<Vec<Planned>> {
    let globs = glob_set(&request.filters)?;
    let packages: BTreeMap<u64, &SourceChunk> = chunks
        .iter()
        .filter(|c| c.chunk_type == ChunkType::ExportBundleData && c.index == 0)
        .map(|c| (c.id, c))
        .collect();
    let mut chosen: BTreeMap<u64, Planned> = BTreeMap::new();
    for chunk in packages.values().filter(|c| c.selected) {
        let name = package_name_of(source, chunk, request.engine)?;
        if globs.as_ref().is_none_or(|g| g.is_match(&name)) {
            chosen.insert(chunk.id, planned(chunk, name));
        }
    }
    if request.with_dependencies {
        let mut queue: VecDeque<u64> = chosen.keys().copied().collect();
        let mut missing: BTreeSet<u64> = BTreeSet::new();
        while let Some(id) = queue.pop_front() {
            let imported = match store.get(&id) {
                Some(list) => list.clone(),
                None => imported_from_header(source, packages.get(&id).copied(), request.engine),
            };
            for dep in imported {
                if chosen.contains_key(&dep) {
                    continue;
                }
                match packages.get(&dep) {
                    Some(chunk) => {
                        let name = package_name_of(source, chunk, request.engine)?;
                        chosen.insert(dep, planned(chunk, name));
                        queue.push_back(dep);
                    }
                    None => {
                        missing.insert(dep);
                    }
                }
            }
        }
        for id in missing {
            skipped.push(Skipped {
                what: format!("package 0x{id:016x}"),
                reason: "a selected package imports it, but no container given has it".into(),
            });
        }
    }
    let mut plan: Vec<Planned> = chosen.into_values().collect();
    plan.sort_by(|a, b| (&a.path, &a.name).cmp(&(&b.path, &b.name)));
    Ok(plan)
}

fn planned(chunk: &SourceChunk, name: String) -> Planned {
    Planned {
        chunk: chunk.clone(),
        name,
        path: chunk.path.clone(),
    }
}

/// Imported package ids from a 5.3+ header, when there is no store entry.
fn imported_from_header(
    source: &ViewSource,
    chunk: Option<&SourceChunk>,
    engine: EngineVersion,
) -> Vec<u64> {
    let Some(header) = chunk
        .and_then(|c| source.read_chunk(c).ok())
        .and_then(|bytes| read_header(&bytes, engine).ok())
    else {
        return Vec::new();
    };
    let names = &header.imported_package_names;
    names
        .names
        .iter()
        .zip(&names.numbers)
        .map(|(n, number)| {
            package_id(&super::Name::new(n.text.clone(), (*number).max(0) as u32).full())
        })
        .collect()
}

/// Where a non-package file comes from.
enum FileSource {
    Pak(SourceFile),
    Chunk(SourceChunk),
}

/// The other files to write (pak files, chunks with a path that are no
/// package data), and what is skipped.
fn plan_files(
    source: &ViewSource,
    request: &ExtractRequest,
    chunks: &[SourceChunk],
    skipped: &mut Vec<Skipped>,
) -> Result<Vec<(String, FileSource)>> {
    let globs = glob_set(&request.filters)?;
    let wanted = |path: &str| globs.as_ref().is_none_or(|g| g.is_match(path));
    let mut out = Vec::new();
    for c in chunks.iter().filter(|c| c.selected) {
        let label = c
            .path
            .clone()
            .unwrap_or_else(|| format!("chunk {:016x} ({:?})", c.id, c.chunk_type));
        let reason = match c.chunk_type {
            ChunkType::ExportBundleData => continue,
            t if bulk_extension(t).is_some() => continue,
            ChunkType::ContainerHeader => Some("the container header is not a package"),
            ChunkType::ShaderCodeLibrary | ChunkType::ShaderCode => {
                Some("shader libraries are not packages (they stay in the container)")
            }
            ChunkType::ScriptObjects
            | ChunkType::LoaderGlobalMeta
            | ChunkType::LoaderInitialLoadMeta
            | ChunkType::LoaderGlobalNames
            | ChunkType::LoaderGlobalNameHashes => {
                Some("global data of the game (used to resolve imports), not a package")
            }
            _ if c.path.is_none() => Some("the chunk has no path in the directory index"),
            _ => None,
        };
        match (reason, &c.path) {
            (Some(reason), _) => skipped.push(Skipped {
                what: label,
                reason: reason.into(),
            }),
            (None, Some(path)) if wanted(path) => {
                out.push((path.clone(), FileSource::Chunk(c.clone())))
            }
            _ => {}
        }
    }
    for f in source.files()?.into_iter().filter(|f| f.selected) {
        if wanted(&f.path) {
            out.push((f.path.clone(), FileSource::Pak(f)));
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}

/// A chunk buffer kept per worker thread, so that reading a package costs
/// no allocation (and no fresh pages) once the thread has read one as large.
/// Its length is kept too (what it held is left in it), so that reading
/// into it zeroes only where it grows. A buffer grown past `KEPT_BUFFER` is
/// let go after use.
fn with_chunk_buffer<R>(f: impl FnOnce(&mut Vec<u8>) -> R) -> R {
    const KEPT_BUFFER: usize = 16 << 20;
    thread_local! {
        static BUFFER: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    BUFFER.with(|cell| match cell.try_borrow_mut() {
        Ok(mut buffer) => {
            let result = f(&mut buffer);
            if buffer.capacity() > KEPT_BUFFER {
                *buffer = Vec::new();
            }
            result
        }
        // In use further up this thread's stack (a task stolen while waiting).
        Err(_) => f(&mut Vec::new()),
    })
}

/// Converts one planned package, its chunk read from `source` into `buffer`
/// (the `.uexp` may borrow from it).
fn convert_planned<'b>(
    source: &ViewSource,
    (engine, cx): (EngineVersion, &ExtractContext<'_>),
    p: &Planned,
    store: &'b BTreeMap<u64, Vec<u64>>,
    buffer: &'b mut Vec<u8>,
) -> Result<Extracted<'b>> {
    // A chunk up to this size is read into place; a larger one (its size
    // declared, not yet read) grows the buffer as its data comes.
    const READ_INTO: u64 = 64 << 20;
    let package = if p.chunk.size <= READ_INTO {
        let len = p.chunk.size as usize;
        if buffer.len() < len {
            buffer.resize(len, 0);
        }
        source.read_chunk_into(&p.chunk, &mut buffer[..len])?;
        &buffer[..len]
    } else {
        buffer.clear();
        source.copy_chunk(&p.chunk, buffer)?;
        &buffer[..]
    };
    extract_borrowed(
        ZenInput {
            engine,
            package,
            imported_packages: store.get(&p.chunk.id).map(Vec::as_slice),
        },
        cx,
    )
}

/// Writes a converted package's files (its bulk data streamed from
/// `source`); returns its report and the bytes written.
fn write_converted(
    source: &ViewSource,
    output: &OutputDir,
    p: &Planned,
    out: Extracted<'_>,
    bulk: &BTreeMap<(u64, ChunkType), SourceChunk>,
) -> Result<(PackageReport, u64)> {
    let header_path = match &p.path {
        Some(path) => path.clone(),
        None => format!(
            "_packages/{}.{}",
            out.package_name.trim_start_matches('/'),
            if out.is_map { "umap" } else { "uasset" }
        ),
    };
    let stem = header_path
        .rsplit_once('.')
        .map_or(header_path.as_str(), |(stem, _)| stem)
        .to_string();
    let mut written = output.write_bytes(&header_path, &out.header)?;
    written += output.write_bytes(&format!("{stem}.uexp"), &out.export_data)?;
    for t in crate::legacy::BulkKind::ALL.map(ChunkType::of_bulk) {
        if let (Some(chunk), Some(ext)) = (bulk.get(&(p.chunk.id, t)), bulk_extension(t)) {
            let path = format!("{stem}.{ext}");
            written += output.write(&path, |w| source.copy_chunk(chunk, w))?;
        }
    }
    Ok((out.report, written))
}
