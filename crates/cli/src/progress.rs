//! Progress bars for long commands.

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

/// A progress callback for the algorithms that moves `bar` (any stage: one bar per run).
pub fn bar_progress(bar: &ProgressBar) -> impl Fn(&str, u64, u64) + Sync + '_ {
    move |_stage: &str, done: u64, total: u64| {
        bar.set_length(total);
        bar.set_position(done);
    }
}
