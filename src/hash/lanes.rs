//! The probe values of a family in lane form, for vector code, and which vector code the CPU
//! runs ([`Simd`], detected at run time).

use super::{HashFamily, IndexPath, SLOTS};

/// Which code computes a key's probes: the scalar loop every CPU runs, or one of the x86-64
/// vector paths, each used only where the CPU reports its features at run time
/// (`is_x86_feature_detected!`). Every path gives the same indexes, bit for bit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Simd {
    Scalar,
    /// AVX2: 4 × 64-bit lanes, a product from three 32-bit multiplies; or 8 × 32-bit lanes
    /// of the high halves, from 32-bit limbs ([`Limbs`]).
    Avx2,
    /// AVX-512 F, DQ, BW and VL: 8 × 64-bit lanes, `vpmullq`.
    Avx512,
}

impl Simd {
    pub const ALL: [Simd; 3] = [Simd::Scalar, Simd::Avx2, Simd::Avx512];

    pub fn name(self) -> &'static str {
        match self {
            Simd::Scalar => "scalar",
            Simd::Avx2 => "avx2",
            Simd::Avx512 => "avx512",
        }
    }

    /// Whether this CPU has the path's features.
    pub fn runs_here(self) -> bool {
        match self {
            Simd::Scalar => true,
            #[cfg(target_arch = "x86_64")]
            Simd::Avx2 => is_x86_feature_detected!("avx2"),
            #[cfg(target_arch = "x86_64")]
            Simd::Avx512 => {
                is_x86_feature_detected!("avx2")
                    && is_x86_feature_detected!("avx512f")
                    && is_x86_feature_detected!("avx512dq")
                    && is_x86_feature_detected!("avx512bw")
                    && is_x86_feature_detected!("avx512vl")
            }
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }

    /// Every path this CPU runs, scalar first.
    pub fn available() -> Vec<Simd> {
        Simd::ALL.into_iter().filter(|s| s.runs_here()).collect()
    }

    /// The widest path this CPU runs.
    pub fn best() -> Simd {
        Simd::available().last().copied().unwrap_or(Simd::Scalar)
    }
}

named_enum!(Simd, "vector path");

/// The probe values of the power-of-two paths ([`IndexPath::MultiplyShiftPow2`],
/// [`IndexPath::DoubleHashingPow2`]) as lanes, `g_i = mul_i·y + add_i + c` (wrapping) with
/// `(y, c)` drawn once per key ([`Lanes::key`]), and the index `g_i >> shift`, exactly
/// [`HashFamily::index`]:
/// - multiply-shift: `mul_i = a_i`, `add_i = b_i`, `y = x`, `c = 0`;
/// - double hashing: `mul_i = i`, `add_i = 0`, `y = h_1 = (a_1·x + b_1) | 1`, `c = h_0 = a_0·x + b_0`.
///
/// Lanes from k to [`SLOTS`] hold values no probe reads; vector code masks them.
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub struct Lanes {
    pub mul: [u64; SLOTS],
    pub add: [u64; SLOTS],
    pub shift: u32,
    /// Double hashing's `[[a_0, b_0], [a_1, b_1]]`; zeros for multiply-shift.
    pair: [[u64; 2]; 2],
    /// Whether `pair` is double hashing's ([`Lanes::pairs`]).
    pairs: bool,
}

impl Lanes {
    /// `(y, c)` of key x.
    #[inline(always)]
    pub fn key(&self, x: u64) -> (u64, u64) {
        match self.pairs {
            false => (x, 0),
            true => from_pair(self.pair, x),
        }
    }

    /// Whether the lanes are double hashing's, their `(y, c)` drawn from a pair.
    pub fn pairs(&self) -> bool {
        self.pairs
    }

    /// [`Lanes::key`] for lanes known to be double hashing's (`PAIR`, [`Lanes::pairs`]) or
    /// multiply-shift's, without its branch: a one-key kernel chosen once by `pairs`.
    #[inline(always)]
    pub fn key_of<const PAIR: bool>(&self, x: u64) -> (u64, u64) {
        debug_assert_eq!(PAIR, self.pairs(), "lanes of the other hashing");
        match PAIR {
            false => (x, 0),
            true => from_pair(self.pair, x),
        }
    }

    /// Double hashing's `[[a_0, b_0], [a_1, b_1]]` ([`Lanes::key`]); zeros for multiply-shift.
    pub fn pair(&self) -> [[u64; 2]; 2] {
        self.pair
    }

