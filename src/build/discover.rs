//! Finding the mod's content: walk the cooked root, keep what the include and
//! exclude globs select, group each package's files (`.uasset`/`.umap` with
//! its `.uexp`, `.ubulk`, `.uptnl`, `.m.ubulk`), map each package's path to
//! its package name, and set aside every other file for the companion pak.
//!
//! Paths on disk map to package names the way the engine mounts content:
//! `<Project>/Content/X` is `/Game/X`, `Engine/Content/X` is `/Engine/X`,
//! and `.../Plugins/.../<P>/Content/X` is `/<P>/X`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::glob::Globs;

use super::input::{join_relative, LooseFile, PackageFileKind, PackageSource};
use super::never_ship::{self, NeverShip};
use super::placement::package_name_for;
use crate::diagnostic::Diagnostic;
use crate::error::{Error, Result};

/// Everything the build takes from the content root, in a stable order
/// (sorted by relative path).
#[derive(Debug, Clone, Default)]
pub struct Content {
    pub packages: Vec<PackageSource>,
    pub(crate) loose_files: Vec<LooseFile>,
    /// Selected files a mod must never contain ([`never_ship`]):
    /// left out of `packages` and `loose_files`; `build` refuses them, `check` lists them.
    pub(crate) never_ship: Vec<NeverShip>,
    /// What looked wrong but does not stop a build (stray containers, files
    /// the game will not mount, patterns that matched nothing, ...).
    pub(crate) warnings: Vec<Diagnostic>,
    /// The stamps of [`Content::files`], in that order, taken once by the
    /// scan (with what the build's file index knew of them); empty when the
    /// content changed after the scan.
    pub(crate) stamps: super::cache::index::Taken,
    /// The paths of [`Content::files`], in that order, made by the scan to
    /// stamp them and kept for the fingerprint; empty when the content
    /// changed after the scan.
    pub(crate) paths: crate::arena::PathArena,
    /// Every folder the scan walked, with its stamp (following links) taken
    /// before its entries were read, and when the scan started (ns since
    /// 1970): for [`super::cache::tree::TreeRecord`].
    pub(crate) folders: Vec<(PathBuf, crate::publish::stamp::FileStamp)>,
    pub(crate) scanned_ns: i128,
}

impl Content {
    /// Every input file: each package's (header first), then the loose files.
    pub(crate) fn files(&self) -> impl Iterator<Item = PathBuf> + '_ {
        self.packages
            .iter()
            .flat_map(PackageSource::files)
            .chain(self.loose_files.iter().map(|f| f.path.clone()))
    }

    /// How many input files [`Content::files`] gives.
    pub(crate) fn file_count(&self) -> usize {
        self.packages
            .iter()
            .map(PackageSource::file_count)
            .sum::<usize>()
            + self.loose_files.len()
    }
}

/// Which files of the content root belong to the mod.
pub struct Selection {
    include: Option<Globs>,
    exclude: Option<Globs>,
    include_patterns: Vec<String>,
    /// Which include patterns selected at least one file.
    include_used: Vec<AtomicBool>,
    /// The include patterns that start with `Engine/`: what they select is
    /// an engine override on purpose.
    engine_include: Option<Globs>,
}

impl Selection {
    /// Builds the selection from glob lists relative to the content root, in
    /// zenpak's one dialect (`crate::glob`). An empty include list takes
    /// everything.
    pub fn new(include: &[String], exclude: &[String]) -> Result<Selection> {
        let build = |what: &str, globs: &[String]| -> Result<Option<Globs>> {
            if globs.is_empty() {
                return Ok(None);
            }
            Globs::new(what, globs).map(Some)
        };
        Ok(Selection {
            include: build("`[content] include`", include)?,
            exclude: build("`[content] exclude`", exclude)?,
            include_patterns: include.to_vec(),
            include_used: include.iter().map(|_| AtomicBool::new(false)).collect(),
            engine_include: build(
                "`[content] include`",
                &include
                    .iter()
                    .filter(|g| {
                        g.get(..7)
                            .is_some_and(|p| p.eq_ignore_ascii_case("Engine/"))
                    })
                    .cloned()
                    .collect::<Vec<_>>(),
            )?,
        })
    }

    pub(crate) fn selects(&self, relative_path: &str) -> bool {
        let included = match &self.include {
            None => true,
            Some(set) => {
                let matches = set.matches(relative_path);
                for &i in &matches {
                    self.include_used[i].store(true, Ordering::Relaxed);
                }
                !matches.is_empty()
            }
        };
        included
            && !self
                .exclude
                .as_ref()
                .is_some_and(|g| g.is_match(relative_path))
    }

    /// Whether an `include` pattern starting with `Engine/` selects this path.
    pub(crate) fn names_in_engine(&self, relative_path: &str) -> bool {
        self.engine_include
            .as_ref()
            .is_some_and(|g| g.is_match(relative_path))
    }

