//! `zenpak patch diff BASE EDITED`: the patch that turns one package into
//! the other (the way to start from an asset already edited in a GUI).
//!
//! Both are read into their documents and compared where a patch can say
//! something: a DataTable's rows (removed, added — copied from the
//! closest existing row, then the fields that differ —, changed), a
//! StringTable's lines, other exports' properties. A value that differs
//! is set; an array the edit only lengthened is appended to; what a patch
//! cannot say (a property removed or made zero-masked, rows reordered, a
//! change outside the export data) is an error naming it. The patch is
//! then applied to BASE and the result compared with EDITED byte for
//! byte: what `diff` writes reproduces the edited copy, or it says where
//! it does not.

use serde_json::Value;

use crate::error::{Error, Result};

use super::node::Node;
use super::path::{PropertyPath, Step};

/// Values set, each at its path.
pub type Sets = Vec<(PropertyPath, Value)>;

/// A row added: its name, the row it copies, the fields set (relative to the row).
#[derive(Debug, Clone, PartialEq)]
pub struct AddedRow {
    pub row: String,
    pub copy_of: Option<String>,
    pub fields: Sets,
}

/// The operations of one patch, as the TOML is written.
#[derive(Debug, Clone, Default)]
pub struct Diff {
    pub set: Sets,
    pub append: Vec<(PropertyPath, Vec<Value>)>,
    pub add_rows: Vec<AddedRow>,
    pub remove_rows: Vec<String>,
}

fn cannot(path: &PropertyPath, what: &str) -> Error {
    Error::usage(format!("`{path}`: {what}; a patch cannot say that"))
        .with_hint("make that change in the base instead (`base = \"…\"` with the edited file), or leave it out of the edited copy")
}

/// The changes from `a` to `b` below `path`, into `out` (set and append).
fn values(path: &PropertyPath, a: &Value, b: &Value, diff: &mut Diff) -> Result<()> {
    if a == b {
        return Ok(());
    }
    if b.is_null() {
        return Err(cannot(
            path,
            "the edited copy has this property zero (masked) where the base has a value",
        ));
    }
    match (a, b) {
        (Value::Object(x), Value::Object(y)) if !is_tagged(a) || same_tag(a, b) => {
            if let Some(key) = x.keys().find(|k| !y.contains_key(*k)) {
                return Err(cannot(
                    &child(path, key),
                    "the edited copy leaves this property out (its default)",
                ));
            }
            for (k, v) in y {
                match x.get(k) {
                    Some(old) => values(&child(path, k), old, v, diff)?,
                    None => set(&child(path, k), v, diff)?,
                }
            }
            Ok(())
        }
        (Value::Array(x), Value::Array(y)) if x.len() <= y.len() => {
            let changed = x.iter().zip(y).any(|(p, q)| p != q);
            if !changed {
                let tail = &y[x.len()..];
                if tail.iter().any(contains_null) {
                    return Err(cannot(
                        path,
                        "an appended element holds a zero-masked value",
                    ));
                }
                diff.append.push((path.clone(), tail.to_vec()));
                return Ok(());
            }
            if x.len() == y.len() {
                for (i, (p, q)) in x.iter().zip(y).enumerate() {
                    let mut at = path.clone();
                    at.0.push(Step::Index(i));
                    values(&at, p, q, diff)?;
                }
                return Ok(());
            }
            set(path, b, diff)
        }
        _ => set(path, b, diff),
    }
}

fn is_tagged(v: &Value) -> bool {
    v.get("type").is_some_and(Value::is_string)
}

fn same_tag(a: &Value, b: &Value) -> bool {
    a.get("type") == b.get("type")
}

fn contains_null(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Array(items) => items.iter().any(contains_null),
        Value::Object(map) => map.values().any(contains_null),
        _ => false,
    }
}

fn set(path: &PropertyPath, v: &Value, diff: &mut Diff) -> Result<()> {
    if contains_null(v) {
        return Err(cannot(path, "the new value holds a zero-masked property"));
    }
    diff.set.push((path.clone(), v.clone()));
    Ok(())
}

fn child(path: &PropertyPath, key: &str) -> PropertyPath {
    let mut at = path.clone();
    at.0.push(Step::Key(key.to_string()));
    at
}

/// The ordered entries of the object at `steps` in document `doc`.
fn entries_at(doc: &mut Node, steps: &[&str]) -> Result<Vec<(String, Value)>> {
    let mut node = doc;
    for step in steps {
        node = match step.parse::<usize>() {
            Ok(i) => node.items_mut().and_then(|items| items.get_mut(i)),
            Err(_) => node.get_mut(step),
        }
        .ok_or_else(|| Error::internal(format!("document without `{step}`")))?;
    }
    let entries = node
        .entries_mut()
        .ok_or_else(|| Error::internal("an object expected"))?;
    entries
        .iter()
        .map(|(k, v)| Ok((k.clone(), v.to_value()?)))
        .collect()
}

