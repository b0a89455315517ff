//! The bench experiment: ns per key for each of bloomlab's designs beside the peer crates of
//! the same design, each peer on the fastest hasher it supports, at equal m and k and with
//! the same keys; and, measured in the same run, the memory limit: random cache-line reads
//! in a buffer of each size, to which every row's time is compared. The timing itself is
//! [`crate::pipeline::timing`]'s.

use indicatif::ProgressBar;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::hash::{HashScheme, Simd};
use crate::keys::KeySource;
pub use crate::pipeline::timing::{BenchSize, Subject, default_sizes};
use crate::pipeline::timing::{
    LineBuffer, LineRate, Operation, PassKeys, Passes, fill, insert_keys, interleave,
    reinsert_is_idempotent, time_operation, time_pass,
};
use crate::report::{Column, Record};
use crate::structures::{Family, Filter, FilterKind, Structure};
use notes::notes;
use placement::placements;

pub mod advise_coverage;
pub mod estimates;
pub mod machine;
mod notes;
mod placement;
pub mod tables;
mod time_rate;
pub mod workloads;

pub use time_rate::{TimeRateRow, time_versus_rate};

/// Builds a peer's filter of m bits and k hashes from a hash seed.
pub type Build = fn(m: u64, k: u32, seed: u64) -> Result<Box<dyn Filter>>;

/// How a contender's filter is made: a registered bloomlab structure on one of bloomlab's
/// hash schemes, or a peer's builder.
#[derive(Clone)]
pub enum Maker {
    Own(FilterKind, HashScheme),
    Peer(Build),
}

/// An implementation timed: bloomlab's or a peer crate's, of one design.
#[derive(Clone)]
pub struct Contender {
    /// The design, as bloomlab's structure of it: classic, blocked, split-block.
    pub design: FilterKind,
    /// Whose implementation: `bloomlab`, or the crate's name.
    pub peer: &'static str,
    pub maker: Maker,
    /// Why it is timed out of cache only with `--full` (a slow peer only lengthens the
    /// run); `None`: always.
    pub in_cache_only: Option<&'static str>,
}

impl Contender {
    /// An empty filter of m bits and k hashes for n keys, bloomlab's on vector path `simd`
    /// where it has code for it ([`Filter::take_path`]; none: the widest this CPU runs).
    pub fn build(
        &self,
        m: u64,
        k: u32,
        n: u64,
        seed: u64,
        simd: Option<Simd>,
    ) -> Result<Box<dyn Filter>> {
        let mut filter = match &self.maker {
            Maker::Own(kind, hash) => kind.build(n, m, k, *hash, seed)?,
            Maker::Peer(build) => build(m, k, seed)?,
        };
        if let Some(simd) = simd {
            filter.take_path(simd);
        }
        Ok(filter)
    }

    /// The vector path a filter of this contender takes: its [`Filter::vector_path`], else
    /// `scalar` for bloomlab's and the crate's own for a peer's.
    fn path(&self, filter: &dyn Filter) -> &'static str {
        match (filter.vector_path(), &self.maker) {
            (Some(simd), _) => simd.name(),
            (None, Maker::Own(..)) => Simd::Scalar.name(),
            (None, Maker::Peer(_)) => "the crate's",
        }
    }
}

/// bloomlab's own implementation of a design, on a hash scheme.
fn own(design: &'static Structure, hash: HashScheme) -> Contender {
    let design = FilterKind::of(design);
    Contender {
        design: design.clone(),
        peer: "bloomlab",
        maker: Maker::Own(design, hash),
        in_cache_only: None,
    }
}

/// A peer crate's implementation, paired with bloomlab's structure of the design its
/// descriptor declares and named as its descriptor names the crate.
#[cfg(feature = "peers")]
fn peer(
    structure: &'static Structure,
    build: Build,
    in_cache_only: Option<&'static str>,
) -> Option<Contender> {
    Some(Contender {
        design: FilterKind::of_family(structure.family)?,
        peer: structure.origin.about()?.name,
        maker: Maker::Peer(build),
        in_cache_only,
    })
}

/// A design bloomlab times: its structure and the hash schemes it is timed on. One line each
/// in [`DESIGNS`].
type Design = (&'static Structure, &'static [HashScheme]);

/// Multiply-shift alone, and with double hashing (one pair per key, then an add per probe:
/// for classic the derivation fastbloom uses, so that like meets like).
const MS: &[HashScheme] = &[HashScheme::MultiplyShift];
const MS_DH: &[HashScheme] = &[HashScheme::MultiplyShift, HashScheme::DoubleHashing];

