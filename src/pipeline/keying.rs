//! The keys and index arithmetic of a measurement beyond the shape ([`Keying`]), and the
//! trials that need more than the default path: byte keys, and query keys that may repeat
//! inserted ones (counted in `query_overlap`, never as false positives).

use std::collections::HashMap;

use crate::error::{Error, Result};
use crate::hash::{IndexMath, prehash};
use crate::keys::{Key, KeySpec};
use crate::pipeline::measurement::{OnKeys, Setup, Threads, Trial, run_int_trial};
use crate::pipeline::uniformity::{ProbePairs, SAMPLE_KEYS};
use crate::structures::bloom::BloomFilter;
use crate::structures::{Filter, FilterKind};

/// Largest set of keys the overlap check holds: `min(n, queries)` keys.
pub const MAX_OVERLAP_KEYS: u64 = 50_000_000;

/// Where the keys come from and how they become bit positions: random keys and the
/// scheme's own arithmetic unless asked.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Keying {
    /// Inserted keys (`--keys`).
    pub keys: KeySpec,
    /// Query keys (`--query-keys`); None: [`KeySpec::default_queries`] of `keys`.
    pub query_keys: Option<KeySpec>,
    /// Probe scheme, reduction and index width; None: the scheme's own
    /// ([`crate::hash::HashScheme::default_math`]).
    pub math: Option<IndexMath>,
    /// The m asked for before `--m-round` changed it; None when it did not.
    pub m_requested: Option<u64>,
}

impl Keying {
    /// The query source in use.
    pub fn query_keys(&self) -> KeySpec {
        self.query_keys
            .unwrap_or_else(|| self.keys.default_queries())
    }

    /// True when no query key can equal an inserted one: one injective source, inserted
    /// keys from counters `0..n` and queries from `n..n+q`.
    pub fn disjoint(&self, n: u64, queries: u64) -> bool {
        self.keys == self.query_keys() && self.keys.injective_below(n.saturating_add(queries))
    }
}

/// The classic filter of a setup, with its index arithmetic.
pub fn classic(setup: &Setup) -> Result<BloomFilter> {
    let math = setup.keying.math.unwrap_or(setup.hash.default_math());
    BloomFilter::with_math(setup.m, setup.k, setup.hash, math, setup.hash_seed)
}

/// The filter of a setup, any structure.
pub fn build(setup: &Setup) -> Result<Box<dyn Filter>> {
    if setup.filter == FilterKind::CLASSIC {
        return Ok(Box::new(classic(setup)?));
    }
    setup
        .filter
        .build(setup.n, setup.m, setup.k, setup.hash, setup.hash_seed)
}

/// A trial whose keys are not both the default random ones: integer keys through the
/// default loops, byte keys one at a time; then the overlap is taken out of the count.
pub fn keyed_trial(setup: &Setup, threads: Threads, on_keys: &OnKeys<'_>) -> Result<Trial> {
    let keying = &setup.keying;
    let queried = keying.query_keys();
    let mut trial = match (keying.keys.ints(setup.seed), queried.ints(setup.seed)) {
        (Some(inserted), Some(queries)) => run_int_trial(
            setup,
            threads,
            on_keys,
            |c| inserted.key(c),
            |c| queries.key(c),
        )?,
        _ => byte_trial(setup, on_keys)?,
    };
    let overlap = overlap(setup)?;
    if overlap >= setup.queries {
        return Err(Error::invalid(
            "query_keys",
            queried,
            format!("all {} query keys were inserted", setup.queries),
            "query keys of which at least one was not inserted",
        ));
    }
    trial.query_overlap = overlap;
    trial.false_positives = trial.false_positives.saturating_sub(overlap);
    Ok(trial)
}

fn insert<F: Filter + ?Sized>(filter: &mut F, key: Key<'_>) {
    match key {
        Key::Int(x) => filter.insert(x),
        Key::Bytes(bytes) => filter.insert_bytes(bytes),
    }
}

