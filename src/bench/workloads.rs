//! Workloads as RocksDB's `filter_bench` runs them: query mixes of 95% absent and 95%
//! present keys interleaved pseudo-randomly (so the branch predictor cannot learn the
//! answers), a dry run that draws the same queries and hashes them without reading any
//! filter (its time subtracted to give net ns per query beside gross), and a working set of
//! many small filters queried with uniform and skewed access.
//!
//! Query i of a pass is a pure function of the seed and i: whether it is present, which
//! filter it goes to and which key it asks are drawn from `splitmix64`, and the key is made
//! inside the timed loop, in the gross run and in the dry run alike.

use std::hint::black_box;
use std::path::{Path, PathBuf};

use indicatif::ProgressBar;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::round2;
use crate::error::Result;
use crate::hash::{HashFamily, HashScheme};
use crate::keys::KeySource;
use crate::pipeline::fill;
use crate::pipeline::timing::{BenchSize, Passes, interleave, try_time_pass};
use crate::report::{Column, Record, Table};
use crate::structures::{
    ACROSS_GROUP, BATCH, Family, Filter, FilterKind, blocked, classic, contains_across,
};

/// The designs timed: bloomlab's classic and blocked filters.
pub const STRUCTURES: [FilterKind; 2] = [
    FilterKind::of(&classic::STRUCTURE),
    FilterKind::of(&blocked::STRUCTURE),
];

/// Keys in each filter of the working set (RocksDB's `filter_bench` default is 10,000).
pub const KEYS_PER_SMALL_FILTER: u64 = 10_000;

/// Bytes of small filters in the working set: 32 MB (a quick run), 200 MB with `full`.
pub fn working_set_bytes(full: bool) -> u64 {
    if full { 200_000_000 } else { 32_000_000 }
}

/// The one-filter sizes: the bench's ([`crate::pipeline::timing::default_sizes`]), out of cache at
/// m = 2^29 bits (64 MiB, twice the L3 here) unless `full`.
pub fn mix_sizes(full: bool) -> Vec<BenchSize> {
    let mut sizes = crate::pipeline::timing::default_sizes();
    if !full {
        for size in sizes.iter_mut().filter(|size| size.label == "out-of-cache") {
            size.m = 1 << 29;
        }
    }
    sizes
}

/// Which filters the queries go to: a share `hot_queries` of them to the first
/// `hot_filters` share of the filters (in a shuffled order), the rest uniformly to the others.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Access {
    pub name: &'static str,
    pub hot_queries: f64,
    pub hot_filters: f64,
}

/// Every query to any filter with equal chance.
pub const UNIFORM: Access = Access {
    name: "uniform",
    hot_queries: 1.0,
    hot_filters: 1.0,
};

/// The access patterns of the working set: uniform, 80% of queries to 20% of the filters,
/// 50% to 1%.
pub const ACCESS: [Access; 3] = [
    UNIFORM,
    Access {
        name: "80% to 20%",
        hot_queries: 0.8,
        hot_filters: 0.2,
    },
    Access {
        name: "50% to 1%",
        hot_queries: 0.5,
        hot_filters: 0.01,
    },
];

/// Shares of present queries: the two mixes, named by their majority.
pub const MIXES: [(&str, f64); 2] = [("95% absent", 0.05), ("95% present", 0.95)];

/// Everything a workload run needs.
#[derive(Clone, Debug)]
pub struct WorkloadConfig {
    /// Sizes of the single filter the mixes query.
    pub mix_sizes: Vec<BenchSize>,
    /// Bytes of small filters in the working set (0: no working-set rows).
    pub working_set_bytes: u64,
    pub keys_per_small_filter: u64,
    pub k: u32,
    pub bits_per_key: f64,
    /// Queries per pass.
    pub queries: u64,
    /// Passes per figure: the medians are reported.
    pub passes: u32,
    pub seed: u64,
}

