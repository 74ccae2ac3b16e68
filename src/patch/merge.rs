//! `zenpak merge MOD… --game-dir GAME -o OUT_DIR`: several built mods made
//! into one mod whose assets carry every mod's changes.
//!
//! Each mod is read back to legacy packages (`extract`, with the game
//! mounted for its imports) into a staging folder. A
//! package or file only one mod has is taken as it is. One several mods
//! have is compared with the game's copy ([`super::changes`]): when their
//! changes do not overlap, they are applied together to the game's copy
//! (the way a patch is applied); when they do, the merge stops and lists
//! the overlaps, or with `later_wins` the later mod in mount order wins
//! each (listed). A package the game does not have, or a file that is not
//! a package, that several mods provide with different bytes is an
//! overlap as a whole. The result is written as a mod repository
//! (`OUT_DIR/mod.toml`, `OUT_DIR/Cooked/…`) and built
//! (`OUT_DIR/target/<name>_P.utoc/.ucas/.pak`), so it can be rebuilt or
//! patched further. All of it is made in a temporary folder beside
//! `OUT_DIR` (`publish::temporary::TempFolder`) and renamed into place once
//! built: a failure or an interrupt leaves nothing.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::build::{BuildOptions, BuildSummary, Reporter};
use crate::error::{Error, Result};
use crate::extract::container::{extract, ExtractRequest, ViewSource};
use crate::extract::ExtractOptions;
use crate::legacy::PackageFiles;
use crate::manifest::Manifest;
use crate::mappings::Mappings;
use crate::pak::crypto::KeyRing;
use crate::properties::SchemaSources;
use crate::version::EngineVersion;

use super::base::Game;
use super::changes::{self, AssetChanges, Overlap, WHOLE_ASSET};

/// What to merge, and where.
pub struct MergeRequest<'a> {
    /// The built mods (`.pak`/`.utoc`, or folders of them).
    pub mods: &'a [PathBuf],
    /// The game's `Paks/` folder and its project folder's name.
    pub paks: &'a Path,
    pub project: &'a str,
    pub keys: &'a KeyRing,
    pub engine: EngineVersion,
    pub mappings: Option<&'a Mappings>,
    /// The merged mod's folder (made; must not hold anything yet).
    pub output: &'a Path,
    /// The merged mod's name (`[mod] name`).
    pub name: &'a str,
    /// Overlaps are resolved by mount order (the later mod wins) instead of failing.
    pub later_wins: bool,
}

/// A file or package several mods provide, taken whole from one of them.
#[derive(Debug, Clone, Serialize)]
pub struct Taken {
    /// Its path in the view (`TestGame/Content/X.uasset`).
    pub path: String,
    /// The mod whose copy was taken.
    pub from: String,
    /// Why: `identical` (every copy is the same), `later-wins` (an overlap
    /// resolved by mount order).
    pub why: &'static str,
    /// The mods that provide it, in mount order.
    pub providers: Vec<String>,
}

/// What a merge found and made.
#[derive(Debug, Serialize)]
pub struct MergeReport {
    /// The mods, in mount order (the last wins).
    pub mods: Vec<String>,
    /// Assets several mods change, compared with the game's copy.
    pub assets: Vec<AssetChanges>,
    /// Files and packages taken whole from one of several mods.
    pub taken: Vec<Taken>,
    /// Every overlap (with the asset's path), resolved or not.
    pub overlaps: Vec<(String, Overlap)>,
    /// The merged mod's manifest and what its build did (`None`: the
    /// merge stopped at overlaps, nothing written).
    pub manifest: Option<PathBuf>,
    pub build: Option<BuildSummary>,
}

/// Refuses an output that exists and is not an empty folder.
fn check_output(output: &Path) -> Result<()> {
    if std::fs::symlink_metadata(output).is_err() {
        return Ok(());
    }
    let empty = output.is_dir()
        && std::fs::read_dir(output)
            .map_err(|e| Error::io(output, e))?
            .next()
            .is_none();
    if empty {
        return Ok(());
    }
    Err(Error::usage(format!(
        "the output `{}` exists and is not an empty folder",
        output.display()
    ))
    .with_hint("name a new folder with -o (merge writes a whole mod repository there)"))
}

/// One mod's files, read back to legacy, by lower-cased view path.
struct ModFiles {
    name: String,
    files: BTreeMap<String, (String, PathBuf)>,
}

