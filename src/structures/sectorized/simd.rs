//! The sectorized filters' batched lookups on the vector paths: a key per lane, every function
//! of the key (the block chooser, the Z sector functions, the k bit functions) computed in
//! vector registers from the families' lane form ([`Lanes`]), then one gather per group of
//! the keys' sectors. The indexes are those of [`HashFamily::index`], so the answers are the
//! scalar lookup's ([`super::SectorizedFilter::contains_with`] with [`super::Lookup::Scalar`],
//! the twin every path is tested against).
//!
//! [`HashFamily::index`]: crate::hash::HashFamily::index

use crate::hash::{HashFamily, Lanes, MAX_K};

/// The shift of the bit functions' indexes: six bits, below a sector's 64.
const BIT_SHIFT: u32 = 58;

/// A sectorized filter's functions in lane form.
///
/// Invariant: `blocks · words_per_block` is the length of the filter's word array and
/// `blocks >= 1`; `sector` is present when `per_group > 1`; `bits.shift` gives indexes below
/// 64 ([`BIT_SHIFT`]) and `sector`'s below `per_group`; both families are of one hashing
/// (`pairs`); `*_swapped` are the families' multipliers with their halves swapped; the
/// sector functions' shift is at least 32 (they have fewer than 2^32 values).
#[derive(Clone, Debug)]
pub(super) struct Kernel {
    bits: Lanes,
    sector: Option<Lanes>,
    /// `mul_i` of `bits` and `sector` (zeros without one) with its 32-bit halves swapped,
    /// for the AVX2 cross products.
    bits_swapped: [u64; MAX_K as usize],
    sector_swapped: [u64; MAX_K as usize],
    /// The block chooser's `[a_0, b_0]`: block `((a_0·x + b_0) · blocks) >> 64`.
    chooser: [u64; 2],
    blocks: u64,
    words_per_block: u64,
    groups: usize,
    /// Bits per group, k / Z.
    per: usize,
    per_group: u64,
    pairs: bool,
}

impl Kernel {
    /// The kernel of a filter whose families have lane form (multiply-shift or double
    /// hashing on power-of-two ranges), none otherwise.
    pub(super) fn new(
        chooser: &HashFamily,
        sector: &HashFamily,
        bits: &HashFamily,
        k: u32,
        words: usize,
        words_per_block: usize,
        groups: usize,
    ) -> Option<Kernel> {
        let per_group = (words_per_block / groups) as u64;
        let bits = bits.lanes().filter(|b| b.shift == BIT_SHIFT)?;
        let sector = match per_group {
            1 => None,
            _ => Some(sector.lanes().filter(|s| s.pairs() == bits.pairs() && s.shift >= 32)?),
        };
        let chooser = chooser.first_affine()?;
        let blocks = (words / words_per_block) as u64;
        // Below 2^32 blocks, the AVX2 path's 32-bit product gives the first word of each.
        let swapped =
            |lanes: &Lanes| std::array::from_fn(|i| lanes.mul[i % lanes.mul.len()].rotate_left(32));
        (blocks >= 1 && blocks >> 32 == 0).then(|| Kernel {
            pairs: bits.pairs(),
            bits_swapped: swapped(&bits),
            sector_swapped: sector.as_ref().map_or([0; MAX_K as usize], swapped),
            bits,
            sector,
            chooser,
            blocks,
            words_per_block: words_per_block as u64,
            groups,
            per: k as usize / groups,
            per_group,
        })
    }

    /// One key's sectors and masks ([`super::Probe`]) in general registers from the lane
    /// form: the indexes of the families' own index functions, as the vector paths compute
    /// them, inline, where [`HashFamily::index`] is a call that matches its path at each of
    /// the k + Z + 1 functions. For the key-by-key lookups and inserts, on every path.
    #[inline(always)]
    pub(super) fn probe(&self, key: u64) -> super::Probe {
        match self.per {
            1 => self.probe_of::<1>(key),
            2 => self.probe_of::<2>(key),
            3 => self.probe_of::<3>(key),
            4 => self.probe_of::<4>(key),
            5 => self.probe_of::<5>(key),
            6 => self.probe_of::<6>(key),
            7 => self.probe_of::<7>(key),
            8 => self.probe_of::<8>(key),
            _ => self.probe_of::<0>(key),
        }
    }

