//! Calibration of the statistics on real filters: the crate's classic filter, many hash (and
//! key) seeds, small sizes. Every test is deterministic (fixed seeds) and states its bound;
//! each prints what it measured (`cargo test --release --test it calibration:: -- --nocapture`).
//!
//! Where a bound is a count of false alarms among N independent trials, it is the 99.9th
//! percentile of `Binomial(N, α)`: a correct test exceeds it with probability below 0.001.

use bloomlab::pipeline::measure;
use bloomlab::pipeline::measurement::{Measurement, Setup, Spread};
use bloomlab::stats::{
    CountDistribution, averaged_ratio_to_constant, binomial_pmf, binomial_two_sided_p,
    binomial_upper_tail, clopper_pearson, count_goodness_of_fit, detectable_excess, min_set,
    paired_ratio_interval, queries_to_detect, ratio_interval, ratio_to_constant,
    replicates_to_order, stouffer, wilson_interval, z_averaged, z_score,
};
use bloomlab::structures::{FilterKind, Spec};
use bloomlab::theory::{fpr_between_filter_variance, fpr_exact, fpr_moments};
use bloomlab::{BloomFilter, HashScheme, KeySource};

/// One real filter: m bits, k hashes from `hash_seed`, n keys from `key_seed`, q absent
/// queries. Returns (fill^k from its own bits, false positives).
fn run_filter(
    (n, m, k): (u64, u64, u32),
    scheme: HashScheme,
    (key_seed, hash_seed): (u64, u64),
    queries: u64,
) -> (f64, u64) {
    let keys = KeySource::new(key_seed);
    let mut filter = BloomFilter::new(m, k, scheme, hash_seed).expect("a valid shape");
    keys.inserted(n).for_each(|key| filter.insert(key));
    let count = keys
        .absent(n, queries)
        .filter(|&key| filter.contains(key))
        .count() as u64;
    (filter.fill().powi(k as i32), count)
}

/// The largest number of false alarms among `trials` at level `alpha` that a correct test
/// exceeds with probability at most 0.001.
fn allowance(trials: u64, alpha: f64) -> u64 {
    (0..=trials)
        .find(|&c| binomial_upper_tail(c + 1, trials, alpha) <= 1e-3)
        .unwrap_or(trials)
}

fn mean_sd(xs: &[f64]) -> (f64, f64) {
    let t = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / t;
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (t - 1.0);
    (mean, var.sqrt())
}

/// z against `fpr_exact` with the between-filter variance, over 300 filters that differ in
/// their hash seed: its sd must lie in [0.85, 1.15] (the sd of 300 normal draws has sd 0.041,
/// so this is ±3.7 of it), its mean within ±0.25 (±4.3 standard errors), and at most 3 of the
/// 300 may pass |z| > 4 (a normal z does so with probability 6e-5).
fn check_z_spread(shape: (u64, u64, u32), queries: u64) {
    let (n, m, k) = shape;
    let exact = fpr_exact(n, m, k);
    let var = fpr_between_filter_variance(n, m, k);
    let (mut zs, mut binomial_zs) = (Vec::new(), Vec::new());
    for hash_seed in 0..300 {
        let (_, count) = run_filter(shape, HashScheme::MultiplyShift, (7, hash_seed), queries);
        zs.push(z_averaged(count, queries, exact, var));
        binomial_zs.push(z_score(count as f64 / queries as f64, exact, queries));
    }
    let old_wild = binomial_zs.iter().filter(|z| z.abs() > 4.0).count();
    eprintln!(
        "binomial only n={n} m={m} k={k} q={queries}: sd {:.3}, |z|>4 in {old_wild}/300",
        mean_sd(&binomial_zs).1
    );
    assert_unit_spread(&format!("z_exact n={n} m={m} k={k} q={queries}"), &zs);
}

/// The bounds of [`check_z_spread`] on 300 z-scores.
fn assert_unit_spread(label: &str, zs: &[f64]) {
    let (mean, sd) = mean_sd(zs);
    let wild = zs.iter().filter(|z| z.abs() > 4.0).count();
    eprintln!(
        "{label}: mean {mean:.3} sd {sd:.3}, |z|>4 in {wild}/{}",
        zs.len()
    );
    assert!((0.85..=1.15).contains(&sd), "{label}: sd {sd}");
    assert!(mean.abs() <= 0.25, "{label}: mean {mean}");
    assert!(wild <= 3, "{label}: {wild} of 300 with |z| > 4");
}