/// The companions' extensions of a package (`X.uexp` of `X.uasset`).
const COMPANIONS: [&str; 4] = ["m.ubulk", "uexp", "ubulk", "uptnl"];

fn is_header(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    lower.ends_with(".uasset") || lower.ends_with(".umap")
}

/// The package stem a file belongs to (`x` of `x.uexp`), if it is a companion.
fn companion_stem(lower: &str) -> Option<&str> {
    COMPANIONS
        .iter()
        .find_map(|ext| lower.strip_suffix(&format!(".{ext}")[..]))
}

/// Extracts mod `index` (`path`) into `staging/<index>`.
fn read_mod(request: &MergeRequest, index: usize, path: &Path, staging: &Path) -> Result<ModFiles> {
    let source = ViewSource::open_mod_on_game(path, request.paks, request.keys)?;
    if let Some(error) = source.view().unreadable_error() {
        return Err(error);
    }
    let name = path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let out = staging.join(index.to_string());
    let extract_request = ExtractRequest {
        engine: request.engine,
        output: out.clone(),
        filters: Vec::new(),
        with_dependencies: false,
        force: false,
        options: ExtractOptions {
            allow_unresolved: false,
            verify: false,
        },
        output_budget: crate::limits::OutputBudget::from_env(None),
    };
    let summary = extract(&source, &extract_request, None, &mut |_| {})?;
    if let Some(error) = summary.failure_error() {
        return Err(error.in_file(path));
    }
    let mut files = BTreeMap::new();
    for entry in walkdir::WalkDir::new(&out).sort_by_file_name() {
        let entry =
            entry.map_err(|e| Error::invalid(format!("cannot list {}: {e}", out.display())))?;
        if !entry.file_type().is_file() {
            continue;
        }
        let relative = entry
            .path()
            .strip_prefix(&out)
            .map_err(|_| Error::internal("a walked file outside its folder"))?
            .to_string_lossy()
            .replace('\\', "/");
        files.insert(relative.to_ascii_lowercase(), (relative, entry.into_path()));
    }
    Ok(ModFiles { name, files })
}

/// `mods` in the engine's mount order once installed in `~mods` (the last
/// wins): by the read order of their sources, then their mount sequence.
fn mount_order<'a>(request: &MergeRequest<'a>) -> Result<Vec<&'a PathBuf>> {
    let (view, named) = crate::game::GameView::open_game(request.paks, request.mods, request.keys)?;
    if let Some(error) = view.unreadable_error() {
        return Err(error);
    }
    let sources = view.sources();
    let mut order: Vec<((u32, usize), &PathBuf)> = request
        .mods
        .iter()
        .zip(&named)
        .map(|(path, mounted)| {
            let key = mounted
                .iter()
                .map(|&s| (sources[s].order, sources[s].sequence))
                .max()
                .unwrap_or_default();
            (key, path)
        })
        .collect();
    order.sort_by_key(|(key, _)| *key);
    Ok(order.into_iter().map(|(_, path)| path).collect())
}

/// What becomes of a package several mods provide with different bytes.
enum Outcome {
    /// Their changes applied together to the game's copy.
    Merged(crate::properties::document::WrittenPackage),
    /// One mod's copy (the index into the mods), the only one that changes anything.
    Take(usize),
    /// An overlap (listed in the report): the later mod's copy, with `later_wins`.
    Overlap,
}

