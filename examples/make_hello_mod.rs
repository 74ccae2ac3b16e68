//! Writes the cooked content of `examples/hello-mod` with zenpak's own
//! legacy package writer, the way the Unreal Editor's cooker would for a
//! UE 5.6 game called `HelloGame`:
//!
//! - `/Game/HelloMod/ST_HelloMod`: a `StringTable` (namespace `HelloMod`,
//!   three entries, one with metadata);
//! - `/Game/HelloMod/DA_HelloModSettings`: a `HelloModSettings` data asset
//!   (a class of the game's `/Script/HelloGame` module) whose `Texts`
//!   property points at the string table, so the mod has a package import;
//! - `Config/DefaultHelloMod.ini`: a loose file for the companion pak.
//!
//! The packages are unversioned (file versions 0, as game cooks write them)
//! with tagged properties, so they describe themselves without the game's
//! mappings. Output is deterministic: running this twice gives the same bytes.
//!
//! ```sh
//! cargo run --example make_hello_mod            # writes examples/hello-mod/Cooked
//! cargo run --example make_hello_mod -- DIR     # writes DIR instead
//! ```

use std::path::{Path, PathBuf};

use zenpak::binary::Writer;
use zenpak::legacy::{
    FName, LegacyPackage, NameEntry, ObjectExport, ObjectImport, PackageIndex,
    PKG_REQUIRES_LOCALIZATION_GATHER, PKG_UNVERSIONED_PROPERTIES,
};
use zenpak::{EngineVersion, Error, Result};

/// The release the content is cooked for (`[game] engine` in mod.toml).
pub const ENGINE: EngineVersion = EngineVersion::UE5_6;
/// The game's project folder (`[game] project` in mod.toml).
pub const PROJECT: &str = "HelloGame";

const STRING_TABLE: &str = "/Game/HelloMod/ST_HelloMod";
const SETTINGS: &str = "/Game/HelloMod/DA_HelloModSettings";

/// `RF_Public | RF_Standalone | RF_Transactional`: the flags of an asset's main object.
const ASSET_OBJECT_FLAGS: u32 = 0x0000_000B;
/// `FPropertyTag` flag: a bool property's value is true (5.4+ tags).
const TAG_BOOL_TRUE: u8 = 0x10;

/// The mod's files, relative to the content root (`Cooked/`), in a fixed order.
pub fn generate() -> Result<Vec<(PathBuf, Vec<u8>)>> {
    let mut files = Vec::new();
    for (package_name, (uasset, uexp)) in [(STRING_TABLE, string_table()?), (SETTINGS, settings()?)]
    {
        let relative = package_name
            .strip_prefix("/Game/")
            .expect("a /Game/ package");
        let stem = format!("{PROJECT}/Content/{relative}");
        files.push((PathBuf::from(format!("{stem}.uasset")), uasset));
        files.push((PathBuf::from(format!("{stem}.uexp")), uexp));
    }
    files.push((
        PathBuf::from(format!("{PROJECT}/Config/DefaultHelloMod.ini")),
        b"[/Script/HelloGame.HelloModSettings]\nSettingsAsset=/Game/HelloMod/DA_HelloModSettings.DA_HelloModSettings\n"
            .to_vec(),
    ));
    Ok(files)
}

/// Writes [`generate`]'s files under `root`.
pub fn write_to(root: &Path) -> Result<()> {
    for (relative, bytes) in generate()? {
        let path = root.join(relative);
        let dir = path.parent().expect("files are in folders");
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        std::fs::write(&path, bytes).map_err(|e| Error::io(&path, e))?;
    }
    Ok(())
}

/// `ST_HelloMod`: a `UStringTable`. Its export data is the (empty) property
/// block, the object's "has GUID" flag, then `FStringTable`: the namespace,
/// the key → source string map and the key → (metadata id → text) map.
fn string_table() -> Result<(Vec<u8>, Vec<u8>)> {
    let mut draft = Draft::new(STRING_TABLE);
    let engine = draft.import(
        "/Script/CoreUObject",
        "Package",
        PackageIndex::NULL,
        "/Script/Engine",
    );
    let class = draft.import("/Script/CoreUObject", "Class", engine, "StringTable");
    let template = draft.import(
        "/Script/Engine",
        "StringTable",
        engine,
        "Default__StringTable",
    );

    let entries = [
        ("Farewell", "See you next time, {PlayerName}."),
        ("Greeting", "Hello from HelloMod!"),
        ("Tip", "Press H to say hello."),
    ];
    let mut w = Writer::new();
    let properties_end = draft.tagged_properties(&mut w, &[]);
    w.bool32(false); // no object GUID
    w.fstring("HelloMod");
    w.i32(entries.len() as i32);
    for (key, text) in entries {
        w.fstring(key);
        w.fstring(text);
    }
    w.i32(1); // keys with metadata
    w.fstring("Greeting");
    w.i32(1);
    draft.name("Comment").write(&mut w);
    w.fstring("Shown once when the mod loads.");

    draft.export(ExportSpec {
        object_name: "ST_HelloMod",
        class,
        template,
        serialize_before_create: vec![class, template],
        create_before_serialize: vec![],
        data: w.into_inner(),
        properties_end,
    });
    draft.package.summary.package_flags |= PKG_REQUIRES_LOCALIZATION_GATHER;
    draft.finish()
}

