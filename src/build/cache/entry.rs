//! A converted package as the cache keeps it: one entry of the entry pack
//! ([`super::entry_pack`]), written by [`save`] and read back by [`load`]
//! (side by side: [`encode`], [`decode`]).

use crate::binary::{Reader, Writer};
use crate::build::built::{BuiltPackage, BulkChunk};
use crate::build::input::{Hash, PackageFileKind, PackageSource};
use crate::error::{Error, Result};
use crate::iostore::container_header::StoreEntry;
use crate::legacy::BulkKind;

use super::entry_pack::EntryPack;

/// Marks a cached package file and its layout; bump when the layout changes.
const CACHE_MAGIC: &[u8; 8] = b"ZPKGC\x00\x00\x05";

/// What the cache has for a package.
#[derive(Debug)]
pub(crate) enum Cached {
    Hit(Box<BuiltPackage>),
    /// Nothing usable (absent, older layout, or its files changed length).
    Miss,
    /// The entry's checksum does not match: damaged on disk. Converted again.
    Damaged(Error),
}

fn bulk_kind_code(kind: BulkKind) -> u8 {
    match kind {
        BulkKind::Bulk => 0,
        BulkKind::Optional => 1,
        BulkKind::MemoryMapped => 2,
    }
}

/// How [`save`] treats an entry the pack already holds for its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Existing {
    /// Kept when its head (magic and checksum) and length are the new
    /// entry's (a `--force` build, which did not load it): the key names
    /// the content, so it holds these bytes unless damaged, and a damaged
    /// body fails the checksum when it is next loaded.
    KeepIfSame,
    /// Replaced: it was loaded and found missing, of an older layout or
    /// damaged.
    Replace,
}

/// Length of an entry's head: the magic and the checksum of the rest.
const CACHE_HEAD: usize = CACHE_MAGIC.len() + 32;

/// The package as a cache entry under `key` (recorded in the entry, so
/// an entry found under another key is known for what it is), after a
/// BLAKE3 checksum of the rest of the entry.
fn encode(built: &BuiltPackage, key: &Hash) -> Vec<u8> {
    let mut w = Writer::with_capacity(built.head.len() + 256);
    w.bytes(CACHE_MAGIC);
    w.zeros(32);
    w.bytes(key);
    w.u64(built.package_id);
    w.fstring_ext(&built.package_name, false);
    w.u64(built.head.len() as u64);
    w.bytes(&built.head);
    w.u64(built.uexp_tail.as_ref().map_or(0, |(_, len)| *len));
    write_bulk(&mut w, built.bulk.iter().map(|b| (b.kind, b.len)));
    write_store_fields(&mut w, &built.store_entry);
    w.u32(built.soft_package_references.len() as u32);
    for name in &built.soft_package_references {
        w.fstring(name);
    }
    w.u8(u8::from(built.export_graph.is_some()));
    if let Some(graph) = &built.export_graph {
        graph.write(&mut w);
    }
    let mut bytes = w.into_inner();
    let checksum = blake3::hash(&bytes[CACHE_HEAD..]);
    bytes[CACHE_MAGIC.len()..CACHE_HEAD].copy_from_slice(checksum.as_bytes());
    bytes
}

/// Saves the package to the cache's pack under `key` (not synced: a
/// torn or damaged entry fails its checksum and is converted again).
pub(crate) fn save(
    built: &BuiltPackage,
    entries: &EntryPack,
    key: &Hash,
    existing: Existing,
) -> Result<()> {
    let bytes = encode(built, key);
    if existing == Existing::KeepIfSame && entries.holds(key, &bytes, CACHE_HEAD) {
        return Ok(());
    }
    entries.save(key, &bytes)
}

/// Reads the package with `key` back from the cache's pack. Its `.uexp`
/// tail and bulk data are taken from `source`'s files, which must still
/// have their lengths. An entry that is not whole, holds another key,
/// or is another package is [`Cached::Damaged`], named by the pack and
/// the entry's offset in it.
pub(crate) fn load(entries: &EntryPack, key: &Hash, source: &PackageSource) -> Cached {
    let (bytes, offset) = match entries.load(key) {
        Ok(Some(found)) => found,
        Ok(None) => return Cached::Miss,
        Err(e) => return Cached::Damaged(e.within("build cache entry")),
    };
    let damaged = |e: Error| {
        let at = offset + e.offset().unwrap_or(0);
        Cached::Damaged(e.within("build cache entry").in_file(entries.path()).at(at))
    };
    if !bytes.starts_with(CACHE_MAGIC) {
        return Cached::Miss;
    }
    if bytes.len() < CACHE_HEAD {
        return damaged(Error::invalid("the cache entry is truncated"));
    }
    let (checksum, body) = bytes[CACHE_MAGIC.len()..].split_at(32);
    if blake3::hash(body).as_bytes() != checksum {
        return damaged(Error::new(crate::error::ErrorKind::HashMismatch {
            algorithm: "BLAKE3",
            expected: crate::hash::hex(checksum),
            actual: blake3::hash(body).to_hex().to_string(),
        }));
    }
    let (mut built, tail, bulk_lengths) = match decode(&bytes, key) {
        Ok(decoded) => decoded,
        Err(e) => return damaged(e),
    };
    if built.package_name != source.package_name() {
        return damaged(Error::invalid(format!(
            "the entry holds package `{}`, not `{}`",
            built.package_name,
            source.package_name()
        )));
    }
    if tail > 0 {
        match source.companion(PackageFileKind::Exports) {
            Some(uexp) => built.uexp_tail = Some((uexp, tail)),
            None => return Cached::Miss,
        }
    }
    // The companions' lengths are not looked at again: the entry's key
    // covers the contents (and so the lengths) they had when the build
    // fingerprinted them.
    for (kind, len) in bulk_lengths {
        match source.companion(PackageFileKind::of_bulk(kind)) {
            Some(path) => built.bulk.push(BulkChunk { kind, path, len }),
            None => return Cached::Miss,
        }
    }
    Cached::Hit(Box::new(built))
}

