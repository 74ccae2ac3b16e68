//! Operations applied to an asset's document ([`crate::properties::document::AssetDocument`]
//! as `to-json` writes it), before it is typed and written back.
//!
//! The first step of a path picks where the rest applies: a DataTable's
//! row (`data.rows`), a StringTable's key (`data.string_table.entries`),
//! or else an export by its object name (`data.properties`). The rest
//! walks the plain JSON: an unversioned block's property, a tagged
//! block's property (its `value`), a struct's field, an array's element, a
//! map's entry. What a step does not find is an error naming what is
//! there, with the closest as a suggestion; whether a value fits its
//! property is checked when the document is typed.

use crate::error::{Error, Result};
use crate::manifest::did_you_mean;

use super::file::{Change, Operation};
use super::node::{Kind, Node};
use super::path::{PropertyPath, Step};

/// How the asset's data is addressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// `<row>.<property path>` in export `export`'s rows.
    DataTable { export: usize },
    /// `<key>` in export `export`'s string table.
    StringTable { export: usize },
    /// `<export name>.<property path>`.
    Exports,
}

/// The shape of document `doc`: its first DataTable or StringTable export,
/// else exports by name.
pub fn shape(doc: &mut Node) -> Shape {
    let Some(exports) = doc.get_mut("exports").and_then(Node::items_mut) else {
        return Shape::Exports;
    };
    for (export, entry) in exports.iter_mut().enumerate() {
        let Some(data) = entry.get_mut("data") else {
            continue;
        };
        let keys = data.keys();
        if keys.iter().any(|k| k == "rows") {
            return Shape::DataTable { export };
        }
        if keys.iter().any(|k| k == "string_table") {
            return Shape::StringTable { export };
        }
    }
    Shape::Exports
}

/// Why a step did not land.
fn missing(what: &str, key: &str, candidates: &[String]) -> Error {
    let names: Vec<&str> = candidates.iter().map(String::as_str).collect();
    let error = Error::usage(format!("{what} `{key}` is not in the asset"));
    match did_you_mean(key, &names) {
        Some(close) => error.with_hint(format!("did you mean `{close}`?")),
        None if names.is_empty() => error,
        None => error.with_hint(format!(
            "it has {}{}",
            names
                .iter()
                .take(12)
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", "),
            if names.len() > 12 { ", …" } else { "" }
        )),
    }
}

/// Export `index`'s data, which must be decoded.
fn export_data(doc: &mut Node, index: usize) -> Result<&mut Node> {
    let export = doc
        .get_mut("exports")
        .and_then(Node::items_mut)
        .and_then(|e| e.get_mut(index))
        .ok_or_else(|| Error::internal("the export the shape named is gone"))?;
    let reason = export.get_mut("reason").and_then(|r| r.as_str());
    match export.get_mut("data") {
        Some(data) => Ok(data),
        None => Err(Error::invalid(format!(
            "export {index} of the asset is kept as bytes, so it cannot be patched: {}",
            reason.unwrap_or_default()
        ))
        .with_hint("`zenpak to-json` of the asset shows why; give the game's mappings (`[game] mappings`) if that is what is missing")),
    }
}

