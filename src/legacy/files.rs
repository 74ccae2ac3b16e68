//! The files of one legacy package on disk: the header (`.uasset`/`.umap`),
//! the export data (`.uexp`) and the bulk-data companions.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::{Error, Result};
use crate::version::EngineVersion;

use super::LegacyPackage;

/// A bulk-data companion file kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BulkKind {
    /// `.ubulk`: bulk data loaded on demand.
    Bulk,
    /// `.uptnl`: optional bulk data (e.g. top texture mips).
    Optional,
    /// `.m.ubulk`: memory-mapped bulk data.
    MemoryMapped,
}

impl BulkKind {
    pub const ALL: [BulkKind; 3] = [BulkKind::Bulk, BulkKind::Optional, BulkKind::MemoryMapped];

    /// The extension that replaces `.uasset`/`.umap`.
    pub fn extension(self) -> &'static str {
        match self {
            BulkKind::Bulk => "ubulk",
            BulkKind::Optional => "uptnl",
            BulkKind::MemoryMapped => "m.ubulk",
        }
    }
}

/// A companion file found next to the header, or its bytes held in
/// memory (a bulk-data chunk read from a container: `path` is then the
/// file it would be).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BulkCompanion {
    pub kind: BulkKind,
    pub path: PathBuf,
    pub size: u64,
    #[serde(skip)]
    pub(crate) held: Option<Vec<u8>>,
}

impl BulkCompanion {
    /// A companion whose bytes are in memory, as if at `path`.
    pub(crate) fn held(kind: BulkKind, path: PathBuf, data: Vec<u8>) -> Self {
        BulkCompanion {
            kind,
            path,
            size: data.len() as u64,
            held: Some(data),
        }
    }

    /// Reads the companion's bytes.
    pub fn read(&self) -> Result<Vec<u8>> {
        match &self.held {
            Some(data) => Ok(data.clone()),
            None => std::fs::read(&self.path).map_err(|e| Error::io(&self.path, e)),
        }
    }
}

/// The bytes of a package's header and export data, and its bulk companions.
#[derive(Debug, Clone)]
pub struct PackageFiles {
    /// The `.uasset`/`.umap` path.
    pub path: PathBuf,
    pub header: Vec<u8>,
    /// The `.uexp` path and bytes (empty if the package has no `.uexp`).
    pub uexp_path: PathBuf,
    pub uexp: Vec<u8>,
    pub bulk: Vec<BulkCompanion>,
}

impl PackageFiles {
    /// Loads `X.uasset`/`X.umap`, `X.uexp` (required) and whichever of
    /// `X.ubulk`, `X.uptnl`, `X.m.ubulk` exist.
    pub fn load(path: impl AsRef<Path>) -> Result<PackageFiles> {
        let (mut files, _) = Self::load_header_only(path)?;
        files.read_uexp()?;
        Ok(files)
    }

    /// Like [`load`](Self::load), but the `.uexp` is not read: `uexp` is
    /// left empty and its length on disk is returned. For a caller that
    /// passes the export data through unchanged (see
    /// [`crate::zen::convert::ExportData::Unread`]).
    pub fn load_header_only(path: impl AsRef<Path>) -> Result<(PackageFiles, u64)> {
        let path = path.as_ref();
        let bulk = BulkKind::ALL.map(|kind| (kind, path.with_extension(kind.extension())));
        Self::load_header_with(path, None, bulk)
    }

