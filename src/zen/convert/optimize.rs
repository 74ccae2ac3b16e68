//! Container-wide export bundles (5.0–5.2): the engine orders the bundles
//! of all packages it writes together and merges each package's
//! consecutive bundles (`FPackageStoreOptimizer::OptimizeExportBundles`,
//! called by `CreateTarget` in `IoStoreUtilities.cpp` before
//! `FinalizePackage`). A package whose commands interleave with another
//! package's (import cycles inside the container) gets several bundles.
//! [`optimize_export_bundles`] does that for a set of converted packages
//! and rewrites those whose bundles change.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap};

use crate::error::{Error, Result};
use crate::version::ZenLayout;

use super::super::records::ExportCommand;
use super::load_order::{ExportDependencies, Node};
use super::{bundles, ConvertedPackage};

/// What the container-wide bundling needs of one 5.0–5.2 package: its
/// per-package load order and each command's dependencies.
#[derive(Debug, Clone)]
pub struct ExportGraph {
    pub(super) order: Vec<Node>,
    pub(super) deps: ExportDependencies,
}

/// A bundle node: (package position, index in that package's load order).
type BundleNode = (usize, usize);

/// Gives the packages the bundles the engine gives them when it writes
/// them into one container, and rewrites the ones that change (header,
/// export data, store entry). Packages of other layouts are left as they are.
pub fn optimize_export_bundles(packages: &mut [ConvertedPackage]) -> Result<()> {
    let members: Vec<usize> = (0..packages.len())
        .filter(|&i| packages[i].export_graph.is_some())
        .filter(|&i| packages[i].package.engine.zen_layout() == ZenLayout::GraphData)
        .collect();
    if members.is_empty() {
        return Ok(());
    }
    let load_order = packages_in_load_order(packages, &members);
    let edges = bundle_edges(packages, &load_order)?;
    let runs = drain(packages, &load_order, &edges)?;
    for (position, bundles) in runs.into_iter().enumerate() {
        let package = &mut packages[load_order[position]];
        if !has_bundles(&package.package, &bundles) {
            refinalize(package, &bundles)?;
        }
    }
    Ok(())
}

/// `SortPackagesInLoadOrder`: packages by id, then a depth-first walk from
/// each over "is imported by" (importers by id), reversed, so imported
/// packages come first; import cycles are cut where they close.
fn packages_in_load_order(packages: &[ConvertedPackage], members: &[usize]) -> Vec<usize> {
    let mut by_id: Vec<usize> = members.to_vec();
    by_id.sort_by_key(|&i| packages[i].package_id);
    let position: BTreeMap<u64, usize> =
        by_id.iter().map(|&i| (packages[i].package_id, i)).collect();
    let mut importers: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for &i in &by_id {
        for id in &packages[i].store_entry.imported_packages {
            if let Some(&imported) = position.get(id) {
                importers.entry(imported).or_default().push(i);
            }
        }
    }
    for list in importers.values_mut() {
        list.sort_by_key(|&i| packages[i].package_id);
    }
    let mut done = BTreeSet::new();
    let mut on_path = BTreeSet::new();
    let mut result = Vec::with_capacity(by_id.len());
    for &start in &by_id {
        // Iterative post-order: (package, next importer to visit).
        let mut stack = vec![(start, 0usize)];
        while let Some((current, next)) = stack.pop() {
            if next == 0 && (done.contains(&current) || !on_path.insert(current)) {
                continue;
            }
            match importers.get(&current).and_then(|l| l.get(next)) {
                Some(&child) => {
                    stack.push((current, next + 1));
                    if !done.contains(&child) && !on_path.contains(&child) {
                        stack.push((child, 0));
                    }
                }
                None => {
                    on_path.remove(&current);
                    done.insert(current);
                    result.push(current);
                }
            }
        }
    }
    result.reverse();
    result
}

