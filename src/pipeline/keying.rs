//! The keys of a measurement ([`Keying`]), the loop of any key source ([`fill_keys`],
//! [`count_keys`]: integer keys through [`crate::pipeline::run`], byte keys in batches), and
//! the query keys that repeat inserted ones ([`overlap`]: counted in `query_overlap`, never
//! as false positives).

use std::collections::HashMap;
use std::ops::Range;

use crate::error::{Error, Result};
use crate::hash::prehash;
use crate::keys::{Key, KeySpec};
use crate::pipeline::run::{OnKeys, count, count_parallel, fill};
use crate::structures::{BATCH, Filter};

/// Largest set of keys the overlap check holds: `min(n, queries)` keys.
pub const MAX_OVERLAP_KEYS: u64 = 50_000_000;

/// Where the inserted and the query keys come from: random keys unless asked.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Keying {
    /// Inserted keys (`--keys`).
    pub keys: KeySpec,
    /// Query keys (`--query-keys`); None: [`KeySpec::default_queries`] of `keys`.
    pub query_keys: Option<KeySpec>,
}

impl Keying {
    /// The query source in use.
    pub fn query_keys(&self) -> KeySpec {
        self.query_keys
            .clone()
            .unwrap_or_else(|| self.keys.default_queries())
    }

    /// The counter of the first query key of a run of n inserted keys: n, or 0 for a query
    /// file (its lines from the first).
    pub fn query_start(&self, n: u64) -> u64 {
        match self.query_keys().exhausted_by_inserts() {
            true => 0,
            false => n,
        }
    }

    /// True when both sources give integer keys.
    pub fn ints(&self, seed: u64) -> bool {
        self.keys.ints(seed).is_some() && self.query_keys().ints(seed).is_some()
    }

    /// True when no query key can equal an inserted one: one injective source, inserted
    /// keys from counters `0..n` and queries from `n..n+q`.
    pub fn disjoint(&self, n: u64, queries: u64) -> bool {
        self.keys == self.query_keys() && self.keys.injective_below(n.saturating_add(queries))
    }
}

/// Inserts the keys of `counters` of `source`: integer keys through [`fill`] (on all cores
/// when `parallel` and the structure can), byte keys [`BATCH`] at a time. Returns whether
/// they went in on all cores.
pub fn fill_keys<F: Filter + ?Sized>(
    filter: &mut F,
    (source, seed): (&KeySpec, u64),
    counters: Range<u64>,
    parallel: bool,
    on_keys: &OnKeys<'_>,
) -> Result<bool> {
    if let Some(ints) = source.ints(seed) {
        return fill(filter, counters, |c| ints.key(c), parallel, on_keys);
    }
    byte_batches(source, "keys", counters, |keys| {
        on_keys(keys.len() as u64);
        filter.insert_bytes_many(keys)
    })?;
    Ok(false)
}

/// How many of the query keys of `counters` of `source` the filter reports present:
/// integer keys through [`count`] ([`count_parallel`] when `parallel`), byte keys [`BATCH`]
/// at a time.
pub fn count_keys<F: Filter + Sync + ?Sized>(
    filter: &F,
    (source, seed): (&KeySpec, u64),
    counters: Range<u64>,
    parallel: bool,
    on_keys: &OnKeys<'_>,
) -> Result<u64> {
    match source.ints(seed) {
        Some(ints) if parallel => count_parallel(filter, counters, |c| ints.key(c), on_keys),
        Some(ints) => count(filter, counters, |c| ints.key(c), on_keys),
        None => {
            let mut present = 0;
            let mut answers = vec![false; BATCH];
            byte_batches(source, "query_keys", counters, |keys| {
                on_keys(keys.len() as u64);
                let answers = &mut answers[..keys.len()];
                filter.contains_bytes_many(keys, answers)?;
                present += answers.iter().filter(|&&a| a).count() as u64;
                Ok(())
            })?;
            Ok(present)
        }
    }
}

/// Calls `each` on the byte keys of `counters` of `source`, [`BATCH`] at a time.
fn byte_batches(
    source: &KeySpec,
    name: &'static str,
    counters: Range<u64>,
    mut each: impl FnMut(&[&[u8]]) -> Result<()>,
) -> Result<()> {
    let (mut bytes, mut ends) = (Vec::new(), Vec::with_capacity(BATCH));
    let mut flush = |bytes: &mut Vec<u8>, ends: &mut Vec<usize>| {
        let starts = std::iter::once(0).chain(ends.iter().copied());
        let keys: Vec<&[u8]> = starts.zip(&*ends).map(|(a, &b)| &bytes[a..b]).collect();
        let done = each(&keys);
        bytes.clear();
        ends.clear();
        done
    };
    let count = counters.end - counters.start;
    source.for_each(name, 0, counters.start, count, |key| {
        if let Key::Bytes(key) = key {
            bytes.extend_from_slice(key);
            ends.push(bytes.len());
        }
        match ends.len() {
            BATCH => flush(&mut bytes, &mut ends),
            _ => Ok(()),
        }
    })?;
    match ends.len() {
        0 => Ok(()),
        _ => flush(&mut bytes, &mut ends),
    }
}

/// A key as the structure tells keys apart: its bytes for a structure that hashes bytes (an integer as its 8 little-endian bytes), else the u64 it receives (a byte
/// key's [`prehash`]). Written into `out`.
fn identity(native_bytes: bool, key: Key<'_>, out: &mut Vec<u8>) {
    out.clear();
    match (key, native_bytes) {
        (Key::Int(x), _) => out.extend_from_slice(&x.to_le_bytes()),
        (Key::Bytes(bytes), true) => out.extend_from_slice(bytes),
        (Key::Bytes(bytes), false) => out.extend_from_slice(&prehash(bytes).to_le_bytes()),
    }
}

/// How many of the query keys of counters `queried` were inserted (each repeat of a query
/// counted): the smaller of the two key sets is held, the larger streamed past it.
pub fn overlap(
    keying: &Keying,
    n: u64,
    queried: Range<u64>,
    seed: u64,
    native: bool,
) -> Result<u64> {
    let queries = queried.end - queried.start;
    if keying.disjoint(n, queried.end - n.min(queried.end)) {
        return Ok(0);
    }
    let inserted = (keying.keys.clone(), "keys", 0, n);
    let queried = (keying.query_keys(), "query_keys", queried.start, queries);
    let (held, streamed, held_are_queries) = if queries <= n {
        (queried, inserted, true)
    } else {
        (inserted, queried, false)
    };
    if held.3 > MAX_OVERLAP_KEYS {
        return Err(Error::invalid(
            "query_keys",
            keying.query_keys(),
            format!(
                "checking which query keys were inserted would hold {} keys",
                held.3
            ),
            format!(
                "min(n, queries) <= {MAX_OVERLAP_KEYS}, or query keys from the inserted source past n"
            ),
        ));
    }
    let mut counts: HashMap<Vec<u8>, u64> = HashMap::new();
    let mut buffer = Vec::new();
    held.0.for_each(held.1, seed, held.2, held.3, |key| {
        identity(native, key, &mut buffer);
        *counts.entry(buffer.clone()).or_default() += 1;
        Ok(())
    })?;
    let mut overlap = 0u64;
    streamed
        .0
        .for_each(streamed.1, seed, streamed.2, streamed.3, |key| {
            identity(native, key, &mut buffer);
            if held_are_queries {
                overlap += counts.remove(buffer.as_slice()).unwrap_or(0);
            } else if counts.contains_key(buffer.as_slice()) {
                overlap += 1;
            }
            Ok(())
        })?;
    Ok(overlap)
}
