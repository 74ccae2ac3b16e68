//! The property walker: steps over an export's serialized property block
//! (`UObject::SerializeScriptProperties`) and says where it ends, so that the
//! class's native data that follows can be found (e.g. a SkeletalMesh's
//! materials for the Marvel Rivals fixup) and so `zenpak inspect
//! --properties` can show what a package holds. `Walker::walk(reader, class, collect)` returns the
//! block's start, end and (with `collect`) the top-level properties with a short rendering.
//!
//! Two encodings exist:
//! - unversioned (cooked packages, `PKG_UnversionedProperties`): an
//!   `FUnversionedHeader` (16-bit fragments: bits 0–6 properties to skip,
//!   bit 7 "has zero-mask bits", bit 8 "last fragment", bits 9–15 values
//!   that follow) and a zero mask (`u8`/`u16`/`u32` words for ≤8/≤16/more bits; set bit = zero
//!   value, not serialized), then the non-zero values in schema order.
//!   Types and struct layouts come from the `.usmap` mappings
//!   ([`crate::mappings`]).
//! - tagged/versioned: a list of `FPropertyTag`s, each with its size,
//!   terminated by the name `None`. Before 5.4 the type-specific tag fields (struct name + GUID,
//!   bool value, enum/inner/value type names) and the property-GUID byte; from 5.4 the complete
//!   type-name tree and a flags byte. Tested on synthetic blocks only (the corpus is unversioned).
//!
//! Structs with a native serializer (vectors, rotators, GUIDs, soft object
//! paths, gameplay tag containers, …) do not use either encoding; their
//! layouts are in [`native_struct`]. The walker decodes values only as far
//! as needed to step over them (and to show simple ones).
//!
//! # Rules (unversioned)
//! - Slot numbering: **a struct's own properties first, then its super's** (super-first misplaces
//!   every corpus class).
//! - Non-zero bools are one byte; arrays `i32` count + elements; sets/maps `i32` removed count +
//!   removed keys, then `i32` count + elements/pairs; structs recurse with their own header unless
//!   native; enums take their underlying type's size, except inside arrays/sets/maps where they are
//!   the entry's FName (5.7 maps keyed by `EPhysicalSurface`); soft object paths are an `i32` index
//!   when the package has a soft object path list (5.1+), else FName (+ asset FName from 5.1) +
//!   string.
//! - Native structs known but not stepped over (movie scene evaluation trees, Niagara variables,
//!   `FSpline`, instanced structs, material inputs…) fail with "struct `X` is serialized natively
//!   and zenpak does not know its layout" rather than guessing from their schema.
//! - Errors name export, class, property path (`Struct.Property > element 3 > …`) and absolute
//!   offset; counts are checked against the remaining bytes; nesting is bounded.
//!
//! # The codec
//! [`codec::Codec`] reads an export's whole property data into a [`tree`]
//! (every value typed, structs with native layouts as their fields, the
//! class's native data after the object GUID as bytes) and writes a tree
//! back, read and write of each type side by side. It checks itself: a tree
//! that does not write the export's bytes again is not returned (the export
//! is kept as an opaque run, with the reason). The walker above stays for
//! the game profiles' edits until they move onto the codec.
//!
//! # Files
//! - `codec/`: `mod.rs` (exports, unversioned blocks, values, structs), `tagged.rs` (tags and
//!   tagged values), `text.rs` (`FText` histories), `fixed.rs` (fixed native structs' fields).
//! - `package.rs`: `PackageContext::of(&LegacyPackage)`; `walk_export` (property block, then the
//!   object GUID flag `UObject::Serialize` writes after it, CDOs included; returns where native
//!   data starts); `walk_package` (every export, failures per export; adds `class_schema` schemas).
//! - `record.rs`: `Walker::recording_into` / `walk_export_recorded` also record every unversioned
//!   struct/class block (name, depth, header and span, chain slot count, each value's slot,
//!   property, type, zero flag, span) and every FName value's offset. Game profiles edit from this.
//! - `UnversionedHeader::from_values(slots, slot_count)` encodes as the cooker does: runs of at
//!   most 127 per fragment (a longer skip gets its own fragment), zero-mask bits only for fragments
//!   with a zero value, nothing after the last value; no values = one fragment skipping the slots.
//! - `class_schema.rs`: a mod's blueprint classes are rarely in the game's mappings; their schema
//!   is read from the class export (`UStruct::Serialize` after its property block: super, children,
//!   `ChildProperties` with per-type references), accepted only if the bytecode sizes follow.
//! - `schema_source.rs`: the schemas a package's data needs from other content packages (a
//!   blueprint parent, a component's class, a user-defined struct), found through the import
//!   table beside the package, in `--schemas` folders or in the game, bounded in depth and count.
//!
//! # Version facts used here and by game profiles (`src/version.rs`)
//! - `soft_object_path_is_top_level_asset_path()`: 5.1+; `property_tags_have_complete_type_names()`:
//!   5.4+; `real_size()`: 8 with LWC (UE5), else 4.
//! - `skeletal_material_size()`: cooked `FSkeletalMaterial` = interface 4 + slot name 8 +
//!   imported-slot-name bool32 4 + `FMeshUVChannelInfo` 24 = 40 up to 5.5, 44 from 5.6
//!   (`OverlayMaterialInterface`, `FFortniteMainBranchObjectVersion::
//!   MeshMaterialSlotOverlayMaterialAdded`). Checked on `SKM_Quinn_Simple` (5.6).
//! - `static_material_size()`: 36, 40 from 5.6; `static_mesh_render_data_ends_with_strip_flags()`
//!   (5.4+), `static_mesh_render_flags_are_a_byte()` (5.6+). Checked on `SM_BlueCube` (5.4),
//!   `SM_Cube` (5.5, 5.6), Clay meshes (5.1); same in CUE4Parse `FStaticMeshRenderData.cs`.
//!
//! # Tests
//! - `tests/profiles/properties_corpus.rs`: 1943 of 1975 `uassetapi` exports walk (1033 end at the
//!   GUID flag, 910 have native data); the 32 skipped are 31 unsupported native structs (28
//!   `MovieSceneCompiledData`, 2 Niagara, 1 5.7 `FSpline`) and one schema in a content package the
//!   corpus lacks (`Temperature_Volume_C`'s parent). The schemas found beside the package
//!   (`schema_source`: blueprint parents, components' classes, user-defined structs) walk 13 more
//!   (1930 without them: 9 in `TestJson/MotorTown`, 3 in SN2, 1 in Clay).
//! - `tests/profiles/properties_codec.rs`: every corpus export, read into a tree, through JSON
//!   and back, writes its bytes again; 2207 of 2454 exports decode (2139 of the 2172 of
//!   `uassetapi`: all the walker steps over, less two 4.27 class exports), 1713 with no byte run
//!   inside; the retoc pairs' packages have no mappings in the corpus.
//! - `tests/profiles/asset_json_schemas.rs`: `to-json` / `from-json` of a MotorTown blueprint with
//!   its parent beside it, alone (kept as bytes, `schema-not-found`), with `--schemas`, with the
//!   game (`--game-dir`); SN2's user-defined struct; a parent's parent found through the parent's
//!   package; two packages whose classes name each other as parents end.
//! - `tests/profiles/properties_header_encoding.rs`: all 3890 corpus headers re-encode to the
//!   engine's bytes, except 13 5.4 BlankGame object blocks starting with 4 zero bytes.
//! - `properties_synthetic.rs` (hand-made blocks, truncations), `properties_mutation.rs` (no panic).

