//! The `bloomlab` command: parses arguments and hands them to the library.

mod cli;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    match cli::run(args) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::from(if error.is_usage() { 2 } else { 1 })
        }
    }
}
