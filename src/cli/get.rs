//! `zenpak get PATH FILE [-o OUT]`: writes one file of a container, pak or
//! game folder (the copy the game would load), checked before it appears.

use std::path::PathBuf;

use zenpak::diagnostic::Diagnostic;
use zenpak::game::GameView;
use zenpak::Result;

use super::args::{KeyArgs, MaxOutputArgs};
use super::build::human_bytes;
use super::Output;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// A `.utoc`, a `.pak` or a game's `Paks` folder.
    pub(crate) path: PathBuf,
    /// The file, as `zenpak list` shows it (a package's stored `.uasset`
    /// path works too).
    pub(crate) file: String,
    /// Where to write it (default: its file name in the current folder;
    /// `-`: standard output).
    #[arg(short, long, value_name = "OUT")]
    pub(crate) output: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) key: KeyArgs,
    #[command(flatten)]
    pub(crate) max_output: MaxOutputArgs,
}

#[derive(serde::Serialize)]
struct Written<'a> {
    file: &'a str,
    output: &'a std::path::Path,
    bytes: u64,
}

pub(crate) fn run(args: Args, out: &Output) -> Result<()> {
    let view = GameView::open(&args.path, &args.key.keys()?)?;
    out.diagnostics(&view.diagnostics);
    let found_file = view.find_file(&args.file);
    let found = found_file.as_ref().map(|f| f.path.to_string());
    let output = match (&args.output, &found) {
        (Some(o), _) => o.clone(),
        (None, Some(p)) => PathBuf::from(p.rsplit('/').next().unwrap_or(p)),
        (None, None) => PathBuf::from(args.file.rsplit('/').next().unwrap_or(&args.file)),
    };
    if found
        .as_deref()
        .and_then(|p| p.rsplit_once('.'))
        .is_some_and(|(_, ext)| {
            ext.eq_ignore_ascii_case("uzenasset") || ext.eq_ignore_ascii_case("uzenmap")
        })
    {
        out.diagnostics(&[Diagnostic::note(
            "zen-package",
            "this is a package as the container stores it (Zen form), which the editor and legacy tools do not read",
        )
        .with_hint(format!(
            "`zenpak extract {} -o DIR --filter {}` writes it as legacy .uasset/.uexp files (add `--engine X.Y` outside a mod whose mod.toml names the engine)",
            args.path.display(),
            found_file
                .as_ref()
                .and_then(|f| f.stored_path)
                .and_then(zenpak::build::placement::package_name_of_stored)
                .unwrap_or_else(|| "<package name>".into())
        ))]);
    }
    // A remote chunk of an on-demand container is not written (get fails
    // on it below, `unsupported`): it weighs nothing against the budget.
    if let Some(f) = found_file.as_ref().filter(|f| !f.remote) {
        let large = args
            .max_output
            .budget()
            .check(f.size, view.input_bytes(), &args.path)?;
        out.diagnostics(&large.into_iter().collect::<Vec<_>>());
    }
    if output.as_os_str() == "-" {
        if out.is_json() {
            return Err(zenpak::Error::usage(
                "`-o -` writes the file to standard output, where --message-format json writes its messages",
            )
            .with_hint("write the file to a path with -o, or leave out --message-format json"));
        }
        let mut stdout = std::io::BufWriter::new(std::io::stdout().lock());
        let bytes = view.get_to(&args.file, &mut stdout)?;
        std::io::Write::flush(&mut stdout).map_err(|e| zenpak::Error::io("<stdout>", e))?;
        out.status(
            "Wrote",
            format!("{} to standard output", human_bytes(bytes)),
        );
        return Ok(());
    }
    let bytes = view.get(&args.file, &output)?;
    let written = Written {
        file: found.as_deref().unwrap_or(&args.file),
        output: &output,
        bytes,
    };
    out.data("written", &written, || {
        println!(
            "wrote {} ({})",
            zenpak::diagnostic::printable(&zenpak::diagnostic::path_text(&output)),
            human_bytes(bytes)
        )
    });
    Ok(())
}