mod class_schema;
pub mod codec;
pub mod document;
mod native;
mod package;
pub(crate) mod record;
mod schema_source;
pub mod tree;

use std::cell::RefCell;

use serde::Serialize;

use crate::binary::Reader;
use crate::error::{Context, Error, Result};
use crate::mappings::{PropertyType, SchemaView, StructSchema};
use crate::version::EngineVersion;

pub use class_schema::package_class_schemas;
pub use codec::Codec;
pub use native::{native_struct, NativeLayout};
pub use package::{
    export_class_name, walk_export, walk_export_recorded, walk_package, AfterBlock, ExportWalk,
    WalkOutcome,
};
pub use record::{Recording, StructVisit, ValueVisit};
pub use schema_source::{
    mappings_with_content_schemas, MissingSchema, PackageSource, SchemaSources,
};

/// What the walker needs to know about the package the data comes from.
#[derive(Debug, Clone)]
pub struct PackageContext<'a> {
    pub engine: EngineVersion,
    /// The package's name map (FName indices resolve through it).
    pub names: Vec<&'a str>,
    pub import_count: usize,
    pub export_count: usize,
    /// Each import's full path, then each export's (empty when unknown):
    /// object references read and write through them.
    pub object_paths: Vec<String>,
    /// Entries in the summary's soft object path list (5.1+). When present,
    /// soft object paths in export data are indices into it.
    pub soft_object_path_count: usize,
    /// `PKG_UnversionedProperties`: property blocks use the unversioned encoding.
    pub unversioned: bool,
}

