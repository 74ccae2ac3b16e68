//! `check --game-dir` (and `build --game-dir`): the mod against the game it
//! is for, read from the game's own `Paks/` through a [`GameView`].
//!
//! [`check_game`] runs every game check and returns one [`GameReport`]: a
//! `game` section (data for the JSON line of `check`) and diagnostics with
//! stable codes. The checks, each a function over the mod's packages
//! ([`ModPackage`], gathered by `check` from the legacy headers) and the
//! mounted game ([`GameContext`]):
//!
//! - **every import resolves** ([`unresolved_imports`]): each import of
//!   each mod package is found in the mod (a package of the mod with that
//!   export), in the game's packages (by package id, then the export by
//!   the public export hash the Zen import stores —
//!   [`crate::zen::convert::import_reference`], the converter's own
//!   rule) or in the game's script objects (`global.utoc`). A miss is an
//!   `unresolved-import` error naming the importer, the import's path and
//!   where it looked: the engine fails to load the package (the usual
//!   "Failed to resolve import" crash);
//! - **overrides** ([`overrides`]): mod packages whose package id the game
//!   already has, with the game container the engine would otherwise load
//!   them from (`overrides-game-package` note), the containers that have it
//!   when there are several (`game-package-in-several-containers`), and an
//!   `override-class-differs` error when the mod's main export is not of
//!   the class of the game's object of that name; loose files a game pak
//!   also has ([`file_overrides`], `overrides-game-file` note);
//! - **blueprint mods** ([`blueprint_mod`]): a mod with a `ModActor` or
//!   content under `/Game/Mods/<Name>/` is loaded by a mod loader from
//!   `LogicMods/`, which `install` does not write to;
//! - **game facts** ([`game_facts`]): the mod's `[game] engine` and
//!   `[output] compression` against what the game's containers allow
//!   ([`crate::game::facts::engine_facts`]).
//!
//! - **the mod's data against the game's mappings**
//!   ([`redecode::redecode`], with the mappings `check` is given): every
//!   export of each unversioned package of the mod is decoded with the
//!   game's current `.usmap`; data the mappings no longer describe (a
//!   property inserted or retyped by an update) is an
//!   `export-does-not-decode` error naming the package, the export and the
//!   property, before the game crashes on it.
//!
//! More checks are appended in [`check_game`] (each returns
//! `Vec<Diagnostic>`); the report fails when any diagnostic is an error.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::Arc;

use serde::Serialize;

use crate::build::input::LooseFile;
use crate::build::mod_package::ModPackage;
use crate::diagnostic::{Diagnostic, Level};
use crate::error::Result;
use crate::extract::container::ViewSource;
use crate::extract::export_relative_path;
use crate::extract::script_objects::ScriptObjects;
use crate::game::conflicts::{override_not_loaded, LostOverride};
use crate::game::facts::{engine_facts, EngineFacts};
use crate::game::folder::GameFolder;
use crate::game::mount_order::{pak_order, PROJECT_CONTENT_ORDER};
use crate::game::{ChunkRef, GameView, PackageChunk};
use crate::hash::package_id;
use crate::iostore::chunk::ChunkType;
use crate::manifest::Manifest;
use crate::pak::crypto::KeyRing;
use crate::version::{EngineVersion, ZenLayout};
use crate::zen::convert::{import_reference, ImportReference};
use crate::zen::{ObjectIndexKind, ZenPackage};

pub mod redecode;

/// How many `unresolved-import` errors are given one by one; the rest are
/// counted in one more (the `game` section lists them all).
const UNRESOLVED_SHOWN: usize = 50;

/// The game, mounted: its folder, its view, what is read from it once.
pub struct GameContext {
    pub(crate) folder: GameFolder,
    /// The game's `Paks/` folder mounted (read through [`GameContext::view`]).
    source: ViewSource,
    pub(crate) script_objects: Option<ScriptObjects>,
    pub(crate) facts: EngineFacts,
    /// The copy of each package id the engine loads (the mod's own
    /// installed copy left out).
    packages: BTreeMap<u64, PackageChunk>,
    /// Every source with a package of that id (the mod's own installed
    /// copy left out), the engine's pick first.
    providers: BTreeMap<u64, Vec<usize>>,
    /// Mounting notes and what could not be read.
    pub(crate) diagnostics: Vec<Diagnostic>,
}

