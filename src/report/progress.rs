//! The progress bar every long command draws on stderr.

use indicatif::{ProgressBar, ProgressState, ProgressStyle};

use super::significant;

/// A progress bar on stderr, drawn only when stderr is a terminal and not `--quiet`:
/// `unit`s done of those known, their rate and the time left, redrawn every 200 ms even
/// while no count moves.
pub fn progress_bar(quiet: bool, unit: &str) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(0);
    let template = format!(
        "{{spinner}} {{msg}} [{{bar:30}}] {{human_pos}}/{{human_len}} {unit}, {{rate}} {unit}/s, ETA {{eta}}"
    );
    if let Ok(style) = ProgressStyle::with_template(&template) {
        let rate = |state: &ProgressState, w: &mut dyn std::fmt::Write| {
            let _ = w.write_str(&per_second(state.per_sec()));
        };
        bar.set_style(style.with_key("rate", rate).progress_chars("=> "));
    }
    bar.enable_steady_tick(std::time::Duration::from_millis(200));
    bar
}

/// A rate with three significant figures and an SI prefix: `17.3M`, `912k`, `40.0`.
fn per_second(rate: f64) -> String {
    let (scale, prefix) = [(1e9, "G"), (1e6, "M"), (1e3, "k")]
        .into_iter()
        .find(|(scale, _)| rate >= *scale)
        .unwrap_or((1.0, ""));
    format!("{}{prefix}", significant(rate / scale))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_read_with_a_prefix() {
        assert_eq!(per_second(17_278_108.0), "17.3M");
        assert_eq!(per_second(912_000.0), "912k");
        assert_eq!(per_second(40.0), "40.0");
    }
}
