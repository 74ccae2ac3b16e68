//! Where players download mods: the archive layout and the metadata each
//! platform expects, from one `mod.toml` (`[mod]` and `[release]`).
//! `zenpak package --for zip|nexus|modio|thunderstore` writes them through
//! `release::package`; `--dry-run` prints the plan.
//!
//! The placement of the triplet in each archive is one table,
//! [`PLACEMENT`], with where each rule comes from. The platform's own
//! metadata:
//!
//! * **Thunderstore** — inside the archive: `manifest.json` (`name`:
//!   `[A-Za-z0-9_]+`, `version_number`: `Major.Minor.Patch`, `website_url`,
//!   `description` at most 250 characters, `dependencies`:
//!   `Namespace-Name-Major.Minor.Patch` strings), `icon.png` (a 256×256 PNG),
//!   `README.md`, and `CHANGELOG.md` when given. Rules as Thunderstore's
//!   package-format documentation states them (the upload page's manifest
//!   validator).
//! * **Nexus Mods** — a plain archive; beside it `<archive>.nexus.json`
//!   with what the upload API and its GitHub action take (game domain, mod
//!   id, file group id, version, file name, description).
//! * **mod.io** — a zip per file upload (at most 500 MB); beside it
//!   `<archive>.modio.json` (game id, mod id, version, changelog).
//!
//! Every value is checked before anything is written; an error names the
//! `mod.toml` key to change.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::{Error, Result};
use crate::manifest::{Manifest, ThunderstoreSection};

/// A platform an archive is made for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Platform {
    /// zenpak's own release zip (`zenpak package`).
    Zip,
    Nexus,
    Modio,
    Thunderstore,
}

impl Platform {
    pub(crate) const ALL: [Platform; 4] = [
        Platform::Zip,
        Platform::Nexus,
        Platform::Modio,
        Platform::Thunderstore,
    ];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Platform::Zip => "zip",
            Platform::Nexus => "nexus",
            Platform::Modio => "modio",
            Platform::Thunderstore => "thunderstore",
        }
    }
}

impl std::str::FromStr for Platform {
    type Err = Error;
    fn from_str(s: &str) -> Result<Platform> {
        Platform::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| {
                Error::usage(format!(
                    "unknown platform `{s}`; known: zip, nexus, modio, thunderstore"
                ))
            })
    }
}

/// Where each platform wants the triplet inside its archive, and the
/// source of the rule.
pub(crate) const PLACEMENT: [(Platform, &str, &str); 4] = [
    (
        Platform::Zip,
        "~mods/",
        "zenpak's release zip: unzipped into <Game>/<Project>/Content/Paks",
    ),
    (
        Platform::Nexus,
        "{project}/Content/Paks/~mods/",
        "Nexus Mods installers (Vortex, by hand) extract an archive into the game's install folder",
    ),
    (
        Platform::Modio,
        "~mods/",
        "mod.io installs a file's contents into the game's mod folder (Paks), as zenpak's zip",
    ),
    (
        Platform::Thunderstore,
        "pak/",
        "Thunderstore's Unreal install rules map a package's pak/ folder to the game's ~mods",
    ),
];

/// One file of an archive.
#[derive(Debug, Clone, Serialize)]
pub struct PlannedEntry {
    /// Path inside the archive.
    pub name: String,
    /// The file it is copied from (a build artifact or a release file);
    /// `None` for generated text.
    pub(crate) from: Option<PathBuf>,
    #[serde(skip)]
    pub(crate) bytes: Option<Vec<u8>>,
    /// Whether it is one of the build's artifacts (checked against the build).
    #[serde(skip)]
    pub(crate) artifact: bool,
}

/// What `package --for` writes.
#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    pub platform: Platform,
    /// File name of the archive (in `<output>/package/`).
    pub archive: String,
    pub entries: Vec<PlannedEntry>,
    /// The platform's manifest, when it has one (Thunderstore's is inside
    /// the archive; Nexus Mods' and mod.io's upload metadata beside it).
    pub manifest: Option<serde_json::Value>,
    /// File name of the metadata written beside the archive, if any.
    pub(crate) beside: Option<String>,
}

