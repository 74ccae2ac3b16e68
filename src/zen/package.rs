//! The Zen package header (summary and every section after it) and the
//! export data that follows it: reader and byte-exact writer, per layout
//! ([`ZenLayout`]).

use serde::Serialize;

use crate::binary::{Reader, Writer};
use crate::error::{Context, Result};
use crate::version::{EngineVersion, ZenLayout};

use super::names::{
    read_name_batch, read_split_names, write_name_batch, write_split_names, ImportedPackageNames,
};
use super::records::*;
use crate::names::MappedNameKind;

/// `FZenPackageSummary`. Offsets are relative to the start of the package.
/// Fields a layout does not have are 0 (and are not written).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct ZenSummary {
    /// UE5: whether [`VersioningInfo`] follows the summary.
    pub(crate) has_versioning_info: u32,
    /// UE5: size of the header (everything before the export data). UE4
    /// does not store it: it is `graph_data_offset + graph_data_size`.
    pub(crate) header_size: u32,
    pub(crate) name: MappedName,
    /// UE4 only: the source package name (the same as `name` unless localized/redirected).
    pub(crate) source_name: MappedName,
    pub package_flags: u32,
    /// Size of the legacy header (`.uasset`) the package was cooked with.
    pub cooked_header_size: u32,
    pub(crate) imported_public_export_hashes_offset: i32,
    pub(crate) name_map_names_offset: i32,
    pub(crate) name_map_names_size: i32,
    pub(crate) name_map_hashes_offset: i32,
    pub(crate) name_map_hashes_size: i32,
    pub(crate) import_map_offset: i32,
    pub export_map_offset: i32,
    /// UE4: offset of the export bundle headers (entries follow them).
    pub(crate) export_bundle_entries_offset: i32,
    pub(crate) graph_data_offset: i32,
    pub(crate) graph_data_size: i32,
    pub(crate) dependency_bundle_headers_offset: i32,
    pub(crate) dependency_bundle_entries_offset: i32,
    pub(crate) imported_package_names_offset: i32,
    /// 5.6+: offsets of the cell import/export maps. They follow the
    /// versioning info rather than sit in the summary record, so the
    /// package reader/writer handles them.
    pub(crate) cell_import_map_offset: i32,
    pub(crate) cell_export_map_offset: i32,
}

impl ZenSummary {
    /// Size of the summary record for a layout.
    pub(crate) fn size(layout: ZenLayout) -> usize {
        match layout {
            ZenLayout::Ue4 => 64,
            ZenLayout::GraphData => 44,
            ZenLayout::DependencyBundles => 52,
        }
    }

    pub(crate) fn read(r: &mut Reader, layout: ZenLayout) -> Result<Self> {
        let mut s = ZenSummary::default();
        if layout != ZenLayout::Ue4 {
            s.has_versioning_info = r.u32()?;
            s.header_size = r.u32()?;
        }
        s.name = MappedName::read(r)?;
        if layout == ZenLayout::Ue4 {
            s.source_name = MappedName::read(r)?;
        }
        s.package_flags = r.u32()?;
        s.cooked_header_size = r.u32()?;
        if layout == ZenLayout::Ue4 {
            s.name_map_names_offset = r.i32()?;
            s.name_map_names_size = r.i32()?;
            s.name_map_hashes_offset = r.i32()?;
            s.name_map_hashes_size = r.i32()?;
        } else {
            s.imported_public_export_hashes_offset = r.i32()?;
        }
        s.import_map_offset = r.i32()?;
        s.export_map_offset = r.i32()?;
        s.export_bundle_entries_offset = r.i32()?;
        if layout == ZenLayout::DependencyBundles {
            s.dependency_bundle_headers_offset = r.i32()?;
            s.dependency_bundle_entries_offset = r.i32()?;
            s.imported_package_names_offset = r.i32()?;
        } else {
            s.graph_data_offset = r.i32()?;
        }
        if layout == ZenLayout::Ue4 {
            s.graph_data_size = r.i32()?;
            let at = r.pos();
            let pad = r.i32()?;
            if pad != 0 {
                return Err(r.error_at(at, format!("summary padding is {pad}, expected 0")));
            }
            let end = s.graph_data_offset as i64 + s.graph_data_size as i64;
            if s.graph_data_offset < 0 || s.graph_data_size < 0 || end > u32::MAX as i64 {
                return Err(r.error_at(at - 8, "graph data offset/size out of range"));
            }
            s.header_size = end as u32;
        }
        Ok(s)
    }

