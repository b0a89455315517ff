//! The machine a bench runs on, named beside its figures: the CPU model and the vector
//! features its paths use; and whether the figures can be trusted: how much CPU other
//! processes took while it ran, and how far its own line-limit passes spread.

use crate::pipeline::sharing::Shared;
use crate::pipeline::timing::{LineRate, cpuinfo_field as field};

/// Slowest over fastest independent line-read pass at one size above which the limit the
/// rows are compared with is flagged: on a quiet machine they stay within a few percent.
pub const SPREAD_LIMIT: f64 = 1.5;

/// The CPU: its model as the OS names it, with vendor, family and model numbers where it
/// gives them, the number of CPUs, and the vector features bloomlab's paths use.
#[derive(Clone, Debug, PartialEq)]
pub struct Machine {
    pub model: String,
    pub cpus: usize,
    pub features: Vec<&'static str>,
}

impl Machine {
    /// This machine, as `/proc/cpuinfo` and run-time feature detection describe it (the
    /// architecture's name where there is no `/proc/cpuinfo`).
    pub fn here() -> Machine {
        let model = match (field("model name"), field("cpu family"), field("model")) {
            (Some(name), Some(family), Some(number)) => format!(
                "{name} ({} family {family} model {number})",
                field("vendor_id").unwrap_or_default()
            ),
            (Some(name), _, _) => name,
            _ => format!("an {} CPU", std::env::consts::ARCH),
        };
        Machine {
            model,
            cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
            features: vector_features(),
        }
    }

    /// `AMD EPYC (AuthenticAMD family 25 model 17), 2 CPUs, avx2 avx512f ...`.
    pub fn describe(&self) -> String {
        let features = match self.features.is_empty() {
            true => "no vector feature bloomlab uses".to_string(),
            false => self.features.join(" "),
        };
        format!("{}, {} CPUs, {features}", self.model, self.cpus)
    }
}

/// The vector features bloomlab's paths use that this CPU reports at run time.
fn vector_features() -> Vec<&'static str> {
    #[cfg(target_arch = "x86_64")]
    {
        macro_rules! detected {
            ($($name:tt),*) => {
                [$(($name, is_x86_feature_detected!($name))),*]
            };
        }
        let all = detected!(
            "sse4.2",
            "avx",
            "avx2",
            "fma",
            "bmi2",
            "avx512f",
            "avx512dq",
            "avx512bw",
            "avx512vl",
            "avx512ifma",
            "avx512vbmi"
        );
        all.into_iter()
            .filter(|&(_, has)| has)
            .map(|(name, _)| name)
            .collect()
    }
    #[cfg(target_arch = "aarch64")]
    {
        let neon = std::arch::is_aarch64_feature_detected!("neon");
        neon.then_some("neon").into_iter().collect()
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    Vec::new()
}

/// The notes that say when a run's figures are not to be trusted: other processes above
/// [`OTHERS_LIMIT`](crate::pipeline::sharing::OTHERS_LIMIT) CPUs, or a size whose line-limit passes spread beyond [`SPREAD_LIMIT`];
/// else one note that neither was seen.
pub fn trust_notes(shared: &Shared, limits: &[LineRate], cpus: usize) -> Vec<String> {
    let mut notes = vec![shared.note(
        cpus,
        "they share caches, cores and memory with the bench and can slow a timing up to 2x: compare rows within this run only, or run again on a quiet machine",
    )];
    for limit in limits {
        if limit.independent_spread > SPREAD_LIMIT {
            notes.push(format!(
                "NOT TO BE TRUSTED: the line-limit passes in a {}-byte buffer spread {:.2}x (slowest over fastest; beyond {SPREAD_LIMIT}): the machine's speed changed during the run",
                limit.bytes, limit.independent_spread
            ));
        }
    }
    notes
}
