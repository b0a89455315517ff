//! The measured time model that prunes the space before the contenders are measured: a
//! lookup costs its structure's fixed work (hashing, arithmetic, the branch) plus one
//! cache-line read per line it touches, at the cost of a line read in a table of its size.
//! Both parts are measured in the run: the fixed part from one reference configuration per
//! structure (`t_ref - lines_ref · line(size_ref)`), the line cost by reading random lines,
//! addresses known ahead, in buffers of each size (rounded up to a power of two).
//!
//! `model(c) = fixed(structure of c) + lines(c) · line(size of c)`, at least a tenth of the
//! reference time.

use std::collections::{BTreeMap, BTreeSet};

use super::candidates::Config;
use super::cost::cost_at;
use super::skyline::Tolerance;
use crate::error::Result;

/// The rate whose design is each structure's reference configuration.
pub const REFERENCE_FPR: f64 = 0.01;

/// Most keys a reference holds: a larger n is priced from a reference of this many keys at
/// the same bits per key, its table's line reads measured at the real size (the model's
/// lines term), so that the time model costs seconds at n = 10^8 as at 10^6.
pub const REFERENCE_KEYS_MAX: u64 = 1 << 20;

/// The reference `c`, sized for n keys, scaled to hold `keys` keys at the same bits per
/// key: its table laid out anew, its memory in proportion. `c` itself where n is at most
/// `keys`, or where the structure does not lay out the smaller table.
pub fn scaled(c: &Config, n: u64, keys: u64) -> Config {
    if n <= keys {
        return c.clone();
    }
    let ratio = keys as f64 / n as f64;
    match c.kind.layout((c.m as f64 * ratio).ceil() as u64, c.k) {
        Ok(m) => Config {
            m,
            memory_bytes: (c.memory_bytes as f64 * m as f64 / c.m as f64).ceil() as u64,
            ..c.clone()
        },
        Err(_) => c.clone(),
    }
}

/// One structure's reference: its configuration, measured ns per absent lookup and ns per
/// key of its build (wall time, n keys inserted).
#[derive(Clone, Debug, PartialEq)]
pub struct Reference {
    pub config: Config,
    pub ns: f64,
    pub insert_ns: f64,
}

/// What one structure's reference measured, and the fixed part of its lookup.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Measured {
    fixed: f64,
    lookup: f64,
    insert: f64,
}

/// ns per lookup and per insert predicted for every configuration.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TimeModel {
    /// Per structure name.
    fixed: BTreeMap<&'static str, Measured>,
    /// ns per line read, by log2 of the table's bytes.
    line_ns: BTreeMap<u32, f64>,
}

/// log2 of the power of two at or above `bytes` (at least 4 KiB).
fn size_class(bytes: u64) -> u32 {
    bytes.max(4096).next_power_of_two().trailing_zeros()
}

/// Each structure's reference: the configuration whose closed-form rate is nearest
/// [`REFERENCE_FPR`] (on a log scale), the most hashes among equals.
pub fn references(configs: &[Config]) -> Vec<Config> {
    let mut best: BTreeMap<&'static str, Config> = BTreeMap::new();
    let distance = |c: &Config| (c.fpr_closed_form.ln() - REFERENCE_FPR.ln()).abs();
    for c in configs {
        let entry = best.entry(c.kind.name()).or_insert(c.clone());
        if (distance(c), std::cmp::Reverse(c.k)) < (distance(entry), std::cmp::Reverse(entry.k)) {
            *entry = c.clone();
        }
    }
    best.into_values().collect()
}

impl TimeModel {
    /// The model from measured references and `line_ns(bytes)`, measured once per size class
    /// the configurations reach.
    pub fn calibrate(
        configs: &[Config],
        references: &[Reference],
        mut line_ns: impl FnMut(u64) -> Result<f64>,
    ) -> Result<TimeModel> {
        let mut model = TimeModel::default();
        let classes = configs
            .iter()
            .chain(references.iter().map(|r| &r.config))
            .map(|c| size_class(c.memory_bytes));
        for class in classes {
            if let std::collections::btree_map::Entry::Vacant(e) = model.line_ns.entry(class) {
                e.insert(line_ns(1 << class)?);
            }
        }
        for r in references {
            let fixed = r.ns - r.config.lines as f64 * model.line(&r.config);
            let measured = Measured {
                fixed,
                lookup: r.ns,
                insert: r.insert_ns,
            };
            model.fixed.insert(r.config.kind.name(), measured);
        }
        Ok(model)
    }

