//! What a build reads, as the stages and the cache share it: a package's
//! files on disk ([`PackageSource`], [`PackageFileKind`]), a file that is
//! not part of a package ([`LooseFile`]), what the cache remembers of an
//! input file ([`InputStamp`]: its stamp and BLAKE3 [`Hash`](type@Hash)), and how far
//! a build trusts what it remembers ([`Trust`]). A leaf of `build`: it uses
//! no other module of `build`.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::legacy::BulkKind;

/// A BLAKE3 hash.
pub(crate) type Hash = [u8; 32];

/// How much a build takes from the cache on its stamps alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Trust {
    /// A development build: what the stamps say is unchanged is not read again.
    Stamps,
    /// A release build: every cached thing is checked against the hash of
    /// what it was made from.
    Contents,
    /// A `--force` build: nothing cached is read.
    Nothing,
}

impl Trust {
    pub(crate) fn of(force: bool, release: bool) -> Trust {
        match (force, release) {
            (true, _) => Trust::Nothing,
            (false, true) => Trust::Contents,
            (false, false) => Trust::Stamps,
        }
    }
}

/// What the cache remembers of one input file: its stamp on disk and the
/// BLAKE3 of its contents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct InputStamp {
    pub(crate) file: crate::publish::stamp::FileStamp,
    pub(crate) hash: Hash,
}

/// Files larger than this are hashed in pieces on every core ([`hash_large_file`]).
pub(crate) const LARGE_FILE: u64 = 8 << 20;

/// BLAKE3 of a file's contents.
pub(crate) fn hash_file(path: &Path) -> Result<Hash> {
    let mut hasher = blake3::Hasher::new();
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    hasher.update_reader(file).map_err(|e| Error::io(path, e))?;
    Ok(*hasher.finalize().as_bytes())
}

/// [`hash_file`] for a large file (an output `.ucas`): read in pieces of a
/// few MiB, each hashed on every core (BLAKE3 splits its input into
/// independent subtrees), so memory stays bounded.
pub(crate) fn hash_large_file(path: &Path) -> Result<Hash> {
    use std::io::Read;
    const PIECE: usize = 8 << 20;
    let mut hasher = blake3::Hasher::new();
    let mut file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut buffer = vec![0u8; PIECE];
    loop {
        let mut filled = 0;
        while filled < PIECE {
            match file.read(&mut buffer[filled..]) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(Error::io(path, e)),
            }
        }
        hasher.update_rayon(&buffer[..filled]);
        if filled < PIECE {
            break;
        }
    }
    Ok(*hasher.finalize().as_bytes())
}

/// What role a cooked file plays in its package.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum PackageFileKind {
    /// `.uasset` or `.umap`: the package header.
    Header,
    /// `.uexp`: the exports' data.
    Exports,
    /// `.ubulk`: bulk data.
    Bulk,
    /// `.uptnl`: optional bulk data.
    OptionalBulk,
    /// `.m.ubulk`: memory-mapped bulk data.
    MemoryMappedBulk,
}

impl PackageFileKind {
    /// The kinds a package's files other than its header can have.
    const COMPANIONS: [PackageFileKind; 4] = [
        PackageFileKind::Exports,
        PackageFileKind::Bulk,
        PackageFileKind::OptionalBulk,
        PackageFileKind::MemoryMappedBulk,
    ];

    /// The kind of a package's file that holds bulk data of `kind`.
    pub(crate) fn of_bulk(kind: BulkKind) -> PackageFileKind {
        match kind {
            BulkKind::Bulk => PackageFileKind::Bulk,
            BulkKind::Optional => PackageFileKind::OptionalBulk,
            BulkKind::MemoryMapped => PackageFileKind::MemoryMappedBulk,
        }
    }

