//! `container.bin`: the container the last build wrote
//! ([`ContainerRecord`]), and what each package put in it
//! ([`RecordedPackage`]).

use std::path::{Path, PathBuf};

use super::entry::{read_bulk, read_store_fields, write_bulk, write_store_fields};
use super::file::{read_stamp, write_stamp, STAMP_BYTES};
use crate::binary::{Reader, Writer};
use crate::build::built::BuiltPackage;
use crate::build::input::Hash;
use crate::error::{Error, Result};
use crate::iostore::container_header::StoreEntry;
use crate::legacy::BulkKind;

/// Marks the container record and its layout; bump when the layout changes.
const CONTAINER_MAGIC: &[u8; 8] = b"ZPKCR\x00\x00\x03";

/// The longest package record a container record may hold; a longer one
/// means the file is damaged.
const MAX_PACKAGE_RECORD: usize = 64 << 20;

/// Bytes of the container record's trailer before its checksum: settings,
/// two stamps, package count.
const CONTAINER_TRAILER: usize = 32 + 2 * STAMP_BYTES + 8;

/// The container the last build wrote, as a development build needs it to
/// extend that container (see the module documentation): the settings its
/// chunk bytes depend on, the stamps of its `.utoc` and `.ucas`, and what
/// each package put in it ([`RecordedPackage`]: its chunk key, store entry
/// and bulk chunks), so that an unchanged package is kept without reading
/// its cache entry.
///
/// Layout (`container.bin`), written and read as a stream, never held
/// whole: magic; per package in the order the container got them, its
/// record's length (u32, not 0) and the record; a u32 0; the settings (32
/// bytes), the `.utoc`'s and `.ucas`'s stamps, the package count (u64);
/// the BLAKE3 of everything before it. A record that does not read back
/// whole is damaged (a cache miss and a warning); one of another layout is
/// a cache miss.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ContainerRecord {
    /// Hash of every setting the container's chunk bytes depend on.
    pub(crate) settings: Hash,
    pub(crate) utoc: crate::publish::stamp::FileStamp,
    pub(crate) ucas: crate::publish::stamp::FileStamp,
    /// How many packages the record holds.
    pub(crate) packages: u64,
}

impl ContainerRecord {
    /// Writes the record's trailer (all of it but its packages).
    fn write_trailer(&self, w: &mut Writer) {
        w.bytes(&self.settings);
        write_stamp(w, &self.utoc);
        write_stamp(w, &self.ucas);
        w.u64(self.packages);
    }

    /// The trailer [`write_trailer`](Self::write_trailer) wrote.
    fn read_trailer(r: &mut Reader) -> Result<ContainerRecord> {
        Ok(ContainerRecord {
            settings: r.array::<32>()?,
            utoc: read_stamp(r)?,
            ucas: read_stamp(r)?,
            packages: r.u64()?,
        })
    }

    /// Whether `utoc` and `ucas` on disk are the files recorded.
    pub(crate) fn matches(&self, utoc: &Path, ucas: &Path) -> bool {
        crate::publish::stamp::FileStamp::of(utoc).is_ok_and(|s| s == self.utoc)
            && crate::publish::stamp::FileStamp::of(ucas).is_ok_and(|s| s == self.ucas)
    }
}

/// A container record read as a stream: its packages one at a time
/// ([`next`](Self::next)), then its trailer, checked against the checksum
/// ([`finish`](Self::finish)). Nothing read is to be trusted before
/// `finish` said the record is whole.
pub(crate) struct ContainerRecordReader {
    path: PathBuf,
    reader: std::io::BufReader<std::fs::File>,
    hasher: blake3::Hasher,
    /// Bytes read so far (the offset errors name).
    offset: u64,
    /// Packages read so far.
    read: u64,
    /// The reused buffer a package's record is read into.
    entry: Vec<u8>,
    ended: bool,
}