/// The printed row (`measure`) carries the calibrated z-scores: over 300 hash seeds at 2 bits
/// per key, k = 4, `z_exact`, `z_classic` and `z_fill_expected` each meet the bounds of
/// [`check_z_spread`] (the predictions differ from the exact rate by under 0.1 of a standard
/// error here), and its Clopper–Pearson interval is the one of [`clopper_pearson`].
#[test]
fn measured_rows_carry_the_between_filter_variance() {
    let rows: Vec<_> = (0..300)
        .map(|hash_seed| {
            let setup = Setup::new(
                Spec::shape(FilterKind::CLASSIC, 1_000, 4)
                    .hashed(HashScheme::MultiplyShift, hash_seed),
                500,
                10_000,
                7,
            );
            measure("calibration", &setup).expect("a valid setup")
        })
        .collect();
    let column = |z: fn(&Measurement) -> f64| rows.iter().map(z).collect::<Vec<_>>();
    assert_unit_spread("row z_exact", &column(|r| r.z_exact));
    assert_unit_spread("row z_classic", &column(|r| r.z_classic));
    assert_unit_spread("row z_fill_expected", &column(|r| r.z_fill_expected));
    let row = &rows[0];
    let interval = clopper_pearson(row.false_positives, row.queries, 0.95);
    assert_eq!((row.ci_low, row.ci_high), interval);
}

#[test]
fn z_against_the_exact_rate_has_unit_spread_at_two_bits_per_key() {
    check_z_spread((500, 1_000, 4), 10_000);
}

#[test]
fn z_against_the_exact_rate_has_unit_spread_at_ten_bits_per_key() {
    check_z_spread((500, 5_000, 7), 20_000);
}

/// The exact bits check (two-sided binomial p against the filter's own fill^k) at α = 0.01,
/// over 2000 filters at 10 bits per key, k = 7, with about 1, 5 and 50 expected false
/// positives: false alarms at most the 99.9th percentile of Binomial(2000, 0.01), 34.
#[test]
fn exact_bits_check_holds_its_level_at_few_false_positives() {
    const FILTERS: u64 = 2_000;
    const ALPHA: f64 = 0.01;
    let shape = (500, 5_000, 7);
    let rate = fpr_exact(500, 5_000, 7);
    let bound = allowance(FILTERS, ALPHA);
    for expected in [1.0, 5.0, 50.0] {
        let queries = (expected / rate).round() as u64;
        let (mut alarms, mut normal_alarms) = (0, 0);
        for seed in 0..FILTERS {
            let (own, count) = run_filter(shape, HashScheme::MultiplyShift, (seed, seed), queries);
            alarms += u64::from(binomial_two_sided_p(count, queries, own) < ALPHA);
            let z = z_score(count as f64 / queries as f64, own, queries);
            normal_alarms += u64::from(z.abs() > 2.575_829_303_549);
        }
        eprintln!(
            "bits check, q·p = {expected}: exact {alarms}/{FILTERS}, normal tail \
             {normal_alarms}/{FILTERS} at α = {ALPHA} (bound {bound})"
        );
        assert!(alarms <= bound, "q·p = {expected}: {alarms} false alarms");
    }
}

