//! [`CameraDensity`] on the GPU: the disks at the camera's first hits, then per pass the
//! photon tracing, the problem derived on the device and the method's passes (and the
//! progressive update), all on the caller's recorder but for the submissions that read
//! back sizes; the disks, flights and sums never leave the device until the result.

use lumbre_gpu::{Buffer, Compute, Gpu, Progress, Recorder, Report, Result};
use lumbre_raytrace::Prepared;

use crate::camera::{CameraDensity, CameraEstimate};
use crate::fixed::Acc;
use crate::gpu::disks::{self, GpuCameraDisks};
use crate::gpu::estimate::{ACC_WORDS, GpuEstimate};
use crate::gpu::photons::{self, GpuPhotonScene};
use crate::gpu::problem::GpuProblem;
use crate::gpu::progressive::{self, GpuProgressive, record_count_pairs};
use crate::gpu::{density, nearest};

/// A [`CameraDensity`] run on the GPU: its disks, the last pass's sums or the progressive
/// state, and what the run learnt on the host (see [`CameraDensity`]).
///
/// ```no_run
/// use lumbre_density::CameraDensity;
/// use lumbre_gpu::{Compute, Gpu};
/// use lumbre_raytrace::{Camera, Prepared, Scene};
/// let (scene, _) = Scene::load_obj("testdata/scenes/CornellBox-Diffuse.obj".as_ref()).unwrap();
/// let gpu = Gpu::new()?;
/// let alg = CameraDensity::new(Camera::parse("0,1,3.9,0,1,0,0,1,0,40").unwrap(), 64, 64, 0.05);
/// let scene = alg.upload(&gpu, &Prepared::new(scene, &Default::default()))?;
/// let mut rec = gpu.recorder();
/// let on_gpu = alg.record(&mut rec, &scene)?; // a GpuCameraEstimate
/// rec.submit()?;
/// let out = alg.download(&gpu, &on_gpu)?;
/// assert_eq!(out.irradiance.len(), out.disks.disks.len());
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct GpuCameraEstimate {
    pub(crate) disks: GpuCameraDisks,
    /// The last pass's estimate (the result of a single pass).
    pub(crate) last: GpuEstimate,
    pub(crate) progressive: Option<GpuProgressive>,
    /// (low, high) words of the crossings of every pass (single pass; the progressive state
    /// counts its own).
    pub(crate) pairs: Buffer<u32>,
    /// Each pass's counters of node visits and pairs tested, if its method counts them.
    pub(crate) counters: Vec<(Buffer<u32>, bool)>,
    pub(crate) report: Report,
    pub(crate) segments: u64,
    pub(crate) traced: u64,
}

/// Records the whole run.
pub(crate) fn record(alg: &CameraDensity, rec: &mut Recorder, scene: &GpuPhotonScene) -> Result<GpuCameraEstimate> {
    alg.check()?;
    let scale_exp = alg.scale_exp(&scene.host_emitters);
    let gpu = rec.gpu().clone();
    let mut report = Report::default();
    let disks = disks::record(rec, scene, &alg.camera, alg.width, alg.height, alg.radius)?;
    let mut progressive = if alg.passes > 1 { Some(GpuProgressive::new(&gpu, &disks.disks, alg.alpha)?) } else { None };
    let pairs = gpu.zeroed::<u32>(2)?;
    let (mut segments, mut traced) = (0u64, 0u64);
    let mut counters = Vec::new();
    let mut last = None;
    for pass in 0..alg.passes {
        let flights = photons::record(rec, scene, &alg.tracer(pass).options)?;
        for t in &flights.timings {
            report.merge(Report::from_timings("photons", t));
        }
        segments += flights.segments as u64;
        traced += flights.traced;
        if let (0, Some(k)) = (pass, alg.k) {
            nearest::record(rec, &flights, &disks.disks, k, alg.radius / 16.0, alg.radius)?;
        }
        let at = progressive.as_ref().map_or(&disks.disks, |p| p.disks());
        let problem = GpuProblem::resident_at(rec, &flights, at, Some(scale_exp))?;
        let mut est = density::record(&alg.density, rec, &problem)?;
        report.merge(std::mem::take(&mut est.report));
        if let Some(c) = &est.counters {
            counters.push((c.clone(), est.counts_visits));
        }
        match &mut progressive {
            Some(p) => p.add_pass(rec, &est, alg.photons.photons as u64)?,
            None => record_count_pairs(rec, &est, &disks.disks, &pairs)?,
        }
        last = Some(est);
    }
    let last = last.ok_or_else(|| lumbre_gpu::Error::Input("at least one pass".into()))?;
    Ok(GpuCameraEstimate { disks, last, progressive, pairs, counters, report, segments, traced })
}

