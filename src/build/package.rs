//! One package through the pipeline: its files → legacy package → game
//! fixups → Zen package and bulk chunks + store entry; how such a result is
//! kept in the cache; and the container written from all of them.

use std::path::Path;

use crate::binary::{Reader, Writer};
use crate::build::cache::{FileStamp, Hash};
use crate::build::discover::{LooseFile, PackageFileKind, PackageSource};
use crate::error::{Error, Result};
use crate::fixups::Profile;
use crate::iostore::chunk::ChunkType;
use crate::iostore::container_header::StoreEntry;
use crate::iostore::{ContainerBuilder, ContainerOptions};
use crate::legacy::PackageFiles;
use crate::manifest::Manifest;
use crate::pak::crypto::AesKey;
use crate::version::EngineVersion;
use crate::zen::BulkDataKind;

/// Everything outside a package's own files that its conversion depends on.
pub struct Settings {
    pub engine: EngineVersion,
    pub profile: Profile,
    /// The `.usmap` file; parsed by [`load_mappings`](Self::load_mappings) only
    /// when something is converted, so an up-to-date build never pays for it.
    pub mappings_file: Option<(std::path::PathBuf, Vec<u8>)>,
    pub mappings: Option<crate::mappings::Mappings>,
    /// Hash of all of the above plus zenpak's version: part of every package key.
    pub key: Hash,
}

impl Settings {
    pub fn from_manifest(manifest: &Manifest) -> Result<Settings> {
        let mut hasher = blake3::Hasher::new();
        hasher.update(b"zenpak ");
        hasher.update(env!("CARGO_PKG_VERSION").as_bytes());
        hasher.update(&[0]);
        hasher.update(manifest.game.engine.as_str().as_bytes());
        hasher.update(&[0]);
        hasher.update(manifest.game.profile.as_bytes());
        hasher.update(&[0]);
        let mappings_file = match manifest.mappings_path() {
            Some(path) => {
                let bytes = std::fs::read(&path).map_err(|e| Error::io(&path, e))?;
                hasher.update(blake3::hash(&bytes).as_bytes());
                Some((path, bytes))
            }
            None => None,
        };
        Ok(Settings {
            engine: manifest.game.engine,
            profile: Profile::from_name(&manifest.game.profile)?,
            mappings_file,
            mappings: None,
            key: *hasher.finalize().as_bytes(),
        })
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
    pub fn package_key(&self, source: &PackageSource, stamps: &[FileStamp]) -> Hash {
        let mut hasher = blake3::Hasher::new();
        hasher.update(&self.key);
        hasher.update(source.package_name.as_bytes());
        hasher.update(&[0]);
        let kinds = std::iter::once(crate::build::discover::PackageFileKind::Header)
            .chain(source.companions.iter().map(|(k, _)| *k));
        for (kind, stamp) in kinds.zip(stamps) {
            hasher.update(&[kind as u8]);
            hasher.update(&stamp.hash);
        }
        *hasher.finalize().as_bytes()
    }
}

/// One package ready for the container: what `zen::convert` made of it.
#[derive(Debug, Clone, PartialEq)]
pub struct BuiltPackage {
    /// What the game profile changed (one line per export; not kept in the cache).
    pub fixups: Vec<String>,
    /// Warnings about the package (a versioned package of another release;
    /// not kept in the cache).
    pub warnings: Vec<crate::diagnostic::Diagnostic>,
    pub package_id: u64,
    pub package_name: String,
    /// Zen header followed by the export data: the package's export-bundle chunk.
    pub package_bytes: Vec<u8>,
    /// When the chunk ends with the package's `.uexp` exactly as it is on disk
    /// (5.3+ keep the export data as it is, unless a fixup changed it): its
    /// length. The cache then keeps only the header and reads the rest from
    /// the `.uexp`, so a build does not write every package twice.
    pub uexp_tail: Option<usize>,
    /// Bulk-data chunks: the companions' bytes as they are on disk.
    pub bulk_data: Vec<(BulkDataKind, Vec<u8>)>,
    pub store_entry: StoreEntry,
    /// Names of the packages the package references softly.
    pub soft_package_references: Vec<String>,
}

/// Marks a cached package file and its layout; bump when the layout changes.
const CACHE_MAGIC: &[u8; 8] = b"ZPKGC\x00\x00\x02";

/// The companion file a bulk-data chunk is read from.
fn bulk_file_kind(kind: BulkDataKind) -> PackageFileKind {
    match kind {
        BulkDataKind::Bulk => PackageFileKind::Bulk,
        BulkDataKind::Optional => PackageFileKind::OptionalBulk,
        BulkDataKind::MemoryMapped => PackageFileKind::MemoryMappedBulk,
    }
}

/// Reads a package's companion of `kind`, which must still be `len` bytes long.
fn read_companion(source: &PackageSource, kind: PackageFileKind, len: usize) -> Option<Vec<u8>> {
    let (_, path) = source.companions.iter().find(|(k, _)| *k == kind)?;
    let bytes = std::fs::read(path).ok()?;
    (bytes.len() == len).then_some(bytes)
}

impl BuiltPackage {
    fn bulk_kind_code(kind: BulkDataKind) -> u8 {
        match kind {
            BulkDataKind::Bulk => 0,
            BulkDataKind::Optional => 1,
            BulkDataKind::MemoryMapped => 2,
        }
    }

