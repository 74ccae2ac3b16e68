//! The build pipeline: manifest → discover → read legacy → convert (in
//! parallel) → write the container triplet, with an incremental cache and a
//! stream of events for progress and reports.
//!
//! Data flows one way. [`discover`] finds the files, [`package`] turns one
//! package's files into Zen chunks and a store entry (through `legacy`,
//! `fixups` and `zen`), and the container writer (`iostore`, `pak`) takes
//! them in a stable order. The library prints nothing: the caller gets
//! [`Event`]s and a [`BuildSummary`].

pub mod cache;
pub mod check;
pub mod discover;
pub mod package;

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::manifest::Manifest;
use crate::pak::crypto::AesKey;
use cache::{ArtifactRecord, BuildRecord, Cache, FileIndex, FileStamp, Hash};
use discover::{Content, PackageSource, Selection};

/// What a build reports while it runs.
#[derive(Debug)]
pub enum Event<'a> {
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
    Warning { message: String },
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
    /// The AES key when `[output] encrypt` is on (see [`aes_key`]).
    pub aes_key: Option<AesKey>,
    /// Compute the SHA-256 of the outputs for the summary (costs a read of every output byte).
    pub hash_artifacts: bool,
}

/// What a build did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct BuildSummary {
    pub packages: usize,
    /// Packages converted in this run (the rest came from the cache).
    pub converted: usize,
    pub loose_files: usize,
    /// Chunks in the container (package chunks, bulk-data chunks, container header).
    pub chunks: usize,
    /// Bytes of all input files.
    pub bytes_in: u64,
    /// Bytes of the three output files.
    pub bytes_out: u64,
    /// True when the outputs were already current and nothing was written.
    pub up_to_date: bool,
    pub artifacts: Vec<ArtifactRecord>,
    #[serde(serialize_with = "serialize_millis")]
    pub elapsed: Duration,
}

fn serialize_millis<S: serde::Serializer>(
    d: &Duration,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64() * 1000.0)
}

