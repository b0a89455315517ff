//! The classic filter's probes on bloomlab's multiply-shift paths, the essay's k independent
//! functions `((a_i·x + b_i) · m) >> 64`, computed eight at a time with AVX-512 (`vpmullq`
//! for the k products, a 32-bit-limb multiply-high for the reduction) or four at a time
//! with AVX2 (the same from `vpmuludq`), where the CPU has them (detected at run time,
//! [`Simd`]). The scalar twin is [`BloomFilter`](super::bloom::BloomFilter)'s own loop: each
//! path sets the same bits and gives the same answers, since each index is exactly
//! [`HashFamily::index`]'s.
//!
//! A key's probes are all computed before any word is touched, so that every address is
//! known when the read-modify-writes issue. A batched AVX-512 query gathers the words of
//! eight probes at once, as does a one-key one for k > 8; a one-key AVX-512 query for k <= 8
//! and an AVX2 one load them and exit after a group that fails ([`every_group`]). The
//! AVX-512 inserts and one-key query take each index from its lane with extracts; the AVX2
//! path stores its four lanes to an array first. No intrinsic sits in
//! a closure: a closure is not compiled with its caller's features, so its intrinsics
//! would become calls.

use super::probe_groups::every_group;
use crate::hash::{AffineLanes, HashFamily, Simd};

/// A classic filter's probes on one vector path.
///
/// Invariant: `simd` is a vector path this CPU runs.
#[derive(Clone, Debug)]
pub(super) struct Kernel {
    lanes: AffineLanes,
    k: usize,
    simd: Simd,
}

/// Calls `$body` with `$path` naming the module of `$simd`'s path.
macro_rules! dispatch {
    ($simd:expr, $path:ident => $body:expr) => {
        match $simd {
            #[cfg(target_arch = "x86_64")]
            Simd::Avx512 => {
                use avx512 as $path;
                // SAFETY: a kernel's path runs on this CPU (its invariant).
                unsafe { $body }
            }
            #[cfg(target_arch = "x86_64")]
            Simd::Avx2 => {
                use avx2 as $path;
                // SAFETY: as above.
                unsafe { $body }
            }
            _ => unreachable!("a kernel is never on the scalar path"),
        }
    };
}

impl Kernel {
    /// The kernel of a family on a multiply-shift path with k functions, on `simd`; none
    /// for the scalar path, another family, or a path this CPU lacks.
    pub(super) fn new(family: &HashFamily, k: u32, simd: Simd) -> Option<Kernel> {
        let vector = simd != Simd::Scalar && simd.runs_here();
        vector
            .then(|| family.affine_lanes())
            .flatten()
            .map(|lanes| Kernel {
                lanes,
                k: k as usize,
                simd,
            })
    }

    pub(super) fn simd(&self) -> Simd {
        self.simd
    }

    /// Sets the key's k bits. `words` holds the filter's m bits.
    #[inline]
    pub(super) fn set(&self, words: &mut [u64], key: u64) {
        dispatch!(self.simd, path => path::set_one(self, words, key))
    }

    /// Sets the bits of every key, in one loop.
    pub(super) fn set_many(&self, words: &mut [u64], keys: &[u64]) {
        dispatch!(self.simd, path => path::set_many(self, words, keys))
    }

    /// Whether the k bits of `key` are all set, on the AVX-512 path (faster than the scalar
    /// loop for present keys, level for absent ones); none on AVX2, where the scalar loop is
    /// kept.
    #[inline]
    pub(super) fn test(&self, words: &[u64], key: u64) -> Option<bool> {
        match self.simd {
            // SAFETY: a kernel's path runs on this CPU (its invariant).
            #[cfg(target_arch = "x86_64")]
            Simd::Avx512 => Some(unsafe { avx512::test_one(self, words, key) }),
            _ => None,
        }
    }

    /// `answers[j]`: whether the k bits of `keys[j]` are all set, in one loop: batched the
    /// gathered test of all k is the faster (`bloomlab bench`), while key by key an absent
    /// key is cheaper with the exit after its first group ([`Kernel::test`]).
    pub(super) fn test_many(&self, words: &[u64], keys: &[u64], answers: &mut [bool]) {
        dispatch!(self.simd, path => path::test_many(self, words, keys, answers))
    }
}

