//! Package flags (header) and object flags (export entries and name
//! entries) of classic packages, with their names for display.
//!
//! Values from reference 003 (flag tables) and 001 (package flags).

/// Package flags of the header, lowest bit first.
pub(crate) const PACKAGE_FLAGS: &[(u32, &str)] = &[
    (0x0001, "PKG_AllowDownload"),
    (0x0002, "PKG_ClientOptional"),
    (0x0004, "PKG_ServerSideOnly"),
    (0x0008, "PKG_BrokenLinks"),
    (0x0010, "PKG_Unsecure"),
    (0x8000, "PKG_Need"),
];

/// Object flags (`RF_*`), lowest bit first. Name entries carry the same
/// 32-bit flag word.
pub(crate) const OBJECT_FLAGS: &[(u32, &str)] = &[
    (0x0000_0001, "RF_Transactional"),
    (0x0000_0002, "RF_Unreachable"),
    (0x0000_0004, "RF_Public"),
    (0x0000_0008, "RF_TagImp"),
    (0x0000_0010, "RF_TagExp"),
    (0x0000_0020, "RF_SourceModified"),
    (0x0000_0040, "RF_TagGarbage"),
    (0x0000_0200, "RF_NeedLoad"),
    (0x0000_0400, "RF_HighlightedName"),
    (0x0000_0800, "RF_InSingularFunc"),
    (0x0000_1000, "RF_Suppress"),
    (0x0000_2000, "RF_InEndState"),
    (0x0000_4000, "RF_Transient"),
    (0x0000_8000, "RF_PreLoading"),
    (0x0001_0000, "RF_LoadForClient"),
    (0x0002_0000, "RF_LoadForServer"),
    (0x0004_0000, "RF_LoadForEdit"),
    (0x0008_0000, "RF_Standalone"),
    (0x0010_0000, "RF_NotForClient"),
    (0x0020_0000, "RF_NotForServer"),
    (0x0040_0000, "RF_NotForEdit"),
    (0x0080_0000, "RF_Destroyed"),
    (0x0100_0000, "RF_NeedPostLoad"),
    (0x0200_0000, "RF_HasStack"),
    (0x0400_0000, "RF_Native"),
    (0x0800_0000, "RF_Marked"),
    (0x1000_0000, "RF_ErrorShutdown"),
    (0x2000_0000, "RF_DebugPostLoad"),
    (0x4000_0000, "RF_DebugSerialize"),
    (0x8000_0000, "RF_DebugDestroy"),
];

/// `RF_Public`: visible to other packages (only public objects can be imported).
pub const RF_PUBLIC: u32 = 0x0000_0004;

/// `RF_HasStack`: the object's data starts with its execution state.
pub(crate) const RF_HAS_STACK: u32 = 0x0200_0000;

/// `RF_LoadForClient`, `RF_LoadForServer`, `RF_LoadForEdit`: the loader
/// creates an export (and keeps a name) only when one of these matches
/// what it is loading for (`ULinkerLoad`'s context flags).
pub(crate) const RF_LOAD_CONTEXT: u32 = 0x0007_0000;

/// `RF_TagExp`: set on every name and export the engine's save writes.
pub(crate) const RF_TAG_EXP: u32 = 0x0000_0010;

/// `RF_Native`: a class with native (C++) code.
pub(crate) const RF_NATIVE: u32 = 0x0400_0000;

/// Names of the set bits of `value` according to `table`; bits the table
/// does not know are listed as `0x...` so nothing is hidden.
pub(crate) fn decode_flags(value: u32, table: &[(u32, &str)]) -> Vec<String> {
    let mut names = Vec::new();
    let mut known = 0u32;
    for &(bit, name) in table {
        known |= bit;
        if value & bit != 0 {
            names.push(name.to_string());
        }
    }
    let unknown = value & !known;
    if unknown != 0 {
        names.push(format!("0x{unknown:x}"));
    }
    names
}

/// Decoded package flags.
pub(crate) fn package_flag_names(value: u32) -> Vec<String> {
    decode_flags(value, PACKAGE_FLAGS)
}

/// Decoded object (or name) flags.
pub(crate) fn object_flag_names(value: u32) -> Vec<String> {
    decode_flags(value, OBJECT_FLAGS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_known_and_unknown_bits() {
        assert_eq!(
            package_flag_names(0x0b),
            ["PKG_AllowDownload", "PKG_ClientOptional", "PKG_BrokenLinks"]
        );
        assert_eq!(package_flag_names(0x20), ["0x20"]);
        // CTF-Face's first export (reference 003): 0x02070001 read little-endian from 01 00 07 02.
        assert_eq!(
            object_flag_names(0x0207_0001),
            [
                "RF_Transactional",
                "RF_LoadForClient",
                "RF_LoadForServer",
                "RF_LoadForEdit",
                "RF_HasStack"
            ]
        );
    }
}
