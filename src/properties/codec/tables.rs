//! The native tails modders edit, after an export's object GUID flag:
//! a `DataTable`'s rows and a `StringTable`'s table. Each is decoded only
//! when it reads to the export's end exactly and writes back the same
//! bytes; otherwise the tail stays the export's `native` byte run.
//!
//! - `UDataTable::Serialize` (cooked): an `i32` row count, then per row
//!   its name (FName) and the row struct's property block (the struct the
//!   `RowStruct` property names; unversioned blocks take its schema from
//!   the mappings).
//! - `UEnum::Serialize` (a `UserDefinedEnum`): an `i32` count of entries,
//!   each a name (FName) and an `i64` value, then the `CppForm` byte.
//! - `FStringTable` (after `UStringTable`'s properties): the namespace
//!   (FString), an `i32` count of entries (key and source string, both
//!   FStrings), an `i32` count of keys with metadata (the key, then an
//!   `i32` count of FName → FString pairs). Keys are JSON object keys, so
//!   a table whose keys are stored in other than their narrowest form
//!   stays bytes.

use crate::binary::{Reader, Writer};
use crate::error::{DataStep, Error, Result};

use super::super::tree::{
    Block, Entries, Enumeration, ExportTree, ObjectRef, StringTable, Value, Wide,
};
use super::{write_fstring, Codec};

/// Whether objects of class `class` (its object name) have a tail decoded
/// here: a DataTable's rows, a StringTable's table, an enum's entries.
pub fn has_decoded_tail(class: &str) -> bool {
    matches!(
        class,
        "DataTable" | "StringTable" | "UserDefinedEnum" | "Enum"
    )
}

/// The name of the struct a DataTable's `RowStruct` property refers to
/// (the path's last part).
pub(super) fn row_struct_name(properties: &Block) -> Option<String> {
    let value = match properties {
        Block::Unversioned { properties, .. } => properties
            .iter()
            .find(|p| &*p.name == "RowStruct")
            .and_then(|p| p.value.as_ref()),
        Block::Tagged { properties } => properties
            .iter()
            .find(|p| p.name.0 == "RowStruct")
            .map(|p| &p.value),
    };
    let Some(Value::Object(ObjectRef(Some(path)))) = value else {
        return None;
    };
    Some(path.rsplit(['.', ':']).next().unwrap_or(path).to_string())
}

/// What [`Codec::read_tail`] decoded (at most one of them).
#[derive(Default)]
pub(super) struct Tail {
    pub(super) rows: Option<Entries<Block>>,
    pub(super) string_table: Option<StringTable>,
    pub(super) enumeration: Option<Enumeration>,
    /// Why a tail of a class decoded here was kept as bytes.
    pub(super) reason: Option<String>,
    /// The same as an error, with where it happened.
    pub(super) error: Option<Error>,
}

