//! Stage 3, load order: each export's preload dependencies as commands
//! (`FPackageStoreOptimizer::ProcessPreloadDependencies`) and one order of
//! all (export, create/serialize) commands that respects them
//! (`SortExportGraphNodesInLoadOrder`).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::error::{Error, Result};
use crate::legacy::PackageIndex;
use crate::version::ZenLayout;

use super::super::records::ExportCommand;
use super::source::SourcePackage;

/// A node of the export load graph: one command of one export.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(super) struct Node {
    pub(crate) export: usize,
    pub(crate) command: ExportCommand,
}

impl Node {
    /// Position in a per-node table (two per export).
    pub(crate) fn slot(self) -> usize {
        self.export * 2 + self.command as usize
    }
}

/// A dependency of a node: a command on an import or export.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) struct Dependency {
    pub(crate) index: PackageIndex,
    pub(crate) command: ExportCommand,
}

/// Each export's dependencies: (of its create, of its serialize).
pub(super) type ExportDependencies = Vec<(Vec<Dependency>, Vec<Dependency>)>;

/// For each export: (create dependencies, serialize dependencies) in the
/// order the optimizer lists them: create-before-create, then
/// serialize-before-create; and create-before-serialize, then
/// serialize-before-serialize.
pub(super) fn preload_dependencies(source: &SourcePackage) -> Result<ExportDependencies> {
    let mut out = Vec::with_capacity(source.exports.len());
    let deps = &source.preload_dependencies;
    for (i, e) in source.exports.iter().enumerate() {
        let within = |err: Error| err.within(format!("export {i}"));
        let mut create = Vec::new();
        let mut serialize = Vec::new();
        if e.first_export_dependency >= 0 {
            // Stored order: S-before-S, C-before-S, S-before-C, C-before-C.
            let counts = [
                e.serialize_before_serialize,
                e.create_before_serialize,
                e.serialize_before_create,
                e.create_before_create,
            ];
            if counts.iter().any(|&c| c < 0) {
                return Err(within(Error::invalid("negative preload dependency count")));
            }
            let mut start = e.first_export_dependency as usize;
            let mut ranges = Vec::with_capacity(4);
            for count in counts {
                let end = start + count as usize;
                if end > deps.len() {
                    return Err(within(Error::invalid(format!(
                        "preload dependencies {}..{end} are past the end of the list ({})",
                        e.first_export_dependency,
                        deps.len()
                    ))));
                }
                ranges.push(start..end);
                start = end;
            }
            // (waits before serialize?, on which command of the dependency, its list)
            let groups = [
                (false, ExportCommand::Create, &ranges[3]),
                (false, ExportCommand::Serialize, &ranges[2]),
                (true, ExportCommand::Create, &ranges[1]),
                (true, ExportCommand::Serialize, &ranges[0]),
            ];
            for (before_serialize, command, range) in groups {
                let list = if before_serialize {
                    &mut serialize
                } else {
                    &mut create
                };
                for &index in &deps[range.clone()] {
                    if index.is_null() {
                        return Err(within(Error::invalid("a preload dependency is null")));
                    }
                    index
                        .check(source.imports.len(), source.exports.len())
                        .map_err(|m| within(Error::invalid(format!("preload dependency: {m}"))))?;
                    list.push(Dependency { index, command });
                }
            }
        }
        out.push((create, serialize));
    }
    Ok(out)
}

/// Priority of a ready command in the load order: (not public, command, tie-break).
type ReadyKey = (bool, ExportCommand, usize);

/// Orders all export commands so that every command comes after the
/// export commands it depends on (a serialize always after its own create).
/// Among the commands that are ready, UE5 takes public exports first, then
/// creates before serializes, then the lowest export index; UE4 takes the
/// lowest (export index, command).
pub(super) fn load_order(
    deps: &ExportDependencies,
    layout: ZenLayout,
    is_public: &dyn Fn(usize) -> bool,
) -> Result<Vec<Node>> {
    let export_count = deps.len();
    let total = export_count * 2;
    let mut incoming = vec![0usize; total];
    let mut dependants: Vec<Vec<Node>> = vec![Vec::new(); total];
    for (export, (create, serialize)) in deps.iter().enumerate() {
        let own_create = Node {
            export,
            command: ExportCommand::Create,
        };
        let own_serialize = Node {
            export,
            command: ExportCommand::Serialize,
        };
        let mut edges: Vec<(Node, Node)> = vec![(own_create, own_serialize)];
        for (list, to) in [(create, own_create), (serialize, own_serialize)] {
            for d in list {
                if let Some(from) = d.index.export() {
                    edges.push((
                        Node {
                            export: from,
                            command: d.command,
                        },
                        to,
                    ));
                }
            }
        }
        for (from, to) in edges {
            dependants[from.slot()].push(to);
            incoming[to.slot()] += 1;
        }
    }
    let key = |n: Node| -> ReadyKey {
        match layout {
            ZenLayout::Ue4 => (false, ExportCommand::Create, n.slot()),
            _ => (!is_public(n.export), n.command, n.export),
        }
    };
    let mut ready: BinaryHeap<Reverse<(ReadyKey, Node)>> = BinaryHeap::new();
    for export in 0..export_count {
        for command in [ExportCommand::Create, ExportCommand::Serialize] {
            let n = Node { export, command };
            if incoming[n.slot()] == 0 {
                ready.push(Reverse((key(n), n)));
            }
        }
    }
    let mut order = Vec::with_capacity(total);
    while let Some(Reverse((_, n))) = ready.pop() {
        order.push(n);
        for &to in &dependants[n.slot()] {
            incoming[to.slot()] -= 1;
            if incoming[to.slot()] == 0 {
                ready.push(Reverse((key(to), to)));
            }
        }
    }
    if order.len() != total {
        return Err(Error::invalid(
            "preload dependencies form a cycle; the exports cannot be ordered",
        ));
    }
    Ok(order)
}
