//! `[content] paks`: a legacy pak's packages are converted and its other
//! files go into the companion pak, exactly as if they were cooked content.

use crate::common;

use std::path::{Path, PathBuf};

use zenpak::build::{build, BuildOptions, Silent};
use zenpak::compression::Compression;
use zenpak::legacy::PackageFiles;
use zenpak::manifest::Manifest;
use zenpak::pak::writer::PakWriter;
use zenpak::scaffold::{write_mod, NewMod};
use zenpak::EngineVersion;

const PACKAGES: [&str; 3] = ["BP_ThirdPersonCharacter", "SM_Cube", "T_Quinn_01_D"];
const INI: &[u8] = b"[Mod]\nFromPak=True\n";

/// Each package's files as (path below the content root, bytes), placed
/// where its own name says (`/Game/X/Y` → `PakGame/Content/X/Y.*`).
fn package_files(corpus: &Path, stem: &str) -> Vec<(String, Vec<u8>)> {
    let header = corpus.join(format!("retoc/UE5.6/{stem}.uasset"));
    let files = PackageFiles::load(&header).unwrap();
    let package = files.read_package(Some(EngineVersion::UE5_6)).unwrap();
    let name = package.package_name().unwrap().to_string();
    let below_game = name.strip_prefix("/Game/").expect("a /Game package");
    let mut out = Vec::new();
    for ext in ["uasset", "uexp", "ubulk"] {
        let path = header.with_extension(ext);
        if path.is_file() {
            out.push((
                format!("PakGame/Content/{below_game}.{ext}"),
                std::fs::read(&path).unwrap(),
            ));
        }
    }
    out
}

fn new_mod(dir: &Path) -> PathBuf {
    write_mod(
        dir,
        &NewMod {
            name: "PakMod".into(),
            engine: EngineVersion::UE5_6,
            project: "PakGame".into(),
            git: false,
        },
    )
    .unwrap();
    dir.join("mod.toml")
}

fn write_loose(repo: &Path, files: &[(String, Vec<u8>)]) {
    for (path, bytes) in files {
        let to = repo.join("Cooked").join(path);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::write(to, bytes).unwrap();
    }
}

pub(crate) fn write_pak(path: &Path, files: &[(String, Vec<u8>)]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mut pak = PakWriter::create(
        path,
        zenpak::version::PakVersion::V11,
        "../../../",
        Compression::Zlib,
        None,
        [0; 16],
    )
    .unwrap();
    for (name, bytes) in files {
        pak.add_file(name, bytes).unwrap();
    }
    pak.finish().unwrap();
}

pub(crate) fn add_paks(manifest: &Path, paks: &[&str]) {
    let text = std::fs::read_to_string(manifest).unwrap();
    let list: Vec<String> = paks.iter().map(|p| format!("\"{p}\"")).collect();
    let text = text.replacen(
        "[content]\n",
        &format!("[content]\npaks = [{}]\n", list.join(", ")),
        1,
    );
    assert!(
        text.contains("paks = ["),
        "the template has a [content] table"
    );
    std::fs::write(manifest, text).unwrap();
}

fn artifacts(manifest: &Manifest) -> Vec<Vec<u8>> {
    manifest
        .artifact_paths()
        .iter()
        .map(|p| std::fs::read(p).unwrap())
        .collect()
}

#[test]
fn a_legacy_pak_builds_exactly_like_the_same_loose_files() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let loose_repo = tmp.path().join("loose/PakMod");
    let pak_repo = tmp.path().join("paked/PakMod");
    let loose_manifest = new_mod(&loose_repo);
    let pak_manifest = new_mod(&pak_repo);

    let ini = ("PakGame/Config/Extra.ini".to_string(), INI.to_vec());
    let first = package_files(&corpus, PACKAGES[0]);
    let mut in_pak: Vec<(String, Vec<u8>)> = PACKAGES[1..]
        .iter()
        .flat_map(|p| package_files(&corpus, p))
        .collect();
    in_pak.push(ini);

    // The same files: all loose in one mod, mostly in a pak in the other.
    write_loose(&loose_repo, &first);
    write_loose(&loose_repo, &in_pak);
    write_loose(&pak_repo, &first);
    write_pak(&pak_repo.join("Legacy/Old_P.pak"), &in_pak);
    add_paks(&pak_manifest, &["Legacy/Old_P.pak"]);

    let loose = Manifest::load(&loose_manifest).unwrap();
    let paked = Manifest::load(&pak_manifest).unwrap();
    let from_loose = build(&loose, &BuildOptions::default(), &Silent).unwrap();
    let from_pak = build(&paked, &BuildOptions::default(), &Silent).unwrap();
    assert_eq!(from_pak.packages, PACKAGES.len());
    assert_eq!(from_pak.loose_files, from_loose.loose_files);
    assert_eq!(
        artifacts(&paked),
        artifacts(&loose),
        ".utoc, .ucas and .pak equal those built from loose files"
    );

    // Unchanged pak: nothing to do. A changed pak: rebuilt.
    let again = build(&paked, &BuildOptions::default(), &Silent).unwrap();
    assert!(again.up_to_date);
    let mut changed = in_pak.clone();
    changed.last_mut().unwrap().1 = b"[Mod]\nFromPak=False\n".to_vec();
    write_pak(&pak_repo.join("Legacy/Old_P.pak"), &changed);
    let rebuilt = build(&paked, &BuildOptions::default(), &Silent).unwrap();
    assert!(!rebuilt.up_to_date);

    // `clean` removes the unpacked pak with the rest of the cache.
    let removed = zenpak::release::clean(&paked).unwrap();
    assert!(removed
        .removed
        .iter()
        .any(|p| p.ends_with("PakGame/Config/Extra.ini")));
    assert!(
        !pak_repo.join("target/.zenpak-cache").exists(),
        "the cache, unpacked paks included, is gone"
    );
    assert!(
        pak_repo.join("Legacy/Old_P.pak").is_file(),
        "the input pak stays"
    );
}

#[test]
fn a_path_in_a_pak_and_in_the_content_root_is_refused() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("PakMod");
    let manifest_path = new_mod(&repo);
    let files = package_files(&corpus, PACKAGES[1]);
    write_loose(&repo, &files);
    write_pak(&repo.join("Legacy/Dup_P.pak"), &files);
    add_paks(&manifest_path, &["Legacy/Dup_P.pak"]);
    let manifest = Manifest::load(&manifest_path).unwrap();
    let error = build(&manifest, &BuildOptions::default(), &Silent).unwrap_err();
    let text = error.to_string();
    assert_eq!(error.exit_code(), 2, "{text}");
    assert_eq!(error.code(), "usage", "{text}");
    assert!(error.hint().is_some(), "{text}");

    // A pak that is not there is named, as a manifest error.
    let other = new_mod(&tmp.path().join("Other"));
    add_paks(&other, &["Legacy/Missing_P.pak"]);
    let manifest = Manifest::load(&other).unwrap();
    let error = build(&manifest, &BuildOptions::default(), &Silent).unwrap_err();
    assert_eq!(error.exit_code(), 2, "{error}");
    assert_eq!(
        error.file().and_then(|f| f.file_name()),
        Some(std::ffi::OsStr::new("Missing_P.pak")),
        "{error}"
    );
}
