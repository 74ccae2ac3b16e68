//! Classic test maps, built with zenpak's writer from object data encoded
//! here by hand in the engine's formats (tagged properties, state frames,
//! textures with lazy arrays, palettes, polys, models, levels), and an
//! independent walker over those formats that lists every object
//! reference a test map's object data holds.
#![allow(dead_code)]

use zenpak::classic::{
    CompactIndex, ExportEntry, Generation, Header, ImportEntry, Lineage, NameEntry, ObjectRef,
    Package, Target,
};

pub const RF_PUBLIC: u32 = 0x0000_0004;
pub const RF_STANDALONE: u32 = 0x0008_0000;
pub const RF_LOAD: u32 = 0x0007_0000;
pub const RF_HAS_STACK: u32 = 0x0200_0000;
/// Flags the editor gives assets in a package: public, standalone, loaded everywhere.
pub const ASSET: u32 = RF_PUBLIC | RF_STANDALONE | RF_LOAD;
/// Flags of actors in a map.
pub const ACTOR: u32 = RF_LOAD | RF_HAS_STACK | 1;

pub fn compact(value: i32) -> Vec<u8> {
    CompactIndex(value).to_bytes()
}

/// A package under construction.
pub struct Builder {
    pub version: u16,
    pub names: Vec<String>,
    pub imports: Vec<ImportEntry>,
    pub exports: Vec<ExportEntry>,
    pub data: Vec<Vec<u8>>,
    /// Lazy-array end positions to fill in once offsets are known: (export, at, target).
    lazy: Vec<(usize, usize, usize)>,
}

impl Builder {
    pub fn new(version: u16) -> Builder {
        let mut b = Builder {
            version,
            names: Vec::new(),
            imports: Vec::new(),
            exports: Vec::new(),
            data: Vec::new(),
            lazy: Vec::new(),
        };
        b.name("None");
        b
    }

    pub fn name(&mut self, text: &str) -> usize {
        match self.names.iter().position(|n| n.eq_ignore_ascii_case(text)) {
            Some(i) => i,
            None => {
                self.names.push(text.to_string());
                self.names.len() - 1
            }
        }
    }

    pub fn import(
        &mut self,
        class_package: &str,
        class: &str,
        outer: ObjectRef,
        name: &str,
    ) -> ObjectRef {
        let entry = ImportEntry {
            class_package: self.name(class_package),
            class_name: self.name(class),
            outer,
            object_name: self.name(name),
        };
        match self.imports.iter().position(|i| *i == entry) {
            Some(i) => ObjectRef::import(i),
            None => {
                self.imports.push(entry);
                ObjectRef::import(self.imports.len() - 1)
            }
        }
    }

    pub fn package_import(&mut self, name: &str) -> ObjectRef {
        self.import("Core", "Package", ObjectRef::NULL, name)
    }

    /// `Package.Class`, a class imported from `package`.
    pub fn class(&mut self, package: &str, class: &str) -> ObjectRef {
        let outer = self.package_import(package);
        self.import("Core", "Class", outer, class)
    }

    pub fn export(
        &mut self,
        class: ObjectRef,
        outer: ObjectRef,
        name: &str,
        flags: u32,
    ) -> ObjectRef {
        let object_name = self.name(name);
        self.exports.push(ExportEntry {
            class,
            super_field: ObjectRef::NULL,
            outer,
            object_name,
            flags,
            serial_size: 0,
            serial_offset: None,
        });
        self.data.push(Vec::new());
        ObjectRef::export(self.exports.len() - 1)
    }

    pub fn set_data(&mut self, export: ObjectRef, data: ObjectDataBuilder) {
        let Target::Export(i) = export.target() else {
            panic!("not an export")
        };
        for (at, target) in data.lazy {
            self.lazy.push((i, at, target));
        }
        self.data[i] = data.bytes;
    }

