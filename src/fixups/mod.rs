//! Game profiles: per-game changes to a legacy package before it is
//! converted, for games that ship a modified engine.
//!
//! A profile transforms the LEGACY package (header model + export data): it
//! may insert bytes into exports, and [`edit`] then recomputes every size and
//! offset that follows (export serial sizes, later exports' serial offsets,
//! the bulk data start offset, inline data resource offsets) and rewrites the
//! header. The normal Zen conversion runs afterwards, unaware of the profile.
//!
//! Each game is one file implementing [`GameProfile`]; [`Profile::from_name`]
//! lists them. Adding a game means adding a file and a line there.

mod edit;
mod generic;
mod marvel_rivals;
pub mod skeletal_mesh;

use serde::Serialize;

use crate::legacy::PackageFiles;
use crate::mappings::Mappings;
use crate::version::EngineVersion;
use crate::{Error, Result};

pub use edit::{apply_insertions, Insertion};
pub use generic::Generic;
pub use marvel_rivals::MarvelRivals;

/// What a game needs done to its packages.
pub trait GameProfile {
    /// The name used in manifests and on the command line.
    fn name(&self) -> &'static str;

    /// Transforms the package in place (header and export data) and says
    /// what was changed. A package the profile does not concern is left
    /// byte-identical.
    fn apply(&self, files: &mut PackageFiles, engine: EngineVersion, mappings: Option<&Mappings>)
        -> Result<FixupReport>;
}

/// The known profiles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Profile {
    Generic,
    MarvelRivals,
}

impl Profile {
    pub const ALL: [Profile; 2] = [Profile::Generic, Profile::MarvelRivals];

    pub fn from_name(name: &str) -> Result<Profile> {
        Profile::ALL.into_iter().find(|p| p.implementation().name() == name).ok_or_else(|| {
            let names: Vec<&str> = Profile::ALL.iter().map(|p| p.implementation().name()).collect();
            Error::usage(format!("unknown game profile `{name}`; known: {}", names.join(", ")))
        })
    }

    pub fn implementation(self) -> &'static dyn GameProfile {
        match self {
            Profile::Generic => &Generic,
            Profile::MarvelRivals => &MarvelRivals,
        }
    }

    pub fn name(self) -> &'static str {
        self.implementation().name()
    }

    pub fn apply(
        self,
        files: &mut PackageFiles,
        engine: EngineVersion,
        mappings: Option<&Mappings>,
    ) -> Result<FixupReport> {
        self.implementation().apply(files, engine, mappings).map_err(|e| e.in_file(&files.path))
    }
}

impl std::str::FromStr for Profile {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        Profile::from_name(s)
    }
}

/// What a profile did to one package.
#[derive(Debug, Clone, Default, Serialize)]
pub struct FixupReport {
    pub profile: String,
    /// One entry per export that was changed.
    pub exports: Vec<ExportFixup>,
    /// Bytes inserted in total.
    pub inserted_bytes: u64,
}

impl FixupReport {
    pub fn changed(&self) -> bool {
        self.inserted_bytes > 0
    }
}

/// One changed export.
#[derive(Debug, Clone, Serialize)]
pub struct ExportFixup {
    pub export_index: usize,
    pub export_name: String,
    pub what: String,
    /// Where the change was located and how (`mappings`, `structure`, or both agreeing).
    pub located_by: String,
    /// Absolute offsets (header + .uexp stream, before the change) where bytes were inserted.
    pub insertions: Vec<u64>,
    pub inserted_bytes: u64,
}
