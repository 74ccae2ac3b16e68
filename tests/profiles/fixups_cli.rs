//! The command line: `inspect X.usmap`, `inspect PKG --mappings --properties`,
//! `convert --profile marvel-rivals --mappings`.

use crate::fixups_support;

use fixups_support::common;

use common::run;

#[test]
fn inspect_mappings_shows_counts() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let usmap = corpus.join("uassetapi/TestUE5_6/BpThirdPerson/ExplicitEnumValuesExample.usmap");
    let v = run(None, &["inspect", usmap.to_str().unwrap(), "--json"])
        .ok()
        .doc();
    assert_eq!(v["kind"], "usmap");
    assert_eq!(v["version"], 4);
    let m = zenpak::mappings::Mappings::load(&usmap).unwrap();
    assert_eq!(v["names"], m.names.len());
    assert_eq!(v["enums"], m.enums.len());
    assert_eq!(v["structs"], m.structs.len());
}

#[test]
fn inspect_package_with_mappings_lists_properties() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let dir = corpus.join("uassetapi/TestUE5_6/BpThirdPerson");
    let pkg = dir.join("SKM_Quinn_Simple.uasset");
    let usmap = dir.join("ExplicitEnumValuesExample.usmap");
    let out = run(
        None,
        &[
            "inspect",
            pkg.to_str().unwrap(),
            "--engine",
            "5.6",
            "--mappings",
            usmap.to_str().unwrap(),
            "--properties",
        ],
    );
    out.ok();
    common::assert_snapshot(
        "inspect_properties_skm_quinn",
        &common::normalize(&out.stdout, &[(&corpus, "CORPUS")]),
    );
}

#[test]
fn convert_with_marvel_rivals_profile() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let dir = corpus.join("uassetapi/TestUE5_6/BpThirdPerson");
    let pkg = dir.join("SKM_Quinn_Simple.uasset");
    let usmap = dir.join("ExplicitEnumValuesExample.usmap");
    let tmp = common::temp_dir("fixups-cli");
    std::fs::create_dir_all(&tmp).unwrap();
    let generic = tmp.join("generic.uzenasset");
    let padded = tmp.join("padded.uzenasset");
    // The game's layout of SkeletalMeshLODInfo (see fixups_support::game_mappings).
    let stock = zenpak::mappings::Mappings::load(&usmap).unwrap();
    let game_usmap = tmp.join("game.usmap");
    std::fs::write(
        &game_usmap,
        fixups_support::game_mappings(&stock)
            .write(zenpak::mappings::BodyCompression::None)
            .unwrap(),
    )
    .unwrap();
    let usmap = game_usmap;
    run(
        None,
        &[
            "convert",
            pkg.to_str().unwrap(),
            "--engine",
            "5.6",
            "-o",
            generic.to_str().unwrap(),
        ],
    )
    .ok();
    let out = run(
        None,
        &[
            "convert",
            pkg.to_str().unwrap(),
            "--engine",
            "5.6",
            "--profile",
            "marvel-rivals",
            "--mappings",
            usmap.to_str().unwrap(),
            "-o",
            padded.to_str().unwrap(),
            "--message-format",
            "json",
        ],
    );
    let converted = &out.ok().line_of("converted");
    // Two fixups of export 0 (their fields are checked on the preview below).
    assert_eq!(
        converted["fixups"].as_array().unwrap().len(),
        2,
        "{converted}"
    );
    let g = std::fs::read(&generic).unwrap();
    let p = std::fs::read(&padded).unwrap();
    assert_eq!(g.len() + 14, p.len());
    // inspect --profile shows the same edits, before and after, without writing.
    let v = run(
        None,
        &[
            "inspect",
            pkg.to_str().unwrap(),
            "--engine",
            "5.6",
            "--profile",
            "marvel-rivals",
            "--mappings",
            usmap.to_str().unwrap(),
            "--json",
        ],
    )
    .ok()
    .doc();
    assert_eq!(v["kind"], "profile-preview");
    assert_eq!(
        v["uexp_bytes"][1].as_u64().unwrap(),
        v["uexp_bytes"][0].as_u64().unwrap() + 14
    );
    let located: Vec<(u64, &str)> = v["report"]["exports"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["inserted_bytes"].as_u64().unwrap(),
                e["located_by"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        located,
        [(24, "mappings"), (8, "mappings and structure")],
        "{v}"
    );
    let tags = &v["report"]["exports"][1]["edits"];
    assert_eq!(tags[0]["before"], 3274 + 528 + 4 + 44);
    assert_eq!(tags[0]["after"], 3274 + 528 + 4 + 44 + 6);
    assert_eq!(tags[0]["inserted"], 4);
    assert_eq!(
        v["exports"][0]["after"][1].as_i64().unwrap(),
        v["exports"][0]["before"][1].as_i64().unwrap() + 14
    );
    let out = run(
        None,
        &[
            "inspect",
            pkg.to_str().unwrap(),
            "--engine",
            "5.6",
            "--profile",
            "marvel-rivals",
            "--mappings",
            usmap.to_str().unwrap(),
        ],
    );
    out.ok();
    common::assert_snapshot(
        "inspect_profile_skm_quinn",
        &common::normalize(&out.stdout, &[(&corpus, "CORPUS"), (&tmp, "TMP")]),
    );
    // Without the game's mappings the SkeletalMesh is refused, with a hint.
    let refused = run(
        None,
        &[
            "inspect",
            pkg.to_str().unwrap(),
            "--engine",
            "5.6",
            "--profile",
            "marvel-rivals",
            "--message-format",
            "json",
        ],
    );
    let error = refused.assert_code(1).error();
    assert_eq!(error["code"], "unsupported", "{error}");
    assert_eq!(common::file_tail(&error, 1), "SKM_Quinn_Simple.uasset");
    assert!(error["hint"].is_string(), "{error}");
    // An unknown profile is a usage error.
    run(
        None,
        &[
            "convert",
            pkg.to_str().unwrap(),
            "--engine",
            "5.6",
            "--profile",
            "nope",
            "-o",
            "x",
        ],
    )
    .assert_code(2);
    std::fs::remove_dir_all(&tmp).ok();
}
