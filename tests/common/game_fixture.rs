//! A game install folder as a game ships one, built in a temporary folder
//! from the shared corpus (read in place; only copies go into the temporary
//! folder). Every test of issue 26 (`doctor`, `check --game-dir`,
//! `conflicts`) uses it:
//!
//! ```text
//! <root>/Game/Content/Paks/
//!   global.utoc/.ucas                 retoc-written, UE5.3 ScriptObjects chunk (peers/retoc/UE5.3-global)
//!   pakchunk0-Windows.{pak,utoc,ucas} `zenpak build` of retoc/UE5.6's three packages; TOC flagged Signed
//!   pakchunk1-Windows.{pak,utoc,ucas} `zenpak build` of uassetapi/TestUE5_6 packages, AES-encrypted (key below)
//!   pakchunk2-Windows.{pak,utoc,ucas} one chunk whose block is a real Oodle stream (oodle/sample.bundle)
//!   pakchunk3-Windows.pak             UnrealPak-written v11 pak, zlib (paks/unrealpak), pak-only
//!   pakchunk{0,1,2,3}-Windows.sig     beside each pak, as a signed game ships them
//!   ~mods/RetocMod_P.{pak,utoc,ucas}  retoc-written mod (peers/retoc/UE5.6-to-zen)
//!   ~mods/ZenMod_P.{pak,utoc,ucas}    `zenpak build` of retoc/UE5.6 SM_Cube: overrides the same package
//! ```
//!
//! The engine is 5.6 (TOC version 8, container header
//! `SoftPackageReferencesOffset`). What is not real: the `.sig` files and
//! the Signed TOC's signature section hold placeholder bytes (no tool here
//! signs, and nothing reads signatures), which is all a reader of the
//! folder's layout and flags can tell apart.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use zenpak::iostore::chunk::ChunkType;
use zenpak::iostore::toc::{container_flags, meta_flags, Toc};
use zenpak::iostore::{ContainerBuilder, ContainerOptions};
use zenpak::EngineVersion;

/// The AES key of the encrypted base container (hex, 64 digits).
pub const FIXTURE_AES_KEY: &str =
    "4A5B6C7D8E9F0A1B2C3D4E5F60718293A4B5C6D7E8F90A1B2C3D4E5F60718293";

/// The package both installed mods override (and the base game provides).
pub const OVERRIDDEN_PACKAGE: &str = "/Game/LevelPrototyping/Meshes/SM_Cube";

/// One container or pak of the fixture.
#[derive(Debug, Clone)]
pub struct FixtureSource {
    /// File stem (`pakchunk0-Windows`, `RetocMod_P`).
    pub stem: String,
    /// The `.pak` (every source has one; containers have `.utoc`/`.ucas` beside it).
    pub pak: PathBuf,
    /// Package names it provides (`/Game/...`), empty for a pak-only source.
    pub packages: Vec<String>,
}

impl FixtureSource {
    pub fn utoc(&self) -> PathBuf {
        self.pak.with_extension("utoc")
    }
}

/// A built game folder; the temporary folder lives as long as this value.
pub struct GameFixture {
    _dir: super::TestDir,
    /// The install folder (holding `Game/Content/Paks`).
    pub root: PathBuf,
    /// The project folder's name (`Game`, as the retoc mod's mount point `../../../Game/` wants).
    pub project: String,
    /// `<root>/Game/Content/Paks`.
    pub paks: PathBuf,
    /// `<paks>/~mods`.
    pub mods: PathBuf,
    /// `<paks>/LogicMods` (not created).
    pub logic_mods: PathBuf,
    /// The engine release the game's files are written for.
    pub engine: EngineVersion,
    /// AES key (hex) of [`encrypted`](Self::encrypted); key GUID all zero (the game's default key).
    pub aes_key: String,
    /// Key GUID of the encrypted container, as doctor prints GUIDs (32 hex digits).
    pub aes_key_guid: String,
    /// `global.utoc` (script objects).
    pub global: PathBuf,
    /// Base game, signed (`Signed` TOC flag, `.sig`).
    pub base: FixtureSource,
    /// Base game, AES-encrypted with [`aes_key`](Self::aes_key).
    pub encrypted: FixtureSource,
    /// Base game, one chunk in one Oodle block of 256 KiB (`oodle_block_size`).
    pub oodle: FixtureSource,
    /// The Oodle container's block size.
    pub oodle_block_size: u32,
    /// Base game, UnrealPak pak v11 with zlib entries, no container.
    pub engine_pak: FixtureSource,
    /// Installed mods in `~mods`: the retoc-written one first, then the zenpak-built one.
    pub installed: Vec<FixtureSource>,
    /// The corpus folder.
    pub corpus: PathBuf,
}

