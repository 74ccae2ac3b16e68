//! The build pipeline: manifest → discover → read legacy → convert (in
//! parallel) → write the container triplet, with an incremental cache and a
//! stream of events for progress and reports.
//!
//! Data flows one way. [`discover`] finds the files ([`input`]), [`package`] turns one
//! package's files into Zen chunks and a store entry (through `legacy`,
//! `fixups` and `zen`), and the container writer (`iostore`, `pak`) takes
//! them in a stable order. The library prints nothing: the caller gets
//! [`Event`]s and a [`BuildSummary`]. The stages share their data through
//! the leaves [`input`] and [`built`], and use the [`cache`], which uses
//! no stage.
//!
//! A build holds its output folder's lock ([`crate::publish::lock::OutputLock`])
//! from start to end, writes every file under a unique temporary name and
//! publishes the triplet `.pak` last; "fresh" means the files on disk are
//! the very files the last build wrote (their recorded stamps match).
//!
//! # Development builds extend the `.ucas`
//!
//! Rewriting the whole `.ucas` for one changed file would cost most of a
//! full build, and `copy_file_range` copies page by page on ext4. So a
//! development build extends the previous container:
//! - `ContainerRecord` (`container.bin`) remembers the container the
//!   last build wrote: the stamps of its `.utoc` and `.ucas`, a hash of the
//!   settings its chunk bytes depend on, and per package (in content order)
//!   its chunk key, store entry and bulk chunks (`RecordedPackage`).
//! - When the stamps and settings match and at most `MAX_DEAD_FRACTION` of
//!   the `.ucas` would be unused afterwards (chunks replaced earlier plus
//!   those of packages changed or removed now,
//!   `PreviousContainer::dead_bytes_keeping`), `iostore::writer::PreviousContainer`
//!   reads the old TOC and `ContainerBuilder::create_appending` opens the
//!   `.ucas` through `publish::extension::Extension`: an unchanged package (same key)
//!   keeps its blocks (`add_chunk_reused` copies TOC entries, hash and
//!   flags; no data is read), a changed one is appended. An unchanged
//!   package is added from its record (`ContainerWriter::add_recorded`):
//!   its cache entry is not opened, unless the container header needs its
//!   bytes (a localized package or the source of one). The `.utoc` (in
//!   canonical chunk order) and the `.pak` are written anew.
//! - The old bytes of the `.ucas` are never touched, so the old `.utoc`
//!   stays valid while the file grows; a build that fails or is interrupted
//!   cuts the `.ucas` back to its old length (`Extension`'s drop,
//!   `publish::on_interrupt`), leaving the old triplet byte for byte.
//! - An extended `.ucas` is not hashed for the build record (its stamp
//!   identifies it); JSON reports `"blake3": null`, `"layout": "extended"`.
//! - `--release` and `package` always write the canonical layout, byte for
//!   byte what a clean build writes.

pub mod built;
pub mod cache;
pub mod check;
pub mod discover;
pub mod engine_guess;
pub mod input;
pub mod mod_package;
pub mod never_ship;
pub mod package;
pub mod pak_input;
pub mod placement;
pub mod staged;
pub(crate) mod zen_store;

use std::collections::BTreeSet;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::diagnostic::Diagnostic;
use crate::error::{Error, ErrorKind, Result};
use crate::manifest::Manifest;
use crate::pak::crypto::AesKey;
use crate::publish::lock::OutputLock;
use crate::version::ZenLayout;
use built::BuiltPackage;
use cache::build_record::{ArtifactRecord, BuildRecord};
use cache::container::{
    ContainerRecord, ContainerRecordReader, ContainerRecordWriter, RecordedPackage,
};
use cache::entry::{Cached, Existing};
use cache::entry_pack::EntryPack;
use cache::index::{FileIndex, IndexedFiles};
use cache::tree::{TreeCheck, TreeRecord};
use cache::Cache;
use discover::{Content, Selection};
use input::{Hash, InputStamp, PackageSource, Trust};
pub use staged::StagedPackage;

/// What a build reports while it runs.
#[derive(Debug)]
pub enum Event<'a> {
    /// Another zenpak holds the output folder; this build waits for it.
    Waiting { folder: &'a Path, pid: Option<u32> },
    /// Content found; conversion starts.
    Started {
        packages: usize,
        loose_files: usize,
        to_convert: usize,
    },
    /// One package is ready (converted now, or taken from the cache).
    /// `fixups` says what the game profile changed (converted packages only).
    Package {
        source: &'a PackageSource,
        reused: bool,
        fixups: &'a [String],
    },
    /// Something worth knowing that does not fail the build.
    Diagnostic(Diagnostic),
    /// The container is being written.
    Writing { stem: &'a str },
}

/// Receives a build's events, from any thread.
pub trait Reporter: Sync {
    fn event(&self, event: Event<'_>);
}

/// A reporter that ignores everything.
pub struct Silent;

impl Reporter for Silent {
    fn event(&self, _: Event<'_>) {}
}

/// Options of one build run.
#[derive(Debug, Clone, Default)]
pub struct BuildOptions {
    /// Convert everything and rewrite the outputs even when the cache says they are current.
    pub force: bool,
    /// Write the canonical, reproducible container layout even when the
    /// previous container could be extended (`build --release`, `package`).
    pub release: bool,
    /// The AES key when `[output] encrypt` is on (see [`aes_key`]).
    pub aes_key: Option<AesKey>,
    /// The game's key when the profile encrypts the companion pak its own way
    /// (see [`pak_key`]).
    pub pak_key: Option<AesKey>,
    /// Packages made in memory for this build (patched game assets,
    /// `crate::patch`), built as content.
    pub staged: Vec<StagedPackage>,
}

/// How a build laid out the `.ucas` (JSON: `"canonical"`, `"extended"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Layout {
    /// Written anew in the reproducible order.
    Canonical,
    /// A development build that appended the changed chunks to the previous
    /// `.ucas` and kept the rest where it was.
    Extended,
}

/// What a build did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct BuildSummary {
    pub packages: usize,
    /// Packages converted in this run (the rest came from the cache).
    pub converted: usize,
    pub loose_files: usize,
    /// Chunks in the container (package chunks, bulk-data chunks, container
    /// header); 0 when nothing was written.
    pub chunks: usize,
    /// Bytes of all input files.
    pub bytes_in: u64,
    /// Bytes of the three output files.
    pub bytes_out: u64,
    /// True when the outputs were already current and nothing was written.
    pub up_to_date: bool,
    /// Warnings reported during the build.
    pub warnings: usize,
    pub artifacts: Vec<ArtifactRecord>,
    /// How the `.ucas` was written; `null` when nothing was written.
    pub layout: Option<Layout>,
    /// Chunks kept where the previous container had them (extended layout).
    pub reused_chunks: usize,
    #[serde(rename = "elapsed_ms", serialize_with = "serialize_millis")]
    pub elapsed: Duration,
}

fn serialize_millis<S: serde::Serializer>(
    d: &Duration,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64() * 1000.0)
}