    pub(crate) fn write(&self, w: &mut Writer, layout: ZenLayout) {
        if layout != ZenLayout::Ue4 {
            w.u32(self.has_versioning_info);
            w.u32(self.header_size);
        }
        self.name.write(w);
        if layout == ZenLayout::Ue4 {
            self.source_name.write(w);
        }
        w.u32(self.package_flags);
        w.u32(self.cooked_header_size);
        if layout == ZenLayout::Ue4 {
            w.i32(self.name_map_names_offset);
            w.i32(self.name_map_names_size);
            w.i32(self.name_map_hashes_offset);
            w.i32(self.name_map_hashes_size);
        } else {
            w.i32(self.imported_public_export_hashes_offset);
        }
        w.i32(self.import_map_offset);
        w.i32(self.export_map_offset);
        w.i32(self.export_bundle_entries_offset);
        if layout == ZenLayout::DependencyBundles {
            w.i32(self.dependency_bundle_headers_offset);
            w.i32(self.dependency_bundle_entries_offset);
            w.i32(self.imported_package_names_offset);
        } else {
            w.i32(self.graph_data_offset);
        }
        if layout == ZenLayout::Ue4 {
            w.i32(self.graph_data_size);
            w.i32(0);
        }
    }
}

/// UE4 graph data: for each imported package with arcs, its id and the arcs
/// from its export bundles to ours.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PackageArcs {
    pub package_id: u64,
    pub arcs: Vec<BundleArc>,
}

/// A Zen package: header sections and the export data after them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ZenPackage {
    pub engine: EngineVersion,
    /// The summary as read (offsets are recomputed by [`ZenPackage::write`]).
    pub summary: ZenSummary,
    pub versioning: Option<VersioningInfo>,
    pub names: Vec<crate::names::BatchName>,
    pub bulk_data: Vec<BulkDataMapEntry>,
    pub imported_public_export_hashes: Vec<u64>,
    pub imports: Vec<PackageObjectIndex>,
    pub exports: Vec<ExportMapEntry>,
    pub cell_imports: Vec<PackageObjectIndex>,
    pub cell_exports: Vec<CellExportMapEntry>,
    /// UE4 and 5.0–5.2 only.
    pub export_bundle_headers: Vec<ExportBundleHeader>,
    pub export_bundle_entries: Vec<ExportBundleEntry>,
    /// 5.3+: one header per export (and cell export).
    pub dependency_bundle_headers: Vec<DependencyBundleHeader>,
    pub dependency_bundle_entries: Vec<DependencyBundleEntry>,
    /// 5.3+.
    pub imported_package_names: ImportedPackageNames,
    /// 5.0–5.2: arcs between this package's export bundles.
    pub internal_arcs: Vec<BundleArc>,
    /// 5.0–5.2: per imported package (store-entry order), arcs from its imports to our bundles.
    pub external_arcs: Vec<Vec<ExternalArc>>,
    /// UE4 graph data.
    pub package_arcs: Vec<PackageArcs>,
    #[serde(rename = "export_data_size", serialize_with = "serialize_len")]
    pub export_data: Vec<u8>,
}

fn serialize_len<S: serde::Serializer>(v: &[u8], s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_u64(v.len() as u64)
}

