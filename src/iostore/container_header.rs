//! The container header chunk (`FIoContainerHeader`): the package store of
//! one container — which packages it holds, each package's store entry
//! (imports, export counts, shader maps), localized packages, package
//! redirects, soft package references and optional-segment data.
//!
//! Layouts per [`ContainerHeaderVersion`] (facts from the engine's
//! `IoContainerHeader` and trumank/retoc's reader, checked against the
//! engine-written headers in the corpus, which must round-trip byte for byte):
//!
//! * `Initial` (UE 4.26/4.27): no magic; container id, package count, a
//!   name-batch (names + hashes) pair of byte arrays, package ids, the store
//!   entry buffer (32-byte entries), the culture package map and
//!   `(source, target)` redirects.
//! * `LocalizedPackages`..`SoftPackageReferencesOffset` (UE5): magic
//!   `0x496F436E`, version, container id, (package count before
//!   `OptionalSegmentPackages`), package ids, store entry buffer (24-byte
//!   entries with export counts before `NoExportInfo`, 16 bytes after),
//!   optional segment ids + entries, a redirect name batch, localized
//!   packages, package redirects, then soft package references
//!   (`SoftPackageReferences`+, with an offset/size record from
//!   `SoftPackageReferencesOffset`).
//!
//! The store entry buffer is a table of fixed-size entries followed by the
//! entries' arrays; an array is addressed by an offset relative to the
//! position of its own `(count, offset)` view.
//!
//! Shader map hashes: UE 5.8 stores each `ShaderMapHashes` element in 8
//! bytes instead of a 20-byte `FSHAHash` and kept the version at
//! `SoftPackageReferencesOffset` (trumank/retoc issue #72, seen in a retail
//! 5.8 game; [`ShaderMapHashLayout`]). Writing takes the layout from the
//! engine setting ([`ContainerHeader::shader_map_hash_layout`]). Reading
//! works it out by size: the engine lays the arrays back to back after the
//! fixed entries, so the buffer is exactly `entries × entry size + 8 ×
//! imports + element × hashes` bytes, and only one of 20 and 8 can make that
//! hold when there is any hash (20·n = 8·n only for n = 0). A buffer that
//! fits neither (another tool's padding) is read with the 20-byte layout if
//! its arrays fit the buffer, else with the 8-byte one.

use serde::Serialize;

use crate::binary::{Reader, Writer};
use crate::error::{Context, Error, Result};
use crate::names::{read_name_batch, write_name_batch, NAME_HASH_ALGORITHM_ID};
pub(crate) use crate::names::{BatchName, MappedName, MappedNameKind};

/// `'nCoI'` little-endian: the UE5 container header magic.
pub const CONTAINER_HEADER_MAGIC: u32 = 0x496F_436E;

pub use crate::version::{ContainerHeaderVersion, ShaderMapHashLayout};

impl ContainerHeaderVersion {
    /// The header starts with the magic and the version, and has the UE5
    /// tables (redirect names, localized packages, named redirects).
    fn has_magic(self) -> bool {
        self > ContainerHeaderVersion::Initial
    }
    /// A package count precedes the package ids (before `OptionalSegmentPackages`).
    fn has_package_count(self) -> bool {
        self < ContainerHeaderVersion::OptionalSegmentPackages
    }
    /// The UE4 name batch byte arrays (names, hashes).
    fn has_legacy_names(self) -> bool {
        self <= ContainerHeaderVersion::Initial
    }
    /// Optional-segment package ids and store entries (5.1+).
    fn has_optional_segments(self) -> bool {
        self >= ContainerHeaderVersion::OptionalSegmentPackages
    }
    /// Store entries carry the bundle size and load order (UE4 `Initial`).
    fn has_store_sizes(self) -> bool {
        self == ContainerHeaderVersion::Initial
    }
    /// Store entries carry export and bundle counts (before `NoExportInfo`).
    fn has_export_info(self) -> bool {
        self < ContainerHeaderVersion::NoExportInfo
    }
    /// Soft package references after the tables (5.5+).
    fn has_soft_references(self) -> bool {
        self >= ContainerHeaderVersion::SoftPackageReferences
    }
    /// The soft package references come with an offset/size record (5.6+).
    fn has_soft_references_record(self) -> bool {
        self >= ContainerHeaderVersion::SoftPackageReferencesOffset
    }

    /// Size of one fixed store entry and the offsets of its array views
    /// (imported packages, shader map hashes).
    fn store_entry_layout(self) -> (usize, usize, Option<usize>) {
        use ContainerHeaderVersion::*;
        match self {
            PreInitial => (16, 8, None),
            Initial => (32, 24, None),
            LocalizedPackages | OptionalSegmentPackages => (24, 8, Some(16)),
            NoExportInfo | SoftPackageReferences | SoftPackageReferencesOffset => (16, 0, Some(8)),
        }
    }
}

/// One package's entry in the package store (`FFilePackageStoreEntry`):
/// what the loader needs before it reads the package itself.
///
/// Which fields are stored depends on the container header version:
/// `export_bundles_size` and `load_order` only in UE4 (`Initial`);
/// `export_count` and `export_bundle_count` before 5.3 (`NoExportInfo`);
/// `shader_map_hashes` only in UE5. Fields a version does not store are
/// ignored when writing and read back as zero / empty.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct StoreEntry {
    /// UE4: size of the package's export bundle chunk (header + exports).
    pub export_bundles_size: u64,
    /// UE4: load order of the package.
    pub load_order: u32,
    /// Number of exports (UE4 .. UE 5.2).
    pub export_count: i32,
    /// Number of export bundles (UE4 .. UE 5.2).
    pub export_bundle_count: i32,
    /// Package ids of the packages this one imports.
    pub imported_packages: Vec<u64>,
    /// Hashes of the shader maps the package uses (UE5): 20-byte SHA-1s,
    /// or with [`ShaderMapHashLayout::Hash64`] (5.8) the 8 stored bytes
    /// followed by 12 zero bytes.
    pub shader_map_hashes: Vec<[u8; 20]>,
}

