//! `zenpak new PATH` and `zenpak init`: start a mod repository from the templates.

use std::path::PathBuf;

use zenpak::scaffold::{write_mod, NewMod};
use zenpak::{EngineVersion, Error, Result};

use super::args::engine_parser;
use super::output::Output;

#[derive(Debug, clap::Args)]
pub(crate) struct NewArgs {
    /// Folder to create; also the mod's name unless --name is given.
    pub(crate) path: PathBuf,
    /// Name of the mod (the output files' base name), when the folder's name is not one.
    #[arg(long)]
    pub(crate) name: Option<String>,
    #[command(flatten)]
    pub(crate) game: GameArgs,
}

#[derive(Debug, clap::Args)]
pub(crate) struct InitArgs {
    /// Name of the mod (default: the current folder's name).
    #[arg(long)]
    pub(crate) name: Option<String>,
    #[command(flatten)]
    pub(crate) game: GameArgs,
}

#[derive(Debug, clap::Args)]
pub(crate) struct GameArgs {
    /// Engine version of the game.
    #[arg(long, default_value = "5.6", value_parser = engine_parser())]
    pub(crate) engine: EngineVersion,
    /// The game's project folder name (cooked files live under Cooked/<PROJECT>/Content).
    #[arg(long, default_value = "MyGame")]
    pub(crate) project: String,
    /// Version control to set up: `git` (a repository, unless already inside one) or `none`.
    #[arg(long, default_value = "git", value_parser = ["git", "none"])]
    pub(crate) vcs: String,
}

fn folder_name(dir: &std::path::Path) -> Result<String> {
    dir.canonicalize()
        .unwrap_or_else(|_| dir.to_path_buf())
        .file_name()
        .and_then(|n| n.to_str())
        .map(str::to_string)
        .ok_or_else(|| {
            Error::usage("cannot name the mod after this folder").with_hint("pass --name NAME")
        })
}

pub(crate) fn run_new(args: NewArgs, out: &Output) -> Result<()> {
    let name = match args.name {
        Some(n) => n,
        None => folder_name(&args.path)?,
    };
    create(args.path, name, args.game, out)
}

pub(crate) fn run_init(args: InitArgs, out: &Output) -> Result<()> {
    let dir = std::env::current_dir().map_err(|e| Error::io(".", e))?;
    let name = match args.name {
        Some(n) => n,
        None => folder_name(&dir)?,
    };
    create(dir, name, args.game, out)
}

fn create(dir: PathBuf, name: String, game: GameArgs, out: &Output) -> Result<()> {
    let new = NewMod {
        name: name.clone(),
        engine: game.engine,
        project: game.project.clone(),
        git: game.vcs == "git",
    };
    let done = write_mod(&dir, &new)?;
    #[derive(serde::Serialize)]
    struct Created<'a> {
        name: &'a str,
        path: String,
        #[serde(flatten)]
        done: &'a zenpak::scaffold::Scaffolded,
    }
    out.data(
        "mod-created",
        &Created {
            name: &name,
            path: dir.display().to_string(),
            done: &done,
        },
        || {
            out.status("Created", format!("mod `{name}` in {}", dir.display()));
            if let Some(path) = &done.gitignore_extended {
                out.status(
                    "Updated",
                    format!("{}: added zenpak's build output", path.display()),
                );
            }
            if done.git_initialized {
                out.status("Initialized", "a git repository");
            }
            out.status(
                "Next",
                format!(
                    "put cooked files under {}, then run `zenpak build`",
                    dir.join("Cooked")
                        .join(&game.project)
                        .join("Content")
                        .display()
                ),
            );
        },
    );
    Ok(())
}
