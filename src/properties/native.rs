//! Structs with a native serializer: their bytes follow the struct's own
//! `Serialize`, not the property encodings. The table maps the struct's name
//! to its layout. Sizes that depend on large world coordinates (UE5 doubles)
//! come from the version table.

use crate::binary::Reader;
use crate::error::{Context, Result};
use crate::version::{EngineVersion, Feature};

use super::Walker;

/// How a natively serialized struct is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NativeLayout {
    /// A fixed number of bytes.
    Fixed(usize),
    /// `FSoftObjectPath` (and its class / legacy-named variants).
    SoftObjectPath,
    /// `FGameplayTagContainer`: `i32` count, then that many FNames.
    GameplayTagContainer,
    /// `FPerPlatform*`: 32-bit "cooked" bool, the default value, and when not
    /// cooked a map of platform FName → value.
    PerPlatform { value_size: usize },
    /// `FPerQualityLevel*`: 32-bit "cooked" bool, the default, then a map of
    /// `i32` quality level → value.
    PerQualityLevel { value_size: usize },
    /// `FUniqueNetIdRepl`: `i32` size; when positive, a type FName and a string.
    UniqueNetIdRepl,
    /// A sequence of fixed-size fields and arrays of fixed-size elements.
    Parts(&'static [Part]),
    /// Natively serialized with a layout zenpak does not step over (yet):
    /// reading one is a clear error rather than a wrong guess from its schema.
    Unsupported,
}

/// One piece of a [`NativeLayout::Parts`] layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// This many bytes.
    Bytes(usize),
    /// `i32` count, then count elements of this many bytes.
    Array(usize),
    /// Bulk-serialized array: `i32` element size, `i32` count, the elements.
    BulkArray,
}

/// `FWeightedRandomSampler`: probabilities (floats), aliases (ints), total weight.
const WEIGHTED_RANDOM_SAMPLER: [Part; 3] = [Part::Array(4), Part::Array(4), Part::Bytes(4)];

/// The native layout of struct `name` in release `engine`, if it has one.
pub fn native_struct(name: &str, engine: EngineVersion) -> Option<NativeLayout> {
    use NativeLayout::*;
    // Engine "real" (float or double) components.
    let real = if engine.has(Feature::LargeWorldCoordinates) {
        8
    } else {
        4
    };
    Some(match name {
        "Vector"
        | "Vector_NetQuantize"
        | "Vector_NetQuantize10"
        | "Vector_NetQuantize100"
        | "Vector_NetQuantizeNormal"
        | "Rotator" => Fixed(3 * real),
        "Vector2D" => Fixed(2 * real),
        "Vector4" | "Quat" | "Plane" | "Sphere" => Fixed(4 * real),
        "Box" => Fixed(6 * real + 1),
        "Box2D" => Fixed(4 * real + 1),
        "Matrix" => Fixed(16 * real),
        "Vector2f"
        | "DeprecateSlateVector2D"
        | "IntPoint"
        | "DateTime"
        | "Timespan"
        | "SimpleCurveKey" => Fixed(8),
        "Vector3f" | "Rotator3f" | "IntVector" => Fixed(12),
        "Vector4f" | "Quat4f" | "Plane4f" | "Sphere3f" | "LinearColor" | "Guid" | "IntVector4" => {
            Fixed(16)
        }
        "Vector3d" | "Rotator3d" => Fixed(24),
        "Quat4d" | "Plane4d" | "Sphere3d" => Fixed(32),
        "Color" | "FrameNumber" | "NavAgentSelector" => Fixed(4),
        "SmartName" => Fixed(8),
        // Interp mode, tangent mode, tangent weight mode (u8 each), then time,
        // value, arrive tangent + weight, leave tangent + weight (f32 each).
        "RichCurveKey" => Fixed(3 + 6 * 4),
        "MovieSceneFrameRange" => Fixed(2 * (1 + 4)),
        "FontCharacter" => Fixed(4 * 4 + 1 + 4),
        "SoftObjectPath" | "SoftClassPath" | "StringAssetReference" | "StringClassReference" => {
            SoftObjectPath
        }
        "GameplayTagContainer" => GameplayTagContainer,
        "PerPlatformFloat" | "PerPlatformInt" | "PerPlatformBool" => PerPlatform { value_size: 4 },
        "PerPlatformFrameRate" => PerPlatform { value_size: 8 },
        "PerQualityLevelInt" | "PerQualityLevelFloat" => PerQualityLevel { value_size: 4 },
        "UniqueNetIdRepl" => UniqueNetIdRepl,
        // Pre/post infinity extrapolation (u8 each), key times and key values
        // (bulk arrays), default value, has-default (bool32), tick resolution
        // (FFrameRate, 8), show-curve (bool32; UE5 cooks write it).
        "MovieSceneFloatChannel" => Parts(&[
            Part::Bytes(2),
            Part::BulkArray,
            Part::BulkArray,
            Part::Bytes(4 + 4 + 8 + 4),
        ]),
        "MovieSceneDoubleChannel" => Parts(&[
            Part::Bytes(2),
            Part::BulkArray,
            Part::BulkArray,
            Part::Bytes(8 + 4 + 8 + 4),
        ]),
        "MovieSceneEvaluationFieldEntityTree"
        | "MovieSceneEvalTemplatePtr"
        | "MovieSceneTrackImplementationPtr"
        | "MovieSceneEvaluationKey"
        | "MovieSceneSegment"
        | "SectionEvaluationDataTree"
        | "NiagaraVariable"
        | "NiagaraVariableBase"
        | "NiagaraVariableWithOffset"
        | "NiagaraDataInterfaceGPUParamInfo"
        | "Spline"
        | "InstancedStruct"
        | "LevelSequenceObjectReferenceMap"
        | "FontData"
        | "WorldConditionQueryDefinition"
        | "ClothLODDataCommon"
        | "ClothTetherData"
        | "MaterialOverrideNanite"
        | "ExpressionInput"
        | "ColorMaterialInput"
        | "ScalarMaterialInput"
        | "VectorMaterialInput"
        | "Vector2MaterialInput"
        | "ShadingModelMaterialInput"
        | "MaterialAttributesInput" => Unsupported,
        "SkeletalMeshSamplingLODBuiltData" => Parts(&WEIGHTED_RANDOM_SAMPLER),
        // Triangle indices, vertices, bone indices (ints), then a weighted sampler.
        "SkeletalMeshSamplingRegionBuiltData" => Parts(&[
            Part::Array(4),
            Part::Array(4),
            Part::Array(4),
            Part::Array(4),
            Part::Array(4),
            Part::Bytes(4),
        ]),
        _ => return None,
    })
}

