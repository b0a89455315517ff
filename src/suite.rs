//! The checked-in experiment definitions: regenerate the essay's tables into results/, and
//! check fresh runs against the committed results.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use indicatif::ProgressBar;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::experiments::{Outcome, Prepared, Registered};
use crate::measure::BITS_CHECK_Z;
use crate::report::{self, Cell, Column, Format, Record, col};
use crate::stats::{bonferroni_z, two_sample_z};
use crate::theory::fill_variance;

/// Default per-comparison bound of `check`, in standard errors.
pub const DEFAULT_Z_BOUND: f64 = 4.0;
/// Family-wise false-alarm rate of `check --reseed`, whose bound is raised (Bonferroni) so
/// that a correct build fails at most this often over all its comparisons.
pub const RESEED_FAMILY_ALPHA: f64 = 0.001;

/// What the bits check of an experiment must say.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Expectation {
    /// Every row matches its bits (and any verdict of the experiment passes).
    #[default]
    Pass,
    /// At least one row departs from its bits: the flawed-hash demonstration.
    Fail,
}

/// One file of `experiments/`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExperimentFile {
    /// The experiment's name, as its subcommand.
    pub command: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub expect_bits_check: Expectation,
    /// The experiment's parameters: the same keys as its flags, in snake case.
    #[serde(default)]
    pub params: toml::Table,
}

/// A loaded definition: its name is the file stem.
#[derive(Clone, Debug)]
pub struct Definition {
    pub name: String,
    pub path: PathBuf,
    pub text: String,
    pub file: ExperimentFile,
    pub experiment: &'static dyn Registered,
}

impl std::fmt::Debug for dyn Registered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

