//! Reads a pak of any version: footer, index (the flat index before
//! version 10, the primary index with its full directory index from 10)
//! and entry data, streamed block by block.
//!
//! Nothing is allocated from a length field that the file has not been
//! checked to hold, and a pak whose entries overlap each other, run past
//! the data area, or list blocks that overlap or cannot produce the
//! declared size is refused when it is opened ([`PakReader::open`]), so a
//! small hostile pak cannot make `unpack` write (or `verify` inflate) more
//! than its blocks really hold.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::crypto::{AesKey, KeyRing, AES_BLOCK};
use super::entry::PakEntry;
use super::index::{FlatIndex, FullDirectoryIndex, PakFooter, PathHashIndex, PrimaryIndex};
use super::sha1;
use crate::compression::Compression;
use crate::diagnostic::Diagnostic;
use crate::error::{Context, Error, ErrorKind, Result};
use crate::version::PakVersion;

/// Largest compression block size accepted (the engine's default is 64 KiB).
pub(crate) const MAX_PAK_BLOCK_SIZE: u32 = 16 << 20;

/// Bytes read at a time from an uncompressed entry (a multiple of 16, so
/// encrypted runs decrypt piece by piece).
const COPY_PIECE: u64 = 1 << 20;

/// An entry as listed by [`PakReader::entries`].
#[derive(Debug, Clone, Serialize)]
pub struct PakEntryInfo {
    /// Path relative to the mount point.
    pub path: String,
    pub(crate) offset: u64,
    pub size: u64,
    pub uncompressed_size: u64,
    /// The method's engine name (`None`, `Zlib`, `Oodle`, …).
    pub compression: String,
    pub encrypted: bool,
    #[serde(skip)]
    entry: PakEntry,
}

/// An open pak.
#[derive(Debug)]
pub struct PakReader {
    path: PathBuf,
    pub version: PakVersion,
    pub mount_point: String,
    pub encrypted_index: bool,
    pub(crate) encryption_key_guid: [u8; 16],
    pub compression_methods: Vec<String>,
    /// The seed of the path-hash index (version 10+).
    pub path_hash_seed: Option<u64>,
    /// Entries sorted by path (delete records are in `deleted`).
    pub entries: Vec<PakEntryInfo>,
    /// Paths a patch pak marks as deleted (version 6+ delete records).
    pub deleted: Vec<String>,
    /// Paths the index lists more than once: `entries` holds the copy the
    /// engine keeps (see [`keep_last_of_each_path`]), these the others.
    pub(crate) repeated: Vec<RepeatedPath>,
    key: Option<AesKey>,
}

/// A path a pak's index lists more than once.
#[derive(Debug, Clone)]
pub(crate) struct RepeatedPath {
    /// The path as the dropped copy is listed.
    pub(crate) path: String,
    /// Offset of the dropped copy's record.
    pub(crate) dropped: u64,
    /// Offset of the record of the copy the engine keeps.
    pub(crate) kept: u64,
}

/// Keeps, of entries listing one path (compared ignoring case) more than
/// once, the last listed: the engine's `FPakFile::LoadIndex` adds each entry
/// in index order to a `TMap` keyed by its path (`FPakDirectory`, an
/// `FString` map, case-insensitive), and `TMap::Add` replaces the value of a
/// key already there, so the last one listed is the file the game reads
/// (from version 10 the directory index is loaded into the same maps, in
/// the order it lists them). Returns the dropped copies.
fn keep_last_of_each_path(entries: &mut Vec<PakEntryInfo>) -> Vec<RepeatedPath> {
    let mut last: std::collections::HashMap<String, usize> = Default::default();
    for (i, e) in entries.iter().enumerate() {
        last.insert(e.path.to_lowercase(), i);
    }
    if last.len() == entries.len() {
        return Vec::new();
    }
    let offsets: Vec<u64> = entries.iter().map(|e| e.offset).collect();
    let mut repeated = Vec::new();
    let mut i = 0;
    entries.retain(|e| {
        let kept = last[&e.path.to_lowercase()];
        if kept != i {
            repeated.push(RepeatedPath {
                path: e.path.clone(),
                dropped: e.offset,
                kept: offsets[kept],
            });
        }
        i += 1;
        kept == i - 1
    });
    repeated
}

