//! Container-wide export bundles (5.0–5.2): the engine orders the bundles
//! of all packages it writes together and merges each package's
//! consecutive bundles (`FPackageStoreOptimizer::OptimizeExportBundles`,
//! called by `CreateTarget` in `IoStoreUtilities.cpp` before
//! `FinalizePackage`). A package whose commands interleave with another
//! package's (import cycles inside the container) gets several bundles.
//!
//! The pass works on small per-package graphs ([`BundleGraph`]: load
//! order and dependencies, no bytes), so a build can run it over all of a
//! container's packages without holding them: [`container_bundles`] gives
//! each package its bundles, [`rebundle`] rewrites a package's bytes for
//! them. [`optimize_export_bundles`] does both for converted packages.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap};

use crate::binary::{Reader, Writer};
use crate::error::{Error, Result};
use crate::legacy::PackageIndex;
use crate::version::{EngineVersion, ZenLayout};

use super::super::package::ZenPackage;
use super::super::records::{ExportBundleEntry, ExportCommand};
use super::load_order::{Dependency, ExportDependencies, Node};
use super::{bundles, ConvertedPackage};

/// What the conversion knows of a 5.0–5.2 package's commands and that its
/// bytes do not keep: its per-package load order and each command's
/// preload dependencies. Needed to lay the package out again for other
/// bundles ([`rebundle`]); a build keeps it in its cache.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportGraph {
    pub(super) order: Vec<Node>,
    pub(super) deps: ExportDependencies,
}

impl ExportGraph {
    /// Appends the graph: export count, load order (export, command), then
    /// per export its create and serialize dependencies (index, command).
    pub(crate) fn write(&self, w: &mut Writer) {
        w.u32(self.deps.len() as u32);
        w.u32(self.order.len() as u32);
        for node in &self.order {
            w.u32(node.export as u32);
            w.u8(node.command as u8);
        }
        for (create, serialize) in &self.deps {
            for list in [create, serialize] {
                w.u32(list.len() as u32);
                for d in list {
                    d.index.write(w);
                    w.u8(d.command as u8);
                }
            }
        }
    }

    /// Reads what [`write`](Self::write) wrote, checking every export
    /// index and that the order holds each command once.
    pub(crate) fn read(r: &mut Reader) -> Result<Self> {
        let exports = r.count_u32(10)?;
        let at = r.pos();
        let count = r.count_u32(5)?;
        if count != exports * 2 {
            return Err(r.error_at(
                at,
                format!("a load order of {count} commands for {exports} exports"),
            ));
        }
        let command = |r: &mut Reader| -> Result<ExportCommand> {
            let at = r.pos();
            let raw = r.u8()?;
            ExportCommand::from_repr(raw as u32)
                .ok_or_else(|| r.error_at(at, format!("unknown export command {raw}")))
        };
        let mut seen = vec![false; count];
        let mut order = Vec::with_capacity(count);
        for _ in 0..count {
            let at = r.pos();
            let export = r.u32()? as usize;
            let node = Node {
                export,
                command: command(r)?,
            };
            if export >= exports || std::mem::replace(&mut seen[node.slot()], true) {
                return Err(r.error_at(at, format!("load order entry for export {export}")));
            }
            order.push(node);
        }
        let mut deps = Vec::with_capacity(exports);
        for _ in 0..exports {
            let mut lists: [Vec<Dependency>; 2] = Default::default();
            for list in &mut lists {
                let n = r.count_u32(5)?;
                list.reserve(n);
                for _ in 0..n {
                    let at = r.pos();
                    let index = PackageIndex::read(r)?;
                    if index.is_null() || index.export().is_some_and(|e| e >= exports) {
                        return Err(r.error_at(at, format!("dependency on {}", index.0)));
                    }
                    list.push(Dependency {
                        index,
                        command: command(r)?,
                    });
                }
            }
            let [create, serialize] = lists;
            deps.push((create, serialize));
        }
        Ok(ExportGraph { order, deps })
    }

