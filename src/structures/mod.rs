//! The filter interface the experiments measure, and the structures behind it: the classic
//! filter, a blocked filter (Putze, Sanders and Singler 2007) and a split-block filter (as in
//! Parquet). Each states the rate its own bits predict and its exact expected rate.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::filter::{BloomFilter, MAX_BITS};
use crate::hash::HashScheme;
use crate::theory;

mod binary_fuse;
mod blocked;
mod blocks;
mod classic;
mod counting;
mod cuckoo;
mod split_block;

use binary_fuse::binary_fuse_layout;
pub use binary_fuse::{BINARY_FUSE_BITS, BinaryFuseFilter};
pub use blocked::BlockedFilter;
use blocks::poisson_mixture;
pub use counting::{COUNTER_MAX, CountingFilter};
use cuckoo::cuckoo_layout;
pub use cuckoo::{CUCKOO_MAX_KICKS, CUCKOO_SLOTS, CuckooFilter};
pub use split_block::SplitBlockFilter;

/// Insert and query: all that timing needs, and all a peer crate offers.
pub trait Membership {
    /// Adds a key; afterwards `contains(key)` is true (until it is deleted, where supported).
    fn insert(&mut self, key: u64);
    /// "Probably present".
    fn contains(&self, key: u64) -> bool;
}

/// What an experiment needs of a filter.
pub trait Filter: Membership + Send + Sync {
    /// Number of set bits.
    fn set_bits(&self) -> u64;
    /// The false-positive rate the filter's own bits predict for a random absent key, under
    /// independent probes: the quantity the bits check compares the measurement with. By
    /// default that of a plain bit array, `fill^k` with fill = set bits / memory bits;
    /// every other layout overrides it.
    fn fpr_from_bits(&self) -> f64 {
        theory::fpr_from_fill(
            self.set_bits() as f64 / self.memory_bits() as f64,
            self.hashes(),
        )
    }
    /// Removes a key that was inserted. Only structures that keep counts can; the others
    /// refuse with [`Error::Unsupported`] rather than risk false negatives.
    fn delete(&mut self, _key: u64) -> Result<()> {
        Err(Error::Unsupported {
            filter: self.kind().name(),
            operation: "delete",
            supported: "counting, cuckoo",
        })
    }
    /// The structure's exact expected rate once n distinct keys are in
    /// ([`FilterKind::fpr_exact`] for its own layout). By default that of a plain bit array
    /// of `memory_bits` bits and `hashes` probes, `E[(X/m)^k]` ([`theory::fpr_exact`]).
    fn fpr_exact(&self, n: u64) -> f64 {
        theory::fpr_exact(n, self.memory_bits(), self.hashes())
    }
    /// Bits of memory the table holds: m for bit arrays, 4m for 4-bit counters, every
    /// sub-filter of a growing filter.
    fn memory_bits(&self) -> u64;
    /// Hashes per key: k (a cuckoo filter's fingerprint bits; a growing filter's slices
    /// summed over its sub-filters).
    fn hashes(&self) -> u32;
    /// Which structure this is.
    fn kind(&self) -> FilterKind;
}

/// How many of `key_of(c)`, c in `counters`, the filter reports present, on all cores.
pub fn count_present<F: Membership + Sync + ?Sized>(
    filter: &F,
    counters: std::ops::Range<u64>,
    key_of: impl Fn(u64) -> u64 + Sync,
) -> u64 {
    use rayon::prelude::*;
    counters
        .into_par_iter()
        .filter(|&c| filter.contains(key_of(c)))
        .count() as u64
}

/// Bits in a blocked filter's block: one 512-bit cache line.
pub const BLOCK_BITS: u64 = 512;
/// Bits in a split-block filter's block: eight 32-bit words.
pub const SPLIT_BLOCK_BITS: u64 = 256;
/// Words per split block, one bit set in each: k is always 8.
pub const SPLIT_WORDS: u32 = 8;

/// The structures by name.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FilterKind {
    /// m bits, k independent probes anywhere.
    #[default]
    Classic,
    /// All k probes of a key in one 512-bit block chosen by a further hash.
    Blocked,
    /// A 256-bit block of eight 32-bit words; one bit in each word (k = 8).
    SplitBlock,
    /// m 4-bit counters instead of bits (four times the space), with delete.
    Counting,
    /// A cuckoo filter (Fan et al. 2014): buckets of 4 fingerprints of k bits, with delete.
    Cuckoo,
    /// A binary fuse filter (Graf and Lemire 2022, the `xorf` crate): static, built once from
    /// all its keys, k-bit fingerprints (8, 16 or 32) in about 1.125 n slots.
    BinaryFuse,
    /// The `fastbloom` crate (feature `peers`).
    Fastbloom,
    /// The `bloomfilter` crate (feature `peers`).
    Bloomfilter,
    /// The `growable-bloom-filter` crate, a scalable filter that adds sub-filters as it
    /// fills (feature `peers`).
    #[serde(rename = "growable-bloom-filter")]
    Growable,
}

