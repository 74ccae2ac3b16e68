//! `zenpak patch ...`: commands on the mod's patch files (`zenpak::patch`).
//! `vendor` copies the game's packages the patches change into the
//! repository (`patches/base/`, with its lock), for builds without the game.

use clap::Subcommand;
use zenpak::{Error, Result};

use super::args::{KeyArgs, ManifestArgs};
use super::Output;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(subcommand)]
    pub(crate) command: PatchCommand,
}

#[derive(Debug, Subcommand)]
pub(crate) enum PatchCommand {
    /// Copy the game's packages the patches change into `patches/base/` (with `lock.toml`), so that a build without the game (CI) applies the patches to them.
    Vendor(VendorArgs),
    /// Write the patch that turns one cooked package into another (e.g. the game's asset and a copy edited in a GUI); it is checked to reproduce the edited copy byte for byte.
    Diff(DiffArgs),
}

#[derive(Debug, clap::Args)]
pub(crate) struct DiffArgs {
    /// The package as it was (the game's, or a vendored base).
    pub(crate) base: std::path::PathBuf,
    /// The same package edited.
    pub(crate) edited: std::path::PathBuf,
    /// Where to write the patch file (default: standard output).
    #[arg(short, long, value_name = "FILE")]
    pub(crate) output: Option<std::path::PathBuf>,
    /// The game package the patch names (`asset = "/Game/…"`); without
    /// it, the patch names BASE as its base file.
    #[arg(long, value_name = "PACKAGE")]
    pub(crate) asset: Option<String>,
    /// Engine release (default: mod.toml's).
    #[arg(long)]
    pub(crate) engine: Option<zenpak::EngineVersion>,
    /// Mappings (.usmap) for unversioned packages (default: mod.toml's).
    #[arg(long, value_name = "FILE")]
    pub(crate) mappings: Option<std::path::PathBuf>,
}

#[derive(Debug, clap::Args)]
pub(crate) struct VendorArgs {
    #[command(flatten)]
    pub(crate) manifest: ManifestArgs,
    /// The game's install folder (default: `ZENPAK_GAME_DIR`, else `[games]`
    /// in the user configuration).
    #[arg(long = "game-dir", value_name = "DIR")]
    pub(crate) game_dir: Option<std::path::PathBuf>,
    /// Keys for the game's encrypted containers.
    #[command(flatten)]
    pub(crate) key: KeyArgs,
}

pub(crate) fn run(args: Args, out: &Output) -> Result<()> {
    match args.command {
        PatchCommand::Vendor(args) => vendor(args, out),
        PatchCommand::Diff(args) => diff(args, out),
    }
}

fn vendor(args: VendorArgs, out: &Output) -> Result<()> {
    let manifest = args.manifest.load()?;
    let set = zenpak::patch::PatchSet::load(&manifest)?;
    if !set.needs_game() {
        return Err(Error::usage(format!(
            "no patch in {} names a game package (`asset = \"/Game/…\"`): nothing to vendor",
            manifest.patches_dir().display()
        )));
    }
    let dir = match args.game_dir {
        Some(dir) => dir,
        None => zenpak::release::default_game_dirs(&manifest.game.project)?
            .into_iter()
            .next()
            .ok_or_else(|| {
                Error::usage("no game folder given")
                    .with_hint("pass --game-dir DIR, or set ZENPAK_GAME_DIR")
            })?,
    };
    let folder = super::args::game_folder(out, &dir, Some(&manifest.game.project))?;
    let game = zenpak::patch::base::Game::open(&folder.paks(), &args.key.keys()?)?;
    let vendored = zenpak::patch::vendor::vendor(&manifest, &set, &game)?;
    for base in &vendored {
        out.data("vendored", base, || {
            out.status(
                if base.changed { "Vendored" } else { "Fresh" },
                format!("{} from {} ({})", base.asset, base.source, base.path),
            )
        });
    }
    Ok(())
}

#[derive(serde::Serialize)]
struct DiffLine<'a> {
    operations: usize,
    /// Where the patch was written (none: standard output).
    output: Option<&'a std::path::Path>,
}

fn diff(args: DiffArgs, out: &Output) -> Result<()> {
    let nearest = super::args::nearest_manifest().map(|(m, _)| m);
    let engine = args
        .engine
        .or_else(|| nearest.as_ref().map(|m| m.game.engine))
        .ok_or_else(|| {
            Error::usage("which engine wrote these packages?")
                .with_hint("pass --engine (e.g. --engine 5.6), or run inside a mod whose mod.toml sets `[game] engine`")
        })?;
    let mappings_path = args
        .mappings
        .clone()
        .or_else(|| nearest.as_ref().and_then(|m| m.mappings_path()));
    let mappings = match mappings_path {
        Some(path) => {
            let mappings = zenpak::mappings::Mappings::load(&path)?;
            out.diagnostics(&mappings.diagnostics);
            Some(mappings)
        }
        None => None,
    };
    let base = zenpak::legacy::PackageFiles::load(&args.base)?;
    let edited = zenpak::legacy::PackageFiles::load(&args.edited)?;
    let target = match &args.asset {
        Some(asset) => format!("asset = {}", toml::Value::String(asset.clone())),
        None => format!(
            "base = {}",
            toml::Value::String(args.base.to_string_lossy().replace('\\', "/"))
        ),
    };
    let sources = zenpak::properties::SchemaSources::beside(&args.base);
    let (text, operations) = zenpak::patch::diff_packages(
        &base,
        &edited,
        &target,
        (mappings.as_ref(), &sources),
        engine,
    )?;
    match &args.output {
        Some(path) => zenpak::publish::write_file(path, |f| {
            use std::io::Write;
            f.write_all(text.as_bytes())
                .map_err(|e| Error::io(f.path(), e))
        })?,
        None if !out.is_json() => print!("{text}"),
        None => {}
    }
    out.data(
        "patch-diff",
        &DiffLine {
            operations,
            output: args.output.as_deref(),
        },
        || {
            if let Some(path) = &args.output {
                out.status(
                    "Wrote",
                    format!("{} ({operations} operations)", path.display()),
                )
            }
        },
    );
    Ok(())
}
