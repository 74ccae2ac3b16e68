//! What `verify` checks inside a container's packages (`iostore` knows
//! chunks, not packages): no export's outer chain loops back on itself (an
//! error, as for legacy packages), and in 5.0–5.2 layouts no cycle among
//! the export bundles of the container's packages (a warning: the engine
//! never writes one, its container-wide pass splits packages caught in
//! import cycles, and the 5.x loader was never given such a layout).
//!
//! Only package headers are read (the export data is not kept), and per
//! package only its bundles' arcs and its public exports' bundles.

use std::collections::BTreeMap;
use std::io::Write;

use crate::diagnostic::Diagnostic;
use crate::error::{Error, Result};
use crate::iostore::chunk::ChunkType;
use crate::iostore::reader::VerifyReport;
use crate::iostore::Container;
use crate::version::{EngineVersion, ZenLayout};

use super::package::{ZenPackage, ZenSummary};
use super::records::{ExportCommand, ObjectIndexKind};

/// Checks the packages of `container` (see the module doc); packages that
/// do not read as any release of the container header's version are left
/// to the container's own checks.
pub(crate) fn verify_packages(container: &Container) -> VerifyReport {
    let mut report = VerifyReport::default();
    // A container whose blocks overlap is not inflated (the container's own
    // verify reports why).
    if !container.layout_errors().is_empty() {
        return report;
    }
    let Ok(Some(header)) = container.container_header() else {
        return report;
    };
    let engines: Vec<EngineVersion> = EngineVersion::ALL
        .into_iter()
        .rev()
        .filter(|e| e.container_header_version() == header.version)
        .collect();
    let Some(layout) = engines.first().map(|e| e.zen_layout()) else {
        return report;
    };
    let imported: BTreeMap<u64, &[u64]> = header
        .packages
        .iter()
        .map(|(id, entry)| (*id, entry.imported_packages.as_slice()))
        .collect();
    let mut bundles = Vec::new();
    for index in 0..container.toc.chunk_ids.len() {
        if container.chunk_type(index) != ChunkType::ExportBundleData {
            continue;
        }
        let id = container.toc.chunk_ids[index].id();
        let Ok(bytes) = read_header_bytes(container, index, layout) else {
            continue;
        };
        let Some(package) = engines
            .iter()
            .find_map(|&engine| ZenPackage::read_header(&bytes, engine).ok())
        else {
            continue;
        };
        if let Err(e) = check_export_outers(&package) {
            let e = e
                .within(format!("package {}", package.package_name()))
                .in_file(&container.utoc_path);
            report.errors.extend(Diagnostic::from_error(&e));
        }
        if layout == ZenLayout::GraphData {
            let imports = imported.get(&id).copied().unwrap_or_default();
            bundles.push(PackageBundles::new(id, &package, imports));
        }
    }
    for cycle in bundle_cycles(&bundles) {
        report.warnings.push(
            Diagnostic::warning(
                "bundle-cycle",
                format!(
                    "the export bundles of {} package(s) depend on each other in a circle: {}; \
                     the engine never lays out a container so, and the game's loader may stall on it",
                    cycle.len(),
                    cycle.join(", ")
                ),
            )
            .with_file(&container.utoc_path)
            .with_hint(
                "rebuild the container with zenpak build, which lays out 5.0–5.2 bundles container-wide as the engine does",
            ),
        );
    }
    report
}

/// Refuses an export whose outer chain comes back to itself, or that is
/// its own class, super or template (see `LegacyPackage::check_outer_chains`).
pub(crate) fn check_export_outers(package: &ZenPackage) -> Result<()> {
    let count = package.exports.len();
    for (e, export) in package.exports.iter().enumerate() {
        for (what, index) in [
            ("class", export.class_index),
            ("super", export.super_index),
            ("template", export.template_index),
        ] {
            if index.kind() == ObjectIndexKind::Export && index.0 == e as u64 {
                return Err(Error::invalid(format!("the export is its own {what}"))
                    .within(format!("export {e}"))
                    .within("export map"));
            }
        }
    }
    let outer = |export: usize| {
        let outer = package.exports[export].outer_index;
        (outer.kind() == ObjectIndexKind::Export)
            .then(|| usize::try_from(outer.0).ok().filter(|&o| o < count))
            .flatten()
    };
    match crate::legacy::first_in_outer_loop(count, outer) {
        None => Ok(()),
        Some(at) => Err(Error::invalid("the outer chain loops").within(format!("export {at}"))),
    }
}