/// The node the first step of a path names (a row, a string-table key's
/// entries object with the key, or an export's property block); `create`
/// adds a missing string-table key.
fn root<'a>(doc: &'a mut Node, shape: Shape, head: &str) -> Result<&'a mut Node> {
    match shape {
        Shape::DataTable { export } => {
            let rows = export_data(doc, export)?
                .get_mut("rows")
                .ok_or_else(|| Error::internal("rows"))?;
            // The names are listed only for the error (a big table's are many).
            if !rows.has(head) {
                return Err(missing("row", head, &rows.keys()));
            }
            rows.get_mut(head).ok_or_else(|| Error::internal("row"))
        }
        Shape::StringTable { .. } => Err(Error::internal("string tables are addressed by key")),
        Shape::Exports => {
            let exports = doc
                .get_mut("exports")
                .and_then(Node::items_mut)
                .ok_or_else(|| Error::internal("exports"))?;
            let mut names = Vec::with_capacity(exports.len());
            let mut found = None;
            for (i, e) in exports.iter_mut().enumerate() {
                let path = e
                    .get_mut("path")
                    .and_then(|p| p.as_str())
                    .unwrap_or_default();
                let name = path
                    .rsplit(['.', ':'])
                    .next()
                    .unwrap_or_default()
                    .to_string();
                if name == head && found.is_none() {
                    found = Some(i);
                }
                names.push(name);
            }
            let index = found.ok_or_else(|| missing("export", head, &names))?;
            export_data(doc, index)?
                .get_mut("properties")
                .ok_or_else(|| Error::internal("properties"))
        }
    }
}

/// Whether `node` is a tagged property (`{"type": …, "value": …}`).
fn is_tagged(node: &mut Node) -> bool {
    node.kind() == Kind::Object && node.has("type")
}

/// Steps into a tagged property's value (other nodes are their value).
fn value_of(node: &mut Node) -> Result<&mut Node> {
    if is_tagged(node) {
        if !node.has("value") {
            return Err(Error::usage(format!(
                "this property is kept as bytes ({}), so it cannot be patched",
                node.keys().join(", ")
            )));
        }
        return node
            .get_mut("value")
            .ok_or_else(|| Error::internal("value"));
    }
    Ok(node)
}

/// The node `step` leads to from `node` (a property, a field, a map key,
/// an element).
fn step_into<'a>(node: &'a mut Node, step: &Step) -> Result<&'a mut Node> {
    let node = value_of(node)?;
    match step {
        Step::Key(key) => {
            // A map with keys to remove or keys that are not text:
            // `{"$removed", "$entries": [[k, v], …]}`.
            if node.has("$entries") {
                let entries = node
                    .get_mut("$entries")
                    .ok_or_else(|| Error::internal("$entries"))?;
                let items = entries
                    .items_mut()
                    .ok_or_else(|| Error::internal("$entries"))?;
                let mut keys = Vec::new();
                for pair in items.iter_mut() {
                    let k = pair
                        .items_mut()
                        .and_then(|p| p.first().and_then(Node::as_str));
                    keys.push(k.clone().unwrap_or_default());
                }
                let at = keys.iter().position(|k| k == key);
                return match at {
                    Some(i) => items[i]
                        .items_mut()
                        .and_then(|p| p.get_mut(1))
                        .ok_or_else(|| Error::internal("map entry")),
                    None => Err(missing("key", key, &keys)),
                };
            }
            if node.kind() != Kind::Object {
                return Err(Error::usage(format!(
                    "`{key}` is asked of a value that has no fields or keys"
                )));
            }
            if !node.has(key) {
                return Err(missing("property or key", key, &node.keys()));
            }
            node.get_mut(key).ok_or_else(|| Error::internal("key"))
        }
        Step::Index(i) => {
            let items = array_items(node, &format!("[{i}]"))?;
            let len = items.len();
            items.get_mut(*i).ok_or_else(|| past_the_end(*i, len))
        }
    }
}

/// The items of the array `node` holds (a set's `$items`).
fn array_items<'a>(node: &'a mut Node, what: &dyn std::fmt::Display) -> Result<&'a mut Vec<Node>> {
    let node = match node.has("$items") {
        true => node
            .get_mut("$items")
            .ok_or_else(|| Error::internal("$items"))?,
        false => node,
    };
    node.items_mut()
        .ok_or_else(|| Error::usage(format!("`{what}` is not an array")))
}

fn past_the_end(i: usize, len: usize) -> Error {
    Error::usage(format!(
        "element [{i}] is past the end of an array of {len}"
    ))
}

/// Walks `steps` from `node`.
fn walk<'a>(mut node: &'a mut Node, steps: &[Step]) -> Result<&'a mut Node> {
    for step in steps {
        node = step_into(node, step)?;
    }
    Ok(node)
}

