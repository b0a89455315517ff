//! A standard Ribbon filter (Dillinger and Walzer 2021, "Ribbon filter: practically smaller
//! than Bloom and Xor", arXiv:2103.02515; RocksDB's `Standard128Ribbon`): static, built once
//! from all its keys, r result bits (1 to 32) per slot in about `(1 + δ) n` slots, where δ
//! shrinks as the band width W (32, 64, 128) grows. [`descriptor`] registers one per W.
//!
//! Each key x has a start `s(x)` in `[0, m - W]`, a W-bit coefficient row `c(x)` whose first
//! bit is 1, and an r-bit fingerprint `f(x)`. Construction solves `Σ_t c_t(x) Z[s(x) + t] =
//! f(x)` over GF(2) for the m × r matrix Z by on-the-fly banding (Gaussian elimination in
//! the band), then back-substitution; a query recomputes the left side and compares.

use super::interface::{CACHE_LINE_BITS, Family, Filter, FilterKind, Membership, Structure, boxed};
use super::static_keys::StaticKeys;
use crate::error::{Error, Result};
use crate::hash::{AppliedHash, splitmix64};

mod occupancy;
pub use occupancy::{keys_at_first_failure, slots_for};

pub static STRUCTURE: Structure = descriptor::<128>(
    "ribbon",
    "a standard Ribbon filter (RocksDB's Standard128Ribbon): static, r = 1..=32 result bits, band width 128",
);

/// The standard Ribbon structure of band width `W` (32, 64 or 128).
pub const fn descriptor<const W: u32>(name: &'static str, help: &'static str) -> Structure {
    Structure {
        is_static: true,
        layout: ribbon_layout,
        design: Some(design::<W>),
        lines_per_query: Some(lines_per_query::<W>),
        family: Family::Ribbon,
        // `2^-r`: f(y) of an absent key is uniform and independent of c(y), s(y) and Z.
        fpr_exact: |_, _, r| 0.5f64.powi(r as i32),
        ..Structure::new(name, help, |s| {
            boxed(RibbonFilter::<W>::new(s.k, s.hash_seed, s.kind.clone()))
        })
    }
}

/// The key hash: `splitmix64` of the key xor four seeded words (start, two coefficient
/// halves, fingerprint).
pub const HASH: &str = "splitmix64";

/// Result bits a Ribbon filter stores per slot.
pub const RIBBON_RESULT_BITS: std::ops::RangeInclusive<u32> = 1..=32;

/// A Ribbon filter's nominal m: it is sized by its keys, so m is only checked for r.
fn ribbon_layout(m: u64, r: u32) -> Result<u64> {
    if !RIBBON_RESULT_BITS.contains(&r) {
        return Err(Error::invalid(
            "k",
            r,
            "for a Ribbon filter, k is the number of result bits",
            "1..=32 for ribbon",
        ));
    }
    Ok(m)
}

/// The fewest result bits with `2^-r <= ε`, `r = ceil(log2(1/ε))`, in [`slots_for`] slots
/// (nominal: the built table is what a measurement reports). Refuses ε below `2^-32`.
fn design<const W: u32>(n: u64, fpr: f64) -> Result<(u64, u32)> {
    let r = (-fpr.log2()).ceil().max(1.0);
    if r > f64::from(*RIBBON_RESULT_BITS.end()) {
        return Err(Error::Unsupported {
            filter: "ribbon",
            operation: "be sized below 2^-32 (its result rows have at most 32 bits)",
            supported: super::FilterKind::names_where(|s| s.design.is_some()),
        });
    }
    let r = r as u32;
    Ok((slots_for::<W>(n) * u64::from(r), r))
}

/// A query reads its r column words in the start's block and the next: `2rW` contiguous
/// bits, on at most `ceil(2rW / 512) + 1` cache lines.
fn lines_per_query<const W: u32>(r: u32) -> u32 {
    (2 * u64::from(r) * u64::from(W)).div_ceil(CACHE_LINE_BITS) as u32 + 1
}

/// The W low bits set.
const fn band_mask<const W: u32>() -> u128 {
    if W >= 128 { u128::MAX } else { (1u128 << W) - 1 }
}

/// One key's row: start, coefficients (first bit 1, W bits) and fingerprint (r bits).
#[derive(Clone, Copy, Debug)]
struct Row {
    start: u64,
    coefficients: u128,
    fingerprint: u32,
}

