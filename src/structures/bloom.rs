//! The Bloom filter: m bits packed in u64 words, k hash functions.

use std::ops::Range;

use rayon::prelude::*;

use super::bloom_simd::Kernel;
use crate::error::{Error, Result};
use crate::hash::{HashFamily, HashScheme, IndexMath, MAX_K, Simd, with_index};
use crate::words::{Words, prefetch, prefetch_pays};

use super::probe_groups::PROBE_GROUP;
use super::probe_groups::every_group;

/// Keys per group of the batched paths: enough probe lines in flight to cover a memory
/// latency (about 14 lines at the rates measured here) through the rounds in which few keys
/// remain undecided.
pub const GROUP: usize = 256;
/// Probes hashed per round of parallel insertion: 4 bytes each, so the lists hold 4 MiB.
const PARALLEL_PROBES: usize = 1 << 20;

/// Largest bit array accepted: 2^36 bits (8 GiB).
pub const MAX_BITS: u64 = 1 << 36;

/// Set bits in a slice of words of any width: the one popcount every structure uses.
pub fn popcount<W: Copy + Into<u64>>(words: &[W]) -> u64 {
    words
        .iter()
        .map(|&w| u64::from(w.into().count_ones()))
        .sum()
}

/// Refuses a size outside `1..=MAX_BITS` or a k outside `1..=MAX_K`.
pub fn check_shape(m: u64, k: u32) -> Result<()> {
    if m == 0 || m > MAX_BITS {
        return Err(size_out_of_range(m));
    }
    if k == 0 || k > MAX_K {
        return Err(Error::invalid(
            "k",
            k,
            "number of hashes out of range",
            format!("1..={MAX_K}"),
        ));
    }
    Ok(())
}

/// The refusal of a bit array of m bits, outside `1..=MAX_BITS`.
pub(super) fn size_out_of_range(m: u64) -> Error {
    Error::invalid(
        "m",
        m,
        "bit array size out of range",
        format!("1..={MAX_BITS}"),
    )
}

/// `ceil(bits / 64)` zeroed words, or an error (not an abort) when they cannot be allocated.
pub(crate) fn zeroed_words(bits: u64) -> Result<Vec<u64>> {
    let count = bits.div_ceil(64) as usize;
    let mut words = Vec::new();
    words.try_reserve_exact(count).map_err(|_| {
        Error::invalid(
            "m",
            bits,
            format!("cannot allocate {} bytes", count * 8),
            "a bit array that fits in memory",
        )
    })?;
    words.resize(count, 0);
    Ok(words)
}

/// A classic Bloom filter.
///
/// Invariant: after `insert(x)`, `contains(x)` is true for ever (no false negatives); there is
/// no deletion.
#[derive(Debug)]
pub struct BloomFilter {
    words: Words,
    m: u64,
    k: u32,
    hashes: HashFamily,
    /// The k probes in vector lanes ([`Kernel`]) for inserts, one-key queries on AVX-512
    /// and, in cache, batched queries: on the multiply-shift paths where the CPU has AVX2
    /// or AVX-512; none (the scalar loops below) elsewhere.
    kernel: Option<Kernel>,
}

impl BloomFilter {
    /// An empty filter of `m` bits and `k` hashes drawn from `hash_seed`.
    /// Fails (rather than aborting) when the bit array cannot be allocated.
    pub fn new(m: u64, k: u32, scheme: HashScheme, hash_seed: u64) -> Result<Self> {
        Self::with_math(m, k, scheme, scheme.default_math(), hash_seed)
    }

    /// [`BloomFilter::new`] with another index arithmetic (probes, reduction, width).
    pub fn with_math(
        m: u64,
        k: u32,
        scheme: HashScheme,
        math: IndexMath,
        hash_seed: u64,
    ) -> Result<Self> {
        check_shape(m, k)?;
        let hashes = HashFamily::with_math(scheme, math, k, m, hash_seed);
        Ok(BloomFilter {
            words: Words::zeroed(m)?,
            m,
            k,
            kernel: Kernel::new(&hashes, k, Simd::best()),
            hashes,
        })
    }

    /// The same filter computing its probes on another path: the scalar loops, or a vector
    /// path on multiply-shift; refused when this CPU lacks the path or the family has no
    /// vector form.
    pub fn on(mut self, simd: Simd) -> Result<Self> {
        if simd == Simd::Scalar {
            self.kernel = None;
            return Ok(self);
        }
        self.kernel = Some(Kernel::new(&self.hashes, self.k, simd).ok_or_else(|| {
            let why = if simd.runs_here() {
                "no vector form for this hash"
            } else {
                "this CPU lacks it"
            };
            Error::invalid(
                "simd",
                simd,
                why,
                "scalar, or a path this CPU runs on multiply-shift",
            )
        })?);
        Ok(self)
    }