    /// Warnings for include patterns that selected nothing (typos, `\` separators).
    pub(crate) fn unused_patterns(&self) -> Vec<Diagnostic> {
        self.include_patterns
            .iter()
            .zip(&self.include_used)
            .filter(|(_, used)| !used.load(Ordering::Relaxed))
            .map(|(pattern, _)| {
                let hint = if pattern.contains('\\') {
                    "patterns use `/` between folders, on every system".to_string()
                } else {
                    "patterns are relative to `[content] root`; `*` stays in one folder, `**` crosses folders, a pattern without `/` matches at any depth".to_string()
                };
                Diagnostic::warning(
                    "include-matched-nothing",
                    format!("`[content] include` pattern `{pattern}` matched no file"),
                )
                .with_hint(hint)
            })
            .collect()
    }
}

/// Extensions of files that must never travel inside a mod's pak: another
/// container, its signature, or the game's mappings.
const STRAY_EXTENSIONS: [&str; 5] = ["pak", "utoc", "ucas", "usmap", "sig"];

/// Whether the game mounts a loose file at this path: paths under the
/// project, `Engine/` or a plugin.
fn is_mounted_path(relative_path: &str, project: &str) -> bool {
    let first = relative_path.split('/').next().unwrap_or("");
    first.eq_ignore_ascii_case(project) || first.eq_ignore_ascii_case("Engine")
}

/// Walks `root` and returns the selected packages and loose files.
///
/// Errors list every problem found (unmappable package paths, companions
/// without a header, files a mod must never contain), not just the first. `root` may itself be a symbolic
/// link; a link inside it whose target lies outside it is an error unless
/// `follow_links` (the manifest's `[content] follow-links`).
///
/// `cook_check`: a content root without packages inside a project that
/// cooks into the Zen Store is that one error
/// ([`super::zen_store::check_cook`]) rather than what else it holds.
pub fn discover(
    root: &Path,
    project: &str,
    selection: &Selection,
    follow_links: bool,
    cook_check: bool,
) -> Result<Content> {
    discover_indexed(
        root,
        project,
        selection,
        follow_links,
        cook_check,
        None,
        None,
    )
}

/// [`discover`] with the build's file `index`: what it knows unchanged is
/// not opened again (see [`scan`]'s Git LFS check).
pub(crate) fn discover_indexed(
    root: &Path,
    project: &str,
    selection: &Selection,
    follow_links: bool,
    cook_check: bool,
    index: Option<&Path>,
    listed: Option<Listed>,
) -> Result<Content> {
    let (content, mut problems) =
        scan_stamped(root, project, selection, follow_links, index, listed)?;
    if cook_check {
        super::zen_store::check_cook(root, content.packages.is_empty(), &content.loose_files)?;
    }
    problems.extend(content.never_ship.iter().map(NeverShip::to_error));
    Error::many("content files", problems)?;
    Ok(content)
}

/// [`discover`] that hands back the problems with what was found instead
/// of failing on them; files that must never ship are in `never_ship`
/// (`check` lists both).
pub(crate) fn scan(
    root: &Path,
    project: &str,
    selection: &Selection,
    follow_links: bool,
) -> Result<(Content, Vec<Error>)> {
    scan_stamped(root, project, selection, follow_links, None, None)
}

/// [`scan`] that takes the files' stamps with what the build's file
/// `index` knows of them ([`super::cache::index::FileIndex::take`]): a file it
/// knows unchanged is not opened again (for the Git LFS check: what the
/// index holds passed it when it was hashed). With `listed`, no folder is
/// listed: the files are those the last scan found ([`walk_listed`]).
fn scan_stamped(
    root: &Path,
    project: &str,
    selection: &Selection,
    follow_links: bool,
    index: Option<&Path>,
    listed: Option<Listed>,
) -> Result<(Content, Vec<Error>)> {
    if !root.is_dir() {
        return Err(Error::usage(format!(
            "content root `{}` is not a folder; set `[content] root` in mod.toml to the folder \
             holding `{project}/Content/...`",
            root.display()
        )));
    }
    let scanned_ns = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i128);
    let (walked, indexed) = match listed {
        Some(Listed { files, folders }) => {
            (walk_listed(root, selection, &files, folders)?, Some(files))
        }
        None => (walk(root, selection, follow_links)?, None),
    };
    let Walked {
        package_files,
        mut loose_files,
        strays,
        temporaries,
        mut never_ship,
        folders,
    } = walked;
    let (mut packages, mut problems) =
        packages_of(package_files, root, project, selection, &mut never_ship);
    never_ship.sort_by(|a, b| a.relative_path.cmp(&b.relative_path));
    packages.sort_by(|a, b| a.relative_path().cmp(b.relative_path()));
    packages.shrink_to_fit();
    loose_files.sort_by(|a, b| a.relative_path.cmp(&b.relative_path));
    problems.extend(case_clashes(root, &packages, &loose_files));
    // The walk's lists and the case check's table are gone: their pages
    // go back before the lists of paths and stamps below are made.
    super::release_freed_memory();
    // The paths are made for the scan and let go after it: the packages
    // keep their paths relative to the root.
    let count = packages
        .iter()
        .map(PackageSource::file_count)
        .sum::<usize>()
        + loose_files.len();
    let mut paths = crate::arena::PathArena::under(
        root,
        packages
            .iter()
            .flat_map(PackageSource::files)
            .chain(loose_files.iter().map(|f| f.path.clone())),
        count,
    );
    let listed = indexed.is_some();
    let mut stamps = match indexed {
        Some(indexed) => indexed.take(&paths)?,
        None => super::cache::index::FileIndex::take(index, &paths)?,
    };
    problems.extend(take_lfs_pointers(
        &mut packages,
        &mut loose_files,
        &mut stamps,
        &mut paths,
    )?);
    let mut warnings = content_warnings(root, project, strays, &packages, &loose_files);
    // A selection that saw only the listed files cannot tell which patterns
    // matched nothing; the last scan, which saw every file, warned of
    // nothing (or would not have been recorded).
    if !listed {
        warnings.extend(selection.unused_patterns());
    }
    warnings.extend(temporaries.into_iter().map(|path| {
        Diagnostic::warning(
            "leftover-temporary",
            "a temporary file left by an interrupted zenpak; it was left out of the mod",
        )
        .with_file(path)
        .with_hint("delete it (it is never part of a mod)")
    }));
    Ok((
        Content {
            packages,
            loose_files,
            never_ship,
            warnings,
            stamps,
            paths,
            folders,
            scanned_ns,
        },
        problems,
    ))
}