/// The bundle nodes each bundle node waits for, within and across packages
/// (`OptimizeExportBundles`: internal dependencies, and external ones on
/// exports of packages in the set, found by public export hash).
fn bundle_edges(
    packages: &[ConvertedPackage],
    load_order: &[usize],
) -> Result<BTreeMap<BundleNode, BTreeSet<BundleNode>>> {
    let position: BTreeMap<u64, usize> = load_order
        .iter()
        .enumerate()
        .map(|(p, &i)| (packages[i].package_id, p))
        .collect();
    // Each package's node slot → index in its load order.
    let slot_index: Vec<Vec<usize>> = load_order
        .iter()
        .map(|&i| {
            let graph = packages[i]
                .export_graph
                .as_ref()
                .expect("members have graphs");
            let mut index = vec![0; graph.order.len()];
            for (at, node) in graph.order.iter().enumerate() {
                index[node.slot()] = at;
            }
            index
        })
        .collect();
    let mut edges: BTreeMap<BundleNode, BTreeSet<BundleNode>> = BTreeMap::new();
    for (p, &i) in load_order.iter().enumerate() {
        let converted = &packages[i];
        let graph = converted
            .export_graph
            .as_ref()
            .expect("members have graphs");
        for (export, (create, serialize)) in graph.deps.iter().enumerate() {
            for (list, command) in [
                (create, ExportCommand::Create),
                (serialize, ExportCommand::Serialize),
            ] {
                let to = (p, slot_index[p][Node { export, command }.slot()]);
                if command == ExportCommand::Serialize {
                    let own = Node {
                        export,
                        command: ExportCommand::Create,
                    };
                    edges
                        .entry((p, slot_index[p][own.slot()]))
                        .or_default()
                        .insert(to);
                }
                for d in list {
                    let from = match (d.index.export(), d.index.import()) {
                        (Some(e), _) => Some((
                            p,
                            slot_index[p][Node {
                                export: e,
                                command: d.command,
                            }
                            .slot()],
                        )),
                        (_, Some(import)) => external_node(
                            packages,
                            load_order,
                            &position,
                            &slot_index,
                            converted,
                            import,
                            d.command,
                        ),
                        _ => None,
                    };
                    if let Some(from) = from {
                        edges.entry(from).or_default().insert(to);
                    }
                }
            }
        }
    }
    Ok(edges)
}

/// The bundle node of an import's command when the import's package is in the set.
fn external_node(
    packages: &[ConvertedPackage],
    load_order: &[usize],
    position: &BTreeMap<u64, usize>,
    slot_index: &[Vec<usize>],
    importer: &ConvertedPackage,
    import: usize,
    command: ExportCommand,
) -> Option<BundleNode> {
    let (package_index, hash_index) = importer
        .package
        .imports
        .get(import)?
        .package_import_parts()?;
    let id = importer
        .store_entry
        .imported_packages
        .get(package_index as usize)?;
    let hash = importer
        .package
        .imported_public_export_hashes
        .get(hash_index as usize)?;
    let &p = position.get(id)?;
    let from = &packages[load_order[p]];
    let export = from
        .package
        .exports
        .iter()
        .position(|e| e.public_export_hash == *hash)?;
    Some((p, slot_index[p][Node { export, command }.slot()]))
}