fn line_of_offset(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// The line on which `field` is set, if it is.
fn line_of_field(text: &str, field: &str) -> Option<usize> {
    text.lines()
        .position(|line| {
            line.trim_start()
                .strip_prefix(field)
                .is_some_and(|rest| rest.trim_start().starts_with('='))
        })
        .map(|i| i + 1)
}

impl Definition {
    /// Parses one file; errors name the file, the line and the field.
    pub fn load(path: &Path) -> Result<Self> {
        let text = fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        let file: ExperimentFile = toml::from_str(&text).map_err(|e| {
            let line = e
                .span()
                .map(|span| {
                    let number = line_of_offset(&text, span.start);
                    let field = text
                        .lines()
                        .nth(number - 1)
                        .and_then(|l| l.split_once('='))
                        .map(|(key, _)| format!("field `{}`: ", key.trim()))
                        .unwrap_or_default();
                    format!("line {number}: {field}")
                })
                .unwrap_or_default();
            Error::Definition {
                path: path.to_path_buf(),
                message: format!("{line}{}", e.message().trim()),
            }
        })?;
        let name = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default()
            .to_string();
        let experiment =
            crate::experiments::find(&file.command).ok_or_else(|| Error::Definition {
                path: path.to_path_buf(),
                message: format!(
                    "line {}: field `command`: unknown experiment '{}' (allowed: {})",
                    line_of_field(&text, "command").unwrap_or(1),
                    file.command,
                    crate::experiments::names().join(", ")
                ),
            })?;
        let definition = Definition {
            name,
            path: path.to_path_buf(),
            text,
            file,
            experiment,
        };
        definition.prepare(None)?;
        Ok(definition)
    }

    /// Validates the parameters, with the key and hash seeds replaced when `seeds` is given.
    fn prepare(&self, seeds: Option<(u64, u64)>) -> Result<Box<dyn Prepared>> {
        let mut params = self.file.params.clone();
        if let Some((seed, hash_seed)) = seeds {
            params.insert("seed".into(), toml::Value::Integer(seed as i64));
            params.insert("hash_seed".into(), toml::Value::Integer(hash_seed as i64));
        }
        self.experiment
            .prepare_table(&params)
            .map_err(|e| self.locate(e))
    }

    /// Turns a parameter error into one naming this file, the line and the field.
    fn locate(&self, error: Error) -> Error {
        match error {
            Error::InvalidKey { key, message } => {
                let line = line_of_field(&self.text, &key)
                    .map(|l| format!("line {l}: "))
                    .unwrap_or_default();
                Error::Definition {
                    path: self.path.clone(),
                    message: format!("{line}field `{key}`: {message}"),
                }
            }
            Error::InvalidParam {
                name,
                value,
                reason,
                allowed,
            } => {
                let line = line_of_field(&self.text, name)
                    .or_else(|| {
                        (name == "bits_per_key")
                            .then(|| line_of_field(&self.text, "bits_per_elem"))
                            .flatten()
                    })
                    .map(|l| format!("line {l}: "))
                    .unwrap_or_default();
                Error::Definition {
                    path: self.path.clone(),
                    message: format!(
                        "{line}field `{name}` = {value}: {reason} (allowed: {allowed})"
                    ),
                }
            }
            other => other,
        }
    }

    /// Runs the experiment, with the key and hash seeds replaced when `seeds` is given.
    pub fn run(&self, seeds: Option<(u64, u64)>, progress: &ProgressBar) -> Result<Outcome> {
        self.prepare(seeds)?
            .run(progress)
            .map_err(|e| self.locate(e))
    }

    /// Lines saying how the outcome misses this definition's expectation at the bits check's
    /// bound of 4 standard errors; empty when it meets it.
    pub fn unmet(&self, outcome: &Outcome) -> Vec<String> {
        self.unmet_at(outcome, BITS_CHECK_Z)
    }

    /// [`Definition::unmet`] with the bits check at `bits_bound`.
    pub fn unmet_at(&self, outcome: &Outcome, bits_bound: f64) -> Vec<String> {
        let bits = outcome.bits_failures_at(bits_bound);
        match self.file.expect_bits_check {
            Expectation::Pass => bits
                .into_iter()
                .chain(outcome.failures.iter().cloned())
                .map(|line| format!("{}: {line}", self.name))
                .collect(),
            Expectation::Fail if bits.is_empty() => vec![format!(
                "{}: expected to fail the bits check, but every row matched its bits: the check has lost its teeth",
                self.name
            )],
            Expectation::Fail => Vec::new(),
        }
    }
}

/// Every `*.toml` in `dir`, by name.
pub fn load_definitions(dir: &Path) -> Result<Vec<Definition>> {
    let entries = fs::read_dir(dir).map_err(|e| Error::io(dir, e))?;
    let mut paths = Vec::new();
    for entry in entries {
        let path = entry.map_err(|e| Error::io(dir, e))?.path();
        if path.extension().is_some_and(|ext| ext == "toml") {
            paths.push(path);
        }
    }
    paths.sort();
    if paths.is_empty() {
        return Err(Error::Definition {
            path: dir.to_path_buf(),
            message: "no experiment files (*.toml)".into(),
        });
    }
    paths.iter().map(|p| Definition::load(p)).collect()
}

/// The files `reproduce` writes for a definition, by extension.
pub const RESULT_EXTENSIONS: [&str; 3] = ["csv", "md", "svg"];

/// Runs every definition and writes `results/<name>.csv`, `.md` and `.svg` atomically; `on_done` sees
/// each outcome with its wall time. Returns the unmet expectations.
pub fn reproduce(
    definitions: &[Definition],
    results: &Path,
    progress: &ProgressBar,
    mut on_done: impl FnMut(&Definition, &Outcome, Duration),
) -> Result<Vec<String>> {
    fs::create_dir_all(results).map_err(|e| Error::io(results, e))?;
    let mut unmet = Vec::new();
    for definition in definitions {
        let started = Instant::now();
        let outcome = definition.run(None, progress)?;
        let table = &outcome.table;
        for (ext, format) in [("csv", Format::CSV), ("md", Format::MARKDOWN)] {
            let path = results.join(format!("{}.{ext}", definition.name));
            report::write_atomic(&path, report::render(table, format)?.as_bytes())?;
        }
        crate::plot::write_plot(
            &outcome.plate,
            &results.join(format!("{}.svg", definition.name)),
        )?;
        unmet.extend(definition.unmet(&outcome));
        on_done(definition, &outcome, started.elapsed());
    }
    Ok(unmet)
}

/// A line of the `check` summary.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CheckRow {
    /// The experiment file's name.
    pub experiment: String,
    /// Measured rows of the fresh run.
    pub rows: usize,
    /// Largest |z| of a rate against its committed value (0 when not compared).
    pub worst_z_rate: f64,
    /// Largest |z| of a fill against its committed value.
    pub worst_z_fill: f64,
    /// Whether every row's rate agrees with its own fill, and what the experiment file
    /// expects (`expect_bits_check`): "pass (expected pass)".
    pub bits_check: String,
    /// "ok" when the results files are there with as many rows, every row keeps its setup
    /// and no rate or fill drifted beyond the bound; else "FAIL".
    pub verdict: String,
}

