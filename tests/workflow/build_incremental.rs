//! Reproducible and incremental builds, and failing builds that leave no
//! partial output. Driven through the `zenpak` binary, as CI drives it.

use crate::common::{self, run};

use std::path::{Path, PathBuf};

/// A mod made by `zenpak new` holding the 5.6 packages of the shared corpus.
pub(crate) fn corpus_mod(corpus: &Path, parent: &Path) -> PathBuf {
    let out = run(
        Some(parent),
        &["new", "Repro", "--engine", "5.6", "--project", "Proj"],
    );
    out.ok();
    let repo = parent.join("Repro");
    let content = repo.join("Cooked/Proj/Content");
    // Each where the package says it was cooked.
    for (folder, name) in [
        ("LevelPrototyping/Meshes", "SM_Cube"),
        ("Characters/Mannequins/Textures/Quinn", "T_Quinn_01_D"),
        ("ThirdPerson/Blueprints", "BP_ThirdPersonCharacter"),
    ] {
        let to = content.join(folder);
        std::fs::create_dir_all(&to).unwrap();
        for ext in ["uasset", "uexp", "ubulk"] {
            let from = corpus.join(format!("retoc/UE5.6/{name}.{ext}"));
            if from.exists() {
                std::fs::copy(&from, to.join(format!("{name}.{ext}"))).unwrap();
            }
        }
    }
    repo
}

/// The BLAKE3 of each artifact's bytes on disk, after checking what the
/// build's JSON says of them: a release build gives each file's hash, a
/// development build none (its outputs' stamps identify them).
fn artifact_sums(line: &serde_json::Value, release: bool) -> Vec<String> {
    let artifacts = line["artifacts"].as_array().unwrap();
    assert_eq!(artifacts.len(), 3, "{line}");
    artifacts
        .iter()
        .map(|artifact| {
            let path = artifact["path"].as_str().unwrap();
            let sum = blake3::hash(&std::fs::read(path).unwrap())
                .to_hex()
                .to_string();
            match release {
                true => assert_eq!(artifact["blake3"], sum.as_str(), "{path}"),
                false => assert!(artifact["blake3"].is_null(), "{artifact}"),
            }
            sum
        })
        .collect()
}

