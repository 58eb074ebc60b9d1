//! The GPU path: the input uploaded once, then each method's stages in the order of the CPU
//! stages (`brute.rs`, `octree.rs`, `bvh.rs`), all adding into per-disk fixed-point
//! accumulators of eight words (count, a spare word, then low and high words per channel).

mod brute;
mod bvh;
pub(crate) mod camera;
pub(crate) mod disks;
mod nearest;
mod octree;
pub(crate) mod photons;
pub(crate) mod problem;
pub(crate) mod progressive;

use std::sync::Arc;

use glam::Vec3;
use lumbre_gpu::{Buffer, Fit, Gpu, Recorder, Report, Result};

use crate::bvh::build::centre_grid;
use crate::fixed::{Acc, pow2};
use crate::problem::{DiskData, Frame, Problem};
use crate::{Density, Estimate, Method};

/// Words per disk accumulator.
pub(crate) const ACC_WORDS: usize = 8;

/// What the host knows of a problem on the GPU: sizes, the frame every method derives from
/// the whole input, the box of the disk centres, and the disks themselves when they came
/// from the host (disks made on the GPU are read back with the result).
#[derive(Clone, Debug)]
pub(crate) struct Layout {
    pub disks: usize,
    pub frame: Frame,
    /// `(min, 1024 / size)` of the disk centres, for Morton codes ([`centre_grid`]).
    pub centre_grid: (Vec3, Vec3),
    pub host_disks: Option<Arc<Vec<DiskData>>>,
}

/// A [`Problem`] on the GPU: segments (geometry and power), disks (with their boxes), and
/// what the host derived from them. Made by [`Compute::upload`](lumbre_gpu::Compute::upload)
/// of [`Density`](crate::Density) from a problem on the host, or by
/// [`GpuProblem::resident`] from photon flights and disks made on the GPU; see
/// [`GpuProblem::segments`].
#[derive(Clone, Debug)]
pub struct GpuProblem {
    /// Two vec4s per segment: start (w unused), end (w unused).
    pub(crate) seg_geom: Buffer<[f32; 4]>,
    /// One vec4 per segment: RGB power, w unused.
    pub(crate) seg_power: Buffer<[f32; 4]>,
    /// Two vec4s per disk ([`DiskData`]).
    pub(crate) disks: Buffer<DiskData>,
    /// Two vec4s per disk: the box's min corner, then its max corner (w unused).
    pub(crate) disk_boxes: Buffer<[f32; 4]>,
    pub(crate) segments: usize,
    pub(crate) layout: Arc<Layout>,
    /// Submissions made to derive it on the GPU ([`GpuProblem::resident`]).
    pub(crate) report: Report,
}

impl GpuProblem {
    /// Number of segments.
    ///
    /// ```no_run
    /// use lumbre_density::{Density, Problem};
    /// use lumbre_gpu::{Compute, Gpu};
    /// let on_gpu = Density::default().upload(&Gpu::new()?, &Problem::default())?;
    /// assert_eq!((on_gpu.segments(), on_gpu.disks()), (0, 0));
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn segments(&self) -> usize {
        self.segments
    }

    /// Number of disks.
    pub fn disks(&self) -> usize {
        self.layout.disks
    }
}

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

/// Uploads a problem (validated and prepared on the host).
pub(crate) fn upload(gpu: &Gpu, input: &Problem) -> Result<GpuProblem> {
    let prep = input.prepare()?;
    let mut geom = Vec::with_capacity(2 * input.segments.len().max(1));
    let mut power = Vec::with_capacity(input.segments.len().max(1));
    for s in &input.segments {
        geom.push(s.start.extend(0.0).to_array());
        geom.push(s.end.extend(0.0).to_array());
        power.push([s.power[0], s.power[1], s.power[2], 0.0]);
    }
    let boxes: Vec<[f32; 4]> =
        prep.disk_boxes.iter().flat_map(|b| [b.min.extend(0.0).to_array(), b.max.extend(0.0).to_array()]).collect();
    let or_one = |mut v: Vec<[f32; 4]>, n: usize| {
        v.resize(v.len().max(n), [0.0; 4]);
        v
    };
    let mut disks = prep.disks.clone();
    disks.resize(disks.len().max(1), DiskData::default());
    let layout = Layout {
        disks: prep.disks.len(),
        frame: Frame { root: prep.root, pad: prep.pad, scale_exp: prep.scale_exp },
        centre_grid: centre_grid(&prep),
        host_disks: Some(Arc::new(prep.disks)),
    };
    Ok(GpuProblem {
        seg_geom: gpu.upload_fit(&or_one(geom, 2), Fit::Pieces)?,
        seg_power: gpu.upload_fit(&or_one(power, 1), Fit::Pieces)?,
        disks: gpu.upload(&disks)?,
        disk_boxes: gpu.upload(&or_one(boxes, 2))?,
        segments: input.segments.len(),
        layout: Arc::new(layout),
        report: Report::default(),
    })
}

/// Submits what `rec` holds and gives it a fresh recorder; the passes' times go to `report`
/// (by label; `name` when there are no timestamps).
pub(crate) fn flush(rec: &mut Recorder, name: &str, report: &mut Report) -> Result<()> {
    let gpu = rec.gpu().clone();
    let done = std::mem::replace(rec, gpu.recorder());
    report.merge(Report::from_timings(name, &done.submit()?));
    Ok(())
}

/// The fixed-point scale `2^k` of a problem.
pub(crate) fn scale(input: &GpuProblem) -> f32 {
    pow2(input.layout.frame.scale_exp)
}

/// Zeroed accumulators for the problem's disks.
pub(crate) fn accumulators(gpu: &Gpu, input: &GpuProblem) -> Result<Buffer<u32>> {
    gpu.zeroed::<u32>(ACC_WORDS * input.disks().max(1))
}

/// Records the chosen method.
pub(crate) fn record(alg: &Density, rec: &mut Recorder, input: &GpuProblem) -> Result<GpuEstimate> {
    let mut out = match alg.method {
        Method::BruteForce => brute::record(rec, input),
        Method::Octree => octree::record(rec, input, &alg.octree),
        Method::Bvh => bvh::record(rec, input),
    }?;
    let mut report = input.report.clone();
    report.merge(std::mem::take(&mut out.report));
    out.report = report;
    Ok(out)
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