impl PackageContext<'_> {
    fn name(&self, r: &mut Reader) -> Result<String> {
        let at = r.pos();
        let index = r.i32()?;
        let number = r.i32()?;
        let Some(base) = usize::try_from(index).ok().and_then(|i| self.names.get(i)) else {
            return Err(r.error_at(
                at,
                format!(
                    "FName index {index} is outside the name map ({} names)",
                    self.names.len()
                ),
            ));
        };
        Ok(crate::names::with_number(base, number.max(0) as u32).into_owned())
    }

    fn package_index(&self, r: &mut Reader) -> Result<i32> {
        let index =
            crate::legacy::PackageIndex::read_checked(r, self.import_count, self.export_count)?;
        Ok(index.0)
    }
}

/// One property the walker read (top level of the block).
#[derive(Debug, Clone, Serialize)]
pub struct PropertyInfo {
    pub name: String,
    /// `IntProperty`, `StructProperty<Vector>`, …
    #[serde(rename = "type")]
    pub ty: String,
    /// Static array element, when the property is a fixed-size array.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub array_index: Option<u8>,
    /// Offset of the value in the export data (absolute in the file stream).
    pub offset: u64,
    /// A short rendering of the value (`zero` for zero-masked ones).
    pub value: String,
}

/// Where an export's property block lies.
#[derive(Debug, Clone, Serialize)]
pub struct PropertyBlock {
    /// Offsets are absolute (header + .uexp stream), like serial offsets.
    pub start: u64,
    pub end: u64,
    pub properties: Vec<PropertyInfo>,
}

/// Nesting limit for structs in structs / containers (hostile data).
const MAX_DEPTH: usize = 48;

/// Steps over property blocks of one package.
pub struct Walker<'a> {
    pub(crate) cx: &'a PackageContext<'a>,
    pub(crate) mappings: Option<SchemaView<'a>>,
    /// Where struct blocks and FNames are, when asked for (see [`record`]).
    recording: Option<&'a RefCell<Recording>>,
}

impl<'a> Walker<'a> {
    pub fn new(cx: &'a PackageContext<'a>, mappings: Option<SchemaView<'a>>) -> Self {
        Walker {
            cx,
            mappings,
            recording: None,
        }
    }

    /// Also records the struct blocks and FNames the walk meets into `recording`.
    pub(crate) fn recording_into(mut self, recording: &'a RefCell<Recording>) -> Self {
        self.recording = Some(recording);
        self
    }

    /// Reads an FName value, noting where it is when recording.
    fn name_value(&self, r: &mut Reader) -> Result<String> {
        if let Some(rec) = self.recording {
            rec.borrow_mut().names.push(r.offset());
        }
        self.cx.name(r)
    }

    /// Walks the property block at the reader's position for an object of
    /// class `class_name`; leaves the reader at the end of the block.
    /// `collect` records the top-level properties.
    pub fn walk(&self, r: &mut Reader, class_name: &str, collect: bool) -> Result<PropertyBlock> {
        let start = r.offset();
        let mut properties = Vec::new();
        let out = if collect { Some(&mut properties) } else { None };
        if self.cx.unversioned {
            self.unversioned_struct(r, class_name, 0, out)?;
        } else {
            if self.cx.engine.tagged_objects_have_serialization_control() {
                let control = r.u8().context("class serialization control")?;
                if control & 0x02 != 0 {
                    r.u8().context("overridable serialization operation")?;
                }
            }
            self.tagged_block(r, 0, out)?;
        }
        Ok(PropertyBlock {
            start,
            end: r.offset(),
            properties,
        })
    }

