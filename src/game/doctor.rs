//! `zenpak doctor`: what a game's own files say about the game, for a
//! modder setting up a mod. Reads the located game folder
//! ([`GameFolder`]) through [`GameView`] (sources whose key was not given
//! are reported as locked, from what their unencrypted headers say) and
//! reports:
//!
//! * the engine releases the base game's containers allow, each fact
//!   (TOC version, container-header version, pak version, the global
//!   container's script objects) mapped through the one version table
//!   (`crate::version`); where several releases fit, the facts of the
//!   table that tell them apart; facts that contradict each other, or
//!   none at all, are diagnostics, never a guess;
//! * compression methods and block sizes in use, encryption (key GUID and
//!   whether the keys given open it), signing (`.sig` files, the TOC
//!   `Signed` flag), IoStore or pak-only, where mods go;
//! * the installed mods (`~mods`, `LogicMods`): name, container id, mount
//!   order and sequence, and what each overrides of the game
//!   (`game::conflicts`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::Serialize;

use super::facts::EngineFacts;
use super::folder::GameFolder;
use super::GameView;
use crate::diagnostic::Diagnostic;
use crate::error::Result;
use crate::fixups::Profile;
use crate::iostore::toc::{container_flags, Toc};
use crate::pak::crypto::{guid_text, KeyRing};
use crate::version::EngineVersion;

/// Where a source sits in the game folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Placement {
    /// The game's own (`Paks/` outside the mod folders).
    Game,
    /// `Paks/~mods`.
    Mods,
    /// `Paks/LogicMods`.
    LogicMods,
}

/// What one pak or container says about itself.
#[derive(Debug, Clone, Serialize)]
pub struct SourceFacts {
    /// File name of the `.pak` (or `.utoc` for `global.utoc`).
    pub(crate) name: String,
    pub(crate) path: String,
    pub(crate) placement: Placement,
    pub(crate) order: u32,
    /// Position in the engine's mount sequence; `None` for a locked source.
    pub(crate) sequence: Option<usize>,
    /// Encrypted with a key that was not given: left out of the view,
    /// described from its unencrypted headers only.
    pub(crate) locked: bool,
    /// Locked although a key was given for it: the key does not open it.
    pub(crate) wrong_key: bool,
    /// `EIoStoreTocVersion` number, when it has a container.
    pub(crate) toc_version: Option<u8>,
    /// The container header's version, when it could be read.
    pub(crate) container_header_version: Option<String>,
    pub(crate) pak_version: Option<u32>,
    /// Container id (16 hex digits).
    pub(crate) container_id: Option<String>,
    pub(crate) encrypted: bool,
    /// Key GUID (32 hex digits, `FGuid` words A B C D) when encrypted.
    pub(crate) key_guid: Option<String>,
    pub(crate) signed: bool,
    /// A `.sig` file beside the `.pak`.
    pub(crate) sig_file: bool,
    /// Compression methods its blocks or entries use (`None` left out).
    pub(crate) compression: Vec<String>,
    /// Container block size.
    pub(crate) block_size: Option<u32>,
}

/// A fact of the version table that differs between releases that fit.
#[derive(Debug, Clone, Serialize)]
pub struct Distinction {
    pub fact: &'static str,
    /// Release → its value of the fact.
    pub values: BTreeMap<String, String>,
}

/// The engine releases the game's files allow.
#[derive(Debug, Clone, Serialize)]
pub struct EngineFinding {
    /// Every release every fact allows (empty when they contradict).
    pub(crate) releases: Vec<EngineVersion>,
    /// `5.6` or `5.6–5.7`; `None` when no release fits.
    pub range: Option<String>,
    /// The one release, when exactly one fits.
    pub release: Option<EngineVersion>,
    pub evidence: Vec<super::facts::EngineEvidence>,
    /// Where several releases fit: what tells them apart.
    pub tells_apart: Vec<Distinction>,
}

/// One compression method in use.
#[derive(Debug, Clone, Serialize)]
pub struct CompressionUse {
    pub method: String,
    pub block_sizes: Vec<u32>,
    pub sources: Vec<String>,
}

/// One encrypted source.
#[derive(Debug, Clone, Serialize)]
pub struct Encryption {
    pub source: String,
    pub(crate) placement: Placement,
    pub key_guid: String,
    /// Whether the keys given open it.
    pub(crate) opened: bool,
    /// `opened`, `no-key` (none given for its GUID) or `wrong-key`.
    pub key: &'static str,
}

