//! One file of `experiments/`: loading and validating it, and locating its errors by file,
//! line and key.
//!
//! The suite sees a definition through a narrow interface: its name (the file stem), the
//! command it names, its `[params]` as raw TOML, and [`Definition::run`]. The only code that
//! knows the experiment API is [`Parsed`].

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use indicatif::ProgressBar;
use serde::{Deserialize, Serialize};
use toml::Spanned;

use crate::error::{Error, Result};
use crate::experiments::{Outcome, Prepared, Registered, find, names};

/// What the bits check of an experiment must say.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Expectation {
    /// Every row matches its bits (and any verdict of the experiment passes).
    #[default]
    Pass,
    /// At least one row departs from its bits: the flawed-hash demonstration.
    Fail,
    /// Whether a row departs from its bits depends on the hash seed (a weak hash on
    /// structured keys fails for some seeds, not others): not judged. The same-seed `check`
    /// still compares every value exactly; `check --reseed` compares none.
    SeedDependent,
}

impl Expectation {
    pub fn name(self) -> &'static str {
        match self {
            Expectation::Pass => "pass",
            Expectation::Fail => "fail",
            Expectation::SeedDependent => "seed-dependent",
        }
    }
}

/// The keys of an experiment file; `params` is kept raw, for [`Parsed`] to read.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Head {
    command: Spanned<String>,
    #[serde(default)]
    description: String,
    #[serde(default)]
    expect_bits_check: Expectation,
    #[serde(default)]
    params: toml::Table,
}

/// The `[params]` table alone, read from the whole file so that error spans are the file's.
#[derive(Deserialize)]
struct ParamsOf {
    #[serde(default)]
    params: BTreeMap<String, Spanned<toml::Value>>,
}

/// The typed form of a definition: the registered experiment and its `[params]`, validated
/// at load time. The one place that knows the experiment API.
#[derive(Clone, Debug)]
struct Parsed {
    experiment: &'static dyn Registered,
    params: toml::Table,
}

impl std::fmt::Debug for dyn Registered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Parsed {
    /// Finds the command and validates the `[params]` of `source` (every key known, of its
    /// type, in its range), before anything runs.
    fn parse(command: &Spanned<String>, params: toml::Table, source: &Source) -> Result<Self> {
        let experiment = find(command.get_ref()).ok_or_else(|| {
            let reason = format!(
                "unknown experiment '{}' (allowed: {})",
                command.get_ref(),
                names().join(", ")
            );
            source.error_at(command.span().start, &reason)
        })?;
        let parsed = Parsed { experiment, params };
        let prepared = parsed.prepare(None).map_err(|e| source.locate(e))?;
        // The estimate behind `--yes`, which a file cannot give: refused when it is read.
        prepared
            .cost()
            .check(false)
            .map_err(|e| Error::Definition {
                path: source.path.to_path_buf(),
                message: format!("{e}"),
            })?;
        Ok(parsed)
    }

    /// The validated experiment, with the key and hash seeds replaced when `seeds` is given.
    fn prepare(&self, seeds: Option<(u64, u64)>) -> Result<Box<dyn Prepared>> {
        let mut params = self.params.clone();
        if let Some((seed, hash_seed)) = seeds {
            for (key, seed) in [("seed", seed), ("hash_seed", hash_seed)] {
                let value = toml::Value::Integer(seed.min(i64::MAX as u64) as i64);
                params.insert(key.into(), value);
            }
        }
        self.experiment.prepare_table(&params)
    }

    /// Runs the experiment, with the key and hash seeds replaced when `seeds` is given.
    fn run(&self, seeds: Option<(u64, u64)>, progress: &ProgressBar) -> Result<Outcome> {
        self.prepare(seeds)?.run(progress)
    }
}

/// Keys that the parameters accept under a second name, as (name in errors, name in files).
const KEY_ALIASES: [(&str, &str); 1] = [("bits_per_key", "bits_per_elem")];

/// The text of a file with its path, to name errors by file, line and key.
struct Source<'a> {
    path: &'a Path,
    text: &'a str,
}

impl Source<'_> {
    fn error(&self, message: String) -> Error {
        Error::Definition {
            path: self.path.to_path_buf(),
            message,
        }
    }

    /// An error at a byte offset: `line L: key `K` = V: message`, the key and value read
    /// from that line when it sets one.
    fn error_at(&self, offset: usize, message: &str) -> Error {
        let number = self.text[..offset.min(self.text.len())]
            .matches('\n')
            .count()
            + 1;
        let setting = self
            .text
            .lines()
            .nth(number - 1)
            .and_then(|line| line.split_once('='))
            .map(|(key, value)| (key.trim().trim_matches('"'), value.trim()))
            .filter(|(key, _)| !key.is_empty() && !key.starts_with('['))
            .map(|(key, value)| format!("key `{key}` = {value}: "))
            .unwrap_or_default();
        self.error(format!("line {number}: {setting}{}", plain_types(message)))
    }

    fn toml_error(&self, error: &toml::de::Error) -> Error {
        let message = error.message().trim();
        match error.span() {
            Some(span) => self.error_at(span.start, message),
            None => self.error(plain_types(message)),
        }
    }

    /// Turns a parameter error into one naming this file, the line and the key.
    fn locate(&self, error: Error) -> Error {
        let spans = toml::from_str::<ParamsOf>(self.text)
            .map(|file| file.params)
            .unwrap_or_default();
        if let Error::InvalidKey { key, message } = &error {
            return match spans.get(key) {
                Some(spanned) => self.error_at(spanned.span().start, message),
                None => self.error(format!("key `{key}`: {message}")),
            };
        }
        let Error::InvalidParam {
            name,
            value,
            reason,
            allowed,
        } = error
        else {
            return error;
        };
        let written = KEY_ALIASES
            .iter()
            .filter(|(canonical, _)| *canonical == name)
            .map(|(_, alias)| *alias)
            .chain([name])
            .find(|key| spans.contains_key(*key));
        let message = format!("{reason} (allowed: {allowed})");
        match written.and_then(|key| spans.get(key)) {
            Some(spanned) => self.error_at(spanned.span().start, &message),
            None => self.error(format!("key `{name}` = {value}: {message}")),
        }
    }
}

