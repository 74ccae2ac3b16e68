//! A game's `Paks/` folder (or one container, or one pak) as one view: every
//! `.pak` with its `.utoc`/`.ucas`, plus `global.utoc`, mounted in the
//! engine's order, so that a path or a chunk id resolves to the copy the
//! game itself would load. `list`, `verify`, `unpack`, `get` and `inspect`
//! read through it, and `extract` (Zen → legacy) builds on it.
//!
//! [`facts::engine_facts`] says which engine releases and compression methods the mounted files
//! allow (`check --game-dir` compares the mod's manifest with them).
//!
//! `GameView::open(path, &KeyRing)` takes a folder, a `.utoc` (with its `.pak`) or a `.pak` (with
//! its `.utoc`); companion names come from `iostore::{companion, container_file, container_stem}`
//! and a needed companion that is missing is an error naming it.
//!
//! The mount order, from the engine source (`IPlatformFilePak.cpp`/`.h` of UE 5.0,
//! `IoDispatcherFileBackend.cpp` of 5.x, `FilePackageStore.cpp` of 5.0 and later):
//!
//! * `global.utoc` is mounted first, with order 0 (`FPakPlatformFile::Initialize`);
//! * every `*.pak` under the folder (recursively, `~mods/` included) is
//!   mounted in **descending** order of its path as `FString`s compare (`Stricmp`: ASCII letters
//!   lowercased, other characters by code unit; `MountAllPakFiles`:
//!   `FoundPakFiles.Sort(TGreater<FString>())`), with
//!   the order `GetPakOrderFromPakFilePath` gives (4 for
//!   `Content/Paks/<Project>-*.pak`, the project being the folder above `Content`; 3 for the rest of
//!   the project's content; 2 engine, 1 saved dir), plus, for a name ending in `_P.pak`,
//!   `100 × (N + 1)` when the part between its last two underscores is a number N ≥ 1, else 100
//!   (`FPakPlatformFile::Mount`: `X_P` +100, `X_1_P` +200, `X_3_P` +400);
//! * its `.utoc` (if any) is mounted with the same order; a `.utoc` without a `.pak` is not mounted
//!   by the engine and is left out with a `container-without-pak` warning;
//! * a **file** of the paks resolves to the pak with the highest order,
//!   and among equal orders to the one mounted first (the pak list is
//!   stable-sorted by descending order);
//! * a **chunk** resolves to the container with the highest order, and
//!   among equal orders to the one mounted last (IoStore readers are
//!   sorted by descending order, then descending container instance id,
//!   which grows with each mount); package store entries follow the same
//!   rule from 5.2 (`FFilePackageStoreBackend::Mount`; 5.0/5.1 sorted ascending and kept the first).
//!
//! [`GameView::open_game`] is how the game readers open a game's folder: symbolic links are followed
//! (files and folders, `Paks` and `~mods` themselves included) as the game follows them, a pak or
//! container that does not read is named (`source-unreadable`) and left out while the rest is read,
//! a mod named is mounted where `install` puts it, and two containers with one container id (a
//! renamed copy) are flagged (`same-container-id`): the engine takes them for one container.
//!
//! The order is computed from the file names alone by [`FolderPlan`] (also used by the mount-order
//! checks of `install`, which must not open the game's encrypted paks). Every copy that loses is
//! kept as a [`ShadowedCopy`] naming the copy that wins it, so [`conflicts`] reports who provides
//! what and who wins without a second copy of the rule.
//!
//! So `~mods/Mod_P.pak` (order 103, mounted before `pakchunk0-Windows_P.pak`) wins a pak file against
//! the game's patch pak of the same order, while the patch container wins a chunk: the engine's own
//! asymmetry, pinned by `tests/containers/iostore_game_folder.rs`.
//!
//! View paths are the mount point joined with the stored path, leading `../` removed
//! (`crate::mount::virtual_path`). `--filter` patterns match them in zenpak's one glob dialect
//! (`crate::glob`).

pub mod conflicts;
pub mod doctor;
pub mod facts;
pub mod folder;
pub mod mount_order;

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::diagnostic::Diagnostic;
use crate::error::{Error, ErrorKind, Result};
use crate::iostore::chunk::{ChunkId, ChunkType};
use crate::iostore::container_header::ContainerHeader;
use crate::iostore::reader::{refuse_layout, verify_pak_entries, VerifyReport};
use crate::iostore::{companion, Container};
use crate::pak::crypto::KeyRing;
use crate::pak::PakReader;

use mount_order::{pak_order, FolderPlan, PROJECT_CONTENT_ORDER};

/// One mounted pak and/or container.
pub struct MountedSource {
    /// The `.pak` (or the `.utoc` of a container without one, e.g. `global.utoc`).
    pub(crate) path: PathBuf,
    /// Its file name, for messages.
    name: String,
    /// The engine's read order (higher wins).
    pub order: u32,
    /// Position in the engine's mount sequence (0 is mounted first).
    pub(crate) sequence: usize,
    pub(crate) pak: Option<PakReader>,
    pub(crate) container: Option<Container>,
}

impl MountedSource {
    /// The file name, for messages.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The `.pak` (or the `.utoc` of a container without one).
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// A chunk of one of the view's containers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct ChunkRef {
    /// Index into [`GameView::sources`].
    pub(crate) source: usize,
    /// TOC index in that source's container.
    pub(crate) index: usize,
}

/// Where a file of the view comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum FileOrigin {
    /// A container chunk (with or without a directory-index path).
    Chunk(ChunkRef),
    /// A pak entry: source, index into the pak's `entries`.
    PakEntry { source: usize, entry: usize },
}

/// Whether `error`, opening the pak and/or container, comes from their
/// encryption: no key for it, or a key that does not open an encrypted
/// pak index or container (the headers, never encrypted, say which).
fn is_locked(error: &Error, pak: Option<&Path>, utoc: Option<&Path>) -> bool {
    if matches!(error.kind(), ErrorKind::Key(_)) {
        return true;
    }
    let encrypted_container = utoc.is_some_and(|u| {
        crate::iostore::toc::Toc::read_file(u).is_ok_and(|toc| {
            toc.header.container_flags & crate::iostore::toc::container_flags::ENCRYPTED != 0
        })
    });
    let encrypted_pak = pak.is_some_and(|p| {
        crate::pak::index::PakFooter::read_file(p).is_ok_and(|footer| footer.encrypted_index)
    });
    encrypted_container || encrypted_pak
}

impl FileOrigin {
    /// Index into [`GameView::sources`] of the pak or container it is in.
    pub(crate) fn source(&self) -> usize {
        match *self {
            FileOrigin::Chunk(chunk) => chunk.source,
            FileOrigin::PakEntry { source, .. } => source,
        }
    }
}