/// The hash of one construction attempt: four seeded words, `splitmix64(key ^ seed_i)`.
#[derive(Clone, Copy, Debug)]
struct RowHash {
    seeds: [u64; 4],
}

impl RowHash {
    /// The seeds of attempt `attempt` for the filter's hash seed.
    fn new(hash_seed: u64, attempt: u64) -> Self {
        let base = splitmix64(hash_seed ^ 0x7269_6262_6f6e).wrapping_add(attempt << 2);
        RowHash {
            seeds: std::array::from_fn(|i| splitmix64(base + i as u64)),
        }
    }

    /// The key's row among `starts = m - W + 1` starts with r result bits.
    #[inline]
    fn row<const W: u32>(&self, key: u64, starts: u64, r: u32) -> Row {
        let [a, b, c, d] = self.seeds.map(|s| splitmix64(key ^ s));
        let coefficients = (u128::from(b) | (u128::from(c) << 64)) & band_mask::<W>();
        Row {
            start: ((u128::from(a) * u128::from(starts)) >> 64) as u64,
            coefficients: coefficients | 1,
            fingerprint: (d & ((1u64 << r) - 1)) as u32,
        }
    }
}

/// The banding matrix during construction: row i holds a coefficient row starting at slot i
/// (first bit 1) or nothing (0), and its right-hand side.
struct Banding {
    coefficients: Vec<u128>,
    results: Vec<u32>,
}

impl Banding {
    fn new(slots: u64) -> Self {
        Banding {
            coefficients: vec![0; slots as usize],
            results: vec![0; slots as usize],
        }
    }

    /// Eliminates the row against those stored until it finds an empty pivot (stored: true),
    /// vanishes consistently (a duplicate: true) or contradicts them (false).
    fn add(&mut self, row: Row) -> bool {
        let Row {
            mut start,
            mut coefficients,
            fingerprint: mut result,
        } = row;
        loop {
            let i = start as usize;
            if self.coefficients[i] == 0 {
                self.coefficients[i] = coefficients;
                self.results[i] = result;
                return true;
            }
            coefficients ^= self.coefficients[i];
            result ^= self.results[i];
            if coefficients == 0 {
                return result == 0;
            }
            let shift = coefficients.trailing_zeros();
            start += u64::from(shift);
            coefficients >>= shift;
        }
    }
}

/// The solution Z in RocksDB's interleaved layout: for block b of W slots and column j, the
/// W bits `Z[bW .. bW + W][j]` at bit `(b r + j) W` of `words` (bit t is slot `bW + t`).
#[derive(Debug)]
struct Solution {
    words: Vec<u64>,
    slots: u64,
    r: u32,
    hash: RowHash,
}

impl Solution {
    /// Back-substitution, last slot first: `Z[i] = f_i ⊕ Σ_{t≥1} c_t Z[i + t]` (with Z[i] = 0
    /// for an empty row), each column's window of W slots kept in a register.
    fn solve<const W: u32>(banding: &Banding, r: u32, hash: RowHash) -> Self {
        let slots = banding.coefficients.len() as u64;
        let mut words = vec![0u64; (slots * u64::from(r)).div_ceil(64) as usize];
        let mut windows = vec![0u128; r as usize];
        for i in (0..slots as usize).rev() {
            let (c, f) = (banding.coefficients[i], banding.results[i]);
            for (j, window) in windows.iter_mut().enumerate() {
                let shifted = (*window << 1) & band_mask::<W>();
                let bit = ((shifted & c).count_ones() ^ (f >> j)) & 1;
                *window = shifted | u128::from(bit);
            }
            if (i as u64).is_multiple_of(u64::from(W)) {
                let block = i as u64 / u64::from(W);
                for (j, &window) in windows.iter().enumerate() {
                    write_bits(&mut words, (block * u64::from(r) + j as u64) * u64::from(W), W, window);
                }
            }
        }
        Solution {
            words,
            slots,
            r,
            hash,
        }
    }

    /// Column j of block b: W bits.
    #[inline]
    fn segment<const W: u32>(&self, block: u64, j: u32) -> u128 {
        let bit = (block * u64::from(self.r) + u64::from(j)) * u64::from(W);
        let word = (bit / 64) as usize;
        match W {
            128 => u128::from(self.words[word]) | (u128::from(self.words[word + 1]) << 64),
            64 => u128::from(self.words[word]),
            _ => u128::from(self.words[word] >> (bit % 64)) & band_mask::<W>(),
        }
    }

