//! How close `BloomFilter::insert_parallel` comes to the memory limit at a size far out of
//! cache: n keys at 10 bits per key, k = 7, on every core, against random independent
//! cache-line reads in a buffer of the filter's size on every core at once, measured in the
//! same run (wall time, medians of three passes). An insert must touch k lines, so the limit
//! is `k × ns per line`; a ratio near 1 is as fast as the memory allows for reads alone. An
//! insert also writes each line back, so the example times random line updates too (each
//! core sets a bit in random lines of its own part of an array of the filter's size,
//! prefetched 16 ahead, as `insert_parallel` sets its probes).
//!
//! `cargo run --release --example parallel_insert_limit -- 1000000000` (1.25 GB, about three
//! minutes on two cores); the default n is 10^8. Each core reads its own stretch of random
//! lines. The insert passes start from fresh zeroed arrays, so they pay the first-touch page
//! faults (under 1% of their time here).

use std::time::Instant;

use bloomlab::hash::HashScheme;
use bloomlab::pipeline::timing::{LineBuffer, Passes};
use bloomlab::structures::bloom::BloomFilter;
use rayon::prelude::*;

const K: u32 = 7;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n: u64 = match std::env::args().nth(1) {
        Some(arg) => arg
            .parse()
            .ok()
            .filter(|n| (1_000..=6_000_000_000).contains(n))
            .ok_or("n: a key count in 1000..=6000000000")?,
        None => 100_000_000,
    };
    let m = n * 10;
    let cores = rayon::current_num_threads();
    let line_ns = {
        let lines = LineBuffer::new(m / 8, 1)?;
        let reads = 20_000_000u64;
        Passes::of(
            (0..3)
                .map(|_| {
                    let start = Instant::now();
                    (0..cores as u64)
                        .into_par_iter()
                        .for_each(|core| lines.read_independent(core * reads, reads));
                    start.elapsed().as_secs_f64() * 1e9 / (cores as u64 * reads) as f64
                })
                .collect(),
        )
    };
    let update_ns = line_updates(m, cores);
    let insert_ns = Passes::of(
        (0..3)
            .map(|_| {
                let mut filter = BloomFilter::new(m, K, HashScheme::MultiplyShift, 1)?;
                let start = Instant::now();
                filter.insert_parallel(0..n, |c| c.wrapping_mul(0x9E37_79B9_7F4A_7C15));
                Ok(start.elapsed().as_secs_f64() * 1e9 / n as f64)
            })
            .collect::<bloomlab::Result<Vec<f64>>>()?,
    );
    let limit = f64::from(K) * line_ns.median;
    println!(
        "n = {n}, m = {m} bits ({} MB), k = {K}, {cores} cores",
        m / 8_000_000
    );
    println!(
        "independent line reads on {cores} cores: {:.2} ns per line [{:.2}, {:.2}]; limit {limit:.1} ns per key",
        line_ns.median, line_ns.low, line_ns.high
    );
    println!(
        "independent line updates (read, set a bit, write back) on {cores} cores: {:.2} ns per line [{:.2}, {:.2}]; {:.1} ns per key",
        update_ns.median,
        update_ns.low,
        update_ns.high,
        f64::from(K) * update_ns.median
    );
    println!(
        "insert_parallel: {:.1} ns per key [{:.1}, {:.1}], {:.2}x the read limit, {:.2}x the update limit",
        insert_ns.median,
        insert_ns.low,
        insert_ns.high,
        insert_ns.median / limit,
        insert_ns.median / (f64::from(K) * update_ns.median)
    );
    Ok(())
}

/// ns per random line update on every core at once, medians of three passes: each core
/// sets one bit in each of 2·10^7 random lines of its own part of an array of m bits, laid
/// out as a filter's (aligned, on huge pages from 1 GiB) and written once before timing, so
/// that no pass pays for first-touch page faults.
fn line_updates(m: u64, cores: usize) -> Passes {
    const AHEAD: usize = 16;
    const UPDATES: usize = 20_000_000;
    let Ok(mut words) = bloomlab::words::Words::zeroed(m) else {
        return Passes::of(Vec::new());
    };
    words.par_iter_mut().for_each(|word| *word = 1);
    let part = words.len().div_ceil(cores).max(8);
    Passes::of(
        (0..3u64)
            .map(|pass| {
                let start = Instant::now();
                words
                    .par_chunks_mut(part)
                    .enumerate()
                    .for_each(|(c, words)| {
                        let len = words.len();
                        let lines = (len / 8).max(1) as u64;
                        let line = |j: usize| {
                            let h = ((pass << 40 | (c as u64) << 32) + j as u64 + 1)
                                .wrapping_mul(0x9E37_79B9_7F4A_7C15);
                            (((h as u128 * lines as u128) >> 64) as usize * 8).min(len - 1)
                        };
                        for j in 0..UPDATES {
                            bloomlab::words::prefetch(&words[line(j + AHEAD)]);
                            words[line(j)] |= 1 << (j & 63);
                        }
                    });
                start.elapsed().as_secs_f64() * 1e9 / (cores * UPDATES) as f64
            })
            .collect(),
    )
}
