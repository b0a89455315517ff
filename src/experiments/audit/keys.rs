//! The audit's keys, `--keys` and `--query-keys` as the experiments take them
//! ([`crate::params::KeySources`]): the inserted keys are the source's counters `0..` (a
//! file's lines from the first), the absent ones the query source's counters from
//! [`super::ABSENT_FROM`] (a query file's lines from the first), so that a row does not depend
//! on the other loads. Integer keys go through the measurement loop on all cores; string keys
//! in batches ([`crate::structures::Membership::insert_bytes_many`]), which a program behind
//! `exec:` reads as text lines. Query keys that repeat inserted ones (possible only with a
//! file, or two different sources) are counted per load and taken out of the false
//! positives, as the experiments do ([`crate::pipeline::keying::overlap`]).

use std::collections::HashMap;
use std::ops::Range;

use crate::error::{Error, Result};
use crate::keys::{IntKeys, Key, KeySpec};
use crate::params::KeySources;
use crate::pipeline::run::{OnKeys, block_counters};
use crate::pipeline::{count_parallel, fill};
use crate::structures::{BATCH, Filter};

/// The keys of one role, by counter.
enum KeyAt {
    Ints(IntKeys),
    /// A generated source of byte keys ([`KeySpec::write_key`]).
    Strings(KeySpec),
    /// A file's first lines, end to end, and where each ends.
    Lines(Vec<u8>, Vec<usize>),
}

impl KeyAt {
    /// The keys of `spec` up to counter `first + count` (a file: its first `count` lines).
    fn of(spec: KeySpec, name: &'static str, seed: u64, count: u64) -> Result<Self> {
        if let Some(ints) = spec.ints(seed) {
            return Ok(KeyAt::Ints(ints));
        }
        match spec.write_key(0, &mut Vec::new()) {
            true => Ok(KeyAt::Strings(spec)),
            false => {
                let (mut bytes, mut ends) = (Vec::new(), Vec::new());
                spec.for_each(name, seed, 0, count, |key| {
                    if let Key::Bytes(line) = key {
                        bytes.extend_from_slice(line);
                        ends.push(bytes.len());
                    }
                    Ok(())
                })?;
                Ok(KeyAt::Lines(bytes, ends))
            }
        }
    }

    /// The key of counter `c` (a file: line `c`, from 0), written into `buffer` when it is
    /// made.
    fn key<'a>(&'a self, c: u64, buffer: &'a mut Vec<u8>) -> Key<'a> {
        match self {
            KeyAt::Ints(ints) => Key::Int(ints.key(c)),
            KeyAt::Strings(spec) => {
                spec.write_key(c, buffer);
                Key::Bytes(buffer)
            }
            KeyAt::Lines(bytes, ends) => {
                let end = ends[c as usize];
                let start = c.checked_sub(1).map_or(0, |p| ends[p as usize]);
                Key::Bytes(&bytes[start..end])
            }
        }
    }

    /// The keys of `counters` as owned bytes (for a batch of byte keys).
    fn bytes(&self, counters: impl Iterator<Item = u64>) -> Vec<Vec<u8>> {
        let mut buffer = Vec::new();
        counters
            .map(|c| match self.key(c, &mut buffer) {
                Key::Bytes(bytes) => bytes.to_vec(),
                Key::Int(x) => x.to_le_bytes().to_vec(),
            })
            .collect()
    }

    /// `answers[i]`: whether `filter` holds the key of `counters[i]`.
    fn ask(&self, filter: &dyn Filter, counters: &[u64], answers: &mut [bool]) -> Result<()> {
        match self {
            KeyAt::Ints(ints) => {
                let keys: Vec<u64> = counters.iter().map(|&c| ints.key(c)).collect();
                filter.contains_many(&keys, answers)
            }
            _ => {
                let keys = self.bytes(counters.iter().copied());
                let keys: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
                filter.contains_bytes_many(&keys, answers)
            }
        }
    }
}

/// The key of counter `c`, as a failure message names it.
pub enum Shown {
    Int(u64),
    Text(String),
}

/// The inserted and the absent keys of one audit.
pub struct AuditKeys {
    inserted: KeyAt,
    queried: KeyAt,
    /// The first counter of the absent keys: [`super::ABSENT_FROM`], or 0 for a query file.
    query_first: u64,
    /// The query keys (with their repeats) when they may repeat inserted ones.
    queries_held: Option<HashMap<Vec<u8>, u64>>,
}

impl AuditKeys {
    /// The keys of `sources` for `top` inserted keys and `queries` absent ones: a file
    /// shorter than that is refused before work.
    pub fn new(sources: &KeySources, seed: u64, top: u64, queries: u64) -> Result<Self> {
        let (inserted, queried) = (sources.keys(), sources.query_keys());
        let file_queries = Self::check(sources, top, queries)?;
        let query_first = file_queries.map_or(super::ABSENT_FROM, |_| 0);
        let disjoint = inserted == queried
            && inserted.injective_below(super::ABSENT_FROM.saturating_add(queries));
        let mut keys = AuditKeys {
            inserted: KeyAt::of(inserted, "keys", seed, top)?,
            queried: KeyAt::of(queried, "query_keys", seed, queries)?,
            query_first,
            queries_held: None,
        };
        if !disjoint {
            let mut held: HashMap<Vec<u8>, u64> = HashMap::new();
            let range = keys.queries(queries);
            for key in keys.queried.bytes(range) {
                *held.entry(key).or_default() += 1;
            }
            keys.queries_held = Some(held);
        }
        Ok(keys)
    }

