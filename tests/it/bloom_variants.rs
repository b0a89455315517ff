//! The Bloom variants of issue 27: partitioned, scalable, register-blocked and
//! cache-sectorized. Each measured rate within 4 binomial standard errors of its exact
//! expectation and of the rate its own bits predict (fixed seeds), each design's space against
//! its authors' figure, and the vector lookups against their scalar twin.

use bloomlab::HashScheme;
use bloomlab::KeySource;
use bloomlab::pipeline::measure;
use bloomlab::pipeline::measurement::Setup;
use bloomlab::structures::interface::Shape;
use bloomlab::structures::sectorized::{
    CACHE_BLOCK_BITS, CACHE_GROUPS, Lookup, SECTOR_BITS, SectorizedFilter,
};
use bloomlab::structures::{FilterKind, Membership, Spec};

fn named(name: &str) -> FilterKind {
    FilterKind::named(name).unwrap()
}

fn setup(filter: FilterKind, n: u64, m: u64, k: u32, queries: u64) -> Setup {
    let m = filter.layout(m, k).unwrap();
    Setup::new(
        Spec::shape(filter, m, k).hashed(HashScheme::MultiplyShift, 32),
        n,
        queries,
        31,
    )
}

/// Bound: |z| <= 4 against the exact expectation, and the bits check passes.
fn assert_matches(filter: FilterKind, n: u64, m: u64, k: u32, queries: u64) {
    let row = measure("test", &setup(filter.clone(), n, m, k, queries)).unwrap();
    assert!(
        row.z_exact.abs() <= 4.0 && row.bits_ok(),
        "{filter} n={n} m={m} k={k}: measured {} exact {} z_exact {} z_from_fill {}",
        row.fpr_measured,
        row.fpr_exact,
        row.z_exact,
        row.z_from_fill
    );
}

#[test]
fn partitioned_matches_its_own_predictions() {
    for (k, bits) in [(3, 6), (7, 10), (11, 16)] {
        assert_matches(named("partitioned"), 4_000, 4_000 * bits, k, 60_000);
    }
}

#[test]
fn partitioned_design_spends_what_almeida_et_al_publish() {
    // Almeida et al. 2007, section 3: k = log2(1/P) slices of n/ln 2 bits, so
    // m/n = log2(1/P)/ln 2 = 14.43 bits per key at P = 2^-10, the classic optimum.
    let (m, k) = named("partitioned")
        .design(100_000, 0.5f64.powi(10))
        .unwrap();
    assert_eq!(k, 10);
    let per_key = m as f64 / 100_000.0;
    assert!(
        (per_key / (10.0 / std::f64::consts::LN_2) - 1.0).abs() < 0.01,
        "{per_key}"
    );
}

#[test]
fn sectorized_structures_match_their_poisson_mixture() {
    // n = 50000: enough blocks that the spread of the rate between filters (not modelled) is
    // well below the binomial error of 200000 queries.
    for (name, k, bits) in [
        ("reg-blocked", 4, 12),
        ("reg-blocked", 6, 20),
        ("cache-sector", 4, 8),
        ("cache-sector", 8, 16),
    ] {
        assert_matches(named(name), 50_000, 50_000 * bits, k, 200_000);
    }
}

#[test]
fn register_blocked_is_the_64_bit_blocked_mixture() {
    // One group of one sector: the blocked filter's Poisson mixture with B = 64, which for
    // large blocks approaches the classic rate and for 64 bits stays well above it.
    let (n, m, k) = (10_000, 160_000, 8);
    let register = named("reg-blocked").fpr_exact(n, m, k);
    let blocked = named("blocked").fpr_exact(n, m, k);
    let classic = FilterKind::CLASSIC.fpr_exact(n, m, k);
    assert!(
        register > blocked && blocked > classic,
        "{register} {blocked} {classic}"
    );
}

