//! The header ("package file summary") of a classic package, and the table
//! of file-version facts it depends on.
//!
//! Layout (references 001, 002, 003): tag, file version, package flags, then
//! count/offset pairs for the name, export and import tables. Files older
//! than version 68 follow with a heritage count/offset (a separate table of
//! 16-byte GUIDs); version 68 and later store the package GUID and a list of
//! generations (export count and name count per generation) in the header.

use serde::Serialize;

use crate::binary::{Reader, Writer};
use crate::error::{Context, Result};

/// The tag every package starts with (`C1 83 2A 9E` on disk): the same tag
/// as UE4/UE5 packages, defined once in [`crate::legacy`].
use crate::legacy::PACKAGE_FILE_TAG;

/// Where the header stores the table counts (each followed by its offset).
pub(crate) const NAME_COUNT_AT: usize = 12;
pub(crate) const EXPORT_COUNT_AT: usize = 20;
pub(crate) const IMPORT_COUNT_AT: usize = 28;
/// Where versions before 68 store the heritage offset (after its count).
pub(crate) const HERITAGE_OFFSET_AT: usize = 40;

/// File versions this reader accepts (Unreal 61–63, Unreal Tournament 68–69, and neighbours).
pub(crate) const SUPPORTED_FILE_VERSIONS: std::ops::RangeInclusive<u16> = 60..=69;

/// The classic file-version table: every version-dependent fact of the
/// format is a method here, so readers never compare numbers themselves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct FileVersion(pub u16);

impl FileVersion {
    /// Names carry a compact-index length prefix (64 and later); before, they are zero-terminated.
    pub(crate) fn has_length_prefixed_names(self) -> bool {
        self.0 >= 64
    }

    /// The header holds a GUID and generations (68 and later) instead of a heritage table.
    pub fn has_generations(self) -> bool {
        self.0 >= 68
    }

    /// The smallest possible name entry: an empty string (its terminator,
    /// plus a length byte when prefixed) and the 32-bit flags.
    pub(crate) fn min_name_entry_size(self) -> usize {
        if self.has_length_prefixed_names() {
            6
        } else {
            5
        }
    }

    /// Lazy arrays (texture mipmaps, sound and music data) start with the
    /// absolute file position of their end (after 61); before, with their
    /// element count only. Engine: `TLazyArray` serializer, `Ar.Ver() <= 61`.
    pub(crate) fn has_lazy_array_end_positions(self) -> bool {
        self.0 > 61
    }

    /// A model's vectors, points, nodes, surfaces and vertices are arrays
    /// inside the model (after 61); before, they were separate objects.
    /// Engine: `UModel::Serialize`, `Ar.Ver() <= 61`.
    pub(crate) fn has_inline_model_arrays(self) -> bool {
        self.0 > 61
    }

    /// A level ends with its travel information as a string-to-string map
    /// (after 62) or as two string lists (61 and 62); older levels have
    /// none. Engine: `ULevel::Serialize`.
    pub(crate) fn level_travel_info(self) -> TravelInfo {
        match self.0 {
            63.. => TravelInfo::Map,
            61..=62 => TravelInfo::Lists,
            _ => TravelInfo::None,
        }
    }

    /// The limits the engine's loader puts on a package of this version.
    pub(crate) fn limits(self) -> Limits {
        Limits {
            // Offsets, sizes and counts are signed 32-bit numbers in every version.
            max_file_size: i32::MAX as u64,
            max_table_entries: i32::MAX as u64,
            // `NAME_SIZE` is 64 characters including the terminator.
            max_name_len: 63,
        }
    }
}

/// How a level stores its travel information (see [`FileVersion::level_travel_info`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TravelInfo {
    None,
    Lists,
    Map,
}

/// What a package of one file version can hold (see [`FileVersion::limits`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub(crate) struct Limits {
    /// Largest file: every offset is a signed 32-bit number.
    pub(crate) max_file_size: u64,
    /// Most entries in one table.
    pub(crate) max_table_entries: u64,
    /// Longest name, in bytes, without its terminator.
    pub(crate) max_name_len: usize,
}

/// One generation record: the export and name counts the package had when
/// it was saved at that generation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Generation {
    pub export_count: i32,
    pub name_count: i32,
}

impl Generation {
    pub(crate) const SIZE: usize = 8;

    pub(crate) fn read(reader: &mut Reader) -> Result<Generation> {
        Ok(Generation {
            export_count: reader.i32()?,
            name_count: reader.i32()?,
        })
    }

    pub(crate) fn write(&self, writer: &mut Writer) {
        writer.i32(self.export_count);
        writer.i32(self.name_count);
    }
}

