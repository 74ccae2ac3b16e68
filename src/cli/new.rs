//! `zenpak new NAME` and `zenpak init`: start a mod repository from the templates.

use std::path::PathBuf;

use zenpak::scaffold::{write_mod, NewMod};
use zenpak::{EngineVersion, Error, Result};

use super::{GlobalOptions, MessageFormat};

#[derive(Debug, clap::Args)]
pub struct NewArgs {
    /// Name of the mod; also the folder created for it.
    pub name: String,
    #[command(flatten)]
    pub game: GameArgs,
}

#[derive(Debug, clap::Args)]
pub struct InitArgs {
    /// Name of the mod (default: the current folder's name).
    #[arg(long)]
    pub name: Option<String>,
    #[command(flatten)]
    pub game: GameArgs,
}

#[derive(Debug, clap::Args)]
pub struct GameArgs {
    /// Engine version of the game.
    #[arg(long, default_value = "5.6")]
    pub engine: EngineVersion,
    /// The game's project folder name (cooked files live under Cooked/<PROJECT>/Content).
    #[arg(long, default_value = "MyGame")]
    pub project: String,
}

pub fn run_new(args: NewArgs, global: &GlobalOptions) -> Result<()> {
    let dir = PathBuf::from(&args.name);
    let name = dir
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| Error::usage(format!("`{}` is not a mod name", args.name)))?
        .to_string();
    create(dir, name, args.game, global)
}

pub fn run_init(args: InitArgs, global: &GlobalOptions) -> Result<()> {
    let dir = std::env::current_dir().map_err(|e| Error::io(".", e))?;
    let name = match args.name {
        Some(n) => n,
        None => dir
            .file_name()
            .and_then(|n| n.to_str())
            .ok_or_else(|| Error::usage("cannot name the mod after this folder; pass --name"))?
            .to_string(),
    };
    create(dir, name, args.game, global)
}

fn create(dir: PathBuf, name: String, game: GameArgs, global: &GlobalOptions) -> Result<()> {
    let new = NewMod {
        name: name.clone(),
        engine: game.engine,
        project: game.project.clone(),
    };
    let written = write_mod(&dir, &new)?;
    match global.message_format {
        MessageFormat::Json => {
            let files: Vec<String> = written.iter().map(|p| p.display().to_string()).collect();
            super::print_json_line(&serde_json::json!({
                "reason": "mod-created", "name": name, "path": dir.display().to_string(), "files": files,
            }))
        }
        MessageFormat::Human if !global.quiet => {
            eprintln!("     Created mod `{name}` in {}", dir.display());
            eprintln!(
                "        Next: put cooked files under {}/Cooked/{}/Content/, then run `zenpak build`",
                dir.display(),
                game.project
            );
            Ok(())
        }
        MessageFormat::Human => Ok(()),
    }
}
