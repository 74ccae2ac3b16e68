//! `.usmap` mappings files: the class/struct property schemas and enums that
//! unversioned property data needs (cooked packages carry no property names or
//! types, only an `FUnversionedHeader` whose bits index into these schemas).
//!
//! `Mappings::load`/`read` parse a whole file, `Mappings::write(BodyCompression)` writes it back
//! (uncompressed or zstd), `Mappings::new` builds one in memory (tests, tools).
//!
//! # Format
//! As written by the community dumpers UE4SS / Dumper-7 / jmap and read by CUE4Parse and UAssetAPI
//! (no Epic reference exists): `u16` magic `0x30C4`, `u8` version ([`UsmapVersion`]), from version
//! 1 an `i32` flag followed (when set) by the package versioning block (UE4/UE5 object versions,
//! custom versions, net CL), then `u8` compression, `u32` compressed size, `u32` decompressed size
//! and the body: name table (`u32` count, length-prefixed UTF-8), enums, structs (name, super,
//! slot count, serialized property count, then per property `u16` slot, `u8` static array size,
//! name, nested type), and optional extensions (`CEXT` or the legacy module list) kept as raw
//! bytes, listed by id. Names inside the body are `i32` indices into the name table (`-1` = none).
//!
//! - Versions, all read and written: 0 initial (`u8` name lengths and enum counts), 1 package
//!   versioning, 2 `u16` name lengths, 3 `u16` enum entry counts, 4 explicit `u64` enum values.
//! - BodyCompression: 0 none, 3 zstd; 1 (Oodle) and 2 (Brotli) are refused with the hint "re-export
//!   the mappings without compression (or with zstd)".
//! - Type codes 0–30 plus 0xFF (`Unknown`: a type the dumper could not name, e.g. 5.6
//!   `FUtf8String`; readable, but the walker refuses to step over one). Nesting is limited to 16.
//!
//! # Limits and rules
//! - An uncompressed body is the rest of the file whatever the header's sizes say (reference
//!   readers ignore them; shipped mappings overstate them); a mismatch is a `usmap-size-mismatch`
//!   warning in `Mappings::diagnostics` (shown by `inspect`).
//! - A zstd body may claim at most 32 × its stored size + 1 MiB, 256 MiB in all (real mappings
//!   compress ~3.5:1); more is a `limit` error. Every count is checked against the remaining bytes
//!   (`tests/profiles/mappings_bounded.rs`).
//! - Lookups are case-insensitive (FNames are); `chain(name)` returns a struct and its supers,
//!   detecting missing supers and loops.
//! - Name tables may hold duplicates (`Engine.usmap` has two `None`), so the writer's indices can
//!   differ from the file's.
//!
//! # Tests
//! `tests/profiles/mappings_corpus.rs`: all six `uassetapi/*/*.usmap` (versions 0, 3, 4; none and
//! zstd; one with `PPTH`/`EATR`/`ENVP` extensions) parse, re-read identically after writing, and
//! survive truncation and byte flips.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use serde::Serialize;

use crate::binary::{Reader, Writer};
use crate::diagnostic::Diagnostic;
use crate::error::{Context, Error, Result};

/// File magic `C4 30`.
pub const USMAP_MAGIC: u16 = 0x30C4;

/// `.usmap` file versions; each adds one thing to the layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum UsmapVersion {
    /// Names have a `u8` length, enums a `u8` entry count.
    Initial = 0,
    /// Adds the optional package versioning block to the header.
    PackageVersioning = 1,
    /// Name lengths become `u16`.
    LongFName = 2,
    /// Enum entry counts become `u16`.
    LargeEnums = 3,
    /// Enum entries carry an explicit `u64` value before their name.
    ExplicitEnumValues = 4,
}

impl UsmapVersion {
    pub const LATEST: UsmapVersion = UsmapVersion::ExplicitEnumValues;

    fn from_u8(v: u8) -> Option<Self> {
        Some(match v {
            0 => UsmapVersion::Initial,
            1 => UsmapVersion::PackageVersioning,
            2 => UsmapVersion::LongFName,
            3 => UsmapVersion::LargeEnums,
            4 => UsmapVersion::ExplicitEnumValues,
            _ => return None,
        })
    }
}

/// How the body is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum BodyCompression {
    None = 0,
    Oodle = 1,
    Brotli = 2,
    Zstd = 3,
}

/// The engine versions the mappings were dumped from (optional header block).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PackageVersioning {
    pub(crate) file_version_ue4: i32,
    pub(crate) file_version_ue5: i32,
    /// Custom versions: GUID (16 raw bytes, as hex) and version number.
    pub(crate) custom_versions: Vec<([u8; 16], i32)>,
    pub(crate) net_cl: u32,
}

impl PackageVersioning {
    fn read(r: &mut Reader) -> Result<Self> {
        let file_version_ue4 = r.i32()?;
        let file_version_ue5 = r.i32()?;
        let count = r.count_i32(20).context("custom versions")?;
        let mut custom_versions = Vec::with_capacity(count);
        for _ in 0..count {
            custom_versions.push((r.guid()?, r.i32()?));
        }
        let net_cl = r.u32()?;
        Ok(PackageVersioning {
            file_version_ue4,
            file_version_ue5,
            custom_versions,
            net_cl,
        })
    }

    fn write(&self, w: &mut Writer) {
        w.i32(self.file_version_ue4);
        w.i32(self.file_version_ue5);
        w.i32(self.custom_versions.len() as i32);
        for (guid, version) in &self.custom_versions {
            w.guid(guid);
            w.i32(*version);
        }
        w.u32(self.net_cl);
    }
}

