//! Files a cooked platform root (`Saved/Cooked/<Platform>`) carries that a
//! mod must never contain: the one rule `discover` applies to every selected
//! file, so `check` (with or without a game) and `build` refuse the same
//! files, each with the `[content] exclude` line that leaves it out.
//!
//! What the cook writes beside the packages, and why each must stay home:
//! - `<Project>/AssetRegistry.bin` (at the root or one folder down): the
//!   game's asset registry; a mod's copy replaces the game's whole registry.
//!   A plugin's own registry deeper down (`.../Plugins/<P>/AssetRegistry.bin`,
//!   game feature plugins load it) is not this file.
//! - `Metadata/` (at the root or under the project): the cook's bookkeeping —
//!   `DevelopmentAssetRegistry.bin`, `ShaderLibrarySource/`, `PipelineCaches/`,
//!   `CookedIniVersion.txt`, `CookedSettings.txt`, `*.ucookmeta`,
//!   `packagestore.manifest`, `scriptobjects.bin`. Those names elsewhere are
//!   refused too.
//! - The engine's global shader library (`ShaderArchive-Global-*`, with its
//!   `ShaderAssetInfo-Global-*`) and UE4's `GlobalShaderCache-*.bin`: the
//!   game's global shaders. A project or plugin library
//!   (`ShaderArchive-<Project>-*`, `ShaderArchive-<Plugin>-*`) is how a mod
//!   brings its materials' shaders: the build converts it into shader chunks
//!   ([`crate::iostore::shader_library`]), so it is shipped.
//! - `global.*`: the game's global container (script objects, initial load).
//! - Pipeline caches (`*.upipelinecache`, `*.shk`, `*.scl.csv`,
//!   `*.stablepc.csv`): the game's PSO caches.
//! - `*.upluginmanifest`: the game's list of plugins.
//! - `ue.projectstore`, `zenfs.manifest`: a Zen-store cook's markers (the
//!   project store can hold the Zen server's credentials).
//! - Under a `Saved/Cooked/<Platform>` root, everything in `Engine/`: the
//!   engine's own content the cook copied for the editor's engine version;
//!   the game has its own. A mod that overrides an engine asset on purpose
//!   names it with an `include` pattern starting with `Engine/`.

use std::path::{Path, PathBuf};

use crate::error::{Error, ErrorKind};

/// A selected file the mod must not contain.
#[derive(Debug, Clone)]
pub(crate) struct NeverShip {
    /// Path relative to the content root, `/`-separated.
    pub(crate) relative_path: String,
    pub(crate) path: PathBuf,
    /// What the file is, in words.
    pub(crate) what: &'static str,
    /// The `[content] exclude` pattern that leaves it (and its kind) out.
    pub(crate) exclude: String,
}

impl NeverShip {
    /// The error `check` and `build` report for it (code `never-ship`).
    pub(crate) fn to_error(&self) -> Error {
        Error::new(ErrorKind::Content {
            code: "never-ship",
            message: format!(
                "`{}` is {}; a mod must not contain it",
                self.relative_path, self.what
            ),
        })
        .in_file(&self.path)
        .with_hint(format!(
            "leave it out: add `\"{}\"` to `[content] exclude` in mod.toml (exclude = [\"{}\"])",
            self.exclude, self.exclude
        ))
    }
}

/// The rule for one content root.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rules {
    /// The root is a `Saved/Cooked/<Platform>` folder: its `Engine/` is the cook's copy.
    cook_root: bool,
}

impl Rules {
    pub(crate) fn for_root(root: &Path) -> Rules {
        Rules {
            cook_root: is_cook_root(root),
        }
    }

    /// Whether the selected file at `relative_path` must never ship;
    /// `named_in_engine_include`: an `include` pattern starting with
    /// `Engine/` selects it (an engine override on purpose).
    pub(crate) fn check(
        &self,
        relative_path: &str,
        path: &Path,
        named_in_engine_include: bool,
    ) -> Option<NeverShip> {
        let (what, exclude) = self.classify(relative_path, named_in_engine_include)?;
        Some(NeverShip {
            relative_path: relative_path.to_string(),
            path: path.to_path_buf(),
            what,
            exclude,
        })
    }