/// A path's entry points, compiled with its features (`$attr`) so that the path's `set`
/// (`(kernel, words, key)`), `set_keys` (`(kernel, words, keys)`) and `test`
/// (`(kernel, words, key) -> bool`), defined by the module, inline into them.
macro_rules! entries {
    ($(#[$attr:meta])*) => {
        use super::Kernel;

        $(#[$attr])*
        pub(super) fn set_one(kernel: &Kernel, words: &mut [u64], key: u64) {
            // SAFETY: compiled with the path's features.
            unsafe { set(kernel, words, key) }
        }

        $(#[$attr])*
        pub(super) fn set_many(kernel: &Kernel, words: &mut [u64], keys: &[u64]) {
            // SAFETY: as above.
            unsafe { set_keys(kernel, words, keys) }
        }

        $(#[$attr])*
        pub(super) fn test_many(kernel: &Kernel, words: &[u64], keys: &[u64], answers: &mut [bool]) {
            for (answer, &key) in answers.iter_mut().zip(keys) {
                // SAFETY: as above.
                *answer = unsafe { test(kernel, words, key) };
            }
        }
    };
}

/// `words[at[j]] |= masks[j]` for each j below `live`.
#[inline(always)]
fn set_lanes(words: &mut [u64], at: &[u64], masks: &[u64], live: usize) {
    for (&word, &mask) in at.iter().zip(masks).take(live) {
        words[word as usize] |= mask;
    }
}

/// Whether `words[at[j]]` holds `masks[j]` for each j below `live`, exiting after each
/// group that fails ([`every_group`]).
#[inline(always)]
fn lanes_set(words: &[u64], at: &[u64], masks: &[u64], live: usize) -> bool {
    every_group(live.min(at.len()), |group| {
        group.fold(0, |missing, j| {
            missing | (masks[j] & !words[at[j] as usize])
        }) == 0
    })
}

/// AVX-512 F, DQ, BW and VL: eight probes to a register.
#[cfg(target_arch = "x86_64")]
mod avx512 {
    use std::arch::x86_64::*;

    use super::super::probe_groups::PROBE_GROUP;

    /// The one-key test exits after each pair of lanes that ends a group: the groups must
    /// tile the eight lanes in pairs.
    const _: () = assert!(PROBE_GROUP.is_multiple_of(2) && 8usize.is_multiple_of(PROBE_GROUP));
    use crate::hash::vector::avx512::mul_high;

    const LANES: usize = 8;

    entries!(#[target_feature(enable = "avx2,avx512f,avx512dq,avx512bw,avx512vl")]);

    /// The indexes of probes `8c..8c + 8` of the key: `((a_i·x + b_i) · m) >> 64`,
    /// `vpmullq` then the limb multiply-high.
    #[inline(always)]
    unsafe fn indexes(kernel: &Kernel, c: usize, key: u64) -> __m512i {
        // SAFETY: AVX-512.
        unsafe { index_lanes(chunk(kernel, c), kernel.lanes.m, key) }
    }

    /// `((a_i·x + b_i) · m) >> 64` in each lane of `(a, b)`.
    #[inline(always)]
    unsafe fn index_lanes((a, b): (__m512i, __m512i), m: u64, key: u64) -> __m512i {
        // SAFETY: AVX-512.
        unsafe {
            let h = _mm512_add_epi64(_mm512_mullo_epi64(a, _mm512_set1_epi64(key as i64)), b);
            mul_high(h, m)
        }
    }

    /// The one-bit mask of each index in its word.
    #[inline(always)]
    unsafe fn one_bits(bits: __m512i) -> __m512i {
        // SAFETY: AVX-512.
        unsafe {
            let one_bit = _mm512_and_si512(bits, _mm512_set1_epi64(63));
            _mm512_sllv_epi64(_mm512_set1_epi64(1), one_bit)
        }
    }

    /// `(a, b)`: the multipliers and offsets of probes `8c..8c + 8`.
    #[inline(always)]
    unsafe fn chunk(kernel: &Kernel, c: usize) -> (__m512i, __m512i) {
        let lanes = &kernel.lanes;
        // SAFETY: AVX-512; each slice holds eight u64, 64 bytes.
        unsafe {
            (
                _mm512_loadu_si512(lanes.a[LANES * c..][..LANES].as_ptr().cast()),
                _mm512_loadu_si512(lanes.b[LANES * c..][..LANES].as_ptr().cast()),
            )
        }
    }

    /// The word numbers and one-bit masks of eight indexes.
    #[inline(always)]
    unsafe fn word_lanes(bits: __m512i) -> (__m512i, __m512i) {
        // SAFETY: AVX-512.
        unsafe { (_mm512_srli_epi64::<6>(bits), one_bits(bits)) }
    }

    /// Probes `2q` and `2q + 1` of [`word_lanes`], moved from their lanes to registers.
    #[inline(always)]
    unsafe fn pair((at, masks): (__m512i, __m512i), q: usize) -> ([usize; 2], [u64; 2]) {
        // SAFETY: AVX-512.
        unsafe {
            let (at, masks) = match q {
                0 => (_mm512_castsi512_si128(at), _mm512_castsi512_si128(masks)),
                1 => (
                    _mm512_extracti64x2_epi64::<1>(at),
                    _mm512_extracti64x2_epi64::<1>(masks),
                ),
                2 => (
                    _mm512_extracti64x2_epi64::<2>(at),
                    _mm512_extracti64x2_epi64::<2>(masks),
                ),
                _ => (
                    _mm512_extracti64x2_epi64::<3>(at),
                    _mm512_extracti64x2_epi64::<3>(masks),
                ),
            };
            (
                [
                    _mm_cvtsi128_si64(at) as usize,
                    _mm_extract_epi64::<1>(at) as usize,
                ],
                [
                    _mm_cvtsi128_si64(masks) as u64,
                    _mm_extract_epi64::<1>(masks) as u64,
                ],
            )
        }
    }

    /// Sets the bits of the key's probes `8c..8c + live` (`(a, b)` those of [`chunk`]).
    /// Each word number and mask moves from its lane to a register, never through
    /// memory, and each lane's test compares `live` with a constant, so the kernel keeps
    /// no counter per lane and needs no register saved on the stack.
    #[inline(always)]
    unsafe fn set_chunk(
        words: &mut [u64],
        lanes: (__m512i, __m512i),
        m: u64,
        key: u64,
        live: usize,
    ) {
        // SAFETY: AVX-512 (the caller's features).
        unsafe {
            let probes = word_lanes(index_lanes(lanes, m, key));
            for q in 0..LANES / 2 {
                if live <= 2 * q {
                    return;
                }
                let ([w0, w1], [m0, m1]) = pair(probes, q);
                words[w0] |= m0;
                if live > 2 * q + 1 {
                    words[w1] |= m1;
                }
            }
        }
    }

    /// One key: k at most eight takes one chunk inline, more a loop of its own.
    #[inline(always)]
    unsafe fn set(kernel: &Kernel, words: &mut [u64], key: u64) {
        // SAFETY: the caller is compiled with AVX-512.
        unsafe {
            if kernel.k <= LANES {
                set_chunk(words, chunk(kernel, 0), kernel.lanes.m, key, kernel.k)
            } else {
                set_chunks(kernel, words, key)
            }
        }
    }

    #[target_feature(enable = "avx2,avx512f,avx512dq,avx512bw,avx512vl")]
    fn set_chunks(kernel: &Kernel, words: &mut [u64], key: u64) {
        for c in 0..kernel.k.div_ceil(LANES) {
            // SAFETY: compiled with AVX-512.
            unsafe {
                set_chunk(
                    words,
                    chunk(kernel, c),
                    kernel.lanes.m,
                    key,
                    kernel.k - LANES * c,
                )
            }
        }
    }

    /// With k at most eight, the lanes are loaded once for all the keys, not after each
    /// key's stores: loaded in the loop, they made batched inserts twice as slow in about
    /// one placement of the filter in six (`bloomlab bench`, rebuilding it every pass).
    #[inline(always)]
    unsafe fn set_keys(kernel: &Kernel, words: &mut [u64], keys: &[u64]) {
        // SAFETY: the caller is compiled with AVX-512.
        unsafe {
            if kernel.k <= LANES {
                let (lanes, m, k) = (chunk(kernel, 0), kernel.lanes.m, kernel.k);
                for &key in keys {
                    set_chunk(words, lanes, m, key, k);
                }
            } else {
                for &key in keys {
                    set_chunks(kernel, words, key);
                }
            }
        }
    }

    /// One key: with k at most eight, the probes' words are read from the lanes' indexes
    /// moved to registers, exiting after each group of [`PROBE_GROUP`] that fails (an
    /// absent key reads four words, not k); more probes take [`test`]'s gathers.
    #[target_feature(enable = "avx2,avx512f,avx512dq,avx512bw,avx512vl")]
    pub(super) fn test_one(kernel: &Kernel, words: &[u64], key: u64) -> bool {
        if kernel.k > LANES {
            // SAFETY: compiled with AVX-512.
            return unsafe { test(kernel, words, key) };
        }
        // SAFETY: as above.
        let probes = unsafe { word_lanes(index_lanes(chunk(kernel, 0), kernel.lanes.m, key)) };
        let live = kernel.k;
        let mut missing = 0;
        for q in 0..LANES / 2 {
            if live <= 2 * q {
                break;
            }
            // SAFETY: as above.
            let ([w0, w1], [m0, m1]) = unsafe { pair(probes, q) };
            missing |= m0 & !words[w0];
            if live > 2 * q + 1 {
                missing |= m1 & !words[w1];
            }
            if (2 * q + 2) % PROBE_GROUP == 0 && missing != 0 {
                return false;
            }
        }
        missing == 0
    }

    /// Gathers the words of eight probes at once and tests them with one masked compare:
    /// one gather costs less than two with an exit between them, or than scalar loads of
    /// a zmm store (which does not forward to them here).
    #[inline(always)]
    unsafe fn test(kernel: &Kernel, words: &[u64], key: u64) -> bool {
        // SAFETY: AVX-512. The gather reads only the live lanes' words, each below
        // `words.len()`: an index is below m.
        unsafe {
            for c in 0..kernel.k.div_ceil(LANES) {
                let bits = indexes(kernel, c, key);
                let remaining = kernel.k - LANES * c;
                let live = ((1u16 << remaining.min(LANES)) - 1) as u8;
                let held = _mm512_mask_i64gather_epi64::<8>(
                    _mm512_setzero_si512(),
                    live,
                    _mm512_srli_epi64::<6>(bits),
                    words.as_ptr().cast(),
                );
                if _mm512_mask_testn_epi64_mask(live, held, one_bits(bits)) != 0 {
                    return false;
                }
            }
            true
        }
    }
}

/// AVX2: four probes to a register, the products from 32-bit multiplies.
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    use crate::hash::vector::avx2::{mul_high, mul64};

    const LANES: usize = 4;

    entries!(#[target_feature(enable = "avx2")]);

    #[inline(always)]
    unsafe fn set(kernel: &Kernel, words: &mut [u64], key: u64) {
        for c in 0..kernel.k.div_ceil(LANES) {
            // SAFETY: the caller is compiled with AVX2.
            let (at, masks) = unsafe { probes(kernel, c, key) };
            super::set_lanes(words, &at, &masks, kernel.k - LANES * c);
        }
    }

    #[inline(always)]
    unsafe fn set_keys(kernel: &Kernel, words: &mut [u64], keys: &[u64]) {
        for &key in keys {
            // SAFETY: as above.
            unsafe { set(kernel, words, key) }
        }
    }

    /// The word numbers and one-bit masks of probes `4c..4c + 4` of the key, as the
    /// AVX-512 path's from `vpmuludq`.
    #[inline(always)]
    unsafe fn probes(kernel: &Kernel, c: usize, key: u64) -> ([u64; LANES], [u64; LANES]) {
        let lanes = &kernel.lanes;
        let (a, b) = (
            &lanes.a[LANES * c..][..LANES],
            &lanes.b[LANES * c..][..LANES],
        );
        let (mut at, mut masks) = ([0u64; LANES], [0u64; LANES]);
        // SAFETY: AVX2; each slice and array holds four u64, 32 bytes.
        unsafe {
            let x = _mm256_set1_epi64x(key as i64);
            let h = _mm256_add_epi64(
                mul64(
                    _mm256_loadu_si256(a.as_ptr().cast()),
                    x,
                    _mm256_srli_epi64::<32>(x),
                ),
                _mm256_loadu_si256(b.as_ptr().cast()),
            );
            let bits = mul_high(h, lanes.m);
            let one_bit = _mm256_and_si256(bits, _mm256_set1_epi64x(63));
            _mm256_storeu_si256(at.as_mut_ptr().cast(), _mm256_srli_epi64::<6>(bits));
            _mm256_storeu_si256(
                masks.as_mut_ptr().cast(),
                _mm256_sllv_epi64(_mm256_set1_epi64x(1), one_bit),
            );
        }
        (at, masks)
    }

    /// Loads each probe's word: four loads cost less than an AVX2 gather here.
    #[inline(always)]
    unsafe fn test(kernel: &Kernel, words: &[u64], key: u64) -> bool {
        for c in 0..kernel.k.div_ceil(LANES) {
            // SAFETY: the caller is compiled with AVX2.
            let (at, masks) = unsafe { probes(kernel, c, key) };
            if !super::lanes_set(words, &at, &masks, kernel.k - LANES * c) {
                return false;
            }
        }
        true
    }
}
