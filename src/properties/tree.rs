//! The property tree: every value of an export's property data as a typed
//! value that [`codec`](super::codec) reads from and writes back to the same
//! bytes. Its JSON form is plain values typed by the schema
//! ([`codec::json`](super::codec::json)); the leaf types here carry their own.
//!
//! What JSON cannot carry as it is gets a form that round-trips: integers of
//! 64 bits beyond 2^53 as strings (JSON readers lose precision past 53 bits),
//! floats that are not finite as their bits (`"bits:7fc00000"`), GUIDs and
//! byte runs as hex, an `FString` stored as UTF-16 although its text fits
//! one byte per character as `{"text": …, "utf16": true}`.

use std::cell::RefCell;
use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Property and struct names as the tree holds them: one copy of each
/// text, shared by every value that names it (a table's rows name the same
/// properties thousands of times).
#[derive(Debug, Default)]
pub struct SharedNames(RefCell<HashSet<Arc<str>, BuildHasherDefault<NameHasher>>>);

/// A hash for short names looked up millions of times (a word at a time,
/// multiply and rotate; no defence against chosen collisions is needed for
/// names a package or the mappings give).
#[derive(Default)]
struct NameHasher(u64);

impl Hasher for NameHasher {
    fn write(&mut self, bytes: &[u8]) {
        const K: u64 = 0x517c_c1b7_2722_0a95;
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let word = u64::from_le_bytes(c.try_into().expect("8 bytes"));
            self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(K);
        }
        for &b in chunks.remainder() {
            self.0 = (self.0.rotate_left(5) ^ b as u64).wrapping_mul(K);
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

impl SharedNames {
    /// The shared copy of `text`.
    pub fn get(&self, text: &str) -> Arc<str> {
        if let Some(shared) = self.0.borrow().get(text) {
            return shared.clone();
        }
        let shared: Arc<str> = Arc::from(text);
        self.0.borrow_mut().insert(shared.clone());
        shared
    }
}

/// An export's data as the codec gives it: decoded, or kept as bytes with
/// the reason it could not be decoded.
#[derive(Debug, Clone, PartialEq)]
pub enum ExportData {
    Decoded(Box<ExportTree>),
    Opaque { reason: String, opaque: Hex },
}

/// An export's data: its property block, the object GUID `UObject::Serialize`
/// writes after it, and the class's native data as a byte run. Read from
/// JSON through [`ExportTreeSeed`](super::codec::json::ExportTreeSeed)
/// (the properties' types come from the schema).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExportTree {
    /// Tagged 5.x objects: the class serialization control byte, and the
    /// overridable-operation byte when its flag says one follows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control: Option<Hex>,
    pub properties: Block,
    /// The object GUID flag and, when set, the GUID.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object_guid: Option<Guid>,
    /// A `DataTable`'s rows: each row's name and its row struct's
    /// properties (the struct the `RowStruct` property names).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows: Option<Entries<Block>>,
    /// A `StringTable`'s table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub string_table: Option<StringTable>,
    /// An enum's (`UserDefinedEnum`'s) entries.
    #[serde(default, rename = "enum", skip_serializing_if = "Option::is_none")]
    pub enumeration: Option<Enumeration>,
    /// The class's own serialized data after what is decoded above (mesh,
    /// texture, sound data, …), kept as bytes with the reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub native: Option<NativeRun>,
}

/// Bytes of an export that zenpak keeps as they are, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NativeRun {
    pub reason: String,
    pub opaque: Hex,
}

/// `FStringTable`: the namespace, each key's source string, and the
/// metadata of keys that have some.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StringTable {
    pub namespace: FStr,
    pub entries: Entries<FStr>,
    #[serde(default, skip_serializing_if = "Entries::is_empty")]
    pub metadata: Entries<Entries<FStr>>,
}

/// `UEnum`'s own data: each entry's name (`E_Weapon::NewEnumerator0`)
/// and value, and how the names are formed (`CppForm`: 0 regular,
/// 1 namespaced, 2 enum class).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Enumeration {
    pub names: Entries<Wide<i64>>,
    pub cpp_form: u8,
}

/// Entries keyed by text, in their stored order: a JSON object (whose keys
/// keep that order), read back into the same order. A key stored twice is
/// kept twice.
#[derive(Debug, Clone, PartialEq)]
pub struct Entries<V>(pub Vec<(String, V)>);

impl<V> Default for Entries<V> {
    fn default() -> Self {
        Entries(Vec::new())
    }
}

impl<V> Entries<V> {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The value of the first entry keyed `key`.
    pub fn get(&self, key: &str) -> Option<&V> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
}

impl<V: Serialize> Serialize for Entries<V> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