/// Builds the mod described by `manifest` into `<output>/<stem>.utoc/.ucas/.pak`,
/// holding the output folder's lock for the whole build.
pub fn build(
    manifest: &Manifest,
    options: &BuildOptions,
    reporter: &dyn Reporter,
) -> Result<BuildSummary> {
    let lock = lock_output(manifest, reporter)?;
    build_locked(manifest, options, reporter, &lock)
}

/// Checks the manifest as `check` does before anything is converted
/// ([`Manifest::check_buildable`]), then takes the output folder's lock.
pub fn lock_output(manifest: &Manifest, reporter: &dyn Reporter) -> Result<OutputLock> {
    manifest.check_buildable()?;
    let folder = manifest.output_dir();
    OutputLock::acquire(&folder, |pid| {
        reporter.event(Event::Waiting {
            folder: &folder,
            pid,
        })
    })
    .map_err(|e| match e.refusal() {
        Some(_) => {
            let hint = format!(
                "zenpak writes the build, and a lock file while it does, into the output folder {}: \
                 make it writable for your user, or set `[output] dir` in {} to a folder you can write",
                folder.display(),
                manifest.path.display()
            );
            e.replace_hint(hint)
        }
        None => e,
    })
}

/// The manifest's warnings ([`Manifest::warnings`]), and `mod-inside-game`
/// when the mod or its output folder is inside a game's `Content/Paks`:
/// the engine mounts every `.pak` there, so it would load the build in the
/// output folder besides the installed copy. `check` and `build` both give them.
pub(crate) fn manifest_warnings(manifest: &Manifest) -> Vec<Diagnostic> {
    let mut out = manifest.warnings();
    let inside_paks = [manifest.dir.clone(), manifest.output_dir()]
        .iter()
        .filter_map(|d| std::path::absolute(d).ok())
        .find_map(|d| crate::game::folder::paks_folder_containing(&d));
    if let Some(paks) = inside_paks {
        out.push(
            Diagnostic::warning(
                "mod-inside-game",
                format!(
                    "the mod (or its output) is inside the game's {}: the game mounts every .pak under it, so it would load the build in the output folder as well as the installed copy",
                    paks.display()
                ),
            )
            .with_file(&manifest.path)
            .with_hint("keep the mod repository outside the game's folder and use `zenpak install --game-dir` to copy the build into ~mods"),
        );
    }
    out
}

/// Counts the warnings a reporter was given, passing every event on.
struct Counting<'a> {
    inner: &'a dyn Reporter,
    warnings: std::sync::atomic::AtomicUsize,
}

impl Reporter for Counting<'_> {
    fn event(&self, event: Event<'_>) {
        if let Event::Diagnostic(d) = &event {
            if d.level == crate::diagnostic::Level::Warning {
                self.warnings
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
        }
        self.inner.event(event);
    }
}

/// [`build`] for a caller that already holds the output folder's lock
/// (`package` and `install` build, then ship, under one lock). The steps,
/// in the order a build flows: [`gather`] the inputs, [`fingerprint`] them,
/// stop when the last build is still current, convert and write the
/// container, [`record`] what was written.
pub fn build_locked(
    manifest: &Manifest,
    options: &BuildOptions,
    reporter: &dyn Reporter,
    _lock: &OutputLock,
) -> Result<BuildSummary> {
    let reporter = Counting {
        inner: reporter,
        warnings: Default::default(),
    };
    let started = Instant::now();
    keep_large_tables_apart();
    let output_dir = manifest.output_dir();
    // Temporaries a killed zenpak left (no live build owns them: the folder is locked).
    let _ = crate::publish::temporary::remove_leftover_temporaries(&output_dir);
    for warning in manifest_warnings(manifest) {
        reporter.event(Event::Diagnostic(warning));
    }
    let mut settings = package::Settings::from_manifest(manifest)?;
    let cache = Cache::new(&output_dir, &manifest.artifact_stem());
    let trust = Trust::of(options.force, options.release);
    cache.create()?;
    // A development build whose folders and files all still have the
    // stamps the last scan recorded: nothing to scan, nothing to write.
    let mut listed = None;
    if trust == Trust::Stamps && manifest.content.paks.is_empty() && options.staged.is_empty() {
        match since_last_scan(manifest, &settings, options, &cache, &reporter) {
            Since::Nothing(summary) => {
                return Ok(BuildSummary {
                    elapsed: started.elapsed(),
                    ..summary
                })
            }
            Since::FilesOnly(files) => listed = Some(files),
            Since::Unknown => {}
        }
    }
    let (mut content, clean) = gather(manifest, options, &reporter, &cache, trust, listed)?;
    let folders = std::mem::take(&mut content.folders);
    let scanned_ns = content.scanned_ns;
    // The cache's entry index is read beside the fingerprint (on another
    // core; 100,000 entries' records are 4.8 MB).
    let (fingerprinted, entries) = rayon::join(
        || fingerprint(manifest, &settings, &mut content, &cache, trust, options),
        || EntryPack::open(cache.dir()),
    );
    let Fingerprint {
        keys,
        build_key,
        bytes_in,
        loose_hashes,
    } = fingerprinted?;
    let mut entries = entries?;
    // The scan's and the fingerprint's lists of paths and stamps are gone:
    // their pages go back before the container's tables are built.
    release_freed_memory();
    let artifacts = manifest.artifact_paths();
    let tree = clean
        .then(|| {
            Some(TreeRecord {
                config: tree_config(manifest, &settings, options),
                build_key,
                packages: content.packages.len() as u64,
                loose_files: content.loose_files.len() as u64,
                bytes_in,
                files: content.file_count() as u64,
                index: crate::publish::stamp::FileStamp::of(&cache.files_path()).ok()?,
                scanned_ns,
                folders: folders
                    .into_iter()
                    .map(|(path, stamp)| Some((path.into_os_string().into_string().ok()?, stamp)))
                    .collect::<Option<_>>()?,
            })
        })
        .flatten();
    cache.save_tree_record(tree.as_ref())?;

    // Nothing changed since the last build, and the files on disk are the
    // ones it wrote: leave every file as it is.
    if !options.force {
        if let Some(mut record) = cache.load_build_record() {
            let layout_ok = !(options.release && record.extended);
            if record.key == build_key
                && layout_ok
                && record.chunks.is_some()
                && record.matches_disk(&artifacts)
                && (!options.release || hash_for_release(&cache, &mut record)?)
            {
                return Ok(up_to_date_summary(
                    (content.packages.len(), content.loose_files.len()),
                    bytes_in,
                    record,
                    reporter.warnings.into_inner(),
                    started,
                ));
            }
        }
    }

    settings.load_mappings()?;
    // What this build will convert; the entries of no package of this
    // build are dropped once it is done (every entry it writes is one of
    // its keys).
    let missing = entries.want(&keys);
    let to_convert = match options.force {
        true => keys.len(),
        false => missing,
    };
    reporter.event(Event::Started {
        packages: content.packages.len(),
        loose_files: content.loose_files.len(),
        to_convert,
    });

    let counts = (content.packages.len(), content.loose_files.len());
    let Conversion {
        written,
        converted,
        container_settings,
        container_record,
    } = convert_and_write(
        manifest,
        options,
        &reporter,
        &settings,
        (&cache, &entries),
        content,
        keys,
        &loose_hashes,
        &artifacts,
    )?;
    let records = record(
        &cache,
        (&artifacts, options.release),
        &written,
        build_key,
        (container_settings, container_record),
        entries,
    )?;

    Ok(BuildSummary {
        packages: counts.0,
        converted,
        loose_files: counts.1,
        chunks: written.chunk_count,
        bytes_in,
        bytes_out: records.iter().map(|r| r.stamp.size).sum(),
        up_to_date: false,
        warnings: reporter.warnings.into_inner(),
        artifacts: records,
        layout: Some(if written.appended {
            Layout::Extended
        } else {
            Layout::Canonical
        }),
        reused_chunks: written.reused_chunks,
        elapsed: started.elapsed(),
    })
}

