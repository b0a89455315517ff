//! Adapters for the Bloom-filter crates people ship, behind the same [`Filter`] interface as
//! bloomlab's own structures (feature `peers`). Each is built two ways: by shape (m bits, k
//! hashes), for the experiments' `--filter NAME`, and by target rate and n, the way its README
//! tells a user to, for `audit`.
//!
//! - `fastbloom`: `BloomFilter::with_false_pos(ε).seed(s).expected_items(n)`, or
//!   `with_num_bits(m).seed(s).hashes(k)`; m bits (a whole number of u64 words), k probes by
//!   double hashing of one SipHash-1-3 value. Seeded.
//! - `bloomfilter`: `Bloom::new_for_fp_rate_with_seed(n, ε, seed)` (the README's
//!   `new_for_fp_rate` with the seed it otherwise draws from the OS), or
//!   `new_with_seed(m/8 bytes, items, seed)` with `items` chosen so that the crate's
//!   `k = round(m/items · ln 2)` is the k asked for; two SipHash-1-3 keys. Seeded.
//! - `growable-bloom-filter`: `GrowableBloom::new(ε, n)`: a scalable filter whose j-th
//!   sub-filter (created when the previous ones hold their capacity) holds `n·2^j` keys at
//!   rate `ε·0.8515625^j`, as a partitioned filter of `ceil(log2(1/ε_j))` slices of
//!   `ceil(n_j / ln 2)` bits. By shape: `ε = 2^-k` and the largest n whose first sub-filter
//!   fits in m bits. Hashes with xxh3 and a fixed key: it takes no seed, so every run is the
//!   same and re-seeding changes nothing.

use serde::Serialize;

use crate::error::{Error, Result};
use crate::filter::check_shape;
use crate::structures::{Filter, FilterKind, Membership};

/// Set bits among bits `start..end` of a little-endian bit array.
fn count_range(bytes: &[u8], start: u64, end: u64) -> u64 {
    let bit = |i: u64| u64::from((bytes[(i / 8) as usize] >> (i % 8)) & 1);
    let (first_byte, last_byte) = (start.div_ceil(8), end / 8);
    if first_byte >= last_byte {
        return (start..end).map(bit).sum();
    }
    let whole: u64 = bytes[first_byte as usize..last_byte as usize]
        .iter()
        .map(|b| u64::from(b.count_ones()))
        .sum();
    (start..first_byte * 8).map(bit).sum::<u64>()
        + whole
        + (last_byte * 8..end).map(bit).sum::<u64>()
}

/// The crate's seed from bloomlab's: the u64 in the first eight bytes.
fn seed_bytes<const N: usize>(seed: u64) -> [u8; N] {
    let mut bytes = [0u8; N];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    bytes
}

/// `fastbloom::BloomFilter` with its default (SipHash-1-3) hasher, seeded.
pub struct Fastbloom(fastbloom::BloomFilter);

impl Fastbloom {
    /// `with_num_bits(m).seed(s).hashes(k)`.
    pub fn by_shape(m: u64, k: u32, seed: u64) -> Result<Self> {
        check_shape(m, k)?;
        Ok(Fastbloom(
            fastbloom::BloomFilter::with_num_bits(m as usize)
                .seed(&u128::from(seed))
                .hashes(k),
        ))
    }

    /// `with_false_pos(ε).seed(s).expected_items(n)`: `m = 8·ceil(-n ln ε / (8 ln² 2))`,
    /// `k = round(m/n · ln 2)`.
    pub fn by_rate(n: u64, fpr: f64, seed: u64) -> Self {
        Fastbloom(
            fastbloom::BloomFilter::with_false_pos(fpr)
                .seed(&u128::from(seed))
                .expected_items(n as usize),
        )
    }
}

impl Membership for Fastbloom {
    fn insert(&mut self, key: u64) {
        self.0.insert(&key);
    }
    fn contains(&self, key: u64) -> bool {
        self.0.contains(&key)
    }
}

