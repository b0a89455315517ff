//! foldhash (fast variant), the default hasher of `hashbrown`.

use std::hash::{BuildHasher, Hasher};

use foldhash::fast::FixedState;

use super::{ByteHash, Probes, Reduce};

/// `FixedState::with_seed(seed)` over the bytes.
pub struct Foldhash;

impl ByteHash for Foldhash {
    const NAME: &str = "foldhash";
    /// As its users meet it (fastbloom: double hashing with multiply-high).
    const MATH: (Probes, Reduce) = (Probes::Double, Reduce::MultiplyHigh);
    #[inline]
    fn hash(seed: u64, bytes: &[u8]) -> u64 {
        let mut hasher = FixedState::with_seed(seed).build_hasher();
        hasher.write(bytes);
        hasher.finish()
    }
}