/// A mod repository's `mod.toml` for `zenpak build`.
fn manifest(name: &str, suffix: &str, compression: &str, encrypt: bool) -> String {
    format!(
        "[mod]\nname = \"{name}\"\nversion = \"1.0\"\n\n[game]\nengine = \"5.6\"\nproject = \"Game\"\n\n\
         [content]\nroot = \"Cooked\"\n\n[output]\ndir = \"out\"\nsuffix = \"{suffix}\"\n\
         compression = \"{compression}\"\nencrypt = {encrypt}\n"
    )
}

/// The retoc/UE5.6 packages at their cooked paths (as the retoc mod has them).
const UE56_PACKAGES: [(&str, &str); 3] = [
    ("SM_Cube", "LevelPrototyping/Meshes"),
    ("T_Quinn_01_D", "Characters/Mannequins/Textures/Quinn"),
    ("BP_ThirdPersonCharacter", "ThirdPerson/Blueprints"),
];

/// The uassetapi/TestUE5_6 packages of the encrypted container.
const ENCRYPTED_PACKAGES: [(&str, &str); 3] = [
    ("M_Mannequin", "Characters/Mannequins/Materials"),
    ("MI_Quinn_01", "Characters/Mannequins/Materials/Quinn"),
    ("SKM_Quinn_Simple", "Characters/Mannequins/Meshes"),
];

/// Copies `<from>/<name>.{uasset,uexp,ubulk}` to `<cooked>/Game/Content/<folder>/`.
fn place(from: &Path, cooked: &Path, name: &str, folder: &str) -> String {
    let to = cooked.join("Game/Content").join(folder);
    std::fs::create_dir_all(&to).unwrap();
    for ext in ["uasset", "uexp", "ubulk"] {
        let src = from.join(format!("{name}.{ext}"));
        if src.is_file() {
            std::fs::copy(&src, to.join(format!("{name}.{ext}"))).unwrap();
        }
    }
    format!("/Game/{folder}/{name}")
}

/// Builds a mod repository at `repo` with the real binary; returns the
/// triplet's `.pak` in `repo/out`.
pub fn zenpak_build(repo: &Path, manifest_text: &str, key: Option<&str>) -> PathBuf {
    std::fs::write(repo.join("mod.toml"), manifest_text).unwrap();
    let mut command = super::command(Some(repo), &["build", "--color", "never"]);
    if let Some(key) = key {
        command.env("ZENPAK_AES_KEY", key);
    }
    super::run_command(&mut command).ok();
    let pak = std::fs::read_dir(repo.join("out"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "pak"))
        .expect("the build wrote a .pak");
    pak
}

/// Moves the triplet of `pak` to `dir/<stem>.{pak,utoc,ucas}`; returns the new `.pak`.
fn move_triplet(pak: &Path, dir: &Path, stem: &str) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    for ext in ["pak", "utoc", "ucas"] {
        let from = pak.with_extension(ext);
        if from.is_file() {
            std::fs::rename(&from, dir.join(format!("{stem}.{ext}"))).unwrap();
        }
    }
    dir.join(format!("{stem}.pak"))
}

/// Sets the TOC's `Signed` flag and inserts a signature section (hash size,
/// TOC and block signatures, one SHA-1 per block) as the engine lays it
/// out; the bytes are placeholders, not a signature.
fn mark_signed(utoc: &Path) {
    let mut toc = Toc::read_file(utoc).unwrap();
    toc.header.container_flags |= container_flags::SIGNED;
    let bytes = toc.write();
    let tail = toc.directory_index.len()
        * usize::from(toc.header.container_flags & container_flags::INDEXED != 0)
        + toc.metas.len() * toc.header.version.meta_size();
    let at = bytes.len() - tail;
    let hash_size = 256i32;
    let mut signed = bytes[..at].to_vec();
    signed.extend_from_slice(&hash_size.to_le_bytes());
    signed.extend(std::iter::repeat_n(0x5A, 2 * hash_size as usize));
    signed.extend(std::iter::repeat_n(0xA5, 20 * toc.blocks.len()));
    signed.extend_from_slice(&bytes[at..]);
    std::fs::write(utoc, signed).unwrap();
}

