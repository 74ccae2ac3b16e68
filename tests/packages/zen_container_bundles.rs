//! 5.0–5.2 export bundles through the binary (issue 24): `zenpak build`
//! lays out the container's bundles with the engine's container-wide pass
//! (Clay at 5.1: 177 bundles, 10 packages split), `zenpak convert` keeps
//! the per-package rule, and `zenpak verify` warns (`bundle-cycle`) about a
//! container whose bundles depend on each other in a circle, as the Clay
//! packages laid out one by one do.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use zenpak::iostore::chunk::ChunkType;
use zenpak::iostore::{Container, ContainerBuilder, ContainerOptions};
use zenpak::legacy::PackageFiles;
use zenpak::zen::{optimize_export_bundles, ConvertedPackage};
use zenpak::EngineVersion;

fn clay_root(corpus: &Path) -> PathBuf {
    corpus.join("uassetapi/TestManyAssets/Clay")
}

/// The Clay packages (the game's `.uasset`/`.umap` files, read in place).
fn clay_headers(corpus: &Path) -> Vec<PathBuf> {
    let root = clay_root(corpus);
    common::legacy_packages(corpus)
        .into_iter()
        .filter(|(p, _)| p.starts_with(&root))
        .map(|(p, _)| p)
        .collect()
}

/// The library's conversion of every Clay package at 5.1, by package id.
fn clay_converted(corpus: &Path, container_wide: bool) -> BTreeMap<u64, ConvertedPackage> {
    let engine = EngineVersion::UE5_1;
    let mut packages: Vec<ConvertedPackage> = clay_headers(corpus)
        .iter()
        .map(|path| {
            let files = PackageFiles::load(path).unwrap();
            let legacy = files.read_package(Some(engine)).unwrap();
            zenpak::zen::convert(&files, &legacy, engine, "").unwrap()
        })
        .collect();
    if container_wide {
        optimize_export_bundles(&mut packages).unwrap();
    }
    packages.into_iter().map(|c| (c.package_id, c)).collect()
}

/// A mod around the Clay game's content, read in place.
fn write_manifest(dir: &Path, root: &Path) {
    let text = format!(
        "[mod]\nname = \"ClayMod\"\nversion = \"1.0.0\"\n[game]\nengine = \"5.1\"\nproject = \"Clay\"\n\
         [content]\nroot = {root:?}\nexclude = [\"**/*.usmap\"]\n",
        root = root.to_string_lossy()
    );
    std::fs::write(dir.join("mod.toml"), text).unwrap();
}

fn build(dir: &Path, extra: &[&str], threads: &str) {
    let out = common::run_command(
        common::command(None, &[])
            .current_dir(dir)
            .env("RAYON_NUM_THREADS", threads)
            .args([
                "build",
                "--manifest-path",
                dir.join("mod.toml").to_str().unwrap(),
            ])
            .args(extra),
    );
    out.ok();
}

/// `zenpak verify --json`: exit code and the report.
fn verify(utoc: &Path) -> (Option<i32>, serde_json::Value) {
    let out = common::run_command(common::command(None, &[]).args([
        "verify",
        "--json",
        utoc.to_str().unwrap(),
    ]));
    let report = serde_json::from_str(&out.stdout)
        .unwrap_or_else(|e| panic!("verify output is not JSON ({e}): {}", out.stderr));
    (Some(out.code), report)
}

fn codes(report: &serde_json::Value, list: &str) -> Vec<String> {
    report[list]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["code"].as_str().unwrap().to_string())
        .collect()
}

/// Each package chunk of a container, and its store entry's bundle count, by package id.
fn container_packages(utoc: &Path) -> BTreeMap<u64, (Vec<u8>, i32)> {
    let container = Container::open(utoc, None).unwrap();
    let header = container.container_header().unwrap().unwrap();
    let entries: BTreeMap<u64, i32> = header
        .packages
        .iter()
        .map(|(id, e)| (*id, e.export_bundle_count))
        .collect();
    (0..container.toc.chunk_ids.len())
        .filter(|&i| container.chunk_type(i) == ChunkType::ExportBundleData)
        .map(|i| {
            let id = container.toc.chunk_ids[i].id();
            (id, (container.read_chunk(i).unwrap(), entries[&id]))
        })
        .collect()
}