/// `entry-name-unreachable`: a stored name (`what`: a pak entry, a
/// container path) that no path the game looks up can reach.
pub(crate) fn unreachable_warning(what: &str, name: &str, why: &str) -> Diagnostic {
    Diagnostic::warning(
        "entry-name-unreachable",
        format!(
            "{what} `{name}` {why}: the engine mounts it, but no path the game looks up names it, so it is not a file of the game (unpack refuses to write it)"
        ),
    )
    .with_hint("the pak or container was made by a broken or hostile tool; make it again with plain relative paths")
}

/// Reads `len` bytes at `offset`, checking first that the file holds them.
fn read_at(file: &mut File, file_len: u64, offset: u64, len: u64, what: &str) -> Result<Vec<u8>> {
    if offset.checked_add(len).is_none_or(|end| end > file_len) {
        return Err(Error::format(
            offset,
            format!("{what} ({len} bytes) runs past the end of the file ({file_len} bytes)"),
        ));
    }
    file.seek(SeekFrom::Start(offset))
        .map_err(|e| Error::new(ErrorKind::Io(e)).at(offset))?;
    let mut buf = vec![0u8; len as usize];
    file.read_exact(&mut buf)
        .map_err(|e| Error::new(ErrorKind::Io(e)).at(offset))?;
    Ok(buf)
}

fn missing_key(what: &str) -> Error {
    Error::key(format!("{what} is encrypted and no AES key was given"))
        .with_hint("give the key with --aes-key, --aes-key-file or ZENPAK_AES_KEY")
}

/// The engine name of an entry's stored method.
fn method_name(version: PakVersion, methods: &[String], method: u32) -> Result<String> {
    if method == 0 {
        return Ok("None".into());
    }
    if version.compression_method_names() == 0 {
        // `ECompressionFlags`; the bias bits (0x10, 0x20) do not change the format.
        return match method & 0x0f {
            1 => Ok("Zlib".into()),
            2 => Ok("Gzip".into()),
            // COMPRESS_Custom: the game's own codec, in practice Oodle.
            4 => Ok("Oodle".into()),
            _ => Err(Error::invalid(format!(
                "compression flags 0x{method:x} name no known method"
            ))),
        };
    }
    methods
        .get(method as usize - 1)
        .filter(|m| !m.is_empty())
        .cloned()
        .ok_or_else(|| {
            Error::invalid(format!(
                "compression method {method} is not named in the footer ({} names)",
                methods.len()
            ))
        })
}

impl PakReader {
    /// Opens a pak and parses its index. An encrypted index or encrypted
    /// entries need `key`.
    pub fn open(path: &Path, key: Option<AesKey>) -> Result<Self> {
        Self::open_with_keys(path, &KeyRing::single(key))
    }

    /// Opens a pak, taking the key its footer's GUID names from `keys`.
    pub fn open_with_keys(path: &Path, keys: &KeyRing) -> Result<Self> {
        Self::open_inner(path, keys).map_err(|e| e.in_file(path))
    }