#[test]
fn every_lookup_path_answers_as_the_scalar_one() {
    let keys = KeySource::new(8);
    let paths = Lookup::available();
    for (name, block, groups) in [
        ("reg-blocked", SECTOR_BITS, 1),
        ("cache-sector", CACHE_BLOCK_BITS, CACHE_GROUPS),
    ] {
        let kind = named(name);
        for (n, bits, k) in [(1, 8, 2), (100, 4, 4), (3_001, 10, 6), (20_000, 16, 8)] {
            let shape = Shape {
                kind: kind.clone(),
                n,
                m: kind.layout(n * bits, k).unwrap(),
                k,
                hash: HashScheme::MultiplyShift,
                math: None,
                hash_seed: 5,
            };
            let mut filter = SectorizedFilter::new(&shape, block, groups).unwrap();
            keys.inserted(n).for_each(|key| filter.insert(key));
            // Absent keys and present ones, in a count that leaves a short last chunk.
            let mut asked: Vec<u64> = keys.absent(n, 4 * n + 3).collect();
            asked.extend(keys.inserted(n));
            let single: Vec<bool> = asked.iter().map(|&key| filter.contains(key)).collect();
            for &path in &paths {
                let mut answers = vec![false; asked.len()];
                filter.contains_with(path, &asked, &mut answers).unwrap();
                assert_eq!(answers, single, "{name} {path:?} n={n} k={k}");
            }
            assert!(single[single.len() - n as usize..].iter().all(|&a| a));
        }
    }
}

#[test]
fn scalable_matches_its_own_predictions_as_it_grows() {
    // Designed for about 4000 keys (m = 40000, k = 7), filled with a quarter to 8 times as
    // many: one to four sub-filters.
    for n in [1_000, 4_000, 9_000, 32_000] {
        assert_matches(named("scalable"), n, 40_000, 7, 60_000);
    }
}

/// `scalable:2,1e-10` can build two sub-filters only (the third would need 74 slices): the
/// second takes every key past the first's capacity, and the prediction says so (issue 43:
/// it predicted the first's rate, 0.78%, against 17.6% measured at 10 times the design).
#[test]
fn a_scalable_filter_past_its_last_sub_filter_is_predicted_as_it_fills() {
    for n in [30_000, 40_000] {
        assert_matches(named("scalable:2,1e-10"), n, 40_000, 7, 60_000);
    }
}

#[test]
fn the_scalable_compound_rate_stays_under_its_bound_as_keys_keep_arriving() {
    use bloomlab::structures::scalable::Schedule;
    for (growth, tightening) in [(2, 0.85), (4, 0.9), (2, 0.5)] {
        let schedule = Schedule::new(40_000, 7, growth, tightening).unwrap();
        let first = schedule.sub(0).unwrap().2;
        for factor in [1, 2, 10, 100, 1_000, 10_000] {
            let rate = schedule.fpr_exact(first * factor);
            assert!(
                rate <= schedule.bound(),
                "s={growth} r={tightening} x{factor}: {rate}"
            );
        }
    }
    // Measured at 16 times the first capacity: within 4 standard errors of the bound at most.
    let row = measure(
        "test",
        &setup(named("scalable"), 64_000, 40_000, 7, 100_000),
    )
    .unwrap();
    let bound = Schedule::of(40_000, 7).unwrap().bound();
    let se = (bound * (1.0 - bound) / row.queries as f64).sqrt();
    assert!(
        row.fpr_measured <= bound + 4.0 * se,
        "{} vs {bound}",
        row.fpr_measured
    );
    // The plain filter of the same bits at the same load is far above it.
    let plain = FilterKind::CLASSIC.fpr_exact(64_000, 40_000, 7);
    assert!(plain > 10.0 * bound, "{plain}");
}

/// `scalable:S,R` builds with its own s and r: its rate matches the prediction of that
/// schedule (|z| <= 4, as [`assert_matches`]), which differs from the registered 2,0.85 one,
/// and a kind-level prediction reads the argument too.
#[test]
fn scalable_takes_its_growth_and_tightening_from_its_argument() {
    use bloomlab::structures::scalable::{Growth, Schedule};
    for (arg, growth, tightening) in [("4,0.5", 4, 0.5), ("2,0.6", 2, 0.6), ("8,0.7", 8, 0.7)] {
        let kind = named(&format!("scalable:{arg}"));
        let schedule = Schedule::new(40_000, 7, growth, tightening).unwrap();
        for n in [4_000, 32_000] {
            assert_matches(kind.clone(), n, 40_000, 7, 60_000);
            assert_eq!(kind.fpr_exact(n, 40_000, 7), schedule.fpr_exact(n));
        }
        assert_ne!(
            kind.fpr_exact(32_000, 40_000, 7),
            named("scalable").fpr_exact(32_000, 40_000, 7)
        );
        assert_eq!(
            Growth::parse(arg).unwrap().schedule(40_000, 7).unwrap(),
            schedule
        );
    }
    for bad in ["1,0.5", "17,0.5", "2,1", "2,0", "2", "x,0.5", "2,NaN"] {
        let refused = FilterKind::named(&format!("scalable:{bad}")).unwrap_err();
        assert!(
            refused.contains("2..=16") && refused.contains("(0, 1)"),
            "{bad}: {refused}"
        );
    }
}