impl Filter for Fastbloom {
    fn set_bits(&self) -> u64 {
        self.0
            .as_slice()
            .iter()
            .map(|w| u64::from(w.count_ones()))
            .sum()
    }
    fn memory_bits(&self) -> u64 {
        self.0.num_bits() as u64
    }
    fn hashes(&self) -> u32 {
        self.0.num_hashes()
    }
    fn kind(&self) -> FilterKind {
        FilterKind::Fastbloom
    }
}

/// `bloomfilter::Bloom<u64>`, seeded.
pub struct Bloomfilter(bloomfilter::Bloom<u64>);

impl Bloomfilter {
    /// `new_with_seed(m/8 bytes, items, seed)`, `items` chosen to give k (m a multiple of 8).
    pub fn by_shape(m: u64, k: u32, seed: u64) -> Result<Self> {
        check_shape(m, k)?;
        let bytes = m.div_ceil(8) as usize;
        let items =
            ((bytes as f64 * 8.0 * std::f64::consts::LN_2 / f64::from(k)).round() as usize).max(1);
        for candidate in [items, items + 1, items.saturating_sub(1).max(1)] {
            let bloom = bloomfilter::Bloom::new_with_seed(bytes, candidate, &seed_bytes(seed))
                .map_err(|e| Error::Output(format!("bloomfilter: {e}")))?;
            if bloom.number_of_hash_functions() == k {
                return Ok(Bloomfilter(bloom));
            }
        }
        Err(Error::invalid(
            "k",
            k,
            "the bloomfilter crate takes k = round(m/n ln 2) for some whole n, and no n gives this k at this m",
            "k at most about 0.69 m",
        ))
    }

    /// `new_for_fp_rate_with_seed(n, ε, seed)`: `m = 8·ceil(-n ln ε / (8 ln² 2))`,
    /// `k = round(m/n · ln 2)`.
    pub fn by_rate(n: u64, fpr: f64, seed: u64) -> Result<Self> {
        bloomfilter::Bloom::new_for_fp_rate_with_seed(n as usize, fpr, &seed_bytes(seed))
            .map(Bloomfilter)
            .map_err(|e| Error::Output(format!("bloomfilter: {e}")))
    }

    /// The bit array: `as_slice()` is a header followed by the bits.
    fn bitmap(&self) -> &[u8] {
        let slice = self.0.as_slice();
        &slice[slice.len() - (self.0.len() / 8) as usize..]
    }
}

impl Membership for Bloomfilter {
    fn insert(&mut self, key: u64) {
        self.0.set(&key);
    }
    fn contains(&self, key: u64) -> bool {
        self.0.check(&key)
    }
}

impl Filter for Bloomfilter {
    fn set_bits(&self) -> u64 {
        self.bitmap()
            .iter()
            .map(|b| u64::from(b.count_ones()))
            .sum()
    }
    fn memory_bits(&self) -> u64 {
        self.0.len()
    }
    fn hashes(&self) -> u32 {
        self.0.number_of_hash_functions()
    }
    fn kind(&self) -> FilterKind {
        FilterKind::Bloomfilter
    }
}

/// The crate's tightening ratio r: sub-filter j is built for rate `ε·r^j`.
pub const GROWABLE_TIGHTENING: f64 = 0.8515625;
/// The crate's growth factor: sub-filter j holds `n·2^j` keys.
pub const GROWABLE_GROWTH: u64 = 2;

/// One sub-filter of a growable filter as the crate lays it out.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SubFilter {
    /// Keys it is built for.
    pub capacity: u64,
    /// Slices, one bit set in each per key.
    pub slices: u32,
    /// Bits per slice: `8·bytes / slices` (integer division, as the crate indexes).
    pub slice_bits: u64,
    /// Bytes allocated.
    pub bytes: u64,
}

impl SubFilter {
    /// Sub-filter `j` of a filter for `est_insertions` keys at `desired_error`, by the crate's
    /// formulas: `slices = ceil(log2(1/ε_j))`, `ceil(capacity / ln 2)` bits per slice, rounded
    /// up to whole bytes.
    pub fn planned(est_insertions: u64, desired_error: f64, j: u32) -> Self {
        let error = desired_error * GROWABLE_TIGHTENING.powi(j as i32);
        let capacity = est_insertions * GROWABLE_GROWTH.pow(j);
        let slices = (1.0 / error).log2().ceil() as u32;
        let per_slice = (capacity as f64 / std::f64::consts::LN_2).ceil() as u64;
        let bytes = (u64::from(slices) * per_slice).div_ceil(8);
        SubFilter {
            capacity,
            slices,
            slice_bits: bytes * 8 / u64::from(slices),
            bytes,
        }
    }

