//! The JSON form of the tree: plain values, typed by the schema.
//!
//! A value is written as a modder would type it — `"Damage": 42`,
//! `"Time": 0.1`, `"Tag": "Ranged"`, a struct as an object of its
//! properties, an array as an array — and read back through the same types
//! the codec reads bytes with: the mappings' schema of each unversioned
//! struct, the tag of each tagged property, the layout of each native
//! struct. So the JSON carries no type names where the schema has them, and
//! a value of the wrong type is an error naming its JSON path and the type
//! expected.
//!
//! What a plain value cannot carry gets a form that round-trips (see
//! [`tree`](super::super::tree) for numbers, strings and bytes):
//! - an unversioned block's header, when it is not the one the cooker
//!   writes for its properties: a first key `"$header"` (hex); `null` there
//!   is a property the zero mask marks, so a present reference to no object
//!   is `""`;
//! - a tagged property: `{"type": "ArrayProperty(IntProperty)", "value": …}`
//!   with the tag's other fields (`guid`, `struct_guid`, `flags`,
//!   `extensions`, `inner_guid`, `inner_name` + `inner_tag`) when set, and
//!   `"opaque"` (hex) in place of `value` for bytes zenpak keeps as they are;
//! - a map keyed by names or strings is an object; any other map, or one
//!   with keys to remove, is `{"$removed": [keys], "$entries": [[key, value], …]}`;
//!   a set with elements to remove is `{"$removed": […], "$items": […]}`;
//! - an optional is `[]` (unset) or `[value]`;
//! - a native struct zenpak keeps as bytes is `{"opaque": hex}`.
//!
//! Keys that begin with `$` are zenpak's, never a property's.

use serde::de::{self, DeserializeSeed, Error as _, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::mappings::{PropertyType, SchemaView, StructSchema};
use crate::version::EngineVersion;

use super::super::native::{native_struct, NativeLayout};
use super::super::tree::*;
use super::super::MAX_DEPTH;
use super::fixed::{fixed_components, Component};
use super::tagged::{tag_type, TagType, IMPLIED_FLAGS};
use super::{row_struct_name, Slots};

/// What typing a JSON value needs: the schemas and the package's encoding.
#[derive(Clone, Copy)]
pub struct Schemas<'a> {
    pub mappings: Option<SchemaView<'a>>,
    /// The names the trees read hold.
    pub names: &'a SharedNames,
    pub engine: EngineVersion,
    /// `PKG_UnversionedProperties`: blocks are unversioned.
    pub unversioned: bool,
}

// ---- writing ---------------------------------------------------------------

impl Serialize for Value {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Value::Bool(b) => s.serialize_bool(*b),
            Value::Int8(v) => s.serialize_i8(*v),
            Value::Byte(v) => s.serialize_u8(*v),
            Value::Int16(v) => s.serialize_i16(*v),
            Value::UInt16(v) => s.serialize_u16(*v),
            Value::Int(v) => s.serialize_i32(*v),
            Value::UInt32(v) => s.serialize_u32(*v),
            Value::Int64(v) => v.serialize(s),
            Value::UInt64(v) => v.serialize(s),
            Value::Float(v) => v.serialize(s),
            Value::Double(v) => v.serialize(s),
            Value::Enum(EnumValue::Name(n)) => s.serialize_str(n),
            Value::Enum(EnumValue::Raw(v)) => s.serialize_i64(*v),
            Value::Name(n) => s.serialize_str(&n.0),
            Value::Str(v) => v.serialize(s),
            Value::Text(v) => v.serialize(s),
            Value::Object(v) => v.serialize(s),
            Value::LazyObject(v) => v.serialize(s),
            Value::SoftObject(v) => v.serialize(s),
            Value::Struct(v) => v.body.serialize(s),
            Value::Array(items) | Value::StructArray { items, .. } => s.collect_seq(items),
            Value::Set { removed, items } => {
                if removed.is_empty() {
                    s.collect_seq(items)
                } else {
                    let mut m = s.serialize_map(Some(2))?;
                    m.serialize_entry("$removed", removed)?;
                    m.serialize_entry("$items", items)?;
                    m.end()
                }
            }
            Value::Map { removed, entries } => {
                let keyed = removed.is_empty()
                    && entries
                        .iter()
                        .all(|(k, _)| key_text(k).is_some_and(|t| !t.starts_with('$')));
                if keyed {
                    let mut m = s.serialize_map(Some(entries.len()))?;
                    for (k, v) in entries {
                        m.serialize_entry(key_text(k).expect("checked above"), v)?;
                    }
                    m.end()
                } else {
                    let mut m = s.serialize_map(Some(2))?;
                    m.serialize_entry("$removed", removed)?;
                    m.serialize_entry("$entries", &Pairs(entries))?;
                    m.end()
                }
            }
            Value::Optional(v) => {
                let mut seq = s.serialize_seq(Some(v.is_some() as usize))?;
                if let Some(v) = v {
                    seq.serialize_element(v)?;
                }
                seq.end()
            }
            Value::Delegate(d) => d.serialize(s),
            Value::MulticastDelegate(list) => s.collect_seq(list),
            Value::FieldPath { path, owner } => {
                let mut m = s.serialize_map(Some(2))?;
                m.serialize_entry("path", path)?;
                m.serialize_entry("owner", owner)?;
                m.end()
            }
            Value::Opaque(bytes) => {
                let mut m = s.serialize_map(Some(1))?;
                m.serialize_entry("opaque", bytes)?;
                m.end()
            }
        }
    }
}

/// A map key written as an object key: names and strings in their plain form.
fn key_text(k: &Value) -> Option<&str> {
    match k {
        Value::Name(n) => Some(&n.0),
        Value::Str(s) if s.is_canonical() => Some(&s.text),
        _ => None,
    }
}

struct Pairs<'a>(&'a [(Value, Value)]);

