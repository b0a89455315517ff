//! The audit's keys, `--keys` and `--query-keys` as the experiments take them
//! ([`crate::params::KeySources`]): the inserted keys are the source's counters `0..` (a
//! file's lines from the first), the absent ones the query source's counters from
//! [`super::ABSENT_FROM`] (a query file's lines from the first), so that a row does not depend
//! on the other loads. They are inserted and counted through the pipeline's loop of any key
//! source ([`crate::pipeline::keying`]), which a program behind `exec:` reads as text lines.
//! Query keys that repeat inserted ones (possible only with a file, or two different sources)
//! are counted at each load and taken out of the false positives, as the experiments do
//! ([`overlap`]).

use std::collections::HashMap;
use std::ops::Range;

use crate::error::{Error, Result};
use crate::keys::Key;
use crate::params::KeySources;
use crate::pipeline::keying::{Keying, count_keys, fill_keys, overlap};
use crate::pipeline::run::{OnKeys, block_counters};
use crate::structures::Filter;

/// The key of counter `c`, as a failure message names it.
pub enum Shown {
    Int(u64),
    Text(String),
}

/// The inserted and the absent keys of one audit.
pub struct AuditKeys {
    keying: Keying,
    seed: u64,
    /// The first counter of the absent keys: [`super::ABSENT_FROM`], or 0 for a query file.
    query_first: u64,
}

impl AuditKeys {
    /// The keys of `sources` for `top` inserted keys and `queries` absent ones: a file
    /// shorter than that is refused before work.
    pub fn new(sources: &KeySources, seed: u64, top: u64, queries: u64) -> Result<Self> {
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
        sources.query_lines_for(queries)?;
        let keying = sources.keying();
        let query_first = keying.query_start(super::ABSENT_FROM);
        Ok(AuditKeys {
            keying,
            seed,
            query_first,
        })
    }

    /// Refuses, before work, sources of which every query key is among the `top` keys
    /// inserted (`strided:2^63`, one file as both `--keys` and `--query-keys`): no absent key
    /// would be left to count, at the largest load nor, once fewer are inserted, at the
    /// first load that inserts them all.
    pub fn refuse_all_inserted(&self, sources: &KeySources, top: u64, queries: u64) -> Result<()> {
        if self.overlap(top, queries, true)? < queries {
            return Ok(());
        }
        let (flag, spec) = match &sources.query_keys {
            Some(spec) => ("query_keys", spec.clone()),
            None => ("keys", sources.keys()),
        };
        Err(Error::invalid(
            flag,
            spec,
            format!(
                "every one of the {queries} query keys is among the {top} keys inserted: no absent key is left to count"
            ),
            "key sources whose queries are not all inserted (another --query-keys, a step that does not wrap onto the inserted keys)",
        ))
    }

    /// The counters of `queries` absent keys.
    pub fn queries(&self, queries: u64) -> Range<u64> {
        self.query_first..self.query_first + queries
    }

    /// The counters of block `block` of the `queries` absent keys ([`block_counters`]).
    pub fn block(&self, queries: u64, block: u64) -> Range<u64> {
        block_counters(self.query_first, queries, block)
    }

    /// How many of the `queries` absent keys are among the first `inserted` keys (each
    /// repeat of a query counted), as a structure that hashes bytes (`native`) or only
    /// their pre-hash tells keys apart ([`overlap`]).
    pub fn overlap(&self, inserted: u64, queries: u64, native: bool) -> Result<u64> {
        let queried = self.queries(queries);
        overlap(&self.keying, inserted, queried, self.seed, native)
    }

    /// Inserts the keys of `counters`, counting them on `on_keys` as they are sent.
    pub fn fill(
        &self,
        filter: &mut dyn Filter,
        counters: Range<u64>,
        on_keys: &OnKeys<'_>,
    ) -> Result<()> {
        let inserted = (&self.keying.keys, self.seed);
        fill_keys(filter, inserted, counters, false, on_keys).map(drop)
    }

    /// How many of the absent keys of `counters` the filter reports present.
    pub fn count(
        &self,
        filter: &dyn Filter,
        counters: Range<u64>,
        on_keys: &OnKeys<'_>,
    ) -> Result<u64> {
        let queried = self.keying.query_keys();
        count_keys(filter, (&queried, self.seed), counters, true, on_keys)
    }

    /// `answers[i]`: whether `filter` holds the inserted key of `counters[i]`.
    pub fn ask_inserted(
        &self,
        filter: &dyn Filter,
        counters: &[u64],
        answers: &mut [bool],
    ) -> Result<()> {
        if let Some(ints) = self.keying.keys.ints(self.seed) {
            let keys: Vec<u64> = counters.iter().map(|&c| ints.key(c)).collect();
            return filter.contains_many(&keys, answers);
        }
        let keys = self.inserted_bytes(counters)?;
        let keys: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
        filter.contains_bytes_many(&keys, answers)
    }

    /// The inserted byte keys of `counters`: made on demand, or a file's lines read up to the
    /// last asked.
    fn inserted_bytes(&self, counters: &[u64]) -> Result<Vec<Vec<u8>>> {
        let (source, mut buffer) = (&self.keying.keys, Vec::new());
        if source.write_key(0, &mut buffer) {
            let mut key = |c| source.write_key(c, &mut buffer).then(|| buffer.clone());
            return Ok(counters.iter().filter_map(|&c| key(c)).collect());
        }
        let mut lines: HashMap<u64, Vec<u8>> = counters.iter().map(|&c| (c, vec![])).collect();
        let (first, end) = (counters.iter().min(), counters.iter().max());
        let (first, end) = (first.copied().unwrap_or(0), end.map_or(0, |&c| c + 1));
        let mut at = first;
        source.for_each("keys", self.seed, first, end - first, |key| {
            if let (Some(line), Key::Bytes(bytes)) = (lines.get_mut(&at), key) {
                *line = bytes.to_vec();
            }
            at += 1;
            Ok(())
        })?;
        Ok(counters.iter().map(|c| lines[c].clone()).collect())
    }

    /// The inserted key of counter `c`, as a message names it.
    pub fn shown(&self, c: u64) -> Result<Shown> {
        if let Some(ints) = self.keying.keys.ints(self.seed) {
            return Ok(Shown::Int(ints.key(c)));
        }
        let key = self.inserted_bytes(&[c])?.concat();
        Ok(Shown::Text(format!("{:?}", String::from_utf8_lossy(&key))))
    }
}
