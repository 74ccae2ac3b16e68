//! Which mounted source wins each package and file that several provide,
//! and what that means for installed mods: `zenpak conflicts`, the
//! "what they override" of `doctor`'s installed mods, and the mount-order
//! checks `install` (and `check --game-dir`) run.
//!
//! Who wins is decided once, by [`GameView`] (see its module doc for the
//! engine's rule and sources): a **chunk** (so a package, by package id, and
//! every container file with a directory-index path) goes to the highest
//! order and, among equal orders, to the container mounted last; a **pak
//! file** to the highest order and, among equal orders, to the pak mounted
//! first. This module only reads the view's result: every hidden copy
//! ([`GameView::shadowed`]) carries the copy that hides it, and a conflict
//! is a winner with its hidden copies.
//!
//! A source is a **mod** when it lies under the game's `~mods/` or
//! `LogicMods/` folders, or when the caller names it as one (the mod being
//! built, `--mod PATH`); everything else is the game's own. A source is
//! *wholly* shadowed when every chunk and pak entry it provides (container
//! headers aside) is hidden by another source, *partly* when some are.
//!
//! The mount-order checks ([`mount_order_checks`]) need only file names and
//! TOC headers, never the game's (possibly encrypted) data:
//! `same-stem` (another installed mod with the same file stem: the engine
//! derives the container id from it, so the two are one container to it),
//! `same-container-id` (a different stem but the same id in the TOC),
//! `order-below-game-patch` (the order the mod's `_P`/`_N_P` name gets is
//! not above the game's highest patch pak, so the game's copy wins every
//! chunk both provide) and `companion-pak-missing` (an installed mod's
//! `.utoc` without its `.pak`: the engine does not mount it).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::mount_order::{pak_order, patch_bonus, FolderPlan, PROJECT_CONTENT_ORDER};
use super::{ChunkRef, FileOrigin, GameView};
use crate::diagnostic::Diagnostic;
use crate::error::Result;
use crate::game::folder::GameFolder;
use crate::iostore::chunk::ChunkType;
use crate::iostore::toc::Toc;
use crate::iostore::{companion, container_stem};

/// The folders under `Paks/` that hold mods.
pub(crate) const MOD_FOLDERS: [&str; 2] = ["~mods", "LogicMods"];

/// Whether a source is the game's own or a mod.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    Game,
    Mod,
}

/// One mounted source, as a conflict names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Provider {
    /// The `.pak` (or `.utoc` of a container without one).
    pub(crate) source: String,
    /// Its file name.
    pub name: String,
    /// The engine's read order (higher wins).
    pub order: u32,
    /// Position in the mount sequence (0 first).
    pub sequence: usize,
    pub role: Role,
}

/// What a conflict is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ItemKind {
    /// A package (its `ExportBundleData` chunk), by package id.
    Package,
    /// A pak entry, or a container chunk with a directory-index path.
    File,
    /// A container chunk without a path (e.g. a container header).
    Chunk,
}

/// Which of the engine's two rules decided the winner.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Rule {
    /// Highest order, then the container mounted last.
    Chunk,
    /// Highest order, then the pak mounted first.
    PakFile,
}

/// One package, file or chunk that several sources provide.
#[derive(Debug, Clone, Serialize)]
pub struct Conflict {
    pub kind: ItemKind,
    /// The view path (`Game/Content/X.uasset` for a package, as stored).
    pub path: String,
    /// `0x…` package id, for a package.
    pub(crate) package_id: Option<String>,
    /// Chunk id (hex) and type, for a container chunk.
    pub(crate) chunk_id: Option<String>,
    pub(crate) chunk_type: Option<String>,
    pub(crate) rule: Rule,
    /// The copy the engine reads.
    pub(crate) winner: Provider,
    /// Every provider, in the engine's priority: the winner first.
    pub providers: Vec<Provider>,
}

/// How much of a source other sources hide.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Shadowing {
    None,
    Partly,
    Wholly,
}

