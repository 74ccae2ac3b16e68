//! Stage 4: the preload dependencies of each export (the four lists the
//! legacy export map points into), rebuilt from the Zen package.
//!
//! - 5.3+ (dependency bundles): the engine's own lists, minus what the Zen
//!   conversion drops: dependencies on script objects. The ones the cook
//!   derives from the export itself come back where cooks put them (corpus,
//!   every engine-cooked package): class and template first in
//!   serialize-before-create, a script super class after the outer in
//!   create-before-create and first in serialize-before-serialize. Script
//!   objects the export's data referred to are lost.
//! - 5.0–5.2 (graph data): the export bundles give the load order, the
//!   internal arcs which bundle waits for which, the external arcs which
//!   bundle waits for which import. Each command depends on the command
//!   before it in its bundle; an arc between bundles becomes a dependency of
//!   the first command of the later bundle on the last command of the
//!   earlier one; an external arc a dependency of the bundle's first
//!   command on the import. Converting the result gives the same bundles
//!   and arcs (see `tests/extract/extract_round_trip.rs`).
//! - 4.26/4.27 (graph data of package arcs): each command depends on the one
//!   before it; each imported package with arcs gets a dependency of the
//!   bundle's first command on one of its imports.
//!
//! Script role dependencies are added in every layout.

use crate::error::{Error, Result};
use crate::legacy::{PackageIndex, ResolvedIndex};
use crate::version::ZenLayout;
use crate::zen::{ExportBundleEntry, ExportCommand, ZenPackage};

use super::exports::DraftExport;
use super::imports::Imports;

/// One export's preload dependencies (legacy package indices).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct ExportDependencies {
    pub(crate) create_before_create: Vec<PackageIndex>,
    pub(crate) serialize_before_create: Vec<PackageIndex>,
    pub(crate) create_before_serialize: Vec<PackageIndex>,
    pub(crate) serialize_before_serialize: Vec<PackageIndex>,
    /// What [`add`](Self::add) has put in each list, to add nothing twice.
    added: std::collections::BTreeSet<(u8, PackageIndex)>,
}

impl ExportDependencies {
    fn list(&mut self, own: ExportCommand, dependency: ExportCommand) -> &mut Vec<PackageIndex> {
        match (own, dependency) {
            (ExportCommand::Create, ExportCommand::Create) => &mut self.create_before_create,
            (ExportCommand::Create, ExportCommand::Serialize) => &mut self.serialize_before_create,
            (ExportCommand::Serialize, ExportCommand::Create) => &mut self.create_before_serialize,
            (ExportCommand::Serialize, ExportCommand::Serialize) => {
                &mut self.serialize_before_serialize
            }
        }
    }

