//! How many slots a standard Ribbon filter needs for n keys: RocksDB's sizing
//! (`util/ribbon_config.cc`, `BandingConfigHelper1MaybeSupported::GetNumSlots`), which
//! interpolates measured occupancies with construction failure chance 1/2 (`kOneIn2`, no
//! smash), and the measurement it rests on ([`keys_at_first_failure`]).

use super::{Banding, RowHash};

/// Powers of two of slots with a measured occupancy: 2^0 to 2^17.
const KNOWN: usize = 18;

/// Per band width: the keys that 2^i slots take with construction failure chance 1/2 (0 where
/// unsupported), and the growth of the overhead factor m/n per doubling of m beyond 2^17.
struct Occupancy {
    known: [f64; KNOWN],
    per_doubling: f64,
}

/// W = 128: RocksDB's `BandingConfigHelperData<kOneIn2, 128U, false>` (from its
/// `FindOccupancy` test), 0.0038 per doubling.
const BAND_128: Occupancy = Occupancy {
    known: [
        0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 252.984, 506.109, 1013.71, 2029.47, 4060.43,
        8115.63, 16202.2, 32305.1, 64383.5, 128274.0,
    ],
    per_doubling: 0.0038,
};

/// W = 64: RocksDB's `BandingConfigHelperData<kOneIn2, 64U, false>`, 0.0083 per doubling.
const BAND_64: Occupancy = Occupancy {
    known: [
        0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 124.94, 249.968, 501.234, 1004.06, 2006.15, 3997.89,
        7946.99, 15778.4, 31306.9, 62115.3, 123284.0,
    ],
    per_doubling: 0.0083,
};

/// W = 32, which RocksDB does not ship: the medians of [`keys_at_first_failure`] over 101
/// seeds at each power of two up to 2^14 and 31 beyond (the procedure of RocksDB's
/// `FindOccupancy`, whose 64- and 128-bit figures it reproduces within 0.3%), and the
/// doubling step of its last two, 0.0108.
const BAND_32: Occupancy = Occupancy {
    known: [
        0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 61.0, 122.0, 245.0, 486.0, 963.0, 1912.0, 3745.0, 7361.0,
        14524.0, 28440.0, 56157.0, 111279.0,
    ],
    per_doubling: 0.0108,
};

fn occupancy<const W: u32>() -> &'static Occupancy {
    match W {
        32 => &BAND_32,
        64 => &BAND_64,
        _ => &BAND_128,
    }
}

impl Occupancy {
    /// Keys that 2^log2 slots take: the table, or beyond it `2^log2 / factor` with the factor
    /// `m/n` growing by `per_doubling` per doubling from its value at 2^17.
    fn keys_for_pow2(&self, log2: u32) -> f64 {
        if (log2 as usize) < KNOWN {
            return self.known[log2 as usize];
        }
        let last = (KNOWN - 1) as f64;
        let final_factor = last.exp2() / self.known[KNOWN - 1];
        let factor = final_factor + (f64::from(log2) - last) * self.per_doubling;
        f64::from(log2).exp2() / factor
    }
}

/// Slots for n keys: RocksDB's `GetNumSlots` (interpolating between the two powers of two
/// whose occupancies bracket n, rounding up), then whole blocks of W slots, at least two.
pub fn slots_for<const W: u32>(n: u64) -> u64 {
    let table = occupancy::<W>();
    let minimum = 2 * u64::from(W);
    if n == 0 {
        return minimum;
    }
    let n = n as f64;
    let mut log2 = (n.log2() + 0.5) as u32;
    let mut lower = table.keys_for_pow2(log2);
    let upper;
    if log2 == 0 || lower == 0.0 {
        return minimum;
    } else if n < lower {
        upper = lower;
        log2 -= 1;
        lower = table.keys_for_pow2(log2);
    } else {
        upper = table.keys_for_pow2(log2 + 1);
    }
    let portion = (n - lower) / (upper - lower);
    let lower_slots = f64::from(log2).exp2();
    let slots = (portion * lower_slots + lower_slots + 0.999_999_999) as u64;
    slots.div_ceil(u64::from(W)).max(2) * u64::from(W)
}

/// Keys banded into `slots` slots (a multiple of W) with the hash of `seed` before the
/// first one that cannot be: RocksDB's `FindOccupancy` measurement of one seed. Keys are
/// `splitmix64(seed + i)`.
pub fn keys_at_first_failure<const W: u32>(slots: u64, seed: u64) -> u64 {
    let hash = RowHash::new(seed, 0);
    let starts = slots - u64::from(W) + 1;
    let mut banding = Banding::new(slots);
    (0..slots)
        .take_while(|&i| {
            let key = crate::hash::splitmix64(seed.wrapping_add(i));
            banding.add(hash.row::<W>(key, starts, 32))
        })
        .count() as u64
}
