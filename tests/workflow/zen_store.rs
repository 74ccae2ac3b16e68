//! Zen Store cooks (issue 30): a content root left empty by a cook into the
//! Zen Store is one `zen-store-cook` error from `check` and `build`, naming
//! the setting and the config file it is in.
//!
//! Fact: the setting is `bUseZenStore` under
//! `[/Script/UnrealEd.ProjectPackagingSettings]` in the project's
//! `Config/DefaultGame.ini` (`UProjectPackagingSettings`, UE 5.5+); a cook
//! with it on leaves only a `ue.projectstore` marker in
//! `Saved/Cooked/<Platform>` (public project notes: UE 5.8 projects turned
//! it off or cooked with `-skipzenstore` to get loose cooked files). No
//! engine is run here: the project trees are made by the test.

use crate::common::{temp_dir, TestDir};
use std::path::{Path, PathBuf};

const SECTION: &str = "[/Script/UnrealEd.ProjectPackagingSettings]";

/// `<tmp>/MyProj/{Config,Saved/Cooked/Windows}` with the marker a Zen Store
/// cook leaves, and a mod at `<tmp>/Mod` whose content root is that folder.
fn project(name: &str) -> (TestDir, PathBuf, PathBuf) {
    let dir = temp_dir(name);
    let proj = dir.as_ref().join("MyProj");
    let cooked = proj.join("Saved/Cooked/Windows");
    std::fs::create_dir_all(&cooked).unwrap();
    std::fs::create_dir_all(proj.join("Config")).unwrap();
    std::fs::write(cooked.join("ue.projectstore"), b"{}").unwrap();
    let repo = dir.as_ref().join("Mod");
    std::fs::create_dir_all(&repo).unwrap();
    std::fs::write(
        repo.join("mod.toml"),
        "[mod]\nname = \"ZenStoreMod\"\nversion = \"0.1.0\"\n\n[game]\nengine = \"5.6\"\n\
         project = \"MyProj\"\n\n[content]\nroot = \"../MyProj/Saved/Cooked/Windows\"\n",
    )
    .unwrap();
    (dir, proj, repo)
}

fn config(proj: &Path, file: &str, text: &str) {
    std::fs::write(proj.join("Config").join(file), text).unwrap();
}

/// `check` and `build` both fail with the one `zen-store-cook` error in `file`.
fn assert_zen_store_error(repo: &Path, file: &str, line: u64) {
    for command in ["check", "build"] {
        let refused = crate::cli_output::json(repo, &[command], 1);
        let errors = refused.diagnostics("error");
        assert_eq!(errors.len(), 1, "{command}: {}", refused.stdout);
        let e = &errors[0];
        assert_eq!(e["code"], "zen-store-cook", "{command}");
        let named = e["file"].as_str().unwrap().replace('\\', "/");
        assert!(named.ends_with(&format!("MyProj/Config/{file}")), "{named}");
        assert_eq!(e["line"], line, "{command}");
        assert!(e["message"].as_str().unwrap().contains("bUseZenStore"));
    }
    // Nothing was built.
    assert!(!repo.join("target/ZenStoreMod_P.utoc").exists());
}

#[test]
fn an_empty_cook_of_a_zen_store_project_is_one_error_naming_the_setting() {
    let (_dir, proj, repo) = project("zen-store-game");
    config(
        &proj,
        "DefaultGame.ini",
        &format!("{SECTION}\nUsePakFile=True\nbUseZenStore=True\n"),
    );
    assert_zen_store_error(&repo, "DefaultGame.ini", 3);
}

#[test]
fn the_setting_is_found_in_default_engine_ini_too() {
    let (_dir, proj, repo) = project("zen-store-engine");
    config(
        &proj,
        "DefaultEngine.ini",
        &format!("; cooked into the store\n{SECTION}\nbUseZenStore=true\n"),
    );
    assert_zen_store_error(&repo, "DefaultEngine.ini", 3);
}

#[test]
fn setting_off_or_content_present_is_no_zen_store_error() {
    // DefaultGame.ini turns it off: it decides over DefaultEngine.ini.
    let (_dir, proj, repo) = project("zen-store-off");
    config(
        &proj,
        "DefaultGame.ini",
        &format!("{SECTION}\nbUseZenStore=False\n"),
    );
    config(
        &proj,
        "DefaultEngine.ini",
        &format!("{SECTION}\nbUseZenStore=True\n"),
    );
    let checked = crate::cli_output::json(&repo, &["check"], 1);
    let found = checked.codes("error");
    assert!(
        checked.json().iter().all(|l| l["code"] != "zen-store-cook"),
        "{}",
        checked.stdout
    );
    // What is left is the content's own problem: the marker never ships.
    assert!(found.iter().any(|c| c == "never-ship"), "{found:?}");

    // On, but the cook has loose content: the content root is used as it is.
    let (_dir, proj, repo) = project("zen-store-loose");
    config(
        &proj,
        "DefaultGame.ini",
        &format!("{SECTION}\nbUseZenStore=True\n"),
    );
    let cooked = proj.join("Saved/Cooked/Windows");
    std::fs::remove_file(cooked.join("ue.projectstore")).unwrap();
    let data = cooked.join("MyProj/Content/Data");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(data.join("table.csv"), b"a,b\n").unwrap();
    let checked = crate::cli_output::json(&repo, &["check"], 0);
    assert!(checked.json().iter().all(|l| l["code"] != "zen-store-cook"));
}
