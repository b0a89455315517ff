//! The xor filter (Graf and Lemire 2020, "Xor Filters: Faster and Smaller Than Bloom and
//! Cuckoo Filters", JEA 25; the `xorf` crate): static, built once from all its keys, k-bit
//! fingerprints (8, 16 or 32) in `floor(1.23 n) + 32` slots, three blocks of a third each.

use super::binary_fuse::{Table, Xorf, descriptor, fingerprint_bits};
use super::interface::Structure;
use crate::error::Result;

pub static STRUCTURE: Structure = descriptor::<Xor>(
    "xor",
    "an xor filter (xorf): static, built from all its keys, k-bit fingerprints (8, 16 or 32) in 1.23 n + 32 slots",
);

/// Slots per key of an xor filter, Graf and Lemire's `capacity = 1.23 n + 32` (section 3).
pub const XOR_SLOTS_PER_KEY: f64 = 1.23;

/// The xor filters.
pub struct Xor;

impl Xorf for Xor {
    /// xorf's `Xor8`, `Xor16` or `Xor32`.
    fn construct(keys: &[u64], f: u32) -> Table {
        match f {
            8 => Box::new(xorf::Xor8::from(keys)),
            16 => Box::new(xorf::Xor16::from(keys)),
            _ => Box::new(xorf::Xor32::from(keys)),
        }
    }
    /// The fewest of 8, 16, 32 fingerprint bits with `2^-f <= ε`, in `1.23 n + 32` slots
    /// (nominal: the built table is what a measurement reports).
    fn design(n: u64, fpr: f64) -> Result<(u64, u32)> {
        let f = fingerprint_bits(fpr);
        let slots = (n as f64 * XOR_SLOTS_PER_KEY).floor() as u64 + 32;
        Ok((slots * u64::from(f), f))
    }
}
