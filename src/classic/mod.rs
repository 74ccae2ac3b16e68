//! Classic Unreal packages: the package format of Unreal and Unreal
//! Tournament (Unreal Engine 1, file versions 60–69; `.u`, `.utx`, `.uax`,
//! `.umx`, `.unr`), the ancestor of the name/import/export model Zen packages still use.
//!
//! This module owns the compact index ([`compact`]), the header and its
//! version facts ([`header`]), the name/import/export/heritage tables and
//! object references ([`tables`]), flag names ([`flags`]), writing the
//! tables back byte for byte ([`Package::write_tables`]), the package writer
//! ([`writer`]: fresh layouts and in-place rewrites with a new GUID), the
//! object-data decoder that finds the references inside each export's data
//! ([`object_data`]), dependency analysis ([`deps`]) and map consolidation
//! ([`consolidate`]). CLI: `cli/inspect_classic.rs`, `cli/deps.rs`, `cli/classic.rs`.
//!
//! Formats: reference documents 000–003 under `docs/reference/` (003 walks
//! through `CTF-Face.unr` byte by byte); object data layouts from the UE1
//! engine's serializers, checked against the UT99 corpus (`classic/ut99/`,
//! versions 61, 68 and 69; see [`object_data`]).
//!
//! # Version facts (`FileVersion`, the one place they live)
//!
//! - Accepted versions 60–69 (low 16 bits of the version word; the high 16 bits are a
//!   licensee version, kept for round trips).
//! - Names: zero-terminated before 64; from 64 a compact length (terminator included) then
//!   the bytes; then 32-bit flags.
//! - Header: heritage count/offset (table of 16-byte GUIDs) before 68; from 68 a GUID,
//!   a generation count and per generation an export count and a name count.
//! - After 61: lazy arrays start with the absolute file position of their end (`TLazyArray`,
//!   `Ar.Ver() <= 61` branch); a model's BSP arrays are inside the model (`UModel::Serialize`).
//!   A level's travel information is a map after 62, two string lists in 61–62.
//! - Limits (`FileVersion::limits`): file size, offsets, sizes and counts are signed 32-bit;
//!   names at most 63 bytes (`NAME_SIZE` 64 with the terminator).
//!
//! # Table layouts
//!
//! - Import: class package (compact name), class name (compact name), outer (32-bit ref),
//!   object name (compact name).
//! - Export: class, super (compact refs), outer (32-bit ref), object name (compact name),
//!   flags (32 bits), serial size (compact), serial offset (compact) **only when the size is
//!   not zero** (some write-ups say "size ≥ 0"; every corpus file follows "not zero").
//!
//! # Round trip
//!
//! `Package::write_tables` returns one `TableRegion` per region at the header's offset:
//! header (through the generations or heritage count/offset), heritage table (before 68),
//! names, imports, exports. For every corpus file each region equals the file's bytes, and
//! header + tables + object data (`serial_offset..+serial_size`) tile the file exactly, with
//! no gap or overlap.
//!
//! # Dependencies and intrinsic classes (`deps`)
//!
//! A required package is a top-level `Core.Package` import; the objects needed are the
//! imports below it, looked for as `<name>.<ext>` in the search folders in order (same dotted
//! path, same class, `RF_Public`). Some classes are created by native code and never stored:
//! a package importing its own object proves it (Core.u imports `Core.TextBuffer`, Engine.u
//! `Engine.Level`, `Engine.Model`); a `Core.Class` missing from a package that has
//! `RF_Native` classes is reported as "likely" intrinsic (e.g. `Engine.Polys`), not missing.
//! A package's imports of its own objects are `own_objects`, not a requirement on itself.
//!
//! # Bad input
//!
//! Every count is checked against the bytes after its table's offset before allocating
//! (minimum entry sizes: name 5/6, import 7, export 12, heritage 16, generation 8 bytes).
//! Names over 1024 bytes, negative sizes/offsets, object data past the end, name indices and
//! object references outside the tables, outer-chain cycles and chains deeper than 64 are
//! errors naming the structure and byte offset. The object-data decoder never fails (opaque
//! pieces instead). Mutated maps and packages consolidate or are refused with offsets, never
//! a panic (`tests/classic/classic_mutation.rs`).

pub mod compact;
pub mod consolidate;
pub mod deps;
pub mod flags;
pub mod header;
pub mod object_data;
pub mod report;
pub mod tables;
pub mod writer;

use std::path::Path;

pub use compact::CompactIndex;
pub use header::{FileVersion, Generation, Header, Lineage};
pub use tables::{
    ExportEntry, HeritageEntry, ImportEntry, NameEntry, ObjectRef, TableCounts, Target,
};

use crate::binary::{Reader, Writer};
use crate::error::{Context, Error, Result};

