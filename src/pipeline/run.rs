//! The loop every measurement runs: insert `key(0..n)` ([`fill`], on all cores where the
//! structure has a parallel path), then count the reports on absent keys ([`count`],
//! [`count_parallel`]); both in batches, both with the same answers on one core or all.
//! The absent keys of a row are counted in blocks of [`QUERY_BLOCK`], the units of work a
//! run can share out ([`Work`]): a shard counts some blocks, a merge adds up the others.

use std::ops::Range;

use crate::error::Result;
use rayon::prelude::*;

use crate::structures::{BATCH, Membership, for_each_batch};

/// Below this many keys plus queries a trial runs on one thread (rows already run in
/// parallel); above it, insertion and queries use every core.
pub const PARALLEL_THRESHOLD: u64 = 1 << 18;

/// Keys per progress report of the parallel path.
const PARALLEL_CHUNK: u64 = 1 << 20;

/// How a trial uses the cores; both give identical results.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Threads {
    /// One thread below [`PARALLEL_THRESHOLD`] or where rayon has one (a Dask task's: its
    /// parallel insert only costs there), all cores otherwise.
    Auto,
    Sequential,
    Parallel,
}

impl Threads {
    /// Whether `keys` inserted and queried keys run on all cores.
    pub fn parallel(self, keys: u64) -> bool {
        match self {
            Threads::Auto => keys >= PARALLEL_THRESHOLD && rayon::current_num_threads() > 1,
            Threads::Sequential => false,
            Threads::Parallel => true,
        }
    }
}

/// Absent queries per unit of work: block b of a row of n keys and q queries is the
/// counters `n + b·QUERY_BLOCK .. n + min((b+1)·QUERY_BLOCK, q)`, whatever the number of
/// shards.
pub const QUERY_BLOCK: u64 = 1 << 20;

/// The blocks of a row of `queries` queries: `ceil(queries / QUERY_BLOCK)`.
pub fn blocks_of(queries: u64) -> u64 {
    queries.div_ceil(QUERY_BLOCK)
}

/// The query counters of block `block` of a row of n keys and `queries` queries.
pub fn block_counters(n: u64, queries: u64, block: u64) -> Range<u64> {
    let start = block.saturating_mul(QUERY_BLOCK).min(queries);
    let end = (block.saturating_add(1))
        .saturating_mul(QUERY_BLOCK)
        .min(queries);
    n.saturating_add(start)..n.saturating_add(end)
}

/// The counts of one block of a row, all additive: a merge sums them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Counts {
    /// Query keys asked.
    pub queries: u64,
    /// Query keys the filter reported present (query keys that were inserted included).
    pub present: u64,
    /// Query keys that had been inserted (a key file's overlap): never false positives.
    pub overlap: u64,
    /// Inserted keys asked back (where a command checks them: the audit), and of those the
    /// ones answered absent: the row's, in the unit of its block 0.
    pub checked: u64,
    pub missed: u64,
}

impl std::ops::Add for Counts {
    type Output = Counts;
    fn add(self, other: Counts) -> Counts {
        Counts {
            queries: self.queries + other.queries,
            present: self.present + other.present,
            overlap: self.overlap + other.overlap,
            checked: self.checked + other.checked,
            missed: self.missed + other.missed,
        }
    }
}

/// One unit of work counted: a block of a row and its counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Unit {
    pub block: u64,
    pub counts: Counts,
}

impl Unit {
    /// Block `block`, whose query keys `counters` the filter reported `present` of.
    pub fn counted(block: u64, counters: Range<u64>, present: u64) -> Self {
        let queries = counters.end - counters.start;
        let counts = Counts {
            queries,
            present,
            ..Counts::default()
        };
        Unit { block, counts }
    }
}

/// The share of a row's query blocks one run counts: `blocks` here, plus the counts of
/// the others made by other runs (`carried`: the shards a merge adds up). Every block and
/// nothing carried by default: a whole run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Work {
    /// The blocks counted here; None: all of them.
    pub blocks: Option<Range<u64>>,
    /// Counts made elsewhere, added to this run's.
    pub carried: Counts,
    /// The digest of the filter they were made on, and the part that gave it: a filter
    /// built here with another digest is refused.
    pub digest: Option<(u64, std::path::PathBuf)>,
}

impl Work {
    /// The blocks this run counts of a row of `queries` queries.
    pub fn blocks(&self, queries: u64) -> Range<u64> {
        let all = 0..blocks_of(queries);
        match &self.blocks {
            Some(share) => share.start.min(all.end)..share.end.min(all.end),
            None => all,
        }
    }

    /// Whether this is a shard's share of the row: some blocks counted, and no row made.
    pub fn is_share(&self) -> bool {
        self.blocks.as_ref().is_some_and(|b| !b.is_empty())
    }

    /// The queries this run asks of a row of n keys and `queries` queries.
    pub fn queries_here(&self, n: u64, queries: u64) -> u64 {
        let blocks = self.blocks(queries);
        let first = block_counters(n, queries, blocks.start).start;
        let end = block_counters(n, queries, blocks.end).start;
        end - first
    }

