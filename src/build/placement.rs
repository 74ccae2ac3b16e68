//! Where a cooked package belongs in a mod's content folder, by the name
//! its own header carries, and `zenpak add`: copying a package with its
//! companions (`.uexp`, `.ubulk`, `.uptnl`, `.m.ubulk`) to that place.
//!
//! `/Game/X/Y` lives at `<Project>/Content/X/Y.uasset`, `/Engine/X/Y` at
//! `Engine/Content/X/Y.uasset`, and a plugin's `/<Plugin>/X/Y` at
//! `<Project>/Plugins/<Plugin>/Content/X/Y.uasset`: the inverse of
//! [`package_name_for`].

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::binary::Reader;
use crate::error::{Error, ErrorKind, Result};
use crate::legacy::Summary;
use crate::version::EngineVersion;

use super::input::PackageFileKind;

/// The package name a cooked header carries: read at `engine` first, then
/// at every other release (the name is all that is wanted). `None` when
/// no release reads a name (UE4 cooks do not write it).
pub(crate) fn stored_package_name(header: &[u8], engine: Option<EngineVersion>) -> Option<String> {
    engine
        .into_iter()
        .chain(EngineVersion::ALL.into_iter().rev())
        .find_map(|v| {
            let read = Summary::read(&mut Reader::new(header), Some(v)).ok()?;
            read.summary.package_name().map(str::to_string)
        })
}

/// The header's path relative to the content root for the package
/// `package_name` (`/Game/X/Y` → `<project>/Content/X/Y.<extension>`), or
/// `None` for a name that is not a content package's (`/Script/…`, no folder,
/// `..`).
pub(crate) fn header_path_for(
    package_name: &str,
    project: &str,
    extension: &str,
) -> Option<String> {
    let rest = package_name.strip_prefix('/')?;
    let (mount, inner) = rest.split_once('/')?;
    let well_formed = |s: &str| {
        !s.is_empty()
            && s.split('/')
                .all(|p| !p.is_empty() && p != "." && p != ".." && !p.contains(['\\', ':']))
    };
    if !well_formed(mount) || !well_formed(inner) || mount.eq_ignore_ascii_case("Script") {
        return None;
    }
    let folder = if mount.eq_ignore_ascii_case("Game") {
        format!("{project}/Content")
    } else if mount.eq_ignore_ascii_case("Engine") {
        "Engine/Content".to_string()
    } else {
        format!("{project}/Plugins/{mount}/Content")
    };
    let relative = format!("{folder}/{inner}.{extension}");
    // The build must read the name back from the path it is given.
    (package_name_for(&relative, project).as_deref() == Some(package_name)).then_some(relative)
}

/// One package `add` placed (or found in place already).
#[derive(Debug, Clone, Serialize)]
pub struct Added {
    /// Its name, as its header says.
    pub package: String,
    /// The header given.
    pub(crate) from: PathBuf,
    /// The header's place in the mod.
    pub to: PathBuf,
    /// Every file of the package, at its place in the mod.
    pub files: Vec<PathBuf>,
    /// False when the same bytes were there already (nothing was written).
    pub copied: bool,
}

/// A package to add: its files, read, and where each goes.
struct Planned {
    package: String,
    from: PathBuf,
    /// (source, destination relative to the content root)
    files: Vec<(PathBuf, String)>,
}