    /// Writes the package to the cache. Not synced to disk: a cache file lost
    /// or torn in a crash is only a cache miss ([`load_cached`](Self::load_cached)
    /// rejects what does not decode to its exact end).
    /// Export data and bulk data that are on disk as they are, are kept by
    /// reference (their length), not copied.
    pub fn save(&self, path: &Path) -> Result<()> {
        let tail = self.uexp_tail.unwrap_or(0);
        let head = &self.package_bytes[..self.package_bytes.len() - tail];
        let mut w = Writer::with_capacity(head.len() + 256);
        w.bytes(CACHE_MAGIC);
        w.u64(self.package_id);
        w.fstring_ext(&self.package_name, false);
        w.u64(head.len() as u64);
        w.bytes(head);
        w.u64(tail as u64);
        w.u32(self.bulk_data.len() as u32);
        for (kind, data) in &self.bulk_data {
            w.u8(Self::bulk_kind_code(*kind));
            w.u64(data.len() as u64);
        }
        let entry = &self.store_entry;
        w.u32(entry.export_count as u32);
        w.u32(entry.export_bundle_count as u32);
        w.u32(entry.imported_packages.len() as u32);
        for id in &entry.imported_packages {
            w.u64(*id);
        }
        w.u32(entry.shader_map_hashes.len() as u32);
        for hash in &entry.shader_map_hashes {
            w.bytes(hash);
        }
        w.u32(self.soft_package_references.len() as u32);
        for name in &self.soft_package_references {
            w.fstring(name);
        }
        // Written in place, without a temporary name: renames are costly in a
        // folder of thousands of files, and a torn file does not decode.
        std::fs::write(path, w.as_slice()).map_err(|e| Error::io(path, e))
    }

    /// Reads a package back from the cache, with the export and bulk data it
    /// refers to from `source`'s files; `None` when anything is missing, does
    /// not decode or no longer has its length (then the package is simply
    /// converted again).
    pub fn load_cached(path: &Path, source: &PackageSource) -> Option<BuiltPackage> {
        let bytes = std::fs::read(path).ok()?;
        let (mut built, bulk_lengths) = Self::decode(&bytes).ok()?;
        if let Some(len) = built.uexp_tail {
            let uexp = read_companion(source, PackageFileKind::Exports, len)?;
            built.package_bytes.extend_from_slice(&uexp);
        }
        for (kind, len) in bulk_lengths {
            let data = read_companion(source, bulk_file_kind(kind), len)?;
            built.bulk_data.push((kind, data));
        }
        Some(built)
    }

