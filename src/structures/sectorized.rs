//! Sectorized Bloom filters as Lang, Neumann, Kemper and Boncz define them ("Performance-Optimal
//! Filtering: Bloom Overtakes Cuckoo at High Throughput", PVLDB 12(5), 2019, section 3): a key's
//! block of B bits is chosen by one hash; the block is cut into 64-bit sectors (words), the
//! sectors into z groups; in each group one sector is chosen by a further hash and k/z bits
//! are set in it. The cache-sectorized filter ([`STRUCTURE`]) is B = 512 (one cache line),
//! z = 2; the register-blocked filter is B = 64, z = 1 (one word per key,
//! [`super::register_blocked`]). [`descriptor`] registers any shape.
//!
//! Lookups of a batch on AVX-512 or AVX2 (detected at run time, [`Lookup`]) compute every
//! function of eight keys in vector lanes and gather their words (`simd.rs`; for byte hashes
//! the probes are found key by key and only the words gathered); the scalar path finds and
//! tests key by key. Every path gives the same answers.

use std::cell::RefCell;

use super::blocks::{BLOCK_SEED, Index, poisson_mixture, smallest_size, whole_blocks};
use super::interface::{
    CACHE_LINE_BITS, Filter, FilterKind, Membership, Shape, Structure, check_answers,
};
use crate::error::{Error, Result};
use crate::structures::bloom::popcount;
use crate::hash::{AppliedHash, HashFamily, Simd, with_index};
use crate::words::Words;

/// Bits in a cache-sectorized filter's block: one cache line.
pub const CACHE_BLOCK_BITS: u64 = 512;
/// Sector groups of a cache-sectorized block: a key sets bits in two of its eight sectors.
pub const CACHE_GROUPS: u32 = 2;

pub static STRUCTURE: Structure = descriptor::<CACHE_BLOCK_BITS, CACHE_GROUPS>(
    "cache-sector",
    "a 512-bit block of eight 64-bit sectors in 2 groups; k/2 bits in one sector of each (Lang et al. 2019)",
);

/// Bits of a sector: one 64-bit word (a register).
pub const SECTOR_BITS: u64 = 64;
/// Most groups a block may have: one per sector of a 512-bit block.
pub const MAX_GROUPS: usize = 8;
/// Keys hashed ahead of a vector test: one AVX-512 gather, two AVX2 ones.
const LANES: usize = 8;

/// The sectorized structure with blocks of `B` bits (64 to 512, a multiple of 64) and `Z`
/// groups (dividing B/64); k must be a multiple of Z.
pub const fn descriptor<const B: u64, const Z: u32>(
    name: &'static str,
    help: &'static str,
) -> Structure {
    Structure {
        layout: layout::<B, Z>,
        design: Some(design::<B, Z>),
        lines_per_query: Some(|_| B.div_ceil(CACHE_LINE_BITS) as u32),
        fpr_exact: fpr_exact::<B, Z>,
        ..Structure::new(name, help, build::<B, Z>)
    }
}

/// Whole blocks; k a multiple of Z, at most 64 bits per sector.
fn layout<const B: u64, const Z: u32>(m: u64, k: u32) -> Result<u64> {
    if k == 0 || !k.is_multiple_of(Z) || k / Z > SECTOR_BITS as u32 {
        return Err(Error::invalid(
            "k",
            k,
            format!("each of the {Z} sector groups sets k/{Z} bits of a 64-bit sector"),
            format!("a multiple of {Z} in {Z}..={}", Z * SECTOR_BITS as u32),
        ));
    }
    whole_blocks(m, B)
}

fn build<const B: u64, const Z: u32>(shape: &Shape) -> Result<Box<dyn Filter>> {
    Ok(Box::new(SectorizedFilter::new(shape, B, Z)?))
}