#[test]
fn builds_are_reproducible_and_incremental() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let repo = corpus_mod(&corpus, dir.path());

    let first = run(Some(&repo), &["build", "--message-format", "json"]);
    let done = first.ok().line_of("build-finished");
    assert_eq!(done["converted"], 3);
    assert_eq!(first.lines_of("package").len(), 3);
    let sums = artifact_sums(&done, false);

    // A release build takes that container as it is (the layout is the
    // canonical one) and hashes the files it was given without a hash.
    let utoc = repo.join("target/Repro_P.utoc");
    let written_at = std::fs::metadata(&utoc).unwrap().modified().unwrap();
    let release = run(
        Some(&repo),
        &["build", "--release", "--message-format", "json"],
    );
    let done = release.ok().line_of("build-finished");
    assert_eq!(done["up_to_date"], true, "{done}");
    assert_eq!(artifact_sums(&done, true), sums);
    // and the next one has that hash recorded.
    let again = run(
        Some(&repo),
        &["build", "--release", "--message-format", "json"],
    );
    assert_eq!(
        again.line_of("build-finished")["artifacts"],
        done["artifacts"]
    );

    // Nothing changed: nothing converted, nothing rewritten.
    let again = run(Some(&repo), &["build", "--message-format", "json"]);
    assert_eq!(again.line_of("build-finished")["converted"], 0);
    assert_eq!(again.line_of("build-finished")["up_to_date"], true);
    assert_eq!(
        std::fs::metadata(&utoc).unwrap().modified().unwrap(),
        written_at
    );

    // A clean rebuild from scratch gives the same bytes.
    run(Some(&repo), &["clean", "--quiet"]).ok();
    assert!(!repo.join("target").exists());
    let fresh = run(Some(&repo), &["build", "--message-format", "json"]);
    assert_eq!(artifact_sums(&fresh.line_of("build-finished"), false), sums);
    let forced = run(
        Some(&repo),
        &["build", "--force", "--message-format", "json"],
    );
    assert_eq!(forced.line_of("build-finished")["converted"], 3);
    assert_eq!(
        artifact_sums(&forced.line_of("build-finished"), false),
        sums
    );

    // One file changed: only its package is converted again.
    let uexp = repo.join("Cooked/Proj/Content/LevelPrototyping/Meshes/SM_Cube.uexp");
    let mut bytes = std::fs::read(&uexp).unwrap();
    let last = bytes.len() - 5;
    bytes[last] ^= 0x01;
    std::fs::write(&uexp, &bytes).unwrap();
    let changed = run(Some(&repo), &["build", "--message-format", "json"]);
    assert_eq!(changed.line_of("build-finished")["converted"], 1);
    let reconverted: Vec<serde_json::Value> = changed
        .lines_of("package")
        .into_iter()
        .filter(|l| l["reused"] == false)
        .collect();
    assert_eq!(reconverted.len(), 1);
    assert!(reconverted[0]["package"]
        .as_str()
        .unwrap()
        .ends_with("/SM_Cube"));
    // A development rebuild extends the previous .ucas: the unchanged
    // chunks stay where they were, the changed package's are appended.
    let done = changed.line_of("build-finished");
    assert_eq!(done["layout"], "extended");
    assert_eq!(done["artifacts"][1]["blake3"], serde_json::Value::Null);
    let ucas = repo.join("target/Repro_P.ucas");
    let extended_len = std::fs::metadata(&ucas).unwrap().len();
    assert!(done["reused_chunks"].as_u64().unwrap() > 0, "{done}");
    let verify = run(Some(&repo), &["verify", "target/Repro_P.utoc"]);
    verify.ok();
    let unpack = |name: &str| {
        let to = dir.path().join(name);
        let out = run(
            Some(&repo),
            &["unpack", "target/Repro_P.utoc", to.to_str().unwrap()],
        );
        out.ok();
        common::files_under(&to)
    };
    let extended_files = unpack("unpacked-extended");

    // `--release` writes the canonical layout, though nothing changed: the
    // bytes a full conversion gives (what came from the cache, export and
    // bulk data kept by reference, is exactly what converting again gives),
    // holding the same files as the extended container.
    let release = run(
        Some(&repo),
        &["build", "--release", "--message-format", "json"],
    );
    assert_eq!(release.line_of("build-finished")["layout"], "canonical");
    assert_eq!(release.line_of("build-finished")["converted"], 0);
    assert!(std::fs::metadata(&ucas).unwrap().len() < extended_len);
    let release_sums = artifact_sums(&release.line_of("build-finished"), true);
    let reconverted_all = run(
        Some(&repo),
        &["build", "--force", "--message-format", "json"],
    );
    assert_eq!(reconverted_all.line_of("build-finished")["converted"], 3);
    assert_eq!(
        artifact_sums(&reconverted_all.line_of("build-finished"), false),
        release_sums
    );
    assert_ne!(release_sums, sums);
    assert_eq!(unpack("unpacked-canonical"), extended_files);
    // And a release build is fresh only over the canonical layout.
    let again = run(
        Some(&repo),
        &["build", "--release", "--message-format", "json"],
    );
    assert_eq!(again.line_of("build-finished")["up_to_date"], true);

    // The release archive holds the triplet under ~mods/ with its sums.
    let package =
        run(Some(&repo), &["package", "--message-format", "json"]).line_of("release-archive");
    let archive = PathBuf::from(package["path"].as_str().unwrap());
    assert!(archive.is_file());
    let names: Vec<&str> = package["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "~mods/Repro_P.utoc",
            "~mods/Repro_P.ucas",
            "~mods/Repro_P.pak"
        ]
    );

    // Installing copies the triplet into the game's ~mods folder.
    let game = dir.path().join("Game");
    std::fs::create_dir_all(game.join("Proj/Content/Paks")).unwrap();
    assert!(
        run(
            Some(&repo),
            &["install", "--game-dir", game.to_str().unwrap()]
        )
        .code
            == 0
    );
    assert!(game.join("Proj/Content/Paks/~mods/Repro_P.ucas").is_file());
}

