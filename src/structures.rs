//! The filter interface the experiments measure, and the structures behind it: the classic
//! filter, a blocked filter (Putze, Sanders and Singler 2007) and a split-block filter (as in
//! Parquet). Each states the rate its own bits predict and its exact expected rate.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::filter::{BloomFilter, MAX_BITS, zeroed_words};
use crate::hash::{HashFamily, HashScheme, with_index};
use crate::theory;

/// Insert and query: all that timing needs, and all a peer crate offers.
pub trait Membership {
    /// Adds a key; afterwards `contains(key)` is true (until it is deleted, where supported).
    fn insert(&mut self, key: u64);
    /// "Probably present".
    fn contains(&self, key: u64) -> bool;
}

/// What an experiment needs of a filter.
pub trait Filter: Membership + Send + Sync {
    /// Number of set bits.
    fn set_bits(&self) -> u64;
    /// The false-positive rate the filter's own bits predict for a random absent key, under
    /// independent probes: the quantity the bits check compares the measurement with. By
    /// default that of a plain bit array, `fill^k` with fill = set bits / memory bits;
    /// every other layout overrides it.
    fn fpr_from_bits(&self) -> f64 {
        theory::fpr_from_fill(
            self.set_bits() as f64 / self.memory_bits() as f64,
            self.hashes(),
        )
    }
    /// Removes a key that was inserted. Only structures that keep counts can; the others
    /// refuse with [`Error::Unsupported`] rather than risk false negatives.
    fn delete(&mut self, _key: u64) -> Result<()> {
        Err(Error::Unsupported {
            filter: self.kind().name(),
            operation: "delete",
            supported: "counting, cuckoo",
        })
    }
    /// The structure's exact expected rate once n distinct keys are in
    /// ([`FilterKind::fpr_exact`] for its own layout). By default that of a plain bit array
    /// of `memory_bits` bits and `hashes` probes, `E[(X/m)^k]` ([`theory::fpr_exact`]).
    fn fpr_exact(&self, n: u64) -> f64 {
        theory::fpr_exact(n, self.memory_bits(), self.hashes())
    }
    /// Bits of memory the table holds: m for bit arrays, 4m for 4-bit counters, every
    /// sub-filter of a growing filter.
    fn memory_bits(&self) -> u64;
    /// Hashes per key: k (a cuckoo filter's fingerprint bits; a growing filter's slices
    /// summed over its sub-filters).
    fn hashes(&self) -> u32;
    /// Which structure this is.
    fn kind(&self) -> FilterKind;
}

/// How many of `key_of(c)`, c in `counters`, the filter reports present, on all cores.
pub fn count_present<F: Membership + Sync + ?Sized>(
    filter: &F,
    counters: std::ops::Range<u64>,
    key_of: impl Fn(u64) -> u64 + Sync,
) -> u64 {
    use rayon::prelude::*;
    counters
        .into_par_iter()
        .filter(|&c| filter.contains(key_of(c)))
        .count() as u64
}

impl Membership for BloomFilter {
    fn insert(&mut self, key: u64) {
        BloomFilter::insert(self, key)
    }
    fn contains(&self, key: u64) -> bool {
        BloomFilter::contains(self, key)
    }
}

impl Filter for BloomFilter {
    fn set_bits(&self) -> u64 {
        BloomFilter::set_bits(self)
    }
    fn memory_bits(&self) -> u64 {
        self.bits()
    }
    fn hashes(&self) -> u32 {
        self.hash_count()
    }
    fn kind(&self) -> FilterKind {
        FilterKind::Classic
    }
}

/// Bits in a blocked filter's block: one 512-bit cache line.
pub const BLOCK_BITS: u64 = 512;
/// Bits in a split-block filter's block: eight 32-bit words.
pub const SPLIT_BLOCK_BITS: u64 = 256;
/// Words per split block, one bit set in each: k is always 8.
pub const SPLIT_WORDS: u32 = 8;

/// The structures by name.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FilterKind {
    /// m bits, k independent probes anywhere.
    #[default]
    Classic,
    /// All k probes of a key in one 512-bit block chosen by a further hash.
    Blocked,
    /// A 256-bit block of eight 32-bit words; one bit in each word (k = 8).
    SplitBlock,
    /// m 4-bit counters instead of bits (four times the space), with delete.
    Counting,
    /// A cuckoo filter (Fan et al. 2014): buckets of 4 fingerprints of k bits, with delete.
    Cuckoo,
    /// A binary fuse filter (Graf and Lemire 2022, the `xorf` crate): static, built once from
    /// all its keys, k-bit fingerprints (8, 16 or 32) in about 1.125 n slots.
    BinaryFuse,
    /// The `fastbloom` crate (feature `peers`).
    Fastbloom,
    /// The `bloomfilter` crate (feature `peers`).
    Bloomfilter,
    /// The `growable-bloom-filter` crate, a scalable filter that adds sub-filters as it
    /// fills (feature `peers`).
    #[serde(rename = "growable-bloom-filter")]
    Growable,
}