    /// [`load_header_only`](Self::load_header_only) for a caller that
    /// listed the package's folder and knows its companions: `uexp` (else
    /// `X.uexp`) and `bulk` are the only files looked at — no look-up of a
    /// name that is not there. A bulk file that is gone by now is left out,
    /// as a missing one is.
    pub(crate) fn load_header_with(
        path: &Path,
        uexp: Option<&Path>,
        bulk: impl IntoIterator<Item = (BulkKind, PathBuf)>,
    ) -> Result<(PackageFiles, u64)> {
        let header = std::fs::read(path).map_err(|e| Error::io(path, e))?;
        let uexp_path = uexp.map_or_else(|| path.with_extension("uexp"), Path::to_path_buf);
        let uexp_len = std::fs::metadata(&uexp_path)
            .map_err(|e| missing_uexp(path, &uexp_path, e))?
            .len();
        let bulk = bulk
            .into_iter()
            .filter_map(|(kind, companion)| match std::fs::metadata(&companion) {
                Ok(meta) if meta.is_file() => Some(BulkCompanion {
                    kind,
                    path: companion,
                    size: meta.len(),
                    held: None,
                }),
                _ => None,
            })
            .collect();
        let files = PackageFiles {
            path: path.to_path_buf(),
            header,
            uexp_path,
            uexp: Vec::new(),
            bulk,
        };
        Ok((files, uexp_len))
    }

    /// Reads the `.uexp` (required) into `uexp`.
    pub(crate) fn read_uexp(&mut self) -> Result<()> {
        self.uexp = std::fs::read(&self.uexp_path)
            .map_err(|e| missing_uexp(&self.path, &self.uexp_path, e))?;
        Ok(())
    }

    /// Parses the header (errors name the file).
    pub fn read_package(&self, engine: Option<EngineVersion>) -> Result<LegacyPackage> {
        LegacyPackage::read(&self.header, engine).map_err(|e| e.in_file(&self.path))
    }

    /// The companion of a kind, if present.
    pub(crate) fn companion(&self, kind: BulkKind) -> Option<&BulkCompanion> {
        self.bulk.iter().find(|b| b.kind == kind)
    }

    /// Whether the `.uexp` ends with the package tag `C1 83 2A 9E`, as the
    /// engine's cooker writes it (some tools drop it).
    pub fn uexp_has_tag(&self) -> bool {
        self.uexp.ends_with(&super::PACKAGE_FILE_TAG.to_le_bytes())
    }

    /// Total size of the combined header + export data stream.
    pub fn combined_len(&self) -> u64 {
        self.header.len() as u64 + self.uexp.len() as u64
    }

