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
    /// The `[release]` key naming it, for a release file: opened again
    /// through [`open_release_file`] when it is copied.
    #[serde(skip)]
    pub(crate) release_key: Option<&'static str>,
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
            release_key: None,
        })
        .collect();
    let file = |key: &str, path: &Path| -> Result<PathBuf> {
        let full = manifest.dir.join(path);
        open_release_file(manifest, key, &full)?;
        Ok(full)
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
                Some(path) => {
                    let mut text = Vec::new();
                    copy_release_file(manifest, "changelog", path, &mut text, path)?;
                    String::from_utf8(text).map_err(|_| {
                        manifest
                            .key_error("changelog", format!("{} is not UTF-8 text", path.display()))
                    })?
                }
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
            // The default README.md is a release file as soon as anything
            // (even a dangling link) has that name.
            let default_readme = Path::new("README.md");
            let readme = match release.readme.as_deref() {
                Some(p) => Some(file("readme", p)?),
                None if manifest.dir.join(default_readme).symlink_metadata().is_ok() => {
                    Some(file("readme", default_readme)?)
                }
                None => None,
            };
            entries.push(PlannedEntry {
                name: "icon.png".into(),
                from: Some(icon),
                bytes: None,
                artifact: false,
                release_key: Some("icon"),
            });
            entries.push(match readme {
                Some(path) => PlannedEntry {
                    name: "README.md".into(),
                    from: Some(path),
                    bytes: None,
                    artifact: false,
                    release_key: Some("readme"),
                },
                None => PlannedEntry {
                    name: "README.md".into(),
                    from: None,
                    bytes: Some(format!("# {}\n\n{}\n", m.name, m.description).into_bytes()),
                    artifact: false,
                    release_key: None,
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
                release_key: None,
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
                release_key: Some("changelog"),
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

/// Opens `path`, the file `[release] key` names (resolved against the
/// manifest's folder), under the rules content obeys: it lies inside the
/// mod's folder once links are resolved (anywhere with `[content]
/// follow-links = true`, as links under the content root), it is a regular
/// file (not a FIFO, a device or a folder), and it holds at most
/// [`MAX_RELEASE_FILE_BYTES`](crate::limits::MAX_RELEASE_FILE_BYTES). The
/// manifest's validation has already refused absolute paths and `..`;
/// this runs when the plan is made and again when each file is copied, so
/// a file turned into a link meanwhile is refused too. The file opened is
/// the resolved path itself, without following a link (Unix), and without
/// waiting for a writer should it have become a FIFO.
pub(crate) fn open_release_file(
    manifest: &Manifest,
    key: &str,
    path: &Path,
) -> Result<std::fs::File> {
    let limit = crate::limits::MAX_RELEASE_FILE_BYTES;
    let refuse = |why: String| {
        manifest.key_error(key, why).with_hint(
            "name a regular file inside the mod's folder, at most 16 MiB (a link may leave the folder only with `[content] follow-links = true`)",
        )
    };
    let target = path.canonicalize().map_err(|_| {
        refuse(format!(
            "`{}` is not a file next to mod.toml",
            path.display()
        ))
    })?;
    let dir = match manifest.dir.as_os_str().is_empty() {
        true => Path::new("."),
        false => manifest.dir.as_path(),
    };
    let mod_dir = dir.canonicalize().map_err(|e| Error::io(dir, e))?;
    if !manifest.content.follow_links && !target.starts_with(&mod_dir) {
        return Err(refuse(format!(
            "`{}` leads outside the mod's folder, to `{}`",
            path.display(),
            target.display()
        )));
    }
    let regular = |meta: &std::fs::Metadata| -> Result<()> {
        if !meta.is_file() {
            return Err(refuse(format!(
                "`{}` is not a regular file (a folder, FIFO, socket or device)",
                path.display()
            )));
        }
        if meta.len() > limit {
            return Err(refuse(format!(
                "`{}` holds {} bytes, more than the {} MiB a release file may hold",
                path.display(),
                meta.len(),
                limit >> 20
            )));
        }
        Ok(())
    };
    regular(&std::fs::metadata(&target).map_err(|e| Error::io(&target, e))?)?;
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    let file = options.open(&target).map_err(|e| {
        refuse(format!(
            "`{}` changed while zenpak opened it ({e})",
            path.display()
        ))
    })?;
    regular(&file.metadata().map_err(|e| Error::io(&target, e))?)?;
    Ok(file)
}

/// Copies the release file `path` (`[release] key`) into `to` (named
/// `to_path` in errors), opened by [`open_release_file`] and read a block
/// at a time, never more than the budget (a file whose size the system
/// does not tell, as those of `/proc`, is cut off and refused): returns
/// the bytes copied.
pub(crate) fn copy_release_file(
    manifest: &Manifest,
    key: &str,
    path: &Path,
    to: &mut dyn std::io::Write,
    to_path: &Path,
) -> Result<u64> {
    let limit = crate::limits::MAX_RELEASE_FILE_BYTES;
    let mut file = std::io::Read::take(open_release_file(manifest, key, path)?, limit + 1);
    let mut buffer = vec![0u8; 64 << 10];
    let mut copied = 0u64;
    loop {
        let n = std::io::Read::read(&mut file, &mut buffer).map_err(|e| Error::io(path, e))?;
        if n == 0 {
            return Ok(copied);
        }
        copied += n as u64;
        if copied > limit {
            return Err(manifest.key_error(
                key,
                format!(
                    "`{}` holds more than the {} MiB a release file may hold",
                    path.display(),
                    limit >> 20
                ),
            ));
        }
        to.write_all(&buffer[..n])
            .map_err(|e| Error::io(to_path, e))?;
    }
}

/// The icon is a PNG of 256×256 (its `IHDR` chunk, the first after the signature).
fn check_icon(manifest: &Manifest, path: &Path) -> Result<()> {
    let mut head = [0u8; 24];
    let read = open_release_file(manifest, "icon", path)?;
    let read = std::io::Read::read_exact(&mut &read, &mut head).is_ok();
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
