//! The parameter space `advise` searches and its pruning. Every in-process structure (not a
//! program behind `exec:`, whose pipe and not its library would set the lookup time) is
//! sized by its own design for each rate of [`DESIGN_RATES`]; the structures that take a
//! number of hashes are also tried with fewer at the same memory (fewer probes: a faster
//! lookup at a worse rate, the trade the paper prices). The space is then cut by the needs,
//! the budget and the rate bound (each configuration's closed-form rate,
//! [`FilterKind::fpr_exact`]), and ranked by a measured time model ([`TimeModel`]) before the
//! contenders are measured.

use std::collections::BTreeSet;

use crate::error::{Error, Result};
use crate::structures::{Family, FilterKind, Origin};

/// The rates each structure is designed for: 2^-1 to 2^-20, by halves.
pub fn design_rates() -> Vec<f64> {
    (1..=20).map(|i| 0.5f64.powi(i)).collect()
}

/// Most hashes taken off the design's k at the same memory.
pub const FEWER_HASHES: u32 = 3;

/// What the application needs of its filter (`--needs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Needs {
    /// Keys inserted one by one (the default): every dynamic structure.
    Insert,
    /// Keys removed too: the structures that can delete.
    Delete,
    /// More keys than planned: the structures that grow.
    Grow,
    /// The set is known at build time: the static structures too.
    StaticOk,
}

impl Needs {
    pub const ALLOWED: &'static str = "insert, delete, grow, static-ok";

    /// Parses `--needs`, refusing anything else by name.
    pub fn parse(text: &str) -> Result<Needs> {
        match text {
            "insert" => Ok(Needs::Insert),
            "delete" => Ok(Needs::Delete),
            "grow" => Ok(Needs::Grow),
            "static-ok" => Ok(Needs::StaticOk),
            _ => Err(Error::invalid("needs", text, "unknown need", Self::ALLOWED)),
        }
    }

    /// Whether a structure meets the need.
    pub fn met_by(self, kind: FilterKind) -> bool {
        match self {
            Needs::Insert => !kind.is_static(),
            Needs::Delete => kind.supports_delete(),
            Needs::Grow => grows(kind),
            Needs::StaticOk => true,
        }
    }
}

/// Whether the structure grows past its planned n, keeping its rate as keys arrive by adding
/// sub-filters: its descriptor's design family is the scalable one (Almeida et al. 2007).
pub fn grows(kind: FilterKind) -> bool {
    kind.family() == Family::Scalable
}

/// One point of the space: a structure, its table of m bits (as laid out) and k (hashes, or
/// fingerprint bits), with what the closed forms say of it.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    pub kind: FilterKind,
    pub m: u64,
    pub k: u32,
    /// Bytes the structure holds for n keys (a counting filter's counters, the nominal table
    /// of a static one); above [`MEMORY_READ_KEYS`], in proportion to a smaller filter's
    /// until the configuration is built.
    pub memory_bytes: u64,
    /// The structure's exact expected rate at n keys.
    pub fpr_closed_form: f64,
    /// Cache lines a query reads at most.
    pub lines: u32,
}

/// The structures `advise` can consider: built in this binary, in-process, and needing no
/// argument.
pub fn structures() -> Vec<FilterKind> {
    FilterKind::all()
        .into_iter()
        .filter(|k| k.require_built().is_ok())
        .filter(|k| !matches!(k.structure().origin, Origin::Program))
        .collect()
}

/// `(m, k)` for n keys at ε: a structure whose table does not depend on k (a bit array read
/// by k probes: classic, blocked, the crates) takes the classic design at its own layout,
/// its closed-form rate then saying what its layout does to ε (its own design would only
/// move m, and the blocked designs search for seconds); a structure whose k shapes its table
/// (fingerprints, result bits) takes its own design.
fn designed(kind: FilterKind, n: u64, fpr: f64) -> Option<(u64, u32)> {
    let (m, k) = crate::theory::classic_design(n, fpr);
    let (m, k) = match kind.structure().design {
        Some(design) if !table_ignores_k(kind.clone()) => design(n, fpr).ok()?,
        // Without a sizing of its own, a table shaped by k that does not grow (a peer crate's
        // fingerprints) or one built from its keys cannot take the classic m: it would be
        // sized over full.
        None if kind.is_static() || !(table_ignores_k(kind.clone()) || grows(kind.clone())) => {
            return None;
        }
        _ => (m, k),
    };
    Some((kind.layout(m, k).ok()?, k))
}