/// A copy the engine does not read because a higher-priority source
/// provides the same chunk (by id) or pak file (by path).
#[derive(Debug, Clone)]
pub struct ShadowedCopy<'a> {
    /// The view path of the hidden copy.
    pub(crate) path: Cow<'a, str>,
    /// The file name of the source it is in.
    pub(crate) source: &'a str,
    /// The hidden copy.
    pub(crate) origin: FileOrigin,
    /// The copy that is read instead.
    pub(crate) winner: FileOrigin,
}

/// A hidden copy as the view keeps it: its path and source are looked up
/// when asked for ([`GameView::shadowed`]).
#[derive(Debug, Clone, Copy)]
struct Shadowed {
    origin: Packed,
    winner: Packed,
}

/// A file of the view: what `unpack` writes, what `get` finds. Made when
/// asked for from the view's compact records ([`GameView::files`]), its
/// strings borrowed from the containers and paks.
#[derive(Debug, Clone, Serialize)]
pub struct GameFile<'a> {
    /// The path `unpack` writes it at: its mount point + path with the
    /// leading `../../../` removed (`Game/Content/Maps/Entry.uzenmap`), or
    /// `_chunks/<id>.<type>` for a chunk without a path.
    pub path: Cow<'a, str>,
    /// The path as stored (mount point + relative path), if it has one.
    pub stored_path: Option<&'a str>,
    /// `pak` for a pak entry, else the chunk type.
    pub kind: Cow<'static, str>,
    pub size: u64,
    /// The pak or container it comes from.
    pub source: &'a str,
    /// A chunk of an on-demand container whose data is not in the local
    /// `.ucas` (it cannot be read here; see `iostore::reader`).
    pub remote: bool,
    #[serde(skip)]
    pub(crate) origin: FileOrigin,
}

/// A copy (a chunk or a pak entry) in 8 bytes, as the view keeps one
/// for every file, every winner by id and every hidden copy: its source,
/// the top bit set for a pak entry, and its TOC or entry index (both
/// counts are `u32` in the files). A chunk's path is made from its
/// container's directory index or its id when asked for, so a file costs
/// a few dozen bytes however many a container lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Packed {
    source: u32,
    index: u32,
}

/// [`Packed::source`]'s bit for a pak entry.
const PAK_ENTRY: u32 = 1 << 31;

impl Packed {
    fn of(origin: FileOrigin) -> Self {
        match origin {
            FileOrigin::Chunk(c) => Packed {
                source: c.source as u32,
                index: c.index as u32,
            },
            FileOrigin::PakEntry { source, entry } => Packed {
                source: source as u32 | PAK_ENTRY,
                index: entry as u32,
            },
        }
    }

    fn origin(self) -> FileOrigin {
        let source = (self.source & !PAK_ENTRY) as usize;
        let index = self.index as usize;
        if self.source & PAK_ENTRY != 0 {
            FileOrigin::PakEntry {
                source,
                entry: index,
            }
        } else {
            FileOrigin::Chunk(ChunkRef { source, index })
        }
    }

    /// The chunk of a chunk's record.
    fn chunk(self) -> ChunkRef {
        ChunkRef {
            source: self.source as usize,
            index: self.index as usize,
        }
    }
}

/// A view path in up to three pieces, compared and lowercased without
/// being put together: a chunk's stored path (or its stem and the Zen
/// extension), `_chunks/` and the id and type of a chunk without one, or a
/// pak entry's path.
struct ViewName<'a> {
    head: &'a str,
    /// ASCII: the id in hex, a dot and the type of a chunk without a path.
    buf: [u8; 48],
    buf_len: usize,
    tail: &'static str,
    /// The chunk id, when the name is `_chunks/<id>.<type>`: such names
    /// compare as their ids do (the hex digits keep the bytes' order).
    id: Option<ChunkId>,
}

impl<'a> ViewName<'a> {
    fn whole(path: &'a str) -> Self {
        ViewName {
            head: path,
            buf: [0; 48],
            buf_len: 0,
            tail: "",
            id: None,
        }
    }

    /// How `unpack` names a chunk's file: its directory-index path, except
    /// that a package chunk (`ExportBundleData`) is a Zen package, not a
    /// legacy `.uasset`/`.umap`, so it gets `.uzenasset`/`.uzenmap` (the
    /// names the engine's tools and the corpus use for Zen packages);
    /// chunks without a path go to `_chunks/<id>.<type>`.
    fn of_chunk(stored: Option<&'a str>, chunk_type: ChunkType, id: &ChunkId) -> Self {
        match stored {
            Some(p) if chunk_type == ChunkType::ExportBundleData => {
                for (from, to) in [(".uasset", ".uzenasset"), (".umap", ".uzenmap")] {
                    if let Some(stem) = p.strip_suffix(from) {
                        return ViewName {
                            tail: to,
                            ..ViewName::whole(stem)
                        };
                    }
                }
                ViewName::whole(p)
            }
            Some(p) => ViewName::whole(p),
            None => {
                const DIGITS: &[u8; 16] = b"0123456789abcdef";
                let mut name = ViewName {
                    id: Some(*id),
                    ..ViewName::whole("_chunks/")
                };
                for (i, byte) in id.0.iter().enumerate() {
                    name.buf[2 * i] = DIGITS[usize::from(byte >> 4)];
                    name.buf[2 * i + 1] = DIGITS[usize::from(byte & 0xf)];
                }
                name.buf[24] = b'.';
                let kind = kind_name(chunk_type);
                let len = kind.len().min(name.buf.len() - 25);
                name.buf[25..25 + len].copy_from_slice(&kind.as_bytes()[..len]);
                name.buf_len = 25 + len;
                name
            }
        }
    }

    fn bytes(&self) -> impl Iterator<Item = u8> + '_ {
        self.head
            .bytes()
            .chain(self.buf[..self.buf_len].iter().copied())
            .chain(self.tail.bytes())
    }

    /// The order of the view's files: the paths' bytes, ASCII letters lowercased.
    fn cmp_folded(&self, other: &ViewName) -> std::cmp::Ordering {
        if let (Some(a), Some(b)) = (self.id, other.id) {
            return a.cmp(&b);
        }
        let fold = |b: u8| b.to_ascii_lowercase();
        self.bytes().map(fold).cmp(other.bytes().map(fold))
    }

    fn eq_ignore_ascii_case(&self, text: &str) -> bool {
        self.head.len() + self.buf_len + self.tail.len() == text.len()
            && self
                .bytes()
                .zip(text.bytes())
                .all(|(a, b)| a.eq_ignore_ascii_case(&b))
    }

    fn into_cow(self) -> Cow<'a, str> {
        if self.buf_len == 0 && self.tail.is_empty() {
            return Cow::Borrowed(self.head);
        }
        let mut text = String::with_capacity(self.head.len() + self.buf_len + self.tail.len());
        text.push_str(self.head);
        // The buffer holds ASCII only (hex digits, a dot, a type name).
        text.extend(self.buf[..self.buf_len].iter().map(|&b| b as char));
        text.push_str(self.tail);
        Cow::Owned(text)
    }
}

