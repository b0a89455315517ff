//! AVX2: eight lanes to a register as 32-bit words. AVX2 has no 64-bit lane product, but an
//! index needs only the high bits of `g_i`, and those come from 32-bit limbs ([`Limbs`]):
//! one 32×32→64 product summed with the offsets for the low halves' carry (`vpmuludq`, four
//! lanes a register, two registers) and two 32-bit products (`vpmulld`, eight lanes), where
//! the 64-bit product takes three `vpmuludq` for every four lanes. The queries take the limbs; the
//! 512-bit inserts keep the 64-bit products ([`set_chunk`]). Each function requires AVX2
//! (its callers are compiled with it).

use std::arch::x86_64::*;

use super::{BLOCKED_SHIFT, BLOCKED1024_SHIFT, SPLIT_SHIFT};
use crate::hash::vector::avx2::mul64;
use crate::hash::{Lanes, Limbs};

entries!(#[target_feature(enable = "avx2")]);

// Assembling the mask in two registers cost more than setting the probes one by one.
set512!(#[target_feature(enable = "avx2")]);

/// Four u64 or eight u32, 32 bytes.
#[inline(always)]
unsafe fn load<T>(words: &[T]) -> __m256i {
    assert!(size_of_val(words) >= 32);
    // SAFETY: AVX2; 32 bytes.
    unsafe { _mm256_loadu_si256(words.as_ptr().cast()) }
}

/// `g_i >> 32` of lanes `8c..8c + 8` in lane order, of the key whose [`Lanes::key`] is
/// `(y, c)` ([`Limbs`]).
#[inline(always)]
unsafe fn high(limbs: &Limbs, chunk: usize, (y, c): (u64, u64)) -> __m256i {
    // SAFETY: AVX2; each array holds 32 bytes.
    unsafe {
        let y_wide = _mm256_set1_epi64x(y as i64);
        let c_wide = _mm256_set1_epi64x(c as i64);
        let even = sums(
            &limbs.even_mul[chunk],
            &limbs.even_add[chunk],
            y_wide,
            c_wide,
        );
        let odd = sums(&limbs.odd_mul[chunk], &limbs.odd_add[chunk], y_wide, c_wide);
        let carried = _mm256_blend_epi32::<0b1010_1010>(_mm256_srli_epi64::<32>(even), odd);
        let swapped = _mm256_shuffle_epi32::<0b1011_0001>(y_wide);
        let cross = _mm256_add_epi32(
            _mm256_mullo_epi32(load(&limbs.by_y[chunk]), y_wide),
            _mm256_mullo_epi32(load(&limbs.by_swapped[chunk]), swapped),
        );
        _mm256_add_epi32(carried, cross)
    }
}

/// `L = ml·yl + add + c` (mod 2^64) of four lanes ([`Limbs`]), from `mul` and `add` (their
/// `ml` and `add_i`), `y` (yl in the low half of each lane) and `c` in each lane.
#[inline(always)]
unsafe fn sums(mul: &[u64; 4], add: &[u64; 4], y: __m256i, c: __m256i) -> __m256i {
    // SAFETY: AVX2.
    unsafe {
        _mm256_add_epi64(
            _mm256_add_epi64(_mm256_mul_epu32(load(mul), y), load(add)),
            c,
        )
    }
}

/// The shifts of the designs' indexes from `g >> 32`.
const BLOCKED_HIGH: i32 = BLOCKED_SHIFT as i32 - 32;
const SPLIT_HIGH: i32 = SPLIT_SHIFT as i32 - 32;
const BLOCKED1024_HIGH: i32 = BLOCKED1024_SHIFT as i32 - 32;

/// Sets the probes of lanes `8c..8c + 8` (those below k), from the 64-bit products
/// ([`quad`]): their stores start from the first four lanes, where the limbs finish all
/// eight at once, and through the limbs the inserts were slower (docs/PERFORMANCE.md).
#[inline(always)]
unsafe fn set_chunk(kernel: &Kernel, k: usize, c: usize, key: (u64, u64), block: &mut [u64]) {
    let mut bits = [0u64; 8];
    // SAFETY: AVX2; four u64, 32 bytes, to each half of `bits`.
    unsafe {
        let low = quad(&kernel.lanes, 2 * c, key);
        _mm256_storeu_si256(bits.as_mut_ptr().cast(), low);
        let high = quad(&kernel.lanes, 2 * c + 1, key);
        _mm256_storeu_si256(bits[4..].as_mut_ptr().cast(), high);
    }
    super::set_octet(block, &bits, k - 8 * c);
}

/// The 512-bit indexes of lanes `4q..4q + 4` of the key whose [`Lanes::key`] is `(y, c)`,
/// each g a 64-bit product of three 32-bit ones ([`mul64`]).
#[inline(always)]
unsafe fn quad(lanes: &Lanes, q: usize, (y, c): (u64, u64)) -> __m256i {
    let (mul, add) = (&lanes.mul[4 * q..][..4], &lanes.add[4 * q..][..4]);
    // SAFETY: AVX2; each slice holds four u64, 32 bytes.
    unsafe {
        let y = _mm256_set1_epi64x(y as i64);
        let g = _mm256_add_epi64(mul64(load(mul), y, _mm256_srli_epi64::<32>(y)), load(add));
        let g = _mm256_add_epi64(g, _mm256_set1_epi64x(c as i64));
        _mm256_srli_epi64::<{ BLOCKED_SHIFT as i32 }>(g)
    }
}

/// Whether a probe of lanes `8c..8c + 8` (those below k) is unset in the block held as
/// sixteen 32-bit words, `first` and `second`: `vpermd` fetches each probe's word (the top four
/// bits of `g >> 32`) from both halves, and the top bit, the sign that `vblendvps` reads,
/// picks one. A lane past k shifts 0 instead of 1, so its mask is empty and `vptest` alone
/// answers.
#[inline(always)]
unsafe fn misses(
    limbs: &Limbs,
    k: usize,
    c: usize,
    key: (u64, u64),
    [first, second]: [__m256i; 2],
) -> bool {
    // SAFETY: AVX2.
    unsafe {
        let g = high(limbs, c, key);
        let order = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        let live = _mm256_cmpgt_epi32(_mm256_set1_epi32((k - 8 * c) as i32), order);
        let word = _mm256_srli_epi32::<28>(g);
        let one_bit = _mm256_and_si256(_mm256_srli_epi32::<BLOCKED_HIGH>(g), _mm256_set1_epi32(31));
        let mask = _mm256_sllv_epi32(_mm256_srli_epi32::<31>(live), one_bit);
        let held = _mm256_castps_si256(_mm256_blendv_ps(
            _mm256_castsi256_ps(_mm256_permutevar8x32_epi32(first, word)),
            _mm256_castsi256_ps(_mm256_permutevar8x32_epi32(second, word)),
            _mm256_castsi256_ps(g),
        ));
        _mm256_testc_si256(held, mask) == 0
    }
}

#[inline(always)]
unsafe fn test512_of(kernel: &Kernel, k: usize, key: (u64, u64), block: &[u64]) -> bool {
    // SAFETY: AVX2.
    unsafe {
        let halves = [load(&block[..4]), load(&block[4..8])];
        !misses(&kernel.limbs, k, 0, key, halves)
            && (k <= 8 || test512_beyond(kernel, k, key, block))
    }
}

/// Lanes 8 and beyond of [`test512_of`], out of line: most k are at most 8.
#[target_feature(enable = "avx2")]
#[inline(never)]
fn test512_beyond(kernel: &Kernel, k: usize, key: (u64, u64), block: &[u64]) -> bool {
    // SAFETY: compiled with AVX2.
    unsafe {
        let halves = [load(&block[..4]), load(&block[4..8])];
        (1..k.div_ceil(8)).all(|c| !misses(&kernel.limbs, k, c, key, halves))
    }
}

/// The batched queries in cache for double hashing's lanes from half the key, in limbs
/// ([`super::Halves::limbs`]): lane i of key x is `g_i` of `(y, c) = (x, 0)` in the limbs of
/// x's parity, so neither y nor c is computed (the lanes exist for k ≤ 8).
#[target_feature(enable = "avx2")]
#[inline(never)]
pub(super) fn test_cached_halves(
    kernel: &Kernel,
    limbs: &[Limbs; 2],
    words: &[u64],
    keys: &[u64],
    answers: &mut [bool],
) {
    let k = kernel.k.min(8);
    for (answer, &key) in answers.iter_mut().zip(keys) {
        let block = kernel.block_one::<8>(words, key);
        let limbs = &limbs[(key & 1) as usize];
        // SAFETY: compiled with AVX2; the block holds eight u64.
        *answer = unsafe {
            !misses(
                limbs,
                k,
                0,
                (key, 0),
                [load(&block[..4]), load(&block[4..8])],
            )
        };
    }
}

/// Whether a probe of lanes `8c..8c + 8` (those below k) is unset in the 1024-bit block held
/// as thirty-two 32-bit words in four registers: each probe's word is the top five bits of
/// `g >> 32`; `vpermd` fetches it from each register by the low three, bit 30 (moved to
/// the sign) picks the odd register of each pair and bit 31, the sign, the pair; lanes past
/// k have empty masks, as in [`misses`].
#[inline(always)]
unsafe fn misses1024(
    kernel: &Kernel,
    k: usize,
    c: usize,
    key: (u64, u64),
    block: [__m256i; 4],
) -> bool {
    // SAFETY: AVX2.
    unsafe {
        let g = high(&kernel.limbs, c, key);
        let order = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        let live = _mm256_cmpgt_epi32(_mm256_set1_epi32((k - 8 * c) as i32), order);
        let word = _mm256_srli_epi32::<27>(g);
        let one_bit = _mm256_and_si256(
            _mm256_srli_epi32::<BLOCKED1024_HIGH>(g),
            _mm256_set1_epi32(31),
        );
        let mask = _mm256_sllv_epi32(_mm256_srli_epi32::<31>(live), one_bit);
        let odd = _mm256_castsi256_ps(_mm256_slli_epi32::<1>(g));
        let low = _mm256_blendv_ps(fetch(block[0], word), fetch(block[1], word), odd);
        let high = _mm256_blendv_ps(fetch(block[2], word), fetch(block[3], word), odd);
        let held = _mm256_castps_si256(_mm256_blendv_ps(low, high, _mm256_castsi256_ps(g)));
        _mm256_testc_si256(held, mask) == 0
    }
}

/// The words of `words` that `index` names, by their low three bits, as floats for a blend.
#[inline(always)]
unsafe fn fetch(words: __m256i, index: __m256i) -> __m256 {
    // SAFETY: AVX2.
    unsafe { _mm256_castsi256_ps(_mm256_permutevar8x32_epi32(words, index)) }
}

/// A 1024-bit block as four registers of eight 32-bit words.
#[inline(always)]
unsafe fn load1024(block: &[u64]) -> [__m256i; 4] {
    let block = &block[..16];
    // SAFETY: AVX2; four u64, 32 bytes, each.
    unsafe {
        [
            load(&block[..4]),
            load(&block[4..8]),
            load(&block[8..12]),
            load(&block[12..]),
        ]
    }
}

/// Eight probes at a time ([`misses1024`]); the AVX-512 path takes it too.
#[inline(always)]
pub(super) unsafe fn test1024_of(
    kernel: &Kernel,
    k: usize,
    key: (u64, u64),
    block: &[u64],
) -> bool {
    // SAFETY: AVX2 (the callers are compiled with it).
    unsafe {
        let words = load1024(block);
        !misses1024(kernel, k, 0, key, words) && (k <= 8 || test1024_beyond(kernel, k, key, block))
    }
}

/// Lanes 8 and beyond of [`test1024_of`], out of line: most k are at most 8.
#[target_feature(enable = "avx2")]
#[inline(never)]
fn test1024_beyond(kernel: &Kernel, k: usize, key: (u64, u64), block: &[u64]) -> bool {
    // SAFETY: compiled with AVX2.
    unsafe {
        let words = load1024(block);
        (1..k.div_ceil(8)).all(|c| !misses1024(kernel, k, c, key, words))
    }
}

/// A split block's mask: probe j's bit in 32-bit word j, of the key whose [`Lanes::key`]
/// is `key`: the lanes come in word order, so no permutation.
#[inline(always)]
unsafe fn mask256(kernel: &Kernel, key: (u64, u64)) -> __m256i {
    // SAFETY: AVX2.
    unsafe {
        let bits = _mm256_srli_epi32::<SPLIT_HIGH>(high(&kernel.limbs, 0, key));
        _mm256_sllv_epi32(_mm256_set1_epi32(1), bits)
    }
}

#[inline(always)]
unsafe fn test256_of(kernel: &Kernel, key: (u64, u64), block: &[u64]) -> bool {
    // SAFETY: AVX2.
    unsafe { _mm256_testc_si256(load(&block[..4]), mask256(kernel, key)) != 0 }
}

#[inline(always)]
unsafe fn set256_of(kernel: &Kernel, key: (u64, u64), block: &mut [u64]) {
    let block = &mut block[..4];
    // SAFETY: AVX2; four u64, 32 bytes.
    unsafe {
        let words = _mm256_or_si256(load(block), mask256(kernel, key));
        _mm256_storeu_si256(block.as_mut_ptr().cast(), words)
    }
}
