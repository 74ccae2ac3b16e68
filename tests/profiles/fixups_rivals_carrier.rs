//! Issue 15, row 2 (and row 3 from the carrier): a SkeletalMesh package
//! with a `MaterialTagAssetUserData` carrier export (built from the corpus's
//! `SKM_Quinn_Simple` with zenpak's legacy writer) gets each slot's tags in
//! its material containers and the carrier's hidden materials in its LOD
//! infos; the carrier's plugin imports become `/Script/Engine.AssetUserData`.

use crate::fixups_support;

use fixups_support::{edited, game_mappings, options, quinn, rebuild_as, V56};
use zenpak::binary::Writer;
use zenpak::fixups::skeletal_mesh::parse_at;
use zenpak::fixups::{Profile, ProfileOptions};
use zenpak::legacy::edit::{export_data_name, header_name};
use zenpak::legacy::{FName, ObjectImport, PackageFiles, PackageIndex};
use zenpak::mappings::{Mappings, PropertySchema, PropertyType, StructSchema};
use zenpak::properties::PackageContext;
use zenpak::zen::PackageObjectIndex;

const MATERIALS_AT: usize = 3274 + 528;

fn property(index: u16, name: &str, ty: PropertyType) -> PropertySchema {
    PropertySchema {
        schema_index: index,
        array_size: 1,
        name: name.into(),
        ty,
    }
}

/// The plugin's classes as the modder's mappings would give them.
fn plugin_schemas() -> Vec<StructSchema> {
    let structure = |n: &str| PropertyType::Struct(n.into());
    let array = |t: PropertyType| PropertyType::Array(Box::new(t));
    vec![
        StructSchema {
            name: "MaterialTagAssetUserData".into(),
            super_name: None,
            property_count: 2,
            properties: vec![
                property(
                    0,
                    "MaterialSlotTags",
                    array(structure("MaterialSlotTagEntry")),
                ),
                property(
                    1,
                    "LODHiddenMaterials",
                    array(structure("RivalsLODHiddenMaterials")),
                ),
            ],
        },
        StructSchema {
            name: "MaterialSlotTagEntry".into(),
            super_name: None,
            property_count: 2,
            properties: vec![
                property(0, "MaterialSlotName", PropertyType::Name),
                property(1, "GameplayTags", structure("GameplayTagContainer")),
            ],
        },
        StructSchema {
            name: "RivalsLODHiddenMaterials".into(),
            super_name: None,
            property_count: 1,
            properties: vec![property(0, "HiddenMaterials", array(PropertyType::Bool))],
        },
    ]
}

struct Built {
    files: PackageFiles,
    mappings: Mappings,
    /// The tags written into the carrier per slot.
    tags: [Vec<FName>; 2],
}

fn fname(w: &mut Writer, n: FName) {
    w.u32(n.index);
    w.u32(n.number);
}

/// Quinn with a carrier: slot 0 tagged `MaterialTag.Weapon`, slot 1
/// `MaterialTag.A` + `MaterialTag.B`; hidden materials LOD0 [1, 0], LOD1 [0, 1].
fn build() -> Option<Built> {
    let (files, stock) = quinn()?;
    let mut package = files.read_package(Some(V56)).unwrap();
    let mesh = files.export_data(&package, 0).unwrap().to_vec();
    let layout = parse_at(
        &mesh,
        package.exports[0].serial_offset as u64,
        528,
        &PackageContext::of(&package),
        false,
    )
    .unwrap();
    let tag = |p: &mut zenpak::legacy::LegacyPackage, t: &str| {
        FName::new(export_data_name(p, t).unwrap(), 0)
    };
    let tags = [
        vec![tag(&mut package, "MaterialTag.Weapon")],
        vec![
            tag(&mut package, "MaterialTag.A"),
            tag(&mut package, "MaterialTag.B"),
        ],
    ];
    let core = header_name(&mut package, "/Script/CoreUObject");
    let pkg_class = header_name(&mut package, "Package");
    let class_class = header_name(&mut package, "Class");
    let module = header_name(&mut package, "/Script/MaterialTagPlugin");
    let class = header_name(&mut package, "MaterialTagAssetUserData");
    let cdo = header_name(&mut package, "Default__MaterialTagAssetUserData");
    let import = |class_package, class_name, outer, object_name| ObjectImport {
        class_package,
        class_name,
        outer_index: outer,
        object_name,
        package_name: None,
        import_optional: Some(false),
    };
    package
        .imports
        .push(import(core, pkg_class, PackageIndex::NULL, module));
    let module_index = PackageIndex::from_import(package.imports.len() - 1);
    package
        .imports
        .push(import(core, class_class, module_index, class));
    let class_index = PackageIndex::from_import(package.imports.len() - 1);
    package
        .imports
        .push(import(module, class, module_index, cdo));
    let cdo_index = PackageIndex::from_import(package.imports.len() - 1);
    let mut export = package.exports[0].clone();
    export.class_index = class_index;
    export.template_index = cdo_index;
    export.outer_index = PackageIndex::from_export(0);
    export.object_name = FName::new(class.index, 1);
    export.is_asset = false;
    export.first_export_dependency = -1;
    export.serialization_before_serialization_dependencies = 0;
    export.create_before_serialization_dependencies = 0;
    export.serialization_before_create_dependencies = 0;
    export.create_before_create_dependencies = 0;
    package.exports.push(export);
    // The carrier's unversioned properties: both arrays present.
    let mut w = Writer::new();
    w.u16(0x0500); // 2 values, last
    w.i32(2);
    for (slot, slot_tags) in layout.slot_names.iter().zip(&tags) {
        w.u16(0x0500);
        fname(&mut w, *slot);
        w.i32(slot_tags.len() as i32);
        for t in slot_tags {
            fname(&mut w, *t);
        }
    }
    w.i32(2);
    for flags in [[1u8, 0], [0, 1]] {
        w.u16(0x0300); // 1 value, last
        w.i32(2);
        w.bytes(&flags);
    }
    w.bool32(false); // no object GUID
    let path = files.path.with_file_name("SKM_Quinn_Carrier.uasset");
    let files = rebuild_as(V56, &package, &[mesh, w.into_inner()], &|o| o, path);
    let mappings = game_mappings(&stock).with_extra_structs(plugin_schemas());
    Some(Built {
        files,
        mappings,
        tags,
    })
}

