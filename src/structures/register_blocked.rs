//! A register-blocked Bloom filter (Lang, Neumann, Kemper and Boncz, PVLDB 12(5) 2019, section
//! 3.1): all k bits of a key in one 64-bit word chosen by a hash, so a query loads one word
//! and tests it with one AND. The sectorized layout with one sector per block
//! ([`super::sectorized`]); its rate is the blocked-Bloom Poisson mixture over 64-bit blocks.
//!
//! By design it does not reach low rates in a Bloom filter's space: the i ~ Po(64n/m) keys
//! sharing a word set X_i ≤ ik of its 64 bits, and the rate is `Σ_i Po(i) · E[(X_i/64)^k]`.
//! A word of i keys answers yes with `E[(X_i/64)^k] ≈ (1 - e^{-ik/64})^k`, least near
//! k = 64·ln 2/i and no lower than about 6·10^-5 for three keys whatever k (5.8·10^-5 at
//! k = 13, from the exact occupancy law [`super::sectorized`] uses), so only thinning the
//! crowded words lowers it. At n = 10^6 and 10^-6 that
//! needs more than three times the classic filter's bits, and `compare` says so with the rate
//! it does reach ([`super::sectorized::CAPPED`]).

use super::interface::Structure;
use super::sectorized::{SECTOR_BITS, descriptor};

/// Bits in a register-blocked filter's block: one 64-bit word.
pub const REGISTER_BLOCK_BITS: u64 = SECTOR_BITS;

pub static STRUCTURE: Structure = descriptor::<REGISTER_BLOCK_BITS, 1>(
    "reg-blocked",
    "all k bits of a key in one 64-bit word chosen by a hash (Lang et al. 2019)",
);
