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

/// The components of a fixed-layout native struct, in order, for the ones
/// whose fields are plain numbers (the rest stay bytes).
pub(super) fn fixed_components(name: &str, engine: EngineVersion) -> Option<Vec<Component>> {
    use Component::*;
    let real = if engine.has(Feature::LargeWorldCoordinates) {
        F64
    } else {
        F32
    };
    let n = |c: Component, k: usize| vec![c; k];
    Some(match name {
        "Vector"
        | "Vector_NetQuantize"
        | "Vector_NetQuantize10"
        | "Vector_NetQuantize100"
        | "Vector_NetQuantizeNormal"
        | "Rotator" => n(real, 3),
        "Vector2D" => n(real, 2),
        "Vector4" | "Quat" | "Plane" | "Sphere" => n(real, 4),
        "Box" => [n(real, 6), vec![U8]].concat(),
        "Box2D" => [n(real, 4), vec![U8]].concat(),
        "Matrix" => n(real, 16),
        "Vector2f" | "DeprecateSlateVector2D" | "SimpleCurveKey" => n(F32, 2),
        "IntPoint" => n(I32, 2),
        "DateTime" | "Timespan" => vec![I64],
        "Vector3f" | "Rotator3f" => n(F32, 3),
        "IntVector" => n(I32, 3),
        "Vector4f" | "Quat4f" | "Plane4f" | "Sphere3f" | "LinearColor" => n(F32, 4),
        "IntVector4" => n(I32, 4),
        "Vector3d" | "Rotator3d" => n(F64, 3),
        "Quat4d" | "Plane4d" | "Sphere3d" => n(F64, 4),
        // B, G, R, A as stored.
        "Color" => n(U8, 4),
        "FrameNumber" => vec![I32],
        "NavAgentSelector" => vec![U32],
        "RichCurveKey" => [n(U8, 3), n(F32, 6)].concat(),
        "MovieSceneFrameRange" => vec![U8, I32, U8, I32],
        "FontCharacter" => [n(I32, 4), vec![U8, I32]].concat(),
        _ => return None,
    })
}