/// Number of `element_size` records between two offsets of a header, checked.
/// The count of `element_size`-byte records of a header section from
/// `start` to `end`, with the reader moved to its start.
fn seek_section(
    r: &mut Reader,
    start: i32,
    end: i32,
    header_size: usize,
    element_size: usize,
    what: &str,
) -> Result<usize> {
    if start < 0 || end < start || end as usize > header_size {
        return Err(r.error(format!(
            "{what}: section from offset {start} to {end} is outside the header (0..{header_size})"
        )));
    }
    let bytes = (end - start) as usize;
    if !bytes.is_multiple_of(element_size) {
        return Err(r.error(format!(
            "{what}: section of {bytes} bytes is not a whole number of {element_size}-byte entries"
        )));
    }
    r.seek(start as usize)?;
    Ok(bytes / element_size)
}

/// The bulk data map: its size in bytes (after padding to 8 where the
/// layout aligns it), then the entries.
fn read_bulk_data_map(r: &mut Reader, engine: EngineVersion) -> Result<Vec<BulkDataMapEntry>> {
    if engine.zen_bulk_data_map_is_aligned() {
        let at = r.pos();
        let pad = r.u64().context("bulk data map padding")?;
        if pad > 7 {
            return Err(r.error_at(
                at,
                format!("bulk data map padding {pad} is more than 7 bytes"),
            ));
        }
        r.skip(pad as usize).context("bulk data map padding")?;
    }
    let at = r.pos();
    let size = r.i64().context("bulk data map size")?;
    if size < 0 || !(size as u64).is_multiple_of(BulkDataMapEntry::SIZE as u64) {
        return Err(r.error_at(
            at,
            format!("bulk data map size {size} is not a multiple of 32"),
        ));
    }
    let count = r.check_count(size / BulkDataMapEntry::SIZE as i64, BulkDataMapEntry::SIZE)?;
    r.records(count, "bulk data map entry", BulkDataMapEntry::read)
}

impl ZenPackage {
    /// A package with `summary` and every table empty.
    pub(crate) fn new(engine: EngineVersion, summary: ZenSummary) -> Self {
        ZenPackage {
            engine,
            summary,
            versioning: None,
            names: Vec::new(),
            bulk_data: Vec::new(),
            imported_public_export_hashes: Vec::new(),
            imports: Vec::new(),
            exports: Vec::new(),
            cell_imports: Vec::new(),
            cell_exports: Vec::new(),
            export_bundle_headers: Vec::new(),
            export_bundle_entries: Vec::new(),
            dependency_bundle_headers: Vec::new(),
            dependency_bundle_entries: Vec::new(),
            imported_package_names: ImportedPackageNames::default(),
            internal_arcs: Vec::new(),
            external_arcs: Vec::new(),
            package_arcs: Vec::new(),
            export_data: Vec::new(),
        }
    }

    /// Reads a Zen package (header, and export data if present) written by `engine`.
    pub fn read(data: &[u8], engine: EngineVersion) -> Result<Self> {
        Self::read_inner(data, engine).context("zen package")
    }

    /// Reads the header only (the model's export data stays empty), for
    /// callers that need the tables of a whole package chunk without copying
    /// its exports.
    pub(crate) fn read_header(data: &[u8], engine: EngineVersion) -> Result<Self> {
        let mut r = Reader::new(data);
        let summary = ZenSummary::read(&mut r, engine.zen_layout())
            .context("summary")
            .context("zen package")?;
        let end = (summary.header_size as usize).min(data.len());
        Self::read(&data[..end], engine)
    }

