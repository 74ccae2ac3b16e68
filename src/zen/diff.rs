//! Section-by-section comparison of two Zen packages: which sections are
//! identical, and the first differing section, entry and field.

use serde::Serialize;
use serde_json::Value;

use super::package::ZenPackage;

/// The sections of a Zen package, in file order.
pub const SECTIONS: [&str; 10] = [
    "summary",
    "names",
    "bulk map",
    "import hashes",
    "imports",
    "exports",
    "export bundles",
    "dependency bundles",
    "imported names",
    "export data",
];

/// The first difference between two packages.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Difference {
    pub section: &'static str,
    /// Entry index within the section (None for the section as a whole).
    pub entry: Option<usize>,
    /// Field path within the entry (e.g. `public_export_hash`), or what differs.
    pub field: String,
    pub(crate) left: String,
    pub(crate) right: String,
}

impl std::fmt::Display for Difference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.section)?;
        if let Some(e) = self.entry {
            write!(f, " > entry {e}")?;
        }
        if !self.field.is_empty() {
            write!(f, " > {}", self.field)?;
        }
        write!(f, ": {} vs {}", self.left, self.right)
    }
}

fn json<T: Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

/// A section's content as a list of entries (JSON values) for comparison.
fn section_entries(p: &ZenPackage, section: &str) -> Vec<Value> {
    match section {
        "summary" => {
            let (_, written) = p.write_header();
            vec![json(&written), json(&p.versioning)]
        }
        "names" => p.names.iter().map(json).collect(),
        "bulk map" => p.bulk_data.iter().map(json).collect(),
        "import hashes" => p
            .imported_public_export_hashes
            .iter()
            .map(|h| Value::from(format!("{h:#018x}")))
            .collect(),
        "imports" => p.imports.iter().chain(&p.cell_imports).map(json).collect(),
        "exports" => {
            let mut v: Vec<Value> = p
                .exports
                .iter()
                .map(|e| {
                    let mut j = json(e);
                    j["object_name_text"] = Value::from(p.name_text(e.object_name));
                    j["public_export_hash"] =
                        Value::from(format!("{:#018x}", e.public_export_hash));
                    j
                })
                .collect();
            v.extend(p.cell_exports.iter().map(json));
            v
        }
        "export bundles" => {
            let mut v: Vec<Value> = p
                .export_bundle_headers
                .iter()
                .map(|h| json(&("header", h)))
                .collect();
            v.extend(p.export_bundle_entries.iter().map(|e| json(&("entry", e))));
            v
        }
        "dependency bundles" => {
            let mut v: Vec<Value> = p
                .dependency_bundle_headers
                .iter()
                .map(|h| json(&("header", h)))
                .collect();
            v.extend(
                p.dependency_bundle_entries
                    .iter()
                    .map(|e| json(&("entry", e))),
            );
            v.extend(p.internal_arcs.iter().map(|a| json(&("internal arc", a))));
            v.extend(p.external_arcs.iter().map(|a| json(&("external arcs", a))));
            v.extend(p.package_arcs.iter().map(|a| json(&("package arcs", a))));
            v
        }
        "imported names" => p
            .imported_package_names
            .full_names()
            .into_iter()
            .map(Value::from)
            .collect(),
        _ => Vec::new(),
    }
}

fn describe(v: &Value) -> String {
    let s = v.to_string();
    if s.len() > 160 {
        format!("{}…", &s[..160])
    } else {
        s
    }
}

/// The first field (path) where two JSON values differ.
fn first_field(a: &Value, b: &Value, path: &str) -> Option<(String, String, String)> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for (k, va) in x {
                let vb = y.get(k).unwrap_or(&Value::Null);
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                if let Some(d) = first_field(va, vb, &p) {
                    return Some(d);
                }
            }
            None
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (va, vb)) in x.iter().zip(y).enumerate() {
                if let Some(d) = first_field(va, vb, &format!("{path}[{i}]")) {
                    return Some(d);
                }
            }
            None
        }
        _ if a == b => None,
        _ => Some((path.to_string(), describe(a), describe(b))),
    }
}

fn export_data_difference(a: &ZenPackage, b: &ZenPackage) -> Option<Difference> {
    if a.export_data == b.export_data {
        return None;
    }
    let at = a
        .export_data
        .iter()
        .zip(&b.export_data)
        .position(|(x, y)| x != y);
    Some(match at {
        Some(i) => Difference {
            section: "export data",
            entry: None,
            field: format!("byte {i}"),
            left: format!("{:#04x}", a.export_data[i]),
            right: format!("{:#04x}", b.export_data[i]),
        },
        None => Difference {
            section: "export data",
            entry: None,
            field: "length".into(),
            left: a.export_data.len().to_string(),
            right: b.export_data.len().to_string(),
        },
    })
}

/// The first difference within one section, if any.
pub(crate) fn section_difference(
    a: &ZenPackage,
    b: &ZenPackage,
    section: &'static str,
) -> Option<Difference> {
    if section == "export data" {
        return export_data_difference(a, b);
    }
    let ea = section_entries(a, section);
    let eb = section_entries(b, section);
    for (i, (va, vb)) in ea.iter().zip(&eb).enumerate() {
        if let Some((field, left, right)) = first_field(va, vb, "") {
            let entry = if section == "summary" { None } else { Some(i) };
            return Some(Difference {
                section,
                entry,
                field,
                left,
                right,
            });
        }
    }
    if ea.len() != eb.len() {
        return Some(Difference {
            section,
            entry: None,
            field: "entry count".into(),
            left: ea.len().to_string(),
            right: eb.len().to_string(),
        });
    }
    None
}

/// Identical/differs per section, in file order.
pub fn section_table(a: &ZenPackage, b: &ZenPackage) -> Vec<(&'static str, bool)> {
    SECTIONS
        .iter()
        .map(|&s| (s, section_difference(a, b, s).is_none()))
        .collect()
}

/// The first difference, looking at the content sections before the
/// summary (whose offsets change whenever a section's size does).
pub fn first_difference(a: &ZenPackage, b: &ZenPackage) -> Option<Difference> {
    SECTIONS[1..]
        .iter()
        .chain(std::iter::once(&SECTIONS[0]))
        .find_map(|&s| section_difference(a, b, s))
}
