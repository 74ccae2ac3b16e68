//! The object data of a classic package's exports, decoded far enough to
//! find every object reference it holds (consolidation needs them: a BSP surface's texture,
//! an actor's `Skin`), and written again with some of those references replaced
//! (`ObjectData::rewrite`: property size fields and lazy-array positions follow).
//!
//! An export's data is, in order:
//! - execution state when it has `RF_HasStack` (node and state node references, probe mask,
//!   latent action, code offset when the node is set — `UObject::Serialize`);
//! - tagged properties up to `None` (`FPropertyTag`: name, info byte with type, size code and
//!   array bit, struct name, explicit size, array index). Object/class values are compact
//!   references, name values compact name indices; `PointRegion` holds a zone reference,
//!   other Core/Engine structs of their `Object.uc` sizes hold none; unknown structs, arrays
//!   and maps are opaque;
//! - the native data of its class:
//!
//! | class | native data (source) |
//! |---|---|
//! | `Engine.Level` | actors (count, capacity, refs), `FURL`, model, reach specs, time, first deleted, 16 text blocks, travel info (`ULevelBase`/`ULevel::Serialize`) |
//! | `Engine.Model` | bounds (`UPrimitive`), vectors, points, `FBspNode`s, `FBspSurf`s (texture, actor refs), vertices, `FZoneProperties` (zone actor), polys, `FLightMapIndex`, light bits, bounds, leaf hulls, `FLeaf`s, lights, root outside, linked (`UModel::Serialize`, after 61) |
//! | `Engine.Polys` | count, capacity, `FPoly`s (actor, texture, item name) |
//! | `Engine.Texture` | mipmaps (lazy pixels, sizes, bits), again when `bHasComp` (`UTexture::Serialize`, after 61) |
//! | `Engine.Palette`, `Sound`, `Music`, `Core.TextBuffer` | colours; file type name + lazy data; position, top, text |
//!
//! Any other class must end with its properties, or the rest is opaque ("native data of
//! class X is not decoded"); UnrealScript classes (`Core.Class` exports) are opaque. Every
//! lazy array's stored end must equal where it ends, every reference must be inside the
//! tables and every property value must take exactly its tag's size, otherwise the export is
//! an [`Piece::Opaque`] piece from the start, with reason and file offset: the caller then
//! knows it cannot see every reference. The decoder never fails.
//!
//! Evidence: all 1073 exports of `CTF-Face.unr`, 38 of `Entry.unr`, and the corpus's sounds,
//! music and palettes decode to their last byte with no opaque piece, and written back
//! unchanged give the same bytes (`tests/classic/classic_object_data.rs`).

use std::ops::Range;

use serde::Serialize;

use super::compact::CompactIndex;
use super::flags::RF_HAS_STACK;
use super::header::{FileVersion, TravelInfo};
use super::writer::{FilePosition, ObjectBytes};
use super::{ObjectRef, Package, Target};
use crate::binary::Reader;
use crate::error::{Error, Result};

/// Property types of the tag's info byte (engine names `NAME_ByteProperty` = 1 … 15).
mod property_type {
    pub(crate) const BYTE: u8 = 1;
    pub(crate) const INT: u8 = 2;
    pub(crate) const BOOL: u8 = 3;
    pub(crate) const FLOAT: u8 = 4;
    pub(crate) const OBJECT: u8 = 5;
    pub(crate) const NAME: u8 = 6;
    pub(crate) const STRING: u8 = 7;
    pub(crate) const CLASS: u8 = 8;
    pub(crate) const ARRAY: u8 = 9;
    pub(crate) const STRUCT: u8 = 10;
    pub(crate) const VECTOR: u8 = 11;
    pub(crate) const ROTATOR: u8 = 12;
    pub(crate) const STR: u8 = 13;
    pub(crate) const MAP: u8 = 14;
    pub(crate) const FIXED_ARRAY: u8 = 15;
}

/// Structs of Core and Engine that hold no object reference, with their
/// serialized size (their members in order, `Object.uc`).
const PLAIN_STRUCTS: &[(&str, usize)] = &[
    ("Vector", 12),
    ("Rotator", 12),
    ("Color", 4),
    ("Plane", 16),
    ("Scale", 17),
    ("Coords", 48),
    ("Guid", 16),
    ("BoundingBox", 25),
    ("BoundingVolume", 41),
];

