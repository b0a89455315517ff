//! MurmurHash3 x64-128, from the `fastmurmur3` crate: Guava's and bits-and-blooms' hash.

use super::{ByteHash, Probes, Reduce};

/// The low 64 bits of `murmur3_x64_128(bytes, seed)`; double hashing takes both halves, as
/// Guava's `MURMUR128_MITZ_64` does.
pub struct Murmur3;

impl ByteHash for Murmur3 {
    const NAME: &str = "murmur3";
    /// As its users meet it (Guava and bits-and-blooms: double hashing mod m).
    const MATH: (Probes, Reduce) = (Probes::Double, Reduce::Modulo);
    #[inline]
    fn hash(seed: u64, bytes: &[u8]) -> u64 {
        fastmurmur3::murmur3_x64_128(bytes, seed) as u64
    }

    #[inline]
    fn pair(seed: u64, bytes: &[u8]) -> (u64, u64) {
        let h = fastmurmur3::murmur3_x64_128(bytes, seed);
        (h as u64, (h >> 64) as u64)
    }
}
