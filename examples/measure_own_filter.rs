//! Your own filter type, measured by bloomlab in a `#[test]`: implement [`Membership`] and call
//! [`bloomlab::measure`]. Here the type is a small Bloom filter of m bits and k probes by
//! double hashing; its test checks the contract (no false negatives) and the rate against the
//! exact prediction for its m and k, with the exact binomial p-value.
//!
//! Run: `cargo run --release --example measure_own_filter`. Its test runs with the suite
//! (`tests/it/measure_own_filter.rs` includes this file), so that it cannot rot.

use bloomlab::{Membership, measure};

/// A user's filter: m bits, k probes `(h1 + i·h2) mod m` from a 64-bit mix of the key.
pub struct MyFilter {
    bits: Vec<u64>,
    m: u64,
    k: u32,
}

impl MyFilter {
    pub fn new(m: u64, k: u32) -> Self {
        MyFilter {
            bits: vec![0; m.div_ceil(64) as usize],
            m,
            k,
        }
    }

    fn probes(&self, key: u64) -> impl Iterator<Item = u64> + '_ {
        let h1 = mix(key);
        let h2 = mix(h1 ^ 0x9e37_79b9_7f4a_7c15) | 1;
        (0..u64::from(self.k)).map(move |i| h1.wrapping_add(i.wrapping_mul(h2)) % self.m)
    }
}

/// The splitmix64 finaliser.
fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

impl Membership for MyFilter {
    fn insert(&mut self, key: u64) {
        let probes: Vec<u64> = self.probes(key).collect();
        for bit in probes {
            self.bits[(bit / 64) as usize] |= 1 << (bit % 64);
        }
    }

    fn contains(&self, key: u64) -> bool {
        self.probes(key)
            .all(|bit| self.bits[(bit / 64) as usize] & (1 << (bit % 64)) != 0)
    }
}

fn main() -> bloomlab::Result<()> {
    let (n, m, k) = (100_000, 1_000_000, 7);
    let measured = measure(&mut MyFilter::new(m, k), n, 1_000_000, 1)?
        .against(bloomlab::theory::fpr_exact(n, m, k))?;
    println!(
        "MyFilter, n = {n}, m = {m}, k = {k}: {} false negatives; rate {:.4}% [{:.4}%, {:.4}%] (95% exact), predicted {:.4}%, z = {:.2}, p = {:.3}",
        measured.false_negatives,
        100.0 * measured.fpr_measured,
        100.0 * measured.ci_low,
        100.0 * measured.ci_high,
        100.0 * measured.predicted.unwrap_or(f64::NAN),
        measured.z.unwrap_or(f64::NAN),
        measured.p_value.unwrap_or(f64::NAN)
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fixed seed; the bound is the bits check's own (exact two-sided p ≥ 6.3e-5), so a
    /// correct filter fails it with probability below 1e-4 (about 430 false positives are
    /// expected: a rate off by a third or more fails it).
    #[test]
    fn my_filter_keeps_the_contract_and_its_predicted_rate() {
        let (n, m, k) = (10_000, 80_000, 6);
        let measured = measure(&mut MyFilter::new(m, k), n, 20_000, 1)
            .unwrap()
            .against(bloomlab::theory::fpr_exact(n, m, k))
            .unwrap();
        assert_eq!(measured.false_negatives, 0);
        assert!(
            measured.ci_low <= measured.fpr_measured && measured.fpr_measured <= measured.ci_high
        );
        let p = measured.p_value.unwrap();
        assert!(
            p >= bloomlab::pipeline::measurement::BITS_CHECK_ALPHA,
            "{measured:?}"
        );
    }

    /// A filter that forgets keys is caught by its false negatives.
    #[test]
    fn a_filter_that_forgets_is_caught() {
        struct Forgetful(MyFilter);
        impl Membership for Forgetful {
            fn insert(&mut self, key: u64) {
                if !key.is_multiple_of(7) {
                    self.0.insert(key);
                }
            }
            fn contains(&self, key: u64) -> bool {
                self.0.contains(key)
            }
        }
        let measured = measure(&mut Forgetful(MyFilter::new(80_000, 6)), 10_000, 1_000, 1).unwrap();
        assert!(measured.false_negatives > 0);
    }
}