impl GameContext {
    /// Mounts the game's `Paks/` folder (the engine's order, `~mods` and
    /// `LogicMods` included) with `keys`, and reads its script objects.
    /// `own_stem` (the mod's artifact stem) names the mod's own installed
    /// copy (`~mods/<stem>.pak`, `LogicMods/<stem>.pak`), which is not the
    /// game's: its packages are left out.
    pub fn open(folder: GameFolder, keys: &KeyRing, own_stem: Option<&str>) -> Result<Self> {
        let source = ViewSource::open(&[], Some(&folder.paks()), keys)?;
        let view = source.view();
        let mut diagnostics = view.diagnostics.clone();
        // UE5's ScriptObjects chunk, or UE4's initial load meta and global names.
        use crate::extract::container::{script_objects, SCRIPT_OBJECT_CHUNKS};
        let script_objects = match source
            .chunks_of(|t| SCRIPT_OBJECT_CHUNKS.contains(&t))
            .and_then(|chunks| script_objects(&source, &chunks))
        {
            Ok(table) => table,
            Err(e) => {
                diagnostics.push(game_read_warning(&e, "the script objects of global.utoc"));
                None
            }
        };
        if script_objects.is_none() && view.sources().iter().any(|s| s.container.is_some()) {
            diagnostics.push(Diagnostic::note(
                "game-without-script-objects",
                "the game's Paks/ has no global.utoc with script objects: imports of /Script/ objects are not checked",
            ));
        }
        let mut context = GameContext {
            facts: engine_facts(
                view,
                &crate::game::conflicts::installed_mods(view, &folder.paks()),
            ),
            folder,
            source,
            script_objects,
            packages: BTreeMap::new(),
            providers: BTreeMap::new(),
            diagnostics,
        };
        let own_files: Vec<String> = own_stem
            .map(|stem| {
                ["~mods", "LogicMods"]
                    .iter()
                    .map(|dir| format!("{dir}/{stem}.pak"))
                    .collect()
            })
            .unwrap_or_default();
        let mut copies: BTreeMap<u64, Vec<ChunkRef>> = BTreeMap::new();
        for (s, source) in context.view().sources().iter().enumerate() {
            let Some(container) = &source.container else {
                continue;
            };
            let relative = context.relative(s);
            if own_files.iter().any(|f| f.eq_ignore_ascii_case(&relative)) {
                continue;
            }
            for (index, id) in container.toc.chunk_ids.iter().enumerate() {
                if container.chunk_type(index) == ChunkType::ExportBundleData && id.index() == 0 {
                    copies
                        .entry(id.id())
                        .or_default()
                        .push(ChunkRef { source: s, index });
                }
            }
        }
        for (id, mut chunks) in copies {
            // The engine's rule for chunks: higher order, then the later mounted.
            chunks.sort_by_key(|c| {
                let source = &context.view().sources()[c.source];
                std::cmp::Reverse((source.order, source.sequence))
            });
            chunks.dedup_by_key(|c| c.source);
            let winner = chunks[0];
            let container = context.view().container(winner);
            context.packages.insert(
                id,
                PackageChunk {
                    package_id: id,
                    path: container.paths.get(winner.index).map(str::to_string),
                    chunk: winner,
                },
            );
            context
                .providers
                .insert(id, chunks.iter().map(|c| c.source).collect());
        }
        Ok(context)
    }

    /// The mounted game.
    pub(crate) fn view(&self) -> &GameView {
        self.source.view()
    }

    /// The copy of a package the engine loads, if the game has one.
    pub(crate) fn package(&self, id: u64) -> Option<&PackageChunk> {
        self.packages.get(&id)
    }

    /// Every mounted source holding package `id`, the engine's pick first.
    pub(crate) fn providers(&self, id: u64) -> &[usize] {
        self.providers
            .get(&id)
            .map(Vec::as_slice)
            .unwrap_or_default()
    }

    /// A source's path relative to the game's `Paks/` folder (`~mods/X_P.pak`).
    pub(crate) fn relative(&self, source: usize) -> String {
        let path = &self.view().sources()[source].path;
        path.strip_prefix(self.folder.paks())
            .unwrap_or(path)
            .to_string_lossy()
            .replace('\\', "/")
    }
}

fn game_read_warning(error: &crate::error::Error, what: &str) -> Diagnostic {
    let mut d = Diagnostic::of(error);
    d.level = Level::Warning;
    d.code = "game-unreadable".into();
    d.message = format!(
        "{what} did not read ({}); checks that need it are skipped",
        d.message
    );
    d
}

/// One import no place has.
#[derive(Debug, Clone, Serialize)]
pub struct UnresolvedImport {
    /// The importing package (`/Game/Mod/A`).
    pub(crate) importer: String,
    /// Its header file.
    pub(crate) file: String,
    /// The import's path as the engine prints it (`/Game/X/Y.Y_C`).
    pub(crate) import: String,
    /// The places looked in, in order (`mod`, `game-packages`, `script-objects`).
    pub(crate) looked_in: Vec<&'static str>,
    /// Why it is not found.
    pub(crate) reason: String,
}

/// A game package the mod replaces.
#[derive(Debug, Clone, Serialize)]
pub struct Override {
    pub(crate) package: String,
    pub(crate) file: String,
    /// The game container the engine loads the package from without the mod.
    pub(crate) game_container: String,
    pub(crate) game_order: u32,
    /// Every game container holding the package, the engine's pick first.
    pub(crate) game_containers: Vec<String>,
    /// The mod's order once installed into `~mods` (`<stem>.pak`).
    pub(crate) mod_order: u32,
    /// Whether the installed mod sorts above the game's copy.
    pub(crate) mod_wins: bool,
    /// The class of the mod's main export and of the game's object of that name.
    pub(crate) mod_class: Option<String>,
    pub(crate) game_class: Option<String>,
    /// `same`, `differs` or `unknown`.
    pub(crate) class_check: &'static str,
}

/// A game file (in a pak) the mod's loose file replaces.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct FileOverride {
    /// Its path in the view (`Game/Config/DefaultGame.ini`).
    pub(crate) path: String,
    /// The mod's file.
    pub(crate) file: String,
    /// The pak the game has it in (relative to `Paks/`).
    pub(crate) game_pak: String,
    pub(crate) game_order: u32,
    pub(crate) mod_order: u32,
    /// Whether the installed mod's copy is the one the engine reads.
    pub(crate) mod_wins: bool,
}

/// The blueprint-mod facts.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct BlueprintFacts {
    /// A `ModActor` package or content under `/Game/Mods/<Name>/`.
    pub(crate) blueprint_mod: bool,
    /// The `ModActor` package, if any.
    pub(crate) mod_actor: Option<String>,
    /// Where `install` puts the mod (`~mods`).
    pub(crate) install_folder: &'static str,
    /// Folders of the game already holding this mod's files (`~mods`, `LogicMods`).
    pub(crate) installed_in: Vec<&'static str>,
}

