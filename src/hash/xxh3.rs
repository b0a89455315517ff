//! XXH3 (64-bit), from the `xxhash-rust` crate.

use super::ByteHash;

/// `xxh3_64_with_seed(bytes, seed)`.
pub struct Xxh3;

impl ByteHash for Xxh3 {
    #[inline]
    fn hash(seed: u64, bytes: &[u8]) -> u64 {
        xxhash_rust::xxh3::xxh3_64_with_seed(bytes, seed)
    }
}