impl<'de, V: Deserialize<'de>> Deserialize<'de> for Entries<V> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit<V>(std::marker::PhantomData<V>);
        impl<'de, V: Deserialize<'de>> serde::de::Visitor<'de> for Visit<V> {
            type Value = Entries<V>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object of entries")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Self::Value, A::Error> {
                let mut out = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, V>()? {
                    out.push((k, v));
                }
                Ok(Entries(out))
            }
        }
        d.deserialize_map(Visit(std::marker::PhantomData))
    }
}

/// A property block (an object's or a struct's). As JSON, an object keyed
/// by property name (`Name[i]` for element `i` of a static array), in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    /// Unversioned (cooked): present properties in schema order; a value of
    /// `null` is one the zero mask marks (the type's zero, not serialized).
    Unversioned {
        properties: Vec<UnversionedProperty>,
        /// The header as read, kept only when it is not the one the cooker
        /// writes for these properties (so unchanged data writes back as it was).
        header: Option<Hex>,
    },
    /// Tagged (versioned): each property with its tag, up to `None`.
    Tagged { properties: Vec<TaggedProperty> },
}

/// One present property of an unversioned block.
#[derive(Debug, Clone, PartialEq)]
pub struct UnversionedProperty {
    pub name: Arc<str>,
    /// Element of a static array (`int32 Foo[4]`); 0 otherwise.
    pub index: u8,
    /// `None`: zero-masked (the type's zero value).
    pub value: Option<Value>,
}

/// One property of a tagged block: its tag and its value.
#[derive(Debug, Clone, PartialEq)]
pub struct TaggedProperty {
    pub name: Name,
    pub tag: Tag,
    pub value: Value,
}

/// The type part of an `FPropertyTag` (the size is the value's, computed on write).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Tag {
    /// Before 5.4: the type's name and the fields its type adds.
    Named {
        #[serde(rename = "type")]
        ty: Name,
        #[serde(default, skip_serializing_if = "is_zero_i32")]
        array_index: i32,
        /// StructProperty: struct name and GUID.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        struct_name: Option<Name>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        struct_guid: Option<Guid>,
        /// ByteProperty / EnumProperty: enum name; Array / Set / Optional: inner type; Map: key type.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        inner: Option<Name>,
        /// MapProperty: value type.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        value_type: Option<Name>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        property_guid: Option<Guid>,
    },
    /// 5.4+: the complete type as a tree of names, and the flags byte's fields.
    Complete {
        #[serde(rename = "type")]
        ty: TypeName,
        flags: u8,
        #[serde(default, skip_serializing_if = "is_zero_i32")]
        array_index: i32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        property_guid: Option<Guid>,
        /// Property extensions byte and, when it says so, the overridable
        /// operation byte and its "experimental overridable logic" bool.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        extensions: Option<Hex>,
    },
}

/// A 5.4+ type name: `ArrayProperty(StructProperty(Vector))`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TypeName {
    pub name: Name,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parameters: Vec<TypeName>,
}

/// One value. Which variants a property may hold follows from its type.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Bool(bool),
    Int8(i8),
    Byte(u8),
    Int16(i16),
    UInt16(u16),
    Int(i32),
    UInt32(u32),
    Int64(Wide<i64>),
    UInt64(Wide<u64>),
    Float(F32),
    Double(F64),
    /// An enum stored as its underlying integer: the entry's name when the
    /// mappings name the value, else the number.
    Enum(EnumValue),
    Name(Name),
    Str(FStr),
    Text(Box<Text>),
    /// An object (also weak object, interface) reference, by the object's
    /// path.
    Object(ObjectRef),
    LazyObject(Guid),
    SoftObject(Box<SoftObjectPath>),
    Struct(Box<StructValue>),
    Array(Vec<Value>),
    Set {
        removed: Vec<Value>,
        items: Vec<Value>,
    },
    Map {
        removed: Vec<Value>,
        entries: Vec<(Value, Value)>,
    },
    Optional(Option<Box<Value>>),
    Delegate(Delegate),
    MulticastDelegate(Vec<Delegate>),
    FieldPath {
        path: Vec<Name>,
        owner: ObjectRef,
    },
    /// Before 5.4, a tagged array of structs: the inner tag the array
    /// writes before its elements (its size is computed on write), then the structs.
    StructArray {
        inner_name: Name,
        inner: Box<Tag>,
        items: Vec<Value>,
    },
    /// Bytes of a value whose layout zenpak does not know (tagged data only:
    /// its size is in the tag), kept as they are.
    Opaque(Hex),
}

/// A struct value: its name, and either its property block or its native
/// fields. As JSON, the body alone (the schema names the struct).
#[derive(Debug, Clone, PartialEq)]
pub struct StructValue {
    pub name: Arc<str>,
    pub body: StructBody,
}

