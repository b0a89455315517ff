//! Double hashing's first eight in-block lanes as one product of half the key, for the
//! batched queries of the AVX-512 path ([`super::avx512::test_cached_halves`]).

use super::stepped::doubles;
use crate::hash::{Lanes, Limbs};

/// Lanes `g_i = c + i·y` (wrapping, i below k ≤ 8) of a key `x = 2m + p` as
/// `g_i(x) = m·step_i + start[p]_i`. Double hashing's key is `y = (a_1·x + b_1) | 1`,
/// `c = a_0·x + b_0` ([`Lanes::key`]); the low bit of `a_1·x + b_1` is that of
/// `a_1·p + b_1`, so `y(x) = 2m·a_1 + y(p)`, `c(x) = 2m·a_0 + c(p)`, and
/// `g_i(x) = m·2(a_0 + i·a_1) + g_i(p)`, where `2(a_0 + i·a_1) = g_i(2) − g_i(0)`, even: with
/// `half_i` its half, `g_i(x) = x·half_i + (g_i(p) − p·half_i)`, the same bits from one
/// broadcast of the key and one multiply, with neither y nor c computed.
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub(super) struct Halves {
    pub(super) half: [u64; 8],
    pub(super) offset: [[u64; 8]; 2],
}

impl Halves {
    /// The halves of double hashing's lanes for k ≤ 8; none for other lanes or k.
    pub(super) fn new(lanes: &Lanes, k: usize) -> Option<Halves> {
        let g = |x: u64| -> [u64; 8] {
            let (y, c) = lanes.key(x);
            std::array::from_fn(|i| c.wrapping_add((i as u64).wrapping_mul(y)))
        };
        let (even, odd, two) = (g(0), g(1), g(2));
        (doubles(lanes) && k <= 8).then(|| Halves {
            half: std::array::from_fn(|i| two[i].wrapping_sub(even[i]) >> 1),
            offset: [
                even,
                std::array::from_fn(|i| odd[i].wrapping_sub(two[i].wrapping_sub(even[i]) >> 1)),
            ],
        })
    }

    /// The halves in 32-bit limbs for the AVX2 path, one set per parity of the key: lane i
    /// of key x is the limbs' `g_i` of `(y, c) = (x, 0)` in `[x & 1]`.
    pub(super) fn limbs(&self) -> Box<[Limbs; 2]> {
        Box::new(
            self.offset
                .map(|offset| Limbs::of_parts(&self.half, &offset)),
        )
    }

    /// Lane i of key x, unshifted: [`Lanes::index`] before its shift.
    #[cfg(test)]
    fn lane(&self, i: usize, x: u64) -> u64 {
        x.wrapping_mul(self.half[i])
            .wrapping_add(self.offset[(x & 1) as usize][i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::{HashFamily, HashScheme};

    /// The halves, and their limbs, give the family's own indexes for even and odd keys,
    /// small and large, for every k they serve; multiply-shift's lanes and k > 8 have none.
    #[test]
    fn halves_give_the_family_indexes() {
        let lanes = |hash, k| HashFamily::new(hash, k, 512, 5).lanes().unwrap();
        assert!(Halves::new(&lanes(HashScheme::MultiplyShift, 7), 7).is_none());
        assert!(Halves::new(&lanes(HashScheme::DoubleHashing, 9), 9).is_none());
        let keys = (0..2000u64)
            .map(|x| x.wrapping_mul(0x9e37_79b9_7f4a_7c15))
            .chain([0, 1, 2, 3, u64::MAX, u64::MAX - 1, 1 << 63]);
        for k in 1..=8 {
            let family = HashFamily::new(HashScheme::DoubleHashing, k, 512, 5);
            let lanes = family.lanes().unwrap();
            let halves = Halves::new(&lanes, k as usize).unwrap();
            let limbs = halves.limbs();
            for key in keys.clone() {
                for i in 0..k as usize {
                    let bit = halves.lane(i, key) >> lanes.shift;
                    assert_eq!(bit, family.index(i, key), "k={k} i={i} key={key}");
                    let high = limbs[(key & 1) as usize].high(i, (key, 0));
                    assert_eq!(
                        u64::from(high >> (lanes.shift - 32)),
                        bit,
                        "limbs k={k} i={i}"
                    );
                }
            }
        }
    }
}
