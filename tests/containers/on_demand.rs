//! On-demand containers through the real binary (issue 30).
//!
//! Fact: `EIoContainerFlags::OnDemand` is bit 4 (16) of the TOC header's
//! container flags (the engine's `IoStore.h`; CUE4Parse's
//! `EIoContainerFlags`); a container so flagged belongs to a game that
//! streams some chunks from a content server, so their data need not be in
//! the local `.ucas`. No on-demand game container is in the corpus: the
//! containers here are written by zenpak's writer, then flagged `OnDemand`
//! in the TOC and their `.ucas` truncated (or removed) so that some chunks
//! are not local, as an installed on-demand game has them.

use std::path::{Path, PathBuf};

use crate::common::{self, run, Run};
use zenpak::iostore::container_header::StoreEntry;
use zenpak::iostore::toc::{container_flags, Toc};
use zenpak::iostore::{ContainerBuilder, ContainerOptions};
use zenpak::EngineVersion;

const LOCAL: &str = "Game/Content/OnDemand/Local.uzenasset";
const REMOTE: &str = "Game/Content/OnDemand/Remote.uzenasset";

/// `OnDemand_P` with a small package (first in the `.ucas`) and a large one;
/// returns the `.utoc`.
fn build(dir: &Path) -> PathBuf {
    let mut b = ContainerBuilder::create(
        dir,
        "OnDemand_P",
        EngineVersion::UE5_6,
        ContainerOptions::default(),
    )
    .unwrap();
    for (name, data) in [("Local", vec![1u8; 1000]), ("Remote", vec![2u8; 200_000])] {
        b.add_package(
            zenpak::hash::package_id(&format!("/Game/OnDemand/{name}")),
            &data,
            StoreEntry::default(),
            &format!("Game/Content/OnDemand/{name}.uasset"),
        )
        .unwrap();
    }
    b.add_loose_file("Game/Config/DefaultGame.ini", b"[x]\n")
        .unwrap();
    b.finish().unwrap().utoc
}

/// Sets (or clears) the `OnDemand` flag in the TOC header.
fn flag_on_demand(utoc: &Path, on: bool) {
    let mut toc = Toc::read_file(utoc).unwrap();
    if on {
        toc.header.container_flags |= container_flags::ON_DEMAND;
    } else {
        toc.header.container_flags &= !container_flags::ON_DEMAND;
    }
    std::fs::write(utoc, toc.write()).unwrap();
}

/// Cuts the `.ucas` right after the local package's blocks, so every later
/// chunk (the large package, the container header) is not local.
fn truncate_after_local(utoc: &Path) {
    let toc = Toc::read_file(utoc).unwrap();
    let local = toc
        .chunk_ids
        .iter()
        .position(|id| id.id() == zenpak::hash::package_id("/Game/OnDemand/Local"))
        .unwrap();
    let blocks = toc.chunk_blocks(local).unwrap();
    let end = toc.blocks[blocks]
        .iter()
        .map(|b| b.offset + b.data_size(false))
        .max()
        .unwrap();
    let ucas = utoc.with_extension("ucas");
    let bytes = std::fs::read(&ucas).unwrap();
    assert!((end as usize) < bytes.len());
    std::fs::write(&ucas, &bytes[..end as usize]).unwrap();
}

/// `list --json`: path → remote.
fn listed(utoc: &Path) -> Vec<(String, bool)> {
    run(None, &["list", utoc.to_str().unwrap(), "--json"])
        .ok()
        .doc()["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_string(),
                f["remote"].as_bool().unwrap(),
            )
        })
        .collect()
}

/// A `--message-format json` run.
fn json_run(args: &[&str]) -> Run {
    let mut all = vec!["--message-format", "json"];
    all.extend_from_slice(args);
    run(None, &all)
}

