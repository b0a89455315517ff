//! The filter interface every structure implements, bloomlab's own and the peer crates', and
//! the descriptor that registers one ([`Structure`]). This module depends on no structure and
//! on no registry: the structures and the peer adapters depend on it, and the registry
//! ([`crate::structures`]) depends on them all.

use std::ops::Range;
use std::sync::{Arc, OnceLock};

use serde::{Serialize, Serializer};

use crate::error::{Error, Result};
use crate::hash::{AppliedHash, HashScheme, IndexMath, Simd};
use crate::program::ProgramOptions;
use crate::structures::bloom::BloomFilter;
pub use crate::structures::descriptor_parts::{
    Argument, Family, Origin, PeerCrate, Rate, RateOfArgument,
};
use crate::theory;

/// Insert and query: all that timing needs, and all a peer crate offers.
pub trait Membership {
    /// Adds a key; afterwards `contains(key)` is true (until it is deleted, where supported).
    fn insert(&mut self, key: u64);
    /// "Probably present".
    fn contains(&self, key: u64) -> bool;
    /// Adds a byte key (a line of a key file, a formatted string). By default as the u64
    /// [`prehash`](crate::hash::prehash) of the bytes, which the row's hash names; a
    /// structure whose hash takes bytes overrides it (and [`Membership::hashes_bytes`]).
    fn insert_bytes(&mut self, key: &[u8]) {
        self.insert(crate::hash::prehash(key))
    }
    /// "Probably present", for a byte key hashed as [`Membership::insert_bytes`] hashes it.
    fn contains_bytes(&self, key: &[u8]) -> bool {
        self.contains(crate::hash::prehash(key))
    }
    /// True when byte keys reach the structure's own hash unchanged, false when they are
    /// pre-hashed to a u64 first.
    fn hashes_bytes(&self) -> bool {
        false
    }
    /// Inserts the byte keys in order, as [`Membership::insert_bytes`] one at a time does; a
    /// structure that crosses a boundary per call (a process) sends them as one batch.
    fn insert_bytes_many(&mut self, keys: &[&[u8]]) -> Result<()> {
        keys.iter().for_each(|key| self.insert_bytes(key));
        Ok(())
    }
    /// `answers[i] = contains_bytes(keys[i])`, one batch; refuses slices of different lengths.
    fn contains_bytes_many(&self, keys: &[&[u8]], answers: &mut [bool]) -> Result<()> {
        check_answers(keys, answers)?;
        for (answer, key) in answers.iter_mut().zip(keys) {
            *answer = self.contains_bytes(key);
        }
        Ok(())
    }
    /// Inserts the keys in order: the same filter as inserting them one at a time. A
    /// structure that crosses a boundary per call (a process, a device) answers per batch.
    fn insert_many(&mut self, keys: &[u64]) -> Result<()> {
        keys.iter().for_each(|&key| self.insert(key));
        Ok(())
    }
    /// `answers[i] = contains(keys[i])`; refuses slices of different lengths.
    fn contains_many(&self, keys: &[u64], answers: &mut [bool]) -> Result<()> {
        check_answers(keys, answers)?;
        for (answer, &key) in answers.iter_mut().zip(keys) {
            *answer = self.contains(key);
        }
        Ok(())
    }
    /// Hints that `contains(key)` comes soon: starts loading the lines it reads first (a
    /// blocked filter's block, a classic filter's first probes), so that a caller asking
    /// many filters overlaps their misses ([`contains_across`]). Changes no answer; by
    /// default it does nothing.
    fn prefetch_query(&self, _key: u64) {}
    /// Inserts `key_of(c)` for every counter c of `counters` on all cores, leaving the filter
    /// that inserting them in order leaves; false, having inserted nothing, for a structure
    /// without a parallel path (the default).
    fn insert_parallel(
        &mut self,
        _counters: Range<u64>,
        _key_of: &(dyn Fn(u64) -> u64 + Sync),
    ) -> bool {
        false
    }
}

/// Queries per group of [`contains_across`]: about the lines a core keeps in flight, times
/// the few each query reads.
pub const ACROSS_GROUP: usize = 16;

