//! The container as the engine lays it out (issue 18): packages listed by
//! id in the container header (every engine-written header in the corpus is
//! sorted; `CreateContainerHeader` sorts its entries by package id) and the
//! mount point set to the files' common root (`GetCommonRootPath`; the
//! corpus's 5.6 SN2 content, with `Content/` and `Plugins/`, mounts at
//! `../../../SN2/`).

use crate::common;

use zenpak::iostore::container_header::{ContainerHeader, ContainerHeaderVersion};
use zenpak::iostore::{Container, ContainerBuilder, ContainerOptions};
use zenpak::legacy::PackageFiles;
use zenpak::EngineVersion;

/// Every engine-written container header in the corpus lists its packages
/// in ascending id order.
#[test]
fn engine_container_headers_sort_package_ids() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let headers = [
        (
            "retoc/UE4.27/ContainerHeader_1.bin",
            Some(ContainerHeaderVersion::Initial),
            52_583,
        ),
        ("retoc/UE5.0/ContainerHeader_1.bin", None, 22_559),
        ("retoc/UE5.3/ContainerHeader_1.bin", None, 3_786),
    ];
    for (file, hint, count) in headers {
        let bytes = std::fs::read(corpus.join(file)).unwrap();
        let header = ContainerHeader::read(&bytes, hint).unwrap();
        assert_eq!(header.packages.len(), count, "{file}");
        assert!(
            header.packages.windows(2).all(|w| w[0].0 < w[1].0),
            "{file}: package ids are not ascending"
        );
    }
}

/// SN2 (5.6) through the container builder: the mount point is the common
/// root `../../../SN2/`, packages are listed by id, and every package is
/// found again under its game path.
#[test]
fn sn2_mounts_at_its_common_root_with_ids_sorted() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let root = corpus.join("uassetapi/TestManyAssets");
    let packages: Vec<_> = common::legacy_packages(&corpus)
        .into_iter()
        .filter(|(p, _)| p.starts_with(root.join("SN2")))
        .collect();
    assert_eq!(packages.len(), 36);
    let engine = EngineVersion::UE5_6;
    let out = tempfile::tempdir().unwrap();
    let mut builder =
        ContainerBuilder::create(out.path(), "SN2Mod_P", engine, ContainerOptions::default())
            .unwrap();
    let mut expected = Vec::new();
    for (path, _) in &packages {
        let files = PackageFiles::load(path).unwrap();
        let legacy = files.read_package(Some(engine)).unwrap();
        let converted = zenpak::zen::convert(&files, &legacy, engine, "").unwrap();
        let relative = path
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        builder
            .add_package(
                converted.package_id,
                &converted.package_bytes,
                converted.store_entry.clone(),
                &relative,
            )
            .unwrap();
        expected.push((relative, converted.package_id));
    }
    let written = builder.finish().unwrap();

    let container = Container::open(&written.utoc, None).unwrap();
    assert_eq!(container.mount_point(), "../../../SN2/");
    let header = container.container_header().unwrap().unwrap();
    assert!(header.packages.windows(2).all(|w| w[0].0 < w[1].0));
    for (relative, id) in expected {
        let index = container
            .find_path(&relative)
            .unwrap_or_else(|| panic!("{relative} is not listed"));
        let chunk = container.toc.chunk_ids[index];
        assert_eq!(chunk.id(), id, "{relative}");
    }
    assert!(container.verify().errors.is_empty());
}

/// Builds a 4.27 mod holding TestModUI in each of `folders` (its summary
/// does not carry its name, so it can go anywhere) and returns the header.
fn build_loc_mod(folders: &[&str]) -> Option<ContainerHeader> {
    use zenpak::build::{build, BuildOptions, Silent};
    use zenpak::manifest::Manifest;
    use zenpak::scaffold::{write_mod, NewMod};
    let corpus = common::corpus()?;
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("LocMod");
    write_mod(
        &repo,
        &NewMod {
            name: "LocMod".into(),
            engine: EngineVersion::UE4_27,
            project: "LocGame".into(),
            git: false,
        },
    )
    .unwrap();
    for folder in folders {
        let to = repo.join("Cooked/LocGame/Content").join(folder);
        std::fs::create_dir_all(&to).unwrap();
        for ext in ["uasset", "uexp"] {
            let from = corpus.join(format!("retoc/UE4.27/TestModUI.{ext}"));
            std::fs::copy(from, to.join(format!("TestModUI.{ext}"))).unwrap();
        }
    }
    let manifest = Manifest::load(&repo.join("mod.toml")).unwrap();
    build(&manifest, &BuildOptions::default(), &Silent).unwrap();
    let container = Container::open(&zenpak::release::artifact_paths(&manifest)[0], None).unwrap();
    assert!(container.verify().errors.is_empty());
    Some(container.container_header().unwrap().unwrap())
}

/// A mod with a localized package and its source, built as a user builds
/// it: the public exports match (`VerifyRedirect`), so the culture map lists
/// `(source, localized)` for `fr`.
#[test]
fn a_localized_package_is_registered_by_the_build() {
    let Some(header) = build_loc_mod(&["UI", "L10N/fr/UI"]) else {
        return;
    };
    let source = zenpak::hash::package_id("/Game/UI/TestModUI");
    let localized = zenpak::hash::package_id("/Game/L10N/fr/UI/TestModUI");
    assert_eq!(header.packages.len(), 2);
    assert_eq!(header.culture_packages.len(), 1);
    assert_eq!(header.culture_packages[0].culture, "fr");
    assert_eq!(
        header.culture_packages[0].packages,
        vec![(source, localized)]
    );
}

/// Without its source in the mod, a localized package that defines a class
/// (TestModUI is a widget blueprint) is not a redirect: the engine skips it
/// ("presence of UStruct"), and so does zenpak.
#[test]
fn a_localized_class_without_its_source_is_not_registered() {
    let Some(header) = build_loc_mod(&["L10N/fr/UI"]) else {
        return;
    };
    assert_eq!(header.packages.len(), 1);
    assert!(header.culture_packages.is_empty());
}
