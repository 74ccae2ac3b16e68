//! End-to-end builds: mods made the way a user makes them (`zenpak new`,
//! cooked files copied in, `zenpak build`), read back with the container
//! and pak readers and compared with `zen::convert` of the same packages.

use crate::common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use zenpak::build::{build, BuildOptions, Silent};
use zenpak::iostore::Container;
use zenpak::legacy::PackageFiles;
use zenpak::manifest::Manifest;
use zenpak::pak::reader::PakReader;
use zenpak::scaffold::{write_mod, NewMod};
use zenpak::EngineVersion;

fn copy_package(header: &Path, to_dir: &Path) {
    std::fs::create_dir_all(to_dir).unwrap();
    let stem = header.file_stem().unwrap().to_string_lossy().into_owned();
    for entry in std::fs::read_dir(header.parent().unwrap()).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let is_companion = [".uasset", ".umap", ".uexp", ".ubulk", ".uptnl", ".m.ubulk"]
            .iter()
            .any(|ext| name == format!("{stem}{ext}"));
        if is_companion {
            std::fs::copy(&path, to_dir.join(&name)).unwrap();
        }
    }
}

/// `zenpak new`, copy every corpus package of one engine version into the
/// content root, build, and read the container back.
fn build_corpus_packages_for(corpus: &Path, engine: EngineVersion) {
    let packages: Vec<PathBuf> = common::complete_legacy_packages(corpus)
        .into_iter()
        .filter(|(_, v)| *v == engine)
        .map(|(p, _)| p)
        .collect();
    if packages.is_empty() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("CorpusMod");
    write_mod(
        &repo,
        &NewMod {
            name: "CorpusMod".into(),
            engine,
            project: "CorpusGame".into(),
            git: false,
        },
    )
    .unwrap();
    let mut expected = Vec::new();
    let mut seen_names = BTreeSet::new();
    for header in &packages {
        let file_name = header.file_name().unwrap().to_string_lossy().into_owned();
        let stem = header.file_stem().unwrap().to_string_lossy().into_owned();
        let files = PackageFiles::load(header).unwrap();
        let own_name = files
            .read_package(Some(engine))
            .unwrap()
            .package_name()
            .map(str::to_string);
        // A package that carries its name goes where that name says; the others get one
        // folder per corpus folder, so equal names from two sources do not clash.
        let (relative_dir, package_name) = match own_name {
            // A file renamed after cooking (UE5.3's Entry_MODIFIED_INVALID_ENUM_INDEX still says
            // `/Engine/Maps/Entry`) cannot be placed anywhere a game would load it from.
            Some(name) if !name.ends_with(&format!("/{stem}")) => continue,
            Some(name) => {
                let (mount, rest) = name[1..].split_once('/').unwrap();
                let folder = rest.rsplit_once('/').map_or("", |(f, _)| f);
                let root = if mount == "Game" {
                    "CorpusGame/Content".to_string()
                } else if mount == "Engine" {
                    "Engine/Content".to_string()
                } else {
                    format!("CorpusGame/Plugins/{mount}/Content")
                };
                let dir = if folder.is_empty() {
                    root
                } else {
                    format!("{root}/{folder}")
                };
                (dir, name)
            }
            None => {
                let source_folder = header.parent().unwrap().strip_prefix(corpus).unwrap();
                let folder = source_folder
                    .to_string_lossy()
                    .replace(['/', '\\', '.'], "_");
                (
                    format!("CorpusGame/Content/{folder}"),
                    format!("/Game/{folder}/{stem}"),
                )
            }
        };
        // Two corpus folders may hold the same asset (the 5.6 template's SM_Cube); a mod holds it once.
        if !seen_names.insert(package_name.to_ascii_lowercase()) {
            continue;
        }
        let to_dir = repo.join("Cooked").join(&relative_dir);
        copy_package(header, &to_dir);
        expected.push((
            to_dir.join(&file_name),
            format!("{relative_dir}/{file_name}"),
            package_name,
        ));
    }
    std::fs::create_dir_all(repo.join("Cooked/CorpusGame/Config")).unwrap();
    let ini = b"[/Script/EngineSettings.GeneralProjectSettings]\nProjectVersion=1.0\n";
    std::fs::write(repo.join("Cooked/CorpusGame/Config/DefaultGame.ini"), ini).unwrap();

    let manifest = Manifest::load(&repo.join("mod.toml")).unwrap();
    let summary = build(&manifest, &BuildOptions::default(), &Silent)
        .unwrap_or_else(|e| panic!("{engine}: build failed: {e}"));
    assert_eq!(summary.packages, expected.len());
    assert_eq!(summary.loose_files, 1);

    let utoc = repo.join("target/CorpusMod_P.utoc");
    let container = Container::open(&utoc, None).unwrap();
    let report = container.verify();
    assert!(
        report.errors.is_empty(),
        "{engine}: verify: {:?}",
        report.errors
    );
    let paths: BTreeSet<&str> = container.paths.values().collect();
    let header = container
        .container_header()
        .unwrap()
        .expect("container header");
    let store_ids: BTreeSet<u64> = header.packages.iter().map(|(id, _)| *id).collect();
    assert_eq!(
        header.packages.len(),
        expected.len(),
        "{engine}: one store entry per package"
    );

    // What `zenpak convert` makes of each package; for 5.0–5.2 laid out
    // together, as the engine lays out a container's bundles.
    let mut converted: Vec<zenpak::zen::ConvertedPackage> = expected
        .iter()
        .map(|(copied, _, package_name)| {
            let files = PackageFiles::load(copied).unwrap();
            let package = files.read_package(Some(engine)).unwrap();
            zenpak::zen::convert(&files, &package, engine, package_name).unwrap()
        })
        .collect();
    zenpak::zen::optimize_export_bundles(&mut converted).unwrap();
    for ((_, container_path, package_name), converted) in expected.iter().zip(&converted) {
        assert!(
            paths.contains(container_path.as_str()),
            "{engine}: {container_path} not in the directory index"
        );
        assert!(
            store_ids.contains(&converted.package_id),
            "{engine}: no store entry for {package_name}"
        );
        let index = container.find_path(container_path).unwrap();
        let chunk = container.read_chunk(index).unwrap();
        assert!(
            chunk == converted.package_bytes,
            "{engine}: {package_name}: chunk differs from `zenpak convert` (5.0–5.2: with the container-wide bundles)"
        );
    }

    let pak = PakReader::open(&repo.join("target/CorpusMod_P.pak"), None).unwrap();
    let entry = pak
        .entries
        .iter()
        .find(|e| e.path == "CorpusGame/Config/DefaultGame.ini")
        .expect("loose file in the pak");
    assert_eq!(pak.read(entry).unwrap(), ini);
}