/// The deepest nesting of objects accepted (package, groups, object, and
/// fields of classes nest a handful of levels in real files).
pub const MAX_OUTER_DEPTH: usize = 64;

/// A parsed classic package: header and tables.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Package {
    /// The package's own name (its file name without extension): objects
    /// exported at top level live at `<name>.<object>`.
    pub name: String,
    pub header: Header,
    pub names: Vec<NameEntry>,
    pub imports: Vec<ImportEntry>,
    pub exports: Vec<ExportEntry>,
    /// Heritage GUIDs (versions before 68 only).
    pub heritage: Vec<HeritageEntry>,
    /// Size of the file the package was read from.
    pub file_size: u64,
}

/// The bytes of one table as the writer produces them, and where the file has them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableRegion {
    /// `header`, `heritage`, `names`, `imports` or `exports`.
    pub table: &'static str,
    pub offset: u64,
    pub bytes: Vec<u8>,
}

impl Package {
    /// Reads a package file; its name is the file name without extension.
    pub fn read_file(path: &Path) -> Result<Package> {
        let data = std::fs::read(path).map_err(|e| Error::io(path, e))?;
        let name = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        Package::parse(&data, &name).map_err(|e| e.in_file(path))
    }

    /// Parses the header and tables of a package held in memory.
    pub fn parse(data: &[u8], name: &str) -> Result<Package> {
        let mut reader = Reader::new(data);
        let header = Header::read(&mut reader).context("header")?;
        let heritage = read_heritage(&mut reader, &header)?;
        let counts = table_counts(&mut reader, &header)?;
        let names = read_names(&mut reader, &header, counts.names)?;
        let (imports, import_offsets) = read_imports(&mut reader, &header, &counts)?;
        let (exports, export_offsets) = read_exports(&mut reader, &header, &counts)?;
        let package = Package {
            name: name.to_string(),
            header,
            names,
            imports,
            exports,
            heritage,
            file_size: data.len() as u64,
        };
        package.check_outer_chains(&reader, &import_offsets, &export_offsets)?;
        Ok(package)
    }

    /// Every outer chain must end at null within [`MAX_OUTER_DEPTH`] steps:
    /// a cycle would make paths (and the engine's loader) run forever, and
    /// a hostile chain as long as the file would make every path as long as
    /// the file.
    fn check_outer_chains(
        &self,
        reader: &Reader,
        import_offsets: &[usize],
        export_offsets: &[usize],
    ) -> Result<()> {
        const UNKNOWN: u16 = 0;
        const WALKING: u16 = u16::MAX;
        let slot = |r: ObjectRef| match r.target() {
            Target::Null => None,
            Target::Import(i) => Some(i),
            Target::Export(i) => Some(self.imports.len() + i),
        };
        let fail = |start: ObjectRef, message: &str| {
            let (table, index, at) = match start.target() {
                Target::Import(i) => ("import", i, import_offsets[i]),
                Target::Export(i) => ("export", i, export_offsets[i]),
                Target::Null => ("", 0, 0),
            };
            reader
                .error_at(at, format!("the outer chain of {table} {index} {message}"))
                .within(format!("{table} table > {table} {index}"))
        };
        // Depth of each entry's chain (1 for top-level objects), once known.
        let mut depth = vec![UNKNOWN; self.imports.len() + self.exports.len()];
        let mut chain = Vec::new();
        let starts = (0..self.imports.len())
            .map(ObjectRef::import)
            .chain((0..self.exports.len()).map(ObjectRef::export));
        for start in starts {
            chain.clear();
            let mut current = start;
            let mut base = 0;
            while let Some(s) = slot(current) {
                match depth[s] {
                    UNKNOWN => {}
                    WALKING => return Err(fail(start, "loops back on itself")),
                    known => {
                        base = known as usize;
                        break;
                    }
                }
                depth[s] = WALKING;
                chain.push(s);
                if chain.len() + base > MAX_OUTER_DEPTH {
                    return Err(fail(
                        start,
                        &format!("is deeper than {MAX_OUTER_DEPTH} objects"),
                    ));
                }
                current = self.outer(current);
            }
            if chain.len() + base > MAX_OUTER_DEPTH {
                return Err(fail(
                    start,
                    &format!("is deeper than {MAX_OUTER_DEPTH} objects"),
                ));
            }
            for (steps_from_top, &s) in chain.iter().rev().enumerate() {
                depth[s] = (base + steps_from_top + 1) as u16;
            }
        }
        Ok(())
    }

    pub fn version(&self) -> FileVersion {
        self.header.file_version()
    }

    /// The text of name `index` (`"<bad name N>"` when out of range, which parsed packages never are).
    pub fn name_text(&self, index: usize) -> &str {
        self.names
            .get(index)
            .map(|n| n.name.as_str())
            .unwrap_or("<bad name>")
    }

