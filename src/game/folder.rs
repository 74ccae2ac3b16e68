//! A game's install folder: where its `Paks/`, `~mods/` and `LogicMods/`
//! are, found from whatever folder of the game the modder names.
//!
//! A packaged game lays out `<Install>/<Project>/Content/Paks/` (with
//! `~mods/` and, for blueprint mods loaded by UE4SS-style loaders,
//! `LogicMods/` inside), beside `<Install>/Engine/` and the launcher. Modders
//! pass the install folder, but also the `Paks` folder itself, the project
//! folder or `Content/`, and sometimes `~mods`: [`GameFolder::locate`] walks
//! up from the folder given to the one holding `<Project>/Content/Paks` and
//! says, as a note, which folder it took. `install`, `uninstall`, `doctor`,
//! `check --game-dir` and `conflicts` all go through it.

use std::path::{Path, PathBuf};

use crate::diagnostic::Diagnostic;
use crate::error::{Error, Result};

/// How many folders above the one given are tried (`~mods` → `Paks` →
/// `Content` → `<Project>` → install folder).
const LEVELS_UP: usize = 4;

/// A located game install folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GameFolder {
    /// The install folder (holding `<Project>/Content/Paks`).
    pub root: PathBuf,
    /// The project folder's name as it is on disk.
    pub(crate) project: String,
    /// `game-dir-adjusted` when the folder given was not the install folder.
    pub notes: Vec<Diagnostic>,
}

impl GameFolder {
    /// Finds the install folder from `given` (the install folder or any
    /// folder of the game down to `~mods`). With `project` (the mod's
    /// `[game] project`), the project folder must be that one (compared
    /// ignoring ASCII case, as Windows does); without, the install folder
    /// must hold exactly one project folder with `Content/Paks`.
    pub fn locate(given: &Path, project: Option<&str>) -> Result<Self> {
        if !given.is_dir() {
            return Err(Error::usage(format!(
                "the game folder {} does not exist or is not a folder",
                given.display()
            ))
            .with_hint(
                "pass the game's install folder, the one holding `<Project>/Content/Paks`",
            ));
        }
        let mut candidate = Some(given);
        let mut found_other: Vec<String> = Vec::new();
        for _ in 0..=LEVELS_UP {
            let Some(dir) = candidate else { break };
            let projects = projects_in(dir);
            let chosen = match project {
                Some(wanted) => projects.iter().find(|p| p.eq_ignore_ascii_case(wanted)),
                None if projects.len() == 1 => projects.first(),
                None => None,
            };
            if let Some(chosen) = chosen {
                let mut folder = GameFolder {
                    root: dir.to_path_buf(),
                    project: chosen.clone(),
                    notes: Vec::new(),
                };
                if dir != given {
                    folder.notes.push(
                        Diagnostic::note(
                            "game-dir-adjusted",
                            format!(
                                "{} is inside the game; using its install folder {}",
                                given.display(),
                                dir.display()
                            ),
                        )
                        .with_hint("pass the install folder (the one holding `<Project>/Content/Paks`) to silence this"),
                    );
                }
                return Ok(folder);
            }
            if found_other.is_empty() {
                found_other = projects;
            }
            candidate = dir.parent().filter(|p| !p.as_os_str().is_empty());
        }
        let error = match project {
            Some(wanted) => Error::usage(format!(
                "{} is not a game folder with `{wanted}/Content/Paks`",
                given.display()
            )),
            None => Error::usage(format!(
                "{} is not a game install folder with one `<Project>/Content/Paks`",
                given.display()
            )),
        };
        let hint = if found_other.is_empty() {
            "pass the game's install folder, the one holding `<Project>/Content/Paks`".to_string()
        } else {
            format!(
                "it holds the project folder(s) {}; is `[game] project` right?",
                found_other
                    .iter()
                    .map(|p| format!("`{p}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        Err(error.with_hint(hint))
    }

    /// `<Install>/<Project>/Content/Paks`.
    /// The project folder's name as it is on disk.
    pub fn project(&self) -> &str {
        &self.project
    }

    pub fn paks(&self) -> PathBuf {
        self.root.join(&self.project).join("Content").join("Paks")
    }

    /// `<Paks>/~mods`, where IoStore and pak mods go.
    pub fn mods(&self) -> PathBuf {
        self.paks().join("~mods")
    }

    /// `<Paks>/LogicMods`, where blueprint mods go for a mod loader.
    pub fn logic_mods(&self) -> PathBuf {
        self.paks().join("LogicMods")
    }
}

/// The folders of `dir` that hold `Content/Paks`, sorted, `Engine` left out.
/// The game's `<Project>/Content/Paks` folder that `path` is inside (or
/// is), if any: the engine mounts every `.pak` under it, at any depth.
/// Names are compared ignoring ASCII case, as Windows does.
pub(crate) fn paks_folder_containing(path: &Path) -> Option<PathBuf> {
    path.ancestors()
        .find(|a| {
            let named = |p: Option<&Path>, name: &str| {
                p.and_then(Path::file_name)
                    .is_some_and(|n| n.to_string_lossy().eq_ignore_ascii_case(name))
            };
            named(Some(a), "Paks")
                && named(a.parent(), "Content")
                && a.parent().and_then(Path::parent).is_some()
        })
        .map(Path::to_path_buf)
}

fn projects_in(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut projects: Vec<String> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|name| !name.eq_ignore_ascii_case("Engine"))
        .filter(|name| dir.join(name).join("Content").join("Paks").is_dir())
        .collect();
    projects.sort();
    projects
}

#[cfg(test)]
mod tests {
    use super::*;

    fn game(root: &Path) {
        std::fs::create_dir_all(root.join("MyGame/Content/Paks/~mods")).unwrap();
        std::fs::create_dir_all(root.join("Engine/Content/Paks")).unwrap();
    }

    #[test]
    fn every_folder_of_the_game_leads_to_the_install_folder() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("Install");
        game(&root);
        for given in [
            root.clone(),
            root.join("MyGame"),
            root.join("MyGame/Content"),
            root.join("MyGame/Content/Paks"),
            root.join("MyGame/Content/Paks/~mods"),
        ] {
            for project in [Some("MyGame"), Some("mygame"), None] {
                let folder = GameFolder::locate(&given, project).unwrap();
                assert_eq!(folder.root, root, "{}", given.display());
                assert_eq!(folder.project, "MyGame");
                assert_eq!(folder.mods(), root.join("MyGame/Content/Paks/~mods"));
                let codes: Vec<_> = folder.notes.iter().map(|n| n.code.clone()).collect();
                if given == root {
                    assert!(codes.is_empty());
                } else {
                    assert_eq!(codes, ["game-dir-adjusted"]);
                }
            }
        }
    }

    #[test]
    fn a_wrong_project_or_no_game_is_a_usage_error() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("Install");
        game(&root);
        let e = GameFolder::locate(&root, Some("Other")).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        let e = GameFolder::locate(tmp.path(), None).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        let e = GameFolder::locate(&tmp.path().join("missing"), None).unwrap_err();
        assert_eq!(e.exit_code(), 2);
    }
}