/// Gives the memory freed so far back to the system. glibc's allocator
/// keeps freed small blocks in its heap for reuse, and the steps of a build
/// of 100,000 packages free tens of MiB of them (each input file's path
/// and stamp) that the next step, whose tables are few and large, would
/// not reuse: the peak would be both steps'. Elsewhere there is nothing to do.
fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `malloc_trim` only returns the free pages of the allocator's
    // arenas to the system; no allocation is touched.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Has every allocation of 1 MiB or more mapped on its own, so that it
/// goes back to the system when freed and grows in place (glibc's
/// allocator otherwise raises that bound to the largest block freed so
/// far: once the scan's list of paths is freed, the container's tables of
/// a build of 100,000 packages grew by copying inside its heap, and the
/// holes they left stayed, about 15 MiB). Elsewhere there is nothing to do.
fn keep_large_tables_apart() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `mallopt` only sets a tuning parameter of the allocator; a
    // fixed threshold is one of its documented settings.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 1 << 20);
    }
}

/// Step 1: the mod's inputs — the content root's files the manifest
/// selects, then the files of `[content] paks` — with their warnings reported.
fn gather(
    manifest: &Manifest,
    options: &BuildOptions,
    reporter: &dyn Reporter,
    cache: &Cache,
    trust: Trust,
    listed: Option<discover::Listed>,
) -> Result<(discover::Content, bool)> {
    let selection = Selection::new(&manifest.content.include, &manifest.content.exclude)?;
    let index = cache.files_path();
    let mut content = discover::discover_indexed(
        &manifest.content_root(),
        &manifest.game.project,
        &selection,
        manifest.content.follow_links,
        manifest.content.paks.is_empty(),
        (trust == Trust::Stamps).then_some(index.as_path()),
        listed,
    )?;
    // The walk's lists are gone.
    release_freed_memory();
    // A scan that warned, or with input paks, is not recorded for the
    // no-change check (its warnings are said again by every build).
    let clean = content.warnings.is_empty()
        && manifest.content_paks().is_empty()
        && options.staged.is_empty();
    for warning in std::mem::take(&mut content.warnings) {
        // A mod of patches alone has packages: the staged ones.
        if warning.code == "empty-mod" && !options.staged.is_empty() {
            continue;
        }
        reporter.event(Event::Diagnostic(warning));
    }
    pak_input::add_paks(
        &mut content,
        &manifest.content_paks(),
        &manifest.game.project,
        cache.dir(),
        &input_keys(options)?,
        trust,
    )?;
    staged::add_staged(
        &mut content,
        &options.staged,
        &manifest.game.project,
        cache.dir(),
    )?;
    if !manifest.content_paks().is_empty() || !options.staged.is_empty() {
        // The paks' and staged files joined the content: stamped again with them.
        content.stamps = Default::default();
        content.paths = Default::default();
    }
    Ok((content, clean))
}

/// What [`fingerprint`] knows of the inputs.
struct Fingerprint {
    /// Each package's cache key (its files' hashes and the settings).
    keys: Vec<Hash>,
    /// The whole build's key: equal to the last build's, nothing changed.
    build_key: Hash,
    bytes_in: u64,
    /// What the loose files held when stamped: checked as they are written.
    loose_hashes: Vec<Hash>,
}