impl Codec<'_> {
    /// Decodes the tail `r` is at, for an object of class `class` with
    /// `properties`; `None` (and `r` where it was) when the class has no
    /// tail decoded here or it does not read exactly.
    pub(super) fn read_tail(&self, r: &mut Reader, class: &str, properties: &Block) -> Tail {
        let start = r.pos();
        let result = match class {
            "DataTable" => self
                .row_struct(properties)
                .and_then(|row| self.read_rows(r, &row))
                .map(|rows| Tail {
                    rows: Some(rows),
                    ..Tail::default()
                }),
            "StringTable" => self.read_string_table(r).map(|t| Tail {
                string_table: Some(t),
                ..Tail::default()
            }),
            _ if has_decoded_tail(class) => self.read_enum(r).map(|e| Tail {
                enumeration: Some(e),
                ..Tail::default()
            }),
            _ => return Tail::default(),
        };
        let what = match class {
            "DataTable" => "the DataTable's rows",
            "StringTable" => "the string table's entries",
            _ => "the enum's entries",
        };
        let (reason, error) = match result {
            Ok(tail) if r.at_end() => return tail,
            Ok(_) => (
                format!(
                    "{what} are kept as bytes: {} bytes follow them in the export",
                    r.remaining()
                ),
                r.error(format!(
                    "{} bytes follow {what} in the export",
                    r.remaining()
                )),
            ),
            Err(e) => (
                format!("{what} are kept as bytes: {}", e.summary()),
                e.within(what),
            ),
        };
        let _ = r.seek(start);
        Tail {
            reason: Some(reason),
            error: Some(error),
            ..Tail::default()
        }
    }

    /// Writes what [`read_tail`](Self::read_tail) decoded.
    pub(super) fn write_tail(&self, w: &mut Writer, tree: &ExportTree) -> Result<()> {
        if let Some(rows) = &tree.rows {
            let row = self.row_struct(&tree.properties)?;
            w.i32(count(rows.0.len(), "rows")?);
            for (name, block) in &rows.0 {
                self.write_name_text(w, name)
                    .map_err(|e| e.within(format!("row `{name}`")))?;
                self.write_block(w, block, &row, 1)
                    .map_err(|e| e.within(format!("row `{name}`")))?;
            }
        }
        if let Some(e) = &tree.enumeration {
            w.i32(count(e.names.0.len(), "enum entries")?);
            for (name, value) in &e.names.0 {
                self.write_name_text(w, name)?;
                w.i64(value.0);
            }
            w.u8(e.cpp_form);
        }
        if let Some(table) = &tree.string_table {
            write_fstring(w, &table.namespace);
            w.i32(count(table.entries.0.len(), "string table entries")?);
            for (key, value) in &table.entries.0 {
                write_fstring(w, &super::super::tree::FStr::plain(key.as_str()));
                write_fstring(w, value);
            }
            w.i32(count(table.metadata.0.len(), "string table metadata keys")?);
            for (key, pairs) in &table.metadata.0 {
                write_fstring(w, &super::super::tree::FStr::plain(key.as_str()));
                w.i32(count(pairs.0.len(), "metadata of a key")?);
                for (name, value) in &pairs.0 {
                    self.write_name_text(w, name)?;
                    write_fstring(w, value);
                }
            }
        }
        Ok(())
    }

    /// The name of the struct a DataTable's `RowStruct` property refers to.
    fn row_struct(&self, properties: &Block) -> Result<String> {
        row_struct_name(properties).ok_or_else(|| {
            Error::invalid("the DataTable has no RowStruct property: its rows cannot be read")
        })
    }

    fn read_rows(&self, r: &mut Reader, row: &str) -> Result<Entries<Block>> {
        let n = r.count_i32(8)?;
        let mut rows = Vec::with_capacity(n);
        for _ in 0..n {
            let name = self.name(r)?;
            let block = self
                .block(r, row, 1)
                .map_err(|e| e.within_data(DataStep::Row(name.0.clone())))?;
            rows.push((name.0, block));
        }
        Ok(Entries(rows))
    }

    fn read_enum(&self, r: &mut Reader) -> Result<Enumeration> {
        let n = r.count_i32(16)?;
        let mut names = Vec::with_capacity(n);
        for _ in 0..n {
            let name = self.name(r)?;
            names.push((name.0, Wide(r.i64()?)));
        }
        Ok(Enumeration {
            names: Entries(names),
            cpp_form: r.u8()?,
        })
    }

    fn read_string_table(&self, r: &mut Reader) -> Result<StringTable> {
        let namespace = self.fstring(r)?;
        let n = r.count_i32(8)?;
        let mut entries = Vec::with_capacity(n);
        for _ in 0..n {
            let key = self.plain_key(r)?;
            entries.push((key, self.fstring(r)?));
        }
        let n = r.count_i32(8)?;
        let mut metadata = Vec::with_capacity(n);
        for _ in 0..n {
            let key = self.plain_key(r)?;
            let m = r.count_i32(12)?;
            let mut pairs = Vec::with_capacity(m);
            for _ in 0..m {
                let name = self.name(r)?;
                pairs.push((name.0, self.fstring(r)?));
            }
            metadata.push((key, Entries(pairs)));
        }
        Ok(StringTable {
            namespace,
            entries: Entries(entries),
            metadata: Entries(metadata),
        })
    }

    /// A key: an FString stored in its narrowest form (a JSON key carries no flags).
    fn plain_key(&self, r: &mut Reader) -> Result<String> {
        let at = r.pos();
        let key = self.fstring(r)?;
        if !key.is_canonical() {
            return Err(r.error_at(at, "a key stored in other than its narrowest form"));
        }
        Ok(key.text)
    }
}

fn count(n: usize, what: &str) -> Result<i32> {
    i32::try_from(n).map_err(|_| Error::limit(what, n as u64, i32::MAX as u64))
}