impl WorkloadConfig {
    /// The bench's workloads at one k: `size` (`in-cache`, `out-of-cache` or `both`) picks
    /// the mix sizes, and the working set (out of cache) runs unless it is `in-cache`; 10^6
    /// queries a pass, 5 passes, seed 1.
    pub fn for_bench(full: bool, size: &str, k: u32, bits_per_key: f64) -> Self {
        WorkloadConfig {
            mix_sizes: mix_sizes(full)
                .into_iter()
                .filter(|s| size == "both" || size == s.label)
                .collect(),
            working_set_bytes: if size == "in-cache" {
                0
            } else {
                working_set_bytes(full)
            },
            keys_per_small_filter: KEYS_PER_SMALL_FILTER,
            k,
            bits_per_key,
            queries: 1_000_000,
            passes: 5,
            seed: 1,
        }
    }

    /// The same with `queries` a pass and `passes` passes.
    pub fn with_passes(self, queries: u64, passes: u32) -> Self {
        WorkloadConfig {
            queries,
            passes,
            ..self
        }
    }
}

/// `OUT.workloads.EXT` beside `OUT.EXT`: where `bench --full --out` writes the workloads.
pub fn beside(path: &Path) -> PathBuf {
    let stem = path.file_stem().unwrap_or_default().to_string_lossy();
    let name = match path.extension() {
        Some(ext) => format!("{stem}.workloads.{}", ext.to_string_lossy()),
        None => format!("{stem}.workloads"),
    };
    path.with_file_name(name)
}

/// Runs every workload and makes its table, with the notes.
pub fn table(config: &WorkloadConfig, progress: &ProgressBar) -> Result<Table> {
    progress.set_message("workloads");
    let rows = run(config, progress)?;
    let mut table = Table::from_rows("workloads: CPU ns per query, single thread", &rows)?;
    table.notes = notes(config);
    Ok(table)
}

/// One workload on one structure.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WorkloadRow {
    /// The query mix, and for the working set `many filters` before it.
    pub workload: String,
    /// The design: classic or blocked.
    pub structure: String,
    /// in-cache or out-of-cache for one filter; the working set's bytes for many.
    pub size: String,
    /// Which filters the queries go to ([`ACCESS`]); `one filter` for the mixes.
    pub access: String,
    /// Through `contains_many`, a batch at a time, rather than key by key.
    pub batched: bool,
    /// Filters queried.
    pub filters: u64,
    /// Bits in each filter.
    pub m: u64,
    /// Keys in each filter.
    pub n: u64,
    pub k: u32,
    /// CPU ns per query, drawing the query, hashing it and asking the filter (median).
    pub ns_gross: f64,
    /// `ns_gross` less the dry run's median: drawing and hashing the same queries alone.
    pub ns_net: f64,
    /// Absent queries of a pass (the rest are present).
    pub queries_absent: u64,
    /// Positives over the absent queries of a pass.
    pub fpr_measured: f64,
    /// Present queries the filter answered absent: 0 for a correct filter.
    pub present_missed: u64,
}

impl Record for WorkloadRow {
    fn columns() -> Vec<Column> {
        crate::columns![Self;
            "workload" => Plain(workload),
            "structure" => Plain(structure),
            "size" => Plain(size),
            "access" => Plain(access),
            "batched" => Plain(batched),
            "filters" => Plain(filters).wide_only(),
            "m" => Plain(m).wide_only(),
            "k" => Plain(k).wide_only(),
            "ns gross" => Fixed(ns_gross, 1),
            "ns net" => Fixed(ns_net, 1),
            "absent" => Plain(queries_absent).wide_only(),
            "rate" => Percent(fpr_measured),
            "missed" => Plain(present_missed).wide_only(),
        ]
    }
}

use crate::hash::splitmix64 as mix64;

/// `⌊r · n / 2^64⌋`: a uniform draw below n from 64 random bits.
#[inline(always)]
fn below(r: u64, n: u64) -> u64 {
    ((u128::from(r) * u128::from(n)) >> 64) as u64
}

/// A share of 2^32 as a threshold for 32 random bits.
fn threshold(share: f64) -> u64 {
    (share.clamp(0.0, 1.0) * 4_294_967_296.0) as u64
}

/// The queries of a pass. Filter f holds the keys of counters `f·n .. (f+1)·n`; absent
/// query i asks the key of counter `filters·n + i`, never inserted.
struct Queries {
    keys: KeySource,
    seed: u64,
    present_below: u64,
    hot_below: u64,
    hot: u64,
    cold: u64,
    n: u64,
    absent_from: u64,
    /// Filter indexes in a shuffled order, so the hot filters are not neighbours in memory.
    order: Vec<u32>,
}