/// serde's names of the expected types in words: `expected u64` is "expected a whole number".
fn plain_types(message: &str) -> String {
    const WORDS: [(&str, &str); 5] = [
        ("expected u64", "expected a whole number ≥ 0"),
        ("expected u32", "expected a whole number ≥ 0"),
        ("expected f64", "expected a number"),
        ("expected a string", "expected a string in quotes"),
        ("expected a boolean", "expected true or false"),
    ];
    WORDS
        .iter()
        .fold(message.to_string(), |text, (serde, words)| {
            text.replace(serde, words)
        })
}

/// A loaded and validated definition: its name is the file stem.
#[derive(Clone, Debug)]
pub struct Definition {
    pub name: String,
    pub path: PathBuf,
    /// The subcommand the file names (`command = "sweep-k"`).
    pub command: String,
    pub description: String,
    pub expect_bits_check: Expectation,
    /// The `[params]` table as written.
    pub params: toml::Table,
    text: String,
    parsed: Parsed,
}

impl Definition {
    /// Reads, parses and validates one file; errors name the file, the line, the key and
    /// what was expected there.
    pub fn load(path: &Path) -> Result<Self> {
        let bytes = fs::read(path).map_err(|e| Error::io(path, e))?;
        Self::from_bytes(path, &bytes)
    }

    /// Parses and validates the contents of a file named `path`, as [`Definition::load`].
    pub fn from_bytes(path: &Path, bytes: &[u8]) -> Result<Self> {
        let text = String::from_utf8(bytes.to_vec()).map_err(|e| not_utf8(path, e))?;
        let source = Source { path, text: &text };
        let head: Head = toml::from_str(&text).map_err(|e| source.toml_error(&e))?;
        let parsed = Parsed::parse(&head.command, head.params.clone(), &source)?;
        let name = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default()
            .to_string();
        Ok(Definition {
            name,
            path: path.to_path_buf(),
            command: head.command.into_inner(),
            description: head.description,
            expect_bits_check: head.expect_bits_check,
            params: head.params,
            text,
            parsed,
        })
    }

    /// Runs the experiment, with the key and hash seeds replaced when `seeds` is given;
    /// a parameter it refuses is named by line and key.
    pub fn run(&self, seeds: Option<(u64, u64)>, progress: &ProgressBar) -> Result<Outcome> {
        let source = Source {
            path: &self.path,
            text: &self.text,
        };
        self.parsed
            .run(seeds, progress)
            .map_err(|e| source.locate(e))
    }

    /// Lines saying how the outcome misses this definition's expectation (the bits check of
    /// every row, and the experiment's verdicts); empty when it meets it.
    pub fn unmet(&self, outcome: &Outcome) -> Vec<String> {
        let bits = outcome.bits_failures();
        match self.expect_bits_check {
            Expectation::Pass => bits
                .into_iter()
                .chain(outcome.failures())
                .map(|line| format!("{}: {line}", self.name))
                .collect(),
            Expectation::Fail if bits.is_empty() => vec![format!(
                "{}: expected to fail the bits check, but every row matched its bits: the check has lost its teeth",
                self.name
            )],
            Expectation::Fail | Expectation::SeedDependent => Vec::new(),
        }
    }
}

fn not_utf8(path: &Path, error: std::string::FromUtf8Error) -> Error {
    let bytes = error.as_bytes();
    let valid = error.utf8_error().valid_up_to();
    let line_start = bytes[..valid]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let line = bytes[..valid].iter().filter(|&&b| b == b'\n').count() + 1;
    Error::Definition {
        path: path.to_path_buf(),
        message: format!(
            "line {line}: not UTF-8 text (byte 0x{:02X} at column {}); experiment files are UTF-8 TOML",
            bytes[valid],
            valid - line_start + 1
        ),
    }
}

/// Every `*.toml` in `dir`, by name, each read and validated before any runs; when several
/// are invalid the error lists them all.
pub fn load_definitions(dir: &Path) -> Result<Vec<Definition>> {
    let entries = fs::read_dir(dir).map_err(|e| Error::io(dir, e))?;
    let mut paths = Vec::new();
    for entry in entries {
        let path = entry.map_err(|e| Error::io(dir, e))?.path();
        if path.extension().is_some_and(|ext| ext == "toml") {
            paths.push(path);
        }
    }
    paths.sort();
    if paths.is_empty() {
        return Err(Error::Definition {
            path: dir.to_path_buf(),
            message: "no experiment files (*.toml)".into(),
        });
    }
    let (definitions, mut errors): (Vec<_>, Vec<_>) = paths
        .iter()
        .map(|p| Definition::load(p))
        .partition(Result::is_ok);
    match errors.len() {
        0 => Ok(definitions.into_iter().flatten().collect()),
        1 => Err(errors.remove(0).unwrap_err()),
        count => Err(Error::Definition {
            path: dir.to_path_buf(),
            message: errors.into_iter().filter_map(Result::err).fold(
                format!("{count} experiment files are invalid:"),
                |text, e| format!("{text}\n  {e}"),
            ),
        }),
    }
}