/// One source with how much of it is hidden.
#[derive(Debug, Clone, Serialize)]
pub struct SourceShadowing {
    #[serde(flatten)]
    pub(crate) provider: Provider,
    /// Chunks (container headers aside) and pak entries it provides.
    pub(crate) items: usize,
    /// How many of them another source hides.
    pub(crate) shadowed: usize,
    pub(crate) state: Shadowing,
}

/// A game package or file a mod provides too.
#[derive(Debug, Clone, Serialize)]
pub struct Override {
    pub(crate) kind: ItemKind,
    pub(crate) path: String,
    pub(crate) package_id: Option<String>,
    /// Whether the mod's copy is the one the engine reads.
    pub wins: bool,
    /// The file name of the source that wins.
    pub(crate) winner: String,
    /// Its order.
    pub(crate) winner_order: u32,
    /// The game's sources that provide it (file names).
    pub(crate) game_sources: Vec<String>,
}

/// One mod: what it overrides of the game, which mods it hides and is hidden by.
#[derive(Debug, Clone, Serialize)]
pub struct ModConflicts {
    #[serde(flatten)]
    pub provider: Provider,
    pub overrides: Vec<Override>,
    /// Mods (file names) of which it hides at least one copy.
    pub shadows: Vec<String>,
    /// Sources (file names) that hide at least one of its copies.
    pub shadowed_by: Vec<String>,
    pub items: usize,
    pub shadowed: usize,
    pub state: Shadowing,
}

/// Everything [`conflicts`] finds.
#[derive(Debug, Clone, Serialize)]
pub struct ConflictReport {
    pub conflicts: Vec<Conflict>,
    /// Every source, in mount sequence.
    pub sources: Vec<SourceShadowing>,
    /// Every mod source, in mount sequence.
    pub mods: Vec<ModConflicts>,
}

/// The sources of `view` under `paks/~mods` or `paks/LogicMods`.
pub fn installed_mods(view: &GameView, paks: &Path) -> Vec<usize> {
    let canonical = paks.canonicalize().ok();
    view.sources()
        .iter()
        .enumerate()
        .filter(|(_, s)| {
            let inside = |root: &Path, path: &Path| {
                path.strip_prefix(root).ok().is_some_and(|rel| {
                    rel.components().next().is_some_and(|first| {
                        let first = first.as_os_str().to_string_lossy();
                        MOD_FOLDERS.iter().any(|m| m.eq_ignore_ascii_case(&first))
                    })
                })
            };
            inside(paks, &s.path)
                || canonical
                    .as_deref()
                    .is_some_and(|root| s.path.canonicalize().is_ok_and(|path| inside(root, &path)))
        })
        .map(|(i, _)| i)
        .collect()
}

/// The installed mods of `view` (the game's `Paks/` folder mounted, `paks`
/// its path) with what each overrides of the game and which mods it hides
/// or is hidden by: `doctor`'s "what they override" column.
pub fn installed_mod_overrides(view: &GameView, paks: &Path) -> Vec<ModConflicts> {
    conflicts(view, &installed_mods(view, paks)).mods
}

