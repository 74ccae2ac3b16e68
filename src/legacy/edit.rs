//! Editing a legacy package's export data and header: byte edits
//! (insertions and replacements) inside exports, names added to the name
//! map, and every size and offset that depends on them recomputed.

use super::{FName, LegacyPackage, NameEntry, ObjectImport, PackageFiles, PackageIndex, Section};
use crate::{Error, Result};

/// Replaces `removed` bytes at an absolute offset of the header + .uexp
/// stream (before any edit is applied) with `bytes`; `removed` 0 inserts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    pub(crate) offset: u64,
    pub(crate) removed: u64,
    pub(crate) bytes: Vec<u8>,
}

impl Edit {
    pub(crate) fn insert(offset: u64, bytes: Vec<u8>) -> Self {
        Edit {
            offset,
            removed: 0,
            bytes,
        }
    }

    pub(crate) fn replace(offset: u64, removed: u64, bytes: Vec<u8>) -> Self {
        Edit {
            offset,
            removed,
            bytes,
        }
    }

    /// First offset after the replaced range.
    pub(crate) fn end(&self) -> u64 {
        self.offset + self.removed
    }

    /// How much the stream grows (negative: shrinks).
    pub(crate) fn delta(&self) -> i64 {
        self.bytes.len() as i64 - self.removed as i64
    }
}

/// `BULKDATA_PayloadAtEndOfFile`: the payload sits after the exports, at an
/// offset relative to the bulk data start, which moves with the exports.
const BULKDATA_PAYLOAD_AT_END_OF_FILE: u32 = 0x0001;
/// `BULKDATA_PayloadInSeperateFile`: the payload is in a `.ubulk`; its offset is in that file.
const BULKDATA_PAYLOAD_IN_SEPARATE_FILE: u32 = 0x0100;

/// Where original stream offsets end up once a set of edits is applied.
#[derive(Debug, Clone)]
pub struct Shift {
    /// Sorted, non-overlapping edits: (offset, end, delta).
    edits: Vec<(u64, u64, i64)>,
    /// Growth of the header (names added): moves everything after it.
    header_growth: i64,
    header_len: u64,
}

impl Shift {
    /// The new position of original offset `p`. An insertion exactly at `p`
    /// moves `p` when `inclusive` (the start of what follows it), not
    /// otherwise (the end of what precedes it).
    pub(crate) fn position(&self, p: u64, inclusive: bool) -> u64 {
        let mut delta: i64 = if p >= self.header_len {
            self.header_growth
        } else {
            0
        };
        for &(offset, end, d) in &self.edits {
            let before = if offset == end {
                offset < p || (inclusive && offset == p)
            } else {
                end <= p
            };
            if before {
                delta += d;
            }
        }
        (p as i64 + delta) as u64
    }
}

