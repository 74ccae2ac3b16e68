//! Mods as text: patch files (`patches/**/*.toml`, [`file`](mod@file)) that change
//! the game's assets, applied at build time to the game's current copy
//! ([`base`]) so that the built mod carries the game's latest data plus
//! the patch, instead of a binary copy that reverts every update.
//!
//! How a patch is applied: the base package is read into its document
//! ([`crate::properties::document::AssetDocument`], what `zenpak to-json` writes),
//! each operation changes the document's JSON where its path leads
//! ([`apply`], through [`node`], which parses only what a path opens), and
//! the document is typed back through the game's mappings and written
//! ([`AssetDocument::write`]): an unchanged document gives the base's
//! bytes, a patched one differs by what the patch implies. The build then
//! converts the patched packages with the mod's other content
//! ([`crate::build::BuildOptions::staged`]).
//!
//! Patch files apply in file-path order (`patches/a.toml` before
//! `patches/b/c.toml`), each file's operations in the order they are
//! written per kind. Two files that set one path of one asset to different
//! values are an error naming both, or with `[patches] later-wins = true`
//! a warning (the later file wins). A folder `base/` inside the patches
//! folder holds vendored bases (cooked files, not patch files).

pub mod apply;
pub mod base;
pub mod changes;
pub mod diff;
pub mod file;
pub mod merge;
pub mod node;
pub mod path;
pub mod vendor;

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::diagnostic::Diagnostic;
use crate::error::{Error, Result};
use crate::legacy::PackageFiles;
use crate::manifest::Manifest;
use crate::mappings::Mappings;
use crate::properties::document::{AssetDocument, WrittenPackage};
use crate::properties::SchemaSources;

use base::{Base, Game};
use file::{Change, Location, Patch, Target};
use node::Node;

/// The patch files of a mod, read and parsed.
pub struct PatchSet {
    /// Every `[[patch]]` table, in file-path order.
    pub patches: Vec<Patch>,
    /// The files read, in that order.
    pub files: Vec<PathBuf>,
    later_wins: bool,
}

/// The largest patch file read (a patch is a few lines of text).
const MAX_PATCH_FILE: u64 = 16 << 20;

impl PatchSet {
    /// Reads every `*.toml` below the manifest's patches folder (none when
    /// the folder does not exist). Links are not followed out of it.
    pub fn load(manifest: &Manifest) -> Result<PatchSet> {
        let dir = manifest.patches_dir();
        let mut files = Vec::new();
        if std::fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir()) {
            let walk = walkdir::WalkDir::new(&dir)
                .sort_by_file_name()
                .into_iter()
                .filter_entry(|e| {
                    !(e.depth() == 1 && e.file_type().is_dir() && e.file_name() == "base")
                });
            for entry in walk {
                let entry = entry.map_err(|e| {
                    Error::invalid(format!("cannot list the patches folder: {e}")).in_file(&dir)
                })?;
                let is_toml = entry
                    .path()
                    .extension()
                    .is_some_and(|e| e.eq_ignore_ascii_case("toml"));
                if !is_toml {
                    continue;
                }
                if !entry.file_type().is_file() {
                    return Err(Error::usage(
                        "a patch file must be a regular file, not a link or a folder",
                    )
                    .in_file(entry.path())
                    .with_hint("copy the patch into the patches folder"));
                }
                files.push(entry.into_path());
            }
        }
        let mut patches = Vec::new();
        for path in &files {
            let meta = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
            if meta.len() > MAX_PATCH_FILE {
                return Err(Error::usage(format!(
                    "a patch file of {} bytes is more than the {} MiB one may hold",
                    meta.len(),
                    MAX_PATCH_FILE >> 20
                ))
                .in_file(path));
            }
            let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
            patches.extend(file::parse(&text, path)?);
        }
        Ok(PatchSet {
            patches,
            files,
            later_wins: manifest.patches.later_wins,
        })
    }

    pub fn is_empty(&self) -> bool {
        self.patches.is_empty()
    }

    /// Whether a patch names a game package (it needs the game, or a vendored base).
    pub fn needs_game(&self) -> bool {
        self.patches
            .iter()
            .any(|p| matches!(p.target, Target::Asset(_)))
    }
}

