//! The in-block probes of the blocked (512-bit) and split-block (256-bit) filters, computed
//! for all k probes of a key at once and tested against the block with word-wide masks: a
//! scalar loop and, where the CPU has them (detected at run time, [`Simd`]), AVX2 and
//! AVX-512 twins that give the same bits. The indexes are those of the in-block family's
//! own index function ([`Lanes`]), so every filter is the one the probe-by-probe code builds.
//!
//! A 512-bit block is one AVX-512 register: `vpermq` fetches the word of each probe and a
//! masked test checks all eight probes at once. With AVX2 the block is two registers of
//! eight 32-bit words, and `vpermd` with a blend does the same. A split block is eight
//! 32-bit words, one probe each, as Parquet's AVX2 filter tests it: one `vptest`. A
//! 1024-bit block (blocked-1024) is four AVX2 registers: four `vpermd` and three blends
//! fetch each probe's word; its inserts set the probes one by one on every path.

use super::blocks::Blocks;
use crate::hash::{Lanes, Limbs, Simd};

/// The shift of a 512-bit block's in-block indexes (nine bits), and of a split block's
/// (five bits), and of a 1024-bit block's (ten bits): each path shifts by the constant,
/// so the kernels take no shift count.
const BLOCKED_SHIFT: u32 = 55;
const BLOCKED1024_SHIFT: u32 = 54;
const SPLIT_SHIFT: u32 = 59;

/// Which block a kernel serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Design {
    /// 512 bits, 8 u64 words, k probes anywhere in it.
    Blocked512,
    /// 1024 bits, 16 u64 words, k probes anywhere in it.
    Blocked1024,
    /// 256 bits, eight 32-bit words, probe j in word j.
    Split256,
}

/// A filter's in-block probes on one path.
///
/// Invariant: `simd` runs on this CPU ([`Simd::runs_here`]); `lanes.shift` is 55 for
/// [`Design::Blocked512`] (indexes below 512), 54 for [`Design::Blocked1024`] (below 1024)
/// and 59 for [`Design::Split256`] (below 32);
/// the blocks hold at least one block ([`Blocks::new`]); `test_one` and `set_one` are
/// [`one_key_entries`] of `simd`, `design`, `stepped`, `lanes.pairs()` and `k`.
#[derive(Clone, Debug)]
pub(super) struct Kernel {
    lanes: Lanes,
    k: usize,
    simd: Simd,
    design: Design,
    /// The block chooser's `[a_0, b_0]`: block `((a_0·x + b_0) · blocks) >> 64`, as
    /// [`Blocks::base`] picks it.
    chooser: [u64; 2],
    /// Whether inserts step through double hashing's probes in general registers
    /// ([`set512_stepped`]): on the vector paths, for lanes that step.
    stepped: bool,
    /// Double hashing's lanes from half the key, for the batched queries in cache of the
    /// AVX-512 path, and of the AVX2 path in limbs ([`Halves::limbs`]).
    halves: Option<Halves>,
    halves_limbs: Option<Box<[Limbs; 2]>>,
    /// The lanes in 32-bit limbs, for the AVX2 path.
    limbs: Limbs,
    /// One key's entries for the path, design, hashing and k, chosen once: a call jumps straight to
    /// its kernel, as Parquet's filters do, instead of matching design and path at every call.
    test_one: unsafe fn(&Kernel, &Blocks, u64) -> bool,
    set_one: unsafe fn(&Kernel, &mut Blocks, u64),
}

/// Calls `$body` with `$path` naming the module of `$simd`'s path.
macro_rules! dispatch {
    ($simd:expr, $path:ident => $body:expr) => {
        match $simd {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: a kernel's path runs on this CPU (its invariant).
            Simd::Avx512 => unsafe {
                use avx512 as $path;
                $body
            },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: as above.
            Simd::Avx2 => unsafe {
                use avx2 as $path;
                $body
            },
            _ => {
                use scalar as $path;
                $body
            }
        }
    };
}

