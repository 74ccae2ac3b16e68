//! One patch file (`patches/**/*.toml`): `[[patch]]` tables, each naming
//! the asset it changes and what it changes, read with the line and
//! column of every key so that an error points at it.
//!
//! ```toml
//! [[patch]]
//! asset = "/Game/Data/DT_Weapons"        # the game's package
//! # base = "Base/DT_Weapons.uasset"      # or a cooked file in the repository
//! set = { "Sword.Damage" = 42, "Bow.Tags[0]" = "Ranged" }
//! add-rows = { LongSword = { copy-of = "Sword", Damage = 55 } }
//! remove-rows = ["Unused_01"]
//! append = { "Bow.Tags" = ["Ranged", "Silent"] }
//! insert = { "Bow.Tags[0]" = "First" }
//! remove = ["Bow.Tags[2]", 'Shop.Prices["Gold"]']
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize;
use toml::Spanned;

use crate::error::{Error, Result};

use super::path::PropertyPath;

/// Where in a patch file something was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    pub file: Arc<PathBuf>,
    pub line: usize,
    pub column: usize,
}

impl Location {
    /// A usage error at this place.
    pub fn error(&self, message: impl Into<String>) -> Error {
        Error::usage(message)
            .in_file(self.file.as_path())
            .at_line(self.line, self.column)
    }
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}:{}", self.file.display(), self.line, self.column)
    }
}

/// Which asset a patch changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// The game's package (`/Game/Data/DT_Weapons`), read from the game or
    /// its vendored copy.
    Asset(String),
    /// A cooked legacy package in the repository (relative to the mod's
    /// folder), with the package name it is built as when given.
    Base {
        path: PathBuf,
        asset: Option<String>,
    },
}

/// What one operation does.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// Sets a value (a table merges into a struct).
    Set(PropertyPath, serde_json::Value),
    /// Appends to an array.
    Append(PropertyPath, Vec<serde_json::Value>),
    /// Inserts before an array element (`Tags[0]`).
    Insert(PropertyPath, serde_json::Value),
    /// Removes an array element or a map entry.
    Remove(PropertyPath),
    /// Adds a table row, copied from another or empty (every property at
    /// its default), then sets `values` (paths relative to the row).
    AddRow {
        row: String,
        copy_of: Option<String>,
        values: Vec<(PropertyPath, serde_json::Value)>,
    },
    RemoveRow(String),
}

/// One operation and where it was written.
#[derive(Debug, Clone, PartialEq)]
pub struct Operation {
    pub at: Location,
    pub change: Change,
}

/// One `[[patch]]` table.
#[derive(Debug, Clone, PartialEq)]
pub struct Patch {
    pub at: Location,
    pub target: Target,
    pub operations: Vec<Operation>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    patch: Vec<Spanned<RawPatch>>,
}

type Keyed<T> = BTreeMap<Spanned<String>, Spanned<T>>;

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawPatch {
    asset: Option<Spanned<String>>,
    base: Option<Spanned<String>>,
    #[serde(default)]
    set: Keyed<toml::Value>,
    #[serde(default)]
    add_rows: Keyed<toml::Table>,
    #[serde(default)]
    remove_rows: Vec<Spanned<String>>,
    #[serde(default)]
    append: Keyed<Vec<toml::Value>>,
    #[serde(default)]
    insert: Keyed<toml::Value>,
    #[serde(default)]
    remove: Vec<Spanned<String>>,
}