/// Exact coverage `Σ_x P(x)·[p ∈ CP(x)]` of the 95% Clopper–Pearson interval at 60,000
/// queries and expected counts 0.5, 1, 1.5, 5, 50, and its minimum over 120 rates between
/// 0.1 and 60 expected: at least 0.95 everywhere (to 1e-9). No draws: the sum is exact.
#[test]
fn clopper_pearson_covers_at_least_its_nominal_rate() {
    let queries = 60_000u64;
    let top = 160u64; // P(X > 160) < 1e-30 at 60 expected
    let cp: Vec<(f64, f64)> = (0..=top)
        .map(|x| clopper_pearson(x, queries, 0.95))
        .collect();
    let wilson: Vec<(f64, f64)> = (0..=top)
        .map(|x| wilson_interval(x, queries, bloomlab::stats::Z95))
        .collect();
    let coverage = |bounds: &[(f64, f64)], p: f64| -> f64 {
        (0..=top)
            .filter(|&x| bounds[x as usize].0 <= p && p <= bounds[x as usize].1)
            .map(|x| binomial_pmf(x, queries, p))
            .sum()
    };
    for expected in [0.5, 1.0, 1.5, 5.0, 50.0] {
        let p = expected / queries as f64;
        let (c, w) = (coverage(&cp, p), coverage(&wilson, p));
        eprintln!("coverage at {expected} expected: Clopper–Pearson {c:.4}, Wilson {w:.4}");
        assert!(c >= 0.95 - 1e-9, "{expected}: {c}");
    }
    let worst = (1..=120)
        .map(|i| coverage(&cp, 0.5 * i as f64 / queries as f64))
        .fold(1.0f64, f64::min);
    eprintln!("Clopper–Pearson worst coverage over 0.5..60 expected: {worst:.4}");
    assert!(worst >= 0.95 - 1e-9, "{worst}");
}

/// Coverage of the 95% ratio interval over `pairs` of independent real filters whose true
/// ratio is that of their exact rates. Returns (coverage with, without the between-filter
/// variance).
fn ratio_coverage(a: (u64, u64, u32), b: (u64, u64, u32), queries: u64, pairs: u64) -> (f64, f64) {
    let truth = fpr_exact(a.0, a.1, a.2) / fpr_exact(b.0, b.1, b.2);
    let var_a = fpr_between_filter_variance(a.0, a.1, a.2);
    let var_b = fpr_between_filter_variance(b.0, b.1, b.2);
    let (mut with, mut without) = (0, 0);
    for pair in 0..pairs {
        let scheme = HashScheme::MultiplyShift;
        let (_, ca) = run_filter(a, scheme, (pair, 2 * pair), queries);
        let (_, cb) = run_filter(b, scheme, ((pair + 1) << 32, 2 * pair + 1), queries);
        let r = ratio_interval(ca, queries, cb, queries, var_a, var_b, 0.95);
        with += u64::from(r.low <= truth && truth <= r.high);
        let r = ratio_interval(ca, queries, cb, queries, 0.0, 0.0, 0.95);
        without += u64::from(r.low <= truth && truth <= r.high);
    }
    let (with, without) = (with as f64 / pairs as f64, without as f64 / pairs as f64);
    eprintln!(
        "ratio {a:?} / {b:?}, q = {queries}: truth {truth:.3}, coverage {with:.3} \
         (without between-filter variance {without:.3})"
    );
    (with, without)
}

/// The 95% ratio interval over 1000 pairs of independent filters covers the ratio of the
/// exact rates in [0.93, 0.97] of them (±2.9 binomial standard errors of 0.0069): k = 1
/// over k = 7 at 10 bits per key; 1.5 times the keys over the design load; and at 2 bits per
/// key, where the variance between filters dominates.
#[test]
fn ratio_intervals_cover_about_ninety_five_percent() {
    let cases = [
        ((500, 5_000, 1), (500, 5_000, 7), 20_000),
        ((750, 5_000, 7), (500, 5_000, 7), 20_000),
        ((500, 1_000, 4), (400, 1_000, 4), 2_000),
    ];
    for (a, b, queries) in cases {
        let (with, _) = ratio_coverage(a, b, queries, 1_000);
        assert!((0.93..=0.97).contains(&with), "{a:?}/{b:?}: {with}");
    }
}

/// The measured/constant interval (Clopper–Pearson over ε) covers each filter's own rate
/// `fill^k / ε` in at least 95% of 2000 filters at about 5 expected false positives, less
/// the 99.9% allowance of Binomial(2000, 0.05) for misses (a floor of 0.95 - 0.0125).
#[test]
fn ratio_to_a_constant_covers_the_filters_own_rate() {
    const FILTERS: u64 = 2_000;
    let eps = 0.01;
    let queries = 600;
    let mut misses = 0;
    for seed in 0..FILTERS {
        let (own, count) = run_filter(
            (500, 5_000, 7),
            HashScheme::MultiplyShift,
            (seed, seed),
            queries,
        );
        let r = ratio_to_constant(count, queries, eps, 0.95);
        misses += u64::from(!(r.low <= own / eps && own / eps <= r.high));
    }
    let bound = allowance(FILTERS, 0.05);
    eprintln!("ratio to a constant: {misses}/{FILTERS} misses (bound {bound})");
    assert!(misses <= bound, "{misses}");
}