/// `answers[j] = filters[picks[j]].contains(keys[j])`: queries spread over many filters,
/// [`ACROSS_GROUP`] at a time, each group's lines hinted ([`Membership::prefetch_query`])
/// before any of its queries is answered. The answers are those of asking key by key.
/// Refuses slices of different lengths and a pick with no filter.
pub fn contains_across<T, F>(
    filters: &[T],
    picks: &[u32],
    keys: &[u64],
    answers: &mut [bool],
) -> Result<()>
where
    T: std::ops::Deref<Target = F>,
    F: Membership + ?Sized,
{
    check_answers(keys, answers)?;
    if picks.len() != keys.len() {
        return Err(Error::invalid(
            "picks",
            picks.len(),
            "one filter per key",
            keys.len().to_string(),
        ));
    }
    if let Some(&bad) = picks.iter().find(|&&f| f as usize >= filters.len()) {
        return Err(Error::invalid(
            "picks",
            bad,
            "no such filter",
            format!("0..{}", filters.len()),
        ));
    }
    let groups = picks.chunks(ACROSS_GROUP).zip(keys.chunks(ACROSS_GROUP));
    for ((picks, keys), answers) in groups.zip(answers.chunks_mut(ACROSS_GROUP)) {
        for (&f, &key) in picks.iter().zip(keys) {
            filters[f as usize].prefetch_query(key);
        }
        for ((&f, &key), answer) in picks.iter().zip(keys).zip(answers) {
            *answer = filters[f as usize].contains(key);
        }
    }
    Ok(())
}

/// Refuses an `answers` slice not as long as `keys` (every `contains_many` checks it).
pub fn check_answers<K>(keys: &[K], answers: &[bool]) -> Result<()> {
    if keys.len() != answers.len() {
        return Err(Error::invalid(
            "answers",
            answers.len(),
            "one answer per key",
            keys.len().to_string(),
        ));
    }
    Ok(())
}

/// Keys per batch in the measurement loops ([`for_each_batch`]).
pub const BATCH: usize = 4096;

/// How many of `keys` the filter reports present, asked [`BATCH`] at a time.
pub fn count_present<F: Membership + ?Sized>(filter: &F, keys: &[u64]) -> Result<u64> {
    let mut answers = [false; BATCH];
    let mut present = 0;
    for batch in keys.chunks(BATCH) {
        let answers = &mut answers[..batch.len()];
        filter.contains_many(batch, answers)?;
        present += answers.iter().filter(|&&a| a).count() as u64;
    }
    Ok(present)
}

/// Calls `each` on the keys `key_of(c)` for c in `counters`, in order, [`BATCH`] at a time.
pub fn for_each_batch(
    counters: Range<u64>,
    key_of: impl Fn(u64) -> u64,
    mut each: impl FnMut(&[u64]) -> Result<()>,
) -> Result<()> {
    let mut keys = Vec::with_capacity(BATCH);
    let mut start = counters.start;
    while start < counters.end {
        let end = counters.end.min(start.saturating_add(BATCH as u64));
        keys.clear();
        keys.extend((start..end).map(&key_of));
        each(&keys)?;
        start = end;
    }
    Ok(())
}

/// What an experiment needs of a filter.
pub trait Filter: Membership + Send + Sync {
    /// Ends the filter's use, reporting a failure that only shows at the end (a program
    /// behind `exec:` that does not exit, or writes after its last reply). Every run calls it
    /// on each filter it measured; nothing to do for a filter in this process.
    fn finish(&mut self) -> Result<()> {
        Ok(())
    }
    fn set_bits(&self) -> u64;
    /// False for a structure whose set bits are unknown (a program behind `exec:` that
    /// reports none) or are no single fill (a growing filter's sub-filters): its fill is
    /// then shown blank rather than 0.
    fn knows_set_bits(&self) -> bool {
        true
    }
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
            supported: "those whose supports_delete() is true".into(),
        })
    }
    /// The structure's exact expected rate once n distinct keys are in
    /// ([`FilterKind::fpr_exact`] for its own layout). By default that of a plain bit array
    /// of `memory_bits` bits and `hashes` probes, `E[(X/m)^k]` ([`theory::fpr_exact`]).
    fn fpr_exact(&self, n: u64) -> f64 {
        theory::fpr_exact(n, self.memory_bits(), self.hashes())
    }
    /// Bit positions the structure's indexes can reach: all of `memory_bits` unless its
    /// index arithmetic is narrower (`--index-bits`).
    fn addressable_bits(&self) -> u64 {
        self.memory_bits()
    }
    /// Bits of memory the table holds: m for bit arrays, 4m for 4-bit counters, every
    /// sub-filter of a growing filter.
    fn memory_bits(&self) -> u64;
    /// Hashes per key: k (a cuckoo filter's fingerprint bits; a growing filter's slices
    /// summed over its sub-filters).
    fn hashes(&self) -> u32;
    /// Inserts that stored nothing because the structure was full (a cuckoo filter's);
    /// `None` for a structure that does not report them (a Bloom filter never refuses a key).
    fn failed_inserts(&self) -> Option<u64> {
        None
    }
    /// Bits of a perfect hash the structure holds beside its fingerprints (included in
    /// [`Filter::memory_bits`]); `None` for a structure without one.
    fn perfect_hash_bits(&self) -> Option<u64> {
        None
    }
    fn kind(&self) -> FilterKind;
    /// The hash the structure applies to keys, as the `hash` column shows it: bloomlab's
    /// scheme for its own structures (`multiply-shift`), a peer crate's own (`siphash-1-3`).
    fn hash_name(&self) -> AppliedHash;
    /// The plain bit array behind the structure, for the fill and uniformity diagnostics
    /// ([`crate::pipeline::uniformity`]); None (the default) for every other layout.
    fn bit_view(&self) -> Option<&BloomFilter> {
        None
    }
    /// The running program behind `exec:` (its name, seed, memory); None (the default) for
    /// every structure bloomlab or a peer crate keeps.
    fn program(&self) -> Option<&crate::program::Program> {
        None
    }
    /// The vector path that computes the probes, for a structure with vector code; None
    /// (the default) for every other.
    fn vector_path(&self) -> Option<Simd> {
        None
    }
    /// Computes the probes on `simd`, which must run on this CPU ([`Simd::runs_here`]), where
    /// the structure has code for it (a structure without keeps its own): the same bits on
    /// every path. Nothing by default.
    fn take_path(&mut self, _simd: Simd) {}
}

