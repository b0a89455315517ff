//! `advise`: the cost model's interval by simulation, refusal of bad flags before any work,
//! and the choices the paper predicts (no filter where it cannot pay; more bits where the
//! work is dear).

use bloomlab::experiments::advise::cost::{
    Bounded, COST_CONFIDENCE, CostInputs, INPUT_CONFIDENCE, TIMED_PASSES, cost, cost_at, drift,
    median_interval,
};
use bloomlab::experiments::find;
use bloomlab::stats::clopper_pearson;
use indicatif::ProgressBar;
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64;
use serde_json::Value;

use crate::common::command as bloomlab;

/// A time with the given median: a monotone, heavy-tailed transform of a uniform draw
/// (`f(1/2) = 0`, so the median stays put).
fn pass_time(rng: &mut Pcg64, median: f64) -> f64 {
    let u: f64 = rng.random();
    median * (20.0 * (u - 0.5).powi(3)).exp()
}

fn timed(rng: &mut Pcg64, median: f64) -> Bounded {
    median_interval(
        (0..TIMED_PASSES).map(|_| pass_time(rng, median)).collect(),
        INPUT_CONFIDENCE,
    )
}

/// The cost interval holds the true cost with at least 95% (Bonferroni over its four
/// inputs). Over 2000 simulated runs (fixed seed) the observed coverage has a standard error
/// of 0.5% at 95%: the bound 93% is four of them below.
#[test]
fn the_cost_interval_covers_the_true_cost() {
    let mut rng = Pcg64::seed_from_u64(7);
    let (sigma, eps, t_a, t_p, t_w, queries) = (0.9, 0.01, 6.0, 9.0, 80.0, 20_000u64);
    let truth = cost_at(sigma, eps, t_a, t_p, t_w);
    let runs = 2000;
    let mut covered = 0;
    for _ in 0..runs {
        let fp = (0..queries).filter(|_| rng.random::<f64>() < eps).count() as u64;
        let (low, high) = clopper_pearson(fp, queries, INPUT_CONFIDENCE);
        let inputs = CostInputs {
            negative_share: sigma,
            fpr: Bounded {
                value: fp as f64 / queries as f64,
                low,
                high,
            },
            t_absent: timed(&mut rng, t_a),
            t_present: timed(&mut rng, t_p),
            t_work: timed(&mut rng, t_w),
        };
        let c = cost(&inputs);
        assert!(c.low <= c.value && c.value <= c.high);
        covered += usize::from(c.low <= truth && truth <= c.high);
    }
    let coverage = covered as f64 / runs as f64;
    assert!(
        coverage >= COST_CONFIDENCE - 0.02,
        "coverage {coverage} below the stated {COST_CONFIDENCE}"
    );
}