/// A development build extends the previous `.ucas` only while little of
/// it would be left unused: removing a small package extends it, removing
/// the package that holds most of its bytes writes it anew (an extension
/// would keep the removed bytes in the file).
#[test]
fn removing_most_of_a_container_writes_it_anew() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let repo = corpus_mod(&corpus, dir.path());
    let build = || {
        let out = run(Some(&repo), &["build", "--message-format", "json"]);
        out.ok();
        let verify = run(Some(&repo), &["verify", "target/Repro_P.utoc"]);
        verify.ok();
        out.line_of("build-finished")
    };
    let remove = |folder: &str, name: &str| {
        for ext in ["uasset", "uexp", "ubulk"] {
            let path = repo.join(format!("Cooked/Proj/Content/{folder}/{name}.{ext}"));
            if path.exists() {
                std::fs::remove_file(path).unwrap();
            }
        }
    };
    let ucas = repo.join("target/Repro_P.ucas");
    assert_eq!(build()["layout"], "canonical");
    let full_len = std::fs::metadata(&ucas).unwrap().len();

    // SM_Cube is a few percent of the `.ucas`: it stays in the file, unused
    // (only the new container header is appended).
    remove("LevelPrototyping/Meshes", "SM_Cube");
    let small = build();
    assert_eq!(small["layout"], "extended", "{small}");
    assert_eq!(small["packages"], 2);
    let extended_len = std::fs::metadata(&ucas).unwrap().len();
    assert!((full_len..full_len + 4096).contains(&extended_len));

    // The texture is most of it: the container is written anew, without it.
    remove("Characters/Mannequins/Textures/Quinn", "T_Quinn_01_D");
    let large = build();
    assert_eq!(large["layout"], "canonical", "{large}");
    assert_eq!(large["packages"], 1);
    assert!(std::fs::metadata(&ucas).unwrap().len() < full_len / 4);
}

#[test]
fn a_broken_package_fails_the_build_without_partial_output() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let repo = corpus_mod(&corpus, dir.path());
    let uexp = repo.join("Cooked/Proj/Content/ThirdPerson/Blueprints/BP_ThirdPersonCharacter.uexp");
    let bytes = std::fs::read(&uexp).unwrap();
    std::fs::write(&uexp, &bytes[..bytes.len() / 3]).unwrap();

    let out = run(Some(&repo), &["build", "--message-format", "json"]);
    let error = out.assert_code(1).error();
    assert_eq!(
        common::file_tail(&error, 1),
        "BP_ThirdPersonCharacter.uexp",
        "{error}"
    );
    let leftovers: Vec<String> = std::fs::read_dir(repo.join("target"))
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    assert!(
        leftovers
            .iter()
            .all(|name| name == ".zenpak-cache" || name == ".zenpak-lock"),
        "no triplet or temporary file may be left: {leftovers:?}"
    );

    // Usage errors exit with 2.
    let bad = run(
        Some(&repo),
        &["build", "--manifest-path", "does-not-exist.toml"],
    );
    bad.assert_code(2);
}

#[test]
fn check_lists_problems_and_what_the_game_must_have() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let repo = corpus_mod(&corpus, dir.path());
    let ok = run(Some(&repo), &["check", "--message-format", "json"]);
    let report = ok.ok().line_of("check");
    assert_eq!(report["packages"], 3);
    // The character imports the mannequin meshes and animations of the template: not in the mod.
    let needed: Vec<&str> = report["must_exist_in_game"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(!needed.is_empty());
    assert!(
        needed
            .iter()
            .all(|n| n.starts_with('/') && !n.starts_with("/Script/")),
        "{needed:?}"
    );

    let meshes = repo.join("Cooked/Proj/Content/LevelPrototyping/Meshes");
    std::fs::remove_file(meshes.join("SM_Cube.uexp")).unwrap();
    let textures = repo.join("Cooked/Proj/Content/Characters/Mannequins/Textures/Quinn");
    for ext in ["uasset", "uexp", "ubulk"] {
        std::fs::copy(
            textures.join(format!("T_Quinn_01_D.{ext}")),
            textures.join(format!("t_quinn_01_d.{ext}")),
        )
        .unwrap();
    }
    let bad = run(Some(&repo), &["check", "--message-format", "json"]);
    bad.assert_code(1);
    // The missing .uexp (an I/O error on it) and the two names that differ
    // only in case.
    let errors = bad.diagnostics("error");
    assert!(
        errors
            .iter()
            .any(|e| e["code"] == "io" && common::file_tail(e, 1) == "SM_Cube.uexp"),
        "{}",
        bad.stdout
    );
    assert!(
        bad.codes("error").contains(&"case-clash".to_string()),
        "{}",
        bad.stdout
    );
    assert!(!repo.join("target").exists(), "check writes nothing");
}