    fn open_inner(path: &Path, keys: &KeyRing) -> Result<Self> {
        let mut file = crate::limits::open_regular(path)?;
        let len = file.metadata().map_err(|e| Error::io(path, e))?.len();
        let tail_len = len.min(super::FOOTER_SEARCH_BYTES as u64);
        let tail = read_at(&mut file, len, len - tail_len, tail_len, "footer")?;
        let footer = PakFooter::find(&tail, len - tail_len).context("pak footer")?;
        let version = footer.version;
        if footer.frozen_index {
            return Err(Error::unsupported(
                "the pak's index is frozen (a memory image UnrealPak writes on request)",
            )
            .within("pak footer"));
        }
        let key = keys.key_for(&footer.encryption_key_guid);
        let encrypted_index = footer.encrypted_index;
        // Reads one part of the index: decrypts it and checks its SHA-1.
        let mut read_part =
            |offset: u64, size: u64, hash: [u8; 20], what: &str| -> Result<Vec<u8>> {
                // Read whole, so only within its budget (see `crate::limits`).
                crate::limits::check_declared(what, size, crate::limits::MAX_PAK_INDEX_BYTES, len)
                    .map_err(|e| e.at(offset).within(what.to_string()))?;
                // Without the key the index is not read at all (a game of
                // locked paks would read every index for nothing).
                if encrypted_index && key.is_none() {
                    return Err(missing_key(&format!("the {what}")));
                }
                let mut data = read_at(&mut file, len, offset, size, what)?;
                if let (true, Some(key)) = (encrypted_index, key.as_ref()) {
                    key.decrypt(&mut data)
                        .map_err(|e| e.within(what.to_string()))?;
                }
                if sha1(&data) != hash {
                    let err = Error::format(offset, format!("the {what}'s SHA-1 does not match"));
                    return Err(if encrypted_index {
                        err.with_hint("the AES key is wrong, or the pak is corrupt")
                    } else {
                        err.with_hint("the pak is corrupt")
                    });
                }
                Ok(data)
            };
        let index = read_part(
            footer.index_offset,
            footer.index_size,
            footer.index_hash,
            "index",
        )?;
        let mut r = crate::binary::Reader::with_base(&index, footer.index_offset);
        let mut listed: Vec<(String, PakEntry)> = Vec::new();
        let mount_point;
        let mut path_hash_seed = None;
        if version.has_path_hash_index() {
            let primary = PrimaryIndex::read(&mut r, version).context("pak index")?;
            mount_point = primary.mount_point.clone();
            path_hash_seed = Some(primary.path_hash_seed);
            if let Some(l) = primary.path_hash_index {
                // Read for integrity: its hash is checked, its entries must parse.
                let data = read_part(l.offset, l.size, l.hash, "path hash index")?;
                PathHashIndex::read(&mut crate::binary::Reader::with_base(&data, l.offset))
                    .context("pak path hash index")?;
            }
            let l = primary.full_directory_index.ok_or_else(|| {
                Error::unsupported(
                    "the pak has no full directory index, so its file names are unknown",
                )
                .within("pak index")
            })?;
            let data = read_part(l.offset, l.size, l.hash, "full directory index")?;
            let fdi = FullDirectoryIndex::read(
                &mut crate::binary::Reader::with_base(&data, l.offset),
                version,
            )
            .context("pak directory index")?;
            listed = Self::resolve_locations(&primary, &fdi, version)?;
            if listed.len() != primary.entry_count as usize {
                return Err(Error::invalid(format!(
                    "the index says {} entries, its directory index lists {}",
                    primary.entry_count,
                    listed.len()
                ))
                .within("pak index"));
            }
        } else {
            let flat = FlatIndex::read(&mut r, version).context("pak index")?;
            mount_point = flat.mount_point;
            for (name, mut entry) in flat.entries {
                entry
                    .make_blocks_relative(version)
                    .map_err(|e| e.within(format!("entry `{name}`")))?;
                listed.push((name, entry));
            }
        }
        let (mut entries, mut deleted) =
            Self::entry_infos(listed, version, &footer.compression_methods)?;
        check_layout(&entries, version, footer.index_offset)?;
        let repeated = keep_last_of_each_path(&mut entries);
        entries.sort_by(|a, b| a.path.cmp(&b.path));
        deleted.sort();
        Ok(PakReader {
            path: path.to_path_buf(),
            version,
            mount_point,
            encrypted_index,
            encryption_key_guid: footer.encryption_key_guid,
            compression_methods: footer.compression_methods.clone(),
            path_hash_seed,
            entries,
            deleted,
            repeated,
            key,
        })
    }