    fn mappings(&self, what: &str) -> Result<SchemaView<'a>> {
        self.mappings.ok_or_else(|| {
            Error::usage(format!(
                "{what} is serialized unversioned; reading it needs the game's mappings"
            ))
            .with_hint(
                "give the game's .usmap: `[game] mappings` in mod.toml, or --mappings Game.usmap",
            )
        })
    }

    /// An unversioned block of struct/class `name`: header, zero mask, values.
    fn unversioned_struct(
        &self,
        r: &mut Reader,
        name: &str,
        depth: usize,
        mut out: Option<&mut Vec<PropertyInfo>>,
    ) -> Result<()> {
        if depth > MAX_DEPTH {
            return Err(r.error(format!("structs nest deeper than {MAX_DEPTH} levels")));
        }
        let header_start = r.offset();
        let header =
            UnversionedHeader::read(r).with_context(|| format!("unversioned header of {name}"))?;
        let visit = self.recording.map(|rec| {
            let mut rec = rec.borrow_mut();
            rec.structs.push(record::StructVisit {
                name: name.to_string(),
                depth,
                header_start,
                header: header.clone(),
                header_end: r.offset(),
                slot_count: self
                    .mappings
                    .and_then(|m| m.chain(name).ok())
                    .map(|chain| chain.iter().map(|s| s.property_count as usize).sum()),
                values: Vec::new(),
                end: r.offset(),
            });
            rec.structs.len() - 1
        });
        if !header.has_values() {
            return Ok(());
        }
        let mappings = self.mappings(name)?;
        let chain = mappings.chain(name).map_err(|e| {
            e.at(r.offset())
                .within(format!("unversioned properties of `{name}`"))
                .with_hint("use the mappings (.usmap) dumped from the game this package belongs to")
        })?;
        let total: usize = chain.iter().map(|s| s.property_count as usize).sum();
        for (slot, zero) in header.values()? {
            if slot >= total {
                return Err(r.error(format!(
                    "unversioned header names property slot {slot} but `{name}` has {total} (wrong mappings for this game?)"
                )));
            }
            let (schema, own) = slot_owner(&chain, slot);
            let Some((prop, element)) = schema.property_at(own as u16) else {
                return Err(r.error(format!(
                    "property slot {own} of `{}` is not in the mappings (wrong mappings for this game?)",
                    schema.name
                )));
            };
            let at = r.offset();
            let value = if zero {
                "zero".to_string()
            } else {
                self.value(r, &prop.ty, depth + 1).with_context(|| {
                    format!(
                        "property {}.{} ({})",
                        schema.name,
                        prop.name,
                        prop.ty.describe()
                    )
                })?
            };
            if let (Some(rec), Some(i)) = (self.recording, visit) {
                let mut rec = rec.borrow_mut();
                let end = r.offset();
                let s = &mut rec.structs[i];
                s.values.push(record::ValueVisit {
                    slot,
                    property: prop.name.clone(),
                    ty: prop.ty.clone(),
                    zero,
                    start: at,
                    end,
                });
                s.end = end;
            }
            if let Some(out) = out.as_deref_mut() {
                out.push(PropertyInfo {
                    name: prop.name.clone(),
                    ty: prop.ty.describe(),
                    array_index: (prop.array_size > 1).then_some(element),
                    offset: at,
                    value,
                });
            }
        }
        Ok(())
    }

    /// One value of type `ty` in unversioned/native form. Returns a short rendering.
    fn value(&self, r: &mut Reader, ty: &PropertyType, depth: usize) -> Result<String> {
        if depth > MAX_DEPTH {
            return Err(r.error(format!("values nest deeper than {MAX_DEPTH} levels")));
        }
        Ok(match ty {
            PropertyType::Bool => r.u8().map(|v| (v != 0).to_string())?,
            PropertyType::Byte | PropertyType::Int8 => r.u8()?.to_string(),
            PropertyType::Int16 => r.i16()?.to_string(),
            PropertyType::UInt16 => r.u16()?.to_string(),
            PropertyType::Int => r.i32()?.to_string(),
            PropertyType::UInt32 => r.u32()?.to_string(),
            PropertyType::Int64 => r.i64()?.to_string(),
            PropertyType::UInt64 => r.u64()?.to_string(),
            PropertyType::Float => r.f32()?.to_string(),
            PropertyType::Double => r.f64()?.to_string(),
            PropertyType::Enum {
                underlying,
                enum_name,
            } => {
                let raw = self.value(r, underlying, depth + 1)?;
                let name = raw.parse::<u64>().ok().and_then(|v| {
                    self.mappings
                        .and_then(|m| m.enum_schema(enum_name))
                        .and_then(|e| e.name_of(v))
                });
                match name {
                    Some(n) => n.to_string(),
                    None => format!("{enum_name}({raw})"),
                }
            }
            PropertyType::Name => self.name_value(r)?,
            PropertyType::Str | PropertyType::Utf8Str | PropertyType::AnsiStr => {
                format!("{:?}", r.fstring()?)
            }
            PropertyType::Object | PropertyType::WeakObject | PropertyType::Interface => {
                format!("object {}", self.cx.package_index(r)?)
            }
            PropertyType::LazyObject => {
                r.guid()?;
                "lazy object".to_string()
            }
            PropertyType::SoftObject | PropertyType::AssetObject => self.soft_object_path(r)?,
            PropertyType::Delegate => {
                let object = self.cx.package_index(r)?;
                format!("delegate {object}.{}", self.cx.name(r)?)
            }
            PropertyType::MulticastDelegate => {
                let n = r.count_i32(12)?;
                for _ in 0..n {
                    self.cx.package_index(r)?;
                    self.cx.name(r)?;
                }
                format!("[{n} delegates]")
            }
            PropertyType::FieldPath => {
                let n = r.count_i32(8)?;
                let mut path = Vec::with_capacity(n);
                for _ in 0..n {
                    path.push(self.cx.name(r)?);
                }
                self.cx.package_index(r)?;
                path.join(".")
            }
            PropertyType::Text => self.text(r, depth)?,
            PropertyType::Struct(name) => self.struct_value(r, name, depth)?,
            PropertyType::Array(inner) => {
                let n = r.count_i32(0)?;
                for i in 0..n {
                    self.element(r, inner, depth + 1)
                        .with_context(|| format!("element {i}"))?;
                }
                format!("[{n}]")
            }
            PropertyType::Set(inner) => {
                let removed = r.count_i32(0)?;
                for _ in 0..removed {
                    self.element(r, inner, depth + 1)?;
                }
                let n = r.count_i32(0)?;
                for i in 0..n {
                    self.element(r, inner, depth + 1)
                        .with_context(|| format!("element {i}"))?;
                }
                format!("{{{n}}}")
            }
            PropertyType::Map(key, value) => {
                let removed = r.count_i32(0)?;
                for _ in 0..removed {
                    self.element(r, key, depth + 1)?;
                }
                let n = r.count_i32(0)?;
                for i in 0..n {
                    self.element(r, key, depth + 1)
                        .with_context(|| format!("key {i}"))?;
                    self.element(r, value, depth + 1)
                        .with_context(|| format!("value {i}"))?;
                }
                format!("{{{n} entries}}")
            }
            PropertyType::Optional(inner) => {
                // A zero (unset) optional is carried by the zero mask; a set one
                // is its flag then the value.
                let at = r.pos();
                match r.u8()? {
                    0 => "unset".to_string(),
                    1 => self.value(r, inner, depth + 1)?,
                    v => return Err(r.error_at(at, format!("optional's is-set flag is {v}"))),
                }
            }
            PropertyType::Unknown => return Err(r.error(
                "the mappings give this property no type (code 0xFF); it cannot be stepped over",
            )),
        })
    }

    /// An element of an array, set or map. Enums there are written as their
    /// entry's FName, not as the underlying integer (seen in 5.7 maps keyed
    /// by `EPhysicalSurface`; CUE4Parse reads them the same way).
    fn element(&self, r: &mut Reader, ty: &PropertyType, depth: usize) -> Result<String> {
        match ty {
            PropertyType::Enum { .. } => self.cx.name(r),
            _ => self.value(r, ty, depth),
        }
    }

    /// A struct value: native layout if the struct has one, else its schema.
    fn struct_value(&self, r: &mut Reader, name: &str, depth: usize) -> Result<String> {
        if let Some(layout) = native_struct(name, self.cx.engine) {
            return native::read(self, r, name, layout, depth);
        }
        if !self.cx.unversioned {
            self.tagged_block(r, depth, None)?;
            return Ok(format!("{name} {{..}}"));
        }
        if self
            .mappings
            .is_some_and(|m| m.struct_schema(name).is_none())
        {
            return Err(Error::unsupported(format!(
                "struct `{name}` is neither natively serialized (known to zenpak) nor in the mappings"
            ))
            .at(r.offset()));
        }
        self.unversioned_struct(r, name, depth, None)?;
        Ok(format!("{name} {{..}}"))
    }

    /// `FSoftObjectPath`: an index into the package's list (5.1+ packages
    /// that have one), else asset path name(s) and a sub-path string.
    pub(crate) fn soft_object_path(&self, r: &mut Reader) -> Result<String> {
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
            return Ok(format!("soft path #{i}"));
        }
        let mut path = self.cx.name(r)?;
        if self.cx.engine.soft_object_path_is_top_level_asset_path() {
            let asset = self.cx.name(r)?;
            if asset != "None" {
                path = format!("{path}.{asset}");
            }
        }
        let sub = r.fstring()?;
        Ok(if sub.is_empty() {
            path
        } else {
            format!("{path}:{sub}")
        })
    }

    /// `FText`: flags, history type, then the history's fields.
    fn text(&self, r: &mut Reader, depth: usize) -> Result<String> {
        if depth > MAX_DEPTH {
            return Err(r.error("texts nest too deeply"));
        }
        r.u32()?; // flags
        let at = r.pos();
        let history = r.i8()?;
        Ok(match history {
            -1 => {
                if r.bool32()? {
                    format!("{:?}", r.fstring()?)
                } else {
                    "empty text".to_string()
                }
            }
            0 => {
                let _namespace = r.fstring()?;
                let _key = r.fstring()?;
                format!("{:?}", r.fstring()?)
            }
            1 | 3 => {
                // Named / argument format: pattern, then (name, argument) pairs.
                self.text(r, depth + 1)?;
                let n = r.count_i32(5)?;
                for _ in 0..n {
                    r.fstring()?;
                    self.format_argument(r, depth)?;
                }
                "formatted text".to_string()
            }
            2 => {
                self.text(r, depth + 1)?;
                let n = r.count_i32(1)?;
                for _ in 0..n {
                    self.format_argument(r, depth)?;
                }
                "formatted text".to_string()
            }
            10 => {
                self.text(r, depth + 1)?;
                r.u8()?;
                "transformed text".to_string()
            }
            11 => {
                let table = self.cx.name(r)?;
                let key = r.fstring()?;
                format!("string table {table}:{key}")
            }
            other => {
                return Err(r.error_at(
                    at,
                    format!("text history type {other} is not supported by the walker"),
                ))
            }
        })
    }

    fn format_argument(&self, r: &mut Reader, depth: usize) -> Result<()> {
        let at = r.pos();
        match r.i8()? {
            0 | 1 | 3 => r.skip(8),
            2 => r.skip(4),
            4 => self.text(r, depth + 1).map(|_| ()),
            5 => r.skip(1),
            t => Err(r.error_at(at, format!("unknown text format argument type {t}"))),
        }
    }

    /// A tagged (versioned) property block: tags with sizes up to `None`.
    fn tagged_block(
        &self,
        r: &mut Reader,
        depth: usize,
        mut out: Option<&mut Vec<PropertyInfo>>,
    ) -> Result<()> {
        if depth > MAX_DEPTH {
            return Err(r.error("tagged structs nest too deeply"));
        }
        let complete_type_names = self.cx.engine.property_tags_have_complete_type_names();
        loop {
            let name = self.cx.name(r).context("property tag name")?;
            if name == "None" {
                return Ok(());
            }
            let (ty, size, bool_value) = if complete_type_names {
                let ty = self.type_name_tree(r, 0)?;
                let size = r.count_i32(0)?;
                let flags = r.u8()?;
                if flags & 0x01 != 0 {
                    r.i32()?; // array index
                }
                if flags & 0x02 != 0 {
                    r.guid()?;
                }
                if flags & 0x04 != 0 {
                    let extensions = r.u8()?;
                    if extensions & 0x02 != 0 {
                        r.u8()?;
                        r.bool32()?;
                    }
                }
                (ty, size, flags & 0x10 != 0)
            } else {
                let ty = self.cx.name(r)?;
                let size = r.count_i32(0)?;
                r.i32()?; // array index
                let mut bool_value = false;
                match ty.as_str() {
                    "StructProperty" => {
                        self.cx.name(r)?;
                        r.guid()?;
                    }
                    "BoolProperty" => bool_value = r.u8()? != 0,
                    "ByteProperty" | "EnumProperty" | "ArrayProperty" | "SetProperty"
                    | "OptionalProperty" => {
                        self.cx.name(r)?;
                    }
                    "MapProperty" => {
                        self.cx.name(r)?;
                        self.cx.name(r)?;
                    }
                    _ => {}
                }
                if r.u8()? != 0 {
                    r.guid()?;
                }
                (ty, size, bool_value)
            };
            let at = r.offset();
            r.skip(size)
                .with_context(|| format!("value of property {name}"))?;
            if let Some(out) = out.as_deref_mut() {
                out.push(PropertyInfo {
                    name,
                    value: if ty == "BoolProperty" {
                        bool_value.to_string()
                    } else {
                        format!("{size} bytes")
                    },
                    ty,
                    array_index: None,
                    offset: at,
                });
            }
        }
    }

    /// 5.4+ tags: the type as a tree of names (`ArrayProperty(StructProperty(Vector))`).
    fn type_name_tree(&self, r: &mut Reader, depth: usize) -> Result<String> {
        if depth > 16 {
            return Err(r.error("property type name nests too deeply"));
        }
        let name = self.cx.name(r)?;
        let inner = r.count_i32(12)?;
        if inner == 0 {
            return Ok(name);
        }
        let mut parts = Vec::with_capacity(inner);
        for _ in 0..inner {
            parts.push(self.type_name_tree(r, depth + 1)?);
        }
        Ok(format!("{name}({})", parts.join(",")))
    }
}