/// Reads the disks and their irradiance back (and, for one pass, the raw sums).
pub(crate) fn download(alg: &CameraDensity, gpu: &Gpu, out: &GpuCameraEstimate) -> Result<CameraEstimate> {
    let disks = disks::download(gpu, &out.disks)?;
    let n = disks.disks.len();
    match &out.progressive {
        Some(p) => {
            let state = gpu.download_range(&p.state, 0..n)?;
            let irradiance = progressive::irradiance(&disks.disks, &state, p.photons);
            Ok(CameraEstimate { disks, irradiance, sums: None })
        }
        None => {
            let words = gpu.download_range(&out.last.acc, 0..ACC_WORDS * n)?;
            let accs: Vec<Acc> = words.chunks_exact(ACC_WORDS).map(Acc::from_words).collect();
            CameraEstimate::from_sums(disks, alg.sums(out.last.layout.frame.scale_exp, &accs))
        }
    }
}

/// The run's statistics: the stages before the last submission, the totals, the counters.
pub(crate) fn stats(alg: &CameraDensity, gpu: &Gpu, out: &GpuCameraEstimate) -> Result<Report> {
    let mut report = out.report.clone();
    let pairs = match &out.progressive {
        Some(p) => p.pairs(gpu)?,
        None => {
            let w = gpu.download(&out.pairs)?;
            w[0] as u64 | (w[1] as u64) << 32
        }
    };
    alg.totals(&mut report, out.segments, out.last.layout.disks, pairs);
    report.stat("segments traced", out.traced as f64);
    let (mut visits, mut tested, mut counts_visits) = (0u64, 0u64, false);
    for (c, v) in &out.counters {
        let w = gpu.download(c)?;
        let word = |i: usize| w[i] as u64 | (w[i + 1] as u64) << 32;
        visits += word(0);
        tested += word(2);
        counts_visits |= *v;
    }
    if counts_visits {
        report.stat("bvh node visits", visits as f64);
    }
    if !out.counters.is_empty() {
        report.stat("pairs tested", tested as f64);
    }
    Ok(report)
}

impl Compute for CameraDensity {
    type Input = Prepared;
    type Output = CameraEstimate;
    type GpuInput = GpuPhotonScene;
    type GpuOutput = GpuCameraEstimate;

    fn name(&self) -> &'static str {
        "camera density"
    }

    /// The stages of photon tracing, `camera disks` (and `nearest radii`), and of the
    /// method, summed over passes; stats `photons`, `segments`, `disks`, `pairs found`,
    /// `passes`.
    fn cpu_reported(&self, p: &Prepared, progress: &dyn Progress) -> Result<(CameraEstimate, Report)> {
        self.run_cpu(p, progress)
    }

    fn upload(&self, gpu: &Gpu, p: &Prepared) -> Result<GpuPhotonScene> {
        self.check()?;
        photons::upload(gpu, p)
    }

    fn record(&self, rec: &mut Recorder, scene: &GpuPhotonScene) -> Result<GpuCameraEstimate> {
        record(self, rec, scene)
    }

    fn download(&self, gpu: &Gpu, out: &GpuCameraEstimate) -> Result<CameraEstimate> {
        download(self, gpu, out)
    }

    fn gpu_stats(&self, gpu: &Gpu, out: &GpuCameraEstimate) -> Result<Report> {
        stats(self, gpu, out)
    }
}