/// The Oodle container: a zenpak-written container (block size 256 KiB)
/// holding one bulk chunk of `oodle/sample.raw`, whose single block is then
/// replaced by the Oodle stream `oodle/sample.bundle` (its 8-byte size
/// prefix removed), with method `Oodle` added to the method table. The
/// `.ucas` is rewritten block by block, each block 16-aligned.
fn oodle_container(corpus: &Path, paks: &Path, stem: &str, block_size: u32) -> PathBuf {
    let raw = std::fs::read(corpus.join("oodle/sample.raw")).unwrap();
    let bundle = std::fs::read(corpus.join("oodle/sample.bundle")).unwrap();
    let stream = &bundle[8..];
    assert_eq!(raw.len() as u32, block_size, "sample.raw is one block");
    let options = ContainerOptions {
        block_size,
        ..ContainerOptions::default()
    };
    let mut b = ContainerBuilder::create(paks, stem, EngineVersion::UE5_6, options).unwrap();
    b.add_bulk_chunk(
        zenpak::hash::package_id("/Game/Oodle/Sample"),
        ChunkType::BulkData,
        0,
        &raw,
        "Game/Content/Oodle/Sample.ubulk",
    )
    .unwrap();
    let written = b.finish().unwrap();
    let mut toc = Toc::read_file(&written.utoc).unwrap();
    let old = std::fs::read(&written.ucas).unwrap();
    toc.compression_methods.push("Oodle".into());
    toc.header.compression_method_name_count = toc.compression_methods.len() as u32;
    let oodle_index = toc.compression_methods.len() as u8;
    let target = toc
        .blocks
        .iter()
        .position(|bl| bl.uncompressed_size == block_size && bl.method_index == 0)
        .expect("the sample chunk's block");
    let mut ucas = Vec::new();
    for (i, block) in toc.blocks.iter_mut().enumerate() {
        let data: &[u8] = if i == target {
            block.method_index = oodle_index;
            block.compressed_size = stream.len() as u32;
            stream
        } else {
            let start = block.offset as usize;
            &old[start..start + block.compressed_size as usize]
        };
        block.offset = ucas.len() as u64;
        ucas.extend_from_slice(data);
        ucas.resize(ucas.len().next_multiple_of(16), 0);
    }
    for meta in &mut toc.metas {
        meta.flags |= meta_flags::COMPRESSED;
    }
    toc.header.container_flags |= container_flags::COMPRESSED;
    std::fs::write(&written.ucas, ucas).unwrap();
    std::fs::write(&written.utoc, toc.write()).unwrap();
    written.pak
}

impl GameFixture {
    /// Builds the game folder; `None` (after saying so) without the corpus.
    pub fn build(name: &str) -> Option<GameFixture> {
        let corpus = super::corpus()?;
        let dir = super::temp_dir(name);
        let root = dir.as_ref().join("Install");
        let project = "Game".to_string();
        let paks = root.join(&project).join("Content/Paks");
        let mods = paks.join("~mods");
        std::fs::create_dir_all(&mods).unwrap();
        std::fs::create_dir_all(root.join("Engine/Binaries")).unwrap();
        let work = dir.as_ref().join("work");

        // Global container, as retoc writes one.
        for ext in ["utoc", "ucas"] {
            std::fs::copy(
                corpus.join(format!("peers/retoc/UE5.3-global/global.{ext}")),
                paks.join(format!("global.{ext}")),
            )
            .unwrap();
        }

        // pakchunk0: the UE5.6 packages, signed.
        let repo = work.join("base");
        let ue56 = corpus.join("retoc/UE5.6");
        let packages: Vec<String> = UE56_PACKAGES
            .iter()
            .map(|(n, f)| place(&ue56, &repo.join("Cooked"), n, f))
            .collect();
        let built = zenpak_build(
            &repo,
            &manifest("pakchunk0-Windows", "", "zlib", false),
            None,
        );
        let base_pak = move_triplet(&built, &paks, "pakchunk0-Windows");
        mark_signed(&base_pak.with_extension("utoc"));
        let base = FixtureSource {
            stem: "pakchunk0-Windows".into(),
            pak: base_pak,
            packages,
        };

        // pakchunk1: encrypted.
        let repo = work.join("encrypted");
        let from = corpus.join("uassetapi/TestUE5_6/BpThirdPerson");
        let packages: Vec<String> = ENCRYPTED_PACKAGES
            .iter()
            .map(|(n, f)| place(&from, &repo.join("Cooked"), n, f))
            .collect();
        let built = zenpak_build(
            &repo,
            &manifest("pakchunk1-Windows", "", "zlib", true),
            Some(FIXTURE_AES_KEY),
        );
        let encrypted = FixtureSource {
            stem: "pakchunk1-Windows".into(),
            pak: move_triplet(&built, &paks, "pakchunk1-Windows"),
            packages,
        };

        // pakchunk2: Oodle blocks.
        let oodle_block_size = 256 * 1024;
        let oodle = FixtureSource {
            stem: "pakchunk2-Windows".into(),
            pak: oodle_container(&corpus, &paks, "pakchunk2-Windows", oodle_block_size),
            packages: Vec::new(),
        };

        // pakchunk3: an UnrealPak v11 pak (zlib), no container.
        let engine_pak_path = paks.join("pakchunk3-Windows.pak");
        std::fs::copy(
            corpus.join("paks/unrealpak/packs/pack_v11_compress.pak"),
            &engine_pak_path,
        )
        .unwrap();
        let engine_pak = FixtureSource {
            stem: "pakchunk3-Windows".into(),
            pak: engine_pak_path,
            packages: Vec::new(),
        };
        for source in [&base, &encrypted, &oodle, &engine_pak] {
            std::fs::write(
                source.pak.with_extension("sig"),
                b"placeholder signature file",
            )
            .unwrap();
        }

        // ~mods: the retoc mod and a zenpak mod, both overriding SM_Cube.
        for ext in ["pak", "utoc", "ucas"] {
            std::fs::copy(
                corpus.join(format!("peers/retoc/UE5.6-to-zen/RetocMod_P.{ext}")),
                mods.join(format!("RetocMod_P.{ext}")),
            )
            .unwrap();
        }
        let retoc_mod = FixtureSource {
            stem: "RetocMod_P".into(),
            pak: mods.join("RetocMod_P.pak"),
            packages: UE56_PACKAGES
                .iter()
                .map(|(n, f)| format!("/Game/{f}/{n}"))
                .collect(),
        };
        let repo = work.join("zenmod");
        let (n, f) = UE56_PACKAGES[0];
        let packages = vec![place(&ue56, &repo.join("Cooked"), n, f)];
        let built = zenpak_build(&repo, &manifest("ZenMod", "_P", "none", false), None);
        let zen_mod = FixtureSource {
            stem: "ZenMod_P".into(),
            pak: move_triplet(&built, &mods, "ZenMod_P"),
            packages,
        };
        assert!(zen_mod.packages.iter().any(|p| p == OVERRIDDEN_PACKAGE));

        Some(GameFixture {
            _dir: dir,
            logic_mods: paks.join("LogicMods"),
            root,
            project,
            global: paks.join("global.utoc"),
            paks,
            mods,
            engine: EngineVersion::UE5_6,
            aes_key: FIXTURE_AES_KEY.to_string(),
            aes_key_guid: "0".repeat(32),
            base,
            encrypted,
            oodle,
            oodle_block_size,
            engine_pak,
            installed: vec![retoc_mod, zen_mod],
            corpus,
        })
    }

