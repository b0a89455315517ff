//! Lane arithmetic the vector paths share: a 64-bit product from 32-bit multiplies (AVX2
//! has no `vpmullq`), and Lemire's multiply-high `(h · m) >> 64` from 32-bit limbs, on
//! AVX2 and AVX-512. Each function requires the features of its module (its callers are
//! compiled with them) and gives, lane by lane, exactly the scalar u64/u128 result.
//!
//! Multiply-high from 32-bit limbs: with `h = h_1·2^32 + h_0` and `m = m_1·2^32 + m_0`,
//! `(h·m) >> 64 = h_1·m_1 + (t >> 32) + (u >> 32)`, `t = h_1·m_0 + (h_0·m_0 >> 32)`,
//! `u = h_0·m_1 + (t mod 2^32)`: no sum overflows 64 bits. When `m_1 = 0` it is `t >> 32`.

/// AVX2: four 64-bit lanes.
#[cfg(target_arch = "x86_64")]
pub mod avx2 {
    use std::arch::x86_64::*;

    /// `a·y` mod 2^64 in each lane: `lo(a)·lo(y) + ((hi(a)·lo(y) + lo(a)·hi(y)) << 32)`;
    /// `y_high` is `y >> 32`.
    #[inline(always)]
    pub unsafe fn mul64(a: __m256i, y: __m256i, y_high: __m256i) -> __m256i {
        // SAFETY: AVX2 (the module's requirement).
        unsafe {
            let low = _mm256_mul_epu32(a, y);
            let cross = _mm256_add_epi64(
                _mm256_mul_epu32(_mm256_srli_epi64::<32>(a), y),
                _mm256_mul_epu32(a, y_high),
            );
            _mm256_add_epi64(low, _mm256_slli_epi64::<32>(cross))
        }
    }

    /// `(h · m) >> 64` in each lane from 32-bit limbs (the module's formula); m below 2^32
    /// skips the two products its high limb would zero.
    #[inline(always)]
    pub unsafe fn mul_high(h: __m256i, m: u64) -> __m256i {
        // SAFETY: AVX2.
        unsafe {
            let m_low = _mm256_set1_epi64x((m & 0xffff_ffff) as i64);
            let h_high = _mm256_srli_epi64::<32>(h);
            let t = _mm256_add_epi64(
                _mm256_mul_epu32(h_high, m_low),
                _mm256_srli_epi64::<32>(_mm256_mul_epu32(h, m_low)),
            );
            if m >> 32 == 0 {
                return _mm256_srli_epi64::<32>(t);
            }
            let m_high = _mm256_set1_epi64x((m >> 32) as i64);
            let u = _mm256_add_epi64(
                _mm256_mul_epu32(h, m_high),
                _mm256_and_si256(t, _mm256_set1_epi64x(0xffff_ffff)),
            );
            _mm256_add_epi64(
                _mm256_add_epi64(_mm256_mul_epu32(h_high, m_high), _mm256_srli_epi64::<32>(t)),
                _mm256_srli_epi64::<32>(u),
            )
        }
    }
}

/// AVX-512 F and DQ: eight 64-bit lanes.
#[cfg(target_arch = "x86_64")]
pub mod avx512 {
    use std::arch::x86_64::*;

    /// `(h · m) >> 64` in each lane, as [`super::avx2::mul_high`].
    #[inline(always)]
    pub unsafe fn mul_high(h: __m512i, m: u64) -> __m512i {
        // SAFETY: AVX-512 F.
        unsafe {
            let m_low = _mm512_set1_epi64((m & 0xffff_ffff) as i64);
            let h_high = _mm512_srli_epi64::<32>(h);
            let t = _mm512_add_epi64(
                _mm512_mul_epu32(h_high, m_low),
                _mm512_srli_epi64::<32>(_mm512_mul_epu32(h, m_low)),
            );
            if m >> 32 == 0 {
                return _mm512_srli_epi64::<32>(t);
            }
            let m_high = _mm512_set1_epi64((m >> 32) as i64);
            let u = _mm512_add_epi64(
                _mm512_mul_epu32(h, m_high),
                _mm512_and_si512(t, _mm512_set1_epi64(0xffff_ffff)),
            );
            _mm512_add_epi64(
                _mm512_add_epi64(_mm512_mul_epu32(h_high, m_high), _mm512_srli_epi64::<32>(t)),
                _mm512_srli_epi64::<32>(u),
            )
        }
    }
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use crate::hash::Simd;
    use std::arch::x86_64::*;

    /// Both vector multiply-highs and the AVX2 product equal the u128 arithmetic, for m
    /// below and above 2^32 and h at the extremes.
    #[test]
    fn lanes_equal_the_scalar_products() {
        let mut state = 0x1234_5678_9abc_def1u64;
        let mut next = || {
            state = crate::hash::splitmix64(state);
            state
        };
        let ms = [
            1,
            2,
            40_000,
            (1 << 32) - 1,
            1 << 32,
            (1 << 36) - 3,
            1 << 36,
            u64::MAX,
        ];
        for m in ms {
            for round in 0..64 {
                let h: [u64; 8] = std::array::from_fn(|i| match (round, i) {
                    (0, 0) => u64::MAX,
                    (0, 1) => 0,
                    _ => next(),
                });
                let y = next();
                let expected: Vec<u64> = h
                    .iter()
                    .map(|&h| ((h as u128 * m as u128) >> 64) as u64)
                    .collect();
                let product: Vec<u64> = h.iter().map(|&h| h.wrapping_mul(y)).collect();
                if Simd::Avx2.runs_here() {
                    let (high_bits, products) = unsafe { avx2_lanes(&h, y, m) };
                    assert_eq!(high_bits.to_vec(), expected, "avx2 m={m}");
                    assert_eq!(products.to_vec(), product, "avx2 product");
                }
                if Simd::Avx512.runs_here() {
                    let got = unsafe { avx512_lanes(&h, m) };
                    assert_eq!(got.to_vec(), expected, "avx512 m={m}");
                }
            }
        }
    }

    #[target_feature(enable = "avx2")]
    fn avx2_lanes(h: &[u64; 8], y: u64, m: u64) -> ([u64; 8], [u64; 8]) {
        let (mut out, mut products) = ([0u64; 8], [0u64; 8]);
        for q in 0..2 {
            // SAFETY: AVX2 (this function's feature); four u64 from and to each array.
            unsafe {
                let hv = _mm256_loadu_si256(h[4 * q..].as_ptr().cast());
                let r = super::avx2::mul_high(hv, m);
                _mm256_storeu_si256(out[4 * q..].as_mut_ptr().cast(), r);
                let yv = _mm256_set1_epi64x(y as i64);
                let p = super::avx2::mul64(hv, yv, _mm256_srli_epi64::<32>(yv));
                _mm256_storeu_si256(products[4 * q..].as_mut_ptr().cast(), p);
            }
        }
        (out, products)
    }

    #[target_feature(enable = "avx2,avx512f,avx512dq,avx512bw,avx512vl")]
    fn avx512_lanes(h: &[u64; 8], m: u64) -> [u64; 8] {
        let mut out = [0u64; 8];
        // SAFETY: AVX-512 (this function's features); eight u64 from and to each array.
        unsafe {
            let hv = _mm512_loadu_si512(h.as_ptr().cast());
            let r = super::avx512::mul_high(hv, m);
            _mm512_storeu_si512(out.as_mut_ptr().cast(), r);
        }
        out
    }
}
