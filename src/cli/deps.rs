//! `zenpak deps FILE... [--search DIR...]`: the packages classic Unreal
//! packages need, and, with search folders, which are present and which
//! objects are missing from the package that should hold them.

use std::fmt::Write as _;
use std::path::PathBuf;

use zenpak::classic::deps::{
    dependency_closure, dependency_report, Availability, DependencyReport, IntrinsicEvidence,
    PackageCache, Problem,
};
use zenpak::classic::Package;
use zenpak::Result;

use serde::Serialize;

use super::Output;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Classic packages to check (.unr, .u, .utx, .uax, .umx).
    #[arg(required = true)]
    pub(crate) files: Vec<PathBuf>,
    /// Folders to look for required packages in, in order (like the game's
    /// System, Textures, Sounds, Music and Maps folders).
    #[arg(long, num_args = 1..)]
    pub(crate) search: Vec<PathBuf>,
    /// List every object needed from each package, not just the counts.
    #[arg(long)]
    pub(crate) objects: bool,
    /// Also check, package by package, what each required package found in
    /// the search folders needs in turn.
    #[arg(long, requires = "search")]
    pub(crate) recursive: bool,
    /// Print stable JSON instead of text.
    #[arg(long)]
    pub(crate) json: bool,
}

/// One checked package, with the file it was read from.
#[derive(Serialize)]
struct PackageDependencies<'a> {
    file: String,
    #[serde(flatten)]
    report: &'a DependencyReport,
}

#[derive(Serialize)]
struct Dependencies<'a> {
    kind: &'static str,
    packages: Vec<PackageDependencies<'a>>,
}

pub(crate) fn run(args: Args, out: &Output) -> Result<()> {
    let mut cache = PackageCache::new();
    let reports = if args.recursive {
        dependency_closure(&args.files, &args.search, &mut cache)?
    } else {
        let mut reports = Vec::new();
        for file in &args.files {
            let package = Package::read_file(file)?;
            reports.push((
                file.clone(),
                dependency_report(&package, &args.search, &mut cache),
            ));
        }
        reports
    };
    let dependencies = Dependencies {
        kind: "classic-dependencies",
        packages: reports
            .iter()
            .map(|(file, report)| PackageDependencies {
                file: file.display().to_string(),
                report,
            })
            .collect(),
    };
    out.report(args.json, "dependencies", &dependencies, || {
        for (file, report) in &reports {
            print!(
                "{}",
                render(
                    &file.display().to_string(),
                    report,
                    !args.search.is_empty(),
                    args.objects
                )
            );
        }
    });
    // A map whose packages are not all found does not load: the check failed.
    let missing: usize = reports
        .iter()
        .flat_map(|(_, report)| &report.required)
        .filter(|r| matches!(r.availability, Some(Availability::Missing)))
        .count();
    if missing > 0 {
        return Err(zenpak::Error::invalid(format!(
            "{missing} required package(s) are in no search folder"
        ))
        .with_hint("add the folders that hold them with --search, or install them"));
    }
    Ok(())
}

// Long on purpose: one linear text layout of the report, top to bottom.
fn render(file: &str, report: &DependencyReport, searched: bool, objects: bool) -> String {
    let mut out = String::new();
    let o = &mut out;
    writeln!(
        o,
        "{file}: package {} (file version {}) needs {} package(s)",
        report.package,
        report.file_version,
        report.required.len()
    )
    .ok();
    let width = report
        .required
        .iter()
        .map(|r| r.package.len())
        .max()
        .unwrap_or(0);
    for required in &report.required {
        let status = match &required.availability {
            None => String::new(),
            Some(Availability::Missing) => "  MISSING: not in any search folder".to_string(),
            Some(Availability::Present {
                file,
                missing_objects,
                intrinsic,
            }) => {
                let mut status = format!("  present: {}", file.display());
                if !missing_objects.is_empty() {
                    write!(status, ", but {} object(s) missing", missing_objects.len()).ok();
                }
                if !intrinsic.is_empty() {
                    let list: Vec<String> = intrinsic
                        .iter()
                        .map(|i| match i.evidence {
                            IntrinsicEvidence::ImportedByItsPackage => i.path.clone(),
                            IntrinsicEvidence::ClassOfNativePackage => {
                                format!("{} (likely)", i.path)
                            }
                        })
                        .collect();
                    write!(
                        status,
                        "; intrinsic, created by native code: {}",
                        list.join(", ")
                    )
                    .ok();
                }
                status
            }
            Some(Availability::Unreadable { file, error }) => {
                format!("  UNREADABLE: {}: {error}", file.display())
            }
        };
        writeln!(
            o,
            "  {:<width$}  {:>5} object(s){status}",
            required.package,
            required.objects.len()
        )
        .ok();
        if objects {
            for object in &required.objects {
                writeln!(o, "      {}  [{}]", object.path, object.class).ok();
            }
        }
    }
    if searched {
        let missing_packages: Vec<&str> = report
            .missing_packages()
            .map(|r| r.package.as_str())
            .collect();
        let missing_objects: Vec<_> = report.missing_objects().collect();
        if missing_packages.is_empty() && missing_objects.is_empty() {
            writeln!(o, "  all required packages and objects are present").ok();
        }
        if !missing_packages.is_empty() {
            writeln!(o, "  missing packages: {}", missing_packages.join(", ")).ok();
        }
        for (required, missing) in missing_objects {
            let why = match &missing.problem {
                Problem::NotFound => "not found".to_string(),
                Problem::WrongClass { found } => format!("has class {found} instead"),
                Problem::NotPublic => "exists but is not public".to_string(),
            };
            writeln!(
                o,
                "  missing object: {} [{}] in package {}: {why}",
                missing.path, missing.class, required.package
            )
            .ok();
        }
    }
    if !report.own_objects.is_empty() {
        writeln!(
            o,
            "  imports {} of its own object(s), created by native code rather than stored (intrinsic)",
            report.own_objects.len()
        )
        .ok();
        if objects {
            for object in &report.own_objects {
                writeln!(o, "      {}  [{}]", object.path, object.class).ok();
            }
        }
    }
    for embedded in &report.embedded {
        if embedded.loaded {
            writeln!(
                o,
                "  embeds a copy of package {} ({} object(s)); `zenpak classic consolidate` can make it use the real one",
                embedded.package, embedded.exports
            )
        } else {
            writeln!(
                o,
                "  keeps an unloaded copy of package {} ({} object(s)), no longer used",
                embedded.package, embedded.exports
            )
        }
        .ok();
    }
    for object in &report.unattributed {
        writeln!(
            o,
            "  import {} [{}] does not belong to an imported package",
            object.path, object.class
        )
        .ok();
    }
    out
}