/// A patched package, ready for the build.
pub struct PatchedPackage {
    /// The package name (`/Game/Data/DT_Weapons`) or base file the patches name.
    pub asset: String,
    /// The header's path in the container.
    pub relative_path: String,
    pub files: WrittenPackage,
    /// Where the base was read from.
    pub base: String,
    /// How many operations were applied.
    pub operations: usize,
}

/// What [`apply_all`] made.
pub struct Applied {
    pub packages: Vec<PatchedPackage>,
    pub diagnostics: Vec<Diagnostic>,
}

/// The key that groups patches of one asset.
fn target_key(target: &Target) -> String {
    match target {
        Target::Asset(name) => name.to_lowercase(),
        Target::Base {
            asset: Some(name), ..
        } => name.to_lowercase(),
        Target::Base { path, .. } => format!("file:{}", path.display()),
    }
}

/// The patches of `set` by asset, in asset order.
fn groups(set: &PatchSet) -> BTreeMap<String, Vec<&Patch>> {
    let mut groups: BTreeMap<String, Vec<&Patch>> = BTreeMap::new();
    for patch in &set.patches {
        groups
            .entry(target_key(&patch.target))
            .or_default()
            .push(patch);
    }
    groups
}

/// Where the patches of one asset find their base and schemas.
struct Inputs<'a> {
    manifest: &'a Manifest,
    game: Option<&'a Game>,
    mappings: Option<&'a Mappings>,
    lock: &'a vendor::Lock,
}

/// Applies `patches` (all of one asset) to their base; the warnings
/// (an outdated vendored base, bases that differ) go to `diagnostics`.
fn apply_group(
    inputs: &Inputs,
    patches: &[&Patch],
    diagnostics: &mut Vec<Diagnostic>,
) -> Result<PatchedPackage> {
    let manifest = inputs.manifest;
    let first = patches[0];
    let base = load_base(
        manifest,
        &first.target,
        &first.at,
        inputs.game,
        inputs.lock,
        diagnostics,
    )?;
    let asset = base.package.clone();
    // Schemas of content (blueprint parents, user-defined structs):
    // beside a repository base, in the mod's content, in the game.
    let game_packages = inputs.game.map(|g| g.schema_packages(manifest));
    let mut sources = match &first.target {
        Target::Base { .. } => SchemaSources::beside(&base.files.path),
        Target::Asset(_) => SchemaSources::none(),
    }
    .with_folder(manifest.content_root());
    if let Some(packages) = &game_packages {
        sources = sources.with_game(packages);
    }
    let package = apply_to_base(
        &base,
        patches,
        (inputs.mappings, &sources),
        &asset,
        manifest.game.engine,
    )?;
    if patches.iter().any(|p| p.target != first.target) {
        diagnostics.push(
            Diagnostic::warning(
                "patch-bases-differ",
                format!(
                    "patches of `{asset}` name different bases; all apply to the first one's ({})",
                    base.origin
                ),
            )
            .with_file(first.at.file.as_path()),
        );
    }
    Ok(package)
}

/// Applies every patch of `set` to its base: a repository file, or the
/// game's package from `game` (else its vendored copy; a patch on a game
/// package with neither is a usage error saying how to give one).
pub fn apply_all(
    manifest: &Manifest,
    set: &PatchSet,
    game: Option<&Game>,
    mappings: Option<&Mappings>,
) -> Result<Applied> {
    let mut diagnostics = conflicts(set)?;
    let lock = vendor::Lock::load(manifest)?;
    let inputs = Inputs {
        manifest,
        game,
        mappings,
        lock: &lock,
    };
    let groups = groups(set);
    let mut packages: Vec<PatchedPackage> = Vec::with_capacity(groups.len());
    for patches in groups.values() {
        let package = apply_group(&inputs, patches, &mut diagnostics)?;
        if let Some(other) = packages
            .iter()
            .find(|p| p.relative_path.eq_ignore_ascii_case(&package.relative_path))
        {
            return Err(patches[0].at.error(format!(
                "these patches and those of `{}` both make `{}`",
                other.asset, package.relative_path
            ))
            .with_hint("name the asset the same way in every patch of it (`asset = \"/Game/…\"`, with `base` when the base is a file)"));
        }
        packages.push(package);
    }
    Ok(Applied {
        packages,
        diagnostics,
    })
}

/// How the patches of one asset fare against the game (`check --game-dir`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PatchState {
    /// They apply to the base as vendored (or there is no vendored base).
    Applies,
    /// They apply, to a game copy that differs from the vendored base.
    AppliesWithDrift,
    /// They do not apply: the error says why.
    Broken,
}

