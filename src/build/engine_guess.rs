//! When many packages fail to read, the manifest's engine version is the
//! usual cause: cooked packages are unversioned, so a 5.1 package read as
//! 5.2 fails somewhere in its summary. This module tries the other engine
//! versions on the failing packages and, when one reads them all, turns a
//! flood of identical errors into one manifest error that names the version
//! to set.

use crate::error::{Error, ErrorKind};
use crate::legacy::LegacyPackage;
use crate::manifest::Manifest;
use crate::version::EngineVersion;

use super::discover::Content;

/// How many failing packages are tried with each other version.
const SAMPLE: usize = 16;

/// The engine versions (other than `current`) that read every one of the
/// package headers at `headers` that `current` cannot read, nearest to
/// `current` first. Empty when `current` reads them all (their failures are
/// something else).
pub(crate) fn versions_that_read(
    headers: &[&std::path::Path],
    current: EngineVersion,
) -> Vec<EngineVersion> {
    let bytes: Vec<Vec<u8>> = headers
        .iter()
        .filter_map(|path| std::fs::read(path).ok())
        .filter(|b| LegacyPackage::read(b, Some(current)).is_err())
        .take(SAMPLE)
        .collect();
    if bytes.is_empty() {
        return Vec::new();
    }
    let mut fits: Vec<EngineVersion> = EngineVersion::ALL
        .into_iter()
        .filter(|&v| v != current)
        .filter(|&v| {
            bytes
                .iter()
                .all(|b| LegacyPackage::read(b, Some(v)).is_ok())
        })
        .collect();
    let position = |v: EngineVersion| EngineVersion::ALL.iter().position(|&x| x == v).unwrap_or(0);
    fits.sort_by_key(|&v| position(v).abs_diff(position(current)));
    fits
}

/// Replaces a build's package failures by one manifest error when most of
/// them are format errors that another engine version does not have.
/// Other errors are returned unchanged.
pub(crate) fn explain_failures(error: Error, content: &Content, manifest: &Manifest) -> Error {
    let ErrorKind::Many {
        failures, total, ..
    } = error.kind()
    else {
        return error;
    };
    let format_failures: Vec<&Error> = failures.iter().filter(|e| e.is_format()).collect();
    if format_failures.is_empty() {
        return error;
    }
    if format_failures.len() * 2 < failures.len()
        || failures.len() * 2 < content.packages.len().max(1)
    {
        // Most packages read at the mod's engine: the ones that do not are
        // foreign, each said on its own file.
        return name_foreign_packages(error, content, manifest.game.engine);
    }
    let headers: Vec<&std::path::Path> = format_failures.iter().filter_map(|e| e.file()).collect();
    // Only packages of this build: an error may name a companion instead of the header.
    let headers: Vec<&std::path::Path> = headers
        .into_iter()
        .filter(|h| content.packages.iter().any(|p| p.header() == *h))
        .collect();
    let fits = versions_that_read(&headers, manifest.game.engine);
    if fits.is_empty() {
        return error;
    }
    wrong_engine(
        manifest,
        failures.len(),
        *total,
        &fits,
        Some(&first_failure(format_failures[0])),
    )
}

/// The manifest error for packages that do not read at `[game] engine`
/// but do at `fits` (best first): a usage error naming the manifest, the
/// same whether `build` or `check` finds it.
pub(crate) fn wrong_engine(
    manifest: &Manifest,
    failed: usize,
    total: usize,
    fits: &[EngineVersion],
    first_failure: Option<&str>,
) -> Error {
    let current = manifest.game.engine;
    let best = fits[0];
    let others = also(&fits[1..], "also readable as");
    let first = first_failure
        .map(|f| format!(". First failure: {f}"))
        .unwrap_or_default();
    Error::usage(format!(
        "{failed} of {total} packages do not read as UE {current}; they read as UE {best}{others}{first}"
    ))
    .in_file(manifest.manifest_path())
    .with_hint(format!(
        "cooked packages do not say which engine wrote them: set `[game] engine = \"{best}\"` in mod.toml"
    ))
}

/// An error's location and message, without its hint (for quoting it).
fn first_failure(error: &Error) -> String {
    let location = error.location();
    if location.is_empty() {
        error.message()
    } else {
        format!("{location}: {}", error.message())
    }
}

/// The failures of `error` with each package that reads as another engine
/// release (and not as `current`) said as such: a `foreign-package` error
/// on its header naming the releases it reads as. Other failures unchanged.
fn name_foreign_packages(error: Error, content: &Content, current: EngineVersion) -> Error {
    let ErrorKind::Many {
        what,
        total,
        failures,
    } = error.into_kind()
    else {
        unreachable!("called with a Many error")
    };
    let failures = failures
        .into_iter()
        .map(|failure| {
            let header = failure
                .file()
                .filter(|f| content.packages.iter().any(|p| p.header() == *f))
                .map(std::path::Path::to_path_buf);
            match header {
                Some(header) if failure.is_format() => {
                    foreign_package(&header, current).unwrap_or(failure)
                }
                _ => failure,
            }
        })
        .collect();
    Error::new(ErrorKind::Many {
        what,
        total,
        failures,
    })
}

/// A `foreign-package` error for the package at `header` when it does not
/// read as `current` but does as other releases; `None` otherwise.
pub(crate) fn foreign_package(header: &std::path::Path, current: EngineVersion) -> Option<Error> {
    let fits = versions_that_read(&[header], current);
    let best = *fits.first()?;
    let also = also(&fits[1..], "also");
    Some(
        Error::new(ErrorKind::Content {
            code: crate::codes::FOREIGN_PACKAGE,
            message: format!(
                "this package reads as UE {best}{also}, not as the mod's UE {current}: it was cooked by another engine release"
            ),
        })
        .in_file(header)
        .with_hint(format!(
            "the mod's other packages read as UE {current}, so keep `[game] engine`: cook this asset again with the UE {current} editor, or remove it"
        )),
    )
}

/// ` (also 5.2, 5.3)` for the other releases that fit, empty when none do.
fn also(others: &[EngineVersion], words: &str) -> String {
    if others.is_empty() {
        return String::new();
    }
    let list: Vec<&str> = others.iter().map(|v| v.as_str()).collect();
    format!(" ({words} {})", list.join(", "))
}
