//! Timing reports.

use std::fmt;
use std::time::Duration;

/// Where a [`Timings`] figure came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimingSource {
    /// GPU timestamp queries around each pass.
    Timestamps,
    /// Wall clock around a blocking submit (the adapter has no timestamp queries).
    WallClock,
}

/// How long a submission took, per pass when timestamps are available.
///
/// ```
/// use lumbre_gpu::{Timings, TimingSource};
/// use std::time::Duration;
/// let t = Timings {
///     passes: vec![("scan".into(), Duration::from_micros(30)), ("scan".into(), Duration::from_micros(20))],
///     span: Duration::from_micros(55),
///     wall: Duration::from_micros(90),
///     source: TimingSource::Timestamps,
/// };
/// assert_eq!(t.gpu(), Duration::from_micros(55)); // the passes and the gap between them
/// assert_eq!(t.by_label(), vec![("scan".to_string(), Duration::from_micros(50))]);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Timings {
    /// (label, GPU time) per compute pass, in recording order; empty without timestamps.
    pub passes: Vec<(String, Duration)>,
    /// From the start of the first pass to the end of the last, gaps between passes
    /// included (summed over submissions where one operation takes several); zero without
    /// timestamps.
    pub span: Duration,
    /// Wall clock from submit to completion, including driver overhead.
    pub wall: Duration,
    /// Whether `passes` holds timestamp figures.
    pub source: TimingSource,
}

impl Timings {
    /// The best measure of GPU time: the span of the passes with timestamps, else wall clock.
    pub fn gpu(&self) -> Duration {
        match self.source {
            TimingSource::Timestamps => self.span,
            TimingSource::WallClock => self.wall,
        }
    }

    /// Pass times summed per label, in order of first appearance.
    pub fn by_label(&self) -> Vec<(String, Duration)> {
        let mut out: Vec<(String, Duration)> = Vec::new();
        for (l, d) in &self.passes {
            match out.iter_mut().find(|(k, _)| k == l) {
                Some((_, t)) => *t += *d,
                None => out.push((l.clone(), *d)),
            }
        }
        out
    }
}

impl fmt::Display for Timings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.source {
            TimingSource::Timestamps => {
                write!(f, "gpu {:.3} ms (timestamps", self.gpu().as_secs_f64() * 1e3)?;
                for (l, d) in self.by_label() {
                    write!(f, "; {l} {:.3} ms", d.as_secs_f64() * 1e3)?;
                }
                write!(f, "), wall {:.3} ms", self.wall.as_secs_f64() * 1e3)
            }
            TimingSource::WallClock => write!(f, "wall {:.3} ms", self.wall.as_secs_f64() * 1e3),
        }
    }
}
