//! Two mods, one asset: what each mod changed in an asset the game has,
//! relative to the game's copy, and where those changes overlap
//! (`zenpak conflicts`, `zenpak merge`).
//!
//! Each mod's document is compared with the game's as `patch diff` does
//! ([`super::diff::documents`]): rows added and removed, values set, arrays
//! appended to. What a patch cannot say (rows other_imports, an export kept as
//! bytes that differ, a changed import table) makes the whole asset one
//! change of that mod. Two mods' changes overlap when they touch one path
//! (or one leads into the other: `Sword` and `Sword.Damage`) with
//! different values, when one removes a row the other changes, when both
//! add a row of one name differently, or when either changed the whole
//! asset. Setting one path to one value, removing one row, and appending to
//! one array are not overlaps: the merge keeps each once (appends in mount
//! order).
//!
//! [`merged_operations`] turns the changes back into patch operations on
//! the game's copy, in an order where each mod's change means what it
//! meant against the game: rows are added (copied from the game's rows)
//! before any value is set, and removed last.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use super::diff::{self, AddedRow, Diff};
use super::file::{Change, Location, Operation};
use super::path::PropertyPath;

/// One mod's changes to an asset, relative to the game's copy.
#[derive(Debug, Clone, Serialize)]
pub struct ModChange {
    /// The mod (its `.pak`, or `.utoc` without one).
    pub provider: String,
    /// Paths set (`Sword.Damage`).
    pub set: Vec<String>,
    /// Arrays appended to.
    pub appended: Vec<String>,
    pub added_rows: Vec<String>,
    pub removed_rows: Vec<String>,
    /// Why the mod's change is not said path by path: the whole asset
    /// stands as one change.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub whole: Option<String>,
    #[serde(skip)]
    diff: Diff,
}

impl ModChange {
    /// How many paths, rows and arrays the mod changed (1 for the whole asset).
    pub fn count(&self) -> usize {
        match self.whole {
            Some(_) => 1,
            None => {
                self.set.len()
                    + self.appended.len()
                    + self.added_rows.len()
                    + self.removed_rows.len()
            }
        }
    }
}

/// Changes of two or more mods that cannot both be kept.
#[derive(Debug, Clone, Serialize)]
pub struct Overlap {
    /// The path, row or array (`Sword.Damage`; `(whole asset)`).
    pub path: String,
    /// The mods, in mount order: the last one wins when the game loads
    /// them all (and with `merge --later-wins`).
    pub providers: Vec<String>,
    /// What each did there, in the same order (`set`, `remove-row`, …).
    pub changes: Vec<String>,
}

/// What several mods changed in one asset of the game.
#[derive(Debug, Clone, Serialize)]
pub struct AssetChanges {
    /// The asset's path in the view (`Game/Content/Data/DT_Weapons.uasset`).
    pub path: String,
    /// Each mod's changes, in mount order.
    pub changes: Vec<ModChange>,
    pub overlaps: Vec<Overlap>,
}