/// What follows the table pointers: depends on the file version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Lineage {
    /// Before version 68: where the heritage GUID table is.
    Heritage { count: i32, offset: i32 },
    /// Version 68 and later: the package GUID and its generations.
    Generations {
        #[serde(serialize_with = "serialize_guid")]
        guid: [u8; 16],
        generations: Vec<Generation>,
    },
}

/// The package header.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Header {
    /// The version word as stored: the file version in the low 16 bits, a
    /// licensee version in the high 16 bits.
    pub version_word: u32,
    pub package_flags: u32,
    pub name_count: i32,
    pub name_offset: i32,
    pub export_count: i32,
    pub export_offset: i32,
    pub import_count: i32,
    pub import_offset: i32,
    pub lineage: Lineage,
}

impl Header {
    /// Header size up to and including the table pointers.
    const FIXED_SIZE: usize = 36;

    pub(crate) fn file_version(&self) -> FileVersion {
        FileVersion(self.version_word as u16)
    }

    pub(crate) fn licensee_version(&self) -> u16 {
        (self.version_word >> 16) as u16
    }

    /// Reads the header from the start of `reader`.
    pub(crate) fn read(reader: &mut Reader) -> Result<Header> {
        let tag_at = reader.pos();
        let tag = reader.u32().context("tag")?;
        if tag != PACKAGE_FILE_TAG {
            return Err(reader
                .error_at(
                    tag_at,
                    format!("tag is 0x{tag:08x}, expected 0x{PACKAGE_FILE_TAG:08x}"),
                )
                .with_hint("this is not an Unreal package"));
        }
        let version_at = reader.pos();
        let version_word = reader.u32().context("file version")?;
        let version = FileVersion(version_word as u16);
        if !SUPPORTED_FILE_VERSIONS.contains(&version.0) {
            return Err(reader
                .error_at(
                    version_at,
                    format!(
                        "file version {} is not a classic package version ({}..={})",
                        version.0,
                        SUPPORTED_FILE_VERSIONS.start(),
                        SUPPORTED_FILE_VERSIONS.end()
                    ),
                )
                .with_hint(
                    "zenpak reads classic packages of Unreal (61–63) and Unreal Tournament (68–69)",
                ));
        }
        let package_flags = reader.u32().context("package flags")?;
        let name_count = reader.i32().context("name count")?;
        let name_offset = reader.i32().context("name offset")?;
        let export_count = reader.i32().context("export count")?;
        let export_offset = reader.i32().context("export offset")?;
        let import_count = reader.i32().context("import count")?;
        let import_offset = reader.i32().context("import offset")?;
        let lineage = if version.has_generations() {
            let guid = reader.guid().context("package GUID")?;
            let count = reader
                .count_i32(Generation::SIZE)
                .context("generation count")?;
            let mut generations = Vec::with_capacity(count);
            for index in 0..count {
                generations
                    .push(Generation::read(reader).with_context(|| format!("generation {index}"))?);
            }
            Lineage::Generations { guid, generations }
        } else {
            Lineage::Heritage {
                count: reader.i32().context("heritage count")?,
                offset: reader.i32().context("heritage offset")?,
            }
        };
        Ok(Header {
            version_word,
            package_flags,
            name_count,
            name_offset,
            export_count,
            export_offset,
            import_count,
            import_offset,
            lineage,
        })
    }

    pub(crate) fn write(&self, writer: &mut Writer) {
        writer.u32(PACKAGE_FILE_TAG);
        writer.u32(self.version_word);
        writer.u32(self.package_flags);
        writer.i32(self.name_count);
        writer.i32(self.name_offset);
        writer.i32(self.export_count);
        writer.i32(self.export_offset);
        writer.i32(self.import_count);
        writer.i32(self.import_offset);
        match &self.lineage {
            Lineage::Heritage { count, offset } => {
                writer.i32(*count);
                writer.i32(*offset);
            }
            Lineage::Generations { guid, generations } => {
                writer.guid(guid);
                writer.i32(generations.len() as i32);
                for generation in generations {
                    generation.write(writer);
                }
            }
        }
    }

    /// Bytes the header takes on disk.
    pub(crate) fn size(&self) -> usize {
        Self::FIXED_SIZE
            + match &self.lineage {
                Lineage::Heritage { .. } => 8,
                Lineage::Generations { generations, .. } => {
                    16 + 4 + generations.len() * Generation::SIZE
                }
            }
    }
}

/// A GUID as the engine prints it: four little-endian 32-bit words in hex.
pub fn guid_string(guid: &[u8; 16]) -> String {
    guid.chunks_exact(4)
        .map(|word| {
            format!(
                "{:08X}",
                u32::from_le_bytes([word[0], word[1], word[2], word[3]])
            )
        })
        .collect()
}

fn serialize_guid<S: serde::Serializer>(
    guid: &[u8; 16],
    serializer: S,
) -> std::result::Result<S::Ok, S::Error> {
    serializer.serialize_str(&guid_string(guid))
}