/// Small files [`take_lfs_pointers`] reads at a time.
const LFS_CHECK_BATCH: usize = 4096;

/// Takes out the packages and loose files of which a file is a Git LFS
/// pointer (the repository was cloned without `git lfs pull`): each such
/// file is an `lfs-pointer` error, and what it belongs to is not read further.
/// `stamps` and `paths` are the files' stamps and paths (packages' files,
/// then the loose files):
/// only a small file the index does not know unchanged is opened (on every
/// core), read whole and, when it is not a pointer, hashed for the
/// fingerprint ([`super::cache::index::Taken::set_hash`]); those of what is taken
/// out go too.
fn take_lfs_pointers(
    packages: &mut Vec<PackageSource>,
    loose_files: &mut Vec<LooseFile>,
    stamps: &mut super::cache::index::Taken,
    paths: &mut crate::arena::PathArena,
) -> Result<Vec<Error>> {
    use crate::sniff::{lfs_pointer_error, read_small_file};
    use rayon::prelude::*;
    let candidates: Vec<usize> = (0..stamps.len())
        .filter(|&i| {
            !stamps.is_known(i) && stamps.stamp(i).size <= crate::sniff::LFS_POINTER_MAX_LEN
        })
        .collect();
    // Each is read whole, and hashed here when it is not a pointer: the
    // fingerprint does not read it again. `Err(i)`: file `i` is a pointer.
    // A batch at a time, so that the answers are never held for them all.
    let mut pointer = vec![false; stamps.len()];
    for batch in candidates.chunks(LFS_CHECK_BATCH) {
        let found = batch
            .par_iter()
            .map(|&i| -> Result<Option<_>> {
                let Some(file) = read_small_file(&paths.path(i), stamps.stamp(i).size)? else {
                    return Ok(None);
                };
                if file.is_lfs_pointer() {
                    return Ok(Some(Err(i)));
                }
                Ok(file
                    .whole()
                    .map(|bytes| Ok((i, *blake3::hash(bytes).as_bytes()))))
            })
            .collect::<Result<Vec<_>>>()?;
        for found in found.into_iter().flatten() {
            match found {
                Ok((i, hash)) => stamps.set_hash(i, hash),
                Err(i) => pointer[i] = true,
            }
        }
    }
    drop(candidates);
    if !pointer.contains(&true) {
        return Ok(Vec::new());
    }
    let mut problems = Vec::new();
    let mut keep = vec![true; pointer.len()];
    let mut at = 0;
    packages.retain(|package| {
        let count = package.file_count();
        let range = at..at + count;
        at += count;
        for (file, i) in package.files().zip(range.clone()) {
            if pointer[i] {
                problems.push(lfs_pointer_error(&file));
            }
        }
        let kept = !pointer[range.clone()].contains(&true);
        keep[range].fill(kept);
        kept
    });
    loose_files.retain(|file| {
        let i = at;
        at += 1;
        if pointer[i] {
            problems.push(lfs_pointer_error(&file.path));
            keep[i] = false;
        }
        !pointer[i]
    });
    stamps.retain(&keep);
    paths.retain(&keep);
    Ok(problems)
}

/// A package file found by the walk: its path relative to the root, its
/// kind, and the length of the path without the extension (the files of
/// one package have the same).
struct WalkedFile {
    relative: String,
    kind: PackageFileKind,
    stem_len: u32,
}

impl WalkedFile {
    fn stem(&self) -> &str {
        &self.relative[..self.stem_len as usize]
    }
}

