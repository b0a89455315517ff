//! The classic filter ([`BloomFilter`], the core bit array) behind the filter interface.

use super::interface::{Family, Filter, FilterKind, Membership, Rate, Shape, Structure, check_answers};
use crate::error::Result;
use crate::structures::bloom::BloomFilter;
use crate::hash::{AppliedHash, HashScheme, Simd};
use crate::theory;

pub static STRUCTURE: Structure = Structure {
    for_rate: Some(for_rate),
    design: Some(|n, fpr| Ok(theory::classic_design(n, fpr))),
    takes_math: true,
    family: Family::Classic,
    ..Structure::new(
        "classic",
        "m bits, k independent probes anywhere (the default)",
        build,
    )
};

fn build(shape: &Shape) -> Result<Box<dyn Filter>> {
    let math = shape.math.unwrap_or(shape.hash.default_math());
    Ok(Box::new(BloomFilter::with_math(
        shape.m,
        shape.k,
        shape.hash,
        math,
        shape.hash_seed,
    )?))
}

/// Its design ([`theory::classic_design`]) on multiply-shift: the constructor for a rate
/// that `conform` and `audit` use as they use a peer crate's.
fn for_rate(kind: &FilterKind, rate: Rate, hash_seed: u64) -> Result<Box<dyn Filter>> {
    let (m, k) = theory::classic_design(rate.n, rate.fpr);
    kind.build(rate.n, m, k, HashScheme::MultiplyShift, hash_seed)
}

impl Membership for BloomFilter {
    fn insert(&mut self, key: u64) {
        BloomFilter::insert(self, key)
    }
    fn contains(&self, key: u64) -> bool {
        BloomFilter::contains(self, key)
    }
    fn insert_many(&mut self, keys: &[u64]) -> Result<()> {
        self.insert_batch(keys);
        Ok(())
    }
    fn contains_many(&self, keys: &[u64], answers: &mut [bool]) -> Result<()> {
        check_answers(keys, answers)?;
        self.contains_batch(keys, answers);
        Ok(())
    }
    fn prefetch_query(&self, key: u64) {
        BloomFilter::prefetch_query(self, key)
    }
    fn insert_bytes(&mut self, key: &[u8]) {
        BloomFilter::insert_bytes(self, key)
    }
    fn contains_bytes(&self, key: &[u8]) -> bool {
        BloomFilter::contains_bytes(self, key)
    }
    fn hashes_bytes(&self) -> bool {
        self.scheme().hashes_bytes()
    }
    fn insert_parallel(
        &mut self,
        counters: std::ops::Range<u64>,
        key_of: &(dyn Fn(u64) -> u64 + Sync),
    ) -> bool {
        BloomFilter::insert_parallel(self, counters, key_of);
        true
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
        FilterKind::of(&STRUCTURE)
    }
    fn addressable_bits(&self) -> u64 {
        self.family().addressable_bits()
    }
    fn hash_name(&self) -> AppliedHash {
        self.scheme().into()
    }
    fn bit_view(&self) -> Option<&BloomFilter> {
        Some(self)
    }
    fn vector_path(&self) -> Option<Simd> {
        Some(self.simd())
    }
    fn take_path(&mut self, simd: Simd) {
        self.set_path(simd)
    }
}