/// A development build that fails after appending a changed package's
/// chunks cuts the `.ucas` back: the previous triplet is left byte for byte
/// as it was. Cutting back changes the file's times, so the next build
/// writes the canonical layout, and the one after extends again. An
/// extended `.ucas` installs (checked by its stamp: it has no recorded hash).
#[test]
fn a_failed_development_build_leaves_the_previous_container_as_it_was() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let repo = corpus_mod(&corpus, dir.path());
    run(Some(&repo), &["build", "--quiet"]).ok();
    let target = repo.join("target");
    let before = common::files_under(&target);

    // SM_Cube changes (converted and appended), then the Blueprint after it
    // in content order is broken: the build fails.
    let content = repo.join("Cooked/Proj/Content");
    let uexp = content.join("LevelPrototyping/Meshes/SM_Cube.uexp");
    let original_uexp = std::fs::read(&uexp).unwrap();
    let mut changed = original_uexp.clone();
    let last = changed.len() - 5;
    changed[last] ^= 0x01;
    std::fs::write(&uexp, &changed).unwrap();
    let blueprint = content.join("ThirdPerson/Blueprints/BP_ThirdPersonCharacter.uasset");
    let original_blueprint = std::fs::read(&blueprint).unwrap();
    std::fs::write(&blueprint, &original_blueprint[..200]).unwrap();
    let failed = run(Some(&repo), &["build", "--quiet"]);
    failed.assert_code(1);
    let after = common::files_under(&target);
    for name in ["Repro_P.utoc", "Repro_P.ucas", "Repro_P.pak"] {
        assert!(
            before[name] == after[name],
            "{name} changed after a failed build"
        );
    }
    assert!(
        !after.keys().any(|k| k.ends_with(".zenpak-tmp")),
        "{:?}",
        after.keys()
    );

    std::fs::write(&blueprint, &original_blueprint).unwrap();
    let fixed = run(Some(&repo), &["build", "--message-format", "json"]);
    assert_eq!(fixed.line_of("build-finished")["layout"], "canonical");
    assert_eq!(
        fixed.line_of("build-finished")["converted"],
        0,
        "the failed build cached SM_Cube"
    );
    std::fs::write(&uexp, &original_uexp).unwrap();
    let extended = run(Some(&repo), &["build", "--message-format", "json"]);
    assert_eq!(extended.line_of("build-finished")["layout"], "extended");
    assert_eq!(extended.line_of("build-finished")["converted"], 1);

    let game = dir.path().join("Game");
    std::fs::create_dir_all(game.join("Proj/Content/Paks")).unwrap();
    let install = run(
        Some(&repo),
        &["install", "--game-dir", game.to_str().unwrap()],
    );
    install.ok();
    assert_eq!(
        std::fs::read(game.join("Proj/Content/Paks/~mods/Repro_P.ucas")).unwrap(),
        std::fs::read(target.join("Repro_P.ucas")).unwrap()
    );
}

/// `zenpak build --message-format json` with `args` in `repo`, which must succeed.
fn json_build(repo: &Path, args: &[&str]) -> common::Run {
    let out = run(
        Some(repo),
        &[&["build", "--message-format", "json"], args].concat(),
    );
    out.ok();
    out
}

/// The files of `repo`'s container, unpacked to `to`.
fn unpack_to(repo: &Path, to: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    run(
        Some(repo),
        &["unpack", "target/Repro_P.utoc", to.to_str().unwrap()],
    )
    .ok();
    common::files_under(to)
}