    fn add(&mut self, own: ExportCommand, dependency: ExportCommand, index: PackageIndex) {
        if self.added.insert((own as u8 * 2 + dependency as u8, index)) {
            self.list(own, dependency).push(index);
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.create_before_create.is_empty()
            && self.serialize_before_create.is_empty()
            && self.create_before_serialize.is_empty()
            && self.serialize_before_serialize.is_empty()
    }
}

/// Rebuilds every export's preload dependencies.
pub(super) fn rebuild(
    zen: &ZenPackage,
    imports: &Imports,
    exports: &[DraftExport],
    strategy: ArcPlacement,
) -> Result<Vec<ExportDependencies>> {
    let mut deps = vec![ExportDependencies::default(); exports.len()];
    match zen.engine.zen_layout() {
        ZenLayout::DependencyBundles => from_dependency_bundles(zen, &mut deps)?,
        ZenLayout::GraphData => from_graph_data(zen, &mut deps, strategy)?,
        ZenLayout::Ue4 => from_package_arcs(zen, imports, &mut deps)?,
    }
    add_script_roles(imports, exports, &mut deps);
    Ok(deps)
}

fn check_index(index: PackageIndex, zen: &ZenPackage, what: &str) -> Result<PackageIndex> {
    let ok = match index.resolve() {
        ResolvedIndex::Null => false,
        ResolvedIndex::Export(i) => i < zen.exports.len(),
        ResolvedIndex::Import(i) => i < zen.imports.len(),
    };
    if ok {
        Ok(index)
    } else {
        Err(Error::invalid(format!(
            "{what} refers to package index {index}, outside the {} imports and {} exports",
            zen.imports.len(),
            zen.exports.len()
        )))
    }
}

fn from_dependency_bundles(zen: &ZenPackage, deps: &mut [ExportDependencies]) -> Result<()> {
    if zen.dependency_bundle_headers.len() < deps.len() {
        return Err(Error::invalid(format!(
            "{} dependency bundles for {} exports",
            zen.dependency_bundle_headers.len(),
            deps.len()
        ))
        .within("dependency bundles"));
    }
    for (export, (header, out)) in zen
        .dependency_bundle_headers
        .iter()
        .zip(deps.iter_mut())
        .enumerate()
    {
        let mut next = header.first_entry_index.max(0) as usize;
        let groups = [
            header.create_before_create,
            header.serialize_before_create,
            header.create_before_serialize,
            header.serialize_before_serialize,
        ];
        for (group, count) in groups.into_iter().enumerate() {
            let end = next + count as usize;
            let entries = zen
                .dependency_bundle_entries
                .get(next..end)
                .ok_or_else(|| {
                    Error::invalid(format!(
                        "dependencies {next}..{end} are past the {} entries",
                        zen.dependency_bundle_entries.len()
                    ))
                    .within(format!("dependency bundle {export}"))
                })?;
            let list = match group {
                0 => &mut out.create_before_create,
                1 => &mut out.serialize_before_create,
                2 => &mut out.create_before_serialize,
                _ => &mut out.serialize_before_serialize,
            };
            for e in entries {
                list.push(
                    check_index(PackageIndex(e.package_index), zen, "a dependency")
                        .map_err(|err| err.within(format!("dependency bundle {export}")))?,
                );
            }
            next = end;
        }
    }
    Ok(())
}

/// The load order as (bundle, entry) after checking each entry names an export.
fn bundles(zen: &ZenPackage) -> Result<Vec<&[ExportBundleEntry]>> {
    let mut out = Vec::with_capacity(zen.export_bundle_headers.len());
    for (i, h) in zen.export_bundle_headers.iter().enumerate() {
        let start = h.first_entry_index as usize;
        let entries = start
            .checked_add(h.entry_count as usize)
            .and_then(|end| zen.export_bundle_entries.get(start..end))
            .ok_or_else(|| {
                Error::invalid("the bundle's entries are past the end of the list")
                    .within(format!("export bundle {i}"))
            })?;
        if let Some(bad) = entries
            .iter()
            .find(|e| e.export_index as usize >= zen.exports.len())
        {
            return Err(Error::invalid(format!(
                "an entry names export {}, but there are {}",
                bad.export_index,
                zen.exports.len()
            ))
            .within(format!("export bundle {i}")));
        }
        out.push(entries);
    }
    Ok(out)
}

/// Adds "`to` waits for `from`" between two bundle entries.
fn depend(deps: &mut [ExportDependencies], to: ExportBundleEntry, from: ExportBundleEntry) {
    if to.export_index == from.export_index {
        // An export's serialize always waits for its own create; the other
        // directions cannot be expressed.
        if from.command == ExportCommand::Create && to.command == ExportCommand::Serialize {
            deps[to.export_index as usize].add(
                to.command,
                from.command,
                PackageIndex::from_export(to.export_index as usize),
            );
        }
        return;
    }
    deps[to.export_index as usize].add(
        to.command,
        from.command,
        PackageIndex::from_export(from.export_index as usize),
    );
}

fn chain(deps: &mut [ExportDependencies], entries: &[ExportBundleEntry]) {
    for pair in entries.windows(2) {
        if pair[0].export_index != pair[1].export_index {
            depend(deps, pair[1], pair[0]);
        }
    }
}

/// Where an arc between two export bundles becomes a dependency.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ArcPlacement {
    /// On the first command of the later bundle where the order allows.
    FirstCommand,
    /// Wherever the conversion meets it earliest.
    EarliestVisit,
}