/// Step 2: stamps and hashes every input file (unchanged files are not
/// read again in a development build, whose index trusts whole stamps; a
/// release or forced build hashes every file) and derives the keys. The
/// index is saved at once: it only maps paths to what the files held when
/// stamped, true whatever the build does next, and the stamps and the list
/// of every input path are freed for the rest of the build.
fn fingerprint(
    manifest: &Manifest,
    settings: &package::Settings,
    content: &mut discover::Content,
    cache: &Cache,
    trust: Trust,
    options: &BuildOptions,
) -> Result<Fingerprint> {
    // The scan's stamps (taken with the index of a development build).
    let taken = std::mem::take(&mut content.stamps);
    let paths = std::mem::take(&mut content.paths);
    let content = &*content;
    // Packages' files first (each package's as one run), then the loose
    // files: the scan's paths, or made for this step only.
    let all_files = match paths.len() == content.file_count() {
        true => paths,
        false => crate::arena::PathArena::of(content.files(), content.file_count()),
    };
    let loose_start = all_files.len() - content.loose_files.len();
    let index_path = cache.files_path();
    let trusted_index = (trust == Trust::Stamps).then_some(index_path.as_path());
    let taken = match taken.len() == all_files.len() && !all_files.is_empty() {
        true => taken,
        false => FileIndex::take(trusted_index, &all_files)?,
    };
    let files = FileIndex::finish(taken, &all_files)?;
    if !files.unchanged {
        FileIndex::save(&index_path, &all_files, &files.stamps)?;
    }
    // The paths are in the index: they go before the keys are made.
    drop(all_files);
    let mut at = 0;
    let keys: Vec<Hash> = content
        .packages
        .iter()
        .map(|p| {
            let range = at..at + p.file_count();
            at = range.end;
            settings.package_key(p, &files.stamps[range])
        })
        .collect();
    let build_key = build_key(
        manifest,
        settings,
        content,
        &keys,
        &files.stamps[loose_start..],
        options,
    );
    Ok(Fingerprint {
        keys,
        build_key,
        bytes_in: files.stamps.iter().map(|s| s.file.size).sum(),
        loose_hashes: files.stamps[loose_start..].iter().map(|s| s.hash).collect(),
    })
}

/// What [`convert_and_write`] did.
struct Conversion {
    written: crate::iostore::writer::WrittenContainer,
    /// Packages converted (not taken from the cache).
    converted: usize,
    /// Hash of the settings the container's chunks depend on.
    container_settings: Hash,
    /// The container's record for the next build, published by [`record`].
    container_record: ContainerRecordWriter,
}

/// Step 3: converts every package (or takes it from the cache), with the
/// 5.0–5.2 container-wide bundle pass first, and writes the container: anew,
/// or (a development build) extending the last one where its chunks are
/// still the same; then the loose files into the companion pak. The
/// content's records and the keys are freed before the container's tables
/// are written (a peak of their own at 100,000 packages).
#[allow(clippy::too_many_arguments)]
fn convert_and_write(
    manifest: &Manifest,
    options: &BuildOptions,
    reporter: &dyn Reporter,
    settings: &package::Settings,
    (cache, entries): (&Cache, &EntryPack),
    content: discover::Content,
    keys: Vec<Hash>,
    loose_hashes: &[Hash],
    artifacts: &[std::path::PathBuf],
) -> Result<Conversion> {
    let (owned, owned_keys) = (content, keys);
    let (content, keys) = (&owned, owned_keys.as_slice());
    let stem = manifest.artifact_stem();
    let container_settings = container_settings(manifest, settings, options);
    // 5.0–5.2: the engine lays out the export bundles of all the container's
    // packages together. Every package is converted (or found in the cache)
    // first, keeping only its export graph; the pass then says which
    // packages get other bundles than they have alone.
    let packages = Packages {
        content,
        keys,
        entries,
        settings,
        options,
        reporter,
        saved: std::sync::Mutex::new(vec![false; content.packages.len()]),
    };
    let entries = UncheckedEntries {
        cache,
        content,
        packages: &packages,
        checked: false,
    };
    let (mut converted, bundles) = if settings.engine.zen_layout() == ZenLayout::GraphData {
        let (converted, bundles) = packages
            .container_bundles()
            .map_err(|e| engine_guess::explain_failures(e, content, manifest))?;
        (converted, Some(bundles))
    } else {
        (0, None)
    };
    // A package's chunk is its key's, laid out for its bundles.
    let chunk_keys: std::borrow::Cow<'_, [Hash]> = match &bundles {
        Some(bundles) => keys
            .iter()
            .zip(bundles)
            .map(|(key, b)| bundled_key(key, b.as_ref()))
            .collect(),
        None => keys.into(),
    };
    // A development build extends the container the last build wrote, if
    // the files are still the ones recorded and were made the same way.
    let extend = !options.force && !options.release;
    let previous = match extend {
        true => previous_container(
            (cache, artifacts, reporter),
            content,
            &chunk_keys,
            &container_settings,
        ),
        false => None,
    };
    let (previous_ucas_len, same, mut from_record) = match previous {
        Some(p) => (Some(p.ucas_len), p.same, p.from_record),
        None => (None, Vec::new(), Vec::new()),
    };
    // The packages whose chunks an extension would keep: same chunk as then.
    let kept: BTreeSet<u64> = content
        .packages
        .iter()
        .zip(&same)
        .filter(|(_, same)| **same)
        .map(|(p, _)| crate::hash::package_id(p.package_name()))
        .collect();
    let mut writer = package::ContainerWriter::create(
        manifest,
        settings,
        options,
        previous_ucas_len.map(|len| (len, &kept)),
    )?;
    drop(kept);
    writer.expect_packages(&content.packages);
    // Unchanged packages are added from the record alone (their cache
    // entries are not read), unless the header needs their bytes or the
    // previous container is not extended after all.
    let mut record_in = match writer.is_extending() {
        true => cache.open_container_record().ok().flatten(),
        false => None,
    };
    for (i, ordinal) in from_record.iter_mut().enumerate() {
        let id = crate::hash::package_id(content.packages[i].package_name());
        if record_in.is_none() || writer.needs_package_bytes(id) {
            *ordinal = None;
        }
    }
    let skip: Vec<bool> = from_record.iter().map(Option::is_some).collect();
    let mut record_out = cache.create_container_record()?;
    let pass = match &bundles {
        // Converted and reported already: taken from the cache, silently.
        Some(_) => Pass::Cached,
        None => Pass::First,
    };
    let engine = settings.engine;
    // Per package: its files were read (converted, or its chunk written
    // from them rather than kept from the container extended).
    let mut read = vec![false; content.packages.len()];
    let fresh = packages
        .each(pass, &skip, &mut |i, built| {
            let source = &content.packages[i];
            let mut built = match built {
                Some(built) => built,
                None => {
                    let recorded = from_record[i].and_then(|ordinal| {
                        next_recorded(&mut record_in, ordinal)
                            .filter(|r| r.chunk_key == chunk_keys[i])
                    });
                    if let Some(recorded) = recorded {
                        if writer.add_recorded(source, &recorded)? {
                            return record_out.add(&recorded);
                        }
                    }
                    // Not as recorded after all: from the cache (or converted).
                    packages
                        .get(i, Pass::Cached)
                        .result?
                        .ok_or_else(|| Error::internal("a package to convert was skipped"))?
                }
            };
            if let Some(Some(b)) = bundles.as_ref().map(|b| &b[i]) {
                built
                    .rebundle(engine, b)
                    .map_err(|e| e.in_file(source.header()))?;
            }
            let unchanged = same.get(i).copied().unwrap_or(false);
            read[i] = !(unchanged && writer.is_extending());
            writer.add_package(source, &built, unchanged)?;
            record_out.add(&RecordedPackage::of(&built, chunk_keys[i]))
        })
        .map_err(|e| engine_guess::explain_failures(e, content, manifest))?;
    if pass == Pass::First {
        converted += fresh;
    }
    drop((bundles, record_in, from_record, same));

    crate::pool::check_interrupted()?;
    reporter.event(Event::Writing { stem: &stem });
    for (file, expected) in content.loose_files.iter().zip(loose_hashes) {
        for warning in writer.add_loose_file(file, expected)? {
            reporter.event(Event::Diagnostic(warning));
        }
    }
    // Every input is in the container, as read now: each file must still
    // be the one fingerprinted, or bytes read after a change (an editor's
    // cook still writing) would ship, and stay cached, under the key of the
    // bytes before it.
    entries.check(read)?;
    // What described the inputs goes before the container's tables are
    // written, and its pages back to the system.
    drop((chunk_keys, skip));
    drop((owned, owned_keys));
    release_freed_memory();
    let written = writer.finish()?;
    Ok(Conversion {
        written,
        converted,
        container_settings,
        container_record: record_out,
    })
}

