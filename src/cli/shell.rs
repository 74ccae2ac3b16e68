//! `zenpak completions SHELL`, `zenpak man`, `zenpak config-path`, and
//! `zenpak --version [--verbose]`.

use std::path::PathBuf;

use clap::CommandFactory;
use serde::Serialize;
use zenpak::{EngineVersion, Error, Result};

use super::output::Output;
use super::Cli;

#[derive(Debug, clap::Args)]
pub(crate) struct CompletionsArgs {
    /// The shell to complete for.
    pub(crate) shell: clap_complete::Shell,
}

#[derive(Debug, clap::Args)]
pub(crate) struct ManArgs {
    /// Folder to write `zenpak.1` and `zenpak-<command>.1` into.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub(crate) out_dir: PathBuf,
}

pub(crate) fn run_completions(args: CompletionsArgs) -> Result<()> {
    let mut command = Cli::command();
    let mut bytes = Vec::new();
    clap_complete::generate(args.shell, &mut command, "zenpak", &mut bytes);
    super::output::write_stdout(&String::from_utf8_lossy(&bytes));
    Ok(())
}

pub(crate) fn run_man(args: ManArgs, out: &Output) -> Result<()> {
    std::fs::create_dir_all(&args.out_dir).map_err(|e| Error::io(&args.out_dir, e))?;
    let command = Cli::command();
    let mut written = Vec::new();
    let mut pages = vec![("zenpak".to_string(), command.clone())];
    for sub in command.get_subcommands() {
        pages.push((
            format!("zenpak-{}", sub.get_name()),
            sub.clone().name(format!("zenpak-{}", sub.get_name())),
        ));
    }
    for (name, page) in pages {
        let path = args.out_dir.join(format!("{name}.1"));
        let mut bytes = Vec::new();
        clap_mangen::Man::new(page)
            .render(&mut bytes)
            .map_err(|e| Error::io(&path, e))?;
        zenpak::publish::write_file(&path, |f| {
            use std::io::Write;
            f.write_all(&bytes).map_err(|e| Error::io(f.path(), e))
        })?;
        written.push(path.display().to_string());
    }
    out.data("man-pages", &written, || {
        out.status(
            "Wrote",
            format!(
                "{} man pages into {}",
                written.len(),
                args.out_dir.display()
            ),
        )
    });
    Ok(())
}

#[derive(Debug, clap::Args)]
pub(crate) struct ConfigPathArgs {}

#[derive(Serialize)]
struct ConfigPathLine {
    path: String,
    exists: bool,
}

/// Prints the user configuration file zenpak reads (`ZENPAK_CONFIG`, else
/// `zenpak/config.toml` in the system's configuration folder), whether or
/// not it exists yet.
pub(crate) fn run_config_path(_args: ConfigPathArgs, out: &Output) -> Result<()> {
    let path = zenpak::release::UserConfig::path().ok_or_else(|| {
        Error::usage("this system has no user configuration folder")
            .with_hint("set ZENPAK_CONFIG to the configuration file to use")
    })?;
    let line = ConfigPathLine {
        path: path.display().to_string(),
        exists: path.is_file(),
    };
    out.data("config-path", &line, || {
        super::output::write_stdout(&format!("{}\n", line.path))
    });
    Ok(())
}

#[derive(Serialize)]
pub(crate) struct VersionInfo {
    version: &'static str,
    commit: &'static str,
    engines: Vec<&'static str>,
    repository: &'static str,
}

pub(crate) fn version_info() -> VersionInfo {
    VersionInfo {
        version: env!("CARGO_PKG_VERSION"),
        commit: env!("ZENPAK_COMMIT"),
        engines: EngineVersion::ALL.iter().map(|v| v.as_str()).collect(),
        repository: env!("CARGO_PKG_REPOSITORY"),
    }
}

pub(crate) fn version_text(verbose: bool) -> String {
    let info = version_info();
    if !verbose {
        return format!("zenpak {}\n", info.version);
    }
    format!(
        "zenpak {}\ncommit: {}\nengines: {}\nrepository: {}\n",
        info.version,
        info.commit,
        info.engines.join(", "),
        info.repository
    )
}