impl Serialize for Pairs<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(|(k, v)| [k, v]))
    }
}

impl Serialize for StructBody {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            StructBody::Block(b) => b.serialize(s),
            StructBody::Fields(fields) => {
                let mut m = s.serialize_map(Some(fields.len()))?;
                for (name, v) in fields {
                    m.serialize_entry(name, v)?;
                }
                m.end()
            }
            StructBody::SoftObject(p) => p.serialize(s),
            StructBody::Tags(tags) => tags.serialize(s),
            StructBody::Native(bytes) => {
                let mut m = s.serialize_map(Some(1))?;
                m.serialize_entry("opaque", bytes)?;
                m.end()
            }
        }
    }
}

/// `Name`, or `Name[i]` for element `i` of a static array.
fn element_key(name: &str, index: i64) -> std::borrow::Cow<'_, str> {
    if index == 0 {
        name.into()
    } else {
        format!("{name}[{index}]").into()
    }
}

/// The name and element of a key written by [`element_key`].
fn split_element_key<E: de::Error>(key: &str) -> Result<(&str, i64), E> {
    match key.strip_suffix(']').and_then(|k| k.rsplit_once('[')) {
        Some((name, index)) => index
            .parse::<i64>()
            .ok()
            .filter(|i| *i >= 0)
            .map(|i| (name, i))
            .ok_or_else(|| E::custom(format!("`{key}`: an element is written `Name[i]`"))),
        None => Ok((key, 0)),
    }
}

impl Serialize for Block {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Block::Unversioned { properties, header } => {
                let mut m = s.serialize_map(Some(properties.len() + header.is_some() as usize))?;
                if let Some(h) = header {
                    m.serialize_entry("$header", h)?;
                }
                for p in properties {
                    let key = element_key(&p.name, p.index as i64);
                    match &p.value {
                        // `null` is the zero mask here.
                        Some(Value::Object(ObjectRef(None))) => m.serialize_entry(&key, "")?,
                        v => m.serialize_entry(&key, v)?,
                    }
                }
                m.end()
            }
            Block::Tagged { properties } => {
                let mut m = s.serialize_map(Some(properties.len()))?;
                for p in properties {
                    let index = match &p.tag {
                        Tag::Named { array_index, .. } | Tag::Complete { array_index, .. } => {
                            *array_index
                        }
                    };
                    m.serialize_entry(&element_key(&p.name.0, index as i64), &TaggedEntry(p))?;
                }
                m.end()
            }
        }
    }
}

/// A tagged property as JSON: its type, the tag's other fields when set,
/// and its value.
struct TaggedEntry<'a>(&'a TaggedProperty);

/// The inner tag of a pre-5.4 array of structs, when it is the one the
/// engine writes (named as the array, no GUID or index of its own).
fn canonical_inner<'t>(
    p: &TaggedProperty,
    inner_name: &Name,
    inner: &'t Tag,
) -> Option<(&'t Name, &'t Option<Guid>)> {
    match inner {
        Tag::Named {
            ty,
            array_index: 0,
            struct_name: Some(struct_name),
            struct_guid,
            inner: None,
            value_type: None,
            property_guid: None,
        } if ty.0 == "StructProperty" && inner_name == &p.name => Some((struct_name, struct_guid)),
        _ => None,
    }
}

impl Serialize for TaggedEntry<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let p = self.0;
        let mut m = s.serialize_map(None)?;
        let mut inner_extra: Option<(&Name, &Tag)> = None;
        let mut inner_guid = None;
        let ty = match &p.tag {
            Tag::Complete { ty, .. } => ty.clone(),
            Tag::Named {
                ty,
                struct_name,
                inner,
                value_type,
                ..
            } => {
                let leaf = |n: &Option<Name>| {
                    n.iter()
                        .map(|n| TypeName {
                            name: n.clone(),
                            parameters: Vec::new(),
                        })
                        .collect::<Vec<_>>()
                };
                let parameters = match ty.0.as_str() {
                    "StructProperty" => leaf(struct_name),
                    "MapProperty" => [leaf(inner), leaf(value_type)].concat(),
                    "ArrayProperty" => match &p.value {
                        Value::StructArray {
                            inner_name,
                            inner: tag,
                            ..
                        } => match canonical_inner(p, inner_name, tag) {
                            Some((struct_name, guid)) => {
                                inner_guid = guid.filter(|g| g.0 != [0; 16]);
                                vec![TypeName {
                                    name: Name("StructProperty".into()),
                                    parameters: leaf(&Some(struct_name.clone())),
                                }]
                            }
                            None => {
                                inner_extra = Some((inner_name, tag));
                                leaf(inner)
                            }
                        },
                        _ => leaf(inner),
                    },
                    _ => leaf(inner),
                };
                TypeName {
                    name: ty.clone(),
                    parameters,
                }
            }
        };
        match ty.text() {
            Some(text) => m.serialize_entry("type", &text)?,
            None => m.serialize_entry("type", &ty)?,
        }
        match &p.tag {
            Tag::Named {
                ty,
                struct_guid,
                property_guid,
                ..
            } => {
                if ty.0 == "StructProperty" {
                    if let Some(g) = struct_guid.filter(|g| g.0 != [0; 16]) {
                        m.serialize_entry("struct_guid", &g)?;
                    }
                }
                if let Some(g) = property_guid {
                    m.serialize_entry("guid", g)?;
                }
            }
            Tag::Complete {
                flags,
                property_guid,
                extensions,
                ..
            } => {
                if flags & !IMPLIED_FLAGS != 0 {
                    m.serialize_entry("flags", &(flags & !IMPLIED_FLAGS))?;
                }
                if let Some(g) = property_guid {
                    m.serialize_entry("guid", g)?;
                }
                if let Some(e) = extensions {
                    m.serialize_entry("extensions", e)?;
                }
            }
        }
        if let Some(g) = inner_guid {
            m.serialize_entry("inner_guid", &g)?;
        }
        if let Some((name, tag)) = inner_extra {
            m.serialize_entry("inner_name", name)?;
            m.serialize_entry("inner_tag", tag)?;
        }
        match &p.value {
            Value::Opaque(bytes) => m.serialize_entry("opaque", bytes)?,
            v => m.serialize_entry("value", v)?,
        }
        m.end()
    }
}

