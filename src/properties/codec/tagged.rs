//! Tagged (versioned) property blocks: each property's `FPropertyTag`
//! (before 5.4 a type name and the fields its type adds; from 5.4 the type
//! as a tree of names and a flags byte) and its value, whose size the tag
//! gives and the writer computes.

use crate::binary::{Reader, Writer};
use crate::error::{Context, Error, Result};
use crate::mappings::PropertyType;

use super::super::tree::*;
use super::super::MAX_DEPTH;
use super::{len_i32, value_kind, Codec};

impl Codec<'_> {
    pub(super) fn tagged_block(&self, r: &mut Reader, depth: usize) -> Result<Block> {
        if depth > MAX_DEPTH {
            return Err(r.error("tagged structs nest too deeply"));
        }
        let complete = self.engine().property_tags_have_complete_type_names();
        let mut properties = Vec::new();
        loop {
            let name = self.name(r).context("property tag name")?;
            if name.0 == "None" {
                return Ok(Block::Tagged { properties });
            }
            let (tag, size, bool_value) = if complete {
                self.complete_tag(r)?
            } else {
                self.named_tag(r)?
            };
            let data = r
                .bytes(size)
                .with_context(|| format!("value of property {}", name.0))?;
            let base = r.offset() - size as u64;
            let value = if let Some(b) = bool_value {
                Value::Bool(b)
            } else {
                let ty = tag_type(&tag);
                let mut sub = Reader::with_base(data, base);
                match self.tagged_value(&mut sub, &ty, size, depth) {
                    Ok(v) if sub.at_end() => v,
                    _ => Value::Opaque(Hex(data.to_vec())),
                }
            };
            properties.push(TaggedProperty { name, tag, value });
        }
    }

    /// A tag before 5.4. Returns the tag, the value's size and, for a bool, its value.
    fn named_tag(&self, r: &mut Reader) -> Result<(Tag, usize, Option<bool>)> {
        let ty = self.name(r)?;
        let size = r.count_i32(0)?;
        let array_index = r.i32()?;
        let (mut struct_name, mut struct_guid, mut inner, mut value_type) =
            (None, None, None, None);
        let mut bool_value = None;
        match ty.0.as_str() {
            "StructProperty" => {
                struct_name = Some(self.name(r)?);
                struct_guid = Some(Guid(r.guid()?));
            }
            "BoolProperty" => {
                let at = r.pos();
                bool_value = Some(match r.u8()? {
                    0 => false,
                    1 => true,
                    v => return Err(r.error_at(at, format!("bool tag value is {v}"))),
                });
            }
            "ByteProperty" | "EnumProperty" | "ArrayProperty" | "SetProperty"
            | "OptionalProperty" => inner = Some(self.name(r)?),
            "MapProperty" => {
                inner = Some(self.name(r)?);
                value_type = Some(self.name(r)?);
            }
            _ => {}
        }
        let at = r.pos();
        let property_guid = match r.u8()? {
            0 => None,
            1 => Some(Guid(r.guid()?)),
            v => return Err(r.error_at(at, format!("property GUID flag is {v}"))),
        };
        Ok((
            Tag::Named {
                ty,
                array_index,
                struct_name,
                struct_guid,
                inner,
                value_type,
                property_guid,
            },
            size,
            bool_value,
        ))
    }

    /// A 5.4+ tag: type name tree, size, flags and what the flags add.
    fn complete_tag(&self, r: &mut Reader) -> Result<(Tag, usize, Option<bool>)> {
        let ty = self.type_name(r, 0)?;
        let size = r.count_i32(0)?;
        let flags = r.u8()?;
        let array_index = if flags & 0x01 != 0 { r.i32()? } else { 0 };
        let property_guid = if flags & 0x02 != 0 {
            Some(Guid(r.guid()?))
        } else {
            None
        };
        let extensions = if flags & 0x04 != 0 {
            let start = r.pos();
            let ext = r.u8()?;
            if ext & 0x02 != 0 {
                r.u8()?;
                r.bool32()?;
            }
            Some(Hex(r.data()[start..r.pos()].to_vec()))
        } else {
            None
        };
        let bool_value = (ty.name.0 == "BoolProperty").then_some(flags & 0x10 != 0);
        Ok((
            Tag::Complete {
                ty,
                // The bits the other fields and the value imply are
                // recomputed on write.
                flags: flags & !IMPLIED_FLAGS,
                array_index,
                property_guid,
                extensions,
            },
            size,
            bool_value,
        ))
    }

    fn type_name(&self, r: &mut Reader, depth: usize) -> Result<TypeName> {
        if depth > 16 {
            return Err(r.error("property type name nests too deeply"));
        }
        let name = self.name(r)?;
        let n = r.count_i32(12)?;
        let mut parameters = Vec::with_capacity(n);
        for _ in 0..n {
            parameters.push(self.type_name(r, depth + 1)?);
        }
        Ok(TypeName { name, parameters })
    }

    fn write_type_name(&self, w: &mut Writer, t: &TypeName) -> Result<()> {
        self.write_name(w, &t.name)?;
        w.i32(len_i32(t.parameters.len())?);
        for p in &t.parameters {
            self.write_type_name(w, p)?;
        }
        Ok(())
    }

    /// Writes a tag before 5.4 (what follows the property's name) with a
    /// zero size; returns where the size goes, to be set once the value is written.
    fn write_named_tag(
        &self,
        w: &mut Writer,
        tag: &Tag,
        bool_value: Option<bool>,
    ) -> Result<usize> {
        let Tag::Named {
            ty,
            array_index,
            struct_name,
            struct_guid,
            inner,
            value_type,
            property_guid,
        } = tag
        else {
            return Err(Error::invalid("a 5.4+ tag where a named tag is written"));
        };
        self.write_name(w, ty)?;
        let size_at = w.pos();
        w.i32(0);
        w.i32(*array_index);
        match ty.0.as_str() {
            "StructProperty" => {
                self.write_name(w, required(struct_name, "struct_name")?)?;
                w.guid(&struct_guid.map_or([0; 16], |g| g.0));
            }
            "BoolProperty" => w.u8(bool_value.unwrap_or(false) as u8),
            "ByteProperty" | "EnumProperty" | "ArrayProperty" | "SetProperty"
            | "OptionalProperty" => self.write_name(w, required(inner, "inner")?)?,
            "MapProperty" => {
                self.write_name(w, required(inner, "inner")?)?;
                self.write_name(w, required(value_type, "value_type")?)?;
            }
            _ => {}
        }
        match property_guid {
            None => w.u8(0),
            Some(g) => {
                w.u8(1);
                w.guid(&g.0);
            }
        }
        Ok(size_at)
    }

    pub(super) fn write_tagged_block(
        &self,
        w: &mut Writer,
        properties: &[TaggedProperty],
        depth: usize,
    ) -> Result<()> {
        if depth > MAX_DEPTH {
            return Err(Error::invalid("tagged structs nest too deeply"));
        }
        for p in properties {
            self.write_name(w, &p.name)?;
            let bool_value = match (&p.value, tag_is_bool(&p.tag)) {
                (Value::Bool(b), true) => Some(*b),
                (_, true) => {
                    return Err(Error::invalid(format!(
                        "property `{}` is a BoolProperty: its value must be a bool",
                        p.name.0
                    )))
                }
                _ => None,
            };
            let size_at = match &p.tag {
                Tag::Named { .. } => self.write_named_tag(w, &p.tag, bool_value)?,
                Tag::Complete {
                    ty,
                    flags,
                    array_index,
                    property_guid,
                    extensions,
                } => {
                    self.write_type_name(w, ty)?;
                    let size_at = w.pos();
                    w.i32(0);
                    let mut flags = *flags & !IMPLIED_FLAGS;
                    flags |= (*array_index != 0) as u8;
                    flags |= (property_guid.is_some() as u8) << 1;
                    flags |= (extensions.is_some() as u8) << 2;
                    flags |= (bool_value == Some(true)) as u8 * 0x10;
                    w.u8(flags);
                    if *array_index != 0 {
                        w.i32(*array_index);
                    }
                    if let Some(g) = property_guid {
                        w.guid(&g.0);
                    }
                    if let Some(e) = extensions {
                        w.bytes(&e.0);
                    }
                    size_at
                }
            };
            let start = w.pos();
            if bool_value.is_none() {
                let ty = tag_type(&p.tag);
                self.write_tagged_value(w, &ty, &p.value, depth)
                    .with_context(|| format!("property {}", p.name.0))?;
            }
            let size = len_i32(w.pos() - start)?;
            w.patch_i32(size_at, size);
        }
        self.write_name_text(w, "None")
    }

    /// A tagged value of `size` bytes whose type the tag gives.
    fn tagged_value(
        &self,
        r: &mut Reader,
        ty: &TagType,
        size: usize,
        depth: usize,
    ) -> Result<Value> {
        if depth > MAX_DEPTH {
            return Err(r.error("tagged values nest too deeply"));
        }
        Ok(match ty {
            TagType::Simple(t) => self.value(r, t, depth + 1)?,
            TagType::Byte => {
                if size == 1 {
                    Value::Byte(r.u8()?)
                } else {
                    Value::Name(self.name(r)?)
                }
            }
            TagType::EnumName => Value::Name(self.name(r)?),
            TagType::Struct(name) => Value::Struct(Box::new(self.struct_value(r, name, depth)?)),
            TagType::Array(inner) => {
                let n = r.count_i32(1)?;
                let mut items = Vec::with_capacity(n);
                match inner.as_ref() {
                    TagType::InnerStruct => {
                        let inner_name = self.name(r)?;
                        let (inner, _, _) = self.named_tag(r)?;
                        let Tag::Named {
                            struct_name: Some(struct_name),
                            ..
                        } = &inner
                        else {
                            return Err(r.error("an array of structs without its inner struct tag"));
                        };
                        let struct_name = struct_name.0.clone();
                        for _ in 0..n {
                            items.push(Value::Struct(Box::new(self.struct_value(
                                r,
                                &struct_name,
                                depth,
                            )?)));
                        }
                        return Ok(Value::StructArray {
                            inner_name,
                            inner: Box::new(inner),
                            items,
                        });
                    }
                    TagType::Byte => {
                        // Raw bytes or enum names: the size tells.
                        let bytes = size.checked_sub(4) == Some(n);
                        for _ in 0..n {
                            items.push(if bytes {
                                Value::Byte(r.u8()?)
                            } else {
                                Value::Name(self.name(r)?)
                            });
                        }
                    }
                    TagType::Simple(PropertyType::Bool) => {
                        for _ in 0..n {
                            items.push(Value::Bool(r.u8()? != 0));
                        }
                    }
                    inner => {
                        for _ in 0..n {
                            items.push(self.tagged_value(r, inner, 0, depth + 1)?);
                        }
                    }
                }
                Value::Array(items)
            }
            TagType::Set(inner) => {
                let removed = self.tagged_elements(r, inner, depth)?;
                let items = self.tagged_elements(r, inner, depth)?;
                Value::Set { removed, items }
            }
            TagType::Map(key, value) => {
                let removed = self.tagged_elements(r, key, depth)?;
                let n = r.count_i32(1)?;
                let mut entries = Vec::with_capacity(n);
                for _ in 0..n {
                    let k = self.tagged_value(r, key, 0, depth + 1)?;
                    let v = self.tagged_value(r, value, 0, depth + 1)?;
                    entries.push((k, v));
                }
                Value::Map { removed, entries }
            }
            TagType::Unknown | TagType::InnerStruct => {
                return Err(Error::unsupported(
                    "a tagged value of a type the codec does not decode",
                ))
            }
        })
    }

    fn tagged_elements(&self, r: &mut Reader, ty: &TagType, depth: usize) -> Result<Vec<Value>> {
        let n = r.count_i32(1)?;
        let mut items = Vec::with_capacity(n);
        for _ in 0..n {
            items.push(self.tagged_value(r, ty, 0, depth + 1)?);
        }
        Ok(items)
    }

    fn write_tagged_value(
        &self,
        w: &mut Writer,
        ty: &TagType,
        v: &Value,
        depth: usize,
    ) -> Result<()> {
        if let Value::Opaque(bytes) = v {
            w.bytes(&bytes.0);
            return Ok(());
        }
        match (ty, v) {
            (TagType::Simple(t), v) => self.write_value(w, t, v, depth + 1),
            (TagType::Byte, Value::Byte(b)) => {
                w.u8(*b);
                Ok(())
            }
            (TagType::Byte | TagType::EnumName, Value::Name(n)) => self.write_name(w, n),
            (TagType::Struct(name), Value::Struct(s)) if *s.name == **name => {
                self.write_struct_value(w, s, depth)
            }
            (
                TagType::Array(inner),
                Value::StructArray {
                    inner_name,
                    inner: tag,
                    items,
                },
            ) if matches!(inner.as_ref(), TagType::InnerStruct) => {
                let Tag::Named {
                    ty,
                    struct_name: Some(struct_name),
                    ..
                } = &**tag
                else {
                    return Err(Error::invalid(
                        "an array's inner struct tag is a named tag that names its struct",
                    ));
                };
                if ty.0 != "StructProperty" {
                    return Err(Error::invalid(
                        "an array's inner struct tag is a StructProperty tag",
                    ));
                }
                w.i32(len_i32(items.len())?);
                self.write_name(w, inner_name)?;
                let size_at = self.write_named_tag(w, tag, None)?;
                let start = w.pos();
                for item in items {
                    match item {
                        Value::Struct(s) if *s.name == *struct_name.0 => {
                            self.write_struct_value(w, s, depth)?
                        }
                        _ => {
                            return Err(Error::invalid(format!(
                                "an element of an array of `{}` structs is not one",
                                struct_name.0
                            )))
                        }
                    }
                }
                let size = len_i32(w.pos() - start)?;
                w.patch_i32(size_at, size);
                Ok(())
            }
            (TagType::Array(inner), Value::Array(items)) => {
                w.i32(len_i32(items.len())?);
                for item in items {
                    match (inner.as_ref(), item) {
                        (TagType::Simple(PropertyType::Bool), Value::Bool(b)) => w.u8(*b as u8),
                        (inner, item) => self.write_tagged_value(w, inner, item, depth + 1)?,
                    }
                }
                Ok(())
            }
            (TagType::Set(inner), Value::Set { removed, items }) => {
                for list in [removed, items] {
                    w.i32(len_i32(list.len())?);
                    for item in list {
                        self.write_tagged_value(w, inner, item, depth + 1)?;
                    }
                }
                Ok(())
            }
            (TagType::Map(key, value), Value::Map { removed, entries }) => {
                w.i32(len_i32(removed.len())?);
                for k in removed {
                    self.write_tagged_value(w, key, k, depth + 1)?;
                }
                w.i32(len_i32(entries.len())?);
                for (k, v) in entries {
                    self.write_tagged_value(w, key, k, depth + 1)?;
                    self.write_tagged_value(w, value, v, depth + 1)?;
                }
                Ok(())
            }
            _ => Err(Error::invalid(format!(
                "a {} value where the tag says otherwise",
                value_kind(v)
            ))),
        }
    }
}

