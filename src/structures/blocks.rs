//! What the blocked structures share: bits in blocks, and the Poisson mixture over block loads.

use crate::error::{Error, Result};
use crate::hash::{HashFamily, HashScheme, with_index};
use crate::structures::bloom::{MAX_BITS, popcount, size_out_of_range};
use crate::structures::probe_groups::every_group;
use crate::theory;
use crate::words::{LINE_WORDS, Words, prefetch, prefetch_pays};

/// m rounded up to whole blocks of `block` bits, within [`MAX_BITS`].
pub(super) fn whole_blocks(m: u64, block: u64) -> Result<u64> {
    let rounded = m.div_ceil(block) * block;
    if rounded > MAX_BITS {
        return Err(size_out_of_range(m));
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
    /// m must be a whole number of `block_bits`-bit blocks, at least one: the chooser picks
    /// among `m / block_bits` blocks, and the kernels among the whole blocks of the words.
    pub(super) fn new(m: u64, block_bits: u64, scheme: HashScheme, hash_seed: u64) -> Result<Self> {
        if m < block_bits || !m.is_multiple_of(block_bits) {
            return Err(Error::invalid(
                "m",
                m,
                format!("not a whole number of {block_bits}-bit blocks, at least one"),
                format!("{block_bits}..={MAX_BITS}, a multiple of {block_bits}"),
            ));
        }
        Ok(Blocks {
            words: Words::zeroed(m)?,
            words_per_block: (block_bits / 64) as usize,
            chooser: HashFamily::new(scheme, 1, m / block_bits, hash_seed ^ BLOCK_SEED),
        })
    }

    pub(super) fn chooser(&self) -> &HashFamily {
        &self.chooser
    }

    /// The first word of the key's block.
    #[inline(always)]
    pub(super) fn base(&self, key: u64) -> usize {
        let chooser = &self.chooser;
        with_index!(chooser, index => index(chooser, 0, key)) as usize * self.words_per_block
    }

    /// Sets probes `0..probes` of the key.
    #[inline]
    pub(super) fn set(
        &mut self,
        key: u64,
        probes: usize,
        probe: impl Fn(u64, usize) -> (usize, u64),
    ) {
        self.set_with(key, |key, block| set_in(block, key, probes, &probe))
    }

    /// True when every probe of the key is set.
    #[inline]
    pub(super) fn all_set(
        &self,
        key: u64,
        probes: usize,
        probe: impl Fn(u64, usize) -> (usize, u64),
    ) -> bool {
        self.all_set_with(key, |key, block| all_set_in(block, key, probes, &probe))
    }

    /// `set(key, the words of its block)`.
    #[inline(always)]
    pub(super) fn set_with(&mut self, key: u64, set: impl Fn(u64, &mut [u64])) {
        let (base, per_block) = (self.base(key), self.words_per_block);
        set(key, &mut self.words[base..][..per_block])
    }

    /// `test(key, the words of its block)`.
    #[inline(always)]
    pub(super) fn all_set_with(&self, key: u64, test: impl Fn(u64, &[u64]) -> bool) -> bool {
        test(key, &self.words[self.base(key)..][..self.words_per_block])
    }

    /// Starts loading the lines of the key's block.
    #[inline]
    pub(super) fn prefetch_block(&self, key: u64) {
        prefetch_lines(&self.words, self.base(key), self.words_per_block)
    }

    /// Inserts the keys in order, pipelined ([`pipelined`]). The same bits as inserting
    /// them one by one.
    pub(super) fn set_many(
        &mut self,
        keys: &[u64],
        probes: usize,
        probe: impl Fn(u64, usize) -> (usize, u64),
    ) {
        self.set_many_with(keys, |key, block| set_in(block, key, probes, &probe))
    }

    /// `answers[j] = all_set(keys[j])`, pipelined ([`pipelined`]).
    pub(super) fn all_set_many(
        &self,
        keys: &[u64],
        answers: &mut [bool],
        probes: usize,
        probe: impl Fn(u64, usize) -> (usize, u64),
    ) {
        self.all_set_many_with(keys, answers, |key, block| {
            all_set_in(block, key, probes, &probe)
        })
    }

    /// `set(key, the words of its block)` for each key in order, pipelined ([`pipelined`])
    /// where prefetching pays, else key by key.
    #[inline(always)]
    pub(super) fn set_many_with(&mut self, keys: &[u64], set: impl Fn(u64, &mut [u64])) {
        let (chooser, per_block) = (&self.chooser, self.words_per_block);
        let mut words: &mut [u64] = &mut self.words;
        if !prefetch_pays(words) {
            return with_index!(chooser, index => for &key in keys {
                let base = index(chooser, 0, key) as usize * per_block;
                set(key, &mut words[base..][..per_block])
            });
        }
        pipelined(chooser, per_block, &mut words, keys, |words, j, base| {
            set(keys[j], &mut words[base..][..per_block])
        })
    }

    /// `answers[j] = test(keys[j], the words of its block)`, pipelined ([`pipelined`])
    /// where prefetching pays, else key by key.
    #[inline(always)]
    pub(super) fn all_set_many_with(
        &self,
        keys: &[u64],
        answers: &mut [bool],
        test: impl Fn(u64, &[u64]) -> bool,
    ) {
        let (mut words, per_block): (&[u64], _) = (&self.words, self.words_per_block);
        if !prefetch_pays(words) {
            let chooser = &self.chooser;
            return with_index!(chooser, index => for (answer, &key) in answers.iter_mut().zip(keys) {
                let base = index(chooser, 0, key) as usize * per_block;
                *answer = test(key, &words[base..][..per_block]);
            });
        }
        pipelined(
            &self.chooser,
            per_block,
            &mut words,
            keys,
            |words, j, base| answers[j] = test(keys[j], &words[base..][..per_block]),
        )
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

/// Keys per stage of [`pipelined`]: their blocks' lines are in flight while the stage
/// before is tested. Small, so that the prefetches spread out over the testing instead of
/// queueing in a burst: 16 was fastest of 8 to 256 here (`bloomlab bench`).
const STAGE: usize = 16;

/// Calls `each(words, j, base of key j)` for every key in order, a stage of [`STAGE`] keys
/// at a time: the blocks of the next stage are found and their lines prefetched before the
/// keys of this one are handed to `each`, so that hashing and testing one stage overlaps the
/// misses of the next. For arrays where prefetching pays ([`prefetch_pays`]); elsewhere the
/// batch calls go key by key, as stages would only add work.
#[inline(always)]
fn pipelined<W: AsRef<[u64]>>(
    chooser: &HashFamily,
    per_block: usize,
    words: &mut W,
    keys: &[u64],
    mut each: impl FnMut(&mut W, usize, usize),
) {
    let mut bases = [[0usize; STAGE]; 2];
    with_index!(chooser, index => {
        let find = |stage: &[u64], bases: &mut [usize; STAGE], words: &[u64]| {
            for (base, &key) in bases.iter_mut().zip(stage) {
                *base = index(chooser, 0, key) as usize * per_block;
                prefetch_lines(words, *base, per_block);
            }
        };
        let stages = keys.len().div_ceil(STAGE);
        find(&keys[..keys.len().min(STAGE)], &mut bases[0], words.as_ref());
        for stage in 0..stages {
            let (start, end) = (stage * STAGE, ((stage + 1) * STAGE).min(keys.len()));
            if stage + 1 < stages {
                let next = &keys[end..(end + STAGE).min(keys.len())];
                find(next, &mut bases[(stage + 1) % 2], words.as_ref());
            }
            for (j, &base) in (start..end).zip(&bases[stage % 2]) {
                each(words, j, base);
            }
        }
    })
}

/// Starts loading the lines of the block of `per_block` words that starts at word `base`.
#[inline(always)]
fn prefetch_lines(words: &[u64], base: usize, per_block: usize) {
    for line in (0..per_block).step_by(LINE_WORDS) {
        prefetch(&words[base + line]);
    }
}

/// Sets probes `0..probes` of the key in `block`, the words of its block.
#[inline(always)]
pub(super) fn set_in(
    block: &mut [u64],
    key: u64,
    probes: usize,
    probe: &impl Fn(u64, usize) -> (usize, u64),
) {
    for j in 0..probes {
        let (word, mask) = probe(key, j);
        block[word] |= mask;
    }
}

/// True when probes `0..probes` of the key are set in `block`, the words of its block
/// ([`every_group`]).
#[inline(always)]
pub(super) fn all_set_in(
    block: &[u64],
    key: u64,
    probes: usize,
    probe: &impl Fn(u64, usize) -> (usize, u64),
) -> bool {
    every_group(probes, |group| {
        group.fold(0, |missing, j| {
            let (word, mask) = probe(key, j);
            missing | (mask & !block[word])
        }) == 0
    })
}

/// Separates the block-choosing hash from the in-block hashes drawn from the same seed.
pub(super) const BLOCK_SEED: u64 = 0x626c_6f63_6b73;

/// The index function of a hash family ([`with_index`]).
pub(super) type Index = fn(&HashFamily, usize, u64) -> u64;

/// Test support: fills `kernel` and `probes`, the same filter, the second without its
/// kernel, with 300 keys (150 one at a time, 150 batched) and asserts that they hold the
/// same words and give the same answers on 2,000 absent keys.
#[cfg(test)]
pub(super) fn assert_kernel_sets_the_probes<F: super::interface::Membership>(
    [kernel, probes]: [&mut F; 2],
    blocks: fn(&F) -> &Blocks,
    what: &str,
) {
    let keys = crate::keys::KeySource::new(41);
    let inserted: Vec<u64> = keys.inserted(300).collect();
    let (half, rest) = inserted.split_at(150);
    for filter in [&mut *kernel, &mut *probes] {
        half.iter().for_each(|&x| filter.insert(x));
        filter.insert_many(rest).unwrap();
    }
    assert!(
        blocks(kernel).words[..] == blocks(probes).words[..],
        "{what}"
    );
    let answers = |f: &F| {
        keys.absent(300, 2000)
            .map(|x| f.contains(x))
            .collect::<Vec<_>>()
    };
    assert!(answers(kernel) == answers(probes), "{what}");
}
