//! Subcommands. Each lives in its own file with its arguments (`Args`) and
//! its `run`; this file only lists them and holds the global options.

use clap::{Parser, Subcommand, ValueEnum};

use zenpak::Result;

mod convert;
mod diff;
mod inspect;
mod inspect_zen;
mod key;
mod list;
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
    /// Show what a file holds: legacy or Zen package, container, pak, mappings, classic package.
    Inspect(inspect::Args),
    /// Convert a cooked legacy package into a Zen package.
    Convert(convert::Args),
    /// Compare two Zen packages section by section.
    Diff(diff::Args),
    /// List the chunks of an IoStore container (.utoc).
    List(list::Args),
    /// Check an IoStore container and its companion .pak.
    Verify(verify::Args),
    /// Extract an IoStore container's chunks and its pak's files into a folder.
    Unpack(unpack::Args),
}

pub fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Inspect(args) => inspect::run(args, &cli.global),
        Command::Diff(args) => diff::run(args, &cli.global),
        Command::Convert(args) => convert::run(args, &cli.global),
        Command::List(args) => list::run(args, &cli.global),
        Command::Verify(args) => verify::run(args, &cli.global),
        Command::Unpack(args) => unpack::run(args, &cli.global),
    }
}

/// Prints a value as pretty JSON on stdout.
pub fn print_json<T: serde::Serialize>(value: &T) -> Result<()> {
    let text = serde_json::to_string_pretty(value)
        .map_err(|e| zenpak::Error::other(format!("cannot encode JSON: {e}")))?;
    println!("{text}");
    Ok(())
}
