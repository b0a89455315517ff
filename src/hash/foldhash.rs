//! foldhash (fast variant), the default hasher of `hashbrown`.

use std::hash::{BuildHasher, Hasher};

use foldhash::fast::FixedState;

use super::ByteHash;

/// `FixedState::with_seed(seed)` over the bytes.
pub struct Foldhash;

impl ByteHash for Foldhash {
    #[inline]
    fn hash(seed: u64, bytes: &[u8]) -> u64 {
        let mut hasher = FixedState::with_seed(seed).build_hasher();
        hasher.write(bytes);
        hasher.finish()
    }
}
