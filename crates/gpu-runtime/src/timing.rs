//! Timing reports, and the benchmark clock: medians of runs on a GPU kept busy.

use std::fmt;
use std::time::Duration;

use crate::Result;
#[cfg(feature = "wgpu")]
use crate::{Buffer, CopyKernel, Fit, Gpu};

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

/// Keeps the GPU at the clocks of sustained load between measurements. A GPU lowers its
/// clocks within milliseconds of idling, and benchmarks idle it between runs (allocating,
/// recording, reading back); a few warm-up runs do not help when every run starts after
/// such a gap. [`KeepBusy::new`] keeps the GPU copying 64 MiB back and forth
/// without a gap for [`WARM_UP`] and learns how long one copy takes; [`KeepBusy::queue`]
/// then submits about a given span of copies without waiting, so the measured work
/// submitted right after starts on a busy GPU.
///
/// ```no_run
/// let gpu = lumbre_gpu::Gpu::new()?;
/// let busy = lumbre_gpu::KeepBusy::new(&gpu)?;
/// busy.queue(&gpu, std::time::Duration::from_millis(20))?;
/// // ... record and submit the measured work here ...
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
#[cfg(feature = "wgpu")]
#[derive(Debug)]
pub struct KeepBusy {
    a: Buffer<[u32; 4]>,
    b: Buffer<[u32; 4]>,
    per_copy: Duration,
}

/// How long [`KeepBusy::new`] keeps the GPU busy before measuring: clocks rise only under
/// sustained load, and not at once (seconds after an idle spell, see the tuning log).
///
/// ```
/// assert_eq!(lumbre_gpu::WARM_UP.as_millis(), 2000);
/// ```
#[cfg(feature = "wgpu")]
pub const WARM_UP: Duration = Duration::from_millis(2000);

#[cfg(feature = "wgpu")]
impl KeepBusy {
    /// Keeps the GPU busy for [`WARM_UP`] and times its copies.
    ///
    /// ```no_run
    /// let gpu = lumbre_gpu::Gpu::new()?;
    /// let busy = lumbre_gpu::KeepBusy::new(&gpu)?;
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn new(gpu: &Gpu) -> Result<Self> {
        let n = (64usize << 20) / 16;
        let (a, b) = (gpu.zeroed_fit::<[u32; 4]>(n, Fit::Pieces)?, gpu.zeroed_fit::<[u32; 4]>(n, Fit::Pieces)?);
        let copies = |count: usize| -> Result<crate::Recorder> {
            let mut rec = gpu.recorder().without_timestamps();
            for k in 0..count {
                let (src, dst) = if k % 2 == 0 { (&a, &b) } else { (&b, &a) };
                CopyKernel::record_into(&mut rec, src, dst)?;
            }
            Ok(rec)
        };
        let start = std::time::Instant::now();
        copies(16)?.submit()?;
        let mut per_copy = start.elapsed() / 16;
        // Rounds of about 50 ms of copies, each recorded while the previous one runs and
        // followed by 16 waited copies, so the GPU has work at every moment; a round's wall
        // time over its copies times the copy at the clocks reached.
        let batch = |per_copy: Duration| (0.05 / per_copy.as_secs_f64().max(1e-9)).clamp(1.0, 4096.0) as usize;
        let mut queued = batch(per_copy);
        let mut next = copies(queued)?;
        while start.elapsed() < WARM_UP {
            let round = std::time::Instant::now();
            next.submit_no_wait()?;
            let ran = queued;
            queued = batch(per_copy);
            next = copies(queued)?;
            copies(16)?.submit()?;
            per_copy = round.elapsed() / (ran + 16) as u32;
        }
        Ok(KeepBusy { a, b, per_copy })
    }

    /// Submits about `span` of copies without waiting.
    ///
    /// ```no_run
    /// let gpu = lumbre_gpu::Gpu::new()?;
    /// let busy = lumbre_gpu::KeepBusy::new(&gpu)?;
    /// busy.queue(&gpu, lumbre_gpu::BUSY_SPAN)?;
    /// let mut rec = gpu.recorder();
    /// // ... record the work to measure ...
    /// let timings = rec.submit()?;
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn queue(&self, gpu: &Gpu, span: Duration) -> Result<()> {
        let copies = (span.as_secs_f64() / self.per_copy.as_secs_f64().max(1e-9)).ceil().clamp(1.0, 4096.0) as usize;
        let mut rec = gpu.recorder().without_timestamps();
        for k in 0..copies {
            let (src, dst) = if k % 2 == 0 { (&self.a, &self.b) } else { (&self.b, &self.a) };
            CopyKernel::record_into(&mut rec, src, dst)?;
        }
        rec.submit_no_wait()
    }
}

/// Median of the GPU times `f` reports, each run submitted right behind [`KeepBusy`] work
/// (20 ms of copies), after `warmup` unmeasured runs.
///
/// ```no_run
/// let gpu = lumbre_gpu::Gpu::new()?;
/// let (src, dst) = (gpu.zeroed::<[u32; 4]>(1 << 20)?, gpu.zeroed::<[u32; 4]>(1 << 20)?);
/// let t = lumbre_gpu::busy_median_time(&gpu, 2, 5, || {
///     let mut rec = gpu.recorder();
///     lumbre_gpu::CopyKernel::record_into(&mut rec, &src, &dst)?;
///     Ok(rec.submit()?.gpu())
/// })?;
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
#[cfg(feature = "wgpu")]
pub fn busy_median_time(
    gpu: &Gpu,
    warmup: usize,
    repeats: usize,
    mut f: impl FnMut() -> Result<Duration>,
) -> Result<Duration> {
    let busy = KeepBusy::new(gpu)?;
    median_time(warmup, repeats, || {
        busy.queue(gpu, BUSY_SPAN)?;
        f()
    })
}

/// How much GPU work [`busy_median_time`] queues ahead of each measured run: more than the
/// CPU takes to record a large submission.
///
/// ```
/// assert!(lumbre_gpu::BUSY_SPAN > std::time::Duration::ZERO);
/// ```
#[cfg(feature = "wgpu")]
pub const BUSY_SPAN: Duration = Duration::from_millis(20);

/// Runs `f` `warmup` times unmeasured, then `repeats` times, and returns the median of the
/// durations it reports.
///
/// ```
/// let t = lumbre_gpu::median_time(1, 3, || Ok(std::time::Duration::from_millis(2))).unwrap();
/// assert_eq!(t.as_millis(), 2);
/// ```
pub fn median_time(warmup: usize, repeats: usize, mut f: impl FnMut() -> Result<Duration>) -> Result<Duration> {
    for _ in 0..warmup {
        f()?;
    }
    let mut times = (0..repeats.max(1)).map(|_| f()).collect::<Result<Vec<_>>>()?;
    times.sort();
    Ok(times[times.len() / 2])
}