    /// Index i of the key whose [`Lanes::key`] is `(y, c)`.
    #[inline(always)]
    pub fn index(&self, i: usize, (y, c): (u64, u64)) -> u64 {
        let i = i % SLOTS;
        self.mul[i]
            .wrapping_mul(y)
            .wrapping_add(self.add[i])
            .wrapping_add(c)
            >> self.shift
    }
}

/// Double hashing's `(y, c) = ((a_1·x + b_1) | 1, a_0·x + b_0)` of key x ([`Lanes`]).
#[inline(always)]
fn from_pair([[a0, b0], [a1, b1]]: [[u64; 2]; 2], x: u64) -> (u64, u64) {
    (
        a1.wrapping_mul(x).wrapping_add(b1) | 1,
        a0.wrapping_mul(x).wrapping_add(b0),
    )
}

/// Lanes per chunk of [`Limbs`]: eight 32-bit words, one AVX2 register.
pub const LIMB_LANES: usize = 8;

/// [`Lanes`] in 32-bit limbs, for vector code without 64-bit products (AVX2): the high 32
/// bits of `g_i = mul_i·y + add_i + c` from one 32×32→64 product and two 32-bit ones, in
/// eight lanes of a register, exactly the high half of [`Lanes::index`]'s g. With
/// `mul_i = mh·2^32 + ml` and `y = yh·2^32 + yl`, `mul_i·y ≡ ml·yl + 2^32·(mh·yl + ml·yh)`
/// (mod 2^64), so
///
/// `g_i >> 32 = (L >> 32) + mh·yl + ml·yh  (mod 2^32)`, `L = ml·yl + add_i + c  (mod 2^64)`:
///
/// adding `2^32·X` to L leaves its low half and adds X to its high half, mod 2^32.
/// Chunk c holds lanes `8c..8c + 8`; the 64-bit sums go two registers a chunk, the even
/// lanes in one and the odd in the other, so that their high halves interleave back into
/// lane order with one blend. The cross products take y as broadcast (32-bit lanes
/// alternating yl, yh) and with its halves swapped: lane i's `by_y` multiplies the half
/// of y in its own position, `by_swapped` the other.
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub struct Limbs {
    /// `ml` of lanes `8c + 2j` (`even[c][j]`) and `8c + 2j + 1` (`odd[c][j]`), zero-extended.
    pub even_mul: [[u64; 4]; SLOTS / LIMB_LANES],
    pub odd_mul: [[u64; 4]; SLOTS / LIMB_LANES],
    /// `add_i`, whole, as the multipliers.
    pub even_add: [[u64; 4]; SLOTS / LIMB_LANES],
    pub odd_add: [[u64; 4]; SLOTS / LIMB_LANES],
    /// Lane i of chunk c: `mh` for even i, `ml` for odd (against yl, yh in turn).
    pub by_y: [[u32; LIMB_LANES]; SLOTS / LIMB_LANES],
    /// Lane i of chunk c: `ml` for even i, `mh` for odd (against yh, yl in turn).
    pub by_swapped: [[u32; LIMB_LANES]; SLOTS / LIMB_LANES],
}

impl Limbs {
    /// The limbs of `lanes`.
    pub fn of(lanes: &Lanes) -> Limbs {
        Limbs::of_parts(&lanes.mul, &lanes.add)
    }

    /// The limbs of the lanes `g_i = mul_i·y + add_i + c` (slots past those given are zero).
    pub fn of_parts(mul: &[u64], add: &[u64]) -> Limbs {
        let padded = |of: &[u64]| -> [u64; SLOTS] {
            std::array::from_fn(|i| of.get(i).copied().unwrap_or(0))
        };
        let (mul, add) = (padded(mul), padded(add));
        let chunks = |of: &dyn Fn(usize) -> u64| -> [[u64; 4]; SLOTS / LIMB_LANES] {
            std::array::from_fn(|c| std::array::from_fn(|j| of(LIMB_LANES * c + 2 * j)))
        };
        let words = |of: &dyn Fn(usize) -> u32| -> [[u32; LIMB_LANES]; SLOTS / LIMB_LANES] {
            std::array::from_fn(|c| std::array::from_fn(|j| of(LIMB_LANES * c + j)))
        };
        let (low, high) = (|i: usize| mul[i] as u32, |i: usize| (mul[i] >> 32) as u32);
        Limbs {
            even_mul: chunks(&|i| low(i).into()),
            odd_mul: chunks(&|i| low(i + 1).into()),
            even_add: chunks(&|i| add[i]),
            odd_add: chunks(&|i| add[i + 1]),
            by_y: words(&|i| if i % 2 == 0 { high(i) } else { low(i) }),
            by_swapped: words(&|i| if i % 2 == 0 { low(i) } else { high(i) }),
        }
    }