impl FilterKind {
    pub const ALL: [FilterKind; 9] = [
        FilterKind::Classic,
        FilterKind::Blocked,
        FilterKind::SplitBlock,
        FilterKind::Counting,
        FilterKind::Cuckoo,
        FilterKind::BinaryFuse,
        FilterKind::Fastbloom,
        FilterKind::Bloomfilter,
        FilterKind::Growable,
    ];
    /// bloomlab's own structures: the first six of [`FilterKind::ALL`].
    pub const OWN: &[FilterKind] = Self::ALL.split_at(6).0;
    /// The crates people ship, behind adapters ([`crate::peers`]): the rest of `ALL`.
    pub const PEERS: &[FilterKind] = Self::ALL.split_at(6).1;

    pub fn name(self) -> &'static str {
        match self {
            FilterKind::Classic => "classic",
            FilterKind::Blocked => "blocked",
            FilterKind::SplitBlock => "split-block",
            FilterKind::Counting => "counting",
            FilterKind::Cuckoo => "cuckoo",
            FilterKind::BinaryFuse => "binary-fuse",
            FilterKind::Fastbloom => "fastbloom",
            FilterKind::Bloomfilter => "bloomfilter",
            FilterKind::Growable => "growable-bloom-filter",
        }
    }

    /// Counting and cuckoo filters keep enough to remove a key; the others refuse.
    pub fn supports_delete(self) -> bool {
        matches!(self, FilterKind::Counting | FilterKind::Cuckoo)
    }

    /// A static structure, built once from all its keys: it cannot be sized by m.
    pub fn is_static(self) -> bool {
        self == FilterKind::BinaryFuse
    }

    /// A peer crate rather than one of bloomlab's structures.
    pub fn is_peer(self) -> bool {
        Self::PEERS.contains(&self)
    }

    /// False for a structure that takes no hash seed (growable-bloom-filter hashes with a
    /// fixed key): its runs are all alike, and re-seeding changes nothing.
    pub fn accepts_seed(self) -> bool {
        self != FilterKind::Growable
    }

    /// Refuses a peer crate when this build has none.
    fn require_built(self) -> Result<()> {
        if self.is_peer() && !cfg!(feature = "peers") {
            return Err(Error::NotBuilt {
                filter: self.name(),
                feature: "peers",
            });
        }
        Ok(())
    }

    /// The bit count actually allocated for a request of m: whole blocks for the blocked
    /// structures. Refuses a k the structure cannot take.
    pub fn layout(self, m: u64, k: u32) -> Result<u64> {
        self.require_built()?;
        let block = match self {
            FilterKind::Classic | FilterKind::Counting => return Ok(m),
            FilterKind::Cuckoo => return cuckoo_layout(m, k),
            FilterKind::BinaryFuse => return binary_fuse_layout(m, k),
            #[cfg(feature = "peers")]
            FilterKind::Fastbloom | FilterKind::Bloomfilter | FilterKind::Growable => {
                return crate::peers::layout(self, m, k);
            }
            #[cfg(not(feature = "peers"))]
            FilterKind::Fastbloom | FilterKind::Bloomfilter | FilterKind::Growable => {
                unreachable!("refused by require_built")
            }
            FilterKind::Blocked => BLOCK_BITS,
            FilterKind::SplitBlock => {
                if k != SPLIT_WORDS {
                    return Err(Error::invalid(
                        "k",
                        k,
                        "a split-block filter sets one bit in each of its 8 words",
                        "8 with --filter split-block",
                    ));
                }
                SPLIT_BLOCK_BITS
            }
        };
        let rounded = m.div_ceil(block) * block;
        if rounded > MAX_BITS {
            return Err(Error::invalid(
                "m",
                m,
                "bit array size out of range",
                format!("1..={MAX_BITS}"),
            ));
        }
        Ok(rounded)
    }

    /// An empty filter of m bits (as given by [`FilterKind::layout`]) and k hashes.
    pub fn build(
        self,
        m: u64,
        k: u32,
        scheme: HashScheme,
        hash_seed: u64,
    ) -> Result<Box<dyn Filter>> {
        let m = self.layout(m, k)?;
        Ok(match self {
            FilterKind::Classic => Box::new(BloomFilter::new(m, k, scheme, hash_seed)?),
            FilterKind::Blocked => {
                Box::new(BlockedFilter::new(m, k, scheme, hash_seed, BLOCK_BITS)?)
            }
            FilterKind::SplitBlock => Box::new(SplitBlockFilter::new(m, scheme, hash_seed)?),
            FilterKind::Counting => Box::new(CountingFilter::new(m, k, scheme, hash_seed)?),
            FilterKind::Cuckoo => Box::new(CuckooFilter::new(m, k, scheme, hash_seed)?),
            FilterKind::BinaryFuse => Box::new(BinaryFuseFilter::new(k)?),
            #[cfg(feature = "peers")]
            FilterKind::Fastbloom | FilterKind::Bloomfilter | FilterKind::Growable => {
                crate::peers::build(self, m, k, hash_seed)?
            }
            #[cfg(not(feature = "peers"))]
            FilterKind::Fastbloom | FilterKind::Bloomfilter | FilterKind::Growable => {
                unreachable!("refused by layout")
            }
        })
    }

    /// An empty filter for n keys at target rate ε: bloomlab's classic filter sized by
    /// `m = n log2(1/ε)/ln 2`, `k = round((m/n) ln 2)`; a peer crate configured the way its
    /// README shows (by ε and n). Refuses the other structures, which have no such constructor.
    pub fn for_rate(self, n: u64, fpr: f64, hash_seed: u64) -> Result<Box<dyn Filter>> {
        self.require_built()?;
        match self {
            FilterKind::Classic => {
                let (m, k) = theory::classic_design(n, fpr);
                self.build(m, k, HashScheme::MultiplyShift, hash_seed)
            }
            #[cfg(feature = "peers")]
            FilterKind::Fastbloom | FilterKind::Bloomfilter | FilterKind::Growable => {
                crate::peers::by_rate(self, n, fpr, hash_seed)
            }
            _ => Err(Error::Unsupported {
                filter: self.name(),
                operation: "be configured by target rate",
                supported: "classic, fastbloom, bloomfilter, growable-bloom-filter",
            }),
        }
    }

    /// The exact expected rate for n keys in m bits with k hashes.
    ///
    /// classic, counting (a counter is nonzero exactly when the classic bit would be set),
    /// fastbloom and bloomfilter: `E[(X/m)^k]` ([`theory::fpr_exact`]). blocked: the Poisson mixture over the
    /// keys in the query's block, `Σ_i Po(i; nb/m) · E[(X_i/b)^k]` with `X_i` the set bits of
    /// a b-bit block holding i keys. split-block: `Σ_i Po(i; nb/m) · (1 - (1 - 1/32)^i)^8`.
    /// binary-fuse: `2^-k`, the chance that the XOR of an absent key's three k-bit
    /// fingerprints matches its own.
    /// (The block load is binomial; the Poisson form is the standard approximation, exact as
    /// the number of blocks grows.) cuckoo, with f = k fingerprint bits and B buckets: a query
    /// compares its fingerprint with the ~2n/B entries of its two buckets, each matching with
    /// probability `1/(2^f - 1)`, so `1 - (1 - 1/(2^f-1))^{2n/B}` (Fan et al.'s bound
    /// `2b/2^f` at full load).
    pub fn fpr_exact(self, n: u64, m: u64, k: u32) -> f64 {
        match self {
            FilterKind::Classic
            | FilterKind::Counting
            | FilterKind::Fastbloom
            | FilterKind::Bloomfilter => theory::fpr_exact(n, m, k),
            FilterKind::Blocked => {
                poisson_mixture(n, m, BLOCK_BITS, |i| theory::fpr_exact(i, BLOCK_BITS, k))
            }
            FilterKind::SplitBlock => poisson_mixture(n, m, SPLIT_BLOCK_BITS, |i| {
                (1.0 - (1.0 - 1.0 / 32.0f64).powi(i as i32)).powi(SPLIT_WORDS as i32)
            }),
            FilterKind::BinaryFuse => 0.5f64.powi(k as i32),
            FilterKind::Cuckoo => {
                let buckets = (m / (CUCKOO_SLOTS * u64::from(k))) as f64;
                let miss = 1.0 - 1.0 / ((1u64 << k) - 1) as f64;
                -((2.0 * n as f64 / buckets) * miss.ln()).exp_m1()
            }
            // growable-bloom-filter: its growth schedule from the shape (NaN without the crate).
            #[cfg(feature = "peers")]
            FilterKind::Growable => crate::peers::Growable::by_shape(m, k)
                .map_or(f64::NAN, |g| Filter::fpr_exact(&g, n)),
            #[cfg(not(feature = "peers"))]
            FilterKind::Growable => f64::NAN,
        }
    }
}

