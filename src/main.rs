//! The `tracegate` binary: parse arguments, call the library, map the outcome
//! to an exit code. Everything else lives in the library.

mod cli;

use std::process::ExitCode;

fn main() -> ExitCode {
    cli::run()
}