fn contains<F: Filter + ?Sized>(filter: &F, key: Key<'_>) -> bool {
    match key {
        Key::Int(x) => filter.contains(x),
        Key::Bytes(bytes) => filter.contains_bytes(bytes),
    }
}

/// Inserts and queries a key at a time; the classic filter also gets its uniformity
/// diagnostic.
fn byte_trial(setup: &Setup, on_keys: &OnKeys<'_>) -> Result<Trial> {
    if setup.filter != FilterKind::CLASSIC {
        return byte_trial_on(&mut *build(setup)?, setup, on_keys);
    }
    let mut filter = classic(setup)?;
    let mut trial = byte_trial_on(&mut filter, setup, on_keys)?;
    let mut sample = ProbePairs::new(!setup.keying.keys.injective_below(setup.n));
    let count = setup.n.min(SAMPLE_KEYS);
    setup
        .keying
        .keys
        .for_each("keys", setup.seed, 0, count, |key| {
            sample.add(filter.family(), key);
            Ok(())
        })?;
    trial.uniformity_p = sample.uniformity_p(&filter);
    Ok(trial)
}

/// The trial of one filter; the hash is named with its pre-hash when the structure does not
/// take bytes.
fn byte_trial_on<F: Filter + ?Sized>(
    filter: &mut F,
    setup: &Setup,
    on_keys: &OnKeys<'_>,
) -> Result<Trial> {
    let keying = &setup.keying;
    keying
        .keys
        .for_each("keys", setup.seed, 0, setup.n, |key| {
            insert(filter, key);
            Ok(())
        })?;
    on_keys(setup.n);
    let mut positives = 0u64;
    keying
        .query_keys()
        .for_each("query_keys", setup.seed, setup.n, setup.queries, |key| {
            positives += u64::from(contains(filter, key));
            Ok(())
        })?;
    on_keys(setup.queries);
    let mut trial = Trial::of(filter, setup.n, positives);
    if !filter.hashes_bytes() {
        trial.hash = format!("{} (xxh3 pre-hash of byte keys)", trial.hash);
    }
    Ok(trial)
}

/// A key as the structure tells keys apart: its bytes for a classic filter whose family
/// hashes bytes (an integer as its 8 little-endian bytes), else the u64 it receives (a byte
/// key's [`prehash`]). Written into `out`.
fn identity(native_bytes: bool, key: Key<'_>, out: &mut Vec<u8>) {
    out.clear();
    match (key, native_bytes) {
        (Key::Int(x), _) => out.extend_from_slice(&x.to_le_bytes()),
        (Key::Bytes(bytes), true) => out.extend_from_slice(bytes),
        (Key::Bytes(bytes), false) => out.extend_from_slice(&prehash(bytes).to_le_bytes()),
    }
}

/// How many query keys were inserted (each repeat of a query counted): the smaller of the
/// two key sets is held, the larger streamed past it.
fn overlap(setup: &Setup) -> Result<u64> {
    let keying = &setup.keying;
    if keying.disjoint(setup.n, setup.queries) {
        return Ok(0);
    }
    let native = setup.filter == FilterKind::CLASSIC && setup.hash.hashes_bytes();
    let inserted = (keying.keys, "keys", 0, setup.n);
    let queried = (keying.query_keys(), "query_keys", setup.n, setup.queries);
    let (held, streamed, held_are_queries) = if setup.queries <= setup.n {
        (queried, inserted, true)
    } else {
        (inserted, queried, false)
    };
    if held.3 > MAX_OVERLAP_KEYS {
        return Err(Error::invalid(
            "query_keys",
            queried.0,
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
    held.0.for_each(held.1, setup.seed, held.2, held.3, |key| {
        identity(native, key, &mut buffer);
        *counts.entry(buffer.clone()).or_default() += 1;
        Ok(())
    })?;
    let mut overlap = 0u64;
    streamed
        .0
        .for_each(streamed.1, setup.seed, streamed.2, streamed.3, |key| {
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