/// bloomlab's designs in the bench, in the order of its table: classic and every
/// cache-friendly one.
static DESIGNS: [Design; 6] = {
    use crate::structures::{
        blocked, blocked_1024, classic, register_blocked, sectorized, split_block,
    };
    [
        (&classic::STRUCTURE, MS_DH),
        (&blocked::STRUCTURE, MS_DH),
        (&split_block::STRUCTURE, MS),
        (&blocked_1024::STRUCTURE, MS),
        (&register_blocked::STRUCTURE, MS),
        (&sectorized::STRUCTURE, MS),
    ]
};

/// Every contender: bloomlab's [`DESIGNS`] on each of their hashes and, with the `peers`
/// feature, the crates of the classic design: fastbloom on foldhash, bloomfilter on
/// SipHash-1-3 (the only hash it takes); and of the split-block design: sbbf-rs, timed with
/// its hashing, bloomlab's multiply-shift. No Rust crate implements the other designs
/// (fastbloom probes k words anywhere in its table), so those rows have no peer ratio
/// ([`NO_BLOCKED_PEER`]).
pub fn contenders() -> Vec<Contender> {
    #[cfg_attr(
        not(feature = "peers"),
        expect(unused_mut, reason = "peers are pushed below")
    )]
    let mut all: Vec<Contender> = DESIGNS
        .iter()
        .flat_map(|&(design, hashes)| hashes.iter().map(move |&hash| own(design, hash)))
        .collect();
    #[cfg(feature = "peers")]
    {
        use crate::structures::peers::{Bloomfilter, Sbbf, bloomfilter, fastbloom, sbbf};
        all.extend(peer(&fastbloom::STRUCTURE, fastbloom::fastest, None));
        all.extend(peer(
            &bloomfilter::STRUCTURE,
            |m, k, seed| Ok(Box::new(Bloomfilter::by_shape(m, k, seed)?)),
            Some("SipHash only, never the fastest peer"),
        ));
        all.extend(peer(
            &sbbf::STRUCTURE,
            |m, k, seed| Ok(Box::new(Sbbf::by_shape(m, k, seed)?)),
            None,
        ));
    }
    all
}

/// The k a design is timed at when asked for k: its own ([`FilterKind::k_for`]), then the
/// least k' ≥ it that its layout takes (cache-sector's k is a multiple of its 2 groups).
pub fn bench_k(design: &FilterKind, k: u32) -> u32 {
    let k = design.k_for(k);
    (k..k.saturating_add(64))
        .find(|&k| design.layout(1 << 20, k).is_ok())
        .unwrap_or(k)
}

/// Why the blocked rows have no peer ratio.
pub const NO_BLOCKED_PEER: &str = "no Rust crate implements the blocked, blocked-1024, reg-blocked or cache-sector designs (fastbloom probes k words anywhere in its table, a classic filter), so they have no peer ratio";

/// Cache lines a key must touch: the lines a query of the design reads
/// ([`Structure::lines_per_query`]): a classic filter's k probes on insert and on a present
/// query, and on an absent query `Σ_{i<k} fill^i` (probe i is read only if the i before it
/// were set); a blocked design's block, whatever the operation (512 bits a line).
pub fn lines_per_key(design: &FilterKind, operation: Operation, k: u32, fill: f64) -> f64 {
    let lines = design
        .structure()
        .lines_per_query
        .map_or(1, |lines| lines(k));
    match (design.family(), operation) {
        (Family::Classic, Operation::Absent) => (0..lines).map(|i| fill.powi(i as i32)).sum(),
        _ => f64::from(lines),
    }
}

/// Everything a timing run needs.
#[derive(Clone, Debug)]
pub struct BenchConfig {
    pub sizes: Vec<BenchSize>,
    pub ks: Vec<u32>,
    pub bits_per_key: f64,
    /// Keys per pass.
    pub queries: u64,
    /// Passes per figure: the median is reported, with the fastest and slowest.
    pub passes: u32,
    pub seed: u64,
    /// The long sweep: every contender at every size.
    pub full: bool,
    /// The vector path bloomlab's filters are forced onto (`--simd`); none: the widest
    /// this CPU runs.
    pub simd: Option<Simd>,
}