/// Signing evidence.
#[derive(Debug, Clone, Serialize)]
pub struct Signing {
    pub signed: bool,
    pub sig_files: Vec<String>,
    pub signed_containers: Vec<String>,
}

/// IoStore or paks.
#[derive(Debug, Clone, Serialize)]
pub struct Loading {
    /// The game ships IoStore containers (`.utoc`/`.ucas`).
    pub io_store: bool,
    /// The game has a `global.utoc` (script objects).
    pub(crate) global_container: bool,
    /// Base-game paks without a container.
    pub pak_only_sources: Vec<String>,
    /// What a mod's packages must be: `io-store` (a `.utoc`/`.ucas` with
    /// its `.pak`) or `pak` (legacy packages in a `.pak`).
    pub mod_packages: &'static str,
}

/// A mod folder.
#[derive(Debug, Clone, Serialize)]
pub struct ModFolder {
    pub(crate) placement: Placement,
    pub path: String,
    pub exists: bool,
}

/// An installed mod.
#[derive(Debug, Clone, Serialize)]
pub struct InstalledMod {
    /// File stem (`MyMod_P`).
    pub name: String,
    pub(crate) path: String,
    pub placement: Placement,
    pub container_id: Option<String>,
    pub order: u32,
    pub sequence: Option<usize>,
    pub locked: bool,
    /// Game packages and files it overrides (`game::conflicts`); `None`
    /// for a mod whose key was not given (its contents are unknown).
    pub(crate) overrides: Option<Vec<super::conflicts::Override>>,
}

/// Everything `doctor` reports.
#[derive(Debug, Clone, Serialize)]
pub struct DoctorReport {
    pub root: String,
    pub project: String,
    pub paks: String,
    pub engine: EngineFinding,
    pub sources: Vec<SourceFacts>,
    pub compression: Vec<CompressionUse>,
    pub encryption: Vec<Encryption>,
    pub signing: Signing,
    pub loading: Loading,
    pub mod_folders: Vec<ModFolder>,
    pub installed_mods: Vec<InstalledMod>,
    /// The game profile its files name (`None`: no game-specific one).
    pub profile: Option<Profile>,
    pub diagnostics: Vec<Diagnostic>,
    /// Paks and containers that do not read (each an error diagnostic):
    /// the error that ends `doctor` after its report.
    #[serde(skip)]
    pub unreadable: Option<crate::error::Error>,
}

