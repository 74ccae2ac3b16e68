//! What must never ship (issue 26): a content root that is a cook's
//! `Saved/Cooked/<Platform>` folder carries the game's asset registry, the
//! cook's metadata, the engine's global shaders and content, the global
//! container, pipeline caches and the Zen store marker. `check` and `build`
//! refuse each file with a `never-ship` error; the exclude lines `check`
//! suggests make both pass.

use crate::build_incremental::corpus_mod;
use crate::common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Runs zenpak in `dir` with JSON messages.
fn run(dir: &Path, args: &[&str]) -> common::Run {
    common::run(Some(dir), &[&["--message-format", "json"], args].concat())
}

/// The files of the `never-ship` errors, relative to `root`.
fn never_ship_files(run: &common::Run, root: &Path) -> BTreeSet<String> {
    run.lines_of("diagnostic")
        .iter()
        .filter(|l| l["code"] == "never-ship")
        .map(|l| {
            assert_eq!(l["level"], "error", "{l}");
            assert!(l["hint"].is_string(), "{l}");
            let file = PathBuf::from(l["file"].as_str().unwrap())
                .canonicalize()
                .unwrap();
            file.strip_prefix(root.canonicalize().unwrap())
                .unwrap_or_else(|_| panic!("{} not under {}", file.display(), root.display()))
                .to_string_lossy()
                .replace('\\', "/")
        })
        .collect()
}

/// A mod whose content root is `<tmp>/Saved/Cooked/Windows`, holding the
/// three corpus packages plus what a cook writes beside them; returns the
/// repository, the content root and the files that must never ship.
fn cooked_mod(corpus: &Path, dir: &Path) -> (PathBuf, PathBuf, BTreeSet<String>) {
    let repo = corpus_mod(corpus, dir);
    let root = dir.join("Saved/Cooked/Windows");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::rename(repo.join("Cooked/Proj"), root.join("Proj")).unwrap();
    let manifest = repo.join("mod.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    let text = text.replace(
        "root = \"Cooked\"",
        "root = \"../Saved/Cooked/Windows\"\n# the cook's own files are refused",
    );
    std::fs::write(&manifest, text).unwrap();

    let copies = [
        (
            "retoc/UE5.4/ShaderArchive-Global-PCD3D_SM6-PCD3D_SM6.ushaderbytecode",
            "Proj/Content/ShaderArchive-Global-PCD3D_SM6-PCD3D_SM6.ushaderbytecode",
        ),
        ("peers/retoc/UE5.3-global/global.utoc", "global.utoc"),
        ("peers/retoc/UE5.3-global/global.ucas", "global.ucas"),
        (
            "retoc/UE5.6/SM_Cube.uasset",
            "Engine/Content/BasicShapes/SM_Cube.uasset",
        ),
        (
            "retoc/UE5.6/SM_Cube.uexp",
            "Engine/Content/BasicShapes/SM_Cube.uexp",
        ),
        (
            "retoc/UE5.6/SM_Cube.ubulk",
            "Engine/Content/BasicShapes/SM_Cube.ubulk",
        ),
    ];
    let written = [
        "Proj/AssetRegistry.bin",
        "Proj/Metadata/DevelopmentAssetRegistry.bin",
        "Proj/Metadata/CookedIniVersion.txt",
        "Proj/Metadata/ShaderLibrarySource/ShaderArchive-Proj-PCD3D_SM6.ushaderbytecode",
        "Proj/Content/PipelineCaches/Windows/Proj_PCD3D_SM6.stable.upipelinecache",
        "ue.projectstore",
    ];
    for (from, to) in copies {
        let to = root.join(to);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(corpus.join(from), to).unwrap();
    }
    for to in written {
        let to = root.join(to);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::write(to, b"cook output").unwrap();
    }
    // One error per file; a package's companions go with its header.
    let mut expected: BTreeSet<String> = copies
        .iter()
        .map(|(_, to)| to.to_string())
        .filter(|p| !p.ends_with(".uexp") && !p.ends_with(".ubulk"))
        .collect();
    expected.extend(written.iter().map(|p| p.to_string()));
    (repo, root, expected)
}

#[test]
fn a_cooked_platform_root_is_refused_until_excluded() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (repo, root, expected) = cooked_mod(&corpus, dir.path());

    let checked = run(&repo, &["check"]);
    checked.assert_code(1);
    assert_eq!(never_ship_files(&checked, &root), expected);
    let check = checked.line_of("check");
    assert_eq!(check["packages"], 3, "{check}");
    assert_eq!(check["problems"], expected.len(), "{check}");
    let suggested: Vec<String> = check["suggested_exclude"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap().to_string())
        .collect();
    let wanted: BTreeSet<&str> = [
        "Proj/AssetRegistry.bin",
        "Proj/Metadata/**",
        "**/ShaderArchive-Global-*",
        "**/global.*",
        "Engine/**",
        "**/*.upipelinecache",
        "**/ue.projectstore",
    ]
    .into_iter()
    .collect();
    assert_eq!(
        suggested
            .iter()
            .map(String::as_str)
            .collect::<BTreeSet<_>>(),
        wanted
    );

    let built = run(&repo, &["build"]);
    built.assert_code(1);
    assert_eq!(never_ship_files(&built, &root), expected);
    assert!(!repo.join("target/Repro_P.utoc").exists());

    // The suggested lines fix both.
    let manifest = repo.join("mod.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    let list = suggested
        .iter()
        .map(|p| format!("{p:?}"))
        .collect::<Vec<_>>()
        .join(", ");
    let text = text.replace("[content]\n", &format!("[content]\nexclude = [{list}]\n"));
    std::fs::write(&manifest, text).unwrap();
    let checked = run(&repo, &["check"]);
    checked.ok();
    assert!(never_ship_files(&checked, &root).is_empty());
    let finished = run(&repo, &["build"]).ok().line_of("build-finished");
    assert_eq!(finished["packages"], 3, "{finished}");
    assert_eq!(finished["loose_files"], 0, "{finished}");
}

/// Inside a cook root, `Engine/` content ships when an `include` pattern
/// starting with `Engine/` names it (an engine override on purpose).
#[test]
fn engine_content_ships_when_named() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("Map");
    let root = dir.path().join("Saved/Cooked/Windows");
    let maps = root.join("Engine/Content/Maps");
    std::fs::create_dir_all(&maps).unwrap();
    std::fs::create_dir_all(&repo).unwrap();
    let map = corpus.join("uassetapi/TestManyAssets/Clay/Engine/Content/Maps/Entry.umap");
    for ext in ["umap", "uexp"] {
        std::fs::copy(map.with_extension(ext), maps.join(format!("Entry.{ext}"))).unwrap();
    }
    let manifest = |content: &str| {
        std::fs::write(
            repo.join("mod.toml"),
            format!(
                "[mod]\nname = \"Map\"\nversion = \"1\"\n[game]\nengine = \"5.1\"\nproject = \"Clay\"\n\
                 [content]\nroot = \"../Saved/Cooked/Windows\"\n{content}"
            ),
        )
        .unwrap()
    };
    manifest("");
    let checked = run(&repo, &["check"]);
    checked.assert_code(1);
    assert_eq!(
        never_ship_files(&checked, &root),
        BTreeSet::from(["Engine/Content/Maps/Entry.umap".to_string()])
    );
    manifest("include = [\"Engine/Content/Maps/**\"]\n");
    let checked = run(&repo, &["check"]);
    let check = checked.ok().line_of("check");
    assert_eq!(check["packages"], 1, "{check}");
    assert!(never_ship_files(&checked, &root).is_empty());
}