/// How many leaf values differ between two rows (to pick what a new row copies).
fn distance(a: &Value, b: &Value) -> usize {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let mut n = x.keys().filter(|k| !y.contains_key(*k)).count();
            for (k, v) in y {
                n += x.get(k).map_or(1 + 8, |old| distance(old, v));
            }
            n
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            x.iter().zip(y).map(|(p, q)| distance(p, q)).sum()
        }
        _ => usize::from(a != b),
    }
}

/// The diff of two documents' texts (as `to-json` writes them).
pub fn documents(base: &str, edited: &str) -> Result<Diff> {
    let (mut a, mut b) = (Node::parse(base)?, Node::parse(edited)?);
    let (va, vb) = (a.to_value()?, b.to_value()?);
    for key in ["engine", "package"] {
        if va.get(key) != vb.get(key) {
            return Err(Error::usage(format!(
                "the edited copy's `{key}` differs from the base's; a patch changes export data only"
            )));
        }
    }
    // Names and imports an edit adds follow from its values (a name set, an
    // object referred to); one the base has and the edit lost does not.
    let base_imports = va["imports"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let edited_imports = vb["imports"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    if base_imports.iter().any(|i| !edited_imports.contains(i)) {
        return Err(Error::usage(
            "the edited copy lacks an import the base has; a patch changes export data only (imports it needs are added)",
        ));
    }
    let (ea, eb) = (&va["exports"], &vb["exports"]);
    let (Some(xa), Some(xb)) = (ea.as_array(), eb.as_array()) else {
        return Err(Error::internal("documents without exports"));
    };
    if xa.len() != xb.len()
        || xa
            .iter()
            .zip(xb)
            .any(|(p, q)| p["path"] != q["path"] || p["class"] != q["class"])
    {
        return Err(Error::usage(
            "the edited copy's exports are not the base's (added, removed or renamed); a patch changes export data only",
        ));
    }
    let mut diff = Diff::default();
    let shape = super::apply::shape(&mut a);
    for (i, (p, q)) in xa.iter().zip(xb).enumerate() {
        if p == q {
            continue;
        }
        let name = p["path"]
            .as_str()
            .and_then(|s| s.rsplit(['.', ':']).next())
            .unwrap_or_default()
            .to_string();
        let (Some(pd), Some(qd)) = (p.get("data"), q.get("data")) else {
            return Err(Error::usage(format!(
                "export `{name}` is kept as bytes, and its bytes differ; a patch cannot say that"
            )));
        };
        let table = matches!(shape, super::apply::Shape::DataTable { export } if export == i);
        let strings = matches!(shape, super::apply::Shape::StringTable { export } if export == i);
        for key in pd.as_object().into_iter().flatten().map(|(k, _)| k) {
            let same = pd.get(key) == qd.get(key);
            match key.as_str() {
                _ if same => {}
                "properties" if !table && !strings => values(
                    &PropertyPath(vec![Step::Key(name.clone())]),
                    &pd["properties"],
                    &qd["properties"],
                    &mut diff,
                )?,
                "rows" if table => rows(&mut a, &mut b, i, &mut diff)?,
                "string_table" if strings => {
                    let (sa, sb) = (&pd["string_table"], &qd["string_table"]);
                    if sa["namespace"] != sb["namespace"]
                        || sa.get("metadata") != sb.get("metadata")
                    {
                        return Err(Error::usage("the string table's namespace or metadata differ; a patch changes its lines only"));
                    }
                    let (la, lb) = (&sa["entries"], &sb["entries"]);
                    for (k, v) in lb.as_object().into_iter().flatten() {
                        if la.get(k) != Some(v) {
                            set(&PropertyPath(vec![Step::Key(k.clone())]), v, &mut diff)?;
                        }
                    }
                    for k in la.as_object().into_iter().flatten().map(|(k, _)| k) {
                        if lb.get(k).is_none() {
                            diff.remove_rows.push(k.clone());
                        }
                    }
                }
                other => {
                    return Err(Error::usage(format!(
                        "export `{name}`'s `{other}` differs; a patch cannot say that"
                    )))
                }
            }
        }
    }
    Ok(diff)
}

/// A DataTable's rows: removed, added (in the edited order, after the
/// base's), changed.
fn rows(a: &mut Node, b: &mut Node, export: usize, diff: &mut Diff) -> Result<()> {
    let at = ["exports", &export.to_string(), "data", "rows"];
    let old = entries_at(a, &at)?;
    let new = entries_at(b, &at)?;
    let kept: Vec<&str> = old
        .iter()
        .map(|(k, _)| k.as_str())
        .filter(|k| new.iter().any(|(n, _)| n == k))
        .collect();
    let order: Vec<&str> = new
        .iter()
        .map(|(k, _)| k.as_str())
        .filter(|k| kept.contains(k))
        .collect();
    let added_at = new.iter().position(|(k, _)| !kept.contains(&k.as_str()));
    if order != kept || added_at.is_some_and(|i| i < kept.len()) {
        return Err(Error::usage(
            "the edited copy's rows are in another order (or a new row sits before an old one); a patch adds rows at the end",
        ));
    }
    for (k, _) in &old {
        if !kept.contains(&k.as_str()) {
            diff.remove_rows.push(k.clone());
        }
    }
    for (k, v) in &new {
        match old.iter().find(|(o, _)| o == k) {
            Some((_, before)) => {
                values(&PropertyPath(vec![Step::Key(k.clone())]), before, v, diff)?
            }
            None => {
                let closest = old
                    .iter()
                    .min_by_key(|(_, r)| distance(r, v))
                    .map(|(name, r)| (name.clone(), r));
                let mut fields = Diff::default();
                let copy_of = match closest {
                    Some((name, row))
                        if distance(row, v) < distance(&Value::Object(Default::default()), v) =>
                    {
                        values(&PropertyPath(vec![]), row, v, &mut fields)?;
                        Some(name)
                    }
                    _ => {
                        values(
                            &PropertyPath(vec![]),
                            &Value::Object(Default::default()),
                            v,
                            &mut fields,
                        )?;
                        None
                    }
                };
                if !fields.append.is_empty() {
                    // An appended array in a new row: set it whole.
                    for (path, _) in std::mem::take(&mut fields.append) {
                        let value = path_value(v, &path);
                        fields.set.push((path, value));
                    }
                }
                diff.add_rows.push(AddedRow {
                    row: k.clone(),
                    copy_of,
                    fields: fields.set,
                });
            }
        }
    }
    Ok(())
}

/// The value at `path` (relative) in `v`.
fn path_value(v: &Value, path: &PropertyPath) -> Value {
    let mut node = v;
    for step in &path.0 {
        node = match step {
            Step::Key(k) => &node[k.as_str()],
            Step::Index(i) => &node[*i],
        };
    }
    node.clone()
}

impl Diff {
    pub fn is_empty(&self) -> bool {
        self.set.is_empty()
            && self.append.is_empty()
            && self.add_rows.is_empty()
            && self.remove_rows.is_empty()
    }

    /// The patch file: one `[[patch]]` naming `target` (`asset = …` or `base = …`).
    pub fn to_toml(&self, target: &str) -> Result<String> {
        let mut text = format!("[[patch]]\n{target}\n");
        if !self.remove_rows.is_empty() {
            let rows: Vec<String> = self.remove_rows.iter().map(|r| toml_string(r)).collect();
            text.push_str(&format!("remove-rows = [{}]\n", rows.join(", ")));
        }
        if !self.set.is_empty() {
            text.push_str("\n[patch.set]\n");
            for (path, value) in &self.set {
                text.push_str(&format!(
                    "{} = {}\n",
                    toml_string(&path.to_string()),
                    toml_value(value)?
                ));
            }
        }
        if !self.append.is_empty() {
            text.push_str("\n[patch.append]\n");
            for (path, items) in &self.append {
                text.push_str(&format!(
                    "{} = {}\n",
                    toml_string(&path.to_string()),
                    toml_value(&Value::Array(items.clone()))?
                ));
            }
        }
        for AddedRow {
            row,
            copy_of,
            fields,
        } in &self.add_rows
        {
            text.push_str(&format!("\n[patch.add-rows.{}]\n", toml_string(row)));
            if let Some(source) = copy_of {
                text.push_str(&format!("copy-of = {}\n", toml_string(source)));
            }
            for (path, value) in fields {
                text.push_str(&format!(
                    "{} = {}\n",
                    toml_string(&path.to_string()),
                    toml_value(value)?
                ));
            }
        }
        Ok(text)
    }
}

fn toml_string(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// A JSON value as a TOML value (inline).
fn toml_value(v: &Value) -> Result<String> {
    fn convert(v: &Value) -> Result<toml::Value> {
        Ok(match v {
            Value::Null => return Err(Error::internal("null reached the TOML writer")),
            Value::Bool(b) => toml::Value::Boolean(*b),
            Value::Number(n) => match (n.as_i64(), n.as_f64()) {
                (Some(i), _) => toml::Value::Integer(i),
                (None, Some(f)) if n.is_f64() => toml::Value::Float(f),
                _ => toml::Value::String(n.to_string()),
            },
            Value::String(s) => toml::Value::String(s.clone()),
            Value::Array(items) => {
                toml::Value::Array(items.iter().map(convert).collect::<Result<_>>()?)
            }
            Value::Object(map) => {
                let mut table = toml::Table::new();
                for (k, v) in map {
                    table.insert(k.clone(), convert(v)?);
                }
                toml::Value::Table(table)
            }
        })
    }
    Ok(convert(v)?.to_string())
}