/// A property type as the mappings describe it (nested for containers).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum PropertyType {
    Byte,
    Bool,
    Int,
    Float,
    Object,
    Name,
    Delegate,
    Double,
    Array(Box<PropertyType>),
    Struct(String),
    Str,
    Text,
    Interface,
    MulticastDelegate,
    WeakObject,
    LazyObject,
    AssetObject,
    SoftObject,
    UInt64,
    UInt32,
    UInt16,
    Int64,
    Int16,
    Int8,
    Map(Box<PropertyType>, Box<PropertyType>),
    Set(Box<PropertyType>),
    /// An enum stored as its underlying integer property.
    Enum {
        underlying: Box<PropertyType>,
        enum_name: String,
    },
    FieldPath,
    Optional(Box<PropertyType>),
    Utf8Str,
    AnsiStr,
    /// A type the dumper could not name (code 0xFF, e.g. `FUtf8String` fields
    /// in 5.6 dumps). Readable in the mappings; the walker cannot step over one.
    Unknown,
}

/// Containers nest; a hostile file could nest forever.
const MAX_TYPE_DEPTH: usize = 16;

impl PropertyType {
    /// The type an `FProperty` class name gives when the property carries
    /// nothing but its kind (numbers, names, strings, texts): the names a
    /// tag and a class's own field list share.
    pub(crate) fn plain(type_name: &str) -> Option<Self> {
        Some(match type_name {
            "Int8Property" => PropertyType::Int8,
            "Int16Property" => PropertyType::Int16,
            "IntProperty" => PropertyType::Int,
            "Int64Property" => PropertyType::Int64,
            "UInt16Property" => PropertyType::UInt16,
            "UInt32Property" => PropertyType::UInt32,
            "UInt64Property" => PropertyType::UInt64,
            "FloatProperty" => PropertyType::Float,
            "DoubleProperty" => PropertyType::Double,
            "NameProperty" => PropertyType::Name,
            "StrProperty" => PropertyType::Str,
            "TextProperty" => PropertyType::Text,
            _ => return None,
        })
    }

    fn code(&self) -> u8 {
        match self {
            PropertyType::Byte => 0,
            PropertyType::Bool => 1,
            PropertyType::Int => 2,
            PropertyType::Float => 3,
            PropertyType::Object => 4,
            PropertyType::Name => 5,
            PropertyType::Delegate => 6,
            PropertyType::Double => 7,
            PropertyType::Array(_) => 8,
            PropertyType::Struct(_) => 9,
            PropertyType::Str => 10,
            PropertyType::Text => 11,
            PropertyType::Interface => 12,
            PropertyType::MulticastDelegate => 13,
            PropertyType::WeakObject => 14,
            PropertyType::LazyObject => 15,
            PropertyType::AssetObject => 16,
            PropertyType::SoftObject => 17,
            PropertyType::UInt64 => 18,
            PropertyType::UInt32 => 19,
            PropertyType::UInt16 => 20,
            PropertyType::Int64 => 21,
            PropertyType::Int16 => 22,
            PropertyType::Int8 => 23,
            PropertyType::Map(..) => 24,
            PropertyType::Set(_) => 25,
            PropertyType::Enum { .. } => 26,
            PropertyType::FieldPath => 27,
            PropertyType::Optional(_) => 28,
            PropertyType::Utf8Str => 29,
            PropertyType::AnsiStr => 30,
            PropertyType::Unknown => 0xFF,
        }
    }

