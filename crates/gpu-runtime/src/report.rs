//! What a run reports beside its output (stage times and statistics), and progress callbacks.

use std::fmt;
use std::time::{Duration, Instant};

use crate::{Result, TimingSource, Timings};

/// Stage times and named statistics of one run, from either path.
///
/// The CPU path times its stages with the wall clock; the GPU path fills `stages` from its
/// pass timings ([`Report::from_timings`]) and reads its statistics back from counters.
///
/// ```
/// use lumbre_gpu::Report;
/// let mut r = Report::default();
/// let sum: u64 = r.time("sum", || (1..=10u64).sum());
/// r.stat("values", 10.0);
/// assert_eq!(sum, 55);
/// assert_eq!(r.get("values"), Some(10.0));
/// assert_eq!(r.stages[0].0, "sum");
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Report {
    /// (stage, time) in the order the stages ran.
    pub stages: Vec<(String, Duration)>,
    /// (name, value): counts such as rays cast or pairs found, and averages.
    pub stats: Vec<(String, f64)>,
    /// GPU time of the run's submissions ([`Timings::gpu`]: timestamps, else wall clock);
    /// `None` for a CPU run.
    pub gpu: Option<Duration>,
}

impl Report {
    /// A report of the GPU passes in `t`, summed per label (wall clock without timestamps).
    ///
    /// ```
    /// use lumbre_gpu::{Report, TimingSource, Timings};
    /// use std::time::Duration;
    /// let t = Timings { passes: vec![], span: Duration::ZERO, wall: Duration::from_millis(3), source: TimingSource::WallClock };
    /// let r = Report::from_timings("render", &t);
    /// assert_eq!(r.stages, vec![("render".to_string(), Duration::from_millis(3))]);
    /// assert_eq!(r.gpu, Some(Duration::from_millis(3)));
    /// ```
    pub fn from_timings(name: &str, t: &Timings) -> Report {
        let stages = match t.source {
            TimingSource::Timestamps if !t.passes.is_empty() => t.by_label(),
            _ => vec![(name.to_string(), t.gpu())],
        };
        Report { stages, stats: Vec::new(), gpu: Some(t.gpu()) }
    }

    /// Runs `f` as the one stage of a run: its output, and a report of its wall-clock time.
    ///
    /// ```
    /// use lumbre_gpu::Report;
    /// let (sum, r) = Report::timed("sum", || Ok((1..=10u64).sum::<u64>()))?;
    /// assert_eq!(sum, 55);
    /// assert_eq!(r.stages[0].0, "sum");
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn timed<T>(stage: &str, f: impl FnOnce() -> Result<T>) -> Result<(T, Report)> {
        let mut report = Report::default();
        let out = report.time(stage, f)?;
        Ok((out, report))
    }

    /// Adds `d` to `stage` (appended if new).
    pub fn add_stage(&mut self, stage: &str, d: Duration) {
        match self.stages.iter_mut().find(|(s, _)| s == stage) {
            Some((_, t)) => *t += d,
            None => self.stages.push((stage.to_string(), d)),
        }
    }

    /// Runs `f`, adding its wall-clock time to `stage`.
    pub fn time<T>(&mut self, stage: &str, f: impl FnOnce() -> T) -> T {
        let t = Instant::now();
        let out = f();
        self.add_stage(stage, t.elapsed());
        out
    }

    /// Sets statistic `name` to `value`.
    pub fn stat(&mut self, name: &str, value: f64) {
        match self.stats.iter_mut().find(|(s, _)| s == name) {
            Some((_, v)) => *v = value,
            None => self.stats.push((name.to_string(), value)),
        }
    }

    /// The value of statistic `name`.
    pub fn get(&self, name: &str) -> Option<f64> {
        self.stats.iter().find(|(s, _)| s == name).map(|(_, v)| *v)
    }

    /// The time of `stage`.
    pub fn stage(&self, stage: &str) -> Option<Duration> {
        self.stages.iter().find(|(s, _)| s == stage).map(|(_, d)| *d)
    }

    /// The sum of the stage times.
    pub fn total(&self) -> Duration {
        self.stages.iter().map(|(_, d)| *d).sum()
    }

    /// Appends `other`'s stages (summing equal names) and statistics (later values win), and
    /// adds its GPU time.
    pub fn merge(&mut self, other: Report) {
        self.gpu = match (self.gpu, other.gpu) {
            (Some(a), Some(b)) => Some(a + b),
            (a, b) => a.or(b),
        };
        for (s, d) in other.stages {
            self.add_stage(&s, d);
        }
        for (n, v) in other.stats {
            self.stat(&n, v);
        }
    }
}

impl fmt::Display for Report {
    /// `stage 1.23 ms, stage 4.56 ms; name 7, name 8.9`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let stages: Vec<String> =
            self.stages.iter().map(|(s, d)| format!("{s} {:.2} ms", d.as_secs_f64() * 1e3)).collect();
        write!(f, "{}", stages.join(", "))?;
        let stats: Vec<String> = self.stats.iter().map(|(n, v)| format!("{n} {}", format_stat(*v))).collect();
        if !stats.is_empty() {
            write!(f, "; {}", stats.join(", "))?;
        }
        Ok(())
    }
}

/// Whole numbers as integers, others with four significant digits.
fn format_stat(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 { format!("{v:.0}") } else { format!("{v:.4}") }
}

/// Progress of a long run, called from any thread: `done` of `total` units of `stage`.
///
/// Closures implement it, and `()` ignores every update.
///
/// ```
/// use lumbre_gpu::Progress;
/// use std::sync::atomic::{AtomicU64, Ordering};
/// let seen = AtomicU64::new(0);
/// let p = |_stage: &str, done: u64, _total: u64| { seen.fetch_max(done, Ordering::Relaxed); };
/// p.update("render", 3, 10);
/// ().update("render", 4, 10);
/// assert_eq!(seen.load(Ordering::Relaxed), 3);
/// ```
pub trait Progress: Sync {
    /// `done` of `total` units of `stage` are finished.
    fn update(&self, stage: &str, done: u64, total: u64);
}

impl Progress for () {
    fn update(&self, _: &str, _: u64, _: u64) {}
}

impl<F: Fn(&str, u64, u64) + Sync> Progress for F {
    fn update(&self, stage: &str, done: u64, total: u64) {
        self(stage, done, total)
    }
}
