//! Containers written by retoc, the tool most mods are built with
//! (`peers/retoc/` in the corpus, described in its MANIFEST.md): every
//! command reads them as the engine does. retoc records each block's size
//! aligned to 16 bytes but stores the blocks back to back, so an aligned
//! range reaches into the next block or past the end of the `.ucas`.

use crate::common::{self, run};
use std::path::{Path, PathBuf};

struct Peer {
    corpus: PathBuf,
}

impl Peer {
    fn get() -> Option<Peer> {
        common::corpus().map(|corpus| Peer { corpus })
    }
    fn mod_utoc(&self) -> PathBuf {
        self.corpus.join("peers/retoc/UE5.6-to-zen/RetocMod_P.utoc")
    }
    fn global_utoc(&self) -> PathBuf {
        self.corpus.join("peers/retoc/UE5.3-global/global.utoc")
    }
    /// The legacy input retoc was given for `name` (MANIFEST.md).
    fn input(&self, name: &str) -> Vec<u8> {
        std::fs::read(self.corpus.join("retoc/UE5.6").join(name)).unwrap()
    }
}

/// What the corpus says retoc was given: three packages at their cooked
/// paths, two with bulk data (MANIFEST.md, `peers/retoc/`).
const PACKAGES: [(&str, bool); 3] = [
    ("Game/Content/LevelPrototyping/Meshes/SM_Cube", true),
    (
        "Game/Content/Characters/Mannequins/Textures/Quinn/T_Quinn_01_D",
        true,
    ),
    (
        "Game/Content/ThirdPerson/Blueprints/BP_ThirdPersonCharacter",
        false,
    ),
];

fn expected_files() -> Vec<String> {
    let mut files = Vec::new();
    for (path, bulk) in PACKAGES {
        files.push(format!("{path}.uzenasset"));
        if bulk {
            files.push(format!("{path}.ubulk"));
        }
    }
    files.sort();
    files
}

fn base_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap()
}

/// `list` of the `.utoc`, of its `.pak` and of a folder holding them gives
/// the packages and bulk files retoc was given, and its container header.
#[test]
fn list_gives_what_retoc_was_given() {
    let Some(peer) = Peer::get() else { return };
    let utoc = peer.mod_utoc();
    let pak = utoc.with_extension("pak");
    let folder = utoc.parent().unwrap().to_path_buf();
    for source in [&utoc, &pak, &folder] {
        let listing: serde_json::Value = run(None, &["list", source.to_str().unwrap(), "--json"])
            .assert_code_for(0, source.display())
            .doc();
        let files = listing["files"].as_array().unwrap();
        let mut paths: Vec<String> = files
            .iter()
            .filter(|f| f["kind"] != "ContainerHeader")
            .map(|f| f["path"].as_str().unwrap().to_string())
            .collect();
        paths.sort();
        assert_eq!(paths, expected_files(), "{}", source.display());
        assert_eq!(
            files
                .iter()
                .filter(|f| f["kind"] == "ContainerHeader")
                .count(),
            1
        );
        // Sizes: the bulk data is the input's.
        for f in files {
            let path = f["path"].as_str().unwrap();
            if path.ends_with(".ubulk") {
                assert_eq!(
                    f["size"].as_u64().unwrap(),
                    peer.input(base_name(path)).len() as u64
                );
            }
        }
    }
}

/// `verify` takes the mod and retoc's global container (exit 0, no error),
/// and `--verbose` notes the unpadded blocks.
#[test]
fn verify_accepts_retoc_layout_with_a_note() {
    let Some(peer) = Peer::get() else { return };
    for (utoc, chunks) in [(peer.mod_utoc(), 6), (peer.global_utoc(), 1)] {
        let report = run(
            None,
            &["verify", utoc.to_str().unwrap(), "--message-format", "json"],
        )
        .assert_code_for(0, utoc.display())
        .line_of("verified");
        assert_eq!(report["errors"].as_array().unwrap().len(), 0, "{report}");
        assert_eq!(report["chunks_checked"], chunks);
        let notes = report["notes"].as_array().unwrap();
        assert!(
            notes.iter().any(|n| n["code"] == "unpadded-blocks"),
            "{report}"
        );
        // The human report shows the note only with --verbose.
        let plain = run(None, &["verify", utoc.to_str().unwrap()]);
        plain.ok();
        let verbose = run(None, &["verify", "-v", utoc.to_str().unwrap()]);
        verbose.ok();
        assert!(
            plain.stderr.lines().count() < verbose.stderr.lines().count(),
            "{}",
            verbose.stderr
        );
    }
}