impl FilterKind {
    pub const ALL: [FilterKind; 9] = [
        FilterKind::Classic,
        FilterKind::Blocked,
        FilterKind::SplitBlock,
        FilterKind::Counting,
        FilterKind::Cuckoo,
        FilterKind::BinaryFuse,
        FilterKind::Fastbloom,
        FilterKind::Bloomfilter,
        FilterKind::Growable,
    ];
    /// bloomlab's own structures: the first six of [`FilterKind::ALL`].
    pub const OWN: &[FilterKind] = Self::ALL.split_at(6).0;
    /// The crates people ship, behind adapters ([`crate::peers`]): the rest of `ALL`.
    pub const PEERS: &[FilterKind] = Self::ALL.split_at(6).1;

    pub fn name(self) -> &'static str {
        match self {
            FilterKind::Classic => "classic",
            FilterKind::Blocked => "blocked",
            FilterKind::SplitBlock => "split-block",
            FilterKind::Counting => "counting",
            FilterKind::Cuckoo => "cuckoo",
            FilterKind::BinaryFuse => "binary-fuse",
            FilterKind::Fastbloom => "fastbloom",
            FilterKind::Bloomfilter => "bloomfilter",
            FilterKind::Growable => "growable-bloom-filter",
        }
    }

    /// Counting and cuckoo filters keep enough to remove a key; the others refuse.
    pub fn supports_delete(self) -> bool {
        matches!(self, FilterKind::Counting | FilterKind::Cuckoo)
    }

    /// A static structure, built once from all its keys: it cannot be sized by m.
    pub fn is_static(self) -> bool {
        self == FilterKind::BinaryFuse
    }

    /// A peer crate rather than one of bloomlab's structures.
    pub fn is_peer(self) -> bool {
        Self::PEERS.contains(&self)
    }

    /// False for a structure that takes no hash seed (growable-bloom-filter hashes with a
    /// fixed key): its runs are all alike, and re-seeding changes nothing.
    pub fn accepts_seed(self) -> bool {
        self != FilterKind::Growable
    }

    /// Refuses a peer crate when this build has none.
    fn require_built(self) -> Result<()> {
        if self.is_peer() && !cfg!(feature = "peers") {
            return Err(Error::NotBuilt {
                filter: self.name(),
                feature: "peers",
            });
        }
        Ok(())
    }

    /// The bit count actually allocated for a request of m: whole blocks for the blocked
    /// structures. Refuses a k the structure cannot take.
    pub fn layout(self, m: u64, k: u32) -> Result<u64> {
        self.require_built()?;
        let block = match self {
            FilterKind::Classic | FilterKind::Counting => return Ok(m),
            FilterKind::Cuckoo => return cuckoo_layout(m, k),
            FilterKind::BinaryFuse => return binary_fuse_layout(m, k),
            #[cfg(feature = "peers")]
            FilterKind::Fastbloom | FilterKind::Bloomfilter | FilterKind::Growable => {
                return crate::peers::layout(self, m, k);
            }
            #[cfg(not(feature = "peers"))]
            FilterKind::Fastbloom | FilterKind::Bloomfilter | FilterKind::Growable => {
                unreachable!("refused by require_built")
            }
            FilterKind::Blocked => BLOCK_BITS,
            FilterKind::SplitBlock => {
                if k != SPLIT_WORDS {
                    return Err(Error::invalid(
                        "k",
                        k,
                        "a split-block filter sets one bit in each of its 8 words",
                        "8 with --filter split-block",
                    ));
                }
                SPLIT_BLOCK_BITS
            }
        };
        let rounded = m.div_ceil(block) * block;
        if rounded > MAX_BITS {
            return Err(Error::invalid(
                "m",
                m,
                "bit array size out of range",
                format!("1..={MAX_BITS}"),
            ));
        }
        Ok(rounded)
    }

    /// An empty filter of m bits (as given by [`FilterKind::layout`]) and k hashes.
    pub fn build(
        self,
        m: u64,
        k: u32,
        scheme: HashScheme,
        hash_seed: u64,
    ) -> Result<Box<dyn Filter>> {
        let m = self.layout(m, k)?;
        Ok(match self {
            FilterKind::Classic => Box::new(BloomFilter::new(m, k, scheme, hash_seed)?),
            FilterKind::Blocked => {
                Box::new(BlockedFilter::new(m, k, scheme, hash_seed, BLOCK_BITS)?)
            }
            FilterKind::SplitBlock => Box::new(SplitBlockFilter::new(m, scheme, hash_seed)?),
            FilterKind::Counting => Box::new(CountingFilter::new(m, k, scheme, hash_seed)?),
            FilterKind::Cuckoo => Box::new(CuckooFilter::new(m, k, scheme, hash_seed)?),
            FilterKind::BinaryFuse => Box::new(BinaryFuseFilter::new(k)?),
            #[cfg(feature = "peers")]
            FilterKind::Fastbloom | FilterKind::Bloomfilter | FilterKind::Growable => {
                crate::peers::build(self, m, k, hash_seed)?
            }
            #[cfg(not(feature = "peers"))]
            FilterKind::Fastbloom | FilterKind::Bloomfilter | FilterKind::Growable => {
                unreachable!("refused by layout")
            }
        })
    }

    /// An empty filter for n keys at target rate ε: bloomlab's classic filter sized by
    /// `m = n log2(1/ε)/ln 2`, `k = round((m/n) ln 2)`; a peer crate configured the way its
    /// README shows (by ε and n). Refuses the other structures, which have no such constructor.
    pub fn for_rate(self, n: u64, fpr: f64, hash_seed: u64) -> Result<Box<dyn Filter>> {
        self.require_built()?;
        match self {
            FilterKind::Classic => {
                let (m, k) = theory::classic_design(n, fpr);
                self.build(m, k, HashScheme::MultiplyShift, hash_seed)
            }
            #[cfg(feature = "peers")]
            FilterKind::Fastbloom | FilterKind::Bloomfilter | FilterKind::Growable => {
                crate::peers::by_rate(self, n, fpr, hash_seed)
            }
            _ => Err(Error::Unsupported {
                filter: self.name(),
                operation: "be configured by target rate",
                supported: "classic, fastbloom, bloomfilter, growable-bloom-filter",
            }),
        }
    }

    /// The exact expected rate for n keys in m bits with k hashes.
    ///
    /// classic, counting (a counter is nonzero exactly when the classic bit would be set),
    /// fastbloom and bloomfilter: `E[(X/m)^k]` ([`theory::fpr_exact`]). blocked: the Poisson mixture over the
    /// keys in the query's block, `Σ_i Po(i; nb/m) · E[(X_i/b)^k]` with `X_i` the set bits of
    /// a b-bit block holding i keys. split-block: `Σ_i Po(i; nb/m) · (1 - (1 - 1/32)^i)^8`.
    /// binary-fuse: `2^-k`, the chance that the XOR of an absent key's three k-bit
    /// fingerprints matches its own.
    /// (The block load is binomial; the Poisson form is the standard approximation, exact as
    /// the number of blocks grows.) cuckoo, with f = k fingerprint bits and B buckets: a query
    /// compares its fingerprint with the ~2n/B entries of its two buckets, each matching with
    /// probability `1/(2^f - 1)`, so `1 - (1 - 1/(2^f-1))^{2n/B}` (Fan et al.'s bound
    /// `2b/2^f` at full load).
    pub fn fpr_exact(self, n: u64, m: u64, k: u32) -> f64 {
        match self {
            FilterKind::Classic
            | FilterKind::Counting
            | FilterKind::Fastbloom
            | FilterKind::Bloomfilter => theory::fpr_exact(n, m, k),
            FilterKind::Blocked => {
                poisson_mixture(n, m, BLOCK_BITS, |i| theory::fpr_exact(i, BLOCK_BITS, k))
            }
            FilterKind::SplitBlock => poisson_mixture(n, m, SPLIT_BLOCK_BITS, |i| {
                (1.0 - (1.0 - 1.0 / 32.0f64).powi(i as i32)).powi(SPLIT_WORDS as i32)
            }),
            FilterKind::BinaryFuse => 0.5f64.powi(k as i32),
            FilterKind::Cuckoo => {
                let buckets = (m / (CUCKOO_SLOTS * u64::from(k))) as f64;
                let miss = 1.0 - 1.0 / ((1u64 << k) - 1) as f64;
                -((2.0 * n as f64 / buckets) * miss.ln()).exp_m1()
            }
            // growable-bloom-filter: its growth schedule from the shape (NaN without the crate).
            #[cfg(feature = "peers")]
            FilterKind::Growable => crate::peers::Growable::by_shape(m, k)
                .map_or(f64::NAN, |g| Filter::fpr_exact(&g, n)),
            #[cfg(not(feature = "peers"))]
            FilterKind::Growable => f64::NAN,
        }
    }
}

named_enum!(FilterKind, "filter");
