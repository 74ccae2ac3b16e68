//! The engine's mount order of a `Paks/` folder, from the file names
//! alone: the order a pak gets (`GetPakOrderFromPakFilePath` and the patch
//! bonus of `FPakPlatformFile::Mount`), the engine's string comparison that
//! sorts them, and [`FolderPlan`], the folder walked into the list the
//! engine mounts (see the rules in [`super`]'s module docs).

use std::path::{Path, PathBuf};

use crate::diagnostic::Diagnostic;
use crate::error::{Error, Result};
use crate::iostore::companion;

/// Order `GetPakOrderFromPakFilePath` gives paks in the project's
/// `Content/Paks/` folder.
pub(crate) const PROJECT_CONTENT_ORDER: u32 = 3;
/// Order of `Content/Paks/<Project>-*.pak`.
pub(crate) const PROJECT_MAIN_PAK_ORDER: u32 = 4;

/// The order the engine gives a pak: its folder's base order plus the
/// patch bonus of a `_P.pak` name.
pub(crate) fn pak_order(base: u32, file_name: &str) -> u32 {
    base + patch_bonus(file_name)
}

/// `FPakPlatformFile::Mount`: `X_P.pak` +100; `X_N_P.pak` with N ≥ 1 a
/// number, +100 × (N + 1). The name comparison is case-sensitive, as the
/// engine's `EndsWith` default is not: `EndsWith` ignores case, so `_p.pak`
/// counts too.
pub(crate) fn patch_bonus(file_name: &str) -> u32 {
    let lower = file_name.to_ascii_lowercase();
    let Some(stem) = lower.strip_suffix("_p.pak") else {
        return 0;
    };
    let mut version = 1u32;
    if let Some(underscore) = stem.rfind('_') {
        let digits = &stem[underscore + 1..];
        if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
            if let Ok(n) = digits.parse::<u32>() {
                if n >= 1 {
                    version = n.saturating_add(1);
                }
            }
        }
    }
    100u32.saturating_mul(version)
}

/// The engine's `FString` ordering (`Stricmp`): ASCII letters compared
/// lowercased, everything else by UTF-16 code unit.
pub(crate) fn engine_compare(a: &str, b: &str) -> std::cmp::Ordering {
    let fold = |c: u16| {
        if (b'A' as u16..=b'Z' as u16).contains(&c) {
            c + 32
        } else {
            c
        }
    };
    a.encode_utf16().map(fold).cmp(b.encode_utf16().map(fold))
}

/// A pak of a [`FolderPlan`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PlannedPak {
    /// Path of the `.pak` relative to the folder, `/`-separated (a name
    /// that is not UTF-8 lossily: it only sorts and is shown).
    pub(crate) rel: String,
    /// The file itself (a link is followed when it is opened).
    pub(crate) path: PathBuf,
    /// The order the engine gives it.
    pub(crate) order: u32,
}

/// What the engine mounts of a `Paks/` folder and in which order, from
/// the file names alone (nothing is opened): the one rule [`GameView`](super::GameView)
/// mounts by, also used where opening the game's paks is not wanted
/// (the mount-order checks of `install`).
///
/// Symbolic links are followed, files and folders alike, as the game
/// follows them (mod managers deploy by linking, and on Linux and the
/// Steam Deck whole folders are linked); a link loop or a link to
/// nothing is one of the [`problems`](Self::problems), and a link whose
/// target lies outside the folder is named in a note. Reading through a
/// link is all zenpak does: `install` and `uninstall` replace or remove
/// only files they wrote (`release::owned::OwnedFile::is_on_disk`: a link is
/// never one).
#[derive(Debug, Clone, Default)]
pub(crate) struct FolderPlan {
    /// `global.utoc` (mounted first, order 0), if present.
    pub(crate) global: Option<PathBuf>,
    /// Every `.pak` below the folder, in mount sequence.
    pub(crate) paks: Vec<PlannedPak>,
    /// `.utoc` files (other than `global.utoc`) without a `.pak` beside
    /// them: relative path and the file.
    pub(crate) tocs_without_pak: Vec<(String, PathBuf)>,
    /// Entries the walk could not read (a link loop, a broken link, a
    /// folder that may not be listed).
    pub(crate) problems: Vec<Error>,
    /// `link-outside-game`, when some of the containers are links leaving the folder.
    pub(crate) notes: Vec<Diagnostic>,
    /// The project name of a `<Project>/Content/Paks` folder.
    project: Option<String>,
}

/// How many links the `link-outside-game` note names.
const LINKS_NAMED: usize = 3;