/// One thing a mod did, for the overlap test.
#[derive(Debug, Clone, PartialEq)]
enum Touch<'a> {
    Set(&'a PropertyPath, &'a Value),
    Append(&'a PropertyPath),
    AddRow(&'a AddedRow),
    RemoveRow(&'a str),
}

impl<'a> Touch<'a> {
    fn head(&self) -> &'a str {
        match *self {
            Touch::Set(p, _) | Touch::Append(p) => p.head().unwrap_or_default(),
            Touch::AddRow(r) => &r.row,
            Touch::RemoveRow(r) => r,
        }
    }

    fn label(&self) -> (String, &'static str) {
        match self {
            Touch::Set(p, _) => (p.to_string(), "set"),
            Touch::Append(p) => (p.to_string(), "append"),
            Touch::AddRow(r) => (row_path(&r.row), "add-row"),
            Touch::RemoveRow(r) => (row_path(r), "remove-row"),
        }
    }
}

fn row_path(row: &str) -> String {
    PropertyPath(vec![super::path::Step::Key(row.to_string())]).to_string()
}

/// Whether `a` (of an earlier mod) and `b` (of a later one) cannot both be kept.
fn overlaps(a: &Touch, b: &Touch) -> bool {
    use Touch::*;
    match (a, b) {
        (Set(p, v), Set(q, w)) => {
            (p == q && v != w) || (p != q && (p.contains(q) || q.contains(p)))
        }
        // Setting an element of an array another appends to keeps both;
        // setting the array (or what holds it) does not.
        (Set(p, _), Append(q)) | (Append(q), Set(p, _)) => p.contains(q),
        (Append(_), Append(_)) => false,
        (AddRow(x), AddRow(y)) => x.row == y.row && x != y,
        (RemoveRow(_), RemoveRow(_)) => false,
        (RemoveRow(_), _) | (_, RemoveRow(_)) => true,
        (AddRow(_), _) | (_, AddRow(_)) => true,
    }
}

fn touches(diff: &Diff) -> Vec<Touch<'_>> {
    let mut all: Vec<Touch> = Vec::new();
    all.extend(diff.add_rows.iter().map(Touch::AddRow));
    all.extend(diff.set.iter().map(|(p, v)| Touch::Set(p, v)));
    all.extend(diff.append.iter().map(|(p, _)| Touch::Append(p)));
    all.extend(diff.remove_rows.iter().map(|r| Touch::RemoveRow(r)));
    all
}

/// The changes of each mod (`mods`: provider name and document text, in
/// mount order) to the asset at `path` whose game document is `base`.
pub fn compare(path: &str, base: &str, mods: &[(String, String)]) -> AssetChanges {
    let changes: Vec<ModChange> = mods
        .iter()
        .map(|(provider, text)| mod_change(provider, base, text))
        .collect();
    let overlaps = find_overlaps(&changes);
    AssetChanges {
        path: path.to_string(),
        changes,
        overlaps,
    }
}

fn mod_change(provider: &str, base: &str, text: &str) -> ModChange {
    let (diff, whole) = match diff::documents(base, text) {
        Ok(diff) => (diff, None),
        Err(e) => (Diff::default(), Some(e.message().to_string())),
    };
    ModChange {
        provider: provider.to_string(),
        set: diff.set.iter().map(|(p, _)| p.to_string()).collect(),
        appended: diff.append.iter().map(|(p, _)| p.to_string()).collect(),
        added_rows: diff.add_rows.iter().map(|r| r.row.clone()).collect(),
        removed_rows: diff.remove_rows.clone(),
        whole,
        diff,
    }
}

/// The pairs of touches that overlap: (mod, touch index) of the earlier
/// mod, then of the later one. Only touches of one row (or export, or
/// key) can overlap, so they are grouped by it first.
fn overlapping_pairs(changes: &[ModChange]) -> Vec<((usize, usize), (usize, usize))> {
    let mut by_head: BTreeMap<&str, Vec<(usize, usize, Touch)>> = BTreeMap::new();
    for (i, change) in changes.iter().enumerate() {
        for (t, touch) in touches(&change.diff).into_iter().enumerate() {
            by_head.entry(touch.head()).or_default().push((i, t, touch));
        }
    }
    let mut pairs = Vec::new();
    for list in by_head.values() {
        for (x, (i, ti, a)) in list.iter().enumerate() {
            for (j, tj, b) in &list[x + 1..] {
                if i != j && overlaps(a, b) {
                    pairs.push(((*i, *ti), (*j, *tj)));
                }
            }
        }
    }
    pairs
}