/// `Σ_i Po(i; λ) · rate(i)` with `λ = n·block/m` keys per block, over the i whose Poisson
/// weight exceeds `e^{-40}` of the total (the rest cannot change the sum).
fn poisson_mixture(n: u64, m: u64, block: u64, rate: impl Fn(u64) -> f64) -> f64 {
    let lambda = n as f64 * block as f64 / m as f64;
    let high = (lambda + 40.0 * lambda.sqrt() + 20.0).ceil() as u64;
    let log_mode =
        lambda.floor() * lambda.ln() - lambda - crate::theory::ln_factorial(lambda.floor() as u64);
    let mut log_p = -lambda;
    let mut total = 0.0;
    for i in 1..=high {
        log_p += lambda.ln() - (i as f64).ln();
        if log_p > log_mode - 40.0 {
            total += log_p.exp() * rate(i);
        }
    }
    total
}

named_enum!(FilterKind, "filter");

/// Bits as u64 words in blocks, with the arithmetic the blocked structures share: one hash
/// picks a key's block, once per key; each structure says which word of the block, and which
/// bit of it, its j-th probe sets.
#[derive(Clone, Debug)]
struct Blocks {
    words: Vec<u64>,
    words_per_block: usize,
    /// Picks the block: one hash over the number of blocks.
    chooser: HashFamily,
}

