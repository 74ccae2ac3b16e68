//! Zen Store cooks: why a content root can be empty.
//!
//! From UE 5.5 a project can cook into the Zen Store (the engine's
//! `bUseZenStore` setting of `UProjectPackagingSettings`, saved under
//! `[/Script/UnrealEd.ProjectPackagingSettings]` in the project's
//! `Config/DefaultGame.ini`; projects write `bUseZenStore=True/False` there).
//! Such a cook writes its packages into the store, not as loose files under
//! `Saved/Cooked/<Platform>` (only a `ue.projectstore` marker); re-cooking
//! with the setting off, or with `-skipzenstore`, gives the loose files
//! (public project notes found with the search tools: UE 5.8 projects that
//! turned the setting off, or cooked with `-SkipZenStore`, to get loose
//! cooked content). A modder pointing `[content] root` there sees an empty
//! mod; [`project_setting`] finds the setting in a parent folder's
//! `Config/DefaultGame.ini` (or `DefaultEngine.ini`) so `check` and `build`
//! can say so (`zen-store-cook`) instead.

use std::path::{Path, PathBuf};

use super::input::LooseFile;
use crate::error::{Error, ErrorKind, Result};

/// The section the setting lives in.
pub(crate) const SECTION: &str = "/Script/UnrealEd.ProjectPackagingSettings";
/// The setting's key.
pub(crate) const KEY: &str = "bUseZenStore";

/// How far up from the content root a project's `Config/` is looked for
/// (`<Project>/Saved/Cooked/<Platform>/<Project>/Content` is 5 levels).
const MAX_LEVELS: usize = 8;
/// Config files larger than this are not read.
const MAX_INI_BYTES: u64 = 4 << 20;

/// Where a project turns the Zen Store on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ZenStoreSetting {
    /// `Config/DefaultGame.ini` or `Config/DefaultEngine.ini`.
    pub(crate) file: PathBuf,
    /// 1-based line of the `bUseZenStore=True` that counts (the last one).
    pub(crate) line: usize,
}

impl ZenStoreSetting {
    /// The `zen-store-cook` error for an empty `content_root`.
    pub(crate) fn error(&self, content_root: &Path) -> Error {
        Error::new(ErrorKind::Content {
            code: "zen-store-cook",
            message: format!(
                "the content root `{}` has no packages: the project cooks into the Zen Store \
                 (`{KEY}=True` under [{SECTION}]), which leaves no loose cooked files",
                content_root.display()
            ),
        })
        .in_file(&self.file)
        .at_line(self.line, 1)
        .with_hint(format!(
            "set `{KEY}=False` (Project Settings > Packaging) or cook with `-skipzenstore`, \
             then cook again; or stage the build and point `[content] root` at the staged cooked files"
        ))
    }
}

/// `check` and `build` of a mod made from its content root only (no
/// `[content] paks`): a content root without packages, and without loose
/// files but what a cook leaves beside them (`ue.projectstore`, `Metadata/`,
/// `AssetRegistry.bin`), inside a project that cooks into the Zen Store is
/// the `zen-store-cook` error.
pub(crate) fn check_cook(
    content_root: &Path,
    no_packages: bool,
    loose_files: &[LooseFile],
) -> Result<()> {
    let only_cook_metadata = loose_files.iter().all(|f| {
        let path = f.relative_path.to_ascii_lowercase();
        path == "ue.projectstore"
            || path.starts_with("metadata/")
            || path.ends_with("assetregistry.bin")
    });
    if !no_packages || !only_cook_metadata {
        return Ok(());
    }
    match project_setting(content_root) {
        Some(setting) => Err(setting.error(content_root)),
        None => Ok(()),
    }
}

/// The project config above `content_root` that turns the Zen Store on,
/// if any: the nearest parent with a `Config/DefaultGame.ini` or
/// `Config/DefaultEngine.ini`; `DefaultGame.ini` (where the editor saves
/// the setting) decides when it sets the key.
pub(crate) fn project_setting(content_root: &Path) -> Option<ZenStoreSetting> {
    let start = std::fs::canonicalize(content_root).ok()?;
    for dir in start.ancestors().skip(1).take(MAX_LEVELS) {
        let config = dir.join("Config");
        let files = [
            config.join("DefaultGame.ini"),
            config.join("DefaultEngine.ini"),
        ];
        if !files.iter().any(|f| f.is_file()) {
            continue;
        }
        for file in files {
            if let Some((on, line)) = read_small(&file).and_then(|t| setting_in(&t)) {
                return on.then_some(ZenStoreSetting { file, line });
            }
        }
        return None;
    }
    None
}

fn read_small(path: &Path) -> Option<String> {
    let len = std::fs::metadata(path).ok()?.len();
    if len > MAX_INI_BYTES {
        return None;
    }
    let bytes = std::fs::read(path).ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// The last value of `bUseZenStore` in its section of an ini text, with its
/// 1-based line (ini keys and booleans are case-insensitive; `;` starts a
/// comment line).
fn setting_in(text: &str) -> Option<(bool, usize)> {
    let mut in_section = false;
    let mut found = None;
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim().trim_start_matches('\u{feff}');
        if line.starts_with(';') || line.starts_with('#') || line.is_empty() {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            in_section = name.trim().eq_ignore_ascii_case(SECTION);
            continue;
        }
        if !in_section {
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        if key.trim().eq_ignore_ascii_case(KEY) {
            let value = value.trim();
            let on = value.eq_ignore_ascii_case("true") || value == "1";
            found = Some((on, i + 1));
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_value_in_the_section_counts() {
        let text = "[/Script/EngineSettings.GeneralProjectSettings]\nbUseZenStore=True\n\
                    [/Script/UnrealEd.ProjectPackagingSettings]\nUsePakFile=True\n\
                    busezenstore = false\n; bUseZenStore=False\nbUseZenStore=True\n";
        assert_eq!(setting_in(text), Some((true, 7)));
        assert_eq!(
            setting_in("[/Script/UnrealEd.ProjectPackagingSettings]\nbUseZenStore=False\n"),
            Some((false, 2))
        );
        assert_eq!(setting_in("[Other]\nbUseZenStore=True\n"), None);
    }
}
