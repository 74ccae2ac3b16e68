//! `zenpak diff A B --engine V`: compares two Zen packages section by
//! section and names the first differing section, entry and field.

use std::path::PathBuf;

use serde::Serialize;
use zenpak::zen::diff::{first_difference, section_table, Difference};
use zenpak::zen::ZenPackage;
use zenpak::{EngineVersion, Error, Result};

use super::{GlobalOptions, MessageFormat};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// First Zen package (e.g. the engine's `.uzenasset`).
    pub left: PathBuf,
    /// Second Zen package (e.g. zenpak's conversion).
    pub right: PathBuf,
    /// Engine version both packages were written for.
    #[arg(long)]
    pub engine: EngineVersion,
}

#[derive(Serialize)]
struct Report<'a> {
    identical: bool,
    sections: Vec<(&'static str, &'static str)>,
    first_difference: Option<&'a Difference>,
}

fn load(path: &PathBuf, engine: EngineVersion) -> Result<ZenPackage> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    ZenPackage::read(&bytes, engine).map_err(|e| e.in_file(path))
}

pub fn run(args: Args, global: &GlobalOptions) -> Result<()> {
    let left_bytes = std::fs::read(&args.left).map_err(|e| Error::io(&args.left, e))?;
    let right_bytes = std::fs::read(&args.right).map_err(|e| Error::io(&args.right, e))?;
    let left = load(&args.left, args.engine)?;
    let right = load(&args.right, args.engine)?;
    let table = section_table(&left, &right);
    let first = first_difference(&left, &right);
    let identical = left_bytes == right_bytes;
    let label = |same: bool| if same { "identical" } else { "differs" };
    if global.message_format == MessageFormat::Json {
        super::print_json(&Report {
            identical,
            sections: table.iter().map(|(s, same)| (*s, label(*same))).collect(),
            first_difference: first.as_ref(),
        })?;
    } else if !global.quiet {
        for (section, same) in &table {
            println!("{section:<20} {}", label(*same));
        }
        match &first {
            Some(d) => println!("first difference: {d}"),
            None if identical => println!("packages are byte-identical"),
            None => println!("sections are equal but the bytes differ (layout or padding)"),
        }
    }
    if identical {
        Ok(())
    } else {
        Err(Error::invalid(match first {
            Some(d) => format!("packages differ: {d}"),
            None => "packages differ in layout".to_string(),
        }))
    }
}
