//! `zenpak new` / `zenpak init`: writes a mod repository from the files in
//! `templates/` (embedded at compile time): `mod.toml`, `.gitignore`,
//! `README.md`, the release workflow, and the empty content folder.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::manifest::{Manifest, MANIFEST_NAME};
use crate::version::EngineVersion;

/// The template files: path in the new repo, and text with `{{placeholders}}`.
const TEMPLATES: &[(&str, &str)] = &[
    (MANIFEST_NAME, include_str!("../templates/mod.toml")),
    (".gitignore", include_str!("../templates/gitignore")),
    ("README.md", include_str!("../templates/README.md")),
    (
        ".github/workflows/release.yml",
        include_str!("../templates/.github/workflows/release.yml"),
    ),
];

/// What a new mod is made from.
#[derive(Debug, Clone)]
pub struct NewMod {
    pub name: String,
    pub engine: EngineVersion,
    pub project: String,
}

impl NewMod {
    fn fill(&self, template: &str) -> String {
        template
            .replace("{{name}}", &self.name)
            .replace("{{engine}}", self.engine.as_str())
            .replace("{{project}}", &self.project)
            .replace("{{zenpak_version}}", env!("CARGO_PKG_VERSION"))
    }
}

/// Writes a new mod repository into `dir` (created if missing). Refuses to
/// overwrite an existing `mod.toml`; other existing files are kept as they
/// are. Returns the files written.
pub fn write_mod(dir: &Path, new: &NewMod) -> Result<Vec<PathBuf>> {
    if dir.join(MANIFEST_NAME).exists() {
        return Err(Error::usage(format!(
            "{} already has a {MANIFEST_NAME}; nothing was written",
            dir.display()
        )));
    }
    // Validate the values by parsing the manifest they produce before writing anything.
    let manifest_text = new.fill(TEMPLATES[0].1);
    Manifest::parse(&manifest_text, &dir.join(MANIFEST_NAME))?;

    let mut written = Vec::new();
    for (relative, template) in TEMPLATES {
        let path = dir.join(relative);
        if path.exists() {
            continue;
        }
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
        }
        std::fs::write(&path, new.fill(template)).map_err(|e| Error::io(&path, e))?;
        written.push(path);
    }
    let content = dir.join("Cooked").join(&new.project).join("Content");
    std::fs::create_dir_all(&content).map_err(|e| Error::io(&content, e))?;
    written.push(content);
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_mod_writes_a_manifest_that_parses() {
        let dir = std::env::temp_dir().join(format!("zenpak-scaffold-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let new = NewMod {
            name: "Cool".into(),
            engine: EngineVersion::UE5_4,
            project: "Game1".into(),
        };
        let written = write_mod(&dir, &new).unwrap();
        assert_eq!(written.len(), 5);
        let m = Manifest::load(&dir.join(MANIFEST_NAME)).unwrap();
        assert_eq!(m.package.name, "Cool");
        assert_eq!(m.game.engine, EngineVersion::UE5_4);
        assert!(dir.join("Cooked/Game1/Content").is_dir());
        let workflow = std::fs::read_to_string(dir.join(".github/workflows/release.yml")).unwrap();
        assert!(workflow.contains("zenpak build --message-format json"));
        assert!(!workflow.contains("{{zenpak_version}}"));
        assert!(
            write_mod(&dir, &new).is_err(),
            "must not overwrite a manifest"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