impl TypeName {
    /// `ArrayProperty(StructProperty(Vector))`, when every name can be
    /// written so (no parenthesis, comma or edge space).
    pub fn text(&self) -> Option<String> {
        let n = &self.name.0;
        if n.is_empty() || n.contains(['(', ')', ',']) || n.trim() != n {
            return None;
        }
        if self.parameters.is_empty() {
            return Some(n.clone());
        }
        let params: Option<Vec<String>> = self.parameters.iter().map(TypeName::text).collect();
        Some(format!("{n}({})", params?.join(", ")))
    }

    /// Reads what [`text`](Self::text) wrote.
    pub fn parse(text: &str) -> Option<TypeName> {
        fn one(t: &str, depth: usize) -> Option<(TypeName, &str)> {
            if depth > 16 {
                return None;
            }
            let t = t.trim_start();
            let end = t.find(['(', ')', ',']).unwrap_or(t.len());
            let name = t[..end].trim_end();
            if name.is_empty() {
                return None;
            }
            let mut rest = &t[end..];
            let mut parameters = Vec::new();
            if let Some(r) = rest.strip_prefix('(') {
                rest = r;
                loop {
                    let (p, r) = one(rest, depth + 1)?;
                    parameters.push(p);
                    let r = r.trim_start();
                    if let Some(r) = r.strip_prefix(',') {
                        rest = r;
                    } else {
                        rest = r.strip_prefix(')')?;
                        break;
                    }
                }
            }
            Some((
                TypeName {
                    name: Name(name.to_string()),
                    parameters,
                },
                rest,
            ))
        }
        let (t, rest) = one(text, 0)?;
        rest.trim().is_empty().then_some(t)
    }
}

// ---- reading ---------------------------------------------------------------

/// The type a JSON value is read as.
#[derive(Clone, Copy)]
enum Ty<'t> {
    /// A property of an unversioned block (or a tagged simple type);
    /// `element`: inside an array, set or map (an enum is its entry's name there).
    Prop(&'t PropertyType, bool),
    Tag(&'t TagType),
}

/// Reads one value of type `ty`.
struct ValueSeed<'s> {
    s: Schemas<'s>,
    ty: Ty<'s>,
    depth: usize,
}

impl<'s> ValueSeed<'s> {
    fn new(s: Schemas<'s>, ty: Ty<'s>, depth: usize) -> Self {
        ValueSeed { s, ty, depth }
    }
}

fn too_deep<E: de::Error>() -> E {
    E::custom(format!("values nest deeper than {MAX_DEPTH} levels"))
}

impl<'de> DeserializeSeed<'de> for ValueSeed<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        if self.depth > MAX_DEPTH {
            return Err(too_deep());
        }
        let s = self.s;
        let depth = self.depth + 1;
        let prop = match self.ty {
            Ty::Prop(t, element) => (t, element),
            Ty::Tag(t) => return tagged_value(s, t, depth, d),
        };
        Ok(match prop {
            (PropertyType::Bool, _) => Value::Bool(bool::deserialize(d)?),
            (PropertyType::Byte, _) => Value::Byte(u8::deserialize(d)?),
            (PropertyType::Int8, _) => Value::Int8(i8::deserialize(d)?),
            (PropertyType::Int16, _) => Value::Int16(i16::deserialize(d)?),
            (PropertyType::UInt16, _) => Value::UInt16(u16::deserialize(d)?),
            (PropertyType::Int, _) => Value::Int(i32::deserialize(d)?),
            (PropertyType::UInt32, _) => Value::UInt32(u32::deserialize(d)?),
            (PropertyType::Int64, _) => Value::Int64(Wide::deserialize(d)?),
            (PropertyType::UInt64, _) => Value::UInt64(Wide::deserialize(d)?),
            (PropertyType::Float, _) => Value::Float(F32::deserialize(d)?),
            (PropertyType::Double, _) => Value::Double(F64::deserialize(d)?),
            (PropertyType::Enum { .. }, true) => Value::Name(Name::deserialize(d)?),
            (PropertyType::Enum { .. }, false) => Value::Enum(d.deserialize_any(EnumVisit)?),
            (PropertyType::Name, _) => Value::Name(Name::deserialize(d)?),
            (PropertyType::Str | PropertyType::AnsiStr | PropertyType::Utf8Str, _) => {
                Value::Str(FStr::deserialize(d)?)
            }
            (PropertyType::Text, _) => Value::Text(Box::new(Text::deserialize(d)?)),
            (PropertyType::Object | PropertyType::WeakObject | PropertyType::Interface, _) => {
                Value::Object(ObjectRef::deserialize(d)?)
            }
            (PropertyType::LazyObject, _) => Value::LazyObject(Guid::deserialize(d)?),
            (PropertyType::SoftObject | PropertyType::AssetObject, _) => {
                Value::SoftObject(Box::new(SoftObjectPath::deserialize(d)?))
            }
            (PropertyType::Delegate, _) => Value::Delegate(Delegate::deserialize(d)?),
            (PropertyType::MulticastDelegate, _) => {
                Value::MulticastDelegate(Vec::<Delegate>::deserialize(d)?)
            }
            (PropertyType::FieldPath, _) => {
                #[derive(Deserialize)]
                #[serde(deny_unknown_fields)]
                struct FieldPath {
                    path: Vec<Name>,
                    owner: ObjectRef,
                }
                let f = FieldPath::deserialize(d)?;
                Value::FieldPath {
                    path: f.path,
                    owner: f.owner,
                }
            }
            (PropertyType::Struct(name), _) => {
                Value::Struct(Box::new(StructSeed { s, name, depth }.deserialize(d)?))
            }
            (PropertyType::Array(inner), _) => Value::Array(
                d.deserialize_seq(ListVisit(ValueSeed::new(s, Ty::Prop(inner, true), depth)))?,
            ),
            (PropertyType::Set(inner), _) => {
                set_value(d, ValueSeed::new(s, Ty::Prop(inner, true), depth))?
            }
            (PropertyType::Map(key, value), _) => d.deserialize_any(MapVisit {
                key: ValueSeed::new(s, Ty::Prop(key, true), depth),
                value: ValueSeed::new(s, Ty::Prop(value, true), depth),
            })?,
            (PropertyType::Optional(inner), _) => {
                let mut items =
                    d.deserialize_seq(ListVisit(ValueSeed::new(s, Ty::Prop(inner, false), depth)))?;
                if items.len() > 1 {
                    return Err(D::Error::custom("an optional is `[]` (unset) or `[value]`"));
                }
                Value::Optional(items.pop().map(Box::new))
            }
            (PropertyType::Unknown, _) => {
                return Err(D::Error::custom(
                    "the mappings give this property no type; its layout is unknown",
                ))
            }
        })
    }
}