/// One asset's patches, checked.
#[derive(Debug, Clone, serde::Serialize)]
pub struct PatchCheck {
    /// The asset as the patches name it (`/Game/Data/DT_Weapons`, or the base file).
    pub asset: String,
    pub state: PatchState,
    /// How many operations the asset's patches hold.
    pub operations: usize,
    /// Why they are broken, or what drifted (as diagnostics).
    #[serde(skip)]
    pub diagnostics: Vec<Diagnostic>,
}

/// Applies each asset's patches on its own, writing nothing, and says how
/// each fares; an error in one asset's patches does not stop the others.
pub fn check_all(
    manifest: &Manifest,
    set: &PatchSet,
    game: Option<&Game>,
    mappings: Option<&Mappings>,
) -> Result<Vec<PatchCheck>> {
    let lock = vendor::Lock::load(manifest)?;
    let inputs = Inputs {
        manifest,
        game,
        mappings,
        lock: &lock,
    };
    let mut checks = Vec::new();
    for patches in groups(set).values() {
        let mut diagnostics = Vec::new();
        let result = apply_group(&inputs, patches, &mut diagnostics);
        let state = match &result {
            Err(e) => {
                diagnostics.extend(Diagnostic::from_error(e));
                PatchState::Broken
            }
            Ok(_) if diagnostics.iter().any(|d| d.code == "patch-base-outdated") => {
                PatchState::AppliesWithDrift
            }
            Ok(_) => PatchState::Applies,
        };
        checks.push(PatchCheck {
            asset: match (&result, &patches[0].target) {
                (Ok(package), _) => package.asset.clone(),
                (
                    Err(_),
                    Target::Asset(name)
                    | Target::Base {
                        asset: Some(name), ..
                    },
                ) => name.clone(),
                (Err(_), Target::Base { path, .. }) => path.display().to_string(),
            },
            state,
            operations: patches.iter().map(|p| p.operations.len()).sum(),
            diagnostics,
        });
    }
    Ok(checks)
}

/// The base of `target`: a repository file; or the game's copy (warning
/// when it differs from the vendored one), else the vendored copy.
fn load_base(
    manifest: &Manifest,
    target: &Target,
    at: &Location,
    game: Option<&Game>,
    lock: &vendor::Lock,
    diagnostics: &mut Vec<Diagnostic>,
) -> Result<Base> {
    let here = |e: Error| e.in_file(at.file.as_path()).at_line(at.line, at.column);
    let name = match target {
        Target::Base { path, asset } => {
            return base::repository_base(manifest, path, asset.as_deref()).map_err(here)
        }
        Target::Asset(name) => name,
    };
    let Some(game) = game else {
        return vendor::vendored(manifest, lock, name)?.ok_or_else(|| {
            at.error(format!("the patch of `{name}` needs the game's copy of it, and no game was given"))
                .with_hint("build with `--game-dir GAME` (or set ZENPAK_GAME_DIR); for a build without the game (CI), vendor the bases once with `zenpak patch vendor --game-dir GAME`")
        });
    };
    let base = game.package(manifest, name).map_err(here)?.ok_or_else(|| {
        at.error(format!("the game has no package `{name}`"))
            .with_hint("`zenpak list --game-dir GAME` lists the game's packages; a patch names one as `/Game/Data/DT_Weapons`")
    })?;
    if let Some(entry) = lock.get(name) {
        if vendor::files_hash(&base.files)? != entry.blake3 {
            diagnostics.push(
                Diagnostic::warning(
                    "patch-base-outdated",
                    format!(
                        "the game's `{name}` differs from the vendored base (read from {}): the patches apply to the game's",
                        entry.source
                    ),
                )
                .with_file(vendor::base_dir(manifest).join(&entry.path))
                .with_hint("vendor the new base with `zenpak patch vendor --game-dir GAME`, so that a build without the game makes the same mod"),
            );
        }
    }
    Ok(base)
}

/// Applies `patches` (all of one asset) to `base`.
fn apply_to_base(
    base: &Base,
    patches: &[&Patch],
    (mappings, sources): (Option<&Mappings>, &SchemaSources),
    asset: &str,
    engine: crate::version::EngineVersion,
) -> Result<PatchedPackage> {
    let operations: Vec<&file::Operation> = patches.iter().flat_map(|p| &p.operations).collect();
    let typing = Typing {
        mappings,
        sources,
        engine,
        known_imports: &[],
    };
    let files = apply_operations_to(&base.files, &operations, &typing)?;
    Ok(PatchedPackage {
        asset: asset.to_string(),
        relative_path: base.relative_path.clone(),
        files,
        base: base.origin.clone(),
        operations: operations.len(),
    })
}