/// Each bad flag is refused with exit 2, naming the flag and its range, before any work.
/// The interval as a run builds it, against the end-to-end cost of another run. The
/// machine's load is a process of moments: at each, every time is its true value times
/// `e^{0.03 Z}` (one Z per moment, the same for every time then), and each lookup pass adds
/// its own heavy-tailed noise ([`pass_time`]). A run times the work in 4 passes at 4 moments
/// (two before its contender, one after it, one after the next: the fewest a run at 5·10^7
/// takes), the contender's lookups in 20 passes at one moment, its rate on 20000 queries;
/// the interval is the medians' widened by `e^{±2.5 s}` ([`drift`]), then by its own
/// end-to-end run's miss (a run at another moment). Another run's end-to-end cost falls in
/// it with at least 95% (the stated [`COST_CONFIDENCE`]), and so it does before the
/// calibration (the drift's widening alone, 97% here); 2000 runs (fixed seed) give each
/// coverage with a standard error of 0.5%, so the bound 94% is two below.
#[test]
fn the_interval_covers_another_runs_cost_over_simulated_runs() {
    let mut rng = Pcg64::seed_from_u64(11);
    let (sigma, eps, t_a, t_p, t_w, queries) = (0.95, 0.001, 6.0, 9.0, 1e5, 20_000u64);
    // A standard normal draw (Box–Muller).
    let moment = |rng: &mut Pcg64| {
        let (u, v): (f64, f64) = (rng.random(), rng.random());
        let z = (-2.0 * (1.0 - u).ln()).sqrt() * (std::f64::consts::TAU * v).cos();
        (0.03 * z).exp()
    };
    let runs = 2000;
    let (mut covered, mut covered_uncalibrated) = (0, 0);
    for _ in 0..runs {
        let probes: Vec<f64> = (0..4).map(|_| t_w * moment(&mut rng)).collect();
        let widen = drift(&probes);
        let m = moment(&mut rng);
        let fp = (0..queries).filter(|_| rng.random::<f64>() < eps).count() as u64;
        let (low, high) = clopper_pearson(fp, queries, INPUT_CONFIDENCE);
        let c = cost(&CostInputs {
            negative_share: sigma,
            fpr: Bounded {
                value: fp as f64 / queries as f64,
                low,
                high,
            },
            t_absent: timed(&mut rng, t_a * m).widened(widen),
            t_present: timed(&mut rng, t_p * m).widened(widen),
            t_work: median_interval(probes, INPUT_CONFIDENCE).widened(widen),
        });
        let end_to_end = |rng: &mut Pcg64| {
            let m = moment(rng);
            cost_at(sigma, eps, t_a * m, t_p * m, t_w * m)
        };
        let (own, other) = (end_to_end(&mut rng), end_to_end(&mut rng));
        let calibrated = c.widened((own / c.value).ln().abs().exp());
        covered += usize::from(calibrated.low <= other && other <= calibrated.high);
        covered_uncalibrated += usize::from(c.low <= other && other <= c.high);
    }
    let (coverage, uncalibrated) = (
        covered as f64 / runs as f64,
        covered_uncalibrated as f64 / runs as f64,
    );
    assert!(
        coverage >= COST_CONFIDENCE - 0.01,
        "coverage {coverage} below the stated {COST_CONFIDENCE}"
    );
    assert!(
        uncalibrated >= COST_CONFIDENCE - 0.01,
        "coverage before the calibration {uncalibrated} below the stated {COST_CONFIDENCE}"
    );
}

#[test]
fn bad_flags_are_refused_naming_the_flag() {
    let cases: [(&[&str], &str); 10] = [
        (&["--tolerance", "0"], "ns in (0, 1e9]"),
        (&["--tolerance", "150%"], "(0%, 100%]"),
        (&["--negative-share", "1.5"], "--negative-share"),
        (
            &["--work-ns", "fast"],
            "cache-miss, ssd (100000), network (500000)",
        ),
        (&["--work-ns", "-3"], "--work-ns"),
        (&["--needs", "fly"], "insert, delete, grow, static-ok"),
        (&["--n", "10"], "1000..=100000000"),
        (&["--max-fpr", "0"], "(0, 1)"),
        (&["--target-seconds", "5"], "10..=3600"),
        (&["--memory", "1000", "--max-fpr", "0.001"], "at least"),
    ];
    for (flags, says) in cases {
        bloomlab()
            .arg("advise")
            .args(flags)
            .timeout(std::time::Duration::from_secs(60))
            .assert()
            .code(2)
            .stderr(predicates::str::contains(says));
    }
    // bench's check of advise's intervals by repetition (its flag was once lost in a merge
    // while the help and the guide still showed it): out of range, refused before work.
    for runs in ["0", "101"] {
        bloomlab()
            .args(["bench", "--advise-coverage", runs])
            .assert()
            .code(2)
            .stderr(predicates::str::contains("--advise-coverage"))
            .stderr(predicates::str::contains("1..=100"));
    }
    // The budget with a bound no structure meets names the smallest budget that would do,
    // and quotes the budget as it was given (it quoted the bytes it became).
    bloomlab()
        .args([
            "advise",
            "--n",
            "100000",
            "--bits-per-key",
            "4",
            "--max-fpr",
            "0.001",
        ])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--bits-per-key 4:"))
        .stderr(predicates::str::contains("the smallest that does is"));
}

