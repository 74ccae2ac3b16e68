//! The `zenpak` command line: argument parsing and printing only; all work
//! is done by the library.

mod cli;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    // Die quietly when stdout is a closed pipe (`zenpak list X.utoc | head`), as
    // Unix tools do, instead of panicking on the failed write.
    #[cfg(unix)]
    // SAFETY: restoring the default SIGPIPE action before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    // A file-size limit (`ulimit -f`) fails the write that reaches it
    // (EFBIG, the `file-too-large` error, temporaries removed) instead of
    // killing zenpak halfway through with SIGXFSZ.
    #[cfg(unix)]
    // SAFETY: ignoring a signal before any thread starts.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
    // Ctrl-C and SIGTERM: let a publication under way finish and remove
    // every temporary file: a build's previous outputs stay as they were,
    // the files a command finished stay whole.
    let _ = ctrlc::set_handler(|| {
        // `install --watch` waiting for a change stops by itself, cleanly.
        if cli::watch::stop_if_idle() {
            return;
        }
        zenpak::publish::on_interrupt();
        eprintln!("\nerror: interrupted; nothing was left half-written (a build keeps its previous output; unpack, extract and get keep the files they finished)");
        std::process::exit(130);
    });
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => return usage_error(error),
    };
    cli::run(cli)
}

/// A command line clap could not parse. With `--message-format json` the
/// error is a JSON diagnostic like every other; otherwise clap prints it
/// (help and version requests exit 0, usage errors 2).
fn usage_error(error: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    let wants_json = {
        let args: Vec<String> = std::env::args().collect();
        args.iter().any(|a| a == "--message-format=json")
            || args
                .windows(2)
                .any(|w| w[0] == "--message-format" && w[1] == "json")
    };
    let informational = matches!(
        error.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    );
    if !wants_json || informational {
        error.exit();
    }
    use clap::error::{ContextKind, ContextValue};
    let message = error
        .render()
        .to_string()
        .lines()
        .next()
        .unwrap_or("invalid command line")
        .trim_start_matches("error: ")
        .to_string();
    let strings = |kind| match error.get(kind) {
        Some(ContextValue::String(s)) => vec![s.clone()],
        Some(ContextValue::Strings(v)) => v.clone(),
        Some(ContextValue::StyledStr(s)) => vec![s.to_string()],
        Some(ContextValue::StyledStrs(v)) => v.iter().map(|s| s.to_string()).collect(),
        _ => Vec::new(),
    };
    // What clap knows beyond its first line, as fields: the argument it
    // stopped at, the values it accepts there, its did-you-mean, the usage line.
    let suggestion = strings(ContextKind::SuggestedArg)
        .into_iter()
        .chain(strings(ContextKind::SuggestedSubcommand))
        .chain(strings(ContextKind::SuggestedValue))
        .next();
    let usage = strings(ContextKind::Usage)
        .first()
        .map(|u| u.trim_start_matches("Usage: ").to_string());
    let hint = match &suggestion {
        Some(s) => format!("did you mean `{s}`? (`zenpak --help` lists every command and option)"),
        None => "run `zenpak --help`".to_string(),
    };
    cli::output::print_json_line(&serde_json::json!({
        "reason": "diagnostic", "level": "error", "code": zenpak::codes::USAGE, "message": message,
        "file": null, "structure": [], "offset": null, "line": null, "column": null,
        "hint": hint,
        "argument": strings(ContextKind::InvalidArg).first().or(strings(ContextKind::InvalidSubcommand).first()),
        "valid_values": strings(ContextKind::ValidValue),
        "suggestion": suggestion,
        "usage": usage,
    }));
    cli::output::print_json_line(&serde_json::json!({
        "reason": "finished", "command": null, "success": false, "exit_code": 2, "warnings": 0, "errors": 1,
    }));
    ExitCode::from(2)
}
