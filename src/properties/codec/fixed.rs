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

/// The fields of a fixed-layout native struct (name and component), in
/// order, for the ones whose fields are plain numbers (the rest stay bytes).
pub(super) fn fixed_components(
    name: &str,
    engine: EngineVersion,
) -> Option<Vec<(&'static str, Component)>> {
    use Component::*;
    let real = if engine.has(Feature::LargeWorldCoordinates) {
        F64
    } else {
        F32
    };
    let all =
        |names: &[&'static str], c: Component| names.iter().map(|n| (*n, c)).collect::<Vec<_>>();
    const XYZ: &[&str] = &["X", "Y", "Z"];
    const XY: &[&str] = &["X", "Y"];
    const XYZW: &[&str] = &["X", "Y", "Z", "W"];
    const PYR: &[&str] = &["Pitch", "Yaw", "Roll"];
    const BOX: &[&str] = &["MinX", "MinY", "MinZ", "MaxX", "MaxY", "MaxZ"];
    const BOX2: &[&str] = &["MinX", "MinY", "MaxX", "MaxY"];
    const MATRIX: &[&str] = &[
        "M00", "M01", "M02", "M03", "M10", "M11", "M12", "M13", "M20", "M21", "M22", "M23", "M30",
        "M31", "M32", "M33",
    ];
    Some(match name {
        "Vector"
        | "Vector_NetQuantize"
        | "Vector_NetQuantize10"
        | "Vector_NetQuantize100"
        | "Vector_NetQuantizeNormal" => all(XYZ, real),
        "Rotator" => all(PYR, real),
        "Vector2D" => all(XY, real),
        "Vector4" | "Quat" | "Plane" | "Sphere" => all(XYZW, real),
        "Box" => [all(BOX, real), vec![("IsValid", U8)]].concat(),
        "Box2D" => [all(BOX2, real), vec![("IsValid", U8)]].concat(),
        "Matrix" => all(MATRIX, real),
        "Vector2f" | "DeprecateSlateVector2D" => all(XY, F32),
        "SimpleCurveKey" => all(&["Time", "Value"], F32),
        "IntPoint" => all(XY, I32),
        "DateTime" | "Timespan" => vec![("Ticks", I64)],
        "Vector3f" => all(XYZ, F32),
        "Rotator3f" => all(PYR, F32),
        "IntVector" => all(XYZ, I32),
        "Vector4f" | "Quat4f" | "Plane4f" | "Sphere3f" => all(XYZW, F32),
        "LinearColor" => all(&["R", "G", "B", "A"], F32),
        "IntVector4" => all(XYZW, I32),
        "Vector3d" => all(XYZ, F64),
        "Rotator3d" => all(PYR, F64),
        "Quat4d" | "Plane4d" | "Sphere3d" => all(XYZW, F64),
        // Stored B, G, R, A.
        "Color" => all(&["B", "G", "R", "A"], U8),
        "FrameNumber" => vec![("Value", I32)],
        "NavAgentSelector" => vec![("PackedBits", U32)],
        "RichCurveKey" => [
            all(&["InterpMode", "TangentMode", "TangentWeightMode"], U8),
            all(
                &[
                    "Time",
                    "Value",
                    "ArriveTangent",
                    "ArriveTangentWeight",
                    "LeaveTangent",
                    "LeaveTangentWeight",
                ],
                F32,
            ),
        ]
        .concat(),
        "MovieSceneFrameRange" => vec![
            ("LowerBoundType", U8),
            ("LowerBoundValue", I32),
            ("UpperBoundType", U8),
            ("UpperBoundValue", I32),
        ],
        "FontCharacter" => vec![
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