/// Builds the mod described by `manifest` into `<output>/<stem>.utoc/.ucas/.pak`.
pub fn build(
    manifest: &Manifest,
    options: &BuildOptions,
    reporter: &dyn Reporter,
) -> Result<BuildSummary> {
    let started = Instant::now();
    let selection = Selection::new(&manifest.content.include, &manifest.content.exclude)?;
    let content = discover::discover(&manifest.content_root(), &manifest.game.project, &selection)?;
    let mut settings = package::Settings::from_manifest(manifest)?;

    let output_dir = manifest.output_dir();
    std::fs::create_dir_all(&output_dir).map_err(|e| Error::io(&output_dir, e))?;
    let cache = Cache::new(&output_dir);
    cache.create()?;

    // Fingerprint every input file; unchanged files are not read again.
    // Packages' files first (each package's as one run), then the loose files.
    let mut all_files: Vec<&std::path::Path> = Vec::new();
    let mut package_files = Vec::with_capacity(content.packages.len());
    for package in &content.packages {
        let start = all_files.len();
        all_files.extend(package.files());
        package_files.push(start..all_files.len());
    }
    let loose_start = all_files.len();
    all_files.extend(content.loose_files.iter().map(|f| f.path.as_path()));
    let files = FileIndex::load(&cache.files_path()).refresh(&all_files)?;
    let bytes_in: u64 = files.stamps.iter().map(|s| s.size).sum();

    let keys: Vec<Hash> = content
        .packages
        .iter()
        .zip(&package_files)
        .map(|(p, range)| settings.package_key(p, &files.stamps[range.clone()]))
        .collect();
    let build_key = build_key(
        manifest,
        &settings,
        &content,
        &keys,
        &files.stamps[loose_start..],
        options,
    );
    let artifacts = crate::release::artifact_paths(manifest);

    // Nothing changed since the last build: leave every file as it is.
    if !options.force {
        if let Some(record) = cache.load_build_record() {
            if record.key == build_key
                && record.artifacts.len() == artifacts.len()
                && record
                    .artifacts
                    .iter()
                    .zip(&artifacts)
                    .all(|(a, p)| &a.path == p && a.is_unchanged())
            {
                if !files.unchanged {
                    FileIndex::save(&cache.files_path(), &all_files, &files.stamps)?;
                }
                let mut artifacts = record.artifacts;
                if options.hash_artifacts && artifacts.iter().any(|a| a.sha256.is_none()) {
                    for artifact in artifacts.iter_mut().filter(|a| a.sha256.is_none()) {
                        artifact.sha256 = Some(crate::release::sha256_file(&artifact.path)?);
                    }
                    cache.save_build_record(&BuildRecord {
                        key: build_key,
                        artifacts: artifacts.clone(),
                    })?;
                }
                return Ok(BuildSummary {
                    packages: content.packages.len(),
                    converted: 0,
                    loose_files: content.loose_files.len(),
                    chunks: 0,
                    bytes_in,
                    bytes_out: artifacts.iter().map(|a| a.size).sum(),
                    up_to_date: true,
                    artifacts,
                    elapsed: started.elapsed(),
                });
            }
        }
    }

    settings.load_mappings()?;
    let to_convert = (0..content.packages.len())
        .filter(|&i| options.force || !cache.package_path(&keys[i]).is_file())
        .count();
    reporter.event(Event::Started {
        packages: content.packages.len(),
        loose_files: content.loose_files.len(),
        to_convert,
    });

    // Packages go through in batches, in content order: each batch is converted
    // (or taken from the cache) in parallel, then streamed into the container.
    // Memory holds one batch, not the mod; every failure is collected.
    let stem = manifest.artifact_stem();
    let mut writer =
        package::ContainerWriter::create(manifest, &settings, options.aes_key.as_ref())?;
    let batch_size = rayon::current_num_threads() * 8;
    let mut converted = 0;
    let mut failures: Vec<(usize, Error)> = Vec::new();
    for batch_start in (0..content.packages.len()).step_by(batch_size.max(1)) {
        let batch_end = (batch_start + batch_size).min(content.packages.len());
        let results: Vec<(Result<package::BuiltPackage>, bool)> = (batch_start..batch_end)
            .into_par_iter()
            .map(|i| {
                let source = &content.packages[i];
                let path = cache.package_path(&keys[i]);
                if !options.force {
                    if let Some(built) = package::BuiltPackage::load_cached(&path, source) {
                        reporter.event(Event::Package {
                            source,
                            reused: true,
                            fixups: &[],
                        });
                        return (Ok(built), false);
                    }
                }
                let result = package::convert(source, &settings).and_then(|built| {
                    built.save(&path)?;
                    Ok(built)
                });
                if let Ok(built) = &result {
                    reporter.event(Event::Package {
                        source,
                        reused: false,
                        fixups: &built.fixups,
                    });
                    for warning in &built.warnings {
                        let file = warning.file.as_deref().unwrap_or_default();
                        let message = format!("{file}: {}", warning.message);
                        reporter.event(Event::Warning { message });
                    }
                }
                (result, true)
            })
            .collect();
        for (offset, (result, fresh)) in results.into_iter().enumerate() {
            let i = batch_start + offset;
            match result {
                Ok(built) if failures.is_empty() => {
                    converted += usize::from(fresh);
                    writer.add_package(&content.packages[i], &built)?;
                }
                Ok(_) => converted += usize::from(fresh),
                Err(e) => failures.push((i, e)),
            }
        }
    }
    if !failures.is_empty() {
        // Dropping the writer removes its temporary files: no partial triplet.
        drop(writer);
        return Err(Error::new(crate::error::ErrorKind::Many {
            what: "packages",
            total: content.packages.len(),
            failures: failures
                .into_iter()
                .map(|(i, e)| e.in_file(&content.packages[i].header))
                .collect(),
        }));
    }

    reporter.event(Event::Writing { stem: &stem });
    for file in &content.loose_files {
        for warning in writer.add_loose_file(file)? {
            let file = warning.file.as_deref().unwrap_or_default();
            let message = format!("{file}: {}", warning.message);
            reporter.event(Event::Warning { message });
        }
    }
    let chunks = writer.finish()?;

    let mut records = Vec::new();
    for path in &artifacts {
        let sha256 = if options.hash_artifacts {
            Some(crate::release::sha256_file(path)?)
        } else {
            None
        };
        records.push(ArtifactRecord::of(path, sha256)?);
    }
    cache.save_build_record(&BuildRecord {
        key: build_key,
        artifacts: records.clone(),
    })?;
    FileIndex::save(&cache.files_path(), &all_files, &files.stamps)?;
    cache.prune(&keys.iter().copied().collect::<BTreeSet<_>>())?;

    Ok(BuildSummary {
        packages: content.packages.len(),
        converted,
        loose_files: content.loose_files.len(),
        chunks,
        bytes_in,
        bytes_out: records.iter().map(|r| r.size).sum(),
        up_to_date: false,
        artifacts: records,
        elapsed: started.elapsed(),
    })
}

/// The key of a whole build: every package key with its path, every loose
/// file's content with its path, and every container setting.
fn build_key(
    manifest: &Manifest,
    settings: &package::Settings,
    content: &Content,
    keys: &[Hash],
    loose_stamps: &[FileStamp],
    options: &BuildOptions,
) -> Hash {
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
    for (source, key) in content.packages.iter().zip(keys) {
        hasher.update(source.relative_path.as_bytes());
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