/// Merges `request.mods` (see the module doc).
pub fn merge(request: &MergeRequest, reporter: &dyn Reporter) -> Result<MergeReport> {
    if request.mods.len() < 2 {
        return Err(Error::usage("merge takes two mods or more")
            .with_hint("name each built mod (`.pak` or `.utoc`) to merge"));
    }
    let order = mount_order(request)?;
    check_output(request.output)?;
    // Everything is made in a temporary folder beside the output, renamed
    // into place once built: a failure or Ctrl-C leaves nothing.
    let folder = crate::publish::temporary::TempFolder::create(request.output)?;
    let root = &folder.path().to_path_buf();
    let staging = root.join(".zenpak-merge");
    let mut mods = Vec::with_capacity(order.len());
    for (i, path) in order.into_iter().enumerate() {
        mods.push(read_mod(request, i, path, &staging)?);
    }
    let game = Game::open(request.paks, request.keys)?;
    let content = root.join("Cooked");
    let mut report = MergeReport {
        mods: mods.iter().map(|m| m.name.clone()).collect(),
        assets: Vec::new(),
        taken: Vec::new(),
        overlaps: Vec::new(),
        manifest: None,
        build: None,
    };
    // Every file by path: the mods that have it, in mount order.
    let mut by_path: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, m) in mods.iter().enumerate() {
        for key in m.files.keys() {
            by_path.entry(key).or_default().push(i);
        }
    }
    for (key, providers) in &by_path {
        if companion_stem(key).is_some_and(|stem| {
            ["uasset", "umap"]
                .iter()
                .any(|h| by_path.contains_key(&format!("{stem}.{h}")[..]))
        }) {
            continue; // moved with its package
        }
        let place = |i: usize| -> Result<()> { place_package(&mods[i], key, &content) };
        if providers.len() == 1 {
            place(providers[0])?;
            continue;
        }
        if identical(&mods, key, providers)? {
            place(*providers.last().unwrap_or(&0))?;
            report.taken.push(taken(&mods, key, providers, "identical"));
            continue;
        }
        let outcome = match is_header(key) {
            true => merge_package(request, &game, &mods, key, providers, &mut report)?,
            false => Outcome::Overlap,
        };
        match outcome {
            Outcome::Merged(files) => {
                write_package(&content, &mods[providers[0]].files[*key].0, &files)?
            }
            Outcome::Take(i) => place(i)?,
            Outcome::Overlap => {
                let path = mods[providers[0]].files[*key].0.clone();
                if !report.overlaps.iter().any(|(p, _)| *p == path) {
                    let names: Vec<String> =
                        providers.iter().map(|&i| mods[i].name.clone()).collect();
                    report.overlaps.push((
                        path,
                        Overlap {
                            path: WHOLE_ASSET.to_string(),
                            changes: vec!["whole".to_string(); names.len()],
                            providers: names,
                        },
                    ));
                }
                place(*providers.last().unwrap_or(&0))?;
                report
                    .taken
                    .push(taken(&mods, key, providers, "later-wins"));
            }
        }
    }
    if !report.overlaps.is_empty() && !request.later_wins {
        return Ok(report); // `folder` removes everything
    }
    remove_staging(&staging)?;
    let manifest = Manifest::load(&write_manifest(request, &mods, root)?)?;
    let options = BuildOptions {
        release: true,
        ..Default::default()
    };
    let mut build = crate::build::build(&manifest, &options, reporter)?;
    folder.publish(request.output)?;
    // The outputs where they are now.
    for artifact in &mut build.artifacts {
        if let Ok(relative) = artifact.path.strip_prefix(root) {
            artifact.path = request.output.join(relative);
        }
    }
    report.build = Some(build);
    report.manifest = Some(request.output.join("mod.toml"));
    Ok(report)
}

fn taken(mods: &[ModFiles], key: &str, providers: &[usize], why: &'static str) -> Taken {
    let last = *providers.last().unwrap_or(&0);
    Taken {
        path: mods[last].files[key].0.clone(),
        from: mods[last].name.clone(),
        why,
        providers: providers.iter().map(|&i| mods[i].name.clone()).collect(),
    }
}

/// The files of the package (or the file) `key` of `m`: the header (or
/// file) first, then its companions.
fn package_files<'a>(m: &'a ModFiles, key: &str) -> Vec<&'a (String, PathBuf)> {
    let mut files: Vec<&(String, PathBuf)> = m.files.get(key).into_iter().collect();
    if is_header(key) {
        let stem = &key[..key.rfind('.').unwrap_or(key.len())];
        for ext in COMPANIONS {
            files.extend(m.files.get(&format!("{stem}.{ext}")));
        }
    }
    files
}

