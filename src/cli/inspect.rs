//! `zenpak inspect FILE`: recognises the kind of file by its magic and
//! extension, then prints it (text, or JSON with `--json`).

use std::io::Write;
use std::path::PathBuf;

use zenpak::sniff::FileKind;
use zenpak::{EngineVersion, Error, Result};

use super::Output;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The file to inspect.
    pub(crate) path: PathBuf,
    /// Engine version the file was cooked with (needed for unversioned
    /// packages; default: the nearest mod.toml's `[game] engine`).
    #[arg(long, value_parser = super::args::engine_parser())]
    pub(crate) engine: Option<EngineVersion>,
    /// Print stable JSON instead of text.
    #[arg(long)]
    pub(crate) json: bool,
    /// AES key for encrypted containers and paks.
    #[command(flatten)]
    pub(crate) key: super::args::KeyArgs,
    /// Mappings (.usmap) of the game: walks each export's property block.
    #[arg(long, value_name = "M.usmap")]
    pub(crate) mappings: Option<PathBuf>,
    /// With --mappings: also list the properties read (names, types, values).
    #[arg(long, requires = "mappings")]
    pub(crate) properties: bool,
    /// Show what a game profile would change in a legacy package (offsets before/after).
    #[arg(long, requires = "engine")]
    pub(crate) profile: Option<zenpak::fixups::Profile>,
}

pub(crate) fn run(mut args: Args, out: &Output) -> Result<()> {
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
        FileKind::ClassicPackage => super::inspect_classic::run(&args.path, args.json, out),
        FileKind::Mappings => inspect_mappings(&args, out),
        FileKind::OnDemandToc => inspect_on_demand_toc(&args, out),
    }
}

/// `.uondemandtoc` branch: the table, whole in JSON, counts in text.
fn inspect_on_demand_toc(args: &Args, out: &Output) -> Result<()> {
    let toc = zenpak::iostore::on_demand_toc::OnDemandToc::read_file(&args.path)?;
    out.report_text(args.json, "inspected", &toc, |w| {
        writeln!(
            w,
            "{}: on-demand TOC, version {}, block size {}, compression {}",
            args.path.display(),
            toc.version,
            toc.block_size,
            zenpak::diagnostic::printable(&toc.compression_format)
        )?;
        for c in &toc.containers {
            writeln!(
                w,
                "  {}: {} chunks, {} blocks",
                zenpak::diagnostic::printable(&c.name),
                c.chunks.len(),
                c.block_count
            )?;
        }
        Ok(())
    });
    Ok(())
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
    out.report_text(args.json, "inspected", &report, |w| {
        w.write_all(report.to_text().as_bytes())
    });
    Ok(())
}

/// `.usmap` branch: counts (and with `--json` the same as an object).
fn inspect_mappings(args: &Args, out: &Output) -> Result<()> {
    let mappings = zenpak::mappings::Mappings::load(&args.path)?;
    let summary = mappings.summary();
    out.diagnostics(&mappings.diagnostics);
    out.report_text(args.json, "inspected", &summary, |w| {
        print_mappings(w, args, &summary)
    });
    Ok(())
}

fn print_mappings(
    w: &mut dyn Write,
    args: &Args,
    summary: &zenpak::mappings::MappingsSummary,
) -> std::io::Result<()> {
    writeln!(
        w,
        "{}: .usmap mappings, version {}",
        args.path.display(),
        summary.version
    )?;
    writeln!(w, "  compression: {:?}", summary.compression)?;
    match summary.package_versioning {
        Some((ue4, ue5)) => writeln!(w, "  package versioning: UE4 {ue4}, UE5 {ue5}")?,
        None => writeln!(w, "  package versioning: none")?,
    }
    writeln!(w, "  names: {}", summary.names)?;
    writeln!(w, "  enums: {}", summary.enums)?;
    writeln!(w, "  structs: {}", summary.structs)?;
    writeln!(w, "  serialized properties: {}", summary.properties)?;
    if !summary.extensions.is_empty() {
        writeln!(w, "  extensions: {}", summary.extensions.join(", "))?;
    }
    Ok(())
}

/// The `.utoc` branch: TOC header, flags, chunks by type, container header.
fn inspect_toc(args: &Args, out: &Output) -> Result<()> {
    let container = zenpak::iostore::Container::open_with_keys(&args.path, &args.key.keys()?)?;
    let summary = container.summary()?;
    out.report_text(args.json, "inspected", &summary, |w| {
        print_toc(w, args, &summary)
    });
    Ok(())
}