/// Applies `edits` (all inside export data in the .uexp) to `files`, with
/// `package` (read from `files.header`, possibly given new names or changed
/// imports since) written as the new header. Updates every export's serial
/// size and offset, the bulk data start offset and inline data resource
/// offsets. An insertion at an export's end belongs to that export; a
/// replacement must lie inside one export. Returns the position map.
pub fn apply_edits(
    files: &mut PackageFiles,
    package: &mut LegacyPackage,
    edits: &[Edit],
) -> Result<Shift> {
    let header_len = files.header.len() as u64;
    let mut sorted: Vec<&Edit> = edits.iter().collect();
    sorted.sort_by_key(|e| (e.offset, e.removed));
    for pair in sorted.windows(2) {
        if pair[1].offset < pair[0].end() {
            return Err(Error::internal(format!(
                "edits at {} (+{}) and {} overlap",
                pair[0].offset, pair[0].removed, pair[1].offset
            )));
        }
    }
    // Which export each edit changes.
    let mut owners = Vec::with_capacity(sorted.len());
    for edit in &sorted {
        let owner = package.exports.iter().position(|e| {
            let (Ok(start), Ok(size)) =
                (u64::try_from(e.serial_offset), u64::try_from(e.serial_size))
            else {
                return false;
            };
            let end = start.saturating_add(size);
            if edit.removed == 0 {
                edit.offset > start && edit.offset <= end
            } else {
                edit.offset >= start && edit.end() <= end
            }
        });
        match owner {
            Some(i) if edit.offset >= header_len => owners.push(i),
            _ => {
                return Err(Error::internal(format!(
                    "edit at offset {} (+{}) is not inside one export's data",
                    edit.offset, edit.removed
                )))
            }
        }
    }
    let new_header_len = package.header_size()? as u64;
    let shift = Shift {
        edits: sorted
            .iter()
            .map(|e| (e.offset, e.end(), e.delta()))
            .collect(),
        header_growth: new_header_len as i64 - header_len as i64,
        header_len,
    };
    for (i, export) in package.exports.iter_mut().enumerate() {
        let Ok(start) = u64::try_from(export.serial_offset) else {
            continue;
        };
        let grown: i64 = sorted
            .iter()
            .zip(&owners)
            .filter(|(_, &owner)| owner == i)
            .map(|(e, _)| e.delta())
            .sum();
        export.serial_offset = shift.position(start, true) as i64;
        export.serial_size += grown;
    }
    // The bulk data start follows the last export (the .uexp's tag precedes it).
    let bulk_start = package.summary.bulk_data_start_offset;
    if bulk_start >= 0 {
        package.summary.bulk_data_start_offset = shift.position(bulk_start as u64, true) as i64;
    }
    if let Some(resources) = package.data_resources.as_mut() {
        for r in &mut resources.entries {
            let flags = r.legacy_bulk_data_flags;
            if flags & (BULKDATA_PAYLOAD_AT_END_OF_FILE | BULKDATA_PAYLOAD_IN_SEPARATE_FILE) != 0 {
                continue;
            }
            // Inline payloads: absolute offsets in the header + .uexp stream.
            if r.serial_offset >= 0 {
                r.serial_offset = shift.position(r.serial_offset as u64, false) as i64;
            }
            if r.duplicate_serial_offset >= 0 {
                r.duplicate_serial_offset =
                    shift.position(r.duplicate_serial_offset as u64, false) as i64;
            }
        }
    }
    // The .uexp bytes, edits applied back to front so earlier offsets stay valid.
    for edit in sorted.iter().rev() {
        let at = (edit.offset - header_len) as usize;
        let end = at + edit.removed as usize;
        if end > files.uexp.len() {
            return Err(Error::internal(format!(
                "edit at {} (+{}) is past the .uexp",
                edit.offset, edit.removed
            )));
        }
        files.uexp.splice(at..end, edit.bytes.iter().copied());
    }
    let header = package.write()?;
    if header.len() as u64 != new_header_len {
        return Err(Error::internal(format!(
            "the rewritten header is {} bytes, expected {new_header_len}",
            header.len()
        )));
    }
    files.header = header;
    Ok(shift)
}

/// The index of name `text` (number 0), appended to the name map if the
/// package lacks it. For names only the header refers to (import and
/// export names): they come after the names export data refers to.
pub fn header_name(package: &mut LegacyPackage, text: &str) -> FName {
    let index = match package.names.iter().position(|n| n.text == text) {
        Some(i) => i,
        None => {
            package.names.push(NameEntry::new(text));
            package.names.len() - 1
        }
    };
    FName::new(index as u32, 0)
}

/// The index of name `text` among the names export data may refer to. A
/// cooked UE5 package lists those first (its summary counts them), and the
/// Zen package keeps exactly that prefix, so a new one is inserted at the end
/// of the prefix and every header reference to a later name is renumbered.
pub fn export_data_name(package: &mut LegacyPackage, text: &str) -> Result<u32> {
    let referenced = referenced_names(package)?;
    if let Some(i) = package.names[..referenced]
        .iter()
        .position(|n| n.text == text)
    {
        return Ok(i as u32);
    }
    export_data_names(package, &[text.to_string()])?;
    Ok(referenced as u32)
}

/// [`export_data_name`] of several names at once (in their order, those
/// the prefix lacks), renumbering the header once: for a table that gains
/// thousands of rows.
pub fn export_data_names(package: &mut LegacyPackage, texts: &[String]) -> Result<()> {
    let referenced = referenced_names(package)?;
    let present: std::collections::HashSet<&str> = package.names[..referenced]
        .iter()
        .map(|n| n.text.as_str())
        .collect();
    let mut seen = std::collections::HashSet::new();
    let new: Vec<NameEntry> = texts
        .iter()
        .filter(|t| !present.contains(t.as_str()) && seen.insert(t.as_str()))
        .map(|t| NameEntry::new(t.as_str()))
        .collect();
    let Some(first) = new.first() else {
        return Ok(());
    };
    for section in [
        Section::SearchableNames,
        Section::ImportTypeHierarchies,
        Section::CellImports,
        Section::CellExports,
    ] {
        if package
            .raw_sections
            .get(&section)
            .is_some_and(|b| !b.is_empty())
        {
            return Err(Error::unsupported(format!(
                "adding the name `{}` to a package with a {} section (which may refer to names) is not supported",
                first.text,
                section.label()
            )));
        }
    }
    let added = new.len();
    package.names.splice(referenced..referenced, new);
    if let Some(n) = package
        .summary
        .names_referenced_from_export_data_count
        .as_mut()
    {
        *n += added as i32;
    }
    let bump = |name: &mut FName| {
        if name.index as usize >= referenced {
            name.index += added as u32;
        }
    };
    for import in &mut package.imports {
        bump(&mut import.class_package);
        bump(&mut import.class_name);
        bump(&mut import.object_name);
        if let Some(p) = import.package_name.as_mut() {
            bump(p);
        }
    }
    for export in &mut package.exports {
        bump(&mut export.object_name);
    }
    for path in &mut package.soft_object_paths {
        bump(&mut path.package_name);
        bump(&mut path.asset_name);
    }
    for name in &mut package.soft_package_references {
        bump(name);
    }
    Ok(())
}