    /// The engine's class name for the type (`IntProperty`, `StructProperty`, …).
    pub(crate) fn type_name(&self) -> &'static str {
        match self {
            PropertyType::Byte => "ByteProperty",
            PropertyType::Bool => "BoolProperty",
            PropertyType::Int => "IntProperty",
            PropertyType::Float => "FloatProperty",
            PropertyType::Object => "ObjectProperty",
            PropertyType::Name => "NameProperty",
            PropertyType::Delegate => "DelegateProperty",
            PropertyType::Double => "DoubleProperty",
            PropertyType::Array(_) => "ArrayProperty",
            PropertyType::Struct(_) => "StructProperty",
            PropertyType::Str => "StrProperty",
            PropertyType::Text => "TextProperty",
            PropertyType::Interface => "InterfaceProperty",
            PropertyType::MulticastDelegate => "MulticastDelegateProperty",
            PropertyType::WeakObject => "WeakObjectProperty",
            PropertyType::LazyObject => "LazyObjectProperty",
            PropertyType::AssetObject => "AssetObjectProperty",
            PropertyType::SoftObject => "SoftObjectProperty",
            PropertyType::UInt64 => "UInt64Property",
            PropertyType::UInt32 => "UInt32Property",
            PropertyType::UInt16 => "UInt16Property",
            PropertyType::Int64 => "Int64Property",
            PropertyType::Int16 => "Int16Property",
            PropertyType::Int8 => "Int8Property",
            PropertyType::Map(..) => "MapProperty",
            PropertyType::Set(_) => "SetProperty",
            PropertyType::Enum { .. } => "EnumProperty",
            PropertyType::FieldPath => "FieldPathProperty",
            PropertyType::Optional(_) => "OptionalProperty",
            PropertyType::Utf8Str => "Utf8StrProperty",
            PropertyType::AnsiStr => "AnsiStrProperty",
            PropertyType::Unknown => "UnknownProperty",
        }
    }

    /// `ArrayProperty<StructProperty<Vector>>` style description.
    pub(crate) fn describe(&self) -> String {
        match self {
            PropertyType::Array(t) | PropertyType::Set(t) | PropertyType::Optional(t) => {
                format!("{}<{}>", self.type_name(), t.describe())
            }
            PropertyType::Map(k, v) => format!("MapProperty<{}, {}>", k.describe(), v.describe()),
            PropertyType::Struct(s) => format!("StructProperty<{s}>"),
            PropertyType::Enum {
                underlying,
                enum_name,
            } => {
                format!("EnumProperty<{enum_name}, {}>", underlying.describe())
            }
            _ => self.type_name().to_string(),
        }
    }

    fn read(r: &mut Reader, names: &NameTable, depth: usize) -> Result<Self> {
        if depth > MAX_TYPE_DEPTH {
            return Err(r.error(format!(
                "property types nest deeper than {MAX_TYPE_DEPTH} levels"
            )));
        }
        let at = r.pos();
        let code = r.u8()?;
        let inner = |r: &mut Reader| -> Result<Box<PropertyType>> {
            Ok(Box::new(PropertyType::read(r, names, depth + 1)?))
        };
        Ok(match code {
            0 => PropertyType::Byte,
            1 => PropertyType::Bool,
            2 => PropertyType::Int,
            3 => PropertyType::Float,
            4 => PropertyType::Object,
            5 => PropertyType::Name,
            6 => PropertyType::Delegate,
            7 => PropertyType::Double,
            8 => PropertyType::Array(inner(r)?),
            9 => PropertyType::Struct(names.required(r)?),
            10 => PropertyType::Str,
            11 => PropertyType::Text,
            12 => PropertyType::Interface,
            13 => PropertyType::MulticastDelegate,
            14 => PropertyType::WeakObject,
            15 => PropertyType::LazyObject,
            16 => PropertyType::AssetObject,
            17 => PropertyType::SoftObject,
            18 => PropertyType::UInt64,
            19 => PropertyType::UInt32,
            20 => PropertyType::UInt16,
            21 => PropertyType::Int64,
            22 => PropertyType::Int16,
            23 => PropertyType::Int8,
            24 => {
                let key = inner(r)?;
                PropertyType::Map(key, inner(r)?)
            }
            25 => PropertyType::Set(inner(r)?),
            26 => {
                let underlying = inner(r)?;
                PropertyType::Enum {
                    underlying,
                    enum_name: names.required(r)?,
                }
            }
            27 => PropertyType::FieldPath,
            28 => PropertyType::Optional(inner(r)?),
            29 => PropertyType::Utf8Str,
            30 => PropertyType::AnsiStr,
            0xFF => PropertyType::Unknown,
            other => return Err(r.error_at(at, format!("unknown property type code {other}"))),
        })
    }

    fn write(&self, w: &mut Writer, names: &NameWriter) {
        w.u8(self.code());
        match self {
            PropertyType::Array(t) | PropertyType::Set(t) | PropertyType::Optional(t) => {
                t.write(w, names)
            }
            PropertyType::Struct(s) => names.write(w, Some(s)),
            PropertyType::Map(k, v) => {
                k.write(w, names);
                v.write(w, names);
            }
            PropertyType::Enum {
                underlying,
                enum_name,
            } => {
                underlying.write(w, names);
                names.write(w, Some(enum_name));
            }
            _ => {}
        }
    }

    pub(crate) fn collect_names<'a>(&'a self, out: &mut Vec<&'a str>) {
        match self {
            PropertyType::Array(t) | PropertyType::Set(t) | PropertyType::Optional(t) => {
                t.collect_names(out)
            }
            PropertyType::Struct(s) => out.push(s),
            PropertyType::Map(k, v) => {
                k.collect_names(out);
                v.collect_names(out);
            }
            PropertyType::Enum {
                underlying,
                enum_name,
            } => {
                underlying.collect_names(out);
                out.push(enum_name);
            }
            _ => {}
        }
    }
}

/// One enum: its entries as (value, name). Without explicit values (before
/// version 4) the value is the entry's position.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EnumSchema {
    pub(crate) name: String,
    pub entries: Vec<(u64, String)>,
}

impl EnumSchema {
    fn read(r: &mut Reader, names: &NameTable, version: UsmapVersion) -> Result<Self> {
        let name = names.required(r).context("enum name")?;
        let count = if version >= UsmapVersion::LargeEnums {
            r.u16()? as usize
        } else {
            r.u8()? as usize
        };
        let explicit = version >= UsmapVersion::ExplicitEnumValues;
        r.check_count(count as i64, if explicit { 12 } else { 4 })?;
        let mut entries = Vec::with_capacity(count);
        for position in 0..count {
            let value = if explicit { r.u64()? } else { position as u64 };
            entries.push((value, names.required(r)?));
        }
        Ok(EnumSchema { name, entries })
    }

    fn write(&self, w: &mut Writer, names: &NameWriter, version: UsmapVersion) {
        names.write(w, Some(&self.name));
        if version >= UsmapVersion::LargeEnums {
            w.u16(self.entries.len() as u16);
        } else {
            w.u8(self.entries.len() as u8);
        }
        for (value, name) in &self.entries {
            if version >= UsmapVersion::ExplicitEnumValues {
                w.u64(*value);
            }
            names.write(w, Some(name));
        }
    }

    /// The name of the entry with `value`, if any.
    pub(crate) fn name_of(&self, value: u64) -> Option<&str> {
        self.entries
            .iter()
            .find(|(v, _)| *v == value)
            .map(|(_, n)| n.as_str())
    }
}

/// One serialized property of a struct or class.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PropertySchema {
    /// Position of the property among its struct's own properties (array
    /// elements take `array_size` consecutive positions).
    pub schema_index: u16,
    /// Static array dimension (`int32 Foo[4]` has 4); usually 1.
    pub array_size: u8,
    pub name: String,
    pub ty: PropertyType,
}

impl PropertySchema {
    fn read(r: &mut Reader, names: &NameTable) -> Result<Self> {
        let schema_index = r.u16()?;
        let array_size = r.u8()?;
        let name = names.required(r).context("property name")?;
        let ty =
            PropertyType::read(r, names, 0).with_context(|| format!("type of property {name}"))?;
        Ok(PropertySchema {
            schema_index,
            array_size,
            name,
            ty,
        })
    }

    fn write(&self, w: &mut Writer, names: &NameWriter) {
        w.u16(self.schema_index);
        w.u8(self.array_size);
        names.write(w, Some(&self.name));
        self.ty.write(w, names);
    }
}