impl Clone for ValueSeed<'_> {
    fn clone(&self) -> Self {
        ValueSeed {
            s: self.s,
            ty: self.ty,
            depth: self.depth,
        }
    }
}

/// A tagged value whose type the tag gives.
fn tagged_value<'de, D: Deserializer<'de>>(
    s: Schemas,
    ty: &TagType,
    depth: usize,
    d: D,
) -> Result<Value, D::Error> {
    Ok(match ty {
        TagType::Simple(t) => ValueSeed::new(s, Ty::Prop(t, false), depth).deserialize(d)?,
        TagType::Byte => d.deserialize_any(ByteOrNameVisit)?,
        TagType::EnumName => Value::Name(Name::deserialize(d)?),
        TagType::Struct(name) => {
            Value::Struct(Box::new(StructSeed { s, name, depth }.deserialize(d)?))
        }
        TagType::Array(inner) => {
            Value::Array(d.deserialize_seq(ListVisit(ValueSeed::new(s, Ty::Tag(inner), depth)))?)
        }
        TagType::Set(inner) => set_value(d, ValueSeed::new(s, Ty::Tag(inner), depth))?,
        TagType::Map(key, value) => d.deserialize_any(MapVisit {
            key: ValueSeed::new(s, Ty::Tag(key), depth),
            value: ValueSeed::new(s, Ty::Tag(value), depth),
        })?,
        TagType::Unknown | TagType::InnerStruct => {
            return Err(D::Error::custom(
                "zenpak does not know this tag's value layout: give the value as `opaque` bytes",
            ))
        }
    })
}

/// A JSON array of values read by one seed.
struct ListVisit<'s>(ValueSeed<'s>);

impl<'de> Visitor<'de> for ListVisit<'_> {
    type Value = Vec<Value>;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an array")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<Value>, A::Error> {
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        while let Some(v) = seq.next_element_seed(self.0.clone())? {
            out.push(v);
        }
        Ok(out)
    }
}

impl<'de> DeserializeSeed<'de> for ListVisit<'_> {
    type Value = Vec<Value>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Vec<Value>, D::Error> {
        d.deserialize_seq(self)
    }
}

fn set_value<'de, D: Deserializer<'de>>(d: D, item: ValueSeed) -> Result<Value, D::Error> {
    struct SetVisit<'s>(ValueSeed<'s>);
    impl<'de> Visitor<'de> for SetVisit<'_> {
        type Value = Value;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("an array, or {\"$removed\": [...], \"$items\": [...]}")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Value, A::Error> {
            Ok(Value::Set {
                removed: Vec::new(),
                items: ListVisit(self.0).visit_seq(seq)?,
            })
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
            let (mut removed, mut items) = (None, None);
            while let Some(key) = map.next_key::<String>()? {
                match key.as_str() {
                    "$removed" => removed = Some(map.next_value_seed(ListVisit(self.0.clone()))?),
                    "$items" => items = Some(map.next_value_seed(ListVisit(self.0.clone()))?),
                    other => {
                        return Err(A::Error::custom(format!(
                            "`{other}`: a set is an array, or {{\"$removed\", \"$items\"}}"
                        )))
                    }
                }
            }
            Ok(Value::Set {
                removed: removed.unwrap_or_default(),
                items: items.ok_or_else(|| A::Error::missing_field("$items"))?,
            })
        }
    }
    d.deserialize_any(SetVisit(item))
}

/// A map: an object keyed by the keys' text, or `{"$removed", "$entries"}`.
struct MapVisit<'s> {
    key: ValueSeed<'s>,
    value: ValueSeed<'s>,
}

impl MapVisit<'_> {
    /// A key given as an object key: its value, for key types written as text.
    fn key_from_text<E: de::Error>(&self, text: String) -> Result<Value, E> {
        match self.key.ty {
            Ty::Prop(PropertyType::Name | PropertyType::Enum { .. }, _)
            | Ty::Tag(TagType::Simple(PropertyType::Name) | TagType::Byte | TagType::EnumName) => {
                Ok(Value::Name(Name(text)))
            }
            Ty::Prop(PropertyType::Str | PropertyType::AnsiStr | PropertyType::Utf8Str, _)
            | Ty::Tag(TagType::Simple(
                PropertyType::Str | PropertyType::AnsiStr | PropertyType::Utf8Str,
            )) => Ok(Value::Str(FStr::plain(text))),
            _ => Err(E::custom(
                "this map's keys are not text: write it {\"$removed\": [], \"$entries\": [[key, value], ...]}",
            )),
        }
    }
}