/// The 5.4+ tag flag bits that the tag's other fields and a bool's value
/// imply: array index, property GUID, extensions, bool true.
pub(super) const IMPLIED_FLAGS: u8 = 0x17;

/// What a tag says a value is.
#[derive(Debug, Clone)]
pub(super) enum TagType {
    /// Laid out as in unversioned data.
    Simple(PropertyType),
    /// `ByteProperty`: a byte, or an enum's FName (the size tells).
    Byte,
    /// `EnumProperty` in tagged data: the entry's FName.
    EnumName,
    Struct(String),
    /// Inside a pre-5.4 array: structs, named by an inner tag.
    InnerStruct,
    Array(Box<TagType>),
    Set(Box<TagType>),
    Map(Box<TagType>, Box<TagType>),
    Unknown,
}

fn simple_type(name: &str) -> Option<PropertyType> {
    if let Some(plain) = PropertyType::plain(name) {
        return Some(plain);
    }
    Some(match name {
        "BoolProperty" => PropertyType::Bool,
        "ObjectProperty" | "ClassProperty" | "WeakObjectProperty" | "InterfaceProperty" => {
            PropertyType::Object
        }
        "LazyObjectProperty" => PropertyType::LazyObject,
        "SoftObjectProperty" | "SoftClassProperty" | "AssetObjectProperty" => {
            PropertyType::SoftObject
        }
        "DelegateProperty" => PropertyType::Delegate,
        "MulticastDelegateProperty"
        | "MulticastInlineDelegateProperty"
        | "MulticastSparseDelegateProperty" => PropertyType::MulticastDelegate,
        "FieldPathProperty" => PropertyType::FieldPath,
        _ => return None,
    })
}