/// The `game` section of `check`'s report.
#[derive(Debug, Clone, Serialize)]
pub struct GameSection {
    /// The game's install folder and project.
    pub dir: String,
    pub project: String,
    pub(crate) paks: String,
    /// Mounted paks and containers.
    pub(crate) sources: usize,
    /// Packages the game's containers provide.
    pub packages: usize,
    /// Script objects read from `global.utoc` (absent: none found).
    pub script_objects: Option<usize>,
    pub facts: EngineFacts,
    pub imports_checked: usize,
    pub unresolved_imports: Vec<UnresolvedImport>,
    pub overrides: Vec<Override>,
    /// Loose files of the mod that the game's paks also have.
    pub(crate) file_overrides: Vec<FileOverride>,
    pub(crate) blueprint: BlueprintFacts,
    /// The mod's packages decoded with the game's mappings (absent: no
    /// mappings given).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub redecode: Option<redecode::Redecode>,
}

/// What the game checks found.
#[derive(Debug, Clone, Serialize)]
pub struct GameReport {
    pub game: GameSection,
    pub diagnostics: Vec<Diagnostic>,
}

impl GameReport {
    /// No error among the diagnostics.
    pub fn is_ok(&self) -> bool {
        !self.diagnostics.iter().any(|d| d.level == Level::Error)
    }

    pub fn errors(&self) -> usize {
        self.diagnostics
            .iter()
            .filter(|d| d.level == Level::Error)
            .count()
    }
}

/// Runs every game check on the mod's packages against the mounted game;
/// with `mappings` (the game's current `.usmap` and its path) the mod's
/// data is also decoded with them. Checks added later go here: each
/// returns diagnostics (and, if it has data to show, a field of
/// [`GameSection`]).
pub fn check_game(
    manifest: &Manifest,
    (packages, loose_files): (&[ModPackage], &[LooseFile]),
    game: &GameContext,
    mappings: Option<(&crate::mappings::Mappings, &std::path::Path)>,
) -> GameReport {
    let mut diagnostics = game.diagnostics.clone();
    diagnostics.extend(game_facts(manifest, &game.facts));
    let engine = reading_engine(manifest.game.engine, &game.facts);
    let mut headers = GameHeaders::new(game, engine);

    let (imports_checked, unresolved) = unresolved_imports(packages, game, &mut headers);
    diagnostics.extend(unresolved_diagnostics(&unresolved));

    let (overrides, override_diagnostics) = overrides(manifest, packages, game, &mut headers);
    diagnostics.extend(override_diagnostics);

    let (file_overrides, file_diagnostics) = file_overrides(manifest, loose_files, game);
    diagnostics.extend(file_diagnostics);

    let (blueprint, blueprint_diagnostics) = blueprint_mod(manifest, packages, &game.folder);
    diagnostics.extend(blueprint_diagnostics);

    // Mount order against the installed mods, as `install` checks it.
    match crate::release::mount_order_warnings(manifest, None, &game.folder) {
        Ok(found) => diagnostics.extend(found),
        Err(e) => diagnostics.push(Diagnostic::warning(
            "mount-order-unchecked",
            format!("the mount order could not be checked: {}", e.message()),
        )),
    }

    let redecode = mappings.map(|mappings| {
        let (found, redecode_diagnostics) = redecode::redecode(
            packages,
            mappings,
            manifest.game.engine,
            &manifest.content_root(),
        );
        diagnostics.extend(redecode_diagnostics);
        found
    });
    if mappings.is_none() && !packages.is_empty() {
        diagnostics.push(
            Diagnostic::note(
                "exports-not-rechecked",
                "no mappings: the mod's exports were not decoded with the game's current types",
            )
            .with_hint("set `[game] mappings` or pass --mappings with a dump of the game as it is now, to find data a game update no longer fits"),
        );
    }

    diagnostics.extend(headers.problems);
    GameReport {
        game: GameSection {
            dir: game.folder.root.display().to_string(),
            project: game.folder.project.clone(),
            paks: game.folder.paks().display().to_string(),
            sources: game.view().sources().len(),
            packages: game.packages.len(),
            script_objects: game.script_objects.as_ref().map(ScriptObjects::len),
            facts: game.facts.clone(),
            imports_checked,
            unresolved_imports: unresolved,
            overrides,
            file_overrides,
            blueprint,
            redecode,
        },
        diagnostics,
    }
}

/// The release the game's Zen headers are read as: the mod's, unless the
/// game's files rule it out (then the newest release they allow).
fn reading_engine(mod_engine: EngineVersion, facts: &EngineFacts) -> EngineVersion {
    match facts.allows(mod_engine) {
        Some(false) => facts.releases().last().copied().unwrap_or(mod_engine),
        _ => mod_engine,
    }
}

/// Zen headers of game packages, read once each.
pub(crate) struct GameHeaders<'a> {
    game: &'a GameContext,
    engine: EngineVersion,
    headers: BTreeMap<u64, Option<Arc<ZenPackage>>>,
    /// Store entries' imported packages of each source (UE 5.0–5.2 class lookups).
    store: BTreeMap<usize, BTreeMap<u64, Vec<u64>>>,
    /// Game packages whose header did not read (one warning each).
    problems: Vec<Diagnostic>,
}

impl<'a> GameHeaders<'a> {
    fn new(game: &'a GameContext, engine: EngineVersion) -> Self {
        GameHeaders {
            game,
            engine,
            headers: BTreeMap::new(),
            store: BTreeMap::new(),
            problems: Vec::new(),
        }
    }

    /// The header of the game's winning copy of package `id`.
    fn header(&mut self, id: u64) -> Option<Arc<ZenPackage>> {
        if let Some(known) = self.headers.get(&id) {
            return known.clone();
        }
        let chunk = self.game.package(id)?.clone();
        let read = self
            .game
            .view()
            .read_chunk(chunk.chunk)
            .and_then(|bytes| crate::extract::provider::read_header(&bytes, self.engine));
        let header = match read {
            Ok(header) => Some(Arc::new(header)),
            Err(e) => {
                let source = self.game.relative(chunk.chunk.source);
                let what = chunk.path.clone().unwrap_or_else(|| format!("0x{id:016x}"));
                self.problems.push(
                    game_read_warning(
                        &e,
                        &format!(
                            "the game's package {what} in {source} (read as {})",
                            self.engine.as_str()
                        ),
                    )
                    .with_file(&self.game.view().sources()[chunk.chunk.source].path),
                );
                None
            }
        };
        self.headers.insert(id, header.clone());
        header
    }