    fn read_inner(data: &[u8], engine: EngineVersion) -> Result<Self> {
        let layout = engine.zen_layout();
        let mut r = Reader::new(data);
        let summary = ZenSummary::read(&mut r, layout).context("summary")?;
        let header_size = summary.header_size as usize;
        if header_size > data.len() {
            return Err(r.error_at(
                4,
                format!(
                    "header size {header_size} is larger than the package ({} bytes)",
                    data.len()
                ),
            ));
        }
        if header_size < ZenSummary::size(layout) {
            return Err(r.error_at(
                4,
                format!("header size {header_size} is smaller than the summary"),
            ));
        }
        let mut p = ZenPackage {
            export_data: data[header_size..].to_vec(),
            ..ZenPackage::new(engine, summary)
        };
        // Everything below reads inside the header only.
        let mut r = Reader::new(&data[..header_size]);
        r.seek(ZenSummary::size(layout))?;
        let export_map_end = if layout == ZenLayout::Ue4 {
            let s = &p.summary;
            p.names = read_split_names(
                &mut r,
                s.name_map_names_offset.max(0) as usize,
                s.name_map_names_size.max(0) as usize,
                s.name_map_hashes_offset.max(0) as usize,
                s.name_map_hashes_size.max(0) as usize,
            )
            .context("name map")?;
            s.export_bundle_entries_offset
        } else {
            p.read_ue5_front(&mut r, header_size)?
        };
        p.read_object_maps(&mut r, header_size, export_map_end)?;
        match layout {
            ZenLayout::Ue4 => p.read_ue4_bundles_and_graph(&mut r, header_size)?,
            ZenLayout::GraphData => p.read_graph_data(&mut r, header_size)?,
            ZenLayout::DependencyBundles => p.read_dependency_bundles(&mut r, header_size)?,
        }
        Ok(p)
    }

    /// UE5: versioning, cell map offsets, the name batch, the bulk data map
    /// and the imported public export hashes. Returns where the export map ends.
    fn read_ue5_front(&mut self, r: &mut Reader, header_size: usize) -> Result<i32> {
        let engine = self.engine;
        let s = &mut self.summary;
        if s.has_versioning_info > 1 {
            return Err(r.error_at(
                0,
                format!(
                    "has_versioning_info is {}, expected 0 or 1",
                    s.has_versioning_info
                ),
            ));
        }
        if s.has_versioning_info == 1 {
            self.versioning = Some(VersioningInfo::read(r).context("versioning info")?);
        }
        let export_map_end = if engine.zen_has_cell_maps() {
            s.cell_import_map_offset = r.i32().context("cell import map offset")?;
            s.cell_export_map_offset = r.i32().context("cell export map offset")?;
            s.cell_import_map_offset
        } else {
            s.export_bundle_entries_offset
        };
        let s = *s;
        self.names = read_name_batch(r).context("name map")?;
        if engine.zen_has_bulk_data_map() {
            self.bulk_data = read_bulk_data_map(r, engine)?;
        }
        let (start, end) = (s.imported_public_export_hashes_offset, s.import_map_offset);
        let count = seek_section(
            r,
            start,
            end,
            header_size,
            8,
            "imported public export hashes",
        )?;
        self.imported_public_export_hashes =
            r.records(count, "imported public export hash", |r| r.u64())?;
        Ok(export_map_end)
    }

    /// The import and export maps, and the cell maps where the layout has them.
    fn read_object_maps(
        &mut self,
        r: &mut Reader,
        header_size: usize,
        export_map_end: i32,
    ) -> Result<()> {
        let s = self.summary;
        let count = seek_section(
            r,
            s.import_map_offset,
            s.export_map_offset,
            header_size,
            8,
            "import map",
        )?;
        self.imports = r.records(count, "import", PackageObjectIndex::read)?;
        let size = ExportMapEntry::SIZE;
        let count = seek_section(
            r,
            s.export_map_offset,
            export_map_end,
            header_size,
            size,
            "export map",
        )?;
        self.exports = r.records(count, "export", ExportMapEntry::read)?;
        if self.engine.zen_layout() != ZenLayout::Ue4 && self.engine.zen_has_cell_maps() {
            let (start, end) = (s.cell_import_map_offset, s.cell_export_map_offset);
            let count = seek_section(r, start, end, header_size, 8, "cell import map")?;
            self.cell_imports = r.records(count, "cell import", PackageObjectIndex::read)?;
            let (start, end) = (s.cell_export_map_offset, s.export_bundle_entries_offset);
            let size = CellExportMapEntry::SIZE;
            let count = seek_section(r, start, end, header_size, size, "cell export map")?;
            self.cell_exports = r.records(count, "cell export", CellExportMapEntry::read)?;
        }
        Ok(())
    }