/// The value type a tag gives.
pub(super) fn tag_type(tag: &Tag) -> TagType {
    match tag {
        Tag::Named {
            ty,
            struct_name,
            inner,
            value_type,
            ..
        } => named_tag_type(
            &ty.0,
            struct_name.as_ref().map(|n| n.0.as_str()),
            inner.as_ref().map(|n| n.0.as_str()),
            value_type.as_ref().map(|n| n.0.as_str()),
        ),
        Tag::Complete { ty, .. } => complete_tag_type(ty),
    }
}

fn named_tag_type(
    ty: &str,
    struct_name: Option<&str>,
    inner: Option<&str>,
    value: Option<&str>,
) -> TagType {
    let element = |name: Option<&str>, in_array: bool| match name {
        Some("StructProperty") if in_array => TagType::InnerStruct,
        Some("StructProperty") => TagType::Unknown,
        Some(n) => named_tag_type(n, None, None, None),
        None => TagType::Unknown,
    };
    match ty {
        "StructProperty" => {
            struct_name.map_or(TagType::Unknown, |s| TagType::Struct(s.to_string()))
        }
        "ByteProperty" => TagType::Byte,
        "EnumProperty" => TagType::EnumName,
        "ArrayProperty" => TagType::Array(Box::new(element(inner, true))),
        "SetProperty" => TagType::Set(Box::new(element(inner, false))),
        "MapProperty" => TagType::Map(
            Box::new(element(inner, false)),
            Box::new(element(value, false)),
        ),
        other => simple_type(other).map_or(TagType::Unknown, TagType::Simple),
    }
}