impl Queries {
    fn new(filters: u64, n: u64, present_share: f64, access: Access, seed: u64) -> Self {
        let hot = ((filters as f64 * access.hot_filters).round() as u64).clamp(1, filters);
        let mut order: Vec<u32> = (0..filters as u32).collect();
        for i in (1..order.len()).rev() {
            order.swap(i, below(mix64(seed ^ i as u64), i as u64 + 1) as usize);
        }
        Queries {
            keys: KeySource::new(seed),
            seed: mix64(seed),
            present_below: threshold(present_share),
            hot_below: threshold(access.hot_queries),
            hot,
            cold: filters - hot,
            n,
            absent_from: filters * n,
            order,
        }
    }

    /// Query i: the filter it goes to, its key, and whether that key was inserted there.
    #[inline(always)]
    fn query(&self, i: u64) -> (usize, u64, bool) {
        let r = mix64(self.seed ^ i);
        let s = mix64(r);
        let pick = if (r >> 32) < self.hot_below || self.cold == 0 {
            below(s, self.hot)
        } else {
            self.hot + below(s, self.cold)
        };
        let filter = self.order[pick as usize] as u64;
        let present = (r & 0xffff_ffff) < self.present_below;
        let counter = if present {
            filter * self.n + below(mix64(s), self.n)
        } else {
            self.absent_from + i
        };
        (filter as usize, self.keys.key(counter), present)
    }

    /// The filters and keys of queries `start..min(start + keys.len(), q)` into `picks`
    /// and `keys`; how many.
    #[inline(always)]
    fn draw_batch(&self, start: u64, q: u64, picks: &mut [u32], keys: &mut [u64]) -> usize {
        let len = (q - start).min(keys.len() as u64) as usize;
        for (j, (pick, key)) in picks.iter_mut().zip(keys.iter_mut()).take(len).enumerate() {
            let (filter, query_key, _) = self.query(start + j as u64);
            (*pick, *key) = (filter as u32, query_key);
        }
        len
    }
}

/// The filters of one workload and what the dry run hashes with.
struct FilterSet {
    filters: Vec<Box<dyn Filter>>,
    /// The dry run's hash: k indexes a key (k + 1 for a blocked filter, its block too),
    /// multiply-shift as the filters use, reduced to m.
    dry_family: HashFamily,
    dry_probes: usize,
}

impl FilterSet {
    fn build(
        kind: FilterKind,
        count: u64,
        n: u64,
        m: u64,
        config: &WorkloadConfig,
    ) -> Result<Self> {
        let keys = KeySource::new(config.seed);
        let mut filters = Vec::with_capacity(count as usize);
        let (hash, k) = (HashScheme::MultiplyShift, config.k);
        for f in 0..count {
            let mut filter = kind.clone().build(n, m, k, hash, config.seed)?;
            fill(
                &mut *filter,
                f * n..(f + 1) * n,
                |c| keys.key(c),
                false,
                &|_| {},
            )?;
            filters.push(filter);
        }
        let dry_probes = k as usize + usize::from(kind.family() != Family::Classic);
        Ok(FilterSet {
            filters,
            dry_family: HashFamily::new(hash, dry_probes as u32, m, config.seed),
            dry_probes,
        })
    }

    #[inline(always)]
    fn dry_hash(&self, key: u64) -> u64 {
        (0..self.dry_probes).fold(0, |acc, i| acc ^ self.dry_family.multiply_shift(i, key))
    }
}

/// What one untimed pass found: present queries missed, absent queries, false positives.
#[derive(Default)]
struct Counts {
    present_missed: u64,
    absent: u64,
    false_positives: u64,
}

fn count(set: &FilterSet, queries: &Queries, q: u64) -> Counts {
    let mut counts = Counts::default();
    for i in 0..q {
        let (f, key, present) = queries.query(i);
        let found = set.filters[f].contains(key);
        if present {
            counts.present_missed += u64::from(!found);
        } else {
            counts.absent += 1;
            counts.false_positives += u64::from(found);
        }
    }
    counts
}