/// Sets `node` to `value`: a table merges into a struct (field by field),
/// anything else replaces the value (a tagged property keeps its tag).
fn set(node: &mut Node, value: serde_json::Value) -> Result<()> {
    let node = value_of(node)?;
    if let Some(history) = text_history(node) {
        return set_text(node, &history, value);
    }
    match value {
        serde_json::Value::Object(fields) if node.kind() == Kind::Object => {
            for (k, v) in fields {
                match node.get_mut(&k) {
                    Some(child) => set(child, v)?,
                    None => node
                        .entries_mut()
                        .ok_or_else(|| Error::internal("object"))?
                        .push((k, Node::New(v))),
                }
            }
        }
        // A zero-masked struct (`null`) given fields: the fields given.
        value => *node = Node::New(value),
    }
    Ok(())
}

/// The keys of an `FText`'s JSON history (`properties::tree::TextHistory`),
/// one of which stands beside `flags`.
const TEXT_HISTORIES: [&str; 5] = ["none", "base", "format", "transform", "string_table"];

/// The history key of `node` when it is an `FText` (`{"base": {…}}`, with
/// `flags` or not).
fn text_history(node: &mut Node) -> Option<String> {
    if node.kind() != Kind::Object {
        return None;
    }
    let keys = node.keys();
    let mut histories = keys.iter().filter(|k| TEXT_HISTORIES.contains(&k.as_str()));
    let history = histories.next()?.clone();
    let only = histories.next().is_none() && keys.iter().all(|k| k == "flags" || *k == history);
    only.then_some(history)
}

/// Sets an `FText`: a string is its source text (a localized text keeps
/// its namespace and key; any other becomes a culture-invariant text); a
/// table of another history (`{ string_table = { table, key } }`) replaces
/// the history, keeping the flags; one of the same history merges into it.
fn set_text(node: &mut Node, history: &str, value: serde_json::Value) -> Result<()> {
    use serde_json::{json, Value};
    let replacement = match value {
        Value::String(text) if history == "base" => {
            let base = node.get_mut("base").ok_or_else(|| Error::internal("base"))?;
            return set(base, json!({ "source": text }));
        }
        Value::String(text) => json!({ "none": { "invariant": text } }),
        Value::Object(fields) if fields.contains_key(history) || fields.is_empty() => {
            let entries = node.entries_mut().ok_or_else(|| Error::internal("text"))?;
            for (k, v) in fields {
                match entries.iter_mut().find(|(key, _)| *key == k) {
                    Some((_, child)) => set(child, v)?,
                    None => entries.push((k, Node::New(v))),
                }
            }
            return Ok(());
        }
        Value::Object(fields) => Value::Object(fields),
        other => {
            return Err(Error::usage(format!(
                "a text is set by a string (its source text) or a table of its history (`{{ string_table = {{ table = \"/Game/ST_X\", key = \"K\" }} }}`), not {other}"
            )))
        }
    };
    let flags = node.get_mut("flags").map(|f| f.to_value()).transpose()?;
    let mut fields = match replacement {
        Value::Object(fields) => fields,
        _ => return Err(Error::internal("a text history")),
    };
    if let (Some(flags), false) = (flags, fields.contains_key("flags")) {
        fields.insert("flags".to_string(), flags);
    }
    *node = Node::New(Value::Object(fields));
    Ok(())
}