/// What the walk of a content root found.
#[derive(Default)]
struct Walked {
    /// The package files, sorted by path without extension and kind: each
    /// package's files are one run, and no run has two files of one kind.
    package_files: Vec<WalkedFile>,
    loose_files: Vec<LooseFile>,
    /// Containers, signatures and mappings found among the files: left out.
    strays: Vec<String>,
    /// zenpak's own temporaries (a killed zenpak's leftovers): never packed.
    temporaries: Vec<PathBuf>,
    /// Selected loose files a mod must never contain.
    never_ship: Vec<NeverShip>,
    /// Every folder walked, with its stamp ([`Content::folders`]).
    folders: Vec<(PathBuf, crate::publish::stamp::FileStamp)>,
}

/// Walks the content root: package files grouped by package, the other
/// selected files, and the strays.
fn walk(root: &Path, selection: &Selection, follow_links: bool) -> Result<Walked> {
    let mut walked = Walked::default();
    let rules = never_ship::Rules::for_root(root);
    // Symbolic links are followed (a content folder linked into the mod is
    // common) while they stay inside the root, or anywhere when the manifest
    // says so; walkdir refuses a link back to one of its own parents.
    // Walk order does not matter: packages and loose files are sorted by path below.
    let real_root = if follow_links {
        None
    } else {
        Some(root.canonicalize().map_err(|e| Error::io(root, e))?)
    };
    for entry in walkdir::WalkDir::new(root).follow_links(true) {
        let entry = entry.map_err(|e| {
            let path = e.path().unwrap_or(root).to_path_buf();
            if e.loop_ancestor().is_some() {
                return Error::usage("this symbolic link points back to a folder that contains it")
                    .in_file(&path)
                    .with_hint("remove the link, or exclude it with `[content] exclude`");
            }
            match e.into_io_error() {
                Some(io) => Error::io(&path, io),
                None => Error::usage("cannot read this entry of the content folder").in_file(&path),
            }
        })?;
        if let Some(real_root) = real_root.as_deref().filter(|_| entry.path_is_symlink()) {
            check_link_inside(entry.path(), real_root)?;
        }
        if entry.file_type().is_dir() {
            // walkdir has opened the folder but read none of its entries
            // yet (it reads them as the walk goes on): a change made after
            // this stamp shows in the folder's stamp.
            let stamp = crate::publish::stamp::FileStamp::following(entry.path())?;
            walked.folders.push((entry.path().to_path_buf(), stamp));
        }
        if entry.file_type().is_file() {
            let name = entry.file_name().to_string_lossy();
            walked.add_file(root, &rules, selection, entry.path(), &name)?;
        }
    }
    walked.group_packages()
}

/// [`walk`] without listing a folder: the files are the `listed` ones
/// (the last scan's, from the build's file index) and the folders those
/// the last scan walked, still with the stamps it recorded. Each file is
/// sorted as the walk sorts it.
fn walk_listed(
    root: &Path,
    selection: &Selection,
    files: &super::cache::index::IndexedFiles,
    folders: Vec<(PathBuf, crate::publish::stamp::FileStamp)>,
) -> Result<Walked> {
    let mut walked = Walked {
        folders,
        ..Walked::default()
    };
    let rules = never_ship::Rules::for_root(root);
    files.for_each_path(|file| {
        let path = Path::new(file);
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy())
            .ok_or_else(|| {
                Error::internal(format!(
                    "the file index lists `{file}`, which is not a file"
                ))
            })?;
        walked.add_file(root, &rules, selection, path, &name)
    })?;
    walked.group_packages()
}

/// What a development build knows of its content from the last scan when
/// no folder changed since (no entry was added, removed or renamed): the
/// files that scan found, as the file index holds them with their stamps,
/// and the folders it walked with their stamps.
pub(crate) struct Listed {
    pub(crate) files: super::cache::index::IndexedFiles,
    pub(crate) folders: Vec<(PathBuf, crate::publish::stamp::FileStamp)>,
}

impl Walked {
    /// Sorts the file at `path` (named `name`) found in the content root:
    /// a zenpak temporary, a package's file, a file that must never ship, a
    /// stray, a loose file, or nothing the selection takes.
    fn add_file(
        &mut self,
        root: &Path,
        rules: &never_ship::Rules,
        selection: &Selection,
        path: &Path,
        name: &str,
    ) -> Result<()> {
        if crate::publish::temporary::is_temporary_name(name) {
            self.temporaries.push(path.to_path_buf());
            return Ok(());
        }
        let relative = relative_slash_path(root, path)?;
        // Packages keep their paths relative to the root only.
        match PackageFileKind::classify(name) {
            Some((file_stem, kind)) => {
                let extension_len = name.len() - file_stem.len();
                let stem_len = u32::try_from(relative.len() - extension_len)
                    .map_err(|_| Error::usage("this path is too long").in_file(path))?;
                self.package_files.push(WalkedFile {
                    relative,
                    kind,
                    stem_len,
                });
            }
            None if selection.selects(&relative) => {
                let named = selection.names_in_engine(&relative);
                if let Some(found) = rules.check(&relative, path, named) {
                    self.never_ship.push(found);
                    return Ok(());
                }
                let extension = relative
                    .rsplit_once('.')
                    .map(|(_, e)| e.to_ascii_lowercase());
                if extension.is_some_and(|e| STRAY_EXTENSIONS.contains(&e.as_str())) {
                    self.strays.push(relative);
                    return Ok(());
                }
                // Every path found is kept for the whole build: at its
                // exact size (walkdir's have room to spare).
                let mut path = path.to_path_buf();
                path.shrink_to_fit();
                self.loose_files.push(LooseFile {
                    relative_path: relative,
                    path,
                });
            }
            None => {}
        }
        Ok(())
    }

