//! One package through the pipeline: its files → legacy package → game
//! fixups → Zen package and bulk chunks + store entry (the one per-package
//! pipeline, used by `zenpak build` and `zenpak convert`), and the
//! container written from all of them. The result is a
//! [`super::built::BuiltPackage`]; how it is kept in the cache is
//! [`super::cache::entry`].
//!
//! Bulk data is never read into memory: a built package names its
//! companions, and the container writer streams them in blocks. When the
//! Zen package ends with the `.uexp` exactly as it is on disk (5.3+ without
//! fixups), that tail is streamed from the file too.

use std::path::{Path, PathBuf};

use crate::build::built::{BuiltPackage, BulkChunk};
use crate::build::cache::container::RecordedPackage;
use crate::build::input::{Hash, InputStamp, LooseFile, PackageFileKind, PackageSource};
use crate::error::{Error, Result};
use crate::fixups::Profile;
use crate::iostore::chunk::ChunkType;
use crate::iostore::container_header::{StoreEntry, StoreEntryArena};
use crate::iostore::{
    ChunkPiece, ContainerBuilder, ContainerOptions, PreviousContainer, WrittenContainer,
};
use crate::legacy::BulkKind;
use crate::legacy::PackageFiles;
use crate::manifest::Manifest;
use crate::version::EngineVersion;

/// Everything outside a package's own files that its conversion depends on.
pub struct Settings {
    pub(crate) engine: EngineVersion,
    pub(crate) profile: Profile,
    /// The profile's settings from the manifest (`[marvel-rivals]`).
    pub(crate) profile_options: crate::fixups::ProfileOptions,
    /// The `.usmap` file; parsed by [`load_mappings`](Self::load_mappings) only
    /// when something is converted, so an up-to-date build never pays for it.
    pub(crate) mappings_file: Option<(PathBuf, Vec<u8>)>,
    pub(crate) mappings: Option<crate::mappings::Mappings>,
    /// Hash of all of the above plus zenpak's version: part of every package key.
    pub(crate) key: Hash,
}

impl Settings {
    /// Settings for `engine` and `profile`, with the game's mappings file if given.
    pub fn new(
        engine: EngineVersion,
        profile: Profile,
        profile_options: crate::fixups::ProfileOptions,
        mappings: Option<&Path>,
    ) -> Result<Settings> {
        let mut hasher = blake3::Hasher::new();
        hasher.update(b"zenpak ");
        hasher.update(env!("CARGO_PKG_VERSION").as_bytes());
        hasher.update(&[0]);
        hasher.update(engine.as_str().as_bytes());
        hasher.update(&[0]);
        hasher.update(profile.name().as_bytes());
        hasher.update(&[0]);
        hasher.update(&profile_options.fingerprint());
        hasher.update(&[0]);
        let mappings_file = match mappings {
            Some(path) => {
                let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
                hasher.update(blake3::hash(&bytes).as_bytes());
                Some((path.to_path_buf(), bytes))
            }
            None => None,
        };
        Ok(Settings {
            engine,
            profile,
            profile_options,
            mappings_file,
            mappings: None,
            key: *hasher.finalize().as_bytes(),
        })
    }

    pub(crate) fn from_manifest(manifest: &Manifest) -> Result<Settings> {
        let profile = Profile::from_name(&manifest.game.profile)?;
        let mappings = manifest.mappings_path();
        if let Some(path) = &mappings {
            if !path.is_file() {
                return Err(Error::usage(format!(
                    "`[game] mappings` names {}, which does not exist",
                    path.display()
                ))
                .in_file(manifest.manifest_path())
                .with_hint("fix the path (relative to mod.toml), or remove the key to build without mappings"));
            }
        }
        Settings::new(
            manifest.game.engine,
            profile,
            manifest.profile_options(),
            mappings.as_deref(),
        )
    }

