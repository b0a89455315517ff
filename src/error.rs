//! Typed errors at the library boundary.

use std::path::PathBuf;

/// Everything the library can refuse or fail at.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A parameter outside its allowed range; `name` is the snake_case field name,
    /// shown as the matching `--flag`.
    #[error("{} {value}: {reason} (allowed: {allowed})", flag_name(name))]
    InvalidParam {
        name: &'static str,
        value: String,
        reason: String,
        allowed: String,
    },
    /// An environment variable outside its allowed range, refused like a flag.
    #[error("{name}={value:?}: {reason} (allowed: {allowed})")]
    InvalidEnv {
        name: &'static str,
        value: String,
        reason: String,
        allowed: String,
    },
    /// An experiment-file key that is unknown or holds a value of the wrong type.
    #[error("key `{key}`: {message}")]
    InvalidKey { key: String, message: String },
    /// An experiment definition that cannot be read or does not parse.
    #[error("{}: {message}", path.display())]
    Definition { path: PathBuf, message: String },
    /// A file that could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A committed results file that does not match what the experiment produces.
    #[error("{}: {message}", path.display())]
    Results { path: PathBuf, message: String },
    /// An operation the structure does not support, such as deleting from a Bloom filter.
    #[error("the {filter} filter cannot {operation} (structures that can: {supported})")]
    Unsupported {
        filter: &'static str,
        operation: &'static str,
        supported: String,
    },
    /// A peer crate asked for in a build without the feature that brings it.
    #[error(
        "--filter {filter} needs the `{feature}` feature, which this build leaves out (build with `--features {feature}`, on by default)"
    )]
    NotBuilt {
        filter: &'static str,
        feature: &'static str,
    },
    /// A program behind `--filter exec:COMMAND` that broke the protocol (docs/PROTOCOL.md) or
    /// refused: `command` is the program's command line, `message` what bloomlab sent and got;
    /// `refused` when the program answered the protocol's error reply (its library's refusal).
    #[error("exec program `{command}`: {message}")]
    Exec {
        command: String,
        message: String,
        refused: bool,
    },
    /// A library behind a structure that refused its keys (a static filter whose
    /// construction failed): a finding about the library, which audit records as a refusal.
    #[error("the {filter} filter refused: {message}")]
    Refused {
        filter: &'static str,
        message: String,
    },
    /// A partial file of a sharded run that `merge` refuses: of another build or command,
    /// a unit missing or given twice, a filter built differently.
    #[error("{}: {message}", path.display())]
    Part { path: PathBuf, message: String },
    /// An output format or backend that cannot encode what was asked.
    #[error("{0}")]
    Output(String),
}

/// The command-line spelling of a parameter: `bits_per_key` → `--bits-per-key`.
pub fn flag_name(name: &str) -> String {
    format!("--{}", name.replace('_', "-"))
}

impl Error {
    /// Shorthand for [`Error::InvalidParam`].
    pub fn invalid(
        name: &'static str,
        value: impl ToString,
        reason: impl Into<String>,
        allowed: impl Into<String>,
    ) -> Self {
        Error::InvalidParam {
            name,
            value: value.to_string(),
            reason: reason.into(),
            allowed: allowed.into(),
        }
    }

    /// True for errors caused by the caller's input (exit code 2 at the CLI).
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            Error::InvalidParam { .. }
                | Error::InvalidEnv { .. }
                | Error::InvalidKey { .. }
                | Error::Definition { .. }
                | Error::NotBuilt { .. }
                | Error::Part { .. }
        )
    }

    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}

/// Result alias for the library.
pub type Result<T, E = Error> = std::result::Result<T, E>;