fn container(tags: &[FName]) -> Vec<u8> {
    let mut w = Writer::new();
    w.i32(tags.len() as i32);
    for t in tags {
        fname(&mut w, *t);
    }
    w.into_inner()
}

#[test]
fn carrier_tags_and_hidden_materials_are_written_and_its_imports_remapped() {
    let Some(built) = build() else { return };
    let files = &built.files;
    let before = files.read_package(Some(V56)).unwrap();
    let mut out = files.clone();
    let report = Profile::from_name("marvel-rivals")
        .unwrap()
        .apply_with(
            &mut out,
            V56,
            Some(&built.mappings),
            &ProfileOptions::default(),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    let after = out.read_package(Some(V56)).unwrap();
    // The package was laid out anew: its export data starts the .uexp as in Quinn.
    // (Offsets below are Quinn's, whose header is 3274 bytes; this header may be shorter.)
    let at = |o: usize| o - 3274 + files.header.len();
    let headers_with_value: [&[u8]; 2] = [
        &[0x80, 0x2b, 0x00, 0x1c, 0x00, 0x00],
        &[0x80, 0x2b, 0x02, 0x1c, 0x00, 0x00],
    ];
    let mut edits: Vec<(usize, usize, Vec<u8>)> = vec![
        (at(3292), 6, headers_with_value[0].to_vec()),
        (at(3314), 0, vec![2, 0, 0, 0, 1, 0]),
        (at(3422), 6, headers_with_value[1].to_vec()),
        (at(3440), 0, vec![2, 0, 0, 0, 0, 1]),
        // LOD 2: the carrier gives no flags, so only the numbering changes.
        (
            at(3553),
            6,
            vec![0x80, 0x06, 0x81, 0x23, 0x02, 0x0e, 0x00, 0x00],
        ),
    ];
    edits.push((at(MATERIALS_AT + 4 + 44), 0, container(&built.tags[0])));
    edits.push((at(MATERIALS_AT + 4 + 88), 0, container(&built.tags[1])));
    // The header grew by the new import names; the .uexp only by the edits.
    assert_eq!(out.uexp, edited(&files.uexp, files.header.len(), &edits));
    // The carrier's imports now name the engine's AssetUserData.
    let n = before.imports.len();
    assert_eq!(after.import_path(n - 3).unwrap(), "/Script/Engine");
    assert_eq!(
        after.import_path(n - 2).unwrap(),
        "/Script/Engine.AssetUserData"
    );
    assert_eq!(
        after.import_path(n - 1).unwrap(),
        "/Script/Engine.Default__AssetUserData"
    );
    assert_eq!(
        after.name(after.imports[n - 1].class_name).unwrap(),
        "AssetUserData"
    );
    assert_eq!(report.header.len(), 3, "{report:#?}");
    // Only those three imports changed.
    for i in 0..n - 3 {
        assert_eq!(
            after.import_path(i).unwrap(),
            before.import_path(i).unwrap()
        );
    }
    // The carrier export itself moved with the mesh's growth and kept its bytes.
    assert_eq!(
        out.export_data(&after, 1).unwrap(),
        files.export_data(&before, 1).unwrap()
    );
    // In the Zen package the carrier's class is the engine's AssetUserData script import.
    let zen =
        zenpak::zen::convert(&out, &after, V56, "/Game/Characters/SKM_Quinn_Carrier").unwrap();
    let class = zen.package.exports[1].class_index;
    assert_eq!(
        class,
        PackageObjectIndex::script_import(zenpak::hash::object_path_hash(
            "/Script/Engine.AssetUserData"
        ))
    );
}

#[test]
fn a_carrier_without_its_schema_is_refused_and_can_be_turned_off() {
    let Some(built) = build() else { return };
    let (_, stock) = quinn().unwrap();
    let game = game_mappings(&stock);
    let mut copy = built.files.clone();
    let e = Profile::from_name("marvel-rivals")
        .unwrap()
        .apply_with(&mut copy, V56, Some(&game), &ProfileOptions::default())
        .unwrap_err();
    assert!(e.to_string().contains("MaterialTagAssetUserData"), "{e}");
    assert!(e.hint().unwrap().contains("carrier = false"), "{e}");
    assert_eq!(copy.uexp, built.files.uexp);
    // carrier = false: empty containers, imports untouched.
    let o = options(|s| s.carrier = false);
    let mut out = built.files.clone();
    let report = Profile::from_name("marvel-rivals")
        .unwrap()
        .apply_with(&mut out, V56, Some(&game), &o)
        .unwrap();
    assert!(report.header.is_empty());
    let after = out.read_package(Some(V56)).unwrap();
    let n = after.imports.len();
    assert_eq!(
        after.import_path(n - 2).unwrap(),
        "/Script/MaterialTagPlugin.MaterialTagAssetUserData"
    );
    assert!(report.exports.iter().any(|f| matches!(
        f.what,
        zenpak::fixups::Change::TagContainers { tags: 0, .. }
    )));
}
