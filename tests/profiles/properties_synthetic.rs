//! The walker on hand-made property blocks whose every byte is known:
//! unversioned (header, zero mask, bools, nested structs, containers,
//! native structs) and tagged (pre-5.4 tags and 5.4+ complete type names).

use zenpak::binary::{Reader, Writer};
use zenpak::mappings::{Mappings, PropertySchema, PropertyType, StructSchema, UsmapVersion};
use zenpak::properties::{Fragment, PackageContext, UnversionedHeader, Walker};
use zenpak::EngineVersion;

fn prop(schema_index: u16, name: &str, ty: PropertyType) -> PropertySchema {
    PropertySchema {
        schema_index,
        array_size: 1,
        name: name.into(),
        ty,
    }
}

fn mappings() -> Mappings {
    let base = StructSchema {
        name: "Base".into(),
        super_name: None,
        property_count: 2,
        properties: vec![
            prop(0, "BaseInt", PropertyType::Int),
            prop(1, "BaseFlag", PropertyType::Bool),
        ],
    };
    let inner = StructSchema {
        name: "Inner".into(),
        super_name: None,
        property_count: 1,
        properties: vec![prop(0, "Value", PropertyType::Float)],
    };
    let thing = StructSchema {
        name: "Thing".into(),
        super_name: Some("Base".into()),
        property_count: 4,
        properties: vec![
            prop(0, "Name", PropertyType::Name),
            prop(
                1,
                "Inners",
                PropertyType::Array(Box::new(PropertyType::Struct("Inner".into()))),
            ),
            prop(2, "Where", PropertyType::Struct("Vector".into())),
            prop(3, "Label", PropertyType::Str),
        ],
    };
    Mappings::new(UsmapVersion::LATEST, vec![], vec![base, inner, thing])
}

fn context(
    names: &[&'static str],
    unversioned: bool,
    engine: EngineVersion,
) -> PackageContext<'static> {
    PackageContext {
        engine,
        names: names.to_vec(),
        import_count: 2,
        export_count: 1,
        object_paths: vec!["/Script/A".into(), "/Script/A.B".into(), "/Game/P.C".into()],
        soft_object_path_count: 0,
        unversioned,
    }
}

#[test]
fn unversioned_block_with_super_struct_zero_mask_bools_and_nesting() {
    let m = mappings();
    let cx = context(&["None", "Hello"], true, EngineVersion::UE5_3);
    let mut w = Writer::new();
    // Slots: Thing's own 0..4 then Base's 4..6. Values: Name (0), Inners (1),
    // Where (2, zero), then skip Label, BaseInt (4), BaseFlag (5, true).
    UnversionedHeader {
        fragments: vec![
            Fragment {
                skip: 0,
                values: 3,
                has_zeroes: true,
                is_last: false,
            },
            Fragment {
                skip: 1,
                values: 2,
                has_zeroes: false,
                is_last: true,
            },
        ],
        zero_mask: vec![false, false, true],
    }
    .write(&mut w);
    w.i32(1); // Name = "Hello"
    w.i32(0);
    w.i32(2); // Inners: two structs
    for v in [1.5f32, 0.0] {
        if v == 0.0 {
            // All-zero struct: one fragment with one zero value.
            UnversionedHeader {
                fragments: vec![Fragment {
                    skip: 0,
                    values: 1,
                    has_zeroes: true,
                    is_last: true,
                }],
                zero_mask: vec![true],
            }
            .write(&mut w);
        } else {
            UnversionedHeader {
                fragments: vec![Fragment {
                    skip: 0,
                    values: 1,
                    has_zeroes: false,
                    is_last: true,
                }],
                zero_mask: vec![],
            }
            .write(&mut w);
            w.f32(v);
        }
    }
    w.i32(-7); // BaseInt
    w.u8(1); // BaseFlag: a non-zero bool is one byte
    let end = w.pos();
    w.bytes(&[0xEE; 5]); // what follows the block
    let bytes = w.into_inner();
    let walker = Walker::new(&cx, Some(m.view(None)));
    let mut r = Reader::with_base(&bytes, 1000);
    let block = walker.walk(&mut r, "Thing", true).unwrap();
    assert_eq!(block.start, 1000);
    assert_eq!(block.end, 1000 + end as u64);
    let names: Vec<(&str, &str)> = block
        .properties
        .iter()
        .map(|p| (p.name.as_str(), p.value.as_str()))
        .collect();
    assert_eq!(
        names,
        [
            ("Name", "Hello"),
            ("Inners", "[2]"),
            ("Where", "zero"),
            ("BaseInt", "-7"),
            ("BaseFlag", "true")
        ]
    );
}