    /// Refuses a filter built here whose `digest` is not that of the filter the carried
    /// counts were made on.
    pub fn check_digest(&self, digest: u64, built: impl std::fmt::Display) -> Result<()> {
        match &self.digest {
            Some((theirs, part)) if *theirs != digest => Err(crate::error::Error::Part {
                path: part.clone(),
                message: format!(
                    "counted on a filter ({built}) with digest {theirs:016x}, built here with \
                     digest {digest:016x}: the filter is not the same here (another library \
                     or program behind the name?)"
                ),
            }),
            _ => Ok(()),
        }
    }
}

/// A progress callback: told how many keys were just inserted or queried.
pub type OnKeys<'a> = dyn Fn(u64) + Sync + 'a;

/// Inserts `key_of(c)` for every counter c of `counters`, in batches, calling `on_keys`
/// after each; when `parallel`, on all cores through the structure's parallel path
/// ([`Membership::insert_parallel`]) if it has one. The filter is the same either way.
/// Returns whether the keys went in on all cores.
pub fn fill<F: Membership + ?Sized>(
    filter: &mut F,
    counters: Range<u64>,
    key_of: impl Fn(u64) -> u64 + Sync,
    parallel: bool,
    on_keys: &OnKeys<'_>,
) -> Result<bool> {
    let mut on_all_cores = parallel;
    for chunk in chunks(counters) {
        if on_all_cores && filter.insert_parallel(chunk.clone(), &key_of) {
            on_keys(chunk.end - chunk.start);
            continue;
        }
        on_all_cores = false;
        for_each_batch(chunk, &key_of, |batch| {
            on_keys(batch.len() as u64);
            filter.insert_many(batch)
        })?;
    }
    Ok(on_all_cores)
}

/// How many of `key_of(c)`, c in `counters`, the filter reports present, a batch at a time.
pub fn count<F: Membership + ?Sized>(
    filter: &F,
    counters: Range<u64>,
    key_of: impl Fn(u64) -> u64,
    on_keys: &OnKeys<'_>,
) -> Result<u64> {
    let mut present = 0;
    for_each_batch(counters, key_of, |batch| {
        on_keys(batch.len() as u64);
        present += crate::structures::count_present(filter, batch)?;
        Ok(())
    })?;
    Ok(present)
}

/// [`count`] on all cores: the batches are counted in parallel and summed, so the count is
/// the sequential one exactly.
pub fn count_parallel<F: Membership + Sync + ?Sized>(
    filter: &F,
    counters: Range<u64>,
    key_of: impl Fn(u64) -> u64 + Sync,
    on_keys: &OnKeys<'_>,
) -> Result<u64> {
    let mut present = 0;
    for chunk in chunks(counters) {
        on_keys(chunk.end - chunk.start);
        let batches = (chunk.end - chunk.start).div_ceil(BATCH as u64);
        present += (0..batches)
            .into_par_iter()
            .map(|b| {
                let start = chunk.start + b * BATCH as u64;
                let end = chunk.end.min(start + BATCH as u64);
                count(filter, start..end, &key_of, &|_| {})
            })
            .try_reduce(|| 0, |a, b| Ok(a + b))?;
    }
    Ok(present)
}

/// The loop: inserts `key_of(0..n)`, then counts the reports on the absent keys
/// `query_of(c)` of each block of `blocks` ([`block_counters`] of n and `queries`); on all
/// cores when `parallel` and the structure can insert so. Returns the count of each block.
pub fn insert_and_count<F: Membership + Sync + ?Sized>(
    filter: &mut F,
    (n, queries): (u64, u64),
    blocks: Range<u64>,
    key_of: impl Fn(u64) -> u64 + Sync,
    query_of: impl Fn(u64) -> u64 + Sync,
    parallel: bool,
    on_keys: &OnKeys<'_>,
) -> Result<Vec<u64>> {
    let on_all_cores = fill(filter, 0..n, key_of, parallel, on_keys)?;
    blocks
        .map(|block| {
            let absent = block_counters(n, queries, block);
            match on_all_cores {
                true => count_parallel(filter, absent, &query_of, on_keys),
                false => count(filter, absent, &query_of, on_keys),
            }
        })
        .collect()
}

/// The false negatives and false positives of a filter of your own over `key(0..n)` and
/// the absent `key(n..n+queries)`, one thread.
pub fn insert_and_check<F: Membership + ?Sized>(
    filter: &mut F,
    n: u64,
    queries: u64,
    key: impl Fn(u64) -> u64 + Sync,
) -> Result<(u64, u64)> {
    fill(filter, 0..n, &key, false, &|_| {})?;
    let present = count(filter, 0..n, &key, &|_| {})?;
    let false_positives = count(filter, n..n.saturating_add(queries), &key, &|_| {})?;
    Ok((n - present, false_positives))
}

/// `range` in consecutive pieces of [`PARALLEL_CHUNK`].
fn chunks(range: Range<u64>) -> impl Iterator<Item = Range<u64>> {
    (range.start..range.end)
        .step_by(PARALLEL_CHUNK as usize)
        .map(move |start| start..range.end.min(start + PARALLEL_CHUNK))
}