impl Kernel {
    /// The kernel of a family with lanes ([`crate::hash::HashFamily::lanes`]) whose indexes
    /// fit the design's block, on the widest path this CPU runs; none otherwise (or when
    /// the blocks' chooser is not a multiply-shift or double-hashing one).
    pub(super) fn new(
        lanes: Option<Lanes>,
        k: u32,
        design: Design,
        blocks: &Blocks,
    ) -> Option<Kernel> {
        let lanes = lanes?;
        let chooser = blocks.chooser().first_affine()?;
        let (shift, per_block) = match design {
            Design::Blocked512 => (BLOCKED_SHIFT, 8),
            Design::Blocked1024 => (BLOCKED1024_SHIFT, 16),
            Design::Split256 => (SPLIT_SHIFT, 4),
        };
        let simd = Simd::best();
        let stepped = steps(simd, &lanes);
        let (test_one, set_one) = one_key_entries(simd, design, stepped, lanes.pairs(), k as usize);
        // At least one block: the one-key picks ([`Kernel::block_one`]) hold only for n >= 1.
        let fits = blocks.words_per_block == per_block && !blocks.words.is_empty();
        let halves = Halves::new(&lanes, k as usize);
        (lanes.shift == shift && fits).then(|| Kernel {
            halves_limbs: halves.as_ref().map(Halves::limbs),
            halves,
            limbs: Limbs::of(&lanes),
            lanes,
            k: k as usize,
            simd,
            design,
            chooser,
            stepped,
            test_one,
            set_one,
        })
    }

    /// The index of the key's block among `blocks`: [`Blocks::base`] without its dispatch.
    /// Below `blocks` for any key when `blocks >= 1`: `(h · blocks) >> 64 < blocks`.
    #[inline(always)]
    fn pick(&self, key: u64, blocks: usize) -> usize {
        let [a, b] = self.chooser;
        let h = a.wrapping_mul(key).wrapping_add(b);
        ((h as u128 * blocks as u128) >> 64) as usize
    }

    /// The key's block of `W` words (the design's), with one bounds check.
    #[inline(always)]
    fn block<'a, const W: usize>(&self, words: &'a [u64], key: u64) -> &'a [u64; W] {
        let blocks = words.as_chunks::<W>().0;
        &blocks[self.pick(key, blocks.len())]
    }

    /// [`Kernel::block`], to set bits in.
    #[inline(always)]
    fn block_mut<'a, const W: usize>(&self, words: &'a mut [u64], key: u64) -> &'a mut [u64; W] {
        let blocks = words.as_chunks_mut::<W>().0;
        let at = self.pick(key, blocks.len());
        &mut blocks[at]
    }

    /// The same kernel on another path, or none when this CPU does not run it.
    pub(super) fn on(&self, simd: Simd) -> Option<Kernel> {
        let stepped = steps(simd, &self.lanes);
        let (test_one, set_one) =
            one_key_entries(simd, self.design, stepped, self.lanes.pairs(), self.k);
        simd.runs_here().then(|| Kernel {
            simd,
            stepped,
            test_one,
            set_one,
            ..self.clone()
        })
    }

    pub(super) fn simd(&self) -> Simd {
        self.simd
    }

    /// Whether every probe of the key is set.
    #[inline]
    pub(super) fn test(&self, blocks: &Blocks, key: u64) -> bool {
        // SAFETY: the entry's path runs on this CPU (the invariant).
        unsafe { (self.test_one)(self, blocks, key) }
    }

    /// Sets every probe of the key.
    #[inline]
    pub(super) fn set(&self, blocks: &mut Blocks, key: u64) {
        // SAFETY: as above.
        unsafe { (self.set_one)(self, blocks, key) }
    }

    /// `answers[j] = test(keys[j])`, through [`Blocks::all_set_many_with`].
    pub(super) fn test_many(&self, blocks: &Blocks, keys: &[u64], answers: &mut [bool]) {
        #[cfg(target_arch = "x86_64")]
        if self.design == Design::Blocked512 && !crate::words::prefetch_pays(&blocks.words) {
            let words = &blocks.words;
            match (self.simd, &self.halves, &self.halves_limbs) {
                // SAFETY: the path runs on this CPU (the invariant).
                (Simd::Avx512, Some(halves), _) => {
                    return unsafe {
                        avx512::test_cached_halves(self, halves, words, keys, answers)
                    };
                }
                // SAFETY: as above.
                (Simd::Avx2, _, Some(limbs)) => {
                    return unsafe { avx2::test_cached_halves(self, limbs, words, keys, answers) };
                }
                _ => {}
            }
        }
        dispatch!(self.simd, path => path::test_many(self, blocks, keys, answers))
    }

    /// Sets the keys in order, through [`Blocks::set_many_with`].
    pub(super) fn set_many(&self, blocks: &mut Blocks, keys: &[u64]) {
        dispatch!(self.simd, path => path::set_many(self, blocks, keys))
    }
}

