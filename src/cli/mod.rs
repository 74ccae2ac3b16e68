//! Subcommands. Each lives in its own file with its arguments (`Args`) and
//! its `run`; this file only lists them and holds the global options.

use clap::{Parser, Subcommand, ValueEnum};

use zenpak::Result;

mod build;
mod check;
mod convert;
mod deps;
mod diff;
mod extract;
mod inspect;
mod inspect_classic;
mod inspect_zen;
mod key;
mod list;
mod new;
mod release;
mod unpack;
mod verify;

/// How results and diagnostics are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum MessageFormat {
    /// Text for people.
    #[default]
    Human,
    /// One JSON object per line, for CI.
    Json,
}

/// Options every subcommand understands.
#[derive(Debug, Clone, clap::Args)]
pub struct GlobalOptions {
    /// Print nothing but errors.
    #[arg(short, long, global = true)]
    pub quiet: bool,
    /// Output format of messages.
    #[arg(long, value_enum, default_value_t = MessageFormat::Human, global = true)]
    pub message_format: MessageFormat,
}

#[derive(Debug, Parser)]
#[command(
    name = "zenpak",
    version,
    about = "Build Unreal Engine mods into IoStore containers (.utoc/.ucas/.pak)"
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalOptions,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Build the mod of the nearest mod.toml into <name>_P.utoc/.ucas/.pak.
    Build(build::Args),
    /// Check the manifest and content without writing anything.
    Check(check::Args),
    /// Show what a file holds: legacy or Zen package, container, pak, mappings, classic package.
    Inspect(inspect::Args),
    /// List the chunks of an IoStore container (.utoc).
    List(list::Args),
    /// Check an IoStore container and its companion .pak.
    Verify(verify::Args),
    /// Extract an IoStore container's chunks and its pak's files into a folder.
    Unpack(unpack::Args),
    /// Create a new mod repository in a new folder.
    New(new::NewArgs),
    /// Create a mod repository in the current folder.
    Init(new::InitArgs),
    /// Make a release .zip of the built mod (triplet under ~mods/ plus SHA256SUMS).
    Package(release::PackageArgs),
    /// Copy the built mod into a game's Content/Paks/~mods folder.
    Install(release::InstallArgs),
    /// Remove build output.
    Clean(release::CleanArgs),
    /// Compare two Zen packages section by section.
    Diff(diff::Args),
    /// List the packages a classic Unreal package (.unr, .u, .utx, ...) needs, and check them in search folders.
    Deps(deps::Args),
    /// Convert a cooked legacy package into a Zen package.
    Convert(convert::Args),
    /// Write a container's packages as legacy .uasset/.uexp (Zen to legacy).
    Extract(extract::Args),
}

pub fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Build(args) => build::run(args, &cli.global),
        Command::Check(args) => check::run(args, &cli.global),
        Command::Inspect(args) => inspect::run(args, &cli.global),
        Command::List(args) => list::run(args, &cli.global),
        Command::Verify(args) => verify::run(args, &cli.global),
        Command::Unpack(args) => unpack::run(args, &cli.global),
        Command::New(args) => new::run_new(args, &cli.global),
        Command::Init(args) => new::run_init(args, &cli.global),
        Command::Package(args) => release::run_package(args, &cli.global),
        Command::Install(args) => release::run_install(args, &cli.global),
        Command::Clean(args) => release::run_clean(args, &cli.global),
        Command::Diff(args) => diff::run(args, &cli.global),
        Command::Deps(args) => deps::run(args, &cli.global),
        Command::Convert(args) => convert::run(args, &cli.global),
        Command::Extract(args) => extract::run(args, &cli.global),
    }
}

/// How a command prints JSON, if at all: `--message-format json` asks for
/// one line, a command's own `--json` for pretty JSON.
#[derive(Debug, Clone, Copy)]
pub enum JsonStyle {
    Line,
    Pretty,
}

impl JsonStyle {
    pub fn choose(global: &GlobalOptions, json_flag: bool) -> Option<JsonStyle> {
        match (global.message_format, json_flag) {
            (MessageFormat::Json, _) => Some(JsonStyle::Line),
            (_, true) => Some(JsonStyle::Pretty),
            _ => None,
        }
    }

    pub fn print<T: serde::Serialize>(self, value: &T) -> Result<()> {
        match self {
            JsonStyle::Line => print_json_line(value),
            JsonStyle::Pretty => print_json(value),
        }
    }
}

/// Prints one JSON object on one line of stdout (cargo's `--message-format json` style).
pub fn print_json_line<T: serde::Serialize>(value: &T) -> Result<()> {
    let text = serde_json::to_string(value).map_err(zenpak::Error::json)?;
    println!("{text}");
    Ok(())
}

/// Prints a value as pretty JSON on stdout.
pub fn print_json<T: serde::Serialize>(value: &T) -> Result<()> {
    let text = serde_json::to_string_pretty(value).map_err(zenpak::Error::json)?;
    println!("{text}");
    Ok(())
}