/// The cache entries a build saved, until their files are checked
/// against the fingerprint ([`check_inputs_unchanged`]): a build that stops
/// before (an error, an interrupt) checks them when this is dropped, and
/// drops them if one of their files changed.
struct UncheckedEntries<'a> {
    cache: &'a Cache,
    content: &'a Content,
    packages: &'a Packages<'a>,
    checked: bool,
}

impl UncheckedEntries<'_> {
    /// [`check_inputs_unchanged`] for the packages `read`.
    fn check(mut self, read: Vec<bool>) -> Result<()> {
        self.checked = true;
        check_inputs_unchanged(self.cache, self.content, self.packages, read)
    }
}

impl Drop for UncheckedEntries<'_> {
    fn drop(&mut self) {
        if !self.checked {
            let saved = self
                .packages
                .saved
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            let read = saved.clone();
            drop(saved);
            // The build already failed: its own error is the one reported.
            let _ = check_inputs_unchanged(self.cache, self.content, self.packages, read);
        }
    }
}

/// Fails the build when an input file it read is not the one the
/// fingerprint stamped and hashed (compared through the file index, as
/// stamped then): the entries this build saved to the cache are dropped
/// first, since one of them may hold bytes read after the change under the
/// key of the bytes before it. A file changed while the build ran costs a
/// build again, never a wrong package under a right key. The files of
/// packages not read (kept from the container extended) are not looked at,
/// unless many were read; loose files are checked by their hash as written.
fn check_inputs_unchanged(
    cache: &Cache,
    content: &Content,
    packages: &Packages<'_>,
    read: Vec<bool>,
) -> Result<()> {
    let files = content.file_count() as u64;
    let read_count = read.iter().filter(|r| **r).count();
    if read_count == 0 {
        return Ok(());
    }
    // A few packages read: their files by path; else every file, which
    // holds no list of paths.
    let few = read_count < content.packages.len() && read_count <= (read.len() / 8).max(64);
    let only: Option<std::collections::HashSet<std::path::PathBuf>> = few.then(|| {
        content
            .packages
            .iter()
            .zip(&read)
            .filter(|(_, read)| **read)
            .flat_map(|(p, _)| p.files())
            .collect()
    });
    drop(read);
    let Some(changed) =
        cache::index::changed_since_indexed(&cache.files_path(), files, only.as_ref())?
    else {
        return Ok(());
    };
    let saved = packages.saved.lock().unwrap_or_else(|e| e.into_inner());
    let written: Vec<Hash> = packages
        .keys
        .iter()
        .zip(saved.iter())
        .filter(|(_, saved)| **saved)
        .map(|(key, _)| *key)
        .collect();
    packages.entries.forget(&written)?;
    Err(Error::new(ErrorKind::Content {
        code: crate::codes::INPUT_CHANGED,
        message: "the file changed while the build read it".into(),
    })
    .in_file(changed)
    .with_hint(
        "something is still writing the mod's files (the editor's cook?): build again once it is done",
    ))
}

/// What the last build's container record says of this build's packages.
struct Previous {
    /// The recorded `.ucas`'s length.
    ucas_len: u64,
    /// Per package: its chunk is the one the container holds (same key).
    same: Vec<bool>,
    /// Per package: where the record has it (its place among the recorded
    /// packages), for those that can be taken from the record in one
    /// forward read (recorded in the same order as this build has them).
    from_record: Vec<Option<u64>>,
}

/// Reads the last build's container record (one pass, as a stream) and
/// matches it with this build's packages (`chunk_keys`: each one's chunk
/// key). `None` when there is none, it was made with other settings, the
/// container on disk is not the one recorded, or it is damaged (then with
/// a warning): the container is written anew.
fn previous_container(
    (cache, artifacts, reporter): (&Cache, &[std::path::PathBuf], &dyn Reporter),
    content: &Content,
    chunk_keys: &[Hash],
    container_settings: &Hash,
) -> Option<Previous> {
    let mut by_id: Vec<(u64, u32)> = content
        .packages
        .iter()
        .zip(0..)
        .map(|(p, i)| (crate::hash::package_id(p.package_name()), i))
        .collect();
    by_id.sort_unstable();
    let mut from_record = vec![None; content.packages.len()];
    let mut read = || -> Result<Option<ContainerRecord>> {
        let Some(mut reader) = cache.open_container_record()? else {
            return Ok(None);
        };
        while let Some(package) = reader.next()? {
            let ordinal = reader.position() - 1;
            if let Ok(at) = by_id.binary_search_by_key(&package.package_id, |(id, _)| *id) {
                let i = by_id[at].1 as usize;
                if chunk_keys[i] == package.chunk_key {
                    from_record[i] = Some(ordinal);
                }
            }
        }
        reader.finish().map(Some)
    };
    let record = match read() {
        Ok(record) => record?,
        Err(e) => {
            reporter.event(Event::Diagnostic(cache_damaged(
                &e,
                "the container is written anew; nothing damaged reaches the output",
            )));
            return None;
        }
    };
    if record.settings != *container_settings || !record.matches(&artifacts[0], &artifacts[1]) {
        return None;
    }
    let same = from_record.iter().map(Option::is_some).collect();
    // Taken from the record in one forward read: each one recorded after
    // the one before it.
    let mut last = None;
    for ordinal in &mut from_record {
        match (*ordinal, last) {
            (Some(o), Some(l)) if o <= l => *ordinal = None,
            (Some(o), _) => last = Some(o),
            _ => {}
        }
    }
    Some(Previous {
        ucas_len: record.ucas.size,
        same,
        from_record,
    })
}