/// Copies each package of `files` (headers, or any of a package's files)
/// with its companions under `content_root`, at the place its package name
/// says. Every package is checked before anything is written; a
/// destination holding other bytes is refused (same bytes: nothing to do).
pub fn add(
    files: &[PathBuf],
    content_root: &Path,
    project: &str,
    engine: EngineVersion,
) -> Result<Vec<Added>> {
    let mut headers: Vec<PathBuf> = Vec::new();
    for file in files {
        // A bare file name (`SM_Cube.uasset`) has an empty parent, which
        // names no folder to list; as an absolute path it has its own.
        let file = std::path::absolute(file).map_err(|e| Error::io(file, e))?;
        let header = header_of(&file)?;
        if !headers.contains(&header) {
            headers.push(header);
        }
    }
    let mut plans = Vec::new();
    let mut failures = Vec::new();
    for header in &headers {
        match plan(header, project, engine) {
            Ok(p) => plans.push(p),
            Err(e) => failures.push(e),
        }
    }
    // What is at each destination: the same bytes, nothing, or a refusal.
    let mut writes = Vec::new();
    for plan in &plans {
        let mut same = true;
        for (source, relative) in &plan.files {
            let target = content_root.join(relative);
            let data = std::fs::read(source).map_err(|e| Error::io(source, e))?;
            match std::fs::read(&target) {
                Ok(existing) if existing == data => {}
                Ok(_) => {
                    same = false;
                    failures.push(
                        Error::new(ErrorKind::NotOwned(format!(
                            "{} already exists with other bytes; {} was not added",
                            target.display(),
                            plan.package
                        )))
                        .in_file(source)
                        .with_hint(format!(
                            "remove or rename {} first if this package should replace it",
                            target.display()
                        )),
                    );
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    same = false;
                    writes.push((relative.clone(), data));
                }
                Err(e) => return Err(Error::io(&target, e)),
            }
        }
        // A companion at the destination that this package lacks would be read with it.
        let stem_of = |p: &Path| {
            p.file_name()
                .and_then(|n| n.to_str())
                .and_then(PackageFileKind::classify)
                .map(|(s, _)| s.to_string())
        };
        let header_target = content_root.join(&plan.files[0].1);
        if let (Some(dir), Some(stem)) = (header_target.parent(), stem_of(&header_target)) {
            for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
                let path = entry.path();
                let ours = plan.files.iter().any(|(_, r)| content_root.join(r) == path);
                if !ours && stem_of(&path).is_some_and(|s| s.eq_ignore_ascii_case(&stem)) {
                    failures.push(
                        Error::new(ErrorKind::NotOwned(format!(
                            "{} is there already and {} has no such file: the two would be read as one package",
                            path.display(),
                            plan.package
                        )))
                        .in_file(&plan.from)
                        .with_hint("remove the package that is there first"),
                    );
                }
            }
        }
        let _ = same;
    }
    if !failures.is_empty() {
        return Err(Error::new(ErrorKind::Many {
            what: "packages to add",
            total: headers.len(),
            failures,
        }));
    }
    if !writes.is_empty() {
        let out = crate::publish::output_dir::OutputDir::new(content_root)?;
        for (relative, data) in &writes {
            crate::pool::check_interrupted()?;
            out.write_bytes(relative, data)?;
        }
    }
    Ok(plans
        .into_iter()
        .map(|plan| {
            let copied = plan
                .files
                .iter()
                .any(|(_, r)| writes.iter().any(|(w, _)| w == r));
            Added {
                to: content_root.join(&plan.files[0].1),
                files: plan
                    .files
                    .iter()
                    .map(|(_, r)| content_root.join(r))
                    .collect(),
                package: plan.package,
                from: plan.from,
                copied,
            }
        })
        .collect())
}

/// The header of the package `file` is part of.
fn header_of(file: &Path) -> Result<PathBuf> {
    let name = file.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let Some((stem, kind)) = PackageFileKind::classify(name) else {
        return Err(Error::usage(format!(
            "{} is not a cooked package file (.uasset, .umap, .uexp, .ubulk, .uptnl, .m.ubulk)",
            file.display()
        )));
    };
    if kind == PackageFileKind::Header {
        if !file.is_file() {
            return Err(Error::usage(format!("{} does not exist", file.display())).in_file(file));
        }
        return Ok(file.to_path_buf());
    }
    let dir = file.parent().unwrap_or(Path::new("."));
    ["uasset", "umap"]
        .iter()
        .map(|ext| dir.join(format!("{stem}.{ext}")))
        .find(|h| h.is_file())
        .ok_or_else(|| {
            Error::usage(format!(
                "{} has no .uasset or .umap beside it: add the package's header",
                file.display()
            ))
        })
}