/// Parses the patch file `path` holding `text`.
pub fn parse(text: &str, path: &Path) -> Result<Vec<Patch>> {
    let file = Arc::new(path.to_path_buf());
    let at = |span: std::ops::Range<usize>| {
        let (line, column) = crate::manifest::line_column(text, span.start);
        Location {
            file: file.clone(),
            line,
            column,
        }
    };
    let raw: RawFile = toml::from_str(text).map_err(|e| {
        let error = Error::usage(e.message().trim_end().to_string()).in_file(path);
        match e.span() {
            Some(span) => {
                let (line, column) = crate::manifest::line_column(text, span.start);
                error.at_line(line, column)
            }
            None => error,
        }
        .with_hint("a patch file holds `[[patch]]` tables: `asset` or `base`, then `set`, `add-rows`, `remove-rows`, `append`, `insert`, `remove` (see mod.toml.example)")
    })?;
    let mut patches = Vec::with_capacity(raw.patch.len());
    for spanned in raw.patch {
        let patch_at = at(spanned.span());
        let p = spanned.into_inner();
        let target = match (p.asset, p.base) {
            (None, None) => {
                return Err(patch_at
                    .error("this patch names no asset")
                    .with_hint("add `asset = \"/Game/Data/DT_Weapons\"` (the game's package) or `base = \"Base/DT_Weapons.uasset\"` (a cooked file in the repository)"))
            }
            (asset, Some(base)) => {
                let base_at = at(base.span());
                let path = PathBuf::from(base.into_inner().replace('\\', "/"));
                if !crate::manifest::is_inside_path(&path) {
                    return Err(base_at
                        .error(format!(
                            "`base = \"{}\"` is not a path inside the mod's folder (absolute, or climbing out with `..`)",
                            path.display()
                        ))
                        .with_hint("copy the cooked base into the repository and name it relative to mod.toml"));
                }
                Target::Base {
                    path,
                    asset: asset.map(|a| game_package(&at(a.span()), a.into_inner())).transpose()?,
                }
            }
            (Some(asset), None) => Target::Asset(game_package(&at(asset.span()), asset.into_inner())?),
        };
        let mut operations = Vec::new();
        let path_at = |key: &Spanned<String>| -> Result<(Location, PropertyPath)> {
            let loc = at(key.span());
            let path = PropertyPath::parse(key.get_ref()).map_err(|e| {
                loc.error(e.message())
                    .with_hint(e.hint().unwrap_or_default().to_string())
            })?;
            Ok((loc, path))
        };
        for (key, value) in &p.set {
            let (loc, path) = path_at(key)?;
            let value = json_value(value.get_ref(), &at(value.span()))?;
            operations.push(Operation {
                at: loc,
                change: Change::Set(path, value),
            });
        }
        for (key, table) in &p.add_rows {
            let loc = at(key.span());
            let mut copy_of = None;
            let mut values = Vec::new();
            for (k, v) in table.get_ref() {
                if k == "copy-of" {
                    let toml::Value::String(source) = v else {
                        return Err(loc.error("`copy-of` names a row: give it as a string"));
                    };
                    copy_of = Some(source.clone());
                    continue;
                }
                let path = PropertyPath::parse(k).map_err(|e| loc.error(e.message()))?;
                values.push((path, json_value(v, &loc)?));
            }
            operations.push(Operation {
                at: loc,
                change: Change::AddRow {
                    row: key.get_ref().clone(),
                    copy_of,
                    values,
                },
            });
        }
        for row in &p.remove_rows {
            operations.push(Operation {
                at: at(row.span()),
                change: Change::RemoveRow(row.get_ref().clone()),
            });
        }
        for (key, items) in &p.append {
            let (loc, path) = path_at(key)?;
            let items = items
                .get_ref()
                .iter()
                .map(|v| json_value(v, &loc))
                .collect::<Result<_>>()?;
            operations.push(Operation {
                at: loc,
                change: Change::Append(path, items),
            });
        }
        for (key, value) in &p.insert {
            let (loc, path) = path_at(key)?;
            if !matches!(path.0.last(), Some(super::path::Step::Index(_))) {
                return Err(loc
                    .error(format!("`insert` needs an array element to insert before: `{path}` ends in no index"))
                    .with_hint("write `\"Tags[0]\" = value` to insert before the first element; `append` adds at the end"));
            }
            let value = json_value(value.get_ref(), &at(value.span()))?;
            operations.push(Operation {
                at: loc,
                change: Change::Insert(path, value),
            });
        }
        for key in &p.remove {
            let (loc, path) = path_at(key)?;
            if path.0.len() < 2 {
                return Err(loc
                    .error(format!("`remove` takes an array element or a map entry: `{path}` is a whole row or export"))
                    .with_hint("remove a row with `remove-rows`"));
            }
            operations.push(Operation {
                at: loc,
                change: Change::Remove(path),
            });
        }
        if operations.is_empty() {
            return Err(patch_at.error("this patch changes nothing").with_hint(
                "add `set`, `add-rows`, `remove-rows`, `append`, `insert` or `remove`",
            ));
        }
        patches.push(Patch {
            at: patch_at,
            target,
            operations,
        });
    }
    Ok(patches)
}

/// A package name as the game names it (`/Game/Data/DT_Weapons`).
fn game_package(at: &Location, name: String) -> Result<String> {
    let name = name.trim_end_matches(".uasset").to_string();
    let valid = name.starts_with('/')
        && name.len() > 1
        && !name.ends_with('/')
        && !name.contains(['\\', '.', ':'])
        && !name
            .split('/')
            .skip(1)
            .any(|part| part.is_empty() || part == "..");
    if !valid {
        return Err(at
            .error(format!("`{name}` is not a package name"))
            .with_hint(
                "name the game's package as `zenpak list` shows it: `/Game/Data/DT_Weapons`",
            ));
    }
    Ok(name)
}