#[derive(Debug, Clone, PartialEq)]
pub enum StructBody {
    /// Serialized through its properties.
    Block(Block),
    /// Serialized natively with a fixed layout: its fields, named, in order.
    Fields(Vec<(&'static str, Value)>),
    /// `FSoftObjectPath` and its variants.
    SoftObject(SoftObjectPath),
    /// `FGameplayTagContainer`: the tags.
    Tags(Vec<Name>),
    /// Other native layouts zenpak steps over (kept as bytes).
    Native(Hex),
}

/// A reference to an import or an export of the package, by its full path
/// (`/Script/Engine.DataTable`, `/Game/Maps/Arena.Arena:PersistentLevel`);
/// `null` for none (`""` too: a block's property that is present and refers
/// to no object is written `""`, because `null` there is the zero mask). The
/// package's own exports' paths start with its name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct ObjectRef(pub Option<String>);

impl<'de> Deserialize<'de> for ObjectRef {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(ObjectRef(
            Option::<String>::deserialize(d)?.filter(|p| !p.is_empty()),
        ))
    }
}

/// An enum value: by name when the mappings name it, else raw.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum EnumValue {
    Name(String),
    /// A value the enum does not name: a JSON number (never a string, so
    /// that it cannot be read back as a name).
    Raw(i64),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Delegate {
    pub object: ObjectRef,
    pub function: Name,
}

/// `FSoftObjectPath`: an index into the package's list (5.1+ packages that
/// have one), or asset path name(s) and a sub-path.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SoftObjectPath {
    Index(i32),
    Path {
        path: Name,
        /// 5.1+: the asset name (`FTopLevelAssetPath`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        asset: Option<Name>,
        sub_path: FStr,
    },
}

/// `FText`: flags and history (as JSON, the history's one key beside `flags`
/// when set: `{"base": {"namespace", "key", "source"}}`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Text {
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub flags: u32,
    #[serde(flatten)]
    pub history: TextHistory,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum TextHistory {
    /// Type -1: culture invariant text (or empty), no key.
    None { invariant: Option<FStr> },
    /// Type 0: namespace, key, source string.
    Base {
        namespace: FStr,
        key: FStr,
        source: FStr,
    },
    /// Types 1 (named), 2 (ordered), 3 (argument): a pattern and its arguments.
    Format {
        kind: i8,
        pattern: Box<Text>,
        arguments: Vec<FormatArgument>,
    },
    /// Type 10: a transformed text (to lower / upper).
    Transform { source: Box<Text>, transform: u8 },
    /// Type 11: an entry of a string table.
    StringTable { table: Name, key: FStr },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FormatArgument {
    /// Named and argument formats name each argument; ordered ones do not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<FStr>,
    pub value: FormatValue,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum FormatValue {
    Int(Wide<i64>),
    UInt(Wide<u64>),
    Float(F32),
    Double(F64),
    Text(Box<Text>),
    Gender(u8),
}

/// An FName as its display text (`Foo` for number 0, `Foo_2` for number 3).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Name(pub String);

/// An `FString`: its text, and how it was stored where that is not the
/// narrowest form: as UTF-16 though every character fits one byte, or (empty)
/// as a lone terminator (length 1) rather than length 0, as editor-saved
/// texts often are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FStr {
    pub text: String,
    pub utf16: bool,
    pub terminated_empty: bool,
}

impl FStr {
    /// The form a writer that picks the narrowest encoding gives `text`.
    pub fn plain(text: impl Into<String>) -> Self {
        FStr {
            text: text.into(),
            utf16: false,
            terminated_empty: false,
        }
    }

    /// Whether the stored encoding is the narrowest one for the text (then
    /// the flags need not be written down).
    pub fn is_canonical(&self) -> bool {
        (!self.utf16 || !crate::binary::is_latin1(&self.text)) && !self.terminated_empty
    }

    /// How it was read: text and the UTF-16 flag as the reader reports it.
    pub(crate) fn read(text: String, utf16: bool, terminated_empty: bool) -> Self {
        // A non-Latin-1 text can only be UTF-16: the flag says nothing more.
        let utf16 = utf16 && crate::binary::is_latin1(&text);
        let terminated_empty = terminated_empty && text.is_empty() && !utf16;
        FStr {
            text,
            utf16,
            terminated_empty,
        }
    }
}

impl Serialize for FStr {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.is_canonical() {
            s.serialize_str(&self.text)
        } else {
            #[derive(Serialize)]
            struct Stored<'a> {
                text: &'a str,
                #[serde(skip_serializing_if = "std::ops::Not::not")]
                utf16: bool,
                #[serde(skip_serializing_if = "std::ops::Not::not")]
                terminated: bool,
            }
            Stored {
                text: &self.text,
                utf16: self.utf16,
                terminated: self.terminated_empty,
            }
            .serialize(s)
        }
    }
}