impl<'de> Visitor<'de> for MapVisit<'_> {
    type Value = Value;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(
            "an object of entries, or {\"$removed\": [...], \"$entries\": [[key, value], ...]}",
        )
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut entries = Vec::new();
        let mut removed = Vec::new();
        let mut first = true;
        let mut wrapped = false;
        while let Some(key) = map.next_key::<String>()? {
            if first {
                wrapped = key.starts_with('$');
                first = false;
            }
            if wrapped {
                match key.as_str() {
                    "$removed" => removed = map.next_value_seed(ListVisit(self.key.clone()))?,
                    "$entries" => {
                        entries = map.next_value_seed(PairsSeed {
                            key: self.key.clone(),
                            value: self.value.clone(),
                        })?
                    }
                    other => {
                        return Err(A::Error::custom(format!(
                        "`{other}`: a map written with `$` keys has `$removed` and `$entries` only"
                    )))
                    }
                }
            } else {
                let k = self.key_from_text(key)?;
                let v = map.next_value_seed(self.value.clone())?;
                entries.push((k, v));
            }
        }
        Ok(Value::Map { removed, entries })
    }
}

struct PairsSeed<'s> {
    key: ValueSeed<'s>,
    value: ValueSeed<'s>,
}

impl<'de> DeserializeSeed<'de> for PairsSeed<'_> {
    type Value = Vec<(Value, Value)>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for PairsSeed<'_> {
    type Value = Vec<(Value, Value)>;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an array of [key, value] pairs")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::new();
        while let Some(pair) = seq.next_element_seed(PairSeed {
            key: self.key.clone(),
            value: self.value.clone(),
        })? {
            out.push(pair);
        }
        Ok(out)
    }
}

struct PairSeed<'s> {
    key: ValueSeed<'s>,
    value: ValueSeed<'s>,
}

impl<'de> DeserializeSeed<'de> for PairSeed<'_> {
    type Value = (Value, Value);
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for PairSeed<'_> {
    type Value = (Value, Value);
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a [key, value] pair")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let k = seq
            .next_element_seed(self.key)?
            .ok_or_else(|| A::Error::invalid_length(0, &"a [key, value] pair"))?;
        let v = seq
            .next_element_seed(self.value)?
            .ok_or_else(|| A::Error::invalid_length(1, &"a [key, value] pair"))?;
        if seq.next_element::<IgnoredAny>()?.is_some() {
            return Err(A::Error::invalid_length(3, &"a [key, value] pair"));
        }
        Ok((k, v))
    }
}

struct EnumVisit;

impl Visitor<'_> for EnumVisit {
    type Value = EnumValue;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an enum entry's name, or a number the enum does not name")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<EnumValue, E> {
        Ok(EnumValue::Name(v.to_string()))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<EnumValue, E> {
        Ok(EnumValue::Raw(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<EnumValue, E> {
        i64::try_from(v)
            .map(EnumValue::Raw)
            .map_err(|_| E::custom("an enum value out of range"))
    }
}

/// A tagged `ByteProperty`: a number (a byte) or an enum entry's name.
struct ByteOrNameVisit;

impl Visitor<'_> for ByteOrNameVisit {
    type Value = Value;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a byte (0 to 255) or an enum entry's name")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        Ok(Value::Name(Name(v.to_string())))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        u8::try_from(v)
            .map(Value::Byte)
            .map_err(|_| E::custom("a byte is 0 to 255"))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        u8::try_from(v)
            .map(Value::Byte)
            .map_err(|_| E::custom("a byte is 0 to 255"))
    }
}

/// A struct value, by the struct's layout: native, or a property block.
struct StructSeed<'s> {
    s: Schemas<'s>,
    name: &'s str,
    depth: usize,
}

impl<'de> DeserializeSeed<'de> for StructSeed<'_> {
    type Value = StructValue;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<StructValue, D::Error> {
        let s = self.s;
        let name = self.name;
        let opaque = |d: D| -> Result<StructBody, D::Error> {
            #[derive(Deserialize)]
            #[serde(deny_unknown_fields)]
            struct Opaque {
                opaque: Hex,
            }
            Ok(StructBody::Native(Opaque::deserialize(d)?.opaque))
        };
        let body = match native_struct(name, s.engine) {
            Some(NativeLayout::Fixed(_)) => match fixed_components(name, s.engine) {
                Some(comps) => StructBody::Fields(d.deserialize_map(FieldsVisit { name, comps })?),
                None => opaque(d)?,
            },
            Some(NativeLayout::SoftObjectPath) => {
                StructBody::SoftObject(SoftObjectPath::deserialize(d)?)
            }
            Some(NativeLayout::GameplayTagContainer) => {
                StructBody::Tags(Vec::<Name>::deserialize(d)?)
            }
            Some(_) => opaque(d)?,
            None => StructBody::Block(
                BlockSeed {
                    s,
                    name,
                    depth: self.depth + 1,
                }
                .deserialize(d)?,
            ),
        };
        Ok(StructValue {
            name: s.names.get(name),
            body,
        })
    }
}

/// A fixed native struct's fields, each by name (in any order: they are
/// written in the struct's), every field given once.
struct FieldsVisit<'c> {
    name: &'c str,
    comps: &'c [(&'static str, Component)],
}