/// Every package, file and chunk that more than one source of `view`
/// provides, with the winner; `mods` are the sources that count as mods.
pub fn conflicts(view: &GameView, mods: &[usize]) -> ConflictReport {
    let sources = view.sources();
    let role = |s: usize| {
        if mods.contains(&s) {
            Role::Mod
        } else {
            Role::Game
        }
    };
    let provider = |s: usize| {
        let source = &sources[s];
        Provider {
            source: crate::diagnostic::path_text(&source.path),
            name: source.name().to_string(),
            order: source.order,
            sequence: source.sequence,
            role: role(s),
        }
    };
    let is_header = |origin: FileOrigin| match origin {
        FileOrigin::Chunk(chunk) => {
            view.container(chunk).chunk_type(chunk.index) == ChunkType::ContainerHeader
        }
        FileOrigin::PakEntry { .. } => false,
    };

    // Hidden copies grouped by the copy that hides them, in priority order.
    let mut groups: BTreeMap<FileOrigin, (String, Vec<FileOrigin>)> = BTreeMap::new();
    let mut hidden = vec![0usize; sources.len()];
    for copy in view.shadowed() {
        if !is_header(copy.origin) {
            hidden[copy.origin.source()] += 1;
        }
        groups
            .entry(copy.winner)
            .or_insert_with(|| (copy.path.into_owned(), Vec::new()))
            .1
            .push(copy.origin);
    }

    let mut conflicts: Vec<Conflict> = groups
        .into_iter()
        .map(|(winner, (path, losers))| {
            let mut providers = vec![provider(winner.source())];
            providers.extend(losers.iter().map(|l| provider(l.source())));
            match winner {
                FileOrigin::Chunk(chunk) => chunk_conflict(view, chunk, path, providers),
                FileOrigin::PakEntry { .. } => Conflict {
                    kind: ItemKind::File,
                    path,
                    package_id: None,
                    chunk_id: None,
                    chunk_type: None,
                    rule: Rule::PakFile,
                    winner: providers[0].clone(),
                    providers,
                },
            }
        })
        .collect();
    conflicts.sort_by(|a, b| (a.kind, &a.path).cmp(&(b.kind, &b.path)));

    let shadowing: Vec<SourceShadowing> = sources
        .iter()
        .enumerate()
        .map(|(s, source)| {
            let chunks = source.container.as_ref().map_or(0, |c| {
                (0..c.toc.chunk_ids.len())
                    .filter(|&i| c.chunk_type(i) != ChunkType::ContainerHeader)
                    .count()
            });
            let items = chunks + source.pak.as_ref().map_or(0, |p| p.entries.len());
            let shadowed = hidden[s];
            let state = if shadowed == 0 {
                Shadowing::None
            } else if shadowed >= items {
                Shadowing::Wholly
            } else {
                Shadowing::Partly
            };
            SourceShadowing {
                provider: provider(s),
                items,
                shadowed,
                state,
            }
        })
        .collect();

    let mut mod_reports: Vec<ModConflicts> = Vec::new();
    let mut mod_indices: Vec<usize> = mods.to_vec();
    mod_indices.sort_unstable();
    mod_indices.dedup();
    for &m in mod_indices.iter().filter(|&&m| m < sources.len()) {
        let mut overrides = Vec::new();
        let mut shadows = BTreeSet::new();
        let mut shadowed_by = BTreeSet::new();
        for c in &conflicts {
            let Some(mine) = c.providers.iter().position(|p| p.sequence == m) else {
                continue;
            };
            let game_sources: Vec<String> = c
                .providers
                .iter()
                .filter(|p| p.role == Role::Game)
                .map(|p| p.name.clone())
                .collect();
            if !game_sources.is_empty() && c.chunk_type.as_deref() != Some("ContainerHeader") {
                overrides.push(Override {
                    kind: c.kind,
                    path: c.path.clone(),
                    package_id: c.package_id.clone(),
                    wins: mine == 0,
                    winner: c.winner.name.clone(),
                    winner_order: c.winner.order,
                    game_sources,
                });
            }
            if mine == 0 {
                shadows.extend(
                    c.providers[1..]
                        .iter()
                        .filter(|p| p.role == Role::Mod)
                        .map(|p| p.name.clone()),
                );
            } else {
                shadowed_by.insert(c.winner.name.clone());
            }
        }
        let own = &shadowing[m];
        mod_reports.push(ModConflicts {
            provider: own.provider.clone(),
            overrides,
            shadows: shadows.into_iter().collect(),
            shadowed_by: shadowed_by.into_iter().collect(),
            items: own.items,
            shadowed: own.shadowed,
            state: own.state,
        });
    }
    ConflictReport {
        conflicts,
        sources: shadowing,
        mods: mod_reports,
    }
}