#[test]
fn unversioned_errors_name_the_struct() {
    let m = mappings();
    let cx = context(&["None"], true, EngineVersion::UE5_3);
    let mut w = Writer::new();
    UnversionedHeader {
        fragments: vec![Fragment {
            skip: 0,
            values: 1,
            has_zeroes: false,
            is_last: true,
        }],
        zero_mask: vec![],
    }
    .write(&mut w);
    w.i32(0);
    let bytes = w.into_inner();
    let walker = Walker::new(&cx, Some(m.view(None)));
    let e = walker
        .walk(&mut Reader::new(&bytes), "Missing", false)
        .unwrap_err();
    // A class the mappings lack: the layout cannot be known.
    assert_eq!(e.code(), "unsupported", "{e}");
    let e = Walker::new(&cx, None)
        .walk(&mut Reader::new(&bytes), "Thing", false)
        .unwrap_err();
    assert_eq!(e.code(), "usage", "{e}");
    assert!(e.hint().is_some(), "{e}");
    // Slot beyond the chain: wrong mappings.
    let mut w = Writer::new();
    UnversionedHeader {
        fragments: vec![Fragment {
            skip: 100,
            values: 1,
            has_zeroes: false,
            is_last: true,
        }],
        zero_mask: vec![],
    }
    .write(&mut w);
    let bytes = w.into_inner();
    let e = walker
        .walk(&mut Reader::new(&bytes), "Thing", false)
        .unwrap_err();
    // At the slot's byte in the header.
    assert_eq!(e.code(), "format", "{e}");
    assert_eq!(e.offset(), Some(2), "{e}");
}

#[test]
fn tagged_block_before_5_4() {
    // Names: 0 None, 1 IntProperty, 2 Count, 3 BoolProperty, 4 Flag, 5 StructProperty, 6 Where, 7 Vector
    let names = [
        "None",
        "IntProperty",
        "Count",
        "BoolProperty",
        "Flag",
        "StructProperty",
        "Where",
        "Vector",
    ];
    let cx = context(&names, false, EngineVersion::UE5_3);
    let mut w = Writer::new();
    let fname = |w: &mut Writer, i: i32| {
        w.i32(i);
        w.i32(0);
    };
    fname(&mut w, 2);
    fname(&mut w, 1);
    w.i32(4); // size
    w.i32(0); // array index
    w.u8(0); // no property GUID
    w.i32(42);
    fname(&mut w, 4);
    fname(&mut w, 3);
    w.i32(0);
    w.i32(0);
    w.u8(1); // bool value in the tag
    w.u8(0);
    fname(&mut w, 6);
    fname(&mut w, 5);
    w.i32(24);
    w.i32(0);
    fname(&mut w, 7); // struct name
    w.guid(&[0; 16]);
    w.u8(0);
    w.bytes(&[0; 24]);
    fname(&mut w, 0);
    let end = w.pos();
    w.u32(0xFFFF_FFFF);
    let bytes = w.into_inner();
    let block = Walker::new(&cx, None)
        .walk(&mut Reader::new(&bytes), "Anything", true)
        .unwrap();
    assert_eq!(block.end, end as u64);
    let got: Vec<(&str, &str)> = block
        .properties
        .iter()
        .map(|p| (p.name.as_str(), p.value.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            ("Count", "4 bytes"),
            ("Flag", "true"),
            ("Where", "24 bytes")
        ]
    );
}

#[test]
fn tagged_block_with_complete_type_names() {
    let names = [
        "None",
        "ArrayProperty",
        "Items",
        "IntProperty",
        "BoolProperty",
        "Flag",
    ];
    let cx = context(&names, false, EngineVersion::UE5_4);
    let mut w = Writer::new();
    let fname = |w: &mut Writer, i: i32| {
        w.i32(i);
        w.i32(0);
    };
    w.u8(0); // 5.4+ object blocks: class serialization control, no extensions
    fname(&mut w, 2); // Items: ArrayProperty(IntProperty)
    fname(&mut w, 1);
    w.i32(1);
    fname(&mut w, 3);
    w.i32(0);
    w.i32(12); // size
    w.u8(0x01); // has array index
    w.i32(0);
    w.i32(2);
    w.i32(5);
    w.i32(6);
    fname(&mut w, 5); // Flag: BoolProperty, true in the flags
    fname(&mut w, 4);
    w.i32(0);
    w.i32(0);
    w.u8(0x10);
    fname(&mut w, 0);
    let end = w.pos();
    let bytes = w.into_inner();
    let block = Walker::new(&cx, None)
        .walk(&mut Reader::new(&bytes), "Anything", true)
        .unwrap();
    assert_eq!(block.end, end as u64);
    assert_eq!(block.properties[0].ty, "ArrayProperty(IntProperty)");
    assert_eq!(block.properties[1].value, "true");
}

#[test]
fn every_truncation_of_a_block_is_a_clean_error() {
    let m = mappings();
    let cx = context(&["None", "Hello"], true, EngineVersion::UE5_3);
    let mut w = Writer::new();
    UnversionedHeader {
        fragments: vec![Fragment {
            skip: 0,
            values: 4,
            has_zeroes: false,
            is_last: true,
        }],
        zero_mask: vec![],
    }
    .write(&mut w);
    w.i32(1);
    w.i32(0);
    w.i32(0);
    w.bytes(&[0; 24]);
    w.fstring("label");
    let bytes = w.into_inner();
    let walker = Walker::new(&cx, Some(m.view(None)));
    assert!(walker
        .walk(&mut Reader::new(&bytes), "Thing", false)
        .is_ok());
    for n in 0..bytes.len() {
        assert!(
            walker
                .walk(&mut Reader::new(&bytes[..n]), "Thing", false)
                .is_err(),
            "cut {n}"
        );
    }
}