/// Examines the located game folder with the keys given.
pub fn examine(folder: &GameFolder, keys: &KeyRing) -> Result<DoctorReport> {
    let paks = folder.paks();
    let (view, _) = GameView::open_game_with(&paks, &[], &[], keys, true)?;
    let mut diagnostics = folder.notes.clone();
    diagnostics.extend(view.diagnostics.iter().cloned());

    let mut sources = Vec::new();
    for source in view.sources() {
        let mut facts = blank_facts(&paks, &source.path, source.order, false);
        facts.sequence = Some(source.sequence);
        if let Some(container) = &source.container {
            toc_facts(&mut facts, &container.toc);
            match container.container_header() {
                Ok(Some(header)) => {
                    facts.container_header_version = Some(format!("{:?}", header.version))
                }
                Ok(None) => {}
                Err(e) => diagnostics.push(
                    Diagnostic::warning(
                        "container-header-unreadable",
                        format!("the container header does not read: {}", e.message()),
                    )
                    .with_file(&container.utoc_path),
                ),
            }
        }
        if let Some(pak) = &source.pak {
            facts.pak_version = Some(pak.version.number());
            let entries_encrypted = pak.has_encrypted_entries();
            if pak.encrypted_index || entries_encrypted {
                facts.encrypted = true;
                facts.key_guid = Some(guid_text(&pak.encryption_key_guid));
            }
            let methods: BTreeSet<&str> = pak
                .entries
                .iter()
                .map(|e| e.compression.as_str())
                .filter(|m| !m.eq_ignore_ascii_case("none"))
                .collect();
            for m in methods {
                if !facts.compression.iter().any(|c| c == m) {
                    facts.compression.push(m.to_string());
                }
            }
        }
        sources.push(facts);
    }
    for locked in view.locked() {
        let mut facts = blank_facts(&paks, &locked.path, locked.order, true);
        facts.encrypted = true;
        let utoc = crate::iostore::companion(&locked.path, "utoc");
        if utoc.is_file() {
            match Toc::read_file(&utoc) {
                Ok(toc) => toc_facts(&mut facts, &toc),
                Err(e) => diagnostics.push(
                    Diagnostic::warning("toc-unreadable", e.message().to_string()).with_file(&utoc),
                ),
            }
        }
        if let Ok(footer) = crate::pak::index::PakFooter::read_file(&locked.path) {
            facts.pak_version = Some(footer.version.number());
            facts
                .key_guid
                .get_or_insert_with(|| guid_text(&footer.encryption_key_guid));
        }
        facts.wrong_key = locked.wrong_key;
        diagnostics.push(
            Diagnostic::note(
                "locked",
                if locked.wrong_key {
                    format!(
                        "{} is encrypted and the key given does not open it ({}): described from its headers only",
                        facts.name,
                        locked.error.message()
                    )
                } else {
                    format!(
                        "{} is encrypted and no key was given for it: described from its headers only",
                        facts.name
                    )
                },
            )
            .with_file(&locked.path)
            .with_hint("give the game's key with --aes-key or ZENPAK_AES_KEY"),
        );
        sources.push(facts);
    }

    let mods = super::conflicts::installed_mods(&view, &paks);
    let facts = super::facts::engine_facts(&view, &mods);
    let engine = engine_finding(&facts, &mut diagnostics);
    for facts in sources.iter().filter(|s| s.placement != Placement::Game) {
        if let (Some(v), false) = (facts.toc_version, engine.releases.is_empty()) {
            if !engine.releases.iter().any(|r| (r.toc_version() as u8) == v) {
                diagnostics.push(
                    Diagnostic::warning(
                        "mod-format-differs",
                        format!(
                            "installed mod {} has TOC version {v}, which none of the game's releases ({}) writes",
                            facts.name,
                            engine.range.as_deref().unwrap_or("?")
                        ),
                    )
                    .with_file(&facts.path),
                );
            }
        }
    }

    let engine_releases = engine.releases.clone();
    let game_sources = || sources.iter().filter(|s| s.placement == Placement::Game);
    let mut compression: BTreeMap<String, CompressionUse> = BTreeMap::new();
    for s in game_sources() {
        for method in &s.compression {
            let entry = compression
                .entry(method.to_ascii_lowercase())
                .or_insert_with(|| CompressionUse {
                    method: method.clone(),
                    block_sizes: Vec::new(),
                    sources: Vec::new(),
                });
            entry.sources.push(s.name.clone());
            if let (Some(size), true) = (s.block_size, s.toc_version.is_some()) {
                if !entry.block_sizes.contains(&size) {
                    entry.block_sizes.push(size);
                    entry.block_sizes.sort_unstable();
                }
            }
        }
    }
    let encryption = sources
        .iter()
        .filter(|s| s.encrypted)
        .map(|s| Encryption {
            source: s.name.clone(),
            placement: s.placement,
            key_guid: s.key_guid.clone().unwrap_or_default(),
            opened: !s.locked,
            key: match (s.locked, s.wrong_key) {
                (false, _) => "opened",
                (true, false) => "no-key",
                (true, true) => "wrong-key",
            },
        })
        .collect();
    let signing = Signing {
        sig_files: sig_files(&paks),
        signed_containers: sources
            .iter()
            .filter(|s| s.signed)
            .map(|s| s.name.clone())
            .collect(),
        signed: false,
    };
    let signing = Signing {
        signed: !signing.sig_files.is_empty() || !signing.signed_containers.is_empty(),
        ..signing
    };
    if signing.signed {
        diagnostics.push(Diagnostic::note(
            "game-signed",
            "the game ships signatures (.sig files or Signed containers): a game that checks them refuses mods it did not sign; making it load them (a signature bypass) is the player's business, and zenpak does not sign",
        ));
    }
    // A global.utoc alone says so too: the engine mounts it only with IoStore on.
    let io_store = game_sources().any(|s| s.toc_version.is_some());
    let global_container = game_sources().any(|s| s.name.eq_ignore_ascii_case("global.utoc"));
    if io_store && !global_container {
        diagnostics.push(Diagnostic::warning(
            "no-global-container",
            "the game has IoStore containers but no global.utoc: the engine needs its script objects to load them; is this the whole Paks folder?",
        ));
    }
    let loading = Loading {
        io_store,
        global_container,
        pak_only_sources: game_sources()
            .filter(|s| s.toc_version.is_none())
            .map(|s| s.name.clone())
            .collect(),
        mod_packages: if io_store { "io-store" } else { "pak" },
    };
    let mod_folders = vec![
        ModFolder {
            placement: Placement::Mods,
            path: folder.mods().display().to_string(),
            exists: folder.mods().is_dir(),
        },
        ModFolder {
            placement: Placement::LogicMods,
            path: folder.logic_mods().display().to_string(),
            exists: folder.logic_mods().is_dir(),
        },
    ];
    let mut overrides: std::collections::BTreeMap<String, Vec<super::conflicts::Override>> =
        super::conflicts::installed_mod_overrides(&view, &paks)
            .into_iter()
            .map(|m| (m.provider.source, m.overrides))
            .collect();
    let unreadable = view.unreadable_error();
    let mut installed_mods: Vec<InstalledMod> = sources
        .iter()
        .filter(|s| s.placement != Placement::Game)
        .map(|s| InstalledMod {
            name: Path::new(&s.name)
                .file_stem()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            path: s.path.clone(),
            placement: s.placement,
            container_id: s.container_id.clone(),
            order: s.order,
            sequence: s.sequence,
            locked: s.locked,
            overrides: overrides.remove(&s.path),
        })
        .collect();
    installed_mods.sort_by_key(|m| (m.sequence.is_none(), m.sequence));

    Ok(DoctorReport {
        root: folder.root.display().to_string(),
        project: folder.project.clone(),
        paks: paks.display().to_string(),
        engine,
        sources,
        compression: compression.into_values().collect(),
        encryption,
        signing,
        loading,
        mod_folders,
        installed_mods,
        profile: Profile::recognise(&folder.project, &engine_releases),
        diagnostics,
        unreadable,
    })
}