/// Reads the package name of `header` and lists its files with their places.
fn plan(header: &Path, project: &str, engine: EngineVersion) -> Result<Planned> {
    let bytes = std::fs::read(header).map_err(|e| Error::io(header, e))?;
    let package = stored_package_name(&bytes, Some(engine)).ok_or_else(|| {
        Error::new(ErrorKind::Format(
            "the package's header carries no package name (UE4 cooks do not write it), so its place cannot be told".into(),
        ))
        .in_file(header)
        .with_hint("copy it by hand to the folder it has under the project's Content folder")
    })?;
    let name = header.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let (stem, _) = PackageFileKind::classify(name).unwrap_or((name, PackageFileKind::Header));
    let extension = &name[stem.len() + 1..];
    let relative = header_path_for(&package, project, extension).ok_or_else(|| {
        Error::new(ErrorKind::Format(format!(
            "the package calls itself `{package}`, which is not a content package's name"
        )))
        .in_file(header)
    })?;
    let dest_stem = &relative[..relative.len() - extension.len() - 1];
    let mut files = vec![(header.to_path_buf(), relative.clone())];
    let dir = header.parent().unwrap_or(Path::new("."));
    let mut companions: Vec<(PathBuf, String)> = std::fs::read_dir(dir)
        .map_err(|e| Error::io(dir, e))?
        .flatten()
        .filter_map(|entry| {
            let file = entry.file_name().to_str()?.to_string();
            let (s, kind) = PackageFileKind::classify(&file)?;
            (kind != PackageFileKind::Header && s == stem).then(|| {
                let suffix = &file[stem.len()..];
                (entry.path(), format!("{dest_stem}{suffix}"))
            })
        })
        .collect();
    companions.sort();
    files.extend(companions);
    Ok(Planned {
        package,
        from: header.to_path_buf(),
        files,
    })
}

/// The hint for a header whose path does not give a package name: where
/// its own name says it belongs, when the header carries one.
pub(crate) fn belongs_hint(header: &Path, root: &Path, project: &str) -> Option<String> {
    let bytes = std::fs::read(header).ok()?;
    let package = stored_package_name(&bytes, None)?;
    let name = header.file_name()?.to_str()?;
    let (stem, _) = PackageFileKind::classify(name)?;
    let relative = header_path_for(&package, project, &name[stem.len() + 1..])?;
    let folder = root.join(&relative);
    let folder = folder.parent()?;
    Some(format!(
        "its header names it `{package}`: it belongs in {} (`zenpak add {}` copies it there with its companion files)",
        folder.display(),
        header.display()
    ))
}

/// The package name for a header stored in a container or pak at `stored`
/// (mount point + relative path, `../../../` removed:
/// `Game/Content/Maps/Entry.umap`), its first folder taken as the project;
/// `None` when it is not a header inside a content folder.
pub fn package_name_of_stored(stored: &str) -> Option<String> {
    let project = stored.split('/').next().unwrap_or_default();
    package_name_for(stored, project)
}

/// The package name for a header at `relative_path` (`/`-separated, relative
/// to the cooked root), or `None` when the path is not inside a content folder.
pub(crate) fn package_name_for(relative_path: &str, project: &str) -> Option<String> {
    let parts: Vec<&str> = relative_path.split('/').collect();
    let content = parts
        .iter()
        .position(|p| p.eq_ignore_ascii_case("Content"))?;
    if content == 0 || content + 1 >= parts.len() {
        return None;
    }
    let mount = if content == 1 && parts[0].eq_ignore_ascii_case(project) {
        "Game"
    } else if content == 1 && parts[0].eq_ignore_ascii_case("Engine") {
        "Engine"
    } else if parts[..content]
        .iter()
        .any(|p| p.eq_ignore_ascii_case("Plugins"))
    {
        parts[content - 1]
    } else {
        return None;
    };
    let file = parts[parts.len() - 1];
    let (stem, kind) = PackageFileKind::classify(file)?;
    if kind != PackageFileKind::Header {
        return None;
    }
    let mut name = format!("/{mount}");
    for part in &parts[content + 1..parts.len() - 1] {
        name.push('/');
        name.push_str(part);
    }
    name.push('/');
    name.push_str(stem);
    Some(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_paths_invert_package_names() {
        for (name, path) in [
            ("/Game/X/Y", "Proj/Content/X/Y.uasset"),
            ("/Engine/A/B", "Engine/Content/A/B.uasset"),
            ("/MyPlugin/A/B", "Proj/Plugins/MyPlugin/Content/A/B.uasset"),
        ] {
            assert_eq!(
                header_path_for(name, "Proj", "uasset").as_deref(),
                Some(path)
            );
            assert_eq!(package_name_for(path, "Proj").as_deref(), Some(name));
        }
        for bad in [
            "/Script/Engine",
            "/Game",
            "Game/X",
            "/Game/../X",
            "/Game//X",
            "/Game/a\\b",
        ] {
            assert_eq!(header_path_for(bad, "Proj", "uasset"), None, "{bad}");
        }
    }
}