/// A development build takes an unchanged package from the container
/// record (`container.bin`) alone: with every cache entry gone, one file
/// changed still converts one package, and the extended container holds
/// what a release build of the same files holds.
#[test]
fn unchanged_packages_are_kept_from_the_container_record_alone() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let repo = corpus_mod(&corpus, dir.path());
    let build = |args: &[&str]| json_build(&repo, args);
    let unpack = |name: &str| unpack_to(&repo, &dir.path().join(name));
    build(&[]);
    let cache = repo.join("target/.zenpak-cache/Repro_P");
    let remove_entries = || {
        for file in ["packages.zpk", "packages.zpi"] {
            std::fs::remove_file(cache.join(file)).unwrap();
        }
    };
    remove_entries();

    let uexp = repo.join("Cooked/Proj/Content/LevelPrototyping/Meshes/SM_Cube.uexp");
    let mut bytes = std::fs::read(&uexp).unwrap();
    let last = bytes.len() - 5;
    bytes[last] ^= 0x01;
    std::fs::write(&uexp, &bytes).unwrap();
    let changed = build(&[]);
    let done = changed.line_of("build-finished");
    assert_eq!(done["layout"], "extended", "{done}");
    assert_eq!(done["converted"], 1, "{done}");
    let reused: Vec<String> = changed
        .lines_of("package")
        .iter()
        .filter(|l| l["reused"] == true)
        .map(|l| l["package"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(reused.len(), 2, "{reused:?}");
    assert!(changed.codes("warning").is_empty(), "{}", changed.stdout);
    run(Some(&repo), &["verify", "target/Repro_P.utoc"]).ok();
    let extended = unpack("extended");
    let list = || {
        run(Some(&repo), &["list", "target/Repro_P.utoc", "--json"])
            .ok()
            .stdout
            .clone()
    };
    let extended_list = list();

    // The same files, written anew by a release build (which converts the
    // two packages whose entries are gone, and never reads the record).
    let release = build(&["--release"]);
    assert_eq!(release.line_of("build-finished")["layout"], "canonical");
    assert_eq!(release.line_of("build-finished")["converted"], 2);
    assert_eq!(unpack("canonical"), extended);
    assert_eq!(list(), extended_list);

    // Extending an extended container again, from its record.
    remove_entries();
    bytes[last] ^= 0x01;
    std::fs::write(&uexp, &bytes).unwrap();
    build(&[]);
    let again = build(&[]);
    assert_eq!(again.line_of("build-finished")["up_to_date"], true);
    bytes[last] ^= 0x01;
    std::fs::write(&uexp, &bytes).unwrap();
    let twice = build(&[]).line_of("build-finished");
    assert_eq!(twice["layout"], "extended", "{twice}");
    assert_eq!(twice["converted"], 1, "{twice}");
    assert_eq!(unpack("extended-twice"), extended);
}

/// A damaged container record is a warning and a container written anew,
/// never wrong output; a stale one (of an earlier container) is a silent
/// miss; a record of another layout too.
#[test]
fn a_damaged_or_stale_container_record_writes_the_container_anew() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let repo = corpus_mod(&corpus, dir.path());
    let build = || json_build(&repo, &[]);
    let unpack = |name: &str| unpack_to(&repo, &dir.path().join(name));
    let uexp = repo.join("Cooked/Proj/Content/LevelPrototyping/Meshes/SM_Cube.uexp");
    let original = std::fs::read(&uexp).unwrap();
    let mut flipped = original.clone();
    let last = flipped.len() - 5;
    flipped[last] ^= 0x01;
    let record = repo.join("target/.zenpak-cache/Repro_P/container.bin");

    build();
    let first_record = std::fs::read(&record).unwrap();
    std::fs::write(&uexp, &flipped).unwrap();
    build();
    let truth = {
        run(Some(&repo), &["build", "--release"]).ok();
        unpack("truth-flipped")
    };
    std::fs::write(&uexp, &original).unwrap();
    let truth_original = {
        run(Some(&repo), &["build", "--release"]).ok();
        unpack("truth-original")
    };
    build();

    let whole = std::fs::read(&record).unwrap();
    let mut one_bit = whole.clone();
    one_bit[whole.len() / 2] ^= 0x04;
    let cases: [(&str, Vec<u8>, bool); 5] = [
        ("a bit flipped", one_bit, true),
        ("cut short", whole[..whole.len() / 2].to_vec(), true),
        ("garbage", vec![0x5a; 200], true),
        (
            "another layout",
            [&b"ZPKCR\x00\x00\x01"[..], &whole[8..]].concat(),
            false,
        ),
        ("stale", first_record, false),
    ];
    for (n, (what, bytes, warned)) in cases.into_iter().enumerate() {
        // Each case changes the input, so the build does work.
        std::fs::write(&uexp, &flipped).unwrap();
        std::fs::write(&record, &bytes).unwrap();
        let out = build();
        let done = out.line_of("build-finished");
        assert_eq!(done["layout"], "canonical", "{what}: {done}");
        let damaged = out.coded("warning", "cache-damaged");
        assert_eq!(damaged.len(), usize::from(warned), "{what}: {}", out.stdout);
        if warned {
            assert_eq!(common::file_tail(&damaged[0], 1), "container.bin", "{what}");
        }
        run(Some(&repo), &["verify", "target/Repro_P.utoc"]).ok();
        assert_eq!(unpack(&format!("case-{n}")), truth, "{what}");
        // The record is whole again: the next change extends the container.
        std::fs::write(&uexp, &original).unwrap();
        let next = build().line_of("build-finished");
        assert_eq!(next["layout"], "extended", "{what}: {next}");
        assert_eq!(unpack(&format!("next-{n}")), truth_original, "{what}");
    }
}