#[test]
fn corpus_packages_build_into_containers_that_read_back() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    for engine in EngineVersion::ALL {
        build_corpus_packages_for(&corpus, engine);
    }
}

/// A real game's content as one mod: every package lands where its path says.
fn build_game_folder(
    root: &Path,
    project: &str,
    engine: EngineVersion,
    include: &[&str],
    expect_mounts: &[&str],
) {
    let dir = tempfile::tempdir().unwrap();
    let include: Vec<String> = include.iter().map(|g| format!("\"{g}\"")).collect();
    let manifest_text = format!(
        "[mod]\nname = \"{project}Mod\"\nversion = \"1.0.0\"\n[game]\nengine = \"{engine}\"\nproject = \"{project}\"\n\
         [content]\nroot = {root:?}\ninclude = [{}]\nexclude = [\"**/*.usmap\", {}]\n",
        include.join(", "),
        common::INCOMPLETE_PACKAGES
            .iter()
            .map(|p| format!("\"**/{p}.*\""))
            .collect::<Vec<_>>()
            .join(", "),
        root = root.to_string_lossy()
    );
    std::fs::write(dir.path().join("mod.toml"), manifest_text).unwrap();
    let manifest = Manifest::load(&dir.path().join("mod.toml")).unwrap();
    let summary = build(&manifest, &BuildOptions::default(), &Silent)
        .unwrap_or_else(|e| panic!("{project}: build failed: {e}"));
    assert!(summary.packages > 0);

    let container = Container::open(&zenpak::release::artifact_paths(&manifest)[0], None).unwrap();
    let report = container.verify();
    assert!(
        report.errors.is_empty(),
        "{project}: verify: {:?}",
        report.errors
    );
    let header = container.container_header().unwrap().unwrap();
    assert_eq!(header.packages.len(), summary.packages);

    // Each package id is the hash of the name its path gives it.
    let content = zenpak::build::discover::discover(
        root,
        project,
        &zenpak::build::discover::Selection::new(
            &manifest.content.include,
            &manifest.content.exclude,
        )
        .unwrap(),
        manifest.content.follow_links,
        true,
    )
    .unwrap();
    let ids: BTreeSet<u64> = header.packages.iter().map(|(id, _)| *id).collect();
    let mut mounts = BTreeSet::new();
    for package in &content.packages {
        assert!(
            ids.contains(&zenpak::hash::package_id(package.package_name())),
            "{project}: {} is not in the container",
            package.package_name()
        );
        mounts.insert(
            package
                .package_name()
                .split('/')
                .nth(1)
                .unwrap()
                .to_string(),
        );
    }
    for mount in expect_mounts {
        assert!(
            mounts.contains(*mount),
            "{project}: no package under /{mount}/ (found {mounts:?})"
        );
    }
}