/// A localized package (UE5): the source package and its name in the
/// header's name map.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LocalizedPackage {
    pub source_package_id: u64,
    pub source_package_name: MappedName,
}

/// A package redirect. UE4 stores only the two ids; UE5 adds the source name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PackageRedirect {
    pub(crate) source_package_id: u64,
    pub(crate) target_package_id: u64,
    pub(crate) source_package_name: Option<MappedName>,
}

/// Soft package references (UE 5.5+): referenced package ids and the
/// per-package index data, kept as the engine wrote it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct SoftPackageReferences {
    pub(crate) package_ids: Vec<u64>,
    pub(crate) package_indices: Vec<u8>,
}

/// UE4 culture map: culture name → `(source package, localized package)` pairs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CulturePackages {
    pub culture: String,
    pub packages: Vec<(u64, u64)>,
}

/// A whole container header. Packages keep the order they were given (the
/// engine's order when read from a file).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ContainerHeader {
    pub version: ContainerHeaderVersion,
    pub container_id: u64,
    /// `(package id, store entry)` in file order.
    pub packages: Vec<(u64, StoreEntry)>,
    /// UE4 only: the container's name batch (empty in practice) as raw
    /// byte arrays (names, hashes).
    pub(crate) legacy_names: Vec<u8>,
    pub(crate) legacy_name_hashes: Vec<u8>,
    /// UE 5.1+: optional-segment package ids and their raw store entry buffer.
    pub optional_segment_package_ids: Vec<u64>,
    pub optional_segment_store_entries: Vec<u8>,
    /// UE5: names referred to by localized packages and redirects.
    pub redirect_names: Vec<BatchName>,
    pub localized_packages: Vec<LocalizedPackage>,
    pub package_redirects: Vec<PackageRedirect>,
    /// UE4 only.
    pub culture_packages: Vec<CulturePackages>,
    /// UE 5.5+.
    pub(crate) soft_package_references: Option<SoftPackageReferences>,
    /// Zero bytes some writers leave after the header (a padded chunk);
    /// kept so such headers write back unchanged. zenpak writes none.
    pub(crate) trailing_zeros: usize,
    /// UE 5.6+ headers from other tools whose soft-reference record has
    /// size 0 and no body: the offset they wrote, kept for write-back.
    pub(crate) empty_soft_references_offset: Option<i64>,
    /// The element layout of the store entries' shader map hashes: set from
    /// the engine when writing (`None` writes 20-byte hashes); when read,
    /// what the store buffer's size says, `None` when no entry has a hash
    /// (or the version stores none) and so the buffer cannot tell.
    pub(crate) shader_map_hash_layout: Option<ShaderMapHashLayout>,
}

impl ContainerHeader {
    /// An empty header for a container.
    pub fn new(version: ContainerHeaderVersion, container_id: u64) -> Self {
        ContainerHeader {
            version,
            container_id,
            packages: Vec::new(),
            legacy_names: Vec::new(),
            // UE4 writes the hash algorithm id even for an empty batch.
            legacy_name_hashes: if version.has_legacy_names() {
                NAME_HASH_ALGORITHM_ID.to_le_bytes().to_vec()
            } else {
                Vec::new()
            },
            optional_segment_package_ids: Vec::new(),
            optional_segment_store_entries: Vec::new(),
            redirect_names: Vec::new(),
            localized_packages: Vec::new(),
            package_redirects: Vec::new(),
            culture_packages: Vec::new(),
            soft_package_references: None,
            trailing_zeros: 0,
            empty_soft_references_offset: None,
            shader_map_hash_layout: None,
        }
    }

    /// Parses a header chunk. `version_hint` is needed only for headers
    /// without a magic (UE4), where it tells `Initial` from `PreInitial`.
    pub fn read(data: &[u8], version_hint: Option<ContainerHeaderVersion>) -> Result<Self> {
        let mut r = Reader::new(data);
        Self::read_from(&mut r, version_hint).context("container header")
    }

    fn read_from(r: &mut Reader, version_hint: Option<ContainerHeaderVersion>) -> Result<Self> {
        let (version, container_id) = read_prologue(r, version_hint)?;
        let mut header = ContainerHeader::new(version, container_id);
        header.read_packages(r)?;
        if version.has_magic() {
            header.read_ue5_tables(r)?;
        } else {
            header.read_ue4_tables(r)?;
        }
        if version.has_soft_references() {
            header.read_soft_references(r)?;
        }
        if r.rest().iter().any(|&b| b != 0) {
            return Err(r.error(format!(
                "{} unexpected bytes after the container header",
                r.remaining()
            )));
        }
        header.trailing_zeros = r.remaining();
        Ok(header)
    }

    /// Package count (older versions), UE4 name arrays, ids and store entries.
    fn read_packages(&mut self, r: &mut Reader) -> Result<()> {
        let version = self.version;
        let count = version
            .has_package_count()
            .then(|| r.u32().context("package count"))
            .transpose()?;
        if version.has_legacy_names() {
            let n = r.count_u32(1).context("names")?;
            self.legacy_names = r.bytes(n)?.to_vec();
            let n = r.count_u32(1).context("name hashes")?;
            self.legacy_name_hashes = r.bytes(n)?.to_vec();
        }
        let ids = read_u64_array(r).context("package ids")?;
        if let Some(count) = count.filter(|&c| c as usize != ids.len()) {
            return Err(r.error(format!(
                "package count {count} disagrees with {} package ids",
                ids.len()
            )));
        }
        let store_len = r.count_u32(1).context("store entries")?;
        let store_at = r.offset();
        let store = r.bytes(store_len)?;
        let (entries, layout) =
            read_store_entries(store, store_at, version, ids.len()).context("store entries")?;
        self.packages = ids.into_iter().zip(entries).collect();
        self.shader_map_hash_layout = layout;
        Ok(())
    }