/// `DA_HelloModSettings`: an object of the game's `HelloModSettings` class
/// with tagged properties; `Texts` refers to the string table (an import
/// of `/Game/HelloMod/ST_HelloMod`, created before this object is serialized).
fn settings() -> Result<(Vec<u8>, Vec<u8>)> {
    let mut draft = Draft::new(SETTINGS);
    let game = draft.import(
        "/Script/CoreUObject",
        "Package",
        PackageIndex::NULL,
        "/Script/HelloGame",
    );
    let class = draft.import("/Script/CoreUObject", "Class", game, "HelloModSettings");
    let template = draft.import(
        "/Script/HelloGame",
        "HelloModSettings",
        game,
        "Default__HelloModSettings",
    );
    let table_package = draft.import(
        "/Script/CoreUObject",
        "Package",
        PackageIndex::NULL,
        STRING_TABLE,
    );
    let table = draft.import(
        "/Script/Engine",
        "StringTable",
        table_package,
        "ST_HelloMod",
    );

    let mut w = Writer::new();
    let properties_end = draft.tagged_properties(
        &mut w,
        &[
            (
                "Texts",
                Value::Object(table, ["StringTable", "/Script/Engine"]),
            ),
            ("GreetingKey", Value::Str("Greeting")),
            ("GreetingDelaySeconds", Value::Float(2.5)),
            ("bShowOnStartup", Value::Bool(true)),
        ],
    );
    w.bool32(false); // no object GUID

    draft.export(ExportSpec {
        object_name: "DA_HelloModSettings",
        class,
        template,
        serialize_before_create: vec![class, template],
        create_before_serialize: vec![table],
        data: w.into_inner(),
        properties_end,
    });
    draft.finish()
}

