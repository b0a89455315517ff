//! The measured time model that prunes the space before the contenders are measured: a
//! lookup costs its structure's fixed work (hashing, arithmetic, the branch) plus one
//! cache-line read per line it touches, at the cost of a line read in a table of its size.
//! Both parts are measured in the run: the fixed part from one reference configuration per
//! structure (`t_ref - lines_ref · line(size_ref)`), the line cost by reading random lines,
//! addresses known ahead, in buffers of each size (rounded up to a power of two).
//!
//! `model(c) = fixed(structure of c) + lines(c) · line(size of c)`, at least a tenth of the
//! reference time.

use std::collections::BTreeMap;

use super::candidates::Config;
use super::cost::cost_at;
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

    /// Predicted ns to measure `c` at n keys: two builds (one for the rate, one to time)
    /// and `lookups` lookups (the rate's queries and the timing passes).
    pub fn measuring_ns(&self, c: &Config, n: u64, lookups: u64) -> f64 {
        2.0 * n as f64 * self.insert_ns(c) + lookups as f64 * self.lookup_ns(c)
    }

    /// Predicted cost per query of `c` at σ and `t_w`, from its closed-form rate.
    pub fn cost(&self, c: &Config, sigma: f64, work_ns: f64) -> f64 {
        let t = self.lookup_ns(c);
        cost_at(sigma, c.fpr_closed_form, t, t, work_ns)
    }
}

/// Of `costs` (predicted ns to measure each, in the order time is granted), which are
/// measured within `budget` ns: in order, each that fits in what is left, and the first
/// whatever it costs (a run measures at least one contender).
pub fn within_budget(costs: &[f64], budget: f64) -> Vec<bool> {
    let mut left = budget;
    costs
        .iter()
        .enumerate()
        .map(|(i, &ns)| {
            let fits = i == 0 || ns <= left;
            if fits {
                left -= ns;
            }
            fits
        })
        .collect()
}

/// `contenders` in the order measuring time is granted: each structure's best predicted
/// configuration at `t_w`, cheapest first, then the others by predicted cost.
pub fn by_priority(contenders: &[Config], model: &TimeModel, sigma: f64, t_w: f64) -> Vec<usize> {
    let mut order: Vec<usize> = (0..contenders.len()).collect();
    order.sort_by(|&a, &b| {
        let (a, b) = (&contenders[a], &contenders[b]);
        model
            .cost(a, sigma, t_w)
            .total_cmp(&model.cost(b, sigma, t_w))
    });
    let mut seen = std::collections::BTreeSet::new();
    let (bests, rest): (Vec<usize>, Vec<usize>) = order
        .into_iter()
        .partition(|&i| seen.insert(contenders[i].kind.name()));
    bests.into_iter().chain(rest).collect()
}

/// The contenders, at most `limit` unless the structures alone need more: for each structure,
/// its best predicted configuration at each of `work_ns` (the run's `t_w` first, then the
/// plot's ends), then the best predicted overall until `limit`. In the order of `configs`.
pub fn contenders(
    configs: &[Config],
    model: &TimeModel,
    sigma: f64,
    work_ns: &[f64],
    limit: usize,
) -> Vec<Config> {
    let mut picked = vec![false; configs.len()];
    let by_cost = |t_w: f64| {
        let mut order: Vec<usize> = (0..configs.len())
            .filter(|&i| !model.lookup_ns(&configs[i]).is_nan())
            .collect();
        order.sort_by(|&a, &b| {
            model
                .cost(&configs[a], sigma, t_w)
                .total_cmp(&model.cost(&configs[b], sigma, t_w))
        });
        order
    };
    let mut families = BTreeMap::new();
    for &t_w in work_ns {
        families.clear();
        for i in by_cost(t_w) {
            if families.insert(configs[i].kind.name(), ()).is_none() {
                picked[i] = true;
            }
        }
    }
    let mut count = picked.iter().filter(|&&p| p).count();
    for i in by_cost(work_ns[0]) {
        if count >= limit {
            break;
        }
        if !picked[i] {
            picked[i] = true;
            count += 1;
        }
    }
    (0..configs.len())
        .filter(|&i| picked[i])
        .map(|i| configs[i].clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--contenders 500 --target-seconds 10` measured no contender: each was granted an
    /// equal share of the budget (5 s / 500 = 10 ms), less than any measurement takes. In
    /// order of priority, each that fits in what is left is measured, the first always.
    #[test]
    fn the_budget_is_granted_in_order_not_shared_equally() {
        let costs = vec![40e6; 500];
        let kept = within_budget(&costs, 5e9);
        assert_eq!(kept.iter().filter(|&&k| k).count(), 125);
        assert!(kept[..125].iter().all(|&k| k));
        assert_eq!(within_budget(&[3e9, 4e9, 1e9], 5e9), [true, false, true]);
        assert_eq!(within_budget(&[9e9, 1e9], 5e9), [true, false]);
    }
}
