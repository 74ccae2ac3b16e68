//! Subcommands. Each lives in its own file with its arguments (`Args`) and
//! its `run`; this file lists them, holds the global options and runs one
//! command through the output layer ([`output::Output`]).

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod add;
pub(crate) mod args;
mod asset_json;
mod build;
mod check;
mod classic;
mod conflicts;
mod convert;
mod deps;
mod diff;
mod doctor;
mod extract;
mod get;
mod inspect;
mod inspect_classic;
mod inspect_zen;
mod list;
mod merge;
mod new;
pub(crate) mod output;
mod patch;
mod release;
mod shell;
mod unpack;
mod verify;
pub(crate) mod watch;

pub(crate) use output::{GlobalOptions, Output};

const ABOUT: &str = "Build Unreal Engine mods into IoStore containers (.utoc/.ucas/.pak)";

#[derive(Debug, Parser)]
#[command(
    name = "zenpak",
    about = ABOUT,
    disable_version_flag = true,
    arg_required_else_help = true,
    after_help = "Examples:\n  zenpak new MyMod --engine 5.6 --project MyGame\n  zenpak build\n  zenpak install --game-dir \"C:/Games/MyGame\"\n  zenpak verify target/MyMod_P.utoc\n\nExit codes: 0 ok, 1 the work failed, 2 usage or manifest error."
)]
pub(crate) struct Cli {
    #[command(flatten)]
    pub(crate) global: GlobalOptions,
    /// Print the version (with --verbose: the commit and the supported engines).
    #[arg(short = 'V', long = "version")]
    pub(crate) version: bool,
    #[command(subcommand)]
    pub(crate) command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Build the mod of the nearest mod.toml into <name>_P.utoc/.ucas/.pak.
    #[command(
        after_help = "Examples:\n  zenpak build\n  zenpak build --force --message-format json\n  zenpak build --manifest-path mods/MyMod/mod.toml --deny-warnings"
    )]
    Build(build::Args),
    /// Check the manifest and content without writing anything.
    #[command(
        after_help = "Examples:\n  zenpak check\n  zenpak check --verbose        # every note, every package the game must have"
    )]
    Check(check::Args),
    /// Show what a file holds: legacy or Zen package, container, pak, mappings, classic package.
    #[command(
        after_help = "Examples:\n  zenpak inspect Cooked/MyGame/Content/Hero.uasset\n  zenpak inspect target/MyMod_P.utoc --json\n  zenpak inspect Hero.uasset --mappings MyGame.usmap --properties"
    )]
    Inspect(inspect::Args),
    /// List the files of a container, a pak or a game's Paks folder.
    #[command(
        after_help = "Examples:\n  zenpak list target/MyMod_P.utoc\n  zenpak list Game/Content/Paks --filter \"Game/Content/Characters/**\"\n  zenpak list target/MyMod_P.utoc --json"
    )]
    List(list::Args),
    /// Check a container and its companion .pak, a pak, or a game's Paks folder.
    #[command(
        after_help = "Examples:\n  zenpak verify target/MyMod_P.utoc\n  zenpak verify Game/Content/Paks --aes-key 0x0123...\n  ZENPAK_AES_KEY=0x... zenpak verify pakchunk0-Windows.utoc"
    )]
    Verify(verify::Args),
    /// Write the files of a container, a pak or a game's Paks folder into a folder.
    #[command(
        after_help = "Examples:\n  zenpak unpack target/MyMod_P.utoc unpacked/\n  zenpak unpack Game/Content/Paks out/ --filter \"**/*.ini\""
    )]
    Unpack(unpack::Args),
    /// Write one file of a container, a pak or a game's Paks folder.
    #[command(
        after_help = "Examples:\n  zenpak get Game/Content/Paks Game/Config/DefaultGame.ini -o DefaultGame.ini"
    )]
    Get(get::Args),
    /// Report what a game's files say: engine releases, compression, encryption, signing, installed mods.
    #[command(
        after_help = "Examples:\n  zenpak doctor --game-dir \"C:/Games/MyGame\"\n  zenpak doctor --game-dir ~/Games/MyGame --aes-key 0x0123... --message-format json\n  zenpak doctor --game-dir ~/Games/MyGame --write   # inside the mod: sets [game] in mod.toml"
    )]
    Doctor(doctor::Args),
    /// Create a new mod repository in a new folder.
    #[command(
        after_help = "Examples:\n  zenpak new MyMod --engine 5.6 --project MyGame\n  zenpak new my-mod-repo --name MyMod --engine 5.3 --project Marvel"
    )]
    New(new::NewArgs),
    /// Create a mod repository in the current folder.
    #[command(
        after_help = "Examples:\n  zenpak init --engine 5.6 --project MyGame\n  zenpak init --name MyMod --engine 5.4 --project MyGame"
    )]
    Init(new::InitArgs),
    /// Copy cooked packages (with .uexp/.ubulk/...) into the mod's content folder where their package names say.
    #[command(
        after_help = "Examples:\n  zenpak add ~/Downloads/SM_Sword.uasset\n  zenpak add Exported/*.uasset --to mods/MyMod"
    )]
    Add(add::Args),
    /// Build (if needed), then make a release .zip (triplet under ~mods/ plus SHA256SUMS) and <zip>.sha256 beside it.
    #[command(
        after_help = "Examples:\n  zenpak package\n  zenpak package --message-format json --deny-warnings   # in CI"
    )]
    Package(release::PackageArgs),
    /// Build (if needed), then install the mod into a game's Content/Paks/~mods folder.
    #[command(
        after_help = "Examples:\n  zenpak install --game-dir \"C:/Games/MyGame\"\n  zenpak install --game-dir ~/Games/A --game-dir ~/Games/B --dry-run\n  ZENPAK_GAME_DIR=~/Games/MyGame zenpak install"
    )]
    Install(release::InstallArgs),
    /// Remove what `install` put into a game for this mod.
    #[command(
        after_help = "Examples:\n  zenpak uninstall --game-dir \"C:/Games/MyGame\"\n  zenpak uninstall --dry-run"
    )]
    Uninstall(release::UninstallArgs),
    /// Remove the build output zenpak wrote for this mod (nothing else).
    #[command(after_help = "Examples:\n  zenpak clean")]
    Clean(release::CleanArgs),
    /// Compare two Zen packages section by section.
    #[command(
        after_help = "Examples:\n  zenpak diff engine/Hero.uzenasset mine/Hero.uzenasset --engine 5.6"
    )]
    Diff(diff::Args),
    /// List the packages a classic Unreal package (.unr, .u, .utx, ...) needs, and check them in search folders.
    #[command(
        after_help = "Examples:\n  zenpak deps Maps/CTF-Face.unr --search System Textures Sounds Music"
    )]
    Deps(deps::Args),
    /// Convert a cooked legacy package into a Zen package.
    #[command(
        after_help = "Examples:\n  zenpak convert Hero.uasset --engine 5.6 -o Hero.uzenasset\n  zenpak convert SKM_Hero.uasset --engine 5.3 --profile marvel-rivals --mappings Game.usmap -o out/SKM_Hero.uzenasset"
    )]
    Convert(convert::Args),
    /// Print a shell completion script (bash, zsh, fish, powershell, elvish).
    #[command(
        after_help = "Examples:\n  zenpak completions bash > ~/.local/share/bash-completion/completions/zenpak\n  zenpak completions zsh > ~/.zfunc/_zenpak"
    )]
    Completions(shell::CompletionsArgs),
    /// Write man pages for zenpak and each command into a folder.
    #[command(after_help = "Examples:\n  zenpak man --out-dir ~/.local/share/man/man1")]
    Man(shell::ManArgs),
    /// Print the path of the user configuration file zenpak reads (`[games]` folders).
    #[command(
        after_help = "Examples:\n  zenpak config-path\n  ZENPAK_CONFIG=./zenpak.toml zenpak config-path"
    )]
    ConfigPath(shell::ConfigPathArgs),
    /// Commands on classic Unreal packages (.unr, .u, .utx, ...): consolidate.
    #[command(
        after_help = "Examples:\n  zenpak classic consolidate Maps/DM-Mine.unr --package MyTex --search Textures -o DM-Mine-fixed.unr\n  zenpak classic consolidate Maps/DM-Mine.unr --package MyTex --search Textures --dry-run"
    )]
    Classic(classic::Args),
    /// Write a container's or a game's packages as legacy .uasset/.uexp (Zen to legacy).
    #[command(
        after_help = "Examples:\n  zenpak extract Game/Content/Paks/pakchunk0-Windows.utoc -o out/ --engine 5.3 --filter \"/Game/Characters/**\" --with-deps\n  zenpak extract MyMod_P.utoc -o out/ --engine 5.6 --game Game/Content/Paks --force"
    )]
    Extract(extract::Args),
    /// Show every package and file several of a game's paks, containers and mods provide, and which one the game loads.
    #[command(
        after_help = "Examples:\n  zenpak conflicts --game-dir \"C:/Games/MyGame\"\n  zenpak conflicts --game-dir ~/Games/MyGame --mod target/MyMod_P.utoc --message-format json"
    )]
    Conflicts(conflicts::Args),
    /// Write a cooked package as a JSON document: every export's properties as a typed tree. Reads a .uasset/.uexp, or a package inside a container, pak or game (converted from Zen in memory).
    #[command(
        after_help = "Examples:\n  zenpak to-json Cooked/MyGame/Content/Data/DT_Weapons.uasset -o DT_Weapons.json\n  zenpak to-json DT_Weapons.uasset --engine 5.3 --mappings MyGame.usmap -o DT_Weapons.json\n  zenpak to-json target/MyMod_P.utoc /Game/Data/DT_Weapons --game-dir \"C:/Games/MyGame\" -o DT_Weapons.json\n  zenpak to-json --game-dir \"C:/Games/MyGame\" /Game/Data/DT_Weapons -o DT_Weapons.json\n  zenpak to-json Cooked/MyGame/Content/Cars/BP_Truck.uasset --schemas ../GameCooked/MyGame/Content -o BP_Truck.json\n  zenpak to-json --game-dir \"C:/Games/MyGame\" Cooked/MyGame/Content/Cars/BP_Truck.uasset -o BP_Truck.json\n\nA blueprint whose parent is another blueprint, a component of a blueprint's class or a user-defined struct has its layout in the package that defines it: looked for beside the package (its content folder), in each --schemas folder, in the nearest mod.toml's content root and, with --game-dir, in the game."
    )]
    ToJson(asset_json::ToJsonArgs),
    /// Write a cooked package (.uasset/.uexp, and bulk files) from a JSON document `to-json` wrote, edited or not.
    #[command(
        after_help = "Examples:\n  zenpak from-json DT_Weapons.json -o Cooked/MyGame/Content/Data/DT_Weapons.uasset\n  zenpak from-json BP_Truck.json -o Cooked/MyGame/Content/Cars/BP_Truck.uasset --schemas ../GameCooked/MyGame/Content"
    )]
    FromJson(asset_json::FromJsonArgs),
    /// Commands on the mod's patch files (`patches/**/*.toml`): vendor.
    #[command(
        after_help = "Examples:\n  zenpak patch vendor --game-dir \"C:/Games/MyGame\"\n  ZENPAK_GAME_DIR=~/Games/MyGame zenpak patch vendor"
    )]
    Patch(patch::Args),
    /// Merge several built mods into one: each asset several of them change carries every mod's changes (measured against the game's copy); overlapping changes stop the merge, or with --later-wins the later mod in mount order wins each.
    #[command(
        after_help = "Examples:\n  zenpak merge ~mods/ModA_P.pak ~mods/ModB_P.pak --game-dir \"C:/Games/MyGame\" -o MergedMod --engine 5.3 --mappings MyGame.usmap\n  zenpak merge A_P.utoc B_P.utoc --game-dir ~/Games/MyGame -o Merged --later-wins\n\nThe output folder is a mod repository (mod.toml, Cooked/) with its build in target/: install it instead of the mods merged."
    )]
    Merge(merge::Args),
}

