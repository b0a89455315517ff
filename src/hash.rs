//! Hash families: k index functions from a u64 key to a bit position in `[0, m)`.

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use serde::{Deserialize, Serialize};

/// Which family of index functions a filter uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum HashScheme {
    /// `h_i = a_i·x + b_i` (wrapping, `a_i` odd), index `= (h_i · m) >> 64`: the high bits
    /// of the product, uniform for any m.
    MultiplyShift,
    /// `h_i = a_i·x + b_i`, index `= h_i mod m`. Deliberately flawed: with a power-of-two m
    /// the index depends only on the low bits of the key, so the k probes are correlated.
    LowBits,
    /// Kirsch–Mitzenmacher double hashing: `g_i = h_0 + i·h_1` (h_1 forced odd), index by
    /// the high bits of `g_i · m`. Two multiplications per key instead of k.
    DoubleHashing,
}

impl HashScheme {
    /// Every scheme, by its command-line name.
    pub const ALL: [HashScheme; 3] = [
        HashScheme::MultiplyShift,
        HashScheme::LowBits,
        HashScheme::DoubleHashing,
    ];

    /// The command-line and file name of the scheme.
    pub fn name(self) -> &'static str {
        match self {
            HashScheme::MultiplyShift => "multiply-shift",
            HashScheme::LowBits => "low-bits",
            HashScheme::DoubleHashing => "double-hashing",
        }
    }
}

named_enum!(HashScheme, "hash");

/// k seeded index functions over `[0, m)`.
///
/// Invariant: `index(i, x) < m` for every `i < k` and every `x`; the parameters are a pure
/// function of `(scheme, k, m, seed)`.
#[derive(Clone, Debug)]
pub struct HashFamily {
    scheme: HashScheme,
    m: u64,
    multipliers: Vec<u64>,
    offsets: Vec<u64>,
}

/// `(h · m) >> 64`: maps a uniform u64 to a uniform index in `[0, m)`.
#[inline]
fn high_bits(h: u64, m: u64) -> u64 {
    ((h as u128 * m as u128) >> 64) as u64
}

impl HashFamily {
    /// Draws k odd multipliers `a_i` and k offsets `b_i` from `Pcg64::seed_from_u64(seed)`.
    pub fn new(scheme: HashScheme, k: u32, m: u64, seed: u64) -> Self {
        let mut rng = Pcg64::seed_from_u64(seed);
        let mut multipliers = Vec::with_capacity(k as usize);
        let mut offsets = Vec::with_capacity(k as usize);
        for _ in 0..k.max(2) {
            multipliers.push(rng.next_u64() | 1);
            offsets.push(rng.next_u64());
        }
        HashFamily {
            scheme,
            m,
            multipliers,
            offsets,
        }
    }

    /// The scheme these functions implement.
    pub fn scheme(&self) -> HashScheme {
        self.scheme
    }

    /// Index of key `x` under hash function `i`.
    #[inline]
    pub fn index(&self, i: usize, x: u64) -> u64 {
        match self.scheme {
            HashScheme::MultiplyShift => self.multiply_shift(i, x),
            HashScheme::LowBits => self.low_bits(i, x),
            HashScheme::DoubleHashing => self.double_hashing(i, x),
        }
    }

    #[inline(always)]
    fn affine(&self, i: usize, x: u64) -> u64 {
        self.multipliers[i]
            .wrapping_mul(x)
            .wrapping_add(self.offsets[i])
    }

    /// `(a_i·x + b_i) · m >> 64`.
    #[inline(always)]
    pub fn multiply_shift(&self, i: usize, x: u64) -> u64 {
        high_bits(self.affine(i, x), self.m)
    }

    /// `(a_i·x + b_i) mod m`.
    #[inline(always)]
    pub fn low_bits(&self, i: usize, x: u64) -> u64 {
        self.affine(i, x) % self.m
    }

    /// `(h_0 + i·h_1) · m >> 64`, `h_1` forced odd.
    #[inline(always)]
    pub fn double_hashing(&self, i: usize, x: u64) -> u64 {
        let h0 = self.affine(0, x);
        let h1 = self.affine(1, x) | 1;
        high_bits(h0.wrapping_add((i as u64).wrapping_mul(h1)), self.m)
    }
}

/// Evaluates `$body` with `$index` bound to `$family`'s index function
/// (`fn(&HashFamily, usize, u64) -> u64`), chosen once: each arm is compiled for one scheme,
/// so a loop of probes inside `$body` has no per-probe dispatch.
macro_rules! with_index {
    ($family:expr, $index:ident => $body:expr) => {
        match $family.scheme() {
            $crate::hash::HashScheme::MultiplyShift => {
                let $index = $crate::hash::HashFamily::multiply_shift;
                $body
            }
            $crate::hash::HashScheme::LowBits => {
                let $index = $crate::hash::HashFamily::low_bits;
                $body
            }
            $crate::hash::HashScheme::DoubleHashing => {
                let $index = $crate::hash::HashFamily::double_hashing;
                $body
            }
        }
    };
}
pub(crate) use with_index;
