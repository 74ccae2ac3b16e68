//! The property codec: reads an export's data into a [`tree`](super::tree)
//! and writes a tree back to bytes, each type's read and write side by side.
//!
//! Losslessness is checked, not assumed: [`Codec::read_export`] writes the
//! tree it read and compares the bytes with the export's; an export whose
//! bytes do not come back (a layout the codec gets wrong, a name stored
//! twice in the name map, a non-canonical string) is kept as an opaque run
//! with the reason, never as a tree that would write other bytes. Inside
//! tagged data a value whose layout is unknown is kept as its bytes (the
//! tag gives its size); inside unversioned data nothing gives a size, so
//! such a value makes the whole export opaque.
//!
//! Names are written through the package's name map (the first entry with
//! the text); a name the map lacks is an error naming it.

use std::cell::RefCell;
use std::collections::HashMap;

use crate::binary::{Reader, Writer};
use crate::error::{Context, DataStep, Error, Result};
use crate::mappings::{PropertyType, SchemaView, StructSchema};
use crate::version::EngineVersion;

use super::native::{native_struct, NativeLayout};
use super::tree::*;
use super::{slot_owner, PackageContext, UnversionedHeader, Walker, MAX_DEPTH};

mod fixed;
pub mod json;
mod tables;
mod tagged;
mod text;

pub use tables::has_decoded_tail;
use tables::row_struct_name;

use fixed::fixed_components;

/// The most a write reserves ahead for an export's bytes (its size as
/// read may come from a header not yet checked against the data).
const MAX_PREALLOCATED: usize = 64 << 20;

/// Reads and writes the property data of one package's exports.
pub struct Codec<'a> {
    cx: &'a PackageContext<'a>,
    mappings: Option<SchemaView<'a>>,
    /// Name text → first index in the name map (for writing).
    name_index: HashMap<&'a str, i32>,
    /// Object path → package index (the first object with the path).
    object_index: HashMap<&'a str, i32>,
    /// When collecting: the names written that the name map lacks, and
    /// where each was written (see [`MissingNames`]).
    missing: Option<RefCell<MissingNames>>,
    /// Struct name → its super chain in the mappings, as looked up.
    chains: RefCell<HashMap<String, Chain<'a>>>,
    /// The names the trees read hold.
    names: SharedNames,
}

/// A struct and its supers, the struct first ([`SchemaView::chain`]).
type Chain<'a> = std::rc::Rc<[&'a StructSchema]>;

/// What a collecting codec's writes needed and the name map lacks: each
/// such name (without number suffix) in the order first met, and where
/// each was written as index 0 meanwhile, so that the bytes can be fixed
/// once the names are added ([`NameFixups`]).
#[derive(Default)]
struct MissingNames {
    order: Vec<String>,
    /// Name text → its position in `order`.
    index: HashMap<String, usize>,
    /// Since the last [`Codec::take_name_fixups`]: (byte offset of a name
    /// index in the export's bytes, position in `order`).
    fixups: Vec<(usize, usize)>,
    /// The highest name map index written.
    highest: i32,
}

/// Where an export's bytes hold indexes of names the name map lacked
/// (written as 0), to fix once the names are added.
#[derive(Debug, Default)]
pub struct NameFixups(Vec<(usize, usize)>);

impl NameFixups {
    /// Writes each missing name's index (`indexes`, in the order of
    /// [`Codec::missing_names`]) where the bytes hold it; `None` when a
    /// fixup does not fit them.
    pub fn apply(&self, bytes: &mut [u8], indexes: &[i32]) -> Option<()> {
        for &(at, id) in &self.0 {
            let index = indexes.get(id)?;
            bytes
                .get_mut(at..at.checked_add(4)?)?
                .copy_from_slice(&index.to_le_bytes());
        }
        Some(())
    }
}

impl<'a> Codec<'a> {
    pub fn new(cx: &'a PackageContext<'a>, mappings: Option<SchemaView<'a>>) -> Self {
        let mut name_index = HashMap::with_capacity(cx.names.len());
        for (i, n) in cx.names.iter().enumerate() {
            name_index.entry(*n).or_insert(i as i32);
        }
        let mut object_index = HashMap::with_capacity(cx.object_paths.len());
        for (slot, path) in cx.object_paths.iter().enumerate() {
            let index = if slot < cx.import_count {
                -(slot as i32) - 1
            } else {
                (slot - cx.import_count) as i32 + 1
            };
            if !path.is_empty() {
                object_index.entry(path.as_str()).or_insert(index);
            }
        }
        Codec {
            cx,
            mappings,
            name_index,
            object_index,
            missing: None,
            chains: RefCell::default(),
            names: SharedNames::default(),
        }
    }

    /// A codec whose writes do not fail on a name the name map lacks: they
    /// collect it ([`missing_names`](Self::missing_names)), for the caller
    /// to add to the package before writing for real.
    pub fn collecting_missing_names(mut self) -> Self {
        self.missing = Some(RefCell::default());
        self
    }

    /// The names a collecting codec's writes needed and the map lacks
    /// (without number suffixes: `Sword_2` needs `Sword`).
    pub fn missing_names(&self) -> Vec<String> {
        self.missing
            .as_ref()
            .map(|m| m.borrow().order.clone())
            .unwrap_or_default()
    }

    /// The fixups of the names missing from what was written since the
    /// last call (one export's bytes: call after each export).
    pub fn take_name_fixups(&self) -> NameFixups {
        NameFixups(
            self.missing
                .as_ref()
                .map(|m| std::mem::take(&mut m.borrow_mut().fixups))
                .unwrap_or_default(),
        )
    }