/// A class or struct schema. Its property indices follow the super struct's:
/// an unversioned header counts the super chain's properties first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StructSchema {
    pub name: String,
    pub super_name: Option<String>,
    /// Number of property slots this struct adds (array elements counted one by one).
    pub property_count: u16,
    /// The serialized properties, as stored (ordered by the file).
    pub properties: Vec<PropertySchema>,
}

impl StructSchema {
    fn read(r: &mut Reader, names: &NameTable) -> Result<Self> {
        let name = names.required(r).context("struct name")?;
        let super_name = names.optional(r).context("super struct name")?;
        let property_count = r.u16()?;
        let serialized = r.u16()? as usize;
        r.check_count(serialized as i64, 8)?;
        let mut properties = Vec::with_capacity(serialized);
        for i in 0..serialized {
            let p = PropertySchema::read(r, names).with_context(|| format!("property {i}"))?;
            let end = p.schema_index as u32 + p.array_size.max(1) as u32;
            if end > property_count as u32 {
                return Err(r.error(format!(
                    "property {} occupies slots up to {end} but the struct has {property_count}",
                    p.name
                )));
            }
            properties.push(p);
        }
        Ok(StructSchema {
            name,
            super_name,
            property_count,
            properties,
        })
    }

    fn write(&self, w: &mut Writer, names: &NameWriter) {
        names.write(w, Some(&self.name));
        names.write(w, self.super_name.as_deref());
        w.u16(self.property_count);
        w.u16(self.properties.len() as u16);
        for p in &self.properties {
            p.write(w, names);
        }
    }

    /// The property at own slot `slot` and the array element it stands for.
    pub(crate) fn property_at(&self, slot: u16) -> Option<(&PropertySchema, u8)> {
        self.properties.iter().find_map(|p| {
            let size = p.array_size.max(1) as u16;
            (slot >= p.schema_index && slot < p.schema_index + size)
                .then(|| (p, (slot - p.schema_index) as u8))
        })
    }
}

/// The name table while reading: indices in the body resolve through it.
struct NameTable {
    names: Vec<String>,
}

impl NameTable {
    fn read(r: &mut Reader, version: UsmapVersion) -> Result<Self> {
        let count = r.count_u32(1)?;
        let mut names = Vec::with_capacity(count);
        for i in 0..count {
            let len = if version >= UsmapVersion::LongFName {
                r.u16()? as usize
            } else {
                r.u8()? as usize
            };
            let at = r.pos();
            let bytes = r.bytes(len).with_context(|| format!("name {i}"))?;
            let s = std::str::from_utf8(bytes)
                .map_err(|_| r.error_at(at, format!("name {i} is not valid UTF-8")))?;
            names.push(s.to_string());
        }
        Ok(NameTable { names })
    }

    fn optional(&self, r: &mut Reader) -> Result<Option<String>> {
        let at = r.pos();
        let index = r.i32()?;
        if index == -1 {
            return Ok(None);
        }
        match usize::try_from(index).ok().and_then(|i| self.names.get(i)) {
            Some(s) => Ok(Some(s.clone())),
            None => Err(r.error_at(
                at,
                format!(
                    "name index {index} is outside the name table ({} names)",
                    self.names.len()
                ),
            )),
        }
    }

    fn required(&self, r: &mut Reader) -> Result<String> {
        let at = r.pos();
        self.optional(r)?
            .ok_or_else(|| r.error_at(at, "name index is -1 (none) where a name is required"))
    }
}

/// The name table while writing: name → index.
struct NameWriter {
    index: BTreeMap<String, i32>,
}

impl NameWriter {
    fn write(&self, w: &mut Writer, name: Option<&str>) {
        match name {
            None => w.i32(-1),
            Some(n) => w.i32(self.index[n]),
        }
    }
}

/// A parsed `.usmap` file.
#[derive(Debug, Clone, Serialize)]
pub struct Mappings {
    pub version: UsmapVersion,
    pub package_versioning: Option<PackageVersioning>,
    pub compression: BodyCompression,
    /// The name table, in file order.
    pub names: Vec<String>,
    pub enums: Vec<EnumSchema>,
    pub structs: Vec<StructSchema>,
    /// Ids of extension blocks found after the structs (kept, not interpreted).
    pub(crate) extensions: Vec<String>,
    /// Raw bytes after the structs (extensions), written back as they were.
    #[serde(skip)]
    pub trailing: Vec<u8>,
    /// What was odd but readable (e.g. an uncompressed body whose declared
    /// size disagrees with the file): for the caller to show.
    #[serde(skip)]
    pub diagnostics: Vec<Diagnostic>,
    /// The file the mappings were loaded from, named in errors about them.
    #[serde(skip)]
    pub(crate) source: Option<std::path::PathBuf>,
    #[serde(skip)]
    struct_lookup: BTreeMap<String, usize>,
    #[serde(skip)]
    enum_lookup: BTreeMap<String, usize>,
    /// Each name as spelled → what the case-insensitive lookup gives it (the
    /// common case, without lowering the name).
    #[serde(skip)]
    struct_exact: std::collections::HashMap<String, usize>,
    #[serde(skip)]
    enum_exact: std::collections::HashMap<String, usize>,
}

/// Struct schemas laid over mappings without copying them (the classes
/// and structs a package's data needs that content defines, e.g.
/// blueprints): [`Mappings::view`] looks them up after the mappings' own.
#[derive(Debug)]
pub struct ExtraStructs {
    structs: Vec<StructSchema>,
    /// Lower-case name → index (the first of duplicates wins).
    lookup: HashMap<String, usize>,
}

impl ExtraStructs {
    pub fn new(structs: Vec<StructSchema>) -> Self {
        let mut lookup = HashMap::with_capacity(structs.len());
        for (i, s) in structs.iter().enumerate() {
            lookup.entry(s.name.to_ascii_lowercase()).or_insert(i);
        }
        ExtraStructs { structs, lookup }
    }