    /// Optional segments, redirect names, localized packages, named redirects.
    fn read_ue5_tables(&mut self, r: &mut Reader) -> Result<()> {
        if self.version.has_optional_segments() {
            self.optional_segment_package_ids =
                read_u64_array(r).context("optional segment package ids")?;
            let n = r.count_u32(1).context("optional segment store entries")?;
            self.optional_segment_store_entries = r.bytes(n)?.to_vec();
        }
        self.redirect_names = read_name_batch(r).context("redirect names")?;
        let n = r.count_u32(16).context("localized packages")?;
        for _ in 0..n {
            self.localized_packages.push(LocalizedPackage {
                source_package_id: r.u64()?,
                source_package_name: MappedName::read(r)?,
            });
        }
        let n = r.count_u32(24).context("package redirects")?;
        for _ in 0..n {
            self.package_redirects.push(PackageRedirect {
                source_package_id: r.u64()?,
                target_package_id: r.u64()?,
                source_package_name: Some(MappedName::read(r)?),
            });
        }
        Ok(())
    }

    /// The culture package map and id-only redirects.
    fn read_ue4_tables(&mut self, r: &mut Reader) -> Result<()> {
        let n = r.count_u32(8).context("culture package map")?;
        for _ in 0..n {
            let culture = r.fstring().context("culture name")?;
            let k = r.count_u32(16).context("culture packages")?;
            let mut packages = Vec::with_capacity(k);
            for _ in 0..k {
                packages.push((r.u64()?, r.u64()?));
            }
            self.culture_packages
                .push(CulturePackages { culture, packages });
        }
        let n = r.count_u32(16).context("package redirects")?;
        for _ in 0..n {
            self.package_redirects.push(PackageRedirect {
                source_package_id: r.u64()?,
                target_package_id: r.u64()?,
                source_package_name: None,
            });
        }
        Ok(())
    }

    /// 5.5+: the soft package references (5.6+: behind an offset/size record).
    fn read_soft_references(&mut self, r: &mut Reader) -> Result<()> {
        let mut present = true;
        let mut expected_end = None;
        if self.version.has_soft_references_record() {
            let at = r.pos();
            let offset = r.i64()?;
            let size = r.i64()?;
            // The engine skips the references when the size is 0 (its own
            // writer always writes at least the flag); otherwise they must
            // follow the record directly.
            if size < 0 || (size > 0 && offset as u64 != r.offset()) {
                return Err(r.error_at(
                    at,
                    format!("soft package references at {offset} size {size} do not follow their record"),
                ));
            }
            present = size > 0;
            if !present {
                self.empty_soft_references_offset = Some(offset);
            }
            expected_end = Some(r.pos() + size as usize);
        }
        if present {
            let at = r.pos();
            let has = r.u32()?;
            if has > 1 {
                return Err(r.error_at(at, format!("soft package references flag is {has}")));
            }
            if has == 1 {
                let package_ids = read_u64_array(r).context("soft package ids")?;
                let n = r.count_i32(1).context("soft package indices")?;
                let package_indices = r.bytes(n)?.to_vec();
                self.soft_package_references = Some(SoftPackageReferences {
                    package_ids,
                    package_indices,
                });
            }
        }
        if expected_end.is_some_and(|end| r.pos() != end) {
            return Err(r.error("soft package references end where their record says they do not"));
        }
        Ok(())
    }

    /// Serializes the header chunk.
    pub fn write(&self) -> Result<Vec<u8>> {
        self.write_with(&StoreEntryArena::of(&self.packages))
    }

    /// Serializes the header chunk with the packages and store entries of
    /// `store` (in its order) instead of [`ContainerHeader::packages`].
    pub(crate) fn write_with(&self, store: &StoreEntryArena) -> Result<Vec<u8>> {
        let version = self.version;
        let mut w = Writer::new();
        if version.has_magic() {
            w.u32(CONTAINER_HEADER_MAGIC);
            w.i32(version as i32);
        }
        w.u64(self.container_id);
        self.write_packages(&mut w, store)?;
        if version.has_magic() {
            self.write_ue5_tables(&mut w)?;
        } else {
            self.write_ue4_tables(&mut w);
        }
        if version.has_soft_references() {
            self.write_soft_references(&mut w);
        }
        w.zeros(self.trailing_zeros);
        Ok(w.into_inner())
    }

    fn write_packages(&self, w: &mut Writer, store: &StoreEntryArena) -> Result<()> {
        if self.version.has_package_count() {
            w.u32(store.len() as u32);
        }
        if self.version.has_legacy_names() {
            w.u32(self.legacy_names.len() as u32);
            w.bytes(&self.legacy_names);
            w.u32(self.legacy_name_hashes.len() as u32);
            w.bytes(&self.legacy_name_hashes);
        }
        w.u32(store.len() as u32);
        for i in 0..store.len() {
            w.u64(store.id(i));
        }
        let layout = self
            .shader_map_hash_layout
            .unwrap_or(ShaderMapHashLayout::Sha1);
        write_store_entries(w, self.version, layout, store)
    }