    /// The highest name map index the writes used (0 when none).
    pub fn highest_name_index(&self) -> usize {
        self.missing
            .as_ref()
            .map_or(0, |m| usize::try_from(m.borrow().highest).unwrap_or(0))
    }

    fn engine(&self) -> EngineVersion {
        self.cx.engine
    }

    /// Reads export data (`base`: its offset in the package's stream) of an
    /// object of class `class`, then checks that the tree writes the same
    /// bytes; whatever fails is kept opaque with its reason.
    pub fn read_export(&self, data: &[u8], base: u64, class: &str) -> ExportData {
        let opaque = |reason: String| ExportData::Opaque {
            reason,
            opaque: Hex(data.to_vec()),
        };
        let tree = match self.decode_export(data, base, class) {
            Ok(tree) => tree,
            Err(e) => return opaque(e.summary()),
        };
        match self.write_export_sized(&tree, class, data.len()) {
            Ok(bytes) if bytes == data => ExportData::Decoded(Box::new(tree)),
            Ok(bytes) => {
                let at = bytes
                    .iter()
                    .zip(data)
                    .position(|(a, b)| a != b)
                    .unwrap_or(bytes.len().min(data.len()));
                opaque(format!(
                    "the decoded properties write other bytes (from byte offset {} of the export, {} bytes against {}); kept as read",
                    base + at as u64,
                    bytes.len(),
                    data.len()
                ))
            }
            Err(e) => opaque(format!(
                "the decoded properties do not write back: {}",
                e.summary()
            )),
        }
    }

    /// Reads export data as [`read_export`](Self::read_export) does and
    /// says why it does not decode: the error of its properties, else of
    /// the native tail the codec decodes (a DataTable's rows, a string
    /// table, an enum's entries), which `read_export` keeps as bytes. The
    /// error's context names the data path it failed at
    /// ([`crate::error::ErrorContext::data_path`]). `None`: it decodes.
    /// Whether the tree writes the same bytes again is not asked: that is
    /// the codec's limit, not the data's.
    pub fn decode_error(&self, data: &[u8], base: u64, class: &str) -> Option<Error> {
        match self.decode(data, base, class) {
            Ok((_, tail_error)) => tail_error,
            Err(e) => Some(e),
        }
    }

    fn decode_export(&self, data: &[u8], base: u64, class: &str) -> Result<ExportTree> {
        self.decode(data, base, class).map(|(tree, _)| tree)
    }

    /// The export's tree, and why its decoded tail (if its class has one)
    /// was kept as bytes.
    fn decode(&self, data: &[u8], base: u64, class: &str) -> Result<(ExportTree, Option<Error>)> {
        let mut r = Reader::with_base(data, base);
        let mut control = None;
        if !self.cx.unversioned && self.engine().tagged_objects_have_serialization_control() {
            let start = r.pos();
            let flags = r.u8().context("class serialization control")?;
            if flags & 0x02 != 0 {
                r.u8().context("overridable serialization operation")?;
            }
            control = Some(Hex(r.data()[start..r.pos()].to_vec()));
        }
        let properties = self.block(&mut r, class, 0)?;
        let at = r.pos();
        let object_guid = match r.u32().context("object GUID flag")? {
            0 => None,
            1 => Some(Guid(r.guid()?)),
            v => return Err(r.error_at(at, format!("object GUID flag is {v}, not 0 or 1"))),
        };
        let tail = self.read_tail(&mut r, class, &properties);
        let rest = r.rest();
        let native = (!rest.is_empty()).then(|| NativeRun {
            reason: tail.reason.unwrap_or_else(|| {
                format!("the native data of a {class}, which zenpak keeps as bytes")
            }),
            opaque: Hex(rest.to_vec()),
        });
        let tree = ExportTree {
            control,
            properties,
            object_guid,
            rows: tail.rows,
            string_table: tail.string_table,
            enumeration: tail.enumeration,
            native,
        };
        Ok((tree, tail.error))
    }

    /// Writes an export's data from its tree (`class`: the object's class).
    pub fn write_export(&self, tree: &ExportTree, class: &str) -> Result<Vec<u8>> {
        self.write_export_sized(tree, class, 0)
    }

    /// [`write_export`](Self::write_export) into a buffer made for `size`
    /// bytes (the export's size as read: the buffer is not grown byte by
    /// byte to it).
    pub fn write_export_sized(
        &self,
        tree: &ExportTree,
        class: &str,
        size: usize,
    ) -> Result<Vec<u8>> {
        let mut w = Writer::with_capacity(size.min(MAX_PREALLOCATED));
        if let Some(control) = &tree.control {
            w.bytes(&control.0);
        }
        self.write_block(&mut w, &tree.properties, class, 0)?;
        match &tree.object_guid {
            None => w.u32(0),
            Some(g) => {
                w.u32(1);
                w.guid(&g.0);
            }
        }
        self.write_tail(&mut w, tree)?;
        if let Some(native) = &tree.native {
            w.bytes(&native.opaque.0);
        }
        Ok(w.into_inner())
    }

    /// Writes export data given as [`ExportData`].
    pub fn write_export_data(&self, data: &ExportData, class: &str) -> Result<Vec<u8>> {
        match data {
            ExportData::Decoded(tree) => self.write_export(tree, class),
            ExportData::Opaque { opaque, .. } => Ok(opaque.0.clone()),
        }
    }

    // ---- blocks ----------------------------------------------------------