    /// Computes the probes on `simd` (which must run on this CPU) where the family has a
    /// vector form, else on the scalar loops.
    pub fn set_path(&mut self, simd: Simd) {
        self.kernel = Kernel::new(&self.hashes, self.k, simd);
    }

    pub fn simd(&self) -> Simd {
        self.kernel.as_ref().map_or(Simd::Scalar, Kernel::simd)
    }

    pub fn family(&self) -> &HashFamily {
        &self.hashes
    }

    pub fn bits(&self) -> u64 {
        self.m
    }

    pub fn scheme(&self) -> HashScheme {
        self.hashes.scheme()
    }

    pub fn hash_count(&self) -> u32 {
        self.k
    }

    /// Sets the k bits of `key`.
    #[inline]
    pub fn insert(&mut self, key: u64) {
        if let Some(kernel) = &self.kernel {
            return kernel.set(&mut self.words, key);
        }
        let (words, hashes, k) = (&mut self.words, &self.hashes, self.k);
        with_index!(hashes, index => set_probes_out_of_line(words, hashes, k, key, index))
    }

    #[inline(always)]
    fn set_all(&mut self, key: u64, index: impl Fn(&HashFamily, usize, u64) -> u64 + Copy) {
        set_probes(&mut self.words, &self.hashes, self.k, key, index)
    }

    /// True ("probably present") only if all k bits of `key` are set ([`every_group`]).
    #[inline]
    pub fn contains(&self, key: u64) -> bool {
        match self
            .kernel
            .as_ref()
            .and_then(|kernel| kernel.test(&self.words, key))
        {
            Some(answer) => answer,
            None => self.contains_scalar(key),
        }
    }

    /// [`BloomFilter::contains`] on the scalar loops, out of line so that the vector path
    /// saves none of the registers they need (the layouts tried: docs/PERFORMANCE.md).
    #[inline(never)]
    fn contains_scalar(&self, key: u64) -> bool {
        with_index!(self.hashes, index => self.all_set(key, |i, x| index(&self.hashes, i, x)))
    }

    #[inline(always)]
    fn all_set(&self, key: u64, index: impl Fn(usize, u64) -> u64) -> bool {
        every_group(self.k as usize, |probes| {
            probes.fold(1, |all, i| {
                let bit = index(i, key);
                all & (self.words[(bit >> 6) as usize] >> (bit & 63))
            }) & 1
                == 1
        })
    }

    /// Starts loading the words of the key's first [`PROBE_GROUP`] probes, the ones
    /// [`BloomFilter::contains`] reads before its first exit.
    #[inline]
    pub fn prefetch_query(&self, key: u64) {
        let first = (self.k as usize).min(PROBE_GROUP);
        with_index!(self.hashes, index => for i in 0..first {
            prefetch(&self.words[(index(&self.hashes, i, key) >> 6) as usize]);
        })
    }

    /// Sets the k bits of a byte key, hashed by the family itself ([`HashFamily::for_each_index_bytes`]).
    pub fn insert_bytes(&mut self, key: &[u8]) {
        let words = &mut self.words;
        self.hashes.for_each_index_bytes(self.k, key, |bit| {
            words[(bit >> 6) as usize] |= 1u64 << (bit & 63)
        });
    }

    /// True only if all k bits of a byte key are set.
    pub fn contains_bytes(&self, key: &[u8]) -> bool {
        let mut all = true;
        self.hashes.for_each_index_bytes(self.k, key, |bit| {
            all &= self.words[(bit >> 6) as usize] >> (bit & 63) & 1 == 1
        });
        all
    }

    /// Inserts every key of `keys`, [`GROUP`] at a time: each round hashes probe i of the
    /// group's keys and prefetches their words before setting any; in cache, with a vector
    /// kernel, key by key in one loop. The same bits as inserting the keys one by one (OR
    /// commutes).
    pub fn insert_batch(&mut self, keys: &[u64]) {
        if let Some(kernel) = self.kernel.as_ref().filter(|_| !prefetch_pays(&self.words)) {
            return kernel.set_many(&mut self.words, keys);
        }
        with_index!(self.hashes, index => self.set_batch(keys, index))
    }