/// One seed-check's verdicts over 32 hash seeds: (Stouffer p of the z against the filters'
/// own bits, Stouffer p of the z against the exact rate with Var(fill^k), goodness-of-fit
/// p of the counts against their distribution over filters).
fn seed_check(shape: (u64, u64, u32), scheme: HashScheme, key_seed: u64, queries: u64) -> [f64; 3] {
    let (n, m, k) = shape;
    let exact = fpr_exact(n, m, k);
    let var = fpr_between_filter_variance(n, m, k);
    let model = CountDistribution::from_rate_moments(queries, fpr_moments(n, m, k));
    let (mut own_zs, mut averaged_zs, mut counts) = (Vec::new(), Vec::new(), Vec::new());
    for hash_seed in 0..32 {
        let (own, count) = run_filter(
            shape,
            scheme,
            (key_seed, key_seed * 32 + hash_seed),
            queries,
        );
        own_zs.push(z_score(count as f64 / queries as f64, own, queries));
        averaged_zs.push(z_averaged(count, queries, exact, var));
        counts.push(count);
    }
    let fit = count_goodness_of_fit(&counts, &model);
    [stouffer(&own_zs).1, stouffer(&averaged_zs).1, fit.p_over]
}

/// Under the null (the default hash), 400 seed-checks of 32 hash seeds each, at 10 bits per
/// key, k = 7, with about 16 and about 2 expected false positives per seed: each of the three
/// verdicts raises at most the 99.9% allowance of Binomial(400, 0.01) false alarms at
/// α = 0.01.
#[test]
fn combined_seed_checks_hold_their_level() {
    const CHECKS: u64 = 400;
    const ALPHA: f64 = 0.01;
    let bound = allowance(CHECKS, ALPHA);
    for queries in [2_000, 250] {
        let mut alarms = [0u64; 3];
        for key_seed in 0..CHECKS {
            let ps = seed_check(
                (500, 5_000, 7),
                HashScheme::MultiplyShift,
                key_seed,
                queries,
            );
            for (alarm, p) in alarms.iter_mut().zip(ps) {
                *alarm += u64::from(p < ALPHA);
            }
        }
        eprintln!(
            "seed-check null, q = {queries}: false alarms of {CHECKS} at α = {ALPHA}: Stouffer \
             (own bits) {}, Stouffer (exact + Var) {}, goodness of fit {} (bound {bound})",
            alarms[0], alarms[1], alarms[2]
        );
        assert!(
            alarms.iter().all(|&a| a <= bound),
            "q = {queries}: {alarms:?}"
        );
    }
}

/// The essay's flawed hash (low bits, m = 32768, n = 4000, k = 4), 100 queries per filter:
/// each verdict must fail at the seed-check's α = 0.001 in at least 29 of 30 key seeds
/// (32 hash seeds each).
#[test]
fn combined_seed_checks_catch_the_flawed_hash() {
    let mut caught = [0u32; 3];
    for key_seed in 0..30 {
        let ps = seed_check((4_000, 32_768, 4), HashScheme::LowBits, key_seed, 100);
        for (hit, p) in caught.iter_mut().zip(ps) {
            *hit += u32::from(p < 0.001);
        }
    }
    let (own, count) = run_filter((4_000, 32_768, 4), HashScheme::LowBits, (1, 1), 60_000);
    eprintln!(
        "flawed hash caught in 30 seeds: Stouffer (own bits) {}, Stouffer (exact + Var) {}, \
         goodness of fit {}; measured/own bits at q = 60000: {:.2}",
        caught[0],
        caught[1],
        caught[2],
        count as f64 / 60_000.0 / own
    );
    assert!(caught.iter().all(|&c| c >= 29), "{caught:?}");
}

/// Rates of k = 1..=12 for `replicates` replicate sweeps: within a replicate every k shares
/// the key set and the hash seed (so k shares its first hashes with k + 1, as in sweep-k);
/// replicates share nothing. Returns `rates[k - 1][t]`.
fn sweep(first_seed: u64, replicates: u64, queries: u64) -> Vec<Vec<f64>> {
    (1..=12)
        .map(|k| {
            (0..replicates)
                .map(|t| {
                    let seed = first_seed + t;
                    let (_, count) = run_filter(
                        (500, 5_000, k),
                        HashScheme::MultiplyShift,
                        (seed, seed),
                        queries,
                    );
                    count as f64 / queries as f64
                })
                .collect()
        })
        .collect()
}

