//! Stage 4, bundles and graph data: export bundles from the load order and
//! what each layout records of the dependencies between them — dependency
//! bundles (5.3+), internal and external arcs (5.0–5.2), arcs per imported
//! package (UE4).

use std::collections::{BTreeMap, BTreeSet};

use crate::legacy::ResolvedIndex;

use super::super::package::{PackageArcs, ZenPackage};
use super::super::records::*;
use super::load_order::{Dependency, ExportDependencies, Node};

/// 5.3+: one export bundle holding the whole load order, and one dependency
/// bundle per export listing the package indices each command waits for
/// (exports, and imports of other packages' exports).
pub(super) fn dependency_bundles(
    package: &mut ZenPackage,
    order: &[Node],
    deps: &ExportDependencies,
) {
    package.export_bundle_entries = order
        .iter()
        .map(|n| ExportBundleEntry {
            export_index: n.export as u32,
            command: n.command,
        })
        .collect();
    for (create, serialize) in deps.iter() {
        // An export's dependency on itself (a function's serialize waiting for
        // its own create) is kept: the engine lists every preload dependency.
        let keep = |d: &&Dependency, command: ExportCommand| -> bool {
            d.command == command
                && match d.index.resolve() {
                    ResolvedIndex::Export(_) => true,
                    ResolvedIndex::Import(i) => package
                        .imports
                        .get(i)
                        .is_some_and(|i| i.kind() == ObjectIndexKind::PackageImport),
                    ResolvedIndex::Null => false,
                }
        };
        let pick = |list: &[Dependency], command| -> Vec<DependencyBundleEntry> {
            list.iter()
                .filter(|d| keep(d, command))
                .map(|d| DependencyBundleEntry::new(d.index))
                .collect()
        };
        let groups = [
            pick(create, ExportCommand::Create),
            pick(create, ExportCommand::Serialize),
            pick(serialize, ExportCommand::Create),
            pick(serialize, ExportCommand::Serialize),
        ];
        package
            .dependency_bundle_headers
            .push(DependencyBundleHeader {
                first_entry_index: package.dependency_bundle_entries.len() as i32,
                create_before_create: groups[0].len() as u32,
                serialize_before_create: groups[1].len() as u32,
                create_before_serialize: groups[2].len() as u32,
                serialize_before_serialize: groups[3].len() as u32,
            });
        for g in groups {
            package.dependency_bundle_entries.extend(g);
        }
    }
}

/// Splits the load order into export bundles: a bundle closes after a public
/// export when `close_after_public`. Returns each node's bundle (by slot).
fn split_bundles(package: &mut ZenPackage, order: &[Node], close_after_public: bool) -> Vec<usize> {
    let mut bundle_of = vec![0usize; package.exports.len() * 2];
    let mut open = false;
    let mut offset = 0u64;
    for n in order {
        if !open {
            package.export_bundle_headers.push(ExportBundleHeader {
                serial_offset: Some(offset),
                first_entry_index: package.export_bundle_entries.len() as u32,
                entry_count: 0,
            });
            open = true;
        }
        let bundle = package.export_bundle_headers.len() - 1;
        package.export_bundle_entries.push(ExportBundleEntry {
            export_index: n.export as u32,
            command: n.command,
        });
        package.export_bundle_headers[bundle].entry_count += 1;
        bundle_of[n.slot()] = bundle;
        if n.command == ExportCommand::Serialize {
            offset += package.exports[n.export].cooked_serial_size;
        }
        if close_after_public && package.exports[n.export].public_export_hash != 0 {
            open = false;
        }
    }
    bundle_of
}

/// 5.0–5.2: export bundles, internal arcs between them and external arcs
/// from imports, one list per imported package.
pub(super) fn graph_data(
    package: &mut ZenPackage,
    order: &[Node],
    deps: &ExportDependencies,
    imported_packages: usize,
) {
    let bundle_of = split_bundles(package, order, true);
    let mut internal = BTreeSet::new();
    let mut internal_list = Vec::new();
    let mut external: Vec<Vec<ExternalArc>> = vec![Vec::new(); imported_packages];
    let mut seen_external = BTreeSet::new();
    for (export, (create, serialize)) in deps.iter().enumerate() {
        for (list, command) in [
            (create, ExportCommand::Create),
            (serialize, ExportCommand::Serialize),
        ] {
            let to_bundle = bundle_of[Node { export, command }.slot()] as i32;
            for d in list {
                match d.index.resolve() {
                    ResolvedIndex::Export(from) => {
                        let from = Node {
                            export: from,
                            command: d.command,
                        };
                        let arc = BundleArc {
                            from_bundle: bundle_of[from.slot()] as i32,
                            to_bundle,
                        };
                        if arc.from_bundle != to_bundle && internal.insert(arc) {
                            internal_list.push(arc);
                        }
                    }
                    ResolvedIndex::Import(import) => {
                        let Some((package_index, _)) =
                            package.imports[import].package_import_parts()
                        else {
                            continue;
                        };
                        let arc = ExternalArc {
                            from_import: import as i32,
                            from_command: d.command,
                            to_bundle,
                        };
                        if seen_external.insert(arc) {
                            if let Some(list) = external.get_mut(package_index as usize) {
                                list.push(arc);
                            }
                        }
                    }
                    ResolvedIndex::Null => {}
                }
            }
        }
    }
    package.internal_arcs = internal_list;
    package.external_arcs = external;
}

/// UE4: one bundle for the package (the engine closes bundles only where
/// another package's commands interleave in its global load order, which a
/// single converted package never has); graph data lists, per imported
/// package (by id), one arc from that package's bundle to ours.
pub(super) fn ue4_graph(
    package: &mut ZenPackage,
    order: &[Node],
    deps: &ExportDependencies,
    import_package_ids: &[Option<u64>],
) {
    let bundle_of = split_bundles(package, order, false);
    for h in &mut package.export_bundle_headers {
        h.serial_offset = None;
    }
    let mut arcs: BTreeMap<u64, BTreeSet<BundleArc>> = BTreeMap::new();
    for (export, (create, serialize)) in deps.iter().enumerate() {
        for (list, command) in [
            (create, ExportCommand::Create),
            (serialize, ExportCommand::Serialize),
        ] {
            let to_bundle = bundle_of[Node { export, command }.slot()] as i32;
            for d in list {
                if let Some(Some(id)) = d.index.import().and_then(|i| import_package_ids.get(i)) {
                    arcs.entry(*id).or_default().insert(BundleArc {
                        from_bundle: 0,
                        to_bundle,
                    });
                }
            }
        }
    }
    package.package_arcs = arcs
        .into_iter()
        .map(|(package_id, arcs)| PackageArcs {
            package_id,
            arcs: arcs.into_iter().collect(),
        })
        .collect();
}