impl FolderPlan {
    /// Walks `root` (recursively, `~mods/` included, links followed).
    pub(crate) fn of(root: &Path) -> Result<Self> {
        let mut plan = FolderPlan {
            project: project_name(root),
            ..FolderPlan::default()
        };
        let canonical_root = root.canonicalize().map_err(|e| Error::io(root, e))?;
        let mut tocs: Vec<(String, PathBuf)> = Vec::new();
        let mut outside: Vec<String> = Vec::new();
        for entry in walkdir::WalkDir::new(root).follow_links(true) {
            let entry = match entry {
                Ok(entry) => entry,
                Err(e) if e.depth() == 0 => {
                    let at = e.path().unwrap_or(root).to_path_buf();
                    return Err(Error::io(
                        at,
                        e.into_io_error()
                            .unwrap_or_else(|| std::io::Error::other("cannot walk the folder")),
                    ));
                }
                Err(e) => {
                    let at = e.path().unwrap_or(root).to_path_buf();
                    let error = match e.loop_ancestor() {
                        Some(ancestor) => Error::invalid(format!(
                            "this link leads back to {}, a folder it is in: it is not followed",
                            crate::diagnostic::path_text(ancestor)
                        )),
                        None => Error::io(
                            &at,
                            e.into_io_error()
                                .unwrap_or_else(|| std::io::Error::other("cannot walk the folder")),
                        ),
                    };
                    plan.problems.push(error.in_file(&at));
                    continue;
                }
            };
            let rel = entry
                .path()
                .strip_prefix(root)
                .unwrap_or(entry.path())
                .to_string_lossy()
                .replace('\\', "/");
            let lower = rel.to_ascii_lowercase();
            let container = [".pak", ".utoc", ".ucas"]
                .iter()
                .any(|x| lower.ends_with(x));
            if entry.path_is_symlink() && (container || entry.file_type().is_dir()) {
                let inside = entry
                    .path()
                    .canonicalize()
                    .is_ok_and(|target| target.starts_with(&canonical_root));
                if !inside {
                    outside.push(rel.clone());
                }
            }
            if !entry.file_type().is_file() {
                continue;
            }
            if lower.ends_with(".pak") {
                plan.paks.push(PlannedPak {
                    order: 0,
                    path: entry.path().to_path_buf(),
                    rel,
                });
            } else if lower.ends_with(".utoc") {
                tocs.push((rel, entry.path().to_path_buf()));
            }
        }
        if !outside.is_empty() {
            plan.notes.push(
                Diagnostic::note(
                    "link-outside-game",
                    format!(
                        "{} of the game's files and folders are links to places outside {}: {}; they are read through the links, as the game reads them",
                        outside.len(),
                        root.display(),
                        crate::diagnostic::bounded_list(&outside, LINKS_NAMED)
                    ),
                )
                .with_file(root.join(&outside[0]))
                .with_hint("install and uninstall never write through a link, and never remove one"),
            );
        }
        plan.global = tocs
            .iter()
            .find(|(rel, _)| rel.eq_ignore_ascii_case("global.utoc"))
            .map(|(_, path)| path.clone());
        plan.tocs_without_pak = tocs
            .into_iter()
            .filter(|(rel, _)| !rel.eq_ignore_ascii_case("global.utoc"))
            .filter(|(_, path)| {
                !plan
                    .paks
                    .iter()
                    .any(|p| companion(&p.path, "utoc") == *path)
            })
            .collect();
        plan.sort();
        Ok(plan)
    }

    /// Puts the mod `pak` (not in the folder) where `install` puts it,
    /// `~mods/<file name>`, in place of a file of that name already there.
    pub(crate) fn place_in_mods(&mut self, pak: &Path) {
        let name = pak
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let rel = format!("~mods/{name}");
        self.paks.retain(|p| !p.rel.eq_ignore_ascii_case(&rel));
        self.paks.push(PlannedPak {
            rel,
            path: pak.to_path_buf(),
            order: 0,
        });
        self.sort();
    }

    /// Leaves out the paks at `paths` (files `install` replaces).
    pub(crate) fn leave_out(&mut self, paths: &[PathBuf]) {
        self.paks.retain(|p| !paths.contains(&p.path));
    }

    /// The engine's mount sequence (descending paths) and each pak's order.
    fn sort(&mut self) {
        self.paks.sort_by(|a, b| engine_compare(&b.rel, &a.rel));
        for planned in &mut self.paks {
            let rel = &planned.rel;
            let file_name = rel.rsplit('/').next().unwrap_or(rel);
            let main_pak = self.project.as_deref().is_some_and(|p| {
                !rel.contains('/')
                    && file_name.len() > p.len()
                    && file_name.is_char_boundary(p.len())
                    && file_name[..p.len()].eq_ignore_ascii_case(p)
                    && file_name.as_bytes()[p.len()] == b'-'
            });
            let base = if main_pak {
                PROJECT_MAIN_PAK_ORDER
            } else {
                PROJECT_CONTENT_ORDER
            };
            planned.order = pak_order(base, file_name);
        }
    }
}

/// The project name of a `<Project>/Content/Paks` folder.
/// The path as given is asked first (a `Paks` that is a link to a folder
/// elsewhere is still the game's), then the folder it resolves to.
fn project_name(paks: &Path) -> Option<String> {
    project_name_of(paks).or_else(|| project_name_of(&paks.canonicalize().ok()?))
}

fn project_name_of(paks: &Path) -> Option<String> {
    let paks = if paks.is_absolute() {
        paks.to_path_buf()
    } else {
        std::env::current_dir().ok()?.join(paks)
    };
    let content = paks.parent()?;
    if !content
        .file_name()?
        .to_string_lossy()
        .eq_ignore_ascii_case("content")
    {
        return None;
    }
    Some(
        content
            .parent()?
            .file_name()?
            .to_string_lossy()
            .into_owned(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patch_bonus_follows_the_engine() {
        assert_eq!(patch_bonus("pakchunk0-Windows.pak"), 0);
        assert_eq!(patch_bonus("MyMod_P.pak"), 100);
        assert_eq!(patch_bonus("pakchunk0-Windows_0_P.pak"), 100);
        assert_eq!(patch_bonus("pakchunk0-Windows_1_P.pak"), 200);
        assert_eq!(patch_bonus("pakchunk0-Windows_3_P.pak"), 400);
        assert_eq!(patch_bonus("Mod_x_P.pak"), 100);
        assert_eq!(pak_order(3, "z_9_p.pak"), 1003);
    }

    #[test]
    fn engine_compare_ignores_ascii_case_only() {
        use std::cmp::Ordering::*;
        assert_eq!(engine_compare("ABC", "abc"), Equal);
        assert_eq!(engine_compare("a_b", "aB"), Less); // '_' (95) < 'b' (98)
        assert_eq!(engine_compare("~mods/x.pak", "pakchunk0.pak"), Greater);
    }
}