/// Which struct of the chain (the struct itself first, then its supers)
/// owns global slot `slot`, and the slot within it. The engine numbers a
/// struct's own properties first, then its super struct's, and so on.
fn slot_owner<'s>(chain: &[&'s StructSchema], mut slot: usize) -> (&'s StructSchema, usize) {
    for s in chain.iter() {
        if slot < s.property_count as usize {
            return (s, slot);
        }
        slot -= s.property_count as usize;
    }
    // Callers check `slot < total` first.
    (chain[0], slot)
}

/// One fragment of an `FUnversionedHeader`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fragment {
    /// Properties skipped before this fragment's values (they keep their defaults).
    pub skip: u8,
    /// Values in this fragment.
    pub values: u8,
    /// Whether the zero mask has a bit for each of this fragment's values.
    pub has_zeroes: bool,
    pub is_last: bool,
}

impl Fragment {
    pub(crate) fn unpack(packed: u16) -> Self {
        Fragment {
            skip: (packed & 0x7f) as u8,
            has_zeroes: packed & 0x80 != 0,
            is_last: packed & 0x100 != 0,
            values: (packed >> 9) as u8,
        }
    }

    pub(crate) fn pack(self) -> u16 {
        (self.skip as u16 & 0x7f)
            | if self.has_zeroes { 0x80 } else { 0 }
            | if self.is_last { 0x100 } else { 0 }
            | ((self.values as u16) << 9)
    }
}

