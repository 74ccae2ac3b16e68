//! `zenpak inspect FILE`: recognises the kind of file by its magic and
//! extension, then prints it (text, or JSON with `--json`).

use std::path::{Path, PathBuf};

use zenpak::{EngineVersion, Error, Result};

use super::GlobalOptions;

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
}

/// What kind of file `inspect` was given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    LegacyPackage,
    ZenPackage,
    ClassicPackage,
    Toc,
    Pak,
    Mappings,
}

/// The legacy/classic package tag `C1 83 2A 9E`.
const PACKAGE_TAG: u32 = 0x9E2A_83C1;

/// Decides the kind of file from its first bytes and its extension.
pub fn sniff(path: &Path, head: &[u8]) -> Result<Kind> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    let word = |at: usize| {
        head.get(at..at + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    if word(0) == Some(PACKAGE_TAG) {
        // Classic packages follow the tag with a small positive 16-bit file
        // version; UE4/UE5 packages with a negative legacy version.
        return match word(4).map(|v| v as i32) {
            Some(v) if v < 0 => Ok(Kind::LegacyPackage),
            _ => Ok(Kind::ClassicPackage),
        };
    }
    if head.starts_with(b"-==--==--==--==-") || ext == "utoc" {
        return Ok(Kind::Toc);
    }
    if head.len() >= 2 && head[0] == 0xC4 && head[1] == 0x30 {
        return Ok(Kind::Mappings);
    }
    match ext.as_str() {
        "pak" => Ok(Kind::Pak),
        "uzenasset" | "uasset" | "umap" => Ok(Kind::ZenPackage),
        _ => Err(Error::usage(format!(
            "{}: not a file zenpak recognises (expected a package, .utoc, .pak or .usmap)",
            path.display()
        ))),
    }
}

pub fn run(args: Args, global: &GlobalOptions) -> Result<()> {
    let head = read_head(&args.path)?;
    let kind = sniff(&args.path, &head)?;
    match kind {
        Kind::LegacyPackage => inspect_legacy(&args, global),
        Kind::ZenPackage => super::inspect_zen::run(&args.path, args.engine, args.json, global),
        _ => Err(Error::other(format!(
            "{}: inspecting {kind:?} files is not supported yet",
            args.path.display()
        ))),
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

fn read_head(path: &Path) -> Result<Vec<u8>> {
    use std::io::Read;
    let mut file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut head = vec![0u8; 64];
    let mut n = 0;
    while n < head.len() {
        match file.read(&mut head[n..]).map_err(|e| Error::io(path, e))? {
            0 => break,
            k => n += k,
        }
    }
    head.truncate(n);
    Ok(head)
}