/// How a patched document is typed and written.
pub(crate) struct Typing<'a> {
    pub(crate) mappings: Option<&'a Mappings>,
    pub(crate) sources: &'a SchemaSources<'a>,
    pub(crate) engine: crate::version::EngineVersion,
    /// Objects (path, class) to import when the document refers to them,
    /// before looking for them through `sources` (`merge`: the imports of
    /// the mods' own copies).
    pub(crate) known_imports: &'a [(String, String)],
}

/// The package `files` with `operations` applied, typed back through
/// `mappings` and written; an error names the operation that caused it.
pub(crate) fn apply_operations_to(
    files: &PackageFiles,
    operations: &[&file::Operation],
    typing: &Typing,
) -> Result<WrittenPackage> {
    let text = document_text(files, (typing.mappings, typing.sources), typing.engine)?;
    let patched = apply_operations(&text, operations, operations.len())?;
    type_and_write(patched, typing).map_err(|e| blame(&text, operations, typing, e))
}

/// The most objects a patched document may refer to that its package does
/// not import yet (each import added costs typing the document again).
const MAX_ADDED_IMPORTS: usize = 64;

/// The document `patched` typed through `mappings` and written. An object
/// it refers to that the package neither imports nor exports is imported
/// when the game or the mod has it (its class read from the package that
/// exports it, through `sources`), as the engine's saver would import it.
fn type_and_write(mut patched: String, typing: &Typing) -> Result<WrittenPackage> {
    let (mappings, sources) = (typing.mappings, typing.sources);
    let mut added: Vec<String> = Vec::new();
    loop {
        let error = match AssetDocument::from_json(patched.as_bytes(), mappings, sources)
            .and_then(|typed| typed.write(mappings, sources))
        {
            Ok(files) => return Ok(files),
            Err(e) => e,
        };
        let crate::error::ErrorKind::UnknownObject(path) = error.kind() else {
            return Err(error);
        };
        let path = path.clone();
        if added.contains(&path) || added.len() >= MAX_ADDED_IMPORTS {
            return Err(error);
        }
        let known = typing
            .known_imports
            .iter()
            .find(|(p, _)| *p == path)
            .map(|(_, class)| class.clone());
        let class = match known {
            Some(class) => Some(class),
            None => sources.object_class(&path, typing.engine)?,
        };
        let Some(class) = class else {
            return Err(error.replace_hint(format!(
                "neither the package nor {} has `{path}`: give an object's full path (`/Game/Folder/Asset.Asset`), as `zenpak to-json` of the package that has it shows",
                sources.describe()
            )));
        };
        let mut doc = Node::parse(&patched)?;
        doc.get_mut("imports")
            .and_then(Node::items_mut)
            .ok_or_else(|| Error::internal("a document without `imports`"))?
            .push(Node::New(
                serde_json::json!({ "path": path, "class": class }),
            ));
        added.push(path);
        patched = doc.to_text()?;
    }
}

/// The document of the package `files`, as `to-json` writes it.
pub(crate) fn document_text(
    files: &PackageFiles,
    (mappings, sources): (Option<&Mappings>, &SchemaSources),
    engine: crate::version::EngineVersion,
) -> Result<String> {
    let package = files
        .read_package(Some(engine))
        .map_err(|e| e.in_file(&files.path))?;
    let document = AssetDocument::read(files, &package, mappings, sources)
        .map_err(|e| e.in_file(&files.path))?;
    String::from_utf8(document.to_json()?)
        .map_err(|_| Error::internal("to-json wrote text that is not UTF-8"))
}

/// The document `text` with the first `count` of `operations` applied.
fn apply_operations(text: &str, operations: &[&file::Operation], count: usize) -> Result<String> {
    let mut doc = Node::parse(text)?;
    let shape = apply::shape(&mut doc);
    for op in &operations[..count] {
        apply::apply(&mut doc, shape, op).map_err(|e| at_operation(op, e))?;
    }
    doc.to_text()
}