    /// `(1 - (1 - 1/s)^keys)^slices`: every slice gets one bit per key.
    pub fn fpr_exact(&self, keys: u64) -> f64 {
        let slice_fill = -((keys as f64) * (-1.0 / self.slice_bits as f64).ln_1p()).exp_m1();
        slice_fill.powi(self.slices as i32)
    }
}

/// `growable_bloom_filter::GrowableBloom`, which takes no seed.
pub struct Growable {
    inner: growable_bloom_filter::GrowableBloom,
    est_insertions: u64,
    desired_error: f64,
    /// The sub-filters read from the serialised form, kept until the next insert: a row reads
    /// set bits, rate, memory and hashes, and each would otherwise copy every sub-filter.
    inspected: std::sync::OnceLock<Vec<InspectedSub>>,
}

/// The largest n whose first sub-filter at `ε = 2^-k` fits in m bits (0 when none does).
fn growable_capacity(m: u64, k: u32) -> u64 {
    let error = 0.5f64.powi(k as i32);
    let fits = |n: u64| SubFilter::planned(n, error, 0).bytes * 8 <= m;
    let mut n = ((m / u64::from(k)) as f64 * std::f64::consts::LN_2) as u64 + 2;
    while n > 0 && !fits(n) {
        n -= 1;
    }
    n
}

impl Growable {
    /// `GrowableBloom::new(2^-k, n)` for the largest n whose first sub-filter fits in m bits.
    pub fn by_shape(m: u64, k: u32) -> Result<Self> {
        check_shape(m, k)?;
        let n = growable_capacity(m, k);
        if n == 0 {
            return Err(Error::invalid(
                "m",
                m,
                "growable-bloom-filter needs room for k slices of at least two bits",
                format!("at least {} bits at this k", 8 * u64::from(k).div_ceil(4)),
            ));
        }
        Ok(Self::by_rate(n, 0.5f64.powi(k as i32)))
    }

    /// The layout `by_shape` allocates for a request of m bits and k hashes.
    pub fn layout(m: u64, k: u32) -> Result<u64> {
        Ok(Self::by_shape(m, k)?.first().bytes * 8)
    }

    /// `GrowableBloom::new(ε, n)`.
    pub fn by_rate(n: u64, fpr: f64) -> Self {
        Growable {
            inner: growable_bloom_filter::GrowableBloom::new(fpr, n as usize),
            est_insertions: n,
            desired_error: fpr,
            inspected: std::sync::OnceLock::new(),
        }
    }

    /// The crate's own filter.
    pub fn inner(&self) -> &growable_bloom_filter::GrowableBloom {
        &self.inner
    }

    fn first(&self) -> SubFilter {
        SubFilter::planned(self.est_insertions, self.desired_error, 0)
    }

    /// The sub-filters the crate has created so far, as read from its serialised form.
    pub fn sub_filters(&self) -> &[InspectedSub] {
        self.inspected.get_or_init(|| {
            let mut inspector = Inspector::default();
            // The crate's fields are private; its serde form is the one view it offers.
            let _ = self.inner.serialize(&mut inspector);
            inspector.subs
        })
    }

    /// The keys sub-filter j received when `n` distinct keys were inserted.
    fn keys_in(&self, n: u64, j: u32) -> u64 {
        let before: u64 = (0..j)
            .map(|i| SubFilter::planned(self.est_insertions, self.desired_error, i).capacity)
            .sum();
        let capacity = SubFilter::planned(self.est_insertions, self.desired_error, j).capacity;
        n.saturating_sub(before).min(capacity)
    }
}

impl Membership for Growable {
    fn insert(&mut self, key: u64) {
        self.inner.insert(key);
        self.inspected.take();
    }
    fn contains(&self, key: u64) -> bool {
        self.inner.contains(key)
    }
}