    /// What the index holds that the game will not read as listed: paths
    /// listed twice (`pak-path-twice`: the engine reads the last) and names
    /// no path the game asks for can reach (`entry-name-unreachable`),
    /// the first few of each kind.
    pub(crate) fn index_warnings(&self) -> Vec<Diagnostic> {
        let mut kinds = crate::diagnostic::PerKind::default();
        let mut out = Vec::new();
        let mut push = |d: Diagnostic| {
            let d = d.with_file(&self.path);
            if kinds.admit(&d) {
                out.push(d);
            }
        };
        for r in &self.repeated {
            push(
                Diagnostic::warning(
                    "pak-path-twice",
                    format!(
                        "the pak lists `{}` twice (records at offsets {} and {}); the engine reads the last one listed (offset {}), and so does zenpak",
                        r.path, r.dropped, r.kept, r.kept
                    ),
                )
                .with_hint("make the pak again with one copy of the file"),
            );
        }
        for e in &self.entries {
            if let Some(why) = crate::mount::unreachable_name(&e.path) {
                push(unreachable_warning("pak entry", &e.path, why));
            }
        }
        out.extend(kinds.summaries());
        out
    }

    /// The listed entries as the reader keeps them (deleted ones by name only).
    fn entry_infos(
        listed: Vec<(String, PakEntry)>,
        version: PakVersion,
        methods: &[String],
    ) -> Result<(Vec<PakEntryInfo>, Vec<String>)> {
        let mut entries = Vec::with_capacity(listed.len());
        let mut deleted = Vec::new();
        for (path, entry) in listed {
            if entry.deleted {
                deleted.push(path);
                continue;
            }
            let compression = method_name(version, methods, entry.method)
                .map_err(|e| e.within(format!("entry `{path}`")))?;
            entries.push(PakEntryInfo {
                path,
                offset: entry.offset,
                size: entry.size,
                uncompressed_size: entry.uncompressed_size,
                compression,
                encrypted: entry.encrypted,
                entry,
            });
        }
        Ok((entries, deleted))
    }

    /// The entries the directory index names, each decoded from its location.
    fn resolve_locations(
        primary: &PrimaryIndex,
        fdi: &FullDirectoryIndex,
        version: PakVersion,
    ) -> Result<Vec<(String, PakEntry)>> {
        let encoded = &primary.encoded_entries;
        let mut out = Vec::new();
        // Two names sharing one record would share its data: refused before
        // anything is decoded, since each decoded record may list 65535 blocks.
        let mut seen: std::collections::BTreeMap<i32, String> = Default::default();
        for (dir, files) in &fdi.0 {
            let dir = if dir == "/" { "" } else { dir.as_str() };
            for (name, location) in files {
                let path = format!("{dir}{name}");
                if let Some(first) = seen.insert(*location, path.clone()) {
                    return Err(Error::invalid(format!(
                        "entries `{first}` and `{path}` overlap: both point at entry record {location}"
                    ))
                    .within("pak directory index")
                    .with_hint("the pak is corrupt or was made to exhaust memory; zenpak refuses it"));
                }
                let entry = if *location >= 0 {
                    let at = *location as usize;
                    if at >= encoded.len() {
                        return Err(Error::invalid(format!(
                            "`{path}` points at encoded entry byte {at}, past the {} encoded bytes",
                            encoded.len()
                        ))
                        .within("pak directory index"));
                    }
                    PakEntry::read_encoded(&mut crate::binary::Reader::new(&encoded[at..]), version)
                        .with_context(|| format!("encoded entry of `{path}`"))?
                } else {
                    let i = (-(*location as i64) - 1) as usize;
                    primary.unencoded_entries.get(i).cloned().ok_or_else(|| {
                        Error::invalid(format!(
                            "`{path}` points at unencoded entry {i}, but the index has {}",
                            primary.unencoded_entries.len()
                        ))
                        .within("pak directory index")
                    })?
                };
                out.push((path, entry));
            }
        }
        Ok(out)
    }