    /// The imported package ids of package `id` from its container's store entry.
    fn store_imports(&mut self, id: u64) -> Vec<u64> {
        let Some(source) = self.game.package(id).map(|p| p.chunk.source) else {
            return Vec::new();
        };
        let entries = self.store.entry(source).or_insert_with(|| {
            match self.game.view().container_header(source) {
                Ok(Some(header)) => header
                    .packages
                    .into_iter()
                    .map(|(pid, entry)| (pid, entry.imported_packages))
                    .collect(),
                _ => BTreeMap::new(),
            }
        });
        entries.get(&id).cloned().unwrap_or_default()
    }
}

/// Whether the game header exports what `reference` names (a public export).
fn game_exports(header: &ZenPackage, reference: ImportReference) -> bool {
    match reference {
        ImportReference::Export {
            public_export_hash, ..
        } => header
            .exports
            .iter()
            .any(|e| e.public_export_hash == public_export_hash && public_export_hash != 0),
        ImportReference::Ue4Export { index, .. } => header
            .exports
            .iter()
            .any(|e| e.public_export_hash == index.0),
        ImportReference::Script(_) | ImportReference::Package { .. } => true,
    }
}

/// "Every import resolves": the number of imports checked and those that
/// are found nowhere.
pub(crate) fn unresolved_imports(
    packages: &[ModPackage],
    game: &GameContext,
    headers: &mut GameHeaders<'_>,
) -> (usize, Vec<UnresolvedImport>) {
    let layout = headers.engine.zen_layout();
    let in_mod: BTreeMap<u64, &ModPackage> =
        packages.iter().map(|p| (package_id(&p.name), p)).collect();
    let mut checked = 0;
    let mut missing = Vec::new();
    for package in packages {
        let mut seen = BTreeSet::new();
        // A package whose objects are imported is checked through them.
        let with_objects: BTreeSet<String> = package
            .imports
            .iter()
            .filter(|i| i.path.len() > 1)
            .map(|i| i.path[0].to_ascii_lowercase())
            .collect();
        for import in &package.imports {
            if import.optional || import.path.is_empty() {
                continue;
            }
            if import.path.len() == 1 && with_objects.contains(&import.path[0].to_ascii_lowercase())
            {
                continue;
            }
            // The same object imported twice is reported once.
            if !seen.insert(import.full_path.to_ascii_lowercase()) {
                continue;
            }
            checked += 1;
            let path: Vec<&str> = import.path.iter().map(String::as_str).collect();
            let reference = import_reference(&path, layout);
            let miss = |looked_in: Vec<&'static str>, reason: String| UnresolvedImport {
                importer: package.name.clone(),
                file: package.file.display().to_string(),
                import: import.full_path.clone(),
                looked_in,
                reason,
            };
            match reference {
                ImportReference::Script(index) => {
                    let Some(table) = &game.script_objects else {
                        // Without the table nothing can be said (pak-only or UE4 games).
                        continue;
                    };
                    if table.chain(index).is_none() {
                        missing.push(miss(
                            vec!["script-objects"],
                            "the game's script objects (global.utoc) do not list it: the game's code has no such class or object".into(),
                        ));
                    }
                }
                ImportReference::Package { package_id: id }
                | ImportReference::Export { package_id: id, .. }
                | ImportReference::Ue4Export { package_id: id, .. } => {
                    let relative = &import.path[1..];
                    if let Some(own) = in_mod.get(&id) {
                        if relative.is_empty() {
                            continue;
                        }
                        match own.has_export(relative) {
                            Some(e) if e.public => continue,
                            Some(_) => {
                                missing.push(miss(
                                    vec!["mod"],
                                    format!("{} has it, but not as a public export (other packages cannot import it)", own.name),
                                ));
                                continue;
                            }
                            None if game.package(id).is_none() => {
                                missing.push(miss(
                                    vec!["mod"],
                                    format!(
                                        "the mod's {} has no export `{}`",
                                        own.name,
                                        relative.join(".")
                                    ),
                                ));
                                continue;
                            }
                            // The game has the package too: the mod's copy
                            // wins but lacks the object; say so below.
                            None => {}
                        }
                    }
                    if game.package(id).is_some() {
                        let Some(header) = headers.header(id) else {
                            continue; // unreadable: warned once
                        };
                        if game_exports(&header, reference) {
                            if in_mod.contains_key(&id) {
                                missing.push(miss(
                                    vec!["mod", "game-packages"],
                                    format!("the game's {} exports it, but the mod replaces that package with one that does not", path[0]),
                                ));
                            }
                            continue;
                        }
                        let source = game.relative(game.package(id).map_or(0, |p| p.chunk.source));
                        missing.push(miss(
                            vec!["mod", "game-packages"],
                            format!(
                                "the game's {} (in {source}) has no public export `{}`",
                                path[0],
                                relative.join(".")
                            ),
                        ));
                        continue;
                    }
                    if pak_package(game, path[0]) {
                        // A legacy package in a pak: its exports are not read here.
                        continue;
                    }
                    if in_mod.contains_key(&id) {
                        continue;
                    }
                    missing.push(miss(
                        vec!["mod", "game-packages"],
                        format!(
                            "neither the mod ({} packages) nor the game ({} packages in {} containers and paks) has the package {}",
                            packages.len(),
                            game.packages.len(),
                            game.view().sources().len(),
                            path[0]
                        ),
                    ));
                }
            }
        }
    }
    (checked, missing)
}