/// A TOML value as the JSON the asset's document takes.
fn json_value(value: &toml::Value, at: &Location) -> Result<serde_json::Value> {
    Ok(match value {
        toml::Value::String(s) => serde_json::Value::String(s.clone()),
        toml::Value::Integer(i) => serde_json::Value::from(*i),
        toml::Value::Float(f) => serde_json::Number::from_f64(*f)
            .map(serde_json::Value::Number)
            .ok_or_else(|| {
                at.error(format!("{f} is not a number an asset can hold here"))
                    .with_hint("infinities and NaN are written as the strings \"inf\", \"-inf\" and \"nan\"")
            })?,
        toml::Value::Boolean(b) => serde_json::Value::Bool(*b),
        toml::Value::Array(items) => serde_json::Value::Array(
            items
                .iter()
                .map(|v| json_value(v, at))
                .collect::<Result<_>>()?,
        ),
        toml::Value::Table(table) => {
            let mut map = serde_json::Map::new();
            for (k, v) in table {
                map.insert(k.clone(), json_value(v, at)?);
            }
            serde_json::Value::Object(map)
        }
        toml::Value::Datetime(d) => {
            return Err(at
                .error(format!("`{d}` is a TOML date; no property holds one"))
                .with_hint("a DateTime property takes its ticks: `{ Ticks = 638000000000000000 }`"))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::patch::path::Step;

    #[test]
    fn a_patch_file_reads_every_operation_with_its_line() {
        let text = r#"
[[patch]]
asset = "/Game/Data/DT_Weapons"
set = { "Sword.Damage" = 42, "Bow.Tags[0]" = "Ranged" }
add-rows = { LongSword = { copy-of = "Sword", Damage = 55 } }
remove-rows = ["Unused_01"]
append = { "Bow.Tags" = ["A", "B"] }
insert = { "Bow.Tags[0]" = "First" }
remove = ["Bow.Tags[2]"]
"#;
        let patches = parse(text, Path::new("p.toml")).unwrap();
        assert_eq!(patches.len(), 1);
        let p = &patches[0];
        assert_eq!(p.target, Target::Asset("/Game/Data/DT_Weapons".into()));
        assert_eq!(p.at.line, 2);
        let kinds: Vec<(usize, &Change)> = p
            .operations
            .iter()
            .map(|o| (o.at.line, &o.change))
            .collect();
        assert_eq!(kinds.len(), 7);
        assert!(
            matches!(kinds[0], (4, Change::Set(path, v)) if path.0[2] == Step::Index(0) && v == "Ranged")
        );
        assert!(matches!(kinds[1], (4, Change::Set(_, v)) if v == 42));
        assert!(
            matches!(kinds[2], (5, Change::AddRow { row, copy_of: Some(c), values }) if row == "LongSword" && c == "Sword" && values.len() == 1)
        );
        assert!(matches!(kinds[3], (6, Change::RemoveRow(r)) if r == "Unused_01"));
        assert!(matches!(kinds[4], (7, Change::Append(_, items)) if items.len() == 2));
        assert!(matches!(kinds[5], (8, Change::Insert(..))));
        assert!(matches!(kinds[6], (9, Change::Remove(..))));
    }

    #[test]
    fn mistakes_name_their_line() {
        for (text, line) in [
            ("[[patch]]\nasset = \"/Game/X\"\nsett = { A = 1 }\n", 3),
            ("[[patch]]\nset = { \"A.B\" = 1 }\n", 1),
            ("[[patch]]\nasset = \"Game/X\"\nset = { A = 1 }\n", 2),
            ("[[patch]]\nbase = \"../x.uasset\"\nset = { A = 1 }\n", 2),
            (
                "[[patch]]\nasset = \"/Game/X\"\nset = { \"A..B\" = 1 }\n",
                3,
            ),
            (
                "[[patch]]\nasset = \"/Game/X\"\nset = { A = 1979-05-27 }\n",
                3,
            ),
            ("[[patch]]\nasset = \"/Game/X\"\n", 1),
            ("[[patch]]\nasset = \"/Game/X\"\nset = { A = \n", 3),
        ] {
            let e = parse(text, Path::new("p.toml")).unwrap_err();
            assert!(e.is_usage(), "{text}");
            assert_eq!(
                e.context().line_column.map(|(l, _)| l),
                Some(line),
                "{text}: {e}"
            );
        }
    }
}
