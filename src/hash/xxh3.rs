//! XXH3 (64-bit), from the `xxhash-rust` crate.

use super::{ByteHash, Probes, Reduce};

/// `xxh3_64_with_seed(bytes, seed)`.
pub struct Xxh3;

impl ByteHash for Xxh3 {
    const NAME: &str = "xxh3";
    /// As its users meet it (fastbloom: double hashing with multiply-high).
    const MATH: (Probes, Reduce) = (Probes::Double, Reduce::MultiplyHigh);
    #[inline]
    fn hash(seed: u64, bytes: &[u8]) -> u64 {
        xxhash_rust::xxh3::xxh3_64_with_seed(bytes, seed)
    }
}