impl<'de> Visitor<'de> for FieldsVisit<'_> {
    type Value = Vec<(&'static str, Value)>;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        let names: Vec<&str> = self.comps.iter().map(|(n, _)| *n).collect();
        write!(f, "a `{}`: {{{}}}", self.name, names.join(", "))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let names = || {
            self.comps
                .iter()
                .map(|(n, _)| *n)
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut given: Vec<Option<Value>> = vec![None; self.comps.len()];
        while let Some(key) = map.next_key::<String>()? {
            let Some(at) = self.comps.iter().position(|(n, _)| *n == key) else {
                return Err(A::Error::custom(format!(
                    "`{key}` is not a field of `{}`: its fields are {}",
                    self.name,
                    names()
                )));
            };
            if given[at].is_some() {
                return Err(A::Error::custom(format!(
                    "field `{key}` of `{}` is given twice",
                    self.name
                )));
            }
            given[at] = Some(match self.comps[at].1 {
                Component::U8 => Value::Byte(map.next_value()?),
                Component::I32 => Value::Int(map.next_value()?),
                Component::U32 => Value::UInt32(map.next_value()?),
                Component::I64 => Value::Int64(map.next_value()?),
                Component::F32 => Value::Float(map.next_value()?),
                Component::F64 => Value::Double(map.next_value()?),
            });
        }
        self.comps
            .iter()
            .zip(given)
            .map(|(&(field, _), v)| {
                v.map(|v| (field, v)).ok_or_else(|| {
                    A::Error::custom(format!(
                        "a `{}` needs its field `{field}` (its fields are {})",
                        self.name,
                        names()
                    ))
                })
            })
            .collect()
    }
}

/// A property block of struct or class `name`, in the package's encoding.
pub struct BlockSeed<'s> {
    pub s: Schemas<'s>,
    pub name: &'s str,
    pub depth: usize,
}

impl<'de> DeserializeSeed<'de> for BlockSeed<'_> {
    type Value = Block;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Block, D::Error> {
        if self.depth > MAX_DEPTH {
            return Err(too_deep());
        }
        if self.s.unversioned {
            // An empty block needs no schema (the struct may be one the
            // mappings lack): the error waits for the first property.
            let chain = self.s.mappings.map(|m| {
                m.chain(self.name).map_err(|e| {
                    e.within(format!("properties of `{}`", self.name))
                        .to_string()
                })
            });
            d.deserialize_map(UnversionedVisit {
                s: self.s,
                name: self.name,
                chain,
                depth: self.depth,
            })
        } else {
            d.deserialize_map(TaggedVisit {
                s: self.s,
                depth: self.depth,
            })
        }
    }
}

struct UnversionedVisit<'s> {
    s: Schemas<'s>,
    name: &'s str,
    chain: Option<std::result::Result<Vec<&'s StructSchema>, String>>,
    depth: usize,
}

impl<'de> Visitor<'de> for UnversionedVisit<'_> {
    type Value = Block;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "an object of `{}`'s properties", self.name)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Block, A::Error> {
        let mut properties = Vec::new();
        let mut header = None;
        let mut finder = match &self.chain {
            Some(Ok(chain)) => Ok(Slots::new(chain)),
            Some(Err(e)) => Err(e.clone()),
            None => Err(format!(
                "`{}` is serialized unversioned; its properties need the game's mappings (--mappings Game.usmap or `[game] mappings`)",
                self.name
            )),
        };
        while let Some(key) = map.next_key::<KeyText>()? {
            let key = key.as_str();
            if key == "$header" {
                header = Some(map.next_value::<Hex>()?);
                continue;
            }
            let (name, index) = split_element_key::<A::Error>(key)?;
            let index = u8::try_from(index).map_err(|_| {
                A::Error::custom(format!("`{key}`: a static array has at most 256 elements"))
            })?;
            let finder = finder.as_mut().map_err(|e| A::Error::custom(e.clone()))?;
            let Some((_, ty)) = finder.find(name, index) else {
                return Err(A::Error::custom(format!(
                    "`{}` has no property `{key}` under these mappings",
                    self.name
                )));
            };
            let name = self.s.names.get(name);
            let value = map.next_value_seed(Nullable(ValueSeed::new(
                self.s,
                Ty::Prop(ty, false),
                self.depth + 1,
            )))?;
            properties.push(UnversionedProperty { name, index, value });
        }
        Ok(Block::Unversioned { properties, header })
    }
}

/// An object key as the text holds it: borrowed from the text when it
/// has no escape (no copy made of each key of a big document).
enum KeyText<'de> {
    Borrowed(&'de str),
    Owned(String),
}

impl KeyText<'_> {
    fn as_str(&self) -> &str {
        match self {
            KeyText::Borrowed(s) => s,
            KeyText::Owned(s) => s,
        }
    }
}

impl<'de> Deserialize<'de> for KeyText<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> Visitor<'de> for Visit {
            type Value = KeyText<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a property name")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<KeyText<'de>, E> {
                Ok(KeyText::Borrowed(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<KeyText<'de>, E> {
                Ok(KeyText::Owned(v.to_string()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<KeyText<'de>, E> {
                Ok(KeyText::Owned(v))
            }
        }
        d.deserialize_str(Visit)
    }
}

/// `null` (a zero-masked property) or a value.
struct Nullable<'s>(ValueSeed<'s>);

impl<'de> DeserializeSeed<'de> for Nullable<'_> {
    type Value = Option<Value>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Option<Value>, D::Error> {
        d.deserialize_option(self)
    }
}

impl<'de> Visitor<'de> for Nullable<'_> {
    type Value = Option<Value>;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a value, or null for the type's zero")
    }
    fn visit_none<E: de::Error>(self) -> Result<Option<Value>, E> {
        Ok(None)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Option<Value>, E> {
        Ok(None)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Option<Value>, D::Error> {
        self.0.deserialize(d).map(Some)
    }
}

struct TaggedVisit<'s> {
    s: Schemas<'s>,
    depth: usize,
}

impl<'de> Visitor<'de> for TaggedVisit<'_> {
    type Value = Block;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an object of tagged properties, each {\"type\", \"value\"}")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Block, A::Error> {
        let mut properties = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            let (name, index) = split_element_key::<A::Error>(&key)?;
            let index = i32::try_from(index)
                .map_err(|_| A::Error::custom(format!("`{key}`: an array index out of range")))?;
            let p = map.next_value_seed(TaggedEntrySeed {
                s: self.s,
                name: Name(name.to_string()),
                index,
                depth: self.depth,
            })?;
            properties.push(p);
        }
        Ok(Block::Tagged { properties })
    }
}

