//! Key sources: where the inserted and the queried keys come from. A source is one file in
//! this folder (its [`Source`] and its `SOURCE` [`Registration`]) and its name in
//! `key_sources!`; a key is a u64 or a string of bytes ([`Key`]).
//!
//! A run inserts the source's keys for counters `0..n` and queries keys for counters
//! `n..n+q` (a file's keys are its lines from the first, for either role).
//!
//! Only a file can repeat a key: `random` is a bijection of the counter, `strings:` writes
//! every digit of it, and `strided:STEP` repeats only past `2^64 / 2^t` keys (2^t the
//! largest power of two dividing STEP). [`KeySpec::duplicates`] counts the repeats; a
//! repeated key sets nothing new, so predictions are made for the distinct keys.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

pub use file::KeyFile;
pub use random::KeySource;
pub use strings::{MAX_KEY_BYTES, StringFormat};

use crate::error::{Error, Result};

/// Registers the key sources: each name is a module of this folder holding a
/// `pub static SOURCE: Registration`. The order is the order `--help` lists them; the first
/// is the default.
macro_rules! key_sources {
    ($($module:ident),* $(,)?) => {
        $(mod $module;)*

        /// Every key source, in the order `--help` lists them; the first is the default.
        pub static SOURCES: &[&Registration] = &[$(&$module::SOURCE),*];
    };
}

key_sources!(random, sequential, strided, strings, file);

/// A key as a structure receives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Key<'a> {
    Int(u64),
    Bytes(&'a [u8]),
}

/// A source by its name: what `--keys NAME[:ARG]` accepts, and how it is built.
#[derive(Debug)]
pub struct Registration {
    pub name: &'static str,
    /// What the argument after `NAME:` is, and an example of it, if the source takes one.
    pub argument: Option<Argument>,
    pub help: &'static str,
    /// Builds the source from its argument (`""` for a source that takes none); `name`
    /// names the parameter in the error.
    pub build: fn(name: &'static str, argument: &str) -> Result<Arc<dyn Source>>,
}

/// The argument of a source, as `--help` and the errors name it.
#[derive(Debug)]
pub struct Argument {
    /// `STEP`, `FORMAT`, `PATH`.
    pub name: &'static str,
    /// A whole `--keys` value using it: `strided:8`.
    pub example: &'static str,
}

/// What a key source does. Counters `0..n` give the inserted keys and `n..n+q` the queried
/// ones; a source of u64 keys answers [`Source::ints`], the others [`Source::for_each_bytes`].
pub trait Source: fmt::Debug + Send + Sync {
    /// Written back as `--keys` takes it (`strided:8`).
    fn spec(&self) -> String;

    /// The integer keys from `seed`, as a function of the counter; None for byte keys.
    fn ints(&self, _seed: u64) -> Option<IntKeys> {
        None
    }

    /// Calls `each` on `count` byte keys from counter `first` on (a file: from line `first`;
    /// only called on a source whose [`Source::ints`] is None).
    fn for_each_bytes(
        &self,
        _name: &'static str,
        _first: u64,
        _count: u64,
        _each: &mut dyn FnMut(&[u8]) -> Result<()>,
    ) -> Result<()> {
        Ok(())
    }

    /// Writes the byte key of `counter` into `out` (cleared first), for a generated source of
    /// byte keys, which can make any key on demand; false (and nothing written) for the
    /// others.
    fn write_key(&self, _counter: u64, _out: &mut Vec<u8>) -> bool {
        false
    }

    /// True when distinct counters below `limit` give distinct keys, so that the counters
    /// `0..n` and `n..n+q` of one source cannot share a key.
    fn injective_below(&self, _limit: u64) -> bool {
        true
    }

    /// The number of keys the source holds (a file's lines, checked: a file, pipe or FIFO,
    /// readable, not empty, no line over 64 KiB; read once); None for a generated source,
    /// which has as many keys as asked.
    fn available(&self, _name: &'static str) -> Result<Option<u64>> {
        Ok(None)
    }

    /// True when every key of the source is inserted, so that queries need another source.
    fn exhausted_by_inserts(&self) -> bool {
        false
    }

    /// How many of the keys of counters `0..n` repeat an earlier one (see the module
    /// documentation); `None` when they were not counted (a key file past
    /// [`file::MAX_COUNTED_KEYS`] lines).
    fn duplicates(&self, _name: &'static str, _n: u64) -> Result<Option<u64>> {
        Ok(Some(0))
    }
}

/// The integer keys of a source, as a function of the counter.
#[derive(Clone)]
pub struct IntKeys(Arc<dyn Fn(u64) -> u64 + Send + Sync>);

impl IntKeys {
    pub fn new(key: impl Fn(u64) -> u64 + Send + Sync + 'static) -> Self {
        IntKeys(Arc::new(key))
    }

    #[inline]
    pub fn key(&self, counter: u64) -> u64 {
        (self.0)(counter)
    }
}

impl fmt::Debug for IntKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("IntKeys")
    }
}

/// A parsed key source; cloning shares it (a key file is read once, whichever clone reads
/// it first).
#[derive(Clone, Debug)]
pub struct KeySpec(Arc<dyn Source>);