    /// The outer of an object (null for top-level objects and for null).
    pub(crate) fn outer(&self, reference: ObjectRef) -> ObjectRef {
        match reference.target() {
            Target::Null => ObjectRef::NULL,
            Target::Import(i) => self.imports.get(i).map_or(ObjectRef::NULL, |e| e.outer),
            Target::Export(i) => self.exports.get(i).map_or(ObjectRef::NULL, |e| e.outer),
        }
    }

    /// The object's own name (`None` for null).
    pub(crate) fn object_name(&self, reference: ObjectRef) -> &str {
        match reference.target() {
            Target::Null => "None",
            Target::Import(i) => self
                .imports
                .get(i)
                .map_or("<bad import>", |e| self.name_text(e.object_name)),
            Target::Export(i) => self
                .exports
                .get(i)
                .map_or("<bad export>", |e| self.name_text(e.object_name)),
        }
    }

    /// The full dotted path of an object: imports start at their top-level
    /// package (`SkyCity.Deco.runeSgn2`); objects of this package start with
    /// its name (`CTF-Face.LevelInfo0`). Null is `None`.
    pub fn path(&self, reference: ObjectRef) -> String {
        if reference.is_null() {
            return "None".to_string();
        }
        let mut parts = Vec::new();
        let mut current = reference;
        let mut top = reference;
        // Parsed packages have acyclic chains; the bound keeps hand-built ones finite.
        let limit = self.imports.len() + self.exports.len() + 1;
        while !current.is_null() && parts.len() < limit {
            parts.push(self.object_name(current));
            top = current;
            current = self.outer(current);
        }
        if matches!(top.target(), Target::Export(_)) {
            parts.push(&self.name);
        }
        parts.reverse();
        parts.join(".")
    }

    /// The full path of the class of an object: `Core.Class` for exports with a null class.
    pub fn class_path(&self, reference: ObjectRef) -> String {
        match reference.target() {
            Target::Null => "None".to_string(),
            Target::Import(i) => match self.imports.get(i) {
                Some(e) => format!(
                    "{}.{}",
                    self.name_text(e.class_package),
                    self.name_text(e.class_name)
                ),
                None => "<bad import>".to_string(),
            },
            Target::Export(i) => match self.exports.get(i) {
                Some(e) if e.class.is_null() => "Core.Class".to_string(),
                Some(e) => self.path(e.class),
                None => "<bad export>".to_string(),
            },
        }
    }

    /// The tables as the writer produces them, each with the file offset it
    /// was read from. For a package read from a file, every region's bytes
    /// equal the file's bytes at that offset: header (with GUID and
    /// generations from version 68), heritage table (before 68), name,
    /// import and export tables. Empty tables are left out.
    pub fn write_tables(&self) -> Vec<TableRegion> {
        let version = self.version();
        let mut regions = Vec::new();
        let mut writer = Writer::new();
        self.header.write(&mut writer);
        regions.push(TableRegion {
            table: "header",
            offset: 0,
            bytes: writer.into_inner(),
        });
        if let Lineage::Heritage { offset, .. } = self.header.lineage {
            if !self.heritage.is_empty() {
                let mut writer = Writer::new();
                for entry in &self.heritage {
                    entry.write(&mut writer);
                }
                regions.push(TableRegion {
                    table: "heritage",
                    offset: offset as u64,
                    bytes: writer.into_inner(),
                });
            }
        }
        if !self.names.is_empty() {
            let mut writer = Writer::new();
            for name in &self.names {
                name.write(&mut writer, version);
            }
            regions.push(TableRegion {
                table: "names",
                offset: self.header.name_offset as u64,
                bytes: writer.into_inner(),
            });
        }
        if !self.imports.is_empty() {
            let mut writer = Writer::new();
            for import in &self.imports {
                import.write(&mut writer);
            }
            regions.push(TableRegion {
                table: "imports",
                offset: self.header.import_offset as u64,
                bytes: writer.into_inner(),
            });
        }
        if !self.exports.is_empty() {
            let mut writer = Writer::new();
            for export in &self.exports {
                export.write(&mut writer);
            }
            regions.push(TableRegion {
                table: "exports",
                offset: self.header.export_offset as u64,
                bytes: writer.into_inner(),
            });
        }
        regions
    }
}

/// Checks a table's count against the bytes from its offset to the end of the file.
/// Errors name the header field holding the count (`count_at`), whose
/// offset field follows it.
fn table_count(
    reader: &mut Reader,
    count: i32,
    offset: i32,
    count_at: usize,
    min_entry_size: usize,
    table: &str,
) -> Result<usize> {
    if count == 0 {
        return Ok(0);
    }
    seek_table(reader, offset, count_at + 4, &format!("{table} offset"))?;
    reader
        .check_count_at(count_at, count as i64, min_entry_size)
        .with_context(|| format!("header > {table} count"))
}