/// Sets `key` of the block or map `parent`, adding it when missing. In a
/// tagged block a new property needs its tag (`{type, value}`).
fn set_key(parent: &mut Node, key: &str, value: serde_json::Value) -> Result<()> {
    let parent = value_of(parent)?;
    if parent.has("$entries") || parent.has(key) {
        return set(step_into(parent, &Step::Key(key.to_string()))?, value);
    }
    if parent.kind() != Kind::Object {
        return Err(Error::usage(format!(
            "`{key}` is asked of a value that has no fields or keys"
        )));
    }
    let tagged_block = {
        let entries = parent
            .entries_mut()
            .ok_or_else(|| Error::internal("object"))?;
        entries.iter_mut().any(|(_, v)| is_tagged(v))
    };
    if tagged_block && !value.get("type").is_some_and(serde_json::Value::is_string) {
        let keys = parent.keys();
        return Err(missing("property", key, &keys).with_hint(
            "in a versioned (tagged) package a property the asset lacks is added with its tag: `{ type = \"IntProperty\", value = 5 }`",
        ));
    }
    parent
        .entries_mut()
        .ok_or_else(|| Error::internal("object"))?
        .push((key.to_string(), Node::New(value)));
    Ok(())
}

/// Where `key` is in `entries`, or every key (for the error, made only then).
fn position_of(entries: &[(String, Node)], key: &str) -> std::result::Result<usize, Vec<String>> {
    entries
        .iter()
        .position(|(k, _)| k == key)
        .ok_or_else(|| entries.iter().map(|(k, _)| k.clone()).collect())
}

/// Applies one operation to `doc`.
pub fn apply(doc: &mut Node, shape: Shape, op: &Operation) -> Result<()> {
    match &op.change {
        Change::AddRow {
            row,
            copy_of,
            values,
        } => {
            let Shape::DataTable { export } = shape else {
                return Err(Error::usage(
                    "`add-rows` adds rows to a DataTable; this asset has none",
                ));
            };
            let rows = export_data(doc, export)?
                .get_mut("rows")
                .ok_or_else(|| Error::internal("rows"))?;
            if rows.has(row) {
                return Err(Error::usage(format!("the table already has a row `{row}`"))
                    .with_hint("change it with `set`, or pick another name"));
            }
            let mut new = match copy_of {
                Some(source) => {
                    if !rows.has(source) {
                        return Err(missing("row", source, &rows.keys()));
                    }
                    rows.get_mut(source)
                        .ok_or_else(|| Error::internal("row"))?
                        .clone()
                }
                None => Node::New(serde_json::Value::Object(Default::default())),
            };
            for (path, value) in values {
                let (last, parents) = path.0.split_last().expect("paths have a step");
                let parent = walk(&mut new, parents)?;
                match last {
                    Step::Key(k) => set_key(parent, k, value.clone())?,
                    Step::Index(_) => set(step_into(parent, last)?, value.clone())?,
                }
            }
            rows.entries_mut()
                .ok_or_else(|| Error::internal("rows"))?
                .push((row.clone(), new));
            Ok(())
        }
        Change::RemoveRow(row) => {
            let entries = match shape {
                Shape::DataTable { export } => export_data(doc, export)?.get_mut("rows"),
                Shape::StringTable { export } => export_data(doc, export)?
                    .get_mut("string_table")
                    .and_then(|t| t.get_mut("entries")),
                Shape::Exports => {
                    return Err(Error::usage(
                        "`remove-rows` removes a DataTable's rows or a StringTable's keys; this asset has neither",
                    ))
                }
            }
            .and_then(Node::entries_mut)
            .ok_or_else(|| Error::internal("rows"))?;
            let at = position_of(entries, row).map_err(|names| missing("row", row, &names))?;
            entries.remove(at);
            Ok(())
        }
        Change::Set(path, value) => {
            if let Shape::StringTable { export } = shape {
                return set_string(doc, export, path, value);
            }
            let head = path.head().ok_or_else(|| first_step_error(path, shape))?;
            let node = root(doc, shape, head)?;
            let (last, parents) = path.0[1..]
                .split_last()
                .ok_or_else(|| whole_error(path, shape))?;
            let parent = walk(node, parents)?;
            match last {
                Step::Key(k) => set_key(parent, k, value.clone()),
                Step::Index(_) => set(step_into(parent, last)?, value.clone()),
            }
        }
        Change::Append(path, values) => {
            let array = array_at(doc, shape, path)?;
            array.extend(values.iter().cloned().map(Node::New));
            Ok(())
        }
        Change::Insert(path, value) => {
            let (Some(Step::Index(i)), Some(parent)) =
                (path.0.last(), path.0.get(..path.0.len() - 1))
            else {
                return Err(Error::internal("insert without an index"));
            };
            let array = array_at(doc, shape, &PropertyPath(parent.to_vec()))?;
            if *i > array.len() {
                return Err(past_the_end(*i, array.len()));
            }
            array.insert(*i, Node::New(value.clone()));
            Ok(())
        }
        Change::Remove(path) => {
            let head = path.head().ok_or_else(|| first_step_error(path, shape))?;
            let node = root(doc, shape, head)?;
            let (last, parents) = path.0[1..]
                .split_last()
                .ok_or_else(|| whole_error(path, shape))?;
            let parent = value_of(walk(node, parents)?)?;
            match last {
                Step::Index(i) => {
                    let items = array_items(parent, &format!("[{i}]"))?;
                    if *i >= items.len() {
                        return Err(past_the_end(*i, items.len()));
                    }
                    items.remove(*i);
                }
                Step::Key(k) => {
                    if parent.has("$entries") {
                        return Err(Error::usage(format!(
                            "`{k}`: this map lists its entries as pairs; remove one with `set` on the whole map"
                        )));
                    }
                    let entries = parent.entries_mut().ok_or_else(|| {
                        Error::usage(format!("`{k}` is asked of a value that has no keys"))
                    })?;
                    let at = position_of(entries, k).map_err(|names| missing("key", k, &names))?;
                    entries.remove(at);
                }
            }
            Ok(())
        }
    }
}