    fn block(&self, r: &mut Reader, name: &str, depth: usize) -> Result<Block> {
        if depth > MAX_DEPTH {
            return Err(r.error(format!("structs nest deeper than {MAX_DEPTH} levels")));
        }
        if self.cx.unversioned {
            self.unversioned_block(r, name, depth)
        } else {
            self.tagged_block(r, depth)
        }
    }

    fn write_block(&self, w: &mut Writer, block: &Block, name: &str, depth: usize) -> Result<()> {
        if depth > MAX_DEPTH {
            return Err(Error::invalid(format!(
                "structs nest deeper than {MAX_DEPTH} levels"
            )));
        }
        match block {
            Block::Unversioned { properties, header } => {
                self.write_unversioned_block(w, properties, header.as_ref(), name, depth)
            }
            Block::Tagged { properties } => self.write_tagged_block(w, properties, depth),
        }
    }

    fn mappings(&self, what: &str) -> Result<SchemaView<'a>> {
        self.mappings.ok_or_else(|| no_mappings(what))
    }

    fn chain(&self, name: &str) -> Result<Chain<'a>> {
        self.chain_in(self.mappings(name)?, name).map_err(|e| {
            e.within(format!("unversioned properties of `{name}`"))
                .with_hint("use the mappings (.usmap) dumped from the game this package belongs to")
        })
    }

    /// [`SchemaView::chain`], looked up once a codec.
    fn chain_in(&self, mappings: SchemaView<'a>, name: &str) -> Result<Chain<'a>> {
        if let Some(chain) = self.chains.borrow().get(name) {
            return Ok(chain.clone());
        }
        let chain: Chain<'a> = mappings.chain(name)?.into();
        self.chains
            .borrow_mut()
            .insert(name.to_string(), chain.clone());
        Ok(chain)
    }

    fn unversioned_block(&self, r: &mut Reader, name: &str, depth: usize) -> Result<Block> {
        let header_start = r.pos();
        let header =
            UnversionedHeader::read(r).with_context(|| format!("unversioned header of {name}"))?;
        let raw_header = &r.data()[header_start..r.pos()];
        let slots = header.values()?;
        let mut properties = Vec::with_capacity(slots.len());
        let chain = if slots.is_empty() {
            None
        } else {
            Some(self.chain(name).map_err(|e| e.at(r.offset()))?)
        };
        let total = chain
            .as_ref()
            .map(|c| c.iter().map(|s| s.property_count as usize).sum::<usize>());
        for &(slot, zero) in &slots {
            let chain = chain.as_ref().expect("read when there are slots");
            if slot >= total.unwrap_or(0) {
                return Err(r.error(format!(
                    "unversioned header names property slot {slot} but `{name}` has {} (wrong mappings for this game?)",
                    total.unwrap_or(0)
                )));
            }
            let (schema, own) = slot_owner(chain, slot);
            let Some((prop, element)) = schema.property_at(own as u16) else {
                return Err(r.error(format!(
                    "property slot {own} of `{}` is not in the mappings (wrong mappings for this game?)",
                    schema.name
                )));
            };
            let value = if zero {
                None
            } else {
                Some(self.value(r, &prop.ty, depth + 1).map_err(|e| {
                    e.within_data(DataStep::Property {
                        owner: schema.name.clone(),
                        name: prop.name.clone(),
                        ty: prop.ty.describe(),
                    })
                })?)
            };
            properties.push(UnversionedProperty {
                name: self.names.get(&prop.name),
                index: element,
                value,
            });
        }
        let slot_count = match total {
            Some(t) => Some(t),
            None => self
                .mappings
                .and_then(|m| self.chain_in(m, name).ok())
                .map(|c| c.iter().map(|s| s.property_count as usize).sum()),
        };
        // Without the struct's schema (an empty block of a struct the
        // mappings lack) the header is kept as it is.
        let canonical = match slot_count {
            Some(n) => Some(UnversionedHeader::from_values(&slots, n)?.to_bytes()),
            None => None,
        };
        let header = (canonical.as_deref() != Some(raw_header)).then(|| Hex(raw_header.to_vec()));
        Ok(Block::Unversioned { properties, header })
    }

    fn write_unversioned_block(
        &self,
        w: &mut Writer,
        properties: &[UnversionedProperty],
        kept_header: Option<&Hex>,
        name: &str,
        depth: usize,
    ) -> Result<()> {
        // An empty block's header counts the chain's slots: without the
        // chain only a header kept as read (the reader keeps it when it has
        // no schema) is written, never one guessed.
        let chain = match self.mappings.map(|m| self.chain_in(m, name)) {
            Some(Ok(chain)) => Some(chain),
            _ if properties.is_empty() && kept_header.is_some() => None,
            Some(Err(e)) => return Err(e.within(format!("properties of `{name}`"))),
            None => return Err(no_mappings(name)),
        };
        let slot_count: usize = chain
            .as_ref()
            .map_or(0, |c| c.iter().map(|s| s.property_count as usize).sum());
        let mut placed = Vec::with_capacity(properties.len());
        let mut finder = chain.as_deref().map(Slots::new);
        for p in properties {
            let finder = finder.as_mut().expect("properties need the chain");
            let (slot, ty) = finder.find(&p.name, p.index).ok_or_else(|| {
                Error::invalid(format!(
                    "`{name}` has no property `{}`{} under these mappings",
                    p.name,
                    if p.index > 0 {
                        format!(" with element {}", p.index)
                    } else {
                        String::new()
                    }
                ))
            })?;
            placed.push((slot, ty, p));
        }
        // Unversioned properties are written in the struct's order: a block
        // given in another order (a property an edit added at the end) is
        // written in that order; one given twice is refused.
        if placed.windows(2).any(|w| w[0].0 >= w[1].0) {
            placed.sort_by_key(|&(slot, _, _)| slot);
            if let Some(w) = placed.windows(2).find(|w| w[0].0 == w[1].0) {
                return Err(Error::invalid(format!(
                    "property `{}` of `{name}` is given twice",
                    w[1].2.name
                )));
            }
        }
        let slots: Vec<(usize, bool)> = placed
            .iter()
            .map(|&(slot, _, p)| (slot, p.value.is_none()))
            .collect();
        let canonical = match kept_header {
            Some(kept) => {
                let header = UnversionedHeader::read(&mut Reader::new(&kept.0))
                    .context("kept unversioned header")?;
                if header.values()? == slots {
                    w.bytes(&kept.0);
                    None
                } else {
                    Some(())
                }
            }
            None => Some(()),
        };
        if canonical.is_some() {
            let slot_count = if properties.is_empty() && chain.is_none() {
                0
            } else {
                slot_count
            };
            UnversionedHeader::from_values(&slots, slot_count)?.write(w);
        }
        for (_, ty, p) in placed {
            if let Some(v) = &p.value {
                self.write_value(w, ty, v, depth + 1)
                    .with_context(|| format!("property {name}.{}", p.name))?;
            }
        }
        Ok(())
    }

    // ---- values (unversioned and native) -----------------------------------

    fn value(&self, r: &mut Reader, ty: &PropertyType, depth: usize) -> Result<Value> {
        if depth > MAX_DEPTH {
            return Err(r.error(format!("values nest deeper than {MAX_DEPTH} levels")));
        }
        Ok(match ty {
            PropertyType::Bool => {
                let at = r.pos();
                match r.u8()? {
                    0 => Value::Bool(false),
                    1 => Value::Bool(true),
                    v => return Err(r.error_at(at, format!("bool value is {v}, not 0 or 1"))),
                }
            }
            PropertyType::Byte => Value::Byte(r.u8()?),
            PropertyType::Int8 => Value::Int8(r.i8()?),
            PropertyType::Int16 => Value::Int16(r.i16()?),
            PropertyType::UInt16 => Value::UInt16(r.u16()?),
            PropertyType::Int => Value::Int(r.i32()?),
            PropertyType::UInt32 => Value::UInt32(r.u32()?),
            PropertyType::Int64 => Value::Int64(Wide(r.i64()?)),
            PropertyType::UInt64 => Value::UInt64(Wide(r.u64()?)),
            PropertyType::Float => Value::Float(F32(r.f32()?)),
            PropertyType::Double => Value::Double(F64(r.f64()?)),
            PropertyType::Enum {
                underlying,
                enum_name,
            } => {
                let raw = match self.value(r, underlying, depth + 1)? {
                    Value::Byte(v) => v as i64,
                    Value::Int8(v) => v as i64,
                    Value::Int16(v) => v as i64,
                    Value::UInt16(v) => v as i64,
                    Value::Int(v) => v as i64,
                    Value::UInt32(v) => v as i64,
                    Value::Int64(v) => v.0,
                    Value::UInt64(v) => v.0 as i64,
                    _ => {
                        return Err(r.error(format!(
                            "enum `{enum_name}` has an underlying type that is not an integer"
                        )))
                    }
                };
                let name = self
                    .mappings
                    .and_then(|m| m.enum_schema(enum_name))
                    .and_then(|e| e.name_of(raw as u64))
                    .filter(|n| self.enum_value(enum_name, n) == Some(raw as u64));
                Value::Enum(match name {
                    Some(n) => EnumValue::Name(n.to_string()),
                    None => EnumValue::Raw(raw),
                })
            }
            PropertyType::Name => Value::Name(self.name(r)?),
            PropertyType::Str | PropertyType::AnsiStr => Value::Str(self.fstring(r)?),
            PropertyType::Utf8Str => Value::Str(FStr::plain(r.utf8_string()?)),
            PropertyType::Object | PropertyType::WeakObject | PropertyType::Interface => {
                Value::Object(self.object_ref(r)?)
            }
            PropertyType::LazyObject => Value::LazyObject(Guid(r.guid()?)),
            PropertyType::SoftObject | PropertyType::AssetObject => {
                Value::SoftObject(Box::new(self.soft_object_path(r)?))
            }
            PropertyType::Delegate => Value::Delegate(self.delegate(r)?),
            PropertyType::MulticastDelegate => {
                let n = r.count_i32(12)?;
                let mut list = Vec::with_capacity(n);
                for _ in 0..n {
                    list.push(self.delegate(r)?);
                }
                Value::MulticastDelegate(list)
            }
            PropertyType::FieldPath => {
                let n = r.count_i32(8)?;
                let mut path = Vec::with_capacity(n);
                for _ in 0..n {
                    path.push(self.name(r)?);
                }
                let owner = self.object_ref(r)?;
                Value::FieldPath { path, owner }
            }
            PropertyType::Text => Value::Text(Box::new(self.text(r, depth)?)),
            PropertyType::Struct(name) => {
                Value::Struct(Box::new(self.struct_value(r, name, depth)?))
            }
            PropertyType::Array(inner) => {
                let n = r.count_i32(1)?;
                let mut items = Vec::with_capacity(n);
                for i in 0..n {
                    items.push(
                        self.element(r, inner, depth + 1)
                            .map_err(|e| e.within_data(DataStep::Element(i)))?,
                    );
                }
                Value::Array(items)
            }
            PropertyType::Set(inner) => {
                let removed = self.elements(r, inner, depth, "removed element")?;
                let items = self.elements(r, inner, depth, "element")?;
                Value::Set { removed, items }
            }
            PropertyType::Map(key, value) => {
                let removed = self.elements(r, key, depth, "removed key")?;
                let n = r.count_i32(1)?;
                let mut entries = Vec::with_capacity(n);
                for i in 0..n {
                    let k = self
                        .element(r, key, depth + 1)
                        .map_err(|e| e.within_data(DataStep::MapKey(i)))?;
                    let v = self
                        .element(r, value, depth + 1)
                        .map_err(|e| e.within_data(DataStep::MapValue(i)))?;
                    entries.push((k, v));
                }
                Value::Map { removed, entries }
            }
            PropertyType::Optional(inner) => {
                let at = r.pos();
                match r.u8()? {
                    0 => Value::Optional(None),
                    1 => Value::Optional(Some(Box::new(self.value(r, inner, depth + 1)?))),
                    v => return Err(r.error_at(at, format!("optional's is-set flag is {v}"))),
                }
            }
            PropertyType::Unknown => {
                return Err(Error::unsupported(
                    "the mappings give this property no type (code 0xFF); its layout is unknown",
                )
                .at(r.offset()))
            }
        })
    }

    fn write_value(
        &self,
        w: &mut Writer,
        ty: &PropertyType,
        v: &Value,
        depth: usize,
    ) -> Result<()> {
        if depth > MAX_DEPTH {
            return Err(Error::invalid(format!(
                "values nest deeper than {MAX_DEPTH} levels"
            )));
        }
        let mismatch = || {
            Error::invalid(format!(
                "a {} value where the property is {}",
                value_kind(v),
                ty.describe()
            ))
        };
        match (ty, v) {
            (PropertyType::Bool, Value::Bool(b)) => w.u8(*b as u8),
            (PropertyType::Byte, Value::Byte(x)) => w.u8(*x),
            (PropertyType::Int8, Value::Int8(x)) => w.u8(*x as u8),
            (PropertyType::Int16, Value::Int16(x)) => w.bytes(&x.to_le_bytes()),
            (PropertyType::UInt16, Value::UInt16(x)) => w.u16(*x),
            (PropertyType::Int, Value::Int(x)) => w.i32(*x),
            (PropertyType::UInt32, Value::UInt32(x)) => w.u32(*x),
            (PropertyType::Int64, Value::Int64(x)) => w.i64(x.0),
            (PropertyType::UInt64, Value::UInt64(x)) => w.u64(x.0),
            (PropertyType::Float, Value::Float(x)) => w.f32(x.0),
            (PropertyType::Double, Value::Double(x)) => w.bytes(&x.0.to_le_bytes()),
            (
                PropertyType::Enum {
                    underlying,
                    enum_name,
                },
                Value::Enum(e),
            ) => {
                let raw = match e {
                    EnumValue::Raw(v) => *v,
                    EnumValue::Name(n) => self.enum_value(enum_name, n).ok_or_else(|| {
                        Error::invalid(format!("`{n}` is not an entry of enum `{enum_name}`"))
                    })? as i64,
                };
                let int = match underlying.as_ref() {
                    PropertyType::Byte => Value::Byte(raw as u8),
                    PropertyType::Int8 => Value::Int8(raw as i8),
                    PropertyType::Int16 => Value::Int16(raw as i16),
                    PropertyType::UInt16 => Value::UInt16(raw as u16),
                    PropertyType::Int => Value::Int(raw as i32),
                    PropertyType::UInt32 => Value::UInt32(raw as u32),
                    PropertyType::Int64 => Value::Int64(Wide(raw)),
                    PropertyType::UInt64 => Value::UInt64(Wide(raw as u64)),
                    _ => return Err(mismatch()),
                };
                self.write_value(w, underlying, &int, depth + 1)?;
            }
            (PropertyType::Name, Value::Name(n)) => self.write_name(w, n)?,
            (PropertyType::Str | PropertyType::AnsiStr, Value::Str(s)) => write_fstring(w, s),
            (PropertyType::Utf8Str, Value::Str(s)) => w.utf8_string(&s.text),
            (
                PropertyType::Object | PropertyType::WeakObject | PropertyType::Interface,
                Value::Object(o),
            ) => self.write_object_ref(w, o)?,
            (PropertyType::LazyObject, Value::LazyObject(g)) => w.guid(&g.0),
            (PropertyType::SoftObject | PropertyType::AssetObject, Value::SoftObject(p)) => {
                self.write_soft_object_path(w, p)?
            }
            (PropertyType::Delegate, Value::Delegate(d)) => self.write_delegate(w, d)?,
            (PropertyType::MulticastDelegate, Value::MulticastDelegate(list)) => {
                w.i32(len_i32(list.len())?);
                for d in list {
                    self.write_delegate(w, d)?;
                }
            }
            (PropertyType::FieldPath, Value::FieldPath { path, owner }) => {
                w.i32(len_i32(path.len())?);
                for n in path {
                    self.write_name(w, n)?;
                }
                self.write_object_ref(w, owner)?;
            }
            (PropertyType::Text, Value::Text(t)) => self.write_text(w, t, depth)?,
            (PropertyType::Struct(name), Value::Struct(s)) => {
                if *s.name != **name {
                    return Err(Error::invalid(format!(
                        "a `{}` struct where the property holds `{name}`",
                        s.name
                    )));
                }
                self.write_struct_value(w, s, depth)?
            }
            (PropertyType::Array(inner), Value::Array(items)) => {
                w.i32(len_i32(items.len())?);
                for (i, item) in items.iter().enumerate() {
                    self.write_element(w, inner, item, depth + 1)
                        .with_context(|| format!("element {i}"))?;
                }
            }
            (PropertyType::Set(inner), Value::Set { removed, items }) => {
                self.write_elements(w, inner, removed, depth)?;
                self.write_elements(w, inner, items, depth)?;
            }
            (PropertyType::Map(key, value), Value::Map { removed, entries }) => {
                self.write_elements(w, key, removed, depth)?;
                w.i32(len_i32(entries.len())?);
                for (i, (k, v)) in entries.iter().enumerate() {
                    self.write_element(w, key, k, depth + 1)
                        .with_context(|| format!("key {i}"))?;
                    self.write_element(w, value, v, depth + 1)
                        .with_context(|| format!("value {i}"))?;
                }
            }
            (PropertyType::Optional(inner), Value::Optional(v)) => match v {
                None => w.u8(0),
                Some(v) => {
                    w.u8(1);
                    self.write_value(w, inner, v, depth + 1)?;
                }
            },
            _ => return Err(mismatch()),
        }
        Ok(())
    }

    /// An element of an array, set or map: enums there are their entry's FName.
    fn element(&self, r: &mut Reader, ty: &PropertyType, depth: usize) -> Result<Value> {
        match ty {
            PropertyType::Enum { .. } => Ok(Value::Name(self.name(r)?)),
            _ => self.value(r, ty, depth),
        }
    }

    fn write_element(
        &self,
        w: &mut Writer,
        ty: &PropertyType,
        v: &Value,
        depth: usize,
    ) -> Result<()> {
        match (ty, v) {
            (PropertyType::Enum { .. }, Value::Name(n)) => self.write_name(w, n),
            _ => self.write_value(w, ty, v, depth),
        }
    }

    fn elements(
        &self,
        r: &mut Reader,
        ty: &PropertyType,
        depth: usize,
        what: &str,
    ) -> Result<Vec<Value>> {
        let n = r.count_i32(1)?;
        let mut items = Vec::with_capacity(n);
        for i in 0..n {
            items.push(self.element(r, ty, depth + 1).map_err(|e| {
                if what == "element" {
                    e.within_data(DataStep::Element(i))
                } else {
                    e.within(format!("{what} {i}"))
                }
            })?);
        }
        Ok(items)
    }

    fn write_elements(
        &self,
        w: &mut Writer,
        ty: &PropertyType,
        items: &[Value],
        depth: usize,
    ) -> Result<()> {
        w.i32(len_i32(items.len())?);
        for (i, item) in items.iter().enumerate() {
            self.write_element(w, ty, item, depth + 1)
                .with_context(|| format!("element {i}"))?;
        }
        Ok(())
    }

    /// The value of entry `name` of enum `enum_name`, when the mappings have
    /// it and the name is that of one entry only.
    fn enum_value(&self, enum_name: &str, name: &str) -> Option<u64> {
        let schema = self.mappings?.enum_schema(enum_name)?;
        let mut found = schema.entries.iter().filter(|(_, n)| n == name);
        let (v, _) = found.next()?;
        found.next().is_none().then_some(*v)
    }

    // ---- structs -------------------------------------------------------

    fn struct_value(&self, r: &mut Reader, name: &str, depth: usize) -> Result<StructValue> {
        let body = if let Some(layout) = native_struct(name, self.engine()) {
            self.native(r, name, layout, depth)?
        } else if !self.cx.unversioned {
            StructBody::Block(self.tagged_block(r, depth + 1)?)
        } else {
            if self
                .mappings
                .is_some_and(|m| m.struct_schema(name).is_none())
            {
                return Err(Error::unsupported(format!(
                    "struct `{name}` is neither natively serialized (known to zenpak) nor in the mappings"
                ))
                .at(r.offset()));
            }
            StructBody::Block(self.unversioned_block(r, name, depth + 1)?)
        };
        Ok(StructValue {
            name: self.names.get(name),
            body,
        })
    }

    fn write_struct_value(&self, w: &mut Writer, s: &StructValue, depth: usize) -> Result<()> {
        let layout = native_struct(&s.name, self.engine());
        match (&s.body, layout) {
            (StructBody::Block(block), None) => self.write_block(w, block, &s.name, depth + 1),
            (StructBody::Fields(values), Some(NativeLayout::Fixed(_))) => {
                let comps = fixed_components(&s.name, self.engine()).ok_or_else(|| {
                    Error::invalid(format!("struct `{}` has no named fields", s.name))
                })?;
                if comps.len() != values.len() {
                    return Err(Error::invalid(format!(
                        "struct `{}` has {} fields, not {}",
                        s.name,
                        comps.len(),
                        values.len()
                    )));
                }
                for ((field, c), (name, v)) in comps.iter().zip(values) {
                    if field != name {
                        return Err(Error::invalid(format!(
                            "field `{name}` where `{}` has `{field}`",
                            s.name
                        )));
                    }
                    c.write(w, v)
                        .with_context(|| format!("struct {}", s.name))?;
                }
                Ok(())
            }
            (StructBody::SoftObject(p), Some(NativeLayout::SoftObjectPath)) => {
                self.write_soft_object_path(w, p)
            }
            (StructBody::Tags(tags), Some(NativeLayout::GameplayTagContainer)) => {
                w.i32(len_i32(tags.len())?);
                for t in tags {
                    self.write_name(w, t)?;
                }
                Ok(())
            }
            (StructBody::Native(bytes), Some(_)) => {
                w.bytes(&bytes.0);
                Ok(())
            }
            _ => Err(Error::invalid(format!(
                "struct `{}` is not serialized the way its value is given",
                s.name
            ))),
        }
    }

    fn native(
        &self,
        r: &mut Reader,
        name: &str,
        layout: NativeLayout,
        depth: usize,
    ) -> Result<StructBody> {
        Ok(match layout {
            NativeLayout::Fixed(n) => match fixed_components(name, self.engine()) {
                Some(comps) => {
                    let start = r.pos();
                    let mut values = Vec::with_capacity(comps.len());
                    for (field, c) in comps {
                        values.push((
                            *field,
                            c.read(r).with_context(|| format!("native struct {name}"))?,
                        ));
                    }
                    debug_assert_eq!(r.pos() - start, n, "components of {name}");
                    StructBody::Fields(values)
                }
                None => StructBody::Native(Hex(r
                    .bytes(n)
                    .with_context(|| format!("native struct {name}"))?
                    .to_vec())),
            },
            NativeLayout::SoftObjectPath => StructBody::SoftObject(self.soft_object_path(r)?),
            NativeLayout::GameplayTagContainer => {
                let n = r.count_i32(8).context("gameplay tag container")?;
                let mut tags = Vec::with_capacity(n);
                for _ in 0..n {
                    tags.push(self.name(r)?);
                }
                StructBody::Tags(tags)
            }
            _ => {
                // Stepped over by the walker's layout; kept as bytes.
                let start = r.pos();
                let walker = Walker::new(self.cx, self.mappings);
                super::native::read(&walker, r, name, layout, depth)?;
                StructBody::Native(Hex(r.data()[start..r.pos()].to_vec()))
            }
        })
    }

    // ---- small records -------------------------------------------------

    fn name(&self, r: &mut Reader) -> Result<Name> {
        self.cx.name(r).map(Name)
    }

    fn write_name(&self, w: &mut Writer, n: &Name) -> Result<()> {
        self.write_name_text(w, &n.0)
    }

    /// An FName given as its display text (`Sword_2`).
    fn write_name_text(&self, w: &mut Writer, text: &str) -> Result<()> {
        let (index, number) = match self.name_index.get(text) {
            Some(&i) => (i, 0),
            None => {
                let (base, number) = crate::names::split_number(text);
                match (self.name_index.get(base), &self.missing) {
                    (Some(&i), _) => (i, number),
                    (None, Some(missing)) => {
                        let missing = &mut *missing.borrow_mut();
                        let id = match missing.index.get(base) {
                            Some(&id) => id,
                            None => {
                                missing.order.push(base.to_string());
                                missing
                                    .index
                                    .insert(base.to_string(), missing.order.len() - 1);
                                missing.order.len() - 1
                            }
                        };
                        missing.fixups.push((w.pos(), id));
                        (0, number)
                    }
                    (None, None) => {
                        return Err(Error::invalid(format!(
                            "the name `{text}` is not in the package's name map"
                        )))
                    }
                }
            }
        };
        if let Some(missing) = &self.missing {
            let highest = &mut missing.borrow_mut().highest;
            *highest = (*highest).max(index);
        }
        w.i32(index);
        w.u32(number);
        Ok(())
    }

    fn fstring(&self, r: &mut Reader) -> Result<FStr> {
        let terminated_empty = r.peek_u32() == Some(1);
        let (text, utf16) = r.fstring_ext()?;
        Ok(FStr::read(text, utf16, terminated_empty))
    }

    /// An object reference (a package index) as the object's path.
    fn object_ref(&self, r: &mut Reader) -> Result<ObjectRef> {
        let at = r.pos();
        let index = self.cx.package_index(r)?;
        if index == 0 {
            return Ok(ObjectRef(None));
        }
        let slot = if index < 0 {
            (-(index as i64) - 1) as usize
        } else {
            (index as i64 - 1) as usize + self.cx.import_count
        };
        match self.cx.object_paths.get(slot).filter(|p| !p.is_empty()) {
            Some(path) if self.object_index.get(path.as_str()) == Some(&index) => {
                Ok(ObjectRef(Some(path.clone())))
            }
            Some(path) => Err(r.error_at(
                at,
                format!("object reference {index} is to `{path}`, a path an earlier object of the package has too"),
            )),
            None => Err(r.error_at(at, format!("object reference {index} has no path"))),
        }
    }

    fn write_object_ref(&self, w: &mut Writer, o: &ObjectRef) -> Result<()> {
        let index = match &o.0 {
            None => 0,
            Some(path) => *self.object_index.get(path.as_str()).ok_or_else(|| {
                Error::new(crate::error::ErrorKind::UnknownObject(path.clone()))
                .with_hint("refer to an object the package's `imports` or `exports` list, or append it to `imports` as {\"path\", \"class\"}")
            })?,
        };
        w.i32(index);
        Ok(())
    }

    fn delegate(&self, r: &mut Reader) -> Result<Delegate> {
        let object = self.object_ref(r)?;
        Ok(Delegate {
            object,
            function: self.name(r)?,
        })
    }

    fn write_delegate(&self, w: &mut Writer, d: &Delegate) -> Result<()> {
        self.write_object_ref(w, &d.object)?;
        self.write_name(w, &d.function)
    }

    fn soft_object_path(&self, r: &mut Reader) -> Result<SoftObjectPath> {
        if self.cx.soft_object_path_count > 0 {
            let at = r.pos();
            let i = r.i32()?;
            if i < 0 || i as usize >= self.cx.soft_object_path_count {
                return Err(r.error_at(
                    at,
                    format!(
                        "soft object path index {i} is outside the list ({})",
                        self.cx.soft_object_path_count
                    ),
                ));
            }
            return Ok(SoftObjectPath::Index(i));
        }
        let path = self.name(r)?;
        let asset = if self.engine().soft_object_path_is_top_level_asset_path() {
            Some(self.name(r)?)
        } else {
            None
        };
        Ok(SoftObjectPath::Path {
            path,
            asset,
            sub_path: self.fstring(r)?,
        })
    }

    fn write_soft_object_path(&self, w: &mut Writer, p: &SoftObjectPath) -> Result<()> {
        match p {
            SoftObjectPath::Index(i) if self.cx.soft_object_path_count > 0 => {
                if *i < 0 || *i as usize >= self.cx.soft_object_path_count {
                    return Err(Error::invalid(format!(
                        "soft object path index {i} is outside the package's list ({})",
                        self.cx.soft_object_path_count
                    )));
                }
                w.i32(*i);
            }
            SoftObjectPath::Path {
                path,
                asset,
                sub_path,
            } if self.cx.soft_object_path_count == 0 => {
                self.write_name(w, path)?;
                match (asset, self.engine().soft_object_path_is_top_level_asset_path()) {
                    (Some(a), true) => self.write_name(w, a)?,
                    (None, false) => {}
                    _ => {
                        return Err(Error::invalid(
                            "a soft object path's asset name is given for a release that has none, or missing",
                        ))
                    }
                }
                write_fstring(w, sub_path);
            }
            _ => {
                return Err(Error::invalid(
                    "this package keeps soft object paths in a list: give an index into it (and the reverse)",
                ))
            }
        }
        Ok(())
    }
}