impl Blocks {
    fn new(m: u64, block_bits: u64, scheme: HashScheme, hash_seed: u64) -> Result<Self> {
        Ok(Blocks {
            words: zeroed_words(m)?,
            words_per_block: (block_bits / 64) as usize,
            chooser: HashFamily::new(scheme, 1, m / block_bits, hash_seed ^ BLOCK_SEED),
        })
    }

    /// The first word of the key's block.
    #[inline]
    fn base(&self, key: u64) -> usize {
        self.chooser.index(0, key) as usize * self.words_per_block
    }

    /// Sets probes `0..probes` of the key; `probe(j)` is (word within the block, bit mask).
    #[inline]
    fn set(&mut self, key: u64, probes: usize, probe: impl Fn(usize) -> (usize, u64)) {
        let base = self.base(key);
        for j in 0..probes {
            let (word, mask) = probe(j);
            self.words[base + word] |= mask;
        }
    }

    /// True when every probe of the key is set. Every probe is read (all lie in one cache
    /// line) and the missing bits are OR-ed together, so an absent key costs no mispredicted
    /// early exit.
    #[inline]
    fn all_set(&self, key: u64, probes: usize, probe: impl Fn(usize) -> (usize, u64)) -> bool {
        let block = &self.words[self.base(key)..][..self.words_per_block];
        let missing = (0..probes).fold(0u64, |missing, j| {
            let (word, mask) = probe(j);
            missing | (mask & !block[word])
        });
        missing == 0
    }

    fn set_bits(&self) -> u64 {
        self.words.iter().map(|w| u64::from(w.count_ones())).sum()
    }

    /// The mean over blocks of `rate(block words)`: a query lands in a uniform block.
    fn mean_over_blocks(&self, rate: impl Fn(&[u64]) -> f64) -> f64 {
        let blocks = self.words.chunks(self.words_per_block);
        let count = blocks.len() as f64;
        blocks.map(rate).sum::<f64>() / count
    }
}

/// Separates the block-choosing hash from the in-block hashes drawn from the same seed.
const BLOCK_SEED: u64 = 0x626c_6f63_6b73;

/// A blocked Bloom filter: a key's k bits all lie in one b-bit block.
#[derive(Clone, Debug)]
pub struct BlockedFilter {
    blocks: Blocks,
    in_block: HashFamily,
    k: u32,
}

impl BlockedFilter {
    /// m must be a whole number of `block_bits`-bit blocks ([`FilterKind::layout`]).
    pub fn new(
        m: u64,
        k: u32,
        scheme: HashScheme,
        hash_seed: u64,
        block_bits: u64,
    ) -> Result<Self> {
        Ok(BlockedFilter {
            blocks: Blocks::new(m, block_bits, scheme, hash_seed)?,
            in_block: HashFamily::new(scheme, k, block_bits, hash_seed),
            k,
        })
    }
}

/// The index function of a hash family ([`with_index`]).
type Index = fn(&HashFamily, usize, u64) -> u64;

/// Probe i of a blocked filter: bit `h_i(x)` of the block.
#[inline(always)]
fn block_probe(index: Index, in_block: &HashFamily, key: u64, i: usize) -> (usize, u64) {
    let bit = index(in_block, i, key);
    ((bit >> 6) as usize, 1u64 << (bit & 63))
}

impl Membership for BlockedFilter {
    fn insert(&mut self, key: u64) {
        let (in_block, k) = (&self.in_block, self.k as usize);
        with_index!(in_block, index => self
            .blocks
            .set(key, k, |i| block_probe(index, in_block, key, i)))
    }
    fn contains(&self, key: u64) -> bool {
        let (in_block, k) = (&self.in_block, self.k as usize);
        with_index!(in_block, index => self
            .blocks
            .all_set(key, k, |i| block_probe(index, in_block, key, i)))
    }
}