    /// `g_i >> 32` of the key whose [`Lanes::key`] is `(y, c)`, by the limbs' formula: the
    /// scalar twin of the vector code.
    pub fn high(&self, i: usize, (y, c): (u64, u64)) -> u32 {
        let (chunk, lane) = ((i % SLOTS) / LIMB_LANES, i % LIMB_LANES);
        let (ml, add) = match lane % 2 {
            0 => (self.even_mul, self.even_add),
            _ => (self.odd_mul, self.odd_add),
        };
        let big = (ml[chunk][lane / 2] * (y & 0xffff_ffff))
            .wrapping_add(add[chunk][lane / 2])
            .wrapping_add(c);
        let (own, other) = match lane % 2 {
            0 => (y as u32, (y >> 32) as u32),
            _ => ((y >> 32) as u32, y as u32),
        };
        ((big >> 32) as u32)
            .wrapping_add(self.by_y[chunk][lane].wrapping_mul(own))
            .wrapping_add(self.by_swapped[chunk][lane].wrapping_mul(other))
    }
}

/// The multiply-shift functions `((a_i·x + b_i) · m) >> 64` as lanes, for vector code: the
/// k multipliers and offsets each in an array of their own (slots from k on zero), and m.
/// On a power-of-two m the product's high bits are the shift [`HashFamily::index`] takes.
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub struct AffineLanes {
    pub a: [u64; SLOTS],
    pub b: [u64; SLOTS],
    pub m: u64,
}

impl HashFamily {
    /// The family's functions in [`AffineLanes`] form, on the multiply-shift paths
    /// ([`IndexPath::MultiplyShift`], [`IndexPath::MultiplyShiftPow2`]); none on the others.
    pub fn affine_lanes(&self) -> Option<AffineLanes> {
        matches!(
            self.path,
            IndexPath::MultiplyShift | IndexPath::MultiplyShiftPow2
        )
        .then(|| AffineLanes {
            a: self.params.map(|[a, _]| a),
            b: self.params.map(|[_, b]| b),
            m: self.m,
        })
    }

    /// `[a_0, b_0]` when index 0 is `((a_0·x + b_0) · m) >> 64` (bloomlab's multiply-shift
    /// and double-hashing paths, a power-of-two m included: there the shift is the same
    /// product's high bits); none on the others.
    pub fn first_affine(&self) -> Option<[u64; 2]> {
        match self.path {
            IndexPath::MultiplyShift
            | IndexPath::MultiplyShiftPow2
            | IndexPath::DoubleHashing
            | IndexPath::DoubleHashingPow2 => Some(self.params[0]),
            _ => None,
        }
    }

    /// The family's index functions in lane form, on the two power-of-two paths (none on
    /// the others).
    pub fn lanes(&self) -> Option<Lanes> {
        let (mul, add, pair) = match self.path {
            IndexPath::MultiplyShiftPow2 => (
                self.params.map(|[a, _]| a),
                self.params.map(|[_, b]| b),
                None,
            ),
            IndexPath::DoubleHashingPow2 => (
                std::array::from_fn(|i| i as u64),
                [0; SLOTS],
                Some([self.params[0], self.params[1]]),
            ),
            _ => return None,
        };
        Some(Lanes {
            mul,
            add,
            shift: self.shift,
            pair: pair.unwrap_or_default(),
            pairs: pair.is_some(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::{HashFamily, HashScheme};

    /// The limbs give the high half of every lane's g, for both hashings, keys at the
    /// extremes among them (the carry of L into the high half included).
    #[test]
    fn limbs_give_the_high_half_of_the_lanes() {
        let keys = (0..3000u64)
            .map(|x| x.wrapping_mul(0x9e37_79b9_7f4a_7c15))
            .chain([0, 1, u64::MAX, u64::MAX - 1, 1 << 63, 0xffff_ffff]);
        for hash in [HashScheme::MultiplyShift, HashScheme::DoubleHashing] {
            for seed in [3, 11] {
                let lanes = HashFamily::new(hash, 64, 512, seed).lanes().unwrap();
                let limbs = Limbs::of(&lanes);
                for x in keys.clone() {
                    let (y, c) = lanes.key(x);
                    for i in 0..SLOTS {
                        let g = lanes.mul[i].wrapping_mul(y).wrapping_add(lanes.add[i]);
                        let g = g.wrapping_add(c);
                        assert_eq!(
                            limbs.high(i, (y, c)),
                            (g >> 32) as u32,
                            "{hash} i={i} x={x}"
                        );
                    }
                }
            }
        }
    }
}