    /// Puts each package's files together as one run, header first;
    /// refuses two files of one kind of one package.
    fn group_packages(mut self) -> Result<Walked> {
        self.package_files.sort_unstable_by(|a, b| {
            (a.stem(), a.kind, &a.relative).cmp(&(b.stem(), b.kind, &b.relative))
        });
        for pair in self.package_files.windows(2) {
            let (a, b) = (&pair[0], &pair[1]);
            if a.stem() == b.stem() && a.kind == b.kind {
                let what = match a.kind {
                    PackageFileKind::Header => "two headers of one package",
                    // One file on Windows, and one chunk of the package.
                    _ => "two files of one kind of one package",
                };
                return Err(Error::usage(format!(
                    "`{}` and `{}` are {what}; keep one",
                    a.relative, b.relative
                )));
            }
        }
        Ok(self)
    }
}

/// Refuses the symbolic link `link` when what it points to lies outside
/// `real_root` (the content root, links resolved).
fn check_link_inside(link: &Path, real_root: &Path) -> Result<()> {
    let target = link.canonicalize().map_err(|e| Error::io(link, e))?;
    if target.starts_with(real_root) {
        return Ok(());
    }
    Err(Error::usage(format!(
        "this symbolic link points outside the content root, to `{}`",
        target.display()
    ))
    .in_file(link)
    .with_hint(
        "copy what it points to into the content root, remove the link, or set \
         `[content] follow-links = true` in mod.toml to pack it",
    ))
}

/// The packages of the walked groups, and every file that cannot be a
/// package of the mod as a problem; packages that must never ship go to
/// `never_ship`.
fn packages_of(
    package_files: Vec<WalkedFile>,
    root: &Path,
    project: &str,
    selection: &Selection,
    never_ship: &mut Vec<NeverShip>,
) -> (Vec<PackageSource>, Vec<Error>) {
    let rules = never_ship::Rules::for_root(root);
    let shared_root = std::sync::Arc::new(root.to_path_buf());
    let mut problems = Vec::new();
    let mut packages = Vec::new();
    // The walk's files are read in place and let go at the end: what a
    // package keeps is copied out of them, into memory of its own rather
    // than into the holes of the walk's freed strings, which can then go
    // back to the system whole.
    for run in package_files.chunk_by(|a, b| a.stem() == b.stem()) {
        let (header, companions) = match run.split_first() {
            Some((first, rest)) if first.kind == PackageFileKind::Header => {
                (Some(&first.relative), rest)
            }
            _ => (None, run),
        };
        match header {
            Some(relative) => {
                let header = join_relative(root, relative);
                if !selection.selects(relative) {
                    continue;
                }
                if let Some(found) =
                    rules.check(relative, &header, selection.names_in_engine(relative))
                {
                    never_ship.push(found);
                    continue;
                }
                let Some(package_name) = package_name_for(relative, project) else {
                    let hint = super::placement::belongs_hint(&header, root, project)
                        .unwrap_or_else(|| {
                            format!(
                                "packages must live under `{project}/Content/`, `Engine/Content/` \
                                 or `.../Plugins/<Plugin>/Content/` (is `[game] project` right?)"
                            )
                        });
                    problems.push(
                        Error::usage("cannot tell its package name from its folder")
                            .in_file(&header)
                            .with_hint(hint),
                    );
                    continue;
                };
                // The companions by kind, with their extensions as found.
                let companions = companions.iter().map(|file| {
                    let path = &file.relative;
                    (file.kind, &path[path.len() - file.kind.extension().len()..])
                });
                match PackageSource::new(shared_root.clone(), &package_name, relative, companions) {
                    Ok(package) => packages.push(package),
                    Err(error) => problems.push(error.in_file(&header)),
                }
            }
            None => {
                for relative in companions.iter().map(|f| &f.relative) {
                    if selection.selects(relative) {
                        problems.push(
                            Error::usage("no `.uasset` or `.umap` beside it")
                                .in_file(root.join(relative))
                                .with_hint("copy the whole cooked package"),
                        );
                    }
                }
            }
        }
    }
    drop(package_files);
    (packages, problems)
}