/// Finds properties by name in a struct's chain: their global slot and
/// type. Blocks list properties in schema order, so the search starts
/// where the last one was found.
pub(super) struct Slots<'c, 's> {
    chain: &'c [&'s StructSchema],
    /// Where the last property was found: chain entry, its base slot,
    /// position in its property list.
    last: (usize, usize, usize),
}

impl<'c, 's> Slots<'c, 's> {
    pub(super) fn new(chain: &'c [&'s StructSchema]) -> Self {
        Slots {
            chain,
            last: (0, 0, 0),
        }
    }

    /// Property `name` (element `index`).
    pub(super) fn find(&mut self, name: &str, index: u8) -> Option<(usize, &'s PropertyType)> {
        let fits =
            |p: &crate::mappings::PropertySchema| p.name == name && index < p.array_size.max(1);
        let (ci, base, pi) = self.last;
        if let Some(s) = self.chain.get(ci) {
            if let Some(offset) = s.properties.iter().skip(pi).position(fits) {
                let p = &s.properties[pi + offset];
                self.last = (ci, base, pi + offset);
                return Some((base + p.schema_index as usize + index as usize, &p.ty));
            }
        }
        let mut base = 0usize;
        for (ci, s) in self.chain.iter().enumerate() {
            if let Some(pi) = s.properties.iter().position(fits) {
                let p = &s.properties[pi];
                self.last = (ci, base, pi);
                return Some((base + p.schema_index as usize + index as usize, &p.ty));
            }
            base += s.property_count as usize;
        }
        None
    }
}