    /// The temporary folder holding the install folder and scratch space.
    pub fn temp(&self) -> &Path {
        self.root.parent().unwrap()
    }

    /// Renames installed mod `index`'s files to `new_stem` (e.g. a higher
    /// `_N_P`), keeping them in `~mods`.
    pub fn rename_mod(&mut self, index: usize, new_stem: &str) {
        let source = &mut self.installed[index];
        let dir = source.pak.parent().unwrap().to_path_buf();
        source.pak = move_triplet(&source.pak, &dir, new_stem);
        source.stem = new_stem.to_string();
    }

    /// Installs a built mod (its `.pak`, with `.utoc`/`.ucas` beside it if
    /// any) into `~mods` (or `LogicMods` when `logic`) as `<stem>.*`.
    pub fn add_mod(&mut self, pak: &Path, stem: &str, packages: Vec<String>, logic: bool) {
        let dir = if logic { &self.logic_mods } else { &self.mods };
        std::fs::create_dir_all(dir).unwrap();
        for ext in ["pak", "utoc", "ucas"] {
            let from = pak.with_extension(ext);
            if from.is_file() {
                std::fs::copy(&from, dir.join(format!("{stem}.{ext}"))).unwrap();
            }
        }
        self.installed.push(FixtureSource {
            stem: stem.to_string(),
            pak: dir.join(format!("{stem}.pak")),
            packages,
        });
    }

    /// The base game's sources (global excluded), in the order above.
    pub fn base_sources(&self) -> [&FixtureSource; 4] {
        [&self.base, &self.encrypted, &self.oodle, &self.engine_pak]
    }

    /// A mod repository folder (empty) inside the temporary folder.
    pub fn mod_repo(&self, name: &str) -> PathBuf {
        let repo = self.temp().join("repos").join(name);
        std::fs::create_dir_all(&repo).unwrap();
        repo
    }

    /// Copies a retoc/UE5.6 legacy package (`SM_Cube`, `T_Quinn_01_D`,
    /// `BP_ThirdPersonCharacter`) into `<repo>/Cooked/Game/Content/<its folder>`;
    /// returns its package name.
    pub fn place_ue56_package(&self, repo: &Path, name: &str) -> String {
        let (n, f) = UE56_PACKAGES
            .iter()
            .find(|(n, _)| *n == name)
            .expect("a retoc/UE5.6 package");
        place(&self.corpus.join("retoc/UE5.6"), &repo.join("Cooked"), n, f)
    }

    /// A `mod.toml` text for a 5.6 mod of project `Game` named `name`.
    pub fn manifest_text(name: &str) -> String {
        manifest(name, "_P", "none", false)
    }
}