/// A path's entry points, each compiled with the path's features (`$attr`) so that the
/// kernels inline into the loops of [`Blocks`]: the module defines `test512_of`,
/// `set512_of` `(kernel, k, key, block)` and `test256_of`, `set256_of` `(kernel, key, block)`,
/// each of the key's [`Lanes::key`].
macro_rules! entries {
    ($(#[$attr:meta])*) => {
        use super::{Blocks, Design, Kernel};
        use crate::words::prefetch_pays;

        /// The kernels of a key itself, for the loops over keys.
        #[inline(always)]
        #[allow(unused_unsafe, reason = "the scalar kernels are safe")]
        unsafe fn test512(kernel: &Kernel, k: usize, key: u64, block: &[u64]) -> bool {
            // SAFETY: the caller is compiled with the path's features.
            unsafe { test512_of(kernel, k, kernel.lanes.key(key), block) }
        }

        #[inline(always)]
        #[allow(unused_unsafe, reason = "the scalar kernels are safe")]
        unsafe fn set512(kernel: &Kernel, k: usize, key: u64, block: &mut [u64]) {
            // SAFETY: as above.
            unsafe { set512_of(kernel, k, kernel.lanes.key(key), block) }
        }

        #[inline(always)]
        #[allow(unused_unsafe, reason = "the scalar kernels are safe")]
        unsafe fn test256(kernel: &Kernel, key: u64, block: &[u64]) -> bool {
            // SAFETY: as above.
            unsafe { test256_of(kernel, kernel.lanes.key(key), block) }
        }

        #[inline(always)]
        #[allow(unused_unsafe, reason = "the scalar kernels are safe")]
        unsafe fn set256(kernel: &Kernel, key: u64, block: &mut [u64]) {
            // SAFETY: as above.
            unsafe { set256_of(kernel, kernel.lanes.key(key), block) }
        }

        /// One key: an entry per design and operation, so that a call goes straight to
        /// its kernel.
        $(#[$attr])*
        #[allow(unused_unsafe, reason = "the scalar kernels are safe; the vector ones need the features this entry is compiled with")]
        pub(super) fn test_one512<const PAIR: bool>(kernel: &Kernel, blocks: &Blocks, key: u64) -> bool {
            let block = kernel.block_one::<8>(&blocks.words, key);
            unsafe { test512_of(kernel, kernel.k, kernel.lanes.key_of::<PAIR>(key), block) }
        }

        $(#[$attr])*
        #[allow(unused_unsafe, reason = "the scalar kernels are safe; the vector ones need the features this entry is compiled with")]
        pub(super) fn test_one1024<const PAIR: bool>(kernel: &Kernel, blocks: &Blocks, key: u64) -> bool {
            let block = kernel.block_one::<16>(&blocks.words, key);
            unsafe { test1024_of(kernel, kernel.k, kernel.lanes.key_of::<PAIR>(key), block) }
        }

        /// A 1024-bit block's probes set one by one ([`super::set1024`]) on every path.
        $(#[$attr])*
        pub(super) fn set_one1024<const PAIR: bool>(kernel: &Kernel, blocks: &mut Blocks, key: u64) {
            let block = kernel.block_one_mut::<16>(&mut blocks.words, key);
            super::set1024(&kernel.lanes, kernel.k, kernel.lanes.key_of::<PAIR>(key), block)
        }

        $(#[$attr])*
        #[allow(unused_unsafe, reason = "the scalar kernels are safe; the vector ones need the features this entry is compiled with")]
        pub(super) fn test_one256<const PAIR: bool>(kernel: &Kernel, blocks: &Blocks, key: u64) -> bool {
            let block = kernel.block_one::<4>(&blocks.words, key);
            unsafe { test256_of(kernel, kernel.lanes.key_of::<PAIR>(key), block) }
        }

        /// Stepped ([`super::set512_stepped`]) if `STEPPED`, for k = `K` (any k if `K` is 0):
        /// a constant k, and lanes past k left unset rather than setting probe 0's bit again,
        /// were the faster (docs/PERFORMANCE.md). The batched loop has its own
        /// ([`set_cached`]): with the k > 8 lanes out of line, its values stay in registers.
        $(#[$attr])*
        #[inline(never)]
        #[allow(unused_unsafe, reason = "the scalar kernels are safe; the vector ones need the features this entry is compiled with")]
        pub(super) fn set_one512<const STEPPED: bool, const PAIR: bool, const K: usize>(kernel: &Kernel, blocks: &mut Blocks, key: u64) {
            let (lanes, k) = (&kernel.lanes, if K == 0 { kernel.k } else { K });
            let block = kernel.block_one_mut::<8>(&mut blocks.words, key);
            match STEPPED {
                true => super::set512_stepped::<true>(lanes, k, key, block),
                false => unsafe { set512_of(kernel, k, lanes.key_of::<PAIR>(key), block) },
            }
        }

        $(#[$attr])*
        #[allow(unused_unsafe, reason = "the scalar kernels are safe; the vector ones need the features this entry is compiled with")]
        pub(super) fn set_one256<const PAIR: bool>(kernel: &Kernel, blocks: &mut Blocks, key: u64) {
            let block = kernel.block_one_mut::<4>(&mut blocks.words, key);
            unsafe { set256_of(kernel, kernel.lanes.key_of::<PAIR>(key), block) }
        }

        /// In cache key by key in one loop; else pipelined ([`Blocks::all_set_many_with`]).
        $(#[$attr])*
        #[allow(unused_unsafe, reason = "the scalar kernels are safe; the vector ones need the features this entry is compiled with")]
        pub(super) fn test_many(kernel: &Kernel, blocks: &Blocks, keys: &[u64], answers: &mut [bool]) {
            let k = kernel.k;
            let in_cache = !prefetch_pays(&blocks.words);
            let words = &blocks.words;
            let short = k <= 8;
            match (kernel.design, in_cache, kernel.lanes.pairs(), short) {
                (Design::Blocked512, true, true, true) => test_cached::<8, true, true>(kernel, words, keys, answers),
                (Design::Blocked512, true, false, true) => test_cached::<8, false, true>(kernel, words, keys, answers),
                (Design::Blocked512, true, true, false) => test_cached::<8, true, false>(kernel, words, keys, answers),
                (Design::Blocked512, true, false, false) => test_cached::<8, false, false>(kernel, words, keys, answers),
                (Design::Blocked1024, true, true, true) => test_cached::<16, true, true>(kernel, words, keys, answers),
                (Design::Blocked1024, true, false, true) => test_cached::<16, false, true>(kernel, words, keys, answers),
                (Design::Blocked1024, true, true, false) => test_cached::<16, true, false>(kernel, words, keys, answers),
                (Design::Blocked1024, true, false, false) => test_cached::<16, false, false>(kernel, words, keys, answers),
                (Design::Split256, true, true, _) => test_cached::<4, true, true>(kernel, words, keys, answers),
                (Design::Split256, true, false, _) => test_cached::<4, false, true>(kernel, words, keys, answers),
                (Design::Blocked512, false, _, _) => {
                    blocks.all_set_many_with(keys, answers, |x, b| unsafe { test512(kernel, k, x, b) })
                }
                (Design::Blocked1024, false, _, _) => blocks.all_set_many_with(keys, answers, |x, b| unsafe {
                    test1024_of(kernel, k, kernel.lanes.key(x), b)
                }),
                (Design::Split256, false, _, _) => {
                    blocks.all_set_many_with(keys, answers, |x, b| unsafe { test256(kernel, x, b) })
                }
            }
        }

        /// Key by key in one loop, for a block of `W` words and lanes of double hashing
        /// (`PAIR`) or multiply-shift ([`crate::hash::Lanes::key_of`]): a function of its
        /// own, so that the loop's values stay in registers. `SHORT` when k is at most 8
        /// (one register of lanes): the loop then holds no test of the lanes beyond.
        $(#[$attr])*
        #[inline(never)]
        #[allow(unused_unsafe, reason = "the scalar kernels are safe; the vector ones need the features this entry is compiled with")]
        fn test_cached<const W: usize, const PAIR: bool, const SHORT: bool>(kernel: &Kernel, words: &[u64], keys: &[u64], answers: &mut [bool]) {
            let k = if SHORT { kernel.k.min(8) } else { kernel.k };
            for (answer, &key) in answers.iter_mut().zip(keys) {
                let block = kernel.block_one::<W>(words, key);
                let lanes = kernel.lanes.key_of::<PAIR>(key);
                *answer = match W {
                    8 => unsafe { test512_of(kernel, k, lanes, block) },
                    16 => unsafe { test1024_of(kernel, k, lanes, block) },
                    _ => unsafe { test256_of(kernel, lanes, block) },
                };
            }
        }

        /// Blocks of `W` words key by key in one loop, a function of its own as
        /// [`test_cached`]; 512-bit ones stepped ([`super::set512_stepped`]) if `STEPPED`.
        $(#[$attr])*
        #[inline(never)]
        #[allow(unused_unsafe, reason = "the scalar kernels are safe; the vector ones need the features this entry is compiled with")]
        fn set_cached<const W: usize, const STEPPED: bool>(kernel: &Kernel, words: &mut [u64], keys: &[u64]) {
            let (lanes, k) = (&kernel.lanes, kernel.k);
            for &key in keys {
                let block = kernel.block_mut::<W>(words, key);
                match (W, STEPPED) {
                    (8, true) => super::set512_stepped::<false>(lanes, k, key, block),
                    (8, false) => unsafe { set512(kernel, k, key, block) },
                    (16, _) => super::set1024(lanes, k, lanes.key(key), block),
                    (4, _) => unsafe { set256(kernel, key, block) },
                    _ => unreachable!("blocks are of 16, 8 or 4 words"),
                }
            }
        }

        /// In cache key by key in one loop; else pipelined ([`Blocks::set_many_with`]).
        $(#[$attr])*
        #[allow(unused_unsafe, reason = "the scalar kernels are safe; the vector ones need the features this entry is compiled with")]
        pub(super) fn set_many(kernel: &Kernel, blocks: &mut Blocks, keys: &[u64]) {
            let (lanes, k) = (&kernel.lanes, kernel.k);
            let in_cache = !prefetch_pays(&blocks.words);
            match (kernel.design, in_cache) {
                (Design::Blocked512, true) if kernel.stepped => {
                    set_cached::<8, true>(kernel, &mut blocks.words, keys)
                }
                (Design::Blocked512, true) => set_cached::<8, false>(kernel, &mut blocks.words, keys),
                (Design::Blocked1024, true) => set_cached::<16, false>(kernel, &mut blocks.words, keys),
                (Design::Split256, true) => set_cached::<4, false>(kernel, &mut blocks.words, keys),
                (Design::Blocked512, false) if kernel.stepped => {
                    blocks.set_many_with(keys, |x, b| super::set512_stepped::<false>(lanes, k, x, b))
                }
                (Design::Blocked512, false) => {
                    blocks.set_many_with(keys, |x, b| unsafe { set512(kernel, k, x, b) })
                }
                (Design::Blocked1024, false) => {
                    blocks.set_many_with(keys, |x, b| super::set1024(lanes, k, lanes.key(x), b))
                }
                (Design::Split256, false) => {
                    blocks.set_many_with(keys, |x, b| unsafe { set256(kernel, x, b) })
                }
            }
        }
    };
}

/// The inserts every path shares, and the vector paths' `set512!`.
#[macro_use]
mod inserts;
use inserts::{set_octet, set1024};

/// The scalar path: every CPU.
mod scalar {
    use super::super::blocks::all_set_in;
    use super::set_octet;
    use crate::hash::Lanes;

    entries!();

    /// Probe i of the key whose [`Lanes::key`] is `key`: (word, mask) in a block of `W`
    /// words (a power of two).
    #[inline(always)]
    fn probe<const W: usize>(lanes: &Lanes, key: (u64, u64), i: usize) -> (usize, u64) {
        let bit = lanes.index(i, key);
        ((bit >> 6) as usize & (W - 1), 1 << (bit & 63))
    }

    /// The probes of the key whose [`Lanes::key`] is `key` as a 256-bit mask: probe j in
    /// 32-bit word j, half `j & 1` of u64 `j / 2`.
    #[inline(always)]
    fn mask256(lanes: &Lanes, key: (u64, u64)) -> [u64; 4] {
        let mut mask = [0u64; 4];
        for j in 0..8 {
            mask[j / 2] |= 1 << (lanes.index(j, key) + 32 * (j as u64 & 1));
        }
        mask
    }

    #[inline(always)]
    fn covers(block: &[u64], mask: &[u64]) -> bool {
        mask.iter()
            .zip(block)
            .fold(0, |missing, (m, w)| missing | (m & !w))
            == 0
    }

    /// Probe by probe, exiting after each group that fails ([`all_set_in`]).
    #[inline(always)]
    fn test512_of(kernel: &Kernel, k: usize, key: (u64, u64), block: &[u64]) -> bool {
        all_set_in(block, 0, k, &|_, i| probe::<8>(&kernel.lanes, key, i))
    }

    /// Probe by probe, as [`test512_of`], in a 1024-bit block.
    #[inline(always)]
    fn test1024_of(kernel: &Kernel, k: usize, key: (u64, u64), block: &[u64]) -> bool {
        all_set_in(block, 0, k, &|_, i| probe::<16>(&kernel.lanes, key, i))
    }

    /// Eight probes at a time ([`set_octet`]).
    #[inline(always)]
    fn set512_of(kernel: &Kernel, k: usize, key: (u64, u64), block: &mut [u64]) {
        for c in 0..k.div_ceil(8) {
            let bits = std::array::from_fn(|i| kernel.lanes.index(8 * c + i, key));
            set_octet(block, &bits, k - 8 * c);
        }
    }

    #[inline(always)]
    fn test256_of(kernel: &Kernel, key: (u64, u64), block: &[u64]) -> bool {
        covers(block, &mask256(&kernel.lanes, key))
    }

    #[inline(always)]
    fn set256_of(kernel: &Kernel, key: (u64, u64), block: &mut [u64]) {
        block
            .iter_mut()
            .zip(mask256(&kernel.lanes, key))
            .for_each(|(w, m)| *w |= m)
    }
}

/// AVX2, in a file of its own.
#[cfg(target_arch = "x86_64")]
mod avx2;

/// AVX-512, in a file of its own.
#[cfg(target_arch = "x86_64")]
mod avx512;

mod halves;
mod one_key;
mod stepped;
use halves::Halves;
use one_key::one_key_entries;
use stepped::{set512_stepped, steps};
