//! The property codec on every corpus package: each export read into a
//! tree, through JSON and back, writes the export's bytes again; and the
//! share of exports the codec decodes (not kept as an opaque run) is pinned
//! per game, so that a change in what it can read is seen.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use zenpak::legacy::PackageFiles;
use zenpak::mappings::Mappings;
use zenpak::properties::codec::json::{ExportTreeSeed, Schemas};
use zenpak::properties::tree::{Block, ExportData, SharedNames, StructBody, Value};
use zenpak::properties::{
    export_class_name, mappings_with_content_schemas, Codec, PackageContext, SchemaSources,
};
use zenpak::EngineVersion;

#[derive(Default, Debug, Clone, Copy, PartialEq, Eq)]
struct Counts {
    packages: usize,
    exports: usize,
    decoded: usize,
    /// Decoded with no byte run left inside the properties (the native tail aside).
    fully: usize,
    /// DataTable, StringTable and UserDefinedEnum exports, and those whose
    /// rows, table or entries are decoded.
    tables: usize,
    tables_decoded: usize,
}

/// The packages the codec is tried on: the uassetapi games with their
/// mappings, the 4.27 tagged packages (not in `engines.tsv`), the retoc
/// pairs' legacy packages and the example mod.
pub(crate) fn packages(corpus: &Path) -> Vec<(String, PathBuf, EngineVersion)> {
    let mut out: Vec<(String, PathBuf, EngineVersion)> = common::legacy_packages(corpus)
        .into_iter()
        .map(|(path, engine)| {
            let rel = path.strip_prefix(corpus).unwrap();
            let parts: Vec<_> = rel.iter().map(|p| p.to_string_lossy()).collect();
            let game = if parts[0] == "uassetapi" {
                format!("{}/{}", parts[1], parts[2])
            } else {
                format!("{}/{}", parts[0], parts[1])
            };
            (game, path, engine)
        })
        .collect();
    for path in common::files_with_ext(
        &corpus.join("uassetapi/TestJson/UE4.27"),
        &["uasset", "umap"],
    ) {
        out.push(("TestJson/UE4.27".to_string(), path, EngineVersion::UE4_27));
    }
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/hello-mod/Cooked");
    for path in common::files_with_ext(&example, &["uasset", "umap"]) {
        out.push(("example/hello-mod".to_string(), path, EngineVersion::UE5_6));
    }
    out
}

fn has_opaque(v: &Value) -> bool {
    match v {
        Value::Opaque(_) => true,
        Value::Struct(s) => match &s.body {
            StructBody::Block(b) => block_has_opaque(b),
            StructBody::Native(_) => true,
            _ => false,
        },
        Value::Array(items) | Value::StructArray { items, .. } => items.iter().any(has_opaque),
        Value::Set { removed, items } => removed.iter().chain(items).any(has_opaque),
        Value::Map { removed, entries } => {
            removed.iter().any(has_opaque)
                || entries.iter().any(|(k, v)| has_opaque(k) || has_opaque(v))
        }
        Value::Optional(Some(v)) => has_opaque(v),
        _ => false,
    }
}

fn block_has_opaque(b: &Block) -> bool {
    match b {
        Block::Unversioned { properties, .. } => properties
            .iter()
            .filter_map(|p| p.value.as_ref())
            .any(has_opaque),
        Block::Tagged { properties } => properties.iter().any(|p| has_opaque(&p.value)),
    }
}