/// `error` as an error of the patch operation `op`.
fn at_operation(op: &file::Operation, error: Error) -> Error {
    let hint = error.hint().map(str::to_string);
    let mut e = op.at.error(error.message());
    if let Some(hint) = hint {
        e = e.with_hint(hint);
    }
    e
}

/// A document the operations made that does not type or write: the first
/// operation after which it fails is named (each prefix tried in turn;
/// only on this failing path).
fn blame(text: &str, operations: &[&file::Operation], typing: &Typing, error: Error) -> Error {
    for count in 1..=operations.len() {
        let Ok(patched) = apply_operations(text, operations, count) else {
            continue;
        };
        if let Err(e) = type_and_write(patched, typing) {
            let e = match e.kind() {
                crate::error::ErrorKind::UnknownObject(_) => e,
                _ => e.replace_hint(
                    "give the value the property's type takes (`zenpak to-json` of the asset shows each property's current value)",
                ),
            };
            return at_operation(operations[count - 1], e);
        }
    }
    error
}

/// Sets of one path of one asset to different values by different files.
fn conflicts(set: &PatchSet) -> Result<Vec<Diagnostic>> {
    let mut seen: BTreeMap<(String, String), (&Location, &serde_json::Value)> = BTreeMap::new();
    let mut diagnostics = Vec::new();
    for patch in &set.patches {
        for op in &patch.operations {
            let Change::Set(path, value) = &op.change else {
                continue;
            };
            let key = (target_key(&patch.target), path.to_string());
            if let Some((earlier, before)) = seen.get(&key) {
                if earlier.file != op.at.file && *before != value {
                    let message = format!(
                        "`{}` of `{}` is set to {before} by {earlier} and to {value} by {}",
                        key.1,
                        match &patch.target {
                            Target::Asset(n) | Target::Base { asset: Some(n), .. } => n.clone(),
                            Target::Base { path, .. } => path.display().to_string(),
                        },
                        op.at
                    );
                    if !set.later_wins {
                        return Err(op.at.error(message).with_hint(
                            "keep one of the two, or set `[patches] later-wins = true` in mod.toml to let the later file win",
                        ));
                    }
                    diagnostics.push(
                        Diagnostic::warning(
                            "patch-overridden",
                            format!("{message}: the later wins"),
                        )
                        .with_file(op.at.file.as_path()),
                    );
                }
            }
            seen.insert(key, (&op.at, value));
        }
    }
    Ok(diagnostics)
}

/// `patch diff`: the patch text that turns `base` into `edited` (both
/// legacy packages; `target` is the patch's `asset = …` or `base = …`
/// line), checked by applying it to `base`: the result must be `edited`'s
/// bytes, or the error says which file differs.
pub fn diff_packages(
    base: &PackageFiles,
    edited: &PackageFiles,
    target: &str,
    (mappings, sources): (Option<&Mappings>, &SchemaSources),
    engine: crate::version::EngineVersion,
) -> Result<(String, usize)> {
    let text_of = |files: &PackageFiles| document_text(files, (mappings, sources), engine);
    let diff =
        diff::documents(&text_of(base)?, &text_of(edited)?).map_err(|e| e.in_file(&edited.path))?;
    let toml = diff.to_toml(target)?;
    let patches = file::parse(&toml, std::path::Path::new("<patch diff>"))?;
    let operations = patches.iter().map(|p| p.operations.len()).sum();
    let refs: Vec<&Patch> = patches.iter().collect();
    let made = Base {
        package: String::new(),
        files: base.clone(),
        relative_path: String::new(),
        origin: base.path.display().to_string(),
    };
    let written = apply_to_base(&made, &refs, (mappings, sources), "", engine)?.files;
    let companions: Vec<Vec<u8>> = edited
        .bulk
        .iter()
        .map(|c| c.read())
        .collect::<Result<_>>()?;
    let differs = if written.header != edited.header {
        Some(edited.path.clone())
    } else if written.uexp != edited.uexp {
        Some(edited.uexp_path.clone())
    } else if written
        .companions
        .iter()
        .map(|(_, b)| b)
        .ne(companions.iter())
    {
        Some(edited.path.with_extension("ubulk"))
    } else {
        None
    };
    if let Some(file) = differs {
        return Err(Error::invalid(
            "the patch made from the differences does not reproduce the edited copy byte for byte (a change the document does not show, e.g. in the header's other tables)",
        )
        .in_file(file)
        .with_hint("ship the edited package as content instead of a patch"));
    }
    Ok((toml, operations))
}
