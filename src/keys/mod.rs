//! Key sources: where the inserted and the queried keys come from. A source is one file in
//! this folder and one line of [`SOURCES`]; a key is a u64 or a string of bytes ([`Key`]).
//!
//! A run inserts the source's keys for counters `0..n` and queries keys for counters
//! `n..n+q` (a file's keys are its lines from the first, for either role).
//!
//! Only a file can repeat a key: `random` is a bijection of the counter, `strings:` writes
//! every digit of it, and `strided:STEP` repeats only past `2^64 / 2^t` keys (2^t the
//! largest power of two dividing STEP). [`KeySpec::duplicates`] counts the repeats; a
//! repeated key sets nothing new, so predictions are made for the distinct keys.

mod file;
mod random;
mod sequential;
mod strided;
mod strings;

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

pub use file::KeyFile;
pub use random::KeySource;
pub use strings::{MAX_KEY_BYTES, StringFormat};

use crate::error::{Error, Result};

/// A key as a structure receives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Key<'a> {
    Int(u64),
    Bytes(&'a [u8]),
}

/// A source by its name: what `--keys NAME[:ARG]` accepts.
#[derive(Debug)]
pub struct Source {
    pub name: &'static str,
    /// What the argument after `NAME:` is, if any.
    pub argument: Option<&'static str>,
    pub help: &'static str,
}

/// Every key source, in the order `--help` lists them.
pub static SOURCES: &[Source] = &[
    Source {
        name: "random",
        argument: None,
        help: "pseudo-random u64 keys from --seed (the default)",
    },
    Source {
        name: "sequential",
        argument: None,
        help: "0, 1, 2, ... as u64",
    },
    Source {
        name: "strided",
        argument: Some("STEP"),
        help: "0, STEP, 2·STEP, ... as u64",
    },
    Source {
        name: "strings",
        argument: Some("FORMAT"),
        help: "the counter in a template, hashed as bytes: strings:user:{:06}",
    },
    Source {
        name: "file",
        argument: Some("PATH"),
        help: "one key per line, as bytes, read once (a file, pipe or FIFO); n is the number of lines unless --n takes fewer",
    },
];

/// A parsed key source. Copy: its text and argument live for the program (parsing leaks
/// them once, as `--filter NAME:ARG` does).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum KeySpec {
    #[default]
    Random,
    Sequential,
    Strided(u64),
    Strings(&'static str, &'static StringFormat),
    File(&'static KeyFile),
}

/// The integer keys of a source, as a function of the counter.
#[derive(Clone, Copy, Debug)]
pub enum IntKeys {
    Random(KeySource),
    Sequential,
    Strided(u64),
}

impl IntKeys {
    #[inline]
    pub fn key(&self, counter: u64) -> u64 {
        match self {
            IntKeys::Random(source) => source.key(counter),
            IntKeys::Sequential => sequential::key(counter),
            IntKeys::Strided(step) => strided::key(*step, counter),
        }
    }
}

impl KeySpec {
    /// Parses `NAME` or `NAME:ARG`; `name` names the parameter in the error.
    pub fn parse(name: &'static str, text: &str) -> Result<Self> {
        let (source, arg) = match text.split_once(':') {
            Some((source, arg)) => (source, Some(arg)),
            None => (text, None),
        };
        let needs =
            |what: &str| Error::invalid(name, text, format!("{source} takes {what}"), allowed());
        match (source, arg) {
            ("random", None) => Ok(KeySpec::Random),
            ("sequential", None) => Ok(KeySpec::Sequential),
            ("strided", Some(step)) => Ok(KeySpec::Strided(strided::parse(name, step)?)),
            ("strings", Some(format)) => {
                let parsed = StringFormat::parse(name, format)?;
                Ok(KeySpec::Strings(leak(format), Box::leak(Box::new(parsed))))
            }
            ("file", Some(path)) if !path.is_empty() => {
                Ok(KeySpec::File(Box::leak(Box::new(KeyFile::new(path)))))
            }
            ("random" | "sequential", Some(_)) => Err(needs("no argument")),
            ("strided", None) => Err(needs("a STEP (strided:8)")),
            ("strings", None) => Err(needs("a FORMAT (strings:user:{:06})")),
            ("file", _) => Err(needs("a PATH (file:keys.txt)")),
            _ => Err(Error::invalid(name, text, "unknown key source", allowed())),
        }
    }

    /// The integer keys, for the sources that make u64 keys.
    pub fn ints(self, seed: u64) -> Option<IntKeys> {
        match self {
            KeySpec::Random => Some(IntKeys::Random(KeySource::new(seed))),
            KeySpec::Sequential => Some(IntKeys::Sequential),
            KeySpec::Strided(step) => Some(IntKeys::Strided(step)),
            KeySpec::Strings(..) | KeySpec::File(_) => None,
        }
    }

    /// True when distinct counters below `limit` give distinct keys, so that the counters
    /// `0..n` and `n..n+q` of one source cannot share a key.
    pub fn injective_below(self, limit: u64) -> bool {
        match self {
            KeySpec::Strided(step) => {
                let twos = step.trailing_zeros();
                twos == 0 || limit <= u64::MAX >> twos
            }
            KeySpec::File(_) => false,
            _ => true,
        }
    }

