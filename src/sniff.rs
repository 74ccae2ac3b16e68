//! Which kind of file zenpak was given: decided from the first bytes and
//! the extension, before any reader runs. `zenpak inspect` dispatches on it.
//!
//! A file that starts like a package (the tag `C1 83 2A 9E`, or a file too
//! short to hold the whole tag whose bytes are a prefix of it) is a package:
//! its own reader then reports how it is cut short. Classic (UE1) and
//! UE4/UE5 packages share the tag; the word after it tells them apart (a
//! small positive file version, or a negative legacy file version), and the
//! extension decides when the file ends before that word.

use std::io::Read;
use std::path::Path;

use serde::Serialize;

use crate::error::{Error, Result};
use crate::legacy::PACKAGE_FILE_TAG;

/// A kind of file zenpak reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FileKind {
    /// A cooked UE4/UE5 package (`.uasset`/`.umap` + `.uexp`).
    LegacyPackage,
    /// A Zen package (header + export data) cut out of a container.
    ZenPackage,
    /// A UE1-era package (`.u`, `.unr`, `.utx`, …).
    ClassicPackage,
    /// An IoStore table of contents.
    Toc,
    /// A pak file.
    Pak,
    /// A `.usmap` mappings file.
    Mappings,
    /// An on-demand TOC (`.uondemandtoc`).
    OnDemandToc,
}

/// How many leading bytes [`sniff`] looks at.
pub(crate) const HEAD_LEN: usize = 64;

/// The `.utoc` magic.
const TOC_MAGIC: &[u8] = b"-==--==--==--==-";
/// The `.usmap` magic (`0x30C4` little-endian).
const MAPPINGS_MAGIC: [u8; 2] = [0xC4, 0x30];

/// How a Git LFS pointer file starts (the LFS specification's first line;
/// pointer files are text under 1024 bytes).
const LFS_POINTER_START: &[u8] = b"version https://git-lfs.github.com/spec/";

/// The largest file that can be a Git LFS pointer.
pub(crate) const LFS_POINTER_MAX_LEN: u64 = 1024;

/// Whether `head` (a file's first bytes) is a Git LFS pointer: the text a
/// repository keeps in place of a file stored in LFS until `git lfs pull`.
pub(crate) fn is_lfs_pointer(head: &[u8]) -> bool {
    head.starts_with(LFS_POINTER_START)
}

/// A file small enough to be a Git LFS pointer, read by [`read_small_file`].
pub(crate) struct SmallFile {
    bytes: [u8; LFS_POINTER_MAX_LEN as usize],
    len: usize,
    /// Whether what was read is the whole file, of the length it was given.
    whole: bool,
}

impl SmallFile {
    /// Its contents, when they were read whole and of the length given
    /// (`None`: it changed while being read).
    pub(crate) fn whole(&self) -> Option<&[u8]> {
        self.whole.then_some(&self.bytes[..self.len])
    }

    /// Whether it is a Git LFS pointer.
    pub(crate) fn is_lfs_pointer(&self) -> bool {
        is_lfs_pointer(&self.bytes[..self.len])
    }
}

/// The file at `path`, `len` bytes long, read whole when it is small enough
/// to be a Git LFS pointer (`None` when it is larger).
pub(crate) fn read_small_file(path: &Path, len: u64) -> Result<Option<SmallFile>> {
    if len > LFS_POINTER_MAX_LEN {
        return Ok(None);
    }
    let mut file = SmallFile {
        bytes: [0u8; LFS_POINTER_MAX_LEN as usize],
        len: 0,
        whole: false,
    };
    let mut reader = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut read = |buf: &mut [u8]| loop {
        match reader.read(buf) {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            done => return done.map_err(|e| Error::io(path, e)),
        }
    };
    while file.len < file.bytes.len() {
        match read(&mut file.bytes[file.len..])? {
            0 => break,
            n => file.len += n,
        }
    }
    // The end must be where the stamp said (a file that grew has more).
    file.whole = file.len as u64 == len && read(&mut [0u8; 1])? == 0;
    Ok(Some(file))
}

/// The error for a Git LFS pointer where a real file was expected (code `lfs-pointer`).
pub(crate) fn lfs_pointer_error(path: &Path) -> Error {
    Error::new(crate::error::ErrorKind::Content {
        code: "lfs-pointer",
        message: "this is a Git LFS pointer (a few lines of text naming the file kept in LFS), not the file itself".into(),
    })
    .in_file(path)
    .with_hint("run `git lfs pull` in the repository (after `git lfs install` if Git LFS is new on this machine), then run zenpak again; a CI checkout needs `lfs: true`")
}