/// Steps over one natively serialized struct.
pub(super) fn read(
    walker: &Walker,
    r: &mut Reader,
    name: &str,
    layout: NativeLayout,
    _depth: usize,
) -> Result<String> {
    let cx = walker.cx;
    match layout {
        NativeLayout::Fixed(n) => {
            r.skip(n).with_context(|| format!("native struct {name}"))?;
            Ok(format!("{name} ({n} bytes)"))
        }
        NativeLayout::SoftObjectPath => walker.soft_object_path(r),
        NativeLayout::GameplayTagContainer => {
            let n = r.count_i32(8).context("gameplay tag container")?;
            let mut tags = Vec::with_capacity(n);
            for _ in 0..n {
                tags.push(walker.name_value(r)?);
            }
            Ok(format!("({})", tags.join(", ")))
        }
        NativeLayout::PerPlatform { value_size } => {
            let cooked = r.bool32()?;
            r.skip(value_size)?;
            if !cooked {
                let n = r.count_i32(8 + value_size)?;
                for _ in 0..n {
                    cx.name(r)?;
                    r.skip(value_size)?;
                }
            }
            Ok(name.to_string())
        }
        NativeLayout::PerQualityLevel { value_size } => {
            r.bool32()?;
            r.skip(value_size)?;
            let n = r.count_i32(4 + value_size)?;
            r.skip(n * (4 + value_size))?;
            Ok(name.to_string())
        }
        NativeLayout::Parts(parts) => {
            for part in parts {
                match *part {
                    Part::Bytes(n) => r.skip(n)?,
                    Part::Array(size) => {
                        let n = r.count_i32(size)?;
                        r.skip(n * size)?;
                    }
                    Part::BulkArray => {
                        let size = r.count_i32(0)?;
                        let n = r.count_i32(size)?;
                        r.skip(n * size)?;
                    }
                }
            }
            Ok(name.to_string())
        }
        NativeLayout::Unsupported => Err(crate::error::Error::unsupported(format!(
            "struct `{name}` is serialized natively and zenpak does not know its layout"
        ))
        .at(r.offset())),
        NativeLayout::UniqueNetIdRepl => {
            let size = r.i32()?;
            if size > 0 {
                cx.name(r)?;
                r.fstring()?;
            }
            Ok("net id".to_string())
        }
    }
}
