//! Index arithmetic: how the 64-bit hash values of a key become k bit positions, as the
//! libraries people ship compute them (probe scheme, reduction, index width).

use serde::{Deserialize, Serialize};

/// How the k probe values `g_0 .. g_{k-1}` of a key are drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Probes {
    /// `g_i = h_i(x)`: k independently seeded hashes.
    Independent,
    /// Kirsch–Mitzenmacher: `g_i = a + i·b` (wrapping) from one hash pair `(a, b)`.
    Double,
    /// Dillinger–Manolios enhanced double hashing: `g_i = a + i·b + (i³ - i)/6` (wrapping).
    EnhancedDouble,
}

impl Probes {
    pub const ALL: [Probes; 3] = [Probes::Independent, Probes::Double, Probes::EnhancedDouble];

    pub fn name(self) -> &'static str {
        match self {
            Probes::Independent => "independent",
            Probes::Double => "double",
            Probes::EnhancedDouble => "enhanced-double",
        }
    }

    /// `g_i` from the pair `(a, b)` (`b` forced odd by the caller).
    #[inline(always)]
    pub fn from_pair(self, i: u64, a: u64, b: u64) -> u64 {
        let linear = a.wrapping_add(i.wrapping_mul(b));
        match self {
            Probes::EnhancedDouble => {
                linear.wrapping_add(i.wrapping_mul(i).wrapping_mul(i).wrapping_sub(i) / 6)
            }
            _ => linear,
        }
    }
}

named_enum!(Probes, "probe scheme");

/// How a W-bit probe value g becomes an index in `[0, m')`, `m' = min(m, 2^W)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Reduce {
    /// Lemire's multiply-high: `(g · m') >> W`, uniform for any m'.
    MultiplyHigh,
    /// `g mod m'`.
    Modulo,
    /// `g & (m' - 1)`: the low bits of g; only for a power-of-two m.
    Mask,
}

impl Reduce {
    pub const ALL: [Reduce; 3] = [Reduce::MultiplyHigh, Reduce::Modulo, Reduce::Mask];

    pub fn name(self) -> &'static str {
        match self {
            Reduce::MultiplyHigh => "multiply-high",
            Reduce::Modulo => "modulo",
            Reduce::Mask => "mask",
        }
    }
}

named_enum!(Reduce, "reduction");

/// Narrowest and widest index arithmetic accepted by `--index-bits`.
pub const INDEX_BITS: std::ops::RangeInclusive<u32> = 8..=64;

/// The index arithmetic of a family: probe scheme, reduction and width W.
///
/// Invariant: `index_bits` lies in [`INDEX_BITS`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IndexMath {
    pub probes: Probes,
    pub reduce: Reduce,
    /// W: probe values are taken mod 2^W and indexes are W-bit integers, so at most
    /// `2^W` bits of the array are ever addressed.
    pub index_bits: u32,
}

/// `min(m, 2^W)`: how many of m bits a W-bit index can reach.
pub fn addressable_bits(m: u64, index_bits: u32) -> u64 {
    if index_bits >= 64 {
        m
    } else {
        m.min(1u64 << index_bits)
    }
}

/// Reduction of probe values for one array, with everything that depends only on
/// `(m, W, reduce)` computed once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reducer {
    reduce: Reduce,
    width_mask: u64,
    shift: u32,
    addressable: u64,
}

impl Reducer {
    pub fn new(reduce: Reduce, m: u64, index_bits: u32) -> Self {
        let index_bits = index_bits.clamp(*INDEX_BITS.start(), *INDEX_BITS.end());
        Reducer {
            reduce,
            width_mask: u64::MAX >> (64 - index_bits),
            shift: index_bits,
            addressable: addressable_bits(m, index_bits).max(1),
        }
    }

    /// The number of bit positions reachable, `min(m, 2^W)`.
    pub fn addressable(&self) -> u64 {
        self.addressable
    }

    /// The index of probe value g: `reduce(g mod 2^W)` over `[0, min(m, 2^W))`.
    #[inline(always)]
    pub fn index(&self, g: u64) -> u64 {
        let g = g & self.width_mask;
        match self.reduce {
            Reduce::MultiplyHigh => ((g as u128 * self.addressable as u128) >> self.shift) as u64,
            Reduce::Modulo => g % self.addressable,
            Reduce::Mask => g & (self.addressable - 1),
        }
    }
}
