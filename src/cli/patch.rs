//! `zenpak patch ...`: commands on the mod's patch files (`zenpak::patch`).
//! `vendor` copies the game's packages the patches change into the
//! repository (`patches/base/`, with its lock), for builds without the game;
//! `diff` writes the patch between two packages. Also what `build` and
//! `check` do with the patch files (`patched_packages`, `patch_checks`).

use clap::Subcommand;
use zenpak::{Error, Result};

use serde::Serialize;
use zenpak::manifest::Manifest;

use super::args::{KeyArgs, ManifestArgs};
use super::output::count;
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
    let engine = super::args::engine_or_nearest(args.engine, "which engine wrote these packages?")?;
    let mappings = super::args::load_mappings(args.mappings.as_deref(), out)?;
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

/// The game (`game`, else `ZENPAK_GAME_DIR` or `[games]` when a patch
/// names a game package) and the mappings the patch files of `set` need.
fn patch_inputs(
    manifest: &Manifest,
    set: &zenpak::patch::PatchSet,
    game: Option<&std::path::Path>,
    keys: &KeyArgs,
    out: &Output,
) -> Result<(
    Option<zenpak::patch::base::Game>,
    Option<zenpak::mappings::Mappings>,
)> {
    let game_dir = match game {
        Some(dir) => Some(dir.to_path_buf()),
        None if set.needs_game() => zenpak::release::default_game_dirs(&manifest.game.project)?
            .into_iter()
            .next(),
        None => None,
    };
    let game = match &game_dir {
        Some(dir) => {
            let folder = super::args::game_folder(out, dir, Some(&manifest.game.project))?;
            Some(zenpak::patch::base::Game::open(
                &folder.paks(),
                &keys.keys()?,
            )?)
        }
        None => None,
    };
    let mappings = match manifest.mappings_path() {
        Some(path) => super::args::load_mappings(Some(&path), out)?,
        None => None,
    };
    Ok((game, mappings))
}

/// `check`: how each asset's patches fare against the game (or the
/// vendored bases), with each one's diagnostics printed; none when the mod
/// has no patch files.
pub(crate) fn patch_checks(
    manifest: &Manifest,
    game: Option<&std::path::Path>,
    keys: &KeyArgs,
    out: &Output,
) -> Result<Vec<zenpak::patch::PatchCheck>> {
    let set = zenpak::patch::PatchSet::load(manifest)?;
    if set.is_empty() {
        return Ok(Vec::new());
    }
    let (game, mappings) = patch_inputs(manifest, &set, game, keys, out)?;
    let checks = zenpak::patch::check_all(manifest, &set, game.as_ref(), mappings.as_ref())?;
    for check in &checks {
        out.diagnostics(&check.diagnostics);
        out.data("patch-check", check, || {
            let state = match check.state {
                zenpak::patch::PatchState::Applies => "applies",
                zenpak::patch::PatchState::AppliesWithDrift => {
                    "applies, to a game copy that differs from the vendored base"
                }
                zenpak::patch::PatchState::Broken => "broken",
            };
            out.status(
                "Patch",
                format!(
                    "{} ({}): {state}",
                    check.asset,
                    count(check.operations, "change")
                ),
            )
        });
    }
    Ok(checks)
}

/// The patched packages of the mod's patch files (`crate::patch`), their
/// game bases read from `game` (else `ZENPAK_GAME_DIR` or the user
/// configuration's `[games]`, when a patch names a game package).
pub(crate) fn patched_packages(
    manifest: &Manifest,
    game: Option<&std::path::Path>,
    keys: &KeyArgs,
    out: &Output,
) -> Result<Vec<zenpak::build::StagedPackage>> {
    let set = zenpak::patch::PatchSet::load(manifest)?;
    if set.is_empty() {
        return Ok(Vec::new());
    }
    let (game, mappings) = patch_inputs(manifest, &set, game, keys, out)?;
    let applied = zenpak::patch::apply_all(manifest, &set, game.as_ref(), mappings.as_ref())?;
    out.diagnostics(&applied.diagnostics);
    let mut staged = Vec::with_capacity(applied.packages.len());
    for package in applied.packages {
        out.data("patched", &PatchedLine::of(&package), || {
            out.status(
                "Patched",
                format!(
                    "{} ({}) from {}",
                    package.asset,
                    count(package.operations, "change"),
                    package.base
                ),
            )
        });
        staged.push(zenpak::build::StagedPackage {
            origin: format!("the patches of `{}`", package.asset),
            relative_path: package.relative_path,
            header: package.files.header,
            uexp: package.files.uexp,
            companions: package.files.companions,
        });
    }
    Ok(staged)
}

/// A patched asset, as `--message-format json` reports it.
#[derive(Serialize)]
struct PatchedLine<'a> {
    asset: &'a str,
    path: &'a str,
    base: &'a str,
    operations: usize,
}

impl<'a> PatchedLine<'a> {
    fn of(p: &'a zenpak::patch::PatchedPackage) -> Self {
        PatchedLine {
            asset: &p.asset,
            path: &p.relative_path,
            base: &p.base,
            operations: p.operations,
        }
    }
}