/// Paths that differ only in case are one file on Windows and one package
/// or file to the engine (it compares paths ignoring case): an error each,
/// naming both.
fn case_clashes(root: &Path, packages: &[PackageSource], loose_files: &[LooseFile]) -> Vec<Error> {
    let mut seen: BTreeMap<String, &str> = BTreeMap::new();
    let mut problems = Vec::new();
    let keyed = packages
        .iter()
        .map(|p| (p.package_name().to_lowercase(), p.relative_path()))
        .chain(
            loose_files
                .iter()
                .map(|f| (f.relative_path.to_lowercase(), f.relative_path.as_str())),
        );
    for (key, relative) in keyed {
        if let Some(first) = seen.insert(key, relative) {
            problems.push(
                Error::new(crate::error::ErrorKind::Content {
                    code: "case-clash",
                    message: format!(
                        "`{first}` and `{relative}` differ only in case: on Windows, and to the \
                         engine (which ignores case in paths), they are one"
                    ),
                })
                .in_file(root.join(relative))
                .with_hint("keep one of them (rename or remove the other)"),
            );
        }
    }
    problems
}

/// Warnings about what was found: strays left out, files the game will not
/// mount, a mod with nothing in it.
fn content_warnings(
    root: &Path,
    project: &str,
    mut strays: Vec<String>,
    packages: &[PackageSource],
    loose_files: &[LooseFile],
) -> Vec<Diagnostic> {
    let mut warnings = Vec::new();
    strays.sort();
    for stray in strays {
        warnings.push(
            Diagnostic::warning(
                "stray-file",
                format!("`{stray}` is a container, signature or mappings file; it was left out of the mod"),
            )
            .with_file(root.join(&stray))
            .with_hint("move it out of the content folder, or exclude it with `[content] exclude`"),
        );
    }
    for file in loose_files {
        if !is_mounted_path(&file.relative_path, project) {
            warnings.push(
                Diagnostic::warning(
                    "unmounted-file",
                    format!(
                        "`{}` is outside `{project}/` and `Engine/`; the game will not find it",
                        file.relative_path
                    ),
                )
                .with_file(&file.path)
                .with_hint(format!(
                    "files go where the game has them, under `{project}/...` (is `[game] project` right?)"
                )),
            );
        }
    }
    if packages.is_empty() && loose_files.is_empty() {
        warnings.push(
            Diagnostic::warning("empty-mod", "the mod has no packages and no files")
                .with_file(root)
                .with_hint(format!(
                    "put cooked files under `{}/{project}/Content/`, or fix `[content] include`",
                    root.display()
                )),
        );
    }
    warnings
}