    /// Checks that the graph fits `package` (its export and import counts).
    fn check_fits(&self, package: &ZenPackage) -> Result<()> {
        let imports = package.imports.len();
        let fits = self.deps.len() == package.exports.len()
            && self.deps.iter().all(|(c, s)| {
                c.iter()
                    .chain(s)
                    .all(|d| d.index.check(imports, self.deps.len()).is_ok())
            });
        if fits {
            Ok(())
        } else {
            Err(Error::invalid(
                "the export graph does not fit the package (export or import counts differ)",
            ))
        }
    }
}

/// A dependency of a command on another package's export command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ExternalDependency {
    package_id: u64,
    public_export_hash: u64,
    command: ExportCommand,
    /// The waiting command's position in the load order.
    to: u32,
}

/// What the container-wide pass needs of one 5.0–5.2 package: its id, the
/// packages it imports, its load order, the dependencies between its
/// commands (by load-order position) and on other packages' exports, and
/// its public exports. A few bytes per command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BundleGraph {
    package_id: u64,
    imported_packages: Vec<u64>,
    order: Vec<Node>,
    /// (from, to) load-order positions, own create → serialize included.
    internal: Vec<(u32, u32)>,
    external: Vec<ExternalDependency>,
    /// (public export hash, export index), sorted.
    public_exports: Vec<(u64, u32)>,
}

impl BundleGraph {
    /// The graph of a package: `package` (its header is enough), the
    /// conversion's `graph`, and its store entry's imported package ids.
    pub(crate) fn new(
        package_id: u64,
        package: &ZenPackage,
        graph: &ExportGraph,
        imported_packages: &[u64],
    ) -> Result<BundleGraph> {
        graph.check_fits(package)?;
        let mut position = vec![0u32; graph.order.len()];
        for (at, node) in graph.order.iter().enumerate() {
            position[node.slot()] = at as u32;
        }
        let mut internal = Vec::new();
        let mut external = Vec::new();
        for (export, (create, serialize)) in graph.deps.iter().enumerate() {
            for (list, command) in [
                (create, ExportCommand::Create),
                (serialize, ExportCommand::Serialize),
            ] {
                let to = position[Node { export, command }.slot()];
                if command == ExportCommand::Serialize {
                    let own = Node {
                        export,
                        command: ExportCommand::Create,
                    };
                    internal.push((position[own.slot()], to));
                }
                for d in list {
                    if let Some(e) = d.index.export() {
                        let from = Node {
                            export: e,
                            command: d.command,
                        };
                        internal.push((position[from.slot()], to));
                    } else if let Some((package_id, public_export_hash)) = d
                        .index
                        .import()
                        .and_then(|i| import_target(package, imported_packages, i))
                    {
                        external.push(ExternalDependency {
                            package_id,
                            public_export_hash,
                            command: d.command,
                            to,
                        });
                    }
                }
            }
        }
        internal.sort_unstable();
        internal.dedup();
        let mut public_exports: Vec<(u64, u32)> = package
            .exports
            .iter()
            .enumerate()
            .filter(|(_, e)| e.public_export_hash != 0)
            .map(|(i, e)| (e.public_export_hash, i as u32))
            .collect();
        public_exports.sort_unstable();
        Ok(BundleGraph {
            package_id,
            imported_packages: imported_packages.to_vec(),
            order: graph.order.clone(),
            internal,
            external,
            public_exports,
        })
    }

    /// The package's export with this public export hash (the first, as
    /// the engine finds it).
    fn public_export(&self, hash: u64) -> Option<usize> {
        let at = self.public_exports.partition_point(|(h, _)| *h < hash);
        let (h, export) = *self.public_exports.get(at)?;
        (h == hash).then_some(export as usize)
    }
}

/// (package id, public export hash) of an import of another package's export.
fn import_target(
    package: &ZenPackage,
    imported_packages: &[u64],
    import: usize,
) -> Option<(u64, u64)> {
    let (package_index, hash_index) = package.imports.get(import)?.package_import_parts()?;
    let id = imported_packages.get(package_index as usize)?;
    let hash = package
        .imported_public_export_hashes
        .get(hash_index as usize)?;
    Some((*id, *hash))
}