    /// The extension of a file of this kind, with its dot (`.uasset` for
    /// a header, whose other spelling `.umap` is kept by its path).
    pub(crate) fn extension(self) -> &'static str {
        match self {
            PackageFileKind::Header => ".uasset",
            PackageFileKind::Exports => ".uexp",
            PackageFileKind::Bulk => ".ubulk",
            PackageFileKind::OptionalBulk => ".uptnl",
            PackageFileKind::MemoryMappedBulk => ".m.ubulk",
        }
    }

    /// Which byte of [`PackageSource`]'s companion bits is this kind's
    /// (`None` for a header).
    fn companion_shift(self) -> Option<u32> {
        let at = PackageFileKind::COMPANIONS
            .iter()
            .position(|k| *k == self)?;
        Some(8 * at as u32)
    }

    /// Splits `name` into its stem and kind, or `None` for files that are not part of a package.
    pub(crate) fn classify(name: &str) -> Option<(&str, PackageFileKind)> {
        // The longest extension first: `.m.ubulk` also ends with `.ubulk`.
        const SUFFIXES: [(&str, PackageFileKind); 6] = [
            (".m.ubulk", PackageFileKind::MemoryMappedBulk),
            (".uasset", PackageFileKind::Header),
            (".umap", PackageFileKind::Header),
            (".uexp", PackageFileKind::Exports),
            (".ubulk", PackageFileKind::Bulk),
            (".uptnl", PackageFileKind::OptionalBulk),
        ];
        SUFFIXES.iter().find_map(|(suffix, kind)| {
            // An ASCII suffix matched byte for byte starts at a character.
            let stem_len = name.len().checked_sub(suffix.len())?;
            name.as_bytes()[stem_len..]
                .eq_ignore_ascii_case(suffix.as_bytes())
                .then(|| (&name[..stem_len], *kind))
        })
    }
}

/// One package's files on disk: a compact record (the build keeps one per
/// package until the container is written: 32 bytes on a 64-bit system
/// and one allocation each), from which the files' paths are made when they are needed.
#[derive(Clone)]
pub struct PackageSource {
    /// The package name, then the header's relative path, one after the
    /// other in one allocation ([`PackageSource::package_name`],
    /// [`PackageSource::relative_path`]).
    names: Box<str>,
    /// The folder the relative path is relative to (shared by every
    /// package of one scan; an `Arc<PathBuf>` is one pointer, an
    /// `Arc<Path>` two).
    root: std::sync::Arc<PathBuf>,
    /// How many bytes of `names` the package name takes.
    name_len: u32,
    /// Which companions the package has, and their extensions' spelling:
    /// byte `i` for [`PackageFileKind::COMPANIONS`]`[i]`, with bit 0 set
    /// when the package has that file (byte 0 of an extension is its dot,
    /// never uppercase) and bit `j` when byte `j` of its extension as found
    /// is uppercase (`.UEXP`, `.M.UBulk`; usually none is).
    companions: u32,
}

impl PackageSource {
    /// The record of the package `package_name` whose header is at
    /// `relative_path` (`/`-separated) in `root`, with its other files given
    /// by kind and extension as found (the kind's extension in any case).
    /// A package name too long to record is a usage error.
    pub(crate) fn new<'a>(
        root: std::sync::Arc<PathBuf>,
        package_name: &str,
        relative_path: &str,
        companions: impl IntoIterator<Item = (PackageFileKind, &'a str)>,
    ) -> Result<PackageSource> {
        let name_len = u32::try_from(package_name.len()).map_err(|_| {
            Error::usage(format!(
                "package name of {} bytes is too long",
                package_name.len()
            ))
            .with_hint("shorten the package's folder names or file name")
        })?;
        let mut bits = 0u32;
        for (kind, found) in companions {
            let extension = kind.extension().as_bytes();
            let shift = kind
                .companion_shift()
                .filter(|_| found.as_bytes().eq_ignore_ascii_case(extension))
                .ok_or_else(|| {
                    Error::internal(format!(
                        "`{found}` is not the extension of a package's {kind:?} file"
                    ))
                })?;
            let spelling = found
                .bytes()
                .enumerate()
                .filter(|(_, b)| b.is_ascii_uppercase())
                .fold(1u32, |bits, (j, _)| bits | 1 << j);
            bits |= spelling << shift;
        }
        let mut names = String::with_capacity(package_name.len() + relative_path.len());
        names.push_str(package_name);
        names.push_str(relative_path);
        Ok(PackageSource {
            names: names.into_boxed_str(),
            root,
            name_len,
            companions: bits,
        })
    }

