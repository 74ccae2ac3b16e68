//! Finishing a cooked package built from scratch (start from
//! [`LegacyPackage::new_cooked`]): [`LegacyPackage::write_cooked`] places the
//! export data after the header, as cooks do, and returns the `.uasset` +
//! `.uexp` pair, the `.uexp` ending with the package tag.

use crate::error::{Error, Result};

use super::summary::Generation;
use super::{LegacyPackage, PackageFiles};

impl LegacyPackage {
    /// Lays out a cooked package and returns its `.uasset` and `.uexp`
    /// bytes. `export_data[i]` is export `i`'s serialized object. Sets the
    /// generation record, an empty depends list per export and each export's
    /// serial size, then places the exports after the header
    /// ([`assign_export_offsets`](Self::assign_export_offsets)) and builds the
    /// `.uexp` with the trailing package tag ([`PackageFiles::build_uexp`]).
    pub fn write_cooked(&mut self, export_data: &[Vec<u8>]) -> Result<(Vec<u8>, Vec<u8>)> {
        if export_data.len() != self.exports.len() {
            return Err(Error::usage(format!(
                "{} export data blocks for {} exports",
                export_data.len(),
                self.exports.len()
            )));
        }
        if !self.after_header.is_empty() {
            return Err(Error::usage(
                "a cooked package keeps its export data in the .uexp, not after the header",
            ));
        }
        self.depends_map = vec![Vec::new(); self.exports.len()];
        self.summary.generations = vec![Generation {
            export_count: self.exports.len() as i32,
            name_count: self.names.len() as i32,
        }];
        for (export, data) in self.exports.iter_mut().zip(export_data) {
            export.serial_size = data.len() as i64;
        }
        self.assign_export_offsets()?;
        let header = self.write()?;
        self.summary.total_header_size = header.len() as i32;
        let uexp = PackageFiles::build_uexp(self, export_data, true)?;
        Ok((header, uexp))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::legacy::{NameEntry, PACKAGE_FILE_TAG};
    use crate::version::EngineVersion;

    /// An empty package of every release writes, reads back with the same
    /// tables, and rewrites to the same bytes.
    #[test]
    fn empty_cooked_packages_read_back() {
        for engine in EngineVersion::ALL {
            let mut package = LegacyPackage::new_cooked(engine, Some("/Game/Empty"));
            package.names.push(NameEntry::new("Empty"));
            let (header, uexp) = package.write_cooked(&[]).unwrap();
            assert_eq!(uexp, PACKAGE_FILE_TAG.to_le_bytes());
            let read = LegacyPackage::read(&header, Some(engine)).unwrap();
            assert_eq!(read.package_name(), Some("/Game/Empty"), "{engine}");
            assert_eq!(read.names, package.names, "{engine}");
            assert_eq!(read.write().unwrap(), header, "{engine}");
            assert_eq!(read.summary.bulk_data_start_offset, header.len() as i64);
            let files = PackageFiles {
                path: "Empty.uasset".into(),
                header,
                uexp_path: "Empty.uexp".into(),
                uexp,
                bulk: Vec::new(),
            };
            files.check_exports(&read).unwrap();
        }
    }
}
