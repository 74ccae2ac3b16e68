//! What the cache's files share: a disk stamp as they store it, and
//! writing one whole, unsynced.

use std::path::Path;

use crate::binary::{Reader, Writer};
use crate::error::{Error, Result};
use crate::publish::stamp::FileStamp;

/// Bytes of a [`FileStamp`] as the cache stores it.
pub(super) const STAMP_BYTES: usize = 32;

/// Writes a disk stamp as the cache stores it: size, modification time,
/// inode, change time (two's complement); each 8 bytes little-endian.
pub(super) fn write_stamp(w: &mut Writer, stamp: &FileStamp) {
    w.u64(stamp.size);
    w.u64(stamp.modified_ns);
    w.u64(stamp.inode);
    w.i64(stamp.changed_ns);
}

/// The stamp [`write_stamp`] wrote.
pub(super) fn read_stamp(r: &mut Reader) -> Result<FileStamp> {
    Ok(FileStamp {
        size: r.u64()?,
        modified_ns: r.u64()?,
        inode: r.u64()?,
        changed_ns: r.i64()?,
    })
}

/// Writes a cache bookkeeping file through a unique temporary and a rename,
/// not synced: each is checked when read (its checksum, its layout), and one
/// a crash loses costs only work.
pub(crate) fn write_cache_file(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    crate::publish::write_file_unsynced(path, |f| {
        f.write_all(bytes).map_err(|e| Error::io(f.path(), e))
    })
}