/// The array `path` names (a set's items).
fn array_at<'a>(doc: &'a mut Node, shape: Shape, path: &PropertyPath) -> Result<&'a mut Vec<Node>> {
    let head = path.head().ok_or_else(|| first_step_error(path, shape))?;
    let node = root(doc, shape, head)?;
    if path.0.len() < 2 {
        return Err(whole_error(path, shape));
    }
    array_items(value_of(walk(node, &path.0[1..])?)?, path)
}

/// A StringTable's line: `"Key" = "text"` sets (or adds) the key.
fn set_string(
    doc: &mut Node,
    export: usize,
    path: &PropertyPath,
    value: &serde_json::Value,
) -> Result<()> {
    let [Step::Key(key)] = &path.0[..] else {
        return Err(Error::usage(format!(
            "`{path}`: a StringTable's lines are set by key alone (`\"Greeting\" = \"Hello\"`)"
        )));
    };
    if !value.is_string() {
        return Err(Error::usage(format!(
            "`{key}`: a StringTable's line is a string"
        )));
    }
    let entries = export_data(doc, export)?
        .get_mut("string_table")
        .and_then(|t| t.get_mut("entries"))
        .ok_or_else(|| Error::internal("string_table.entries"))?;
    match entries.get_mut(key) {
        Some(line) => *line = Node::New(value.clone()),
        None => entries
            .entries_mut()
            .ok_or_else(|| Error::internal("entries"))?
            .push((key.clone(), Node::New(value.clone()))),
    }
    Ok(())
}

fn first_step_error(path: &PropertyPath, shape: Shape) -> Error {
    Error::usage(format!(
        "`{path}` starts with an index; {}",
        what_first(shape)
    ))
}

fn whole_error(path: &PropertyPath, shape: Shape) -> Error {
    Error::usage(format!(
        "`{path}` names a whole {}; name a property in it (`{path}.Property`)",
        match shape {
            Shape::DataTable { .. } => "row",
            _ => "export",
        }
    ))
}

fn what_first(shape: Shape) -> &'static str {
    match shape {
        Shape::DataTable { .. } => "a DataTable's paths start with a row name",
        Shape::StringTable { .. } => "a StringTable's paths are its keys",
        Shape::Exports => "paths start with an export's name",
    }
}
