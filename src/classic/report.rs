//! A classic package described for people and tools: every field of the
//! header and tables with flags decoded and object references resolved to
//! full dotted paths. `zenpak inspect` prints this (as text or JSON).

use serde::Serialize;

use super::flags::{object_flag_names, package_flag_names};
use super::header::guid_string;
use super::{Generation, Lineage, ObjectRef, Package};

/// Flags: the raw value and the names of its bits.
#[derive(Debug, Clone, Serialize)]
pub struct Flags {
    pub value: u32,
    pub names: Vec<String>,
}

/// Where a table is and how many entries it holds.
#[derive(Debug, Clone, Serialize)]
pub struct TableInfo {
    pub count: i32,
    pub offset: i32,
}

#[derive(Debug, Clone, Serialize)]
pub struct NameReport {
    pub index: usize,
    pub name: String,
    pub flags: Flags,
}

#[derive(Debug, Clone, Serialize)]
pub struct ImportReport {
    pub(crate) index: usize,
    /// The object reference other entries use for it (`-index - 1`).
    pub reference: i32,
    pub path: String,
    pub class: String,
    /// Path of the outer, `None` for top-level packages.
    pub(crate) outer: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ExportReport {
    pub(crate) index: usize,
    /// The object reference other entries use for it (`index + 1`).
    pub reference: i32,
    pub path: String,
    pub class: String,
    #[serde(rename = "super")]
    pub super_field: Option<String>,
    pub(crate) outer: Option<String>,
    pub flags: Flags,
    pub serial_size: i32,
    pub serial_offset: Option<i32>,
}

/// Everything `inspect` shows about a classic package. The table rows are
/// made one at a time as they are written ([`Rows`]), so a package that
/// declares a million exports is reported in bounded memory.
#[derive(Debug, Clone, Serialize)]
pub struct PackageReport<'a> {
    pub(crate) kind: &'static str,
    pub package: String,
    pub file_size: u64,
    pub file_version: u16,
    pub licensee_version: u16,
    pub package_flags: Flags,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub guid: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub generations: Option<Vec<Generation>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub heritage: Option<HeritageReport>,
    pub name_table: TableInfo,
    pub import_table: TableInfo,
    pub export_table: TableInfo,
    pub names: Rows<'a, NameReport>,
    pub imports: Rows<'a, ImportReport>,
    pub exports: Rows<'a, ExportReport>,
}

/// One table of a [`PackageReport`]: its rows, made from the package when
/// they are iterated or serialized (a JSON array).
pub struct Rows<'a, T> {
    package: &'a Package,
    len: usize,
    row: fn(&Package, usize) -> T,
}

impl<T> Clone for Rows<'_, T> {
    fn clone(&self) -> Self {
        Rows { ..*self }
    }
}

impl<T> std::fmt::Debug for Rows<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Rows({})", self.len)
    }
}

impl<'a, T: 'a> Rows<'a, T> {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The rows in table order, each made when it is reached.
    pub fn iter(&self) -> impl Iterator<Item = T> + 'a {
        let (package, row) = (self.package, self.row);
        (0..self.len).map(move |i| row(package, i))
    }
}

impl<T: Serialize> Serialize for Rows<'_, T> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct HeritageReport {
    pub count: i32,
    pub offset: i32,
    pub guids: Vec<String>,
}

fn optional_path(package: &Package, reference: ObjectRef) -> Option<String> {
    (!reference.is_null()).then(|| package.path(reference))
}

impl<'a> PackageReport<'a> {
    pub fn new(package: &'a Package) -> PackageReport<'a> {
        let header = &package.header;
        let (guid, generations, heritage) = match &header.lineage {
            Lineage::Generations { guid, generations } => {
                (Some(guid_string(guid)), Some(generations.clone()), None)
            }
            Lineage::Heritage { count, offset } => (
                None,
                None,
                Some(HeritageReport {
                    count: *count,
                    offset: *offset,
                    guids: package.heritage.iter().map(|h| guid_string(&h.0)).collect(),
                }),
            ),
        };
        PackageReport {
            kind: "classic-package",
            package: package.name.clone(),
            file_size: package.file_size,
            file_version: header.file_version().0,
            licensee_version: header.licensee_version(),
            package_flags: Flags {
                value: header.package_flags,
                names: package_flag_names(header.package_flags),
            },
            guid,
            generations,
            heritage,
            name_table: TableInfo {
                count: header.name_count,
                offset: header.name_offset,
            },
            import_table: TableInfo {
                count: header.import_count,
                offset: header.import_offset,
            },
            export_table: TableInfo {
                count: header.export_count,
                offset: header.export_offset,
            },
            names: Rows {
                package,
                len: package.names.len(),
                row: name_row,
            },
            imports: Rows {
                package,
                len: package.imports.len(),
                row: import_row,
            },
            exports: Rows {
                package,
                len: package.exports.len(),
                row: export_row,
            },
        }
    }
}

fn name_row(package: &Package, index: usize) -> NameReport {
    let n = &package.names[index];
    NameReport {
        index,
        name: n.name.clone(),
        flags: Flags {
            value: n.flags,
            names: object_flag_names(n.flags),
        },
    }
}

fn import_row(package: &Package, index: usize) -> ImportReport {
    let reference = ObjectRef::import(index);
    ImportReport {
        index,
        reference: reference.0,
        path: package.path(reference),
        class: package.class_path(reference),
        outer: optional_path(package, package.imports[index].outer),
    }
}

fn export_row(package: &Package, index: usize) -> ExportReport {
    let e = &package.exports[index];
    let reference = ObjectRef::export(index);
    ExportReport {
        index,
        reference: reference.0,
        path: package.path(reference),
        class: package.class_path(reference),
        super_field: optional_path(package, e.super_field),
        outer: optional_path(package, e.outer),
        flags: Flags {
            value: e.flags,
            names: object_flag_names(e.flags),
        },
        serial_size: e.serial_size,
        serial_offset: e.serial_offset,
    }
}