    fn write_ue5_tables(&self, w: &mut Writer) -> Result<()> {
        if self.version.has_optional_segments() {
            write_u64_array(w, &self.optional_segment_package_ids);
            w.u32(self.optional_segment_store_entries.len() as u32);
            w.bytes(&self.optional_segment_store_entries);
        }
        write_name_batch(w, &self.redirect_names);
        w.u32(self.localized_packages.len() as u32);
        for p in &self.localized_packages {
            w.u64(p.source_package_id);
            p.source_package_name.write(w);
        }
        w.u32(self.package_redirects.len() as u32);
        for p in &self.package_redirects {
            w.u64(p.source_package_id);
            w.u64(p.target_package_id);
            let name = p.source_package_name.ok_or_else(|| {
                Error::usage("a UE5 package redirect needs its source package name")
            })?;
            name.write(w);
        }
        Ok(())
    }

    fn write_ue4_tables(&self, w: &mut Writer) {
        w.u32(self.culture_packages.len() as u32);
        for c in &self.culture_packages {
            w.fstring(&c.culture);
            w.u32(c.packages.len() as u32);
            for (a, b) in &c.packages {
                w.u64(*a);
                w.u64(*b);
            }
        }
        w.u32(self.package_redirects.len() as u32);
        for p in &self.package_redirects {
            w.u64(p.source_package_id);
            w.u64(p.target_package_id);
        }
    }

    fn write_soft_references(&self, w: &mut Writer) {
        let with_record = self.version.has_soft_references_record();
        if let Some(offset) = self
            .empty_soft_references_offset
            .filter(|_| with_record && self.soft_package_references.is_none())
        {
            w.i64(offset);
            w.i64(0);
            return;
        }
        let record = w.pos();
        if with_record {
            w.i64(0);
            w.i64(0);
        }
        let start = w.pos();
        match &self.soft_package_references {
            Some(refs) => {
                w.u32(1);
                write_u64_array(w, &refs.package_ids);
                w.i32(refs.package_indices.len() as i32);
                w.bytes(&refs.package_indices);
            }
            None => w.u32(0),
        }
        if with_record {
            let size = (w.pos() - start) as i64;
            w.patch_i64(record, start as i64);
            w.patch_i64(record + 8, size);
        }
    }

    /// Registers a localized package as the engine's `CreateContainerHeader`
    /// does for a redirected package with a culture: UE5 lists the source
    /// package once (its id and its name in the header's name map, a
    /// container-kind `FMappedName`); UE4 adds `(source, localized)` to the
    /// culture's list. Call in ascending localized package id order (the
    /// engine walks its entries sorted by id), so cultures appear in the
    /// order their first package does.
    pub fn add_localized_package(
        &mut self,
        culture: &str,
        source_package_name: &str,
        localized_package_id: u64,
    ) {
        let source_package_id = crate::hash::package_id(source_package_name);
        if self.version.has_magic() {
            if self
                .localized_packages
                .iter()
                .any(|p| p.source_package_id == source_package_id)
            {
                return;
            }
            let (base, number) = crate::names::split_number(source_package_name);
            let index = match self.redirect_names.iter().position(|n| n.text == base) {
                Some(i) => i,
                None => {
                    self.redirect_names.push(BatchName::new(base));
                    self.redirect_names.len() - 1
                }
            };
            self.localized_packages.push(LocalizedPackage {
                source_package_id,
                source_package_name: MappedName::new(
                    MappedNameKind::Container,
                    index as u32,
                    number,
                ),
            });
        } else {
            self.add_culture_package(culture, source_package_id, localized_package_id);
        }
    }

    /// UE4: adds `(source, localized)` to a culture's list in the culture
    /// map, the culture after those already there (the engine's `TMap`
    /// keeps insertion order).
    pub fn add_culture_package(
        &mut self,
        culture: &str,
        source_package_id: u64,
        localized_package_id: u64,
    ) {
        let pair = (source_package_id, localized_package_id);
        match self
            .culture_packages
            .iter_mut()
            .find(|c| c.culture == culture)
        {
            Some(c) => c.packages.push(pair),
            None => self.culture_packages.push(CulturePackages {
                culture: culture.to_string(),
                packages: vec![pair],
            }),
        }
    }
}

/// Magic and version (UE5) or the version a UE4 header is said to have, and the container id.
fn read_prologue(
    r: &mut Reader,
    version_hint: Option<ContainerHeaderVersion>,
) -> Result<(ContainerHeaderVersion, u64)> {
    let magic = r.peek_u32();
    if magic == Some(CONTAINER_HEADER_MAGIC) && version_hint.is_none_or(|v| v.has_magic()) {
        r.u32()?;
        let at = r.pos();
        let raw = r.i32()?;
        let version = ContainerHeaderVersion::from_i32(raw)
            .filter(|v| v.has_magic())
            .ok_or_else(|| r.error_at(at, format!("unknown container header version {raw}")))?;
        return Ok((version, r.u64().context("container id")?));
    }
    let version = version_hint.unwrap_or(ContainerHeaderVersion::Initial);
    if version.has_magic() {
        return Err(r.error("container header magic is missing"));
    }
    Ok((version, r.u64().context("container id")?))
}

fn read_u64_array(r: &mut Reader) -> Result<Vec<u64>> {
    let n = r.count_u32(8)?;
    (0..n).map(|_| r.u64()).collect()
}

fn write_u64_array(w: &mut Writer, values: &[u64]) {
    w.u32(values.len() as u32);
    for v in values {
        w.u64(*v);
    }
}