/// Builds a filter of a kind for n keys at a target rate, with a hash seed.
pub type ForRate = fn(&FilterKind, Rate, u64) -> Result<Box<dyn Filter>>;
/// Sizes a structure for n keys at rate ε: `(m, k)`.
pub type Design = fn(n: u64, fpr: f64) -> Result<(u64, u32)>;

/// A structure as the registry knows it: its name, what it can do, and how to build it.
/// Every function receives sizes already checked by [`FilterKind`]: `build` gets the m that
/// `layout` returned, and none is called for a peer this build leaves out.
#[derive(Debug)]
pub struct Structure {
    /// What `--filter` and every table call it: `classic`, `growable-bloom-filter`.
    pub name: &'static str,
    /// One line, for `--help`.
    pub help: &'static str,
    pub origin: Origin,
    /// It can remove a key ([`Filter::delete`]).
    pub supports_delete: bool,
    /// Built once from all its keys (binary fuse): it cannot be sized by m.
    pub is_static: bool,
    /// It takes a hash seed (growable-bloom-filter hashes with a fixed key).
    pub accepts_seed: bool,
    /// The argument it takes after `NAME:`, if any.
    pub argument: Option<Argument>,
    /// The bits actually allocated for a request of m bits and k hashes (whole blocks,
    /// whole buckets); refuses a k the structure cannot take.
    pub layout: fn(m: u64, k: u32) -> Result<u64>,
    /// An empty filter of the shape.
    pub build: fn(&Shape) -> Result<Box<dyn Filter>>,
    /// An empty filter for n keys at a target rate, where the structure has such a
    /// constructor (the peer crates' own, a program's, and bloomlab's classic design for
    /// `audit` and `conform`): what a rate builds for a structure without a `design`
    /// ([`crate::structures::Spec::build`]).
    pub for_rate: Option<ForRate>,
    /// `(m, k)` for n keys at rate at most ε (before `layout`): what a rate builds
    /// ([`crate::structures::Spec::designed`]).
    pub design: Option<Design>,
    /// The exact expected rate for n keys in m bits with k hashes.
    pub fpr_exact: fn(n: u64, m: u64, k: u32) -> f64,
    /// Cache lines ([`CACHE_LINE_BITS`]) a query reads at most, for k hashes: k for a bit
    /// array, one block's lines for a blocked one, two buckets, three fuse slots; `None`
    /// where unknown (a program behind `exec:`).
    pub lines_per_query: Option<fn(k: u32) -> u32>,
    /// The only k the structure takes, its usual one first (split-block: 8, one bit in each
    /// of its 8 words; binary fuse and xor: 8, 16 or 32 fingerprint bits); empty where any
    /// k its `layout` accepts will do ([`FilterKind::k_for`]).
    pub ks: &'static [u32],
    /// It takes index arithmetic: probe scheme, reduction and index width ([`Shape::math`],
    /// `--probes`, `--reduce`, `--index-bits`).
    pub takes_math: bool,
    /// The design it implements, shared by bloomlab's structure and the peer crates of that
    /// design, so that each can be paired with the others ([`FilterKind::of_family`]).
    pub family: Family,
}

