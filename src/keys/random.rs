//! `random`: reproducible pseudo-random u64 keys, a keyed bijection of a counter (the default).

use std::sync::Arc;

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

use super::{IntKeys, Registration, Source};

pub static SOURCE: Registration = Registration {
    name: "random",
    argument: None,
    help: "pseudo-random u64 keys from --seed (the default)",
    build: |_, _| Ok(Arc::new(Random)),
};

/// [`KeySource`] of the run's seed.
#[derive(Debug)]
struct Random;

impl Source for Random {
    fn spec(&self) -> String {
        SOURCE.name.to_string()
    }

    fn ints(&self, seed: u64) -> Option<IntKeys> {
        let keys = KeySource::new(seed);
        Some(IntKeys::new(move |c| keys.key(c)))
    }
}

/// Keys as a keyed bijection of a counter, so that distinct counters give distinct keys.
///
/// Inserted keys are `key(0..n)`, absent keys `key(n..n+q)`: an absent key can never equal an
/// inserted one, and neither set is stored.
#[derive(Clone, Copy, Debug)]
pub struct KeySource {
    xor: u64,
    multiplier: u64,
    offset: u64,
}

/// Domain tag so that equal key and hash seeds still give unrelated streams.
const KEY_DOMAIN: u64 = 0x6b65_7973_5f62_6c6d;

impl KeySource {
    /// The key source for `seed`; a pure function of it.
    pub fn new(seed: u64) -> Self {
        let mut rng = Pcg64::seed_from_u64(seed ^ KEY_DOMAIN);
        KeySource {
            xor: rng.next_u64(),
            multiplier: rng.next_u64() | 1,
            offset: rng.next_u64(),
        }
    }

    /// The key for `counter`. Every step (xor, odd multiply, add, xor-shift) is invertible on
    /// u64, so the map is a bijection; the splitmix64 finaliser makes the output look random.
    #[inline]
    pub fn key(&self, counter: u64) -> u64 {
        let mut x = (counter ^ self.xor).wrapping_mul(self.multiplier);
        x ^= x >> 31;
        x = x
            .wrapping_mul(0xbf58_476d_1ce4_e5b9)
            .wrapping_add(self.offset);
        x ^= x >> 27;
        x = x.wrapping_mul(0x94d0_49bb_1331_11eb);
        x ^ (x >> 31)
    }

    /// The n inserted keys, `key(0..n)`.
    pub fn inserted(&self, n: u64) -> impl Iterator<Item = u64> + '_ {
        (0..n).map(|c| self.key(c))
    }

    /// q keys that were never inserted, `key(n..n+q)`.
    pub fn absent(&self, n: u64, q: u64) -> impl Iterator<Item = u64> + '_ {
        (n..n + q).map(|c| self.key(c))
    }
}
