//! Stage 3: the legacy name map.
//!
//! The Zen name map is the legacy one's start: UE5 keeps the names
//! referenced from export data (the first `NamesReferencedFromExportData`
//! legacy names, in their order), UE4 all legacy names; the conversion then
//! appends the export names it has not seen and the package name. Export
//! data refers to names by index, so those first names keep their indices.
//!
//! How many of the Zen names were the legacy's first names is found by
//! replaying the conversion: the smallest count whose replay gives the Zen
//! name map. Names past it (export names, the package name) move to the
//! header's part of the map. A larger count would replay too when the last
//! export-data names happen to be the export names the conversion appends
//! next; the Zen package cannot tell the two apart. The smallest count is
//! the cook's in all 56 engine-cooked packages of the corpus (and a package
//! whose export data named its own export there would need that export's
//! name to sort last among the export-data names, after every name of an
//! export before it).
//!
//! UE5 cooks sort each part of the name map (the export-data names and the
//! rest) case-insensitively, comparing lowercase text: checked on every
//! engine-cooked package of the corpus (no pair out of that order). The
//! header's part is sorted the same way. UE4 cooks keep every name in the
//! Zen map, so the legacy map is its start plus whatever the header needs
//! beyond it.

use std::collections::{BTreeMap, BTreeSet};

use crate::legacy::{FName, NameEntry};
use crate::version::ZenLayout;
use crate::zen::ZenPackage;

use super::Name;

/// The legacy name map and how to find a name in it.
#[derive(Debug, Clone)]
pub(super) struct NameMap {
    pub(crate) entries: Vec<NameEntry>,
    /// `NamesReferencedFromExportData` (UE5).
    pub(crate) referenced_from_export_data: usize,
    /// Indices of `entries` in the order of their text, only the first of
    /// equal texts: a lookup borrows the entries' text, copies none.
    by_text: Vec<u32>,
}

impl NameMap {
    /// The `FName` of a name the map holds.
    pub(crate) fn fname(&self, name: &Name) -> FName {
        FName::new(self.index_of(&name.base).unwrap_or(0), name.number)
    }

    fn index_of(&self, text: &str) -> Option<u32> {
        self.by_text
            .binary_search_by(|&i| self.entries[i as usize].text.as_str().cmp(text))
            .ok()
            .map(|at| self.by_text[at])
    }

    /// Sorts `by_text` for the entries as they are now.
    fn index(&mut self) {
        let entries = &self.entries;
        let mut by_text: Vec<u32> = (0..entries.len() as u32).collect();
        // Stable: of equal texts the first entry comes first, and is kept.
        by_text.sort_by(|&a, &b| entries[a as usize].text.cmp(&entries[b as usize].text));
        by_text.dedup_by(|b, a| entries[*a as usize].text == entries[*b as usize].text);
        self.by_text = by_text;
    }
}

/// What the name map must hold beyond the Zen names.
pub(super) struct NameNeeds<'a> {
    /// Every name the header refers to (imports, exports, package name).
    pub(crate) header: BTreeSet<&'a str>,
    /// Export object names in export order, and the package name, as the
    /// conversion appends them.
    pub(crate) export_names: Vec<&'a str>,
    pub(crate) package_name: &'a str,
}

/// Builds the legacy name map.
pub(super) fn build(zen: &ZenPackage, needs: &NameNeeds<'_>) -> NameMap {
    let zen_names: Vec<&str> = zen.names.iter().map(|n| n.text.as_str()).collect();
    let first = converted_prefix(&zen_names, needs);
    let kept = match zen.engine.zen_layout() {
        ZenLayout::Ue4 => {
            // Every legacy name is in the Zen map: keep up to the last one the header needs.
            let last_needed = zen_names
                .iter()
                .rposition(|n| needs.header.contains(n))
                .map_or(0, |p| p + 1);
            first.max(last_needed)
        }
        _ => first,
    };
    let mut map = NameMap {
        entries: zen.names[..kept]
            .iter()
            .map(|n| NameEntry::new(n.text.clone()))
            .collect(),
        referenced_from_export_data: match zen.engine.zen_layout() {
            ZenLayout::Ue4 => 0,
            _ => kept,
        },
        by_text: Vec::new(),
    };
    map.index();
    let mut rest: Vec<&str> = needs
        .header
        .iter()
        .copied()
        .filter(|n| map.index_of(n).is_none())
        .collect();
    if !rest.is_empty() {
        rest.sort_by(|a, b| lowercase_order(a, b));
        map.entries.extend(rest.into_iter().map(NameEntry::new));
        map.index();
    }
    map
}

/// The smallest count of leading Zen names that, with the export names and
/// the package name appended as the conversion appends them, gives the Zen
/// name map. The names appended for a count are those of the export names
/// (then the package name) not among the leading ones, in that order; so
/// the count is where the longest run at the end of the Zen map starts whose
/// names are all appended names in appending order.
fn converted_prefix(zen_names: &[&str], needs: &NameNeeds<'_>) -> usize {
    let mut order: BTreeMap<&str, usize> = BTreeMap::new();
    for name in needs.export_names.iter().chain([&needs.package_name]) {
        let next = order.len();
        order.entry(name).or_insert(next);
    }
    let mut start = zen_names.len();
    while start > 0 {
        let Some(&rank) = order.get(zen_names[start - 1]) else {
            break;
        };
        let follows = zen_names
            .get(start)
            .and_then(|n| order.get(n))
            .is_none_or(|&next| rank < next);
        if !follows {
            break;
        }
        start -= 1;
    }
    start
}

/// The order cooks sort name maps in: by lowercase text.
fn lowercase_order(a: &str, b: &str) -> std::cmp::Ordering {
    // Byte by byte, as comparing the lowercase copies would (no copies made).
    let a_lower = a.bytes().map(|c| c.to_ascii_lowercase());
    let b_lower = b.bytes().map(|c| c.to_ascii_lowercase());
    a_lower.cmp(b_lower).then_with(|| a.cmp(b))
}

#[cfg(test)]
mod tests {
    use super::lowercase_order;

    #[test]
    fn lowercase_order_compares_the_lowercase_text_then_the_text() {
        let words = [
            "b", "A", "a", "_x", "Z", "ab", "aB", "Ab", "", "é", "E", "[", "a_b",
        ];
        for a in words {
            for b in words {
                let copies = a
                    .to_ascii_lowercase()
                    .cmp(&b.to_ascii_lowercase())
                    .then_with(|| a.cmp(b));
                assert_eq!(lowercase_order(a, b), copies, "{a:?} {b:?}");
            }
        }
    }
}