    /// Parses the mappings file (once), before packages are converted.
    pub fn load_mappings(&mut self) -> Result<()> {
        if let (Some((path, bytes)), None) = (&self.mappings_file, &self.mappings) {
            self.mappings =
                Some(crate::mappings::Mappings::read(bytes).map_err(|e| e.in_file(path))?);
        }
        Ok(())
    }

    /// The cache key of one package: the settings, its name, and each file's
    /// kind and contents (`stamps`: its files' stamps, header first).
    pub(crate) fn package_key(&self, source: &PackageSource, stamps: &[InputStamp]) -> Hash {
        let mut hasher = blake3::Hasher::new();
        hasher.update(&self.key);
        hasher.update(source.package_name().as_bytes());
        hasher.update(&[0]);
        let kinds = std::iter::once(PackageFileKind::Header).chain(source.companion_kinds());
        for (kind, stamp) in kinds.zip(stamps) {
            hasher.update(&[kind as u8]);
            hasher.update(&stamp.hash);
        }
        *hasher.finalize().as_bytes()
    }
}

/// Reads, fixes up and converts the package of a discovered source.
///
/// When the chunk keeps the `.uexp` as it is (5.3+) and the profile never
/// touches export data, the `.uexp` is not read at all: the container
/// writer streams it from disk after the converted header, so most of a
/// mod's bytes are read once, by the writer.
/// Only the companions the scan found are looked at.
pub fn convert(source: &PackageSource, settings: &Settings) -> Result<BuiltPackage> {
    let uexp = source.companion(PackageFileKind::Exports);
    let bulk = BulkKind::ALL
        .into_iter()
        .filter_map(|kind| Some((kind, source.companion(PackageFileKind::of_bulk(kind))?)));
    let (mut files, uexp_len) =
        PackageFiles::load_header_with(&source.header(), uexp.as_deref(), bulk)?;
    // The pair on disk, before a profile edits it: its `.uexp` is the one
    // its header was cooked with (its size from the listing, its tag read
    // with one small read, so an unread `.uexp` is checked too).
    let package = files.read_package(Some(settings.engine))?;
    files.check_export_ranges(&package, uexp_len)?;
    files.check_uexp_belongs(&package, uexp_len)?;
    if settings.engine.zen_layout() == crate::version::ZenLayout::DependencyBundles
        && !settings.profile.reads_export_data()
    {
        return convert_loaded(files, Some(uexp_len), source.package_name(), settings);
    }
    files.read_uexp()?;
    convert_files(files, source.package_name(), settings)
}

/// The per-package pipeline: game fixups, reading and checking the legacy
/// package (export ranges, bulk data present, its name matching its path),
/// conversion to a Zen package, store entry and bulk chunks.
/// `package_name` may be empty for packages that carry their own name.
pub fn convert_files(
    files: PackageFiles,
    package_name: &str,
    settings: &Settings,
) -> Result<BuiltPackage> {
    convert_loaded(files, None, package_name, settings)
}