/// The k (a multiple of Z, at most 16 bits per sector) of least exact rate for n keys in m bits.
fn best_k<const B: u64, const Z: u32>(n: u64, m: u64) -> (u32, f64) {
    (1..=16u32)
        .map(|per| (per * Z, fpr_exact::<B, Z>(n, m, per * Z)))
        .fold((Z, 1.0), |best, c| if c.1 < best.1 { c } else { best })
}

/// The fewest whole blocks whose exact rate (at the best k, as Lang et al. choose it) meets
/// ε. Refused, with the best rate it reaches ([`CAPPED`]), when even three times the classic
/// filter's bits cannot.
fn design<const B: u64, const Z: u32>(n: u64, fpr: f64) -> Result<(u64, u32)> {
    let rate = |m: u64| whole_blocks(m, B).map_or(1.0, |m| best_k::<B, Z>(n, m).1);
    let m = whole_blocks(smallest_size(n, fpr, rate), B)?;
    let (k, reached) = best_k::<B, Z>(n, m);
    if reached > fpr {
        let filter = if B == SECTOR_BITS {
            "reg-blocked"
        } else {
            "cache-sector"
        };
        return Err(Error::Unsupported {
            filter,
            operation: CAPPED,
            supported: format!(
                "the others sized here; {filter} reaches {reached:.1e} at best, at {:.1} bits per key with k = {k}",
                m as f64 / n.max(1) as f64
            ),
        });
    }
    Ok((m, k))
}

/// Why a sectorized filter stops short of low rates, by design: every key's bits go to one
/// block, so a block that i ~ Po(nB/m) keys share has up to ik/Z bits set in each chosen
/// 64-bit sector, and the rate is the mixture [`fpr_exact`] `Σ_i Po(i; nB/m) · f(i)^Z`. For
/// a 64-bit block (register-blocked) f(i) = E[(X_i/64)^k] ≈ `(1 - e^{-ik/64})^k` (at most
/// `(ik/64)^k`), which no k makes small once i ≥ 3 (least near k = 64·ln 2/i: about 6·10^-5
/// at i = 3, 5.8·10^-5 at k = 13 by the exact occupancy law),
/// so the rate falls with m only as fast as the crowded words thin out (Po(i ≥ 3) ~
/// (64n/m)^3/6): at 10^-6 that takes more than three times the classic filter's bits.
pub const CAPPED: &str = "reach this rate within three times the classic filter's bits: the i ~ Po(nB/m) keys sharing a key's block set up to ik bits of its 64-bit sectors, and its rate Σ_i Po(i)·E[(X_i/64)^(k/z)]^z falls with m only as fast as the blocks that 3 or more keys crowd thin out";

/// The blocked-Bloom Poisson mixture (Lang et al. 2019, section 4; Putze et al. 2007):
/// `Σ_i Po(i; nB/m) · f(i)^Z`, a block holding i keys. In each group of `q = B/(64Z)` sectors
/// the query's sector was chosen by `j ~ Bin(i, 1/q)` of them, each setting `k/Z` bits of 64,
/// so `f(i) = Σ_j Bin(j; i, 1/q) · E[(X_j/64)^{k/Z}]` with `X_j` the set bits after `jk/Z`
/// uniform writes ([`SectorMoments`]); the Z groups choose independently given i.
pub fn fpr_exact<const B: u64, const Z: u32>(n: u64, m: u64, k: u32) -> f64 {
    let per = k / Z;
    let q = B / SECTOR_BITS / u64::from(Z);
    let sector = RefCell::new(SectorMoments::new(per));
    let moment = |j: u64| sector.borrow_mut().moment(j);
    poisson_mixture(n, m, B, |i| {
        let group = if q == 1 {
            moment(i)
        } else {
            binomial_mean(i, 1.0 / q as f64, &moment)
        };
        group.powi(Z as i32)
    })
}

/// `E[(X_j/64)^r]` for j = 0, 1, ...: X_j the set bits of a 64-bit sector after `j·r` uniform
/// writes, from the occupancy distribution carried forward write by write
/// (`P_{t+1}(x) = P_t(x)·x/64 + P_t(x-1)·(65-x)/64`), exact at any j.
struct SectorMoments {
    power: u32,
    occupancy: [f64; SECTOR_BITS as usize + 1],
    moments: Vec<f64>,
}