/// A file written while a build reads the inputs (an editor's cook still
/// running) fails the build with `input-changed` and publishes nothing;
/// the cache keeps no entry the build converted, so the file put back as
/// it was is converted again from its own bytes, never taken from an entry
/// made of the bytes read after the change (under the key of those before):
/// in a first build, in a development build extending its container, and
/// in a build that fails for another reason meanwhile.
#[test]
fn a_file_changed_during_the_build_fails_it_and_leaves_no_entry_made_from_it() {
    use zenpak::build::{Event, Reporter};
    let Some(corpus) = common::corpus() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let repo = corpus_mod(&corpus, dir.path());
    json_build(&repo, &[]);
    let reference = unpack_to(&repo, &dir.path().join("reference"));
    std::fs::remove_dir_all(repo.join("target")).unwrap();

    let header = repo.join("Cooked/Proj/Content/LevelPrototyping/Meshes/SM_Cube.uasset");
    let before = std::fs::read(&header).unwrap();
    // Another valid header: a name the export data refers to, renamed in
    // place (the Zen package's name batch holds its text).
    let at = before
        .windows(8)
        .position(|w| w == b"lambert1")
        .expect("SM_Cube names its material slot lambert1");
    let mut after = before.clone();
    after[at + 7] = b'2';

    /// Writes the file once the inputs are fingerprinted, before any is converted.
    struct WritesOnStart<'a>(&'a Path, &'a [u8]);
    impl Reporter for WritesOnStart<'_> {
        fn event(&self, event: Event<'_>) {
            if let Event::Started { .. } = event {
                std::fs::write(self.0, self.1).unwrap();
            }
        }
    }
    let manifest = zenpak::manifest::Manifest::load(&repo.join("mod.toml")).unwrap();
    // A build during which the header becomes `bytes`: it fails,
    // naming the file.
    let build_changing_to = |bytes: &[u8]| {
        let options = zenpak::build::BuildOptions::default();
        let error =
            zenpak::build::build(&manifest, &options, &WritesOnStart(&header, bytes)).unwrap_err();
        assert_eq!(error.code(), "input-changed", "{error}");
        assert_eq!(
            error.file().and_then(Path::file_name),
            header.file_name(),
            "{error}"
        );
    };
    build_changing_to(&after);
    assert!(!repo.join("target/Repro_P.utoc").exists());

    // Put back: every package is converted again, and the container is
    // the one those files make.
    std::fs::write(&header, &before).unwrap();
    let rebuilt = json_build(&repo, &[]);
    assert_eq!(rebuilt.line_of("build-finished")["converted"], 3);
    assert_eq!(unpack_to(&repo, &dir.path().join("rebuilt")), reference);

    // A development build that converts the one package changed and keeps
    // the others from the container it extends: a change under it is seen
    // as well, and its entry is not kept.
    std::fs::write(&header, &after).unwrap();
    build_changing_to(&before);
    std::fs::write(&header, &after).unwrap();
    let changed = json_build(&repo, &[]).line_of("build-finished");
    assert_eq!(changed["converted"], 1, "{changed}");
    std::fs::write(&header, &before).unwrap();
    json_build(&repo, &[]);
    assert_eq!(unpack_to(&repo, &dir.path().join("back")), reference);

    // A build that fails for another reason (a package cut short) while the
    // file changes keeps no entry made from it either.
    std::fs::remove_dir_all(repo.join("target")).unwrap();
    let uexp = repo.join("Cooked/Proj/Content/ThirdPerson/Blueprints/BP_ThirdPersonCharacter.uexp");
    let whole = std::fs::read(&uexp).unwrap();
    std::fs::write(&uexp, &whole[..whole.len() / 3]).unwrap();
    let options = zenpak::build::BuildOptions::default();
    let error =
        zenpak::build::build(&manifest, &options, &WritesOnStart(&header, &after)).unwrap_err();
    assert_eq!(error.code(), "many", "{error}");
    std::fs::write(&uexp, &whole).unwrap();
    std::fs::write(&header, &before).unwrap();
    let again = json_build(&repo, &[]).line_of("build-finished");
    assert_eq!(again["converted"], 3, "{again}");
    assert_eq!(
        unpack_to(&repo, &dir.path().join("after-failure")),
        reference
    );
}

