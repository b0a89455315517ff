//! The classic filter ([`BloomFilter`]) behind the filter interface.

use super::{Filter, FilterKind, Membership};
use crate::filter::BloomFilter;

impl Membership for BloomFilter {
    fn insert(&mut self, key: u64) {
        BloomFilter::insert(self, key)
    }
    fn contains(&self, key: u64) -> bool {
        BloomFilter::contains(self, key)
    }
}

impl Filter for BloomFilter {
    fn set_bits(&self) -> u64 {
        BloomFilter::set_bits(self)
    }
    fn memory_bits(&self) -> u64 {
        self.bits()
    }
    fn hashes(&self) -> u32 {
        self.hash_count()
    }
    fn kind(&self) -> FilterKind {
        FilterKind::Classic
    }
}
