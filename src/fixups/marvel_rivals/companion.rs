//! What a Marvel Rivals mod needs beside its container: the companion pak's
//! `chunknames` entry (every path in the container, newline-joined, which
//! the game's mod loader looks for) and the file name suffix that sorts the
//! mod above the game's own patches. The build writes both through these
//! functions (see ARCHITECTURE.md, "Marvel Rivals", for where each fact
//! comes from).

use crate::fixups::ArtifactName;

use super::MarvelRivalsSection;

/// The companion pak entry's path (at the mount point's root).
pub const CHUNKNAMES: &str = "chunknames";

/// The `chunknames` entry: the container's paths (relative to its mount
/// point, `/`-separated), sorted, joined by `\n`, no trailing newline.
pub fn chunknames(container_paths: &[String]) -> Vec<u8> {
    let mut paths: Vec<&str> = container_paths.iter().map(String::as_str).collect();
    paths.sort_unstable();
    paths.dedup();
    paths.join("\n").into_bytes()
}

impl MarvelRivalsSection {
    /// Files the companion pak must hold besides the mod's own loose files,
    /// given the paths of the container it accompanies.
    pub fn companion_pak_files(&self, container_paths: &[String]) -> Vec<(String, Vec<u8>)> {
        if self.chunknames {
            vec![(CHUNKNAMES.to_string(), chunknames(container_paths))]
        } else {
            Vec::new()
        }
    }

    /// Base name of the output files: `[output] prefix` + `[mod] name` +
    /// this table's `suffix` while `[output] suffix` is left at `_P` (the
    /// default), the manifest's own stem otherwise. A name that already ends
    /// with the suffix does not get it twice.
    pub fn artifact_stem(&self, artifact: &ArtifactName) -> String {
        if artifact.suffix != "_P" {
            return artifact.plain();
        }
        let (prefix, name) = (artifact.prefix, artifact.name);
        if name.ends_with(&self.suffix) {
            format!("{prefix}{name}")
        } else {
            format!("{prefix}{name}{}", self.suffix)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::Manifest;

    fn manifest(extra: &str) -> Manifest {
        let text = format!(
            "[mod]\nname = \"Skin\"\nversion = \"1\"\n[game]\nengine = \"5.3\"\nproject = \"Marvel\"\nprofile = \"marvel-rivals\"\n{extra}"
        );
        Manifest::parse(&text, std::path::Path::new("/m/mod.toml")).unwrap()
    }

    #[test]
    fn the_suffix_replaces_the_default_one() {
        let section = MarvelRivalsSection::default();
        assert_eq!(
            section.artifact_stem(&manifest("").artifact_name()),
            "Skin_9999999_P"
        );
        let m = manifest("[output]\nprefix = \"z-\"\n");
        assert_eq!(
            section.artifact_stem(&m.artifact_name()),
            "z-Skin_9999999_P"
        );
        let m = manifest("[output]\nsuffix = \"_5_P\"\n");
        assert_eq!(section.artifact_stem(&m.artifact_name()), "Skin_5_P");
        let mut m = manifest("");
        m.package.name = "Skin_9999999_P".into();
        assert_eq!(section.artifact_stem(&m.artifact_name()), "Skin_9999999_P");
    }

    #[test]
    fn chunknames_lists_sorted_unique_paths() {
        let paths = vec![
            "Marvel/Content/B.uasset".to_string(),
            "Marvel/Content/A.uasset".to_string(),
            "Marvel/Content/A.ubulk".to_string(),
        ];
        assert_eq!(
            chunknames(&paths),
            b"Marvel/Content/A.uasset\nMarvel/Content/A.ubulk\nMarvel/Content/B.uasset"
        );
        let section = MarvelRivalsSection {
            chunknames: false,
            ..MarvelRivalsSection::default()
        };
        assert!(section.companion_pak_files(&paths).is_empty());
    }
}
