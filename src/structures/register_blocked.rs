//! A register-blocked Bloom filter (Lang, Neumann, Kemper and Boncz, PVLDB 12(5) 2019, section
//! 3.1): all k bits of a key in one 64-bit word chosen by a hash, so a query loads one word
//! and tests it with one AND. The sectorized layout with one sector per block
//! ([`super::sectorized`]); its rate is the blocked-Bloom Poisson mixture over 64-bit blocks.

use super::interface::Structure;
use super::sectorized::{SECTOR_BITS, descriptor};

/// Bits in a register-blocked filter's block: one 64-bit word.
pub const REGISTER_BLOCK_BITS: u64 = SECTOR_BITS;

pub static STRUCTURE: Structure = descriptor::<REGISTER_BLOCK_BITS, 1>(
    "reg-blocked",
    "all k bits of a key in one 64-bit word chosen by a hash (Lang et al. 2019)",
);