fn relative_slash_path(root: &Path, path: &Path) -> Result<String> {
    // Where `/` is the separator and the path is `root/` and plain names
    // (as walked or indexed), the rest is the answer as it is.
    if cfg!(unix) {
        let rest = (path.to_str().zip(root.to_str()))
            .and_then(|(path, root)| path.strip_prefix(root)?.strip_prefix('/'));
        if let Some(rest) = rest.filter(|rest| {
            rest.split('/')
                .all(|part| !part.is_empty() && part != "." && part != "..")
        }) {
            return Ok(rest.to_string());
        }
    }
    let relative = path.strip_prefix(root).map_err(|_| {
        Error::internal(format!(
            "{} is not inside {}",
            path.display(),
            root.display()
        ))
    })?;
    let mut out = String::with_capacity(relative.as_os_str().len());
    for component in relative.components() {
        let part = component
            .as_os_str()
            .to_str()
            .ok_or_else(|| Error::usage("file names must be valid Unicode").in_file(path))?;
        if !out.is_empty() {
            out.push('/');
        }
        out.push_str(part);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_names_follow_the_mount_points() {
        let n = |p| package_name_for(p, "MyGame");
        assert_eq!(n("MyGame/Content/A/B.uasset").as_deref(), Some("/Game/A/B"));
        assert_eq!(
            n("MyGame/Content/Maps/M.umap").as_deref(),
            Some("/Game/Maps/M")
        );
        assert_eq!(n("Engine/Content/X.uasset").as_deref(), Some("/Engine/X"));
        assert_eq!(
            n("MyGame/Plugins/GameFeatures/Foo/Content/X/Y.uasset").as_deref(),
            Some("/Foo/X/Y")
        );
        assert_eq!(
            n("Engine/Plugins/Fx/Niagara/Content/N.uasset").as_deref(),
            Some("/Niagara/N")
        );
        assert_eq!(n("Other/Content/X.uasset"), None);
        assert_eq!(n("MyGame/Content/X.uexp"), None);
        assert_eq!(n("MyGame/X.uasset"), None);
    }

    #[test]
    fn classify_prefers_the_longest_extension() {
        assert_eq!(
            PackageFileKind::classify("a.m.ubulk"),
            Some(("a", PackageFileKind::MemoryMappedBulk))
        );
        assert_eq!(
            PackageFileKind::classify("a.ubulk"),
            Some(("a", PackageFileKind::Bulk))
        );
        assert_eq!(
            PackageFileKind::classify("a.UASSET"),
            Some(("a", PackageFileKind::Header))
        );
        assert_eq!(PackageFileKind::classify("a.ini"), None);
    }

    #[test]
    fn a_path_inside_the_root_is_made_relative_whatever_its_spelling() {
        let root = Path::new("/mods/Cooked");
        for (path, relative) in [
            (
                "/mods/Cooked/Game/Content/A.uasset",
                "Game/Content/A.uasset",
            ),
            (
                "/mods/Cooked/Game/./Content/A.uasset",
                "Game/Content/A.uasset",
            ),
            (
                "/mods/Cooked//Game/Content/A.uasset",
                "Game/Content/A.uasset",
            ),
            ("/mods/Cooked/Game/Content/", "Game/Content"),
        ] {
            assert_eq!(
                relative_slash_path(root, Path::new(path)).unwrap(),
                relative
            );
            assert_eq!(
                join_relative(root, relative),
                root.join(relative),
                "{relative}"
            );
        }
        assert!(relative_slash_path(root, Path::new("/mods/CookedX/A.uasset")).is_err());
        assert_eq!(
            PackageFileKind::classify("Tex.M.UBulk"),
            Some(("Tex", PackageFileKind::MemoryMappedBulk))
        );
        assert_eq!(
            PackageFileKind::classify("Été.uexp"),
            Some(("Été", PackageFileKind::Exports))
        );
        assert_eq!(PackageFileKind::classify("uexp"), None);
    }

    #[test]
    fn a_package_record_gives_back_the_paths_found_whatever_their_case() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("MyGame/Content/Sub");
        std::fs::create_dir_all(&folder).unwrap();
        for name in [
            "Hero.uasset",
            "Hero.UEXP",
            "Hero.ubulk",
            "Map.umap",
            "Map.uexp",
        ] {
            std::fs::write(folder.join(name), name).unwrap();
        }
        let selection = Selection::new(&[], &[]).unwrap();
        let content = discover(dir.path(), "MyGame", &selection, false, false).unwrap();
        let files: Vec<Vec<PathBuf>> = content
            .packages
            .iter()
            .map(|p| p.files().collect())
            .collect();
        assert_eq!(
            files,
            [
                vec![
                    folder.join("Hero.uasset"),
                    folder.join("Hero.UEXP"),
                    folder.join("Hero.ubulk")
                ],
                vec![folder.join("Map.umap"), folder.join("Map.uexp")],
            ]
        );
        let hero = &content.packages[0];
        assert_eq!(hero.package_name(), "/Game/Sub/Hero");
        assert_eq!(hero.file_count(), 3);
        assert_eq!(
            hero.companion(PackageFileKind::Exports),
            Some(folder.join("Hero.UEXP"))
        );
        assert_eq!(hero.companion(PackageFileKind::OptionalBulk), None);
        assert_eq!(content.file_count(), content.files().count());
        assert!(content.files().all(|f| f.is_file()));
    }

    #[test]
    fn names_that_differ_only_in_case_clash_with_the_one_before_in_content_order() {
        let root = std::sync::Arc::new(PathBuf::from("/m"));
        let names = [
            "/Game/Hero",
            "/Game/Other",
            "/Game/hero",
            "/Game/Straße",
            "/Game/HERO",
        ];
        let packages: Vec<PackageSource> = names
            .iter()
            .enumerate()
            .map(|(i, name)| {
                let relative = format!("G/Content/{i}{}.uasset", &name[6..]);
                PackageSource::new(root.clone(), name, &relative, []).unwrap()
            })
            .collect();
        let loose = |relative: &str| LooseFile {
            relative_path: relative.to_string(),
            path: root.join(relative),
        };
        let loose_files = [
            loose("G/Content/a.TXT"),
            loose("G/Content/b.txt"),
            loose("G/Content/A.txt"),
        ];
        let clashes = case_clashes(&root, &packages, &loose_files);
        let files: Vec<&Path> = clashes.iter().filter_map(|e| e.file()).collect();
        // `hero` clashes with `Hero`, `HERO` with `hero` (the last one
        // seen), then the loose files; `Straße` with nothing.
        let expected = [
            root.join("G/Content/2hero.uasset"),
            root.join("G/Content/4HERO.uasset"),
            root.join("G/Content/A.txt"),
        ];
        assert_eq!(
            files,
            expected.iter().map(PathBuf::as_path).collect::<Vec<_>>()
        );
        let codes: Vec<_> = clashes.iter().map(|e| e.code()).collect();
        assert_eq!(codes, ["case-clash"; 3]);
    }

    #[test]
    fn a_package_record_keeps_its_name_and_path_in_one_text() {
        let root = std::sync::Arc::new(PathBuf::from("/mods/Cooked"));
        let folder = root.join("MyGame").join("Content").join("Été");
        let (name, relative) = ("/Game/Été/Héro", "MyGame/Content/Été/Héro.uasset");
        let hero = PackageSource::new(
            root.clone(),
            name,
            relative,
            [
                (PackageFileKind::Exports, ".UEXP"),
                (PackageFileKind::Bulk, ".ubulk"),
                (PackageFileKind::MemoryMappedBulk, ".M.UBulk"),
            ],
        )
        .unwrap();
        assert_eq!(
            (hero.package_name(), hero.relative_path()),
            (name, relative)
        );
        assert_eq!(
            hero.files().collect::<Vec<_>>(),
            [
                folder.join("Héro.uasset"),
                folder.join("Héro.UEXP"),
                folder.join("Héro.ubulk"),
                folder.join("Héro.M.UBulk"),
            ]
        );
        assert_eq!(hero.file_count(), 4);
        assert_eq!(hero.companion(PackageFileKind::OptionalBulk), None);
        assert_eq!(hero.companion(PackageFileKind::Header), None);

        // No companion, and a header spelled `.umap` in uppercase.
        let map = PackageSource::new(root.clone(), "/Game/M", "MyGame/Content/M.UMAP", []).unwrap();
        assert_eq!(
            (map.package_name(), map.relative_path()),
            ("/Game/M", "MyGame/Content/M.UMAP")
        );
        assert_eq!(
            map.files().collect::<Vec<_>>(),
            [root.join("MyGame").join("Content").join("M.UMAP")]
        );
        assert_eq!((map.file_count(), map.companion_kinds().count()), (1, 0));

        // What is not a companion's extension is refused, never recorded.
        for companion in [
            (PackageFileKind::Exports, ".ubulk"),
            (PackageFileKind::Header, ".uasset"),
        ] {
            let error = PackageSource::new(root.clone(), name, relative, [companion]).unwrap_err();
            assert!(
                matches!(error.kind(), crate::error::ErrorKind::Internal(_)),
                "{error}"
            );
        }
        // One allocation and 32 bytes a package (88 with two `String`s).
        #[cfg(target_pointer_width = "64")]
        assert_eq!(std::mem::size_of::<PackageSource>(), 32);
    }

    #[test]
    fn two_files_of_one_kind_of_one_package_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("MyGame/Content");
        std::fs::create_dir_all(&folder).unwrap();
        for name in ["A.uasset", "A.ubulk", "A.UBULK"] {
            std::fs::write(folder.join(name), name).unwrap();
        }
        let names = std::fs::read_dir(&folder).unwrap().count();
        if names < 3 {
            return; // a file system that ignores case holds one of them
        }
        let selection = Selection::new(&[], &[]).unwrap();
        let error = discover(dir.path(), "MyGame", &selection, false, false).unwrap_err();
        assert!(
            matches!(error.kind(), crate::error::ErrorKind::Usage(_)),
            "{error}"
        );
    }

    /// Small files are read whole by the Git LFS check and hashed there;
    /// the fingerprint then gives every file the hash of its contents,
    /// whether the check hashed it or the fingerprint read it itself.
    #[test]
    fn small_files_hashed_by_the_lfs_check_fingerprint_as_read_whole() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("MyGame/Content");
        std::fs::create_dir_all(&folder).unwrap();
        let max = crate::sniff::LFS_POINTER_MAX_LEN as usize;
        let sizes = [0, 1, 39, 40, 41, 700, max - 1, max, max + 1, 5000];
        for (n, size) in sizes.iter().enumerate() {
            let bytes: Vec<u8> = (0..*size).map(|i| (i * 7 + n) as u8).collect();
            std::fs::write(folder.join(format!("A{n}.uasset")), &bytes).unwrap();
            std::fs::write(dir.path().join(format!("MyGame/loose{n}.txt")), &bytes).unwrap();
        }
        let pointer = "version https://git-lfs.github.com/spec/v1\noid sha256:00\nsize 9\n";
        std::fs::write(folder.join("A3.uexp"), pointer).unwrap();
        std::fs::write(dir.path().join("MyGame/pointer.txt"), pointer).unwrap();
        let selection = Selection::new(&[], &[]).unwrap();
        let (mut content, problems) = scan(dir.path(), "MyGame", &selection, false).unwrap();
        // The package and the loose file that are pointers are taken out.
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert_eq!(content.packages.len(), sizes.len() - 1);
        assert_eq!(content.loose_files.len(), sizes.len());
        // Read by the check: every file small enough to be a pointer.
        for i in 0..content.stamps.len() {
            let small = content.stamps.stamp(i).size <= max as u64;
            assert_eq!(
                content.stamps.is_hashed(i),
                small,
                "{:?}",
                content.paths.path(i)
            );
        }
        let paths = std::mem::take(&mut content.paths);
        let stamps = super::super::cache::index::FileIndex::finish(
            std::mem::take(&mut content.stamps),
            &paths,
        )
        .unwrap();
        assert_eq!(stamps.stamps.len(), paths.len());
        for (i, stamp) in stamps.stamps.iter().enumerate() {
            let path = paths.path(i);
            let bytes = std::fs::read(&path).unwrap();
            assert_eq!(stamp.file.size, bytes.len() as u64, "{path:?}");
            assert_eq!(stamp.hash, *blake3::hash(&bytes).as_bytes(), "{path:?}");
        }
    }

    #[test]
    fn globs_keep_stars_inside_a_folder() {
        let s = Selection::new(&["MyGame/Content/*".into()], &["**/*.txt".into()]).unwrap();
        assert!(s.selects("MyGame/Content/a.uasset"));
        assert!(!s.selects("MyGame/Content/x/a.uasset"));
        assert!(!s.selects("MyGame/Content/a.txt"));
    }
}