/// An object reference inside object data: a compact index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct DataReference {
    /// Position in the object's data.
    pub(crate) at: usize,
    /// Bytes of its encoding.
    pub(crate) len: usize,
    pub target: ObjectRef,
}

/// Why a range of object data is not decoded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Undecoded {
    /// File offset where decoding stopped.
    pub offset: u64,
    pub(crate) reason: String,
}

/// One piece of decoded object data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Piece {
    /// Bytes without references, written back as they are.
    Bytes(Range<usize>),
    Reference(DataReference),
    /// A tagged property: its size field follows the length of its value.
    Property(Box<PropertyTag>),
    /// A lazy array (after version 61): the 32-bit file position of its end
    /// at `position`, then the array.
    LazyArray {
        position: usize,
        content: Vec<Piece>,
    },
    /// Bytes whose layout is not known: references inside them cannot be found.
    Opaque {
        range: Range<usize>,
        why: Undecoded,
    },
}

/// The tag of a tagged property and its value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PropertyTag {
    /// Name, info byte and (for structs) struct name.
    pub(crate) head: Range<usize>,
    /// Where the info byte is (its bits 4–6 encode the size).
    pub(crate) info_at: usize,
    /// The explicit size field (0, 1, 2 or 4 bytes).
    pub(crate) size_field: Range<usize>,
    /// The array index (0, 1, 2 or 4 bytes).
    pub(crate) array_index: Range<usize>,
    /// Where the value was.
    pub(crate) value_range: Range<usize>,
    pub(crate) value: Vec<Piece>,
}

/// The decoded data of one export.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectData {
    pub(crate) len: usize,
    pub(crate) pieces: Vec<Piece>,
}

impl ObjectData {
    /// Decodes the data of export `index` of `package` (`data` is its
    /// serialized bytes). Never fails: what cannot be decoded (including
    /// data that contradicts its own layout) becomes an opaque piece.
    pub fn decode(package: &Package, index: usize, data: &[u8]) -> ObjectData {
        let Some(export) = package.exports.get(index) else {
            return ObjectData::opaque(data.len(), 0, "no such export".to_string());
        };
        let serial_offset = export.serial_offset.unwrap_or(0).max(0) as u64;
        let mut walker = Walker {
            package,
            version: package.version(),
            reader: Reader::with_base(data, serial_offset),
            serial_offset,
        };
        let mut pieces = Vec::new();
        match walker.object(&mut pieces, index) {
            Ok(()) => ObjectData {
                len: data.len(),
                pieces,
            },
            Err(error) => ObjectData::opaque(
                data.len(),
                error.offset().unwrap_or(serial_offset),
                error.message(),
            ),
        }
    }

    fn opaque(len: usize, offset: u64, reason: String) -> ObjectData {
        ObjectData {
            len,
            pieces: vec![Piece::Opaque {
                range: 0..len,
                why: Undecoded { offset, reason },
            }],
        }
    }

    /// Every object reference found, in the order of the data.
    pub fn references(&self) -> Vec<DataReference> {
        let mut out = Vec::new();
        collect_references(&self.pieces, &mut out);
        out
    }

    /// The first range that is not decoded, if any.
    pub fn undecoded(&self) -> Option<&Undecoded> {
        first_opaque(&self.pieces)
    }

    /// The data with each reference for which `replace` returns a new
    /// target re-pointed there. References that change are written in the
    /// shortest encoding; property sizes and lazy-array end positions follow.
    pub fn rewrite(
        &self,
        data: &[u8],
        replace: &dyn Fn(ObjectRef) -> Option<ObjectRef>,
    ) -> Result<ObjectBytes> {
        if data.len() != self.len {
            return Err(Error::internal("object data does not match its decoding"));
        }
        let mut out = ObjectBytes::default();
        encode(&self.pieces, data, replace, &mut out)?;
        Ok(out)
    }
}

fn collect_references(pieces: &[Piece], out: &mut Vec<DataReference>) {
    for piece in pieces {
        match piece {
            Piece::Reference(r) => out.push(*r),
            Piece::Property(p) => collect_references(&p.value, out),
            Piece::LazyArray { content, .. } => collect_references(content, out),
            Piece::Bytes(_) | Piece::Opaque { .. } => {}
        }
    }
}