/// `SortExportBundleGraphNodesInLoadOrder` and the merge after it: packages
/// in load order, each drained of its ready bundle nodes (smallest index
/// first) before the next; a package's consecutive nodes form one bundle.
/// Returns each package's bundles (by load-order position).
fn drain(
    packages: &[ConvertedPackage],
    load_order: &[usize],
    edges: &BTreeMap<BundleNode, BTreeSet<BundleNode>>,
) -> Result<Vec<Vec<Vec<Node>>>> {
    let orders: Vec<&[Node]> = load_order
        .iter()
        .map(|&i| {
            packages[i]
                .export_graph
                .as_ref()
                .expect("members have graphs")
                .order
                .as_slice()
        })
        .collect();
    let mut incoming: BTreeMap<BundleNode, usize> = BTreeMap::new();
    for targets in edges.values() {
        for &to in targets {
            *incoming.entry(to).or_default() += 1;
        }
    }
    let mut ready: Vec<BinaryHeap<Reverse<usize>>> = orders
        .iter()
        .enumerate()
        .map(|(p, order)| {
            (0..order.len())
                .filter(|&n| !incoming.contains_key(&(p, n)))
                .map(Reverse)
                .collect()
        })
        .collect();
    let total: usize = orders.iter().map(|o| o.len()).sum();
    let mut runs: Vec<Vec<Vec<Node>>> = vec![Vec::new(); orders.len()];
    let mut previous = None;
    let mut taken = 0;
    while taken < total {
        let mut progress = false;
        for p in 0..orders.len() {
            while let Some(Reverse(n)) = ready[p].pop() {
                progress = true;
                taken += 1;
                if previous != Some(p) || runs[p].is_empty() {
                    runs[p].push(Vec::new());
                }
                runs[p].last_mut().expect("just pushed").push(orders[p][n]);
                previous = Some(p);
                for &to in edges.get(&(p, n)).into_iter().flatten() {
                    let count = incoming.get_mut(&to).expect("counted");
                    *count -= 1;
                    if *count == 0 {
                        ready[to.0].push(Reverse(to.1));
                    }
                }
            }
        }
        if !progress {
            return Err(Error::invalid(
                "the packages' export bundles depend on each other in a cycle; they cannot be ordered",
            ));
        }
    }
    Ok(runs)
}

/// Whether the package already has exactly these bundles.
fn has_bundles(package: &super::super::package::ZenPackage, bundles: &[Vec<Node>]) -> bool {
    package.export_bundle_headers.len() == bundles.len()
        && package
            .export_bundle_headers
            .iter()
            .zip(bundles)
            .all(|(header, nodes)| {
                let first = header.first_entry_index as usize;
                let entries = package
                    .export_bundle_entries
                    .get(first..first + header.entry_count as usize)
                    .unwrap_or_default();
                entries.len() == nodes.len()
                    && entries
                        .iter()
                        .zip(nodes)
                        .all(|(e, n)| e.export_index as usize == n.export && e.command == n.command)
            })
}

/// Rewrites a package for new bundles: graph data, export data in the new
/// bundle order, header bytes and store entry.
fn refinalize(converted: &mut ConvertedPackage, bundles: &[Vec<Node>]) -> Result<()> {
    let graph = converted
        .export_graph
        .as_ref()
        .expect("members have graphs");
    let package = &mut converted.package;
    // Each export's bytes where the current bundle order put them.
    let mut at = 0usize;
    let mut slices = vec![0..0; package.exports.len()];
    for entry in &package.export_bundle_entries {
        if entry.command == ExportCommand::Serialize {
            let size = package.exports[entry.export_index as usize].cooked_serial_size as usize;
            slices[entry.export_index as usize] = at..at + size;
            at += size;
        }
    }
    let tail = package
        .export_data
        .get(at..)
        .ok_or_else(|| Error::internal("export data is shorter than its exports"))?
        .to_vec();
    let old_data = std::mem::take(&mut package.export_data);
    let runs: Vec<&[Node]> = bundles.iter().map(|b| b.as_slice()).collect();
    bundles::graph_data(
        package,
        &runs,
        &graph.deps,
        converted.store_entry.imported_packages.len(),
    );
    for node in bundles.iter().flatten() {
        if node.command == ExportCommand::Serialize {
            package
                .export_data
                .extend_from_slice(&old_data[slices[node.export].clone()]);
        }
    }
    package.export_data.extend_from_slice(&tail);
    let (mut bytes, summary) = package.write_header();
    package.summary = summary;
    bytes.extend_from_slice(&package.export_data);
    converted.store_entry.export_bundle_count = package.export_bundle_headers.len() as i32;
    converted.store_entry.export_bundles_size = bytes.len() as u64;
    converted.package_bytes = bytes;
    Ok(())
}