/// A conflict over a container chunk: a package when it is an
/// `ExportBundleData` chunk (named by its stored `.uasset`/`.umap` path).
fn chunk_conflict(
    view: &GameView,
    chunk: ChunkRef,
    path: String,
    providers: Vec<Provider>,
) -> Conflict {
    let container = view.container(chunk);
    let id = container.toc.chunk_ids[chunk.index];
    let chunk_type = container.chunk_type(chunk.index);
    let stored = container.paths.get(chunk.index).map(str::to_string);
    let kind = if chunk_type == ChunkType::ExportBundleData {
        ItemKind::Package
    } else if stored.is_some() {
        ItemKind::File
    } else {
        ItemKind::Chunk
    };
    Conflict {
        kind,
        path: stored.unwrap_or(path),
        package_id: (kind == ItemKind::Package).then(|| format!("{:#018x}", id.id())),
        chunk_id: Some(id.to_hex()),
        chunk_type: Some(format!("{chunk_type:?}")),
        rule: Rule::Chunk,
        winner: providers[0].clone(),
        providers,
    }
}

/// Whether a path relative to `Paks/` lies in a mod folder.
fn in_mod_folder(rel: &str) -> bool {
    let first = rel.split('/').next().unwrap_or_default();
    rel.contains('/') && MOD_FOLDERS.iter().any(|m| m.eq_ignore_ascii_case(first))
}

/// The mount-order checks for a mod about to be installed into `game`:
/// `candidate` is its built `.pak` or `.utoc` (the name it will have in
/// `~mods`); `own` the files this mod installed before (left out of the
/// comparison, as `install` replaces them). Warnings only: each names the
/// other file and says what to change.
pub(crate) fn mount_order_checks(
    game: &GameFolder,
    candidate: &Path,
    own: &[PathBuf],
) -> Result<Vec<Diagnostic>> {
    let mut out = Vec::new();
    let paks = game.paks();
    if !paks.is_dir() {
        return Ok(out);
    }
    let stem = container_stem(candidate).unwrap_or_default().to_string();
    let candidate_utoc = companion(candidate, "utoc");
    let candidate_id = if candidate_utoc.is_file() {
        Some(Toc::read_file(&candidate_utoc)?.header.container_id)
    } else {
        None
    };
    let plan = FolderPlan::of(&paks)?;
    let is_own = |path: &Path| {
        let canonical = path.canonicalize().ok();
        own.iter()
            .any(|o| o == path || (canonical.is_some() && o.canonicalize().ok() == canonical))
    };

    for planned in plan.paks.iter().filter(|p| in_mod_folder(&p.rel)) {
        let pak = planned.path.clone();
        if is_own(&pak) {
            continue;
        }
        let other_stem = container_stem(&pak).unwrap_or_default();
        if other_stem.eq_ignore_ascii_case(&stem) {
            out.push(
                Diagnostic::warning(
                    "same-stem",
                    format!(
                        "another installed mod, `{}`, has this mod's file name `{stem}`: the engine derives the container id from it and treats the two as one container, so one of them is not loaded",
                        planned.rel
                    ),
                )
                .with_file(&pak)
                .with_hint("rename this mod (`[package] name`, `[output] prefix`/`suffix`) or remove the other one"),
            );
            continue;
        }
        let utoc = companion(&pak, "utoc");
        let (Some(id), true) = (candidate_id, utoc.is_file()) else {
            continue;
        };
        match Toc::read_file(&utoc) {
            Ok(toc) if toc.header.container_id == id => out.push(
                Diagnostic::warning(
                    "same-container-id",
                    format!(
                        "another installed mod, `{}`, has this mod's container id {id:#018x}: the engine treats the two as one container, so one of them is not loaded",
                        planned.rel
                    ),
                )
                .with_file(&utoc)
                .with_hint("rename this mod (the container id is the hash of its file name) or remove the other one"),
            ),
            Ok(_) => {}
            Err(e) => out.push(
                Diagnostic::note(
                    "mod-toc-unreadable",
                    format!(
                        "the container id of `{}` is unknown (its .utoc does not read: {}); not compared",
                        planned.rel,
                        e.message()
                    ),
                )
                .with_file(&utoc),
            ),
        }
    }

    for (rel, utoc) in plan
        .tocs_without_pak
        .iter()
        .filter(|(r, _)| in_mod_folder(r))
    {
        if is_own(utoc) {
            continue;
        }
        out.push(
            Diagnostic::warning(
                "companion-pak-missing",
                format!("the installed mod `{rel}` has no .pak beside it: the engine does not mount the container"),
            )
            .with_file(utoc)
            .with_hint("copy the mod's .pak beside its .utoc, or remove the .utoc and .ucas"),
        );
    }

    // The order the mod gets in `~mods` (never the project's main pak).
    let order = pak_order(PROJECT_CONTENT_ORDER, &format!("{stem}.pak"));
    let highest_patch = plan
        .paks
        .iter()
        .filter(|p| !in_mod_folder(&p.rel))
        .filter(|p| patch_bonus(p.rel.rsplit('/').next().unwrap_or(&p.rel)) > 0)
        .max_by_key(|p| p.order);
    if let Some(patch) = highest_patch.filter(|p| order <= p.order) {
        let n = suffix_above(patch.order);
        out.push(
            Diagnostic::warning(
                "order-below-game-patch",
                format!(
                    "`{stem}.pak` gets mount order {order}, not above the game's own patch `{}` (order {}): where both provide a package, the game's copy is loaded",
                    patch.rel, patch.order
                ),
            )
            .with_file(candidate)
            .with_hint(format!(
                "end the name with `_{n}_P` (order {}): `[output] suffix = \"_{n}_P\"`",
                pak_order(PROJECT_CONTENT_ORDER, &format!("x_{n}_P.pak"))
            )),
        );
    }
    Ok(out)
}