/// Moves to a table; `field_at` is where the header stores its offset.
/// The heritage table of packages before generations (empty otherwise).
fn read_heritage(reader: &mut Reader, header: &Header) -> Result<Vec<HeritageEntry>> {
    let Lineage::Heritage { count, offset } = header.lineage else {
        return Ok(Vec::new());
    };
    if count == 0 {
        return Ok(Vec::new());
    }
    seek_table(
        reader,
        offset,
        header::HERITAGE_OFFSET_AT,
        "heritage offset",
    )?;
    let count = reader
        .check_count_at(
            header::HERITAGE_OFFSET_AT - 4,
            count as i64,
            HeritageEntry::SIZE,
        )
        .context("header > heritage count")?;
    let mut entries = Vec::with_capacity(count);
    for index in 0..count {
        entries.push(
            HeritageEntry::read(reader)
                .with_context(|| format!("heritage table > entry {index}"))?,
        );
    }
    Ok(entries)
}

/// The three table counts, each checked against the bytes after its
/// table's offset before anything is allocated for it.
fn table_counts(reader: &mut Reader, header: &Header) -> Result<TableCounts> {
    let version = header.file_version();
    Ok(TableCounts {
        names: table_count(
            reader,
            header.name_count,
            header.name_offset,
            header::NAME_COUNT_AT,
            version.min_name_entry_size(),
            "name table",
        )?,
        imports: table_count(
            reader,
            header.import_count,
            header.import_offset,
            header::IMPORT_COUNT_AT,
            ImportEntry::MIN_SIZE,
            "import table",
        )?,
        exports: table_count(
            reader,
            header.export_count,
            header.export_offset,
            header::EXPORT_COUNT_AT,
            ExportEntry::MIN_SIZE,
            "export table",
        )?,
    })
}

fn read_names(reader: &mut Reader, header: &Header, count: usize) -> Result<Vec<NameEntry>> {
    let mut names = Vec::with_capacity(count);
    if count != 0 {
        seek_table(
            reader,
            header.name_offset,
            header::NAME_COUNT_AT + 4,
            "name offset",
        )?;
        for index in 0..count {
            names.push(
                NameEntry::read(reader, header.file_version())
                    .with_context(|| format!("name table > name {index}"))?,
            );
        }
    }
    Ok(names)
}

/// The imports, with the byte offset of each (for errors about them later).
fn read_imports(
    reader: &mut Reader,
    header: &Header,
    counts: &TableCounts,
) -> Result<(Vec<ImportEntry>, Vec<usize>)> {
    let mut imports = Vec::with_capacity(counts.imports);
    let mut offsets = Vec::with_capacity(counts.imports);
    if counts.imports != 0 {
        seek_table(
            reader,
            header.import_offset,
            header::IMPORT_COUNT_AT + 4,
            "import offset",
        )?;
        for index in 0..counts.imports {
            offsets.push(reader.pos());
            imports.push(
                ImportEntry::read(reader, counts)
                    .with_context(|| format!("import table > import {index}"))?,
            );
        }
    }
    Ok((imports, offsets))
}

/// The exports, with the byte offset of each; object data must lie inside the file.
fn read_exports(
    reader: &mut Reader,
    header: &Header,
    counts: &TableCounts,
) -> Result<(Vec<ExportEntry>, Vec<usize>)> {
    let file_len = reader.len() as u64;
    let mut exports = Vec::with_capacity(counts.exports);
    let mut offsets = Vec::with_capacity(counts.exports);
    if counts.exports != 0 {
        seek_table(
            reader,
            header.export_offset,
            header::EXPORT_COUNT_AT + 4,
            "export offset",
        )?;
        for index in 0..counts.exports {
            let at = reader.pos();
            let export = ExportEntry::read(reader, counts)
                .with_context(|| format!("export table > export {index}"))?;
            if let Some(range) = export.serial_range() {
                if range.end > file_len {
                    return Err(reader
                        .error_at(
                            at,
                            format!(
                                "object data {}..{} lies past the end of the file ({file_len} bytes)",
                                range.start, range.end
                            ),
                        )
                        .within(format!("export table > export {index}")));
                }
            }
            offsets.push(at);
            exports.push(export);
        }
    }
    Ok((exports, offsets))
}

fn seek_table(reader: &mut Reader, offset: i32, field_at: usize, what: &str) -> Result<()> {
    if offset < 0 || offset as usize > reader.len() {
        return Err(reader
            .error_at(
                field_at,
                format!(
                    "{what} {offset} is outside the file ({} bytes)",
                    reader.len()
                ),
            )
            .within("header"));
    }
    reader.seek(offset as usize)
}