/// A prime table size at which to ask whether a structure's layout depends on k.
const PROBE_M: u64 = 1_000_003;

/// Whether the structure's table does not depend on k (a bit array read by k probes): it
/// takes k = 7 and k = 8 and lays out [`PROBE_M`] bits alike for both. Asked at a fixed
/// m, not at a design's, whose layouts for two k can agree by chance (an m that is a
/// multiple of both slot widths of a quotient filter).
fn table_ignores_k(kind: FilterKind) -> bool {
    matches!(
        (kind.layout(PROBE_M, 7), kind.layout(PROBE_M, 8)),
        (Ok(a), Ok(b)) if a == b
    )
}

/// Bytes a structure of this shape holds: its empty filter's memory, or for a static
/// structure (which holds nothing before its keys) the nominal table.
fn memory_bytes(kind: FilterKind, n: u64, m: u64, k: u32) -> Option<u64> {
    if kind.is_static() {
        return Some(m.div_ceil(8));
    }
    let filter = kind
        .build(n, m, k, crate::hash::HashScheme::MultiplyShift, 0)
        .ok()?;
    Some(filter.memory_bits().div_ceil(8))
}

/// One point of the space before its memory is read: what the closed forms alone say of it.
#[derive(Clone, Debug, PartialEq)]
pub struct Design {
    pub kind: FilterKind,
    pub m: u64,
    pub k: u32,
    pub fpr_closed_form: f64,
}

/// Every design of every structure meeting `needs`, with its closed-form rate, for n keys:
/// designs at [`design_rates`], and for dynamic structures up to [`FEWER_HASHES`] fewer
/// hashes at the same memory. Closed forms only: nothing is built.
pub fn designs(n: u64, needs: Needs) -> Vec<Design> {
    designs_at(n, needs, &design_rates())
}

/// [`designs`] at the given design rates only (the closed forms of blocked designs take
/// seconds over the whole space at large n; a refusal needs only the space's extremes).
pub fn designs_at(n: u64, needs: Needs, rates: &[f64]) -> Vec<Design> {
    let mut seen = BTreeSet::new();
    let mut designs = Vec::new();
    for kind in structures().into_iter().filter(|k| needs.met_by(k.clone())) {
        for &fpr in rates {
            let Some((m, k)) = designed(kind.clone(), n, fpr) else {
                continue;
            };
            let fewest = if kind.is_static() {
                k
            } else {
                k.saturating_sub(FEWER_HASHES).max(1)
            };
            for k in fewest..=k {
                if seen.insert((kind.name(), m, k))
                    && let Some(design) = design(kind.clone(), n, m, k)
                {
                    designs.push(design);
                }
            }
        }
    }
    designs
}

/// The design of `kind` with m bits and k, when the structure takes it and its closed-form
/// rate is a rate.
fn design(kind: FilterKind, n: u64, m: u64, k: u32) -> Option<Design> {
    let m = kind.layout(m, k).ok()?;
    let fpr = kind.fpr_exact(n, m, k);
    if !(fpr.is_finite() && fpr < 1.0) {
        return None;
    }
    Some(Design {
        kind,
        m,
        k,
        fpr_closed_form: fpr,
    })
}

/// Most keys at which a design's memory is read from its empty filter at n.
pub const MEMORY_READ_KEYS: u64 = 1 << 20;