fn from_graph_data(
    zen: &ZenPackage,
    deps: &mut [ExportDependencies],
    strategy: ArcPlacement,
) -> Result<()> {
    let bundles = bundles(zen)?;
    for entries in &bundles {
        chain(deps, entries);
    }
    let bundle = |i: i32, what: &str| -> Result<&[ExportBundleEntry]> {
        usize::try_from(i)
            .ok()
            .and_then(|i| bundles.get(i).copied())
            .filter(|b| !b.is_empty())
            .ok_or_else(|| {
                Error::invalid(format!(
                    "{what} names bundle {i}, but there are {}",
                    bundles.len()
                ))
                .within("graph data")
            })
    };
    // The conversion lists arcs in the order it meets them: exports by
    // index, each export's create dependencies (create-before-create, then
    // serialize-before-create) before its serialize dependencies. Each arc
    // goes where it keeps that order: with `first_command`, on the first
    // command of its bundle when it can (the command an arc must hold
    // back), else wherever the conversion meets it earliest.
    // Which command of a bundle an arc starts from matters only for its
    // type (and for not naming the dependent's own export): two candidates
    // of each type, from the end of the bundle.
    let sources: Vec<Vec<ExportBundleEntry>> = bundles.iter().map(|b| arc_sources(b)).collect();
    let mut last = None;
    for arc in &zen.internal_arcs {
        let from = bundle(arc.from_bundle, "an internal arc")?;
        let to = bundle(arc.to_bundle, "an internal arc")?;
        let from_sources = &sources[arc.from_bundle as usize];
        let mut candidates = Vec::new();
        for &d in to.iter() {
            for &s in from_sources {
                let valid = s.export_index != d.export_index
                    || (s.command == ExportCommand::Create
                        && d.command == ExportCommand::Serialize);
                let key = visit_key(deps, d, s.command);
                if valid && last.is_none_or(|l| key > l) {
                    candidates.push((d, s, key));
                }
            }
        }
        let chosen = match strategy {
            ArcPlacement::FirstCommand => candidates
                .iter()
                .find(|c| c.0 == to[0])
                .or_else(|| candidates.iter().min_by_key(|c| c.2)),
            ArcPlacement::EarliestVisit => candidates.iter().min_by_key(|c| c.2),
        };
        match chosen {
            Some(&(d, s, key)) => {
                depend(deps, d, s);
                last = Some(key);
            }
            None => depend(deps, to[0], from[from.len() - 1]),
        }
    }
    for arcs in &zen.external_arcs {
        let mut last = None;
        for arc in arcs {
            let to = bundle(arc.to_bundle, "an external arc")?;
            let import = check_index(PackageIndex(-arc.from_import - 1), zen, "an external arc")
                .map_err(|e| e.within("graph data"))?;
            let d = to
                .iter()
                .copied()
                .filter(|&d| last.is_none_or(|l| visit_key(deps, d, arc.from_command) > l))
                .min_by_key(|&d| visit_key(deps, d, arc.from_command))
                .unwrap_or(to[0]);
            last = Some(visit_key(deps, d, arc.from_command));
            deps[d.export_index as usize].add(d.command, arc.from_command, import);
        }
    }
    Ok(())
}

/// Up to two entries of each command type from the end of a bundle, of
/// different exports, last entry first.
fn arc_sources(bundle: &[ExportBundleEntry]) -> Vec<ExportBundleEntry> {
    let mut picked: Vec<(usize, ExportBundleEntry)> = Vec::new();
    for command in [ExportCommand::Create, ExportCommand::Serialize] {
        let mut exports: Vec<u32> = Vec::new();
        for (i, e) in bundle.iter().enumerate().rev() {
            if e.command == command && !exports.contains(&e.export_index) {
                exports.push(e.export_index);
                picked.push((i, *e));
                if exports.len() == 2 {
                    break;
                }
            }
        }
    }
    picked.sort_by_key(|(i, _)| std::cmp::Reverse(*i));
    picked.into_iter().map(|(_, e)| e).collect()
}

/// When the conversion would meet a dependency appended now to `to`'s list
/// for a `dependency` command: (export, list, position).
fn visit_key(
    deps: &[ExportDependencies],
    to: ExportBundleEntry,
    dependency: ExportCommand,
) -> (usize, usize, usize) {
    let rank = match (to.command, dependency) {
        (ExportCommand::Create, ExportCommand::Create) => 0,
        (ExportCommand::Create, ExportCommand::Serialize) => 1,
        (ExportCommand::Serialize, ExportCommand::Create) => 2,
        (ExportCommand::Serialize, ExportCommand::Serialize) => 3,
    };
    let d = &deps[to.export_index as usize];
    let position = [
        &d.create_before_create,
        &d.serialize_before_create,
        &d.create_before_serialize,
        &d.serialize_before_serialize,
    ][rank]
        .len();
    (to.export_index as usize, rank, position)
}