    /// [`Kernel::probe`] for `N` bits a group (any count if 0): a loop of a constant count
    /// is unrolled and stays scalar, where LLVM vectorized the loop over a count known only
    /// at run time two lanes at a time (SSE2, the 64-bit product emulated).
    #[inline(always)]
    fn probe_of<const N: usize>(&self, key: u64) -> super::Probe {
        let per = if N == 0 { self.per } else { N };
        let [a, b] = self.chooser;
        let h = a.wrapping_mul(key).wrapping_add(b);
        let block = ((h as u128 * self.blocks as u128) >> 64) as usize;
        let base = block * self.words_per_block as usize;
        let bits = self.bits.key(key);
        let sector = self.sector.as_ref().map(|s| (s, s.key(key)));
        let mut probe = super::Probe::default();
        for g in 0..self.groups {
            let at = sector.map_or(0, |(s, y)| s.index(g, y) as usize);
            probe.words[g] = base + g * self.per_group as usize + at;
            probe.masks[g] = (0..per).fold(0, |mask, j| {
                mask | 1u64 << self.bits.index(g * per + j, bits)
            });
        }
        probe
    }

    /// `answers[j] = contains(keys[j])` on AVX-512 (`wide`) or AVX2.
    ///
    /// # Safety
    /// The CPU runs the path ([`crate::hash::Simd::runs_here`]); `array` is the filter's
    /// word array (the invariant); `keys` and `answers` are of one length.
    #[cfg(target_arch = "x86_64")]
    pub(super) unsafe fn contains(
        &self,
        wide: bool,
        array: &[u64],
        keys: &[u64],
        answers: &mut [bool],
    ) {
        debug_assert_eq!(array.len() as u64, self.blocks * self.words_per_block);
        // SAFETY: the caller's.
        unsafe {
            match (wide, self.pairs) {
                (true, true) => avx512::contains::<true>(self, array, keys, answers),
                (true, false) => avx512::contains::<false>(self, array, keys, answers),
                (false, true) => avx2::contains_of::<true>(self, array, keys, answers),
                (false, false) => avx2::contains_of::<false>(self, array, keys, answers),
            }
        }
    }
}

/// Writes bit j of `found` to `answers[j]`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn answer(found: u32, answers: &mut [bool]) {
    for (j, a) in answers.iter_mut().enumerate() {
        *a = found >> j & 1 == 1;
    }
}

/// A chunk of eight keys; a short last chunk asks key 0 in its unused lanes (a block like any
/// other, its answers not written).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn padded<'a>(keys: &'a [u64], lane: &'a mut [u64; 8]) -> &'a [u64] {
    if keys.len() == 8 {
        return keys;
    }
    lane[..keys.len()].copy_from_slice(keys);
    lane
}

// The word tests of [`super::test_scalar`] for families without lane form (byte hashes),
// whose probes are computed key by key.
#[cfg(target_arch = "x86_64")]
use super::LANES;
#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

/// [`super::test_scalar`] with one AVX-512 gather per group.
///
/// # Safety
/// The CPU must have AVX-512F; every index in `words` must lie in `array`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
pub(super) unsafe fn test_avx512(array: &[u64], words: &[[i64; LANES]], masks: &[[i64; LANES]]) -> u32 {
    let mut found: __mmask8 = 0xff;
    for (words, masks) in words.iter().zip(masks) {
        // SAFETY: the arrays hold LANES = 8 i64 each, the indexes lie in `array`.
        unsafe {
            let index = _mm512_loadu_si512(words.as_ptr().cast());
            let mask = _mm512_loadu_si512(masks.as_ptr().cast());
            let got = _mm512_i64gather_epi64::<8>(index, array.as_ptr().cast());
            found &= _mm512_cmpeq_epi64_mask(_mm512_and_si512(got, mask), mask);
        }
    }
    u32::from(found)
}

/// [`super::test_scalar`] with two AVX2 gathers of four words per group.
///
/// # Safety
/// The CPU must have AVX2; every index in `words` must lie in `array`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
pub(super) unsafe fn test_avx2(array: &[u64], words: &[[i64; LANES]], masks: &[[i64; LANES]]) -> u32 {
    let mut found = 0xffu32;
    for (words, masks) in words.iter().zip(masks) {
        for half in 0..2 {
            // SAFETY: each half is four i64 of the arrays, the indexes lie in `array`.
            unsafe {
                let index = _mm256_loadu_si256(words[4 * half..].as_ptr().cast());
                let mask = _mm256_loadu_si256(masks[4 * half..].as_ptr().cast());
                let got = _mm256_i64gather_epi64::<8>(array.as_ptr().cast(), index);
                let equal = _mm256_cmpeq_epi64(_mm256_and_si256(got, mask), mask);
                let bits = _mm256_movemask_pd(_mm256_castsi256_pd(equal)) as u32;
                found &= !((!bits & 0xf) << (4 * half));
            }
        }
    }
    found
}