impl Structure {
    /// A structure of bloomlab's own with the commonest answers, for `..Structure::new(..)`:
    /// m laid out as asked and any k, a plain bit array's exact rate and lines (k), no
    /// delete, built as keys come, seeded, no argument, no sizing by rate, no index
    /// arithmetic, a design of its own.
    pub const fn new(
        name: &'static str,
        help: &'static str,
        build: fn(&Shape) -> Result<Box<dyn Filter>>,
    ) -> Structure {
        Structure {
            name,
            help,
            origin: Origin::Own,
            supports_delete: false,
            is_static: false,
            accepts_seed: true,
            argument: None,
            layout: |m, _| Ok(m),
            build,
            for_rate: None,
            design: None,
            fpr_exact: theory::fpr_exact,
            lines_per_query: Some(|k| k),
            ks: &[],
            takes_math: false,
            family: Family::Alone,
        }
    }
}

/// A built filter as [`Structure::build`] returns it.
pub fn boxed<F: Filter + 'static>(filter: Result<F>) -> Result<Box<dyn Filter>> {
    Ok(Box::new(filter?))
}

/// Bits of a cache line: 64 bytes.
pub const CACHE_LINE_BITS: u64 = 512;

/// A filter asked for by its size: n keys planned into m bits (already laid out) with k hashes.
#[derive(Clone, Debug, PartialEq)]
pub struct Shape {
    /// The structure, with its argument ([`FilterKind::arg`]).
    pub kind: FilterKind,
    pub n: u64,
    pub m: u64,
    pub k: u32,
    pub hash: HashScheme,
    /// Probe scheme, reduction and index width of a structure that takes them; None: the
    /// scheme's own ([`HashScheme::default_math`]).
    pub math: Option<IndexMath>,
    pub hash_seed: u64,
}

/// A registered structure with its argument: what `--filter` names, and what every row
/// records. Shown, parsed and serialised as `name` or `name:ARG`; two are equal when name
/// and argument are. The lookups by name live with the registry ([`crate::structures`]).
#[derive(Clone)]
pub struct FilterKind {
    structure: &'static Structure,
    arg: Option<Arc<KindArgument>>,
}

/// The argument of a kind, shared by its clones, with what was measured of the filter it
/// names once per parse (a program's speed, for the run-time estimate).
#[derive(Debug)]
struct KindArgument {
    text: Box<str>,
    /// Shared with the kinds [`FilterKind::with_program`] makes of this one: the same program.
    seconds_per_key: Arc<OnceLock<f64>>,
    program: ProgramOptions,
}

impl FilterKind {
    pub const fn of(structure: &'static Structure) -> Self {
        FilterKind {
            structure,
            arg: None,
        }
    }

    pub fn with_arg(structure: &'static Structure, arg: Option<&str>) -> Self {
        FilterKind {
            structure,
            arg: arg.map(|text| {
                Arc::new(KindArgument {
                    text: text.into(),
                    seconds_per_key: Arc::default(),
                    program: ProgramOptions::default(),
                })
            }),
        }
    }