/// A design's memory: read from its empty filter at n keys, or above
/// [`MEMORY_READ_KEYS`] from the filter of that many keys at the same bits per key, in
/// proportion to the tables (building a thousand empty filters at n = 5·10^7 took three
/// minutes of zeroing); a contender measured reports its own filter's.
fn memory_at(kind: FilterKind, n: u64, m: u64, k: u32) -> Option<u64> {
    if n <= MEMORY_READ_KEYS || kind.is_static() {
        return memory_bytes(kind, n, m, k);
    }
    let ratio = MEMORY_READ_KEYS as f64 / n as f64;
    let small = kind.layout((m as f64 * ratio).ceil() as u64, k).ok()?;
    let bytes = memory_bytes(kind, MEMORY_READ_KEYS, small, k)?;
    Some((bytes as f64 * m as f64 / small as f64).ceil() as u64)
}

/// `c` with its memory read from its own empty filter at n keys, where [`memory_at`] took it
/// in proportion (as it was where the filter cannot be built).
pub fn exact(c: &Config, n: u64) -> Config {
    match n > MEMORY_READ_KEYS && !c.kind.is_static() {
        true => Config {
            memory_bytes: memory_bytes(c.kind.clone(), n, c.m, c.k).unwrap_or(c.memory_bytes),
            ..c.clone()
        },
        false => c.clone(),
    }
}

/// The configuration of a design, with its memory ([`memory_at`]).
fn config(d: &Design, n: u64) -> Option<Config> {
    Some(Config {
        kind: d.kind.clone(),
        m: d.m,
        k: d.k,
        memory_bytes: memory_at(d.kind.clone(), n, d.m, d.k)?,
        fpr_closed_form: d.fpr_closed_form,
        lines: d
            .kind
            .structure()
            .lines_per_query
            .map_or(d.k, |lines| lines(d.k)),
    })
}

/// The flag that set a run's memory budget and the value it was given.
pub type Budget = (&'static str, String);

/// The budget and bound of a run.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Limits {
    /// Most bytes the filter may hold.
    pub memory_bytes: Option<u64>,
    /// Highest closed-form rate allowed.
    pub max_fpr: Option<f64>,
}

impl Limits {
    fn memory_ok(&self, c: &Config) -> bool {
        self.memory_bytes.is_none_or(|b| c.memory_bytes <= b)
    }
}

/// Whether a structure's memory is at least its table, `m / 8` bytes, so that a design
/// whose table alone is over the budget can be left out before its filter is built to read
/// its memory (a test holds every structure of the space to it).
fn memory_at_least_table(d: &Design, bytes: u64) -> bool {
    d.m.div_ceil(8) > bytes
}

/// The configurations within the limits, from the designs: the rate bound and the budget
/// applied to the closed forms and tables first, so that only the designs left are built
/// to read their memory. Refuses limits no configuration meets, naming the smallest budget
/// that would do (or, when the rate bound alone is out of reach, the lowest rate the space
/// reaches). `budget` names the budget's flag and the value it was given.
pub fn within(designs: &[Design], n: u64, limits: &Limits, budget: &Budget) -> Result<Vec<Config>> {
    let rate_ok: Vec<&Design> = designs
        .iter()
        .filter(|d| limits.max_fpr.is_none_or(|e| d.fpr_closed_form <= e))
        .collect();
    if rate_ok.is_empty() {
        return Err(unreachable_rate(designs, n, limits));
    }
    let kept: Vec<Config> = rate_ok
        .iter()
        .filter(|d| {
            limits
                .memory_bytes
                .is_none_or(|b| !memory_at_least_table(d, b))
        })
        .filter_map(|d| config(d, n))
        .filter(|c| limits.memory_ok(c))
        .collect();
    if !kept.is_empty() {
        return Ok(kept);
    }
    let Some(c) = smallest(rate_ok, n) else {
        return Err(Error::invalid(
            budget.0,
            &budget.1,
            format!("no structure of the space can be built for {n} keys"),
            "a smaller --n",
        ));
    };
    let bound = limits
        .max_fpr
        .map_or(String::new(), |e| format!(" at rate <= {e}"));
    let bits = c.memory_bytes as f64 * 8.0 / n as f64;
    Err(Error::invalid(
        budget.0,
        &budget.1,
        format!(
            "no structure holds {n} keys{bound} within this budget; the smallest that does is {} (k = {}) with {} bytes",
            c.kind, c.k, c.memory_bytes
        ),
        format!("at least {} bytes ({bits:.2} bits per key)", c.memory_bytes),
    ))
}