/// [`convert_files`]; `unread_uexp` is the length of a `.uexp` that was
/// not read ([`PackageFiles::load_header_only`]), which the chunk then
/// ends with unchanged.
fn convert_loaded(
    mut files: PackageFiles,
    unread_uexp: Option<u64>,
    package_name: &str,
    settings: &Settings,
) -> Result<BuiltPackage> {
    let fixups = settings.profile.apply_with(
        &mut files,
        settings.engine,
        settings.mappings.as_ref(),
        &settings.profile_options,
    )?;
    let package = files.read_package(Some(settings.engine))?;
    files.check_export_ranges(&package, unread_uexp.unwrap_or(files.uexp.len() as u64))?;
    files.check_bulk_data(&package)?;
    let mut warnings =
        settings
            .profile
            .package_warnings(&settings.profile_options, &files.path, &package)?;
    warnings.extend(
        package
            .version_warning
            .iter()
            .map(|w| w.clone().with_file(&files.path)),
    );
    if let Some(own) = package.package_name() {
        if !package_name.is_empty() && !own.eq_ignore_ascii_case(package_name) {
            return Err(Error::invalid(format!(
                "the package calls itself `{own}` but its path makes it `{package_name}`"
            ))
            .in_file(&files.path)
            .with_hint(format!(
                "cooked packages must stay in the folder they were cooked for: \
                 move it to the folder of `{own}` (check `[game] project` and the folder layout)"
            )));
        }
    }
    // Bulk data passes through the conversion unchanged: stream it, never read it.
    let companions = std::mem::take(&mut files.bulk);
    let export_data = match unread_uexp {
        Some(len) => crate::zen::ExportData::Unread { len },
        None => (&files.uexp).into(),
    };
    let mut converted =
        crate::zen::convert_with(&files, &package, settings.engine, package_name, export_data)?;
    let uexp_tail = if converted.unread_export_data > 0 {
        Some((files.uexp_path.clone(), converted.unread_export_data))
    } else if !fixups.changed()
        && !files.uexp.is_empty()
        && converted.package_bytes.ends_with(&files.uexp)
    {
        // Only what is on disk can be read back later: not a `.uexp` a fixup changed.
        let head_len = converted.package_bytes.len() - files.uexp.len();
        converted.package_bytes.truncate(head_len);
        converted.package_bytes.shrink_to_fit();
        Some((files.uexp_path.clone(), files.uexp.len() as u64))
    } else {
        None
    };
    Ok(BuiltPackage {
        uexp_tail,
        fixups: fixups
            .exports
            .iter()
            .map(|e| {
                format!(
                    "export {} {}: {} ({} bytes inserted; located by {})",
                    e.export_index, e.export_name, e.what, e.inserted_bytes, e.located_by
                )
            })
            .collect(),
        warnings,
        package_id: converted.package_id,
        package_name: converted.package_name,
        head: converted.package_bytes,
        bulk: companions
            .into_iter()
            .map(|c| BulkChunk {
                kind: c.kind,
                path: c.path,
                len: c.size,
            })
            .collect(),
        store_entry: converted.store_entry,
        soft_package_references: converted.soft_package_references,
        export_graph: converted.export_graph,
    })
}

/// The container triplet being written: packages in content order, then the loose files.
pub(crate) struct ContainerWriter {
    builder: ContainerBuilder,
    profile: Profile,
    profile_options: crate::fixups::ProfileOptions,
    /// Paths of the container's chunks, for the profile's companion files.
    container_paths: Vec<String>,
    localized: crate::zen::localization::LocalizedPackages,
    /// Files a conversion has read (shader asset info), not packed.
    consumed: std::collections::BTreeSet<std::path::PathBuf>,
}