    fn get(&self, name: &str) -> Option<&StructSchema> {
        self.lookup
            .get(&name.to_ascii_lowercase())
            .map(|&i| &self.structs[i])
    }
}

/// The one place schemas are looked up: mappings, and the struct schemas
/// laid over them (the mappings' own win over duplicates).
#[derive(Debug, Clone, Copy)]
pub struct SchemaView<'a> {
    base: &'a Mappings,
    extra: Option<&'a ExtraStructs>,
}

impl<'a> From<&'a Mappings> for SchemaView<'a> {
    fn from(base: &'a Mappings) -> Self {
        base.view(None)
    }
}

impl<'a> SchemaView<'a> {
    /// The schema of a struct or class by name (case-insensitive, as FNames are).
    pub fn struct_schema(self, name: &str) -> Option<&'a StructSchema> {
        self.base
            .struct_schema(name)
            .or_else(|| self.extra.and_then(|e| e.get(name)))
    }

    pub(crate) fn enum_schema(self, name: &str) -> Option<&'a EnumSchema> {
        self.base.enum_schema(name)
    }

    /// The super chain of a struct, the struct itself first. Errors on a
    /// missing super struct or a cycle.
    pub fn chain(self, name: &str) -> Result<Vec<&'a StructSchema>> {
        // Damaged or foreign mappings are named, so they can be replaced.
        let from = || match &self.base.source {
            Some(path) => format!(" ({})", path.display()),
            None => String::new(),
        };
        let mut out: Vec<&'a StructSchema> = Vec::with_capacity(4);
        let mut current = Some(name);
        while let Some(n) = current {
            // Not the file's fault: the dumper did not record that struct.
            let s = self.struct_schema(n).ok_or_else(|| {
                Error::unsupported(match out.last() {
                    None => format!("the mappings{} have no schema for `{n}`", from()),
                    Some(child) => format!(
                        "the mappings{} have no schema for `{n}`, super struct of `{}`",
                        from(),
                        child.name
                    ),
                })
            })?;
            if out.iter().any(|o| std::ptr::eq(*o, s)) || out.len() > 256 {
                return Err(Error::invalid(format!(
                    "the super struct chain of `{name}` in the mappings{} loops at `{}`",
                    from(),
                    s.name
                )));
            }
            out.push(s);
            current = s.super_name.as_deref();
        }
        Ok(out)
    }
}

/// Upper bound of a decompressed body; real files are a few MB.
pub(crate) const MAX_BODY: usize = 256 << 20;

/// A compressed body may claim at most this many times its stored size
/// (plus [`BODY_RATIO_SLACK`]): real zstd mappings compress about 3.5:1,
/// while a zstd frame of zeros can claim a thousand times its size, which
/// is how a 33 KB file used to cost 2 GB.
pub(crate) const MAX_BODY_RATIO: usize = 32;
const BODY_RATIO_SLACK: usize = 1 << 20;

impl Mappings {
    /// Reads a `.usmap` file from disk.
    pub fn load(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
        let mut mappings = Mappings::read(&bytes).map_err(|e| e.in_file(path))?;
        mappings.source = Some(path.to_path_buf());
        Ok(mappings)
    }

    /// Parses a whole `.usmap` file.
    pub fn read(bytes: &[u8]) -> Result<Self> {
        let mut r = Reader::new(bytes);
        let magic = r.u16().context("usmap header")?;
        if magic != USMAP_MAGIC {
            return Err(Error::format(
                0,
                format!("not a .usmap file: magic 0x{magic:04X}, expected 0x30C4"),
            )
            .within("usmap header"));
        }
        let at = r.pos();
        let raw_version = r.u8().context("usmap header")?;
        let version = UsmapVersion::from_u8(raw_version).ok_or_else(|| {
            r.error_at(
                at,
                format!(
                    "unknown .usmap version {raw_version} (zenpak reads 0..={})",
                    UsmapVersion::LATEST as u8
                ),
            )
            .within("usmap header")
        })?;
        let mut package_versioning = None;
        if version >= UsmapVersion::PackageVersioning {
            let at = r.pos();
            let flag = r.i32().context("usmap header")?;
            match flag {
                0 => {}
                1 => {
                    package_versioning =
                        Some(PackageVersioning::read(&mut r).context("usmap package versioning")?)
                }
                v => {
                    return Err(r
                        .error_at(
                            at,
                            format!("package versioning flag is {v}, expected 0 or 1"),
                        )
                        .within("usmap header"))
                }
            }
        }
        let mut diagnostics = Vec::new();
        let (compression, body) = read_stored_body(&mut r, &mut diagnostics)?;
        let mut mappings = Mappings::read_body(&body, version)?;
        mappings.package_versioning = package_versioning;
        mappings.compression = compression;
        mappings.diagnostics = diagnostics;
        Ok(mappings)
    }

    /// Parses the (decompressed) body. Offsets in errors are body offsets.
    fn read_body(body: &[u8], version: UsmapVersion) -> Result<Self> {
        let mut r = Reader::new(body);
        let names = NameTable::read(&mut r, version).context("usmap name table")?;
        let enum_count = r.count_u32(5).context("usmap enums")?;
        let mut enums = Vec::with_capacity(enum_count);
        for i in 0..enum_count {
            enums.push(
                EnumSchema::read(&mut r, &names, version)
                    .with_context(|| format!("usmap enum {i}"))?,
            );
        }
        let struct_count = r.count_u32(12).context("usmap structs")?;
        let mut structs = Vec::with_capacity(struct_count);
        for i in 0..struct_count {
            structs.push(
                StructSchema::read(&mut r, &names).with_context(|| format!("usmap struct {i}"))?,
            );
        }
        let trailing = r.rest().to_vec();
        let extensions = read_extension_ids(&mut r).context("usmap extensions")?;
        let mut mappings = Mappings {
            version,
            package_versioning: None,
            compression: BodyCompression::None,
            names: names.names,
            enums,
            structs,
            extensions,
            trailing,
            diagnostics: Vec::new(),
            source: None,
            struct_lookup: BTreeMap::new(),
            enum_lookup: BTreeMap::new(),
            struct_exact: Default::default(),
            enum_exact: Default::default(),
        };
        mappings.build_lookups();
        Ok(mappings)
    }

