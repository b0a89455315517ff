//! How much of the machine other processes took while a measurement ran: on a machine of
//! few CPUs a neighbour's load moves every timing, so a run says when it shared the machine.

use std::time::Instant;

use crate::program::own_cpu_seconds;

/// Other processes' mean CPU use during a run above which its figures are flagged: on two
/// vCPUs a process spinning beside the bench doubles in-cache timings, and a quarter of a
/// CPU is already a neighbour that runs most of the time on one core in four.
pub const OTHERS_LIMIT: f64 = 0.25;

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

impl Shared {
    /// The note on other processes' load, `NOT TO BE TRUSTED: ... {consequence}` above
    /// [`OTHERS_LIMIT`] CPUs.
    pub fn note(&self, cpus: usize, consequence: &str) -> String {
        let load = |l: Option<f64>| l.map_or("?".into(), |l| format!("{l:.2}"));
        let loads = format!(
            "load average {} -> {}",
            load(self.load.0),
            load(self.load.1)
        );
        match self.others {
            Some(others) if others > OTHERS_LIMIT => format!(
                "NOT TO BE TRUSTED: other processes kept {others:.2} of {cpus} CPUs busy on average during the run ({loads}); {consequence}"
            ),
            Some(others) => {
                format!(
                    "other processes kept {others:.2} of {cpus} CPUs busy on average during the run ({loads})"
                )
            }
            None => format!("other processes' CPU use unknown here (no /proc/stat; {loads})"),
        }
    }
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
