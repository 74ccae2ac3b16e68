//! Schemas of blueprint classes and user-defined structs read from the
//! export that defines them: a dumper only knows the classes that were
//! loaded when it ran, so a mod's own blueprint classes are usually missing
//! from the mappings (those of other packages are found by
//! `schema_source`). Their layout is in the package: the class or struct
//! export's native data (`UStruct::Serialize`) lists its
//! properties (`FProperty` records), after its property block and object GUID flag:
//! `SuperStruct` (FPackageIndex), `Children` (`i32` count + FPackageIndex),
//! `ChildProperties` (`i32` count, then per property its type FName and the
//! field: name FName, flags `u32`, array dim `i32`, element size `i32`,
//! property flags `u64`, rep index `u16`, rep notify FName, replication
//! condition `u8`, then the type's own references), then the script bytecode.

use crate::binary::Reader;
use crate::error::{Context, Error, Result};
use crate::legacy::{LegacyPackage, PackageFiles, PackageIndex, ResolvedIndex};
use crate::mappings::{Mappings, PropertySchema, PropertyType, StructSchema};

use super::{walk_export, PackageContext};

/// Inner fields nest (array of map of …); bound it for hostile data.
const MAX_FIELD_DEPTH: usize = 8;

/// Schemas of the classes exported by the package whose objects are
/// instances of them (blueprint classes) and that `mappings` lacks.
/// Classes whose records cannot be read are left out (their instances then
/// report the missing schema).
pub fn package_class_schemas(
    files: &PackageFiles,
    package: &LegacyPackage,
    mappings: &Mappings,
) -> Vec<StructSchema> {
    let cx = PackageContext::of(package);
    let mut out = Vec::new();
    for export in &package.exports {
        let ResolvedIndex::Export(class) = export.class_index.resolve() else {
            continue;
        };
        let Some(Ok(name)) = package
            .exports
            .get(class)
            .map(|e| package.name(e.object_name))
        else {
            continue;
        };
        if mappings.struct_schema(&name).is_some()
            || out.iter().any(|s: &StructSchema| s.name == name)
        {
            continue;
        }
        if let Ok(schema) = class_schema(files, package, &cx, mappings, class, &name) {
            out.push(schema);
        }
    }
    out
}

pub(super) fn class_schema(
    files: &PackageFiles,
    package: &LegacyPackage,
    cx: &PackageContext,
    mappings: &Mappings,
    index: usize,
    name: &str,
) -> Result<StructSchema> {
    let (_, native_start, _) = walk_export(files, package, cx, Some(mappings), index, false)?;
    let data = files.export_data(package, index)?;
    let base = package.exports[index].serial_offset as u64;
    let mut r = Reader::with_base(data, base);
    let start = native_start
        .checked_sub(base)
        .ok_or_else(|| Error::internal("the native data starts before its export"))?;
    r.seek(usize::try_from(start).map_err(|_| r.error("native data offset"))?)?;
    // Where the native data starts depends on the property block the
    // mappings described: damaged mappings put it anywhere, so every
    // reference read from here on is checked against the maps.
    let super_name = match object_name(&mut r, package).context("super struct")? {
        none if none == "None" => None,
        other => Some(other),
    };
    let children = r.count_i32(4).context("children")?;
    r.skip(children * 4)?;
    let count = r.count_i32(16).context("child properties")?;
    let mut properties = Vec::with_capacity(count);
    let mut slot: u32 = 0;
    for i in 0..count {
        let (prop_name, ty, array_dim) = field(&mut r, package, cx, 0)
            .with_context(|| format!("child property {i} of {name}"))?;
        let array_size =
            u8::try_from(array_dim).map_err(|_| r.error(format!("array dimension {array_dim}")))?;
        properties.push(PropertySchema {
            schema_index: u16::try_from(slot).map_err(|_| r.error("too many properties"))?,
            array_size,
            name: prop_name,
            ty,
        });
        slot += array_size.max(1) as u32;
    }
    // The script bytecode follows: its two sizes must make sense.
    let at = r.pos();
    let _bytecode_size = r.count_i32(0)?;
    let storage = r.count_i32(1)?;
    if storage > r.remaining() {
        return Err(r.error_at(
            at,
            "the script bytecode does not follow the child properties",
        ));
    }
    Ok(StructSchema {
        name: name.to_string(),
        super_name,
        property_count: u16::try_from(slot).map_err(|_| {
            Error::limit("properties in a class schema", slot as u64, u16::MAX as u64)
        })?,
        properties,
    })
}

