//! The measurement pipeline, the one loop every measurement goes through:
//!
//! plan ([`measurement::Setup`]: what to build as a [`crate::structures::Spec`], keys,
//! queries, seed) -> build ([`crate::structures::Spec::build`]) -> insert `key(0..n)` ([`fill`], on all cores
//! where the structure has a parallel path) -> query the absent `key(n..n+q)` and count the
//! reports ([`count`], [`count_parallel`]) -> predict ([`measurement::Measurement::new`]) ->
//! optionally time ([`timing`]). Experiments, `size --measure`, `compare`, `audit`,
//! `conform`, `bench` and the Rust API ([`membership`]) all fill and count through here.

pub mod keying;
pub mod measurement;
pub mod membership;
pub mod run;
pub mod sharing;
pub mod timing;
pub mod trial;
pub mod uniformity;

pub use run::{
    OnKeys, PARALLEL_THRESHOLD, Threads, count, count_parallel, fill, insert_and_check,
    insert_and_count,
};
pub use trial::{measure, measure_counted, run_trial, run_trial_counted, run_trial_with};