    fn package(&self, name: &str) -> Package {
        Package {
            name: name.to_string(),
            header: Header {
                version_word: self.version as u32,
                package_flags: 1,
                name_count: 0,
                name_offset: 0,
                export_count: 0,
                export_offset: 0,
                import_count: 0,
                import_offset: 0,
                lineage: Lineage::Generations {
                    guid: *b"zenpak test map\0",
                    generations: vec![Generation {
                        export_count: self.exports.len() as i32,
                        name_count: self.names.len() as i32,
                    }],
                },
            },
            names: self
                .names
                .iter()
                .map(|n| NameEntry {
                    name: n.clone(),
                    flags: 0x0007_0010,
                })
                .collect(),
            imports: self.imports.clone(),
            exports: self.exports.clone(),
            heritage: Vec::new(),
            file_size: 0,
        }
    }

    /// The package file: laid out by zenpak's writer, with every lazy
    /// array's end position set to where the array ends in the file.
    pub fn finish(&self, name: &str) -> Vec<u8> {
        let package = self.package(name);
        let first = package.to_bytes(&self.data).unwrap();
        let placed = Package::parse(&first, name).unwrap();
        let mut data = self.data.clone();
        for &(export, at, target) in &self.lazy {
            let offset = placed.exports[export].serial_offset.unwrap();
            data[export][at..at + 4].copy_from_slice(&(offset + target as i32).to_le_bytes());
        }
        let bytes = package.to_bytes(&data).unwrap();
        assert_eq!(bytes.len(), first.len());
        bytes
    }
}

/// The object data of one export, written in the engine's formats.
#[derive(Default)]
pub struct ObjectDataBuilder {
    pub bytes: Vec<u8>,
    lazy: Vec<(usize, usize)>,
}

impl ObjectDataBuilder {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn raw(mut self, bytes: &[u8]) -> Self {
        self.bytes.extend_from_slice(bytes);
        self
    }

    pub fn compact(self, value: i32) -> Self {
        self.raw(&compact(value))
    }

    pub fn reference(self, target: ObjectRef) -> Self {
        self.compact(target.0)
    }

    pub fn i32(self, value: i32) -> Self {
        self.raw(&value.to_le_bytes())
    }

    /// An execution state: node and state node (the class), probe mask,
    /// latent action, code offset (none).
    pub fn state_frame(self, class: ObjectRef) -> Self {
        self.reference(class)
            .reference(class)
            .raw(&[0; 12])
            .compact(-1)
    }

    /// A tagged property: `kind` is the engine's type number; the size code
    /// is chosen as the engine's save chooses it.
    pub fn property(
        self,
        b: &mut Builder,
        name: &str,
        kind: u8,
        struct_name: Option<&str>,
        value: &[u8],
    ) -> Self {
        let (code, field): (u8, Vec<u8>) = match value.len() {
            1 => (0, vec![]),
            2 => (1, vec![]),
            4 => (2, vec![]),
            12 => (3, vec![]),
            16 => (4, vec![]),
            n if n <= 255 => (5, vec![n as u8]),
            n => (6, (n as u16).to_le_bytes().to_vec()),
        };
        let mut out = self.compact(b.name(name) as i32).raw(&[kind | (code << 4)]);
        if let Some(s) = struct_name {
            out = out.compact(b.name(s) as i32);
        }
        out.raw(&field).raw(value)
    }

    pub fn object_property(self, b: &mut Builder, name: &str, target: ObjectRef) -> Self {
        self.property(b, name, 5, None, &compact(target.0))
    }

    /// A true bool property: no value, the array bit holds it.
    pub fn true_property(self, b: &mut Builder, name: &str) -> Self {
        let mut out = self.compact(b.name(name) as i32);
        out.bytes.extend_from_slice(&[3 | 0x50 | 0x80, 0]);
        out
    }

    pub fn none(self, b: &mut Builder) -> Self {
        self.compact(b.name("None") as i32)
    }