/// Bundles in all, and packages with more than one.
fn bundle_counts(packages: &BTreeMap<u64, (Vec<u8>, i32)>) -> (i32, usize) {
    let total = packages.values().map(|(_, n)| n).sum();
    let split = packages.values().filter(|(_, n)| *n > 1).count();
    (total, split)
}

/// Clay built at 5.1: every package chunk is the one the engine's
/// container-wide pass gives (177 bundles, 10 packages split), `verify`
/// finds no bundle cycle, and the bytes do not depend on the thread count.
#[test]
fn clay_built_at_5_1_has_the_engines_container_bundles() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let expected = clay_converted(&corpus, true);
    let dir = tempfile::tempdir().unwrap();
    write_manifest(dir.path(), &clay_root(&corpus));
    build(dir.path(), &[], "2");
    let utoc = dir.path().join("target/ClayMod_P.utoc");
    let built = container_packages(&utoc);
    assert_eq!(built.len(), 167);
    assert_eq!(bundle_counts(&built), (177, 10));
    for (id, (chunk, bundles)) in &built {
        let c = &expected[id];
        assert!(
            chunk == &c.package_bytes,
            "{}: chunk differs from the container-wide pass",
            c.package_name
        );
        assert_eq!(*bundles, c.store_entry.export_bundle_count);
    }
    let (code, report) = verify(&utoc);
    assert_eq!(code, Some(0), "{report}");
    assert!(!codes(&report, "warnings").contains(&"bundle-cycle".to_string()));

    // Same input, another thread count, forced and `--release`: same bytes.
    let ucas = std::fs::read(dir.path().join("target/ClayMod_P.ucas")).unwrap();
    let toc = std::fs::read(&utoc).unwrap();
    build(dir.path(), &["--force", "--release"], "1");
    assert!(std::fs::read(dir.path().join("target/ClayMod_P.ucas")).unwrap() == ucas);
    assert!(std::fs::read(&utoc).unwrap() == toc);
    // Up to date from the cache: still the same.
    build(dir.path(), &[], "3");
    assert!(std::fs::read(dir.path().join("target/ClayMod_P.ucas")).unwrap() == ucas);
}