impl ContainerRecordReader {
    /// Opens the record at `path`: `Ok(None)` when there is none or it is
    /// of another layout (an older zenpak's).
    pub(crate) fn open(path: &Path) -> Result<Option<ContainerRecordReader>> {
        use std::io::Read;
        let Ok(file) = std::fs::File::open(path) else {
            return Ok(None);
        };
        let mut reader = std::io::BufReader::with_capacity(1 << 16, file);
        let mut magic = [0u8; 8];
        if reader.read_exact(&mut magic).is_err() || magic[..5] != CONTAINER_MAGIC[..5] {
            // Too short to be any version, or not a record at all: damaged.
            return Err(Self::damaged_at(path, 0, "it does not start as one"));
        }
        if magic != *CONTAINER_MAGIC {
            return Ok(None);
        }
        let mut hasher = blake3::Hasher::new();
        hasher.update(&magic);
        Ok(Some(ContainerRecordReader {
            path: path.to_path_buf(),
            reader,
            hasher,
            offset: magic.len() as u64,
            read: 0,
            entry: Vec::new(),
            ended: false,
        }))
    }

    fn damaged_at(path: &Path, offset: u64, what: &str) -> Error {
        Error::invalid(format!(
            "the build cache's container record is damaged: {what}"
        ))
        .within("container record")
        .in_file(path)
        .at(offset)
    }

    fn damaged(&self, what: &str) -> Error {
        Self::damaged_at(&self.path, self.offset, what)
    }

    /// Reads exactly `buf.len()` bytes into `buf`, hashing them.
    fn fill(&mut self, buf: &mut [u8], what: &str) -> Result<()> {
        use std::io::Read;
        if self.reader.read_exact(buf).is_err() {
            return Err(self.damaged(what));
        }
        self.hasher.update(buf);
        self.offset += buf.len() as u64;
        Ok(())
    }

    /// How many packages were read so far.
    pub(crate) fn position(&self) -> u64 {
        self.read
    }

    /// The next package's record; `Ok(None)` after the last.
    pub(crate) fn next(&mut self) -> Result<Option<RecordedPackage>> {
        if self.ended {
            return Ok(None);
        }
        let mut len = [0u8; 4];
        self.fill(&mut len, "it ends in the middle of a package")?;
        let len = u32::from_le_bytes(len) as usize;
        if len == 0 {
            self.ended = true;
            return Ok(None);
        }
        if len > MAX_PACKAGE_RECORD {
            return Err(self.damaged(&format!("a package's record of {len} bytes")));
        }
        let at = self.offset;
        let mut entry = std::mem::take(&mut self.entry);
        entry.resize(len, 0);
        let filled = self.fill(&mut entry, "it ends in the middle of a package");
        let package = filled.and_then(|()| {
            RecordedPackage::read(&entry)
                .map_err(|e| Self::damaged_at(&self.path, at, &e.to_string()))
        });
        self.entry = entry;
        self.read += 1;
        package.map(Some)
    }

    /// Reads the rest of the packages and the trailer, and checks the
    /// whole record against its checksum.
    pub(crate) fn finish(mut self) -> Result<ContainerRecord> {
        while self.next()?.is_some() {}
        let mut trailer = [0u8; CONTAINER_TRAILER];
        self.fill(&mut trailer, "it ends before its trailer")?;
        let computed = self.hasher.finalize();
        let mut checksum = [0u8; 32];
        let mut rest = [0u8; 1];
        use std::io::Read;
        if self.reader.read_exact(&mut checksum).is_err()
            || self.reader.read(&mut rest).map_or(true, |n| n != 0)
            || computed.as_bytes() != &checksum
        {
            return Err(self.damaged("its checksum does not match"));
        }
        let record = ContainerRecord::read_trailer(&mut Reader::new(&trailer))
            .map_err(|e| self.damaged(&e.to_string()))?;
        if record.packages != self.read {
            return Err(self.damaged("its package count does not match"));
        }
        Ok(record)
    }
}

/// Writes a container record as a stream (see [`ContainerRecord`]) to a
/// temporary that [`finish`](Self::finish) publishes; dropped unfinished,
/// it leaves nothing.
pub(crate) struct ContainerRecordWriter {
    out: std::io::BufWriter<crate::publish::temporary::TempFile>,
    hasher: blake3::Hasher,
    packages: u64,
    entry: Writer,
}