    fn line(&self, c: &Config) -> f64 {
        self.line_ns
            .get(&size_class(c.memory_bytes))
            .copied()
            .unwrap_or(0.0)
    }

    /// Predicted ns per lookup of `c`; NaN for a structure without a reference.
    pub fn lookup_ns(&self, c: &Config) -> f64 {
        match self.fixed.get(c.kind.name()) {
            Some(r) => (r.fixed + c.lines as f64 * self.line(c)).max(r.lookup / 10.0),
            None => f64::NAN,
        }
    }

    /// Predicted ns per insert of `c`: its structure's reference build, scaled as its
    /// lookup is (an insert reaches the lines a lookup reads); NaN without a reference.
    pub fn insert_ns(&self, c: &Config) -> f64 {
        match self.fixed.get(c.kind.name()) {
            Some(r) => r.insert * self.lookup_ns(c) / r.lookup,
            None => f64::NAN,
        }
    }

    /// Predicted ns to measure `c` at n keys: one build (timed and counted on the same
    /// filter) and `lookups` lookups (the rate's queries and the timing passes).
    pub fn measuring_ns(&self, c: &Config, n: u64, lookups: u64) -> f64 {
        n as f64 * self.insert_ns(c) + lookups as f64 * self.lookup_ns(c)
    }

    /// Predicted cost per query of `c` at σ and `t_w`, from its closed-form rate.
    pub fn cost(&self, c: &Config, sigma: f64, work_ns: f64) -> f64 {
        let t = self.lookup_ns(c);
        cost_at(sigma, c.fpr_closed_form, t, t, work_ns)
    }
}

/// Of `order`, each structure's least memory for which `tied`, least memory first; then
/// the configurations of those structures just below them in memory.
fn edges(configs: &[Config], order: &[usize], tied: impl Fn(usize) -> bool) -> Vec<usize> {
    let mut by_memory = order.to_vec();
    by_memory.sort_by_key(|&i| (configs[i].memory_bytes, i));
    let mut families = BTreeSet::new();
    let (mut edges, mut below): (Vec<usize>, Vec<usize>) = (Vec::new(), Vec::new());
    for (j, &i) in by_memory.iter().enumerate() {
        let name = configs[i].kind.name();
        if !tied(i) || !families.insert(name) {
            continue;
        }
        edges.push(i);
        below.extend((by_memory[..j].iter().rev()).find(|&&b| configs[b].kind.name() == name));
    }
    below.sort_by_key(|&i| (configs[i].memory_bytes, i));
    edges.extend(below);
    edges
}

/// The contenders in the order measuring time is granted: each structure's least memory
/// predicted within `tolerance` of the best at `t_w` (the first of `work_ns`) and the
/// configuration of that structure just below in memory, least memory first (where the
/// choice falls: a run that can measure few measures these, whatever the noise); the best
/// predicted at `t_w`; each structure's best at each of `work_ns`; then the best predicted
/// overall until `limit`.
pub fn contenders(
    configs: &[Config],
    model: &TimeModel,
    sigma: f64,
    work_ns: &[f64],
    (limit, tolerance): (usize, Tolerance),
) -> Vec<Config> {
    let cost = |i: usize, t_w: f64| model.cost(&configs[i], sigma, t_w);
    let by_cost = |t_w: f64| {
        let mut order: Vec<usize> = (0..configs.len())
            .filter(|&i| !model.lookup_ns(&configs[i]).is_nan())
            .collect();
        order.sort_by(|&a, &b| cost(a, t_w).total_cmp(&cost(b, t_w)));
        order
    };
    let at = by_cost(work_ns[0]);
    let edges = match at.first() {
        Some(&best) => {
            let best = cost(best, work_ns[0]);
            let limit = best + tolerance.width(best);
            edges(configs, &at, |i| cost(i, work_ns[0]) <= limit)
        }
        None => Vec::new(),
    };
    let family_bests = work_ns.iter().flat_map(|&t_w| {
        let mut families = BTreeSet::new();
        by_cost(t_w)
            .into_iter()
            .filter(move |&i| families.insert(configs[i].kind.name()))
    });
    let required = edges.into_iter().chain(at.first().copied());
    let mut order = crate::experiments::distinct(required.chain(family_bests));
    let room = limit.saturating_sub(order.len());
    let rest: Vec<usize> = (at.into_iter())
        .filter(|i| !order.contains(i))
        .take(room)
        .collect();
    order.extend(rest);
    order.into_iter().map(|i| configs[i].clone()).collect()
}