/// Over 200 sweeps of 8 replicates (10 bits per key, n = 500, k = 1..12), the 95% minimum
/// set contains the true minimum (the argmin of the exact rate, k = 7) in at least 95% of
/// them, and it is informative: k = 1 and k = 12 are left out of at least 95%.
#[test]
fn min_set_contains_the_true_minimum() {
    let exact: Vec<f64> = (1..=12).map(|k| fpr_exact(500, 5_000, k)).collect();
    let best = (0..12)
        .min_by(|&a, &b| exact[a].total_cmp(&exact[b]))
        .expect("twelve k");
    assert_eq!(best + 1, 7);
    let sweeps = 200u64;
    let (mut covered, mut informative, mut sizes) = (0u64, 0u64, vec![0u64; 12]);
    for s in 0..sweeps {
        let set = min_set(&sweep(s * 8, 8, 5_000));
        covered += u64::from(set[best]);
        informative += u64::from(!set[0] && !set[11]);
        set.iter()
            .zip(&mut sizes)
            .for_each(|(&i, n)| *n += u64::from(i));
    }
    eprintln!(
        "min set over {sweeps} sweeps: true minimum in {covered}, k = 1 and 12 out in \
         {informative}; times each k was in the set: {sizes:?}"
    );
    assert!(covered * 100 >= 95 * sweeps, "{covered}");
    assert!(informative * 100 >= 95 * sweeps, "{informative}");
}

/// The replicates to order k = 5 and k = 7 (one-sided 95%, 80% power), from a pilot of 400
/// replicates, then 400 fresh sweeps of that many replicates: the paired test orders them
/// in [0.72, 0.92] of them (0.8 ± 3 standard errors of 0.02, plus up to 0.04 for the
/// rounding up of T and the pilot's error in δ/σ).
#[test]
fn replicates_to_order_gives_its_power() {
    let pair = |first: u64, t: u64| -> (Vec<f64>, Vec<f64>) {
        (replicate_rates(5, first, t), replicate_rates(7, first, t))
    };
    let (five, seven) = pair(1 << 40, 400);
    let diffs: Vec<f64> = five.iter().zip(&seven).map(|(a, b)| a - b).collect();
    let (delta, sd) = mean_sd(&diffs);
    let t = replicates_to_order(delta, sd, 0.95, 0.8).expect("a difference");
    let student = statrs::distribution::StudentsT::new(0.0, 1.0, (t - 1) as f64).unwrap();
    let critical = statrs::distribution::ContinuousCDF::inverse_cdf(&student, 0.95);
    let runs = 400u64;
    let ordered = (0..runs)
        .filter(|&r| {
            let (a, b) = pair(r * t, t);
            let d: Vec<f64> = a.iter().zip(&b).map(|(x, y)| x - y).collect();
            let (mean, s) = mean_sd(&d);
            mean / (s / (t as f64).sqrt()) > critical
        })
        .count() as f64
        / runs as f64;
    eprintln!("order k = 5 over 7: δ = {delta:.2e}, σ_d = {sd:.2e}, T = {t}, power {ordered:.3}");
    assert!((0.72..=0.92).contains(&ordered), "{ordered}");
}

/// The power statement is exact: at the detectable excess the exact test has power 0.8 and
/// at ε its level is at most 0.05; the queries for a 10% excess at 1% are about
/// `(2.49/0.1)²` expected false positives (between 500 and 800).
#[test]
fn detectable_excess_is_what_the_exact_test_detects() {
    for (queries, eps) in [
        (60_000u64, 0.01),
        (2_000, 0.005),
        (1_000_000, 1e-4),
        (150, 0.02),
    ] {
        let excess = detectable_excess(queries, eps);
        let critical = (0..=queries)
            .find(|&c| binomial_upper_tail(c, queries, eps) <= 0.05)
            .expect("a critical count");
        let level = binomial_upper_tail(critical, queries, eps);
        let power = binomial_upper_tail(critical, queries, eps * (1.0 + excess));
        eprintln!(
            "q = {queries}, ε = {eps}: detectable excess {excess:.3}, level {level:.4}, power {power:.4}"
        );
        assert!(
            level <= 0.05 && (power - 0.8).abs() < 1e-6,
            "{level} {power}"
        );
    }
    let queries = queries_to_detect(0.1, 0.01).expect("detectable");
    let expected = queries as f64 * 0.01;
    eprintln!("queries to detect 10% at 1%: {queries} ({expected:.0} expected false positives)");
    assert!(detectable_excess(queries, 0.01) <= 0.1);
    assert!((500.0..=800.0).contains(&expected), "{expected}");
}