    /// UE4: bundle headers then entries between the bundle and graph offsets;
    /// the header count is where headers and the entries they claim fill the span.
    fn read_ue4_bundles_and_graph(&mut self, r: &mut Reader, header_size: usize) -> Result<()> {
        let s = self.summary;
        let slots = seek_section(
            r,
            s.export_bundle_entries_offset,
            s.graph_data_offset,
            header_size,
            8,
            "export bundles",
        )?;
        let mut claimed: usize = 0;
        while self.export_bundle_headers.len() + claimed < slots {
            let i = self.export_bundle_headers.len();
            let header = ExportBundleHeader::read(r, false)
                .with_context(|| format!("export bundle header {i}"))?;
            if header.first_entry_index as usize != claimed {
                return Err(r.error(format!(
                    "export bundle {i} starts at entry {}, expected {claimed}",
                    header.first_entry_index
                )));
            }
            claimed += header.entry_count as usize;
            self.export_bundle_headers.push(header);
        }
        if self.export_bundle_headers.len() + claimed != slots {
            return Err(r.error("export bundle headers claim more entries than the section holds"));
        }
        self.export_bundle_entries =
            r.records(claimed, "export bundle entry", ExportBundleEntry::read)?;

        r.seek(s.graph_data_offset as usize)?;
        let mut graph = r.sub(s.graph_data_size as usize).context("graph data")?;
        let count = graph.count_i32(12).context("graph data")?;
        for i in 0..count {
            let package_id = graph
                .u64()
                .with_context(|| format!("graph data > package {i}"))?;
            let n = graph
                .count_i32(BundleArc::SIZE)
                .with_context(|| format!("graph data > package {i}"))?;
            let arcs = graph
                .records(n, "arc", BundleArc::read)
                .with_context(|| format!("graph data > package {i}"))?;
            self.package_arcs.push(PackageArcs { package_id, arcs });
        }
        if !graph.at_end() {
            return Err(graph.error(format!(
                "{} bytes left at the end of the graph data",
                graph.remaining()
            )));
        }
        Ok(())
    }

    /// The export bundle entries, from their offset up to `end` (the next
    /// section's offset). Returns how many there are.
    fn read_export_bundle_entries(
        &mut self,
        r: &mut Reader,
        end: i32,
        header_size: usize,
    ) -> Result<usize> {
        let start = self.summary.export_bundle_entries_offset;
        let count = seek_section(
            r,
            start,
            end,
            header_size,
            ExportBundleEntry::SIZE,
            "export bundle entries",
        )?;
        self.export_bundle_entries =
            r.records(count, "export bundle entry", ExportBundleEntry::read)?;
        Ok(count)
    }

    /// 5.0–5.2: bundle entries, then graph data (bundle headers, internal
    /// arcs, one external arc list per imported package up to the header end).
    fn read_graph_data(&mut self, r: &mut Reader, header_size: usize) -> Result<()> {
        let s = self.summary;
        let count = self.read_export_bundle_entries(r, s.graph_data_offset, header_size)?;
        r.seek(s.graph_data_offset as usize)?;
        let mut claimed = 0usize;
        while claimed < count {
            let i = self.export_bundle_headers.len();
            let header = ExportBundleHeader::read(r, true)
                .with_context(|| format!("graph data > export bundle header {i}"))?;
            if header.first_entry_index as usize != claimed || header.entry_count == 0 {
                return Err(r.error(format!(
                    "export bundle {i} does not continue the entries (first {}, count {})",
                    header.first_entry_index, header.entry_count
                )));
            }
            claimed += header.entry_count as usize;
            self.export_bundle_headers.push(header);
        }
        if claimed != count {
            return Err(r.error("export bundle headers claim more entries than there are"));
        }
        let n = r
            .count_i32(BundleArc::SIZE)
            .context("graph data > internal arcs")?;
        self.internal_arcs = r.records(n, "internal arc", BundleArc::read)?;
        while !r.at_end() {
            let i = self.external_arcs.len();
            let n = r
                .count_i32(ExternalArc::SIZE)
                .with_context(|| format!("graph data > external arcs of imported package {i}"))?;
            self.external_arcs
                .push(r.records(n, "external arc", ExternalArc::read)?);
        }
        Ok(())
    }

