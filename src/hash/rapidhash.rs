//! rapidhash (V3), from the `rapidhash` crate: wyhash's successor, as the C++ reference
//! (Nicoshev/rapidhash) computes it with a 64-bit seed and its default secrets.

use rapidhash::v3::{RapidSecrets, rapidhash_v3_seeded};

use super::{ByteHash, Probes, Reduce};

/// `rapidhash_v3_seeded(bytes, RapidSecrets::seed_cpp(seed))`.
pub struct Rapidhash;

impl ByteHash for Rapidhash {
    const NAME: &str = "rapidhash";
    /// Double hashing with multiply-high from one 64-bit hash, as fastbloom derives its
    /// probes from its hasher's.
    const MATH: (Probes, Reduce) = (Probes::Double, Reduce::MultiplyHigh);
    #[inline]
    fn hash(seed: u64, bytes: &[u8]) -> u64 {
        rapidhash_v3_seeded(bytes, &RapidSecrets::seed_cpp(seed))
    }
}