/// The `--trials` interval (`Spread`, from the scatter between filters) covers the exact
/// rate in [0.91, 0.99] of 300 groups of 10 filters at 2 bits per key, k = 4, where the
/// spread between filters is several times the query noise (±3.2 binomial standard errors of
/// 0.0126 about 0.95; the Student interval of 10 near-normal rates is close to exact). The
/// interval of the pooled counts, which leaves that spread out, is printed beside it.
#[test]
fn the_trials_interval_covers_the_rate_averaged_over_filters() {
    let (n, m, k, queries) = (500, 1_000, 4, 10_000);
    let exact = fpr_exact(n, m, k);
    let (mut covered, mut pooled_covered) = (0u32, 0u32);
    for group in 0..300u64 {
        let rows: Vec<Measurement> = (0..10)
            .map(|t| {
                let setup = Setup::new(
                    Spec::shape(FilterKind::CLASSIC, m, k)
                        .hashed(HashScheme::MultiplyShift, group * 10 + t),
                    n,
                    queries,
                    1_000 + group,
                );
                measure("calibration", &setup).expect("a valid setup")
            })
            .collect();
        let spread = Spread::of(&rows.iter().collect::<Vec<_>>());
        covered += u32::from((spread.pooled_low..=spread.pooled_high).contains(&exact));
        let count = rows.iter().map(|r| r.false_positives).sum();
        let (low, high) = clopper_pearson(count, 10 * queries, 0.95);
        pooled_covered += u32::from((low..=high).contains(&exact));
    }
    let coverage = f64::from(covered) / 300.0;
    eprintln!(
        "trials interval coverage {coverage:.3}; pooled-count interval {:.3}",
        f64::from(pooled_covered) / 300.0
    );
    assert!((0.91..=0.99).contains(&coverage), "{coverage}");
}

/// Coverage of the design interval of a measured rate over a constant
/// ([`averaged_ratio_to_constant`], overfill's "× design") over 1000 real filters (fresh key
/// and hash seeds each) of one setup: the truth is the exact rate averaged over filters over
/// the constant. Returns the coverage with and without the between-filter variance.
fn design_ratio_coverage(shape: (u64, u64, u32), queries: u64, design_rate: f64) -> (f64, f64) {
    let (n, m, k) = shape;
    let truth = fpr_exact(n, m, k) / design_rate;
    let var = fpr_between_filter_variance(n, m, k);
    let (mut with, mut without) = (0u32, 0u32);
    for seed in 0..1_000u64 {
        let (_, count) = run_filter(
            shape,
            HashScheme::MultiplyShift,
            (seed, seed << 20),
            queries,
        );
        let r = averaged_ratio_to_constant(count, queries, var, design_rate, 0.95);
        with += u32::from(r.low <= truth && truth <= r.high);
        let r = averaged_ratio_to_constant(count, queries, 0.0, design_rate, 0.95);
        without += u32::from(r.low <= truth && truth <= r.high);
    }
    let (with, without) = (f64::from(with) / 1e3, f64::from(without) / 1e3);
    eprintln!(
        "× design {shape:?}, q = {queries}: truth {truth:.3}, coverage {with:.3} \
         (binomial only {without:.3})"
    );
    (with, without)
}