/// The `N` of the `_N_P` name whose order is above `order` (in `~mods`).
pub(crate) fn suffix_above(order: u32) -> u32 {
    (order.saturating_sub(PROJECT_CONTENT_ORDER) / 100).max(1)
}

/// `stem` with its `_P` / `_N_P` ending replaced by `_{n}_P`.
fn renamed_stem(stem: &str, n: u32) -> String {
    let mut base = stem;
    if base.to_ascii_lowercase().ends_with("_p") {
        base = &base[..base.len() - 2];
        if let Some((front, digits)) = base.rsplit_once('_') {
            if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
                base = front;
            }
        }
    }
    format!("{base}_{n}_P")
}

/// One override of the game a mod loses: the path, the file name of the
/// source the engine loads it from instead, and that source's order.
pub(crate) struct LostOverride {
    pub(crate) path: String,
    pub(crate) winner: String,
    pub(crate) winner_order: u32,
}

/// How many of a lost override's paths and winners a warning names.
const LOST_NAMED: usize = 3;

/// `override-not-loaded`: the mod `stem` (installed as `~mods/<stem>.pak`,
/// order `order`; `file` is what the warning is about) loses `lost` of its
/// `total` overrides of the game to other sources, which the engine loads
/// instead. Names the winners and the `_N_P` rename that puts the mod above
/// them all. `install` and `check --game-dir` say it the same way.
pub(crate) fn override_not_loaded(
    stem: &str,
    order: u32,
    file: &Path,
    total: usize,
    lost: &[LostOverride],
) -> Option<Diagnostic> {
    let highest = lost.iter().max_by_key(|l| l.winner_order)?;
    let mut winners: Vec<String> = Vec::new();
    for l in lost {
        let named = format!("{} (order {})", l.winner, l.winner_order);
        if !winners.contains(&named) {
            winners.push(named);
        }
    }
    let paths: Vec<String> = lost.iter().map(|l| l.path.clone()).collect();
    let n = suffix_above(highest.winner_order);
    let renamed = renamed_stem(stem, n);
    let new_order = pak_order(PROJECT_CONTENT_ORDER, &format!("{renamed}.pak"));
    Some(
        Diagnostic::warning(
            "override-not-loaded",
            format!(
                "`{stem}.pak` (order {order}) wins {} of its {total} overrides of the game: the engine loads {} from {} instead",
                if lost.len() == total {
                    "none".to_string()
                } else {
                    format!("only {}", total - lost.len())
                },
                crate::diagnostic::bounded_list(&paths, LOST_NAMED),
                crate::diagnostic::bounded_list(&winners, LOST_NAMED),
            ),
        )
        .with_file(file)
        .with_hint(format!(
            "rename it `{renamed}` (order {new_order}, above {}'s {}): `[output] suffix = \"_{n}_P\"`",
            highest.winner, highest.winner_order
        )),
    )
}

