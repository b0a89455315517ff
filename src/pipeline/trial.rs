//! One trial of a plan ([`Setup`]): the filter built from its descriptor, the keys inserted
//! and the absent ones counted through the loop ([`crate::pipeline::run`]), integer keys in
//! batches, byte keys in batches too ([`crate::pipeline::keying`]); then set beside the predictions ([`measure`]).

use crate::error::{Error, Result};
use crate::hash::AppliedHash;
use crate::keys::KeySource;
use crate::pipeline::keying::{count_keys, fill_keys, overlap};
use crate::pipeline::measurement::{Measurement, Setup, Trial};
use crate::pipeline::run::{OnKeys, Threads, Unit, block_counters, insert_and_count};
use crate::pipeline::uniformity::{ProbePairs, SAMPLE_KEYS};
use crate::structures::Filter;

/// Runs one setup and reports it.
pub fn measure(experiment: &str, setup: &Setup) -> Result<Measurement> {
    measure_counted(experiment, setup, &|_| {})
}

/// [`measure`], calling `on_keys` as keys are inserted and queried ([`run_trial_counted`]).
pub fn measure_counted(
    experiment: &str,
    setup: &Setup,
    on_keys: &OnKeys<'_>,
) -> Result<Measurement> {
    let trial = run_trial_counted(setup, Threads::Auto, on_keys)?;
    Ok(Measurement::new(experiment, setup, trial))
}

/// Inserts `key(0..n)`, then queries `key(n..n+q)`, none of which was inserted.
pub fn run_trial(setup: &Setup) -> Result<Trial> {
    run_trial_with(setup, Threads::Auto)
}

/// [`run_trial`] with a choice of threading: on all cores only for a structure with a
/// parallel path ([`crate::structures::Membership::insert_parallel`]). Byte keys, and
/// query keys that may repeat inserted ones, go through [`keyed_trial`].
pub fn run_trial_with(setup: &Setup, threads: Threads) -> Result<Trial> {
    run_trial_counted(setup, threads, &|_| {})
}

/// [`run_trial_with`], calling `on_keys(count)` after each batch of keys inserted or
/// queried (for progress); the trial is the same. Only the query blocks of the setup's
/// [`Work`](crate::pipeline::run::Work) are counted here (each in [`Trial::units`]), and
/// the counts it carries are added ([`settle`]).
pub fn run_trial_counted(setup: &Setup, threads: Threads, on_keys: &OnKeys<'_>) -> Result<Trial> {
    let keying = &setup.keying;
    let trial = if keying.keys.is_default() && keying.query_keys().is_default() {
        let keys = KeySource::new(setup.seed);
        run_int_trial(setup, threads, on_keys, |c| keys.key(c), |c| keys.key(c))?
    } else {
        keyed_trial(setup, threads, on_keys)?
    };
    settle(setup, trial)
}

/// The false positives of a trial: the reports on its own blocks and the carried ones,
/// less the query keys that had been inserted. A run that counted every query refuses one
/// whose query keys were all inserted.
fn settle(setup: &Setup, mut trial: Trial) -> Result<Trial> {
    let built = format!("{} for n = {}", setup.filter(), setup.n);
    setup.work.check_digest(trial.digest, built)?;
    let counted = (trial.units.iter().map(|u| u.counts)).fold(setup.work.carried, |a, b| a + b);
    if counted.queries == setup.queries && counted.overlap >= setup.queries {
        return Err(Error::invalid(
            "query_keys",
            setup.keying.query_keys(),
            format!("all {} query keys were inserted", setup.queries),
            "query keys of which at least one was not inserted",
        ));
    }
    trial.query_overlap = counted.overlap;
    trial.false_positives = counted.present.saturating_sub(counted.overlap);
    Ok(trial)
}

/// The units of a trial: block `blocks.start + i` asked its queries and got `present[i]`.
fn units(setup: &Setup, blocks: std::ops::Range<u64>, present: &[u64]) -> Vec<Unit> {
    let counters = |block| block_counters(setup.n, setup.queries, block);
    (blocks.zip(present))
        .map(|(block, &present)| Unit::counted(block, counters(block), present))
        .collect()
}