    /// A lazy array of bytes (file versions after 61): end position, count, bytes.
    pub fn lazy_bytes(mut self, bytes: &[u8]) -> Self {
        let at = self.bytes.len();
        self = self.i32(0).compact(bytes.len() as i32).raw(bytes);
        let target = self.bytes.len();
        self.lazy.push((at, target));
        self
    }
}

/// A texture's data: properties, then one 4x4 mipmap.
pub fn texture_data(
    b: &mut Builder,
    palette: ObjectRef,
    detail: Option<ObjectRef>,
) -> ObjectDataBuilder {
    let mut data = ObjectDataBuilder::new().object_property(b, "Palette", palette);
    if let Some(detail) = detail {
        data = data.object_property(b, "DetailTexture", detail);
    }
    data.property(b, "USize", 2, None, &4i32.to_le_bytes())
        .none(b)
        .compact(1)
        .lazy_bytes(&[7; 16])
        .i32(4)
        .i32(4)
        .raw(&[2, 2])
}

pub fn palette_data(b: &mut Builder) -> ObjectDataBuilder {
    ObjectDataBuilder::new().none(b).compact(4).raw(&[9; 16])
}

/// Reference kinds the walker reports, with what holds them.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Found {
    pub field: String,
    pub target: ObjectRef,
}

struct Walk<'a> {
    data: &'a [u8],
    pos: usize,
    found: Vec<Found>,
}

impl<'a> Walk<'a> {
    fn compact(&mut self) -> i32 {
        let (value, len) = CompactIndex::decode(&self.data[self.pos..]).unwrap();
        self.pos += len;
        value.0
    }
    fn reference(&mut self, field: &str) {
        let target = ObjectRef(self.compact());
        self.found.push(Found {
            field: field.to_string(),
            target,
        });
    }
    fn skip(&mut self, n: usize) {
        self.pos += n;
    }
    fn i32(&mut self) -> i32 {
        let v = i32::from_le_bytes(self.data[self.pos..self.pos + 4].try_into().unwrap());
        self.pos += 4;
        v
    }
}