    /// The serialized bytes of export `index`. Its serial offset is a
    /// position in the combined `.uasset` + `.uexp` stream; the range must
    /// lie wholly in one of the two files.
    pub fn export_data<'a>(&'a self, package: &LegacyPackage, index: usize) -> Result<&'a [u8]> {
        Ok(
            match self.locate_export(package, index, self.uexp.len() as u64)? {
                ExportBytes::Header(range) => &self.header[range],
                ExportBytes::Uexp(range) => &self.uexp[range],
            },
        )
    }

    /// Where export `index`'s bytes lie, given a `.uexp` of `uexp_len`
    /// bytes (which need not have been read).
    fn locate_export(
        &self,
        package: &LegacyPackage,
        index: usize,
        uexp_len: u64,
    ) -> Result<ExportBytes> {
        let export = package.exports.get(index).ok_or_else(|| {
            Error::invalid(format!(
                "export {index} does not exist ({} exports)",
                package.exports.len()
            ))
            .in_file(&self.path)
        })?;
        let (offset, size) = (export.serial_offset, export.serial_size);
        let header_len = self.header.len() as i64;
        let fail = |file: &Path, message: String| {
            Error::format(offset.max(0) as u64, message)
                .within(format!("export {index}"))
                .within("export map")
                .in_file(file)
        };
        if offset < 0 || size < 0 {
            return Err(fail(
                &self.path,
                format!("negative serial offset {offset} or size {size}"),
            ));
        }
        let end = offset.checked_add(size).unwrap_or(i64::MAX);
        if end <= header_len {
            return Ok(ExportBytes::Header(offset as usize..end as usize));
        }
        if offset < header_len {
            return Err(fail(
                &self.path,
                format!("serial range {offset}..{end} straddles the end of the header ({header_len} bytes)"),
            ));
        }
        let start = (offset - header_len) as u64;
        let stop = (end - header_len) as u64;
        if stop > uexp_len {
            return Err(fail(
                &self.uexp_path,
                format!(
                    "serial range {offset}..{end} (in .uexp: {start}..{stop}) runs past the end of the export data ({uexp_len} bytes)"
                ),
            ));
        }
        Ok(ExportBytes::Uexp(start as usize..stop as usize))
    }

    /// Builds `.uexp` bytes from each export's data (indexed like the
    /// export map), placed at the serial offsets the package gives (see
    /// [`LegacyPackage::assign_export_offsets`]), followed by the package tag
    /// when `trailing_tag` (cooks write it; see [`uexp_has_tag`](Self::uexp_has_tag)).
    pub fn build_uexp(
        package: &LegacyPackage,
        export_data: &[Vec<u8>],
        trailing_tag: bool,
    ) -> Result<Vec<u8>> {
        if export_data.len() != package.exports.len() {
            return Err(Error::internal(format!(
                "{} export data blocks for {} exports",
                export_data.len(),
                package.exports.len()
            )));
        }
        let header_size = package.header_size()? as i64;
        let mut order: Vec<usize> = (0..package.exports.len()).collect();
        order.sort_by_key(|&i| (package.exports[i].serial_offset, i));
        let mut out = Vec::new();
        for i in order {
            let export = &package.exports[i];
            if export.serial_size != export_data[i].len() as i64
                || export.serial_offset != header_size + out.len() as i64
            {
                return Err(Error::internal(format!(
                    "export {i}: serial offset {} / size {} do not match its place in the .uexp ({} / {}); call assign_export_offsets first",
                    export.serial_offset,
                    export.serial_size,
                    header_size + out.len() as i64,
                    export_data[i].len()
                )));
            }
            out.extend_from_slice(&export_data[i]);
        }
        if trailing_tag {
            out.extend_from_slice(&super::PACKAGE_FILE_TAG.to_le_bytes());
        }
        Ok(out)
    }

    /// Checks every export's range (see [`export_data`](Self::export_data)).
    pub fn check_exports(&self, package: &LegacyPackage) -> Result<()> {
        self.check_export_ranges(package, self.uexp.len() as u64)
    }

    /// [`check_exports`](Self::check_exports) against a `.uexp` of
    /// `uexp_len` bytes that was not read ([`load_header_only`](Self::load_header_only)).
    pub(crate) fn check_export_ranges(&self, package: &LegacyPackage, uexp_len: u64) -> Result<()> {
        for index in 0..package.exports.len() {
            self.locate_export(package, index, uexp_len)?;
        }
        Ok(())
    }
}