/// The archive for `platform` of a build whose artifacts are `artifacts`,
/// every value checked against the platform's rules.
pub fn plan(manifest: &Manifest, platform: Platform, artifacts: &[PathBuf]) -> Result<Plan> {
    let release = manifest.release.clone().unwrap_or_default();
    let folder = PLACEMENT
        .iter()
        .find(|(p, _, _)| *p == platform)
        .map(|(_, folder, _)| folder.replace("{project}", &manifest.game.project))
        .unwrap_or_default();
    let m = &manifest.package;
    let archive = match platform {
        Platform::Zip => format!("{}-{}.zip", m.name, m.version),
        _ => format!("{}-{}-{}.zip", m.name, m.version, platform.name()),
    };
    let mut entries: Vec<PlannedEntry> = artifacts
        .iter()
        .map(|path| PlannedEntry {
            name: format!(
                "{folder}{}",
                path.file_name().unwrap_or_default().to_string_lossy()
            ),
            from: Some(path.clone()),
            bytes: None,
            artifact: true,
        })
        .collect();
    let file = |key: &str, path: &Path| -> Result<PathBuf> {
        let full = manifest.dir.join(path);
        if full.is_file() {
            Ok(full)
        } else {
            Err(manifest.key_error(
                key,
                format!("`{}` is not a file next to mod.toml", path.display()),
            ))
        }
    };
    let changelog = release
        .changelog
        .as_deref()
        .map(|p| file("changelog", p))
        .transpose()?;
    let (manifest_json, beside) = match platform {
        Platform::Zip => (None, None),
        Platform::Nexus => {
            let nexus = release.nexus.as_ref().ok_or_else(|| {
                manifest.key_error("release", "`--for nexus` needs `[release] nexus = { game = \"…\", mod-id = N, file-group = N }`".into())
            })?;
            if nexus.game.is_empty() || !nexus.game.chars().all(|c| c.is_ascii_alphanumeric()) {
                return Err(manifest.key_error(
                    "nexus",
                    format!("`game = \"{}\"` is not a Nexus Mods game domain (letters and digits, as in nexusmods.com/<domain>)", nexus.game),
                ));
            }
            let json = serde_json::json!({
                "game_domain": nexus.game,
                "mod_id": nexus.mod_id,
                "file_group_id": nexus.file_group,
                "name": m.name,
                "version": m.version,
                "description": m.description,
                "file": archive,
            });
            (Some(json), Some(format!("{archive}.nexus.json")))
        }
        Platform::Modio => {
            let modio = release.modio.as_ref().ok_or_else(|| {
                manifest.key_error(
                    "release",
                    "`--for modio` needs `[release] modio = { game-id = N, mod-id = N }`".into(),
                )
            })?;
            let changelog_text = match &changelog {
                Some(path) => std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?,
                None => String::new(),
            };
            let json = serde_json::json!({
                "game_id": modio.game_id,
                "mod_id": modio.mod_id,
                "version": m.version,
                "changelog": changelog_text,
                "file": archive,
            });
            (Some(json), Some(format!("{archive}.modio.json")))
        }
        Platform::Thunderstore => {
            let ts = release.thunderstore.clone().ok_or_else(|| {
                manifest.key_error(
                    "release",
                    "`--for thunderstore` needs `[release] thunderstore = { namespace = \"…\" }`"
                        .into(),
                )
            })?;
            thunderstore_checks(manifest, &ts)?;
            let icon = release.icon.as_deref().ok_or_else(|| {
                manifest.key_error(
                    "release",
                    "Thunderstore needs `[release] icon = \"icon.png\"` (256×256 PNG)".into(),
                )
            })?;
            let icon = file("icon", icon)?;
            check_icon(manifest, &icon)?;
            let readme = match release.readme.as_deref() {
                Some(p) => Some(file("readme", p)?),
                None => Some(manifest.dir.join("README.md")).filter(|p| p.is_file()),
            };
            entries.push(PlannedEntry {
                name: "icon.png".into(),
                from: Some(icon),
                bytes: None,
                artifact: false,
            });
            entries.push(match readme {
                Some(path) => PlannedEntry {
                    name: "README.md".into(),
                    from: Some(path),
                    bytes: None,
                    artifact: false,
                },
                None => PlannedEntry {
                    name: "README.md".into(),
                    from: None,
                    bytes: Some(format!("# {}\n\n{}\n", m.name, m.description).into_bytes()),
                    artifact: false,
                },
            });
            let json = serde_json::json!({
                "name": m.name,
                "version_number": m.version,
                "website_url": ts.website,
                "description": m.description,
                "dependencies": ts.dependencies,
            });
            let mut text = serde_json::to_vec_pretty(&json).expect("JSON serialises");
            text.push(b'\n');
            entries.push(PlannedEntry {
                name: "manifest.json".into(),
                from: None,
                bytes: Some(text),
                artifact: false,
            });
            (Some(json), None)
        }
    };
    if let Some(path) = changelog {
        if platform != Platform::Modio {
            entries.push(PlannedEntry {
                name: "CHANGELOG.md".into(),
                from: Some(path),
                bytes: None,
                artifact: false,
            });
        }
    }
    Ok(Plan {
        platform,
        archive,
        entries,
        manifest: manifest_json,
        beside,
    })
}