impl ContainerRecordWriter {
    pub(crate) fn create(path: &Path) -> Result<ContainerRecordWriter> {
        let mut writer = ContainerRecordWriter {
            out: std::io::BufWriter::with_capacity(
                1 << 16,
                crate::publish::temporary::TempFile::create(path)?,
            ),
            hasher: blake3::Hasher::new(),
            packages: 0,
            entry: Writer::new(),
        };
        writer.write(CONTAINER_MAGIC)?;
        Ok(writer)
    }

    fn write(&mut self, bytes: &[u8]) -> Result<()> {
        use std::io::Write;
        self.hasher.update(bytes);
        self.out
            .write_all(bytes)
            .map_err(|e| Error::io(self.out.get_ref().path(), e))
    }

    /// Appends a package's record.
    pub(crate) fn add(&mut self, package: &RecordedPackage) -> Result<()> {
        let mut entry = std::mem::take(&mut self.entry);
        package.write(&mut entry);
        let bytes = entry.as_slice();
        let result = self
            .write(&(bytes.len() as u32).to_le_bytes())
            .and_then(|()| self.write(bytes));
        self.entry = Writer::with_capacity(bytes.len());
        self.packages += 1;
        result
    }

    /// Ends the record with the container's settings and stamps, and
    /// publishes it in place of the last one.
    pub(crate) fn finish(
        mut self,
        settings: &Hash,
        utoc: &crate::publish::stamp::FileStamp,
        ucas: &crate::publish::stamp::FileStamp,
    ) -> Result<()> {
        use std::io::Write;
        self.write(&0u32.to_le_bytes())?;
        let record = ContainerRecord {
            settings: *settings,
            utoc: *utoc,
            ucas: *ucas,
            packages: self.packages,
        };
        let mut trailer = Writer::with_capacity(CONTAINER_TRAILER);
        record.write_trailer(&mut trailer);
        self.write(trailer.as_slice())?;
        let checksum = *self.hasher.finalize().as_bytes();
        self.out
            .write_all(&checksum)
            .and_then(|()| self.out.flush())
            .map_err(|e| Error::io(self.out.get_ref().path(), e))?;
        let temp = self
            .out
            .into_inner()
            .map_err(|e| Error::internal(format!("container record: {}", e.error())))?;
        crate::publish::publish(Vec::new(), vec![temp.stage_unsynced()])
    }
}

/// What one package put in a container, as the container record
/// (`container.bin`, [`ContainerRecord`]) keeps it: all
/// a development build needs to keep the package's chunks in the container
/// it extends without reading the package's cache entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RecordedPackage {
    pub(crate) package_id: u64,
    /// The key the package's chunk was made from (its package key, and
    /// its bundles when a container-wide pass gave it others).
    pub(crate) chunk_key: Hash,
    /// The store entry as the container got it (`export_bundles_size` is
    /// the chunk's length; UE4 load orders are assigned again when the
    /// container is finished).
    pub(crate) store_entry: StoreEntry,
    /// Each bulk-data chunk's kind and length, in the package's order.
    pub(crate) bulk: Vec<(BulkKind, u64)>,
}

impl RecordedPackage {
    /// What `built`, made under `chunk_key`, puts in a container.
    pub(crate) fn of(built: &BuiltPackage, chunk_key: Hash) -> RecordedPackage {
        RecordedPackage {
            package_id: built.package_id,
            chunk_key,
            store_entry: StoreEntry {
                export_bundles_size: built.package_len(),
                ..built.store_entry.clone()
            },
            bulk: built.bulk.iter().map(|b| (b.kind, b.len)).collect(),
        }
    }

    /// Appends the package's record to `w`.
    pub(crate) fn write(&self, w: &mut Writer) {
        w.u64(self.package_id);
        w.bytes(&self.chunk_key);
        w.u64(self.store_entry.export_bundles_size);
        w.u32(self.store_entry.load_order);
        write_store_fields(w, &self.store_entry);
        write_bulk(w, self.bulk.iter().copied());
    }