    /// Refuses, before work, a key file shorter than the `top` keys inserted or a query file
    /// shorter than the `queries`; returns the query file's lines.
    fn check(sources: &KeySources, top: u64, queries: u64) -> Result<Option<u64>> {
        let inserted = sources.keys();
        if let Some(lines) = inserted.available("keys")?
            && lines < top
        {
            return Err(Error::invalid(
                "keys",
                inserted,
                format!(
                    "the audit inserts up to {top} keys (n times the largest load), and the key file has {lines} lines"
                ),
                format!("--n and --loads whose largest n x load is at most {lines}"),
            ));
        }
        sources.query_lines_for(queries)
    }

    /// Refuses, before work, sources of which every query key is among the `top` keys
    /// inserted (`strided:2^63`, one file as both `--keys` and `--query-keys`): no absent key
    /// would be left to count, at the largest load nor, once fewer are inserted, at the
    /// first load that inserts them all.
    pub fn refuse_all_inserted(&self, sources: &KeySources, top: u64, queries: u64) -> Result<()> {
        let Some(held) = &self.queries_held else {
            return Ok(());
        };
        let mut left = held.clone();
        for start in (0..top).step_by(BATCH) {
            for key in self.inserted.bytes(start..top.min(start + BATCH as u64)) {
                left.remove(&key);
            }
            if left.is_empty() {
                let (flag, spec) = match &sources.query_keys {
                    Some(spec) => ("query_keys", spec.clone()),
                    None => ("keys", sources.keys()),
                };
                return Err(Error::invalid(
                    flag,
                    spec,
                    format!(
                        "every one of the {queries} query keys is among the {top} keys inserted: no absent key is left to count"
                    ),
                    "key sources whose queries are not all inserted (another --query-keys, a step that does not wrap onto the inserted keys)",
                ));
            }
        }
        Ok(())
    }

    /// Whether the inserted keys are strings (the row's hash then names a pre-hash when the
    /// structure does not take bytes).
    pub fn strings(&self) -> bool {
        !matches!(self.inserted, KeyAt::Ints(_)) || !matches!(self.queried, KeyAt::Ints(_))
    }

    /// The counters of `queries` absent keys.
    pub fn queries(&self, queries: u64) -> Range<u64> {
        self.query_first..self.query_first + queries
    }

    /// The counters of block `block` of the `queries` absent keys ([`block_counters`]).
    pub fn block(&self, queries: u64, block: u64) -> Range<u64> {
        block_counters(self.query_first, queries, block)
    }

    /// Inserts the keys of `counters`, counting them on `on_keys` as they are sent; returns
    /// how many query keys they repeat (each repeat of a query counted once), which the
    /// held queries then forget.
    pub fn fill(
        &mut self,
        filter: &mut dyn Filter,
        counters: Range<u64>,
        on_keys: &OnKeys<'_>,
    ) -> Result<u64> {
        match &self.inserted {
            KeyAt::Ints(ints) => {
                fill(filter, counters.clone(), |c| ints.key(c), false, on_keys)?;
            }
            inserted => {
                for start in counters.clone().step_by(BATCH) {
                    let batch = start..counters.end.min(start + BATCH as u64);
                    let keys = inserted.bytes(batch);
                    let keys: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
                    on_keys(keys.len() as u64);
                    filter.insert_bytes_many(&keys)?;
                }
            }
        }
        let Some(held) = &mut self.queries_held else {
            return Ok(0);
        };
        let repeated = self.inserted.bytes(counters);
        Ok(repeated.iter().filter_map(|key| held.remove(key)).sum())
    }

    /// How many of the absent keys of `counters` the filter reports present.
    pub fn count(
        &self,
        filter: &dyn Filter,
        counters: Range<u64>,
        on_keys: &OnKeys<'_>,
    ) -> Result<u64> {
        if let KeyAt::Ints(ints) = &self.queried {
            return count_parallel(filter, counters, |c| ints.key(c), on_keys);
        }
        let mut present = 0;
        let mut answers = vec![false; BATCH];
        for start in counters.clone().step_by(BATCH) {
            let batch: Vec<u64> = (start..counters.end.min(start + BATCH as u64)).collect();
            let answers = &mut answers[..batch.len()];
            on_keys(batch.len() as u64);
            self.queried.ask(filter, &batch, answers)?;
            present += answers.iter().filter(|&&a| a).count() as u64;
        }
        Ok(present)
    }

    /// `answers[i]`: whether `filter` holds the inserted key of `counters[i]`.
    pub fn ask_inserted(
        &self,
        filter: &dyn Filter,
        counters: &[u64],
        answers: &mut [bool],
    ) -> Result<()> {
        self.inserted.ask(filter, counters, answers)
    }

    /// The inserted key of counter `c`, as a message names it.
    pub fn shown(&self, c: u64) -> Shown {
        let mut buffer = Vec::new();
        match self.inserted.key(c, &mut buffer) {
            Key::Int(x) => Shown::Int(x),
            Key::Bytes(bytes) => Shown::Text(format!("{:?}", String::from_utf8_lossy(bytes))),
        }
    }
}
