//! `zenpak inspect FILE`: recognises the kind of file by its magic and
//! extension, then prints it (text, or JSON with `--json`).

use std::path::PathBuf;

use zenpak::sniff::FileKind;
use zenpak::{EngineVersion, Error, Result};

use super::{GlobalOptions, JsonStyle};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The file to inspect.
    pub path: PathBuf,
    /// Engine version the file was cooked with (needed for unversioned packages).
    #[arg(long)]
    pub engine: Option<EngineVersion>,
    /// Print stable JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// AES key for encrypted containers and paks.
    #[command(flatten)]
    pub key: super::key::KeyArgs,
    /// Mappings (.usmap) of the game: walks each export's property block.
    #[arg(long, value_name = "M.usmap")]
    pub mappings: Option<PathBuf>,
    /// With --mappings: also list the properties read (names, types, values).
    #[arg(long, requires = "mappings")]
    pub properties: bool,
    /// Show what a game profile would change in a legacy package (offsets before/after).
    #[arg(long, requires = "engine")]
    pub profile: Option<zenpak::fixups::Profile>,
}

pub fn run(args: Args, global: &GlobalOptions) -> Result<()> {
    if args.path.is_dir() {
        return inspect_folder(&args, JsonStyle::choose(global, args.json));
    }
    let kind = zenpak::sniff::sniff_file(&args.path)?;
    let json = JsonStyle::choose(global, args.json);
    match kind {
        FileKind::Toc => inspect_toc(&args, json),
        FileKind::Pak => inspect_pak(&args, json),
        FileKind::LegacyPackage if args.profile.is_some() => inspect_profile(&args, json),
        FileKind::LegacyPackage if args.mappings.is_some() => inspect_package_properties(&args),
        FileKind::LegacyPackage => inspect_legacy(&args, global),
        FileKind::ZenPackage => {
            super::inspect_zen::run(&args.path, args.engine, json.is_some(), global)
        }
        FileKind::ClassicPackage => super::inspect_classic::run(&args, global),
        FileKind::Mappings => inspect_mappings(&args),
    }
}

fn inspect_legacy(args: &Args, global: &GlobalOptions) -> Result<()> {
    let files = zenpak::legacy::PackageFiles::load(&args.path)?;
    let package = files.read_package(args.engine)?;
    files.check_exports(&package)?;
    let report =
        zenpak::legacy::PackageReport::new(&files, &package).map_err(|e| e.in_file(&args.path))?;
    if args.json {
        super::print_json(&report)
    } else {
        if !global.quiet {
            print!("{}", report.to_text());
        }
        Ok(())
    }
}

/// `.usmap` branch: counts (and with `--json` the same as an object).
fn inspect_mappings(args: &Args) -> Result<()> {
    let mappings = zenpak::mappings::Mappings::load(&args.path)?;
    let summary = mappings.summary();
    if args.json {
        return super::print_json(&summary);
    }
    for d in &summary.diagnostics {
        eprintln!("warning: {d}");
    }
    println!(
        "{}: .usmap mappings, version {}",
        args.path.display(),
        summary.version
    );
    println!("  compression: {:?}", summary.compression);
    match summary.package_versioning {
        Some((ue4, ue5)) => println!("  package versioning: UE4 {ue4}, UE5 {ue5}"),
        None => println!("  package versioning: none"),
    }
    println!("  names: {}", summary.names);
    println!("  enums: {}", summary.enums);
    println!("  structs: {}", summary.structs);
    println!("  serialized properties: {}", summary.properties);
    if !summary.extensions.is_empty() {
        println!("  extensions: {}", summary.extensions.join(", "));
    }
    Ok(())
}

/// The `.utoc` branch: TOC header, flags, chunks by type, container header.
fn inspect_toc(args: &Args, json: Option<JsonStyle>) -> Result<()> {
    let container = zenpak::iostore::Container::open_with_keys(&args.path, &args.key.keys()?)?;
    let summary = container.summary()?;
    if let Some(style) = json {
        return style.print(&summary);
    }
    println!("{}", args.path.display());
    println!("  TOC version:          {:?}", summary.toc_version);
    println!(
        "  container id:         {}{}",
        summary.container_id,
        if summary.container_id_matches_file_name {
            ""
        } else {
            "  (does NOT match the file name)"
        }
    );
    println!("  flags:                {}", summary.flags.join(", "));
    println!("  block size:           {}", summary.compression_block_size);
    println!(
        "  compression methods:  {}",
        if summary.compression_methods.is_empty() {
            "none".to_string()
        } else {
            summary.compression_methods.join(", ")
        }
    );
    println!(
        "  chunks / blocks:      {} / {}",
        summary.chunk_count, summary.block_count
    );
    println!(
        "  perfect hash seeds:   {} ({} overflow)",
        summary.perfect_hash_seeds, summary.chunks_without_perfect_hash
    );
    println!("  mount point:          {}", summary.mount_point);
    println!("  indexed files:        {}", summary.indexed_files);
    for (kind, n) in &summary.chunk_types {
        println!("    {kind:<22} {n}");
    }
    if let Some(h) = &summary.container_header {
        println!(
            "  container header:     {:?}, {} packages, {} localized, {} redirects",
            h.version, h.packages, h.localized_packages, h.package_redirects
        );
    }
    Ok(())
}