fn complete_tag_type(t: &TypeName) -> TagType {
    let param = |i: usize| {
        t.parameters
            .get(i)
            .map_or(TagType::Unknown, complete_tag_type)
    };
    match t.name.0.as_str() {
        "StructProperty" => t.parameters.first().map_or(TagType::Unknown, |p| {
            // The struct's path; its object name is what native layouts and
            // schemas are keyed by.
            let path = &p.name.0;
            TagType::Struct(path.rsplit(['.', '/']).next().unwrap_or(path).to_string())
        }),
        "ByteProperty" => TagType::Byte,
        "EnumProperty" => TagType::EnumName,
        "ArrayProperty" => TagType::Array(Box::new(param(0))),
        "SetProperty" => TagType::Set(Box::new(param(0))),
        "MapProperty" => TagType::Map(Box::new(param(0)), Box::new(param(1))),
        other => simple_type(other).map_or(TagType::Unknown, TagType::Simple),
    }
}

pub(super) fn tag_is_bool(tag: &Tag) -> bool {
    match tag {
        Tag::Named { ty, .. } => ty.0 == "BoolProperty",
        Tag::Complete { ty, .. } => ty.name.0 == "BoolProperty",
    }
}

fn required<'t>(v: &'t Option<Name>, field: &str) -> Result<&'t Name> {
    v.as_ref()
        .ok_or_else(|| Error::invalid(format!("the tag needs its `{field}`")))
}
