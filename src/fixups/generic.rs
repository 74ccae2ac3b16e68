//! The `generic` profile: stock Unreal Engine, nothing to change — every
//! behaviour is [`GameProfile`]'s default.

use super::GameProfile;

pub struct Generic;

impl GameProfile for Generic {
    fn name(&self) -> &'static str {
        "generic"
    }
}