impl SectorMoments {
    fn new(power: u32) -> Self {
        let mut occupancy = [0.0; SECTOR_BITS as usize + 1];
        occupancy[0] = 1.0;
        SectorMoments {
            power,
            occupancy,
            moments: Vec::new(),
        }
    }

    fn moment(&mut self, j: u64) -> f64 {
        let bins = SECTOR_BITS as f64;
        while self.moments.len() as u64 <= j {
            if !self.moments.is_empty() {
                for _ in 0..self.power {
                    for x in (0..=SECTOR_BITS as usize).rev() {
                        let grow = match x {
                            0 => 0.0,
                            _ => self.occupancy[x - 1] * (bins - (x - 1) as f64) / bins,
                        };
                        self.occupancy[x] = self.occupancy[x] * x as f64 / bins + grow;
                    }
                }
            }
            let moment = (self.occupancy.iter().enumerate())
                .map(|(x, p)| p * (x as f64 / bins).powi(self.power as i32))
                .sum();
            self.moments.push(moment);
        }
        self.moments[j as usize]
    }
}

/// `Σ_j Bin(j; i, p) · value(j)`, the weights by their ratio recurrence from `(1-p)^i`.
fn binomial_mean(i: u64, p: f64, value: &impl Fn(u64) -> f64) -> f64 {
    let odds = p / (1.0 - p);
    let mut weight = (1.0 - p).powi(i as i32);
    let mut total = 0.0;
    for j in 0..=i {
        total += weight * value(j);
        weight *= (i - j) as f64 / (j + 1) as f64 * odds;
    }
    total
}

/// Which code tests a batch's words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lookup {
    /// Word by word: the twin every vector path must agree with.
    Scalar,
    /// Four keys' words per AVX2 gather.
    Avx2,
    /// Eight keys' words per AVX-512 gather.
    Avx512,
}

impl Lookup {
    /// The paths this CPU can run, scalar first.
    pub fn available() -> Vec<Lookup> {
        Simd::available().into_iter().map(Lookup::of).collect()
    }

    /// The widest path this CPU runs.
    pub fn best() -> Lookup {
        *Self::available().last().unwrap_or(&Lookup::Scalar)
    }

    /// The lookup of a vector path: each needs a subset of the path's features.
    pub fn of(simd: Simd) -> Lookup {
        match simd {
            Simd::Scalar => Lookup::Scalar,
            Simd::Avx2 => Lookup::Avx2,
            Simd::Avx512 => Lookup::Avx512,
        }
    }

    /// The vector path whose name the lookup takes.
    pub fn simd(self) -> Simd {
        match self {
            Lookup::Scalar => Simd::Scalar,
            Lookup::Avx2 => Simd::Avx2,
            Lookup::Avx512 => Simd::Avx512,
        }
    }
}

/// Where each of a key's Z sectors lies and which of its bits the key sets: `words[g]` is the
/// word index of group g's sector in the array, `masks[g]` its bits.
#[derive(Clone, Copy, Debug, Default)]
struct Probe {
    words: [usize; MAX_GROUPS],
    masks: [u64; MAX_GROUPS],
}

/// A sectorized Bloom filter ([module](self)).
///
/// Invariant: after `insert(x)`, `contains(x)` is true; no deletion.
#[derive(Debug)]
pub struct SectorizedFilter {
    words: Words,
    words_per_block: usize,
    groups: usize,
    /// Sectors per group.
    per_group: u64,
    k: u32,
    chooser: HashFamily,
    /// Z functions over the sectors of a group (unused with one sector per group).
    sector: HashFamily,
    /// k functions over the 64 bits of a sector; probe i belongs to group `i / (k/Z)`.
    bits: HashFamily,
    kind: FilterKind,
    lookup: Lookup,
    /// The families in lane form, for the vector paths' batches; none for byte hashes.
    kernel: Option<simd::Kernel>,
}