/// `override-not-loaded` for the mod `candidate` (a built `.pak`) about to
/// be installed into `game`, replacing the files `own`: the game is
/// mounted with the mod where `install` puts it, and the mod's overrides
/// that another source wins are named. Sources whose key is not given are
/// left out (their contents are unknown); a game that does not read gives
/// a `mount-order-unchecked` warning instead.
pub(crate) fn lost_overrides(
    game: &GameFolder,
    candidate: &Path,
    own: &[PathBuf],
) -> Vec<Diagnostic> {
    let paks = game.paks();
    if !paks.is_dir() || !candidate.is_file() {
        return Vec::new();
    }
    let keys = crate::pak::crypto::KeyRing::default();
    let opened = GameView::open_game_with(&paks, &[candidate.to_path_buf()], own, &keys, true);
    let (view, named) = match opened {
        Ok(opened) => opened,
        Err(e) => {
            return vec![Diagnostic::warning(
                "mount-order-unchecked",
                format!(
                    "which of the mod's overrides the game loads could not be checked: {}",
                    e.message()
                ),
            )
            .with_file(&paks)]
        }
    };
    let Some(&source) = named.first().and_then(|n| n.first()) else {
        return Vec::new();
    };
    let mut mods = installed_mods(&view, &paks);
    mods.push(source);
    let report = conflicts(&view, &mods);
    let Some(own_report) = report.mods.iter().find(|m| m.provider.sequence == source) else {
        return Vec::new();
    };
    let lost: Vec<LostOverride> = own_report
        .overrides
        .iter()
        .filter(|o| !o.wins)
        .map(|o| LostOverride {
            path: o.path.clone(),
            winner: o.winner.clone(),
            winner_order: o.winner_order,
        })
        .collect();
    let stem = container_stem(candidate).unwrap_or_default();
    override_not_loaded(
        stem,
        own_report.provider.order,
        candidate,
        own_report.overrides.len(),
        &lost,
    )
    .into_iter()
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rename_puts_the_mod_above_the_winner() {
        assert_eq!(suffix_above(103), 1);
        assert_eq!(suffix_above(203), 2);
        assert_eq!(suffix_above(3), 1);
        assert_eq!(renamed_stem("ThirdMod_P", 1), "ThirdMod_1_P");
        assert_eq!(renamed_stem("ThirdMod_3_p", 4), "ThirdMod_4_P");
        assert_eq!(renamed_stem("Plain", 1), "Plain_1_P");
        assert!(pak_order(3, "ThirdMod_1_P.pak") > 103);
    }

    #[test]
    fn mod_folders_are_the_first_component() {
        assert!(in_mod_folder("~mods/A_P.pak"));
        assert!(in_mod_folder("logicmods/sub/A_P.pak"));
        assert!(!in_mod_folder("~mods"));
        assert!(!in_mod_folder("pakchunk0-Windows_P.pak"));
        assert!(!in_mod_folder("Other/~mods/A_P.pak"));
    }
}