    /// Whether any entry is encrypted (and so needs the key to read).
    pub fn has_encrypted_entries(&self) -> bool {
        self.entries.iter().any(|e| e.encrypted)
    }

    /// An entry by its path relative to the mount point (case-insensitive,
    /// as the engine looks paths up).
    pub fn entry(&self, path: &str) -> Option<&PakEntryInfo> {
        let lower = path.to_lowercase();
        self.entries
            .iter()
            .find(|e| e.path == path || e.path.to_lowercase() == lower)
    }

    /// Reads, decrypts and decompresses one entry's data, checking its hash.
    pub fn read(&self, info: &PakEntryInfo) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(info.uncompressed_size.min(1 << 26) as usize);
        self.read_to(info, &mut out)?;
        Ok(out)
    }

    /// Streams one entry's data into `sink`, block by block (memory is one
    /// block, whatever the entry's size). The SHA-1 the pak records is
    /// checked at the end: on a mismatch the error comes after `sink` got
    /// the data, so callers write to a temporary they discard on error.
    pub fn read_to(&self, info: &PakEntryInfo, sink: &mut dyn Write) -> Result<u64> {
        self.read_to_inner(info, sink).map_err(|e| {
            e.within(format!("pak entry `{}`", info.path))
                .in_file(&self.path)
        })
    }

    /// Reads an entry only to check it (decompresses, hashes, writes nothing).
    pub(crate) fn verify_entry(&self, info: &PakEntryInfo) -> Result<()> {
        self.read_to(info, &mut std::io::sink()).map(|_| ())
    }

    fn read_to_inner(&self, info: &PakEntryInfo, sink: &mut dyn Write) -> Result<u64> {
        let mut file = crate::limits::open_regular(&self.path)?;
        let file_len = file.metadata().map_err(|e| Error::io(&self.path, e))?.len();
        let entry = &info.entry;
        let record_len = entry.own_record_size(self.version);
        let record = read_at(
            &mut file,
            file_len,
            entry.offset,
            record_len,
            "entry record",
        )?;
        let inline = PakEntry::read_full(
            &mut crate::binary::Reader::with_base(&record, entry.offset),
            self.version,
        )
        .context("inline entry record")?;
        if inline.size != entry.size
            || inline.uncompressed_size != entry.uncompressed_size
            || inline.method != entry.method
        {
            return Err(Error::format(
                entry.offset,
                "the entry's inline record disagrees with the index",
            ));
        }
        let key = if entry.encrypted {
            Some(self.key.as_ref().ok_or_else(|| missing_key("the entry"))?)
        } else {
            None
        };
        let compression = Compression::from_engine_name(&info.compression)?;
        // The recorded SHA-1 covers the stored bytes as they lie in the file
        // (after encryption, when the entry is encrypted): checked against
        // the corpus's UnrealPak paks.
        let mut hasher = <sha1::Sha1 as sha1::Digest>::new();
        let write = |sink: &mut dyn Write, data: &[u8]| -> Result<()> {
            sink.write_all(data)
                .map_err(|e| Error::new(ErrorKind::Io(e)).within("writing the entry's data"))
        };
        let mut written = 0u64;
        if !entry.is_compressed() {
            let data_at = entry.offset + record_len;
            let on_disk = if entry.encrypted {
                entry.size.next_multiple_of(AES_BLOCK as u64)
            } else {
                entry.size
            };
            let mut done = 0u64;
            let mut head = Vec::new();
            while done < on_disk {
                let piece = (on_disk - done).min(COPY_PIECE);
                let mut data = read_at(&mut file, file_len, data_at + done, piece, "entry data")?;
                let hashed = (entry.size - done.min(entry.size)).min(piece) as usize;
                sha1::Digest::update(&mut hasher, &data[..hashed]);
                if let Some(key) = key {
                    key.decrypt(&mut data)?;
                    if head.is_empty() {
                        head = data[..data.len().min(AES_BLOCK)].to_vec();
                    }
                    // UnrealPak 4.20 (version 5) filled padding with random
                    // bytes of the data; from 4.21 with its first bytes.
                    if done + piece == on_disk && self.version >= PakVersion::V7 {
                        check_padding(&head, &data[hashed..])?;
                    }
                }
                data.truncate(hashed);
                write(sink, &data)?;
                written += data.len() as u64;
                done += piece;
            }
        } else {
            let mut remaining = entry.uncompressed_size;
            for (i, block) in entry.blocks.iter().enumerate() {
                let len = block.len();
                let on_disk = if entry.encrypted {
                    len.next_multiple_of(AES_BLOCK as u64)
                } else {
                    len
                };
                let mut data = read_at(
                    &mut file,
                    file_len,
                    entry.offset + block.start,
                    on_disk,
                    "compression block",
                )
                .map_err(|e| e.within(format!("block {i}")))?;
                sha1::Digest::update(&mut hasher, &data);
                if let Some(key) = key {
                    key.decrypt(&mut data)?;
                }
                data.truncate(len as usize);
                let want = remaining.min(entry.block_size as u64);
                let out = compression.decompress(&data, want as usize).map_err(|e| {
                    e.within(format!("block {i}"))
                        .at(entry.offset + block.start)
                })?;
                write(sink, &out)?;
                written += out.len() as u64;
                remaining -= want;
            }
        }
        let actual: [u8; 20] = sha1::Digest::finalize(hasher).into();
        if actual != inline.hash {
            return Err(Error::new(ErrorKind::HashMismatch {
                algorithm: "SHA-1",
                expected: hex(&inline.hash),
                actual: hex(&actual),
            })
            .at(entry.offset)
            .with_hint(if entry.encrypted {
                "the pak is corrupt or the AES key is wrong"
            } else {
                "the pak is corrupt"
            }));
        }
        Ok(written)
    }

    /// Writes every entry under `dir` at its path (only those `keep`
    /// accepts); nothing is written outside `dir` whatever the paths in the
    /// pak say, and each file appears only once its data has checked out.
    pub(crate) fn unpack_filtered(&self, dir: &Path, keep: &dyn Fn(&str) -> bool) -> Result<usize> {
        let out = crate::publish::output_dir::OutputDir::new(dir)?;
        let kept: Vec<&PakEntryInfo> = self.entries.iter().filter(|e| keep(&e.path)).collect();
        let written = out.write_each(&kept, |e| &e.path, |e, w| self.read_to(e, w), |_| ())?;
        Ok(written.len())
    }

    /// Writes every entry under `dir`.
    pub fn unpack(&self, dir: &Path) -> Result<usize> {
        self.unpack_filtered(dir, &|_| true)
    }
}