impl PackageFiles {
    /// Checks that the `.uexp` (of `uexp_len` bytes, read or not) was
    /// written by the cook that wrote the header: the header's bulk-data
    /// start offset is where its export data ends in the combined stream,
    /// so header + `.uexp` (less the package tag `C1 83 2A 9E` at its end,
    /// when there) must come to it exactly. A `.uexp` of another cook
    /// beside this header (an editor's stale cook, a half-copied update)
    /// holds other bytes at the offsets the header gives, which the game
    /// reads as this package's objects. The tag of an unread `.uexp` is
    /// read with one small read. A header that gives no offset (0 or less)
    /// says nothing to check against.
    pub fn check_uexp_belongs(&self, package: &LegacyPackage, uexp_len: u64) -> Result<()> {
        let declared = package.summary.bulk_data_start_offset;
        let Ok(declared) = u64::try_from(declared) else {
            return Ok(());
        };
        if declared == 0 {
            return Ok(());
        }
        let tag = super::PACKAGE_FILE_TAG.to_le_bytes();
        let tagged = if self.uexp.len() as u64 == uexp_len {
            self.uexp_has_tag()
        } else if uexp_len >= 4 {
            use std::io::{Read, Seek};
            let mut end = [0u8; 4];
            let mut file =
                std::fs::File::open(&self.uexp_path).map_err(|e| Error::io(&self.uexp_path, e))?;
            file.seek(std::io::SeekFrom::Start(uexp_len - 4))
                .and_then(|_| file.read_exact(&mut end))
                .map_err(|e| Error::io(&self.uexp_path, e))?;
            end == tag
        } else {
            false
        };
        let header_len = self.header.len() as u64;
        let total = header_len + uexp_len - if tagged { 4 } else { 0 };
        if total == declared || inline_payloads_fit(package, declared, total) {
            return Ok(());
        }
        let name = |p: &Path| {
            p.file_name().map_or_else(
                || p.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            )
        };
        Err(Error::new(crate::error::ErrorKind::Content {
            code: crate::codes::UEXP_MISMATCH,
            message: format!(
                "`{}` does not belong to `{}`: the header says its export data ends at byte {declared} \
                 ({header_len}-byte header + {} bytes of .uexp), but the .uexp holds {} bytes of export data{}, \
                 ending at byte {total}; it was written by another cook",
                name(&self.uexp_path),
                name(&self.path),
                declared.saturating_sub(header_len),
                total.saturating_sub(header_len),
                if tagged { " before its 4-byte package tag" } else { "" },
            ),
        })
        .within("package summary > bulk data start offset")
        .in_file(&self.path)
        .with_hint(format!(
            "re-cook, or copy the `.uasset` and `.uexp` of one cook together ({} is from another cook than {})",
            self.uexp_path.display(),
            self.path.display()
        )))
    }
}

/// Whether bytes between the end of the export data (`declared`) and the
/// end of the stream (`total`) are the package's inline bulk data: payloads
/// stored after the exports in the `.uexp` (`PayloadAtEndOfFile` without
/// `PayloadInSeperateFile`). With a data resource table (5.2+) they must
/// account for the bytes exactly (their offsets relative to the export
/// data's end, or absolute in the stream); without one (older packages
/// record bulk data only inside export data) a longer stream cannot be
/// told from a stale one here, and is accepted as the engine accepts it.
fn inline_payloads_fit(package: &LegacyPackage, declared: u64, total: u64) -> bool {
    const PAYLOAD_AT_END_OF_FILE: u32 = 0x0001;
    use super::bulk_data::bulk_data_flags::PAYLOAD_IN_SEPARATE_FILE;
    if total < declared {
        return false;
    }
    let Some(resources) = &package.data_resources else {
        return true;
    };
    let inline = resources.entries.iter().filter(|r| {
        r.legacy_bulk_data_flags & PAYLOAD_AT_END_OF_FILE != 0
            && r.legacy_bulk_data_flags & PAYLOAD_IN_SEPARATE_FILE == 0
            && r.serial_size > 0
    });
    let (mut relative_end, mut absolute_end) = (declared, declared);
    for r in inline {
        let (offset, size) = (r.serial_offset.max(0) as u64, r.serial_size as u64);
        relative_end = relative_end.max(declared.saturating_add(offset).saturating_add(size));
        absolute_end = absolute_end.max(offset.saturating_add(size));
    }
    total == relative_end || total == absolute_end
}

/// Which file an export's bytes are in, and where.
enum ExportBytes {
    Header(std::ops::Range<usize>),
    Uexp(std::ops::Range<usize>),
}

/// The error for a `.uexp` that cannot be read (or stat'ed).
fn missing_uexp(header: &Path, uexp: &Path, error: std::io::Error) -> Error {
    if error.kind() != std::io::ErrorKind::NotFound {
        return Error::io(uexp, error);
    }
    Error::io(
        uexp,
        std::io::Error::new(
            std::io::ErrorKind::NotFound,
            "the export data file (.uexp) is missing",
        ),
    )
    .with_hint(format!(
        "cooked packages come as .uasset + .uexp; copy the .uexp that the editor wrote beside {}",
        header.display()
    ))
}