fn no_mappings(what: &str) -> Error {
    Error::usage(format!(
        "{what} is serialized unversioned; reading it needs the game's mappings"
    ))
    .with_hint("give the game's .usmap: `[game] mappings` in mod.toml, or --mappings Game.usmap")
}

fn len_i32(n: usize) -> Result<i32> {
    i32::try_from(n)
        .map_err(|_| Error::invalid(format!("{n} elements are more than a count holds")))
}

fn value_kind(v: &Value) -> &'static str {
    match v {
        Value::Bool(_) => "Bool",
        Value::Int8(_) => "Int8",
        Value::Byte(_) => "Byte",
        Value::Int16(_) => "Int16",
        Value::UInt16(_) => "UInt16",
        Value::Int(_) => "Int",
        Value::UInt32(_) => "UInt32",
        Value::Int64(_) => "Int64",
        Value::UInt64(_) => "UInt64",
        Value::Float(_) => "Float",
        Value::Double(_) => "Double",
        Value::Enum(_) => "Enum",
        Value::Name(_) => "Name",
        Value::Str(_) => "Str",
        Value::Text(_) => "Text",
        Value::Object(_) => "Object",
        Value::LazyObject(_) => "LazyObject",
        Value::SoftObject(_) => "SoftObject",
        Value::Struct(_) => "Struct",
        Value::Array(_) => "Array",
        Value::Set { .. } => "Set",
        Value::Map { .. } => "Map",
        Value::Optional(_) => "Optional",
        Value::Delegate(_) => "Delegate",
        Value::MulticastDelegate(_) => "MulticastDelegate",
        Value::FieldPath { .. } => "FieldPath",
        Value::StructArray { .. } => "StructArray",
        Value::Opaque(_) => "Opaque",
    }
}

fn write_fstring(w: &mut Writer, s: &FStr) {
    if s.terminated_empty && s.text.is_empty() && !s.utf16 {
        w.i32(1);
        w.u8(0);
    } else {
        w.fstring_ext(&s.text, s.utf16);
    }
}