impl ContainerWriter {
    /// `build`'s AES key encrypts the container (`[output] encrypt`); its
    /// pak key is the one a profile's own pak cipher needs; only a release
    /// build hashes the `.ucas` as it is written (a development build's
    /// outputs are identified by their stamps, see
    /// [`super::cache::build_record::ArtifactRecord`]).
    /// `previous`: extend the container already in the output folder, whose
    /// `.ucas` has that length, keeping the chunks of the given packages (a
    /// development build; see [`ContainerBuilder::create_appending`]) —
    /// when it was written with the same options and at most
    /// 1/[`MAX_DEAD_FRACTION`] of it would be chunks no longer used; else it
    /// is written anew.
    pub(crate) fn create(
        manifest: &Manifest,
        settings: &Settings,
        build: &super::BuildOptions,
        previous: Option<(u64, &std::collections::BTreeSet<u64>)>,
    ) -> Result<ContainerWriter> {
        let pak_key = build.pak_key.as_ref();
        let options = ContainerOptions {
            compression: manifest.output.compression,
            aes_key: build.aes_key.clone(),
            hash_ucas: build.release,
            // Content paths are below the engine root; the container's mount
            // point is their common root, as the engine writes it.
            mount_point: crate::mount::ENGINE_ROOT.to_string(),
            ..ContainerOptions::default()
        };
        let (dir, stem) = (manifest.output_dir(), manifest.artifact_stem());
        // A previous `.utoc` that does not read is simply not extended:
        // writing the container anew is always correct.
        let previous = previous.and_then(|(len, kept)| {
            let utoc = crate::iostore::container_file(&dir, &stem, "utoc");
            PreviousContainer::open(&utoc, len, settings.engine, &options)
                .ok()
                .flatten()
                .filter(|p| p.dead_bytes_keeping(kept) <= p.ucas_len() / MAX_DEAD_FRACTION)
        });
        let mut builder = match previous {
            Some(previous) => {
                ContainerBuilder::create_appending(&dir, &stem, settings.engine, options, previous)?
            }
            None => ContainerBuilder::create(&dir, &stem, settings.engine, options)?,
        };
        if settings.profile.requires_pak_key(&settings.profile_options) {
            let key = pak_key.ok_or_else(|| {
                Error::usage(format!(
                    "the `{}` profile encrypts the companion pak with the game's key, and none is given",
                    settings.profile.name()
                ))
                .in_file(manifest.manifest_path())
                .with_hint("set ZENPAK_AES_KEY or `[output] key-file` (the game's AES key), or turn it off in the profile's table")
            })?;
            if let Some(cipher) = settings.profile.pak_cipher(&settings.profile_options, key) {
                builder.set_pak_cipher(cipher);
            }
        }
        Ok(ContainerWriter {
            builder,
            profile: settings.profile,
            profile_options: settings.profile_options.clone(),
            container_paths: Vec::new(),
            localized: Default::default(),
            consumed: Default::default(),
        })
    }

    /// Tells the writer every package it will be given, before the first:
    /// then only localized packages and their sources are read for the
    /// container header's redirects.
    pub(crate) fn expect_packages(&mut self, packages: &[PackageSource]) {
        let bulk_chunks = packages
            .iter()
            .flat_map(PackageSource::companion_kinds)
            // Companions are the `.uexp` and the bulk-data files.
            .filter(|kind| *kind != PackageFileKind::Exports)
            .count();
        // The packages, their bulk data and the container header.
        self.builder
            .reserve(packages.len() + bulk_chunks + 1, packages.len());
        self.localized = crate::zen::localization::LocalizedPackages::for_packages(
            packages.iter().map(|p| p.package_name()),
        );
    }

    /// Adds a package's chunk, store entry and bulk-data chunks, visible by
    /// path. `unchanged`: its chunks are the ones the container being
    /// extended holds (same package key), so they are kept where they are.
    pub(crate) fn add_package(
        &mut self,
        source: &PackageSource,
        built: &BuiltPackage,
        unchanged: bool,
    ) -> Result<()> {
        // UE4 load orders are assigned in `finish`, once every package is known.
        let entry = StoreEntry {
            export_bundles_size: built.package_len(),
            ..built.store_entry.clone()
        };
        let path = source.relative_path();
        let (id, len) = (built.package_id, built.package_len());
        if !(unchanged
            && self
                .builder
                .add_package_reused(id, len, entry.clone(), path)?)
        {
            self.builder
                .add_package_pieces(id, &built.package_pieces(), entry, path)?;
        }
        let engine = self.builder.engine();
        let (id, name) = (built.package_id, &built.package_name);
        self.localized.add(id, name, &built.head, engine)?;
        for bulk in &built.bulk {
            let (chunk, bulk_path) = self.bulk_chunk(source, id, bulk.kind);
            let pieces = [ChunkPiece::File {
                path: &bulk.path,
                offset: 0,
                len: bulk.len,
            }];
            if !(unchanged
                && self
                    .builder
                    .add_chunk_reused(chunk, bulk.len, Some(&bulk_path))?)
            {
                self.builder
                    .add_chunk_pieces(chunk, &pieces, Some(&bulk_path))?;
            }
        }
        self.note_paths(source, built.bulk.iter().map(|b| b.kind));
        Ok(())
    }