/// The cache's records keep the layout an earlier zenpak wrote (a change
/// must bump the record's magic, so that an old cache is ignored): read
/// here without zenpak's code, `files.json` lists every input with its
/// size and BLAKE3, `container.bin` every package and the `.utoc`'s and
/// `.ucas`'s sizes under its checksum, and `tree.bin` ends with its own.
#[test]
fn the_cache_records_keep_their_layout() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let repo = corpus_mod(&corpus, dir.path());
    json_build(&repo, &[]);
    let cache = repo.join("target/.zenpak-cache/Repro_P");
    let u32_at = |b: &[u8], at: usize| u32::from_le_bytes(b[at..at + 4].try_into().unwrap());
    let u64_at = |b: &[u8], at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap());

    let index = std::fs::read(cache.join("files.json")).unwrap();
    assert_eq!(&index[..8], b"ZPKFI\x00\x00\x05");
    let count = u32_at(&index, 8) as usize;
    let inputs = common::files_under(&repo.join("Cooked"));
    assert_eq!(count, inputs.len());
    let (mut at, mut path) = (12, Vec::new());
    for _ in 0..count {
        let (shared, rest) = (u32_at(&index, at) as usize, u32_at(&index, at + 4) as usize);
        path.truncate(shared);
        path.extend_from_slice(&index[at + 8..at + 8 + rest]);
        at += 8 + rest;
        let file = PathBuf::from(String::from_utf8(path.clone()).unwrap());
        let bytes = std::fs::read(&file).unwrap();
        assert_eq!(u64_at(&index, at), bytes.len() as u64, "{}", file.display());
        assert_eq!(&index[at + 32..at + 64], blake3::hash(&bytes).as_bytes());
        at += 64;
    }
    assert_eq!(at, index.len());

    let record = std::fs::read(cache.join("container.bin")).unwrap();
    assert_eq!(&record[..8], b"ZPKCR\x00\x00\x03");
    let (mut at, mut packages) = (8, 0);
    while u32_at(&record, at) != 0 {
        at += 4 + u32_at(&record, at) as usize;
        packages += 1;
    }
    at += 4;
    let size = |name: &str| {
        std::fs::metadata(repo.join("target").join(name))
            .unwrap()
            .len()
    };
    assert_eq!(u64_at(&record, at + 32), size("Repro_P.utoc"));
    assert_eq!(u64_at(&record, at + 64), size("Repro_P.ucas"));
    assert_eq!(u64_at(&record, at + 96), packages);
    assert_eq!(packages, 3);
    assert_eq!(at + 104 + 32, record.len());
    assert_eq!(
        &record[at + 104..],
        blake3::hash(&record[..at + 104]).as_bytes()
    );

    let tree = std::fs::read(cache.join("tree.bin")).unwrap();
    assert_eq!(&tree[..8], b"ZPKTR\x00\x00\x02");
    let body = tree.len() - 32;
    assert_eq!(&tree[body..], blake3::hash(&tree[..body]).as_bytes());
}