impl Filter for Growable {
    fn set_bits(&self) -> u64 {
        self.sub_filters()
            .iter()
            .map(|s| s.set_bits.iter().sum::<u64>())
            .sum()
    }
    /// `1 - Π_j (1 - Π_i fill_{j,i})` over sub-filters j and their slices i: a query is
    /// positive when any sub-filter has all its slice bits set.
    fn fpr_from_bits(&self) -> f64 {
        1.0 - self
            .sub_filters()
            .iter()
            .map(|s| {
                1.0 - s
                    .set_bits
                    .iter()
                    .map(|&set| set as f64 / s.slice_bits as f64)
                    .product::<f64>()
            })
            .product::<f64>()
    }
    /// `1 - Π_j (1 - (1 - (1 - 1/s_j)^{n_j})^{k_j})`, sub-filter j holding
    /// `n_j = min(cap_j, n - Σ_{i<j} cap_i)` keys. (The crate skips a key that already tests
    /// present, so the true n_j are smaller by about a fraction ε; the bias is below the
    /// noise of any measurement here.)
    fn fpr_exact(&self, n: u64) -> f64 {
        let mut miss = 1.0;
        let mut j = 0;
        while self.keys_in(n, j) > 0 {
            let sub = SubFilter::planned(self.est_insertions, self.desired_error, j);
            miss *= 1.0 - sub.fpr_exact(self.keys_in(n, j));
            j += 1;
        }
        1.0 - miss
    }
    /// Every sub-filter's bytes (at least the first's, which is allocated at the first insert).
    fn memory_bits(&self) -> u64 {
        let subs = self.sub_filters();
        if subs.is_empty() {
            return self.first().bytes * 8;
        }
        subs.iter().map(|s| s.bytes * 8).sum()
    }
    /// Slices summed over the sub-filters: the bits an absent key may probe.
    fn hashes(&self) -> u32 {
        let subs = self.sub_filters();
        if subs.is_empty() {
            return self.first().slices;
        }
        subs.iter().map(|s| s.slices).sum()
    }
    fn kind(&self) -> FilterKind {
        FilterKind::Growable
    }
}

/// What the serialised form shows of one sub-filter.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct InspectedSub {
    pub bytes: u64,
    pub slices: u32,
    pub slice_bits: u64,
    /// Set bits of each slice.
    pub set_bits: Vec<u64>,
}

/// A serde serializer that reads the sub-filters out of a `GrowableBloom`: each one
/// serialises its buffer (bytes) and then its slice count (u64). Everything else is ignored.
#[derive(Default)]
struct Inspector {
    subs: Vec<InspectedSub>,
    buffer: Vec<u8>,
}

type SerResult = std::result::Result<(), std::fmt::Error>;
type Impossible = serde::ser::Impossible<(), std::fmt::Error>;

macro_rules! ignore {
    ($($name:ident: $ty:ty),*) => {
        $(fn $name(self, _: $ty) -> SerResult { Ok(()) })*
    };
}

impl serde::Serializer for &mut Inspector {
    type Ok = ();
    type Error = std::fmt::Error;
    type SerializeSeq = Self;
    type SerializeTuple = Impossible;
    type SerializeTupleStruct = Impossible;
    type SerializeTupleVariant = Impossible;
    type SerializeMap = Impossible;
    type SerializeStruct = Self;
    type SerializeStructVariant = Impossible;