/// Whether every provider's copy of `key` (with its companions) has the same bytes.
fn identical(mods: &[ModFiles], key: &str, providers: &[usize]) -> Result<bool> {
    let read_all = |i: usize| -> Result<Vec<(String, Vec<u8>)>> {
        package_files(&mods[i], key)
            .into_iter()
            .map(|(rel, path)| {
                let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
                Ok((rel.to_ascii_lowercase(), bytes))
            })
            .collect()
    };
    let first = read_all(providers[0])?;
    for &i in &providers[1..] {
        if read_all(i)? != first {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Moves the package (or file) `key` of `m` into the merged content.
fn place_package(m: &ModFiles, key: &str, content: &Path) -> Result<()> {
    for (relative, path) in package_files(m, key) {
        crate::mount::validate_relative_path(relative)?;
        let target = content.join(relative);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
        }
        std::fs::rename(path, &target).map_err(|e| Error::io(&target, e))?;
    }
    Ok(())
}

/// Writes a merged package's files at `relative` (its header's path).
fn write_package(
    content: &Path,
    relative: &str,
    files: &crate::properties::document::WrittenPackage,
) -> Result<()> {
    crate::mount::validate_relative_path(relative)?;
    let header = content.join(relative);
    if let Some(parent) = header.parent() {
        std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
    }
    let write =
        |path: &Path, bytes: &[u8]| std::fs::write(path, bytes).map_err(|e| Error::io(path, e));
    write(&header, &files.header)?;
    write(&header.with_extension("uexp"), &files.uexp)?;
    for (kind, bytes) in &files.companions {
        write(&header.with_extension(kind.extension()), bytes)?;
    }
    Ok(())
}

/// The package `key` several mods change, compared with the game's copy
/// (the changes are recorded in `report`).
fn merge_package(
    request: &MergeRequest,
    game: &Game,
    mods: &[ModFiles],
    key: &str,
    providers: &[usize],
    report: &mut MergeReport,
) -> Result<Outcome> {
    let relative = &mods[providers[0]].files[key].0;
    let Some(base) = game.package_of(request.engine, relative)? else {
        return Ok(Outcome::Overlap); // new in several mods
    };
    let sources = SchemaSources::none();
    let text = |files: &PackageFiles| {
        super::document_text(files, (request.mappings, &sources), request.engine)
    };
    let base_text = text(&base.files)?;
    let mut documents = Vec::with_capacity(providers.len());
    let mut known_imports = Vec::new();
    for &i in providers {
        let (_, path) = &mods[i].files[key];
        let files = PackageFiles::load(path)?;
        let document = text(&files)?;
        known_imports.extend(imports_of(&document)?);
        documents.push((mods[i].name.clone(), document));
    }
    let changes = changes::compare(relative, &base_text, &documents);
    let overlapping = !changes.overlaps.is_empty();
    for overlap in &changes.overlaps {
        report.overlaps.push((relative.clone(), overlap.clone()));
    }
    let operations = changes::merged_operations(&changes);
    let last_changing = changes.changes.iter().rposition(|c| c.count() > 0);
    report.assets.push(changes);
    match (operations, overlapping) {
        (_, true) if !request.later_wins => Ok(Outcome::Overlap),
        (None, true) => Ok(Outcome::Overlap),
        (None, false) => Ok(Outcome::Take(providers[last_changing.unwrap_or(0)])),
        (Some(operations), _) => {
            let refs: Vec<&super::file::Operation> = operations.iter().collect();
            let typing = super::Typing {
                mappings: request.mappings,
                sources: &sources,
                engine: request.engine,
                known_imports: &known_imports,
            };
            super::apply_operations_to(&base.files, &refs, &typing)
                .map(Outcome::Merged)
                .map_err(|e| e.in_file(relative.as_str()))
        }
    }
}

/// The imports (path, class) a document lists.
fn imports_of(document: &str) -> Result<Vec<(String, String)>> {
    let mut doc = super::node::Node::parse(document)?;
    let mut imports = Vec::new();
    for item in doc
        .get_mut("imports")
        .and_then(super::node::Node::items_mut)
        .into_iter()
        .flatten()
    {
        let value = item.to_value()?;
        if let (Some(path), Some(class)) = (value["path"].as_str(), value["class"].as_str()) {
            imports.push((path.to_string(), class.to_string()));
        }
    }
    Ok(imports)
}

fn remove_staging(staging: &Path) -> Result<()> {
    match std::fs::remove_dir_all(staging) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(Error::io(staging, e)),
        _ => Ok(()),
    }
}

/// The merged mod's `mod.toml`.
fn write_manifest(request: &MergeRequest, mods: &[ModFiles], root: &Path) -> Result<PathBuf> {
    let string = |s: &str| toml::Value::String(s.to_string()).to_string();
    let names: Vec<&str> = mods.iter().map(|m| m.name.as_str()).collect();
    let text = format!(
        "# Written by `zenpak merge` from {}.\n[mod]\nname = {}\nversion = \"1.0.0\"\ndescription = {}\n\n[game]\nengine = \"{}\"\nproject = {}\n\n[content]\nroot = \"Cooked\"\n",
        names.join(", "),
        string(request.name),
        string(&format!("{} merged", names.join(" + "))),
        request.engine,
        string(request.project),
    );
    let path = root.join("mod.toml");
    std::fs::write(&path, text).map_err(|e| Error::io(&path, e))?;
    Ok(path)
}
