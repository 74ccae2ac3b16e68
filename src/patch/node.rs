//! A JSON document opened only where a patch reaches into it: every value
//! stays the text `to-json` wrote ([`RawValue`]) until a patch steps into
//! it, and then only that object or array is parsed, keeping its keys'
//! order (a tagged block's properties and a map's entries are written in
//! the order given). Numbers a patch does not touch are never re-printed,
//! so the document's untouched parts read back as they were written.

use serde::de::{Deserializer, MapAccess, Visitor};
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::value::RawValue;

use crate::error::{Error, Result};

/// A JSON value, parsed as far as it was opened.
#[derive(Debug, Clone)]
pub enum Node {
    /// Not opened: the text as read.
    Raw(Box<RawValue>),
    Object(Vec<(String, Node)>),
    Array(Vec<Node>),
    /// A value a patch gave.
    New(serde_json::Value),
}

/// What kind of JSON value a node holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Object,
    Array,
    Other,
}

impl Node {
    /// Parses a whole document, opening its top level.
    pub fn parse(text: &str) -> Result<Node> {
        let raw: Box<RawValue> = serde_json::from_str(text).map_err(Error::json)?;
        let mut node = Node::Raw(raw);
        node.open()?;
        Ok(node)
    }

    pub fn kind(&self) -> Kind {
        match self {
            Node::Raw(raw) => match raw.get().trim_start().as_bytes().first() {
                Some(b'{') => Kind::Object,
                Some(b'[') => Kind::Array,
                _ => Kind::Other,
            },
            Node::Object(_) => Kind::Object,
            Node::Array(_) => Kind::Array,
            Node::New(serde_json::Value::Object(_)) => Kind::Object,
            Node::New(serde_json::Value::Array(_)) => Kind::Array,
            Node::New(_) => Kind::Other,
        }
    }

    /// Parses an object or array one level deep (its values stay raw).
    pub fn open(&mut self) -> Result<()> {
        let kind = self.kind();
        let opened = match self {
            Node::Raw(raw) => match kind {
                Kind::Object => {
                    let entries: Entries = serde_json::from_str(raw.get()).map_err(Error::json)?;
                    Node::Object(entries.0)
                }
                Kind::Array => {
                    let items: Vec<Box<RawValue>> =
                        serde_json::from_str(raw.get()).map_err(Error::json)?;
                    Node::Array(items.into_iter().map(Node::Raw).collect())
                }
                Kind::Other => return Ok(()),
            },
            Node::New(serde_json::Value::Object(map)) => Node::Object(
                std::mem::take(map)
                    .into_iter()
                    .map(|(k, v)| (k, Node::New(v)))
                    .collect(),
            ),
            Node::New(serde_json::Value::Array(items)) => {
                Node::Array(std::mem::take(items).into_iter().map(Node::New).collect())
            }
            _ => return Ok(()),
        };
        *self = opened;
        Ok(())
    }

    /// The entries of an object, opened.
    pub fn entries_mut(&mut self) -> Option<&mut Vec<(String, Node)>> {
        self.open().ok()?;
        match self {
            Node::Object(entries) => Some(entries),
            _ => None,
        }
    }

    /// The items of an array, opened.
    pub fn items_mut(&mut self) -> Option<&mut Vec<Node>> {
        self.open().ok()?;
        match self {
            Node::Array(items) => Some(items),
            _ => None,
        }
    }

    /// The value of `key` in an object (opened), if present.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut Node> {
        self.entries_mut()?
            .iter_mut()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    }

    /// Whether an object (opened) has `key`.
    pub fn has(&mut self, key: &str) -> bool {
        self.entries_mut()
            .is_some_and(|e| e.iter().any(|(k, _)| k == key))
    }

    /// The keys of an object (opened).
    pub fn keys(&mut self) -> Vec<String> {
        self.entries_mut()
            .map(|e| e.iter().map(|(k, _)| k.clone()).collect())
            .unwrap_or_default()
    }

    /// The value as plain JSON (for a comparison or a copy).
    pub fn to_value(&self) -> Result<serde_json::Value> {
        match self {
            Node::Raw(raw) => serde_json::from_str(raw.get()).map_err(Error::json),
            Node::New(v) => Ok(v.clone()),
            Node::Object(entries) => {
                let mut map = serde_json::Map::new();
                for (k, v) in entries {
                    map.insert(k.clone(), v.to_value()?);
                }
                Ok(serde_json::Value::Object(map))
            }
            Node::Array(items) => Ok(serde_json::Value::Array(
                items.iter().map(Node::to_value).collect::<Result<_>>()?,
            )),
        }
    }

    /// The value as a string, when it is one.
    pub fn as_str(&self) -> Option<String> {
        match self {
            Node::Raw(raw) => serde_json::from_str::<String>(raw.get()).ok(),
            Node::New(serde_json::Value::String(s)) => Some(s.clone()),
            _ => None,
        }
    }

    pub fn to_text(&self) -> Result<String> {
        serde_json::to_string(self).map_err(Error::json)
    }
}

impl Serialize for Node {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        match self {
            Node::Raw(raw) => raw.serialize(s),
            Node::New(v) => v.serialize(s),
            Node::Object(entries) => {
                let mut map = s.serialize_map(Some(entries.len()))?;
                for (k, v) in entries {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
            Node::Array(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
        }
    }
}

/// An object's entries in order, values raw.
struct Entries(Vec<(String, Node)>);

impl<'de> Deserialize<'de> for Entries {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Entries;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(
                self,
                mut map: A,
            ) -> std::result::Result<Entries, A::Error> {
                let mut entries = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, Box<RawValue>>()? {
                    entries.push((k, Node::Raw(v)));
                }
                Ok(Entries(entries))
            }
        }
        d.deserialize_map(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn untouched_values_keep_their_text_and_keys_their_order() {
        let text = r#"{"b":1.50,"a":{"z":[1,2],"y":1e3},"c":"x"}"#;
        let mut node = Node::parse(text).unwrap();
        assert_eq!(node.to_text().unwrap(), text);
        let a = node.get_mut("a").unwrap();
        *a.get_mut("y").unwrap() = Node::New(serde_json::json!(7));
        assert_eq!(
            node.to_text().unwrap(),
            r#"{"b":1.50,"a":{"z":[1,2],"y":7},"c":"x"}"#
        );
    }
}