/// Reads the store entry buffer: `count` fixed entries, each with array
/// views pointing into the rest of the buffer. Returns the entries and the
/// shader map hash layout the buffer's size shows (module doc).
fn read_store_entries(
    store: &[u8],
    store_at: u64,
    version: ContainerHeaderVersion,
    count: usize,
) -> Result<(Vec<StoreEntry>, Option<ShaderMapHashLayout>)> {
    let (entry_size, _, _) = version.store_entry_layout();
    let r = Reader::with_base(store, store_at);
    r.check_count(count as i64, entry_size)?;
    let Some(layout) = shader_map_hash_layout_by_size(store, version, count) else {
        let entries = read_store_entries_as(store, store_at, version, count, None)?;
        return Ok((entries, None));
    };
    if let Some(layout) = layout {
        let entries = read_store_entries_as(store, store_at, version, count, Some(layout))?;
        return Ok((entries, Some(layout)));
    }
    // Neither size fits exactly: the layout whose arrays fit the buffer.
    match read_store_entries_as(
        store,
        store_at,
        version,
        count,
        Some(ShaderMapHashLayout::Sha1),
    ) {
        Ok(entries) => Ok((entries, Some(ShaderMapHashLayout::Sha1))),
        Err(e) => {
            let layout = Some(ShaderMapHashLayout::Hash64);
            read_store_entries_as(store, store_at, version, count, layout)
                .map(|entries| (entries, layout))
                .map_err(|_| e)
        }
    }
}

/// What the store buffer's size says of its shader map hashes: `None`
/// when there are none to tell (no hashes, or a version without them),
/// `Some(None)` when neither element size makes the sizes add up,
/// `Some(Some(layout))` for the one that does. Views that do not read are
/// left to the entry reader to report.
fn shader_map_hash_layout_by_size(
    store: &[u8],
    version: ContainerHeaderVersion,
    count: usize,
) -> Option<Option<ShaderMapHashLayout>> {
    let (entry_size, imports_view, shaders_view) = version.store_entry_layout();
    let shaders_view = shaders_view?;
    let count_at = |at: usize| -> u64 {
        store
            .get(at..at + 4)
            .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as u64)
    };
    let (mut imports, mut hashes) = (0u64, 0u64);
    for index in 0..count {
        let base = index * entry_size;
        imports += count_at(base + imports_view);
        hashes += count_at(base + shaders_view);
    }
    if hashes == 0 {
        return None;
    }
    let arrays = (store.len() as u64).checked_sub((count * entry_size) as u64 + 8 * imports);
    Some(
        [ShaderMapHashLayout::Sha1, ShaderMapHashLayout::Hash64]
            .into_iter()
            .find(|l| arrays == Some(l.element_size() as u64 * hashes)),
    )
}

/// Reads the store entries with a known shader map hash element layout
/// (`None`: the version stores no hashes, or no entry has one).
fn read_store_entries_as(
    store: &[u8],
    store_at: u64,
    version: ContainerHeaderVersion,
    count: usize,
    layout: Option<ShaderMapHashLayout>,
) -> Result<Vec<StoreEntry>> {
    let (entry_size, imports_view, shaders_view) = version.store_entry_layout();
    let element_size = layout.unwrap_or(ShaderMapHashLayout::Sha1).element_size();
    let mut r = Reader::with_base(store, store_at);
    let mut entries = Vec::with_capacity(count);
    for index in 0..count {
        let base = index * entry_size;
        r.seek(base)?;
        let mut entry = StoreEntry::default();
        if version.has_store_sizes() {
            entry.export_bundles_size = r.u64()?;
        }
        if version.has_export_info() {
            entry.export_count = r.i32()?;
            entry.export_bundle_count = r.i32()?;
        }
        if version.has_store_sizes() {
            entry.load_order = r.u32()?;
            r.u32()?; // padding
        }
        let imports = read_array_view(&mut r, base + imports_view, 8)
            .with_context(|| format!("entry {index} imported packages"))?;
        entry.imported_packages = imports
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap_or_default()))
            .collect();
        if let Some(view) = shaders_view {
            let hashes = read_array_view(&mut r, base + view, element_size)
                .with_context(|| format!("entry {index} shader map hashes"))?;
            entry.shader_map_hashes = hashes
                .chunks_exact(element_size)
                .map(|c| {
                    let mut hash = [0; 20];
                    hash[..element_size].copy_from_slice(c);
                    hash
                })
                .collect();
        }
        entries.push(entry);
    }
    Ok(entries)
}

/// Reads a `(count, offset from this view)` pair at `view` and returns the
/// bytes of the array it addresses.
fn read_array_view<'a>(r: &mut Reader<'a>, view: usize, element_size: usize) -> Result<&'a [u8]> {
    r.seek(view)?;
    let count = r.u32()? as usize;
    let offset = r.u32()? as usize;
    if count == 0 {
        return Ok(&[]);
    }
    let start = view
        .checked_add(offset)
        .ok_or_else(|| r.error_at(view, "array offset overflows"))?;
    let len = count
        .checked_mul(element_size)
        .ok_or_else(|| r.error_at(view, "array size overflows"))?;
    if start.checked_add(len).is_none_or(|end| end > r.len()) {
        return Err(r.error_at(
            view,
            format!(
                "array of {count} elements at +{offset} runs past the store buffer ({} bytes)",
                r.len()
            ),
        ));
    }
    Ok(&r.data()[start..start + len])
}

/// Store entries kept encoded, one after another in one byte arena: what a
/// container being built holds per package (100,000 of them for a big mod)
/// without a heap allocation per entry and per array. A record is the
/// fixed fields (bundle size u64, load order u32, export count i32, export
/// bundle count i32), the imported package ids (count u32, then u64 each)
/// and the shader map hashes (count u32, then 20 bytes each).
#[derive(Debug, Default, Clone)]
pub(crate) struct StoreEntryArena {
    /// Each package's id and where its record starts in `bytes`.
    index: Vec<(u64, usize)>,
    bytes: Vec<u8>,
}

/// Bytes of a record's fixed fields, up to its import count.
const FIXED_RECORD: usize = 8 + 4 + 4 + 4;

impl StoreEntryArena {
    pub(crate) fn of(packages: &[(u64, StoreEntry)]) -> Self {
        let mut arena = StoreEntryArena::default();
        arena.reserve(packages.len());
        for (id, entry) in packages {
            arena.push(*id, entry);
        }
        arena
    }