/// `FUnversionedHeader`: which property slots have values, and which of those are zero.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnversionedHeader {
    pub fragments: Vec<Fragment>,
    /// One bit per value of the fragments with `has_zeroes`, in order; set = zero.
    pub zero_mask: Vec<bool>,
}

/// A struct has at most a few thousand properties; 0xFFFF slots is a hard bound.
const MAX_FRAGMENTS: usize = 1 << 12;

impl UnversionedHeader {
    pub(crate) fn read(r: &mut Reader) -> Result<Self> {
        let mut fragments = Vec::new();
        let mut masked = 0usize;
        loop {
            if fragments.len() >= MAX_FRAGMENTS {
                return Err(r.error("unversioned header has no last fragment"));
            }
            let f = Fragment::unpack(r.u16()?);
            if f.has_zeroes {
                masked += f.values as usize;
            }
            fragments.push(f);
            if f.is_last {
                break;
            }
        }
        let mut zero_mask = Vec::new();
        if masked > 0 {
            // The mask is stored in the smallest of u8 / u16 / u32 words that holds it.
            let bytes = if masked <= 8 {
                1
            } else if masked <= 16 {
                2
            } else {
                masked.div_ceil(32) * 4
            };
            let raw = r.bytes(bytes).context("zero mask")?;
            zero_mask = (0..masked)
                .map(|i| raw[i / 8] & (1 << (i % 8)) != 0)
                .collect();
        }
        Ok(UnversionedHeader {
            fragments,
            zero_mask,
        })
    }