fn blank_facts(paks: &Path, path: &Path, order: u32, locked: bool) -> SourceFacts {
    let rel = path
        .strip_prefix(paks)
        .unwrap_or(path)
        .to_string_lossy()
        .replace('\\', "/");
    let first = rel.split('/').next().unwrap_or("");
    let placement = if rel.contains('/') && first.eq_ignore_ascii_case("~mods") {
        Placement::Mods
    } else if rel.contains('/') && first.eq_ignore_ascii_case("LogicMods") {
        Placement::LogicMods
    } else {
        Placement::Game
    };
    SourceFacts {
        name: path
            .file_name()
            .map(|n| crate::diagnostic::path_text(Path::new(n)))
            .unwrap_or_default(),
        path: crate::diagnostic::path_text(path),
        placement,
        order,
        sequence: None,
        locked,
        wrong_key: false,
        toc_version: None,
        container_header_version: None,
        pak_version: None,
        container_id: None,
        encrypted: false,
        key_guid: None,
        signed: false,
        sig_file: path.with_extension("sig").is_file(),
        compression: Vec::new(),
        block_size: None,
    }
}

fn toc_facts(facts: &mut SourceFacts, toc: &Toc) {
    let header = &toc.header;
    facts.toc_version = Some(header.version as u8);
    facts.container_id = Some(format!("{:016x}", header.container_id));
    if header.container_flags & container_flags::ENCRYPTED != 0 {
        facts.encrypted = true;
        facts.key_guid = Some(guid_text(&header.encryption_key_guid));
    }
    facts.signed = header.container_flags & container_flags::SIGNED != 0;
    if !toc.blocks.is_empty() {
        facts.block_size = Some(header.compression_block_size);
    }
    let used: BTreeSet<u8> = toc.blocks.iter().map(|b| b.method_index).collect();
    for index in used.into_iter().filter(|&i| i != 0) {
        let name = toc
            .compression_methods
            .get(usize::from(index) - 1)
            .cloned()
            .unwrap_or_else(|| format!("method #{index} (not in the method table)"));
        if !facts.compression.contains(&name) {
            facts.compression.push(name);
        }
    }
}

