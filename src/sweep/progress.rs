//! Progress on stderr: an indicatif bar with ETA when stderr is a terminal, one plain line per
//! finished repetition otherwise (logs and CI keep a readable record).

use crate::text::shown;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::time::Instant;

/// Progress over the runs (repetitions) of a sweep.
pub struct Progress {
    bar: Option<ProgressBar>,
    total: u64,
    done: u64,
    started: Instant,
}

impl Progress {
    /// `total`: repetitions the plan will run.
    pub fn new(total: u64) -> Self {
        let bar = std::io::stderr().is_terminal().then(|| {
            let b = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
            b.set_style(
                ProgressStyle::with_template(
                    "{bar:30.cyan/blue} {pos}/{len} runs, {elapsed} elapsed, ETA {eta}  {wide_msg}",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            b
        });
        Progress {
            bar,
            total,
            done: 0,
            started: Instant::now(),
        }
    }

    /// A repetition starts.
    pub fn begin(&mut self, label: &str) {
        if let Some(b) = &self.bar {
            b.set_message(shown(label).into_owned());
        }
    }

    /// A repetition ended with `outcome`.
    pub fn finish_run(&mut self, label: &str, outcome: &str) {
        self.done += 1;
        match &self.bar {
            Some(b) => {
                b.inc(1);
                if outcome.starts_with("FAILED") {
                    b.println(shown(&format!("{label}: {outcome}")));
                }
            }
            None => {
                let elapsed = self.started.elapsed().as_secs_f64();
                let left = self.total.saturating_sub(self.done) as f64;
                let eta = if self.done > 0 {
                    elapsed / self.done as f64 * left
                } else {
                    0.0
                };
                crate::eprintln_shown!(
                    "[{}/{}] {} (ETA {})",
                    self.done,
                    self.total,
                    shown(&format!("{label}: {outcome}")),
                    format_secs(eta)
                );
            }
        }
    }

    /// A line that must not be overwritten by the bar.
    pub fn note(&self, msg: &str) {
        match &self.bar {
            Some(b) => b.println(shown(msg)),
            None => crate::eprintln_shown!("{}", shown(msg)),
        }
    }

    /// Removes the bar.
    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

/// `3 min 20 s`, `45 s`, `1.5 s`.
pub fn format_secs(s: f64) -> String {
    if s >= 3600.0 {
        format!(
            "{} h {} min",
            (s / 3600.0) as u64,
            ((s % 3600.0) / 60.0) as u64
        )
    } else if s >= 60.0 {
        format!("{} min {} s", (s / 60.0) as u64, (s % 60.0) as u64)
    } else if s >= 10.0 {
        format!("{s:.0} s")
    } else {
        format!("{s:.1} s")
    }
}