    #[inline(always)]
    fn set_batch(&mut self, keys: &[u64], index: impl Fn(&HashFamily, usize, u64) -> u64 + Copy) {
        if !prefetch_pays(&self.words) {
            return keys.iter().for_each(|&key| self.set_all(key, index));
        }
        let mut bits = [0u64; GROUP];
        for group in keys.chunks(GROUP) {
            for i in 0..self.k as usize {
                for (bit, &key) in bits.iter_mut().zip(group) {
                    *bit = index(&self.hashes, i, key);
                    prefetch(&self.words[(*bit >> 6) as usize]);
                }
                for &bit in &bits[..group.len()] {
                    self.words[(bit >> 6) as usize] |= 1u64 << (bit & 63);
                }
            }
        }
    }

    /// `answers[j] = contains(keys[j])`, [`GROUP`] keys at a time: round i tests probe i of
    /// the keys still undecided and hashes their probe i + 1, prefetching it for a key whose
    /// bit was set (a key found absent prefetches the line it just read instead, so no
    /// branch). An absent key touches about `1/(1 - fill)` lines, the group's misses overlap,
    /// and round i + 1's lines are in flight while round i is still testing. In cache, with
    /// a vector kernel, key by key in one loop. `answers` must be as long as `keys`.
    pub fn contains_batch(&self, keys: &[u64], answers: &mut [bool]) {
        if let Some(kernel) = self.kernel.as_ref().filter(|_| !prefetch_pays(&self.words)) {
            return kernel.test_many(&self.words, keys, answers);
        }
        with_index!(self.hashes, index => self.test_batch(keys, answers, index))
    }

    #[inline(always)]
    fn test_batch(
        &self,
        keys: &[u64],
        answers: &mut [bool],
        index: impl Fn(&HashFamily, usize, u64) -> u64 + Copy,
    ) {
        if !prefetch_pays(&self.words) {
            for (answer, &key) in answers.iter_mut().zip(keys) {
                *answer = self.all_set(key, |i, x| index(&self.hashes, i, x));
            }
            return;
        }
        let k = self.k as usize;
        let mut bits = [0u64; GROUP];
        let mut undecided = [0u16; GROUP];
        for (group, answers) in keys.chunks(GROUP).zip(answers.chunks_mut(GROUP)) {
            answers.fill(true);
            let mut count = group.len();
            for (j, (slot, bit)) in undecided.iter_mut().zip(&mut bits).enumerate().take(count) {
                *slot = j as u16;
                *bit = index(&self.hashes, 0, group[j]);
                prefetch(&self.words[(*bit >> 6) as usize]);
            }
            for i in 0..k {
                let last = i + 1 == k;
                let mut still = 0;
                for c in 0..count {
                    let (bit, j) = (bits[c], undecided[c]);
                    let set = (self.words[(bit >> 6) as usize] >> (bit & 63)) & 1 == 1;
                    answers[j as usize] = set;
                    undecided[still] = j;
                    if !last {
                        let following = index(&self.hashes, i + 1, group[j as usize]);
                        bits[still] = following;
                        prefetch(&self.words[(if set { following } else { bit } >> 6) as usize]);
                    }
                    still += usize::from(set);
                }
                count = still;
                if count == 0 {
                    break;
                }
            }
        }
    }

    /// Inserts `key_of(c)` for every counter c in `counters`, on all cores, without atomics:
    /// the bit array is cut into regions, each round hashes a slice of the keys on every core
    /// into per-region lists of probes, then each region's probes are set by one core. OR
    /// commutes, so the bits equal those of sequential insertion exactly.
    pub fn insert_parallel(&mut self, counters: Range<u64>, key_of: impl Fn(u64) -> u64 + Sync) {
        let plan = Regions::plan(self.words.len(), rayon::current_num_threads());
        let keys_per_round = (PARALLEL_PROBES / self.k as usize).max(1) as u64;
        let mut lists: Vec<Vec<Vec<u32>>> = vec![vec![Vec::new(); plan.count]; plan.pieces];
        let mut start = counters.start;
        while start < counters.end {
            let end = counters.end.min(start.saturating_add(keys_per_round));
            self.scatter(&plan, start..end, &key_of, &mut lists);
            let region_words = 1usize << (plan.shift - 6);
            self.words
                .par_chunks_mut(region_words)
                .enumerate()
                .for_each(|(r, region)| {
                    lists.iter().for_each(|piece| set_listed(region, &piece[r]))
                });
            start = end;
        }
    }