    pub(crate) fn reserve(&mut self, packages: usize) {
        self.index.reserve(packages);
    }

    pub(crate) fn len(&self) -> usize {
        self.index.len()
    }

    pub(crate) fn push(&mut self, id: u64, entry: &StoreEntry) {
        self.push_parts(
            id,
            entry,
            entry.imported_packages.iter().copied(),
            &entry.shader_map_hashes,
        );
    }

    fn push_parts(
        &mut self,
        id: u64,
        fixed: &StoreEntry,
        imports: impl ExactSizeIterator<Item = u64>,
        hashes: &[[u8; 20]],
    ) {
        self.index.push((id, self.bytes.len()));
        let b = &mut self.bytes;
        b.extend_from_slice(&fixed.export_bundles_size.to_le_bytes());
        b.extend_from_slice(&fixed.load_order.to_le_bytes());
        b.extend_from_slice(&fixed.export_count.to_le_bytes());
        b.extend_from_slice(&fixed.export_bundle_count.to_le_bytes());
        b.extend_from_slice(&(imports.len() as u32).to_le_bytes());
        for import in imports {
            b.extend_from_slice(&import.to_le_bytes());
        }
        b.extend_from_slice(&(hashes.len() as u32).to_le_bytes());
        for hash in hashes {
            b.extend_from_slice(hash);
        }
    }

    pub(crate) fn id(&self, i: usize) -> u64 {
        self.index[i].0
    }

    fn u32_at(&self, at: usize) -> u32 {
        u32::from_le_bytes(self.bytes[at..at + 4].try_into().unwrap())
    }

    /// Entry `i`'s fixed fields (its arrays left empty).
    pub(crate) fn fixed(&self, i: usize) -> StoreEntry {
        let at = self.index[i].1;
        let field = |o: usize| <[u8; 4]>::try_from(&self.bytes[at + o..at + o + 4]).unwrap();
        StoreEntry {
            export_bundles_size: u64::from_le_bytes(self.bytes[at..at + 8].try_into().unwrap()),
            load_order: u32::from_le_bytes(field(8)),
            export_count: i32::from_le_bytes(field(12)),
            export_bundle_count: i32::from_le_bytes(field(16)),
            ..StoreEntry::default()
        }
    }

    /// Entry `i`'s imported package ids.
    pub(crate) fn imports(&self, i: usize) -> impl ExactSizeIterator<Item = u64> + '_ {
        let at = self.index[i].1 + FIXED_RECORD;
        let n = self.u32_at(at) as usize;
        self.bytes[at + 4..at + 4 + n * 8]
            .chunks_exact(8)
            .map(|b| u64::from_le_bytes(b.try_into().unwrap()))
    }

    /// Entry `i`'s shader map hashes.
    fn hashes(&self, i: usize) -> impl ExactSizeIterator<Item = &[u8; 20]> + '_ {
        let at = self.index[i].1 + FIXED_RECORD;
        let at = at + 4 + self.u32_at(at) as usize * 8;
        let n = self.u32_at(at) as usize;
        self.bytes[at + 4..at + 4 + n * 20]
            .chunks_exact(20)
            .map(|b| b.try_into().unwrap())
    }

    pub(crate) fn set_load_order(&mut self, i: usize, load_order: u32) {
        let at = self.index[i].1 + 8;
        self.bytes[at..at + 4].copy_from_slice(&load_order.to_le_bytes());
    }

    /// Orders the entries by package id (ids are unique).
    pub(crate) fn sort_by_id(&mut self) {
        self.index.sort_unstable_by_key(|&(id, _)| id);
    }

    /// The arena with each entry's shader map hashes replaced by those
    /// `maps` gives for its package id, where it gives any; same order.
    pub(crate) fn with_shader_maps<'m, M>(&self, maps: impl Fn(u64) -> Option<M>) -> Self
    where
        M: Iterator<Item = &'m [u8; 20]>,
    {
        let mut out = StoreEntryArena::default();
        out.reserve(self.len());
        out.bytes.reserve(self.bytes.len());
        let mut hashes = Vec::new();
        for i in 0..self.len() {
            let id = self.id(i);
            hashes.clear();
            match maps(id) {
                Some(found) => hashes.extend(found.copied()),
                None => hashes.extend(self.hashes(i).copied()),
            }
            out.push_parts(id, &self.fixed(i), self.imports(i), &hashes);
        }
        out
    }
}

