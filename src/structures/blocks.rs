//! What the blocked structures share: bits in blocks, and the Poisson mixture over block loads.

use crate::error::{Error, Result};
use crate::filter::{GROUP, MAX_BITS, popcount};
use crate::hash::{HashFamily, HashScheme, with_index};
use crate::theory;
use crate::words::{LINE_WORDS, Words, prefetch, prefetch_pays};

/// m rounded up to whole blocks of `block` bits, within [`MAX_BITS`].
pub(super) fn whole_blocks(m: u64, block: u64) -> Result<u64> {
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

/// The smallest m (to 0.1%) whose rate is at most ε, by bisection between the classic
/// filter's size (no blocked structure does better) and three times it.
pub(super) fn smallest_size(n: u64, fpr: f64, rate: impl Fn(u64) -> f64) -> u64 {
    let classic = (n as f64 * theory::bits_per_key_for_fpr(fpr)).ceil() as u64;
    let (mut low, mut high) = (classic.max(1), classic.saturating_mul(3).max(64));
    while high - low > (high / 1000).max(1) {
        let mid = low + (high - low) / 2;
        if rate(mid) <= fpr {
            high = mid;
        } else {
            low = mid;
        }
    }
    high
}

/// `Σ_i Po(i; λ) · rate(i)` with `λ = n·block/m` keys per block, over the i whose Poisson
/// weight exceeds `e^{-40}` of the total (the rest cannot change the sum).
pub(super) fn poisson_mixture(n: u64, m: u64, block: u64, rate: impl Fn(u64) -> f64) -> f64 {
    let lambda = n as f64 * block as f64 / m as f64;
    let high = (lambda + 40.0 * lambda.sqrt() + 20.0).ceil() as u64;
    let log_mode =
        lambda.floor() * lambda.ln() - lambda - theory::ln_factorial(lambda.floor() as u64);
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

/// Bits as u64 words in blocks, with the arithmetic the blocked structures share: one hash
/// picks a key's block, once per key; each structure says which word of the block, and which
/// bit of it, its j-th probe of a key sets (`probe(key, j)` = (word within the block, mask)).
/// The words start on a cache line, so a block of 512 bits or a divisor of it lies in one.
#[derive(Debug)]
pub(super) struct Blocks {
    pub(super) words: Words,
    pub(super) words_per_block: usize,
    /// Picks the block: one hash over the number of blocks.
    chooser: HashFamily,
}

impl Blocks {
    pub(super) fn new(m: u64, block_bits: u64, scheme: HashScheme, hash_seed: u64) -> Result<Self> {
        Ok(Blocks {
            words: Words::zeroed(m)?,
            words_per_block: (block_bits / 64) as usize,
            chooser: HashFamily::new(scheme, 1, m / block_bits, hash_seed ^ BLOCK_SEED),
        })
    }

    /// The first word of the key's block.
    #[inline]
    pub(super) fn base(&self, key: u64) -> usize {
        self.chooser.index(0, key) as usize * self.words_per_block
    }

    /// Sets probes `0..probes` of the key.
    #[inline]
    pub(super) fn set(
        &mut self,
        key: u64,
        probes: usize,
        probe: impl Fn(u64, usize) -> (usize, u64),
    ) {
        self.set_at(self.base(key), key, probes, &probe)
    }

    #[inline(always)]
    fn set_at(
        &mut self,
        base: usize,
        key: u64,
        probes: usize,
        probe: &impl Fn(u64, usize) -> (usize, u64),
    ) {
        for j in 0..probes {
            let (word, mask) = probe(key, j);
            self.words[base + word] |= mask;
        }
    }

    /// Starts loading the lines of the key's block.
    #[inline]
    pub(super) fn prefetch_block(&self, key: u64) {
        let base = self.base(key);
        for line in (0..self.words_per_block).step_by(LINE_WORDS) {
            prefetch(&self.words[base + line]);
        }
    }

    /// True when every probe of the key is set.
    #[inline]
    pub(super) fn all_set(
        &self,
        key: u64,
        probes: usize,
        probe: impl Fn(u64, usize) -> (usize, u64),
    ) -> bool {
        self.all_set_at(self.base(key), key, probes, &probe)
    }

    /// Every probe is read (all lie in one block) and the missing bits are OR-ed together,
    /// so an absent key costs no mispredicted early exit.
    #[inline(always)]
    fn all_set_at(
        &self,
        base: usize,
        key: u64,
        probes: usize,
        probe: &impl Fn(u64, usize) -> (usize, u64),
    ) -> bool {
        let block = &self.words[base..][..self.words_per_block];
        let missing = (0..probes).fold(0u64, |missing, j| {
            let (word, mask) = probe(key, j);
            missing | (mask & !block[word])
        });
        missing == 0
    }

    /// The first words of the blocks of `keys` (at most [`GROUP`]), each block's lines
    /// prefetched when that pays ([`prefetch_pays`]).
    #[inline(always)]
    fn bases(&self, keys: &[u64], bases: &mut [usize; GROUP]) {
        let fetch = prefetch_pays(&self.words);
        let (chooser, per_block) = (&self.chooser, self.words_per_block);
        with_index!(chooser, index => for (base, &key) in bases.iter_mut().zip(keys) {
            *base = index(chooser, 0, key) as usize * per_block;
            if fetch {
                for line in (0..per_block).step_by(LINE_WORDS) {
                    prefetch(&self.words[*base + line]);
                }
            }
        })
    }

    /// Inserts the keys a group at a time: the group's blocks are found and prefetched,
    /// then set. The same bits as inserting one by one.
    pub(super) fn set_many(
        &mut self,
        keys: &[u64],
        probes: usize,
        probe: impl Fn(u64, usize) -> (usize, u64),
    ) {
        let mut bases = [0usize; GROUP];
        for group in keys.chunks(GROUP) {
            self.bases(group, &mut bases);
            for (&base, &key) in bases.iter().zip(group) {
                self.set_at(base, key, probes, &probe);
            }
        }
    }

    /// `answers[j] = all_set(keys[j])`, a group at a time as in [`Blocks::set_many`].
    pub(super) fn all_set_many(
        &self,
        keys: &[u64],
        answers: &mut [bool],
        probes: usize,
        probe: impl Fn(u64, usize) -> (usize, u64),
    ) {
        let mut bases = [0usize; GROUP];
        for (group, answers) in keys.chunks(GROUP).zip(answers.chunks_mut(GROUP)) {
            self.bases(group, &mut bases);
            for ((answer, &base), &key) in answers.iter_mut().zip(&bases).zip(group) {
                *answer = self.all_set_at(base, key, probes, &probe);
            }
        }
    }

    pub(super) fn memory_bits(&self) -> u64 {
        self.words.len() as u64 * 64
    }

    pub(super) fn set_bits(&self) -> u64 {
        popcount(&self.words)
    }

    /// The mean over blocks of `rate(block words)`: a query lands in a uniform block.
    pub(super) fn mean_over_blocks(&self, rate: impl Fn(&[u64]) -> f64) -> f64 {
        let blocks = self.words.chunks(self.words_per_block);
        let count = blocks.len() as f64;
        blocks.map(rate).sum::<f64>() / count
    }
}

/// Separates the block-choosing hash from the in-block hashes drawn from the same seed.
pub(super) const BLOCK_SEED: u64 = 0x626c_6f63_6b73;

/// The index function of a hash family ([`with_index`]).
pub(super) type Index = fn(&HashFamily, usize, u64) -> u64;