/// The overlaps between the mods' changes, each listed once, by path.
fn find_overlaps(changes: &[ModChange]) -> Vec<Overlap> {
    let changing: Vec<usize> = (0..changes.len())
        .filter(|&i| changes[i].count() > 0)
        .collect();
    let mut found: BTreeMap<String, Vec<(usize, &'static str)>> = BTreeMap::new();
    if changes.iter().any(|c| c.whole.is_some()) {
        // A mod that changed the whole asset overlaps every other mod that
        // changed anything in it.
        if changing.len() > 1 {
            let list = changing
                .iter()
                .map(|&i| {
                    (
                        i,
                        if changes[i].whole.is_some() {
                            "whole"
                        } else {
                            "paths"
                        },
                    )
                })
                .collect();
            found.insert(WHOLE_ASSET.to_string(), list);
        }
    } else {
        let all: Vec<Vec<Touch>> = changes.iter().map(|c| touches(&c.diff)).collect();
        for ((i, ti), (j, tj)) in overlapping_pairs(changes) {
            let ((pa, wa), (pb, wb)) = (all[i][ti].label(), all[j][tj].label());
            let path = if pa.len() <= pb.len() { pa } else { pb };
            let list = found.entry(path).or_default();
            for entry in [(i, wa), (j, wb)] {
                if !list.contains(&entry) {
                    list.push(entry);
                }
            }
        }
    }
    found
        .into_iter()
        .map(|(path, mut list)| {
            list.sort();
            Overlap {
                path,
                providers: list
                    .iter()
                    .map(|(i, _)| changes[*i].provider.clone())
                    .collect(),
                changes: list.iter().map(|(_, w)| w.to_string()).collect(),
            }
        })
        .collect()
}

/// The path an overlap of a whole asset is listed under.
pub const WHOLE_ASSET: &str = "(whole asset)";

impl AssetChanges {
    /// Whether a mod changed the whole asset (then it cannot be merged path by path).
    pub fn whole(&self) -> Option<&ModChange> {
        self.changes.iter().find(|c| c.whole.is_some())
    }
}

/// The operations that make the merged asset from the game's copy: every
/// mod's changes, each once; a change that overlaps a later mod's is left
/// out (the later wins: call this only when there are no overlaps, or
/// with `later_wins`). `None` when a mod changed the whole asset: then the
/// merge is the copy of the last mod that changed anything (with
/// `later_wins`, or when it is the only one).
pub fn merged_operations(changes: &AssetChanges) -> Option<Vec<Operation>> {
    if changes.whole().is_some() {
        return None;
    }
    let mods = &changes.changes;
    let dropped: std::collections::BTreeSet<(usize, usize)> = overlapping_pairs(mods)
        .into_iter()
        .map(|(earlier, _)| earlier)
        .collect();
    let mut ops: Vec<Operation> = Vec::new();
    let mut seen: Vec<Change> = Vec::new();
    let mut push = |ops: &mut Vec<Operation>, provider: &str, change: Change| {
        if !seen.contains(&change) {
            seen.push(change.clone());
            ops.push(Operation {
                at: Location {
                    file: Arc::new(PathBuf::from(provider)),
                    line: 0,
                    column: 0,
                },
                change,
            });
        }
    };
    // Rows added first (copies of the game's rows), then values set and
    // arrays appended, rows removed last.
    for phase in 0..4 {
        for (i, change) in mods.iter().enumerate() {
            for (t, touch) in touches(&change.diff).into_iter().enumerate() {
                if dropped.contains(&(i, t)) {
                    continue;
                }
                let made = match (phase, &touch) {
                    (0, Touch::AddRow(r)) => Change::AddRow {
                        row: r.row.clone(),
                        copy_of: r.copy_of.clone(),
                        values: r.fields.clone(),
                    },
                    (1, Touch::Set(p, v)) => Change::Set((*p).clone(), (*v).clone()),
                    (2, Touch::Append(p)) => {
                        let items = change
                            .diff
                            .append
                            .iter()
                            .find(|(q, _)| q == *p)
                            .map(|(_, items)| items.clone())
                            .unwrap_or_default();
                        Change::Append((*p).clone(), items)
                    }
                    (3, Touch::RemoveRow(r)) => Change::RemoveRow(r.to_string()),
                    _ => continue,
                };
                push(&mut ops, &change.provider, made);
            }
        }
    }
    Some(ops)
}

/// Built mods, each read on the game with the game's other mods left out
/// (its own copy of every package it has), and the game's shipped copy:
/// what `conflicts` compares, one asset at a time.
pub struct ModCopies<'a> {
    game: super::base::Game,
    mods: Vec<(String, crate::extract::container::ViewSource)>,
    engine: crate::version::EngineVersion,
    mappings: Option<&'a crate::mappings::Mappings>,
}