/// One contender, one operation, at one size and k.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct BenchRow {
    /// The design: classic, blocked, split-block, blocked-1024, reg-blocked, cache-sector.
    pub structure: String,
    /// Whose implementation: bloomlab, or the peer crate's name.
    pub peer: String,
    /// The hash the implementation applies to keys (a peer on its fastest).
    pub hash: String,
    /// insert (the keys again, into the filled filter), absent or present (queries).
    pub operation: String,
    /// in-cache or out-of-cache.
    pub size: String,
    /// Bits in the filter.
    pub m: u64,
    /// Keys in the filter: `round(m / bits_per_key)`.
    pub n: u64,
    /// Hashes per key.
    pub k: u32,
    /// Through the batch calls (`insert_many`, `contains_many`) rather than key by key.
    pub batched: bool,
    /// CPU ns per key, the median of the passes.
    pub ns_per_key: f64,
    /// The fastest pass.
    pub ns_min: f64,
    /// The slowest pass.
    pub ns_max: f64,
    /// The contender's false-positive rate over the absent keys: what its speed buys.
    pub fpr_measured: f64,
    /// Cache lines a key must touch ([`lines_per_key`]).
    pub lines_per_key: f64,
    /// ns per random cache-line read, each waiting for the last, in a buffer of this size.
    pub ns_line_dependent: f64,
    /// ns per random cache-line read, prefetched in groups, in a buffer of this size.
    pub ns_line_independent: f64,
    /// `ns_per_key` over the fastest peer's of the same design, operation, size and k
    /// (none for a design no peer implements).
    pub ratio_to_fastest_peer: Option<f64>,
    /// `ns_per_key / (lines_per_key · ns_line_independent)`: 1 is the memory limit.
    pub ratio_to_limit: f64,
    /// The vector path that computed the row's probes ([`Simd`]): `scalar` for bloomlab's
    /// code without vector lanes, `the crate's` for a peer.
    pub path: String,
    /// The machine that timed the row ([`machine::Machine::describe`]).
    pub cpu: String,
}

impl Record for BenchRow {
    fn columns() -> Vec<Column> {
        crate::columns![Self;
            "structure" => Plain(structure),
            "peer" => Plain(peer),
            "hash" => Plain(hash),
            "op" => Plain(operation),
            "size" => Plain(size),
            "m" => Plain(m).wide_only(),
            "k" => Plain(k),
            "batched" => Plain(batched),
            "path" => Plain(path),
            "ns/key" => Fixed(ns_per_key, 1),
            "min" => Fixed(ns_min, 1),
            "max" => Fixed(ns_max, 1),
            "rate" => Percent(fpr_measured),
            "lines" => Fixed(lines_per_key, 2),
            "× fastest peer" => Fixed(ratio_to_fastest_peer, 2),
            "× limit" => Fixed(ratio_to_limit, 2),
            "cpu" => Plain(cpu).wide_only(),
        ]
    }
}

/// What one size needs: the keys, n, and the buffer its limit is read in.
struct SizeRun<'a> {
    size: &'a BenchSize,
    n: u64,
    keys: KeySource,
    pass_keys: PassKeys,
    lines: LineBuffer,
    /// [`BenchConfig::simd`].
    simd: Option<Simd>,
    /// [`BenchRow::cpu`].
    cpu: String,
}

/// A contender's filter at one size and k, filled, with the ns per key of each pass of each
/// operation it is timed at.
struct Entrant<'c> {
    contender: &'c Contender,
    /// Identical filled filters, each its own allocation ([`placements`]); pass r of a slot
    /// times `filters[r % len]`.
    filters: Vec<Box<dyn Filter>>,
    /// Passes taken so far by each slot.
    taken: Vec<usize>,
    k: u32,
    fpr_measured: f64,
    /// Set bits over memory bits once filled.
    filled: f64,
    /// `(operation, batched, ns per key of each pass)`.
    passes: Vec<(Operation, bool, Vec<f64>)>,
}

impl<'c> Entrant<'c> {
    /// The contender's filter built and filled, in as many copies as [`placements`] allows
    /// for `rounds` passes. Key by key, and for bloomlab's own also batched, for each
    /// operation.
    fn enter(
        contender: &'c Contender,
        k: u32,
        run: &SizeRun,
        rounds: u32,
        seed: u64,
    ) -> Result<Self> {
        let k = bench_k(&contender.design, k);
        let mut filter = contender.build(run.size.m, k, run.n, seed, run.simd)?;
        if !reinsert_is_idempotent(&*filter) {
            return Err(crate::error::Error::Unsupported {
                filter: filter.kind().name(),
                operation: "bench (its inserts are timed again into the filled filter)",
                supported: "bit arrays".into(),
            });
        }
        let fpr_measured = fill(&mut *filter, &run.keys, run.n, &run.pass_keys)?;
        let filled = filter.set_bits() as f64 / filter.memory_bits() as f64;
        let copies = placements(filter.memory_bits(), rounds);
        let mut filters = vec![filter];
        for _ in 1..copies {
            let mut copy = contender.build(run.size.m, k, run.n, seed, run.simd)?;
            insert_keys(&mut *copy, &run.keys, run.n)?;
            filters.push(copy);
        }
        let modes: &[bool] = if contender.peer == "bloomlab" {
            &[false, true]
        } else {
            &[false]
        };
        let passes: Vec<_> = Operation::ALL
            .iter()
            .flat_map(|&operation| modes.iter().map(move |&b| (operation, b, Vec::new())))
            .collect();
        Ok(Entrant {
            contender,
            taken: vec![0; passes.len()],
            filters,
            k,
            fpr_measured,
            filled,
            passes,
        })
    }