/// Every object reference in export `index`'s data, for the shapes the
/// test maps use, with lazy-array end positions checked against `offset`.
pub fn walk(package: &Package, index: usize, data: &[u8]) -> Vec<Found> {
    let export = &package.exports[index];
    let offset = export.serial_offset.unwrap_or(0) as usize;
    let class = package.class_path(ObjectRef::export(index));
    let mut w = Walk {
        data,
        pos: 0,
        found: Vec::new(),
    };
    if data.is_empty() {
        return w.found;
    }
    if export.flags & RF_HAS_STACK != 0 {
        w.reference("state node");
        w.reference("state");
        w.skip(12);
        w.compact();
    }
    // Tagged properties.
    loop {
        let name = package.names[w.compact() as usize].name.clone();
        if name == "None" {
            break;
        }
        let info = data[w.pos];
        w.skip(1);
        let kind = info & 15;
        let struct_name = (kind == 10).then(|| package.names[w.compact() as usize].name.clone());
        let size = match (info >> 4) & 7 {
            0 => 1,
            1 => 2,
            2 => 4,
            3 => 12,
            4 => 16,
            5 => {
                w.skip(1);
                data[w.pos - 1] as usize
            }
            _ => panic!("size code"),
        };
        let start = w.pos;
        match (kind, struct_name.as_deref()) {
            (5, _) => w.reference(&name),
            (10, Some("PointRegion")) => {
                w.reference(&format!("{name}.Zone"));
                w.skip(5);
            }
            _ => w.skip(size),
        }
        assert_eq!(w.pos - start, size, "{class}: property {name}");
    }
    let lazy = |w: &mut Walk| {
        let end = w.i32() as usize;
        let n = w.compact() as usize;
        w.skip(n);
        assert_eq!(end, offset + w.pos, "{class}: lazy array end position");
    };
    match class.as_str() {
        "Engine.Texture" => {
            for _ in 0..w.compact() {
                lazy(&mut w);
                w.skip(10);
            }
        }
        "Engine.Palette" => {
            let n = w.compact() as usize;
            w.skip(4 * n);
        }
        "Engine.Polys" => {
            let n = w.i32();
            w.i32();
            for _ in 0..n {
                let vertices = w.compact() as usize;
                w.skip(48 + 12 * vertices + 4);
                w.reference("poly actor");
                w.reference("poly texture");
                for _ in 0..3 {
                    w.compact();
                }
                w.skip(4);
            }
        }
        "Engine.Model" => {
            w.skip(41);
            for _ in 0..3 {
                assert_eq!(
                    w.compact(),
                    0,
                    "test models have no vectors, points or nodes"
                );
            }
            for _ in 0..w.compact() {
                w.reference("surface texture");
                w.skip(4);
                for _ in 0..6 {
                    w.compact();
                }
                w.skip(4);
                w.reference("surface actor");
            }
            assert_eq!(w.compact(), 0);
            w.skip(4);
            for _ in 0..w.i32() {
                w.reference("zone actor");
                w.skip(16);
            }
            w.reference("polys");
            for _ in 0..5 {
                assert_eq!(w.compact(), 0, "test models have no lighting or leaves");
            }
            for _ in 0..w.compact() {
                w.reference("light");
            }
            w.skip(8);
        }
        "Engine.Level" => {
            let n = w.i32();
            w.i32();
            for _ in 0..n {
                w.reference("actor");
            }
            for _ in 0..4 {
                let len = w.compact() as usize;
                w.skip(len);
            }
            assert_eq!(w.compact(), 0);
            w.skip(8);
            w.reference("model");
            assert_eq!(w.compact(), 0);
            w.skip(4);
            w.reference("first deleted");
            for _ in 0..16 {
                w.reference("text block");
            }
            assert_eq!(w.compact(), 0);
        }
        _ => {}
    }
    assert_eq!(w.pos, data.len(), "{class}: data not walked to its end");
    w.found
}

/// The path of an object as other packages see it (exports without the
/// package's own name in front).
pub fn inner_path(package: &Package, target: ObjectRef) -> String {
    let path = package.path(target);
    match target.target() {
        Target::Export(_) => path
            .strip_prefix(&format!("{}.", package.name))
            .unwrap_or(&path)
            .to_string(),
        _ => path,
    }
}

/// The external texture package `MyTex`: `Walls.Brick` and `Sky` (public
/// textures), `Walls.BrickPal` (a palette).
pub fn external_package() -> Vec<u8> {
    external_package_with("Brick", ASSET, "Texture")
}

/// `MyTex` with its brick named, flagged and classed as given, to break it.
pub fn external_package_with(brick_name: &str, brick_flags: u32, brick_class: &str) -> Vec<u8> {
    let mut b = Builder::new(69);
    let texture = b.class("Engine", "Texture");
    let palette = b.class("Engine", "Palette");
    let package = b.class("Core", "Package");
    let brick_class = b.class("Engine", brick_class);
    let walls = b.export(package, ObjectRef::NULL, "Walls", RF_PUBLIC | RF_LOAD);
    let pal = b.export(palette, walls, "BrickPal", RF_LOAD);
    let brick = b.export(brick_class, walls, brick_name, brick_flags);
    let sky = b.export(texture, ObjectRef::NULL, "Sky", ASSET);
    let data = palette_data(&mut b);
    let empty = ObjectDataBuilder::new().none(&mut b);
    b.set_data(walls, empty);
    b.set_data(pal, data);
    let data = texture_data(&mut b, pal, None);
    b.set_data(brick, data);
    let data = texture_data(&mut b, pal, None);
    b.set_data(sky, data);
    b.finish("MyTex")
}