    /// The engine's name for it, e.g. `/Game/Characters/Hero`.
    pub fn package_name(&self) -> &str {
        &self.names[..self.name_len as usize]
    }

    /// Path of the header relative to the content root, with `/` separators
    /// (`MyGame/Content/Characters/Hero.uasset`): its path in the container.
    pub fn relative_path(&self) -> &str {
        &self.names[self.name_len as usize..]
    }

    /// The companion bits of `kind` (see `companions`), 0 when the package
    /// has no such file.
    fn companion_bits(&self, kind: PackageFileKind) -> u8 {
        kind.companion_shift()
            .map_or(0, |shift| (self.companions >> shift) as u8)
    }

    /// The header (`.uasset`/`.umap`) on disk.
    pub(crate) fn header(&self) -> PathBuf {
        join_relative(&self.root, self.relative_path())
    }

    /// The kinds of the package's other files, in kind order.
    pub(crate) fn companion_kinds(&self) -> impl Iterator<Item = PackageFileKind> + '_ {
        PackageFileKind::COMPANIONS
            .into_iter()
            .filter(|kind| self.companion_bits(*kind) & 1 != 0)
    }

    /// The package's file of `kind` other than the header, if it has one.
    pub(crate) fn companion(&self, kind: PackageFileKind) -> Option<PathBuf> {
        let bits = self.companion_bits(kind);
        if bits & 1 == 0 {
            return None;
        }
        // The extension as found: the kind's, with the letters it had in
        // uppercase put back so (an extension is at most 8 ASCII bytes).
        let mut spelled = [0u8; 8];
        let extension = kind.extension().as_bytes();
        for (j, (to, from)) in spelled.iter_mut().zip(extension).enumerate() {
            *to = if bits >> j & 1 != 0 {
                from.to_ascii_uppercase()
            } else {
                *from
            };
        }
        let extension =
            std::str::from_utf8(&spelled[..extension.len()]).unwrap_or(kind.extension());
        let relative = self.relative_path();
        let name = relative.rsplit('/').next().unwrap_or_default();
        let stem_len = PackageFileKind::classify(name).map_or(name.len(), |(s, _)| s.len());
        let stem = &relative[..relative.len() - name.len() + stem_len];
        let mut path = join_relative(&self.root, stem);
        path.as_mut_os_string().push(extension);
        Some(path)
    }

    /// Every other file of the package, by kind (in kind order).
    pub(crate) fn companions(&self) -> impl Iterator<Item = (PackageFileKind, PathBuf)> + '_ {
        self.companion_kinds()
            .filter_map(|kind| Some((kind, self.companion(kind)?)))
    }

    /// All files of the package, header first.
    pub(crate) fn files(&self) -> impl Iterator<Item = PathBuf> + '_ {
        std::iter::once(self.header()).chain(self.companions().map(|(_, p)| p))
    }

    /// How many files the package has.
    pub(crate) fn file_count(&self) -> usize {
        1 + (self.companions & 0x0101_0101).count_ones() as usize
    }
}

impl std::fmt::Debug for PackageSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PackageSource")
            .field("package_name", &self.package_name())
            .field("relative_path", &self.relative_path())
            .field("root", &self.root)
            .field("companions", &format_args!("{:#010x}", self.companions))
            .finish()
    }
}

/// `root` joined with a `/`-separated relative path, one component at a
/// time (so that the separators are the system's).
pub(crate) fn join_relative(root: &Path, relative: &str) -> PathBuf {
    let mut path = PathBuf::with_capacity(root.as_os_str().len() + relative.len() + 16);
    path.push(root);
    if cfg!(unix)
        && !relative
            .split('/')
            .any(|part| part.is_empty() || part == "..")
    {
        // `/` is the separator: one push of the whole path is the same.
        path.push(relative);
        return path;
    }
    for part in relative.split('/') {
        path.push(part);
    }
    path
}

/// A file that is not part of a package; it goes into the companion pak.
#[derive(Debug, Clone)]
pub struct LooseFile {
    /// Path relative to the content root with `/` separators: its path in the pak.
    pub(crate) relative_path: String,
    pub(crate) path: PathBuf,
}