/// One gross pass key by key: each query drawn, hashed and asked.
fn gross_single(set: &FilterSet, queries: &Queries, q: u64) {
    let hits = (0..q)
        .filter(|&i| {
            let (f, key, _) = queries.query(i);
            set.filters[f].contains(key)
        })
        .count();
    black_box(hits);
}

/// One dry pass key by key: each query drawn and hashed only.
fn dry_single(set: &FilterSet, queries: &Queries, q: u64) {
    let acc = (0..q).fold(0u64, |acc, i| acc ^ set.dry_hash(queries.query(i).1));
    black_box(acc);
}

/// The buffers of a batch: which filter each query goes to, its key, the answer.
struct Batch {
    picks: Vec<u32>,
    keys: Vec<u64>,
    answers: Vec<bool>,
}

/// One gross pass a batch at a time, [`BATCH`] queries each: through `contains_many` for one
/// filter, through [`contains_across`] for many.
fn gross_batched(set: &FilterSet, queries: &Queries, q: u64, batch: &mut Batch) -> Result<()> {
    let mut hits = 0usize;
    for start in (0..q).step_by(BATCH) {
        let len = queries.draw_batch(start, q, &mut batch.picks, &mut batch.keys);
        let (keys, answers) = (&batch.keys[..len], &mut batch.answers[..len]);
        match set.filters.as_slice() {
            [filter] => filter.contains_many(keys, answers)?,
            filters => contains_across(filters, &batch.picks[..len], keys, answers)?,
        }
        hits += answers.iter().filter(|&&a| a).count();
    }
    black_box(hits);
    Ok(())
}

/// One dry pass drawing the same batches and hashing them.
fn dry_batched(set: &FilterSet, queries: &Queries, q: u64, batch: &mut Batch) {
    let mut acc = 0u64;
    for start in (0..q).step_by(BATCH) {
        let len = queries.draw_batch(start, q, &mut batch.picks, &mut batch.keys);
        acc = batch.keys[..len]
            .iter()
            .fold(acc, |a, &key| a ^ set.dry_hash(key));
    }
    black_box(acc);
}

/// Gross and dry passes in turn ([`interleave`]), key by key or a batch at a time, so that
/// the machine's other load moves both alike and their difference holds.
fn time_gross_and_dry(
    set: &FilterSet,
    queries: &Queries,
    q: u64,
    passes: u32,
    batched: bool,
) -> Result<(Passes, Passes)> {
    let mut batch = Batch {
        picks: vec![0; BATCH],
        keys: vec![0; BATCH],
        answers: vec![false; BATCH],
    };
    let mut ns = interleave(passes, 2, |i| {
        try_time_pass(q, || {
            match (i, batched) {
                (0, false) => gross_single(set, queries, q),
                (_, false) => dry_single(set, queries, q),
                (0, true) => gross_batched(set, queries, q, &mut batch)?,
                (_, true) => dry_batched(set, queries, q, &mut batch),
            }
            Ok::<_, crate::error::Error>(())
        })
    })?;
    let [gross, dry] = [0, 1].map(|i| Passes::of(std::mem::take(&mut ns[i])));
    Ok((gross, dry))
}

/// The fields of a row that describe what was run.
struct RowLabel<'a> {
    workload: String,
    structure: &'a str,
    size: String,
    access: &'a str,
}

/// Times one mix and access on a set, key by key and batched.
fn time_workload(
    set: &FilterSet,
    label: RowLabel,
    queries: &Queries,
    config: &WorkloadConfig,
) -> Result<Vec<WorkloadRow>> {
    let q = config.queries;
    let counts = count(set, queries, q);
    let mut rows = Vec::new();
    for batched in [false, true] {
        let (gross, dry) = time_gross_and_dry(set, queries, q, config.passes, batched)?;
        rows.push(WorkloadRow {
            workload: label.workload.clone(),
            structure: label.structure.into(),
            size: label.size.clone(),
            access: label.access.into(),
            batched,
            filters: set.filters.len() as u64,
            m: set.filters[0].memory_bits(),
            n: queries.n,
            k: config.k,
            ns_gross: round2(gross.median),
            ns_net: round2(gross.median - dry.median),
            queries_absent: counts.absent,
            fpr_measured: counts.false_positives as f64 / counts.absent.max(1) as f64,
            present_missed: counts.present_missed,
        });
    }
    Ok(rows)
}