fn first_opaque(pieces: &[Piece]) -> Option<&Undecoded> {
    pieces.iter().find_map(|piece| match piece {
        Piece::Opaque { why, .. } => Some(why),
        Piece::Property(p) => first_opaque(&p.value),
        Piece::LazyArray { content, .. } => first_opaque(content),
        Piece::Bytes(_) | Piece::Reference(_) => None,
    })
}

fn encode(
    pieces: &[Piece],
    data: &[u8],
    replace: &dyn Fn(ObjectRef) -> Option<ObjectRef>,
    out: &mut ObjectBytes,
) -> Result<()> {
    for piece in pieces {
        match piece {
            Piece::Bytes(range) | Piece::Opaque { range, .. } => {
                out.bytes.extend_from_slice(&data[range.clone()])
            }
            Piece::Reference(r) => match replace(r.target) {
                Some(new) if new != r.target => {
                    out.bytes.extend_from_slice(&CompactIndex(new.0).to_bytes())
                }
                _ => out.bytes.extend_from_slice(&data[r.at..r.at + r.len]),
            },
            Piece::Property(tag) => {
                let mut value = ObjectBytes::default();
                encode(&tag.value, data, replace, &mut value)?;
                if value.bytes.len() == tag.value_range.len() {
                    out.bytes
                        .extend_from_slice(&data[tag.head.start..tag.array_index.end]);
                } else {
                    write_tag_head(tag, data, value.bytes.len(), &mut out.bytes)?;
                }
                let shift = out.bytes.len();
                out.bytes.extend_from_slice(&value.bytes);
                out.file_positions
                    .extend(value.file_positions.iter().map(|p| FilePosition {
                        at: p.at + shift,
                        target: p.target + shift,
                    }));
            }
            Piece::LazyArray { position, content } => {
                // The position is set where the data is placed (`ObjectBytes::placed_at`).
                let at = out.bytes.len();
                out.bytes.extend_from_slice(&data[*position..*position + 4]);
                encode(content, data, replace, out)?;
                out.file_positions.push(FilePosition {
                    at,
                    target: out.bytes.len(),
                });
            }
        }
    }
    Ok(())
}

/// Writes a tag whose value now has `size` bytes: the size code of the
/// info byte and the explicit size field are chosen as the engine's save
/// chooses them (`FPropertyTag` constructor).
fn write_tag_head(tag: &PropertyTag, data: &[u8], size: usize, out: &mut Vec<u8>) -> Result<()> {
    let (code, field): (u8, Vec<u8>) = match size {
        1 => (0, Vec::new()),
        2 => (1, Vec::new()),
        4 => (2, Vec::new()),
        12 => (3, Vec::new()),
        16 => (4, Vec::new()),
        0..=255 => (5, vec![size as u8]),
        256..=65535 => (6, (size as u16).to_le_bytes().to_vec()),
        _ => (
            7,
            i32::try_from(size)
                .map_err(|_| Error::limit("property size", size as u64, i32::MAX as u64))?
                .to_le_bytes()
                .to_vec(),
        ),
    };
    out.extend_from_slice(&data[tag.head.start..tag.info_at]);
    out.push((data[tag.info_at] & 0x8f) | (code << 4));
    out.extend_from_slice(&data[tag.info_at + 1..tag.head.end]);
    out.extend_from_slice(&field);
    out.extend_from_slice(&data[tag.array_index.clone()]);
    Ok(())
}

/// Decodes one export's data into pieces.
struct Walker<'a> {
    package: &'a Package,
    version: FileVersion,
    reader: Reader<'a>,
    serial_offset: u64,
}

type Decode<'a> = fn(&mut Walker<'a>, &mut Vec<Piece>) -> Result<()>;

impl<'a> Walker<'a> {
    fn object(&mut self, out: &mut Vec<Piece>, index: usize) -> Result<()> {
        let export = &self.package.exports[index];
        let class = self.package.class_path(ObjectRef::export(index));
        if export.class.is_null() {
            return self.opaque_rest(out, "UnrealScript class data is not decoded");
        }
        if export.flags & RF_HAS_STACK != 0 {
            self.state_frame(out)?;
        }
        let bools = self.properties(out)?;
        match native_data(&class) {
            Some(NativeData::Always(decode)) => decode(self, out)?,
            Some(NativeData::Texture) => self.texture(out, &bools)?,
            None if self.reader.at_end() => {}
            None => {
                return self
                    .opaque_rest(out, &format!("native data of class {class} is not decoded"))
            }
        }
        if !self.reader.at_end() {
            return Err(self.reader.error(format!(
                "{} bytes left after the data of a {class}",
                self.reader.remaining()
            )));
        }
        Ok(())
    }