/// Runs advise with `[params]` and returns its table.
fn advise_table(params: &str) -> bloomlab::report::Table {
    let table: toml::Table = toml::from_str(params).unwrap();
    let outcome = find("advise")
        .unwrap()
        .prepare_table(&table)
        .unwrap()
        .run(&ProgressBar::hidden())
        .unwrap();
    outcome.table
}

/// Runs advise with `[params]` and returns its rows.
fn advise(params: &str) -> Vec<serde_json::Map<String, Value>> {
    advise_table(params).records
}

fn chosen(rows: &[serde_json::Map<String, Value>]) -> &serde_json::Map<String, Value> {
    let picked: Vec<_> = rows.iter().filter(|r| r["chosen"] == true).collect();
    assert_eq!(picked.len(), 1, "exactly one choice");
    picked[0]
}

const SMALL: &str = "n = 10000\nqueries = 20000\ncontenders = 6\ntarget_seconds = 10\n";

/// No filter pays where few queries are negative, or where the work is cheaper than a
/// lookup: each query then costs at least its lookup on top of (nearly) all the work.
#[test]
fn no_filter_is_chosen_where_no_filter_can_pay() {
    let few_negatives = advise(&format!("{SMALL}negative_share = 0.02\nwork_ns = \"20\""));
    assert_eq!(chosen(&few_negatives)["structure"], "no filter");
    let cheap_work = advise(&format!("{SMALL}negative_share = 0.9\nwork_ns = \"1\""));
    assert_eq!(chosen(&cheap_work)["structure"], "no filter");
}

/// Cheap work (20 ns) with 90% negative queries pays for a filter; dear work (1 ms) buys a
/// low rate: each wasted query costs 10^6 ns, so a rate of 10^-2 alone would cost 9000 ns a
/// query, far beyond the tolerance (1% of the 10^5 ns the present keys' work costs, which
/// ties every rate to about 1.1·10^-3, the least memory among them chosen). Which filter wins at 20 ns rests on lookup times a few ns
/// apart, which a loaded machine reorders: that contrast is asserted on fixed times in the
/// skyline's unit test and measured at n = 10^6 in the closing figures, not here.
#[test]
fn dear_work_buys_a_low_rate_and_cheap_work_a_filter() {
    let cheap = advise(&format!("{SMALL}negative_share = 0.9\nwork_ns = \"20\""));
    let dear = advise(&format!(
        "{SMALL}negative_share = 0.9\nwork_ns = \"1000000\""
    ));
    let (cheap, dear) = (chosen(&cheap), chosen(&dear));
    assert_ne!(cheap["structure"], "no filter");
    let rate = dear["fpr_closed_form"].as_f64().unwrap();
    assert!(rate <= 2e-3, "{dear:?}");
}

/// The first lines are the decision, before any table: the recommendation, what its cost is
/// made of, how many were tied, the plateau, and what the end-to-end run decided. A
/// tolerance wider than every cost ties them all, and the least memory, no filter, is
/// recommended.
#[test]
fn the_first_lines_are_the_decision_and_a_tie_takes_the_least_memory() {
    let table = advise_table(&format!(
        "{SMALL}negative_share = 0.9\nwork_ns = \"20\"\ntolerance = \"1000\""
    ));
    let starts = [
        "recommendation: no filter",
        "its cost per query: lookups",
        "tied: ",
        "plateau: ",
        "end to end: ",
    ];
    assert_eq!(table.preamble.len(), starts.len(), "{:?}", table.preamble);
    for (line, start) in table.preamble.iter().zip(starts) {
        assert!(line.starts_with(start), "{line}");
    }
    let count = table.records.len();
    assert!(table.preamble[2].starts_with(&format!("tied: {count} of {count}")));
    assert_eq!(chosen(&table.records)["structure"], "no filter");
}