fn fname(r: &mut Reader, cx: &PackageContext) -> Result<String> {
    cx.name(r)
}

fn object_name(r: &mut Reader, package: &LegacyPackage) -> Result<String> {
    let at = r.pos();
    let index = PackageIndex(r.i32()?);
    match index.resolve() {
        ResolvedIndex::Null => Ok("None".to_string()),
        ResolvedIndex::Import(i) if i < package.imports.len() => {
            package.name(package.imports[i].object_name)
        }
        ResolvedIndex::Export(e) if e < package.exports.len() => {
            package.name(package.exports[e].object_name)
        }
        _ => Err(r.error_at(
            at,
            format!("object reference {} is outside the maps", index.0),
        )),
    }
}

/// One serialized `FField` (type name first). Returns name, type, array dim.
fn field(
    r: &mut Reader,
    package: &LegacyPackage,
    cx: &PackageContext,
    depth: usize,
) -> Result<(String, PropertyType, i32)> {
    if depth > MAX_FIELD_DEPTH {
        return Err(r.error("property fields nest too deeply"));
    }
    let type_name = fname(r, cx).context("field type")?;
    let name = fname(r, cx).context("field name")?;
    r.u32().context("field flags")?;
    let array_dim = r.i32()?;
    r.i32()?; // element size
    r.u64()?; // property flags
    r.u16()?; // rep index
    fname(r, cx)?; // rep notify function
    r.u8()?; // replication condition
    let inner = |r: &mut Reader| -> Result<Box<PropertyType>> {
        Ok(Box::new(field(r, package, cx, depth + 1)?.1))
    };
    let ty = match type_name.as_str() {
        "ByteProperty" => {
            object_name(r, package)?;
            PropertyType::Byte
        }
        "BoolProperty" => {
            r.skip(6)?;
            PropertyType::Bool
        }
        "ObjectProperty" | "ObjectPtrProperty" => {
            object_name(r, package)?;
            PropertyType::Object
        }
        "WeakObjectProperty" => {
            object_name(r, package)?;
            PropertyType::WeakObject
        }
        "LazyObjectProperty" => {
            object_name(r, package)?;
            PropertyType::LazyObject
        }
        "SoftObjectProperty" => {
            object_name(r, package)?;
            PropertyType::SoftObject
        }
        "ClassProperty" | "ClassPtrProperty" => {
            object_name(r, package)?;
            object_name(r, package)?;
            PropertyType::Object
        }
        "SoftClassProperty" => {
            object_name(r, package)?;
            object_name(r, package)?;
            PropertyType::SoftObject
        }
        "InterfaceProperty" => {
            object_name(r, package)?;
            PropertyType::Interface
        }
        "StructProperty" => PropertyType::Struct(object_name(r, package)?),
        "DelegateProperty" => {
            object_name(r, package)?;
            PropertyType::Delegate
        }
        "MulticastDelegateProperty"
        | "MulticastInlineDelegateProperty"
        | "MulticastSparseDelegateProperty" => {
            object_name(r, package)?;
            PropertyType::MulticastDelegate
        }
        "FieldPathProperty" => {
            fname(r, cx)?;
            PropertyType::FieldPath
        }
        "ArrayProperty" => PropertyType::Array(inner(r)?),
        "SetProperty" => PropertyType::Set(inner(r)?),
        "OptionalProperty" => PropertyType::Optional(inner(r)?),
        "MapProperty" => {
            let key = inner(r)?;
            PropertyType::Map(key, inner(r)?)
        }
        "EnumProperty" => {
            let enum_name = object_name(r, package)?;
            PropertyType::Enum {
                underlying: inner(r)?,
                enum_name,
            }
        }
        other => PropertyType::plain(other)
            .ok_or_else(|| r.error(format!("property type {other} is not known to zenpak")))?,
    };
    Ok((name, ty, array_dim))
}