impl SectorizedFilter {
    /// `shape.m` whole blocks of `block_bits`, `groups` groups ([`layout`]); batches take the
    /// widest [`Lookup`] this CPU runs.
    pub fn new(shape: &Shape, block_bits: u64, groups: u32) -> Result<Self> {
        let Shape {
            m, k, hash, hash_seed, ..
        } = *shape;
        let (sectors, z) = ((block_bits / SECTOR_BITS) as usize, groups as usize);
        let chooser = HashFamily::new(hash, 1, m / block_bits, hash_seed ^ BLOCK_SEED);
        let sector = HashFamily::new(hash, groups, (sectors / z) as u64, !hash_seed);
        let bits = HashFamily::new(hash, k, SECTOR_BITS, hash_seed);
        let words = Words::zeroed(m)?;
        let kernel = simd::Kernel::new(&chooser, &sector, &bits, k, words.len(), sectors, z);
        Ok(SectorizedFilter {
            words,
            words_per_block: sectors,
            groups: z,
            per_group: (sectors / z) as u64,
            k,
            chooser,
            sector,
            bits,
            kind: shape.kind.clone(),
            lookup: Lookup::best(),
            kernel,
        })
    }

    /// The key's sectors and masks: from the lane form where the families have one
    /// ([`simd::Kernel::probe`]), else through each family's index function.
    #[inline(always)]
    fn probe(&self, key: u64) -> Probe {
        match &self.kernel {
            Some(kernel) => kernel.probe(key),
            None => self.probe_with(HashFamily::index, key),
        }
    }

    /// [`Self::probe`] with `bits`' index function given ([`with_index`]), so that a batch
    /// dispatches on its path once rather than at every bit.
    #[inline(always)]
    fn probe_with(&self, bit: Index, key: u64) -> Probe {
        let base = self.chooser.index(0, key) as usize * self.words_per_block;
        let per = (self.k as usize) / self.groups;
        let mut probe = Probe::default();
        for g in 0..self.groups {
            let sector = match self.per_group {
                1 => 0,
                _ => self.sector.index(g, key) as usize,
            };
            probe.words[g] = base + g * self.per_group as usize + sector;
            probe.masks[g] = (g * per..(g + 1) * per)
                .fold(0, |mask, i| mask | 1u64 << bit(&self.bits, i, key));
        }
        probe
    }

    /// `answers[j] = contains(keys[j])` by the given path: every key's sectors are found,
    /// [`LANES`] keys at a time, then their words tested.
    pub fn contains_with(&self, lookup: Lookup, keys: &[u64], answers: &mut [bool]) -> Result<()> {
        check_answers(keys, answers)?;
        #[cfg(target_arch = "x86_64")]
        if let (Some(kernel), Lookup::Avx2 | Lookup::Avx512) = (&self.kernel, lookup) {
            // SAFETY: a filter takes a vector path only if this CPU runs it ([`Lookup::available`]);
            // the kernel is of this filter's array.
            unsafe { kernel.contains(lookup == Lookup::Avx512, &self.words, keys, answers) };
            return Ok(());
        }
        let mut words = [[0i64; LANES]; MAX_GROUPS];
        let mut masks = [[0i64; LANES]; MAX_GROUPS];
        let bits = &self.bits;
        with_index!(bits, bit => for (keys, answers) in keys.chunks(LANES).zip(answers.chunks_mut(LANES)) {
            for (j, &key) in keys.iter().enumerate() {
                let probe = self.probe_with(bit, key);
                for g in 0..self.groups {
                    words[g][j] = probe.words[g] as i64;
                    masks[g][j] = probe.masks[g] as i64;
                }
            }
            // A short last chunk tests word 0 against mask 0 in its unused lanes: always set.
            for g in 0..self.groups {
                words[g][keys.len()..].fill(0);
                masks[g][keys.len()..].fill(0);
            }
            let found = self.test(lookup, &words[..self.groups], &masks[..self.groups]);
            for (j, answer) in answers.iter_mut().enumerate() {
                *answer = found >> j & 1 == 1;
            }
        });
        Ok(())
    }

