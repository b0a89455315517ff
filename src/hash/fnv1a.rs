//! FNV-1a (64-bit), from the `fnv` crate: one multiply and xor per byte, no final mix, so
//! keys that differ only in their last bytes give hashes that differ only in their low bits.

use std::hash::Hasher;

use fnv::FnvHasher;

use super::{ByteHash, Probes, Reduce};

/// FNV-1a with the offset basis replaced by `seed` (`FnvHasher::with_key`).
pub struct Fnv1a;

impl ByteHash for Fnv1a {
    const NAME: &str = "fnv1a";
    /// As its users meet it (double hashing mod m).
    const MATH: (Probes, Reduce) = (Probes::Double, Reduce::Modulo);
    #[inline]
    fn hash(seed: u64, bytes: &[u8]) -> u64 {
        let mut hasher = FnvHasher::with_key(seed);
        hasher.write(bytes);
        hasher.finish()
    }
}