/// Eight keys a register, `vpmullq`.
#[cfg(target_arch = "x86_64")]
mod avx512 {
    use super::{BIT_SHIFT, Kernel, answer, padded};
    use crate::hash::Lanes;
    use crate::hash::vector::avx512::mul_high;
    use std::arch::x86_64::*;

    /// `a·x + b` in each lane.
    #[inline(always)]
    unsafe fn affine(a: u64, b: u64, x: __m512i) -> __m512i {
        // SAFETY: AVX-512 F and DQ (the callers').
        unsafe {
            _mm512_add_epi64(
                _mm512_mullo_epi64(_mm512_set1_epi64(a as i64), x),
                _mm512_set1_epi64(b as i64),
            )
        }
    }

    /// The `(y, c)` of [`Lanes::key`] in each lane; c is zero unless `PAIR`.
    #[inline(always)]
    unsafe fn key<const PAIR: bool>(lanes: &Lanes, x: __m512i) -> (__m512i, __m512i) {
        // SAFETY: as above.
        unsafe {
            match PAIR {
                false => (x, _mm512_setzero_si512()),
                true => {
                    let [[a0, b0], [a1, b1]] = lanes.pair();
                    let y = _mm512_or_si512(affine(a1, b1, x), _mm512_set1_epi64(1));
                    (y, affine(a0, b0, x))
                }
            }
        }
    }

    /// `g_i` of [`Lanes`] in each lane.
    #[inline(always)]
    unsafe fn value<const PAIR: bool>(lanes: &Lanes, i: usize, (y, c): (__m512i, __m512i)) -> __m512i {
        let i = i % lanes.mul.len();
        // SAFETY: as above.
        unsafe {
            let g = affine(lanes.mul[i], lanes.add[i], y);
            if PAIR { _mm512_add_epi64(g, c) } else { g }
        }
    }

    /// # Safety
    /// AVX-512 F and DQ; the kernel's invariant holds for `array`.
    #[target_feature(enable = "avx2,avx512f,avx512dq")]
    pub(super) unsafe fn contains<const PAIR: bool>(
        kernel: &Kernel,
        array: &[u64],
        keys: &[u64],
        answers: &mut [bool],
    ) {
        let [a0, b0] = kernel.chooser;
        let one = _mm512_set1_epi64(1);
        let sector_shift = _mm512_set1_epi64(kernel.sector.as_ref().map_or(0, |s| s.shift.into()));
        for (keys, answers) in keys.chunks(8).zip(answers.chunks_mut(8)) {
            let mut lane = [0u64; 8];
            let keys = padded(keys, &mut lane);
            // SAFETY: AVX-512 (this function's); every word index is below `blocks ·
            // words_per_block`, the array's length (the invariant): block < blocks, group g's
            // sector at g·per_group + s < words_per_block.
            let found = unsafe {
                let x = _mm512_loadu_si512(keys.as_ptr().cast());
                let block = mul_high(affine(a0, b0, x), kernel.blocks);
                let base = _mm512_mullo_epi64(block, _mm512_set1_epi64(kernel.words_per_block as i64));
                let bits = key::<PAIR>(&kernel.bits, x);
                #[allow(clippy::manual_map, reason = "a closure would not take this function's features")]
                let sectors = match &kernel.sector {
                    Some(s) => Some((s, key::<PAIR>(s, x))),
                    None => None,
                };
                let mut found: __mmask8 = 0xff;
                for g in 0..kernel.groups {
                    let mut word = _mm512_add_epi64(base, _mm512_set1_epi64((g as u64 * kernel.per_group) as i64));
                    if let Some((lanes, key)) = sectors {
                        let sector = _mm512_srlv_epi64(value::<PAIR>(lanes, g, key), sector_shift);
                        word = _mm512_add_epi64(word, sector);
                    }
                    let mut mask = _mm512_setzero_si512();
                    for i in g * kernel.per..(g + 1) * kernel.per {
                        let bit = _mm512_srli_epi64::<BIT_SHIFT>(value::<PAIR>(&kernel.bits, i, bits));
                        mask = _mm512_or_si512(mask, _mm512_sllv_epi64(one, bit));
                    }
                    let got = _mm512_i64gather_epi64::<8>(word, array.as_ptr().cast());
                    found &= _mm512_cmpeq_epi64_mask(_mm512_and_si512(got, mask), mask);
                }
                found
            };
            answer(u32::from(found), answers);
        }
    }
}