/// `.sig` files in the game's `Paks` folder (mod folders left out).
fn sig_files(paks: &Path) -> Vec<String> {
    let mut out: Vec<String> = walkdir::WalkDir::new(paks)
        .follow_links(true)
        .into_iter()
        .filter_entry(|e| {
            e.depth() == 0
                || !(e.file_type().is_dir()
                    && (e.file_name().eq_ignore_ascii_case("~mods")
                        || e.file_name().eq_ignore_ascii_case("LogicMods")))
        })
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_file())
        .filter(|e| {
            e.path()
                .extension()
                .is_some_and(|x| x.eq_ignore_ascii_case("sig"))
        })
        .map(|e| {
            e.path()
                .strip_prefix(paks)
                .unwrap_or(e.path())
                .to_string_lossy()
                .replace('\\', "/")
        })
        .collect();
    out.sort();
    out
}

/// The releases the base game's facts allow, through the version table.
fn engine_finding(facts: &EngineFacts, diagnostics: &mut Vec<Diagnostic>) -> EngineFinding {
    for e in facts.evidence.iter().filter(|e| e.releases.is_empty()) {
        // A pak version older than any release writes is still read by
        // newer engines: it does not narrow the range.
        let code = if e.fact == "pak-version" {
            "pak-version-older"
        } else {
            "engine-fact-unknown"
        };
        diagnostics.push(Diagnostic::warning(
            code,
            format!(
                "{} {} (in {}) is written by none of the releases zenpak knows",
                e.fact,
                e.value,
                e.sources.join(", ")
            ),
        ));
    }
    let releases = facts.releases();
    if !facts.narrows() {
        diagnostics.push(Diagnostic::warning(
            "engine-unknown",
            "nothing in the game's files names its engine release",
        ));
    } else if releases.is_empty() {
        diagnostics.push(Diagnostic::error(
            "engine-contradictory",
            format!(
                "the game's files contradict each other about the engine release: {}",
                facts
                    .evidence
                    .iter()
                    .map(|e| format!(
                        "{} {} allows {}",
                        e.fact,
                        e.value,
                        range_text(&e.releases).unwrap_or_else(|| "none".into())
                    ))
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
        ));
    }
    let tells_apart = if releases.len() > 1 {
        distinctions(&releases)
    } else {
        Vec::new()
    };
    if releases.len() > 1 {
        diagnostics.push(Diagnostic::note(
            "engine-range",
            format!(
                "the game's files allow {}; what tells these releases apart is not in them, so the engine version the game's packages were cooked with decides",
                range_text(&releases).unwrap_or_default()
            ),
        ));
    }
    EngineFinding {
        range: range_text(&releases),
        release: (releases.len() == 1).then(|| releases[0]),
        releases,
        evidence: facts.evidence.clone(),
        tells_apart,
    }
}

/// `5.6` or `5.5–5.7` (the releases are consecutive in the table's order).
pub fn range_text(releases: &[EngineVersion]) -> Option<String> {
    match releases {
        [] => None,
        [one] => Some(one.as_str().to_string()),
        [first, .., last] => Some(format!("{first}–{last}")),
    }
}

/// The version-table facts whose values differ among `releases`.
fn distinctions(releases: &[EngineVersion]) -> Vec<Distinction> {
    type Fact = (&'static str, fn(EngineVersion) -> String);
    let facts: [Fact; 8] = [
        ("toc-version", |r| (r.toc_version() as u8).to_string()),
        ("container-header-version", |r| {
            format!("{:?}", r.container_header_version())
        }),
        ("shader-map-hash-size", |r| {
            r.shader_map_hash_layout().element_size().to_string()
        }),
        ("pak-version", |r| r.pak_version().to_string()),
        ("zen-layout", |r| format!("{:?}", r.zen_layout())),
        ("zen-package-version", |r| {
            r.zen_package_version().to_string()
        }),
        ("legacy-ue5-object-version", |r| {
            r.legacy_file_versions().ue5.to_string()
        }),
        ("legacy-file-version", |r| {
            r.legacy_file_versions().legacy.to_string()
        }),
    ];
    facts
        .iter()
        .filter_map(|(fact, value)| {
            let values: BTreeMap<String, String> = releases
                .iter()
                .map(|&r| (r.as_str().to_string(), value(r)))
                .collect();
            let distinct: BTreeSet<&String> = values.values().collect();
            (distinct.len() > 1).then_some(Distinction { fact, values })
        })
        .collect()
}