impl<'de> Deserialize<'de> for FStr {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Form {
            Plain(String),
            Stored {
                text: String,
                #[serde(default)]
                utf16: bool,
                #[serde(default)]
                terminated: bool,
            },
        }
        Ok(match Form::deserialize(d)? {
            Form::Plain(text) => FStr::plain(text),
            Form::Stored {
                text,
                utf16,
                terminated,
            } => FStr::read(text, utf16, terminated),
        })
    }
}

/// A 64-bit integer: a JSON number within ±2^53, else a string (JSON
/// readers keep 53 bits). Either form reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wide<T>(pub T);

/// The largest magnitude every JSON reader keeps exactly.
const JSON_EXACT: u64 = 1 << 53;

impl<T: Copy + Into<i128> + std::fmt::Display> Serialize for Wide<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let v: i128 = self.0.into();
        if v.unsigned_abs() <= JSON_EXACT as u128 {
            s.serialize_i64(v as i64)
        } else {
            s.collect_str(&self.0)
        }
    }
}

impl<'de, T: std::str::FromStr + TryFrom<i64> + TryFrom<u64>> Deserialize<'de> for Wide<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit<T>(std::marker::PhantomData<T>);
        impl<T: std::str::FromStr + TryFrom<i64> + TryFrom<u64>> serde::de::Visitor<'_> for Visit<T> {
            type Value = Wide<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an integer (a number, or a string of digits)")
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Wide<T>, E> {
                T::try_from(v)
                    .map(Wide)
                    .map_err(|_| E::custom(OUT_OF_RANGE))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Wide<T>, E> {
                T::try_from(v)
                    .map(Wide)
                    .map_err(|_| E::custom(OUT_OF_RANGE))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Wide<T>, E> {
                v.trim()
                    .parse()
                    .map(Wide)
                    .map_err(|_| E::custom(OUT_OF_RANGE))
            }
        }
        d.deserialize_any(Visit(std::marker::PhantomData))
    }
}

const OUT_OF_RANGE: &str = "an integer out of this type's range";

macro_rules! exact_float {
    ($name:ident, $t:ty, $bits:ty, $width:literal) => {
        /// A float written as a JSON number when finite (the shortest text
        /// that reads back to the same bits), else as `"bits:<hex>"`.
        #[derive(Debug, Clone, Copy)]
        pub struct $name(pub $t);

        impl PartialEq for $name {
            fn eq(&self, other: &Self) -> bool {
                self.0.to_bits() == other.0.to_bits()
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                if self.0.is_finite() {
                    self.0.serialize(s)
                } else {
                    s.collect_str(&format_args!("bits:{:0w$x}", self.0.to_bits(), w = $width))
                }
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct Visit;
                impl serde::de::Visitor<'_> for Visit {
                    type Value = $name;
                    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                        f.write_str("a number, or \"bits:\" and the float's bits in hex")
                    }
                    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<$name, E> {
                        Ok($name(v as $t))
                    }
                    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<$name, E> {
                        Ok($name(v as $t))
                    }
                    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<$name, E> {
                        Ok($name(v as $t))
                    }
                    fn visit_str<E: serde::de::Error>(self, t: &str) -> Result<$name, E> {
                        t.strip_prefix("bits:")
                            .and_then(|h| <$bits>::from_str_radix(h, 16).ok())
                            .map(|b| $name(<$t>::from_bits(b)))
                            .ok_or_else(|| {
                                E::custom(format!(
                                    "`{t}` is not a float: write a number, or \"bits:\" and the float's bits in hex"
                                ))
                            })
                    }
                }
                d.deserialize_any(Visit)
            }
        }
    };
}
exact_float!(F32, f32, u32, 8);
exact_float!(F64, f64, u64, 16);

/// Bytes as lowercase hex.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hex(pub Vec<u8>);

impl Hex {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Serialize for Hex {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&hex(&self.0))
    }
}

impl<'de> Deserialize<'de> for Hex {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        unhex(&text)
            .map(Hex)
            .ok_or_else(|| serde::de::Error::custom("hex digits, two per byte"))
    }
}

/// A GUID as 32 hex digits (its 16 bytes in file order).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Guid(pub [u8; 16]);

impl Serialize for Guid {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&hex(&self.0))
    }
}

impl<'de> Deserialize<'de> for Guid {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        unhex(&text)
            .and_then(|b| <[u8; 16]>::try_from(b).ok())
            .map(Guid)
            .ok_or_else(|| serde::de::Error::custom("a GUID: 32 hex digits"))
    }
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

fn is_zero_i32(v: &i32) -> bool {
    *v == 0
}

fn is_zero_u32(v: &u32) -> bool {
    *v == 0
}