impl Filter for BlockedFilter {
    fn set_bits(&self) -> u64 {
        self.blocks.set_bits()
    }
    fn fpr_exact(&self, n: u64) -> f64 {
        FilterKind::Blocked.fpr_exact(n, self.memory_bits(), self.k)
    }
    fn memory_bits(&self) -> u64 {
        self.blocks.words.len() as u64 * 64
    }
    fn hashes(&self) -> u32 {
        self.k
    }
    fn kind(&self) -> FilterKind {
        FilterKind::Blocked
    }
    /// The mean over blocks of `(block fill)^k`.
    fn fpr_from_bits(&self) -> f64 {
        let block_bits = (self.blocks.words_per_block * 64) as f64;
        self.blocks.mean_over_blocks(|b| {
            let set: u32 = b.iter().map(|w| w.count_ones()).sum();
            (f64::from(set) / block_bits).powi(self.k as i32)
        })
    }
}

/// A split-block filter: 256-bit blocks of eight 32-bit words, one bit set in each word.
#[derive(Clone, Debug)]
pub struct SplitBlockFilter {
    blocks: Blocks,
    in_word: HashFamily,
}

impl SplitBlockFilter {
    /// m must be a whole number of 256-bit blocks ([`FilterKind::layout`]).
    pub fn new(m: u64, scheme: HashScheme, hash_seed: u64) -> Result<Self> {
        Ok(SplitBlockFilter {
            blocks: Blocks::new(m, SPLIT_BLOCK_BITS, scheme, hash_seed)?,
            in_word: HashFamily::new(scheme, SPLIT_WORDS, 32, hash_seed),
        })
    }
}

/// Probe j of a split block: bit `h_j(x)` of 32-bit word j, word j being half `j & 1` of
/// u64 word `j / 2` of the block.
#[inline(always)]
fn split_probe(index: Index, in_word: &HashFamily, key: u64, j: usize) -> (usize, u64) {
    let bit = index(in_word, j, key) + 32 * (j as u64 & 1);
    (j / 2, 1u64 << bit)
}

impl Membership for SplitBlockFilter {
    fn insert(&mut self, key: u64) {
        let in_word = &self.in_word;
        with_index!(in_word, index => self
            .blocks
            .set(key, SPLIT_WORDS as usize, |j| split_probe(index, in_word, key, j)))
    }
    fn contains(&self, key: u64) -> bool {
        let in_word = &self.in_word;
        with_index!(in_word, index => self
            .blocks
            .all_set(key, SPLIT_WORDS as usize, |j| split_probe(index, in_word, key, j)))
    }
}

impl Filter for SplitBlockFilter {
    fn set_bits(&self) -> u64 {
        self.blocks.set_bits()
    }
    fn fpr_exact(&self, n: u64) -> f64 {
        FilterKind::SplitBlock.fpr_exact(n, self.memory_bits(), SPLIT_WORDS)
    }
    fn memory_bits(&self) -> u64 {
        self.blocks.words.len() as u64 * 64
    }
    fn hashes(&self) -> u32 {
        SPLIT_WORDS
    }
    fn kind(&self) -> FilterKind {
        FilterKind::SplitBlock
    }
    /// The mean over blocks of `Π_j (fill of word j)`.
    fn fpr_from_bits(&self) -> f64 {
        self.blocks.mean_over_blocks(|b| {
            b.iter()
                .flat_map(|w| [w & 0xffff_ffff, w >> 32])
                .map(|half| f64::from(half.count_ones()) / 32.0)
                .product::<f64>()
        })
    }
}

/// Largest value of a 4-bit counter; a counter that reaches it stays there.
pub const COUNTER_MAX: u64 = 15;

/// A counting Bloom filter: m 4-bit counters packed sixteen to a u64, k hashes.
///
/// Invariant: a key that was inserted and not deleted is always present. Insert increments
/// its k counters, delete decrements them; a counter at [`COUNTER_MAX`] is never changed
/// again (it may count more keys than it can hold), and [`CountingFilter::overflows`] counts
/// the increments that found it full.
#[derive(Clone, Debug)]
pub struct CountingFilter {
    words: Vec<u64>,
    m: u64,
    k: u32,
    hashes: HashFamily,
    overflows: u64,
}