#[test]
fn clay_builds_as_one_mod() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let root = corpus.join("uassetapi/TestManyAssets/Clay");
    build_game_folder(
        &root,
        "Clay",
        EngineVersion::UE5_1,
        &[],
        &["Game", "Engine"],
    );
}

#[test]
fn nanos_world_builds_as_one_mod() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let root = corpus.join("uassetapi/TestUE5_7");
    build_game_folder(
        &root,
        "NanosWorld",
        EngineVersion::UE5_7,
        &["NanosWorld/**"],
        &["Game"],
    );
}

#[test]
fn sn2_with_a_plugin_builds_as_one_mod() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let root = corpus.join("uassetapi/TestManyAssets");
    build_game_folder(
        &root,
        "SN2",
        EngineVersion::UE5_6,
        &["SN2/**"],
        &["Game", "UWEMusicVolumeManager"],
    );
}

/// `[game] profile = "marvel-rivals"`: a SkeletalMesh gets an empty tag
/// container after each material (4 bytes each), a StaticMesh 8 bytes more
/// per LOD screen size.
#[test]
fn marvel_rivals_profile_pads_skeletal_meshes_in_a_build() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let source = corpus.join("uassetapi/TestUE5_6/BpThirdPerson");
    let chunk_sizes = |profile: &str, mappings: Option<&Path>| {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("Skin");
        write_mod(
            &repo,
            &NewMod {
                name: "Skin".into(),
                engine: EngineVersion::UE5_6,
                project: "Marvel".into(),
                git: false,
            },
        )
        .unwrap();
        let manifest_path = repo.join("mod.toml");
        let text = std::fs::read_to_string(&manifest_path).unwrap();
        let mut game = format!("profile = \"{profile}\"");
        if let Some(mappings) = mappings {
            game += &format!("\nmappings = {:?}", mappings.to_string_lossy());
        }
        let mut text = text.replace("profile = \"generic\"", &game);
        if profile == "marvel-rivals" {
            // The corpus mappings are stock UE's, not the game's: leave LOD infos as they are.
            // The pak cipher needs the game's key, which a test does not have.
            text += "\n[marvel-rivals]\nhidden-materials = false\nencrypt-pak = false\n";
        }
        std::fs::write(&manifest_path, text).unwrap();
        copy_package(
            &source.join("SKM_Quinn_Simple.uasset"),
            &repo.join("Cooked/Marvel/Content/Characters/Mannequins/Meshes"),
        );
        copy_package(
            &source.join("SM_Cube.uasset"),
            &repo.join("Cooked/Marvel/Content/LevelPrototyping/Meshes"),
        );
        let manifest = Manifest::load(&manifest_path).unwrap();
        build(&manifest, &BuildOptions::default(), &Silent)
            .unwrap_or_else(|e| panic!("{profile}: {e}"));
        let container =
            Container::open(&zenpak::release::artifact_paths(&manifest)[0], None).unwrap();
        assert!(container.verify().errors.is_empty());
        let mut sizes = std::collections::BTreeMap::new();
        for (index, path) in container.paths.iter() {
            sizes.insert(path.to_string(), container.read_chunk(index).unwrap().len());
        }
        sizes
    };
    let generic = chunk_sizes("generic", None);
    let marvel = chunk_sizes("marvel-rivals", None);
    // With the game's mappings the array is found through the property schema; same result.
    let usmap = source.join("ExplicitEnumValuesExample.usmap");
    assert_eq!(chunk_sizes("marvel-rivals", Some(&usmap)), marvel);
    let mesh = "Marvel/Content/Characters/Mannequins/Meshes/SKM_Quinn_Simple.uasset";
    let cube = "Marvel/Content/LevelPrototyping/Meshes/SM_Cube.uasset";
    assert_eq!(
        marvel[mesh],
        generic[mesh] + 8,
        "two materials, 4 bytes each"
    );
    assert_eq!(
        marvel[cube],
        generic[cube] + 64,
        "a StaticMesh's 8 screen sizes widen to 16 bytes"
    );
}