    fn classify(
        &self,
        relative_path: &str,
        named_in_engine_include: bool,
    ) -> Option<(&'static str, String)> {
        let parts: Vec<&str> = relative_path.split('/').collect();
        let name = parts[parts.len() - 1];
        let lower = name.to_ascii_lowercase();
        let folders = &parts[..parts.len() - 1];
        let any = |pattern: &str| format!("**/{pattern}");

        if let Some(depth) = folders
            .iter()
            .take(2)
            .position(|f| f.eq_ignore_ascii_case("Metadata"))
        {
            let prefix: String = folders[..=depth].join("/");
            return Some((
                "the cook's metadata (development asset registry, cook settings, shader library sources)",
                format!("{prefix}/**"),
            ));
        }
        if lower == "assetregistry.bin" && folders.len() <= 1 {
            return Some((
                "the game's asset registry (a mod's copy replaces the game's whole registry)",
                relative_path.to_string(),
            ));
        }
        const COOK_BOOKKEEPING: [&str; 6] = [
            "developmentassetregistry.bin",
            "cookediniversion.txt",
            "cookedsettings.txt",
            "cookedassetregistry.json",
            "packagestore.manifest",
            "scriptobjects.bin",
        ];
        if COOK_BOOKKEEPING.contains(&lower.as_str()) || lower.ends_with(".ucookmeta") {
            let pattern = if lower.ends_with(".ucookmeta") {
                any("*.ucookmeta")
            } else {
                any(name)
            };
            return Some(("the cook's bookkeeping", pattern));
        }
        if lower.starts_with("shaderarchive-global-")
            || lower.starts_with("shaderassetinfo-global-")
        {
            return Some((
                "the engine's global shader library (the game has its own)",
                any(&format!(
                    "{}-Global-*",
                    &name[..name.find('-').unwrap_or(0)]
                )),
            ));
        }
        if lower.starts_with("globalshadercache-") && lower.ends_with(".bin") {
            return Some((
                "the engine's global shader cache (the game has its own)",
                any("GlobalShaderCache-*.bin"),
            ));
        }
        if lower
            .split_once('.')
            .is_some_and(|(stem, _)| stem == "global")
        {
            return Some((
                "part of the game's global container (script objects, initial load data)",
                any("global.*"),
            ));
        }
        for extension in [".upipelinecache", ".shk", ".scl.csv", ".stablepc.csv"] {
            if lower.ends_with(extension) {
                return Some((
                    "a pipeline state cache of the game",
                    any(&format!("*{extension}")),
                ));
            }
        }
        if lower.ends_with(".upluginmanifest") {
            return Some(("the game's list of plugins", any("*.upluginmanifest")));
        }
        if lower.ends_with(".projectstore") || lower == "zenfs.manifest" {
            return Some((
                "a Zen-store cook's marker (it can hold the store's credentials)",
                any(name),
            ));
        }
        if self.cook_root
            && !named_in_engine_include
            && parts.len() > 1
            && parts[0].eq_ignore_ascii_case("Engine")
        {
            return Some((
                "the engine's own content, copied by the cook (the game has its own)",
                "Engine/**".to_string(),
            ));
        }
        None
    }
}

/// Whether `root` is a cooked platform folder, `.../Saved/Cooked/<Platform>`.
fn is_cook_root(root: &Path) -> bool {
    let real = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let names: Vec<String> = real
        .components()
        .rev()
        .take(3)
        .map(|c| c.as_os_str().to_string_lossy().to_ascii_lowercase())
        .collect();
    names.len() == 3 && names[1] == "cooked" && names[2] == "saved"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pattern(rules: Rules, path: &str) -> Option<String> {
        rules.classify(path, false).map(|(_, p)| p)
    }

    #[test]
    fn cook_files_are_refused_with_their_exclude_line() {
        let plain = Rules { cook_root: false };
        let p = |path| pattern(plain, path);
        assert_eq!(
            p("G/AssetRegistry.bin").as_deref(),
            Some("G/AssetRegistry.bin")
        );
        assert_eq!(p("G/Plugins/F/AssetRegistry.bin"), None);
        assert_eq!(
            p("G/Metadata/ShaderLibrarySource/x.ushaderbytecode").as_deref(),
            Some("G/Metadata/**")
        );
        assert_eq!(p("G/Content/Metadata/x.uasset"), None);
        assert_eq!(
            p("G/Content/ShaderArchive-Global-PCD3D_SM6.ushaderbytecode").as_deref(),
            Some("**/ShaderArchive-Global-*")
        );
        assert_eq!(
            p("G/Content/ShaderArchive-G-PCD3D_SM6.ushaderbytecode"),
            None
        );
        assert_eq!(p("global.utoc").as_deref(), Some("**/global.*"));
        assert_eq!(p("G/Content/GlobalStuff.uasset"), None);
        assert_eq!(
            p("G/Content/Pipeline/x.stable.upipelinecache").as_deref(),
            Some("**/*.upipelinecache")
        );
        assert_eq!(p("Engine/Content/X.uasset"), None);
        let cooked = Rules { cook_root: true };
        assert_eq!(
            pattern(cooked, "Engine/Content/X.uasset").as_deref(),
            Some("Engine/**")
        );
        assert_eq!(cooked.classify("Engine/Content/X.uasset", true), None);
    }

    #[test]
    fn cook_roots_are_saved_cooked_platform() {
        assert!(is_cook_root(Path::new("/p/Saved/Cooked/Windows")));
        assert!(is_cook_root(Path::new("/p/saved/cooked/WindowsNoEditor")));
        assert!(!is_cook_root(Path::new("/p/Cooked")));
        assert!(!is_cook_root(Path::new("/p/Saved/Cooked")));
    }
}