/// Whether a pak of the game holds package `package` as a legacy
/// `.uasset`/`.umap` (pak-only games); see [`pak_package_paths`].
fn pak_package(game: &GameContext, package: &str) -> bool {
    let Some((candidates, exact)) = pak_package_paths(&game.folder.project, package) else {
        return false;
    };
    if exact {
        return candidates
            .iter()
            .any(|path| game.view().find_file(path).is_some());
    }
    game.view().files().any(|f| {
        candidates.iter().any(|c| {
            f.path.len() >= c.len()
                && f.path.is_char_boundary(f.path.len() - c.len())
                && f.path[f.path.len() - c.len()..].eq_ignore_ascii_case(c)
        })
    })
}

/// Where a package lies in a pak: `/Game/X` at `<Project>/Content/X`,
/// `/Engine/X` at `Engine/Content/X` (exact paths, `true`); a plugin's
/// `/Plugin/X` at a path ending in `/Plugin/Content/X`, wherever the
/// plugin lies (`false`). `.uasset` and `.umap` each.
fn pak_package_paths(project: &str, package: &str) -> Option<(Vec<String>, bool)> {
    let (root, rest) = package.strip_prefix('/')?.split_once('/')?;
    let paths = ["uasset", "umap"]
        .iter()
        .map(|ext| match root {
            "Game" => format!("{project}/Content/{rest}.{ext}"),
            "Engine" => format!("Engine/Content/{rest}.{ext}"),
            plugin => format!("/{plugin}/Content/{rest}.{ext}"),
        })
        .collect();
    Some((paths, root == "Game" || root == "Engine"))
}

fn unresolved_diagnostics(unresolved: &[UnresolvedImport]) -> Vec<Diagnostic> {
    let mut out: Vec<Diagnostic> = unresolved
        .iter()
        .take(UNRESOLVED_SHOWN)
        .map(|u| {
            Diagnostic::error(
                "unresolved-import",
                format!(
                    "{} imports {}, which the game will not find: {} (looked in: {})",
                    u.importer,
                    u.import,
                    u.reason,
                    u.looked_in.join(", ")
                ),
            )
            .with_file(&u.file)
            .with_hint("add the package to the mod, fix the reference in the editor, or check that the mod is for this game and version")
        })
        .collect();
    if unresolved.len() > UNRESOLVED_SHOWN {
        out.push(Diagnostic::error(
            "unresolved-import",
            format!(
                "{} more imports are not found (the `game` section of `--message-format json` lists them all)",
                unresolved.len() - UNRESOLVED_SHOWN
            ),
        ));
    }
    out
}

/// A class, as Zen headers refer to it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum ClassKey {
    Script(u64),
    Export { package_id: u64, hash: u64 },
    Ue4(u64),
}

impl ClassKey {
    fn of_reference(reference: ImportReference) -> Option<Self> {
        match reference {
            ImportReference::Script(index) => Some(ClassKey::Script(index.0)),
            ImportReference::Export {
                package_id,
                public_export_hash,
            } => Some(ClassKey::Export {
                package_id,
                hash: public_export_hash,
            }),
            ImportReference::Ue4Export { index, .. } => Some(ClassKey::Ue4(index.0)),
            ImportReference::Package { .. } => None,
        }
    }
}

/// The class of the game's export `export` of `header` (package `id`).
fn game_class(
    headers: &mut GameHeaders<'_>,
    id: u64,
    header: &ZenPackage,
    export: usize,
) -> Option<(ClassKey, String)> {
    let class = header.exports.get(export)?.class_index;
    match class.kind() {
        ObjectIndexKind::ScriptImport => {
            let name = headers
                .game
                .script_objects
                .as_ref()
                .and_then(|t| t.path(class))
                .unwrap_or_else(|| class.describe());
            Some((ClassKey::Script(class.0), name))
        }
        ObjectIndexKind::PackageImport if header.engine.zen_layout() == ZenLayout::Ue4 => {
            Some((ClassKey::Ue4(class.0), class.describe()))
        }
        ObjectIndexKind::PackageImport => {
            let (package_index, hash_index) = class.package_import_parts()?;
            let hash = *header
                .imported_public_export_hashes
                .get(hash_index as usize)?;
            let (package, name) = if header.engine.zen_layout() == ZenLayout::DependencyBundles {
                let names = &header.imported_package_names;
                let base = names.names.get(package_index as usize)?;
                let number = *names.numbers.get(package_index as usize)?;
                let name = crate::names::with_number(&base.text, number.max(0) as u32).into_owned();
                (package_id(&name), Some(name))
            } else {
                let imported = headers.store_imports(id);
                (*imported.get(package_index as usize)?, None)
            };
            let exported = headers.header(package).and_then(|h| {
                let position = h
                    .exports
                    .iter()
                    .position(|e| e.public_export_hash == hash)?;
                Some(format!(
                    "{}.{}",
                    h.package_name(),
                    export_relative_path(&h, position).join(":")
                ))
            });
            let shown = exported.unwrap_or_else(|| match name {
                Some(n) => format!("{n} (export hash 0x{hash:016x})"),
                None => format!("package 0x{package:016x}, export hash 0x{hash:016x}"),
            });
            Some((
                ClassKey::Export {
                    package_id: package,
                    hash,
                },
                shown,
            ))
        }
        _ => None,
    }
}