#[test]
fn every_corpus_export_round_trips_through_the_tree_and_json() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let mut cache: BTreeMap<PathBuf, Mappings> = BTreeMap::new();
    let mut table: BTreeMap<String, Counts> = BTreeMap::new();
    let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
    for (game, path, engine) in packages(&corpus) {
        let files = PackageFiles::load(&path).unwrap();
        let package = files.read_package(Some(engine)).unwrap();
        let usmap = common::mappings_for(&path, &mut cache);
        let mappings = usmap.as_ref().map(|p| &cache[p]);
        // Schemas defined in content: the package's own, and those of the
        // packages beside it (the corpus keeps each game's content together).
        let own_name = package.package_name().map_or_else(
            || path.file_stem().unwrap().to_string_lossy().into_owned(),
            str::to_string,
        );
        let sources = SchemaSources::beside(&path);
        let extra = mappings
            .and_then(|m| mappings_with_content_schemas(&files, &package, &own_name, m, &sources));
        let mappings = mappings.map(|m| m.view(extra.as_ref()));
        let cx = PackageContext::of(&package);
        let codec = Codec::new(&cx, mappings);
        let counts = table.entry(game).or_default();
        counts.packages += 1;
        for index in 0..package.exports.len() {
            let data = files.export_data(&package, index).unwrap();
            let class = export_class_name(&package, index).unwrap();
            let base = package.exports[index].serial_offset as u64;
            let read = codec.read_export(data, base, &class);
            counts.exports += 1;
            if ["DataTable", "StringTable", "UserDefinedEnum"].contains(&class.as_str()) {
                counts.tables += 1;
                if let ExportData::Decoded(tree) = &read {
                    if tree.rows.is_some()
                        || tree.string_table.is_some()
                        || tree.enumeration.is_some()
                    {
                        counts.tables_decoded += 1;
                    } else {
                        eprintln!("table not decoded: {} export {index}", path.display());
                    }
                }
            }
            let rel = path.strip_prefix(&corpus).unwrap_or(&path).display();
            // Written back as it is, and through JSON.
            let written = codec.write_export_data(&read, &class).unwrap();
            assert!(
                written == data,
                "{rel} export {index}: written bytes differ"
            );
            if let ExportData::Decoded(tree) = &read {
                use serde::de::DeserializeSeed;
                let json = serde_json::to_string(tree).unwrap();
                let names = SharedNames::default();
                let seed = ExportTreeSeed {
                    s: Schemas {
                        mappings,
                        names: &names,
                        engine,
                        unversioned: cx.unversioned,
                    },
                    class: &class,
                };
                let back = seed
                    .deserialize(&mut serde_json::Deserializer::from_str(&json))
                    .unwrap_or_else(|e| {
                        panic!("{rel} export {index}: JSON does not read back: {e}")
                    });
                assert_eq!(
                    &back, &**tree,
                    "{rel} export {index}: JSON changes the tree"
                );
                let again = codec.write_export(&back, &class).unwrap();
                assert!(
                    again == data,
                    "{rel} export {index}: bytes differ after JSON"
                );
            }
            match &read {
                ExportData::Decoded(tree) => {
                    counts.decoded += 1;
                    if !block_has_opaque(&tree.properties) {
                        counts.fully += 1;
                    }
                }
                ExportData::Opaque { reason, .. } => {
                    let short: String = reason
                        .split(": ")
                        .last()
                        .unwrap_or(reason)
                        .chars()
                        .take(100)
                        .collect();
                    *reasons.entry(format!("{class}: {short}")).or_default() += 1;
                }
            }
        }
    }
    let mut total = Counts::default();
    eprintln!(
        "{:<36} {:>8} {:>8} {:>8} {:>8} {:>7} {:>7}",
        "game", "packages", "exports", "decoded", "fully", "tables", "decoded"
    );
    for (game, c) in &table {
        eprintln!(
            "{game:<36} {:>8} {:>8} {:>8} {:>8} {:>7} {:>7}",
            c.packages, c.exports, c.decoded, c.fully, c.tables, c.tables_decoded
        );
        total.packages += c.packages;
        total.exports += c.exports;
        total.decoded += c.decoded;
        total.fully += c.fully;
        total.tables += c.tables;
        total.tables_decoded += c.tables_decoded;
    }
    eprintln!(
        "{:<36} {:>8} {:>8} {:>8} {:>8} {:>7} {:>7}",
        "all",
        total.packages,
        total.exports,
        total.decoded,
        total.fully,
        total.tables,
        total.tables_decoded
    );
    for (reason, n) in &reasons {
        eprintln!("opaque {n:>4}: {reason}");
    }
    assert!(total.exports > 0);
    // Pinned: a change is a change in what the codec reads, to be explained
    // in `src/properties/mod.rs` (section "Tests"). Every uassetapi export
    // the property walker steps over is decoded; the ones kept opaque are
    // those it skips (native structs whose layout is unknown, one schema in
    // a package the corpus lacks), two 4.27 class exports, and the retoc
    // pairs' packages, which have no mappings in the corpus. Schemas
    // defined in the packages beside (blueprint parents, components'
    // classes, user-defined structs) decode 13 exports more.
    let uassetapi: (usize, usize) = table
        .iter()
        .filter(|(game, _)| game.starts_with("Test"))
        .fold((0, 0), |(e, d), (_, c)| (e + c.exports, d + c.decoded));
    assert_eq!(uassetapi, (2172, 2139), "uassetapi exports, decoded");
    // Every DataTable, StringTable and UserDefinedEnum has its rows, its
    // table or its entries decoded.
    assert_eq!(
        (total.tables, total.tables_decoded),
        (12, 12),
        "DataTable and StringTable exports, with their tails decoded"
    );
    assert_eq!(
        (total.exports, total.decoded, total.fully),
        (2454, 2207, 1713),
        "all exports, decoded, decoded with no byte run inside"
    );
}
