//! Containers the game unmounts: a container holding packages that import
//! certain script classes (reported: the ability system's and camera
//! shakes) is unmounted at login, so the whole mod silently does nothing.
//! `check` and `build` warn about each such package (`[marvel-rivals]
//! unmounted-classes` lists the classes as globs over `/Script/Module.Class`).

use std::path::Path;

use crate::diagnostic::Diagnostic;
use crate::legacy::LegacyPackage;
use crate::Result;

use super::MarvelRivalsSection;

/// The diagnostic code of the warning.
pub const CODE: &str = "marvel-rivals-unmounted-class";

/// The script classes of `package`'s imports (`/Script/Module.Class`, where
/// the import is a class object) that match the section's globs.
pub fn listed_classes(
    section: &MarvelRivalsSection,
    package: &LegacyPackage,
) -> Result<Vec<String>> {
    let globs = crate::glob::Globs::new(
        "`[marvel-rivals] unmounted-classes`",
        &section.unmounted_classes,
    )?;
    let mut out = Vec::new();
    for (i, import) in package.imports.iter().enumerate() {
        if import.outer_index.is_null() || package.name(import.class_name)? != "Class" {
            continue;
        }
        let path = package.import_path(i)?;
        if path.starts_with("/Script/") && globs.is_match(&path) && !out.contains(&path) {
            out.push(path);
        }
    }
    Ok(out)
}

/// One warning per package (`file`) that lists such classes.
pub fn warnings(
    section: &MarvelRivalsSection,
    file: &Path,
    package: &LegacyPackage,
) -> Result<Vec<Diagnostic>> {
    let classes = listed_classes(section, package)?;
    if classes.is_empty() {
        return Ok(Vec::new());
    }
    Ok(vec![Diagnostic::warning(
        CODE,
        format!(
            "this package uses {}; Marvel Rivals unmounts a container that lists such classes at login, so the whole mod would not load",
            classes.join(", ")
        ),
    )
    .with_file(file)
    .with_hint(
        "ship this asset in a separate mod, or leave it out; `[marvel-rivals] unmounted-classes` lists the classes checked",
    )])
}