/// What a test map holds.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum MapKind {
    /// An embedded copy of `MyTex` (with its `Walls` group), referenced from
    /// properties, polys, a model's surface and another texture.
    Embedded,
    /// The same objects, imported from `OldTex` instead of embedded.
    ImportsOldTex,
    /// Nothing of `MyTex` at all.
    Plain,
}

/// How big a test map's tables are: they decide how many bytes compact
/// indices take, so whether re-pointed references grow or shrink.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Shape {
    /// Path nodes placed before the `MyTex` objects.
    pub path_nodes: usize,
    /// Imports of unused classes added before the map's own.
    pub padding_imports: usize,
}

impl Shape {
    /// 64 path nodes: references to the `MyTex` exports take two bytes,
    /// the imports replacing them one.
    pub const SHRINKING: Shape = Shape {
        path_nodes: 64,
        padding_imports: 0,
    };
    /// 70 extra imports and no path nodes: references to the `MyTex`
    /// exports take one byte, the imports replacing them two.
    pub const GROWING: Shape = Shape {
        path_nodes: 0,
        padding_imports: 70,
    };
}

/// A test map: a level with a level info, a light, 64 path nodes, a brush
/// model and its polys, the map's own screenshot texture and, depending on
/// `kind`, the `MyTex` objects.
pub fn test_map(kind: MapKind) -> Vec<u8> {
    test_map_with(kind, Shape::SHRINKING, |_| {})
}