/// A chunk type as `list` names it (its `Debug` form).
fn kind_name(chunk_type: ChunkType) -> Cow<'static, str> {
    use ChunkType::*;
    Cow::Borrowed(match chunk_type {
        Invalid => "Invalid",
        InstallManifest => "InstallManifest",
        ExportBundleData => "ExportBundleData",
        BulkData => "BulkData",
        OptionalBulkData => "OptionalBulkData",
        MemoryMappedBulkData => "MemoryMappedBulkData",
        LoaderGlobalMeta => "LoaderGlobalMeta",
        LoaderInitialLoadMeta => "LoaderInitialLoadMeta",
        LoaderGlobalNames => "LoaderGlobalNames",
        LoaderGlobalNameHashes => "LoaderGlobalNameHashes",
        ScriptObjects => "ScriptObjects",
        ContainerHeader => "ContainerHeader",
        ExternalFile => "ExternalFile",
        ShaderCodeLibrary => "ShaderCodeLibrary",
        ShaderCode => "ShaderCode",
        PackageStoreEntry => "PackageStoreEntry",
        DerivedData => "DerivedData",
        EditorDerivedData => "EditorDerivedData",
        PackageResource => "PackageResource",
        Unknown(_) => return Cow::Owned(format!("{chunk_type:?}")),
    })
}

/// The length of file `path`.
fn file_len(path: &Path) -> Result<u64> {
    Ok(std::fs::metadata(path)
        .map_err(|e| Error::io(path, e))?
        .len())
}

/// The view path of a pak entry's record, from the arena of them and
/// where each source's entries start in it.
fn pak_path_in<'a>(paths: &'a crate::arena::Arena, base: &[u32], record: Packed) -> &'a str {
    let FileOrigin::PakEntry { source, entry } = record.origin() else {
        return "";
    };
    let bytes = paths.get(base[source] as usize + entry).unwrap_or_default();
    // Pushed from `String`s: UTF-8.
    std::str::from_utf8(bytes).unwrap_or_default()
}

/// The view path of a chunk (see [`ViewName::of_chunk`]).
fn chunk_name(sources: &[MountedSource], chunk: ChunkRef) -> ViewName<'_> {
    let container = sources[chunk.source]
        .container
        .as_ref()
        .expect("chunk references always point at containers");
    let stored = container.paths.get(chunk.index);
    ViewName::of_chunk(
        stored,
        container.chunk_type(chunk.index),
        &container.toc.chunk_ids[chunk.index],
    )
}

/// A package of the view: a winning `ExportBundleData` chunk.
#[derive(Debug, Clone)]
pub struct PackageChunk {
    pub(crate) package_id: u64,
    /// Stored path (mount point + relative, `../../../` removed), when indexed.
    pub path: Option<String>,
    pub(crate) chunk: ChunkRef,
}

/// What `unpack` did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct UnpackSummary {
    pub files: usize,
    pub bytes: u64,
    pub(crate) output: String,
    /// Files not written: remote chunks of on-demand containers.
    pub remote: Vec<String>,
}

/// What `inspect` shows of a view: each source in mount sequence with its
/// order, and the totals.
#[derive(Debug, Clone, Serialize)]
pub struct ViewSummary {
    pub kind: &'static str,
    pub sources: Vec<SourceSummary>,
    pub files: usize,
    pub packages: usize,
    pub shadowed: usize,
    pub diagnostics: Vec<Diagnostic>,
}

/// One mounted source in a [`ViewSummary`].
#[derive(Debug, Clone, Serialize)]
pub struct SourceSummary {
    pub path: String,
    pub order: u32,
    pub sequence: usize,
    pub pak_version: Option<String>,
    pub pak_entries: usize,
    pub container_chunks: Option<usize>,
    pub(crate) mount_point: String,
    pub encrypted: bool,
}

/// A mounted game folder, container or pak.
pub struct GameView {
    sources: Vec<MountedSource>,
    /// Every chunk id with its winning copy, sorted by id.
    chunks: Vec<(ChunkId, Packed)>,
    /// Every file the game sees, sorted by view path (ASCII case folded):
    /// sorted when first asked for (`verify`, `conflicts` never ask).
    files: std::sync::OnceLock<Vec<Packed>>,
    /// The winning copy of each pak path, sorted by it.
    pak_files: Vec<Packed>,
    /// Where each source's pak entries start in `pak_paths`.
    pak_base: Vec<u32>,
    /// Each source's place in the engine's priority for chunks.
    chunk_rank: Vec<usize>,
    /// The view path of every pak entry (see `pak_base`).
    pak_paths: crate::arena::Arena,
    /// Copies hidden by a higher-priority one, in the order of the
    /// engine's priority (for one chunk or path: the best loser first).
    shadowed: Vec<Shadowed>,
    /// What the view noticed while mounting (e.g. a `.utoc` without its `.pak`).
    pub diagnostics: Vec<Diagnostic>,
    /// Canonical path of each mounted source → its index.
    mounted: BTreeMap<PathBuf, usize>,
    /// Whether a source that needs a key not given is left out (`locked`)
    /// instead of failing the open.
    skip_locked: bool,
    locked: Vec<LockedSource>,
    /// Whether a pak or container of a folder that does not read is
    /// reported and left out ([`GameView::open_game`]) instead of failing
    /// the open.
    keep_going: bool,
    /// How many were left out so.
    unreadable: usize,
    /// Bytes of the `.utoc` files mounted and of their chunks' paths,
    /// against [`MAX_VIEW_TABLE_BYTES`](crate::limits::MAX_VIEW_TABLE_BYTES).
    table_bytes: u64,
}

/// A pak or container left out of a view opened with
/// [`GameView::open_game_with`]: encrypted with a key not given.
#[derive(Debug, Clone)]
pub(crate) struct LockedSource {
    /// The `.pak` (or `.utoc`).
    pub(crate) path: PathBuf,
    /// The order it would have been mounted with.
    pub(crate) order: u32,
    /// Why it could not be opened.
    pub(crate) error: Error,
    /// A key was given for it but does not open it (else none was given).
    pub(crate) wrong_key: bool,
}

pub(crate) use crate::mount::virtual_path;

impl GameView {
    /// Opens `path`: a folder (every `.pak` below it and their containers,
    /// plus `global.utoc`), a `.utoc` (with its companion `.pak` if present)
    /// or a `.pak` (with its `.utoc` if present).
    pub fn open(path: &Path, keys: &KeyRing) -> Result<Self> {
        Ok(Self::open_all(&[path.to_path_buf()], keys)?.0)
    }

    /// Opens several folders, containers or paks as one view, mounted in
    /// the order given (a game's `Paks/` folder first, then a mod's
    /// container, as the engine mounts `~mods` after the base game). A pak
    /// or container named twice (a mod inside the game folder, also named
    /// on its own) is mounted once. Returns, for each path, the sources it
    /// stands for.
    pub fn open_all(paths: &[PathBuf], keys: &KeyRing) -> Result<(Self, Vec<Vec<usize>>)> {
        Self::open_all_with(paths, keys, false)
    }