/// "Overrides": every mod package the game already has, and the errors
/// and notes that go with them.
pub(crate) fn overrides(
    manifest: &Manifest,
    packages: &[ModPackage],
    game: &GameContext,
    headers: &mut GameHeaders<'_>,
) -> (Vec<Override>, Vec<Diagnostic>) {
    let layout = headers.engine.zen_layout();
    let stem = manifest.artifact_stem();
    let mod_pak = format!("{stem}.pak");
    let mod_order = pak_order(PROJECT_CONTENT_ORDER, &mod_pak);
    let relative = |s: usize| game.relative(s);
    let mod_relative = format!("~mods/{mod_pak}");
    let mut list = Vec::new();
    let mut diagnostics = Vec::new();
    let mut lost = Vec::new();
    let mut lost_file = None;
    for package in packages {
        let id = package_id(&package.name);
        let providers = game.providers(id);
        let Some(&winner) = providers.first() else {
            continue;
        };
        let winner_source = &game.view().sources()[winner];
        let containers: Vec<String> = providers.iter().map(|&s| relative(s)).collect();
        // Equal orders: the container mounted last wins a chunk, and paks
        // mount in descending order of their paths.
        let mod_wins = mod_order > winner_source.order
            || (mod_order == winner_source.order
                && crate::game::mount_order::engine_compare(&mod_relative, &relative(winner))
                    == std::cmp::Ordering::Less);

        let main = package.main_export();
        let mod_class = main.map(|e| e.class_path.clone()).filter(|c| !c.is_empty());
        let mut game_class_name = None;
        let mut class_check = "unknown";
        if let (Some(main), Some(header)) = (main, headers.header(id)) {
            let wanted = main.path[0].as_str();
            let position = header.exports.iter().position(|e| {
                e.outer_index.is_null()
                    && header.name_text(e.object_name).eq_ignore_ascii_case(wanted)
            });
            let mod_key = main.class.as_ref().and_then(|c| {
                let path: Vec<&str> = c.iter().map(String::as_str).collect();
                ClassKey::of_reference(import_reference(&path, layout))
            });
            if let (Some(position), Some(mod_key)) = (position, mod_key) {
                if let Some((game_key, shown)) = game_class(headers, id, &header, position) {
                    class_check = if game_key == mod_key {
                        "same"
                    } else {
                        "differs"
                    };
                    game_class_name = Some(shown);
                }
            }
        }
        if mod_wins {
            let message = format!(
                "{} replaces the game's package from {} (order {}); installed as {mod_relative} (order {mod_order}) it is loaded instead",
                package.name,
                relative(winner),
                winner_source.order,
            );
            diagnostics
                .push(Diagnostic::note("overrides-game-package", message).with_file(&package.file));
        } else {
            lost_file.get_or_insert_with(|| package.file.clone());
            lost.push(LostOverride {
                path: package.name.clone(),
                winner: relative(winner),
                winner_order: winner_source.order,
            });
        }
        if containers.len() > 1 {
            diagnostics.push(
                Diagnostic::note(
                    "game-package-in-several-containers",
                    format!(
                        "the game has {} in {} containers ({}); the engine loads the copy in {} (highest order, then the last mounted), so that is the one the mod replaces",
                        package.name,
                        containers.len(),
                        containers.join(", "),
                        containers[0]
                    ),
                )
                .with_file(&package.file),
            );
        }
        if class_check == "differs" {
            diagnostics.push(
                Diagnostic::error(
                    "override-class-differs",
                    format!(
                        "{} replaces the game's object of that name, but as a {} where the game's is a {}: whatever loads it expects the game's class and fails or crashes",
                        package.name,
                        mod_class.as_deref().unwrap_or("?"),
                        game_class_name.as_deref().unwrap_or("?")
                    ),
                )
                .with_file(&package.file)
                .with_hint("make the mod's asset of the game's class (the same parent class or asset type), or give it another path so it is a new package"),
            );
        }
        list.push(Override {
            package: package.name.clone(),
            file: package.file.display().to_string(),
            game_container: relative(winner),
            game_order: winner_source.order,
            game_containers: containers,
            mod_order,
            mod_wins,
            mod_class,
            game_class: game_class_name,
            class_check,
        });
    }
    // The ones the mod loses, as `install` says it.
    if let Some(file) = lost_file {
        diagnostics.extend(override_not_loaded(
            &stem,
            mod_order,
            &file,
            list.len(),
            &lost,
        ));
    }
    (list, diagnostics)
}

/// "Overrides" of files: each loose file of the mod that a pak of the game
/// also has, with the pak the engine reads it from without the mod. For
/// pak files the higher order wins and, at equal order, the pak mounted
/// first (paks mount in descending order of their paths).
pub(crate) fn file_overrides(
    manifest: &Manifest,
    loose_files: &[LooseFile],
    game: &GameContext,
) -> (Vec<FileOverride>, Vec<Diagnostic>) {
    let mod_pak = format!("{}.pak", manifest.artifact_stem());
    let mod_relative = format!("~mods/{mod_pak}");
    let mod_order = pak_order(PROJECT_CONTENT_ORDER, &mod_pak);
    let own = |name: &str| name.eq_ignore_ascii_case(&mod_pak);
    let mut list = Vec::new();
    let mut diagnostics = Vec::new();
    for loose in loose_files {
        let path = crate::mount::virtual_path(&manifest.game.mount_point, &loose.relative_path);
        let Some(found) = game.view().find_file(&path) else {
            continue;
        };
        let crate::game::FileOrigin::PakEntry { source, .. } = found.origin else {
            continue;
        };
        // The mod's own installed copy is not the game's: the copy it hides is.
        let source = if own(found.source) {
            let hidden = game
                .view()
                .shadowed()
                .find(|c| c.path.eq_ignore_ascii_case(&found.path) && !own(c.source));
            let Some(name) = hidden.map(|c| c.source) else {
                continue;
            };
            match game
                .view()
                .sources()
                .iter()
                .position(|s| s.pak.is_some() && s.name() == name)
            {
                Some(s) => s,
                None => continue,
            }
        } else {
            source
        };
        let winner = &game.view().sources()[source];
        let game_pak = game.relative(source);
        let mod_wins = mod_order > winner.order
            || (mod_order == winner.order
                && crate::game::mount_order::engine_compare(&mod_relative, &game_pak)
                    == std::cmp::Ordering::Greater);
        diagnostics.push(
            Diagnostic::note(
                "overrides-game-file",
                format!(
                    "{path} replaces the game's file from {game_pak} (order {}); installed as {mod_relative} (order {mod_order}) it {}",
                    winner.order,
                    if mod_wins {
                        "is read instead"
                    } else {
                        "is NOT read: the game's pak sorts above it"
                    }
                ),
            )
            .with_file(&loose.path),
        );
        list.push(FileOverride {
            path,
            file: loose.path.display().to_string(),
            game_pak,
            game_order: winner.order,
            mod_order,
            mod_wins,
        });
    }
    (list, diagnostics)
}

