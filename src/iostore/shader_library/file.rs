//! A cooked library file on disk into a container: the engine's IoStore
//! tool converts every `.ushaderbytecode` it stages, reading the cook's
//! `ShaderAssetInfo-<library>-<format>.assetinfo.json` from the same folder
//! (`ConvertToIoStoreShaderLibrary`).

use std::path::{Path, PathBuf};

use super::*;
use crate::diagnostic::Diagnostic;
use crate::error::ErrorKind;

/// What became of a library file.
#[derive(Debug)]
pub struct FileConversion {
    /// The converted library; `None` when the file goes into the companion
    /// pak as it is (UE4 containers hold no shader chunks, or a library
    /// zenpak cannot regroup; `warnings` then says why).
    pub library: Option<ConvertedLibrary>,
    /// The asset info file the conversion read (build metadata the game
    /// does not read: it is not packed).
    pub(crate) asset_info: Option<PathBuf>,
    pub(crate) warnings: Vec<Diagnostic>,
}

/// `ShaderArchive-<library>-<format>.ushaderbytecode`.
pub fn is_library_file_name(file_name: &str) -> bool {
    file_name.starts_with("ShaderArchive-") && library_and_format(file_name).is_some()
}

/// Converts the library at `path` for `engine`, reading its header (see
/// [`ShaderArchive::read_header_from`]); its code is read when the group
/// chunks are written ([`ConvertedLibrary::each_group`]).
pub fn convert_file(path: &Path, engine: EngineVersion) -> Result<FileConversion> {
    let unchanged = |warnings| FileConversion {
        library: None,
        asset_info: None,
        warnings,
    };
    let file_name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    if !engine.is_ue5() || !is_library_file_name(file_name) {
        return Ok(unchanged(Vec::new()));
    }
    // Only the header is read now; the code is read a group at a time as
    // the group chunks are written.
    let mut file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let len = file.metadata().map_err(|e| Error::io(path, e))?.len();
    let mut warnings = Vec::new();
    let info_path = ShaderAssetInfo::file_name_for(file_name).map(|name| path.with_file_name(name));
    let asset_info = match info_path.as_deref().filter(|p| p.is_file()) {
        Some(p) => {
            let text = std::fs::read(p).map_err(|e| Error::io(p, e))?;
            Some(ShaderAssetInfo::read(&text).map_err(|e| e.in_file(p))?)
        }
        None => {
            warnings.push(
                Diagnostic::warning(
                    "shader-asset-info-missing",
                    "the cook's asset info for this shader library is not beside it: no package lists its shader maps, so the game loads them on first use instead of with the packages",
                )
                .with_file(path)
                .with_hint("copy ShaderAssetInfo-<library>-<format>.assetinfo.json from the cooked folder next to the library"),
            );
            None
        }
    };
    let converted = ShaderArchive::read_header_from(&mut file, len).and_then(|archive| {
        drop(file);
        convert::convert_path(path, archive, len, asset_info.as_ref(), engine)
    });
    match converted {
        Ok(library) => {
            if library.split_groups > 0 {
                warnings.push(
                    Diagnostic::warning(
                        "shader-groups-split",
                        format!(
                            "{} shader groups hold shaders compressed with a method zenpak cannot decompress (Oodle); each of their shaders is stored as a group of its own, which the game loads alike but which is larger than the engine's grouping",
                            library.split_groups
                        ),
                    )
                    .with_file(path),
                );
            }
            Ok(FileConversion {
                library: Some(library),
                asset_info: asset_info.and(info_path),
                warnings,
            })
        }
        Err(e) if matches!(e.kind(), ErrorKind::Unsupported(_)) => {
            let e = e.in_file(path);
            let mut warning = Diagnostic::warning(
                "shader-library-in-pak",
                format!(
                    "the shader library stays in the companion pak: {}",
                    e.message()
                ),
            )
            .with_file(path);
            if let Some(hint) = &e.context().hint {
                warning = warning.with_hint(hint.clone());
            }
            warnings.push(warning);
            Ok(unchanged(warnings))
        }
        Err(e) => Err(e.in_file(path)),
    }
}