    /// `Σ_t c_t(x) Z[s(x) + t] = f(x)`, column by column, stopping at the first mismatch.
    #[inline]
    fn contains<const W: u32>(&self, key: u64) -> bool {
        let row = self.hash.row::<W>(key, self.slots - u64::from(W) + 1, self.r);
        let (block, offset) = (row.start / u64::from(W), (row.start % u64::from(W)) as u32);
        (0..self.r).all(|j| {
            let low = self.segment::<W>(block, j) >> offset;
            let window = if offset == 0 {
                low
            } else {
                (low | (self.segment::<W>(block + 1, j) << (W - offset))) & band_mask::<W>()
            };
            (window & row.coefficients).count_ones() & 1 == (row.fingerprint >> j) & 1
        })
    }
}

/// Writes the `width` low bits of `value` at bit `at` (a multiple of `width`, 32, 64 or 128).
fn write_bits(words: &mut [u64], at: u64, width: u32, value: u128) {
    let word = (at / 64) as usize;
    match width {
        128 => {
            words[word] = value as u64;
            words[word + 1] = (value >> 64) as u64;
        }
        64 => words[word] = value as u64,
        _ => words[word] |= (value as u64 & ((1u64 << width) - 1)) << (at % 64),
    }
}

/// Attempts with one slot count before it grows by one block (at the sizing, each attempt
/// fails with probability about 1/2, so 16 failures in a row happen once in 65,536 builds).
const ATTEMPTS_PER_SIZE: u64 = 16;

/// Builds the filter of `keys` with r result bits: each failed attempt retries with fresh
/// seeds, and after [`ATTEMPTS_PER_SIZE`] failures the table grows by W slots.
fn build<const W: u32>(keys: &[u64], r: u32, hash_seed: u64) -> Solution {
    let base = slots_for::<W>(keys.len() as u64);
    for attempt in 0.. {
        let slots = base + u64::from(W) * (attempt / ATTEMPTS_PER_SIZE);
        let hash = RowHash::new(hash_seed, attempt);
        let starts = slots - u64::from(W) + 1;
        let mut banding = Banding::new(slots);
        if keys.iter().all(|&key| banding.add(hash.row::<W>(key, starts, r))) {
            return Solution::solve::<W>(&banding, r, hash);
        }
    }
    unreachable!("the table grows until the keys fit")
}

/// A standard Ribbon filter of band width W, built from the keys as inserted on the first
/// query after an insert ([`StaticKeys`]). Its memory is the built solution only
/// (`ceil(m r / 64)` words).
pub struct RibbonFilter<const W: u32> {
    result_bits: u32,
    hash_seed: u64,
    kind: FilterKind,
    keys: StaticKeys<Solution>,
}

impl<const W: u32> RibbonFilter<W> {
    /// An empty filter of r result bits (1..=32), registered as `kind`.
    pub fn new(r: u32, hash_seed: u64, kind: FilterKind) -> Result<Self> {
        ribbon_layout(1, r)?;
        Ok(RibbonFilter {
            result_bits: r,
            hash_seed,
            kind,
            keys: StaticKeys::default(),
        })
    }

    fn solution(&self) -> &Solution {
        self.keys
            .built(|keys| build::<W>(keys, self.result_bits, self.hash_seed))
    }
}

impl<const W: u32> Membership for RibbonFilter<W> {
    fn insert(&mut self, key: u64) {
        self.keys.insert(key);
    }
    fn insert_many(&mut self, keys: &[u64]) -> Result<()> {
        self.keys.insert_many(keys);
        Ok(())
    }
    fn contains(&self, key: u64) -> bool {
        self.solution().contains::<W>(key)
    }
}

impl<const W: u32> Filter for RibbonFilter<W> {
    /// Bits of the built solution (every one is a solved unknown).
    fn set_bits(&self) -> u64 {
        self.memory_bits()
    }
    /// `2^-r`, whatever the solution holds: an absent key's fingerprint is independent of it.
    fn fpr_from_bits(&self) -> f64 {
        0.5f64.powi(self.result_bits as i32)
    }
    fn fpr_exact(&self, _n: u64) -> f64 {
        self.fpr_from_bits()
    }
    /// The words allocated for the solution.
    fn memory_bits(&self) -> u64 {
        self.solution().words.len() as u64 * 64
    }
    fn hashes(&self) -> u32 {
        self.result_bits
    }
    fn kind(&self) -> FilterKind {
        self.kind.clone()
    }
    fn hash_name(&self) -> AppliedHash {
        AppliedHash::own(HASH)
    }
}