    /// Reads a package's record: all of `bytes`.
    pub(crate) fn read(bytes: &[u8]) -> Result<RecordedPackage> {
        let mut r = Reader::new(bytes);
        let package_id = r.u64()?;
        let chunk_key = r.array::<32>()?;
        let (export_bundles_size, load_order) = (r.u64()?, r.u32()?);
        let store_entry = StoreEntry {
            export_bundles_size,
            load_order,
            ..read_store_fields(&mut r)?
        };
        let bulk = read_bulk(&mut r)?;
        if !r.at_end() {
            return Err(r.error("unexpected bytes after the package's record"));
        }
        Ok(RecordedPackage {
            package_id,
            chunk_key,
            store_entry,
            bulk,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_container_record_streams_back_and_any_damage_is_an_error() {
        use crate::iostore::container_header::StoreEntry;
        use crate::legacy::BulkKind;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("container.bin");
        let stamp = |n: u64| crate::publish::stamp::FileStamp {
            size: n,
            modified_ns: u64::MAX - n,
            inode: n + 1,
            changed_ns: -(n as i64) - (1 << 40),
        };
        let packages: Vec<RecordedPackage> = (0..3u64)
            .map(|n| RecordedPackage {
                package_id: 0x1000 + n,
                chunk_key: [n as u8; 32],
                store_entry: StoreEntry {
                    export_bundles_size: 100 * n + 7,
                    load_order: n as u32,
                    export_count: 2,
                    export_bundle_count: 1,
                    imported_packages: (0..n).collect(),
                    shader_map_hashes: vec![[n as u8; 20]; n as usize],
                },
                bulk: [(BulkKind::Bulk, 5), (BulkKind::MemoryMapped, 1 << 33)][..n as usize % 3]
                    .to_vec(),
            })
            .collect();
        let mut writer = ContainerRecordWriter::create(&path).unwrap();
        for package in &packages {
            writer.add(package).unwrap();
        }
        writer.finish(&[9; 32], &stamp(1), &stamp(2)).unwrap();

        let read_all = || -> Result<(Vec<RecordedPackage>, ContainerRecord)> {
            let mut reader = ContainerRecordReader::open(&path)?.expect("a record");
            let mut read = Vec::new();
            while let Some(package) = reader.next()? {
                read.push(package);
            }
            Ok((read, reader.finish()?))
        };
        let (read, record) = read_all().unwrap();
        assert_eq!(read, packages);
        assert_eq!(
            record,
            ContainerRecord {
                settings: [9; 32],
                utoc: stamp(1),
                ucas: stamp(2),
                packages: 3,
            }
        );

        let whole = std::fs::read(&path).unwrap();
        for at in [2, 8, 12, whole.len() / 2, whole.len() - 40, whole.len() - 1] {
            let mut damaged = whole.clone();
            damaged[at] ^= 0x20;
            std::fs::write(&path, &damaged).unwrap();
            let error = read_all().unwrap_err();
            assert_eq!(error.file(), Some(path.as_path()), "byte {at}");
        }
        for len in [0, 7, 12, whole.len() / 2, whole.len() - 1] {
            std::fs::write(&path, &whole[..len]).unwrap();
            assert!(read_all().is_err(), "cut at {len}");
        }
        std::fs::write(&path, [whole.as_slice(), b"x"].concat()).unwrap();
        assert!(read_all().is_err(), "a byte past the end");
        // Another layout (an older zenpak's) is no record, and none either.
        std::fs::write(&path, [&b"ZPKCR\x00\x00\x01"[..], &whole[8..]].concat()).unwrap();
        assert!(ContainerRecordReader::open(&path).unwrap().is_none());
        std::fs::remove_file(&path).unwrap();
        assert!(ContainerRecordReader::open(&path).unwrap().is_none());
        // An unfinished writer leaves nothing behind.
        drop(ContainerRecordWriter::create(&path).unwrap());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