impl<'a> ModCopies<'a> {
    /// Opens the game of `paks` and each of `mods` (its name, its path).
    pub fn open(
        paks: &std::path::Path,
        mods: &[(String, PathBuf)],
        keys: &crate::pak::crypto::KeyRing,
        (engine, mappings): (
            crate::version::EngineVersion,
            Option<&'a crate::mappings::Mappings>,
        ),
    ) -> crate::error::Result<Self> {
        let game = super::base::Game::open(paks, keys)?;
        let mut opened = Vec::with_capacity(mods.len());
        for (name, path) in mods {
            let source = crate::extract::container::ViewSource::open_mod_on_game(path, paks, keys)?;
            opened.push((name.clone(), source));
        }
        Ok(ModCopies {
            game,
            mods: opened,
            engine,
            mappings,
        })
    }

    /// What each mod named in `providers` (in mount order, the last wins)
    /// changed in the game's package at `path` (a view path); `None` when
    /// the game has no such package.
    pub fn changes(
        &self,
        path: &str,
        providers: &[&str],
    ) -> crate::error::Result<Option<AssetChanges>> {
        let Some(base) = self.game.package_of(self.engine, path)? else {
            return Ok(None);
        };
        let sources = crate::properties::SchemaSources::none();
        let inputs = (self.mappings, &sources);
        let base_text = super::document_text(&base.files, inputs, self.engine)?;
        let mut documents = Vec::with_capacity(providers.len());
        for name in providers {
            let Some((_, source)) = self.mods.iter().find(|(n, _)| n == name) else {
                continue;
            };
            let lookup = crate::extract::single::Lookup {
                package: path,
                engine: Some(self.engine),
                script_objects: None,
                options: crate::extract::ExtractOptions {
                    allow_unresolved: false,
                    verify: false,
                },
            };
            let Some(found) = crate::extract::single::find_package(source, &lookup)? else {
                continue;
            };
            documents.push((
                name.to_string(),
                super::document_text(&found.files, inputs, self.engine)?,
            ));
        }
        Ok(Some(compare(path, &base_text, &documents)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A DataTable document as `to-json` lays one out (only what the diff
    /// reads; `json!` sorts keys, so rows are named in the order they are meant).
    fn table(rows: Value) -> String {
        json!({
            "format": 1, "engine": "5.7", "package": "/Game/DT", "names": [],
            "imports": [{ "path": "/Script/Engine.DataTable", "class": "/Script/CoreUObject.Class" }],
            "exports": [{ "path": "DT", "class": "/Script/Engine.DataTable",
                "data": { "properties": {}, "rows": rows } }]
        })
        .to_string()
    }

    fn base() -> String {
        table(
            json!({ "Sword": { "Damage": 10, "Tags": ["A"] }, "Bow": { "Damage": 5, "Tags": [] } }),
        )
    }

    #[test]
    fn disjoint_rows_do_not_overlap_and_merge_in_phase_order() {
        let a = table(
            json!({ "Sword": { "Damage": 12, "Tags": ["A"] }, "Bow": { "Damage": 5, "Tags": [] } }),
        );
        let b = table(
            json!({ "Sword": { "Damage": 10, "Tags": ["A"] }, "Bow": { "Damage": 7, "Tags": [] },
            "Zweihander": { "Damage": 10, "Tags": ["A", "B"] } }),
        );
        let c = compare(
            "DT.uasset",
            &base(),
            &[("a.pak".into(), a), ("b.pak".into(), b)],
        );
        assert!(c.overlaps.is_empty(), "{:?}", c.overlaps);
        assert_eq!(c.changes[0].set, ["Sword.Damage"]);
        assert_eq!(c.changes[1].set, ["Bow.Damage"]);
        assert_eq!(c.changes[1].added_rows, ["Zweihander"]);
        let ops = merged_operations(&c).unwrap();
        assert!(
            matches!(ops[0].change, Change::AddRow { .. }),
            "rows are added before values are set"
        );
        assert_eq!(ops.len(), 3);
    }

    #[test]
    fn one_path_set_differently_overlaps_and_the_later_wins() {
        let a = table(
            json!({ "Sword": { "Damage": 12, "Tags": ["A"] }, "Bow": { "Damage": 5, "Tags": [] } }),
        );
        let b = table(
            json!({ "Sword": { "Damage": 20, "Tags": ["A"] }, "Bow": { "Damage": 5, "Tags": [] } }),
        );
        let same = a.clone();
        let c = compare(
            "DT.uasset",
            &base(),
            &[("a.pak".into(), a.clone()), ("b.pak".into(), b)],
        );
        assert_eq!(c.overlaps.len(), 1);
        assert_eq!(c.overlaps[0].path, "Sword.Damage");
        assert_eq!(c.overlaps[0].providers, ["a.pak", "b.pak"]);
        let ops = merged_operations(&c).unwrap();
        assert_eq!(ops.len(), 1);
        assert_eq!(*ops[0].at.file, PathBuf::from("b.pak"));
        // The same value from both: kept once, no overlap.
        let c = compare(
            "DT.uasset",
            &base(),
            &[("a.pak".into(), a), ("c.pak".into(), same)],
        );
        assert!(c.overlaps.is_empty());
        assert_eq!(merged_operations(&c).unwrap().len(), 1);
    }

    #[test]
    fn a_removed_row_overlaps_a_change_in_it_and_appends_do_not() {
        let a = table(json!({ "Bow": { "Damage": 5, "Tags": [] } }));
        let b = table(
            json!({ "Sword": { "Damage": 10, "Tags": ["A", "B"] }, "Bow": { "Damage": 5, "Tags": [] } }),
        );
        let c = compare(
            "DT.uasset",
            &base(),
            &[("a.pak".into(), a), ("b.pak".into(), b.clone())],
        );
        assert_eq!(c.overlaps.len(), 1, "{:?}", c.overlaps);
        assert_eq!(c.overlaps[0].changes, ["remove-row", "append"]);
        let d = table(
            json!({ "Sword": { "Damage": 10, "Tags": ["A", "C"] }, "Bow": { "Damage": 5, "Tags": [] } }),
        );
        let c = compare(
            "DT.uasset",
            &base(),
            &[("b.pak".into(), b), ("d.pak".into(), d)],
        );
        assert!(c.overlaps.is_empty());
        assert_eq!(merged_operations(&c).unwrap().len(), 2);
    }

    #[test]
    fn a_change_a_patch_cannot_say_is_the_whole_asset() {
        // An import the game's copy has, lost: a patch changes export data only.
        let mut doc: Value = serde_json::from_str(&base()).unwrap();
        doc["imports"] = json!([]);
        let other_imports = doc.to_string();
        let a = table(
            json!({ "Sword": { "Damage": 12, "Tags": ["A"] }, "Bow": { "Damage": 5, "Tags": [] } }),
        );
        let c = compare(
            "DT.uasset",
            &base(),
            &[("a.pak".into(), a), ("r.pak".into(), other_imports.clone())],
        );
        assert!(c.changes[1].whole.is_some());
        assert_eq!(c.overlaps.len(), 1);
        assert_eq!(c.overlaps[0].path, WHOLE_ASSET);
        assert!(merged_operations(&c).is_none());
        // Alone (the other mod's copy is the game's), it is no overlap.
        let c = compare(
            "DT.uasset",
            &base(),
            &[("g.pak".into(), base()), ("r.pak".into(), other_imports)],
        );
        assert!(c.overlaps.is_empty());
    }
}