    pub fn write(&self, w: &mut crate::binary::Writer) {
        for f in &self.fragments {
            w.u16(f.pack());
        }
        let masked = self.zero_mask.len();
        if masked > 0 {
            let bytes = if masked <= 8 {
                1
            } else if masked <= 16 {
                2
            } else {
                masked.div_ceil(32) * 4
            };
            for bits in self.zero_mask.chunks(8) {
                let byte = bits
                    .iter()
                    .enumerate()
                    .fold(0u8, |b, (i, &z)| b | ((z as u8) << i));
                w.u8(byte);
            }
            w.zeros(bytes - masked.div_ceil(8));
        }
    }

    /// The header of a block holding values for `slots` (slot, is-zero),
    /// encoded as the cooker does: runs of skipped and present slots, at most
    /// 127 of each per fragment (a longer skip takes a fragment of its own
    /// with no values), zero-mask bits only for fragments that have a zero
    /// value, no fragment after the last value. `slots` must be ascending and
    /// unique. Checked against the engine's headers in
    /// `tests/profiles/properties_header_encoding.rs` (every struct block of the corpus).
    ///
    /// A block with no values skips `slot_count` slots (at most 127) in its
    /// one fragment: `slot_count` is the number of slots of the struct and its supers.
    pub fn from_values(slots: &[(usize, bool)], slot_count: usize) -> Result<Self> {
        const RUN_MAX: u8 = 0x7f;
        if slots.is_empty() {
            return Ok(UnversionedHeader {
                fragments: vec![Fragment {
                    skip: slot_count.min(RUN_MAX as usize) as u8,
                    values: 0,
                    has_zeroes: false,
                    is_last: true,
                }],
                zero_mask: Vec::new(),
            });
        }
        let fresh = Fragment {
            skip: 0,
            values: 0,
            has_zeroes: false,
            is_last: false,
        };
        let mut fragments = vec![fresh];
        let mut next = 0usize;
        for &(slot, zero) in slots {
            if slot < next {
                return Err(Error::internal(format!(
                    "unversioned header slots are not ascending at slot {slot}"
                )));
            }
            for _ in next..slot {
                let last = fragments.last().expect("one fragment at least");
                if last.values > 0 || last.skip == RUN_MAX {
                    fragments.push(fresh);
                }
                fragments.last_mut().expect("pushed").skip += 1;
            }
            if fragments.last().expect("one fragment").values == RUN_MAX {
                fragments.push(fresh);
            }
            let last = fragments.last_mut().expect("one fragment");
            last.values += 1;
            last.has_zeroes |= zero;
            next = slot + 1;
        }
        fragments.last_mut().expect("one fragment").is_last = true;
        // The zero bits of the fragments that have a zero value: each
        // fragment's values are the next `values` slots.
        let mut zero_mask = Vec::new();
        let mut at = 0usize;
        for f in &fragments {
            let values = &slots[at..at + f.values as usize];
            if f.has_zeroes {
                zero_mask.extend(values.iter().map(|&(_, zero)| zero));
            }
            at += f.values as usize;
        }
        Ok(UnversionedHeader {
            fragments,
            zero_mask,
        })
    }