/// How many names export data may refer to (the summary's count, or all).
fn referenced_names(package: &LegacyPackage) -> Result<usize> {
    match package.summary.names_referenced_from_export_data_count {
        Some(n) => usize::try_from(n)
            .ok()
            .filter(|&n| n <= package.names.len())
            .ok_or_else(|| {
                Error::invalid(format!(
                    "the summary says {n} names are referenced from export data, but the package has {}",
                    package.names.len()
                ))
            }),
        None => Ok(package.names.len()),
    }
}

/// Adds an import of `path`, an asset's top-level object
/// (`/Game/Meshes/SM_Rock.SM_Rock`, `/Script/Engine.Default__Actor`), of
/// class `class` (`/Script/Engine.StaticMesh`), after the package's
/// imports, with the import of its package when the package lacks one.
/// Names only the header refers to go after the others. Returns the new
/// import's index; an import with that path and class already there is
/// returned as it is.
pub fn add_import(package: &mut LegacyPackage, path: &str, class: &str) -> Result<PackageIndex> {
    let bad = |what: &str| {
        Error::invalid(format!("`{path}` of class `{class}`: {what}")).with_hint(
            "an added import is a package's top-level object: `/Game/Path/Asset.Asset`, its class `/Script/Module.Class`",
        )
    };
    let (outer_path, object) = path
        .rsplit_once('.')
        .filter(|(p, o)| p.starts_with('/') && !o.is_empty() && !p.contains([':', '.']))
        .ok_or_else(|| bad("not a package path and an object name"))?;
    if object.contains(':') {
        return Err(bad("a subobject cannot be imported on its own"));
    }
    let (class_package, class_name) = class
        .rsplit_once('.')
        .filter(|(p, c)| p.starts_with('/') && !c.is_empty())
        .ok_or_else(|| bad("the class is not `/Script/Module.Class`"))?;
    if let Some(section) = [Section::ImportTypeHierarchies, Section::CellImports]
        .into_iter()
        .find(|s| package.raw_sections.get(s).is_some_and(|b| !b.is_empty()))
    {
        return Err(Error::unsupported(format!(
            "adding an import to a package with a {} section (which lists imports) is not supported",
            section.label()
        )));
    }
    let find = |package: &LegacyPackage, path: &str, class: &str| -> Result<Option<usize>> {
        for i in 0..package.imports.len() {
            let import = &package.imports[i];
            let this_class = format!(
                "{}.{}",
                package.name(import.class_package)?,
                package.name(import.class_name)?
            );
            if this_class == class && package.import_path(i)? == path {
                return Ok(Some(i));
            }
        }
        Ok(None)
    };
    if let Some(i) = find(package, path, class)? {
        return Ok(PackageIndex::from_import(i));
    }
    // The new entries take the optional fields the package's imports have.
    let import_optional = package
        .imports
        .first()
        .and_then(|i| i.import_optional.map(|_| false));
    let push = |package: &mut LegacyPackage,
                class_package: &str,
                class_name: &str,
                outer: PackageIndex,
                object: &str| {
        let import = ObjectImport {
            class_package: header_name(package, class_package),
            class_name: header_name(package, class_name),
            outer_index: outer,
            object_name: header_name(package, object),
            // Written as the object's name where the release has the field.
            package_name: None,
            import_optional,
        };
        package.imports.push(import);
        PackageIndex::from_import(package.imports.len() - 1)
    };
    let outer = match find(package, outer_path, "/Script/CoreUObject.Package")? {
        Some(i) => PackageIndex::from_import(i),
        None => push(
            package,
            "/Script/CoreUObject",
            "Package",
            PackageIndex::NULL,
            outer_path,
        ),
    };
    Ok(push(package, class_package, class_name, outer, object))
}