impl CountingFilter {
    pub fn new(m: u64, k: u32, scheme: HashScheme, hash_seed: u64) -> Result<Self> {
        crate::filter::check_shape(m, k)?;
        let counters = m
            .checked_mul(4)
            .filter(|&bits| bits <= MAX_BITS)
            .ok_or_else(|| {
                Error::invalid(
                    "m",
                    m,
                    "4-bit counters need 4m bits",
                    format!("1..={}", MAX_BITS / 4),
                )
            })?;
        Ok(CountingFilter {
            words: zeroed_words(counters)?,
            m,
            k,
            hashes: HashFamily::new(scheme, k, m, hash_seed),
            overflows: 0,
        })
    }

    /// Increments that found their counter already at [`COUNTER_MAX`].
    pub fn overflows(&self) -> u64 {
        self.overflows
    }

    fn counter(&self, i: u64) -> u64 {
        (self.words[(i / 16) as usize] >> (4 * (i % 16))) & COUNTER_MAX
    }

    fn add(&mut self, i: u64, delta: i64) {
        let shift = 4 * (i % 16);
        let word = &mut self.words[(i / 16) as usize];
        let value = (*word >> shift) & COUNTER_MAX;
        let next = (value as i64 + delta) as u64;
        *word = (*word & !(COUNTER_MAX << shift)) | (next << shift);
    }
}

impl Membership for CountingFilter {
    fn insert(&mut self, key: u64) {
        for i in 0..self.k as usize {
            let c = self.hashes.index(i, key);
            if self.counter(c) == COUNTER_MAX {
                self.overflows += 1;
            } else {
                self.add(c, 1);
            }
        }
    }
    fn contains(&self, key: u64) -> bool {
        (0..self.k as usize).all(|i| self.counter(self.hashes.index(i, key)) > 0)
    }
}

impl Filter for CountingFilter {
    /// Nonzero counters.
    fn set_bits(&self) -> u64 {
        (0..self.m).filter(|&i| self.counter(i) > 0).count() as u64
    }
    /// `(nonzero counters / m)^k`.
    fn fpr_from_bits(&self) -> f64 {
        theory::fpr_from_fill(self.set_bits() as f64 / self.m as f64, self.k)
    }
    /// Decrements the key's counters, leaving any at [`COUNTER_MAX`] where they are.
    fn delete(&mut self, key: u64) -> Result<()> {
        for i in 0..self.k as usize {
            let c = self.hashes.index(i, key);
            let value = self.counter(c);
            if value > 0 && value < COUNTER_MAX {
                self.add(c, -1);
            }
        }
        Ok(())
    }
    /// As the classic filter of m bits: a counter is nonzero exactly when that bit would be set.
    fn fpr_exact(&self, n: u64) -> f64 {
        theory::fpr_exact(n, self.m, self.k)
    }
    fn memory_bits(&self) -> u64 {
        4 * self.m
    }
    fn hashes(&self) -> u32 {
        self.k
    }
    fn kind(&self) -> FilterKind {
        FilterKind::Counting
    }
}

/// Fingerprints per cuckoo bucket.
pub const CUCKOO_SLOTS: u64 = 4;
/// Relocations tried before an entry goes to the stash.
pub const CUCKOO_MAX_KICKS: u32 = 500;

/// Whole buckets of 4 slots of k bits; k must be a fingerprint size of 4 to 16 bits.
fn cuckoo_layout(m: u64, k: u32) -> Result<u64> {
    if !(4..=16).contains(&k) {
        return Err(Error::invalid(
            "k",
            k,
            "with --filter cuckoo, k is the fingerprint size in bits",
            "4..=16 with --filter cuckoo",
        ));
    }
    let slot_bits = CUCKOO_SLOTS * u64::from(k);
    Ok((m / slot_bits).max(1) * slot_bits)
}

/// A cuckoo filter: a key is stored as a nonzero k-bit fingerprint in one of two buckets,
/// `i1 = h(x)` and `i2 = (h(fingerprint) - i1) mod B`, relocating entries (up to 500 kicks) to make
/// room. Entries that still find no place go to a stash that lookups also search, so no key
/// is ever lost. Storage is one u16 per slot; `bits` counts k per slot, as a packed layout
/// would spend.
#[derive(Clone, Debug)]
pub struct CuckooFilter {
    buckets: Vec<[u16; CUCKOO_SLOTS as usize]>,
    fingerprint_bits: u32,
    bucket_hash: HashFamily,
    fingerprint_hash: HashFamily,
    stash: Vec<(u64, u16)>,
    kicks: rand_pcg::Pcg64,
}