/// Thunderstore's manifest rules on the values `mod.toml` gives.
fn thunderstore_checks(manifest: &Manifest, ts: &ThunderstoreSection) -> Result<()> {
    let m = &manifest.package;
    let word = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !word(&m.name) {
        return Err(manifest.key_error(
            "name",
            format!(
                "Thunderstore names are letters, digits and `_` only; `{}` is not",
                m.name
            ),
        ));
    }
    if !is_semver(&m.version) {
        return Err(manifest.key_error(
            "version",
            format!(
                "Thunderstore versions are Major.Minor.Patch (`1.0.0`); `{}` is not",
                m.version
            ),
        ));
    }
    if m.description.chars().count() > 250 {
        return Err(manifest.key_error(
            "description",
            format!(
                "Thunderstore descriptions are at most 250 characters; this one has {}",
                m.description.chars().count()
            ),
        ));
    }
    if !word(&ts.namespace) {
        return Err(manifest.key_error(
            "thunderstore",
            format!(
                "`namespace = \"{}\"`: letters, digits and `_` only",
                ts.namespace
            ),
        ));
    }
    if let Some(bad) = ts.dependencies.iter().find(|d| {
        let parts: Vec<&str> = d.splitn(3, '-').collect();
        !(parts.len() == 3 && word(parts[0]) && word(parts[1]) && is_semver(parts[2]))
    }) {
        return Err(manifest.key_error(
            "thunderstore",
            format!("dependency `{bad}` is not `Namespace-Name-Major.Minor.Patch`"),
        ));
    }
    Ok(())
}

fn is_semver(v: &str) -> bool {
    let parts: Vec<&str> = v.split('.').collect();
    parts.len() == 3
        && parts.iter().all(|p| {
            !p.is_empty()
                && p.chars().all(|c| c.is_ascii_digit())
                && (p.len() == 1 || !p.starts_with('0'))
        })
}

/// The icon is a PNG of 256×256 (its `IHDR` chunk, the first after the signature).
fn check_icon(manifest: &Manifest, path: &Path) -> Result<()> {
    let mut head = [0u8; 24];
    let read = std::fs::File::open(path)
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut head))
        .is_ok();
    const SIGNATURE: [u8; 8] = [0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a];
    if !read || head[..8] != SIGNATURE || &head[12..16] != b"IHDR" {
        return Err(manifest.key_error("icon", format!("{} is not a PNG file", path.display())));
    }
    let width = u32::from_be_bytes(head[16..20].try_into().expect("4 bytes"));
    let height = u32::from_be_bytes(head[20..24].try_into().expect("4 bytes"));
    if (width, height) != (256, 256) {
        return Err(manifest.key_error(
            "icon",
            format!(
                "Thunderstore icons are 256×256 pixels; {} is {width}×{height}",
                path.display()
            ),
        ));
    }
    Ok(())
}