/// The SHA-1 of an encrypted entry covers its encrypted bytes, so it cannot
/// tell a wrong key. Its padding can: UnrealPak (4.21+, checked on the
/// corpus's versions 7 to 11) pads the plain text with its own first bytes,
/// other tools with zeros, and a wrong key turns the padding into noise. An
/// entry whose size is a multiple of 16 has no padding, and nothing can
/// tell a wrong key from its bytes.
fn check_padding(head: &[u8], padding: &[u8]) -> Result<()> {
    let engine_fill = padding
        .iter()
        .enumerate()
        .all(|(i, &b)| head.get(i % head.len().max(1)) == Some(&b));
    if padding.is_empty() || engine_fill || padding.iter().all(|&b| b == 0) {
        return Ok(());
    }
    Err(
        Error::key("the entry's padding does not decrypt to what a pak writer puts there")
            .with_hint("the AES key is wrong"),
    )
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Where each entry lies must be sane before any of it is read: records and
/// data inside the data area (before the index), no two entries sharing
/// bytes, blocks in order without overlap, and enough blocks for the
/// declared size. This is what stops a "zip bomb" of entries that all point
/// at the same compressed bytes.
fn check_layout(entries: &[PakEntryInfo], version: PakVersion, data_end: u64) -> Result<()> {
    let mut extents = Vec::with_capacity(entries.len());
    for info in entries {
        let extent = entry_extent(&info.entry, version).map_err(|e| {
            e.within(format!("entry `{}`", info.path))
                .within("pak index")
        })?;
        if extent.1 > data_end {
            return Err(Error::invalid(format!(
                "entry `{}` ({}..{}) runs into the index at {data_end}",
                info.path, extent.0, extent.1
            ))
            .within("pak index"));
        }
        extents.push((extent.0, extent.1, info.path.as_str()));
    }
    extents.sort();
    for pair in extents.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        if b.0 < a.1 {
            return Err(Error::invalid(format!(
                "entries `{}` ({}..{}) and `{}` ({}..{}) overlap: a pak never shares bytes between entries",
                a.2, a.0, a.1, b.2, b.0, b.1
            ))
            .within("pak index")
            .with_hint("the pak is corrupt or was made to exhaust memory; zenpak refuses it"));
        }
    }
    Ok(())
}

