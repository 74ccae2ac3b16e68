//! The game fixture of `tests/common/game_fixture.rs` is a game zenpak
//! loads: `list` and `verify` (the real binary) read the whole `Paks`
//! folder with the fixture's key, every source mounts, the Oodle block
//! decodes to the corpus's `sample.raw`, and without the key the encrypted
//! container is refused with a key error.

use crate::common::game_fixture::{GameFixture, OVERRIDDEN_PACKAGE};
use crate::common::run;

#[test]
fn the_fixture_is_a_game_zenpak_lists_and_verifies() {
    let Some(game) = GameFixture::build("fixture-loads") else {
        return;
    };
    let paks = game.paks.to_str().unwrap();
    let key = game.aes_key.as_str();

    let listed = run(None, &["list", paks, "--json", "--aes-key", key])
        .ok()
        .doc();
    let files = listed
        .as_array()
        .or_else(|| listed["files"].as_array())
        .expect("a list of files");
    let source_of = |path: &str| -> Option<String> {
        files
            .iter()
            .find(|f| {
                f["path"]
                    .as_str()
                    .is_some_and(|p| p.eq_ignore_ascii_case(path))
            })
            .and_then(|f| f["source"].as_str().map(str::to_string))
    };
    // Every base source provides something the view sees.
    let cube = format!(
        "Game/Content/{}.uzenasset",
        OVERRIDDEN_PACKAGE.trim_start_matches("/Game/")
    );
    assert!(source_of(&cube).is_some(), "{cube} is listed");
    assert_eq!(
        source_of("Game/Content/Oodle/Sample.ubulk").as_deref(),
        Some("pakchunk2-Windows.pak")
    );
    assert_eq!(
        source_of("Game/Content/Characters/Mannequins/Meshes/SKM_Quinn_Simple.uzenasset")
            .as_deref(),
        Some("pakchunk1-Windows.pak")
    );
    assert_eq!(
        source_of("mount/point/root/test.txt").as_deref(),
        Some("pakchunk3-Windows.pak")
    );

    run(None, &["verify", paks, "--aes-key", key]).ok();

    // The Oodle block decodes to the bytes it was made from.
    let out = game.temp().join("sample.ubulk");
    run(
        None,
        &[
            "get",
            paks,
            "Game/Content/Oodle/Sample.ubulk",
            "-o",
            out.to_str().unwrap(),
            "--aes-key",
            key,
        ],
    )
    .ok();
    assert_eq!(
        std::fs::read(&out).unwrap(),
        std::fs::read(game.corpus.join("oodle/sample.raw")).unwrap()
    );

    // Without the key the encrypted container is refused.
    run(None, &["list", paks]).assert_code(1);
}