fn from_package_arcs(
    zen: &ZenPackage,
    imports: &Imports,
    deps: &mut [ExportDependencies],
) -> Result<()> {
    let bundles = bundles(zen)?;
    let order: Vec<ExportBundleEntry> = bundles.iter().flat_map(|b| b.iter().copied()).collect();
    chain(deps, &order);
    for package in &zen.package_arcs {
        // One of the package's objects the import map lists.
        let import = (0..imports.zen_count).find(|&i| {
            !zen.imports[i].is_null()
                && imports
                    .package_of(i)
                    .is_some_and(|p| crate::hash::package_id(&p) == package.package_id)
        });
        let Some(import) = import else {
            continue;
        };
        for arc in &package.arcs {
            let Some(to) = usize::try_from(arc.to_bundle)
                .ok()
                .and_then(|b| bundles.get(b))
                .and_then(|b| b.first())
            else {
                return Err(Error::invalid(format!(
                    "an arc names bundle {}, but there are {}",
                    arc.to_bundle,
                    bundles.len()
                ))
                .within("graph data"));
            };
            deps[to.export_index as usize].add(
                to.command,
                ExportCommand::Create,
                PackageIndex::from_import(import),
            );
        }
    }
    Ok(())
}

/// Classes of objects that are structures (functions, user-defined structs).
const STRUCT_CLASSES: [&str; 5] = [
    "Function",
    "DelegateFunction",
    "SparseDelegateFunction",
    "ScriptStruct",
    "UserDefinedStruct",
];

/// `/Script/CoreUObject.Object` and its class default object.
const ROOT_OBJECTS: [&str; 2] = ["Object", "Default__Object"];

/// Script-object class, template and super dependencies, where cooks list them.
fn add_script_roles(imports: &Imports, exports: &[DraftExport], deps: &mut [ExportDependencies]) {
    let import = |index: PackageIndex| index.import().and_then(|i| imports.imports.get(i));
    let is_script =
        |index: PackageIndex| -> bool { import(index).is_some_and(|i| i.script.is_some()) };
    // Cooks list no class or template dependency for functions and
    // structures (corpus: every `Function` and `UserDefinedStruct` export).
    let is_struct_class = |index: PackageIndex| -> bool {
        is_script(index)
            && import(index)
                .is_some_and(|i| STRUCT_CLASSES.contains(&i.object_name.full().as_str()))
    };
    // Nor on the root class `Object` and its default object (corpus: the
    // one blueprint class derived from `Object` lists neither).
    let is_root = |index: PackageIndex| -> bool {
        is_script(index)
            && import(index).is_some_and(|i| ROOT_OBJECTS.contains(&i.object_name.full().as_str()))
    };
    for (e, d) in exports.iter().zip(deps.iter_mut()) {
        let mut front = Vec::new();
        let roles = if is_struct_class(e.class) {
            [PackageIndex::NULL; 2]
        } else {
            [e.class, e.template].map(|r| if is_root(r) { PackageIndex::NULL } else { r })
        };
        for role in roles {
            if is_script(role)
                && !d.serialize_before_create.contains(&role)
                && !front.contains(&role)
            {
                front.push(role);
            }
        }
        let at = usize::from(
            !front.is_empty()
                && !is_script(e.class)
                && d.serialize_before_create.first() == Some(&e.class),
        );
        for (k, role) in front.into_iter().enumerate() {
            d.serialize_before_create.insert(at + k, role);
        }
        if is_script(e.super_index) && !is_root(e.super_index) {
            if !d.create_before_create.contains(&e.super_index) {
                let after_outer = usize::from(
                    e.outer.is_export() && d.create_before_create.first() == Some(&e.outer),
                );
                d.create_before_create.insert(after_outer, e.super_index);
            }
            if !d.serialize_before_serialize.contains(&e.super_index) {
                d.serialize_before_serialize.insert(0, e.super_index);
            }
        }
    }
}