/// The cached record, the `.uexp` tail length, and each bulk chunk's
/// kind and length, from a whole entry whose checksum was checked.
fn decode(bytes: &[u8], key: &Hash) -> Result<DecodedEntry> {
    let mut r = Reader::new(bytes);
    r.bytes(CACHE_HEAD)?;
    let recorded = r.array::<32>()?;
    if recorded != *key {
        return Err(r.error_at(
            CACHE_HEAD,
            format!(
                "the entry was made for key {}, not for the key its name says ({})",
                crate::hash::hex(&recorded),
                crate::hash::hex(key)
            ),
        ));
    }
    let package_id = r.u64()?;
    let package_name = r.fstring()?;
    let at = r.pos();
    let len = r.u64()?;
    let len = r.check_count_at(at, len.min(i64::MAX as u64) as i64, 1)?;
    let head = r.bytes(len)?.to_vec();
    let tail = r.u64()?;
    let bulk_lengths = read_bulk(&mut r)?;
    let store_entry = read_store_fields(&mut r)?;
    let n = r.count_u32(4)?;
    let soft_package_references = (0..n).map(|_| r.fstring()).collect::<Result<_>>()?;
    let export_graph = match r.u8()? {
        0 => None,
        _ => Some(crate::zen::ExportGraph::read(&mut r)?),
    };
    if !r.at_end() {
        return Err(r.error("unexpected bytes after the cached package"));
    }
    let built = BuiltPackage {
        fixups: Vec::new(),
        warnings: Vec::new(),
        package_id,
        package_name,
        head,
        uexp_tail: None,
        bulk: Vec::new(),
        store_entry,
        soft_package_references,
        export_graph,
    };
    Ok((built, tail, bulk_lengths))
}
/// Writes each bulk chunk's kind and length (a cache entry, a container record).
pub(super) fn write_bulk(w: &mut Writer, bulk: impl ExactSizeIterator<Item = (BulkKind, u64)>) {
    w.u32(bulk.len() as u32);
    for (kind, len) in bulk {
        w.u8(bulk_kind_code(kind));
        w.u64(len);
    }
}

/// The bulk chunks [`write_bulk`] wrote.
pub(super) fn read_bulk(r: &mut Reader) -> Result<Vec<(BulkKind, u64)>> {
    let count = r.count_u32(9)?;
    let mut bulk = Vec::with_capacity(count);
    for _ in 0..count {
        let kind = match r.u8()? {
            0 => BulkKind::Bulk,
            1 => BulkKind::Optional,
            2 => BulkKind::MemoryMapped,
            other => return Err(r.error(format!("unknown bulk kind {other}"))),
        };
        bulk.push((kind, r.u64()?));
    }
    Ok(bulk)
}

/// Writes what a store entry says of its package besides sizes and load
/// order: export and bundle counts, imports, shader maps.
pub(super) fn write_store_fields(w: &mut Writer, entry: &StoreEntry) {
    w.u32(entry.export_count as u32);
    w.u32(entry.export_bundle_count as u32);
    w.u32(entry.imported_packages.len() as u32);
    for id in &entry.imported_packages {
        w.u64(*id);
    }
    w.u32(entry.shader_map_hashes.len() as u32);
    for hash in &entry.shader_map_hashes {
        w.bytes(hash);
    }
}

/// The store entry [`write_store_fields`] wrote (size and load order 0).
pub(super) fn read_store_fields(r: &mut Reader) -> Result<StoreEntry> {
    let export_count = r.u32()? as i32;
    let export_bundle_count = r.u32()? as i32;
    let n = r.count_u32(8)?;
    let imported_packages = (0..n).map(|_| r.u64()).collect::<Result<_>>()?;
    let n = r.count_u32(20)?;
    let shader_map_hashes = (0..n).map(|_| r.array::<20>()).collect::<Result<_>>()?;
    Ok(StoreEntry {
        export_count,
        export_bundle_count,
        imported_packages,
        shader_map_hashes,
        ..StoreEntry::default()
    })
}

/// A decoded cache entry: the package without its files, the `.uexp` tail's
/// length, and each bulk chunk's kind and length.
type DecodedEntry = (BuiltPackage, u64, Vec<(BulkKind, u64)>);