/// The "× design" interval covers the ratio of the exact rate to the design rate in
/// [0.93, 0.97] of 1000 filters (±2.9 binomial standard errors of 0.0069): 1.5 times the
/// design load at 10 bits per key (about 1000 false positives), the design load itself with
/// about 16 (and with about 5, where the log scale makes it conservative: [0.93, 0.99]), and
/// 2 bits per key, k = 4, where the spread between filters dominates (there
/// the binomial-only interval must miss more than 10%, so the test can see the variance).
#[test]
fn design_ratio_intervals_cover_about_ninety_five_percent() {
    let design = fpr_exact(500, 5_000, 7);
    let (with, _) = design_ratio_coverage((750, 5_000, 7), 20_000, design);
    assert!((0.93..=0.97).contains(&with), "{with}");
    let (with, _) = design_ratio_coverage((500, 5_000, 7), 2_000, design);
    assert!((0.93..=0.97).contains(&with), "{with}");
    let (with, _) = design_ratio_coverage((500, 5_000, 7), 600, design);
    assert!((0.93..=0.99).contains(&with), "{with}");
    let (with, without) = design_ratio_coverage((500, 1_000, 4), 20_000, 0.1);
    assert!((0.93..=0.97).contains(&with), "{with}");
    assert!(without < 0.9, "{without}");
}

/// The paired ratio interval of mean rates over 9 replicate sweeps (sweep-k's default:
/// within a replicate k shares keys and hash prefixes) covers the ratio of exact rates in
/// [0.92, 0.98] of 400 sets (±2.7 binomial standard errors of 0.011 about 0.95): k = 1, 6
/// and 8 over k = 7 at 10 bits per key, n = 500.
#[test]
fn paired_ratio_intervals_cover_about_ninety_five_percent() {
    let rates = |k: u32, first: u64| replicate_rates(k, first, 9);
    let sets = 400u64;
    for k in [1, 6, 8] {
        let truth = fpr_exact(500, 5_000, k) / fpr_exact(500, 5_000, 7);
        let covered = (0..sets)
            .filter(|&s| {
                let r = paired_ratio_interval(&rates(k, s * 9), &rates(7, s * 9), 0.95);
                r.low <= truth && truth <= r.high
            })
            .count() as f64
            / sets as f64;
        eprintln!("paired ratio k = {k} over 7: truth {truth:.3}, coverage {covered:.3}");
        assert!((0.92..=0.98).contains(&covered), "k = {k}: {covered}");
    }
}

/// The rates of `replicates` filters with k hashes, n = 500 at 10 bits per key, 5,000
/// queries each, key and hash seeds `first, first + 1, ...`.
fn replicate_rates(k: u32, first: u64, replicates: u64) -> Vec<f64> {
    (0..replicates)
        .map(|i| {
            let seed = first + i;
            let (_, c) = run_filter(
                (500, 5_000, k),
                HashScheme::MultiplyShift,
                (seed, seed),
                5_000,
            );
            c as f64 / 5_000.0
        })
        .collect()
}

/// The timing passes (bench, compare, advise): their order and their interval.
mod passes {
    use bloomlab::pipeline::timing::{Passes, interleave};

    /// Subjects take one pass each a round, in turn, each keeping its own; a failed pass stops
    /// the rounds.
    #[test]
    fn interleave_takes_one_pass_of_each_subject_a_round() {
        let mut order = Vec::new();
        let ns = interleave(3, 2, |i| {
            order.push(i);
            Ok::<_, ()>(order.len() as f64)
        });
        assert_eq!(order, [0, 1, 0, 1, 0, 1]);
        assert_eq!(ns, Ok(vec![vec![1.0, 3.0, 5.0], vec![2.0, 4.0, 6.0]]));
        let failed = interleave(3, 2, |i| if i == 1 { Err("failed") } else { Ok(1.0) });
        assert_eq!(failed, Err("failed"));
    }

    /// At confidence 1 the interval is the fastest and slowest pass; over 20 passes at
    /// 0.9875 it is the 5th fastest and 5th slowest (P(X <= 4) = 0.0059 <= 0.00625).
    #[test]
    fn passes_bracket_their_median() {
        let ns: Vec<f64> = (1..=20).rev().map(f64::from).collect();
        let within = |low, high| Passes {
            median: 11.0,
            low,
            high,
        };
        assert_eq!(Passes::of(ns.clone()), within(1.0, 20.0));
        assert_eq!(Passes::within(ns, 0.9875), within(5.0, 16.0));
        assert!(Passes::coverage(20, 0.9875) >= 0.9875);
        assert!(Passes::of(Vec::new()).median.is_nan());
    }
}