    /// The sources left out by [`open_game_with`](Self::open_game_with).
    pub(crate) fn locked(&self) -> &[LockedSource] {
        &self.locked
    }

    fn open_all_with(
        paths: &[PathBuf],
        keys: &KeyRing,
        skip_locked: bool,
    ) -> Result<(Self, Vec<Vec<usize>>)> {
        let mut view = GameView::empty(skip_locked, false);
        let mut mounted = Vec::new();
        for path in paths {
            let mut named = Vec::new();
            view.add(path, keys, &mut named)?;
            mounted.push(named);
        }
        view.finish();
        Ok((view, mounted))
    }

    /// Opens a game's `Paks/` folder as the game readers (`doctor`,
    /// `conflicts`, `check`/`build`/`extract --game-dir`) do: a pak or
    /// container of it that does not read is named in a `source-unreadable`
    /// error diagnostic and left out, the rest is read, and
    /// [`unreadable_error`](Self::unreadable_error) ends the command as a
    /// failure. `mods` (built mods, or folders of them) are mounted where
    /// `install` puts them, `~mods/<file name>`, in the engine's order
    /// there (a mod already inside the game folder stays where it is).
    /// Returns, for each of `mods`, the sources it stands for.
    pub fn open_game(
        paks: &Path,
        mods: &[PathBuf],
        keys: &KeyRing,
    ) -> Result<(Self, Vec<Vec<usize>>)> {
        Self::open_game_with(paks, mods, &[], keys, false)
    }

    /// The game's own paks and containers with the one mod `path` (a built
    /// mod or a folder of them) mounted where `install` puts it, and every
    /// other mod of the game's mod folders left out: the game as the mod
    /// alone sees it (`merge` and `conflicts` read each mod's own copy of
    /// a package several mods have). Returns the sources `path` stands for.
    pub fn open_game_with_mod(
        paks: &Path,
        path: &Path,
        keys: &KeyRing,
    ) -> Result<(Self, Vec<usize>)> {
        let canonical = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
        let own = canonical(path);
        let own_pak = canonical(&companion(path, "pak"));
        let leave_out: Vec<PathBuf> = FolderPlan::of(paks)?
            .paks
            .into_iter()
            .filter(|p| {
                let first = p.rel.split('/').next().unwrap_or_default();
                let in_mods = p.rel.contains('/')
                    && conflicts::MOD_FOLDERS
                        .iter()
                        .any(|m| m.eq_ignore_ascii_case(first));
                let pak = canonical(&p.path);
                in_mods && pak != own_pak && !(path.is_dir() && pak.starts_with(&own))
            })
            .map(|p| p.path)
            .collect();
        let (view, named) =
            Self::open_game_with(paks, &[path.to_path_buf()], &leave_out, keys, false)?;
        Ok((view, named.into_iter().next().unwrap_or_default()))
    }

    /// [`open_game`](Self::open_game), leaving out the paks `leave_out`
    /// (the files an install replaces), and with `skip_locked` a source
    /// that needs a key not given is left out and listed in
    /// [`locked`](Self::locked) (what `doctor` reports on).
    pub(crate) fn open_game_with(
        paks: &Path,
        mods: &[PathBuf],
        leave_out: &[PathBuf],
        keys: &KeyRing,
        skip_locked: bool,
    ) -> Result<(Self, Vec<Vec<usize>>)> {
        let mut view = GameView::empty(skip_locked, true);
        let mut plan = FolderPlan::of(paks)?;
        plan.leave_out(leave_out);
        let inside_game = |pak: &Path| {
            let root = paks.canonicalize().ok();
            let pak = pak.canonicalize().ok();
            matches!((root, pak), (Some(r), Some(p)) if p.starts_with(&r))
        };
        // Each mod's paks (placed in the plan), or itself when it has none
        // (a `.utoc` alone: mounted after the game, as given).
        let mut mod_paks: Vec<Result<Vec<PathBuf>, PathBuf>> = Vec::new();
        for path in mods {
            let paks_of: Vec<PathBuf> = if path.is_dir() {
                FolderPlan::of(path)?
                    .paks
                    .into_iter()
                    .map(|p| p.path)
                    .collect()
            } else {
                let pak = companion(path, "pak");
                if pak.is_file() {
                    vec![pak]
                } else {
                    Vec::new()
                }
            };
            if paks_of.is_empty() {
                mod_paks.push(Err(path.clone()));
                continue;
            }
            for pak in paks_of.iter().filter(|p| !inside_game(p)) {
                plan.place_in_mods(pak);
            }
            mod_paks.push(Ok(paks_of));
        }
        let mut game = Vec::new();
        view.mount_plan(paks, plan, keys, &mut game)?;
        let mut named = Vec::new();
        for paks_of in mod_paks {
            let mut sources = Vec::new();
            match paks_of {
                Ok(paks_of) => {
                    for pak in paks_of {
                        let canonical = pak.canonicalize().unwrap_or(pak);
                        sources.extend(view.mounted.get(&canonical).copied());
                    }
                }
                Err(path) => view.add(&path, keys, &mut sources)?,
            }
            named.push(sources);
        }
        view.finish();
        Ok((view, named))
    }

    fn empty(skip_locked: bool, keep_going: bool) -> Self {
        GameView {
            skip_locked,
            keep_going,
            unreadable: 0,
            table_bytes: 0,
            locked: Vec::new(),
            sources: Vec::new(),
            chunks: Vec::new(),
            files: Default::default(),
            pak_files: Vec::new(),
            pak_base: Vec::new(),
            chunk_rank: Vec::new(),
            pak_paths: Default::default(),
            shadowed: Vec::new(),
            diagnostics: Vec::new(),
            mounted: BTreeMap::new(),
        }
    }

    /// Once every source is mounted: who wins what, and shared container ids.
    fn finish(&mut self) {
        self.resolve();
        self.flag_shared_container_ids();
    }

    /// The error that ends a game reader whose view left out sources that
    /// do not read (each named by its own diagnostic), if any did.
    pub fn unreadable_error(&self) -> Option<Error> {
        (self.unreadable > 0).then(|| {
            Error::invalid(format!(
                "{} of the game's paks and containers could not be read and were left out (each is named above); the rest was read",
                self.unreadable
            ))
        })
    }