    fn opaque_rest(&mut self, out: &mut Vec<Piece>, reason: &str) -> Result<()> {
        let start = self.reader.pos();
        let why = Undecoded {
            offset: self.reader.offset(),
            reason: reason.to_string(),
        };
        self.reader.skip(self.reader.remaining())?;
        out.push(Piece::Opaque {
            range: start..self.reader.pos(),
            why,
        });
        Ok(())
    }

    fn raw(&mut self, out: &mut Vec<Piece>, n: usize) -> Result<()> {
        let start = self.reader.pos();
        self.reader.skip(n)?;
        push_bytes(out, start..start + n);
        Ok(())
    }

    fn compact(&mut self, out: &mut Vec<Piece>) -> Result<i32> {
        let start = self.reader.pos();
        let value = CompactIndex::read_i32(&mut self.reader)?;
        push_bytes(out, start..self.reader.pos());
        Ok(value)
    }

    fn reference(&mut self, out: &mut Vec<Piece>) -> Result<ObjectRef> {
        let start = self.reader.pos();
        let target = ObjectRef(CompactIndex::read_i32(&mut self.reader)?);
        let valid = match target.target() {
            Target::Null => true,
            Target::Import(i) => i < self.package.imports.len(),
            Target::Export(i) => i < self.package.exports.len(),
        };
        if !valid {
            return Err(self.reader.error_at(
                start,
                format!(
                    "object reference {} points outside the tables ({} imports, {} exports)",
                    target.0,
                    self.package.imports.len(),
                    self.package.exports.len()
                ),
            ));
        }
        out.push(Piece::Reference(DataReference {
            at: start,
            len: self.reader.pos() - start,
            target,
        }));
        Ok(target)
    }