struct TaggedEntrySeed<'s> {
    s: Schemas<'s>,
    name: Name,
    index: i32,
    depth: usize,
}

impl<'de> DeserializeSeed<'de> for TaggedEntrySeed<'_> {
    type Value = TaggedProperty;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<TaggedProperty, D::Error> {
        d.deserialize_map(self)
    }
}

/// The fields of a tagged entry other than its value.
#[derive(Default)]
struct EntryFields {
    ty: Option<TypeName>,
    guid: Option<Guid>,
    struct_guid: Option<Guid>,
    flags: u8,
    extensions: Option<Hex>,
    inner_guid: Option<Guid>,
    inner_name: Option<Name>,
    inner_tag: Option<Tag>,
}

/// A tagged entry's `type`: text, or the name tree when a name has a
/// parenthesis or comma.
#[derive(Deserialize)]
#[serde(untagged)]
enum TypeForm {
    Text(String),
    Tree(TypeName),
}

impl TaggedEntrySeed<'_> {
    /// The tag the fields describe.
    fn tag<E: de::Error>(&self, f: &EntryFields) -> Result<Tag, E> {
        let ty = f.ty.clone().ok_or_else(|| E::missing_field("type"))?;
        if self.s.engine.property_tags_have_complete_type_names() {
            return Ok(Tag::Complete {
                ty,
                flags: f.flags,
                array_index: self.index,
                property_guid: f.guid,
                extensions: f.extensions.clone(),
            });
        }
        let param = |i: usize| ty.parameters.get(i).map(|p| p.name.clone());
        let need = |i: usize| {
            param(i).ok_or_else(|| {
                E::custom(format!(
                    "`{}` needs its parameter{}: `{}(...)`",
                    ty.name.0,
                    if i > 0 { "s" } else { "" },
                    ty.name.0
                ))
            })
        };
        let (mut struct_name, mut struct_guid, mut inner, mut value_type) =
            (None, None, None, None);
        match ty.name.0.as_str() {
            "StructProperty" => {
                struct_name = Some(need(0)?);
                struct_guid = Some(f.struct_guid.unwrap_or(Guid([0; 16])));
            }
            "ByteProperty" | "EnumProperty" | "ArrayProperty" | "SetProperty"
            | "OptionalProperty" => inner = Some(need(0)?),
            "MapProperty" => {
                inner = Some(need(0)?);
                value_type = Some(need(1)?);
            }
            _ => {}
        }
        Ok(Tag::Named {
            ty: ty.name.clone(),
            array_index: self.index,
            struct_name,
            struct_guid,
            inner,
            value_type,
            property_guid: f.guid,
        })
    }

    /// Before 5.4, an array of structs: its inner tag and inner name.
    fn inner_struct<E: de::Error>(&self, f: &EntryFields) -> Result<Option<(Name, Tag)>, E> {
        let Some(ty) = &f.ty else { return Ok(None) };
        if self.s.engine.property_tags_have_complete_type_names()
            || ty.name.0 != "ArrayProperty"
            || ty.parameters.first().map(|p| p.name.0.as_str()) != Some("StructProperty")
        {
            return Ok(None);
        }
        if let (Some(name), Some(tag)) = (&f.inner_name, &f.inner_tag) {
            return Ok(Some((name.clone(), tag.clone())));
        }
        let struct_name = ty.parameters[0]
            .parameters
            .first()
            .map(|p| p.name.clone())
            .ok_or_else(|| {
                E::custom(
                    "an array of structs names its struct: `ArrayProperty(StructProperty(Name))`",
                )
            })?;
        Ok(Some((
            self.name.clone(),
            Tag::Named {
                ty: Name("StructProperty".into()),
                array_index: 0,
                struct_name: Some(struct_name),
                struct_guid: Some(f.inner_guid.unwrap_or(Guid([0; 16]))),
                inner: None,
                value_type: None,
                property_guid: None,
            },
        )))
    }

    /// The value, once the tag is known.
    fn value<'de, D: Deserializer<'de>>(
        &self,
        f: &EntryFields,
        tag: &Tag,
        d: D,
    ) -> Result<Value, D::Error> {
        if super::tagged::tag_is_bool(tag) {
            return Ok(Value::Bool(bool::deserialize(d)?));
        }
        if let Some((inner_name, inner)) = self.inner_struct::<D::Error>(f)? {
            let Tag::Named {
                struct_name: Some(struct_name),
                ..
            } = &inner
            else {
                return Err(D::Error::custom(
                    "an array's inner struct tag names its struct",
                ));
            };
            let name = struct_name.0.clone();
            let items = d.deserialize_seq(StructListVisit {
                s: self.s,
                name: &name,
                depth: self.depth + 1,
            })?;
            return Ok(Value::StructArray {
                inner_name,
                inner: Box::new(inner),
                items,
            });
        }
        let ty = tag_type(tag);
        ValueSeed::new(self.s, Ty::Tag(&ty), self.depth + 1).deserialize(d)
    }
}

struct StructListVisit<'s> {
    s: Schemas<'s>,
    name: &'s str,
    depth: usize,
}

impl<'de> Visitor<'de> for StructListVisit<'_> {
    type Value = Vec<Value>;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "an array of `{}` structs", self.name)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<Value>, A::Error> {
        let mut out = Vec::new();
        while let Some(v) = seq.next_element_seed(StructSeed {
            s: self.s,
            name: self.name,
            depth: self.depth,
        })? {
            out.push(Value::Struct(Box::new(v)));
        }
        Ok(out)
    }
}