/// A test map of the given shape to which `extra` adds exports of its own.
pub fn test_map_with(kind: MapKind, shape: Shape, extra: impl FnOnce(&mut Builder)) -> Vec<u8> {
    let mut b = Builder::new(69);
    for i in 0..shape.padding_imports {
        b.class("Engine", &format!("Unused{i}"));
    }
    let level_class = b.class("Engine", "Level");
    let info_class = b.class("Engine", "LevelInfo");
    let light_class = b.class("Engine", "Light");
    let node_class = b.class("Engine", "PathNode");
    let model_class = b.class("Engine", "Model");
    let polys_class = b.class("Engine", "Polys");
    let texture_class = b.class("Engine", "Texture");
    let palette_class = b.class("Engine", "Palette");
    let package_class = b.class("Core", "Package");

    let info = b.export(info_class, ObjectRef::NULL, "LevelInfo0", ACTOR);
    let light = b.export(light_class, ObjectRef::NULL, "Light0", ACTOR);
    let nodes: Vec<ObjectRef> = (0..shape.path_nodes)
        .map(|i| b.export(node_class, ObjectRef::NULL, &format!("PathNode{i}"), ACTOR))
        .collect();
    let (brick, sky) = match kind {
        MapKind::Embedded => {
            let mytex = b.export(package_class, ObjectRef::NULL, "MyTex", RF_PUBLIC | RF_LOAD);
            let walls = b.export(package_class, mytex, "Walls", RF_PUBLIC | RF_LOAD);
            let pal = b.export(palette_class, walls, "BrickPal", RF_LOAD);
            let brick = b.export(texture_class, walls, "Brick", ASSET);
            let sky = b.export(texture_class, mytex, "Sky", ASSET);
            let empty = ObjectDataBuilder::new().none(&mut b);
            b.set_data(mytex, empty);
            let empty = ObjectDataBuilder::new().none(&mut b);
            b.set_data(walls, empty);
            let data = palette_data(&mut b);
            b.set_data(pal, data);
            let data = texture_data(&mut b, pal, None);
            b.set_data(brick, data);
            let data = texture_data(&mut b, pal, None);
            b.set_data(sky, data);
            (Some(brick), Some(sky))
        }
        MapKind::ImportsOldTex => {
            let old = b.package_import("OldTex");
            let walls = b.import("Core", "Package", old, "Walls");
            let brick = b.import("Engine", "Texture", walls, "Brick");
            let sky = b.import("Engine", "Texture", old, "Sky");
            (Some(brick), Some(sky))
        }
        MapKind::Plain => (None, None),
    };
    let own_palette = b.export(palette_class, ObjectRef::NULL, "Palette5", RF_LOAD);
    let screenshot = b.export(texture_class, ObjectRef::NULL, "Screenshot", ASSET);
    let polys = b.export(polys_class, ObjectRef::NULL, "Polys0", RF_LOAD | 1);
    let model = b.export(model_class, ObjectRef::NULL, "Model0", RF_LOAD | 1);
    let level = b.export(level_class, ObjectRef::NULL, "MyLevel", RF_LOAD | 1);

    let data = ObjectDataBuilder::new()
        .state_frame(info_class)
        .object_property(&mut b, "Screenshot", screenshot)
        .property(&mut b, "Title", 13, None, b"\x05Test\0")
        .none(&mut b);
    b.set_data(info, data);
    let mut data = ObjectDataBuilder::new().state_frame(light_class);
    if let Some(brick) = brick {
        data = data.object_property(&mut b, "Skin", brick);
    }
    if let Some(sky) = sky {
        data = data.object_property(&mut b, "Texture", sky);
    }
    let region = ObjectDataBuilder::new()
        .reference(info)
        .i32(3)
        .raw(&[0])
        .bytes;
    let data = data
        .property(&mut b, "Region", 10, Some("PointRegion"), &region)
        .property(&mut b, "Location", 10, Some("Vector"), &[0; 12])
        .true_property(&mut b, "bStatic")
        .property(&mut b, "LightBrightness", 1, None, &[64])
        .none(&mut b);
    b.set_data(light, data);
    for &node in &nodes {
        let data = ObjectDataBuilder::new()
            .state_frame(node_class)
            .none(&mut b);
        b.set_data(node, data);
    }
    let data = palette_data(&mut b);
    b.set_data(own_palette, data);
    let data = texture_data(&mut b, own_palette, brick);
    b.set_data(screenshot, data);

    // Two polys: textured with the brick (or nothing) and the screenshot.
    let mut data = ObjectDataBuilder::new().none(&mut b).i32(2).i32(2);
    for texture in [brick.unwrap_or(ObjectRef::NULL), screenshot] {
        data = data
            .compact(3)
            .raw(&[0; 48 + 36 + 4])
            .reference(ObjectRef::NULL)
            .reference(texture)
            .compact(0)
            .compact(-1)
            .compact(0)
            .raw(&[0; 4]);
    }
    b.set_data(polys, data);

    // A model with one surface (textured with the sky) and one zone.
    let data = ObjectDataBuilder::new()
        .none(&mut b)
        .raw(&[0; 41])
        .compact(0)
        .compact(0)
        .compact(0)
        .compact(1)
        .reference(sky.unwrap_or(screenshot))
        .raw(&[0; 4])
        .raw(&[0; 6])
        .raw(&[0; 4])
        .reference(ObjectRef::NULL)
        .compact(0)
        .i32(0)
        .i32(1)
        .reference(info)
        .raw(&[0xff; 16])
        .reference(polys)
        .raw(&[0; 5])
        .compact(1)
        .reference(light)
        .raw(&[0; 8]);
    b.set_data(model, data);

    let actors: Vec<ObjectRef> = [info, light].into_iter().chain(nodes).collect();
    let mut data = ObjectDataBuilder::new()
        .none(&mut b)
        .i32(actors.len() as i32)
        .i32(actors.len() as i32);
    for actor in actors {
        data = data.reference(actor);
    }
    let data = data
        .raw(&compact(7))
        .raw(b"unreal\0")
        .compact(0)
        .compact(0)
        .compact(0)
        .compact(0)
        .i32(7777)
        .i32(1)
        .reference(model)
        .compact(0)
        .raw(&[0; 4])
        .reference(ObjectRef::NULL)
        .raw(&[0; 16])
        .compact(0);
    b.set_data(level, data);
    extra(&mut b);
    b.finish("DM-Test")
}
