//! The estimate on the GPU: per-disk fixed-point accumulators of eight words (count, a spare
//! word, then low and high words per channel) that every method adds into, read back as an
//! [`Estimate`], with the counters the methods keep.

use std::sync::Arc;

use lumbre_gpu::{Buffer, Gpu, Report, Result};

use crate::estimate::Estimate;
use crate::fixed::Acc;
use crate::gpu::problem::{GpuProblem, Layout};
use crate::problem::DiskData;

/// Words per disk accumulator.
pub(crate) const ACC_WORDS: usize = 8;

/// The per-disk results on the GPU, with what the run learnt on the host (its statistics,
/// and the times of the submissions it made while recording).
///
/// ```no_run
/// use lumbre_density::{Density, Problem};
/// use lumbre_gpu::{Compute, Gpu};
/// let gpu = Gpu::new()?;
/// let alg = Density::default();
/// let input = alg.upload(&gpu, &Problem::default())?;
/// let mut rec = gpu.recorder();
/// let on_gpu = alg.record(&mut rec, &input)?; // a GpuEstimate
/// rec.submit()?;
/// assert!(alg.download(&gpu, &on_gpu)?.count.is_empty());
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct GpuEstimate {
    /// [`ACC_WORDS`] words per disk.
    pub(crate) acc: Buffer<u32>,
    /// The disks the sums belong to (their radii give the irradiance).
    pub(crate) disks: Buffer<DiskData>,
    pub(crate) layout: Arc<Layout>,
    pub(crate) report: Report,
    /// Counters the kernels add to, if any: (low, high) words of node visits, then of pairs
    /// tested.
    pub(crate) counters: Option<Buffer<u32>>,
    /// Whether the first counter (node visits) is counted.
    pub(crate) counts_visits: bool,
}

impl GpuEstimate {
    pub(crate) fn new(input: &GpuProblem, acc: Buffer<u32>, report: Report, counters: Option<Buffer<u32>>) -> Self {
        GpuEstimate {
            acc,
            disks: input.disks.clone(),
            layout: input.layout.clone(),
            report,
            counters,
            counts_visits: false,
        }
    }
}

/// Zeroed accumulators for the problem's disks.
pub(crate) fn accumulators(gpu: &Gpu, input: &GpuProblem) -> Result<Buffer<u32>> {
    gpu.zeroed::<u32>(ACC_WORDS * input.disks().max(1))
}

/// Reads the accumulators back (and the disks' radii, when they were made on the GPU).
pub(crate) fn download(gpu: &Gpu, out: &GpuEstimate) -> Result<Estimate> {
    let n = out.layout.disks;
    let words = gpu.download_range(&out.acc, 0..ACC_WORDS * n)?;
    let accs: Vec<Acc> = words.chunks_exact(ACC_WORDS).map(Acc::from_words).collect();
    let scale_exp = out.layout.frame.scale_exp;
    match &out.layout.host_disks {
        Some(disks) => Ok(Estimate::from_accs(&accs, disks, scale_exp)),
        None => Ok(Estimate::from_accs(&accs, &gpu.download_range(&out.disks, 0..n)?, scale_exp)),
    }
}

/// The number of crossings found, from the accumulators' counts.
fn pairs_found(gpu: &Gpu, out: &GpuEstimate) -> Result<u64> {
    let words = gpu.download_range(&out.acc, 0..ACC_WORDS * out.layout.disks)?;
    Ok(words.iter().step_by(ACC_WORDS).map(|&c| c as u64).sum())
}

/// The run's statistics: those known on the host, and the counters.
pub(crate) fn stats(gpu: &Gpu, out: &GpuEstimate) -> Result<Report> {
    let mut report = out.report.clone();
    report.stat("pairs found", pairs_found(gpu, out)? as f64);
    if let Some(c) = &out.counters {
        let w = gpu.download(c)?;
        let word = |i: usize| (w[i] as u64 | (w[i + 1] as u64) << 32) as f64;
        if out.counts_visits {
            report.stat("bvh node visits", word(0));
        }
        report.stat("pairs tested", word(2));
    }
    Ok(report)
}