fn print_toc(
    w: &mut dyn Write,
    args: &Args,
    summary: &zenpak::iostore::reader::ContainerSummary,
) -> std::io::Result<()> {
    writeln!(w, "{}", args.path.display())?;
    writeln!(w, "  TOC version:          {:?}", summary.toc_version)?;
    writeln!(
        w,
        "  container id:         {}{}",
        summary.container_id,
        if summary.container_id_matches_file_name {
            ""
        } else {
            "  (does NOT match the file name)"
        }
    )?;
    writeln!(w, "  flags:                {}", summary.flags.join(", "))?;
    writeln!(
        w,
        "  block size:           {}",
        summary.compression_block_size
    )?;
    writeln!(
        w,
        "  compression methods:  {}",
        if summary.compression_methods.is_empty() {
            "none".to_string()
        } else {
            summary.compression_methods.join(", ")
        }
    )?;
    writeln!(
        w,
        "  chunks / blocks:      {} / {}",
        summary.chunk_count, summary.block_count
    )?;
    writeln!(
        w,
        "  perfect hash seeds:   {} ({} overflow)",
        summary.perfect_hash_seeds, summary.chunks_without_perfect_hash
    )?;
    writeln!(w, "  mount point:          {}", summary.mount_point)?;
    writeln!(w, "  indexed files:        {}", summary.indexed_files)?;
    for (kind, n) in &summary.chunk_types {
        writeln!(w, "    {kind:<22} {n}")?;
    }
    if let Some(h) = &summary.container_header {
        writeln!(
            w,
            "  container header:     {:?}, {} packages, {} localized, {} redirects",
            h.version, h.packages, h.localized_packages, h.package_redirects
        )?;
    }
    Ok(())
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
    out.report_text(args.json, "inspected", &summary, |w| {
        print_pak(w, args, &pak)
    });
    Ok(())
}

fn print_pak(w: &mut dyn Write, args: &Args, pak: &zenpak::pak::PakReader) -> std::io::Result<()> {
    writeln!(w, "{}", args.path.display())?;
    writeln!(w, "  pak version:      {}", pak.version)?;
    writeln!(w, "  mount point:      {}", pak.mount_point)?;
    writeln!(w, "  encrypted index:  {}", pak.encrypted_index)?;
    writeln!(w, "  entries:          {}", pak.entries.len())?;
    for e in &pak.entries {
        writeln!(
            w,
            "    {:>10} {:>10} {:<5} {}{}",
            e.uncompressed_size,
            e.size,
            e.compression,
            e.path,
            if e.encrypted { "  (encrypted)" } else { "" }
        )?;
    }
    Ok(())
}

/// A game's `Paks` folder: the mounted sources in the engine's order.
fn inspect_folder(args: &Args, out: &Output) -> Result<()> {
    let view = zenpak::game::GameView::open(&args.path, &args.key.keys()?)?;
    let summary = view.summary();
    out.diagnostics(&summary.diagnostics);
    out.report_text(args.json, "inspected", &summary, |w| {
        print_folder(w, args, &summary)
    });
    Ok(())
}

fn print_folder(
    w: &mut dyn Write,
    args: &Args,
    summary: &zenpak::game::ViewSummary,
) -> std::io::Result<()> {
    writeln!(w, "{}", args.path.display())?;
    writeln!(
        w,
        "  {:>4} {:>6}  {:<4} {:>8} {:>8}  source",
        "seq", "order", "pak", "entries", "chunks"
    )?;
    for s in &summary.sources {
        writeln!(
            w,
            "  {:>4} {:>6}  {:<4} {:>8} {:>8}  {}{}",
            s.sequence,
            s.order,
            s.pak_version.as_deref().unwrap_or("-"),
            s.pak_entries,
            s.container_chunks
                .map_or("-".to_string(), |n| n.to_string()),
            s.path,
            if s.encrypted { "  (encrypted)" } else { "" }
        )?;
    }
    writeln!(
        w,
        "  files: {}, packages: {}, shadowed copies: {}",
        summary.files, summary.packages, summary.shadowed
    )?;
    Ok(())
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
    out.report_text(args.json, "inspected", &walked, |w| {
        print_walks(w, args, mappings_path, package.engine, &walks)
    });
    Ok(())
}

fn print_walks(
    w: &mut dyn Write,
    args: &Args,
    mappings_path: &std::path::Path,
    engine: EngineVersion,
    walks: &[zenpak::properties::ExportWalk],
) -> std::io::Result<()> {
    use zenpak::properties::{AfterBlock, WalkOutcome};
    writeln!(
        w,
        "{} ({}), mappings {}",
        args.path.display(),
        engine,
        mappings_path.display()
    )?;
    for walk in walks {
        writeln!(
            w,
            "export {} {} (class {}), serial {}+{}",
            walk.index, walk.name, walk.class, walk.serial_offset, walk.serial_size
        )?;
        match &walk.outcome {
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
                writeln!(w, "  properties {block_start}..{block_end}; {after}")?;
                for p in properties {
                    let element = p.array_index.map(|i| format!("[{i}]")).unwrap_or_default();
                    writeln!(
                        w,
                        "    @{} {}{}: {} = {}",
                        p.offset, p.name, element, p.ty, p.value
                    )?;
                }
            }
            WalkOutcome::Failed { error, .. } => writeln!(w, "  not walked: {error}")?,
        }
    }
    Ok(())
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
    out.report_text(args.json, "inspected", &preview, |w| {
        w.write_all(preview.to_text().as_bytes())
    });
    Ok(())
}
