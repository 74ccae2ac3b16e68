//! What a game's own files say about the engine it runs and how it packs
//! its data: the engine releases its containers and paks allow, and the
//! compression methods and block sizes it uses. `check --game-dir` compares
//! a mod's `[game] engine` and `[output] compression` with these; `doctor`
//! reports them.
//!
//! Each version a file stores is evidence: the `.utoc` version
//! (`EngineVersion::toc_version`), the container header version
//! (`EngineVersion::container_header_version`), the size of the store
//! entries' shader map hashes when any package has one
//! (`EngineVersion::shader_map_hash_layout`: 20 bytes up to 5.7, 8 in 5.8)
//! and the pak version (`EngineVersion::pak_version`), all from the one table in
//! [`crate::version`]. Every piece of evidence allows a set of releases;
//! the game's releases are those every piece allows. A version the table
//! does not know, a container header that does not read, or evidence that
//! allows no common release is said in [`EngineFacts::unknown`] (and the
//! range is then empty or partial), never guessed.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::version::EngineVersion;

use super::GameView;
use crate::iostore::chunk::ChunkType;

/// One kind of version the game's files store, with the releases it allows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EngineEvidence {
    /// `toc-version`, `container-header-version`, `shader-map-hash-size`,
    /// `pak-version` or `script-objects`.
    pub fact: &'static str,
    /// The stored value (`5`, `NoExportInfo`, `11`).
    pub value: String,
    /// The files that store it (file names), in mount sequence.
    pub sources: Vec<String>,
    /// The releases of the version table that write this value, oldest
    /// first (empty: none zenpak knows; such evidence narrows nothing).
    pub releases: Vec<EngineVersion>,
}

/// The engine releases a game's containers and paks allow, and how it packs
/// its data.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct EngineFacts {
    /// Releases every piece of evidence allows, oldest first (empty when
    /// there is no evidence or it contradicts itself).
    pub(crate) engines: Vec<&'static str>,
    pub(crate) evidence: Vec<EngineEvidence>,
    /// Evidence that could not be placed: unknown versions, unreadable
    /// container headers, pieces that allow no common release.
    pub(crate) unknown: Vec<String>,
    /// Compression methods the game's containers and paks declare (engine
    /// names: `Oodle`, `Zlib`, …), sorted.
    pub(crate) compression: Vec<String>,
    /// Compression block sizes of the game's containers, sorted.
    pub(crate) block_sizes: Vec<u32>,
    /// Whether any mounted source is an IoStore container (else the game is pak-only).
    pub(crate) iostore: bool,
}

impl EngineFacts {
    /// Whether `engine` is among the releases the game allows. `None` when
    /// the game's files do not tell (no evidence, or contradictory).
    pub(crate) fn allows(&self, engine: EngineVersion) -> Option<bool> {
        if self.engines.is_empty() {
            return None;
        }
        Some(self.engines.contains(&engine.as_str()))
    }

    /// The allowed releases as `EngineVersion`s, oldest first.
    pub(crate) fn releases(&self) -> Vec<EngineVersion> {
        EngineVersion::ALL
            .into_iter()
            .filter(|e| self.engines.contains(&e.as_str()))
            .collect()
    }

    /// Whether some evidence names releases (so the range means something).
    pub(crate) fn narrows(&self) -> bool {
        self.evidence.iter().any(|e| !e.releases.is_empty())
    }

    /// Whether the game's files declare `method` (engine name, any case).
    pub(crate) fn uses_compression(&self, method: &str) -> bool {
        self.compression
            .iter()
            .any(|m| m.eq_ignore_ascii_case(method))
    }
}

/// One (fact, value) of evidence: the releases it allows and the files storing it.
type Piece = (Vec<EngineVersion>, Vec<String>);