impl Command {
    /// The command's name, for the JSON `finished` line.
    fn name(&self) -> &'static str {
        match self {
            Command::Build(_) => "build",
            Command::Check(_) => "check",
            Command::Inspect(_) => "inspect",
            Command::List(_) => "list",
            Command::Verify(_) => "verify",
            Command::Unpack(_) => "unpack",
            Command::Get(_) => "get",
            Command::Doctor(_) => "doctor",
            Command::New(_) => "new",
            Command::Init(_) => "init",
            Command::Add(_) => "add",
            Command::Package(_) => "package",
            Command::Install(_) => "install",
            Command::Uninstall(_) => "uninstall",
            Command::Clean(_) => "clean",
            Command::Diff(_) => "diff",
            Command::Deps(_) => "deps",
            Command::Convert(_) => "convert",
            Command::Completions(_) => "completions",
            Command::Man(_) => "man",
            Command::ConfigPath(_) => "config-path",
            Command::Classic(_) => "classic",
            Command::Extract(_) => "extract",
            Command::Conflicts(_) => "conflicts",
            Command::ToJson(_) => "to-json",
            Command::FromJson(_) => "from-json",
            Command::Patch(_) => "patch",
            Command::Merge(_) => "merge",
        }
    }
}

/// Runs the parsed command line and gives the exit code.
pub(crate) fn run(cli: Cli) -> ExitCode {
    let Some(command) = cli.command else {
        let out = Output::new(&cli.global, "version");
        if cli.version {
            out.data("version", &shell::version_info(), || {
                print!("{}", shell::version_text(cli.global.verbose))
            });
        }
        return out.finish(Ok(()));
    };
    let out = Output::new(&cli.global, command.name());
    let result = match command {
        Command::Build(args) => build::run(args, &out),
        Command::Check(args) => check::run(args, &out),
        Command::Inspect(args) => inspect::run(args, &out),
        Command::List(args) => list::run(args, &out),
        Command::Verify(args) => verify::run(args, &out),
        Command::Unpack(args) => unpack::run(args, &out),
        Command::Get(args) => get::run(args, &out),
        Command::Doctor(args) => doctor::run(args, &out),
        Command::New(args) => new::run_new(args, &out),
        Command::Init(args) => new::run_init(args, &out),
        Command::Add(args) => add::run(args, &out),
        Command::Package(args) => release::run_package(args, &out),
        Command::Install(args) if args.watch => watch::run(args, &out),
        Command::Install(args) => release::run_install(args, &out),
        Command::Uninstall(args) => release::run_uninstall(args, &out),
        Command::Clean(args) => release::run_clean(args, &out),
        Command::Diff(args) => diff::run(args, &out),
        Command::Deps(args) => deps::run(args, &out),
        Command::Convert(args) => convert::run(args, &out),
        Command::Classic(args) => classic::run(args, &out),
        Command::Extract(args) => extract::run(args, &out),
        Command::Conflicts(args) => conflicts::run(args, &out),
        Command::ToJson(args) => asset_json::run_to_json(args, &out),
        Command::FromJson(args) => asset_json::run_from_json(args, &out),
        Command::Patch(args) => patch::run(args, &out),
        Command::Merge(args) => merge::run(args, &out),
        Command::Completions(args) => shell::run_completions(args),
        Command::Man(args) => shell::run_man(args, &out),
        Command::ConfigPath(args) => shell::run_config_path(args, &out),
    };
    out.finish(result)
}