    /// The lines of a file source (checked: a file, pipe or FIFO, readable, not empty, no
    /// line over 64 KiB; read once, here); None for a generated source, which has as many
    /// keys as asked.
    pub fn available(self, name: &'static str) -> Result<Option<u64>> {
        match self {
            KeySpec::File(file) => file.lines(name).map(Some),
            _ => Ok(None),
        }
    }

    /// The query source when none is given: the same source past the n inserted keys, or
    /// random keys for a file (whose lines are all inserted).
    pub fn default_queries(self) -> KeySpec {
        match self {
            KeySpec::File(_) => KeySpec::Random,
            other => other,
        }
    }

    /// Calls `each` on `count` keys from counter `first` on (a file: its first `count`
    /// lines). Integer keys are given as [`Key::Int`], the others as [`Key::Bytes`].
    pub fn for_each(
        self,
        name: &'static str,
        seed: u64,
        first: u64,
        count: u64,
        mut each: impl FnMut(Key<'_>) -> Result<()>,
    ) -> Result<()> {
        let counters = first..first.saturating_add(count);
        match self {
            KeySpec::Strings(_, format) => {
                let mut buffer = Vec::new();
                for counter in counters {
                    format.write(counter, &mut buffer);
                    each(Key::Bytes(&buffer))?;
                }
                Ok(())
            }
            KeySpec::File(file) => file.for_each(name, count, |line| each(Key::Bytes(line))),
            ints => {
                let keys = ints.ints(seed).ok_or_else(|| {
                    Error::invalid(name, ints, "not an integer source", allowed())
                })?;
                counters
                    .into_iter()
                    .try_for_each(|c| each(Key::Int(keys.key(c))))
            }
        }
    }
}

fn leak(text: &str) -> &'static str {
    Box::leak(text.to_string().into_boxed_str())
}

/// The sources as `--keys` accepts them.
pub fn allowed() -> String {
    SOURCES
        .iter()
        .map(|s| match s.argument {
            Some(argument) => format!("{}:{argument}", s.name),
            None => s.name.to_string(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// One line per source, for `--help`.
pub fn help() -> String {
    SOURCES.iter().fold(String::new(), |text, s| {
        let name = match s.argument {
            Some(argument) => format!("{}:{argument}", s.name),
            None => s.name.to_string(),
        };
        format!("{text}\n  {name:<16} {}", s.help)
    })
}

impl fmt::Display for KeySpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeySpec::Random => f.write_str("random"),
            KeySpec::Sequential => f.write_str("sequential"),
            KeySpec::Strided(step) => write!(f, "strided:{step}"),
            KeySpec::Strings(text, _) => write!(f, "strings:{text}"),
            KeySpec::File(file) => write!(f, "file:{}", file.path().display()),
        }
    }
}

impl FromStr for KeySpec {
    type Err = String;
    fn from_str(text: &str) -> std::result::Result<Self, String> {
        KeySpec::parse("keys", text).map_err(|e| match e {
            Error::InvalidParam {
                reason, allowed, ..
            } => format!("{reason} (allowed: {allowed})"),
            other => other.to_string(),
        })
    }
}

impl<'de> Deserialize<'de> for KeySpec {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

impl Serialize for KeySpec {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl KeySpec {
    /// How many of the keys of counters `0..n` repeat an earlier one (see the module
    /// documentation); `None` when they were not counted (a key file past
    /// [`file::MAX_COUNTED_KEYS`] lines).
    pub fn duplicates(self, name: &'static str, n: u64) -> Result<Option<u64>> {
        match self {
            KeySpec::File(file) => file.duplicates(name, n),
            KeySpec::Strided(step) => {
                let twos = step.trailing_zeros();
                let distinct = 1u64.checked_shl(64 - twos).unwrap_or(u64::MAX);
                Ok(Some(n.saturating_sub(distinct)))
            }
            _ => Ok(Some(0)),
        }
    }
}

/// The note on the duplicate keys among the first n inserted (a key file, or a strided
/// source past its period), or `None` when there are none or they were not counted.
pub fn duplicate_note(keys: KeySpec, n: u64) -> Option<String> {
    let duplicates = keys.duplicates("keys", n).ok().flatten()?;
    (duplicates > 0).then(|| {
        format!(
            "duplicate_keys = {duplicates} of n = {n} in {keys}: a repeated key sets no new bit, \
             so the filter holds {} distinct keys, and every prediction is made for them \
             (n stays the keys inserted, m/n their bits per key)",
            n - duplicates
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_strided_source_past_its_period_repeats_among_generated_keys() {
        let strided = KeySpec::Strided(1 << 63);
        // 0, 2^63, 0, 2^63, 0: three repeats.
        assert_eq!(strided.duplicates("keys", 5).unwrap(), Some(3));
        assert_eq!(strided.duplicates("keys", 2).unwrap(), Some(0));
        assert_eq!(
            KeySpec::Strided(3).duplicates("keys", u64::MAX).unwrap(),
            Some(0)
        );
        assert_eq!(
            KeySpec::Random.duplicates("keys", 1 << 40).unwrap(),
            Some(0)
        );
        let keys: Vec<u64> = (0..5).map(|c| strided::key(1 << 63, c)).collect();
        let distinct: std::collections::HashSet<_> = keys.iter().collect();
        assert_eq!(keys.len() - distinct.len(), 3);
    }
}
