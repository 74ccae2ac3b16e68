//! `zenpak check`: everything a build would find wrong with the manifest and
//! the content, found without converting or writing anything, plus the
//! packages the mod needs from the game.

use std::collections::{BTreeMap, BTreeSet};

use rayon::prelude::*;
use serde::Serialize;

use crate::build::discover::{self, Selection};
use crate::diagnostic::Diagnostic;
use crate::error::{Error, Result};
use crate::legacy::PackageFiles;
use crate::manifest::Manifest;

/// What `check` found.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CheckReport {
    pub packages: usize,
    pub loose_files: usize,
    /// Problems that make a build fail or produce a broken mod, each naming its file.
    pub problems: Vec<Diagnostic>,
    /// What a build would warn about.
    pub warnings: Vec<Diagnostic>,
    /// Packages the mod imports but does not contain: the game must have them.
    pub must_exist_in_game: Vec<String>,
}

impl CheckReport {
    pub fn is_ok(&self) -> bool {
        self.problems.is_empty()
    }
}

/// What checking one package found.
struct PackageCheck {
    problems: Vec<Diagnostic>,
    /// Packages it imports (by name).
    imported: Vec<String>,
    /// Its header did not read at the manifest's engine version.
    unreadable: bool,
    warnings: Vec<Diagnostic>,
}

/// Checks the mod of `manifest`. Content-level problems are listed in the
/// report; only an unreadable manifest or content root is an `Err`.
pub fn check(manifest: &Manifest) -> Result<CheckReport> {
    manifest.check_output_location()?;
    let selection = Selection::new(&manifest.content.include, &manifest.content.exclude)?;
    let content =
        match discover::discover(&manifest.content_root(), &manifest.game.project, &selection) {
            Ok(content) => content,
            Err(e) if matches!(e.kind(), crate::error::ErrorKind::Many { .. }) => {
                return Ok(CheckReport {
                    problems: Diagnostic::from_error(&e),
                    ..CheckReport::default()
                })
            }
            Err(e) => return Err(e),
        };
    let mut report = CheckReport {
        packages: content.packages.len(),
        loose_files: content.loose_files.len(),
        warnings: manifest.warnings(),
        ..CheckReport::default()
    };
    report.warnings.extend(content.warnings.iter().cloned());
    if let Some(path) = manifest.mappings_path() {
        let result = match crate::build::package::Settings::from_manifest(manifest) {
            Ok(_) => crate::mappings::Mappings::load(&path).map(|_| ()),
            Err(e) => Err(e),
        };
        if let Err(e) = result {
            report
                .problems
                .extend(Diagnostic::from_error(&e.within("[game] mappings")));
        }
    }

    // Package names must be unique even ignoring case: the engine's ids are case-blind.
    let mut by_lower: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for package in &content.packages {
        by_lower
            .entry(package.package_name.to_lowercase())
            .or_default()
            .push(&package.relative_path);
    }
    for paths in by_lower.values().filter(|p| p.len() > 1) {
        report.problems.push(Diagnostic::error(
            "case-clash",
            format!(
                "{} are one package to the engine (names differ only in case); keep one",
                paths.join(" and ")
            ),
        ));
    }

    let engine = manifest.game.engine;
    let profile = crate::fixups::Profile::from_name(&manifest.game.profile)?;
    let profile_options = manifest.profile_options();
    let results: Vec<PackageCheck> = content
        .packages
        .par_iter()
        .map(|source| {
            let mut problems = Vec::new();
            let mut imported = Vec::new();
            let mut warnings = Vec::new();
            let result = PackageFiles::load(&source.header).and_then(|files| {
                let package = files.read_package(Some(engine))?;
                files.check_exports(&package)?;
                files.check_bulk_data(&package)?;
                warnings.extend(profile.package_warnings(
                    &profile_options,
                    &files.path,
                    &package,
                )?);
                if let Some(own) = package.package_name() {
                    if !own.eq_ignore_ascii_case(&source.package_name) {
                        problems.push(
                            Diagnostic::error(
                                "package-path-mismatch",
                                format!(
                                    "the package calls itself `{own}` but its path makes it `{}`",
                                    source.package_name
                                ),
                            )
                            .with_file(&source.header),
                        );
                    }
                }
                for index in 0..package.imports.len() {
                    if package.imports[index].outer_index.is_null() {
                        imported.push(package.import_package_name(index)?);
                    }
                }
                Ok(())
            });
            if let Err(e) = result {
                problems.extend(Diagnostic::from_error(&Error::in_file(e, &source.header)));
                return PackageCheck {
                    problems,
                    imported,
                    unreadable: true,
                    warnings,
                };
            }
            PackageCheck {
                problems,
                imported,
                unreadable: false,
                warnings,
            }
        })
        .collect();

    // Many packages that do not read at all: usually the wrong engine version.
    let unreadable: Vec<&std::path::Path> = content
        .packages
        .iter()
        .zip(&results)
        .filter(|(_, check)| check.unreadable)
        .map(|(p, _)| p.header.as_path())
        .collect();
    if unreadable.len() * 2 > content.packages.len() {
        let fits = crate::build::engine_guess::versions_that_read(&unreadable, engine);
        if let Some(best) = fits.first() {
            report.problems.push(
                Diagnostic::error(
                    "engine-version",
                    format!(
                        "{} of {} packages do not read as UE {engine}; they read as UE {best}",
                        unreadable.len(),
                        content.packages.len()
                    ),
                )
                .with_file(manifest.manifest_path())
                .with_hint(format!(
                    "cooked packages do not say which engine wrote them: set `[game] engine = \"{best}\"` in mod.toml"
                )),
            );
            return Ok(report);
        }
    }

    let contained: BTreeSet<String> = content
        .packages
        .iter()
        .map(|p| p.package_name.to_lowercase())
        .collect();
    let mut needed = BTreeSet::new();
    for check in results {
        report.problems.extend(check.problems);
        report.warnings.extend(check.warnings);
        for name in check.imported {
            // Script packages are the game's code, always there; content packages must be found.
            if !name.starts_with("/Script/") && !contained.contains(&name.to_lowercase()) {
                needed.insert(name);
            }
        }
    }
    report.must_exist_in_game = needed.into_iter().collect();
    Ok(report)
}
