//! Names in a Zen package. The name batch itself (UE5 batch and UE4 split
//! form), `FMappedName` and the `_N` suffix rule live in [`crate::names`],
//! shared with the container header; this module adds the imported package
//! names of 5.3+ packages.

use serde::Serialize;

use crate::binary::{Reader, Writer};
use crate::error::Result;

pub(crate) use crate::names::{
    read_name_batch, read_split_names, write_name_batch, write_split_names, BatchName,
};

/// Imported package names (5.3+): a name batch, then one i32 number per name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct ImportedPackageNames {
    pub(crate) names: Vec<BatchName>,
    pub numbers: Vec<i32>,
}

impl ImportedPackageNames {
    pub(crate) fn read(r: &mut Reader) -> Result<Self> {
        let names = read_name_batch(r)?;
        r.check_count(names.len() as i64, 4)?;
        let mut numbers = Vec::with_capacity(names.len());
        for _ in 0..names.len() {
            numbers.push(r.i32()?);
        }
        Ok(ImportedPackageNames { names, numbers })
    }
    pub(crate) fn write(&self, w: &mut Writer) {
        write_name_batch(w, &self.names);
        for n in &self.numbers {
            w.i32(*n);
        }
    }
    /// Full names with their `_N` suffixes.
    pub fn full_names(&self) -> Vec<String> {
        self.names
            .iter()
            .zip(&self.numbers)
            .map(|(n, &num)| crate::names::with_number(&n.text, num.max(0) as u32).into_owned())
            .collect()
    }
}
