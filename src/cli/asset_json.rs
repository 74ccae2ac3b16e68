//! `zenpak to-json PKG.uasset [-o OUT.json]` and `zenpak from-json IN.json
//! -o PKG.uasset`: a cooked package as a JSON document and back
//! (`zenpak::properties::document`).

use std::path::{Path, PathBuf};

use zenpak::diagnostic::Diagnostic;
use zenpak::legacy::{BulkKind, PackageFiles};
use zenpak::mappings::Mappings;
use zenpak::properties::document::{AssetDocument, DocumentCounts};
use zenpak::{EngineVersion, Error, Result};

use super::args::nearest_manifest;
use super::Output;

#[derive(Debug, clap::Args)]
pub(crate) struct ToJsonArgs {
    /// The package's `.uasset` or `.umap` (its `.uexp` and bulk files beside it).
    pub(crate) path: PathBuf,
    /// Where to write the JSON (default: standard output).
    #[arg(short, long, value_name = "OUT.json")]
    pub(crate) output: Option<PathBuf>,
    /// Engine version the package was cooked with (default: the nearest
    /// mod.toml's `[game] engine`).
    #[arg(long, value_parser = super::args::engine_parser())]
    pub(crate) engine: Option<EngineVersion>,
    /// Mappings (.usmap) of the game, for unversioned packages (default:
    /// the nearest mod.toml's `[game] mappings`).
    #[arg(long, value_name = "M.usmap")]
    pub(crate) mappings: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
pub(crate) struct FromJsonArgs {
    /// The JSON document `zenpak to-json` wrote (edited or not).
    pub(crate) path: PathBuf,
    /// The `.uasset`/`.umap` to write; the `.uexp` and bulk files go beside it.
    #[arg(short, long, value_name = "PKG.uasset")]
    pub(crate) output: PathBuf,
    /// Mappings (.usmap) of the game, for unversioned packages (default:
    /// the nearest mod.toml's `[game] mappings`).
    #[arg(long, value_name = "M.usmap")]
    pub(crate) mappings: Option<PathBuf>,
}

#[derive(serde::Serialize)]
struct ToJsonReport<'a> {
    package: &'a Path,
    output: Option<&'a Path>,
    #[serde(flatten)]
    counts: DocumentCounts,
}

#[derive(serde::Serialize)]
struct FromJsonReport<'a> {
    document: &'a Path,
    files: Vec<PathBuf>,
    #[serde(flatten)]
    counts: DocumentCounts,
}

/// The mappings given, else the nearest mod.toml's.
fn load_mappings(given: Option<&Path>, out: &Output) -> Result<Option<Mappings>> {
    let path = match given {
        Some(p) => Some(p.to_path_buf()),
        None => nearest_manifest().and_then(|(manifest, at)| {
            let path = manifest.mappings_path()?;
            out.verbose_status(
                "Using",
                format!("mappings {} from {}", path.display(), at.display()),
            );
            Some(path)
        }),
    };
    let Some(path) = path else {
        return Ok(None);
    };
    let mappings = Mappings::load(&path)?;
    out.diagnostics(&mappings.diagnostics);
    Ok(Some(mappings))
}

