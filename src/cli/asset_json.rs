//! `zenpak to-json PKG.uasset [-o OUT.json]` and `zenpak from-json IN.json
//! -o PKG.uasset`: a cooked package as a JSON document and back
//! (`zenpak::properties::document`). `zenpak to-json SOURCE PACKAGE` and
//! `zenpak to-json --game-dir GAME PACKAGE` read the package from a
//! container, pak or game instead, a Zen one converted to legacy in memory
//! (`zenpak::extract::single`); a Zen package file alone is refused (its
//! imports need its container and the game), naming those forms.

use std::path::{Path, PathBuf};

use zenpak::diagnostic::Diagnostic;
use zenpak::extract::container::ViewSource;
use zenpak::extract::single::{find_package, Lookup, SourcePackages};
use zenpak::extract::ExtractOptions;
use zenpak::legacy::{BulkKind, PackageFiles};
use zenpak::properties::document::{AssetDocument, DocumentCounts};
use zenpak::properties::{PackageSource, SchemaSources};
use zenpak::{EngineVersion, Error, Result};

use super::args::load_mappings;
use super::args::{nearest_manifest, KeyArgs};
use super::Output;

#[derive(Debug, clap::Args)]
#[command(allow_missing_positional = true)]
pub(crate) struct ToJsonArgs {
    /// A `.utoc`, a `.pak` or a game's `Paks` folder holding the package
    /// (as `zenpak get` takes it). Without it (and without --game-dir),
    /// PACKAGE is a package file.
    #[arg(value_name = "SOURCE")]
    pub(crate) source: Option<PathBuf>,
    /// The package: its `.uasset`/`.umap` file (its `.uexp` and bulk files
    /// beside it); in a SOURCE or with --game-dir, its name
    /// (`/Game/Data/DT_Weapons`) or its path as `zenpak list` shows it.
    #[arg(value_name = "PACKAGE")]
    pub(crate) package: PathBuf,
    /// Where to write the JSON (default: standard output).
    #[arg(short, long, value_name = "OUT.json")]
    pub(crate) output: Option<PathBuf>,
    /// Engine version the package was cooked with (default: the nearest
    /// mod.toml's `[game] engine`, else the one the game's files name).
    #[arg(long, value_parser = super::args::engine_parser())]
    pub(crate) engine: Option<EngineVersion>,
    /// Mappings (.usmap) of the game, for unversioned packages (default:
    /// the nearest mod.toml's `[game] mappings`).
    #[arg(long, value_name = "M.usmap")]
    pub(crate) mappings: Option<PathBuf>,
    /// The game's Paks folder, mounted first: with a SOURCE, its containers
    /// resolve the package's imports (global.utoc gives the script
    /// objects); alone, the package is looked for in it.
    #[arg(long, value_name = "DIR", conflicts_with = "game_dir")]
    pub(crate) game: Option<PathBuf>,
    /// The game, as `install` takes it: its install folder or any folder of
    /// it; its `Paks` folder is used as --game uses it.
    #[arg(long, value_name = "DIR")]
    pub(crate) game_dir: Option<PathBuf>,
    /// The game's script objects, for a Zen package: a file (the
    /// ScriptObjects chunk of global.utoc), or a folder of cooked legacy
    /// packages whose /Script/ imports name them (default: the source's
    /// global.utoc).
    #[arg(long, value_name = "FILE|DIR")]
    pub(crate) script_objects: Option<PathBuf>,
    /// Write placeholders for imports of a Zen package that cannot be
    /// resolved instead of failing.
    #[arg(long)]
    pub(crate) allow_unresolved: bool,
    /// A folder of cooked content holding packages that define classes and
    /// structs the package uses (a blueprint parent, a component's class, a
    /// user-defined struct) when the mappings lack them; repeatable. Also
    /// searched: the content folder the package sits in, the nearest
    /// mod.toml's content root and, with --game-dir, the game.
    #[arg(long, value_name = "DIR")]
    pub(crate) schemas: Vec<PathBuf>,
    #[command(flatten)]
    pub(crate) key: KeyArgs,
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
    /// A folder of cooked content holding packages that define classes and
    /// structs the document's data uses (as `to-json --schemas` found
    /// them); repeatable. Also searched: the content folder the output is
    /// written in and the nearest mod.toml's content root.
    #[arg(long, value_name = "DIR")]
    pub(crate) schemas: Vec<PathBuf>,
}