    fn read_dependency_bundles(&mut self, r: &mut Reader, header_size: usize) -> Result<()> {
        let s = self.summary;
        self.read_export_bundle_entries(r, s.dependency_bundle_headers_offset, header_size)?;
        let count = seek_section(
            r,
            s.dependency_bundle_headers_offset,
            s.dependency_bundle_entries_offset,
            header_size,
            DependencyBundleHeader::SIZE,
            "dependency bundle headers",
        )?;
        self.dependency_bundle_headers = r.records(
            count,
            "dependency bundle header",
            DependencyBundleHeader::read,
        )?;
        let count = seek_section(
            r,
            s.dependency_bundle_entries_offset,
            s.imported_package_names_offset,
            header_size,
            DependencyBundleEntry::SIZE,
            "dependency bundle entries",
        )?;
        self.dependency_bundle_entries = r.records(
            count,
            "dependency bundle entry",
            DependencyBundleEntry::read,
        )?;
        for (i, h) in self.dependency_bundle_headers.iter().enumerate() {
            if h.first_entry_index < 0
                || h.first_entry_index as u64 + h.entry_count() > count as u64
            {
                return Err(r.error_at(
                    s.dependency_bundle_headers_offset as usize + i * DependencyBundleHeader::SIZE,
                    format!(
                        "dependency bundle {i} refers to entries past the end ({count} entries)"
                    ),
                ));
            }
        }
        seek_section(
            r,
            s.imported_package_names_offset,
            header_size as i32,
            header_size,
            1,
            "imported package names",
        )?;
        self.imported_package_names =
            ImportedPackageNames::read(r).context("imported package names")?;
        if !r.at_end() {
            return Err(r.error(format!(
                "{} bytes left after the imported package names",
                r.remaining()
            )));
        }
        Ok(())
    }

    /// Resolves a mapped name against the package's name map (`Name_N` for numbered names).
    pub fn name_text(&self, name: MappedName) -> String {
        match name.kind() {
            Some(MappedNameKind::Package) => name.resolve(&self.names).map(|t| t.into_owned()),
            _ => None,
        }
        .unwrap_or_else(|| format!("<name {} kind {:?}>", name.index(), name.kind()))
    }

    /// The package name the summary names.
    pub fn package_name(&self) -> String {
        self.name_text(self.summary.name)
    }

    /// Writes the header; returns (header bytes, summary as written).
    pub fn write_header(&self) -> (Vec<u8>, ZenSummary) {
        let layout = self.engine.zen_layout();
        let mut s = ZenSummary {
            has_versioning_info: (self.versioning.is_some() && layout != ZenLayout::Ue4) as u32,
            name: self.summary.name,
            source_name: self.summary.source_name,
            package_flags: self.summary.package_flags,
            cooked_header_size: self.summary.cooked_header_size,
            ..ZenSummary::default()
        };
        let mut w = Writer::new();
        s.write(&mut w, layout);
        let mut cell_offsets_at = None;
        if layout == ZenLayout::Ue4 {
            let (names, hashes) = write_split_names(&self.names);
            s.name_map_names_offset = w.pos() as i32;
            s.name_map_names_size = names.len() as i32;
            w.bytes(&names);
            w.align(8);
            s.name_map_hashes_offset = w.pos() as i32;
            s.name_map_hashes_size = hashes.len() as i32;
            w.bytes(&hashes);
        } else {
            cell_offsets_at = self.write_ue5_front(&mut w, &mut s);
        }
        s.import_map_offset = w.pos() as i32;
        for i in &self.imports {
            i.write(&mut w);
        }
        s.export_map_offset = w.pos() as i32;
        for e in &self.exports {
            e.write(&mut w);
        }
        if let Some(at) = cell_offsets_at {
            let cell_imports = w.pos();
            for i in &self.cell_imports {
                i.write(&mut w);
            }
            let cell_exports = w.pos();
            for e in &self.cell_exports {
                e.write(&mut w);
            }
            w.patch_i32(at, cell_imports as i32);
            w.patch_i32(at + 4, cell_exports as i32);
            s.cell_import_map_offset = cell_imports as i32;
            s.cell_export_map_offset = cell_exports as i32;
        }
        s.export_bundle_entries_offset = w.pos() as i32;
        self.write_bundles_and_graph(&mut w, &mut s);
        s.header_size = w.pos() as u32;
        let mut bytes = w.into_inner();
        let mut head = Writer::new();
        s.write(&mut head, layout);
        let head = head.into_inner();
        bytes[..head.len()].copy_from_slice(&head);
        (bytes, s)
    }