impl CuckooFilter {
    /// m bits as given by [`FilterKind::layout`], k-bit fingerprints.
    pub fn new(m: u64, k: u32, scheme: HashScheme, hash_seed: u64) -> Result<Self> {
        use rand::SeedableRng;
        let m = cuckoo_layout(m, k)?;
        let count = m / (CUCKOO_SLOTS * u64::from(k));
        crate::filter::check_shape(m, 1)?;
        let mut buckets = Vec::new();
        buckets.try_reserve_exact(count as usize).map_err(|_| {
            Error::invalid(
                "m",
                m,
                "cannot allocate the buckets",
                "a table that fits in memory",
            )
        })?;
        buckets.resize(count as usize, [0; CUCKOO_SLOTS as usize]);
        Ok(CuckooFilter {
            buckets,
            fingerprint_bits: k,
            bucket_hash: HashFamily::new(scheme, 1, count, hash_seed),
            fingerprint_hash: HashFamily::new(scheme, 1, (1u64 << k) - 1, hash_seed ^ BLOCK_SEED),
            stash: Vec::new(),
            kicks: rand_pcg::Pcg64::seed_from_u64(hash_seed),
        })
    }

    /// Entries that found no bucket.
    pub fn stashed(&self) -> usize {
        self.stash.len()
    }

    /// The key's nonzero fingerprint and its two buckets.
    fn locate(&self, key: u64) -> (u16, u64, u64) {
        let fingerprint = 1 + self.fingerprint_hash.index(0, key) as u16;
        let first = self.bucket_hash.index(0, key);
        (fingerprint, first, self.alternate(first, fingerprint))
    }

    /// `(H(fp) - i) mod B`: an involution for any B, so the alternate of the alternate is
    /// the bucket itself without needing a power-of-two table.
    fn alternate(&self, bucket: u64, fingerprint: u16) -> u64 {
        let count = self.buckets.len() as u64;
        let offset = ((u64::from(fingerprint).wrapping_mul(0x9e37_79b9_7f4a_7c15) as u128
            * count as u128)
            >> 64) as u64;
        // offset and bucket both lie in 0..count, so one conditional subtraction reduces.
        let sum = offset + count - bucket;
        if sum >= count { sum - count } else { sum }
    }

    fn place(&mut self, bucket: u64, fingerprint: u16) -> bool {
        match self.buckets[bucket as usize].iter_mut().find(|s| **s == 0) {
            Some(slot) => {
                *slot = fingerprint;
                true
            }
            None => false,
        }
    }

    fn occupied(&self) -> u64 {
        self.buckets
            .iter()
            .flat_map(|b| b.iter())
            .filter(|&&s| s != 0)
            .count() as u64
            + self.stash.len() as u64
    }
}

impl Membership for CuckooFilter {
    fn insert(&mut self, key: u64) {
        use rand::Rng;
        let (mut fingerprint, first, second) = self.locate(key);
        if self.place(first, fingerprint) || self.place(second, fingerprint) {
            return;
        }
        let mut bucket = if self.kicks.next_u32() & 1 == 0 {
            first
        } else {
            second
        };
        for _ in 0..CUCKOO_MAX_KICKS {
            let slot = (self.kicks.next_u32() % CUCKOO_SLOTS as u32) as usize;
            std::mem::swap(&mut fingerprint, &mut self.buckets[bucket as usize][slot]);
            bucket = self.alternate(bucket, fingerprint);
            if self.place(bucket, fingerprint) {
                return;
            }
        }
        self.stash.push((bucket, fingerprint));
    }
    fn contains(&self, key: u64) -> bool {
        let (fingerprint, first, second) = self.locate(key);
        self.buckets[first as usize].contains(&fingerprint)
            || self.buckets[second as usize].contains(&fingerprint)
            || self
                .stash
                .iter()
                .any(|&(b, f)| f == fingerprint && (b == first || b == second))
    }
}

impl Filter for CuckooFilter {
    /// Bits in use: k per occupied slot.
    fn set_bits(&self) -> u64 {
        self.occupied() * u64::from(self.fingerprint_bits)
    }
    /// `1 - (E_b[(1 - q)^{occ(b)}])²`, `q = 1/(2^k - 1)`: the two buckets of a query are
    /// uniform and independent, and each entry in them matches with probability q.
    fn fpr_from_bits(&self) -> f64 {
        let miss = 1.0 - 1.0 / ((1u64 << self.fingerprint_bits) - 1) as f64;
        let per_bucket = self
            .buckets
            .iter()
            .map(|b| miss.powi(b.iter().filter(|&&s| s != 0).count() as i32))
            .sum::<f64>()
            / self.buckets.len() as f64;
        1.0 - per_bucket * per_bucket
    }
    /// Removes one copy of the key's fingerprint from its buckets (or the stash).
    fn delete(&mut self, key: u64) -> Result<()> {
        let (fingerprint, first, second) = self.locate(key);
        for bucket in [first, second] {
            if let Some(slot) = self.buckets[bucket as usize]
                .iter_mut()
                .find(|s| **s == fingerprint)
            {
                *slot = 0;
                return Ok(());
            }
        }
        if let Some(i) = self
            .stash
            .iter()
            .position(|&(b, f)| f == fingerprint && (b == first || b == second))
        {
            self.stash.swap_remove(i);
        }
        Ok(())
    }
    fn fpr_exact(&self, n: u64) -> f64 {
        FilterKind::Cuckoo.fpr_exact(n, self.memory_bits(), self.fingerprint_bits)
    }
    fn memory_bits(&self) -> u64 {
        self.buckets.len() as u64 * CUCKOO_SLOTS * u64::from(self.fingerprint_bits)
    }
    fn hashes(&self) -> u32 {
        self.fingerprint_bits
    }
    fn kind(&self) -> FilterKind {
        FilterKind::Cuckoo
    }
}