    /// The copy the next pass of `slot` times: pass r takes copy `r % copies`.
    fn next_copy(&mut self, slot: usize) -> usize {
        let copy = self.taken[slot] % self.filters.len();
        self.taken[slot] += 1;
        copy
    }

    /// ns per key of one pass of the operation and mode of `slot`, on its next copy.
    fn time_pass(&mut self, slot: usize, pass_keys: &PassKeys) -> Result<f64> {
        let (operation, batched, _) = self.passes[slot];
        let copy = self.next_copy(slot);
        time_operation(&mut *self.filters[copy], operation, batched, pass_keys, 1).map(|p| p.median)
    }

    /// A row per operation and mode, its limit ratio left for [`set_limit`].
    fn rows(&self, run: &SizeRun) -> Vec<BenchRow> {
        let (contender, k) = (self.contender, self.k);
        self.passes
            .iter()
            .map(|(operation, batched, ns)| {
                let ns = Passes::of(ns.clone());
                BenchRow {
                    structure: contender.design.name().into(),
                    peer: contender.peer.into(),
                    hash: self.filters[0].hash_name().to_string(),
                    operation: operation.name().into(),
                    size: run.size.label.into(),
                    m: self.filters[0].memory_bits(),
                    n: run.n,
                    k,
                    batched: *batched,
                    ns_per_key: round2(ns.median),
                    ns_min: round2(ns.low),
                    ns_max: round2(ns.high),
                    fpr_measured: self.fpr_measured,
                    lines_per_key: lines_per_key(&contender.design, *operation, k, self.filled),
                    ns_line_dependent: f64::NAN,
                    ns_line_independent: f64::NAN,
                    ratio_to_fastest_peer: None,
                    ratio_to_limit: f64::NAN,
                    path: contender.path(&*self.filters[0]).into(),
                    cpu: run.cpu.clone(),
                }
            })
            .collect()
    }
}

/// Times the contenders of one design (bloomlab's and its peers) at one size and k pass by
/// pass in turn, a pass of the size's line reads in each round, so that whatever else the
/// machine does meanwhile slows them alike and their ratios hold. Only one design's filters
/// are held at once. The line reads' ns go to `limit_passes`.
fn time_design(
    design: &[&Contender],
    k: u32,
    run: &SizeRun,
    config: &BenchConfig,
    limit_passes: &mut [Vec<f64>; 2],
) -> Result<Vec<BenchRow>> {
    let mut entrants = design
        .iter()
        .map(|contender| Entrant::enter(contender, k, run, config.passes, config.seed))
        .collect::<Result<Vec<_>>>()?;
    let slots: Vec<(usize, usize)> = entrants
        .iter()
        .enumerate()
        .flat_map(|(e, entrant)| (0..entrant.passes.len()).map(move |slot| (e, slot)))
        .collect();
    let reads = config.queries;
    let mut ns = interleave(config.passes, slots.len() + 2, |i| match slots.get(i) {
        Some(&(e, slot)) => entrants[e].time_pass(slot, &run.pass_keys),
        None if i == slots.len() => Ok(time_pass(reads, || run.lines.read_dependent(reads))),
        None => Ok(time_pass(reads, || run.lines.read_independent(0, reads))),
    })?;
    for (limit, ns) in limit_passes.iter_mut().zip(ns.split_off(slots.len())) {
        limit.extend(ns);
    }
    for (&(e, slot), ns) in slots.iter().zip(ns) {
        entrants[e].passes[slot].2 = ns;
    }
    Ok(entrants.iter().flat_map(|e| e.rows(run)).collect())
}

/// Every row's line times and ratio to the limit.
fn set_limit(rows: &mut [BenchRow], limit: &LineRate) {
    for row in rows {
        row.ns_line_dependent = round2(limit.dependent_ns);
        row.ns_line_independent = round2(limit.independent_ns);
        row.ratio_to_limit = round2(row.ns_per_key / (row.lines_per_key * limit.independent_ns));
    }
}