/// The first bytes of a package chunk, through its header (read block by
/// block and stopped there).
fn read_header_bytes(container: &Container, index: usize, layout: ZenLayout) -> Result<Vec<u8>> {
    struct HeaderSink {
        data: Vec<u8>,
        layout: ZenLayout,
        need: Option<usize>,
    }
    impl Write for HeaderSink {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.data.extend_from_slice(buf);
            if self.need.is_none() && self.data.len() >= ZenSummary::size(self.layout) {
                let mut r = crate::binary::Reader::new(&self.data);
                if let Ok(summary) = ZenSummary::read(&mut r, self.layout) {
                    self.need = Some(summary.header_size as usize);
                }
            }
            match self.need {
                Some(need) if self.data.len() >= need => Err(std::io::Error::other("header read")),
                _ => Ok(buf.len()),
            }
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut sink = HeaderSink {
        data: Vec::new(),
        layout,
        need: None,
    };
    let result = container.read_chunk_to(index, &mut sink);
    match (sink.need, result) {
        (Some(need), _) if sink.data.len() >= need => {
            sink.data.truncate(need);
            Ok(sink.data)
        }
        (_, Ok(_)) => Ok(sink.data),
        (_, Err(e)) => Err(e),
    }
}

/// What the bundle graph needs of one 5.0–5.2 package.
struct PackageBundles {
    id: u64,
    name: String,
    bundle_count: usize,
    /// (from bundle, to bundle).
    internal: Vec<(u32, u32)>,
    /// (package id, public export hash, command, to bundle).
    external: Vec<(u64, u64, ExportCommand, u32)>,
    /// (public export hash, command) → bundle, sorted.
    public: Vec<((u64, ExportCommand), u32)>,
}

impl PackageBundles {
    fn new(id: u64, package: &ZenPackage, imported_packages: &[u64]) -> Self {
        let bundle_count = package.export_bundle_headers.len();
        let mut bundle_of = BTreeMap::new();
        for (bundle, h) in package.export_bundle_headers.iter().enumerate() {
            let first = h.first_entry_index as usize;
            let end = first.saturating_add(h.entry_count as usize);
            for e in package
                .export_bundle_entries
                .get(first..end)
                .unwrap_or_default()
            {
                bundle_of.insert((e.export_index as usize, e.command), bundle as u32);
            }
        }
        let public = bundle_of
            .iter()
            .filter_map(|(&(export, command), &bundle)| {
                let hash = package.exports.get(export)?.public_export_hash;
                (hash != 0).then_some(((hash, command), bundle))
            })
            .collect::<BTreeMap<_, _>>()
            .into_iter()
            .collect();
        let in_range = |b: i32| (b >= 0 && (b as usize) < bundle_count).then_some(b as u32);
        let internal = package
            .internal_arcs
            .iter()
            .filter_map(|a| Some((in_range(a.from_bundle)?, in_range(a.to_bundle)?)))
            .collect();
        let mut external = Vec::new();
        for arc in package.external_arcs.iter().flatten() {
            let target = usize::try_from(arc.from_import)
                .ok()
                .and_then(|i| package.imports.get(i))
                .and_then(|i| i.package_import_parts())
                .and_then(|(p, h)| {
                    Some((
                        *imported_packages.get(p as usize)?,
                        *package.imported_public_export_hashes.get(h as usize)?,
                    ))
                });
            if let (Some((package_id, hash)), Some(to)) = (target, in_range(arc.to_bundle)) {
                external.push((package_id, hash, arc.from_command, to));
            }
        }
        PackageBundles {
            id,
            name: package.package_name(),
            bundle_count,
            internal,
            external,
            public,
        }
    }
}

/// The cycles of the container's bundle graph (a package's bundles load in
/// order, each after its internal and external arcs' sources), each as the
/// sorted names of the packages whose bundles it goes through.
fn bundle_cycles(packages: &[PackageBundles]) -> Vec<Vec<String>> {
    let mut base = Vec::with_capacity(packages.len() + 1);
    let mut total = 0usize;
    for p in packages {
        base.push(total);
        total += p.bundle_count;
    }
    base.push(total);
    let by_id: BTreeMap<u64, usize> = packages
        .iter()
        .enumerate()
        .map(|(i, p)| (p.id, i))
        .collect();
    let mut edges: Vec<(usize, usize)> = Vec::new();
    for (i, p) in packages.iter().enumerate() {
        let node = |b: u32| base[i] + b as usize;
        edges.extend((1..p.bundle_count).map(|b| (base[i] + b - 1, base[i] + b)));
        edges.extend(p.internal.iter().map(|&(f, t)| (node(f), node(t))));
        for &(id, hash, command, to) in &p.external {
            let Some(&q) = by_id.get(&id) else { continue };
            let found = packages[q]
                .public
                .binary_search_by_key(&(hash, command), |(k, _)| *k);
            if let Ok(at) = found {
                edges.push((base[q] + packages[q].public[at].1 as usize, node(to)));
            }
        }
    }
    edges.sort_unstable();
    edges.dedup();
    let mut first = vec![0usize; total + 1];
    for &(from, _) in &edges {
        first[from + 1] += 1;
    }
    for n in 0..total {
        first[n + 1] += first[n];
    }
    let targets: Vec<usize> = edges.into_iter().map(|(_, to)| to).collect();
    let package_of = |node: usize| base.partition_point(|&b| b <= node) - 1;
    strongly_connected(total, &first, &targets)
        .into_iter()
        .map(|component| {
            let mut names: Vec<String> = component
                .iter()
                .map(|&n| packages[package_of(n)].name.clone())
                .collect();
            names.sort();
            names.dedup();
            names
        })
        .collect()
}

/// Tarjan's strongly connected components with more than one node
/// (iterative), each sorted; in node order of their smallest node.
fn strongly_connected(total: usize, first: &[usize], targets: &[usize]) -> Vec<Vec<usize>> {
    const UNSEEN: usize = usize::MAX;
    let mut index = vec![UNSEEN; total];
    let mut low = vec![0usize; total];
    let mut on_stack = vec![false; total];
    let mut stack = Vec::new();
    let mut next = 0;
    let mut out = Vec::new();
    for root in 0..total {
        if index[root] != UNSEEN {
            continue;
        }
        // (node, next edge to follow)
        let mut path = vec![(root, first[root])];
        index[root] = next;
        low[root] = next;
        next += 1;
        stack.push(root);
        on_stack[root] = true;
        while let Some(&mut (node, ref mut edge)) = path.last_mut() {
            if *edge < first[node + 1] {
                let to = targets[*edge];
                *edge += 1;
                if index[to] == UNSEEN {
                    index[to] = next;
                    low[to] = next;
                    next += 1;
                    stack.push(to);
                    on_stack[to] = true;
                    path.push((to, first[to]));
                } else if on_stack[to] {
                    low[node] = low[node].min(index[to]);
                }
                continue;
            }
            path.pop();
            if let Some(&(parent, _)) = path.last() {
                low[parent] = low[parent].min(low[node]);
            }
            if low[node] == index[node] {
                let mut component = Vec::new();
                while let Some(n) = stack.pop() {
                    on_stack[n] = false;
                    component.push(n);
                    if n == node {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort_unstable();
                    out.push(component);
                }
            }
        }
    }
    out.sort();
    out
}