/// The fingerprint sizes `xorf` offers.
pub const BINARY_FUSE_BITS: [u32; 3] = [8, 16, 32];

/// A binary fuse filter's nominal m: it is sized by its keys, so m is only checked for k.
fn binary_fuse_layout(m: u64, k: u32) -> Result<u64> {
    if !BINARY_FUSE_BITS.contains(&k) {
        return Err(Error::invalid(
            "k",
            k,
            "for a binary fuse filter, k is the fingerprint size in bits",
            "8, 16 or 32 for binary-fuse",
        ));
    }
    Ok(m)
}

enum Fuse {
    Eight(xorf::BinaryFuse8),
    Sixteen(xorf::BinaryFuse16),
    ThirtyTwo(xorf::BinaryFuse32),
}

/// A binary fuse filter behind the one-key-at-a-time interface: it is static, so inserts
/// collect the keys and the first query after an insert builds the filter from all of them
/// (sorted and deduplicated). Its memory is that of the built filter only: the key list is
/// the construction's input, not part of the filter a user would keep.
pub struct BinaryFuseFilter {
    fingerprint_bits: u32,
    keys: Vec<u64>,
    built: std::sync::OnceLock<Fuse>,
}

impl BinaryFuseFilter {
    /// An empty filter of k-bit fingerprints (8, 16 or 32).
    pub fn new(k: u32) -> Result<Self> {
        binary_fuse_layout(1, k)?;
        Ok(BinaryFuseFilter {
            fingerprint_bits: k,
            keys: Vec::new(),
            built: std::sync::OnceLock::new(),
        })
    }

    fn fuse(&self) -> &Fuse {
        self.built.get_or_init(|| {
            let mut keys = self.keys.clone();
            keys.sort_unstable();
            keys.dedup();
            match self.fingerprint_bits {
                8 => Fuse::Eight(construct(&keys)),
                16 => Fuse::Sixteen(construct(&keys)),
                _ => Fuse::ThirtyTwo(construct(&keys)),
            }
        })
    }

    fn slots(&self) -> u64 {
        use xorf::Filter as _;
        match self.fuse() {
            Fuse::Eight(f) => f.len() as u64,
            Fuse::Sixteen(f) => f.len() as u64,
            Fuse::ThirtyTwo(f) => f.len() as u64,
        }
    }
}

/// xorf's construction from distinct keys. It retries with fresh internal seeds and gives up
/// only after 1000 attempts, which for distinct keys does not happen: a failure is a bug.
fn construct<'k, F: TryFrom<&'k Vec<u64>, Error = &'static str>>(keys: &'k Vec<u64>) -> F {
    F::try_from(keys).unwrap_or_else(|e| panic!("binary fuse construction failed: {e}"))
}

impl Membership for BinaryFuseFilter {
    fn insert(&mut self, key: u64) {
        self.keys.push(key);
        self.built = std::sync::OnceLock::new();
    }
    fn contains(&self, key: u64) -> bool {
        use xorf::Filter as _;
        match self.fuse() {
            Fuse::Eight(f) => f.contains(&key),
            Fuse::Sixteen(f) => f.contains(&key),
            Fuse::ThirtyTwo(f) => f.contains(&key),
        }
    }
}

impl Filter for BinaryFuseFilter {
    /// Fingerprint bits of the built table (every slot holds one).
    fn set_bits(&self) -> u64 {
        self.memory_bits()
    }
    /// `2^-k`: fingerprints are uniform whatever the load.
    fn fpr_from_bits(&self) -> f64 {
        0.5f64.powi(self.fingerprint_bits as i32)
    }
    fn fpr_exact(&self, _n: u64) -> f64 {
        self.fpr_from_bits()
    }
    fn memory_bits(&self) -> u64 {
        self.slots() * u64::from(self.fingerprint_bits)
    }
    fn hashes(&self) -> u32 {
        self.fingerprint_bits
    }
    fn kind(&self) -> FilterKind {
        FilterKind::BinaryFuse
    }
}