#[derive(serde::Serialize)]
struct ToJsonReport<'a> {
    /// The package file, or the package as named in a source.
    package: &'a Path,
    /// The container or pak (file name) the package was read from.
    #[serde(skip_serializing_if = "Option::is_none")]
    source: Option<&'a str>,
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
    if args.source.is_some() || args.game.is_some() || args.game_dir.is_some() {
        return source_package_to_json(&args, engine, out);
    }
    let sources = schema_sources(&args.schemas, Some(&args.package), None, out)?;
    local_package_to_json(&args, engine, &sources, out)
}

/// `to-json PKG.uasset` (with `sources` for its content schemas).
fn local_package_to_json(
    args: &ToJsonArgs,
    engine: Option<EngineVersion>,
    sources: &SchemaSources,
    out: &Output,
) -> Result<()> {
    if zenpak::sniff::sniff_file(&args.package)? == zenpak::sniff::FileKind::ZenPackage {
        return Err(lone_zen_package(&args.package, engine));
    }
    let files = PackageFiles::load(&args.package)?;
    if let Some(path) = &args.output {
        super::convert::check_output(path, &files, "DT_Weapons.json")?;
    }
    write_document(&files, engine, None, args, sources, out)
}

/// Where the schemas of classes and structs defined in content are looked
/// for: beside `package` (a file), in each `--schemas` folder, in the
/// nearest mod.toml's content root, in `game`.
fn schema_sources<'a>(
    folders: &[PathBuf],
    package: Option<&Path>,
    game: Option<&'a dyn PackageSource>,
    out: &Output,
) -> Result<SchemaSources<'a>> {
    let mut sources = match package {
        Some(path) => SchemaSources::beside(path),
        None => SchemaSources::none(),
    };
    for dir in folders {
        if !dir.is_dir() {
            return Err(
                Error::usage(format!("--schemas {} is not a folder", dir.display()))
                    .in_file(dir)
                    .with_hint("give a folder of cooked content (.uasset/.umap with their .uexp)"),
            );
        }
        sources = sources.with_folder(dir);
    }
    if let Some((manifest, at)) = nearest_manifest() {
        let root = manifest.content_root();
        if root.is_dir() {
            out.verbose_status(
                "Using",
                format!("schemas from {} ({})", root.display(), at.display()),
            );
            sources = sources.with_folder(root);
        }
    }
    if let Some(game) = game {
        sources = sources.with_game(game);
    }
    Ok(sources)
}

/// A Zen package file alone cannot be read: its imports are resolved
/// through its container's packages and the game's script objects. The
/// error names the forms that give them, with the package's own name.
fn lone_zen_package(path: &Path, engine: Option<EngineVersion>) -> Error {
    let name = engine
        .and_then(|engine| {
            let data = std::fs::read(path).ok()?;
            zenpak::zen::ZenPackage::read(&data, engine).ok()
        })
        .map_or_else(|| "<package name>".to_string(), |p| p.package_name());
    Error::usage(
        "this is a Zen package (as a container stores it): its imports are resolved through its container and the game's script objects, which a lone file does not carry",
    )
    .in_file(path)
    .with_hint(format!(
        "name the package in its container or game instead: `zenpak to-json CONTAINER.utoc {name}` (add `--game-dir GAME` when it imports from the game), or `zenpak to-json --game-dir GAME {name}`"
    ))
}

/// What to do when the engine is not known.
const ENGINE_HINT: &str =
    "pass --engine (e.g. --engine 5.6), or run inside a mod whose mod.toml sets `[game] engine`";