    /// Bit j set when every group's word of lane j holds its mask.
    fn test(&self, lookup: Lookup, words: &[[i64; LANES]], masks: &[[i64; LANES]]) -> u32 {
        match lookup {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: a filter takes a vector path only if this CPU has it ([`Lookup::available`]),
            // and every word index lies in the array (a probe's block is one of its blocks).
            Lookup::Avx512 => unsafe { simd::test_avx512(&self.words, words, masks) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: as above.
            Lookup::Avx2 => unsafe { simd::test_avx2(&self.words, words, masks) },
            _ => test_scalar(&self.words, words, masks),
        }
    }
}

/// The scalar twin of the vector tests.
fn test_scalar(array: &[u64], words: &[[i64; LANES]], masks: &[[i64; LANES]]) -> u32 {
    let mut found = (1u32 << LANES) - 1;
    for (words, masks) in words.iter().zip(masks) {
        for j in 0..LANES {
            let mask = masks[j] as u64;
            let hit = array[words[j] as usize] & mask == mask;
            found &= !(u32::from(!hit) << j);
        }
    }
    found
}

/// The vector kernels and gathers.
mod simd;

impl Membership for SectorizedFilter {
    fn insert(&mut self, key: u64) {
        let probe = self.probe(key);
        for g in 0..self.groups {
            self.words[probe.words[g]] |= probe.masks[g];
        }
    }
    fn contains(&self, key: u64) -> bool {
        let probe = self.probe(key);
        (0..self.groups).all(|g| self.words[probe.words[g]] & probe.masks[g] == probe.masks[g])
    }
    fn contains_many(&self, keys: &[u64], answers: &mut [bool]) -> Result<()> {
        self.contains_with(self.lookup, keys, answers)
    }
}

impl Filter for SectorizedFilter {
    fn set_bits(&self) -> u64 {
        popcount(&self.words)
    }
    /// The mean over blocks of `Π_g mean over group g's sectors of (sector fill)^{k/Z}`.
    fn fpr_from_bits(&self) -> f64 {
        let per = (self.k as usize / self.groups) as i32;
        let blocks = self.words.chunks(self.words_per_block);
        let count = blocks.len() as f64;
        let rate = |block: &[u64]| -> f64 {
            block
                .chunks(self.per_group as usize)
                .map(|group| {
                    group
                        .iter()
                        .map(|w| (f64::from(w.count_ones()) / SECTOR_BITS as f64).powi(per))
                        .sum::<f64>()
                        / group.len() as f64
                })
                .product()
        };
        blocks.map(rate).sum::<f64>() / count
    }
    fn fpr_exact(&self, n: u64) -> f64 {
        self.kind.fpr_exact(n, self.memory_bits(), self.k)
    }
    fn memory_bits(&self) -> u64 {
        self.words.len() as u64 * 64
    }
    fn hashes(&self) -> u32 {
        self.k
    }
    fn kind(&self) -> FilterKind {
        self.kind.clone()
    }
    fn hash_name(&self) -> AppliedHash {
        self.bits.scheme().into()
    }
    fn vector_path(&self) -> Option<Simd> {
        Some(self.lookup.simd())
    }
    fn take_path(&mut self, simd: Simd) {
        if Lookup::available().contains(&Lookup::of(simd)) {
            self.lookup = Lookup::of(simd);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sector_moments_are_the_occupancy_moments() {
        for power in [1, 3, 4, 8] {
            let mut sector = SectorMoments::new(power);
            for j in [0u64, 1, 2, 7, 30, 3, 60] {
                let exact = crate::theory::occupancy_moment(j * u64::from(power), 64, power);
                let carried = sector.moment(j);
                assert!((carried - exact).abs() <= 1e-12, "r={power} j={j}: {carried} {exact}");
            }
        }
    }
}
