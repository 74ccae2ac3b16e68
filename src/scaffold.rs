//! `zenpak new` / `zenpak init`: writes a mod repository from the files in
//! `templates/` (embedded at compile time): `mod.toml`, `.gitignore`,
//! `README.md`, the release workflow, and the empty content folder; and,
//! as `cargo new` does, a git repository unless the folder is already inside one.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::{Error, Result};
use crate::manifest::{Manifest, MANIFEST_NAME};
use crate::version::EngineVersion;

/// zenpak's source repository: the one place every generated URL comes from.
pub(crate) const REPOSITORY: &str = env!("CARGO_PKG_REPOSITORY");

const GITIGNORE: &str = include_str!("../templates/gitignore");

/// The template files: path in the new repo, and text with `{{placeholders}}`.
/// `.gitignore` is handled apart: an existing one gets zenpak's lines added.
const TEMPLATES: &[(&str, &str)] = &[
    (MANIFEST_NAME, include_str!("../templates/mod.toml")),
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
    /// Create a git repository (when the folder is not inside one).
    pub git: bool,
}

impl NewMod {
    fn fill(&self, template: &str) -> String {
        template
            .replace("{{name}}", &self.name)
            .replace("{{engine}}", self.engine.as_str())
            .replace("{{project}}", &self.project)
            .replace("{{zenpak_version}}", env!("CARGO_PKG_VERSION"))
            .replace("{{repository}}", REPOSITORY)
    }
}

/// What [`write_mod`] did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Scaffolded {
    /// Files and folders created.
    pub(crate) written: Vec<PathBuf>,
    /// Files that existed and were left as they were.
    pub(crate) kept: Vec<PathBuf>,
    /// An existing `.gitignore` that got zenpak's lines.
    pub gitignore_extended: Option<PathBuf>,
    /// A git repository was created.
    pub git_initialized: bool,
}

/// Writes a new mod repository into `dir` (created if missing). Refuses to
/// overwrite an existing `mod.toml`; other existing files are kept as they
/// are, except that an existing `.gitignore` gets zenpak's lines added.
pub fn write_mod(dir: &Path, new: &NewMod) -> Result<Scaffolded> {
    if dir.join(MANIFEST_NAME).exists() {
        return Err(Error::usage(format!(
            "{} already has a {MANIFEST_NAME}; nothing was written",
            dir.display()
        )));
    }
    // Validate the values by parsing the manifest they produce before writing anything.
    let manifest_text = new.fill(TEMPLATES[0].1);
    Manifest::parse(&manifest_text, &dir.join(MANIFEST_NAME)).map_err(|e| {
        e.replace_hint(
            "mod names are file names: letters, digits, `_`, `-`, `.`; \
             use --name to name the mod apart from its folder",
        )
    })?;

    let mut done = Scaffolded::default();
    for (relative, template) in TEMPLATES {
        let path = dir.join(relative);
        if path.exists() {
            done.kept.push(path);
            continue;
        }
        write_new(&path, &new.fill(template))?;
        done.written.push(path);
    }
    let gitignore = dir.join(".gitignore");
    match std::fs::read_to_string(&gitignore) {
        Ok(existing) => {
            let missing: Vec<&str> = GITIGNORE
                .lines()
                .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
                .filter(|l| !existing.lines().any(|e| e.trim() == l.trim()))
                .collect();
            if !missing.is_empty() {
                let mut text = existing;
                if !text.ends_with('\n') && !text.is_empty() {
                    text.push('\n');
                }
                text.push_str("# Added by zenpak: build output\n");
                for line in missing {
                    text.push_str(line);
                    text.push('\n');
                }
                crate::publish::write_file(&gitignore, |f| {
                    use std::io::Write;
                    f.write_all(text.as_bytes())
                        .map_err(|e| Error::io(f.path(), e))
                })?;
                done.gitignore_extended = Some(gitignore);
            }
        }
        Err(_) => {
            write_new(&gitignore, GITIGNORE)?;
            done.written.push(gitignore);
        }
    }
    let content = dir.join("Cooked").join(&new.project).join("Content");
    if !content.is_dir() {
        std::fs::create_dir_all(&content).map_err(|e| Error::io(&content, e))?;
        done.written.push(content);
    }
    if new.git && !inside_git_repository(dir) {
        done.git_initialized = git_init(dir);
    }
    Ok(done)
}

fn write_new(path: &Path, text: &str) -> Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
    }
    crate::publish::write_file(path, |f| {
        use std::io::Write;
        f.write_all(text.as_bytes())
            .map_err(|e| Error::io(f.path(), e))
    })
}

/// Whether `dir` or a folder above it holds a `.git`.
fn inside_git_repository(dir: &Path) -> bool {
    let start = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    start.ancestors().any(|d| d.join(".git").exists())
}

/// `git init` in `dir`; false when git is not installed or fails.
fn git_init(dir: &Path) -> bool {
    std::process::Command::new("git")
        .arg("init")
        .arg("--quiet")
        .arg(dir)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn new(name: &str) -> NewMod {
        NewMod {
            name: name.into(),
            engine: EngineVersion::UE5_4,
            project: "Game1".into(),
            git: false,
        }
    }

    #[test]
    fn new_mod_writes_a_manifest_that_parses() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path().join("Cool");
        let done = write_mod(&dir, &new("Cool")).unwrap();
        assert_eq!(done.written.len(), 5, "{done:?}");
        let m = Manifest::load(&dir.join(MANIFEST_NAME)).unwrap();
        assert_eq!(m.package.name, "Cool");
        assert_eq!(m.game.engine, EngineVersion::UE5_4);
        assert!(dir.join("Cooked/Game1/Content").is_dir());
        let workflow = std::fs::read_to_string(dir.join(".github/workflows/release.yml")).unwrap();
        for placeholder in [
            "{{name}}",
            "{{engine}}",
            "{{project}}",
            "{{zenpak_version}}",
            "{{repository}}",
        ] {
            assert!(!workflow.contains(placeholder), "{workflow}");
        }
        assert!(workflow.contains(REPOSITORY));
        assert!(
            write_mod(&dir, &new("Cool")).is_err(),
            "must not overwrite a manifest"
        );
    }

    #[test]
    fn a_bad_name_writes_nothing_and_points_at_name() {
        let dir = tempfile::tempdir().unwrap();
        let e = write_mod(dir.path(), &new("My Mod")).unwrap_err();
        assert!(e.hint().unwrap().contains("--name"), "{e}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn an_existing_gitignore_gets_zenpaks_lines_once() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(".gitignore"), "*.log\n").unwrap();
        let done = write_mod(dir.path(), &new("Cool")).unwrap();
        assert!(done.gitignore_extended.is_some());
        let text = std::fs::read_to_string(dir.path().join(".gitignore")).unwrap();
        assert!(
            text.starts_with("*.log\n") && text.contains("/target/"),
            "{text}"
        );
    }
}
