//! Double hashing's inserts into a 512-bit block, stepping through its probes in a general
//! register instead of multiplying them out in vector lanes.

use super::BLOCKED_SHIFT;
use crate::hash::{Lanes, Simd};

/// Whether the vector path `simd` inserts stepping ([`set512_stepped`]): where the lanes are
/// double hashing's ([`doubles`]). Not the scalar path, which keeps the lanes'
/// products as the twin the others are checked against.
pub(super) fn steps(simd: Simd, lanes: &Lanes) -> bool {
    simd != Simd::Scalar && doubles(lanes)
}

/// Whether the lanes are double hashing's: `mul_i = i`, `add_i = 0`.
pub(super) fn doubles(lanes: &Lanes) -> bool {
    lanes.mul.iter().zip(0..).all(|(&mul, i)| mul == i) && lanes.add.iter().all(|&add| add == 0)
}

/// Sets bits `g_i >> 55` of a 512-bit block for `g_i = c + i·y`, i below k: the lanes'
/// `mul_i·y + add_i + c` where `mul_i = i` and `add_i = 0` (double hashing's, [`steps`]), so
/// the same bits, in general registers. For one key (`ONE_KEY`) each `i·y` is a product by
/// a constant, all at once, so the stores' addresses are known soonest; in a loop over keys,
/// g steps by y, fewer instructions (each the faster where it is used: docs/PERFORMANCE.md).
#[inline(always)]
pub(super) fn set512_stepped<const ONE_KEY: bool>(
    lanes: &Lanes,
    k: usize,
    key: u64,
    block: &mut [u64],
) {
    let (y, c) = lanes.key(key);
    let block = &mut block[..8];
    let mut set = |g: u64| {
        let bit = g >> BLOCKED_SHIFT;
        block[(bit >> 6) as usize & 7] |= 1 << (bit & 63);
    };
    let mut g = c;
    for i in 0..8 {
        if i < k {
            set(match ONE_KEY {
                true => c.wrapping_add((i as u64).wrapping_mul(y)),
                false => g,
            });
        }
        g = g.wrapping_add(y);
    }
    for _ in 8..k {
        set(g);
        g = g.wrapping_add(y);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::{HashFamily, HashScheme};

    /// Double hashing's lanes step on every vector path and not on the scalar one;
    /// multiply-shift's never do; and both ways of stepping set the bits of the family's own
    /// indexes, for k within, at and beyond eight.
    #[test]
    fn double_hashing_steps_to_the_family_indexes() {
        let lanes = |hash, k| HashFamily::new(hash, k, 512, 3).lanes().unwrap();
        for simd in Simd::ALL {
            let double = lanes(HashScheme::DoubleHashing, 7);
            assert_eq!(steps(simd, &double), simd != Simd::Scalar);
            assert!(!steps(simd, &lanes(HashScheme::MultiplyShift, 7)));
        }
        for k in [1, 7, 8, 9, 64] {
            let family = HashFamily::new(HashScheme::DoubleHashing, k, 512, 3);
            let lanes = family.lanes().unwrap();
            for key in (1..500u64).map(|x| x.wrapping_mul(0x9e37_79b9_7f4a_7c15)) {
                let mut expected = [0u64; 8];
                for i in 0..k as usize {
                    let bit = family.index(i, key);
                    expected[(bit >> 6) as usize] |= 1 << (bit & 63);
                }
                let (mut one, mut many) = ([0u64; 8], [0u64; 8]);
                set512_stepped::<true>(&lanes, k as usize, key, &mut one);
                set512_stepped::<false>(&lanes, k as usize, key, &mut many);
                assert_eq!(one, expected, "k={k}");
                assert_eq!(many, expected, "k={k}");
            }
        }
    }
}