    /// The cached record, and the kind and length of each bulk-data chunk.
    fn decode(bytes: &[u8]) -> Result<(BuiltPackage, Vec<(BulkDataKind, usize)>)> {
        let mut r = Reader::new(bytes);
        if r.bytes(CACHE_MAGIC.len())? != CACHE_MAGIC {
            return Err(r.error_at(0, "not a zenpak cache file of this version"));
        }
        let package_id = r.u64()?;
        let package_name = r.fstring()?;
        let at = r.pos();
        let len = r.u64()?;
        let len = r.check_count_at(at, len.min(i64::MAX as u64) as i64, 1)?;
        let package_bytes = r.bytes(len)?.to_vec();
        let tail =
            usize::try_from(r.u64()?).map_err(|_| r.error("export data length out of range"))?;
        let bulk_count = r.count_u32(9)?;
        let mut bulk_lengths = Vec::with_capacity(bulk_count);
        for _ in 0..bulk_count {
            let kind = match r.u8()? {
                0 => BulkDataKind::Bulk,
                1 => BulkDataKind::Optional,
                2 => BulkDataKind::MemoryMapped,
                other => return Err(r.error(format!("unknown bulk kind {other}"))),
            };
            let len =
                usize::try_from(r.u64()?).map_err(|_| r.error("bulk data length out of range"))?;
            bulk_lengths.push((kind, len));
        }
        let export_count = r.u32()?;
        let export_bundle_count = r.u32()?;
        let n = r.count_u32(8)?;
        let imported_packages = (0..n).map(|_| r.u64()).collect::<Result<_>>()?;
        let n = r.count_u32(20)?;
        let shader_map_hashes = (0..n).map(|_| r.array::<20>()).collect::<Result<_>>()?;
        let n = r.count_u32(4)?;
        let soft_package_references = (0..n).map(|_| r.fstring()).collect::<Result<_>>()?;
        if !r.at_end() {
            return Err(r.error("unexpected bytes after the cached package"));
        }
        let built = BuiltPackage {
            fixups: Vec::new(),
            warnings: Vec::new(),
            package_id,
            package_name,
            package_bytes,
            uexp_tail: (tail > 0).then_some(tail),
            bulk_data: Vec::new(),
            store_entry: StoreEntry {
                export_count: export_count as i32,
                export_bundle_count: export_bundle_count as i32,
                imported_packages,
                shader_map_hashes,
                ..StoreEntry::default()
            },
            soft_package_references,
        };
        Ok((built, bulk_lengths))
    }
}

/// Reads, fixes up and converts one package.
pub fn convert(source: &PackageSource, settings: &Settings) -> Result<BuiltPackage> {
    let mut files = PackageFiles::load(&source.header)?;
    let fixups = settings
        .profile
        .apply(&mut files, settings.engine, settings.mappings.as_ref())?;
    let package = files.read_package(Some(settings.engine))?;
    files.check_exports(&package)?;
    if let Some(own) = package.package_name() {
        if !own.eq_ignore_ascii_case(&source.package_name) {
            return Err(Error::invalid(format!(
                "the package calls itself `{own}` but its path makes it `{}`",
                source.package_name
            ))
            .in_file(&source.header)
            .with_hint(
                "cooked packages must stay in the folder they were cooked for \
                 (check `[game] project` and the folder layout)",
            ));
        }
    }
    let converted = crate::zen::convert(&files, &package, settings.engine, &source.package_name)?;
    // Only what is on disk can be read back later: not a `.uexp` a fixup changed.
    let uexp_tail = (!fixups.changed()
        && !files.uexp.is_empty()
        && converted.package_bytes.ends_with(&files.uexp))
    .then_some(files.uexp.len());
    Ok(BuiltPackage {
        warnings: package
            .version_warning
            .iter()
            .map(|w| w.clone().with_file(&source.header))
            .collect(),
        uexp_tail,
        fixups: fixups
            .exports
            .iter()
            .map(|e| format!("{}: {}", e.export_name, e.what))
            .collect(),
        package_id: converted.package_id,
        package_name: converted.package_name,
        package_bytes: converted.package_bytes,
        bulk_data: converted.bulk_data,
        store_entry: converted.store_entry,
        soft_package_references: converted.soft_package_references,
    })
}

/// The container triplet being written: packages in content order, then the loose files.
pub struct ContainerWriter {
    builder: ContainerBuilder,
    localized: crate::zen::localization::LocalizedPackages,
    /// Files a conversion has read (shader asset info), not packed.
    consumed: std::collections::BTreeSet<std::path::PathBuf>,
}

impl ContainerWriter {
    pub fn create(
        manifest: &Manifest,
        settings: &Settings,
        aes_key: Option<&AesKey>,
    ) -> Result<ContainerWriter> {
        let options = ContainerOptions {
            compression: manifest.output.compression,
            aes_key: aes_key.cloned(),
            // Content paths are below the engine root; the container's mount
            // point is their common root, as the engine writes it.
            mount_point: crate::mount::ENGINE_ROOT.to_string(),
            ..ContainerOptions::default()
        };
        let builder = ContainerBuilder::create(
            &manifest.output_dir(),
            &manifest.artifact_stem(),
            settings.engine,
            options,
        )?;
        Ok(ContainerWriter {
            builder,
            localized: Default::default(),
            consumed: Default::default(),
        })
    }