/// `to-json SOURCE PACKAGE`, `to-json --game-dir GAME PACKAGE`: the package
/// found in the source (the copy the game loads), converted to legacy in
/// memory when it is a Zen package. `to-json --game-dir GAME PKG.uasset`
/// (a package file, no SOURCE): the file, with the game searched for the
/// schemas it needs. Either way the source's packages give schemas.
fn source_package_to_json(
    args: &ToJsonArgs,
    engine: Option<EngineVersion>,
    out: &Output,
) -> Result<()> {
    let keys = args.key.keys()?;
    let paks = super::args::game_paks(out, args.game.as_deref(), args.game_dir.as_deref())?;
    let Some(place) = args.source.as_ref().or(paks.as_ref()) else {
        return Err(Error::usage(
            "name a SOURCE (a .utoc, .pak or Paks folder) or --game-dir",
        ));
    };
    let source = match &args.source {
        Some(named) => ViewSource::open(std::slice::from_ref(named), paks.as_deref(), &keys)?,
        None => ViewSource::open_game(place, &keys)?,
    };
    out.diagnostics(&source.view().diagnostics);
    // Without --engine or a mod.toml: the release the files allow, when one.
    let releases = match engine {
        Some(_) => Vec::new(),
        None => zenpak::game::facts::allowed_releases(source.view(), paks.as_deref()),
    };
    let engine = engine.or_else(|| {
        let [only] = releases[..] else {
            return None;
        };
        out.verbose_status(
            "Using",
            format!(
                "UE {only}, the one release the files of {} allow",
                place.display()
            ),
        );
        Some(only)
    });
    // What to do about an unknown engine (the errors that need one leave it to here).
    let engine_hint = |e: Error| match zenpak::game::doctor::range_text(&releases) {
        _ if engine.is_some() || !e.is_usage() => e,
        Some(range) => e.with_hint(format!(
            "the files of {} allow UE {range}: {ENGINE_HINT}",
            place.display()
        )),
        None => e.with_hint(ENGINE_HINT),
    };
    let name = args.package.to_str().ok_or_else(|| {
        Error::usage(format!(
            "the package `{}` is not valid UTF-8: name it as `zenpak list` shows it",
            args.package.display()
        ))
    })?;
    let script_objects = match (&args.script_objects, engine) {
        (Some(path), Some(engine)) => Some(super::extract::load_script_objects(path, engine)?),
        (Some(_), None) => {
            return Err(engine_hint(Error::usage(
                "which engine wrote these packages? --script-objects is read with it",
            )))
        }
        (None, _) => None,
    };
    let lookup = Lookup {
        package: name,
        engine,
        script_objects: script_objects.as_ref(),
        options: ExtractOptions {
            allow_unresolved: args.allow_unresolved,
            verify: false,
        },
    };
    let game_packages = SourcePackages {
        source: &source,
        lookup,
    };
    if args.source.is_none() && is_package_file(&args.package) {
        let sources = schema_sources(
            &args.schemas,
            Some(&args.package),
            Some(&game_packages),
            out,
        )?;
        local_package_to_json(args, engine, &sources, out)?;
        return match source.view().unreadable_error() {
            Some(e) => Err(e),
            None => Ok(()),
        };
    }
    let found = find_package(&source, &lookup).map_err(engine_hint)?.ok_or_else(|| {
        let within = if args.source.is_some() && paks.is_some() {
            " (the game given only resolves its imports)"
        } else {
            ""
        };
        Error::invalid(format!("no package `{name}` in {}{within}", place.display()))
            .in_file(place)
            .with_hint(format!(
                "`zenpak list {}` shows its files; name a package by its name (`/Game/Data/DT_Weapons`) or by its path as listed",
                place.display()
            ))
    })?;
    if let Some(report) = &found.report {
        if let Some(d) = super::extract::unresolved_diagnostic(out, name, true, &report.unresolved)
        {
            out.diagnostic(&d);
        }
        for warning in &report.warnings {
            out.diagnostic(&warning.clone().with_file(&found.files.path));
        }
    }
    if let Some(path) = &args.output {
        super::convert::check_output_folder(path)?;
    }
    let sources = schema_sources(&args.schemas, None, Some(&game_packages), out)?;
    write_document(
        &found.files,
        engine,
        Some(&found.source),
        args,
        &sources,
        out,
    )?;
    match source.view().unreadable_error() {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Reads `files` as a document and writes it (to `-o` or standard output);
/// `source`: the container or pak it was read from.
fn write_document(
    files: &PackageFiles,
    engine: Option<EngineVersion>,
    source: Option<&str>,
    args: &ToJsonArgs,
    sources: &SchemaSources,
    out: &Output,
) -> Result<()> {
    let package = files.read_package(engine).map_err(|e| match engine {
        Some(_) => e,
        None => e.with_hint(ENGINE_HINT),
    })?;
    if let Some(warning) = &package.version_warning {
        out.diagnostic(&warning.clone().with_file(&files.path));
    }
    let mappings = load_mappings(args.mappings.as_deref(), out)?;
    if mappings.is_none() && package.summary.unversioned_properties() {
        out.warning(
            "no-mappings",
            format!(
                "{} has unversioned properties and no mappings were given: every export's data is kept as bytes",
                files.path.display()
            ),
        );
    }
    let document = AssetDocument::read(files, &package, mappings.as_ref(), sources)
        .map_err(|e| e.in_file(&files.path))?;
    missing_schemas(sources, &files.path, out);
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
        out.diagnostic(&diagnostic.with_file(&files.path));
    }
    for (index, export, reason) in document.undecoded_tables() {
        out.diagnostic(
            &Diagnostic::warning(
                "table-not-decoded",
                format!("export {index} ({}): {reason}", export.path),
            )
            .with_file(&files.path)
            .with_hint("the document keeps the bytes, so it still writes the package; give the game's own mappings to edit them as text"),
        );
    }
    match &args.output {
        Some(path) => {
            zenpak::publish::write_file(path, |f| {
                use std::io::Write;
                let mut writer = std::io::BufWriter::with_capacity(1 << 20, &mut *f);
                document
                    .write_json(&mut writer)
                    .and_then(|()| writer.flush().map_err(serde_json::Error::io))
                    .map_err(|e| match e.io_error_kind() {
                        Some(_) => Error::io(path, e.into()),
                        None => Error::json(e),
                    })
            })?;
        }
        None if out.is_json() => {
            return Err(Error::usage(
                "without -o the document goes to standard output, where --message-format json writes its messages",
            )
            .with_hint("give -o OUT.json"));
        }
        None => super::output::write_stdout(&String::from_utf8_lossy(&document.to_json()?)),
    }
    // The document is a tree of many small allocations, freed when the
    // process ends: returning them one by one would take as long as
    // writing the text did.
    std::mem::forget(document);
    let report = ToJsonReport {
        package: &args.package,
        source,
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

/// Whether `path` is a package file (`.uasset`/`.umap` on disk), not a
/// package's name in a source.
fn is_package_file(path: &Path) -> bool {
    path.is_file()
        && path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("uasset") || e.eq_ignore_ascii_case("umap"))
}

/// A warning for each schema looked for in content and not read: the
/// exports that need it stay bytes (or, in from-json, do not type).
fn missing_schemas(sources: &SchemaSources, file: &Path, out: &Output) {
    for missing in sources.missing() {
        out.diagnostic(
            &Diagnostic::warning(
                "schema-not-found",
                format!(
                    "the schema of `{}` (defined in {}) was not read: {}",
                    missing.name, missing.package, missing.reason
                ),
            )
            .with_file(file)
            .with_hint(format!(
                "give a folder of cooked content holding {} with --schemas DIR, or the game with --game-dir; until then what needs it is kept as bytes",
                missing.package
            )),
        );
    }
}

pub(crate) fn run_from_json(args: FromJsonArgs, out: &Output) -> Result<()> {
    let text = std::fs::read(&args.path).map_err(|e| Error::io(&args.path, e))?;
    let mappings = load_mappings(args.mappings.as_deref(), out)?;
    let sources = schema_sources(&args.schemas, Some(&args.output), None, out)?;
    let document = AssetDocument::from_json(&text, mappings.as_ref(), &sources)
        .map_err(|e| e.in_file(&args.path))?;
    super::convert::check_output_folder(&args.output)?;
    if zenpak::publish::same_file(&args.output, &args.path) {
        return Err(
            Error::usage("the output would overwrite the JSON document").in_file(&args.output)
        );
    }
    let written = document
        .write(mappings.as_ref(), &sources)
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
    // Freed when the process ends (see `write_document`).
    std::mem::forget(document);
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