impl Record for CheckRow {
    fn columns() -> Vec<Column> {
        vec![
            col("experiment", Cell::Plain("experiment")),
            col("rows", Cell::Plain("rows")),
            col("worst z rate", Cell::Fixed("worst_z_rate", 2)),
            col("worst z fill", Cell::Fixed("worst_z_fill", 2)),
            col("bits check", Cell::Plain("bits_check")),
            col("verdict", Cell::Plain("verdict")),
        ]
    }
}

/// The outcome of `check`.
#[derive(Clone, Debug)]
pub struct CheckReport {
    pub rows: Vec<CheckRow>,
    /// One line per failure, naming the experiment, the row and the column.
    pub failures: Vec<String>,
    /// The bound applied, in standard errors.
    pub z_bound: f64,
    /// The seeds used with `--reseed`.
    pub seeds: Option<(u64, u64)>,
}

/// Key and hash seeds for a re-seeded check, a pure function of `reseed_seed`.
pub fn reseed_seeds(reseed_seed: u64) -> (u64, u64) {
    let mut rng = Pcg64::seed_from_u64(reseed_seed);
    (rng.next_u64(), rng.next_u64())
}

fn read_committed(path: &Path) -> Result<Vec<HashMap<String, String>>> {
    let mut reader = csv::Reader::from_path(path).map_err(|e| Error::Results {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    let headers = reader
        .headers()
        .map_err(|e| Error::Results {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?
        .clone();
    reader
        .records()
        .map(|record| {
            record
                .map(|r| {
                    headers
                        .iter()
                        .zip(r.iter())
                        .map(|(h, v)| (h.to_string(), v.to_string()))
                        .collect()
                })
                .map_err(|e| Error::Results {
                    path: path.to_path_buf(),
                    message: e.to_string(),
                })
        })
        .collect()
}

fn committed_number(row: &HashMap<String, String>, column: &str) -> Option<f64> {
    row.get(column).and_then(|v| v.parse().ok())
}

/// One pending comparison of a fresh value with a committed one.
struct Comparison {
    experiment: String,
    row: usize,
    column: &'static str,
    z: f64,
}

/// Re-runs every definition and compares it with the committed results in `results`.
///
/// Each rate and each fill is compared with its committed value as two independent samples:
/// rate variance `p(1-p)/q + (k p/f)² Var(X/m)` per sample, fill variance `Var(X/m)` (the
/// exact occupancy variance), `z = (new - old) / sqrt(2 · var)`. Identity columns (n, m, k,
/// hash, queries and, without reseeding, the seeds) must match exactly. With `reseed`, fresh
/// seeds are used and the bound is raised to the Bonferroni bound for a family-wise false
/// alarm rate of [`RESEED_FAMILY_ALPHA`]; experiments expected to fail their bits check are
/// then compared on the bits check alone, since a flawed hash is not binomial across seeds,
/// and the bits check's bound is raised likewise over all rows.
pub fn check(
    definitions: &[Definition],
    results: &Path,
    reseed: Option<u64>,
    z_bound: f64,
    progress: &ProgressBar,
) -> Result<CheckReport> {
    let seeds = reseed.map(reseed_seeds);
    let mut failures = Vec::new();
    let mut comparisons: Vec<Comparison> = Vec::new();
    let mut summary = Vec::new();
    let known: Vec<String> = definitions.iter().map(|d| d.name.clone()).collect();
    if let Ok(entries) = fs::read_dir(results) {
        let mut extra: Vec<String> = entries
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| {
                p.extension()
                    .and_then(|e| e.to_str())
                    .is_some_and(|e| RESULT_EXTENSIONS.contains(&e))
            })
            .filter(|p| {
                let stem = p.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
                !known.iter().any(|k| k == stem)
            })
            .map(|p| p.display().to_string())
            .collect();
        extra.sort();
        for path in extra {
            failures.push(format!(
                "{path}: results file without an experiment definition"
            ));
        }
    }
    for definition in definitions {
        let outcome = definition.run(seeds, progress)?;
        let mut row_failures = definition.unmet(&outcome);
        let measurements = &outcome.measurements;
        let bits_state = if outcome.bits_failures().is_empty() {
            "pass"
        } else {
            "fail"
        };
        let expected = match definition.file.expect_bits_check {
            Expectation::Pass => "pass",
            Expectation::Fail => "fail",
        };
        let first_comparison = comparisons.len();
        for ext in RESULT_EXTENSIONS {
            let path = results.join(format!("{}.{ext}", definition.name));
            if !path.exists() {
                row_failures.push(format!(
                    "{}: missing results file {}",
                    definition.name,
                    path.display()
                ));
            }
        }
        let csv_path = results.join(format!("{}.csv", definition.name));
        let committed = if csv_path.exists() {
            read_committed(&csv_path)?
        } else {
            Vec::new()
        };
        if csv_path.exists() && committed.len() != measurements.len() {
            row_failures.push(format!(
                "{}: {} rows now, {} committed",
                definition.name,
                measurements.len(),
                committed.len()
            ));
        }
        let statistical = seeds.is_none() || definition.file.expect_bits_check == Expectation::Pass;
        for (i, (fresh, old)) in measurements.iter().zip(&committed).enumerate() {
            let mut identity = vec![
                ("n", fresh.n.to_string()),
                ("m", fresh.m.to_string()),
                ("k", fresh.k.to_string()),
                ("hash", fresh.hash.to_string()),
                ("queries", fresh.queries.to_string()),
            ];
            if seeds.is_none() {
                identity.push(("seed", fresh.seed.to_string()));
                identity.push(("hash_seed", fresh.hash_seed.to_string()));
            }
            for (column, value) in identity {
                let was = old.get(column).map(String::as_str).unwrap_or("(absent)");
                if was != value {
                    row_failures.push(format!(
                        "{}: row {}: column {column} is {value}, committed {was}",
                        definition.name,
                        i + 1
                    ));
                }
            }
            if !statistical {
                continue;
            }
            let rate_var = fresh.fpr_variance();
            let fill_var = fill_variance(fresh.m, fresh.k as f64 * fresh.n as f64);
            for (column, now, var) in [
                ("fpr_measured", fresh.fpr_measured, rate_var),
                ("fill_measured", fresh.fill_measured, fill_var),
            ] {
                let z = match committed_number(old, column) {
                    Some(was) => two_sample_z(now, var, was, var),
                    None => f64::INFINITY,
                };
                comparisons.push(Comparison {
                    experiment: definition.name.clone(),
                    row: i + 1,
                    column,
                    z,
                });
            }
        }
        let worst = |column: &str| {
            comparisons[first_comparison..]
                .iter()
                .filter(|c| c.column == column)
                .map(|c| c.z.abs())
                .fold(0.0, f64::max)
        };
        summary.push(CheckRow {
            experiment: definition.name.clone(),
            rows: measurements.len(),
            worst_z_rate: worst("fpr_measured"),
            worst_z_fill: worst("fill_measured"),
            bits_check: format!("{bits_state} (expected {expected})"),
            verdict: if row_failures.is_empty() {
                "ok"
            } else {
                "FAIL"
            }
            .into(),
        });
        failures.extend(row_failures);
    }
    let z_bound = if seeds.is_some() {
        z_bound.max(bonferroni_z(RESEED_FAMILY_ALPHA, comparisons.len()))
    } else {
        z_bound
    };
    for c in &comparisons {
        if c.z.is_nan() || c.z.abs() > z_bound {
            failures.push(format!(
                "{}: row {}: column {} drifted: z = {:.2} beyond ±{z_bound:.2}",
                c.experiment, c.row, c.column, c.z
            ));
            if let Some(row) = summary.iter_mut().find(|r| r.experiment == c.experiment) {
                row.verdict = "FAIL".into();
            }
        }
    }
    Ok(CheckReport {
        rows: summary,
        failures,
        z_bound,
        seeds,
    })
}
