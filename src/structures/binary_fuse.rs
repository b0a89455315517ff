//! A binary fuse filter (Graf and Lemire 2022, the `xorf` crate): static, built once from all
//! its keys, k-bit fingerprints (8, 16 or 32) in about 1.125 n slots.

use super::interface::{Filter, FilterKind, Membership, Structure, boxed};
use super::static_keys::StaticKeys;
use crate::hash::AppliedHash;
use crate::error::{Error, Result};

pub static STRUCTURE: Structure = descriptor::<Fuse>(
    "binary-fuse",
    "a binary fuse filter (xorf): static, built from all its keys, k-bit fingerprints (8, 16 or 32)",
);

/// One of xorf's static tables of f-bit fingerprints: the binary fuse and xor filters.
pub trait Xorf {
    /// Builds the table of distinct keys with f-bit fingerprints (8, 16 or 32).
    fn construct(keys: &[u64], f: u32) -> Table;
    /// `(m, f)` for n keys at rate ε: the nominal table and the fingerprint bits.
    fn design(n: u64, fpr: f64) -> Result<(u64, u32)>;
}

/// The binary fuse filters (Graf and Lemire 2022).
pub struct Fuse;

impl Xorf for Fuse {
    /// xorf's `BinaryFuse8`, `BinaryFuse16` or `BinaryFuse32`.
    fn construct(keys: &[u64], f: u32) -> Table {
        match f {
            8 => Box::new(construct::<xorf::BinaryFuse8>(keys)),
            16 => Box::new(construct::<xorf::BinaryFuse16>(keys)),
            _ => Box::new(construct::<xorf::BinaryFuse32>(keys)),
        }
    }
    /// The fewest of 8, 16, 32 fingerprint bits with `2^-f <= ε`; its m is nominal, about
    /// 1.125 n slots (the built table is what a measurement reports).
    fn design(n: u64, fpr: f64) -> Result<(u64, u32)> {
        let f = fingerprint_bits(fpr);
        Ok(((n as f64 * 1.125).ceil() as u64 * u64::from(f), f))
    }
}

/// The structure of a family's tables.
pub const fn descriptor<F: Xorf>(name: &'static str, help: &'static str) -> Structure {
    Structure {
        is_static: true,
        layout: binary_fuse_layout,
        design: Some(F::design),
        lines_per_query: Some(|_| 3),
        ks: &BINARY_FUSE_BITS,
        // `2^-k`, the chance that the XOR of an absent key's three k-bit fingerprints matches
        // its own.
        fpr_exact: |_, _, k| 0.5f64.powi(k as i32),
        ..Structure::new(name, help, |s| {
            boxed(BinaryFuseFilter::new(s.k, s.kind.clone(), F::construct))
        })
    }
}

/// A built xorf table behind its `Filter` trait.
pub type Table = Box<dyn xorf::Filter<u64> + Send + Sync>;

/// Builds the table of distinct keys with f-bit fingerprints.
pub type Construct = fn(&[u64], u32) -> Table;

/// xorf's key hash: MurmurHash3's 64-bit finaliser of the key plus a seed it draws itself.
pub const HASH: &str = "murmur3-fmix64";

/// The fingerprint sizes `xorf` offers.
pub const BINARY_FUSE_BITS: [u32; 3] = [8, 16, 32];

/// A binary fuse or xor filter's nominal m: it is sized by its keys, so m is only checked
/// for k.
fn binary_fuse_layout(m: u64, k: u32) -> Result<u64> {
    if !BINARY_FUSE_BITS.contains(&k) {
        return Err(Error::invalid(
            "k",
            k,
            "for a binary fuse or xor filter, k is the fingerprint size in bits",
            "8, 16 or 32 for binary-fuse and xor",
        ));
    }
    Ok(m)
}

/// The fewest of 8, 16, 32 fingerprint bits with `2^-f <= ε` (32 below 2^-32).
pub fn fingerprint_bits(fpr: f64) -> u32 {
    BINARY_FUSE_BITS
        .into_iter()
        .find(|&f| 0.5f64.powi(f as i32) <= fpr)
        .unwrap_or(32)
}

/// A static fingerprint table (binary fuse, xor), built from the distinct keys on the first
/// query after an insert ([`StaticKeys`]). Its memory is that of the built table only.
pub struct BinaryFuseFilter {
    fingerprint_bits: u32,
    kind: FilterKind,
    construct: Construct,
    keys: StaticKeys<Table>,
}

impl BinaryFuseFilter {
    /// An empty table of k-bit fingerprints (8, 16 or 32) of the registered `kind`, built
    /// by `construct`.
    pub fn new(k: u32, kind: FilterKind, construct: Construct) -> Result<Self> {
        binary_fuse_layout(1, k)?;
        Ok(BinaryFuseFilter {
            fingerprint_bits: k,
            kind,
            construct,
            keys: StaticKeys::default(),
        })
    }

    fn table(&self) -> &Table {
        self.keys
            .built_distinct(|keys| (self.construct)(keys, self.fingerprint_bits))
    }

    fn slots(&self) -> u64 {
        self.table().len() as u64
    }
}

/// xorf's construction from distinct keys. It retries with fresh internal seeds and gives up
/// only after 1000 attempts, which for distinct keys does not happen: a failure is a bug.
fn construct<'k, F: TryFrom<&'k [u64], Error = &'static str>>(keys: &'k [u64]) -> F {
    F::try_from(keys).unwrap_or_else(|e| panic!("binary fuse construction failed: {e}"))
}

impl Membership for BinaryFuseFilter {
    fn insert(&mut self, key: u64) {
        self.keys.insert(key);
    }
    fn insert_many(&mut self, keys: &[u64]) -> Result<()> {
        self.keys.insert_many(keys);
        Ok(())
    }
    fn contains(&self, key: u64) -> bool {
        self.table().contains(&key)
    }
}

impl Filter for BinaryFuseFilter {
    /// Fingerprint bits of the built table (every slot holds one).
    fn set_bits(&self) -> u64 {
        self.memory_bits()
    }
    /// `2^-k`: fingerprints are uniform whatever the load.
    fn fpr_from_bits(&self) -> f64 {
        0.5f64.powi(self.fingerprint_bits as i32)
    }
    fn fpr_exact(&self, _n: u64) -> f64 {
        self.fpr_from_bits()
    }
    fn memory_bits(&self) -> u64 {
        self.slots() * u64::from(self.fingerprint_bits)
    }
    fn hashes(&self) -> u32 {
        self.fingerprint_bits
    }
    fn kind(&self) -> FilterKind {
        self.kind.clone()
    }
    fn hash_name(&self) -> AppliedHash {
        AppliedHash::own(HASH)
    }
}