/// A development build that extends the previous `.ucas`: removing a
/// package caught in an import cycle changes the bundles of packages whose
/// files did not change; they are laid out again, not kept.
#[test]
fn clay_development_build_relays_packages_whose_bundles_change() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let content = dir.path().join("content");
    let root = clay_root(&corpus);
    for header in clay_headers(&corpus) {
        let relative = header.parent().unwrap().strip_prefix(&root).unwrap();
        let to = content.join(relative);
        std::fs::create_dir_all(&to).unwrap();
        let stem = header.file_stem().unwrap().to_string_lossy().into_owned();
        for entry in std::fs::read_dir(header.parent().unwrap()).unwrap() {
            let path = entry.unwrap().path();
            if path
                .file_stem()
                .is_some_and(|s| s.to_string_lossy() == stem)
            {
                std::fs::copy(&path, to.join(path.file_name().unwrap())).unwrap();
            }
        }
    }
    write_manifest(dir.path(), &content);
    build(dir.path(), &[], "2");
    let utoc = dir.path().join("target/ClayMod_P.utoc");
    assert_eq!(bundle_counts(&container_packages(&utoc)), (177, 10));

    // Boomerang is split by the pass; without it, the game's cycles change.
    let boomerang = content.join("Clay/Content/FirstPerson/Blueprints/Boomerang");
    for ext in ["uasset", "uexp"] {
        std::fs::remove_file(boomerang.with_extension(ext)).unwrap();
    }
    let out = common::run_command(common::command(None, &[]).current_dir(dir.path()).args([
        "build",
        "--message-format",
        "json",
    ]));
    let summary = out.ok().line_of("build-finished");
    assert_eq!(summary["layout"], "extended", "{summary}");

    // What the pass gives the 166 packages that remain.
    let engine = EngineVersion::UE5_1;
    let mut expected: Vec<ConvertedPackage> = clay_headers(&corpus)
        .iter()
        .filter(|p| !p.ends_with("FirstPerson/Blueprints/Boomerang.uasset"))
        .map(|path| {
            let files = PackageFiles::load(path).unwrap();
            let legacy = files.read_package(Some(engine)).unwrap();
            zenpak::zen::convert(&files, &legacy, engine, "").unwrap()
        })
        .collect();
    let alone: BTreeMap<u64, Vec<u8>> = expected
        .iter()
        .map(|c| (c.package_id, c.package_bytes.clone()))
        .collect();
    optimize_export_bundles(&mut expected).unwrap();
    let built = container_packages(&utoc);
    assert_eq!(built.len(), 166);
    let mut relaid = 0;
    for c in &expected {
        assert!(
            built[&c.package_id].0 == c.package_bytes,
            "{}: chunk differs from the container-wide pass",
            c.package_name
        );
        relaid += usize::from(alone[&c.package_id] != c.package_bytes);
    }
    assert!(relaid > 0);
    let (code, report) = verify(&utoc);
    assert_eq!(code, Some(0), "{report}");
    assert!(!codes(&report, "warnings").contains(&"bundle-cycle".to_string()));
}

/// `zenpak convert` lays out a package alone: one bundle with its whole
/// load order, the library's per-package result, byte for byte.
#[test]
fn clay_packages_converted_alone_keep_the_per_package_rule() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let alone = clay_converted(&corpus, false);
    let dir = tempfile::tempdir().unwrap();
    let root = clay_root(&corpus);
    for name in ["Boomerang", "BP_FirstPersonGameMode"] {
        let path = root.join(format!("Clay/Content/FirstPerson/Blueprints/{name}.uasset"));
        let target = dir.path().join(format!("{name}.uzenasset"));
        let out = common::run_command(
            common::command(None, &[])
                .args(["convert", path.to_str().unwrap(), "--engine", "5.1", "-o"])
                .arg(&target),
        );
        out.ok();
        let bytes = std::fs::read(&target).unwrap();
        let package = zenpak::zen::ZenPackage::read(&bytes, EngineVersion::UE5_1).unwrap();
        assert_eq!(package.export_bundle_headers.len(), 1, "{name}");
        let id = zenpak::hash::package_id(&package.package_name());
        assert!(bytes == alone[&id].package_bytes, "{name}");
    }
}

/// The Clay packages laid out one by one and written with the container
/// writer: their bundles wait for each other in a circle, which `verify`
/// reports as a warning naming the packages (exit 0: a warning).
#[test]
fn verify_warns_about_a_bundle_cycle() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let root = clay_root(&corpus);
    let dir = tempfile::tempdir().unwrap();
    let engine = EngineVersion::UE5_1;
    let mut builder = ContainerBuilder::create(
        dir.path(),
        "ClayAlone_P",
        engine,
        ContainerOptions::default(),
    )
    .unwrap();
    for path in clay_headers(&corpus) {
        let files = PackageFiles::load(&path).unwrap();
        let legacy = files.read_package(Some(engine)).unwrap();
        let c = zenpak::zen::convert(&files, &legacy, engine, "").unwrap();
        let relative = path
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        builder
            .add_package(
                c.package_id,
                &c.package_bytes,
                c.store_entry.clone(),
                &relative,
            )
            .unwrap();
    }
    builder.finish().unwrap();
    let (code, report) = verify(&dir.path().join("ClayAlone_P.utoc"));
    assert_eq!(code, Some(0), "{report}");
    let cycles: Vec<&serde_json::Value> = report["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == "bundle-cycle")
        .collect();
    assert!(!cycles.is_empty(), "{report}");
    let named = cycles.iter().any(|d| {
        d["message"]
            .as_str()
            .unwrap()
            .contains("/Game/FirstPerson/Blueprints/Boomerang")
    });
    assert!(named, "{report}");
}

