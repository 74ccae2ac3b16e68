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