/// Eight keys in two registers of four, the 64-bit products from three 32-bit ones: each
/// function's constants, broadcast once, serve both.
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::{BIT_SHIFT, Kernel, answer, padded};
    use crate::hash::Lanes;
    use crate::hash::vector::avx2::mul_high;
    use std::arch::x86_64::*;

    /// Eight lanes: keys 0-3 and 4-7.
    type Two = [__m256i; 2];

    /// `[body(0), body(1)]`, written out: a closure would not take the caller's features.
    macro_rules! two {
        ($h:ident => $body:expr) => {
            [
                {
                    let $h = 0;
                    $body
                },
                {
                    let $h = 1;
                    $body
                },
            ]
        };
    }

    /// `a·x + b` in each lane, `a_high` being `a >> 32` and `x_high` `x >> 32`:
    /// `lo(a)·lo(x) + b + ((hi(a)·lo(x) + lo(a)·hi(x)) << 32)`.
    #[inline(always)]
    unsafe fn affine(a: u64, a_high: u64, b: u64, x: Two, x_high: Two) -> Two {
        // SAFETY: AVX2 (the callers').
        unsafe {
            let (av, ah, bv) = (
                _mm256_set1_epi64x(a as i64),
                _mm256_set1_epi64x(a_high as i64),
                _mm256_set1_epi64x(b as i64),
            );
            two!(h => {
                let cross = _mm256_add_epi64(
                    _mm256_mul_epu32(ah, x[h]),
                    _mm256_mul_epu32(av, x_high[h]),
                );
                let low = _mm256_add_epi64(_mm256_mul_epu32(av, x[h]), bv);
                _mm256_add_epi64(low, _mm256_slli_epi64::<32>(cross))
            })
        }
    }

    /// `(y, y >> 32, c)` of [`Lanes::key`] in each lane; c is zero unless `PAIR`.
    #[inline(always)]
    unsafe fn key<const PAIR: bool>(lanes: &Lanes, x: Two, x_high: Two) -> (Two, Two, Two) {
        // SAFETY: as above.
        unsafe {
            match PAIR {
                false => (x, x_high, [_mm256_setzero_si256(); 2]),
                true => {
                    let [[a0, b0], [a1, b1]] = lanes.pair();
                    let y = affine(a1, a1 >> 32, b1, x, x_high);
                    let y = two!(h => _mm256_or_si256(y[h], _mm256_set1_epi64x(1)));
                    let c = affine(a0, a0 >> 32, b0, x, x_high);
                    (y, two!(h => _mm256_srli_epi64::<32>(y[h])), c)
                }
            }
        }
    }

    /// `g_i` of [`Lanes`] in each lane, right in its high 32 bits only (the low 32 are not
    /// g's): the indexes shift by at least 32. `ml·yl + add_i + c` is one `vpmuludq`, and
    /// `mh·yl + ml·yh`, which adds to its high half, one `vpmulld` of the lanes `(yl, yh)`
    /// against `swapped[i]`, `(mh, ml)`, summed with itself shifted: two products where the
    /// whole g takes three.
    #[inline(always)]
    unsafe fn high<const PAIR: bool>(
        lanes: &Lanes,
        swapped: &[u64],
        i: usize,
        (y, _, c): (Two, Two, Two),
    ) -> Two {
        let i = i % lanes.mul.len();
        // SAFETY: as above.
        unsafe {
            let (mul, add) = (
                _mm256_set1_epi64x(lanes.mul[i] as i64),
                _mm256_set1_epi64x(lanes.add[i] as i64),
            );
            let swapped = _mm256_set1_epi64x(swapped[i] as i64);
            two!(h => {
                let low = _mm256_add_epi64(_mm256_mul_epu32(mul, y[h]), add);
                let low = match PAIR {
                    true => _mm256_add_epi64(low, c[h]),
                    false => low,
                };
                let cross = _mm256_mullo_epi32(y[h], swapped);
                _mm256_add_epi32(_mm256_add_epi32(low, cross), _mm256_slli_epi64::<32>(cross))
            })
        }
    }

    /// The lanes whose word (a gather from `array`) holds every bit of their mask, as bits
    /// 0-7.
    #[inline(always)]
    unsafe fn holds(array: &[u64], word: Two, mask: Two) -> u32 {
        // SAFETY: AVX2 (the callers'); every index in `word` lies in `array`.
        unsafe {
            let mut found = 0;
            for h in 0..2 {
                let got = _mm256_i64gather_epi64::<8>(array.as_ptr().cast(), word[h]);
                let equal = _mm256_cmpeq_epi64(_mm256_and_si256(got, mask[h]), mask[h]);
                found |= (_mm256_movemask_pd(_mm256_castsi256_pd(equal)) as u32) << (4 * h);
            }
            found
        }
    }

    /// [`contains`] for the kernel's bits a group: a constant count (the bench's and the
    /// designs' usual 4, 7 and 8; any other at run time) unrolls the loop over a group's bit
    /// functions.
    ///
    /// # Safety
    /// AVX2; the kernel's invariant holds for `array`.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn contains_of<const PAIR: bool>(
        kernel: &Kernel,
        array: &[u64],
        keys: &[u64],
        answers: &mut [bool],
    ) {
        // SAFETY: the caller's.
        unsafe {
            match kernel.per {
                4 => contains::<PAIR, 4>(kernel, array, keys, answers),
                7 => contains::<PAIR, 7>(kernel, array, keys, answers),
                8 => contains::<PAIR, 8>(kernel, array, keys, answers),
                _ => contains::<PAIR, 0>(kernel, array, keys, answers),
            }
        }
    }

    /// # Safety
    /// AVX2; the kernel's invariant holds for `array`.
    #[target_feature(enable = "avx2")]
    #[inline(never)]
    unsafe fn contains<const PAIR: bool, const PER: usize>(
        kernel: &Kernel,
        array: &[u64],
        keys: &[u64],
        answers: &mut [bool],
    ) {
        let per = if PER == 0 { kernel.per } else { PER };
        let [a0, b0] = kernel.chooser;
        let one = _mm256_set1_epi64x(1);
        let sector_shift = _mm256_set1_epi64x(kernel.sector.as_ref().map_or(0, |s| s.shift.into()));
        for (keys, answers) in keys.chunks(8).zip(answers.chunks_mut(8)) {
            let mut lane = [0u64; 8];
            let keys = padded(keys, &mut lane);
            // SAFETY: AVX2 (this function's); every word index lies in the array, as on
            // AVX-512.
            let found = unsafe {
                let x: Two = two!(h => _mm256_loadu_si256(keys[4 * h..].as_ptr().cast()));
                let x_high = two!(h => _mm256_srli_epi64::<32>(x[h]));
                let block = affine(a0, a0 >> 32, b0, x, x_high);
                let base = two!(h => {
                    let block = mul_high(block[h], kernel.blocks);
                    match kernel.words_per_block {
                        1 => block,
                        8 => _mm256_slli_epi64::<3>(block),
                        w => _mm256_mul_epu32(block, _mm256_set1_epi64x(w as i64)),
                    }
                });
                let bits = key::<PAIR>(&kernel.bits, x, x_high);
                #[allow(clippy::manual_map, reason = "a closure would not take this function's features")]
                let sectors = match &kernel.sector {
                    Some(s) => Some((s, key::<PAIR>(s, x, x_high))),
                    None => None,
                };
                let mut found = 0xffu32;
                for g in 0..kernel.groups {
                    let offset = _mm256_set1_epi64x((g as u64 * kernel.per_group) as i64);
                    let mut word = two!(h => _mm256_add_epi64(base[h], offset));
                    if let Some((lanes, key)) = sectors {
                        let sector = high::<PAIR>(lanes, &kernel.sector_swapped, g, key);
                        for h in 0..2 {
                            let sector = _mm256_srlv_epi64(sector[h], sector_shift);
                            word[h] = _mm256_add_epi64(word[h], sector);
                        }
                    }
                    let mut mask = [_mm256_setzero_si256(); 2];
                    for j in 0..per {
                        let i = g * per + j;
                        let g = high::<PAIR>(&kernel.bits, &kernel.bits_swapped, i, bits);
                        for h in 0..2 {
                            let bit = _mm256_srli_epi64::<{ BIT_SHIFT as i32 }>(g[h]);
                            mask[h] = _mm256_or_si256(mask[h], _mm256_sllv_epi64(one, bit));
                        }
                    }
                    found &= holds(array, word, mask);
                }
                found
            };
            answer(found, answers);
        }
    }
}