/// The next package of `reader` that is recorded at `ordinal`; `None`
/// (and the reader let go) when it cannot be read there.
fn next_recorded(
    reader: &mut Option<ContainerRecordReader>,
    ordinal: u64,
) -> Option<RecordedPackage> {
    let found = (|| {
        let reader = reader.as_mut()?;
        while reader.position() <= ordinal {
            let package = reader.next().ok()??;
            if reader.position() == ordinal + 1 {
                return Some(package);
            }
        }
        None
    })();
    if found.is_none() {
        *reader = None;
    }
    found
}

/// Last step: what was written, for the next build — the artifacts (by
/// their hashes in a `release` build, by their stamps in a development
/// build; see [`ArtifactRecord::blake3`]) under the build's key, the
/// container's layout (the settings its chunks depend on, each package's
/// key) and the cache's entries pruned to this build's packages.
fn record(
    cache: &Cache,
    (artifacts, release): (&[std::path::PathBuf], bool),
    written: &crate::iostore::writer::WrittenContainer,
    build_key: Hash,
    (settings, container_record): (Hash, ContainerRecordWriter),
    entries: EntryPack,
) -> Result<Vec<ArtifactRecord>> {
    // The container's tables are gone: their pages go back before the
    // artifacts are hashed (in pieces of a few MiB).
    release_freed_memory();
    let mut records = Vec::new();
    for path in artifacts {
        records.push(match &written.ucas_blake3 {
            _ if !release => ArtifactRecord::stamp_only(path)?,
            // Hashed as it was written.
            Some(hash) if *path == written.ucas => ArtifactRecord::with_hash(path, hash)?,
            _ => ArtifactRecord::of(path)?,
        });
    }
    cache.save_build_record(&BuildRecord {
        key: build_key,
        artifacts: records.clone(),
        extended: written.appended,
        chunks: Some(written.chunk_count),
    })?;
    container_record.finish(&settings, &records[0].stamp, &records[1].stamp)?;
    entries.finish()?;
    cache.remove_old_entries()?;
    Ok(records)
}

/// How [`Packages::each`] gets the packages.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Pass {
    /// Converted, or taken from the cache unless the build is forced;
    /// each reported.
    First,
    /// Taken from the cache that a first pass filled (converted again if
    /// the entry is gone), not reported again.
    Cached,
}

/// A build's packages and how they are converted: their sources, keys,
/// the cache, the settings and where events go.
struct Packages<'a> {
    content: &'a Content,
    keys: &'a [Hash],
    entries: &'a EntryPack,
    settings: &'a package::Settings,
    options: &'a BuildOptions,
    reporter: &'a dyn Reporter,
    /// Per package: converted by this build and saved to the cache.
    saved: std::sync::Mutex<Vec<bool>>,
}

impl Packages<'_> {
    /// Converts (or takes from the cache) every package in groups, in content
    /// order, and gives each to `sink` (one thread, in content order). Memory
    /// holds two groups' headers, never bulk data. Returns how many were
    /// converted; every failure (of conversion or of `sink`'s package) is
    /// collected into one error, and `sink` is given no package after the first.
    fn each(
        &self,
        pass: Pass,
        skip: &[bool],
        sink: &mut (dyn FnMut(usize, Option<BuiltPackage>) -> Result<()> + Send),
    ) -> Result<usize> {
        let (content, reporter) = (self.content, self.reporter);
        let report = pass == Pass::First;
        // Workers only convert; what they found is reported by the one thread
        // that hands packages to `sink`, in content (package path) order, so
        // events come out in the same order on every run. A group is
        // converted while the one before it goes to the sink: both cores
        // stay busy, and memory holds two groups' headers.
        let mut converted = 0;
        let mut failures: Vec<(usize, Error)> = Vec::new();
        let packages: Vec<usize> = (0..content.packages.len()).collect();
        crate::pool::in_order_on_pool(
            &packages,
            |&i| match skip.get(i) {
                Some(true) => Converted {
                    result: Ok(None),
                    fresh: false,
                    damaged: None,
                },
                _ => self.get(i, pass),
            },
            |&i, c| {
                converted += usize::from(c.fresh && c.result.is_ok());
                if c.fresh && c.result.is_ok() {
                    self.saved.lock().unwrap_or_else(|e| e.into_inner())[i] = true;
                }
                if report {
                    report_package(reporter, &content.packages[i], &c);
                }
                match c.result {
                    Ok(built) if failures.is_empty() => sink(i, built)?,
                    Ok(_) => {}
                    Err(e) => failures.push((i, e)),
                }
                Ok(())
            },
        )?;
        if failures.is_empty() {
            return Ok(converted);
        }
        // The writer's temporaries go when it is dropped: no partial triplet.
        Err(Error::new(ErrorKind::Many {
            what: "packages",
            total: content.packages.len(),
            failures: failures
                .into_iter()
                .map(|(i, e)| e.in_file(content.packages[i].header()))
                .collect(),
        }))
    }

    /// Package `i`, taken from the cache (unless the build is forced and
    /// this is the first pass) or converted and saved to it.
    fn get(&self, i: usize, pass: Pass) -> Converted {
        let Packages {
            content,
            keys,
            entries,
            settings,
            options,
            ..
        } = *self;
        let source = &content.packages[i];
        let mut damaged = None;
        // An entry that was loaded and not taken is replaced; one a forced
        // build did not load is kept if it already holds the same bytes.
        let loaded = !options.force || pass == Pass::Cached;
        if loaded {
            match cache::entry::load(entries, &keys[i], source) {
                Cached::Hit(built) => {
                    return Converted {
                        result: Ok(Some(*built)),
                        fresh: false,
                        damaged,
                    }
                }
                Cached::Damaged(e) if pass == Pass::First => {
                    damaged = Some(cache_damaged(
                        &e,
                        "the package is converted again; nothing damaged reaches the output",
                    ))
                }
                Cached::Damaged(_) | Cached::Miss => {}
            }
        }
        let result = package::convert(source, settings).and_then(|built| {
            let existing = match loaded {
                true => Existing::Replace,
                false => Existing::KeepIfSame,
            };
            cache::entry::save(&built, entries, &keys[i], existing)?;
            Ok(Some(built))
        });
        Converted {
            result,
            fresh: true,
            damaged,
        }
    }

    /// 5.0–5.2: converts (or takes from the cache) every package, keeping
    /// only what the container-wide bundle pass needs of it, and runs the pass
    /// over them all (`zen::container_bundles`). Returns how many were
    /// converted and each package's bundles when they are not its own alone.
    fn container_bundles(&self) -> Result<(usize, Vec<Option<crate::zen::ExportBundles>>)> {
        let (content, settings) = (self.content, self.settings);
        let mut graphs = Vec::with_capacity(content.packages.len());
        let mut members = Vec::with_capacity(content.packages.len());
        let converted = self.each(Pass::First, &[], &mut |i, built| {
            let Some(built) = built else {
                return Err(Error::internal("a package of the bundle pass was skipped"));
            };
            let graph = built
                .bundle_graph(settings.engine)
                .map_err(|e| e.in_file(content.packages[i].header()))?;
            if let Some(graph) = graph {
                graphs.push(graph);
                members.push(i);
            }
            Ok(())
        })?;
        let found = crate::zen::container_bundles(&graphs)?;
        drop(graphs);
        let mut bundles = vec![None; content.packages.len()];
        for (i, b) in members.into_iter().zip(found) {
            bundles[i] = b;
        }
        Ok((converted, bundles))
    }
}

