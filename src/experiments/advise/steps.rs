//! advise's progress: each phase and contender as the bar's message, and, where the bar
//! cannot be drawn (stderr not a terminal) but was asked for (not `--quiet`), as a plain line
//! on stderr, so that a run in a pipe or a log shows where it is.

use std::io::IsTerminal;
use std::time::Instant;

use indicatif::ProgressBar;

use crate::console;

/// The progress of one run.
pub struct Steps<'a> {
    pub bar: &'a ProgressBar,
    plain: bool,
    started: Instant,
}

impl<'a> Steps<'a> {
    /// Plain lines when stderr is not a terminal and the bar is not `--quiet`'s:
    /// [`crate::report::progress_bar`] makes the quiet bar without a length and every other
    /// with one (a test pins both).
    /// The seconds count from `started`.
    pub fn new(bar: &'a ProgressBar, started: Instant) -> Self {
        Steps {
            bar,
            plain: bar.length().is_some() && !std::io::stderr().is_terminal(),
            started,
        }
    }

    /// ns since the run began.
    pub fn elapsed_ns(&self) -> f64 {
        self.started.elapsed().as_nanos() as f64
    }

    /// Shows `message`: on the bar, and as a line after the seconds since the run began
    /// where the bar is not drawn.
    pub fn show(&self, message: String) {
        if self.plain {
            let seconds = self.started.elapsed().as_secs_f64();
            self.bar
                .suspend(|| console::note(&format!("{seconds:6.1} s  {message}")));
        }
        self.bar.set_message(message);
    }
}

#[cfg(test)]
mod tests {
    use crate::report::progress_bar;

    #[test]
    fn the_quiet_bar_alone_has_no_length() {
        assert_eq!(progress_bar(true, "keys").length(), None);
        assert_eq!(progress_bar(false, "keys").length(), Some(0));
    }
}
