//! The `bloomlab` command: parses arguments and hands them to the library.

mod cli;

use std::process::ExitCode;

fn main() -> ExitCode {
    let matches = cli::command().get_matches();
    match cli::run(&matches) {
        Ok(code) => code,
        Err(error) => {
            bloomlab::console::note(&format!("error: {error}"));
            ExitCode::from(if error.is_usage() { 2 } else { 1 })
        }
    }
}