    /// Whether the container extends the previous one (a development
    /// build whose previous container could be opened and is kept).
    pub(crate) fn is_extending(&self) -> bool {
        self.builder.is_extending()
    }

    /// Whether the container header needs the package's own bytes (a
    /// localized package, or the source of one): then it cannot be added
    /// from its record alone.
    pub(crate) fn needs_package_bytes(&self, package_id: u64) -> bool {
        self.localized.wants(package_id)
    }

    /// Adds an unchanged package from its record alone: its chunks are kept
    /// where the container being extended has them, nothing of the package
    /// is read. Returns `false`, adding nothing, when that cannot be done
    /// (no such chunks of those lengths in the previous container, or the
    /// header needs the package's bytes): add the built package instead.
    /// `source` must be the package the record was made from (same key).
    pub(crate) fn add_recorded(
        &mut self,
        source: &PackageSource,
        recorded: &RecordedPackage,
    ) -> Result<bool> {
        let id = recorded.package_id;
        if self.needs_package_bytes(id) {
            return Ok(false);
        }
        let engine = self.builder.engine();
        let package_chunk = crate::iostore::chunk::ChunkId::package_data(id, engine);
        let len = recorded.store_entry.export_bundles_size;
        // Every chunk is found first: the package is kept whole or not at all.
        let Some(package) = self.builder.reusable(package_chunk, len) else {
            return Ok(false);
        };
        let mut bulk = Vec::with_capacity(recorded.bulk.len());
        for (kind, len) in &recorded.bulk {
            let (chunk, bulk_path) = self.bulk_chunk(source, id, *kind);
            match self.builder.reusable(chunk, *len) {
                Some(kept) => bulk.push((kept, bulk_path)),
                None => return Ok(false),
            }
        }
        let entry = recorded.store_entry.clone();
        self.builder
            .keep_package(id, package, entry, source.relative_path())?;
        for (kept, bulk_path) in bulk {
            self.builder.keep_chunk(kept, Some(&bulk_path))?;
        }
        self.note_paths(source, recorded.bulk.iter().map(|(kind, _)| *kind));
        Ok(true)
    }

    /// The chunk id and path of a package's bulk-data chunk of `kind`.
    fn bulk_chunk(
        &self,
        source: &PackageSource,
        package_id: u64,
        kind: BulkKind,
    ) -> (crate::iostore::chunk::ChunkId, String) {
        let path = source.relative_path();
        let stem = &path[..path.rfind('.').unwrap_or(path.len())];
        let engine = self.builder.engine();
        let id =
            crate::iostore::chunk::ChunkId::new(package_id, 0, ChunkType::of_bulk(kind), engine);
        (id, format!("{stem}.{}", kind.extension()))
    }

    /// Notes a package's chunk paths for the profile's companion files.
    fn note_paths(&mut self, source: &PackageSource, bulk: impl Iterator<Item = BulkKind>) {
        if self.profile.needs_container_paths() {
            let path = source.relative_path();
            let stem = &path[..path.rfind('.').unwrap_or(path.len())];
            self.container_paths.push(path.to_string());
            self.container_paths
                .extend(bulk.map(|kind| format!("{stem}.{}", kind.extension())));
        }
    }