/// The `.pak` branch: footer, index and entries.
fn inspect_pak(args: &Args, json: Option<JsonStyle>) -> Result<()> {
    let pak = zenpak::pak::PakReader::open_with_keys(&args.path, &args.key.keys()?)?;
    if let Some(style) = json {
        #[derive(serde::Serialize)]
        struct PakSummary<'a> {
            version: String,
            mount_point: &'a str,
            encrypted_index: bool,
            compression_methods: &'a [String],
            entries: &'a [zenpak::pak::PakEntryInfo],
        }
        return style.print(&PakSummary {
            version: pak.version.to_string(),
            mount_point: &pak.mount_point,
            encrypted_index: pak.encrypted_index,
            compression_methods: &pak.compression_methods,
            entries: &pak.entries,
        });
    }
    println!("{}", args.path.display());
    println!("  pak version:      {}", pak.version);
    println!("  mount point:      {}", pak.mount_point);
    println!("  encrypted index:  {}", pak.encrypted_index);
    println!("  entries:          {}", pak.entries.len());
    for e in &pak.entries {
        println!(
            "    {:>10} {:>10} {:<5} {}{}",
            e.uncompressed_size,
            e.size,
            e.compression,
            e.path,
            if e.encrypted { "  (encrypted)" } else { "" }
        );
    }
    Ok(())
}

/// A game's `Paks` folder: the mounted sources in the engine's order.
fn inspect_folder(args: &Args, json: Option<JsonStyle>) -> Result<()> {
    let view = zenpak::game::GameView::open(&args.path, &args.key.keys()?)?;
    let summary = view.summary();
    if let Some(style) = json {
        return style.print(&summary);
    }
    println!("{}", args.path.display());
    println!(
        "  {:>4} {:>6}  {:<4} {:>8} {:>8}  source",
        "seq", "order", "pak", "entries", "chunks"
    );
    for s in &summary.sources {
        println!(
            "  {:>4} {:>6}  {:<4} {:>8} {:>8}  {}{}",
            s.sequence,
            s.order,
            s.pak_version.as_deref().unwrap_or("-"),
            s.pak_entries,
            s.container_chunks
                .map_or("-".to_string(), |n| n.to_string()),
            s.path,
            if s.encrypted { "  (encrypted)" } else { "" }
        );
    }
    println!(
        "  files: {}, packages: {}, shadowed copies: {}",
        summary.files, summary.packages, summary.shadowed
    );
    for d in &summary.diagnostics {
        println!("  warning: {d}");
    }
    Ok(())
}

/// Legacy package with `--mappings`: where each export's property block ends.
fn inspect_package_properties(args: &Args) -> Result<()> {
    use zenpak::properties::{walk_package, AfterBlock, WalkOutcome};
    let mappings_path = args.mappings.as_ref().expect("checked by the caller");
    let mappings = zenpak::mappings::Mappings::load(mappings_path)?;
    let files = zenpak::legacy::PackageFiles::load(&args.path)?;
    let package = files.read_package(args.engine)?;
    let walks = walk_package(&files, &package, Some(&mappings), args.properties);
    if args.json {
        #[derive(serde::Serialize)]
        struct Out<'a> {
            kind: &'static str,
            engine: EngineVersion,
            exports: &'a [zenpak::properties::ExportWalk],
        }
        return super::print_json(&Out {
            kind: "package-properties",
            engine: package.engine,
            exports: &walks,
        });
    }
    println!(
        "{} ({}), mappings {}",
        args.path.display(),
        package.engine,
        mappings_path.display()
    );
    for w in &walks {
        println!(
            "export {} {} (class {}), serial {}+{}",
            w.index, w.name, w.class, w.serial_offset, w.serial_size
        );
        match &w.outcome {
            WalkOutcome::Walked {
                block_start,
                block_end,
                after,
                properties,
            } => {
                let after = match after {
                    AfterBlock::ExportEnd => {
                        "the export ends after the object GUID flag".to_string()
                    }
                    AfterBlock::NativeData { bytes } => {
                        format!("{bytes} bytes of native data follow")
                    }
                };
                println!("  properties {block_start}..{block_end}; {after}");
                for p in properties {
                    let element = p.array_index.map(|i| format!("[{i}]")).unwrap_or_default();
                    println!(
                        "    @{} {}{}: {} = {}",
                        p.offset, p.name, element, p.ty, p.value
                    );
                }
            }
            WalkOutcome::Failed { error, .. } => println!("  not walked: {error}"),
        }
    }
    Ok(())
}

/// Legacy package with `--profile`: what the profile would change.
fn inspect_profile(args: &Args, json: Option<JsonStyle>) -> Result<()> {
    let (Some(profile), Some(engine)) = (args.profile, args.engine) else {
        return Err(Error::usage("--profile needs --engine"));
    };
    let mappings = match &args.mappings {
        Some(path) => Some(zenpak::mappings::Mappings::load(path)?),
        None => None,
    };
    let files = zenpak::legacy::PackageFiles::load(&args.path)?;
    let preview = profile.preview(
        &files,
        engine,
        mappings.as_ref(),
        &zenpak::fixups::ProfileOptions::default(),
    )?;
    match json {
        Some(style) => style.print(&preview),
        None => {
            print!("{}", preview.to_text());
            Ok(())
        }
    }
}
