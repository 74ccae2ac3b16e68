//! One glob dialect (issue 28): `[content] include`, `list --filter` and
//! `extract --filter` read a pattern the same way — case-insensitive, `*`
//! within a folder, a pattern without `/` at any depth — through the real
//! binary on the example mod's cooked files.

use std::path::Path;

use crate::common::{run, temp_dir};

fn write_mod(dir: &Path, include: &str) {
    let cooked = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/hello-mod/Cooked");
    let root = cooked.to_string_lossy().replace('\\', "/");
    std::fs::write(
        dir.join("mod.toml"),
        format!(
            "[mod]\nname = \"Globs\"\nversion = \"0.1.0\"\n\n[game]\nengine = \"5.6\"\nproject = \"HelloGame\"\n\n\
             [content]\nroot = \"{root}\"\n{include}\n\n[output]\ndir = \"target\"\ncompression = \"none\"\n"
        ),
    )
    .unwrap();
}

#[test]
fn include_list_and_extract_read_a_pattern_alike() {
    let tmp = temp_dir("globs");
    // Lower case, `*` in the last folder only, and a bare `*.ini`.
    write_mod(
        &tmp,
        "include = [\"hellogame/content/hellomod/st_*\", \"*.INI\"]",
    );
    let check = run(Some(&tmp), &["check", "--message-format", "json"])
        .ok()
        .line_of("check");
    assert_eq!(check["packages"], 1, "{check}");
    assert_eq!(check["loose_files"], 1, "{check}");
    // `*` does not cross folders: `hellogame/*` selects nothing below it.
    write_mod(&tmp, "include = [\"hellogame/*\"]");
    let check = run(Some(&tmp), &["check", "--message-format", "json"]).line_of("check");
    assert_eq!(check["packages"], 0, "{check}");

    write_mod(&tmp, "");
    run(Some(&tmp), &["build", "--quiet"]).ok();
    let utoc = tmp.join("target/Globs_P.utoc");
    let utoc = utoc.to_str().unwrap();
    let listing: serde_json::Value = run(
        Some(&tmp),
        &[
            "list",
            utoc,
            "--filter",
            "/hellogame/content/hellomod/st_*",
            "--json",
        ],
    )
    .ok()
    .doc();
    let listed: Vec<&str> = listing["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(listed, ["HelloGame/Content/HelloMod/ST_HelloMod.uzenasset"]);

    let out_dir = tmp.join("extracted");
    run(
        Some(&tmp),
        &[
            "extract",
            utoc,
            "--engine",
            "5.6",
            "--filter",
            "game/hellomod/ST_*",
            "--allow-unresolved",
            "-o",
            out_dir.to_str().unwrap(),
        ],
    )
    .ok();
    let mut extracted: Vec<String> = walk(&out_dir);
    extracted.sort();
    assert!(
        extracted.iter().all(|p| p.contains("ST_HelloMod.")) && !extracted.is_empty(),
        "{extracted:?}"
    );
}

fn walk(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path.to_string_lossy().replace('\\', "/"));
        }
    }
    out
}
