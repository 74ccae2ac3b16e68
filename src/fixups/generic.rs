//! The `generic` profile: stock Unreal Engine, nothing to change.

use crate::legacy::PackageFiles;
use crate::mappings::Mappings;
use crate::version::EngineVersion;
use crate::Result;

use super::{FixupReport, GameProfile, ProfileOptions};

pub struct Generic;

impl GameProfile for Generic {
    fn name(&self) -> &'static str {
        "generic"
    }

    fn apply(
        &self,
        _files: &mut PackageFiles,
        _engine: EngineVersion,
        _mappings: Option<&Mappings>,
        _options: &ProfileOptions,
    ) -> Result<FixupReport> {
        Ok(FixupReport {
            profile: self.name().to_string(),
            ..FixupReport::default()
        })
    }
}