    /// Mounts one folder, container or pak; pushes the sources it stands for.
    fn add(&mut self, path: &Path, keys: &KeyRing, named: &mut Vec<usize>) -> Result<()> {
        if path.is_dir() {
            return self.mount_folder(path, keys, named);
        }
        let ext = path
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase())
            .unwrap_or_default();
        if ext != "utoc" && ext != "pak" && ext != "ucas" {
            return Err(Error::usage(format!(
                "{}: expected a .utoc, a .pak or a folder of them",
                path.display()
            )));
        }
        // The companions: the same file name, only the last extension
        // replaced (`Mod.v2.pak` → `Mod.v2.utoc`).
        let pak = companion(path, "pak");
        let utoc = companion(path, "utoc");
        if !path.exists() {
            return Err(Error::io(
                path,
                std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"),
            ));
        }
        // Regular files only: a FIFO or a device named `.utoc` or `.pak` is
        // refused, not read as empty or skipped.
        for file in [path, &pak, &utoc] {
            if file.exists() {
                crate::limits::open_regular(file)?;
            }
        }
        // A `.ucas` is read through its `.utoc`; the `.utoc` must be there.
        if ext == "ucas" && !utoc.is_file() {
            return Err(Error::io(
                &utoc,
                std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    "the container's table of contents (.utoc) beside the .ucas is missing",
                ),
            )
            .with_hint("give the .utoc, or put it back beside the .ucas"));
        }
        let name = pak
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let source = self.mount(
            if pak.is_file() { &pak } else { &utoc },
            pak.is_file().then_some(pak.as_path()),
            utoc.is_file().then_some(utoc.as_path()),
            pak_order(PROJECT_CONTENT_ORDER, &name),
            keys,
        )?;
        named.extend(source);
        Ok(())
    }

    fn mount_folder(&mut self, root: &Path, keys: &KeyRing, named: &mut Vec<usize>) -> Result<()> {
        let plan = FolderPlan::of(root)?;
        self.mount_plan(root, plan, keys, named)
    }

    /// Mounts what `plan` (of the folder `root`) says, in its order.
    fn mount_plan(
        &mut self,
        root: &Path,
        plan: FolderPlan,
        keys: &KeyRing,
        named: &mut Vec<usize>,
    ) -> Result<()> {
        self.diagnostics.extend(plan.notes);
        for problem in plan.problems {
            self.unreadable(problem)?;
        }
        if let Some(utoc) = &plan.global {
            let mounted = self.mount(utoc, None, Some(utoc), 0, keys);
            named.extend(self.kept_going(mounted)?);
        }
        for planned in &plan.paks {
            let pak = &planned.path;
            let utoc = companion(pak, "utoc");
            let mounted = self.mount(
                pak,
                Some(pak),
                utoc.is_file().then_some(utoc.as_path()),
                planned.order,
                keys,
            );
            named.extend(self.kept_going(mounted)?);
        }
        for (rel, utoc) in &plan.tocs_without_pak {
            self.diagnostics.push(
                Diagnostic::warning(
                    "container-without-pak",
                    format!("`{rel}` has no .pak beside it; the engine does not mount it, so it is left out"),
                )
                .with_file(utoc),
            );
        }
        if named.is_empty() && (!self.locked.is_empty() || self.unreadable > 0) {
            return Ok(());
        }
        if named.is_empty() && !plan.tocs_without_pak.is_empty() {
            return Err(Error::usage(format!(
                "{}: the folder's .utoc files have no .pak beside them, so the engine mounts none of them",
                root.display()
            ))
            .with_hint("copy each container's .pak beside its .utoc, or give the .utoc itself"));
        }
        if named.is_empty() {
            return Err(Error::usage(format!(
                "{}: no .pak or .utoc files in this folder",
                root.display()
            ))
            .with_hint("give a game's Content/Paks folder, a .utoc or a .pak"));
        }
        Ok(())
    }

    /// A source of a folder that could not be mounted: in a view that keeps
    /// going, an error diagnostic naming it (the rest is read, and
    /// [`unreadable_error`](Self::unreadable_error) ends the command as a
    /// failure); else the error itself.
    fn unreadable(&mut self, error: Error) -> Result<()> {
        if !self.keep_going {
            return Err(error);
        }
        self.unreadable += 1;
        let mut diagnostic = Diagnostic::of(&error);
        diagnostic.code = "source-unreadable".into();
        diagnostic.message = format!(
            "{}; this pak or container is left out and the rest of the game is read",
            diagnostic.message
        );
        if diagnostic.hint.is_none() {
            diagnostic.hint = Some(
                "replace the file with a good copy (verify the game's files in its launcher), or remove it if it is a mod"
                    .into(),
            );
        }
        self.diagnostics.push(diagnostic);
        Ok(())
    }

    /// [`mount`](Self::mount)'s result, an error kept going past when the view does.
    fn kept_going(&mut self, mounted: Result<Option<usize>>) -> Result<Option<usize>> {
        match mounted {
            Ok(source) => Ok(source),
            Err(error) => self.unreadable(error).map(|()| None),
        }
    }

    /// Once every source is mounted: two containers with one container id
    /// (a renamed copy keeps the id of the name it was built under), which
    /// the engine takes for one container, so one of them is not loaded.
    fn flag_shared_container_ids(&mut self) {
        let mut seen: BTreeMap<u64, usize> = BTreeMap::new();
        for (s, source) in self.sources.iter().enumerate() {
            let Some(container) = &source.container else {
                continue;
            };
            let id = container.toc.header.container_id;
            let Some(&first) = seen.get(&id) else {
                seen.insert(id, s);
                continue;
            };
            let first = self.sources[first]
                .container
                .as_ref()
                .map(|c| c.utoc_path.clone())
                .unwrap_or_default();
            // One file mounted twice (`global.utoc`, and a `global.pak`
            // beside it) is not two containers.
            if first == container.utoc_path {
                continue;
            }
            self.diagnostics.push(
                Diagnostic::warning(
                    "same-container-id",
                    format!(
                        "{} and {} have one container id, {id:#018x}: the engine treats the two as one container, so one of them is not loaded",
                        crate::diagnostic::path_text(&first),
                        crate::diagnostic::path_text(&container.utoc_path),
                    ),
                )
                .with_file(&container.utoc_path)
                .with_hint("remove one of them (a renamed copy keeps the container id of the name it was built under; rebuild it under the new name instead)"),
            );
        }
    }

    /// Mounts a pak and/or container, unless the same files are mounted
    /// already; returns its source index (`None` when it is locked and
    /// the view skips locked sources).
    fn mount(
        &mut self,
        path: &Path,
        pak: Option<&Path>,
        utoc: Option<&Path>,
        order: u32,
        keys: &KeyRing,
    ) -> Result<Option<usize>> {
        let canonical = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        if let Some(&existing) = self.mounted.get(&canonical) {
            return Ok(Some(existing));
        }
        // The TOC's bytes before it is read, with its paths once they are.
        let toc_len = match utoc {
            Some(u) => self.check_tables(u, file_len(u)?)?,
            None => 0,
        };
        let opened = pak
            .map(|p| PakReader::open_with_keys(p, keys))
            .transpose()
            .and_then(|pak| {
                let container = utoc
                    .map(|u| Container::open_with_keys(u, keys))
                    .transpose()?;
                Ok((pak, container))
            });
        let (pak, container) = match opened {
            Ok(opened) => opened,
            Err(error) if self.skip_locked && is_locked(&error, pak, utoc) => {
                self.locked.push(LockedSource {
                    path: path.to_path_buf(),
                    order,
                    wrong_key: !matches!(error.kind(), ErrorKind::Key(_)),
                    error,
                });
                return Ok(None);
            }
            Err(error) => return Err(error),
        };
        if let (Some(u), Some(c)) = (utoc, &container) {
            self.check_tables(u, toc_len + c.paths.memory())?;
        }
        // Names listed twice or unreachable: every reader hears of them.
        self.diagnostics
            .extend(pak.iter().flat_map(PakReader::index_warnings));
        self.diagnostics
            .extend(container.iter().flat_map(Container::index_warnings));
        self.table_bytes += toc_len + container.as_ref().map_or(0, |c| c.paths.memory());
        self.mounted.insert(canonical, self.sources.len());
        self.sources.push(MountedSource {
            name: path
                .file_name()
                .map(|n| crate::diagnostic::path_text(Path::new(n)))
                .unwrap_or_default(),
            path: path.to_path_buf(),
            order,
            sequence: self.sources.len(),
            pak,
            container,
        });
        Ok(Some(self.sources.len() - 1))
    }

    /// `bytes` (of `utoc`'s TOC, or of it and its chunks' paths), when
    /// the view's tables stay within
    /// [`MAX_VIEW_TABLE_BYTES`](crate::limits::MAX_VIEW_TABLE_BYTES) with
    /// them: checked before the TOC is read and again once its paths are,
    /// so a game of many large TOCs is refused container by container, not
    /// read whole. (A `.utoc` over the budget of one TOC is left to
    /// `Toc::read_file`, which says so.)
    fn check_tables(&self, utoc: &Path, bytes: u64) -> Result<u64> {
        use crate::limits::{MAX_TOC_BYTES, MAX_VIEW_TABLE_BYTES};
        let total = self.table_bytes.saturating_add(bytes);
        if total > MAX_VIEW_TABLE_BYTES && file_len(utoc)? <= MAX_TOC_BYTES {
            return Err(Error::limit(
                "the size of the game's .utoc files and their paths read together, this one's included,",
                total,
                MAX_VIEW_TABLE_BYTES,
            )
            .in_file(utoc)
            .with_hint("the game's containers together list more chunks than zenpak reads at once (real games stay far below): read this container on its own (`zenpak list` or `verify` of its .utoc)"));
        }
        Ok(bytes)
    }

    /// Decides which copy of each chunk and file wins. What is kept is
    /// compact ([`Packed`], [`Shadowed`]): a chunk's path is not made
    /// until it is asked for.
    fn resolve(&mut self) {
        // Chunks: highest order, then the last mounted.
        let mut by_chunk_priority: Vec<usize> = (0..self.sources.len()).collect();
        by_chunk_priority.sort_by_key(|&s| {
            (
                std::cmp::Reverse(self.sources[s].order),
                std::cmp::Reverse(s),
            )
        });
        // Pak files: highest order, then the first mounted.
        let mut by_file_priority: Vec<usize> = (0..self.sources.len()).collect();
        by_file_priority.sort_by_key(|&s| (std::cmp::Reverse(self.sources[s].order), s));
        let rank = |priority: &[usize]| {
            let mut rank = vec![0usize; priority.len()];
            for (r, &s) in priority.iter().enumerate() {
                rank[s] = r;
            }
            rank
        };
        let (chunk_rank, file_rank) = (rank(&by_chunk_priority), rank(&by_file_priority));
        // The place of a copy in the engine's priority: of its source, then
        // of the copy in its TOC or pak index.
        let place = |origin: &FileOrigin| match *origin {
            FileOrigin::Chunk(c) => (chunk_rank[c.source], c.index),
            FileOrigin::PakEntry { source, entry } => (file_rank[source], entry),
        };

        // Each id's copies in priority order: the first wins.
        let mut chunks: Vec<(ChunkId, Packed)> = Vec::with_capacity(
            self.sources
                .iter()
                .filter_map(|s| s.container.as_ref())
                .map(|c| c.toc.chunk_ids.len())
                .sum(),
        );
        for (s, source) in self.sources.iter().enumerate() {
            if let Some(container) = &source.container {
                let ids = container.toc.chunk_ids.iter().enumerate();
                chunks.extend(ids.map(|(index, &id)| {
                    (
                        id,
                        Packed::of(FileOrigin::Chunk(ChunkRef { source: s, index })),
                    )
                }));
            }
        }
        chunks.sort_unstable_by_key(|&(id, c)| (id, chunk_rank[c.source as usize], c.index));
        let mut shadowed_chunks = Vec::new();
        chunks.dedup_by(|later, first| {
            let same = later.0 == first.0;
            if same {
                shadowed_chunks.push(Shadowed {
                    origin: later.1,
                    winner: first.1,
                });
            }
            same
        });
        chunks.shrink_to_fit();
        shadowed_chunks.sort_unstable_by_key(|c| place(&c.origin.origin()));

        // Each pak path's copies in priority order: the first wins.
        let mut pak_paths = crate::arena::Arena::default();
        let mut pak_files: Vec<Packed> = Vec::new();
        let mut pak_base = vec![0u32; self.sources.len()];
        for &s in &by_file_priority {
            let Some(pak) = &self.sources[s].pak else {
                continue;
            };
            pak_base[s] = pak_paths.len() as u32;
            for (entry, info) in pak.entries.iter().enumerate() {
                let path = virtual_path(&pak.mount_point, &info.path);
                pak_files.push(Packed::of(FileOrigin::PakEntry { source: s, entry }));
                pak_paths.push(path.as_bytes());
            }
        }
        let pak_name =
            |record: &Packed| ViewName::whole(pak_path_in(&pak_paths, &pak_base, *record));
        pak_files.sort_by(|a, b| {
            pak_name(a)
                .cmp_folded(&pak_name(b))
                .then_with(|| place(&a.origin()).cmp(&place(&b.origin())))
        });
        let mut shadowed_files = Vec::new();
        pak_files.dedup_by(|later, first| {
            let same = pak_name(later).cmp_folded(&pak_name(first)).is_eq();
            if same {
                shadowed_files.push(Shadowed {
                    origin: *later,
                    winner: *first,
                });
            }
            same
        });
        shadowed_files.sort_unstable_by_key(|c| place(&c.origin.origin()));

        pak_files.shrink_to_fit();
        pak_paths.shrink_to_fit();
        shadowed_chunks.extend(shadowed_files);
        self.shadowed = shadowed_chunks;
        self.chunks = chunks;
        self.pak_files = pak_files;
        self.pak_paths = pak_paths;
        self.pak_base = pak_base;
        self.chunk_rank = chunk_rank;
    }

    /// The files: every winning chunk and pak file by path. Of chunks
    /// sharing a path the last in priority order is kept, and a chunk is
    /// kept over a pak file of its name (they never share one in practice:
    /// chunks of packages are renamed `.uzen*`).
    fn records(&self) -> &[Packed] {
        self.files.get_or_init(|| {
            let mut files: Vec<Packed> = self
                .chunks
                .iter()
                .map(|&(_, chunk)| chunk)
                .chain(self.pak_files.iter().copied())
                .collect();
            let name_of = |record: &Packed| self.name(*record);
            let precedence = |record: &Packed| match record.origin() {
                FileOrigin::Chunk(c) => {
                    (0, std::cmp::Reverse((self.chunk_rank[c.source], c.index)))
                }
                FileOrigin::PakEntry { .. } => (1, std::cmp::Reverse((0, 0))),
            };
            files.sort_unstable_by(|a, b| {
                name_of(a)
                    .cmp_folded(&name_of(b))
                    .then_with(|| precedence(a).cmp(&precedence(b)))
            });
            files.dedup_by(|later, first| name_of(later).cmp_folded(&name_of(first)).is_eq());
            files.shrink_to_fit();
            files
        })
    }

    /// The view path of a pak entry's record.
    fn pak_path(&self, record: Packed) -> &str {
        pak_path_in(&self.pak_paths, &self.pak_base, record)
    }

    /// The view path of a record, in pieces.
    fn name(&self, record: Packed) -> ViewName<'_> {
        match record.origin() {
            FileOrigin::Chunk(chunk) => chunk_name(&self.sources, chunk),
            FileOrigin::PakEntry { .. } => ViewName::whole(self.pak_path(record)),
        }
    }

    /// A file as callers see it, from its record.
    fn file(&self, record: Packed) -> GameFile<'_> {
        match record.origin() {
            FileOrigin::Chunk(chunk) => {
                let container = self.container(chunk);
                let stored = container.paths.get(chunk.index);
                GameFile {
                    path: chunk_name(&self.sources, chunk).into_cow(),
                    stored_path: stored,
                    kind: kind_name(container.chunk_type(chunk.index)),
                    size: container.toc.offsets[chunk.index].length,
                    source: self.sources[chunk.source].name(),
                    remote: container.is_remote(chunk.index),
                    origin: record.origin(),
                }
            }
            FileOrigin::PakEntry { source, entry } => {
                let path = self.pak_path(record);
                let pak = self.sources[source].pak.as_ref();
                GameFile {
                    path: Cow::Borrowed(path),
                    stored_path: Some(path),
                    kind: Cow::Borrowed("pak"),
                    size: pak.map_or(0, |p| p.entries[entry].uncompressed_size),
                    source: self.sources[source].name(),
                    remote: false,
                    origin: record.origin(),
                }
            }
        }
    }

    /// Bytes on disk of source `index` (its `.pak`, `.utoc` and `.ucas`):
    /// what reading it reads at most, against which
    /// [`OutputBudget`](crate::limits::OutputBudget) weighs what is written.
    pub fn source_bytes(&self, index: usize) -> u64 {
        let s = &self.sources[index];
        let len = |p: &Path| std::fs::metadata(p).map_or(0, |m| m.len());
        s.pak.as_ref().map_or(0, |_| len(&s.path))
            + s.container
                .as_ref()
                .map_or(0, |c| len(&c.utoc_path) + len(&c.ucas_path))
    }

    /// [`source_bytes`](Self::source_bytes) of every mounted source.
    pub fn input_bytes(&self) -> u64 {
        (0..self.sources.len()).map(|i| self.source_bytes(i)).sum()
    }

    /// The mounted paks and containers, in mount sequence.
    pub fn sources(&self) -> &[MountedSource] {
        &self.sources
    }

    /// Every file the game would see (winning copies only), sorted by path.
    pub fn files(&self) -> impl ExactSizeIterator<Item = GameFile<'_>> + Clone + '_ {
        self.records().iter().map(|&record| self.file(record))
    }

    /// The sources in mount sequence with their orders, and the totals.
    pub fn summary(&self) -> ViewSummary {
        ViewSummary {
            kind: "game-view",
            sources: self
                .sources
                .iter()
                .map(|s| SourceSummary {
                    path: s.path.display().to_string(),
                    order: s.order,
                    sequence: s.sequence,
                    pak_version: s.pak.as_ref().map(|p| p.version.to_string()),
                    pak_entries: s.pak.as_ref().map_or(0, |p| p.entries.len()),
                    container_chunks: s.container.as_ref().map(|c| c.toc.chunk_ids.len()),
                    mount_point: s
                        .pak
                        .as_ref()
                        .map(|p| p.mount_point.clone())
                        .or_else(|| s.container.as_ref().map(|c| c.mount_point().to_string()))
                        .unwrap_or_default(),
                    encrypted: s
                        .pak
                        .as_ref()
                        .is_some_and(|p| p.encrypted_index || p.has_encrypted_entries())
                        || s.container.as_ref().is_some_and(|c| {
                            c.toc.header.container_flags
                                & crate::iostore::toc::container_flags::ENCRYPTED
                                != 0
                        }),
                })
                .collect(),
            files: self.records().len(),
            packages: self.packages().len(),
            shadowed: self.shadowed.len(),
            diagnostics: self.diagnostics.clone(),
        }
    }

    /// Copies hidden by a higher-priority one, each with the copy that wins
    /// (`conflicts` groups them by winner).
    pub fn shadowed(&self) -> impl ExactSizeIterator<Item = ShadowedCopy<'_>> + '_ {
        self.shadowed.iter().map(|copy| ShadowedCopy {
            path: self.name(copy.origin).into_cow(),
            source: self.sources[copy.origin.origin().source()].name(),
            origin: copy.origin.origin(),
            winner: copy.winner.origin(),
        })
    }

    /// A file by its view path (case-insensitive); also finds a package by
    /// its stored `.uasset`/`.umap` path.
    pub fn find_file(&self, path: &str) -> Option<GameFile<'_>> {
        let path = path.trim_start_matches('/');
        let stored = |record: Packed| match record.origin() {
            FileOrigin::Chunk(chunk) => self.container(chunk).paths.get(chunk.index),
            FileOrigin::PakEntry { .. } => Some(self.pak_path(record)),
        };
        self.records()
            .iter()
            .find(|&&r| self.name(r).eq_ignore_ascii_case(path))
            .or_else(|| {
                self.records()
                    .iter()
                    .find(|&&r| stored(r).is_some_and(|s| s.eq_ignore_ascii_case(path)))
            })
            .map(|&r| self.file(r))
    }

    /// Every chunk id with its winning copy, by id.
    pub(crate) fn chunks(&self) -> impl Iterator<Item = (&ChunkId, ChunkRef)> + '_ {
        self.chunks.iter().map(|(id, chunk)| (id, chunk.chunk()))
    }

    /// The container a chunk reference points into.
    pub(crate) fn container(&self, chunk: ChunkRef) -> &Container {
        self.sources[chunk.source]
            .container
            .as_ref()
            .expect("chunk references always point at containers")
    }

    /// Every package (winning `ExportBundleData` chunk), by package id.
    pub fn packages(&self) -> Vec<PackageChunk> {
        let mut out: Vec<PackageChunk> = self
            .chunks()
            .filter_map(|(_, chunk)| {
                let container = self.container(chunk);
                if container.chunk_type(chunk.index) != ChunkType::ExportBundleData {
                    return None;
                }
                Some(PackageChunk {
                    package_id: container.toc.chunk_ids[chunk.index].id(),
                    path: container.paths.get(chunk.index).map(str::to_string),
                    chunk,
                })
            })
            .collect();
        out.sort_by_key(|p| p.package_id);
        out
    }

    /// Streams a chunk into `sink` (hash checked at the end).
    pub(crate) fn read_chunk_to(&self, chunk: ChunkRef, sink: &mut dyn Write) -> Result<u64> {
        self.container(chunk).read_chunk_to(chunk.index, sink)
    }

    /// Reads a whole chunk.
    pub(crate) fn read_chunk(&self, chunk: ChunkRef) -> Result<Vec<u8>> {
        self.container(chunk).read_chunk(chunk.index)
    }

    /// Streams a file into `sink` (hash checked at the end).
    pub fn read_file_to(&self, file: &GameFile, sink: &mut dyn Write) -> Result<u64> {
        match file.origin {
            FileOrigin::Chunk(chunk) => self.read_chunk_to(chunk, sink),
            FileOrigin::PakEntry { source, entry } => {
                let pak = self.sources[source]
                    .pak
                    .as_ref()
                    .expect("pak entries always point at paks");
                pak.read_to(&pak.entries[entry], sink)
            }
        }
    }

    /// The ScriptObjects chunk of `global.utoc` (UE5), when the view has one.
    pub fn script_objects(&self) -> Result<Option<Vec<u8>>> {
        for (id, chunk) in self.chunks() {
            let container = self.container(chunk);
            if container.is_ue5() && id.chunk_type(true) == ChunkType::ScriptObjects {
                return self.read_chunk(chunk).map(Some);
            }
        }
        Ok(None)
    }

    /// The container header of a source, if it has a container with one.
    pub(crate) fn container_header(&self, source: usize) -> Result<Option<ContainerHeader>> {
        match &self.sources[source].container {
            Some(c) => c.container_header(),
            None => Ok(None),
        }
    }

    /// Checks every container (layout, chunks, headers, the packages'
    /// outer chains and bundle order) and every pak entry of the view,
    /// including shadowed copies; the report starts with what the view
    /// noticed while mounting.
    pub fn verify(&self) -> VerifyReport {
        let mut report = VerifyReport {
            warnings: self.diagnostics.clone(),
            ..VerifyReport::default()
        };
        for source in &self.sources {
            match (&source.container, &source.pak) {
                // The container's verify reads its companion pak as well
                // (and reports it missing); global.utoc has none by design.
                (Some(c), _) => {
                    let global = c
                        .utoc_path
                        .file_name()
                        .is_some_and(|n| n.eq_ignore_ascii_case("global.utoc"));
                    report.merge(c.verify_with(!global));
                    // Inside the packages: export outer chains, 5.0–5.2 bundle cycles.
                    report.merge(crate::zen::verify::verify_packages(c));
                }
                (None, Some(p)) => report.merge(verify_pak_entries(p)),
                (None, None) => {}
            }
        }
        report.finish();
        report
    }

    /// The files `keep` accepts (by view path), in view order: what
    /// [`GameView::unpack`] is given.
    pub fn select(&self, keep: &dyn Fn(&str) -> bool) -> Vec<GameFile<'_>> {
        self.files().filter(|f| keep(&f.path)).collect()
    }

    /// Writes the `selected` files under `dir` on the thread pool, but
    /// remote chunks of on-demand containers, which it lists; `on_written`
    /// hears of each file once it is in place. Every container's layout is
    /// checked first (an unsound one is refused before anything is
    /// written); every chunk hash and pak SHA-1 is checked before its file
    /// appears.
    pub fn unpack(
        &self,
        dir: &Path,
        selected: &[GameFile<'_>],
        on_written: &(dyn Fn(&GameFile) + Sync),
    ) -> Result<UnpackSummary> {
        let mut checked = std::collections::BTreeSet::new();
        for f in selected {
            if let FileOrigin::Chunk(chunk) = f.origin {
                if checked.insert(chunk.source) {
                    refuse_layout(self.container(chunk).layout_errors())?;
                }
            }
        }
        let mut summary = UnpackSummary {
            output: dir.display().to_string(),
            ..UnpackSummary::default()
        };
        let out = crate::publish::output_dir::OutputDir::new(dir)?;
        let (remote, local): (Vec<&GameFile>, Vec<&GameFile>) =
            selected.iter().partition(|f| f.remote);
        summary.remote = remote.into_iter().map(|f| f.path.to_string()).collect();
        let written = out.write_each(
            &local,
            |f| &f.path,
            |f, w| self.read_file_to(f, w),
            |f| on_written(f),
        )?;
        summary.files = written.len();
        summary.bytes = written.iter().sum();
        Ok(summary)
    }

    /// Writes one file (found by [`GameView::find_file`]) to `out`
    /// (a file path; its folder must exist), through a temporary renamed
    /// into place only once the data checked out.
    pub fn get(&self, path: &str, out: &Path) -> Result<u64> {
        let file = self.file_to_get(path)?;
        let dir = out
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let name = out
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .ok_or_else(|| Error::usage(format!("{}: not a file name", out.display())))?;
        crate::publish::output_dir::OutputDir::new(dir)?
            .write(&name, |w| self.read_file_to(&file, w))
    }
}

