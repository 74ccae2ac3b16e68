//! The `[marvel-rivals]` table of `mod.toml`: what the modder decides for
//! the `marvel-rivals` profile. Every key has a default, so the table may be
//! left out; the defaults are what the game requires (ARCHITECTURE.md,
//! "Marvel Rivals", says where each requirement comes from).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// `[marvel-rivals]`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct MarvelRivalsSection {
    /// Read material-slot tags and per-LOD hidden materials from a mesh's
    /// asset-user-data carrier export (the editor plugins' classes), and
    /// remap the carrier's plugin class imports to `/Script/Engine.AssetUserData`.
    #[serde(default = "on")]
    pub carrier: bool,
    /// Give every SkeletalMesh LOD info the game's `DefaultHiddenMaterials`
    /// layout (needs the game's mappings).
    #[serde(default = "on")]
    pub hidden_materials: bool,
    /// Write StaticMesh LOD screen sizes in the game's 16-byte form.
    #[serde(default = "on")]
    pub screen_sizes: bool,
    /// Add the game's 4-byte field after each StringTable entry's value.
    #[serde(default = "on")]
    pub string_tables: bool,
    /// Put a `chunknames` entry listing the container's paths in the companion pak.
    #[serde(default = "on")]
    pub chunknames: bool,
    /// Suffix of the output files when `[output] suffix` is left at `_P`.
    #[serde(default = "default_suffix")]
    pub suffix: String,
    /// Encrypt the companion pak with the game's pak cipher (key from
    /// `ZENPAK_AES_KEY` or `[output] key-file`, never from the manifest).
    #[serde(default = "on")]
    pub encrypt_pak: bool,
    /// Classes (globs over `/Script/Module.Class`) whose presence in a
    /// container makes the game unmount it; `check` warns about them.
    #[serde(default = "default_unmounted_classes")]
    pub unmounted_classes: Vec<String>,
    /// `[[marvel-rivals.mesh]]`: per-SkeletalMesh settings.
    #[serde(default, rename = "mesh")]
    pub meshes: Vec<MeshSettings>,
}

/// `[[marvel-rivals.mesh]]`: settings of the SkeletalMeshes whose package
/// name matches `package`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct MeshSettings {
    /// Glob over package names, e.g. `/Game/Marvel/Characters/1014/**`.
    pub package: String,
    /// Material slot name → gameplay tags of that slot (they replace the
    /// carrier's tags for that slot).
    #[serde(default)]
    pub tags: BTreeMap<String, Vec<String>>,
    /// One bit mask per LOD (bit `i` hides material slot `i` by default);
    /// with fewer masks than LODs the last one repeats. Replaces the carrier's.
    #[serde(default)]
    pub hidden_materials: Vec<u64>,
}

fn on() -> bool {
    true
}

/// The keys of `[marvel-rivals]`.
pub(crate) const KEYS: &[&str] = &[
    "carrier",
    "hidden-materials",
    "screen-sizes",
    "string-tables",
    "chunknames",
    "suffix",
    "encrypt-pak",
    "unmounted-classes",
    "mesh",
];

/// What two independent tools append to a mod's name so that it sorts
/// above the game's own patch paks.
pub const DEFAULT_SUFFIX: &str = "_9999999_P";

fn default_suffix() -> String {
    DEFAULT_SUFFIX.to_string()
}

/// The classes reported to get a container unmounted at login.
pub const DEFAULT_UNMOUNTED_CLASSES: [&str; 2] =
    ["/Script/GameplayAbilities.*", "/Script/*.*CameraShake*"];

fn default_unmounted_classes() -> Vec<String> {
    DEFAULT_UNMOUNTED_CLASSES
        .iter()
        .map(|s| s.to_string())
        .collect()
}

impl Default for MarvelRivalsSection {
    fn default() -> Self {
        MarvelRivalsSection {
            carrier: true,
            hidden_materials: true,
            screen_sizes: true,
            string_tables: true,
            chunknames: true,
            suffix: default_suffix(),
            encrypt_pak: true,
            unmounted_classes: default_unmounted_classes(),
            meshes: Vec::new(),
        }
    }
}