    /// Mappings made in memory (tests, tools); the name table is derived from the schemas.
    pub fn new(version: UsmapVersion, enums: Vec<EnumSchema>, structs: Vec<StructSchema>) -> Self {
        let mut used: Vec<&str> = Vec::new();
        for e in &enums {
            used.push(&e.name);
            used.extend(e.entries.iter().map(|(_, n)| n.as_str()));
        }
        for s in &structs {
            used.push(&s.name);
            used.extend(s.super_name.as_deref());
            for p in &s.properties {
                used.push(&p.name);
                p.ty.collect_names(&mut used);
            }
        }
        let mut names: Vec<String> = Vec::new();
        for n in used {
            if !names.iter().any(|m| m == n) {
                names.push(n.to_string());
            }
        }
        let mut m = Mappings {
            version,
            package_versioning: None,
            compression: BodyCompression::None,
            names,
            enums,
            structs,
            extensions: Vec::new(),
            trailing: Vec::new(),
            diagnostics: Vec::new(),
            source: None,
            struct_lookup: BTreeMap::new(),
            enum_lookup: BTreeMap::new(),
            struct_exact: Default::default(),
            enum_exact: Default::default(),
        };
        m.build_lookups();
        m
    }

    /// These mappings seen through [`SchemaView`], with `extra` laid over them.
    pub fn view<'a>(&'a self, extra: Option<&'a ExtraStructs>) -> SchemaView<'a> {
        SchemaView { base: self, extra }
    }

    /// A copy with more struct schemas, for mappings of one's own (tests,
    /// tools). Reading a package lays its content's schemas over the
    /// mappings instead ([`Mappings::view`]), without a copy.
    pub fn with_extra_structs(&self, extra: Vec<StructSchema>) -> Mappings {
        let mut m = self.clone();
        let mut known: std::collections::HashSet<&str> =
            self.names.iter().map(String::as_str).collect();
        for s in &extra {
            let mut names = vec![s.name.as_str()];
            names.extend(s.super_name.as_deref());
            for p in &s.properties {
                names.push(&p.name);
                p.ty.collect_names(&mut names);
            }
            for n in names {
                if known.insert(n) {
                    m.names.push(n.to_string());
                }
            }
        }
        // The copy's lookups hold the structs it has; the extra ones are
        // added after them (the first of duplicates wins).
        let first_extra = m.structs.len();
        m.structs.extend(extra);
        m.add_struct_lookups(first_extra);
        m
    }

    fn build_lookups(&mut self) {
        // FNames compare case-insensitively; the first of duplicates wins.
        for (i, e) in self.enums.iter().enumerate() {
            self.enum_lookup
                .entry(e.name.to_ascii_lowercase())
                .or_insert(i);
        }
        for e in &self.enums {
            let i = self.enum_lookup[&e.name.to_ascii_lowercase()];
            self.enum_exact.entry(e.name.clone()).or_insert(i);
        }
        self.add_struct_lookups(0);
    }

    /// Adds the structs from index `first` on to the lookups (which hold
    /// those before it).
    fn add_struct_lookups(&mut self, first: usize) {
        for (i, s) in self.structs.iter().enumerate().skip(first) {
            self.struct_lookup
                .entry(s.name.to_ascii_lowercase())
                .or_insert(i);
        }
        for s in self.structs.iter().skip(first) {
            let i = self.struct_lookup[&s.name.to_ascii_lowercase()];
            self.struct_exact.entry(s.name.clone()).or_insert(i);
        }
    }

    /// Writes the file back (uncompressed or zstd; the body keeps the name table as read).
    pub fn write(&self, compression: BodyCompression) -> Result<Vec<u8>> {
        let body = self.write_body()?;
        let mut w = Writer::new();
        w.u16(USMAP_MAGIC);
        w.u8(self.version as u8);
        if self.version >= UsmapVersion::PackageVersioning {
            match &self.package_versioning {
                None => w.i32(0),
                Some(v) => {
                    w.i32(1);
                    v.write(&mut w);
                }
            }
        }
        let stored = match compression {
            BodyCompression::None => body.clone(),
            BodyCompression::Zstd => zstd::bulk::compress(&body, 19)
                .map_err(|e| Error::internal(format!("zstd compression failed: {e}")))?,
            other => {
                return Err(Error::usage(format!(
                    "cannot write {other:?}-compressed mappings"
                )))
            }
        };
        w.u8(compression as u8);
        w.u32(stored.len() as u32);
        w.u32(body.len() as u32);
        w.bytes(&stored);
        Ok(w.into_inner())
    }

    fn write_body(&self) -> Result<Vec<u8>> {
        // Every name the body refers to must be in the table.
        let mut index = BTreeMap::new();
        for (i, n) in self.names.iter().enumerate() {
            index.entry(n.clone()).or_insert(i as i32);
        }
        let mut used: Vec<&str> = Vec::new();
        for e in &self.enums {
            used.push(&e.name);
            used.extend(e.entries.iter().map(|(_, n)| n.as_str()));
        }
        for s in &self.structs {
            used.push(&s.name);
            used.extend(s.super_name.as_deref());
            for p in &s.properties {
                used.push(&p.name);
                p.ty.collect_names(&mut used);
            }
        }
        if let Some(missing) = used.iter().find(|n| !index.contains_key(**n)) {
            return Err(Error::internal(format!(
                "mappings refer to `{missing}`, which is not in the name table"
            )));
        }
        let names = NameWriter { index };
        let mut w = Writer::new();
        w.u32(self.names.len() as u32);
        for n in &self.names {
            if self.version >= UsmapVersion::LongFName {
                w.u16(n.len() as u16);
            } else {
                w.u8(n.len() as u8);
            }
            w.bytes(n.as_bytes());
        }
        w.u32(self.enums.len() as u32);
        for e in &self.enums {
            e.write(&mut w, &names, self.version);
        }
        w.u32(self.structs.len() as u32);
        for s in &self.structs {
            s.write(&mut w, &names);
        }
        w.bytes(&self.trailing);
        Ok(w.into_inner())
    }

