//! The uniformity diagnostic: are the set bits spread evenly, and are a key's probes
//! independent? Two tests on the classic filter, combined into `uniformity_p`:
//!
//! - regions: the array cut into up to [`MAX_REGIONS`] runs of whole words; with f the fill,
//!   `X = Σ (c_r - s_r f)² / (s_r f (1 - f))` over regions of `s_r` bits holding `c_r` set bits,
//!   against χ² with R - 1 degrees of freedom (upper tail). The set bits of a uniform hash
//!   vary less than binomially between regions (a fixed number of probes), so the test errs
//!   on the side of passing.
//! - probe pairs: for S = min(n, [`SAMPLE_KEYS`]) distinct inserted keys, the pairs
//!   (probe 0, probe 1); under independent uniform probes two keys share their pair with
//!   probability 1/m², so the number of sharing key pairs is about Poisson(λ = C(S, 2)/m²),
//!   upper tail `P(N ≥ observed)`. Probes that depend on a few bits of the key (low-bits with
//!   a power-of-two m) or cannot reach the whole array (`--index-bits`) share far more.
//!
//! `uniformity_p = min(1, 2 · min(p_regions, p_pairs))` (Bonferroni over the two), and
//! `uniformity` is "fail" below [`UNIFORMITY_ALPHA`], "pass" otherwise, "n/a" for
//! structures other than the classic filter or a filter with one probe and one region.

use std::collections::HashSet;

use statrs::function::gamma::gamma_lr;

use crate::hash::HashFamily;
use crate::keys::Key;
use crate::stats::{BITS_CHECK_ALPHA, chi_square_sf};
use crate::structures::bloom::BloomFilter;

/// False-alarm rate of the diagnostic on a sound filter: at most this, the bits check's.
pub const UNIFORMITY_ALPHA: f64 = BITS_CHECK_ALPHA;
/// Most keys the probe-pair test samples.
pub const SAMPLE_KEYS: u64 = 8192;
/// Most regions of the chi-square test; each at least 1024 bits.
pub const MAX_REGIONS: usize = 256;

/// `P(χ²_{R-1} ≥ X)` of the set bits over the regions; NaN with fewer than two regions or
/// an empty or full array.
pub fn regions_p(filter: &BloomFilter) -> f64 {
    let regions = ((filter.bits() / 1024) as usize).clamp(1, MAX_REGIONS);
    let counts = filter.set_bits_by_region(regions);
    let fill = filter.fill();
    if counts.len() < 2 || fill <= 0.0 || fill >= 1.0 {
        return f64::NAN;
    }
    let statistic: f64 = counts
        .iter()
        .map(|&(bits, set)| {
            let expected = bits as f64 * fill;
            (set as f64 - expected).powi(2) / (expected * (1.0 - fill))
        })
        .sum();
    chi_square_sf(statistic, (counts.len() - 1) as f64)
}

/// `P(N ≥ shared)`, N ~ Poisson(C(S, 2)/m²), for the probe pairs of S distinct keys; NaN
/// with fewer than two keys.
pub fn pairs_p(pairs: &[(u64, u64)], m: u64) -> f64 {
    let keys = pairs.len() as f64;
    if pairs.len() < 2 {
        return f64::NAN;
    }
    let mut sorted = pairs.to_vec();
    sorted.sort_unstable();
    let shared: u64 = sorted
        .chunk_by(|a, b| a == b)
        .map(|run| {
            let c = run.len() as u64;
            c * (c - 1) / 2
        })
        .sum();
    let lambda = keys * (keys - 1.0) / 2.0 / (m as f64 * m as f64);
    if shared == 0 {
        1.0
    } else {
        gamma_lr(shared as f64, lambda)
    }
}

/// `min(1, 2 · min(p_regions, p_pairs))`, a test that gives NaN left out; NaN when both do.
pub fn combined(p_regions: f64, p_pairs: f64) -> f64 {
    let ps: Vec<f64> = [p_regions, p_pairs]
        .into_iter()
        .filter(|p| !p.is_nan())
        .collect();
    match ps.iter().copied().reduce(f64::min) {
        Some(p) => (p * ps.len() as f64).min(1.0),
        None => f64::NAN,
    }
}

/// The probe pairs of up to [`SAMPLE_KEYS`] distinct keys, repeats left out.
#[derive(Debug)]
pub struct ProbePairs {
    /// The keys seen, for a source that may repeat one; None for one that cannot.
    seen: Option<HashSet<Vec<u8>>>,
    pairs: Vec<(u64, u64)>,
}

impl ProbePairs {
    /// An empty sample; `may_repeat` for a source whose keys may repeat (a file).
    pub fn new(may_repeat: bool) -> Self {
        ProbePairs {
            seen: may_repeat.then(HashSet::new),
            pairs: Vec::with_capacity(SAMPLE_KEYS as usize),
        }
    }

    /// Adds the pair (probe 0, probe 1) of a key, unless it was seen or the sample is full.
    pub fn add(&mut self, family: &HashFamily, key: Key<'_>) {
        if self.pairs.len() as u64 >= SAMPLE_KEYS {
            return;
        }
        if let Some(seen) = &mut self.seen {
            let identity = match key {
                Key::Int(x) => x.to_le_bytes().to_vec(),
                Key::Bytes(bytes) => bytes.to_vec(),
            };
            if !seen.insert(identity) {
                return;
            }
        }
        let pair = match key {
            Key::Int(x) => (family.index(0, x), family.index(1, x)),
            Key::Bytes(bytes) => {
                let mut first = [0u64; 2];
                let mut i = 0;
                family.for_each_index_bytes(2, bytes, |bit| {
                    first[i] = bit;
                    i += 1;
                });
                (first[0], first[1])
            }
        };
        self.pairs.push(pair);
    }

    /// `uniformity_p` of the filter these keys were inserted into; the pair test only with
    /// two probes or more.
    pub fn uniformity_p(&self, filter: &BloomFilter) -> f64 {
        let pairs = if filter.hash_count() >= 2 {
            pairs_p(&self.pairs, filter.bits())
        } else {
            f64::NAN
        };
        combined(regions_p(filter), pairs)
    }
}