impl MarvelRivalsSection {
    /// Checks the values serde cannot: globs, the suffix, tag names.
    pub(crate) fn validate(&self) -> Result<()> {
        let bad = |key: &str, message: String| {
            Err(Error::usage(format!("`[marvel-rivals] {key}`: {message}")))
        };
        if self.suffix.is_empty()
            || !self
                .suffix
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
        {
            return bad(
                "suffix",
                format!("`{}` cannot be part of a file name", self.suffix),
            );
        }
        for glob in &self.unmounted_classes {
            if let Err(e) = crate::glob::check(glob) {
                return bad("unmounted-classes", format!("bad glob `{glob}`: {e}"));
            }
        }
        for mesh in &self.meshes {
            if let Err(e) = crate::glob::check(&mesh.package) {
                return bad("mesh.package", format!("bad glob `{}`: {e}", mesh.package));
            }
            for (slot, tags) in &mesh.tags {
                if let Some(t) = tags.iter().find(|t| t.trim().is_empty() || t.contains(' ')) {
                    return bad(
                        "mesh.tags",
                        format!("slot `{slot}` has the tag `{t}`; tags are names like `MaterialTag.Weapon`"),
                    );
                }
            }
        }
        Ok(())
    }

    /// The `[[marvel-rivals.mesh]]` entries that apply to `package_name`.
    pub(crate) fn mesh_settings<'s>(&'s self, package_name: &str) -> Vec<&'s MeshSettings> {
        self.meshes
            .iter()
            .filter(|m| {
                crate::glob::Globs::new("mesh.package", std::slice::from_ref(&m.package))
                    .is_ok_and(|g| g.is_match(package_name))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_table_has_the_documented_defaults() {
        let s: MarvelRivalsSection = toml::from_str("").unwrap();
        assert_eq!(s, MarvelRivalsSection::default());
        assert_eq!(s.suffix, "_9999999_P");
        assert!(s.encrypt_pak && s.hidden_materials && s.chunknames);
        s.validate().unwrap();
    }

    /// `mod.toml.example` documents the table with its defaults, and the
    /// commented `[[marvel-rivals.mesh]]` example is valid too.
    #[test]
    fn the_documented_table_is_the_default_and_its_mesh_example_parses() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("mod.toml.example");
        let text = std::fs::read_to_string(path).unwrap();
        let m = crate::manifest::Manifest::parse(&text, std::path::Path::new("mod.toml")).unwrap();
        assert!(m.profile_options().table(super::super::NAME).is_some());
        assert_eq!(
            *super::super::settings(&m.profile_options()),
            MarvelRivalsSection::default()
        );
        let mesh: String = text
            .lines()
            .skip_while(|l| !l.starts_with("# [[marvel-rivals.mesh]]"))
            .filter_map(|l| l.strip_prefix("# "))
            .filter(|l| !l.starts_with('#'))
            .map(|l| format!("{l}\n"))
            .collect();
        let parsed: toml::Value = toml::from_str(&mesh).unwrap();
        let section: MarvelRivalsSection =
            toml::from_str(&toml::to_string(&parsed["marvel-rivals"]).unwrap()).unwrap();
        section.validate().unwrap();
        assert_eq!(
            section.meshes[0].hidden_materials,
            [0x0FFF_0000, 0x0FFF_0000, 0x0EFB_0000]
        );
        assert_eq!(section.meshes[0].tags["MI_Weapon"], ["MaterialTag.Weapon"]);
    }

    #[test]
    fn meshes_match_by_package_glob() {
        let s: MarvelRivalsSection = toml::from_str(
            r#"
            [[mesh]]
            package = "/Game/Marvel/Characters/1014/**"
            hidden-materials = [0x0FFF0000, 3]
            tags = { MI_Weapon = ["MaterialTag.Weapon"] }
            "#,
        )
        .unwrap();
        s.validate().unwrap();
        assert_eq!(s.meshes[0].hidden_materials, [0x0FFF_0000, 3]);
        assert_eq!(
            s.mesh_settings("/Game/Marvel/Characters/1014/Meshes/SK_1014")
                .len(),
            1
        );
        assert!(s
            .mesh_settings("/Game/Marvel/Characters/1015/SK")
            .is_empty());
        let bad: MarvelRivalsSection = toml::from_str("suffix = \"a/b\"").unwrap();
        assert!(bad.validate().unwrap_err().is_usage());
        assert!(toml::from_str::<MarvelRivalsSection>("nope = 1").is_err());
    }
}