    /// Adds a package's chunk, store entry and bulk-data chunks, visible by path.
    pub fn add_package(&mut self, source: &PackageSource, built: &BuiltPackage) -> Result<()> {
        self.builder.add_package(
            built.package_id,
            &built.package_bytes,
            // UE4 load orders are assigned in `finish`, once every package is known.
            built.store_entry.clone(),
            &source.relative_path,
        )?;
        let engine = self.builder.engine();
        let (id, name) = (built.package_id, &built.package_name);
        self.localized.add(id, name, &built.package_bytes, engine)?;
        let path = &source.relative_path;
        let stem = &path[..path.rfind('.').unwrap_or(path.len())];
        for (kind, data) in &built.bulk_data {
            let chunk_type = match kind {
                BulkDataKind::Bulk => ChunkType::BulkData,
                BulkDataKind::Optional => ChunkType::OptionalBulkData,
                BulkDataKind::MemoryMapped => ChunkType::MemoryMappedBulkData,
            };
            let bulk_path = format!("{stem}.{}", kind.extension());
            self.builder
                .add_bulk_chunk(built.package_id, chunk_type, 0, data, &bulk_path)?;
        }
        Ok(())
    }

    /// Adds a file to the companion pak; a UE5 shader library becomes shader
    /// chunks instead (its asset info, read beside it, is then not packed:
    /// loose files come sorted, the library before its asset info).
    /// Returns the warnings to report.
    pub fn add_loose_file(
        &mut self,
        file: &LooseFile,
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
        let data = std::fs::read(&file.path).map_err(|e| Error::io(&file.path, e))?;
        self.builder.add_loose_file(&file.relative_path, &data)?;
        Ok(shaders.warnings)
    }

    /// Completes all three files and renames them into place. Returns the chunk count.
    pub fn finish(mut self) -> Result<usize> {
        for (id, culture, source) in self.localized.redirects() {
            self.builder.add_localized_package(id, &culture, &source);
        }
        if !self.builder.engine().is_ue5() {
            assign_load_order(&mut self.builder.header_mut().packages);
        }
        Ok(self.builder.finish()?.chunk_count)
    }
}

/// UE4 store entries carry a load order: packages load after the packages
/// they import. Numbers the container's packages in that order (a depth-first
/// post-order over imports, starting from each package in container order);
/// imports from outside the container are the game's and need no number.
fn assign_load_order(packages: &mut [(u64, StoreEntry)]) {
    let index: std::collections::BTreeMap<u64, usize> = packages
        .iter()
        .enumerate()
        .map(|(i, (id, _))| (*id, i))
        .collect();
    let mut order = vec![None; packages.len()];
    let mut next = 0u32;
    for root in 0..packages.len() {
        // Iterative DFS: (package, next import to look at). Cycles are cut where they close.
        let mut stack = vec![(root, 0usize)];
        let mut on_stack = vec![false; packages.len()];
        on_stack[root] = true;
        while let Some((current, import)) = stack.pop() {
            if order[current].is_some() {
                continue;
            }
            let imports = &packages[current].1.imported_packages;
            match imports.get(import) {
                Some(id) => {
                    stack.push((current, import + 1));
                    if let Some(&child) = index.get(id) {
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
    for ((_, entry), load_order) in packages.iter_mut().zip(order) {
        entry.load_order = load_order.unwrap_or(0);
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
        let mut packages = vec![
            (10, entry(&[30, 99])),
            (20, entry(&[40])),
            (30, entry(&[20])),
            (40, entry(&[20])),
        ];
        assign_load_order(&mut packages);
        let order: Vec<u32> = packages.iter().map(|(_, e)| e.load_order).collect();
        assert_eq!(order, [3, 1, 2, 0]);
        let mut seen: Vec<u32> = order.clone();
        seen.sort();
        assert_eq!(seen, [0, 1, 2, 3]);
    }
}