/// `unpack` writes every chunk; bulk data and the script objects come out
/// byte-identical to what retoc was given; `get` writes one file the same.
#[test]
fn unpack_and_get_give_the_inputs_back() {
    let Some(peer) = Peer::get() else { return };
    let dir = common::temp_dir("peer-unpack");
    let out_dir = dir.join("out");
    run(
        None,
        &[
            "unpack",
            peer.mod_utoc().to_str().unwrap(),
            out_dir.to_str().unwrap(),
        ],
    )
    .ok();
    let files = common::files_under(&out_dir);
    let mut names: Vec<String> = files
        .keys()
        .filter(|k| !k.starts_with("_chunks/"))
        .cloned()
        .collect();
    names.sort();
    assert_eq!(names, expected_files());
    for (name, bytes) in &files {
        if name.ends_with(".ubulk") {
            assert_eq!(bytes, &peer.input(base_name(name)), "{name}");
        }
    }

    for (path, _) in PACKAGES.iter().filter(|(_, bulk)| *bulk) {
        let file = format!("{path}.ubulk");
        let out = dir.join(base_name(&file));
        run(
            None,
            &[
                "get",
                peer.mod_utoc().to_str().unwrap(),
                &file,
                "-o",
                out.to_str().unwrap(),
            ],
        )
        .ok();
        assert_eq!(std::fs::read(&out).unwrap(), peer.input(base_name(&file)));
    }

    // The global container: its one chunk is ScriptObjects.bin, whose last
    // block's aligned range ends past the end of the .ucas.
    let global_dir = dir.join("global");
    run(
        None,
        &[
            "unpack",
            peer.global_utoc().to_str().unwrap(),
            global_dir.to_str().unwrap(),
        ],
    )
    .ok();
    let files = common::files_under(&global_dir);
    assert_eq!(files.len(), 1);
    let script_objects = std::fs::read(peer.corpus.join("retoc/UE5.3/ScriptObjects.bin")).unwrap();
    assert_eq!(files.values().next().unwrap(), &script_objects);
}

/// `extract` with retoc's `global.utoc` as the game's global container:
/// the texture package, which imports only script objects, comes back as
/// the legacy files retoc was given, byte for byte; the others, whose
/// imports are packages of a game that is not here, extract with
/// placeholders.
#[test]
fn extract_with_retoc_global_container() {
    let Some(peer) = Peer::get() else { return };
    let dir = common::temp_dir("peer-extract");
    let paks = dir.join("Paks");
    std::fs::create_dir_all(&paks).unwrap();
    for ext in ["utoc", "ucas"] {
        std::fs::copy(
            peer.global_utoc().with_extension(ext),
            paks.join(format!("global.{ext}")),
        )
        .unwrap();
    }
    let out_dir = dir.join("out");
    run(
        None,
        &[
            "extract",
            peer.mod_utoc().to_str().unwrap(),
            "--game",
            paks.to_str().unwrap(),
            "--engine",
            "5.6",
            "--allow-unresolved",
            "-o",
            out_dir.to_str().unwrap(),
        ],
    )
    .ok();
    let files = common::files_under(&out_dir);
    let quinn = "Game/Content/Characters/Mannequins/Textures/Quinn/T_Quinn_01_D";
    for ext in ["uasset", "uexp", "ubulk"] {
        let name = format!("{quinn}.{ext}");
        assert_eq!(
            files.get(&name),
            Some(&peer.input(base_name(&name))),
            "{name}"
        );
    }
    for (path, bulk) in PACKAGES {
        assert!(files.contains_key(&format!("{path}.uasset")), "{path}");
        assert!(files.contains_key(&format!("{path}.uexp")), "{path}");
        assert_eq!(files.contains_key(&format!("{path}.ubulk")), bulk, "{path}");
    }
}

/// `inspect` reads the container and each Zen package `unpack` wrote.
#[test]
fn inspect_reads_the_container_and_its_packages() {
    let Some(peer) = Peer::get() else { return };
    let summary: serde_json::Value = run(
        None,
        &["inspect", "--json", peer.mod_utoc().to_str().unwrap()],
    )
    .ok()
    .doc();
    assert_eq!(summary["chunk_count"], 6);
    assert_eq!(summary["container_header"]["packages"], 3);
    assert_eq!(summary["indexed_files"], 5);

    let dir = common::temp_dir("peer-inspect");
    run(
        None,
        &[
            "unpack",
            peer.mod_utoc().to_str().unwrap(),
            dir.to_str().unwrap(),
        ],
    )
    .ok();
    for (path, _) in PACKAGES {
        let file: PathBuf = Path::new(&*dir).join(format!("{path}.uzenasset"));
        let _: serde_json::Value = run(
            None,
            &[
                "inspect",
                "--json",
                "--engine",
                "5.6",
                file.to_str().unwrap(),
            ],
        )
        .assert_code_for(0, path)
        .doc();
    }
}
