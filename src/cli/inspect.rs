//! `zenpak inspect FILE`: recognises the kind of file by its magic and
//! extension, then prints it (text, or JSON with `--json`).

use std::path::PathBuf;

use zenpak::sniff::FileKind;
use zenpak::{EngineVersion, Error, Result};

use super::Output;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The file to inspect.
    pub path: PathBuf,
    /// Engine version the file was cooked with (needed for unversioned
    /// packages; default: the nearest mod.toml's `[game] engine`).
    #[arg(long, value_parser = super::args::engine_parser())]
    pub engine: Option<EngineVersion>,
    /// Print stable JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// AES key for encrypted containers and paks.
    #[command(flatten)]
    pub key: super::args::KeyArgs,
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

pub fn run(mut args: Args, out: &Output) -> Result<()> {
    if args.path.is_dir() {
        return inspect_folder(&args, out);
    }
    let kind = zenpak::sniff::sniff_file(&args.path)?;
    if matches!(kind, FileKind::LegacyPackage | FileKind::ZenPackage) && args.engine.is_none() {
        if let Some((engine, manifest)) = super::args::engine_from_nearest_manifest() {
            out.verbose_status("Using", format!("UE {engine} from {}", manifest.display()));
            args.engine = Some(engine);
        }
    }
    match kind {
        FileKind::Toc => inspect_toc(&args, out),
        FileKind::Pak => inspect_pak(&args, out),
        FileKind::LegacyPackage if args.profile.is_some() => inspect_profile(&args, out),
        FileKind::LegacyPackage if args.mappings.is_some() => {
            inspect_package_properties(&args, out)
        }
        FileKind::LegacyPackage => inspect_legacy(&args, out),
        FileKind::ZenPackage => super::inspect_zen::run(&args.path, args.engine, args.json, out),
        FileKind::ClassicPackage => super::inspect_classic::run(&args, out),
        FileKind::Mappings => inspect_mappings(&args, out),
    }
}

fn inspect_legacy(args: &Args, out: &Output) -> Result<()> {
    let files = zenpak::legacy::PackageFiles::load(&args.path)?;
    let package = files.read_package(args.engine)?;
    if let Some(warning) = &package.version_warning {
        out.diagnostic(&warning.clone().with_file(&args.path));
    }
    files.check_exports(&package)?;
    let report =
        zenpak::legacy::PackageReport::new(&files, &package).map_err(|e| e.in_file(&args.path))?;
    out.report(args.json, "inspected", &report, || {
        print!("{}", report.to_text())
    });
    Ok(())
}

/// `.usmap` branch: counts (and with `--json` the same as an object).
fn inspect_mappings(args: &Args, out: &Output) -> Result<()> {
    let mappings = zenpak::mappings::Mappings::load(&args.path)?;
    let summary = mappings.summary();
    out.diagnostics(&mappings.diagnostics);
    out.report(args.json, "inspected", &summary, || {
        print_mappings(args, &summary)
    });
    Ok(())
}

fn print_mappings(args: &Args, summary: &zenpak::mappings::MappingsSummary) {
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
}

/// The `.utoc` branch: TOC header, flags, chunks by type, container header.
fn inspect_toc(args: &Args, out: &Output) -> Result<()> {
    let container = zenpak::iostore::Container::open_with_keys(&args.path, &args.key.keys()?)?;
    let summary = container.summary()?;
    out.report(args.json, "inspected", &summary, || {
        print_toc(args, &summary)
    });
    Ok(())
}

fn print_toc(args: &Args, summary: &zenpak::iostore::reader::ContainerSummary) {
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
}

/// The `.pak` branch: footer, index and entries.
fn inspect_pak(args: &Args, out: &Output) -> Result<()> {
    let pak = zenpak::pak::PakReader::open_with_keys(&args.path, &args.key.keys()?)?;
    #[derive(serde::Serialize)]
    struct PakSummary<'a> {
        version: String,
        mount_point: &'a str,
        encrypted_index: bool,
        compression_methods: &'a [String],
        entries: &'a [zenpak::pak::PakEntryInfo],
    }
    let summary = PakSummary {
        version: pak.version.to_string(),
        mount_point: &pak.mount_point,
        encrypted_index: pak.encrypted_index,
        compression_methods: &pak.compression_methods,
        entries: &pak.entries,
    };
    out.report(args.json, "inspected", &summary, || print_pak(args, &pak));
    Ok(())
}

fn print_pak(args: &Args, pak: &zenpak::pak::PakReader) {
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
}

/// A game's `Paks` folder: the mounted sources in the engine's order.
fn inspect_folder(args: &Args, out: &Output) -> Result<()> {
    let view = zenpak::game::GameView::open(&args.path, &args.key.keys()?)?;
    let summary = view.summary();
    out.diagnostics(&summary.diagnostics);
    out.report(args.json, "inspected", &summary, || {
        print_folder(args, &summary)
    });
    Ok(())
}

fn print_folder(args: &Args, summary: &zenpak::game::ViewSummary) {
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
}

/// Legacy package with `--mappings`: where each export's property block ends.
fn inspect_package_properties(args: &Args, out: &Output) -> Result<()> {
    use zenpak::properties::walk_package;
    let mappings_path = args.mappings.as_ref().expect("checked by the caller");
    let mappings = zenpak::mappings::Mappings::load(mappings_path)?;
    let files = zenpak::legacy::PackageFiles::load(&args.path)?;
    let package = files.read_package(args.engine)?;
    let walks = walk_package(&files, &package, Some(&mappings), args.properties);
    #[derive(serde::Serialize)]
    struct Walked<'a> {
        kind: &'static str,
        engine: EngineVersion,
        exports: &'a [zenpak::properties::ExportWalk],
    }
    let walked = Walked {
        kind: "package-properties",
        engine: package.engine,
        exports: &walks,
    };
    out.report(args.json, "inspected", &walked, || {
        print_walks(args, mappings_path, package.engine, &walks)
    });
    Ok(())
}

fn print_walks(
    args: &Args,
    mappings_path: &std::path::Path,
    engine: EngineVersion,
    walks: &[zenpak::properties::ExportWalk],
) {
    use zenpak::properties::{AfterBlock, WalkOutcome};
    println!(
        "{} ({}), mappings {}",
        args.path.display(),
        engine,
        mappings_path.display()
    );
    for w in walks {
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
}

/// Legacy package with `--profile`: what the profile would change.
fn inspect_profile(args: &Args, out: &Output) -> Result<()> {
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
    out.report(args.json, "inspected", &preview, || {
        print!("{}", preview.to_text())
    });
    Ok(())
}