impl<'de> Visitor<'de> for TaggedEntrySeed<'_> {
    type Value = TaggedProperty;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a tagged property: {\"type\": ..., \"value\": ...}")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<TaggedProperty, A::Error> {
        let mut f = EntryFields::default();
        let mut value: Option<Value> = None;
        // A value given before its type is read once the type is known.
        let mut early: Option<serde_json::Value> = None;
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "type" => {
                    f.ty = Some(match map.next_value::<TypeForm>()? {
                        TypeForm::Tree(t) => t,
                        TypeForm::Text(t) => TypeName::parse(&t).ok_or_else(|| {
                            A::Error::custom(format!(
                                "`{t}` is not a type: `Name` or `Name(Param, ...)`"
                            ))
                        })?,
                    })
                }
                "guid" => f.guid = Some(map.next_value()?),
                "struct_guid" => f.struct_guid = Some(map.next_value()?),
                "flags" => f.flags = map.next_value()?,
                "extensions" => f.extensions = Some(map.next_value()?),
                "inner_guid" => f.inner_guid = Some(map.next_value()?),
                "inner_name" => f.inner_name = Some(map.next_value()?),
                "inner_tag" => f.inner_tag = Some(map.next_value()?),
                "opaque" => value = Some(Value::Opaque(map.next_value()?)),
                "value" if f.ty.is_some() => {
                    let tag = self.tag::<A::Error>(&f)?;
                    value = Some(map.next_value_seed(TagValueSeed {
                        entry: &self,
                        fields: &f,
                        tag: &tag,
                    })?);
                }
                "value" => early = Some(map.next_value()?),
                other => {
                    return Err(A::Error::custom(format!(
                        "`{other}` is not a field of a tagged property (type, value, opaque, guid, struct_guid, flags, extensions, inner_guid, inner_name, inner_tag)"
                    )))
                }
            }
        }
        let tag = self.tag::<A::Error>(&f)?;
        if let Some(json) = early {
            value = Some(
                self.value(&f, &tag, json)
                    .map_err(|e| A::Error::custom(format!("value: {e}")))?,
            );
        }
        let value = value.ok_or_else(|| A::Error::missing_field("value"))?;
        Ok(TaggedProperty {
            name: self.name,
            tag,
            value,
        })
    }
}

struct TagValueSeed<'a, 's> {
    entry: &'a TaggedEntrySeed<'s>,
    fields: &'a EntryFields,
    tag: &'a Tag,
}

impl<'de> DeserializeSeed<'de> for TagValueSeed<'_, '_> {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        self.entry.value(self.fields, self.tag, d)
    }
}

/// An export's tree (`class`: the object's class name).
#[derive(Clone, Copy)]
pub struct ExportTreeSeed<'s> {
    pub s: Schemas<'s>,
    pub class: &'s str,
}

impl<'de> DeserializeSeed<'de> for ExportTreeSeed<'_> {
    type Value = ExportTree;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<ExportTree, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for ExportTreeSeed<'_> {
    type Value = ExportTree;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an export's data: {\"properties\", ...}")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ExportTree, A::Error> {
        let mut control = None;
        let mut properties = None;
        let mut object_guid = None;
        let mut rows = None;
        let mut early_rows: Option<serde_json::Value> = None;
        let mut string_table = None;
        let mut enumeration = None;
        let mut native = None;
        let rows_seed = |properties: &Option<Block>| -> Result<RowsSeed<'_>, String> {
            let row = properties
                .as_ref()
                .and_then(row_struct_name)
                .ok_or("the DataTable has no RowStruct property: its rows cannot be read")?;
            Ok(RowsSeed { s: self.s, row })
        };
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "control" => control = Some(map.next_value()?),
                "properties" => {
                    properties = Some(map.next_value_seed(BlockSeed {
                        s: self.s,
                        name: self.class,
                        depth: 0,
                    })?)
                }
                "object_guid" => object_guid = map.next_value()?,
                "rows" if properties.is_some() => {
                    let seed = rows_seed(&properties).map_err(A::Error::custom)?;
                    rows = Some(map.next_value_seed(seed)?)
                }
                "rows" => early_rows = Some(map.next_value()?),
                "string_table" => string_table = Some(map.next_value()?),
                "enum" => enumeration = Some(map.next_value()?),
                "native" => native = Some(map.next_value()?),
                other => {
                    return Err(A::Error::custom(format!(
                        "`{other}` is not a field of an export's data (control, properties, object_guid, rows, string_table, enum, native)"
                    )))
                }
            }
        }
        if let Some(json) = early_rows {
            let seed = rows_seed(&properties).map_err(A::Error::custom)?;
            rows = Some(
                seed.deserialize(json)
                    .map_err(|e| A::Error::custom(format!("rows: {e}")))?,
            );
        }
        Ok(ExportTree {
            control,
            properties: properties.ok_or_else(|| A::Error::missing_field("properties"))?,
            object_guid,
            rows,
            string_table,
            enumeration,
            native,
        })
    }
}

/// A DataTable's rows: an object keyed by row name, each a block of the row struct.
struct RowsSeed<'s> {
    s: Schemas<'s>,
    row: String,
}

impl<'de> DeserializeSeed<'de> for RowsSeed<'_> {
    type Value = Entries<Block>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for RowsSeed<'_> {
    type Value = Entries<Block>;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "an object of rows, each a `{}`", self.row)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut rows = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            let block = map.next_value_seed(BlockSeed {
                s: self.s,
                name: &self.row,
                depth: 1,
            })?;
            rows.push((key, block));
        }
        Ok(Entries(rows))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_text_round_trips() {
        for text in [
            "IntProperty",
            "ArrayProperty(StructProperty(Vector))",
            "MapProperty(NameProperty, StructProperty(/Script/CoreUObject.Vector))",
        ] {
            let t = TypeName::parse(text).unwrap();
            assert_eq!(t.text().as_deref(), Some(text));
        }
        for bad in ["", "A(", "A(B", "A)B", "A(,)", "A B(C))"] {
            assert!(TypeName::parse(bad).is_none(), "{bad}");
        }
        let odd = TypeName {
            name: Name("A(B".into()),
            parameters: vec![],
        };
        assert_eq!(odd.text(), None);
    }
}
