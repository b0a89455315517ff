//! AVX-512: eight 64-bit lanes, `vpmullq`; a 512-bit block in one register. Each function
//! requires AVX2 and AVX-512 F, DQ, BW and VL (its callers are compiled with them). A
//! 1024-bit block is tested by the AVX2 path's code ([`test1024_of`]).

use std::arch::x86_64::*;

use super::avx2::test1024_of;
use super::{BLOCKED_SHIFT, Halves, SPLIT_SHIFT};
use crate::hash::Lanes;

entries!(#[target_feature(enable = "avx2,avx512f,avx512dq,avx512bw,avx512vl")]);

/// The indexes of lanes `8c..8c + 8` of the key whose [`Lanes::key`] is `(y, c)`.
#[inline(always)]
unsafe fn octet<const SHIFT: u32>(lanes: &Lanes, chunk: usize, (y, c): (u64, u64)) -> __m512i {
    let (mul, add) = (&lanes.mul[8 * chunk..][..8], &lanes.add[8 * chunk..][..8]);
    // SAFETY: AVX-512; each slice holds eight u64, 64 bytes.
    unsafe {
        let mul = _mm512_loadu_si512(mul.as_ptr().cast());
        let add = _mm512_loadu_si512(add.as_ptr().cast());
        let g = _mm512_mullo_epi64(mul, _mm512_set1_epi64(y as i64));
        let g = _mm512_add_epi64(_mm512_add_epi64(g, add), _mm512_set1_epi64(c as i64));
        _mm512_srli_epi64::<SHIFT>(g)
    }
}

/// Lanes `0..live` of eight.
#[inline(always)]
fn first(live: usize) -> __mmask8 {
    ((1u16 << live.min(8)) - 1) as u8
}

/// Eight words.
#[inline(always)]
unsafe fn load512(block: &[u64]) -> __m512i {
    let block = &block[..8];
    // SAFETY: AVX-512; eight u64, 64 bytes.
    unsafe { _mm512_loadu_si512(block.as_ptr().cast()) }
}

/// Whether a probe of lanes `8c..8c + 8` (those below k) is unset in `words`: `vpermq`
/// fetches each probe's word (its word number, `index >> 6`, picks it), a rotation by the index
/// (modulo 64) brings the probe's bit to bit 0, and a masked test checks all eight.
#[inline(always)]
unsafe fn misses(lanes: &Lanes, k: usize, c: usize, key: (u64, u64), words: __m512i) -> bool {
    // SAFETY: AVX-512.
    unsafe {
        unset(
            octet::<BLOCKED_SHIFT>(lanes, c, key),
            words,
            first(k - 8 * c),
        )
    }
}

/// Whether a bit of `bits` (indexes below 512) in the lanes of `live` is unset in `words`.
#[inline(always)]
unsafe fn unset(bits: __m512i, words: __m512i, live: __mmask8) -> bool {
    // SAFETY: AVX-512.
    unsafe {
        let held = _mm512_permutexvar_epi64(_mm512_srli_epi64::<6>(bits), words);
        let probe = _mm512_rorv_epi64(held, bits);
        _mm512_mask_testn_epi64_mask(live, probe, _mm512_set1_epi64(1)) != 0
    }
}

/// The batched queries in cache for double hashing's lanes from half the key ([`Halves`]):
/// one broadcast and one multiply a key, fewer than through [`test512_of`].
#[target_feature(enable = "avx2,avx512f,avx512dq,avx512bw,avx512vl")]
#[inline(never)]
pub(super) fn test_cached_halves(
    kernel: &Kernel,
    halves: &Halves,
    words: &[u64],
    keys: &[u64],
    answers: &mut [bool],
) {
    let live = first(kernel.k);
    // SAFETY: AVX-512; `half` and each `offset` hold eight u64, 64 bytes, aligned.
    unsafe {
        let half = _mm512_load_si512(halves.half.as_ptr().cast());
        for (answer, &key) in answers.iter_mut().zip(keys) {
            let words = load512(kernel.block::<8>(words, key));
            let offset = _mm512_load_si512(halves.offset[(key & 1) as usize].as_ptr().cast());
            let g = _mm512_add_epi64(
                _mm512_mullo_epi64(_mm512_set1_epi64(key as i64), half),
                offset,
            );
            *answer = !unset(_mm512_srli_epi64::<BLOCKED_SHIFT>(g), words, live);
        }
    }
}

#[inline(always)]
unsafe fn test512_of(kernel: &Kernel, k: usize, key: (u64, u64), block: &[u64]) -> bool {
    let lanes = &kernel.lanes;
    // SAFETY: AVX-512.
    unsafe {
        !misses(lanes, k, 0, key, load512(block))
            && (k <= 8 || test512_beyond(lanes, k, key, block))
    }
}

/// Lanes 8 and beyond of [`test512_of`], out of line: most k are at most 8.
#[target_feature(enable = "avx2,avx512f,avx512dq,avx512bw,avx512vl")]
#[inline(never)]
fn test512_beyond(lanes: &Lanes, k: usize, key: (u64, u64), block: &[u64]) -> bool {
    // SAFETY: compiled with AVX-512.
    unsafe {
        let words = load512(block);
        (1..k.div_ceil(8)).all(|c| !misses(lanes, k, c, key, words))
    }
}

set512!(#[target_feature(enable = "avx2,avx512f,avx512dq,avx512bw,avx512vl")]);

/// Sets the probes of lanes `8c..8c + 8` (those below k).
#[inline(always)]
unsafe fn set_chunk(kernel: &Kernel, k: usize, c: usize, key: (u64, u64), block: &mut [u64]) {
    // SAFETY: AVX-512; eight u64 lanes to eight u64.
    let bits: [u64; 8] =
        unsafe { std::mem::transmute(octet::<BLOCKED_SHIFT>(&kernel.lanes, c, key)) };
    super::set_octet(block, &bits, k - 8 * c);
}

/// A split block's mask: probe j's bit in 32-bit word j, of the key whose [`Lanes::key`] is
/// `key`.
#[inline(always)]
unsafe fn mask256(lanes: &Lanes, key: (u64, u64)) -> __m256i {
    // SAFETY: AVX-512.
    unsafe {
        let bits = _mm512_cvtepi64_epi32(octet::<SPLIT_SHIFT>(lanes, 0, key));
        _mm256_sllv_epi32(_mm256_set1_epi32(1), bits)
    }
}

/// Four words.
#[inline(always)]
unsafe fn load256(words: &[u64]) -> __m256i {
    let words = &words[..4];
    // SAFETY: AVX2; four u64, 32 bytes.
    unsafe { _mm256_loadu_si256(words.as_ptr().cast()) }
}

#[inline(always)]
unsafe fn test256_of(kernel: &Kernel, key: (u64, u64), block: &[u64]) -> bool {
    // SAFETY: AVX-512.
    unsafe { _mm256_testc_si256(load256(block), mask256(&kernel.lanes, key)) != 0 }
}

#[inline(always)]
unsafe fn set256_of(kernel: &Kernel, key: (u64, u64), block: &mut [u64]) {
    let block = &mut block[..4];
    // SAFETY: AVX-512; four u64, 32 bytes.
    unsafe {
        let words = _mm256_or_si256(load256(block), mask256(&kernel.lanes, key));
        _mm256_storeu_si256(block.as_mut_ptr().cast(), words)
    }
}
