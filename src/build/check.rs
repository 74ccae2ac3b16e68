//! `zenpak check`: everything a build would find wrong with the manifest and
//! the content, found without converting or writing anything, plus the
//! packages the mod needs from the game.

use std::collections::BTreeSet;

use rayon::prelude::*;
use serde::Serialize;

use crate::build::discover::{self, Selection};
use crate::build::input::{LooseFile, PackageSource};
use crate::build::mod_package::ModPackage;
use crate::diagnostic::Diagnostic;
use crate::error::{Error, Result};
use crate::legacy::PackageFiles;
use crate::manifest::Manifest;
use crate::version::EngineVersion;

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
    /// `[content] exclude` patterns that leave out the files a mod must
    /// never contain (each such file is a `never-ship` problem).
    pub suggested_exclude: Vec<String>,
    /// The imports and exports of each package that read, for the game
    /// checks (`game_check`).
    #[serde(skip)]
    pub mod_packages: Vec<ModPackage>,
    /// The loose files, for the game checks (which game files they replace).
    #[serde(skip)]
    pub mod_loose_files: Vec<LooseFile>,
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
    /// What the game checks need of it (when it read).
    facts: Option<ModPackage>,
    warnings: Vec<Diagnostic>,
}

/// Checks the mod of `manifest`. Content-level problems are listed in the
/// report; only an unreadable manifest or content root is an `Err`.
pub fn check(manifest: &Manifest) -> Result<CheckReport> {
    manifest.check_buildable()?;
    let selection = Selection::new(&manifest.content.include, &manifest.content.exclude)?;
    let (mut content, content_problems) = discover::scan(
        &manifest.content_root(),
        &manifest.game.project,
        &selection,
        manifest.content.follow_links,
    )?;
    if manifest.content.paks.is_empty() {
        super::zen_store::check_cook(
            &manifest.content_root(),
            content.packages.is_empty(),
            &content.loose_files,
        )?;
    }
    let never_ship: Vec<Diagnostic> = content
        .never_ship
        .iter()
        .map(|file| Diagnostic::of(&file.to_error()))
        .collect();
    let suggested_exclude: Vec<String> = content
        .never_ship
        .iter()
        .map(|file| file.exclude.clone())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    // The packages that were found are checked too: every problem at once.
    let mut problems: Vec<Diagnostic> = content_problems
        .iter()
        .flat_map(Diagnostic::from_error)
        .collect();
    problems.extend(never_ship);
    if !manifest.content.paks.is_empty() {
        // Unpacking into the build cache needs the output folder's lock.
        let _lock = crate::build::lock_output(manifest, &crate::build::Silent)?;
        let cache =
            crate::build::cache::Cache::new(&manifest.output_dir(), &manifest.artifact_stem());
        cache.create()?;
        crate::build::pak_input::add_paks(
            &mut content,
            &manifest.content_paks(),
            &manifest.game.project,
            cache.dir(),
            &crate::pak::crypto::KeyRing::from_env()?,
            crate::build::input::Trust::Stamps,
        )?;
    }
    let mut report = CheckReport {
        packages: content.packages.len(),
        loose_files: content.loose_files.len(),
        mod_loose_files: content.loose_files.clone(),
        warnings: crate::build::manifest_warnings(manifest),
        problems,
        suggested_exclude,
        ..CheckReport::default()
    };
    report.warnings.extend(content.warnings.iter().cloned());
    report.problems.extend(mappings_problems(manifest));

    let engine = manifest.game.engine;
    let profile = crate::fixups::Profile::from_name(&manifest.game.profile)?;
    let profile_options = manifest.profile_options();
    let results: Vec<PackageCheck> = content
        .packages
        .par_iter()
        .map(|source| check_package(source, engine, profile, &profile_options))
        .collect();

    // The same error `build` gives (a manifest error, exit code 2).
    if let Some(error) = engine_problem(manifest, &content.packages, &results) {
        return Err(error);
    }

    let contained: BTreeSet<String> = content
        .packages
        .iter()
        .map(|p| p.package_name().to_lowercase())
        .collect();
    let mut needed = BTreeSet::new();
    for (source, mut check) in content.packages.iter().zip(results) {
        report.mod_packages.extend(std::mem::take(&mut check.facts));
        if check.unreadable {
            // Most packages read (else `engine_problem` answered): one that
            // reads as another release is foreign, said on its file.
            if let Some(foreign) =
                crate::build::engine_guess::foreign_package(&source.header(), engine)
            {
                check.problems = vec![Diagnostic::of(&foreign)];
            }
        }
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

/// The manifest's mappings must load (they are parsed only when named).
fn mappings_problems(manifest: &Manifest) -> Vec<Diagnostic> {
    let Some(path) = manifest.mappings_path() else {
        return Vec::new();
    };
    let result = match crate::build::package::Settings::from_manifest(manifest) {
        Ok(_) => crate::mappings::Mappings::load(&path).map(|_| ()),
        Err(e) => Err(e),
    };
    match result {
        Ok(()) => Vec::new(),
        Err(e) => Diagnostic::from_error(&e.within("[game] mappings")),
    }
}

/// Reads one package as the build would and lists what it imports.
fn check_package(
    source: &PackageSource,
    engine: EngineVersion,
    profile: crate::fixups::Profile,
    profile_options: &crate::fixups::ProfileOptions,
) -> PackageCheck {
    let mut problems = Vec::new();
    let mut imported = Vec::new();
    let mut warnings = Vec::new();
    let mut facts = None;
    let result = PackageFiles::load(source.header()).and_then(|files| {
        let package = files.read_package(Some(engine))?;
        package.check_outer_chains()?;
        files.check_exports(&package)?;
        files.check_uexp_belongs(&package, files.uexp.len() as u64)?;
        files.check_bulk_data(&package)?;
        warnings.extend(profile.package_warnings(profile_options, &files.path, &package)?);
        if let Some(own) = package.package_name() {
            if !own.eq_ignore_ascii_case(source.package_name()) {
                problems.push(
                    Diagnostic::error(
                        "package-path-mismatch",
                        format!(
                            "the package calls itself `{own}` but its path makes it `{}`",
                            source.package_name()
                        ),
                    )
                    .with_file(source.header()),
                );
            }
        }
        for index in 0..package.imports.len() {
            if package.imports[index].outer_index.is_null() {
                imported.push(package.import_package_name(index)?);
            }
        }
        facts = Some(ModPackage::from_legacy(
            source.package_name(),
            source.header(),
            &package,
        )?);
        Ok(())
    });
    let unreadable = result.is_err();
    if let Err(e) = result {
        problems.extend(Diagnostic::from_error(&Error::in_file(e, source.header())));
    }
    PackageCheck {
        problems,
        imported,
        unreadable,
        facts,
        warnings,
    }
}

/// When most packages do not read at all it is usually the wrong engine
/// version: one problem naming the version they read as.
fn engine_problem(
    manifest: &Manifest,
    packages: &[PackageSource],
    results: &[PackageCheck],
) -> Option<Error> {
    let unreadable: Vec<std::path::PathBuf> = packages
        .iter()
        .zip(results)
        .filter(|(_, check)| check.unreadable)
        .map(|(p, _)| p.header())
        .collect();
    let unreadable: Vec<&std::path::Path> = unreadable.iter().map(|p| p.as_path()).collect();
    if unreadable.len() * 2 <= packages.len() {
        return None;
    }
    let fits = crate::build::engine_guess::versions_that_read(&unreadable, manifest.game.engine);
    if fits.is_empty() {
        return None;
    }
    Some(crate::build::engine_guess::wrong_engine(
        manifest,
        unreadable.len(),
        packages.len(),
        &fits,
        None,
    ))
}
