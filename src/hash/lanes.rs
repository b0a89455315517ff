//! The probe values of a family in lane form, for vector code, and which vector code the CPU
//! runs ([`Simd`], detected at run time).

use super::{HashFamily, IndexPath, SLOTS};

/// Which code computes a key's probes: the scalar loop every CPU runs, or one of the x86-64
/// vector paths, each used only where the CPU reports its features at run time
/// (`is_x86_feature_detected!`). Every path gives the same indexes, bit for bit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Simd {
    Scalar,
    /// AVX2: 4 × 64-bit lanes; a 64-bit product from three 32-bit multiplies.
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