/// The refusal of a rate bound that no design reaches.
fn unreachable_rate(designs: &[Design], n: u64, limits: &Limits) -> Error {
    Error::invalid(
        "max-fpr",
        limits.max_fpr.unwrap_or(f64::NAN),
        format!("no structure in the space reaches this rate at {n} keys"),
        format!(
            "at least the lowest closed-form rate in the space, {:.3e}",
            designs
                .iter()
                .map(|d| d.fpr_closed_form)
                .fold(f64::INFINITY, f64::min)
        ),
    )
}

/// Refuses, from the space's extremes alone, limits that [`within`] would refuse after
/// computing every design: a rate bound below every structure's most precise design, or
/// (without a rate bound) a budget below every structure's least precise one. A
/// structure's rate falls and its memory grows with the precision of its design.
pub fn refuse_early(n: u64, needs: Needs, limits: &Limits, budget: &Budget) -> Result<()> {
    let rates = design_rates();
    if limits.max_fpr.is_some() {
        let precise = designs_at(n, needs, &rates[rates.len() - 1..]);
        let reached = precise
            .iter()
            .any(|d| limits.max_fpr.is_none_or(|e| d.fpr_closed_form <= e));
        return match reached {
            true => Ok(()),
            false => Err(unreachable_rate(&precise, n, limits)),
        };
    }
    if limits.memory_bytes.is_some() {
        within(&designs_at(n, needs, &rates[..1]), n, limits, budget)?;
    }
    Ok(())
}

/// The configuration of least memory among `designs`, building as few as it can: in order
/// of their tables, until a table alone holds more than the least memory found.
fn smallest(mut designs: Vec<&Design>, n: u64) -> Option<Config> {
    designs.sort_by_key(|d| d.m);
    let mut least: Option<Config> = None;
    for d in designs {
        if least
            .as_ref()
            .is_some_and(|c| memory_at_least_table(d, c.memory_bytes))
        {
            break;
        }
        if let Some(c) = config(d, n)
            && least
                .as_ref()
                .is_none_or(|l| c.memory_bytes < l.memory_bytes)
        {
            least = Some(c);
        }
    }
    least
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A structure whose k shapes its table is sized by its own design at every n: the
    /// design's m once coincided for two k of a quotient filter (a multiple of both slot
    /// widths), which then took the classic (m, k) and held n keys in fewer slots than n
    /// (n = 1007 at ε = 2^-5: load 1.15; n = 10^6 at 2^-5: 1.11), so its build refused keys
    /// and, near full, decoded the whole table per insert.
    #[test]
    fn a_structure_whose_k_shapes_its_table_takes_its_own_design() {
        let quotient = FilterKind::named("quotient").unwrap();
        let design = quotient.structure().design.unwrap();
        for n in [1_007, 1_035, 1_070, 1_000_000] {
            for fpr in design_rates() {
                let own = design(n, fpr).ok();
                let own = own.map(|(m, k)| (quotient.layout(m, k).unwrap(), k));
                assert_eq!(designed(quotient.clone(), n, fpr), own, "n {n}, ε {fpr}");
            }
        }
        let classic = FilterKind::named("classic").unwrap();
        assert!(table_ignores_k(classic) && !table_ignores_k(quotient));
    }

    /// A design whose table alone is over the budget is left out before it is built: that
    /// holds only if every structure's memory is at least its table.
    #[test]
    fn every_structure_holds_at_least_its_table() {
        let n = 5_000;
        for d in designs(n, Needs::StaticOk) {
            let c = config(&d, n).unwrap();
            assert!(!memory_at_least_table(&d, c.memory_bytes), "{d:?}: {c:?}");
        }
    }
}