#[test]
fn an_on_demand_container_lists_and_verifies_with_its_remote_chunks_named() {
    let dir = common::temp_dir("on-demand-truncated");
    let utoc = build(dir.as_ref());
    let u = utoc.to_str().unwrap();
    truncate_after_local(&utoc);
    flag_on_demand(&utoc, true);

    assert_eq!(
        run(None, &["inspect", u, "--json"]).ok().doc()["flags"],
        serde_json::json!(["Indexed", "OnDemand"])
    );

    let files = listed(&utoc);
    assert!(files.contains(&(LOCAL.to_string(), false)), "{files:?}");
    assert!(files.contains(&(REMOTE.to_string(), true)), "{files:?}");
    let header = files
        .iter()
        .find(|(p, _)| p.ends_with(".ContainerHeader"))
        .unwrap();
    assert!(header.1, "the header chunk was written last: {files:?}");
    // In text, the remote file's source is marked.
    let text = run(None, &["list", u]);
    text.ok();
    let line = |path: &str| {
        text.stdout
            .lines()
            .find(|l| l.ends_with(path))
            .unwrap()
            .to_string()
    };
    assert!(line(REMOTE).contains("(remote)") && !line(LOCAL).contains("(remote)"));
    // The pak's file is local.
    assert!(files.iter().any(|(p, r)| p.ends_with(".ini") && !r));

    // verify: the local chunk is checked, the two remote ones counted and named.
    let report = run(None, &["verify", u, "--json"]).ok().doc();
    assert_eq!(report["chunks_checked"], 1);
    assert_eq!(report["remote_chunks"], 2);
    assert_eq!(report["errors"].as_array().unwrap().len(), 0);
    let note = report["notes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["code"] == "on-demand-remote")
        .expect("on-demand-remote note");
    assert!(note["message"]
        .as_str()
        .unwrap()
        .contains(REMOTE.trim_end_matches(".uzenasset")));

    // unpack writes what is local and warns for each remote file.
    let out_dir = dir.as_ref().join("out");
    let unpacked = json_run(&["unpack", u, out_dir.to_str().unwrap()]);
    let warned = unpacked.ok().coded("warning", "on-demand-not-written");
    assert_eq!(warned.len(), 2, "{}", unpacked.stdout);
    assert_eq!(std::fs::read(out_dir.join(LOCAL)).unwrap(), vec![1u8; 1000]);
    assert!(!out_dir.join(REMOTE).exists());
    assert!(out_dir.join("Game/Config/DefaultGame.ini").is_file());

    // get of a remote file fails (exit 1, `unsupported`) and writes nothing.
    let target = dir.as_ref().join("got.uzenasset");
    let got = json_run(&["get", u, REMOTE, "-o", target.to_str().unwrap()]);
    assert!(
        got.assert_code(1)
            .codes("error")
            .iter()
            .any(|c| c == "unsupported"),
        "{}",
        got.stdout
    );
    assert!(!target.exists());
}

#[test]
fn without_a_ucas_every_chunk_is_remote_and_without_the_flag_nothing_is() {
    let dir = common::temp_dir("on-demand-no-ucas");
    let utoc = build(dir.as_ref());
    let u = utoc.to_str().unwrap();
    let ucas = utoc.with_extension("ucas");
    let bytes = std::fs::read(&ucas).unwrap();

    // Not flagged: a truncated .ucas is corruption (exit 1), as before.
    truncate_after_local(&utoc);
    assert_eq!(
        run(None, &["verify", u, "--json"]).assert_code(1).doc()["remote_chunks"],
        0
    );
    assert!(listed(&utoc).iter().all(|(_, remote)| !remote));

    // Flagged and no .ucas at all: opens, every chunk remote.
    flag_on_demand(&utoc, true);
    std::fs::remove_file(&ucas).unwrap();
    let files = listed(&utoc);
    let chunks = Toc::read_file(&utoc).unwrap().chunk_ids.len();
    assert_eq!(files.iter().filter(|(_, r)| *r).count(), chunks);
    let report = run(None, &["verify", u, "--json"]).ok().doc();
    assert_eq!(report["remote_chunks"], chunks);
    assert_eq!(report["chunks_checked"], 0);

    // The whole .ucas back: every chunk local again, all checked.
    std::fs::write(&ucas, &bytes).unwrap();
    assert!(listed(&utoc).iter().all(|(_, remote)| !remote));
    let report = run(None, &["verify", u, "--json"]).ok().doc();
    assert_eq!(report["remote_chunks"], 0);
    assert_eq!(report["chunks_checked"], chunks);
}

/// zenpak's writer never sets `OnDemand`, for any release.
#[test]
fn the_writer_never_sets_the_on_demand_flag() {
    let dir = common::temp_dir("on-demand-writer");
    for engine in EngineVersion::ALL {
        let stem = format!("W{}_P", engine.as_str().replace('.', "_"));
        let mut b =
            ContainerBuilder::create(dir.as_ref(), &stem, engine, ContainerOptions::default())
                .unwrap();
        b.add_package(1, b"data", StoreEntry::default(), "Game/Content/A.uasset")
            .unwrap();
        let utoc = b.finish().unwrap().utoc;
        let toc = Toc::read_file(&utoc).unwrap();
        assert_eq!(
            toc.header.container_flags & container_flags::ON_DEMAND,
            0,
            "{engine}"
        );
        assert!(!run(None, &["inspect", utoc.to_str().unwrap(), "--json"])
            .ok()
            .doc()["flags"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f == "OnDemand"));
    }
}

/// A `.uondemandtoc` of `version` in the layout of FabianFG/CUE4Parse's
/// reader (`IO/Objects/OnDemand/V1`; the module doc of
/// `zenpak::iostore::on_demand_toc`), describing `chunks` (hex chunk ids)
/// of one container. No engine-written file is in the corpus.
fn on_demand_toc(version: u32, chunks: &[String]) -> Vec<u8> {
    let mut w = zenpak::binary::Writer::new();
    w.u64(zenpak::iostore::on_demand_toc::MAGIC);
    w.u32(version);
    w.u32(2); // stream on demand
    w.u32(65536);
    w.fstring("Oodle");
    w.fstring("chunks");
    if version >= 11 {
        w.fstring("cdn");
    }
    if version >= 5 {
        w.i64(1_700_000_000);
        w.fstring("++Game+Release-1.0");
        w.fstring("Windows");
    }
    w.i32(1); // containers
    if version >= 6 {
        w.u64(zenpak::hash::hash_lower_utf16("ondemand_p"));
    }
    w.fstring("OnDemand_P");
    w.fstring("");
    w.i32(chunks.len() as i32);
    for (i, id) in chunks.iter().enumerate() {
        w.bytes(&[0xA0 + i as u8; 20]);
        let raw: Vec<u8> = (0..12)
            .map(|k| u8::from_str_radix(&id[2 * k..2 * k + 2], 16).unwrap())
            .collect();
        w.bytes(&raw);
        w.u64(200_000);
        w.u64(100_000);
        w.u32(i as u32 * 4);
        w.u32(4);
    }
    let blocks = chunks.len() as i32 * 4;
    w.i32(blocks);
    for _ in 0..blocks {
        w.u32(65536);
    }
    w.i32(blocks);
    for b in 0..blocks {
        w.u32(b as u32);
    }
    w.bytes(&[0x77; 20]);
    if version >= 9 {
        w.u8(4);
    }
    if version >= 12 {
        w.i32(3);
        w.bytes(&[1, 2, 3]);
    }
    if version >= 7 {
        w.i32(0);
    }
    if version >= 8 {
        w.i32(1);
        w.fstring("level1");
        w.i32(1);
        w.u32(0);
        w.i32(2);
        w.u32(0);
        w.u32(1);
    }
    w.into_inner()
}

#[test]
fn an_on_demand_toc_names_the_remote_chunks() {
    let dir = common::temp_dir("on-demand-toc");
    let utoc = build(dir.as_ref());
    truncate_after_local(&utoc);
    flag_on_demand(&utoc, true);
    // The chunks the container cannot read locally, by id.
    let container = zenpak::iostore::Container::open(&utoc, None).unwrap();
    let remote_ids: Vec<String> = (0..container.toc.chunk_ids.len())
        .filter(|&i| container.is_remote(i))
        .map(|i| container.toc.chunk_ids[i].to_hex())
        .collect();
    assert_eq!(remote_ids.len(), 2);
    for version in [4u32, 8, 12] {
        let path = dir.as_ref().join(format!("v{version}.uondemandtoc"));
        std::fs::write(&path, on_demand_toc(version, &remote_ids)).unwrap();
        let toc = run(None, &["inspect", path.to_str().unwrap(), "--json"])
            .assert_code_for(0, format_args!("v{version}"))
            .doc();
        assert_eq!(toc["version"], version);
        assert_eq!(toc["block_size"], 65536);
        let container = &toc["containers"][0];
        assert_eq!(container["name"], "OnDemand_P");
        let ids: Vec<&str> = container["chunks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["chunk_id"].as_str().unwrap())
            .collect();
        assert_eq!(ids.len(), remote_ids.len(), "v{version}");
        assert!(ids.iter().all(|id| remote_ids.iter().any(|r| r == id)));
        assert_eq!(container["block_count"], remote_ids.len() * 4);
        assert_eq!(
            container["container_header_size"],
            if version >= 12 { 3 } else { 0 }
        );
        assert_eq!(
            toc["tag_sets"].as_array().unwrap().len(),
            usize::from(version >= 8)
        );
    }

    // Every cut of a valid file is an error (exit 1), never a panic.
    let bytes = on_demand_toc(12, &remote_ids);
    let cut = dir.as_ref().join("cut.uondemandtoc");
    for len in [0, 7, 12, 40, bytes.len() / 2, bytes.len() - 1] {
        std::fs::write(&cut, &bytes[..len]).unwrap();
        // Refused, in JSON lines.
        json_run(&["inspect", cut.to_str().unwrap(), "--json"])
            .assert_code_for(1, format_args!("cut at {len}"))
            .json();
    }
    // Versions whose layout is not described, and the later format: refused.
    for (name, bytes) in [
        ("v3", on_demand_toc(3, &remote_ids)),
        ("v13", on_demand_toc(13, &remote_ids)),
        ("signature", b"UE ON-DEMAND TOC\x01\x00\x02\x00".to_vec()),
    ] {
        let path = dir.as_ref().join(format!("{name}.uondemandtoc"));
        std::fs::write(&path, bytes).unwrap();
        let inspected = json_run(&["inspect", path.to_str().unwrap(), "--json"]);
        assert!(
            inspected
                .assert_code_for(1, name)
                .codes("error")
                .iter()
                .any(|c| c == "unsupported"),
            "{name}: {}",
            inspected.stdout
        );
    }
}