    /// Adds a file to the companion pak; a UE5 shader library becomes shader
    /// chunks instead (its asset info, read beside it, is then not packed:
    /// loose files come sorted, the library before its asset info).
    /// Any other file is streamed from disk, hashed on the way: bytes that
    /// are not the ones fingerprinted as `expected` (the file changed
    /// during the build) fail the build. Returns the warnings to report.
    pub(crate) fn add_loose_file(
        &mut self,
        file: &LooseFile,
        expected: &Hash,
    ) -> Result<Vec<crate::diagnostic::Diagnostic>> {
        use crate::iostore::shader_library;
        if self.consumed.contains(&file.path) {
            return Ok(Vec::new());
        }
        let shaders = shader_library::convert_file(&file.path, self.builder.engine())?;
        if let Some(library) = &shaders.library {
            self.builder
                .add_shader_library(library, &file.relative_path)?;
            self.consumed.extend(shaders.asset_info);
            return Ok(shaders.warnings);
        }
        let read = self
            .builder
            .add_loose_file_from(&file.relative_path, &file.path)?;
        if read != *expected {
            return Err(Error::new(crate::error::ErrorKind::HashMismatch {
                algorithm: "BLAKE3",
                expected: crate::hash::hex(expected),
                actual: crate::hash::hex(&read),
            })
            .in_file(&file.path)
            .with_hint("the file changed during the build; build again"));
        }
        Ok(shaders.warnings)
    }

    /// Completes all three files and publishes them (see
    /// [`ContainerBuilder::finish`] for the order).
    pub(crate) fn finish(mut self) -> Result<WrittenContainer> {
        for (path, data) in self
            .profile
            .companion_pak_files(&self.profile_options, &self.container_paths)
        {
            self.builder.add_loose_file(&path, &data)?;
        }
        for (id, culture, source) in self.localized.redirects() {
            self.builder.add_localized_package(id, &culture, &source);
        }
        if !self.builder.engine().is_ue5() {
            assign_load_order(self.builder.store_entries_mut());
        }
        self.builder.finish()
    }
}

/// A development build extends the previous `.ucas` only while at most
/// 1/this of it would then be chunks no longer used (replaced by earlier
/// extensions, or changed or removed now); past that it is written anew.
pub(crate) const MAX_DEAD_FRACTION: u64 = 4;

/// UE4 store entries carry a load order: packages load after the packages
/// they import. Numbers the container's packages in that order (a depth-first
/// post-order over imports, starting from each package in container order);
/// imports from outside the container are the game's and need no number.
fn assign_load_order(packages: &mut StoreEntryArena) {
    let count = packages.len();
    let index: std::collections::BTreeMap<u64, usize> =
        (0..count).map(|i| (packages.id(i), i)).collect();
    let mut order = vec![None; count];
    let mut next = 0u32;
    for root in 0..count {
        // Iterative DFS: (package, next import to look at). Cycles are cut where they close.
        let mut stack = vec![(root, 0usize)];
        let mut on_stack = vec![false; count];
        on_stack[root] = true;
        while let Some((current, import)) = stack.pop() {
            if order[current].is_some() {
                continue;
            }
            match packages.imports(current).nth(import) {
                Some(id) => {
                    stack.push((current, import + 1));
                    if let Some(&child) = index.get(&id) {
                        if order[child].is_none() && !on_stack[child] {
                            on_stack[child] = true;
                            stack.push((child, 0));
                        }
                    }
                }
                None => {
                    order[current] = Some(next);
                    next += 1;
                }
            }
        }
    }
    for (i, load_order) in order.into_iter().enumerate() {
        packages.set_load_order(i, load_order.unwrap_or(0));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(imports: &[u64]) -> StoreEntry {
        StoreEntry {
            imported_packages: imports.to_vec(),
            ..StoreEntry::default()
        }
    }

    #[test]
    fn ue4_load_order_puts_imports_first() {
        // 10 imports 30 (and a game package 99), 30 imports 20; 40 and 20 import each other.
        let mut packages = StoreEntryArena::of(&[
            (10, entry(&[30, 99])),
            (20, entry(&[40])),
            (30, entry(&[20])),
            (40, entry(&[20])),
        ]);
        assign_load_order(&mut packages);
        let order: Vec<u32> = (0..4).map(|i| packages.fixed(i).load_order).collect();
        assert_eq!(order, [3, 1, 2, 0]);
        let mut seen: Vec<u32> = order.clone();
        seen.sort();
        assert_eq!(seen, [0, 1, 2, 3]);
    }
}
