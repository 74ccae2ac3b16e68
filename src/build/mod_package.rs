//! What the game checks ([`crate::game_check`]) need of one package of the
//! mod, read from its legacy header while `check` reads it: its imports
//! and exports as paths of names, and each export's class.

use std::path::PathBuf;

use crate::error::Result;
use crate::legacy::{LegacyPackage, PackageIndex, ResolvedIndex};

/// `RF_Public`: an export other packages may import.
const OBJECT_FLAG_PUBLIC: u32 = 0x1;

/// What the game checks need of one package of the mod (read from its legacy header).
#[derive(Debug, Clone, Default)]
pub struct ModPackage {
    /// `/Game/Maps/Entry`.
    pub(crate) name: String,
    /// The `.uasset`/`.umap`.
    pub(crate) file: PathBuf,
    pub(crate) imports: Vec<ModImport>,
    pub(crate) exports: Vec<ModExport>,
}

/// One import of a mod package.
#[derive(Debug, Clone)]
pub(crate) struct ModImport {
    /// Names from its package down (numbers included).
    pub(crate) path: Vec<String>,
    /// As the engine prints it: `/Game/X/Y.Y_C`.
    pub(crate) full_path: String,
    /// An optional import (the engine loads the package without it).
    pub(crate) optional: bool,
}

/// One export of a mod package.
#[derive(Debug, Clone)]
pub(crate) struct ModExport {
    /// Names from its top-level export down (numbers included).
    pub(crate) path: Vec<String>,
    pub(crate) public: bool,
    /// Its class as an object path (package first), when the class is an import.
    pub(crate) class: Option<Vec<String>>,
    /// The class as the engine prints it.
    pub(crate) class_path: String,
}

impl ModPackage {
    /// The imports and exports of `package` (named `name`, read from `file`).
    pub(crate) fn from_legacy(name: &str, file: PathBuf, package: &LegacyPackage) -> Result<Self> {
        let mut imports = Vec::with_capacity(package.imports.len());
        for (index, import) in package.imports.iter().enumerate() {
            imports.push(ModImport {
                path: import_names(package, index)?,
                full_path: package.import_path(index)?,
                optional: import.import_optional == Some(true),
            });
        }
        let mut exports = Vec::with_capacity(package.exports.len());
        for (index, export) in package.exports.iter().enumerate() {
            let class = match export.class_index.resolve() {
                ResolvedIndex::Import(i) => Some(import_names(package, i)?),
                _ => None,
            };
            exports.push(ModExport {
                path: export_names(package, index)?,
                public: export.object_flags & OBJECT_FLAG_PUBLIC != 0
                    || export.generate_public_hash == Some(true),
                class,
                class_path: if export.class_index.is_null() {
                    String::new()
                } else {
                    package.object_path(export.class_index, Some(name))?
                },
            });
        }
        Ok(ModPackage {
            name: name.to_string(),
            file,
            imports,
            exports,
        })
    }

    /// The last part of the name: `Entry` for `/Game/Maps/Entry`.
    pub(crate) fn short_name(&self) -> &str {
        self.name.rsplit('/').next().unwrap_or(&self.name)
    }

    /// The export that stands for the asset: named like the package, else
    /// `<Name>_C` (a blueprint's class).
    pub(crate) fn main_export(&self) -> Option<&ModExport> {
        let short = self.short_name();
        let top = |wanted: &str| {
            self.exports
                .iter()
                .find(|e| e.path.len() == 1 && e.path[0].eq_ignore_ascii_case(wanted))
        };
        top(short).or_else(|| top(&format!("{short}_C")))
    }

    /// The export at `relative` (names from the top-level export down, any case).
    pub(crate) fn has_export(&self, relative: &[String]) -> Option<&ModExport> {
        self.exports.iter().find(|e| {
            e.path.len() == relative.len()
                && e.path
                    .iter()
                    .zip(relative)
                    .all(|(a, b)| a.eq_ignore_ascii_case(b))
        })
    }
}

fn import_names(package: &LegacyPackage, index: usize) -> Result<Vec<String>> {
    package.object_names(PackageIndex::from_import(index))
}

fn export_names(package: &LegacyPackage, index: usize) -> Result<Vec<String>> {
    package.object_names(PackageIndex::from_export(index))
}
