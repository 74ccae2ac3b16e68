//! Where things are in an unversioned property block, as the walker meets
//! them: every struct (and the object's own class block) with its
//! `FUnversionedHeader` and the span of each value, and the offset of every
//! FName value. Game profiles use this to edit property data in place (for
//! example to renumber a struct's header when a game added a property to
//! it) without a second, diverging reader.
//!
//! Offsets are absolute in the package's header + `.uexp` stream, like
//! export serial offsets.

use crate::mappings::PropertyType;

use super::UnversionedHeader;

/// What one walk met.
#[derive(Debug, Clone, Default)]
pub struct Recording {
    /// Unversioned struct and class blocks in the order they start (outer
    /// before inner).
    pub structs: Vec<StructVisit>,
    /// Absolute offset of every FName value read (index `i32`, then number `i32`).
    pub(crate) names: Vec<u64>,
}

/// One unversioned struct or class block.
#[derive(Debug, Clone)]
pub struct StructVisit {
    /// The struct or class name the block was read as.
    pub name: String,
    /// Nesting depth: 0 for the object's own class block.
    pub depth: usize,
    pub header_start: u64,
    pub header: UnversionedHeader,
    /// Where the header ends and the first value starts.
    pub header_end: u64,
    /// Slots of the struct and its supers, when the mappings know it.
    pub slot_count: Option<usize>,
    pub values: Vec<ValueVisit>,
    /// Where the block ends.
    pub end: u64,
}

/// One value of a struct block.
#[derive(Debug, Clone)]
pub struct ValueVisit {
    /// The slot in the struct's unversioned numbering (own properties first, then supers').
    pub slot: usize,
    pub(crate) property: String,
    pub(crate) ty: PropertyType,
    /// Set in the zero mask: no bytes.
    pub zero: bool,
    pub start: u64,
    pub end: u64,
}

impl Recording {
    /// Blocks read as struct `name` (case-insensitive, as FNames compare).
    pub(crate) fn structs_named<'s>(
        &'s self,
        name: &'s str,
    ) -> impl Iterator<Item = &'s StructVisit> {
        self.structs
            .iter()
            .filter(move |s| s.name.eq_ignore_ascii_case(name))
    }

    /// The object's own class block (depth 0), if the walk was unversioned.
    pub(crate) fn object_block(&self) -> Option<&StructVisit> {
        self.structs.iter().find(|s| s.depth == 0)
    }

    /// Blocks that start inside `[start, end)` and are not inside another
    /// such block: the elements of an array of structs spanning that range.
    pub(crate) fn elements_within(&self, start: u64, end: u64) -> Vec<&StructVisit> {
        let mut out: Vec<&StructVisit> = Vec::new();
        for s in &self.structs {
            if s.header_start < start || s.header_start >= end {
                continue;
            }
            if out.last().is_some_and(|outer| s.header_start < outer.end) {
                continue;
            }
            out.push(s);
        }
        out
    }

    /// FName offsets inside `[start, end)`, in order.
    pub(crate) fn names_within(&self, start: u64, end: u64) -> Vec<u64> {
        self.names
            .iter()
            .copied()
            .filter(|&o| o >= start && o + 8 <= end)
            .collect()
    }
}

impl StructVisit {
    /// The value of property `name`, if the block has it.
    pub(crate) fn value(&self, name: &str) -> Option<&ValueVisit> {
        self.values
            .iter()
            .find(|v| v.property.eq_ignore_ascii_case(name))
    }
}