/// On the command line: a bad `scalable:S,R` exits 2 before any work, naming the flag and the
/// ranges; a good one changes the overfill table.
#[test]
fn scalable_arguments_are_refused_or_measured_by_the_command_line() {
    let run = |filter: &str| {
        std::process::Command::new(env!("CARGO_BIN_EXE_bloomlab"))
            .args(["overfill", "--filter", filter, "--design-n", "2000"])
            .args([
                "--factors",
                "1,16",
                "--queries",
                "20000",
                "--format",
                "csv",
                "--quiet",
            ])
            .output()
            .unwrap()
    };
    let refused = run("scalable:3,1.5");
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--filter") && stderr.contains("(0, 1)"),
        "{stderr}"
    );
    let (plain, tight) = (run("scalable"), run("scalable:4,0.5"));
    assert!(plain.status.success() && tight.status.success());
    let (plain, tight) = (
        String::from_utf8_lossy(&plain.stdout),
        String::from_utf8_lossy(&tight.stdout),
    );
    assert!(tight.contains("\"scalable:4,0.5\""), "{tight}");
    // The design rate at 16 times the design load (the third line): the schedule's own.
    let column = |csv: &str, name: &str| -> f64 {
        let mut lines = csv.lines();
        let header: Vec<&str> = lines.next().unwrap().split(',').collect();
        let at = header.iter().position(|h| *h == name).unwrap();
        let row = lines
            .nth(1)
            .unwrap()
            .replace("\"scalable:4,0.5\"", "scalable");
        row.split(',').nth(at).unwrap().parse().unwrap()
    };
    let (plain_exact, tight_exact) = (column(&plain, "fpr_exact"), column(&tight, "fpr_exact"));
    assert!(
        tight_exact < 0.8 * plain_exact,
        "{tight_exact} vs {plain_exact}"
    );
}

#[test]
fn scalable_design_is_the_authors_sizing() {
    // P0 = ε(1 - r) = 0.0015 at ε = 1%: k0 = ceil(log2(1/P0)) = 10 slices of n/ln 2 bits,
    // so log2(1/P0)/ln 2 = 14.43 bits per key before the first growth (Almeida et al. 2007,
    // section 5, fill ratio 1/2).
    let (m, k) = named("scalable").design(100_000, 0.01).unwrap();
    assert_eq!(k, 10);
    let per_key = m as f64 / 100_000.0;
    assert!(
        (per_key / (10.0 / std::f64::consts::LN_2) - 1.0).abs() < 0.001,
        "{per_key}"
    );
    assert!(named("scalable").fpr_exact(100_000, m, k) <= 0.01 * (1.0 - 0.85));
}

/// Bits in the filters of the authors' rate table: 16 MiB (`fpr_lut.hpp`, `m = 16·1024·1024·8`,
/// with `n = floor(m / bits per key)`).
const LANG_M: u64 = 16 * 1024 * 1024 * 8;

/// The register-blocked rate against the figures Lang, Neumann, Kemper and Boncz publish
/// with their code (github.com/peterboncz/bloomfilter-bsd at 32956fa, `amsfilter/src/
/// amsfilter_model/fpr_lut.hpp`, row "w=2, s=1, z=1, k=4": two 32-bit words, one 64-bit
/// block, k = 4, its entry for b bits per key at index `10(b - 1)`). Their table evaluates
/// the blocked filter's Poisson mixture (Putze et al.'s, which their PVLDB 12(5) 2019 paper
/// takes; `src/dtl/filter/blocked_bloomfilter/math.hpp`, `fpr_blocked`, self-collisions on) with
/// the in-block rate approximated as `(1 - (1 - 1/B)^{k'i})^{k'}` at `k' = B(1 - (1 -
/// 1/B)^k)` distinct bits; bloomlab's rate takes the exact occupancy moments, so the two
/// differ by that approximation only: 2.4% at 8 bits per key, 0.4% at 16. Bound: 3%.
#[test]
fn register_blocked_meets_the_authors_rate_table() {
    for (bits_per_key, published) in [(8.0, 0.032753), (12.0, 0.0113624), (16.0, 0.00530185)] {
        let n = (LANG_M as f64 / bits_per_key) as u64;
        let ours = named("reg-blocked").fpr_exact(n, LANG_M, 4);
        assert!(
            (ours / published - 1.0).abs() < 0.03,
            "{bits_per_key} bits per key: {ours} against {published}"
        );
    }
}

