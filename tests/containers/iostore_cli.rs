//! The `list`, `verify`, `unpack` and `inspect` commands on real files.

use crate::common::{self, run};
use std::path::{Path, PathBuf};

use zenpak::iostore::container_header::StoreEntry;
use zenpak::iostore::directory_index::DirectoryIndex;
use zenpak::iostore::toc::Toc;
use zenpak::iostore::{ContainerBuilder, ContainerOptions};
use zenpak::EngineVersion;

fn build(dir: &Path) -> PathBuf {
    let mut b = ContainerBuilder::create(
        dir,
        "Cli_P",
        EngineVersion::UE5_6,
        ContainerOptions::default(),
    )
    .unwrap();
    let id = zenpak::hash::package_id("/Game/A");
    b.add_package(
        id,
        &vec![7u8; 100_000],
        StoreEntry::default(),
        "MyGame/Content/A.uasset",
    )
    .unwrap();
    b.add_loose_file("MyGame/Config/DefaultGame.ini", b"[x]\n")
        .unwrap();
    b.finish().unwrap().utoc
}

#[test]
fn list_verify_inspect_unpack() {
    let dir = common::temp_dir("ok");
    let utoc = build(&dir);
    let u = utoc.to_str().unwrap();

    let listing = run(None, &["list", u, "--json"]).ok().doc();
    let files = listing["files"].as_array().unwrap();
    // The package, the container header chunk and the pak's file.
    assert_eq!(files.len(), 3, "{listing}");
    assert!(files
        .iter()
        .any(|c| c["path"] == "MyGame/Content/A.uzenasset"
            && c["stored_path"] == "MyGame/Content/A.uasset"
            && c["kind"] == "ExportBundleData"
            && c["size"] == 100_000));
    assert!(files
        .iter()
        .any(|c| c["path"] == "MyGame/Config/DefaultGame.ini" && c["kind"] == "pak"));

    run(None, &["verify", u]).ok();
    let verified = run(None, &["verify", u, "--json"]).ok().doc();
    assert_eq!(verified["packages"], 1, "{verified}");

    let summary: serde_json::Value = run(None, &["inspect", u, "--json"]).ok().doc();
    assert_eq!(summary["toc_version"], "ReplaceIoChunkHashWithIoHash");
    assert_eq!(summary["flags"], serde_json::json!(["Indexed"]));
    assert_eq!(summary["container_header"]["packages"], 1);

    let pak = dir.join("Cli_P.pak");
    let summary = run(None, &["inspect", pak.to_str().unwrap(), "--json"])
        .ok()
        .doc();
    assert_eq!(summary["version"], "11");
    assert_eq!(
        summary["entries"][0]["path"],
        "MyGame/Config/DefaultGame.ini"
    );

    let out_dir = dir.join("out");
    run(None, &["unpack", u, out_dir.to_str().unwrap()]).ok();
    assert_eq!(
        std::fs::read(out_dir.join("MyGame/Content/A.uzenasset")).unwrap(),
        vec![7u8; 100_000]
    );
    assert_eq!(
        std::fs::read(out_dir.join("MyGame/Config/DefaultGame.ini")).unwrap(),
        b"[x]\n"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn verify_fails_with_exit_code_1_and_a_clear_message() {
    let dir = common::temp_dir("bad");
    let utoc = build(&dir);
    let u = utoc.to_str().unwrap();
    let ucas = dir.join("Cli_P.ucas");
    let mut bytes = std::fs::read(&ucas).unwrap();
    bytes[500] ^= 1;
    std::fs::write(&ucas, &bytes).unwrap();
    let verify = [&["verify", u][..], &["--message-format", "json"]].concat();
    let error = run(None, &verify).assert_code(1).error();
    assert_eq!(error["code"], "hash-mismatch", "{error}");
    assert_eq!(common::file_tail(&error, 1), "Cli_P.ucas", "{error}");
    bytes[500] ^= 1;
    std::fs::write(&ucas, &bytes).unwrap();

    std::fs::rename(dir.join("Cli_P.pak"), dir.join("elsewhere.pak")).unwrap();
    let error = run(None, &verify).assert_code(1).error();
    assert_eq!(error["code"], "format", "{error}");
    assert_eq!(common::file_tail(&error, 1), "Cli_P.pak", "{error}");
    std::fs::rename(dir.join("elsewhere.pak"), dir.join("Cli_P.pak")).unwrap();

    let toc = std::fs::read(&utoc).unwrap();
    std::fs::write(&utoc, &toc[..toc.len() - 7]).unwrap();
    let error = run(None, &verify).assert_code(1).error();
    assert_eq!(error["code"], "format", "{error}");
    assert_eq!(common::file_tail(&error, 1), "Cli_P.utoc", "{error}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn unpack_never_writes_outside_the_folder() {
    let dir = common::temp_dir("escape");
    let utoc = build(&dir);
    // Rewrite the directory index so a file claims a path that climbs out.
    let mut toc = Toc::read(&std::fs::read(&utoc).unwrap()).unwrap();
    let mut index = DirectoryIndex::new("../../../");
    index.add_file("../../escaped.txt", 0).unwrap();
    toc.directory_index = index.write();
    toc.header.directory_index_size = toc.directory_index.len() as u32;
    std::fs::write(&utoc, toc.write()).unwrap();

    let out_dir = dir.join("a/b/out");
    let refused = run(
        None,
        &[
            "unpack",
            utoc.to_str().unwrap(),
            out_dir.to_str().unwrap(),
            "--message-format",
            "json",
        ],
    );
    let error = refused.assert_code(1).error();
    assert_eq!(error["code"], "format", "{error}");
    assert!(!dir.join("a/escaped.txt").exists() && !dir.join("escaped.txt").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// `unpack --force` into a folder holding a symbolic link where a file or a
/// folder of the container goes, and `get -o` onto a link, refuse (naming
/// the link) and leave what the links point to as it was.
#[cfg(unix)]
#[test]
fn unpack_and_get_never_write_through_a_symbolic_link() {
    let dir = common::temp_dir("links");
    let utoc = build(&dir);
    let u = utoc.to_str().unwrap();
    let victim = dir.join("victim.ini");
    std::fs::write(&victim, b"victim").unwrap();
    let elsewhere = dir.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let out = dir.join("out");
    let o = out.to_str().unwrap();
    run(None, &["unpack", u, o]).ok();

    // A file of the container that is now a link.
    let ini = out.join("MyGame/Config/DefaultGame.ini");
    std::fs::remove_file(&ini).unwrap();
    std::os::unix::fs::symlink(&victim, &ini).unwrap();
    let args = ["unpack", u, o, "--force", "--message-format", "json"];
    let error = run(None, &args).assert_code(1).error();
    assert_eq!(error["code"], "format", "{error}");
    assert_eq!(common::file_tail(&error, 1), "DefaultGame.ini", "{error}");
    let get_args = [
        "get",
        u,
        "MyGame/Config/DefaultGame.ini",
        "-o",
        ini.to_str().unwrap(),
        "--message-format",
        "json",
    ];
    let error = run(None, &get_args).assert_code(1).error();
    assert_eq!(error["code"], "format", "{error}");
    assert_eq!(common::file_tail(&error, 1), "DefaultGame.ini", "{error}");
    assert_eq!(std::fs::read(&victim).unwrap(), b"victim");

    // A folder of the container that is now a link.
    std::fs::remove_dir_all(out.join("MyGame/Config")).unwrap();
    std::os::unix::fs::symlink(&elsewhere, out.join("MyGame/Config")).unwrap();
    let error = run(None, &args).assert_code(1).error();
    assert_eq!(error["code"], "format", "{error}");
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A map built into a container is unpacked as `.uzenmap`, and `inspect`
/// reads that file back as the Zen package of the map.
#[test]
fn inspect_reads_the_uzenmap_that_unpack_writes() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let map = corpus.join("uassetapi/TestManyAssets/Clay/Engine/Content/Maps/Entry.umap");
    let dir = common::temp_dir("uzenmap");
    let content = dir.join("Cooked/Engine/Content/Maps");
    std::fs::create_dir_all(&content).unwrap();
    for ext in ["umap", "uexp"] {
        std::fs::copy(
            map.with_extension(ext),
            content.join(format!("Entry.{ext}")),
        )
        .unwrap();
    }
    std::fs::write(
        dir.join("mod.toml"),
        "[mod]\nname = \"Map\"\nversion = \"1\"\n[game]\nengine = \"5.1\"\nproject = \"Game\"\n",
    )
    .unwrap();
    run(Some(&dir), &["build", "--quiet"]).ok();
    let utoc = dir.join("target/Map_P.utoc");
    let unpacked = dir.join("out");
    run(
        None,
        &["unpack", utoc.to_str().unwrap(), unpacked.to_str().unwrap()],
    )
    .ok();
    let zenmap = unpacked.join("Engine/Content/Maps/Entry.uzenmap");
    assert!(zenmap.is_file(), "unpack wrote no .uzenmap");
    let summary = run(
        None,
        &[
            "inspect",
            zenmap.to_str().unwrap(),
            "--engine",
            "5.1",
            "--json",
        ],
    )
    .ok()
    .doc();
    assert_eq!(summary["kind"], "zen-package", "{summary}");
    assert_eq!(summary["package_name"], "/Engine/Maps/Entry", "{summary}");
    assert!(summary["header_size"].as_u64().unwrap() > 0, "{summary}");
    assert!(
        summary["names_text"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n == "PersistentLevel"),
        "{summary}"
    );
}

/// A `.ucas` cut short: one error for the file, however many blocks the cut
/// removes (not one per block), naming the `.utoc` and saying how many.
#[test]
fn a_truncated_ucas_is_one_error_not_one_per_block() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let dir = common::temp_dir("truncated-ucas");
    for ext in ["utoc", "ucas", "pak"] {
        std::fs::copy(
            corpus.join(format!("peers/retoc/UE5.6-to-zen/RetocMod_P.{ext}")),
            dir.join(format!("RetocMod_P.{ext}")),
        )
        .unwrap();
    }
    let ucas = std::fs::OpenOptions::new()
        .write(true)
        .open(dir.join("RetocMod_P.ucas"))
        .unwrap();
    ucas.set_len(1000).unwrap();
    let utoc = dir.join("RetocMod_P.utoc");
    let out = run(
        None,
        &["verify", utoc.to_str().unwrap(), "--message-format", "json"],
    );
    out.assert_code(1);
    let verified = out.line_of("verified");
    let errors = verified["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{errors:#?}");
    assert_eq!(errors[0]["code"], "format");
    assert!(errors[0]["file"]
        .as_str()
        .unwrap()
        .ends_with("RetocMod_P.utoc"));
}

/// `verify` reads chunks on the thread pool but reports them in chunk
/// order: with every chunk of a 600-package container damaged (more than
/// one group of the pool's work), the errors name chunks 0, 1, 2, … in turn,
/// the same run after run.
#[test]
fn verify_reports_damaged_chunks_in_chunk_order() {
    let dir = common::temp_dir("verify-order");
    let mut b = ContainerBuilder::create(
        &dir,
        "Order_P",
        EngineVersion::UE5_6,
        ContainerOptions::default(),
    )
    .unwrap();
    for i in 0..600u32 {
        let name = format!("/Game/P{i}");
        let data: Vec<u8> = (0..5000u32).map(|j| (i * 31 + j * 7) as u8).collect();
        b.add_package(
            zenpak::hash::package_id(&name),
            &data,
            StoreEntry::default(),
            &format!("MyGame/Content/P{i}.uasset"),
        )
        .unwrap();
    }
    let utoc = b.finish().unwrap().utoc;
    let ucas = utoc.with_extension("ucas");
    let mut bytes = std::fs::read(&ucas).unwrap();
    for at in (100..bytes.len()).step_by(1024) {
        bytes[at] ^= 0xFF;
    }
    std::fs::write(&ucas, bytes).unwrap();
    let chunk_errors = || -> Vec<u64> {
        let verified = run(
            None,
            &["verify", utoc.to_str().unwrap(), "--message-format", "json"],
        );
        verified
            .diagnostics("error")
            .iter()
            .filter_map(|d| {
                let first = d["structure"].get(0)?.as_str()?;
                let number = first.strip_prefix("chunk ")?.split(' ').next()?;
                number.parse().ok()
            })
            .collect()
    };
    // 601 chunks (the packages and the container header), each in turn;
    // the header is named again by the check of the header that follows.
    let first = chunk_errors();
    assert_eq!(first[..601], (0..601).collect::<Vec<u64>>(), "{first:?}");
    assert_eq!(chunk_errors(), first);
}