    /// The schema of a struct or class by name (case-insensitive, as FNames are).
    pub fn struct_schema(&self, name: &str) -> Option<&StructSchema> {
        self.struct_exact
            .get(name)
            .or_else(|| self.struct_lookup.get(&name.to_ascii_lowercase()))
            .map(|&i| &self.structs[i])
    }

    pub(crate) fn enum_schema(&self, name: &str) -> Option<&EnumSchema> {
        self.enum_exact
            .get(name)
            .or_else(|| self.enum_lookup.get(&name.to_ascii_lowercase()))
            .map(|&i| &self.enums[i])
    }

    /// The super chain of a struct, the struct itself first (see
    /// [`SchemaView::chain`]).
    pub fn chain(&self, name: &str) -> Result<Vec<&StructSchema>> {
        self.view(None).chain(name)
    }

    /// Counts shown by `zenpak inspect`.
    pub fn summary(&self) -> MappingsSummary {
        MappingsSummary {
            kind: "usmap",
            version: self.version as u8,
            compression: self.compression,
            package_versioning: self
                .package_versioning
                .as_ref()
                .map(|v| (v.file_version_ue4, v.file_version_ue5)),
            names: self.names.len(),
            enums: self.enums.len(),
            structs: self.structs.len(),
            properties: self.structs.iter().map(|s| s.properties.len()).sum(),
            extensions: self.extensions.clone(),
            diagnostics: self.diagnostics.clone(),
        }
    }
}

/// The counts of a mappings file.
#[derive(Debug, Clone, Serialize)]
pub struct MappingsSummary {
    pub(crate) kind: &'static str,
    pub version: u8,
    pub compression: BodyCompression,
    /// UE4 and UE5 object versions the mappings were dumped from, when given.
    pub package_versioning: Option<(i32, i32)>,
    pub names: usize,
    pub enums: usize,
    pub structs: usize,
    pub properties: usize,
    pub extensions: Vec<String>,
    /// Warnings from reading (see [`Mappings::diagnostics`]).
    pub(crate) diagnostics: Vec<Diagnostic>,
}

/// Extensions after the structs: `CEXT` magic, `u8` layout version, `i32`
/// count, then per extension a 4-character id and a `u32` length. An older
/// form stores a bare module-path list after a `u32` 1. We only list them.
fn read_extension_ids(r: &mut Reader) -> Result<Vec<String>> {
    if r.at_end() {
        return Ok(Vec::new());
    }
    let magic = r.u32()?;
    if magic == 1 {
        return Ok(vec!["MODL".to_string()]);
    }
    if magic != u32::from_le_bytes(*b"CEXT") {
        return Err(r.error(format!("unknown data after the structs (0x{magic:08X})")));
    }
    let layout = r.u8()?;
    if layout != 0 {
        return Err(r.error(format!("unknown extension layout version {layout}")));
    }
    let count = r.count_i32(8)?;
    let mut ids = Vec::with_capacity(count);
    for _ in 0..count {
        let id = r.array::<4>()?;
        let len = r.u32()? as usize;
        r.skip(len).context("extension body")?;
        ids.push(String::from_utf8_lossy(&id).into_owned());
    }
    if !r.at_end() {
        return Err(r.error(format!("{} bytes follow the last extension", r.remaining())));
    }
    Ok(ids)
}