/// The corpus's packages whose `.ubulk` is missing are refused by `check`
/// and `build`, naming the companion and the byte range, and nothing is built.
#[test]
fn packages_whose_bulk_data_is_missing_are_refused() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let incomplete: Vec<(PathBuf, EngineVersion)> = common::legacy_packages(&corpus)
        .into_iter()
        .filter(|(p, _)| {
            !common::complete_legacy_packages(&corpus)
                .iter()
                .any(|(c, _)| c == p)
        })
        .collect();
    let names: Vec<String> = incomplete
        .iter()
        .map(|(p, _)| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), common::INCOMPLETE_PACKAGES.len(), "{names:?}");
    for (header, engine) in incomplete {
        let files = zenpak::legacy::PackageFiles::load(&header).unwrap();
        let package = files.read_package(Some(engine)).unwrap();
        let error = files.check_bulk_data(&package).unwrap_err();
        let text = error.to_string();
        // A format error naming the missing companion, within the data resource.
        assert_eq!(error.code(), "format", "{text}");
        assert_eq!(
            error.file().and_then(|f| f.extension()),
            Some(std::ffi::OsStr::new("ubulk")),
            "{text}"
        );
        assert_eq!(error.context().structure.len(), 1, "{text}");

        // Through a real build: exit 1, the message names the companion, no triplet.
        let dir = tempfile::tempdir().unwrap();
        let content = dir.path().join("Cooked/Game/Content");
        std::fs::create_dir_all(&content).unwrap();
        for ext in ["uasset", "umap", "uexp"] {
            let from = header.with_extension(ext);
            if from.exists() {
                std::fs::copy(&from, content.join(from.file_name().unwrap())).unwrap();
            }
        }
        std::fs::write(
            dir.path().join("mod.toml"),
            format!("[mod]\nname = \"M\"\nversion = \"1\"\n[game]\nengine = \"{engine}\"\nproject = \"Game\"\n"),
        )
        .unwrap();
        // `build` and `check` both refuse it: an error naming the missing
        // .ubulk, and nothing written.
        for command in ["build", "check"] {
            let out = common::run(Some(dir.path()), &[command, "--message-format", "json"]);
            let error = out.assert_code(1).error();
            assert_eq!(error["code"], "format", "{command}: {error}");
            assert!(
                common::file_tail(&error, 1).ends_with(".ubulk"),
                "{command}: {error}"
            );
            assert!(!dir.path().join("target/M_P.utoc").exists());
        }
    }
}

/// Writes `files` as the package `/Game/<folder>/<stem>` under `content`
/// (its own name rewritten so that it matches its path).
fn place_renamed(
    files: &zenpak::legacy::PackageFiles,
    package: &zenpak::legacy::LegacyPackage,
    content: &Path,
    folder: &str,
    stem: &str,
) {
    let mut renamed = package.clone();
    renamed.summary.package_name =
        zenpak::legacy::EngineString::new(format!("/Game/{folder}/{stem}"));
    let shift =
        renamed.write().unwrap().len() as i64 - i64::from(package.summary.total_header_size);
    // Export offsets count from the start of the header: they move with it.
    for export in &mut renamed.exports {
        export.serial_offset += shift;
    }
    renamed.summary.bulk_data_start_offset += shift;
    let dir = content.join(folder);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(format!("{stem}.uasset")), renamed.write().unwrap()).unwrap();
    std::fs::write(dir.join(format!("{stem}.uexp")), &files.uexp).unwrap();
}

/// A 1,000-package mod of UE 5.1 packages built as 5.2: one error that
/// names 5.1 and `[game] engine`, not a thousand; the same in JSON.
#[test]
fn a_thousand_packages_at_the_wrong_engine_give_one_summary() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let source = corpus.join(
        "uassetapi/TestManyAssets/Clay/Clay/Content/FirstPerson/Blueprints/Camera_Shakes/Head_Bobbing_Walk.uasset",
    );
    let files = PackageFiles::load(&source).unwrap();
    let package = files.read_package(Some(EngineVersion::UE5_1)).unwrap();
    assert!(
        files.read_package(Some(EngineVersion::UE5_2)).is_err(),
        "the package must not read as 5.2 for this test"
    );
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("WrongEngine");
    let content = root.join("Cooked/Clay/Content");
    for i in 0..1000 {
        place_renamed(
            &files,
            &package,
            &content,
            &format!("Shakes/D{:02}", i / 100),
            &format!("Shake_{i}"),
        );
    }
    std::fs::write(
        root.join("mod.toml"),
        "[mod]\nname = \"WrongEngine\"\nversion = \"1.0.0\"\n[game]\nengine = \"5.2\"\nproject = \"Clay\"\n",
    )
    .unwrap();
    let human = common::run(Some(&root), &["build"]);
    human.assert_code(2); // a manifest error
    let errors = human
        .stderr
        .lines()
        .filter(|l| l.starts_with("error"))
        .count();
    assert_eq!(
        errors, 1,
        "one summary, not one line per package:\n{}",
        human.stderr
    );
    assert!(human.stderr.lines().count() < 10, "{}", human.stderr);

    let json = common::run(Some(&root), &["build", "--message-format", "json"]);
    let error = json.assert_code(2).error();
    assert_eq!(error["code"], "usage", "{error}");
    // The hint is the line to write in mod.toml.
    assert!(
        error["hint"]
            .as_str()
            .is_some_and(|h| h.contains("[game] engine = \"5.1\"")),
        "{error}"
    );
}
