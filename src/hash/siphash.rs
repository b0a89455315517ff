//! SipHash-1-3, the hash of Rust's `std` `DefaultHasher` and of the `bloomfilter` crate.

use std::hash::Hasher;

use siphasher::sip::SipHasher13;

use super::{ByteHash, Probes, Reduce};

/// SipHash-1-3 keyed by `(seed, !seed)`.
pub struct Siphash;

impl ByteHash for Siphash {
    const NAME: &str = "siphash";
    /// As its users meet it (SipHash: `bloomfilter`, double hashing mod m).
    const MATH: (Probes, Reduce) = (Probes::Double, Reduce::Modulo);
    #[inline]
    fn hash(seed: u64, bytes: &[u8]) -> u64 {
        let mut hasher = SipHasher13::new_with_keys(seed, !seed);
        hasher.write(bytes);
        hasher.finish()
    }
}
