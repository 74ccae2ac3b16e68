//! Natively serialized structs of a fixed layout whose fields are plain
//! numbers (vectors, rotators, colors, curve keys, …): their components in order.

use crate::binary::{Reader, Writer};
use crate::error::{Error, Result};
use crate::version::{EngineVersion, Feature};

use super::super::tree::*;
use super::value_kind;

/// One component of a fixed-layout native struct.
#[derive(Debug, Clone, Copy)]
pub(super) enum Component {
    U8,
    I32,
    U32,
    I64,
    F32,
    F64,
}

impl Component {
    pub(super) fn read(self, r: &mut Reader) -> Result<Value> {
        Ok(match self {
            Component::U8 => Value::Byte(r.u8()?),
            Component::I32 => Value::Int(r.i32()?),
            Component::U32 => Value::UInt32(r.u32()?),
            Component::I64 => Value::Int64(Wide(r.i64()?)),
            Component::F32 => Value::Float(F32(r.f32()?)),
            Component::F64 => Value::Double(F64(r.f64()?)),
        })
    }

    pub(super) fn write(self, w: &mut Writer, v: &Value) -> Result<()> {
        match (self, v) {
            (Component::U8, Value::Byte(x)) => w.u8(*x),
            (Component::I32, Value::Int(x)) => w.i32(*x),
            (Component::U32, Value::UInt32(x)) => w.u32(*x),
            (Component::I64, Value::Int64(x)) => w.i64(x.0),
            (Component::F32, Value::Float(x)) => w.f32(x.0),
            (Component::F64, Value::Double(x)) => w.bytes(&x.0.to_le_bytes()),
            (c, v) => {
                return Err(Error::invalid(format!(
                    "a {} field where the struct has {c:?}",
                    value_kind(v)
                )))
            }
        }
        Ok(())
    }
}

/// A fixed-layout native struct's fields: name and component, in order.
pub(super) type Fields = &'static [(&'static str, Component)];

/// The fields of a fixed-layout native struct, for the ones whose fields
/// are plain numbers (the rest stay bytes). Static tables: this runs for
/// every vector and color read or written.
pub(super) fn fixed_components(name: &str, engine: EngineVersion) -> Option<Fields> {
    use Component::*;
    let lwc = engine.has(Feature::LargeWorldCoordinates);
    // Fields of the engine's "real" type (double with large world
    // coordinates), then any of a fixed type.
    macro_rules! real {
        ($($n:literal),* $(; $($t:expr),*)?) => {
            if lwc {
                &[$(($n, F64)),* $(, $($t),*)?]
            } else {
                &[$(($n, F32)),* $(, $($t),*)?]
            }
        };
    }
    Some(match name {
        "Vector"
        | "Vector_NetQuantize"
        | "Vector_NetQuantize10"
        | "Vector_NetQuantize100"
        | "Vector_NetQuantizeNormal" => real!("X", "Y", "Z"),
        "Rotator" => real!("Pitch", "Yaw", "Roll"),
        "Vector2D" => real!("X", "Y"),
        "Vector4" | "Quat" | "Plane" | "Sphere" => real!("X", "Y", "Z", "W"),
        "Box" => real!("MinX", "MinY", "MinZ", "MaxX", "MaxY", "MaxZ"; ("IsValid", U8)),
        "Box2D" => real!("MinX", "MinY", "MaxX", "MaxY"; ("IsValid", U8)),
        "Matrix" => real!(
            "M00", "M01", "M02", "M03", "M10", "M11", "M12", "M13", "M20", "M21", "M22", "M23",
            "M30", "M31", "M32", "M33"
        ),
        "Vector2f" | "DeprecateSlateVector2D" => &[("X", F32), ("Y", F32)],
        "SimpleCurveKey" => &[("Time", F32), ("Value", F32)],
        "IntPoint" => &[("X", I32), ("Y", I32)],
        "DateTime" | "Timespan" => &[("Ticks", I64)],
        "Vector3f" => &[("X", F32), ("Y", F32), ("Z", F32)],
        "Rotator3f" => &[("Pitch", F32), ("Yaw", F32), ("Roll", F32)],
        "IntVector" => &[("X", I32), ("Y", I32), ("Z", I32)],
        "Vector4f" | "Quat4f" | "Plane4f" | "Sphere3f" => {
            &[("X", F32), ("Y", F32), ("Z", F32), ("W", F32)]
        }
        "LinearColor" => &[("R", F32), ("G", F32), ("B", F32), ("A", F32)],
        "IntVector4" => &[("X", I32), ("Y", I32), ("Z", I32), ("W", I32)],
        "Vector3d" => &[("X", F64), ("Y", F64), ("Z", F64)],
        "Rotator3d" => &[("Pitch", F64), ("Yaw", F64), ("Roll", F64)],
        "Quat4d" | "Plane4d" | "Sphere3d" => &[("X", F64), ("Y", F64), ("Z", F64), ("W", F64)],
        // Stored B, G, R, A.
        "Color" => &[("B", U8), ("G", U8), ("R", U8), ("A", U8)],
        "FrameNumber" => &[("Value", I32)],
        "NavAgentSelector" => &[("PackedBits", U32)],
        "RichCurveKey" => &[
            ("InterpMode", U8),
            ("TangentMode", U8),
            ("TangentWeightMode", U8),
            ("Time", F32),
            ("Value", F32),
            ("ArriveTangent", F32),
            ("ArriveTangentWeight", F32),
            ("LeaveTangent", F32),
            ("LeaveTangentWeight", F32),
        ],
        "MovieSceneFrameRange" => &[
            ("LowerBoundType", U8),
            ("LowerBoundValue", I32),
            ("UpperBoundType", U8),
            ("UpperBoundValue", I32),
        ],
        "FontCharacter" => &[
            ("StartU", I32),
            ("StartV", I32),
            ("USize", I32),
            ("VSize", I32),
            ("TextureIndex", U8),
            ("VerticalOffset", I32),
        ],
        _ => return None,
    })
}