/// Sets every row's ratio to the fastest peer row of its design, operation, size and k.
fn set_peer_ratios(rows: &mut [BenchRow]) {
    let same = |a: &BenchRow, b: &BenchRow| {
        (&a.structure, &a.operation, &a.size, a.k) == (&b.structure, &b.operation, &b.size, b.k)
    };
    let fastest: Vec<Option<f64>> = rows
        .iter()
        .map(|row| {
            rows.iter()
                .filter(|peer| peer.peer != "bloomlab" && same(row, peer))
                .map(|peer| peer.ns_per_key)
                .reduce(f64::min)
        })
        .collect();
    for (row, fastest) in rows.iter_mut().zip(fastest) {
        row.ratio_to_fastest_peer = fastest.map(|f| round2(row.ns_per_key / f));
    }
}

/// Times every contender at every size and k, a design at a time ([`time_design`]); each
/// size's limit is the median of the line-read passes taken among them.
pub fn run(config: &BenchConfig, progress: &ProgressBar) -> Result<(Vec<BenchRow>, Vec<LineRate>)> {
    let contenders = contenders();
    let designs = crate::experiments::distinct(contenders.iter().map(|c| c.design.clone()));
    progress.inc_length((config.sizes.len() * config.ks.len() * contenders.len()) as u64);
    let (mut rows, mut limits) = (Vec::new(), Vec::new());
    let cpu = machine::Machine::here().describe();
    for size in &config.sizes {
        let n = crate::theory::keys_at(size.m, config.bits_per_key);
        let keys = KeySource::new(config.seed);
        let run = SizeRun {
            size,
            n,
            pass_keys: PassKeys::new(&keys, n, config.queries),
            keys,
            lines: LineBuffer::new(size.m / 8, config.seed)?,
            simd: config.simd,
            cpu: cpu.clone(),
        };
        let mut limit_passes = [Vec::new(), Vec::new()];
        let first_row = rows.len();
        for (i, &k) in config.ks.iter().enumerate() {
            for structure in &designs {
                let of_design = contenders.iter().filter(|c| &c.design == structure);
                let design: Vec<&Contender> = of_design
                    .clone()
                    .filter(|c| {
                        let at = |k| bench_k(&c.design, k);
                        let fixed_k_again = config.ks[..i].iter().any(|&e| at(e) == at(k));
                        let skipped = size.label == "out-of-cache"
                            && !config.full
                            && c.in_cache_only.is_some();
                        !fixed_k_again && !skipped
                    })
                    .collect();
                if !design.is_empty() {
                    rows.extend(time_design(&design, k, &run, config, &mut limit_passes)?);
                }
                progress.inc(of_design.count() as u64);
            }
        }
        let [dependent, independent] = limit_passes.map(Passes::of);
        let limit = run.lines.rate(dependent, independent);
        set_limit(&mut rows[first_row..], &limit);
        limits.push(limit);
    }
    set_peer_ratios(&mut rows);
    Ok((rows, limits))
}

/// `x` to two decimals, as the tables print ns.
pub(crate) fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An in-cache filter gets a copy per pass, each filled like the first, and each slot's
    /// passes go through the copies in turn; a filter of 2^30 bits gets one copy.
    #[test]
    fn in_cache_passes_time_copies_of_the_filter_in_turn() {
        assert_eq!(placements(1 << 30, 5), 1);
        let size = &default_sizes()[0];
        let (n, seed) = (4000, 1);
        let keys = KeySource::new(seed);
        let run = SizeRun {
            size,
            n,
            pass_keys: PassKeys::new(&keys, n, 1000),
            keys,
            lines: LineBuffer::new(size.m / 8, seed).unwrap(),
            simd: None,
            cpu: String::new(),
        };
        let all = contenders();
        let mut entrant = Entrant::enter(&all[0], 7, &run, 3, seed).unwrap();
        assert_eq!(entrant.filters.len(), 3);
        let bits: Vec<u64> = entrant.filters.iter().map(|f| f.set_bits()).collect();
        assert!(
            bits[0] > 0 && bits.iter().all(|&b| b == bits[0]),
            "{bits:?}"
        );
        let copies: Vec<usize> = (0..4).map(|_| entrant.next_copy(0)).collect();
        assert_eq!(copies, [0, 1, 2, 0]);
        assert_eq!(
            entrant.next_copy(1),
            0,
            "each slot goes through the copies itself"
        );
        entrant.time_pass(0, &run.pass_keys).unwrap();
        assert_eq!(entrant.taken[0], 5);
    }
}
