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
    // Ctrl-C and SIGTERM: let a publication under way finish, remove every
    // temporary file, and leave the previous outputs as they were.
    let _ = ctrlc::set_handler(|| {
        zenpak::publish::on_interrupt();
        eprintln!("\nerror: interrupted; the previous output was left as it was");
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
    let message = error
        .render()
        .to_string()
        .lines()
        .next()
        .unwrap_or("invalid command line")
        .trim_start_matches("error: ")
        .to_string();
    cli::output::print_json_line(&serde_json::json!({
        "reason": "diagnostic", "level": "error", "code": "usage", "message": message,
        "file": null, "structure": [], "offset": null, "line": null, "column": null,
        "hint": "run `zenpak --help`",
    }));
    cli::output::print_json_line(&serde_json::json!({
        "reason": "finished", "command": null, "success": false, "exit_code": 2, "warnings": 0, "errors": 1,
    }));
    ExitCode::from(2)
}
