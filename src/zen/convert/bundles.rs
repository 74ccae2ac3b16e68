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

/// 5.0–5.2: export bundles, internal arcs between them and external arcs
/// from imports, one list per imported package, as the engine's optimizer
/// makes them.
///
/// Bundles: `FPackageStoreOptimizer::CreateExportBundles` starts a new
/// bundle for every command (its `CurrentBundle` local is never set), then
/// `OptimizeExportBundles` orders the bundles of all the container's
/// packages together (packages in import order, each drained while it has
/// ready bundles) and merges consecutive bundles of one package. A package
/// whose commands no other package's commands interleave with ends up with
/// one bundle holding its whole load order; the engine's 5.0 container
/// header in the corpus shows 22,343 of 22,559 packages so.
///
/// Arcs: `FinalizePackage` visits the commands in export order (create,
/// serialize) and, for each, its internal dependencies (its own create
/// first for a serialize, then its preload dependencies on exports), adding
/// an arc from the dependency's bundle to the command's bundle when they
/// differ and that command has not added it yet (the set is per command,
/// so two commands of one bundle add the same arc twice); external arcs are
/// kept once per imported package. `SerializeGraphData` then sorts internal
/// arcs by (to, from) and each external list by (to, import, command).
pub(super) fn graph_data(
    package: &mut ZenPackage,
    bundles: &[&[Node]],
    deps: &ExportDependencies,
    imported_packages: usize,
) {
    package.export_bundle_headers.clear();
    package.export_bundle_entries.clear();
    let bundle_of = write_bundles(package, bundles);
    let mut internal = Vec::new();
    let mut external: Vec<Vec<ExternalArc>> = vec![Vec::new(); imported_packages];
    for (export, (create, serialize)) in deps.iter().enumerate() {
        for (list, command) in [
            (create, ExportCommand::Create),
            (serialize, ExportCommand::Serialize),
        ] {
            let node = Node { export, command };
            let to_bundle = bundle_of[node.slot()] as i32;
            let own_create = (command == ExportCommand::Serialize).then_some(Node {
                export,
                command: ExportCommand::Create,
            });
            let mut added = BTreeSet::new();
            let internal_from = own_create.into_iter().chain(list.iter().filter_map(|d| {
                d.index.export().map(|export| Node {
                    export,
                    command: d.command,
                })
            }));
            for from in internal_from {
                let from_bundle = bundle_of[from.slot()] as i32;
                if from_bundle != to_bundle && added.insert(from_bundle) {
                    internal.push(BundleArc {
                        from_bundle,
                        to_bundle,
                    });
                }
            }
            for d in list {
                let Some(import) = d.index.import() else {
                    continue;
                };
                // Script imports and package objects have no bundles to wait for.
                let Some((package_index, _)) = package.imports[import].package_import_parts()
                else {
                    continue;
                };
                let arc = ExternalArc {
                    from_import: import as i32,
                    from_command: d.command,
                    to_bundle,
                };
                if let Some(arcs) = external.get_mut(package_index as usize) {
                    if !arcs.contains(&arc) {
                        arcs.push(arc);
                    }
                }
            }
        }
    }
    internal.sort_by_key(|a| (a.to_bundle, a.from_bundle));
    for arcs in &mut external {
        arcs.sort_by_key(|a| (a.to_bundle, a.from_import, a.from_command));
    }
    package.internal_arcs = internal;
    package.external_arcs = external;
}

/// Writes the given bundles (each a run of the load order) as bundle
/// headers with their serial offsets and entries; returns each node's bundle.
fn write_bundles(package: &mut ZenPackage, bundles: &[&[Node]]) -> Vec<usize> {
    let mut bundle_of = vec![0usize; package.exports.len() * 2];
    let mut offset = 0u64;
    for (bundle, nodes) in bundles.iter().enumerate() {
        package.export_bundle_headers.push(ExportBundleHeader {
            serial_offset: Some(offset),
            first_entry_index: package.export_bundle_entries.len() as u32,
            entry_count: nodes.len() as u32,
        });
        for n in nodes.iter() {
            package.export_bundle_entries.push(ExportBundleEntry {
                export_index: n.export as u32,
                command: n.command,
            });
            bundle_of[n.slot()] = bundle;
            if n.command == ExportCommand::Serialize {
                offset += package.exports[n.export].cooked_serial_size;
            }
        }
    }
    bundle_of
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
    let bundle_of = write_bundles(package, &[order]);
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