/// The engine releases and compression of the game mounted in `view`,
/// from every source but those in `leave_out` (installed mods: they may
/// come from any tool and any release): every container's TOC and header
/// version, every pak's version, a `global.utoc` with script objects, every
/// method and block size they declare. Reads only TOCs (already read when
/// mounting) and container header chunks.
pub(crate) fn engine_facts(view: &GameView, leave_out: &[usize]) -> EngineFacts {
    let mut pieces: BTreeMap<(&'static str, String), Piece> = BTreeMap::new();
    let mut unknown = Vec::new();
    let mut compression = BTreeSet::new();
    let mut block_sizes = BTreeSet::new();
    let mut iostore = false;
    let mut add =
        |fact: &'static str, value: String, name: &str, allows: &dyn Fn(EngineVersion) -> bool| {
            let entry = pieces.entry((fact, value)).or_insert_with(|| {
                (
                    EngineVersion::ALL
                        .into_iter()
                        .filter(|&e| allows(e))
                        .collect(),
                    Vec::new(),
                )
            });
            entry.1.push(name.to_string());
        };
    for (index, source) in view.sources().iter().enumerate() {
        if leave_out.contains(&index) {
            continue;
        }
        let name = source.name();
        if let Some(container) = &source.container {
            iostore = true;
            let header = &container.toc.header;
            let toc = header.version;
            add("toc-version", (toc as u8).to_string(), name, &|e| {
                e.toc_version() == toc
            });
            let script_objects = (0..container.toc.chunk_ids.len())
                .any(|i| container.chunk_type(i) == ChunkType::ScriptObjects);
            if script_objects && name.eq_ignore_ascii_case("global.utoc") {
                add(
                    "script-objects",
                    "global.utoc holds a ScriptObjects chunk".into(),
                    name,
                    &|e| e.uses_ue5_chunk_types(),
                );
            }
            for method in &container.toc.compression_methods {
                if !method.is_empty() && !method.eq_ignore_ascii_case("none") {
                    compression.insert(method.clone());
                }
            }
            if !container.toc.blocks.is_empty() {
                block_sizes.insert(header.compression_block_size);
            }
            match view.container_header(index) {
                Ok(Some(container_header)) => {
                    let version = container_header.version;
                    add(
                        "container-header-version",
                        format!("{version:?}"),
                        name,
                        &|e| e.container_header_version() == version,
                    );
                    // 5.8's 8-byte shader map hashes share 5.6/5.7's
                    // header version; the store buffer's size tells them
                    // apart when some package has a shader map.
                    if let Some(layout) = container_header.shader_map_hash_layout {
                        add(
                            "shader-map-hash-size",
                            layout.element_size().to_string(),
                            name,
                            &|e| {
                                e.container_header_version() == version
                                    && e.shader_map_hash_layout() == layout
                            },
                        );
                    }
                }
                Ok(None) => {}
                Err(e) => unknown.push(format!(
                    "{name}: the container header does not read ({})",
                    e.message()
                )),
            }
        }
        if let Some(pak) = &source.pak {
            let version = pak.version;
            add("pak-version", version.name().to_string(), name, &|e| {
                e.pak_version() == version
            });
            for method in &pak.compression_methods {
                if !method.is_empty() && !method.eq_ignore_ascii_case("none") {
                    compression.insert(method.clone());
                }
            }
        }
    }
    let mut common: Option<BTreeSet<EngineVersion>> = None;
    let mut evidence = Vec::new();
    for ((fact, value), (releases, sources)) in pieces {
        if releases.is_empty() {
            unknown.push(format!(
                "{fact} {value} ({}) is written by no release zenpak knows",
                sources.join(", ")
            ));
        } else {
            let set: BTreeSet<EngineVersion> = releases.iter().copied().collect();
            common = Some(match common {
                None => set,
                Some(c) => c.intersection(&set).copied().collect(),
            });
        }
        evidence.push(EngineEvidence {
            fact,
            value,
            sources,
            releases,
        });
    }
    let engines: Vec<&'static str> = common
        .unwrap_or_default()
        .into_iter()
        .map(|e| e.as_str())
        .collect();
    if engines.is_empty() && evidence.iter().any(|e| !e.releases.is_empty()) {
        unknown.push(
            "the versions the game's files store allow no common release (files of different releases mixed?)"
                .into(),
        );
    }
    EngineFacts {
        engines,
        evidence,
        unknown,
        compression: compression.into_iter().collect(),
        block_sizes: block_sizes.into_iter().collect(),
        iostore,
    }
}

/// The engine releases the files of `view` allow, oldest first (empty: they
/// do not tell, or contradict each other), as `doctor` finds them; with the
/// game's `paks` folder, the mods installed in it are left out.
pub fn allowed_releases(view: &GameView, paks: Option<&std::path::Path>) -> Vec<EngineVersion> {
    let mods = paks.map_or_else(Vec::new, |paks| {
        super::conflicts::installed_mods(view, paks)
    });
    engine_facts(view, &mods).releases()
}
