//! What a run shows while it runs, on stderr: an `indicatif` progress bar
//! (drawn only on a terminal) and one line per failed request (always).

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// The progress of a run.
#[derive(Clone, Debug)]
pub struct Progress {
    bar: ProgressBar,
    /// Whether error lines are printed.
    say_errors: bool,
}

impl Progress {
    /// A bar on stderr (hidden where stderr is not a terminal), error
    /// lines on stderr.
    pub fn stderr() -> Progress {
        Progress {
            bar: ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr()),
            say_errors: true,
        }
    }

    /// Shows nothing (for tests and libraries).
    pub fn hidden() -> Progress {
        Progress {
            bar: ProgressBar::hidden(),
            say_errors: false,
        }
    }

    /// A new phase (`warm-up`, `requests`) of `total` requests.
    pub fn phase(&self, name: &str, total: usize) {
        self.bar.set_length(total as u64);
        self.bar.set_position(0);
        let style = ProgressStyle::with_template(
            "{prefix:>8} [{bar:30}] {pos}/{len} {elapsed_precise} {msg}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ");
        self.bar.set_style(style);
        self.bar.set_prefix(name.to_owned());
        self.bar.reset_elapsed();
    }

    /// One request done; `failed`: failures so far in this phase.
    pub fn tick(&self, failed: usize) {
        self.bar.inc(1);
        if failed > 0 {
            self.bar.set_message(format!("{failed} failed"));
        }
    }

    /// Prints a line on stderr above the bar.
    pub fn error_line(&self, line: &str) {
        if self.say_errors {
            self.bar.suspend(|| eprintln!("toolscan: {line}"));
        }
    }

    /// Removes the bar.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
