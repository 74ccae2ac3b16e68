//! `zenpak check`: validate the manifest and content without writing anything.

use zenpak::{Error, Result};

use super::release::ManifestArgs;
use super::{print_json_line, GlobalOptions, MessageFormat};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub manifest: ManifestArgs,
}

pub fn run(args: Args, global: &GlobalOptions) -> Result<()> {
    let manifest = args.manifest.load()?;
    let report = zenpak::build::check::check(&manifest)?;
    match global.message_format {
        MessageFormat::Json => {
            let mut value = serde_json::to_value(&report).map_err(Error::json)?;
            value["reason"] = "check".into();
            print_json_line(&value)?;
        }
        MessageFormat::Human => {
            for problem in &report.problems {
                eprintln!("error: {problem}");
            }
            if !global.quiet {
                if !report.must_exist_in_game.is_empty() {
                    eprintln!("note: these packages are imported but not in the mod; they must exist in the game:");
                    for name in &report.must_exist_in_game {
                        eprintln!("  {name}");
                    }
                }
                eprintln!(
                    "    Checked {} packages, {} loose files: {} problem(s)",
                    report.packages,
                    report.loose_files,
                    report.problems.len()
                );
            }
        }
    }
    if report.is_ok() {
        Ok(())
    } else {
        Err(Error::invalid(format!(
            "{} problem(s) found",
            report.problems.len()
        )))
    }
}