/// Inserts `key_of(0..n)`, then counts the reports on `query_of(n..n+q)`, which must hold
/// no inserted key ([`crate::pipeline::insert_and_count`]).
fn run_int_trial(
    setup: &Setup,
    threads: Threads,
    on_keys: &OnKeys<'_>,
    key_of: impl Fn(u64) -> u64 + Sync,
    query_of: impl Fn(u64) -> u64 + Sync,
) -> Result<Trial> {
    let mut filter = setup.spec.build(setup.n)?;
    let blocks = setup.work.blocks(setup.queries);
    let asked = setup.work.queries_here(setup.n, setup.queries);
    let parallel = threads.parallel(setup.n.saturating_add(asked));
    let present = insert_and_count(
        &mut *filter,
        (setup.n, setup.queries),
        blocks.clone(),
        &key_of,
        query_of,
        parallel,
        on_keys,
    )?;
    finish_trial(setup, &mut *filter, blocks, &present)
}

/// What a filter holding the n keys of `setup` reports of itself ([`Trial::of`], for the
/// distinct ones among them), `reported` of its queries answered present; the hash is named
/// with its pre-hash when byte keys reach a structure that does not take bytes.
pub fn read_trial(setup: &Setup, filter: &dyn Filter, reported: u64) -> Result<Trial> {
    let duplicates = setup.keying.keys.duplicates("keys", setup.n)?;
    let mut trial = Trial::of(filter, setup.n - duplicates.unwrap_or(0), reported);
    trial.duplicate_keys = duplicates;
    if !setup.keying.ints(setup.seed) && !trial.hashes_bytes {
        trial.hash = AppliedHash::PreHashed(Box::new(trial.hash));
    }
    Ok(trial)
}

/// The trial of a filled filter whose blocks `blocks` got `present` reports, for the
/// distinct keys among the n inserted; a structure with a view of its bits also gets its
/// uniformity diagnostic. Ends the filter's use ([`Filter::finish`]).
fn finish_trial(
    setup: &Setup,
    filter: &mut dyn Filter,
    blocks: std::ops::Range<u64>,
    present: &[u64],
) -> Result<Trial> {
    let mut trial = read_trial(setup, &*filter, present.iter().sum())?;
    trial.units = units(setup, blocks, present);
    // A shard's share makes no row: no statistic is computed there.
    if let Some(bits) = filter.bit_view().filter(|_| !setup.work.is_share()) {
        let mut sample = ProbePairs::new(!setup.keying.keys.injective_below(setup.n));
        let count = setup.n.min(SAMPLE_KEYS);
        let keys = &setup.keying.keys;
        keys.for_each("keys", setup.seed, 0, count, |key| {
            sample.add(bits.family(), key);
            Ok(())
        })?;
        trial.uniformity_p = sample.uniformity_p(bits);
    }
    filter.finish()?;
    Ok(trial)
}

/// A trial whose keys are not both the default random ones: integer keys through the
/// default loops, other keys through the loop of any source ([`byte_trial`]); then the
/// overlap of each block is counted, for [`settle`] to take out of the count.
fn keyed_trial(setup: &Setup, threads: Threads, on_keys: &OnKeys<'_>) -> Result<Trial> {
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
    let first = keying.query_start(setup.n);
    for unit in &mut trial.units {
        let counters = block_counters(first, setup.queries, unit.block);
        unit.counts.overlap = overlap(keying, setup.n, counters, setup.seed, trial.hashes_bytes)?;
    }
    Ok(trial)
}

/// Inserts and queries a batch at a time ([`fill_keys`], [`count_keys`]), on one thread.
fn byte_trial(setup: &Setup, on_keys: &OnKeys<'_>) -> Result<Trial> {
    let mut filter = setup.spec.build(setup.n)?;
    let (keying, seed) = (&setup.keying, setup.seed);
    fill_keys(
        &mut *filter,
        (&keying.keys, seed),
        0..setup.n,
        false,
        on_keys,
    )?;
    let (queried, first) = (keying.query_keys(), keying.query_start(setup.n));
    let blocks = setup.work.blocks(setup.queries);
    let present = (blocks.clone())
        .map(|block| {
            let counters = block_counters(first, setup.queries, block);
            count_keys(&*filter, (&queried, seed), counters, false, on_keys)
        })
        .collect::<Result<Vec<_>>>()?;
    finish_trial(setup, &mut *filter, blocks, &present)
}
