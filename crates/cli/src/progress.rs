//! Progress bars for long commands.

use std::sync::Mutex;
use std::time::Instant;

use indicatif::{ProgressBar, ProgressStyle};

/// A bar of `len` steps labelled `what`.
pub fn progress(len: u64, what: &str) -> ProgressBar {
    let bar = ProgressBar::new(len);
    bar.set_style(
        ProgressStyle::with_template("{spinner} {msg} [{bar:30}] {pos}/{len} {elapsed}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    bar.set_message(what.to_string());
    bar
}

/// A progress callback for the algorithms that moves `bar` (any stage: one bar per run). An
/// update with `total` 0 only names the stage. Where the bar is hidden (output to a log, not
/// a terminal), each new stage is printed as a line with the time since the start instead.
pub fn bar_progress(bar: &ProgressBar) -> impl Fn(&str, u64, u64) + Sync + '_ {
    let start = Instant::now();
    let last = Mutex::new(String::new());
    move |stage: &str, done: u64, total: u64| {
        if total > 0 {
            bar.set_length(total);
            bar.set_position(done);
        }
        if bar.is_hidden() {
            let mut last = last.lock().unwrap_or_else(|e| e.into_inner());
            if *last != stage {
                eprintln!("{:>9.2} s  {stage}", start.elapsed().as_secs_f64());
                stage.clone_into(&mut last);
            }
        }
    }
}