/// "Blueprint mods": a mod loader (UE4SS's BPModLoader and the like)
/// spawns `/Game/Mods/<Name>/ModActor.ModActor_C` of the paks in
/// `<Paks>/LogicMods/`, `<Name>` being the pak's file name.
pub(crate) fn blueprint_mod(
    manifest: &Manifest,
    packages: &[ModPackage],
    folder: &GameFolder,
) -> (BlueprintFacts, Vec<Diagnostic>) {
    let stem = manifest.artifact_stem();
    let mod_actor = packages.iter().find(|p| {
        p.short_name().eq_ignore_ascii_case("ModActor")
            || p.exports
                .iter()
                .any(|e| e.path.len() == 1 && e.path[0].eq_ignore_ascii_case("ModActor_C"))
    });
    let under_mods = packages
        .iter()
        .find(|p| mods_folder_name(&p.name).is_some());
    let blueprint_mod = mod_actor.is_some() || under_mods.is_some();
    let installed = |dir: PathBuf| {
        ["pak", "utoc"]
            .iter()
            .any(|ext| dir.join(format!("{stem}.{ext}")).is_file())
    };
    let mut installed_in = Vec::new();
    if installed(folder.mods()) {
        installed_in.push("~mods");
    }
    if installed(folder.logic_mods()) {
        installed_in.push("LogicMods");
    }
    let mut diagnostics = Vec::new();
    let example = mod_actor.or(under_mods);
    if let (true, Some(example)) = (
        blueprint_mod && !installed_in.contains(&"LogicMods"),
        example,
    ) {
        diagnostics.push(
            Diagnostic::warning(
                "blueprint-mod-not-in-logicmods",
                format!(
                    "{} makes this a blueprint mod, which a mod loader spawns only from <Paks>/LogicMods/; `zenpak install` puts it in ~mods/, where its assets load but nothing spawns its ModActor",
                    example.name
                ),
            )
            .with_file(&example.file)
            .with_hint(format!(
                "copy the built {stem}.pak, .utoc and .ucas into {} (and remove them from ~mods/)",
                folder.logic_mods().display()
            )),
        );
    }
    if let Some(actor) = mod_actor {
        match mods_folder_name(&actor.name) {
            Some(name) if !name.eq_ignore_ascii_case(&stem) => diagnostics.push(
                Diagnostic::warning(
                    "mod-actor-name-mismatch",
                    format!(
                        "the loader looks for /Game/Mods/{stem}/ModActor in {stem}.pak, but the mod's ModActor is {}",
                        actor.name
                    ),
                )
                .with_file(&actor.file)
                .with_hint(format!(
                    "name the output after the folder: `[package] name = \"{name}\"` with empty `[output] prefix` and `suffix` (no `_P`), or move the content to /Game/Mods/{stem}/"
                )),
            ),
            Some(_) => {}
            None => diagnostics.push(
                Diagnostic::warning(
                    "mod-actor-outside-mods-folder",
                    format!(
                        "{} is not at /Game/Mods/<Name>/ModActor, where mod loaders look for it",
                        actor.name
                    ),
                )
                .with_file(&actor.file)
                .with_hint(format!("move it to /Game/Mods/{stem}/ModActor in the editor")),
            ),
        }
    }
    if !blueprint_mod && installed_in.contains(&"LogicMods") {
        diagnostics.push(
            Diagnostic::warning(
                "logicmods-without-modactor",
                format!(
                    "{stem} is in LogicMods/, where a mod loader spawns /Game/Mods/{stem}/ModActor, but the mod has no ModActor: the loader reports it and does nothing"
                ),
            )
            .with_file(folder.logic_mods().join(format!("{stem}.pak")))
            .with_hint("install it into ~mods/ (`zenpak install`) and remove it from LogicMods/"),
        );
    }
    (
        BlueprintFacts {
            blueprint_mod,
            mod_actor: mod_actor.map(|p| p.name.clone()),
            install_folder: "~mods",
            installed_in,
        },
        diagnostics,
    )
}

/// `<Name>` of a package under `/Game/Mods/<Name>/`.
fn mods_folder_name(package: &str) -> Option<&str> {
    let rest = package.strip_prefix("/Game/Mods/")?;
    let (name, inner) = rest.split_once('/')?;
    (!name.is_empty() && !inner.is_empty()).then_some(name)
}