/// What a worker made of one package, reported later in content order.
struct Converted {
    /// The package; `None` when it was skipped (taken from the container
    /// record by the sink, unchanged).
    result: Result<Option<BuiltPackage>>,
    /// Converted now (not taken from the cache).
    fresh: bool,
    /// The cache entry was damaged (and the package converted again).
    damaged: Option<Diagnostic>,
}

/// The events of one package: a damaged cache entry, its conversion
/// warnings, and the package itself when it was made.
fn report_package(reporter: &dyn Reporter, source: &PackageSource, c: &Converted) {
    if let Some(d) = &c.damaged {
        reporter.event(Event::Diagnostic(d.clone()));
    }
    if let Ok(built) = &c.result {
        let fresh = built.as_ref().filter(|_| c.fresh);
        for warning in fresh.iter().flat_map(|b| &b.warnings) {
            reporter.event(Event::Diagnostic(warning.clone()));
        }
        reporter.event(Event::Package {
            source,
            reused: fresh.is_none(),
            fixups: fresh.map_or(&[], |b| &b.fixups),
        });
    }
}

/// The key of a package's chunk: its package key, and the bundles the
/// container-wide pass gave it when they are not its own alone.
fn bundled_key(key: &Hash, bundles: Option<&crate::zen::ExportBundles>) -> Hash {
    match bundles {
        None => *key,
        Some(bundles) => {
            let mut hasher = blake3::Hasher::new();
            hasher.update(b"zenpak bundles\0");
            hasher.update(key);
            for bundle in bundles.entries() {
                hasher.update(&(bundle.len() as u64).to_le_bytes());
                for entry in bundle {
                    hasher.update(&entry.export_index.to_le_bytes());
                    hasher.update(&[entry.command as u8]);
                }
            }
            *hasher.finalize().as_bytes()
        }
    }
}

/// The warning that a cache record did not read back (`e`), saying what
/// the build does instead (`hint`).
fn cache_damaged(e: &Error, hint: &str) -> Diagnostic {
    Diagnostic {
        code: crate::codes::CACHE_DAMAGED.into(),
        level: crate::diagnostic::Level::Warning,
        ..Diagnostic::of(e)
    }
    .with_hint(hint)
}

/// The summary of a build that found its outputs current.
fn up_to_date_summary(
    (packages, loose_files): (usize, usize),
    bytes_in: u64,
    record: BuildRecord,
    warnings: usize,
    started: Instant,
) -> BuildSummary {
    BuildSummary {
        packages,
        converted: 0,
        loose_files,
        chunks: record.chunks.unwrap_or(0),
        bytes_in,
        bytes_out: record.artifacts.iter().map(|a| a.stamp.size).sum(),
        up_to_date: true,
        warnings,
        artifacts: record.artifacts,
        layout: None,
        reused_chunks: 0,
        elapsed: started.elapsed(),
    }
}

/// Keys for encrypted input paks: the environment's, and the build's own key.
fn input_keys(options: &BuildOptions) -> Result<crate::pak::crypto::KeyRing> {
    let mut keys = crate::pak::crypto::KeyRing::from_env()?;
    if let Some(key) = &options.aes_key {
        keys.add(None, key.clone());
    }
    Ok(keys)
}

/// The key of a whole build: every package key with its path, every loose
/// file's content with its path, and every container setting.
fn build_key(
    manifest: &Manifest,
    settings: &package::Settings,
    content: &Content,
    keys: &[Hash],
    loose_stamps: &[InputStamp],
    options: &BuildOptions,
) -> Hash {
    let mut hasher = build_settings(manifest, settings, options);
    for (source, key) in content.packages.iter().zip(keys) {
        hasher.update(source.relative_path().as_bytes());
        hasher.update(&[0]);
        hasher.update(key);
    }
    for (file, stamp) in content.loose_files.iter().zip(loose_stamps) {
        hasher.update(file.relative_path.as_bytes());
        hasher.update(&[0]);
        hasher.update(&stamp.hash);
    }
    *hasher.finalize().as_bytes()
}

/// What [`TreeRecord`] is valid for: everything the build key
/// depends on besides the files' contents, and everything the scan's
/// content depends on besides the folders and files themselves.
fn tree_config(manifest: &Manifest, settings: &package::Settings, options: &BuildOptions) -> Hash {
    let mut hasher = blake3::Hasher::new();
    hasher.update(b"zenpak tree\0");
    hasher.update(
        build_settings(manifest, settings, options)
            .finalize()
            .as_bytes(),
    );
    let content = &manifest.content;
    let text = format!(
        "{}\0{}\0{:?}\0{:?}\0{}\0{:?}\0",
        manifest.content_root().display(),
        manifest.game.project,
        content.include,
        content.exclude,
        content.follow_links,
        content.paks,
    );
    hasher.update(text.as_bytes());
    *hasher.finalize().as_bytes()
}