/// A package's export bundles: each a run of its load order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportBundles(Vec<Vec<Node>>);

impl ExportBundles {
    /// Each bundle's entries.
    pub(crate) fn entries(&self) -> Vec<Vec<ExportBundleEntry>> {
        self.0
            .iter()
            .map(|b| {
                b.iter()
                    .map(|n| ExportBundleEntry {
                        export_index: n.export as u32,
                        command: n.command,
                    })
                    .collect()
            })
            .collect()
    }
}

/// Gives the packages the bundles the engine gives them when it writes
/// them into one container, and rewrites the ones that change (header,
/// export data, store entry). Packages of other layouts are left as they are.
pub fn optimize_export_bundles(packages: &mut [ConvertedPackage]) -> Result<()> {
    let members: Vec<usize> = (0..packages.len())
        .filter(|&i| packages[i].export_graph.is_some())
        .filter(|&i| packages[i].package.engine.zen_layout() == ZenLayout::GraphData)
        .collect();
    let graphs = members
        .iter()
        .map(|&i| {
            let c = &packages[i];
            let graph = c.export_graph.as_ref().expect("members have graphs");
            BundleGraph::new(
                c.package_id,
                &c.package,
                graph,
                &c.store_entry.imported_packages,
            )
        })
        .collect::<Result<Vec<_>>>()?;
    let bundles = container_bundles(&graphs)?;
    for (&i, bundles) in members.iter().zip(bundles) {
        let converted = &mut packages[i];
        let Some(bundles) = bundles else { continue };
        if has_bundles(&converted.package, &bundles) {
            continue;
        }
        let graph = converted
            .export_graph
            .as_ref()
            .expect("members have graphs");
        let imported = converted.store_entry.imported_packages.len();
        let bytes = rebundle_package(&mut converted.package, graph, &bundles, imported)?;
        converted.store_entry.export_bundle_count =
            converted.package.export_bundle_headers.len() as i32;
        converted.store_entry.export_bundles_size = bytes.len() as u64;
        converted.package_bytes = bytes;
    }
    Ok(())
}

/// The bundles of each package (in the order given) among all of them;
/// `None` for a package whose bundles are its one per-package bundle (its
/// whole load order), as converted alone. Deterministic: the result depends
/// only on the graphs, not on their order.
pub fn container_bundles(graphs: &[BundleGraph]) -> Result<Vec<Option<ExportBundles>>> {
    let load_order = packages_in_load_order(graphs);
    let nodes = BundleNodes::new(graphs, &load_order)?;
    let runs = drain(graphs, &load_order, &nodes)?;
    let mut out = vec![None; graphs.len()];
    for (position, bundles) in runs.into_iter().enumerate() {
        let i = load_order[position];
        let alone = bundles.len() == 1 && bundles[0] == graphs[i].order;
        if !alone && !graphs[i].order.is_empty() {
            out[i] = Some(ExportBundles(bundles));
        }
    }
    Ok(out)
}

/// Rewrites a package's chunk (header and export data, as the conversion
/// wrote it) for `bundles`: graph data, export data in the new bundle
/// order. Returns the new chunk and its bundle count.
pub fn rebundle(
    chunk: &[u8],
    engine: EngineVersion,
    graph: &ExportGraph,
    bundles: &ExportBundles,
    imported_packages: usize,
) -> Result<(Vec<u8>, usize)> {
    let mut package = ZenPackage::read(chunk, engine)?;
    graph.check_fits(&package)?;
    check_bundles(graph, bundles)?;
    let bytes = rebundle_package(&mut package, graph, bundles, imported_packages)?;
    Ok((bytes, package.export_bundle_headers.len()))
}