impl GameView {
    /// [`get`](Self::get) into `sink` (`zenpak get -o -`: standard output).
    pub fn get_to(&self, path: &str, sink: &mut dyn Write) -> Result<u64> {
        let file = self.file_to_get(path)?;
        self.read_file_to(&file, sink)
    }

    /// The file `path` names, from a container whose layout can be read.
    fn file_to_get(&self, path: &str) -> Result<GameFile<'_>> {
        let file = self.find_file(path).ok_or_else(|| {
            Error::invalid(format!("no file `{path}` in the view")).with_hint(
                "`zenpak list` shows the paths; a package's .uasset is listed as .uzenasset",
            )
        })?;
        if let FileOrigin::Chunk(chunk) = file.origin {
            refuse_layout(self.container(chunk).layout_errors())?;
        }
        Ok(file)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn virtual_paths() {
        assert_eq!(virtual_path("../../../", "Game/X.uasset"), "Game/X.uasset");
        assert_eq!(
            virtual_path("../../../Game/Content/", "Maps/X.umap"),
            "Game/Content/Maps/X.umap"
        );
        assert_eq!(virtual_path("", "a.txt"), "a.txt");
        assert_eq!(
            virtual_path("../mount/point/root/", "a.txt"),
            "mount/point/root/a.txt"
        );
    }
}