    /// The serialized bytes of this header.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut w = crate::binary::Writer::new();
        self.write(&mut w);
        w.into_inner()
    }

    /// Whether any value (zero or not) is present.
    pub(crate) fn has_values(&self) -> bool {
        self.fragments.iter().any(|f| f.values > 0)
    }

    /// The slots that have values, each with whether it is zero (not serialized).
    pub fn values(&self) -> Result<Vec<(usize, bool)>> {
        let mut out = Vec::new();
        let mut slot = 0usize;
        let mut mask_bit = 0usize;
        for f in &self.fragments {
            slot += f.skip as usize;
            for _ in 0..f.values {
                let zero = if f.has_zeroes {
                    let z = self.zero_mask.get(mask_bit).copied().unwrap_or(false);
                    mask_bit += 1;
                    z
                } else {
                    false
                };
                out.push((slot, zero));
                slot += 1;
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fragment_packing() {
        let f = Fragment {
            skip: 3,
            values: 5,
            has_zeroes: true,
            is_last: true,
        };
        assert_eq!(Fragment::unpack(f.pack()), f);
        // 2 skipped, 1 value, last: 0x0302
        assert_eq!(
            Fragment::unpack(0x0302),
            Fragment {
                skip: 2,
                values: 1,
                has_zeroes: false,
                is_last: true
            }
        );
    }

    #[test]
    fn header_round_trip_and_slots() {
        let h = UnversionedHeader {
            fragments: vec![
                Fragment {
                    skip: 1,
                    values: 2,
                    has_zeroes: false,
                    is_last: false,
                },
                Fragment {
                    skip: 3,
                    values: 10,
                    has_zeroes: true,
                    is_last: true,
                },
            ],
            zero_mask: (0..10).map(|i| i % 3 == 0).collect(),
        };
        let mut w = crate::binary::Writer::new();
        h.write(&mut w);
        let bytes = w.into_inner();
        assert_eq!(bytes.len(), 4 + 2);
        let back = UnversionedHeader::read(&mut Reader::new(&bytes)).unwrap();
        assert_eq!(back, h);
        let v = back.values().unwrap();
        assert_eq!(v[0], (1, false));
        assert_eq!(v[2], (6, true));
        assert_eq!(v.len(), 12);
    }

    #[test]
    fn truncated_header_is_an_error() {
        assert!(UnversionedHeader::read(&mut Reader::new(&[0x01, 0x00])).is_err());
        assert!(UnversionedHeader::read(&mut Reader::new(&[0x80, 0x03])).is_err());
    }
}