/// A property value of the kinds this example uses.
enum Value<'a> {
    /// An object reference and its class path as type parameters
    /// (`StringTable` in `/Script/Engine`).
    Object(PackageIndex, [&'a str; 2]),
    Str(&'a str),
    Float(f32),
    Bool(bool),
}

/// One export: its object, class, template, preload dependencies and data.
struct ExportSpec {
    object_name: &'static str,
    class: PackageIndex,
    template: PackageIndex,
    serialize_before_create: Vec<PackageIndex>,
    create_before_serialize: Vec<PackageIndex>,
    data: Vec<u8>,
    /// Where the tagged property block ends in `data`.
    properties_end: usize,
}

/// An import declared before its names are added (see [`Draft::finish`]).
struct ImportSpec {
    class_package: &'static str,
    class_name: &'static str,
    outer: PackageIndex,
    object_name: &'static str,
}

/// A package being put together. Names used by the export data come first
/// in the name map and are counted in the summary
/// (`NamesReferencedFromExportData`): the Zen package keeps only those, so
/// the export data's name indices stay valid after conversion. Header-only
/// names (imports, export names) are added by [`finish`](Self::finish).
struct Draft {
    package: LegacyPackage,
    imports: Vec<ImportSpec>,
    exports: Vec<ExportSpec>,
}

impl Draft {
    fn new(package_name: &str) -> Self {
        let mut package = LegacyPackage::new_cooked(ENGINE, Some(package_name));
        // The export data below is written with property tags, not unversioned.
        package.summary.package_flags &= !PKG_UNVERSIONED_PROPERTIES;
        Draft {
            package,
            imports: Vec::new(),
            exports: Vec::new(),
        }
    }

    /// `text`'s entry in the name map, added on first use.
    fn name(&mut self, text: &str) -> FName {
        let names = &mut self.package.names;
        let index = match names.iter().position(|n| n.text == text) {
            Some(i) => i,
            None => {
                names.push(NameEntry::new(text));
                names.len() - 1
            }
        };
        FName::new(index as u32, 0)
    }

    fn import(
        &mut self,
        class_package: &'static str,
        class_name: &'static str,
        outer: PackageIndex,
        object_name: &'static str,
    ) -> PackageIndex {
        self.imports.push(ImportSpec {
            class_package,
            class_name,
            outer,
            object_name,
        });
        PackageIndex::from_import(self.imports.len() - 1)
    }

    fn export(&mut self, spec: ExportSpec) {
        self.exports.push(spec);
    }

    /// Writes a 5.4+ tagged property block: the class serialization control
    /// byte (0: no override information), one `FPropertyTag` + value per
    /// property (name, type name tree, size, flags), then `None`. Returns
    /// where the block ends.
    fn tagged_properties(&mut self, w: &mut Writer, properties: &[(&str, Value)]) -> usize {
        w.u8(0);
        for (name, value) in properties {
            let (type_tree, payload, flags) = match value {
                Value::Object(index, [class, class_package]) => {
                    let mut v = Writer::new();
                    index.write(&mut v);
                    (
                        vec![("ObjectProperty", 1), (*class, 1), (*class_package, 0)],
                        v.into_inner(),
                        0,
                    )
                }
                Value::Str(text) => {
                    let mut v = Writer::new();
                    v.fstring(text);
                    (vec![("StrProperty", 0)], v.into_inner(), 0)
                }
                Value::Float(x) => (vec![("FloatProperty", 0)], x.to_le_bytes().to_vec(), 0),
                // A bool's value is in the tag's flags; it has no payload.
                Value::Bool(b) => (
                    vec![("BoolProperty", 0)],
                    Vec::new(),
                    if *b { TAG_BOOL_TRUE } else { 0 },
                ),
            };
            self.name(name).write(w);
            for (node, inner_count) in type_tree {
                self.name(node).write(w);
                w.i32(inner_count);
            }
            w.i32(payload.len() as i32);
            w.u8(flags);
            w.bytes(&payload);
        }
        self.name("None").write(w);
        w.pos()
    }

    /// Adds the header-only names and tables, then lays the package out.
    fn finish(mut self) -> Result<(Vec<u8>, Vec<u8>)> {
        let referenced = self.package.names.len() as i32;
        self.package.summary.names_referenced_from_export_data_count = Some(referenced);
        for spec in std::mem::take(&mut self.imports) {
            let import = ObjectImport {
                class_package: self.name(spec.class_package),
                class_name: self.name(spec.class_name),
                outer_index: spec.outer,
                object_name: self.name(spec.object_name),
                package_name: None,
                import_optional: Some(false),
            };
            self.package.imports.push(import);
        }
        let mut export_data = Vec::new();
        for spec in std::mem::take(&mut self.exports) {
            let first_dependency = self.package.preload_dependencies.len() as i32;
            self.package
                .preload_dependencies
                .extend(&spec.create_before_serialize);
            self.package
                .preload_dependencies
                .extend(&spec.serialize_before_create);
            let export = ObjectExport {
                class_index: spec.class,
                super_index: PackageIndex::NULL,
                template_index: spec.template,
                outer_index: PackageIndex::NULL,
                object_name: self.name(spec.object_name),
                object_flags: ASSET_OBJECT_FLAGS,
                serial_size: 0,   // set by write_cooked
                serial_offset: 0, // set by write_cooked
                forced_export: false,
                not_for_client: false,
                not_for_server: false,
                package_guid: None,
                is_inherited_instance: Some(false),
                package_flags: 0,
                not_always_loaded_for_editor_game: false,
                is_asset: true,
                generate_public_hash: Some(false),
                // The engine stores the four lists back to back in this order:
                // serialize-before-serialize, create-before-serialize,
                // serialize-before-create, create-before-create.
                first_export_dependency: first_dependency,
                serialization_before_serialization_dependencies: 0,
                create_before_serialization_dependencies: spec.create_before_serialize.len() as i32,
                serialization_before_create_dependencies: spec.serialize_before_create.len() as i32,
                create_before_create_dependencies: 0,
                // Tagged properties: where the property block lies in the export.
                script_serialization_start_offset: Some(0),
                script_serialization_end_offset: Some(spec.properties_end as i64),
            };
            self.package.exports.push(export);
            export_data.push(spec.data);
        }
        self.package.write_cooked(&export_data)
    }
}

fn main() {
    let root = std::env::args_os()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/hello-mod/Cooked"));
    if let Err(e) = write_to(&root) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
    println!("wrote the HelloMod content under {}", root.display());
}