    fn name(&mut self, out: &mut Vec<Piece>) -> Result<&'a str> {
        let start = self.reader.pos();
        let index = self.compact(out)?;
        match usize::try_from(index)
            .ok()
            .and_then(|i| self.package.names.get(i))
        {
            Some(entry) => Ok(entry.name.as_str()),
            None => Err(self.reader.error_at(
                start,
                format!(
                    "name index {index} is outside the name table ({} names)",
                    self.package.names.len()
                ),
            )),
        }
    }

    fn i32(&mut self, out: &mut Vec<Piece>) -> Result<i32> {
        let start = self.reader.pos();
        let value = self.reader.i32()?;
        push_bytes(out, start..start + 4);
        Ok(value)
    }

    /// A compact element count, checked against the bytes that remain.
    fn count(&mut self, out: &mut Vec<Piece>, min_element: usize) -> Result<usize> {
        let start = self.reader.pos();
        let n = self.compact(out)?;
        self.reader.check_count_at(start, n as i64, min_element)
    }

    fn array(
        &mut self,
        out: &mut Vec<Piece>,
        min_element: usize,
        element: Decode<'a>,
    ) -> Result<()> {
        let n = self.count(out, min_element)?;
        for _ in 0..n {
            element(self, out)?;
        }
        Ok(())
    }

    fn byte_array(&mut self, out: &mut Vec<Piece>) -> Result<()> {
        let n = self.count(out, 1)?;
        self.raw(out, n)
    }

    /// A lazy array of bytes: after version 61 its end's file position
    /// comes first, and must match where the array ends.
    fn lazy_byte_array(&mut self, out: &mut Vec<Piece>) -> Result<()> {
        if !self.version.has_lazy_array_end_positions() {
            return self.byte_array(out);
        }
        let position = self.reader.pos();
        let end = self.reader.i32()?;
        let mut content = Vec::new();
        self.byte_array(&mut content)?;
        let actual = self.serial_offset + self.reader.pos() as u64;
        if end as i64 != actual as i64 {
            return Err(self.reader.error_at(
                position,
                format!("lazy array says it ends at file offset {end}, but it ends at {actual}"),
            ));
        }
        out.push(Piece::LazyArray { position, content });
        Ok(())
    }

    /// An engine string: compact length with terminator, negative for UTF-16.
    fn string(&mut self, out: &mut Vec<Piece>) -> Result<()> {
        let start = self.reader.pos();
        let len = self.compact(out)?;
        let bytes = if len < 0 {
            (len as i64).unsigned_abs() * 2
        } else {
            len as u64
        };
        let n = self.reader.check_count_at(start, bytes as i64, 1)?;
        self.raw(out, n)
    }

    fn state_frame(&mut self, out: &mut Vec<Piece>) -> Result<()> {
        let node = self.reference(out)?;
        self.reference(out)?; // state node
        self.raw(out, 8 + 4)?; // probe mask, latent action
        if !node.is_null() {
            self.compact(out)?; // code offset
        }
        Ok(())
    }

    /// Tagged properties up to `None`; returns the names of true bool properties.
    fn properties(&mut self, out: &mut Vec<Piece>) -> Result<Vec<&'a str>> {
        let mut true_bools = Vec::new();
        loop {
            let start = self.reader.pos();
            let mut head = Vec::new();
            let name = self.name(&mut head)?;
            if name.eq_ignore_ascii_case("None") {
                push_bytes(out, start..self.reader.pos());
                return Ok(true_bools);
            }
            let info_at = self.reader.pos();
            let info = self.reader.u8()?;
            let kind = info & 0x0f;
            let struct_name = if kind == property_type::STRUCT {
                Some(self.name(&mut head)?)
            } else {
                None
            };
            let head_end = self.reader.pos();
            let size = match (info >> 4) & 7 {
                0 => 1,
                1 => 2,
                2 => 4,
                3 => 12,
                4 => 16,
                5 => self.reader.u8()? as usize,
                6 => self.reader.u16()? as usize,
                _ => {
                    let at = self.reader.pos();
                    let size = self.reader.i32()?;
                    self.reader.check_count_at(at, size as i64, 1)?
                }
            };
            let size_field = head_end..self.reader.pos();
            let index_start = self.reader.pos();
            if info & 0x80 != 0 && kind != property_type::BOOL {
                let first = self.reader.u8()?;
                match first & 0xc0 {
                    0x80 => self.reader.skip(1)?,
                    0xc0 => self.reader.skip(3)?,
                    _ => {}
                }
            }
            let array_index = index_start..self.reader.pos();
            if size > self.reader.remaining() {
                return Err(self.reader.error_at(
                    size_field.start,
                    format!(
                        "property {name} has {size} bytes but only {} remain",
                        self.reader.remaining()
                    ),
                ));
            }
            if kind == property_type::BOOL && info & 0x80 != 0 {
                true_bools.push(name);
            }
            let value_start = self.reader.pos();
            let mut value = Vec::new();
            self.property_value(&mut value, name, kind, struct_name, size)?;
            if self.reader.pos() != value_start + size {
                return Err(self.reader.error_at(
                    value_start,
                    format!(
                        "the value of property {name} takes {} bytes, its tag says {size}",
                        self.reader.pos() - value_start
                    ),
                ));
            }
            out.push(Piece::Property(Box::new(PropertyTag {
                head: start..head_end,
                info_at,
                size_field,
                array_index,
                value_range: value_start..value_start + size,
                value,
            })));
        }
    }

    fn property_value(
        &mut self,
        out: &mut Vec<Piece>,
        name: &str,
        kind: u8,
        struct_name: Option<&str>,
        size: usize,
    ) -> Result<()> {
        use property_type::*;
        match kind {
            OBJECT | CLASS => {
                self.reference(out)?;
            }
            NAME => {
                self.name(out)?;
            }
            BYTE | INT | BOOL | FLOAT | STRING | VECTOR | ROTATOR | STR => self.raw(out, size)?,
            STRUCT => {
                // Old files name two structs as the engine did before
                // (`SerializeTaggedProperties`: "Region", "Rotation").
                let struct_name = match struct_name.unwrap_or_default() {
                    n if n.eq_ignore_ascii_case("Region") => "PointRegion",
                    n if n.eq_ignore_ascii_case("Rotation") => "Rotator",
                    n => n,
                };
                if struct_name.eq_ignore_ascii_case("PointRegion") {
                    // Zone, leaf index, zone number (`FPointRegion`).
                    self.reference(out)?;
                    self.raw(out, 4 + 1)?;
                } else if PLAIN_STRUCTS
                    .iter()
                    .any(|(n, s)| n.eq_ignore_ascii_case(struct_name) && *s == size)
                {
                    self.raw(out, size)?;
                } else {
                    self.opaque(
                        out,
                        size,
                        &format!("struct {struct_name} of property {name} is not decoded"),
                    )?;
                }
            }
            ARRAY | MAP | FIXED_ARRAY => self.opaque(
                out,
                size,
                &format!("the value of array or map property {name} is not decoded"),
            )?,
            _ => {
                return Err(self
                    .reader
                    .error(format!("property {name} has unknown type {kind}")))
            }
        }
        Ok(())
    }

    fn opaque(&mut self, out: &mut Vec<Piece>, n: usize, reason: &str) -> Result<()> {
        let start = self.reader.pos();
        let why = Undecoded {
            offset: self.reader.offset(),
            reason: reason.to_string(),
        };
        self.reader.skip(n)?;
        out.push(Piece::Opaque {
            range: start..start + n,
            why,
        });
        Ok(())
    }

    /// `Core.TextBuffer`: position, top line, text.
    fn text_buffer(&mut self, out: &mut Vec<Piece>) -> Result<()> {
        self.raw(out, 8)?;
        self.string(out)
    }

    /// `Engine.Palette`: an array of 4-byte colours.
    fn palette(&mut self, out: &mut Vec<Piece>) -> Result<()> {
        let n = self.count(out, 4)?;
        self.raw(out, n * 4)
    }

    /// `Engine.Sound` and `Engine.Music`: file type name, then the data as a lazy array.
    fn sound(&mut self, out: &mut Vec<Piece>) -> Result<()> {
        if !self.version.has_lazy_array_end_positions() {
            return self.opaque_rest(
                out,
                &format!("sounds of file version {} are not decoded", self.version.0),
            );
        }
        self.name(out)?;
        self.lazy_byte_array(out)
    }

    /// `Engine.Texture`: mipmaps (and compressed mipmaps when `bHasComp` is set).
    fn texture(&mut self, out: &mut Vec<Piece>, true_bools: &[&str]) -> Result<()> {
        if !self.version.has_lazy_array_end_positions() {
            return self.opaque_rest(
                out,
                &format!(
                    "textures of file version {} are not decoded",
                    self.version.0
                ),
            );
        }
        // A mipmap: lazy pixel data, USize, VSize, UBits, VBits.
        let mipmap: Decode<'a> = |w, out| {
            w.lazy_byte_array(out)?;
            w.raw(out, 4 + 4 + 1 + 1)
        };
        self.array(out, 4 + 1 + 10, mipmap)?;
        if true_bools
            .iter()
            .any(|b| b.eq_ignore_ascii_case("bHasComp"))
        {
            self.array(out, 4 + 1 + 10, mipmap)?;
        }
        Ok(())
    }

    /// `Engine.Polys`: element count and capacity (32-bit), then each `FPoly`.
    fn polys(&mut self, out: &mut Vec<Piece>) -> Result<()> {
        const MIN_POLY: usize = 1 + 48 + 4 + 5 + 4;
        let at = self.reader.pos();
        let count = self.i32(out)?;
        self.i32(out)?;
        let count = self.reader.check_count_at(at, count as i64, MIN_POLY)?;
        for _ in 0..count {
            let at = self.reader.pos();
            let vertices = self.compact(out)?;
            let vertices = self.reader.check_count_at(at, vertices as i64, 12)?;
            // Base, normal, texture U and V, the vertices, poly flags.
            self.raw(out, 48 + 12 * vertices + 4)?;
            self.reference(out)?; // actor
            self.reference(out)?; // texture
            self.name(out)?; // item name
            self.compact(out)?; // link
            self.compact(out)?; // brush poly
            self.raw(out, 4)?; // pan U, pan V
        }
        Ok(())
    }

    /// `Engine.Model` (after version 61): bounds, BSP arrays, zones, polys
    /// reference, light maps, leaves and lights.
    fn model(&mut self, out: &mut Vec<Piece>) -> Result<()> {
        if !self.version.has_inline_model_arrays() {
            return self.opaque_rest(
                out,
                &format!("models of file version {} are not decoded", self.version.0),
            );
        }
        self.raw(out, 25 + 16)?; // bounding box and sphere (`UPrimitive`)
        self.array(out, 12, |w, out| w.raw(out, 12))?; // vectors
        self.array(out, 12, |w, out| w.raw(out, 12))?; // points
        self.array(out, 25 + 7 + 11, |w, out| {
            // Plane, zone mask, flags; vertex pool, surface, three children,
            // collision and render bounds; zones, vertex count, leaves.
            w.raw(out, 16 + 8 + 1)?;
            for _ in 0..7 {
                w.compact(out)?;
            }
            w.raw(out, 2 + 1 + 8)
        })?;
        self.array(out, 1 + 4 + 6 + 4 + 1, |w, out| {
            w.reference(out)?; // texture
            w.raw(out, 4)?; // poly flags
            for _ in 0..6 {
                w.compact(out)?; // base, normal, U, V, light map, brush poly
            }
            w.raw(out, 4)?; // pan U, pan V
            w.reference(out)?; // actor
            Ok(())
        })?;
        self.array(out, 2, |w, out| {
            w.compact(out)?;
            w.compact(out).map(|_| ())
        })?; // vertices
        self.raw(out, 4)?; // shared sides
        let at = self.reader.pos();
        let zones = self.i32(out)?;
        let zones = self.reader.check_count_at(at, zones as i64, 1 + 16)?;
        for _ in 0..zones {
            self.reference(out)?; // zone actor
            self.raw(out, 16)?; // connectivity, visibility
        }
        self.reference(out)?; // polys
        self.array(out, 16 + 2 + 12, |w, out| {
            w.raw(out, 16)?; // data offset, pan
            w.compact(out)?; // U clamp
            w.compact(out)?; // V clamp
            w.raw(out, 12) // U scale, V scale, light actors
        })?;
        self.byte_array(out)?; // light bits
        self.array(out, 25, |w, out| w.raw(out, 25))?; // bounds
        self.array(out, 4, |w, out| w.raw(out, 4))?; // leaf hulls
        self.array(out, 3 + 8, |w, out| {
            for _ in 0..3 {
                w.compact(out)?; // zone, permeating, volumetric
            }
            w.raw(out, 8)
        })?;
        self.array(out, 1, |w, out| w.reference(out).map(|_| ()))?; // lights
        self.raw(out, 8) // root outside, linked
    }

    /// `Engine.Level`: actors, URL, model, reach specs, time, first deleted
    /// actor, text blocks, travel information.
    fn level(&mut self, out: &mut Vec<Piece>) -> Result<()> {
        let at = self.reader.pos();
        let actors = self.i32(out)?;
        self.i32(out)?;
        let actors = self.reader.check_count_at(at, actors as i64, 1)?;
        for _ in 0..actors {
            self.reference(out)?;
        }
        // URL: protocol, host, map, portal, options, port, valid.
        for _ in 0..4 {
            self.string(out)?;
        }
        self.array(out, 1, |w, out| w.string(out))?;
        self.raw(out, 8)?;
        self.reference(out)?; // model
        self.array(out, 4 + 2 + 13, |w, out| {
            w.raw(out, 4)?; // distance
            w.reference(out)?; // start
            w.reference(out)?; // end
            w.raw(out, 12 + 1) // radius, height, flags, pruned
        })?;
        self.raw(out, 4)?; // approximate time
        self.reference(out)?; // first deleted
        for _ in 0..16 {
            self.reference(out)?; // text blocks
        }
        match self.version.level_travel_info() {
            TravelInfo::Map => self.array(out, 2, |w, out| {
                w.string(out)?;
                w.string(out)
            }),
            TravelInfo::Lists => {
                self.array(out, 1, |w, out| w.string(out))?;
                self.array(out, 1, |w, out| w.string(out))
            }
            TravelInfo::None => Ok(()),
        }
    }
}

/// How the native data of a class is decoded.
enum NativeData<'a> {
    Always(Decode<'a>),
    Texture,
}

fn native_data<'a>(class: &str) -> Option<NativeData<'a>> {
    let decode: Decode<'a> = match class.to_ascii_lowercase().as_str() {
        "core.textbuffer" => Walker::text_buffer,
        "engine.palette" => Walker::palette,
        "engine.sound" | "engine.music" => Walker::sound,
        "engine.polys" => Walker::polys,
        "engine.model" => Walker::model,
        "engine.level" => Walker::level,
        "engine.texture" => return Some(NativeData::Texture),
        _ => return None,
    };
    Some(NativeData::Always(decode))
}

fn push_bytes(out: &mut Vec<Piece>, range: Range<usize>) {
    if range.is_empty() {
        return;
    }
    if let Some(Piece::Bytes(last)) = out.last_mut() {
        if last.end == range.start {
            last.end = range.end;
            return;
        }
    }
    out.push(Piece::Bytes(range));
}
