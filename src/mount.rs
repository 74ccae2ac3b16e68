//! Mount points and the paths below them, shared by the container's
//! directory index and the companion pak.
//!
//! The engine does not take a mount point from its user: it writes the
//! files' common root (`IoDirectoryIndexUtils::GetCommonRootPath` in
//! `IoDirectoryIndex.cpp`, a copy of `GetCommonRootPath` in
//! `PakFileUtilities.cpp`) and stores every path relative to it. The corpus
//! shows it: the 5.6 SN2 content, which has `Content/` and `Plugins/`
//! folders, is mounted at `../../../SN2/`.

use crate::error::{Error, Result};

/// The root every cooked path hangs from (`../../../<Project>/Content/…`).
pub(crate) const ENGINE_ROOT: &str = "../../../";

/// Checks a path relative to a mount point: non-empty segments, no `.` or
/// `..`, no backslash, not absolute.
pub fn validate_relative_path(path: &str) -> Result<()> {
    let bad = path.is_empty()
        || path.starts_with('/')
        || path.contains('\\')
        || path.contains(':')
        || path
            .split('/')
            .any(|s| s.is_empty() || s == "." || s == "..");
    if bad {
        return Err(Error::usage(format!(
            "`{path}` is not a valid path relative to the mount point (use `Folder/File.ext`, no `..`, no backslashes)"
        )));
    }
    Ok(())
}

/// Why a stored name (a pak entry's path, a container's directory-index
/// path) names no file the game can ask for, if it does not: an empty
/// name, an absolute one, or an empty, `.` or `..` component. The engine
/// mounts such an entry, but the paths it looks up are standardized first
/// (`..` collapsed, no empty components), so none ever matches it; and
/// `unpack` refuses to write it (see `publish::output_dir::OutputDir`).
pub(crate) fn unreachable_name(path: &str) -> Option<&'static str> {
    if path.is_empty() {
        Some("is empty")
    } else if path.starts_with('/') {
        Some("is absolute")
    } else if path.split('/').any(|s| s == "..") {
        Some("has a `..` component")
    } else if path.split('/').any(|s| s.is_empty() || s == ".") {
        Some("has an empty or `.` component")
    } else {
        None
    }
}

/// Mount points end with `/` and use `/`.
pub(crate) fn normalize_mount_point(mount: &str) -> Result<String> {
    if mount.contains('\\') || mount.is_empty() {
        return Err(Error::usage(format!(
            "mount point `{mount}` must be non-empty and use `/`"
        )));
    }
    Ok(if mount.ends_with('/') {
        mount.to_string()
    } else {
        format!("{mount}/")
    })
}

/// The folder part of a path with its trailing `/`, as the engine forms it
/// (`FPaths::GetPath(path) + "/"`: a bare name gives `/`).
fn folder_of(path: &str) -> &str {
    path.rfind('/').map_or("/", |i| &path[..=i])
}

/// The engine's common root of full file paths: start from the folder of
/// the path with the most `/` (the first one when several tie), then cut
/// it back, for every path, to the longest `/`-ended prefix its folder
/// shares with it, comparing ASCII letters without case.
///
/// The paths are those `visit` gives to the function it is handed (it is
/// called twice, and must give the same paths both times), so that paths
/// not kept as `&str`s need not be gathered first.
pub(crate) fn common_root(visit: impl Fn(&mut dyn FnMut(&str))) -> String {
    let mut deepest = String::new();
    let mut most = 0;
    visit(&mut |path| {
        let slashes = path.bytes().filter(|&b| b == b'/').count();
        if slashes > most {
            most = slashes;
            deepest = path.to_string();
        }
    });
    let mut root = folder_of(&deepest).to_string();
    visit(&mut |path| {
        let folder = folder_of(path);
        let mut shared = 0;
        for (i, b) in folder.bytes().enumerate() {
            let agrees = root
                .as_bytes()
                .get(i)
                .is_some_and(|r| r.eq_ignore_ascii_case(&b));
            if !agrees {
                break;
            }
            if b == b'/' {
                shared = i + 1;
            }
        }
        if shared < root.len() {
            root.truncate(shared);
        }
    });
    root
}

/// Joins a mount point and a relative path into the path the view uses:
/// `../../../Game/Content/` + `X.uasset` → `Game/Content/X.uasset`.
pub(crate) fn virtual_path(mount_point: &str, relative: &str) -> String {
    let mut mount = mount_point.replace('\\', "/");
    while let Some(rest) = mount.strip_prefix("../") {
        mount = rest.to_string();
    }
    let mount = mount.trim_start_matches('/');
    let mut out = String::with_capacity(mount.len() + relative.len() + 1);
    out.push_str(mount);
    if !out.is_empty() && !out.ends_with('/') {
        out.push('/');
    }
    out.push_str(relative.trim_start_matches('/'));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root_of(paths: &[&str]) -> String {
        common_root(|each| paths.iter().for_each(|p| each(p)))
    }

    #[test]
    fn common_root_of_cooked_paths() {
        let sn2 = [
            "../../../SN2/Content/Audio/A.uasset",
            "../../../SN2/Plugins/UWEMusicVolumeManager/Content/B.uasset",
        ];
        assert_eq!(root_of(&sn2), "../../../SN2/");
        let one = ["../../../HelloGame/Content/HelloMod/A.uasset"];
        assert_eq!(root_of(&one), "../../../HelloGame/Content/HelloMod/");
        let engine_and_game = [
            "../../../Engine/Content/E.uasset",
            "../../../Game/Content/G.uasset",
        ];
        assert_eq!(root_of(&engine_and_game), "../../../");
        // Folder names are compared without case; the deepest path's spelling is kept.
        let cased = [
            "../../../Game/Content/a/X.uasset",
            "../../../game/content/B.uasset",
        ];
        assert_eq!(root_of(&cased), "../../../Game/Content/");
        // No files, or files without folders: the engine's root is `/`.
        assert_eq!(root_of(&[]), "/");
        assert_eq!(root_of(&["A.uasset"]), "/");
    }

    #[test]
    fn relative_paths() {
        assert!(validate_relative_path("Game/Content/A.uasset").is_ok());
        for bad in ["", "/a", "a\\b", "a/../b", "a//b", "C:/x"] {
            assert!(validate_relative_path(bad).is_err(), "{bad}");
        }
        assert_eq!(
            normalize_mount_point("../../../Game").unwrap(),
            "../../../Game/"
        );
    }
}