    /// Hashes `key_of(c)` for c in `counters`, a piece per core, into `lists[piece][region]`:
    /// the probe's bit offset within its region.
    fn scatter(
        &self,
        plan: &Regions,
        counters: Range<u64>,
        key_of: &(impl Fn(u64) -> u64 + Sync),
        lists: &mut [Vec<Vec<u32>>],
    ) {
        let per_piece = (counters.end - counters.start).div_ceil(plan.pieces as u64);
        let (k, hashes, shift) = (self.k as usize, &self.hashes, plan.shift);
        let mask = (1u64 << shift) - 1;
        lists.par_iter_mut().enumerate().for_each(|(p, piece)| {
            piece.iter_mut().for_each(Vec::clear);
            let first = counters.start + p as u64 * per_piece;
            let last = counters.end.min(first.saturating_add(per_piece));
            with_index!(hashes, index => for c in first..last {
                let key = key_of(c);
                for i in 0..k {
                    let bit = index(hashes, i, key);
                    piece[(bit >> shift) as usize].push((bit & mask) as u32);
                }
            })
        });
    }

    /// The bit array: bit b is bit `b % 64` of word `b / 64`.
    pub fn words(&self) -> &[u64] {
        &self.words
    }

    /// Number of set bits (popcount over the words).
    pub fn set_bits(&self) -> u64 {
        self.words.par_chunks(1 << 12).map(popcount).sum()
    }

    /// `(bits, set bits)` of each of at most `regions` runs of whole words, in order: equal
    /// runs of `ceil(words / regions)` words, the last one holding the bits up to m.
    pub fn set_bits_by_region(&self, regions: usize) -> Vec<(u64, u64)> {
        let per_region = self.words.len().div_ceil(regions.max(1)).max(1);
        self.words
            .chunks(per_region)
            .enumerate()
            .map(|(r, chunk)| {
                let start = (r * per_region * 64) as u64;
                let bits = (chunk.len() as u64 * 64).min(self.m - start);
                (bits, popcount(chunk))
            })
            .collect()
    }

    /// Fraction of bits set, `set_bits / m`.
    pub fn fill(&self) -> f64 {
        self.set_bits() as f64 / self.m as f64
    }
}

/// Sets the k probes of `key`. The words and the family come in as separate arguments, so
/// the compiler knows that setting a bit cannot change the family's parameters and keeps
/// them in registers across the loop (double hashing's pair is then computed once per key,
/// not once per probe).
#[inline(always)]
fn set_probes(
    words: &mut [u64],
    hashes: &HashFamily,
    k: u32,
    key: u64,
    index: impl Fn(&HashFamily, usize, u64) -> u64,
) {
    for i in 0..k as usize {
        let bit = index(hashes, i, key);
        words[(bit >> 6) as usize] |= 1u64 << (bit & 63);
    }
}

/// [`set_probes`] behind a call of its own for each index function, so that
/// [`BloomFilter::insert`] is a jump to it.
#[inline(never)]
fn set_probes_out_of_line(
    words: &mut [u64],
    hashes: &HashFamily,
    k: u32,
    key: u64,
    index: impl Fn(&HashFamily, usize, u64) -> u64,
) {
    set_probes(words, hashes, k, key, index)
}

/// How [`BloomFilter::insert_parallel`] cuts the bit array: `count` regions of `2^shift`
/// bits (the last one shorter), about four per core so that the cores stay busy, each at
/// most 2^32 bits so that a probe's offset fits a u32; keys hashed in `pieces` pieces.
struct Regions {
    shift: u32,
    count: usize,
    pieces: usize,
}

impl Regions {
    fn plan(words: usize, threads: usize) -> Regions {
        let threads = threads.max(1);
        let target = (words.max(1) * 64).div_ceil(4 * threads);
        let shift = target.next_power_of_two().trailing_zeros().clamp(6, 32);
        let region_words = 1usize << (shift - 6);
        Regions {
            shift,
            count: words.div_ceil(region_words).max(1),
            pieces: threads,
        }
    }
}

/// Sets the listed bit offsets in `region`, prefetching a few probes ahead.
fn set_listed(region: &mut [u64], offsets: &[u32]) {
    const AHEAD: usize = 16;
    for (j, &bit) in offsets.iter().enumerate() {
        if let Some(&next) = offsets.get(j + AHEAD) {
            prefetch(&region[(next >> 6) as usize]);
        }
        region[(bit >> 6) as usize] |= 1u64 << (bit & 63);
    }
}