/// Every workload: both mixes on one filter of each size, then the working set (the 95%
/// absent mix) under each access pattern, for each structure.
pub fn run(config: &WorkloadConfig, progress: &ProgressBar) -> Result<Vec<WorkloadRow>> {
    let small_m = crate::theory::bits_nearest(config.keys_per_small_filter, config.bits_per_key);
    let small_count = (config.working_set_bytes / (small_m / 8).max(1)).max(1);
    let with_set = config.working_set_bytes > 0;
    progress
        .inc_length((STRUCTURES.len() * (config.mix_sizes.len() + usize::from(with_set))) as u64);
    let mut rows = Vec::new();
    for structure in STRUCTURES {
        for size in &config.mix_sizes {
            let n = crate::theory::keys_at(size.m, config.bits_per_key);
            let set = FilterSet::build(structure.clone(), 1, n, size.m, config)?;
            for (name, present_share) in MIXES {
                let queries = Queries::new(1, n, present_share, UNIFORM, config.seed);
                let label = RowLabel {
                    workload: name.into(),
                    structure: structure.name(),
                    size: size.label.into(),
                    access: "one filter",
                };
                rows.extend(time_workload(&set, label, &queries, config)?);
            }
            progress.inc(1);
        }
        if with_set {
            let n = config.keys_per_small_filter;
            let set = FilterSet::build(structure.clone(), small_count, n, small_m, config)?;
            let bytes = set.filters.iter().map(|f| f.memory_bits() / 8).sum::<u64>();
            for access in ACCESS {
                let queries = Queries::new(small_count, n, MIXES[0].1, access, config.seed);
                let label = RowLabel {
                    workload: format!("many filters, {}", MIXES[0].0),
                    structure: structure.name(),
                    size: format!("{:.0} MB", bytes as f64 / 1e6),
                    access: access.name,
                };
                rows.extend(time_workload(&set, label, &queries, config)?);
            }
            progress.inc(1);
        }
    }
    Ok(rows)
}

/// The reader's notes under the table.
pub fn notes(config: &WorkloadConfig) -> Vec<String> {
    let mut notes = vec![
        format!(
            "queries interleaved pseudo-randomly, {} a pass; CPU ns per query of the bench thread, medians of {} passes",
            config.queries, config.passes
        ),
        "ns net = ns gross less a dry run that draws the same queries and hashes them (k indexes, k + 1 for blocked) without reading a filter".into(),
        "the machine's other load moves the times: compare rows within one run".into(),
    ];
    if config.working_set_bytes > 0 {
        notes.push(format!(
            "many filters: {} keys each, the hot filters a shuffled share; batched, each group of {ACROSS_GROUP} queries has its lines prefetched (in their filters) before any is answered",
            config.keys_per_small_filter
        ));
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The skewed draw sends its share of queries to the hot filters: 80% of 200,000 to the
    /// hot 20%, within 5 binomial standard errors (seed 1), and the present share is 95%.
    #[test]
    fn skewed_access_sends_its_share_to_the_hot_filters() {
        let (filters, q) = (500u64, 200_000u64);
        let queries = Queries::new(filters, 100, 0.95, ACCESS[1], 1);
        let hot: Vec<usize> = queries.order[..queries.hot as usize]
            .iter()
            .map(|&f| f as usize)
            .collect();
        let (mut to_hot, mut present) = (0u64, 0u64);
        for i in 0..q {
            let (f, _, is_present) = queries.query(i);
            to_hot += u64::from(hot.contains(&f));
            present += u64::from(is_present);
        }
        let within = |count: u64, p: f64| {
            let sd = (q as f64 * p * (1.0 - p)).sqrt();
            (count as f64 - q as f64 * p).abs() <= 5.0 * sd
        };
        assert_eq!(queries.hot, 100);
        assert!(within(to_hot, 0.8), "{to_hot} of {q} to the hot filters");
        assert!(within(present, 0.95), "{present} of {q} present");
    }
}