/// Whether a diagnostic is the error of a looping outer chain at `export N`.
fn is_outer_loop(d: &serde_json::Value, export: &str) -> bool {
    d["level"] == "error"
        && d["code"] == "format"
        && d["structure"]
            .as_array()
            .is_some_and(|s| s.iter().any(|p| p == export))
}

/// An export whose outer chain loops (export 0's outer is export 1, and
/// export 1's outer is export 0) is refused by `check` and `build` (exit
/// 1, a format error at `export N`, no container written), and a container
/// holding such a Zen package fails `verify`.
#[test]
fn export_outer_cycles_are_refused() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let root = clay_root(&corpus);
    let relative = "Clay/Content/FirstPerson/Blueprints/BP_FirstPersonGameMode";
    let source = root.join(format!("{relative}.uasset"));
    let engine = EngineVersion::UE5_1;
    let files = PackageFiles::load(&source).unwrap();
    let mut legacy = files.read_package(Some(engine)).unwrap();
    assert!(legacy.exports.len() >= 2);
    legacy.exports[0].outer_index = zenpak::legacy::PackageIndex(2);
    legacy.exports[1].outer_index = zenpak::legacy::PackageIndex(1);

    let dir = tempfile::tempdir().unwrap();
    let content = dir.path().join("content");
    let target = content.join(relative);
    std::fs::create_dir_all(target.parent().unwrap()).unwrap();
    std::fs::write(target.with_extension("uasset"), legacy.write().unwrap()).unwrap();
    std::fs::copy(source.with_extension("uexp"), target.with_extension("uexp")).unwrap();
    write_manifest(dir.path(), &content);

    for command in ["check", "build"] {
        let out = common::run_command(common::command(None, &[]).current_dir(dir.path()).args([
            command,
            "--message-format",
            "json",
        ]));
        out.assert_code_for(1, command);
        let diagnostics = out.lines_of("diagnostic");
        assert!(
            diagnostics
                .iter()
                .any(|d| is_outer_loop(d, "export 0") || is_outer_loop(d, "export 1")),
            "{command}: {diagnostics:?}"
        );
    }
    assert!(!dir.path().join("target/ClayMod_P.utoc").exists());

    // The same loop in a Zen package inside a container.
    let good = PackageFiles::load(&source).unwrap();
    let mut converted =
        zenpak::zen::convert(&good, &good.read_package(Some(engine)).unwrap(), engine, "").unwrap();
    let package = &mut converted.package;
    package.exports[0].outer_index = zenpak::zen::PackageObjectIndex::export(1);
    package.exports[1].outer_index = zenpak::zen::PackageObjectIndex::export(0);
    let bytes = package.write();
    let out_dir = dir.path().join("zen");
    std::fs::create_dir_all(&out_dir).unwrap();
    let mut builder =
        ContainerBuilder::create(&out_dir, "Loop_P", engine, ContainerOptions::default()).unwrap();
    builder
        .add_package(
            converted.package_id,
            &bytes,
            converted.store_entry.clone(),
            &format!("{relative}.uasset"),
        )
        .unwrap();
    builder.finish().unwrap();
    let (code, report) = verify(&out_dir.join("Loop_P.utoc"));
    assert_eq!(code, Some(1), "{report}");
    let errors = report["errors"].as_array().unwrap();
    assert!(
        errors
            .iter()
            .any(|d| is_outer_loop(d, "export 0") || is_outer_loop(d, "export 1")),
        "{report}"
    );
}