/// The build key's hasher fed with everything but the inputs.
fn build_settings(
    manifest: &Manifest,
    settings: &package::Settings,
    options: &BuildOptions,
) -> blake3::Hasher {
    let mut hasher = blake3::Hasher::new();
    hasher.update(&settings.key);
    let text = format!(
        "{}\0{}\0{:?}\0{}\0",
        manifest.artifact_stem(),
        manifest.game.mount_point,
        manifest.output.compression,
        manifest.output.encrypt
    );
    hasher.update(text.as_bytes());
    if let Some(key) = &options.aes_key {
        // Keyed so the record never reveals anything about the key itself.
        hasher.update(blake3::keyed_hash(key.as_bytes(), b"zenpak build key").as_bytes());
    }
    hasher
}

/// What a development build knows from the last scan's record
/// ([`since_last_scan`]).
enum Since {
    /// Nothing changed: the summary of a build with nothing to do.
    Nothing(BuildSummary),
    /// No folder changed, so the content holds the files the last scan
    /// found; a scan takes them without listing a folder.
    FilesOnly(discover::Listed),
    /// Scan.
    Unknown,
}

/// A release build takes the container a development build wrote in the
/// canonical layout as it is, with every artifact's hash recorded: those the
/// development build identified by their stamps alone are hashed now.
/// False when one is no longer the file the build wrote.
fn hash_for_release(cache: &Cache, record: &mut BuildRecord) -> Result<bool> {
    let mut hashed_now = false;
    for artifact in record.artifacts.iter_mut().filter(|a| a.blake3.is_none()) {
        let hashed = ArtifactRecord::of(&artifact.path)?;
        if hashed.stamp != artifact.stamp || !hashed.is_unchanged() {
            return Ok(false);
        }
        *artifact = hashed;
        hashed_now = true;
    }
    if hashed_now {
        cache.save_build_record(record)?;
    }
    Ok(true)
}

/// The no-change check of a development build ([`TreeRecord`]):
/// nothing to do when the last scan's record holds for these settings,
/// every folder and input file still has its stamp, and the outputs are
/// the files the last build wrote; the files the last scan found when only
/// files changed; else [`Since::Unknown`] (a damaged record is also a
/// warning).
fn since_last_scan(
    manifest: &Manifest,
    settings: &package::Settings,
    options: &BuildOptions,
    cache: &Cache,
    reporter: &Counting<'_>,
) -> Since {
    let tree = match cache.load_tree_record() {
        Ok(Some(tree)) => tree,
        Ok(None) => return Since::Unknown,
        Err(e) => {
            reporter.event(Event::Diagnostic(cache_damaged(
                &e,
                "the content is scanned again; nothing damaged reaches the output",
            )));
            return Since::Unknown;
        }
    };
    if tree.config != tree_config(manifest, settings, options) {
        return Since::Unknown;
    }
    let files = match tree.check(&cache.files_path()) {
        TreeCheck::Unchanged => {
            let current = cache.load_build_record().filter(|record| {
                record.key == tree.build_key
                    && record.chunks.is_some()
                    && !(options.release && record.extended)
                    && record.matches_disk(&manifest.artifact_paths())
            });
            match current {
                Some(record) => {
                    return Since::Nothing(up_to_date_summary(
                        (tree.packages as usize, tree.loose_files as usize),
                        tree.bytes_in,
                        record,
                        reporter.warnings.load(std::sync::atomic::Ordering::Relaxed),
                        Instant::now(),
                    ))
                }
                // Outputs changed, inputs did not: the files just found
                // unchanged, without listing a folder.
                None => match IndexedFiles::unchanged(&cache.files_path(), tree.files) {
                    Some(files) => files,
                    None => return Since::Unknown,
                },
            }
        }
        TreeCheck::FilesChanged(files) => files,
        TreeCheck::Changed => return Since::Unknown,
    };
    Since::FilesOnly(discover::Listed {
        files,
        folders: tree.folder_paths(),
    })
}

/// What a container's chunk bytes depend on besides the packages' own
/// keys: the engine and profile settings, the compression and the key.
fn container_settings(
    manifest: &Manifest,
    settings: &package::Settings,
    options: &BuildOptions,
) -> Hash {
    let mut hasher = blake3::Hasher::new();
    hasher.update(b"zenpak container settings\0");
    hasher.update(&settings.key);
    hasher.update(format!("{:?}\0", manifest.output.compression).as_bytes());
    if let Some(key) = &options.aes_key {
        hasher.update(blake3::keyed_hash(key.as_bytes(), b"zenpak container key").as_bytes());
    }
    *hasher.finalize().as_bytes()
}

/// The key a profile's own pak cipher needs (Marvel Rivals), from the same
/// places as [`aes_key`]: `ZENPAK_AES_KEY`, else `[output] key-file`.
/// Removes the build cache `cache`: the paks unpacked into it
/// ([`pak_input`]), then its own files ([`Cache::clean`]).
pub(crate) fn clean_cache(cache: &Cache, removed: &mut Vec<std::path::PathBuf>) -> Result<()> {
    if cache.exists() {
        pak_input::clean(cache.dir(), removed)?;
        staged::clean(cache.dir(), removed)?;
    }
    cache.clean(removed)
}

pub fn pak_key(manifest: &Manifest) -> Result<Option<AesKey>> {
    let profile = crate::fixups::Profile::from_name(&manifest.game.profile)?;
    if !profile.requires_pak_key(&manifest.profile_options()) {
        return Ok(None);
    }
    if let Some(key) = AesKey::from_env()? {
        return Ok(Some(key));
    }
    manifest
        .key_file_path()
        .map(|path| AesKey::from_file(&path))
        .transpose()
}

/// The AES key of an encrypted build: `None` when `[output] encrypt` is off.
/// It never comes from the manifest: `ZENPAK_AES_KEY`, else `[output] key-file`.
pub fn aes_key(manifest: &Manifest) -> Result<Option<AesKey>> {
    if !manifest.output.encrypt {
        return Ok(None);
    }
    if let Some(key) = AesKey::from_env()? {
        return Ok(Some(key));
    }
    match manifest.key_file_path() {
        Some(path) => AesKey::from_file(&path).map(Some),
        None => Err(Error::usage(
            "`[output] encrypt = true` needs a key: set ZENPAK_AES_KEY or `[output] key-file`",
        )),
    }
}
