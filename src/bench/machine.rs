//! The machine a bench runs on, named beside its figures: the CPU model and the vector
//! features its paths use; and whether the figures can be trusted: how much CPU other
//! processes took while it ran, and how far its own line-limit passes spread.

use std::time::Instant;

use crate::pipeline::timing::LineRate;
use crate::program::own_cpu_seconds;

/// Other processes' mean CPU use during a run above which its figures are flagged: on two
/// vCPUs a process spinning beside the bench doubles in-cache timings, and a quarter of a
/// CPU is already a neighbour that runs most of the time on one core in four.
pub const OTHERS_LIMIT: f64 = 0.25;

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
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let field = |name: &str| {
            cpuinfo
                .lines()
                .take_while(|line| !line.trim().is_empty())
                .find_map(|line| {
                    let (key, value) = line.split_once(':')?;
                    (key.trim() == name).then(|| value.trim().to_string())
                })
        };
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

/// The CPU time of the whole machine and of this process at the start of a run
/// ([`Sharing::since`]).
#[derive(Clone, Debug)]
pub struct Sharing {
    wall: Instant,
    /// Seconds of CPU every process took since boot (`/proc/stat`), if readable.
    machine: Option<f64>,
    /// Seconds of CPU this process took (`getrusage`).
    own: f64,
    load: Option<f64>,
}

/// What other processes took of the machine over a run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Shared {
    /// CPUs other processes (and the hypervisor's other guests, steal time) kept busy on
    /// average: `(machine CPU - this process's CPU) / wall time`; `None` without `/proc/stat`.
    pub others: Option<f64>,
    /// The one-minute load average at the start and at the end.
    pub load: (Option<f64>, Option<f64>),
}

impl Sharing {
    /// The counters now.
    pub fn start() -> Sharing {
        Sharing {
            wall: Instant::now(),
            machine: machine_cpu_seconds(),
            own: own_cpu_seconds(),
            load: load_average(),
        }
    }

    /// What other processes took since [`Sharing::start`].
    pub fn since(&self) -> Shared {
        let wall = self.wall.elapsed().as_secs_f64().max(1e-9);
        let own = own_cpu_seconds() - self.own;
        let others = self
            .machine
            .zip(machine_cpu_seconds())
            .map(|(start, end)| ((end - start - own) / wall).max(0.0));
        Shared {
            others,
            load: (self.load, load_average()),
        }
    }
}

/// The notes that say when a run's figures are not to be trusted: other processes above
/// [`OTHERS_LIMIT`] CPUs, or a size whose line-limit passes spread beyond [`SPREAD_LIMIT`];
/// else one note that neither was seen.
pub fn trust_notes(shared: &Shared, limits: &[LineRate], cpus: usize) -> Vec<String> {
    let load = |l: Option<f64>| l.map_or("?".into(), |l| format!("{l:.2}"));
    let loads = format!(
        "load average {} -> {}",
        load(shared.load.0),
        load(shared.load.1)
    );
    let mut notes = Vec::new();
    match shared.others {
        Some(others) if others > OTHERS_LIMIT => notes.push(format!(
            "NOT TO BE TRUSTED: other processes kept {others:.2} of {cpus} CPUs busy on average during the run ({loads}); they share caches, cores and memory with the bench and can slow a timing up to 2x: compare rows within this run only, or run again on a quiet machine"
        )),
        Some(others) => notes.push(format!(
            "other processes kept {others:.2} of {cpus} CPUs busy on average during the run ({loads})"
        )),
        None => notes.push(format!("other processes' CPU use unknown here (no /proc/stat; {loads})")),
    }
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

/// Seconds of CPU all processes took since boot: the busy fields of `/proc/stat`'s `cpu`
/// line (user, nice, system, irq, softirq, steal) over the clock tick.
fn machine_cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let line = stat.lines().find(|l| l.starts_with("cpu "))?;
    let ticks: Vec<f64> = line
        .split_whitespace()
        .skip(1)
        .map(|t| t.parse().unwrap_or(0.0))
        .collect();
    let busy: f64 = [0, 1, 2, 5, 6, 7]
        .iter()
        .filter_map(|&i| ticks.get(i))
        .sum();
    // SAFETY: sysconf reads a constant of the system.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    (hz > 0).then(|| busy / hz as f64)
}

/// The one-minute load average (`/proc/loadavg`).
fn load_average() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    text.split_whitespace().next()?.parse().ok()
}