/// The bytes an entry occupies (record + data, padded when encrypted),
/// after checking its blocks against its sizes.
fn entry_extent(entry: &PakEntry, version: PakVersion) -> Result<(u64, u64)> {
    let record = entry.own_record_size(version);
    let pad = |n: u64| {
        if entry.encrypted {
            n.next_multiple_of(AES_BLOCK as u64)
        } else {
            n
        }
    };
    let start = entry.offset;
    let overflow = || Error::invalid("the entry's offsets overflow");
    if !entry.is_compressed() {
        if entry.size != entry.uncompressed_size {
            return Err(Error::invalid(format!(
                "stored uncompressed, but its sizes differ ({} and {})",
                entry.size, entry.uncompressed_size
            )));
        }
        let end = start
            .checked_add(record)
            .and_then(|v| v.checked_add(pad(entry.size)))
            .ok_or_else(overflow)?;
        return Ok((start, end));
    }
    if entry.block_size == 0 || entry.block_size > MAX_PAK_BLOCK_SIZE {
        return Err(Error::limit(
            "compression block size",
            entry.block_size as u64,
            MAX_PAK_BLOCK_SIZE as u64,
        ));
    }
    let block_size = entry.block_size as u64;
    let blocks = entry.blocks.len() as u64;
    let needed = entry.uncompressed_size.div_ceil(block_size);
    if needed != blocks {
        return Err(Error::invalid(format!(
            "{} bytes in blocks of {block_size} need {needed} blocks, the entry lists {blocks}",
            entry.uncompressed_size
        )));
    }
    // A compressed block larger than twice its output is not something
    // any codec writes; it only makes a reader hold more memory.
    let max_stored = 2 * block_size + 4096;
    let mut at = record;
    let mut stored = 0u64;
    for (i, b) in entry.blocks.iter().enumerate() {
        if b.start < at || b.end < b.start {
            return Err(Error::invalid(format!(
                "block {i} ({}..{}) overlaps the record or the block before it",
                b.start, b.end
            )));
        }
        if b.len() > max_stored {
            return Err(Error::limit(format!("block {i} size"), b.len(), max_stored));
        }
        at = b.start.checked_add(pad(b.len())).ok_or_else(overflow)?;
        stored += pad(b.len());
    }
    let listed: u64 = entry.blocks.iter().map(|b| b.len()).sum();
    if entry.size < listed || entry.size > stored {
        return Err(Error::invalid(format!(
            "its size {} does not match its blocks ({listed} bytes, {stored} with padding)",
            entry.size
        )));
    }
    let end = start.checked_add(at).ok_or_else(overflow)?;
    Ok((start, end))
}