/// Writes the store entry buffer, its byte length first, as the engine lays
/// it out: all fixed entries first, then each entry's imported packages
/// followed by its shader map hashes (elements of `layout`), in entry order.
/// An empty array has offset 0. An 8-byte layout refuses a hash that does
/// not fit 8 bytes. The buffer goes straight into `w` (the entries are
/// walked twice: fixed entries, then arrays), with no copy of its own.
fn write_store_entries(
    w: &mut Writer,
    version: ContainerHeaderVersion,
    layout: ShaderMapHashLayout,
    store: &StoreEntryArena,
) -> Result<()> {
    let element_size = layout.element_size();
    let (entry_size, imports_view, shaders_view) = version.store_entry_layout();
    let count = store.len();
    let arrays_start = count * entry_size;
    let mut arrays_len = 0usize;
    for i in 0..count {
        arrays_len += store.imports(i).len() * 8;
        if shaders_view.is_some() {
            for h in store.hashes(i) {
                if h[element_size..].iter().any(|&b| b != 0) {
                    return Err(Error::usage(format!(
                        "package {:016x}: shader map hash {} does not fit the {element_size}-byte \
                         shader map hashes of this engine's container header (UE 5.8 stores 8 bytes)",
                        store.id(i),
                        crate::hash::hex(h)
                    )));
                }
            }
            arrays_len += store.hashes(i).len() * element_size;
        }
    }
    let total = u32::try_from(arrays_start + arrays_len).map_err(|_| {
        Error::usage("the container header's store entries must stay below 4 GiB; split the mod into several containers")
    })?;
    w.u32(total);
    // Offsets are relative to the view's own place in the fixed entry.
    let view_offset =
        |view_pos: usize, array_pos: usize| (arrays_start + array_pos - view_pos) as u32;
    let mut array_pos = 0usize;
    for index in 0..count {
        let base = index * entry_size;
        let entry = store.fixed(index);
        if version.has_store_sizes() {
            w.u64(entry.export_bundles_size);
        }
        if version.has_export_info() {
            w.i32(entry.export_count);
            w.i32(entry.export_bundle_count);
        }
        if version.has_store_sizes() {
            w.u32(entry.load_order);
            w.u32(0);
        }
        let imports = store.imports(index).len();
        w.u32(imports as u32);
        w.u32(if imports == 0 {
            0
        } else {
            view_offset(base + imports_view, array_pos)
        });
        array_pos += imports * 8;
        if let Some(view) = shaders_view {
            let hashes = store.hashes(index).len();
            w.u32(hashes as u32);
            w.u32(if hashes == 0 {
                0
            } else {
                view_offset(base + view, array_pos)
            });
            array_pos += hashes * element_size;
        }
    }
    for index in 0..count {
        for id in store.imports(index) {
            w.u64(id);
        }
        if shaders_view.is_some() {
            for h in store.hashes(index) {
                w.bytes(&h[..element_size]);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_entries_kept_encoded_give_back_each_field_and_take_new_shader_maps() {
        let entries = [
            (
                9,
                StoreEntry {
                    export_bundles_size: 1 << 40,
                    load_order: 3,
                    export_count: -2,
                    export_bundle_count: 4,
                    imported_packages: vec![1, u64::MAX],
                    shader_map_hashes: vec![[7; 20]],
                },
            ),
            (2, StoreEntry::default()),
            (
                5,
                StoreEntry {
                    imported_packages: vec![9],
                    shader_map_hashes: vec![[1; 20], [2; 20]],
                    ..StoreEntry::default()
                },
            ),
        ];
        let decode = |arena: &StoreEntryArena, i: usize| {
            let mut entry = arena.fixed(i);
            entry.imported_packages = arena.imports(i).collect();
            entry.shader_map_hashes = arena.hashes(i).copied().collect();
            (arena.id(i), entry)
        };
        let mut arena = StoreEntryArena::of(&entries);
        assert_eq!(arena.len(), 3);
        for (i, expected) in entries.iter().enumerate() {
            assert_eq!(&decode(&arena, i), expected);
        }
        arena.set_load_order(1, 77);
        assert_eq!(arena.fixed(1).load_order, 77);
        arena.sort_by_id();
        assert_eq!((0..3).map(|i| arena.id(i)).collect::<Vec<_>>(), [2, 5, 9]);
        let maps = [[3u8; 20], [4; 20]];
        let replaced = arena.with_shader_maps(|id| (id == 9).then(|| maps.iter()));
        let (_, nine) = decode(&replaced, 2);
        assert_eq!(nine.shader_map_hashes, maps);
        assert_eq!(nine.imported_packages, [1, u64::MAX]);
        assert_eq!(nine.export_bundles_size, 1 << 40);
        assert_eq!(decode(&replaced, 1), decode(&arena, 1));
        assert_eq!(decode(&replaced, 0).1.load_order, 77);
    }

    #[test]
    fn every_version_round_trips() {
        use ContainerHeaderVersion::*;
        for version in [
            PreInitial,
            Initial,
            LocalizedPackages,
            OptionalSegmentPackages,
            NoExportInfo,
            SoftPackageReferences,
            SoftPackageReferencesOffset,
        ] {
            let mut h = ContainerHeader::new(version, 0x1234_5678_9abc_def0);
            let entry = StoreEntry {
                export_bundles_size: if version == Initial { 500 } else { 0 },
                load_order: if version == Initial { 7 } else { 0 },
                export_count: if version < NoExportInfo { 3 } else { 0 },
                export_bundle_count: if version < NoExportInfo { 1 } else { 0 },
                imported_packages: vec![1, 2, 3],
                shader_map_hashes: if version >= LocalizedPackages {
                    vec![[9; 20]]
                } else {
                    vec![]
                },
            };
            h.packages.push((42, entry));
            h.packages.push((43, StoreEntry::default()));
            if version >= LocalizedPackages {
                h.shader_map_hash_layout = Some(ShaderMapHashLayout::Sha1);
            }
            if version >= SoftPackageReferences {
                h.soft_package_references = Some(super::SoftPackageReferences {
                    package_ids: vec![5],
                    package_indices: vec![1, 2],
                });
            }
            if version >= LocalizedPackages {
                h.redirect_names.push(BatchName::new("/Game/A"));
                h.package_redirects.push(PackageRedirect {
                    source_package_id: 1,
                    target_package_id: 2,
                    source_package_name: Some(MappedName::new(MappedNameKind::Container, 0, 0)),
                });
            }
            let bytes = h.write().unwrap();
            let back = ContainerHeader::read(&bytes, Some(version)).unwrap();
            assert_eq!(back, h, "{version:?}");
            assert_eq!(back.write().unwrap(), bytes);
        }
    }

    #[test]
    fn empty_soft_reference_record_round_trips() {
        // Some tools end a 5.6 header with an (offset 0, size 0) record and
        // nothing after it; the engine accepts that.
        let mut h = ContainerHeader::new(ContainerHeaderVersion::SoftPackageReferencesOffset, 9);
        h.packages.push((1, StoreEntry::default()));
        let mut bytes = h.write().unwrap();
        let len = bytes.len();
        bytes.truncate(len - 4); // drop the flag
        let record = bytes.len() - 16;
        bytes[record..].copy_from_slice(&[0; 16]);
        let back = ContainerHeader::read(&bytes, None).unwrap();
        assert_eq!(back.empty_soft_references_offset, Some(0));
        assert_eq!(back.write().unwrap(), bytes);
    }

    /// A 5.6+ header (`SoftPackageReferencesOffset`) with `entries`
    /// (imported package count, shader map hashes) written in `layout`.
    fn header_with(layout: ShaderMapHashLayout, entries: &[(u64, Vec<[u8; 20]>)]) -> Vec<u8> {
        let mut h = ContainerHeader::new(ContainerHeaderVersion::SoftPackageReferencesOffset, 7);
        h.shader_map_hash_layout = Some(layout);
        for (i, (imports, hashes)) in entries.iter().enumerate() {
            h.packages.push((
                100 + i as u64,
                StoreEntry {
                    imported_packages: (0..*imports).collect(),
                    shader_map_hashes: hashes.clone(),
                    ..StoreEntry::default()
                },
            ));
        }
        h.write().unwrap()
    }

    /// 5.8 shader map hashes (8 bytes, retoc issue #72: a retail 5.8 game
    /// whose header keeps version `SoftPackageReferencesOffset`): no engine
    /// 5.8 header is in the corpus, so the headers are built here from that
    /// fact. Each layout reads back as itself, never as the other.
    #[test]
    fn shader_map_hash_size_is_told_by_the_buffer_size_both_ways() {
        let sha = [[0xAB; 20], [0xCD; 20]];
        let mut short = [0u8; 20];
        short[..8].copy_from_slice(&0x1122_3344_5566_7788u64.to_le_bytes());
        for (layout, hashes) in [
            (ShaderMapHashLayout::Sha1, sha.to_vec()),
            (ShaderMapHashLayout::Hash64, vec![short, short]),
        ] {
            let bytes = header_with(layout, &[(2, hashes.clone()), (0, vec![])]);
            let back = ContainerHeader::read(&bytes, None).unwrap();
            assert_eq!(back.shader_map_hash_layout, Some(layout));
            assert_eq!(back.packages[0].1.shader_map_hashes, hashes);
            assert_eq!(back.write().unwrap(), bytes, "{layout:?}");
        }
        // No hash anywhere: the buffer cannot tell, and says so.
        let bytes = header_with(ShaderMapHashLayout::Hash64, &[(3, vec![])]);
        let back = ContainerHeader::read(&bytes, None).unwrap();
        assert_eq!(back.shader_map_hash_layout, None);
        assert_eq!(back.write().unwrap(), bytes);
    }

    /// Headers where reading with the wrong element size would stay inside
    /// the store buffer (so bounds checks alone would accept it): only the
    /// size arithmetic picks the right layout.
    #[test]
    fn a_header_both_sizes_could_parse_is_read_one_way() {
        let mut short = [0u8; 20];
        short[..8].copy_from_slice(&[1, 2, 3, 4, 5, 6, 7, 8]);
        // 5.8: entry 0's 8-byte hash is followed by entry 1's 16 bytes of
        // imports, so a 20-byte read of it also fits the buffer.
        let bytes = header_with(
            ShaderMapHashLayout::Hash64,
            &[(0, vec![short]), (2, vec![])],
        );
        let store = store_of(&bytes, 2);
        for layout in [ShaderMapHashLayout::Sha1, ShaderMapHashLayout::Hash64] {
            let v = ContainerHeaderVersion::SoftPackageReferencesOffset;
            assert!(read_store_entries_as(store, 0, v, 2, Some(layout)).is_ok());
        }
        let back = ContainerHeader::read(&bytes, None).unwrap();
        assert_eq!(
            back.shader_map_hash_layout,
            Some(ShaderMapHashLayout::Hash64)
        );
        assert_eq!(back.packages[0].1.shader_map_hashes, vec![short]);
        // 5.7: an 8-byte read of a 20-byte hash always fits.
        let bytes = header_with(
            ShaderMapHashLayout::Sha1,
            &[(1, vec![[9; 20]]), (1, vec![])],
        );
        let back = ContainerHeader::read(&bytes, None).unwrap();
        assert_eq!(back.shader_map_hash_layout, Some(ShaderMapHashLayout::Sha1));
        assert_eq!(back.packages[0].1.shader_map_hashes, vec![[9; 20]]);
    }

    /// The store entry buffer of a header written by `header_with`.
    fn store_of(bytes: &[u8], packages: usize) -> &[u8] {
        // magic, version, container id, ids (count + 8 each), store size.
        let at = 4 + 4 + 8 + 4 + 8 * packages;
        let len = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
        &bytes[at + 4..at + 4 + len]
    }

    #[test]
    fn an_8_byte_layout_refuses_a_20_byte_hash() {
        let mut h = ContainerHeader::new(ContainerHeaderVersion::SoftPackageReferencesOffset, 7);
        h.shader_map_hash_layout = Some(ShaderMapHashLayout::Hash64);
        h.packages.push((
            1,
            StoreEntry {
                shader_map_hashes: vec![[0xEE; 20]],
                ..StoreEntry::default()
            },
        ));
        let e = h.write().unwrap_err();
        assert!(matches!(e.kind(), crate::error::ErrorKind::Usage(_)));
    }

    #[test]
    fn truncated_header_is_an_error() {
        let mut h = ContainerHeader::new(ContainerHeaderVersion::NoExportInfo, 1);
        h.packages.push((
            42,
            StoreEntry {
                imported_packages: vec![1],
                ..Default::default()
            },
        ));
        let bytes = h.write().unwrap();
        for cut in 0..bytes.len() {
            assert!(ContainerHeader::read(&bytes[..cut], None).is_err());
        }
    }
}