impl Default for KeySpec {
    /// The first registered source, `random`.
    fn default() -> Self {
        KeySpec::parse("keys", SOURCES[0].name).expect("the first source takes no argument")
    }
}

impl PartialEq for KeySpec {
    fn eq(&self, other: &Self) -> bool {
        self.0.spec() == other.0.spec()
    }
}

impl Eq for KeySpec {}

impl KeySpec {
    /// Parses `NAME` or `NAME:ARG`; `name` names the parameter in the error.
    pub fn parse(name: &'static str, text: &str) -> Result<Self> {
        let (source, arg) = match text.split_once(':') {
            Some((source, arg)) => (source, Some(arg)),
            None => (text, None),
        };
        let registration = SOURCES
            .iter()
            .find(|s| s.name == source)
            .ok_or_else(|| Error::invalid(name, text, "unknown key source", allowed()))?;
        let needs =
            |what: &str| Error::invalid(name, text, format!("{source} takes {what}"), allowed());
        match (&registration.argument, arg) {
            (None, None) => (registration.build)(name, ""),
            (None, Some(_)) => Err(needs("no argument")),
            (Some(_), Some(arg)) if !arg.is_empty() => (registration.build)(name, arg),
            (Some(argument), _) => Err(needs(&format!(
                "a {} ({})",
                argument.name, argument.example
            ))),
        }
        .map(KeySpec)
    }

    /// True for the default source, `random`, which the trials run on their fastest path.
    pub fn is_default(&self) -> bool {
        self.0.spec() == SOURCES[0].name
    }

    /// The query source when none is given: the same source past the n inserted keys, or
    /// the default source for one whose keys are all inserted (a file).
    pub fn default_queries(&self) -> KeySpec {
        match self.0.exhausted_by_inserts() {
            true => KeySpec::default(),
            false => self.clone(),
        }
    }

    /// Calls `each` on `count` keys from counter `first` on (a file: its first `count`
    /// lines). Integer keys are given as [`Key::Int`], the others as [`Key::Bytes`].
    pub fn for_each(
        &self,
        name: &'static str,
        seed: u64,
        first: u64,
        count: u64,
        mut each: impl FnMut(Key<'_>) -> Result<()>,
    ) -> Result<()> {
        match self.0.ints(seed) {
            Some(keys) => {
                (first..first.saturating_add(count)).try_for_each(|c| each(Key::Int(keys.key(c))))
            }
            None => self
                .0
                .for_each_bytes(name, first, count, &mut |bytes| each(Key::Bytes(bytes))),
        }
    }
}

/// A parsed source is its [`Source`].
impl std::ops::Deref for KeySpec {
    type Target = dyn Source;
    fn deref(&self) -> &(dyn Source + 'static) {
        &*self.0
    }
}

impl Registration {
    /// `NAME` or `NAME:ARG`, as `--keys` takes it.
    fn usage(&self) -> String {
        match &self.argument {
            Some(argument) => format!("{}:{}", self.name, argument.name),
            None => self.name.to_string(),
        }
    }
}

/// The sources as `--keys` accepts them.
pub fn allowed() -> String {
    SOURCES
        .iter()
        .map(|s| s.usage())
        .collect::<Vec<_>>()
        .join(", ")
}

/// One line per source, for `--help`.
pub fn help() -> String {
    SOURCES.iter().fold(String::new(), |text, s| {
        format!("{text}\n  {:<16} {}", s.usage(), s.help)
    })
}

impl fmt::Display for KeySpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.spec())
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

/// What the duplicates mean for the predictions of an experiment that measures as the
/// pipeline does: every one is made for the distinct keys.
pub const PREDICTED_FOR_DISTINCT: &str =
    "every prediction is made for them (n stays the keys inserted, m/n their bits per key)";

/// The note on the duplicate keys among the first n inserted (a key file, or a strided
/// source past its period), ending with what they mean for the run's predictions
/// (`consequence`), or `None` when there are none or they were not counted.
pub fn duplicate_note(keys: &KeySpec, n: u64, consequence: &str) -> Option<String> {
    let duplicates = keys.duplicates("keys", n).ok().flatten()?;
    (duplicates > 0).then(|| {
        format!(
            "duplicate_keys = {duplicates} of n = {n} in {keys}: a repeated key sets no new bit, \
             so the filter holds {} distinct keys, and {consequence}",
            n - duplicates
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_strided_source_past_its_period_repeats_among_generated_keys() {
        let spec = |text: &str| KeySpec::parse("keys", text).unwrap();
        let strided = spec("strided:9223372036854775808");
        // 0, 2^63, 0, 2^63, 0: three repeats.
        assert_eq!(strided.duplicates("keys", 5).unwrap(), Some(3));
        assert_eq!(strided.duplicates("keys", 2).unwrap(), Some(0));
        assert_eq!(
            spec("strided:3").duplicates("keys", u64::MAX).unwrap(),
            Some(0)
        );
        assert_eq!(spec("random").duplicates("keys", 1 << 40).unwrap(), Some(0));
        let keys: Vec<u64> = (0..5).map(|c| strided::key(1 << 63, c)).collect();
        let distinct: std::collections::HashSet<_> = keys.iter().collect();
        assert_eq!(keys.len() - distinct.len(), 3);
    }
}