/// Decides the kind of `path` from its first bytes `head` and its extension.
pub(crate) fn sniff(path: &Path, head: &[u8]) -> Result<FileKind> {
    if is_lfs_pointer(head) {
        return Err(lfs_pointer_error(path));
    }
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    let tag = PACKAGE_FILE_TAG.to_le_bytes();
    let starts_with_tag = head.len() >= 4 && head[..4] == tag;
    // An empty file of a package extension is a package cut at its first byte.
    let package_ext = crate::classic::deps::PACKAGE_EXTENSIONS.contains(&ext.as_str())
        || matches!(ext.as_str(), "uasset" | "umap");
    let cut_inside_tag =
        head.len() < 4 && tag.starts_with(head) && (package_ext || !head.is_empty());
    if starts_with_tag || cut_inside_tag {
        return Ok(package_kind(head, &ext));
    }
    if head.starts_with(TOC_MAGIC) || ext == "utoc" {
        return Ok(FileKind::Toc);
    }
    if head.starts_with(&MAPPINGS_MAGIC) {
        return Ok(FileKind::Mappings);
    }
    use crate::iostore::on_demand_toc::{MAGIC, SIGNATURE_V2};
    if head.starts_with(&MAGIC.to_le_bytes())
        || head.starts_with(SIGNATURE_V2)
        || ext == "uondemandtoc"
    {
        return Ok(FileKind::OnDemandToc);
    }
    match ext.as_str() {
        "pak" => Ok(FileKind::Pak),
        // `unpack` writes package chunks as `.uzenasset` / `.uzenmap` (maps).
        "uzenasset" | "uzenmap" | "uasset" | "umap" => Ok(FileKind::ZenPackage),
        // The argument was fine; the file is not one zenpak reads.
        _ => Err(
            Error::unsupported("not a file zenpak recognises by its first bytes or extension")
                .in_file(path)
                .with_hint("inspect reads packages (.uasset/.umap/.uzenasset/.uzenmap, classic .unr/.u/...), .utoc, .uondemandtoc, .pak and .usmap files"),
        ),
    }
}

/// A file that starts with (a prefix of) the package tag.
fn package_kind(head: &[u8], ext: &str) -> FileKind {
    let version = head
        .get(4..8)
        .map(|b| i32::from_le_bytes([b[0], b[1], b[2], b[3]]));
    match version {
        // UE4/UE5 legacy file versions are negative; classic ones small and positive.
        Some(v) if v < 0 => FileKind::LegacyPackage,
        Some(_) => FileKind::ClassicPackage,
        None if crate::classic::deps::PACKAGE_EXTENSIONS.contains(&ext) => FileKind::ClassicPackage,
        None => FileKind::LegacyPackage,
    }
}

/// Reads the first [`HEAD_LEN`] bytes of `path` and sniffs it.
pub fn sniff_file(path: &Path) -> Result<FileKind> {
    let mut file = crate::limits::open_regular(path)?;
    let mut head = Vec::with_capacity(HEAD_LEN);
    file.by_ref()
        .take(HEAD_LEN as u64)
        .read_to_end(&mut head)
        .map_err(|e| Error::io(path, e))?;
    sniff(path, &head)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packages_cut_inside_the_tag_stay_packages() {
        let tag = PACKAGE_FILE_TAG.to_le_bytes();
        for n in 1..4 {
            assert_eq!(
                sniff(Path::new("Map.unr"), &tag[..n]).unwrap(),
                FileKind::ClassicPackage
            );
            assert_eq!(
                sniff(Path::new("A.uasset"), &tag[..n]).unwrap(),
                FileKind::LegacyPackage
            );
        }
        assert_eq!(
            sniff(
                Path::new("A.uasset"),
                &[tag[0], tag[1], tag[2], tag[3], 0xF7]
            )
            .unwrap(),
            FileKind::LegacyPackage
        );
        let mut legacy = tag.to_vec();
        legacy.extend_from_slice(&(-8i32).to_le_bytes());
        assert_eq!(
            sniff(Path::new("x.bin"), &legacy).unwrap(),
            FileKind::LegacyPackage
        );
        let mut classic = tag.to_vec();
        classic.extend_from_slice(&69i32.to_le_bytes());
        assert_eq!(
            sniff(Path::new("x.bin"), &classic).unwrap(),
            FileKind::ClassicPackage
        );
    }

    #[test]
    fn other_kinds() {
        assert_eq!(sniff(Path::new("a.utoc"), b"").unwrap(), FileKind::Toc);
        assert_eq!(
            sniff(Path::new("a.usmap"), &[0xC4, 0x30, 3]).unwrap(),
            FileKind::Mappings
        );
        assert_eq!(sniff(Path::new("a.pak"), b"xx").unwrap(), FileKind::Pak);
        assert_eq!(
            sniff(Path::new("a.uzenasset"), b"zz").unwrap(),
            FileKind::ZenPackage
        );
        // A file zenpak does not read is bad input (exit 1), not a usage error.
        let e = sniff(Path::new("a.txt"), b"hello").unwrap_err();
        assert_eq!(e.code(), "unsupported");
        assert_eq!(e.file(), Some(Path::new("a.txt")));
        assert_eq!(sniff(Path::new("a.txt"), b"").unwrap_err().exit_code(), 1);
        // An empty file of a package extension is a package cut at byte 0.
        assert_eq!(
            sniff(Path::new("a.unr"), b"").unwrap(),
            FileKind::ClassicPackage
        );
        assert_eq!(
            sniff(Path::new("a.umap"), b"").unwrap(),
            FileKind::LegacyPackage
        );
    }
}