/// The body as stored after the header: its compression and its bytes
/// (decompressed, within the size limits).
fn read_stored_body<'a>(
    r: &mut Reader<'a>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Result<(BodyCompression, std::borrow::Cow<'a, [u8]>)> {
    let at = r.pos();
    let method = r.u8().context("usmap header")?;
    let compressed_size = r.u32().context("usmap header")? as usize;
    let decompressed_size = r.u32().context("usmap header")? as usize;
    let body_at = r.offset();
    let body = match method {
        0 => {
            // The reference readers take the rest of the file as the
            // body whatever the header says; shipped mappings exist
            // whose declared size is larger than what follows.
            let rest = r.rest();
            if compressed_size != rest.len() || decompressed_size != rest.len() {
                diagnostics.push(
                        Diagnostic::warning(
                            "usmap-size-mismatch",
                            format!(
                                "the header declares a {compressed_size}-byte body ({decompressed_size} decompressed), \
                                 but {} bytes follow; the rest of the file was read as the body",
                                rest.len()
                            ),
                        )
                        .with_hint("the mappings were written by a dumper that records the size wrongly; re-export them if anything is missing"),
                    );
            }
            (BodyCompression::None, rest.into())
        }
        1 => {
            return Err(Error::format(
                at as u64,
                "the body is Oodle-compressed, which zenpak does not support",
            )
            .within("usmap header")
            .with_hint("re-export the mappings without compression (or with zstd)"))
        }
        2 => {
            return Err(Error::format(
                at as u64,
                "the body is Brotli-compressed, which zenpak does not support",
            )
            .within("usmap header")
            .with_hint("re-export the mappings without compression (or with zstd)"))
        }
        3 => {
            let stored = r.bytes(compressed_size).context("usmap body")?;
            if !r.at_end() {
                return Err(r
                    .error(format!(
                        "{} bytes follow the compressed body",
                        r.remaining()
                    ))
                    .within("usmap body"));
            }
            let limit = (stored.len() * MAX_BODY_RATIO + BODY_RATIO_SLACK).min(MAX_BODY);
            if decompressed_size > limit {
                return Err(Error::limit(
                    "the declared decompressed size of the body",
                    decompressed_size as u64,
                    limit as u64,
                )
                .at(at as u64 + 5)
                .within("usmap header")
                .with_hint("the file is corrupt: real mappings compress about 3.5:1"));
            }
            let body = zstd::bulk::decompress(stored, decompressed_size).map_err(|e| {
                Error::format(body_at, format!("zstd body does not decompress: {e}"))
                    .within("usmap body")
            })?;
            if body.len() != decompressed_size {
                return Err(Error::format(
                    body_at,
                    format!(
                        "zstd body decompresses to {} bytes, header says {decompressed_size}",
                        body.len()
                    ),
                )
                .within("usmap body"));
            }
            (BodyCompression::Zstd, body.into())
        }
        other => {
            return Err(r
                .error_at(at, format!("unknown compression method {other}"))
                .within("usmap header"))
        }
    };
    Ok(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny() -> Mappings {
        let mut m = Mappings {
            version: UsmapVersion::ExplicitEnumValues,
            package_versioning: None,
            compression: BodyCompression::None,
            names: [
                "EColor", "Red", "Blue", "Thing", "Object", "Count", "Tint", "Vector",
            ]
            .map(String::from)
            .to_vec(),
            enums: vec![EnumSchema {
                name: "EColor".into(),
                entries: vec![(0, "Red".into()), (5, "Blue".into())],
            }],
            structs: vec![StructSchema {
                name: "Thing".into(),
                super_name: Some("Object".into()),
                property_count: 3,
                properties: vec![
                    PropertySchema {
                        schema_index: 0,
                        array_size: 2,
                        name: "Count".into(),
                        ty: PropertyType::Int,
                    },
                    PropertySchema {
                        schema_index: 2,
                        array_size: 1,
                        name: "Tint".into(),
                        ty: PropertyType::Enum {
                            underlying: Box::new(PropertyType::Byte),
                            enum_name: "EColor".into(),
                        },
                    },
                ],
            }],
            extensions: vec![],
            trailing: vec![],
            diagnostics: vec![],
            source: None,
            struct_lookup: BTreeMap::new(),
            enum_lookup: BTreeMap::new(),
            struct_exact: Default::default(),
            enum_exact: Default::default(),
        };
        m.build_lookups();
        m
    }

    #[test]
    fn write_read_round_trip_all_versions() {
        for v in 0..=4u8 {
            let mut m = tiny();
            m.version = UsmapVersion::from_u8(v).unwrap();
            if m.version < UsmapVersion::ExplicitEnumValues {
                m.enums[0].entries[1].0 = 1;
            }
            for c in [BodyCompression::None, BodyCompression::Zstd] {
                let bytes = m.write(c).unwrap();
                let back = Mappings::read(&bytes).unwrap();
                assert_eq!(back.names, m.names);
                assert_eq!(back.enums, m.enums);
                assert_eq!(back.structs, m.structs);
                assert_eq!(back.write(c).unwrap(), bytes);
            }
        }
    }

    #[test]
    fn explicit_enum_values_and_slots() {
        let m = tiny();
        assert_eq!(m.enum_schema("ecolor").unwrap().name_of(5), Some("Blue"));
        let s = m.struct_schema("Thing").unwrap();
        assert_eq!(s.property_at(1).unwrap().0.name, "Count");
        assert_eq!(s.property_at(1).unwrap().1, 1);
        assert_eq!(s.property_at(2).unwrap().0.name, "Tint");
        assert!(s.property_at(3).is_none());
        assert!(m
            .chain("Thing")
            .unwrap_err()
            .to_string()
            .contains("`Object`"));
    }

    #[test]
    fn oodle_is_a_clear_error() {
        let mut bytes = tiny().write(BodyCompression::None).unwrap();
        bytes[7] = 1; // version 4: magic 2 + version 1 + flag 4 → compression byte at 7
        let e = Mappings::read(&bytes).unwrap_err();
        assert!(e.to_string().contains("Oodle"), "{e}");
        assert!(e.to_string().contains("re-export"), "{e}");
    }

    #[test]
    fn uncompressed_body_larger_than_declared_is_read_with_a_warning() {
        let bytes = tiny().write(BodyCompression::None).unwrap();
        // version 4: magic 2 + version 1 + flag 4 + method 1 → sizes at 8 and 12.
        for declared in [u32::MAX, 10] {
            let mut b = bytes.clone();
            b[8..12].copy_from_slice(&declared.to_le_bytes());
            b[12..16].copy_from_slice(&declared.to_le_bytes());
            let m = Mappings::read(&b).unwrap();
            assert_eq!(m.structs, tiny().structs);
            assert_eq!(m.diagnostics.len(), 1);
            assert_eq!(m.diagnostics[0].code, "usmap-size-mismatch");
            assert_eq!(m.summary().diagnostics.len(), 1);
        }
        assert!(Mappings::read(&bytes).unwrap().diagnostics.is_empty());
    }

    #[test]
    fn a_compressed_body_cannot_claim_more_than_its_ratio() {
        let mut bytes = tiny().write(BodyCompression::Zstd).unwrap();
        bytes[12..16].copy_from_slice(&(200u32 << 20).to_le_bytes());
        let e = Mappings::read(&bytes).unwrap_err();
        assert_eq!(e.code(), "limit", "{e}");
    }

    #[test]
    fn every_truncation_is_a_clean_error() {
        let bytes = tiny().write(BodyCompression::None).unwrap();
        for n in 0..bytes.len() {
            assert!(Mappings::read(&bytes[..n]).is_err());
        }
    }
}