/// The bundles hold each command of the graph's load order exactly once.
fn check_bundles(graph: &ExportGraph, bundles: &ExportBundles) -> Result<()> {
    let mut nodes: Vec<Node> = bundles.0.iter().flatten().copied().collect();
    let mut order = graph.order.clone();
    nodes.sort_unstable();
    order.sort_unstable();
    if nodes == order {
        Ok(())
    } else {
        Err(Error::internal(
            "the bundles do not hold the package's commands",
        ))
    }
}

/// `SortPackagesInLoadOrder`: packages by id, then a depth-first walk from
/// each over "is imported by" (importers by id), reversed, so imported
/// packages come first; import cycles are cut where they close. Returns
/// indices into `graphs`.
fn packages_in_load_order(graphs: &[BundleGraph]) -> Vec<usize> {
    let mut by_id: Vec<usize> = (0..graphs.len()).collect();
    by_id.sort_by_key(|&i| (graphs[i].package_id, i));
    let position: BTreeMap<u64, usize> = by_id.iter().map(|&i| (graphs[i].package_id, i)).collect();
    let mut importers: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for &i in &by_id {
        for id in &graphs[i].imported_packages {
            if let Some(&imported) = position.get(id) {
                importers.entry(imported).or_default().push(i);
            }
        }
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

/// Every command of every package as one bundle node, numbered package by
/// package in load order, and the nodes each node's dependants are
/// (`OptimizeExportBundles`: internal dependencies, and external ones on
/// exports of packages in the set, found by public export hash), as
/// compact adjacency lists.
struct BundleNodes {
    /// First node of each package (by load-order position), then the total.
    base: Vec<u32>,
    /// `targets[first[n]..first[n + 1]]`: the nodes that wait for node n.
    first: Vec<u32>,
    targets: Vec<u32>,
}

impl BundleNodes {
    fn new(graphs: &[BundleGraph], load_order: &[usize]) -> Result<BundleNodes> {
        let mut base = Vec::with_capacity(load_order.len() + 1);
        let mut total = 0u64;
        for &i in load_order {
            base.push(total as u32);
            total += graphs[i].order.len() as u64;
            if total > u32::MAX as u64 {
                return Err(Error::unsupported(
                    "more than 4 billion export commands in one container",
                ));
            }
        }
        base.push(total as u32);
        let position: BTreeMap<u64, usize> = load_order
            .iter()
            .enumerate()
            .map(|(p, &i)| (graphs[i].package_id, p))
            .collect();
        // Each command slot's node (same numbering as the nodes).
        let mut node_of_slot = vec![0u32; total as usize];
        for (p, &i) in load_order.iter().enumerate() {
            for (at, node) in graphs[i].order.iter().enumerate() {
                node_of_slot[base[p] as usize + node.slot()] = base[p] + at as u32;
            }
        }
        let mut edges: Vec<(u32, u32)> = Vec::new();
        for (p, &i) in load_order.iter().enumerate() {
            let g = &graphs[i];
            edges.extend(g.internal.iter().map(|&(f, t)| (base[p] + f, base[p] + t)));
            for d in &g.external {
                let Some(&q) = position.get(&d.package_id) else {
                    continue;
                };
                let Some(export) = graphs[load_order[q]].public_export(d.public_export_hash) else {
                    continue;
                };
                let slot = Node {
                    export,
                    command: d.command,
                }
                .slot();
                edges.push((node_of_slot[base[q] as usize + slot], base[p] + d.to));
            }
        }
        drop(node_of_slot);
        edges.sort_unstable();
        edges.dedup();
        let mut first = vec![0u32; total as usize + 1];
        for &(from, _) in &edges {
            first[from as usize + 1] += 1;
        }
        for n in 0..total as usize {
            first[n + 1] += first[n];
        }
        let targets = edges.into_iter().map(|(_, to)| to).collect();
        Ok(BundleNodes {
            base,
            first,
            targets,
        })
    }

    fn dependants(&self, node: u32) -> &[u32] {
        &self.targets[self.first[node as usize] as usize..self.first[node as usize + 1] as usize]
    }

    /// (package position, index in its load order) of a node.
    fn locate(&self, node: u32) -> (usize, usize) {
        let p = self.base.partition_point(|&b| b <= node) - 1;
        (p, (node - self.base[p]) as usize)
    }
}

/// `SortExportBundleGraphNodesInLoadOrder` and the merge after it: packages
/// in load order, each drained of its ready bundle nodes (smallest index
/// first) before the next; a package's consecutive nodes form one bundle.
/// Returns each package's bundles (by load-order position).
fn drain(
    graphs: &[BundleGraph],
    load_order: &[usize],
    nodes: &BundleNodes,
) -> Result<Vec<Vec<Vec<Node>>>> {
    let total = *nodes.base.last().unwrap_or(&0) as usize;
    let mut incoming = vec![0u32; total];
    for &to in &nodes.targets {
        incoming[to as usize] += 1;
    }
    let mut ready: Vec<BinaryHeap<Reverse<u32>>> = (0..load_order.len())
        .map(|p| {
            (nodes.base[p]..nodes.base[p + 1])
                .filter(|&n| incoming[n as usize] == 0)
                .map(|n| Reverse(n - nodes.base[p]))
                .collect()
        })
        .collect();
    let mut runs: Vec<Vec<Vec<Node>>> = vec![Vec::new(); load_order.len()];
    let mut previous = None;
    let mut taken = 0;
    while taken < total {
        let mut progress = false;
        for p in 0..load_order.len() {
            while let Some(Reverse(n)) = ready[p].pop() {
                progress = true;
                taken += 1;
                if previous != Some(p) || runs[p].is_empty() {
                    runs[p].push(Vec::new());
                }
                let node = graphs[load_order[p]].order[n as usize];
                runs[p].last_mut().expect("just pushed").push(node);
                previous = Some(p);
                for &to in nodes.dependants(nodes.base[p] + n) {
                    let count = &mut incoming[to as usize];
                    *count -= 1;
                    if *count == 0 {
                        let (q, at) = nodes.locate(to);
                        ready[q].push(Reverse(at as u32));
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
fn has_bundles(package: &ZenPackage, bundles: &ExportBundles) -> bool {
    package.export_bundle_headers.len() == bundles.0.len()
        && package
            .export_bundle_headers
            .iter()
            .zip(&bundles.0)
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
/// bundle order, header; returns the chunk (header and export data).
fn rebundle_package(
    package: &mut ZenPackage,
    graph: &ExportGraph,
    bundles: &ExportBundles,
    imported_packages: usize,
) -> Result<Vec<u8>> {
    let short = || Error::invalid("the export data is shorter than its exports");
    // Each export's bytes where the current bundle order put them.
    let mut at = 0usize;
    let mut slices = vec![0..0; package.exports.len()];
    for entry in &package.export_bundle_entries {
        if entry.command == ExportCommand::Serialize {
            let export = entry.export_index as usize;
            let size = package
                .exports
                .get(export)
                .ok_or_else(|| Error::invalid(format!("bundle entry names export {export}")))?
                .cooked_serial_size;
            let end = usize::try_from(size)
                .ok()
                .and_then(|size| at.checked_add(size))
                .filter(|&end| end <= package.export_data.len())
                .ok_or_else(short)?;
            slices[export] = at..end;
            at = end;
        }
    }
    let old_data = std::mem::take(&mut package.export_data);
    let tail = old_data.get(at..).ok_or_else(short)?;
    let runs: Vec<&[Node]> = bundles.0.iter().map(|b| b.as_slice()).collect();
    bundles::graph_data(package, &runs, &graph.deps, imported_packages);
    let mut data = Vec::with_capacity(old_data.len());
    for node in bundles.0.iter().flatten() {
        if node.command == ExportCommand::Serialize {
            data.extend_from_slice(&old_data[slices[node.export].clone()]);
        }
    }
    data.extend_from_slice(tail);
    package.export_data = data;
    let (mut bytes, summary) = package.write_header();
    package.summary = summary;
    bytes.extend_from_slice(&package.export_data);
    Ok(bytes)
}