pub(crate) fn run_to_json(args: ToJsonArgs, out: &Output) -> Result<()> {
    let engine = match args.engine {
        Some(engine) => Some(engine),
        None => nearest_manifest().map(|(manifest, at)| {
            out.verbose_status(
                "Using",
                format!("UE {} from {}", manifest.game.engine, at.display()),
            );
            manifest.game.engine
        }),
    };
    if zenpak::sniff::sniff_file(&args.path)? == zenpak::sniff::FileKind::ZenPackage {
        return Err(Error::usage(
            "this is a Zen package (as a container stores it); to-json reads legacy .uasset/.uexp packages",
        )
        .in_file(&args.path)
        .with_hint("write it as a legacy package first: `zenpak extract CONTAINER.utoc -o DIR --filter <package name>`, then run to-json on the .uasset"));
    }
    let files = PackageFiles::load(&args.path)?;
    let package = files.read_package(engine).map_err(|e| match engine {
        Some(_) => e,
        None => e.with_hint("pass --engine (e.g. --engine 5.6), or run inside a mod whose mod.toml sets `[game] engine`"),
    })?;
    if let Some(warning) = &package.version_warning {
        out.diagnostic(&warning.clone().with_file(&args.path));
    }
    let mappings = load_mappings(args.mappings.as_deref(), out)?;
    if mappings.is_none() && package.summary.unversioned_properties() {
        out.warning(
            "no-mappings",
            format!(
                "{} has unversioned properties and no mappings were given: every export's data is kept as bytes",
                args.path.display()
            ),
        );
    }
    let document = AssetDocument::read(&files, &package, mappings.as_ref())
        .map_err(|e| e.in_file(&args.path))?;
    let json = document.to_json()?;
    let counts = document.counts();
    if let Some((index, export)) = document
        .exports
        .iter()
        .enumerate()
        .find(|(_, e)| e.data.is_none())
    {
        let diagnostic = if mappings.is_some()
            && counts.decoded == 0
            && package.summary.unversioned_properties()
        {
            Diagnostic::warning(
                "mappings-mismatch",
                format!(
                    "not one of the {} exports decodes with these mappings: each is kept as bytes",
                    counts.exports
                ),
            )
            .with_hint("use the mappings (.usmap) dumped from the game this package belongs to")
        } else {
            Diagnostic::note(
                "opaque-exports",
                format!(
                    "{} of {} exports are kept as bytes (`opaque`), the first export {index} ({}): {}",
                    counts.exports - counts.decoded,
                    counts.exports,
                    export.path,
                    export.reason.as_deref().unwrap_or("")
                ),
            )
        };
        out.diagnostic(&diagnostic.with_file(&args.path));
    }
    for (index, export, reason) in document.undecoded_tables() {
        out.diagnostic(
            &Diagnostic::warning(
                "table-not-decoded",
                format!("export {index} ({}): {reason}", export.path),
            )
            .with_file(&args.path)
            .with_hint("the document keeps the bytes, so it still writes the package; give the game's own mappings to edit them as text"),
        );
    }
    match &args.output {
        Some(path) => {
            super::convert::check_output(path, &files, "DT_Weapons.json")?;
            zenpak::publish::write_file(path, |f| {
                std::io::Write::write_all(f, &json).map_err(|e| Error::io(f.path(), e))
            })?;
        }
        None if out.is_json() => {
            return Err(Error::usage(
                "without -o the document goes to standard output, where --message-format json writes its messages",
            )
            .with_hint("give -o OUT.json"));
        }
        None => super::output::write_stdout(&String::from_utf8_lossy(&json)),
    }
    let report = ToJsonReport {
        package: &args.path,
        output: args.output.as_deref(),
        counts,
    };
    out.data("to-json", &report, || {
        if let Some(output) = &args.output {
            out.status(
                "Wrote",
                format!(
                    "{} ({} exports, {} decoded)",
                    output.display(),
                    counts.exports,
                    counts.decoded
                ),
            );
        }
    });
    Ok(())
}

pub(crate) fn run_from_json(args: FromJsonArgs, out: &Output) -> Result<()> {
    let text = std::fs::read(&args.path).map_err(|e| Error::io(&args.path, e))?;
    let mappings = load_mappings(args.mappings.as_deref(), out)?;
    let document =
        AssetDocument::from_json(&text, mappings.as_ref()).map_err(|e| e.in_file(&args.path))?;
    super::convert::check_output_folder(&args.output)?;
    if zenpak::publish::same_file(&args.output, &args.path) {
        return Err(
            Error::usage("the output would overwrite the JSON document").in_file(&args.output)
        );
    }
    let written = document
        .write(mappings.as_ref())
        .map_err(|e| e.in_file(&args.path))?;
    // A bulk file beside the output that the document does not have would
    // be read as this package's.
    for kind in BulkKind::ALL {
        let companion = args.output.with_extension(kind.extension());
        if companion.exists() && !written.companions.iter().any(|(k, _)| *k == kind) {
            out.warning(
                "stale-companion",
                format!(
                    "{} is beside the written package, which has no .{} file: the game would read it with this package",
                    companion.display(),
                    kind.extension()
                ),
            );
        }
    }
    let files = written.write_to(&args.output)?;
    let counts = document.counts();
    let report = FromJsonReport {
        document: &args.path,
        files,
        counts,
    };
    out.data("from-json", &report, || {
        out.status(
            "Wrote",
            format!(
                "{} ({} exports, {} decoded)",
                args.output.display(),
                counts.exports,
                counts.decoded
            ),
        );
    });
    Ok(())
}