    /// The UE5 part between the summary and the import map: versioning,
    /// cell map offsets (filled in later; returns where), names, bulk-data
    /// map and imported public export hashes.
    fn write_ue5_front(&self, w: &mut Writer, s: &mut ZenSummary) -> Option<usize> {
        let mut cell_offsets_at = None;
        if let Some(v) = &self.versioning {
            v.write(w);
        }
        if self.engine.zen_has_cell_maps() {
            cell_offsets_at = Some(w.pos());
            w.i32(0);
            w.i32(0);
        }
        write_name_batch(w, &self.names);
        if self.engine.zen_has_bulk_data_map() {
            if self.engine.zen_bulk_data_map_is_aligned() {
                // The pad count itself is 8 bytes, so the size after it stays aligned.
                let pad = (8 - w.pos() % 8) % 8;
                w.u64(pad as u64);
                w.zeros(pad);
            }
            w.i64((self.bulk_data.len() * BulkDataMapEntry::SIZE) as i64);
            for e in &self.bulk_data {
                e.write(w);
            }
        }
        s.imported_public_export_hashes_offset = w.pos() as i32;
        for h in &self.imported_public_export_hashes {
            w.u64(*h);
        }
        cell_offsets_at
    }

    /// Export bundles and graph data (or dependency bundles) as the layout has them.
    fn write_bundles_and_graph(&self, w: &mut Writer, s: &mut ZenSummary) {
        match self.engine.zen_layout() {
            ZenLayout::Ue4 => {
                for h in &self.export_bundle_headers {
                    h.write(w, false);
                }
                for e in &self.export_bundle_entries {
                    e.write(w);
                }
                s.graph_data_offset = w.pos() as i32;
                w.i32(self.package_arcs.len() as i32);
                for p in &self.package_arcs {
                    w.u64(p.package_id);
                    w.i32(p.arcs.len() as i32);
                    for a in &p.arcs {
                        a.write(w);
                    }
                }
                s.graph_data_size = w.pos() as i32 - s.graph_data_offset;
            }
            ZenLayout::GraphData => {
                for e in &self.export_bundle_entries {
                    e.write(w);
                }
                s.graph_data_offset = w.pos() as i32;
                for h in &self.export_bundle_headers {
                    h.write(w, true);
                }
                w.i32(self.internal_arcs.len() as i32);
                for a in &self.internal_arcs {
                    a.write(w);
                }
                for arcs in &self.external_arcs {
                    w.i32(arcs.len() as i32);
                    for a in arcs {
                        a.write(w);
                    }
                }
            }
            ZenLayout::DependencyBundles => {
                for e in &self.export_bundle_entries {
                    e.write(w);
                }
                s.dependency_bundle_headers_offset = w.pos() as i32;
                for h in &self.dependency_bundle_headers {
                    h.write(w);
                }
                s.dependency_bundle_entries_offset = w.pos() as i32;
                for e in &self.dependency_bundle_entries {
                    e.write(w);
                }
                s.imported_package_names_offset = w.pos() as i32;
                self.imported_package_names.write(w);
            }
        }
    }

    /// Writes the whole package: header, then export data.
    pub fn write(&self) -> Vec<u8> {
        let (mut bytes, _) = self.write_header();
        bytes.extend_from_slice(&self.export_data);
        bytes
    }
}