/// The cache-sectorized rate (B = 512, 64-bit sectors, z = 2) against the authors' formula
/// for it ([`lang_cache_sectorized`]) at 8, 12 and 16 bits per key and k = 4, 8, 12. Their
/// formula draws a sector's load from a Poisson law and the in-sector rate from the standard
/// approximation without self-collisions, where bloomlab's takes the binomial load and the
/// exact occupancy moments: they differ by at most 5% over these shapes. Bound: 6%.
#[test]
fn cache_sectorized_meets_the_authors_formula() {
    for bits_per_key in [8.0, 12.0, 16.0] {
        let n = (LANG_M as f64 / bits_per_key) as u64;
        for k in [4, 8, 12] {
            let ours = named("cache-sector").fpr_exact(n, LANG_M, k);
            let theirs = lang_cache_sectorized(LANG_M, n, k, CACHE_BLOCK_BITS, SECTOR_BITS, 2);
            assert!(
                (ours / theirs - 1.0).abs() < 0.06,
                "{bits_per_key} bits per key, k = {k}: {ours} against {theirs}"
            );
        }
    }
}

/// Lang et al.'s cache-sectorized rate as their code computes it (bloomfilter-bsd,
/// `src/dtl/filter/blocked_bloomfilter/math.hpp`, `fpr_zoned` and `p_cache`): a block holds
/// `i ~ Po(Bn/m)` keys; in each of the z zones the query's sector holds `j ~ Po(izS/B)` of
/// them, each having set k/z of its S bits; the rate is `Σ_i Po(i) (Σ_{j≥1} Po(j) f(S, j,
/// k/z))^z` with `f(S, j, h) = (1 - (1 - 1/S)^{hj})^h`, summed until all but 10^-5 of the
/// Poisson mass is taken.
fn lang_cache_sectorized(m: u64, n: u64, k: u32, block: u64, sector: u64, zones: u32) -> f64 {
    let standard = |bits: u64, keys: u64, h: f64| {
        (1.0 - (1.0 - 1.0 / bits as f64).powf(h * keys as f64)).powf(h)
    };
    let poisson = |lambda: f64, i: u64| {
        let ln_factorial: f64 = (1..=i).map(|x| (x as f64).ln()).sum();
        (-lambda + i as f64 * lambda.ln() - ln_factorial).exp()
    };
    let per_zone = f64::from(k) / f64::from(zones);
    let lambda = (block * n) as f64 / m as f64;
    let (mut rate, mut taken, mut i) = (0.0, 0.0, 0u64);
    while taken + 1e-5 < 1.0 {
        let weight = poisson(lambda, i);
        taken += weight;
        let load = (i * u64::from(zones) * sector) as f64 / block as f64;
        let zone: f64 = (1..=i)
            .map(|j| poisson(load, j) * standard(sector, j, per_zone))
            .sum();
        rate += weight * zone.powi(zones as i32);
        i += 1;
    }
    rate
}

/// The register-blocked filter is refused at 10^-6 with its reason by design and the best
/// rate it reaches, which is above the target (so the refusal is not a sizing slip).
#[test]
fn register_blocked_says_why_it_stops_short_of_one_in_a_million() {
    let Err(refusal) = named("reg-blocked").design(1_000_000, 1e-6) else {
        panic!("reg-blocked was sized for 1e-6");
    };
    let text = refusal.to_string();
    assert!(
        text.contains("Po(nB/m)") && text.contains("64-bit"),
        "{text}"
    );
    let reached: f64 = text
        .split("reaches ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|rate| rate.parse().ok())
        .unwrap_or_else(|| panic!("no rate reached in: {text}"));
    assert!(reached > 1e-6 && reached < 1e-3, "{text}");
    assert!(named("reg-blocked").design(1_000_000, 1e-4).is_ok());
}
