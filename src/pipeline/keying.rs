//! The keys of a measurement ([`Keying`]), and the query keys that repeat inserted ones ([`overlap`]: counted in `query_overlap`, never as
//! false positives).

use std::collections::HashMap;
use std::ops::Range;

use crate::error::{Error, Result};
use crate::hash::prehash;
use crate::keys::{Key, KeySpec};

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

    /// True when no query key can equal an inserted one: one injective source, inserted
    /// keys from counters `0..n` and queries from `n..n+q`.
    pub fn disjoint(&self, n: u64, queries: u64) -> bool {
        self.keys == self.query_keys() && self.keys.injective_below(n.saturating_add(queries))
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