    pub fn structure(&self) -> &'static Structure {
        self.structure
    }

    pub fn name(&self) -> &'static str {
        self.structure.name
    }

    /// The text after `NAME:`, for a structure that takes one.
    pub fn arg(&self) -> Option<&str> {
        self.arg.as_ref().map(|arg| &*arg.text)
    }

    /// The kind with the options its program is started with; a kind without an argument
    /// (bloomlab's structures, the peer crates) takes none and is returned as it is.
    pub fn with_program(self, program: ProgramOptions) -> Self {
        match &self.arg {
            Some(arg) if arg.program != program => FilterKind {
                structure: self.structure,
                arg: Some(Arc::new(KindArgument {
                    text: arg.text.clone(),
                    seconds_per_key: Arc::clone(&arg.seconds_per_key),
                    program,
                })),
            },
            _ => self,
        }
    }

    /// The options the program this kind names is started with ([`Self::with_program`]);
    /// the defaults for any other kind.
    pub fn program(&self) -> ProgramOptions {
        self.arg
            .as_ref()
            .map(|arg| arg.program.clone())
            .unwrap_or_default()
    }

    /// CPU seconds per key of the program this kind names and of bloomlab feeding it
    /// ([`crate::program::probed_seconds_per_key`]), probed the first time it is asked of
    /// this kind, a clone of it or a kind made from it with other program options (parsing
    /// a flag again probes again).
    pub fn seconds_per_key(&self) -> f64 {
        let probe = || {
            crate::program::probed_seconds_per_key(self.arg().unwrap_or_default(), &self.program())
        };
        match &self.arg {
            Some(arg) => *arg.seconds_per_key.get_or_init(probe),
            None => probe(),
        }
    }

    /// The k the structure builds with when asked for k: k itself where it takes k, its
    /// usual k otherwise ([`Structure::ks`]).
    pub fn k_for(&self, k: u32) -> u32 {
        match self.structure.ks {
            [] => k,
            ks if ks.contains(&k) => k,
            [usual, ..] => *usual,
        }
    }

    /// True for a structure that takes index arithmetic ([`Shape::math`]).
    pub fn takes_math(&self) -> bool {
        self.structure.takes_math
    }

    pub fn family(&self) -> Family {
        self.structure.family
    }

    pub fn supports_delete(&self) -> bool {
        self.structure.supports_delete
    }

    /// A static structure, built once from all its keys: it cannot be sized by m.
    pub fn is_static(&self) -> bool {
        self.structure.is_static
    }

    /// A peer crate rather than one of bloomlab's structures.
    pub fn is_peer(&self) -> bool {
        matches!(self.structure.origin, Origin::Peer { .. })
    }

    /// What a program that sizes itself said when probed before work
    /// ([`crate::program::sizes_itself`]): its refusal of a header's m and k. None for
    /// bloomlab's structures and the peer crates, and for a program that takes m and k.
    pub fn refusal_of_shape(&self) -> Result<Option<String>> {
        match (self.is_program(), self.arg()) {
            (true, Some(command)) => crate::program::sizes_itself(command, &self.program()),
            _ => Ok(None),
        }
    }

    /// A program behind the exec protocol (`exec:COMMAND`), sized and keyed by the program.
    pub fn is_program(&self) -> bool {
        matches!(self.structure.origin, Origin::Program)
    }

    /// True for a structure that hashes keys with its own function (a peer crate, a program
    /// behind `exec:`): bloomlab's `--hash` cannot reach it.
    pub fn hashes_keys_itself(&self) -> bool {
        !matches!(self.structure.origin, Origin::Own)
    }

    /// False for a structure that takes no hash seed (growable-bloom-filter hashes with a
    /// fixed key): its runs are all alike, and re-seeding changes nothing.
    pub fn accepts_seed(&self) -> bool {
        self.structure.accepts_seed
    }

    /// Refuses a peer crate this build leaves out.
    pub fn require_built(&self) -> Result<()> {
        match self.structure.origin {
            Origin::Peer {
                feature,
                built: false,
                ..
            } => Err(Error::NotBuilt {
                filter: self.name(),
                feature,
            }),
            _ => Ok(()),
        }
    }

    /// The bit count actually allocated for a request of m: whole blocks for the blocked
    /// structures. Refuses a k the structure cannot take.
    pub fn layout(&self, m: u64, k: u32) -> Result<u64> {
        self.require_built()?;
        (self.structure.layout)(m, k)
    }

    /// The exact expected rate for n keys in m bits with k hashes (NaN for a peer this build
    /// leaves out). Each structure states its formula on its descriptor's function.
    pub fn fpr_exact(&self, n: u64, m: u64, k: u32) -> f64 {
        let by_argument = self.structure.argument.and_then(|a| a.fpr_exact);
        match (self.require_built(), by_argument, self.arg()) {
            (Err(_), _, _) => f64::NAN,
            (Ok(()), Some(fpr_exact), Some(arg)) => fpr_exact(arg, n, m, k),
            (Ok(()), _, _) => (self.structure.fpr_exact)(n, m, k),
        }
    }
}

impl PartialEq for FilterKind {
    fn eq(&self, other: &Self) -> bool {
        self.name() == other.name() && self.arg() == other.arg()
    }
}

impl Eq for FilterKind {}

impl std::fmt::Display for FilterKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.arg() {
            Some(arg) => write!(f, "{}:{arg}", self.name()),
            None => f.write_str(self.name()),
        }
    }
}

impl std::fmt::Debug for FilterKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FilterKind({self})")
    }
}

impl Serialize for FilterKind {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}
