//! `zenpak diff A B --engine V`: compares two Zen packages section by
//! section and names the first differing section, entry and field.

use std::path::{Path, PathBuf};

use serde::Serialize;
use zenpak::zen::diff::{first_difference, section_table, Difference};
use zenpak::zen::ZenPackage;
use zenpak::{EngineVersion, Error, Result};

use super::args::engine_parser;
use super::output::Output;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// First Zen package (e.g. the engine's `.uzenasset`).
    pub(crate) left: PathBuf,
    /// Second Zen package (e.g. zenpak's conversion).
    pub(crate) right: PathBuf,
    /// Engine version both packages were written for.
    #[arg(long, value_parser = engine_parser())]
    pub(crate) engine: EngineVersion,
}

#[derive(Serialize)]
struct Report<'a> {
    identical: bool,
    sections: Vec<(&'static str, &'static str)>,
    first_difference: Option<&'a Difference>,
}

/// The legacy package tag: a file that starts with it is not a Zen package.
const LEGACY_TAG: [u8; 4] = [0xC1, 0x83, 0x2A, 0x9E];

fn load(path: &Path, engine: EngineVersion) -> Result<(Vec<u8>, ZenPackage)> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    if bytes.starts_with(&LEGACY_TAG) {
        return Err(Error::usage("this is a legacy package, not a Zen package")
            .in_file(path)
            .with_hint(format!(
                "diff compares Zen packages: convert it first (`zenpak convert {} --engine {engine} -o X.uzenasset`)",
                path.display()
            )));
    }
    let package = ZenPackage::read(&bytes, engine).map_err(|e| e.in_file(path))?;
    Ok((bytes, package))
}

pub(crate) fn run(args: Args, out: &Output) -> Result<()> {
    let (left_bytes, left) = load(&args.left, args.engine)?;
    let (right_bytes, right) = load(&args.right, args.engine)?;
    let table = section_table(&left, &right);
    let first = first_difference(&left, &right);
    let identical = left_bytes == right_bytes;
    let label = |same: bool| if same { "identical" } else { "differs" };
    out.data(
        "diff",
        &Report {
            identical,
            sections: table.iter().map(|(s, same)| (*s, label(*same))).collect(),
            first_difference: first.as_ref(),
        },
        || {
            for (section, same) in &table {
                println!("{section:<20} {}", label(*same));
            }
            match &first {
                Some(d) => println!("first difference: {d}"),
                None if identical => println!("packages are byte-identical"),
                None => println!("sections are equal but the bytes differ (layout or padding)"),
            }
        },
    );
    if identical {
        Ok(())
    } else {
        Err(Error::invalid(match first {
            Some(d) => format!("packages differ: {d}"),
            None => "packages differ in layout".to_string(),
        }))
    }
}