    ignore!(serialize_bool: bool, serialize_i8: i8, serialize_i16: i16, serialize_i32: i32,
        serialize_i64: i64, serialize_u8: u8, serialize_u16: u16, serialize_u32: u32,
        serialize_f32: f32, serialize_f64: f64, serialize_char: char, serialize_str: &str,
        serialize_unit_struct: &'static str);

    /// A sub-filter's slice count, which follows its buffer.
    fn serialize_u64(self, slices: u64) -> SerResult {
        if self.buffer.is_empty() {
            return Ok(());
        }
        let bytes = std::mem::take(&mut self.buffer);
        let slice_bits = bytes.len() as u64 * 8 / slices.max(1);
        let set_bits = (0..slices)
            .map(|i| count_range(&bytes, i * slice_bits, (i + 1) * slice_bits))
            .collect();
        self.subs.push(InspectedSub {
            bytes: bytes.len() as u64,
            slices: slices as u32,
            slice_bits,
            set_bits,
        });
        Ok(())
    }
    fn serialize_bytes(self, bytes: &[u8]) -> SerResult {
        self.buffer = bytes.to_vec();
        Ok(())
    }
    fn serialize_none(self) -> SerResult {
        Ok(())
    }
    fn serialize_some<T: ?Sized + Serialize>(self, value: &T) -> SerResult {
        value.serialize(self)
    }
    fn serialize_unit(self) -> SerResult {
        Ok(())
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, _: &'static str) -> SerResult {
        Ok(())
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        value: &T,
    ) -> SerResult {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        value: &T,
    ) -> SerResult {
        value.serialize(self)
    }
    fn serialize_seq(self, _: Option<usize>) -> std::result::Result<Self, std::fmt::Error> {
        Ok(self)
    }
    fn serialize_tuple(self, _: usize) -> std::result::Result<Impossible, std::fmt::Error> {
        Err(std::fmt::Error)
    }
    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> std::result::Result<Impossible, std::fmt::Error> {
        Err(std::fmt::Error)
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> std::result::Result<Impossible, std::fmt::Error> {
        Err(std::fmt::Error)
    }
    fn serialize_map(self, _: Option<usize>) -> std::result::Result<Impossible, std::fmt::Error> {
        Err(std::fmt::Error)
    }
    fn serialize_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> std::result::Result<Self, std::fmt::Error> {
        Ok(self)
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> std::result::Result<Impossible, std::fmt::Error> {
        Err(std::fmt::Error)
    }
}

impl serde::ser::SerializeSeq for &mut Inspector {
    type Ok = ();
    type Error = std::fmt::Error;
    fn serialize_element<T: ?Sized + Serialize>(&mut self, value: &T) -> SerResult {
        value.serialize(&mut **self)
    }
    fn end(self) -> SerResult {
        Ok(())
    }
}

impl serde::ser::SerializeStruct for &mut Inspector {
    type Ok = ();
    type Error = std::fmt::Error;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, _: &'static str, value: &T) -> SerResult {
        value.serialize(&mut **self)
    }
    fn end(self) -> SerResult {
        Ok(())
    }
}

/// A peer filter of m bits and k hashes (as [`FilterKind::layout`] gives them).
pub fn build(kind: FilterKind, m: u64, k: u32, seed: u64) -> Result<Box<dyn Filter>> {
    Ok(match kind {
        FilterKind::Fastbloom => Box::new(Fastbloom::by_shape(m, k, seed)?),
        FilterKind::Bloomfilter => Box::new(Bloomfilter::by_shape(m, k, seed)?),
        FilterKind::Growable => Box::new(Growable::by_shape(m, k)?),
        _ => unreachable!("{kind} is not a peer"),
    })
}

/// A peer filter for n keys at rate ε, configured as the crate's README shows.
pub fn by_rate(kind: FilterKind, n: u64, fpr: f64, seed: u64) -> Result<Box<dyn Filter>> {
    Ok(match kind {
        FilterKind::Fastbloom => Box::new(Fastbloom::by_rate(n, fpr, seed)),
        FilterKind::Bloomfilter => Box::new(Bloomfilter::by_rate(n, fpr, seed)?),
        FilterKind::Growable => Box::new(Growable::by_rate(n, fpr)),
        _ => unreachable!("{kind} is not a peer"),
    })
}

/// The bits a peer allocates for a request of m bits and k hashes; refuses a k it cannot take.
pub fn layout(kind: FilterKind, m: u64, k: u32) -> Result<u64> {
    check_shape(m, k)?;
    match kind {
        FilterKind::Fastbloom => Ok(m.div_ceil(64) * 64),
        FilterKind::Bloomfilter => Ok(Bloomfilter::by_shape(m, k, 0)?.memory_bits()),
        FilterKind::Growable => Growable::layout(m, k),
        _ => unreachable!("{kind} is not a peer"),
    }
}
