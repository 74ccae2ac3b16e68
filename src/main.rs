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
    let args = cli::Cli::parse();
    match cli::run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err}");
            ExitCode::from(err.exit_code())
        }
    }
}