/// "Game facts that changed": the mod's engine and compression against
/// what the game's containers allow.
pub(crate) fn game_facts(manifest: &Manifest, facts: &EngineFacts) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let engine = manifest.game.engine;
    match facts.allows(engine) {
        Some(false) => out.push(
            Diagnostic::error(
                "game-engine-differs",
                format!(
                    "the mod is for {} (`[game] engine`), but the game's containers are of {}",
                    engine.as_str(),
                    facts.engines.join(" or ")
                ),
            )
            .with_file(&manifest.path)
            .with_hint(format!(
                "set `[game] engine = \"{}\"` (the game was updated?) and rebuild",
                facts.engines.last().copied().unwrap_or_default()
            )),
        ),
        Some(true) => {}
        None => {
            for what in &facts.unknown {
                out.push(Diagnostic::warning("game-engine-unknown", what.clone()));
            }
        }
    }
    let compression = manifest.output.compression;
    if compression != crate::compression::Compression::None
        && !facts.compression.is_empty()
        && !facts.uses_compression(compression.engine_name())
    {
        let stock = compression != crate::compression::Compression::Zstd;
        let message = format!(
            "the mod compresses with {} (`[output] compression`), which none of the game's containers use (they use {})",
            compression.engine_name(),
            facts.compression.join(", ")
        );
        let hint = "set `[output] compression` to a method the game uses, or \"none\"";
        out.push(
            if stock {
                Diagnostic::warning("game-compression-unused", message).with_hint(format!(
                    "{hint}; {} is a stock engine codec, so this usually still loads",
                    compression.engine_name()
                ))
            } else {
                Diagnostic::error("game-compression-unsupported", message)
                    .with_hint(format!("{hint}; Zstd is not a stock engine codec"))
            }
            .with_file(&manifest.path),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mods_folder_of_a_blueprint_mod() {
        assert_eq!(mods_folder_name("/Game/Mods/MyMod/ModActor"), Some("MyMod"));
        assert_eq!(
            mods_folder_name("/Game/Mods/MyMod/Sub/Widget"),
            Some("MyMod")
        );
        assert_eq!(mods_folder_name("/Game/Mods/ModActor"), None);
        assert_eq!(mods_folder_name("/Game/Maps/Entry"), None);
    }

    /// A mod package with one top-level export of class `class`.
    fn package(name: &str, export: &str) -> ModPackage {
        ModPackage {
            name: name.into(),
            file: PathBuf::from(format!("{export}.uasset")),
            imports: Vec::new(),
            exports: vec![crate::build::mod_package::ModExport {
                path: vec![export.into()],
                public: true,
                class: None,
                class_path: "/Script/Engine.BlueprintGeneratedClass".into(),
            }],
        }
    }

    fn codes(diagnostics: &[Diagnostic]) -> Vec<&str> {
        diagnostics.iter().map(|d| d.code.as_str()).collect()
    }

    #[test]
    fn a_mod_actor_is_looked_for_where_loaders_look() {
        let dir = tempfile::tempdir().unwrap();
        let folder = GameFolder {
            root: dir.path().to_path_buf(),
            project: "Game".into(),
            notes: Vec::new(),
        };
        let text = "[mod]\nname = \"MyBp\"\nversion = \"1.0.0\"\n[game]\nengine = \"5.6\"\nproject = \"Game\"\n[output]\nsuffix = \"\"\n";
        let manifest = Manifest::parse(text, &dir.path().join("mod.toml")).unwrap();
        // At /Game/Mods/MyBp/ModActor with the pak named MyBp: only "not in LogicMods".
        let right = [package("/Game/Mods/MyBp/ModActor", "ModActor_C")];
        let (facts, found) = blueprint_mod(&manifest, &right, &folder);
        assert!(facts.blueprint_mod);
        assert_eq!(facts.mod_actor.as_deref(), Some("/Game/Mods/MyBp/ModActor"));
        assert_eq!(codes(&found), ["blueprint-mod-not-in-logicmods"]);
        // Another folder name than the pak's.
        let other = [package("/Game/Mods/Other/ModActor", "ModActor_C")];
        let (_, found) = blueprint_mod(&manifest, &other, &folder);
        assert_eq!(
            codes(&found),
            ["blueprint-mod-not-in-logicmods", "mod-actor-name-mismatch"]
        );
        // Outside /Game/Mods/.
        let outside = [package("/Game/Blueprints/ModActor", "ModActor_C")];
        let (_, found) = blueprint_mod(&manifest, &outside, &folder);
        assert_eq!(
            codes(&found),
            [
                "blueprint-mod-not-in-logicmods",
                "mod-actor-outside-mods-folder"
            ]
        );
        // Not a blueprint mod.
        let plain = [package("/Game/Maps/Entry", "Entry")];
        let (facts, found) = blueprint_mod(&manifest, &plain, &folder);
        assert!(!facts.blueprint_mod);
        assert!(found.is_empty());
    }

    #[test]
    fn where_a_package_lies_in_a_pak() {
        let (paths, exact) = pak_package_paths("MyGame", "/Game/Maps/Entry").unwrap();
        assert!(exact);
        assert_eq!(
            paths,
            [
                "MyGame/Content/Maps/Entry.uasset",
                "MyGame/Content/Maps/Entry.umap"
            ]
        );
        let (paths, exact) = pak_package_paths("MyGame", "/Engine/BasicShapes/Cube").unwrap();
        assert!(exact);
        assert_eq!(paths[0], "Engine/Content/BasicShapes/Cube.uasset");
        let (paths, exact) = pak_package_paths("MyGame", "/Niagara/Modules/Spawn").unwrap();
        assert!(!exact);
        assert_eq!(paths[0], "/Niagara/Content/Modules/Spawn.uasset");
        assert!(pak_package_paths("MyGame", "/Script").is_none());
    }

    #[test]
    fn game_headers_are_read_as_a_release_the_game_allows() {
        let facts = EngineFacts {
            engines: vec!["5.6", "5.7"],
            ..EngineFacts::default()
        };
        assert_eq!(
            reading_engine(EngineVersion::UE5_6, &facts),
            EngineVersion::UE5_6
        );
        assert_eq!(
            reading_engine(EngineVersion::UE5_3, &facts),
            EngineVersion::UE5_7
        );
        // No evidence: the mod's own release.
        assert_eq!(
            reading_engine(EngineVersion::UE5_3, &EngineFacts::default()),
            EngineVersion::UE5_3
        );
        assert_eq!(facts.allows(EngineVersion::UE5_5), Some(false));
        assert_eq!(EngineFacts::default().allows(EngineVersion::UE5_5), None);
    }
}
