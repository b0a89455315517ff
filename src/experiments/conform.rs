//! `bloomlab conform`: checks any structure (built-in, peer crate or `exec:`) against the
//! filter contract, in order, stopping at the first violation:
//!
//! 1. no false negatives: every one of the n inserted keys `key(0..n)` is answered present;
//! 2. the same seed gives the same filter: two filters built alike and filled alike answer
//!    every absent key `key(n..n+q)` alike;
//! 3. the rate of the absent keys is not far above the configuration's promise
//!    ([`promise`]);
//! 4. a batch answers as its keys do one at a time (the first [`SINGLE_KEYS`] absent keys);
//! 5. the memory a structure reports is steady while it holds no more than its capacity n
//!    (for `exec:`, `stats` agrees with the hello reply); a static structure, built from
//!    its keys, is exempt.
//!
//! A program that breaks the protocol (a batch answered with the wrong length) fails at the
//! library boundary with its own [`crate::Error`].

mod promise;

use crate::error::Result;
use crate::keys::KeySource;
use crate::pipeline::fill;
use crate::structures::{BATCH, Filter, Spec, for_each_batch};

/// Absent keys also asked one at a time, against their batched answers.
pub const SINGLE_KEYS: u64 = 100;

/// What is checked: the structure as built ([`Spec`]; its hash seed is the keys' `seed`
/// too), holding n keys.
#[derive(Clone, Debug, PartialEq)]
pub struct ConformRequest {
    pub spec: Spec,
    pub n: u64,
    pub queries: u64,
    pub seed: u64,
}

/// The outcome: a one-line summary when every check holds, or the first violation.
#[derive(Clone, Debug, PartialEq)]
pub enum Conformance {
    Conforms(String),
    Violation(String),
}

/// A violation, unless ending the two filters ([`Filter::finish`]) reports a failure of the
/// program behind them: that failure is the cause, and the violation only its symptom.
fn violated(
    first: &mut dyn Filter,
    second: &mut dyn Filter,
    violation: String,
) -> Result<Conformance> {
    first.finish()?;
    second.finish()?;
    Ok(Conformance::Violation(violation))
}

/// Runs the checks of the module documentation on `request`.
pub fn conform(request: &ConformRequest) -> Result<Conformance> {
    let ConformRequest { ref spec, n, .. } = *request;
    let filter = &spec.filter;
    let keys = KeySource::new(request.seed);
    let build = || spec.build(n);
    let (mut first, mut second) = (build()?, build()?);
    let memory_before = first.memory_bits();
    fill(&mut *first, 0..n, |c| keys.key(c), false, &|_| {})?;
    fill(&mut *second, 0..n, |c| keys.key(c), false, &|_| {})?;
    if let Some(violation) = false_negative(&*first, &keys, n)? {
        return violated(&mut *first, &mut *second, violation);
    }
    let absent = n..n + request.queries;
    let (differs, false_positives) = compare_answers(&*first, &*second, &keys, absent)?;
    if let Some(violation) = differs {
        return violated(&mut *first, &mut *second, violation);
    }
    let promised = promise::promised(&*first, spec.sizing, n);
    if let Some(violation) = promise::far_above(false_positives, request.queries, promised) {
        return violated(&mut *first, &mut *second, violation);
    }
    if let Some(violation) = single_keys_differ(&*first, &keys, n, request.queries)? {
        return violated(&mut *first, &mut *second, violation);
    }
    let memory_after = first.memory_bits();
    if !filter.is_static() && memory_after != memory_before {
        return violated(
            &mut *first,
            &mut *second,
            format!(
                "memory_bits changed from {memory_before} to {memory_after} after {n} keys, \
             within the capacity of {n} it was built for"
            ),
        );
    }
    first.finish()?;
    second.finish()?;
    Ok(Conformance::Conforms(format!(
        "{filter} ({}) conforms: {n} inserted keys all present, {} absent keys answered alike \
         by two filters of seed {} ({false_positives} false positives, not far above the \
         promised {}), batches answer as single keys, memory_bits {memory_after} steady",
        first.hash_name(),
        request.queries,
        request.seed,
        crate::report::percent(promised)
    )))
}

/// The first inserted key answered absent.
fn false_negative(filter: &dyn Filter, keys: &KeySource, n: u64) -> Result<Option<String>> {
    let mut answers = vec![false; BATCH];
    let mut counter = 0;
    let mut found = None;
    for_each_batch(
        0..n,
        |c| keys.key(c),
        |batch| {
            let answers = &mut answers[..batch.len()];
            filter.contains_many(batch, answers)?;
            if found.is_none()
                && let Some(i) = answers.iter().position(|&a| !a)
            {
                found = Some(format!(
                    "false negative: key {} (inserted as number {} of {n}) answered absent",
                    batch[i],
                    counter + i as u64 + 1
                ));
            }
            counter += batch.len() as u64;
            Ok(())
        },
    )?;
    Ok(found)
}

/// The first absent key the two filters answer differently, and the first filter's count of
/// keys answered present.
fn compare_answers(
    first: &dyn Filter,
    second: &dyn Filter,
    keys: &KeySource,
    absent: std::ops::Range<u64>,
) -> Result<(Option<String>, u64)> {
    let (mut a, mut b) = (vec![false; BATCH], vec![false; BATCH]);
    let mut differs = None;
    let mut present = 0;
    for_each_batch(
        absent,
        |c| keys.key(c),
        |batch| {
            let (a, b) = (&mut a[..batch.len()], &mut b[..batch.len()]);
            first.contains_many(batch, a)?;
            second.contains_many(batch, b)?;
            present += a.iter().filter(|&&x| x).count() as u64;
            if differs.is_none()
                && let Some(i) = (0..batch.len()).find(|&i| a[i] != b[i])
            {
                differs = Some(format!(
                    "the same seed gave different answers: absent key {} answered {} by one \
                     filter and {} by its twin",
                    batch[i],
                    u8::from(a[i]),
                    u8::from(b[i])
                ));
            }
            Ok(())
        },
    )?;
    Ok((differs, present))
}

/// The first of the first [`SINGLE_KEYS`] absent keys whose single answer is not its
/// batched one.
fn single_keys_differ(
    filter: &dyn Filter,
    keys: &KeySource,
    n: u64,
    queries: u64,
) -> Result<Option<String>> {
    let batch: Vec<u64> = keys.absent(n, SINGLE_KEYS.min(queries)).collect();
    let mut answers = vec![false; batch.len()];
    filter.contains_many(&batch, &mut answers)?;
    let singles: Vec<bool> = batch.iter().map(|&key| filter.contains(key)).collect();
    // A single answer cannot carry an error: the batch asked again returns one.
    filter.contains_many(&batch, &mut answers)?;
    Ok((0..batch.len())
        .find(|&i| singles[i] != answers[i])
        .map(|i| {
            format!(
                "absent key {} answered {} in a batch and {} alone",
                batch[i],
                u8::from(answers[i]),
                u8::from(singles[i])
            )
        }))
}
