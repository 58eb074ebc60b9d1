//! Photon tracing on the GPU (`density/photons.wgsl`, `density/photons_kept.wgsl`). Batches of
//! photons (a batch's flights must fit one storage binding) are first counted: `count`
//! stores each photon's number of flights, `kept_counts` the number the options keep, and
//! both are scanned. One submission counts every batch, and the host reads back two numbers
//! per batch (its flights, and those kept) to size the buffers. Then, recorded on the
//! caller's recorder, `trace` writes each batch's flights at its photons' offsets and
//! `gather` copies the kept ones into the tracing's one list of segments, where the density
//! estimate reads them: the flights never leave the GPU.

use std::sync::Arc;

use lumbre_compact::{ScanKind, record_scan};
use lumbre_gpu::{Buffer, Compute, Error, Fit, Gpu, Progress, Recorder, Report, Result, Timings};
use lumbre_raytrace::twin::GpuEmitters;
use lumbre_raytrace::{Emitters, GpuScene, Prepared};
use lumbre_shaders::density::{PHOTONS_BVH, PHOTONS_KD, PHOTONS_KEPT};

use crate::photons::{Bounces, PhotonOptions, PhotonTracer, Photons, escape_box};
use crate::problem::Segment;

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, bytemuck::Pod, bytemuck::Zeroable)]
pub(crate) struct Params {
    bmin: [f32; 3],
    count: u32,
    bmax: [f32; 3],
    max_bounces: u32,
    escape_lo: [f32; 3],
    seed: u32,
    escape_hi: [f32; 3],
    em_count: u32,
    eps: f32,
    first: u32,
    photons: u32,
    _pad: u32,
}
const _: () = assert!(
    size_of::<Params>() == lumbre_shaders::density::PHOTONS_KD_PARAMS_SIZE
        && size_of::<Params>() == lumbre_shaders::density::PHOTONS_BVH_PARAMS_SIZE
);

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, bytemuck::Pod, bytemuck::Zeroable)]
struct KeptParams {
    count: u32,
    bounces: u32,
    dst_base: u32,
    _pad: u32,
}
const _: () = assert!(size_of::<KeptParams>() == lumbre_shaders::density::PHOTONS_KEPT_PARAMS_SIZE);

const WG: u64 = 64;

/// `density/photons_kept.wgsl`'s code of a [`Bounces`].
fn bounces_code(b: Bounces) -> u32 {
    match b {
        Bounces::All => 0,
        Bounces::DirectOnly => 1,
        Bounces::IndirectOnly => 2,
    }
}

/// A scene on the GPU for photon tracing: its kd-tree, per-triangle normals and materials,
/// and its emitters.
///
/// ```no_run
/// use lumbre_density::PhotonTracer;
/// use lumbre_gpu::{Compute, Gpu};
/// use lumbre_raytrace::{Prepared, Scene};
/// let (scene, _) = Scene::load_obj("testdata/scenes/CornellBox-Diffuse.obj".as_ref()).unwrap();
/// let on_gpu = PhotonTracer::default().upload(&Gpu::new()?, &Prepared::new(scene, &Default::default()))?;
/// # let _ = on_gpu;
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct GpuPhotonScene {
    pub(crate) scene: GpuScene,
    pub(crate) emitters: GpuEmitters,
    /// The emitters on the host, for the bound of a run's flight power
    /// ([`flight_power_bound`](crate::photons::flight_power_bound)).
    pub(crate) host_emitters: Arc<Emitters>,
    pub(crate) params: Params,
}

/// One batch of photons: its first photon, its size, and how many flights each of its
/// photons keeps (read back only by [`download`]).
#[derive(Clone, Debug)]
pub(crate) struct Batch {
    pub first: u32,
    pub kept: Buffer<u32>,
}

/// Traced flights on the GPU: the kept flights of every photon, in photon order, then bounce
/// order, as the density estimate reads segments (see [`GpuProblem::resident`](crate::GpuProblem::resident));
/// read them back with [`Compute::download`](lumbre_gpu::Compute::download) (see
/// [`GpuPhotonScene`]).
#[derive(Clone, Debug)]
pub struct GpuPhotons {
    /// Two vec4s per kept flight: start (w: the bounce's bits), end (at least two).
    pub(crate) geom: Buffer<[f32; 4]>,
    /// One vec4 per kept flight: RGB power (at least one).
    pub(crate) power: Buffer<[f32; 4]>,
    /// Kept flights.
    pub(crate) segments: usize,
    /// Flights traced, kept or not.
    pub(crate) traced: u64,
    pub(crate) batches: Vec<Batch>,
    pub(crate) timings: Vec<Timings>,
}

impl GpuPhotons {
    /// The kept flights: the segments a density estimate reads.
    ///
    /// ```no_run
    /// use lumbre_density::{PhotonOptions, PhotonTracer};
    /// use lumbre_gpu::{Compute, Gpu};
    /// use lumbre_raytrace::{Prepared, Scene};
    /// let (scene, _) = Scene::load_obj("testdata/scenes/CornellBox-Diffuse.obj".as_ref()).unwrap();
    /// let gpu = Gpu::new()?;
    /// let tracer = PhotonTracer { options: PhotonOptions { photons: 1000, ..Default::default() } };
    /// let scene = tracer.upload(&gpu, &Prepared::new(scene, &Default::default()))?;
    /// let mut rec = gpu.recorder();
    /// let flights = tracer.record(&mut rec, &scene)?;
    /// rec.submit()?;
    /// assert!(flights.segments() as u64 <= flights.traced());
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn segments(&self) -> usize {
        self.segments
    }

    /// Every flight traced, kept or not (see [`GpuPhotons::segments`] for an example).
    pub fn traced(&self) -> u64 {
        self.traced
    }
}

/// Uploads what the tracer reads.
pub(crate) fn upload(gpu: &Gpu, p: &Prepared) -> Result<GpuPhotonScene> {
    let em = Emitters::new(&p.scene)?;
    if em.is_empty() {
        return Err(Error::Input("the scene has no emitter (no material with Ke > 0): no photon can leave it".into()));
    }
    let (lo, hi) = escape_box(p);
    let scene = GpuScene::upload(gpu, p)?;
    let params = Params {
        bmin: scene.bounds().min.into(),
        bmax: scene.bounds().max.into(),
        escape_lo: lo.into(),
        escape_hi: hi.into(),
        em_count: em.len() as u32,
        eps: p.eps,
        ..Params::default()
    };
    Ok(GpuPhotonScene { scene, emitters: GpuEmitters::upload(gpu, &em)?, host_emitters: Arc::new(em), params })
}

/// Flights per step of the kept list at which a binding may start: the binding offset
/// alignment in flights of both their geometry (32 bytes) and power (16 bytes).
fn align_flights(gpu: &Gpu) -> usize {
    let align = gpu.limits().min_storage_buffer_offset_alignment.max(1) as usize;
    align.div_ceil(16)
}

/// Photons per batch: as many as fit one binding in the worst case (every photon
/// `max_bounces` flights of 32 bytes of geometry, and the kept list's binding starting up to
/// one alignment step early), at most 2^20.
fn batch_size(gpu: &Gpu, o: &PhotonOptions) -> u32 {
    let slack = 32 * align_flights(gpu) as u64;
    let fit = gpu.limits().max_storage_buffer_binding_size.saturating_sub(slack) / (32 * o.max_bounces.max(1) as u64);
    fit.clamp(1, 1 << 20) as u32
}

/// One batch's buffers between the counting and the tracing.
struct Counted {
    first: u32,
    n: u32,
    uniform: lumbre_gpu::wgpu::Buffer,
    counts: Buffer<u32>,
    offsets: Buffer<u32>,
    kept: Buffer<u32>,
    kept_offsets: Buffer<u32>,
}

/// The shader's bindings in order.
fn bindings<'a>(
    scene: &'a GpuPhotonScene,
    uniform: &'a lumbre_gpu::wgpu::Buffer,
    counts: &'a Buffer<u32>,
    geom: &'a Buffer<[f32; 4]>,
    power: &'a Buffer<[f32; 4]>,
) -> Vec<lumbre_gpu::wgpu::BindingResource<'a>> {
    let [em, cdf, index] = scene.emitters.bindings();
    [uniform.as_entire_binding()]
        .into_iter()
        .chain(scene.scene.bindings())
        .chain([em, cdf, index, counts.binding(), geom.binding(), power.binding()])
        .collect()
}

/// Records the tracing: submits the counting of every batch (and what `rec` held before),
/// reads back each batch's number of flights and of kept flights, then records the tracing
/// and the gathering of the kept flights on `rec`.
pub(crate) fn record(rec: &mut Recorder, scene: &GpuPhotonScene, o: &PhotonOptions) -> Result<GpuPhotons> {
    o.check()?;
    let gpu = rec.gpu().clone();
    let batch = batch_size(&gpu, o).max(1);
    let stand_in = gpu.zeroed::<[f32; 4]>(2)?;
    let photons = scene.scene.structure.pick(PHOTONS_KD, PHOTONS_BVH);
    let count = gpu.kernel(&photons, "count")?;
    let kept_counts = gpu.kernel(&PHOTONS_KEPT, "kept_counts")?;
    let indices = o.indices();
    let starts: Vec<u32> = (0..(indices.len() as u32).div_ceil(batch)).map(|b| indices.start + b * batch).collect();
    let totals = gpu.zeroed::<u32>(2 * starts.len().max(1))?;
    let mut counted = Vec::with_capacity(starts.len());
    for (b, &first) in starts.iter().enumerate() {
        let n = batch.min(indices.end - first);
        let params =
            Params { count: n, first, photons: o.photons, max_bounces: o.max_bounces, seed: o.seed, ..scene.params };
        let c = Counted {
            first,
            n,
            uniform: gpu.uniform(&params)?,
            counts: gpu.zeroed(n as usize)?,
            offsets: gpu.zeroed(n as usize)?,
            kept: gpu.zeroed(n as usize)?,
            kept_offsets: gpu.zeroed(n as usize)?,
        };
        let groups = (n as u64).div_ceil(WG);
        rec.dispatch("photons", &count, &bindings(scene, &c.uniform, &c.counts, &stand_in, &stand_in), groups)?;
        let scan = record_scan(rec, &c.counts, &c.offsets, ScanKind::Exclusive)?;
        rec.copy_range(scan.carry(), scan.carry().len() - 1, &totals, 2 * b, 1)?;
        let fp = gpu.uniform(&KeptParams { count: n, bounces: bounces_code(o.bounces), ..Default::default() })?;
        let res = kept_bindings(&fp, &c, &stand_in, &stand_in, stand_in.binding(), stand_in.binding());
        rec.dispatch("photons", &kept_counts, &res, groups)?;
        let scan = record_scan(rec, &c.kept, &c.kept_offsets, ScanKind::Exclusive)?;
        rec.copy_range(scan.carry(), scan.carry().len() - 1, &totals, 2 * b + 1, 1)?;
        counted.push(c);
    }
    let done = std::mem::replace(rec, gpu.recorder());
    let timings = vec![done.submit()?];
    let sizes = gpu.download(&totals)?;
    let flights = |b: usize| sizes[2 * b] as usize;
    let kept = |b: usize| sizes[2 * b + 1] as usize;
    let segments: usize = (0..counted.len()).map(kept).sum();
    let traced: u64 = (0..counted.len()).map(|b| flights(b) as u64).sum();
    if u32::try_from(segments).is_err() {
        return Err(Error::Input(format!("{segments} flights kept: at most 2^32 - 1 segments")));
    }
    gpu.check_size("kept photon flights (32 bytes each)", 32 * segments as u64, Fit::Pieces)?;
    let geom = gpu.zeroed_fit::<[f32; 4]>(2 * segments.max(1), Fit::Pieces)?;
    let power = gpu.zeroed_fit::<[f32; 4]>(segments.max(1), Fit::Pieces)?;
    let longest = (0..counted.len()).map(flights).max().unwrap_or(0).max(1);
    let (batch_geom, batch_power) = (gpu.zeroed::<[f32; 4]>(2 * longest)?, gpu.zeroed::<[f32; 4]>(longest)?);
    let trace = gpu.kernel(&photons, "trace")?;
    let gather = gpu.kernel(&PHOTONS_KEPT, "gather")?;
    let step = align_flights(&gpu);
    let mut base = 0usize;
    let mut batches = Vec::with_capacity(counted.len());
    for (b, c) in counted.into_iter().enumerate() {
        let k = kept(b);
        if k > 0 {
            let groups = (c.n as u64).div_ceil(WG);
            let res = bindings(scene, &c.uniform, &c.offsets, &batch_geom, &batch_power);
            rec.dispatch("photons", &trace, &res, groups)?;
            // The kept list's binding starts at an aligned flight at most one step early.
            let start = base / step * step;
            let fp = gpu.uniform(&KeptParams {
                count: c.n,
                bounces: bounces_code(o.bounces),
                dst_base: (base - start) as u32,
                _pad: 0,
            })?;
            let dst_geom = geom.binding_range(2 * start..2 * (base + k));
            let dst_power = power.binding_range(start..base + k);
            let res = kept_bindings(&fp, &c, &batch_geom, &batch_power, dst_geom, dst_power);
            rec.dispatch("photons", &gather, &res, groups)?;
        }
        base += k;
        batches.push(Batch { first: c.first, kept: c.kept });
    }
    Ok(GpuPhotons { geom, power, segments, traced, batches, timings })
}

/// The bindings of `density/photons_kept.wgsl` for batch `c`.
fn kept_bindings<'a>(
    params: &'a lumbre_gpu::wgpu::Buffer,
    c: &'a Counted,
    src_geom: &'a Buffer<[f32; 4]>,
    src_power: &'a Buffer<[f32; 4]>,
    dst_geom: lumbre_gpu::wgpu::BindingResource<'a>,
    dst_power: lumbre_gpu::wgpu::BindingResource<'a>,
) -> Vec<lumbre_gpu::wgpu::BindingResource<'a>> {
    vec![
        params.as_entire_binding(),
        c.counts.binding(),
        c.offsets.binding(),
        c.kept.binding(),
        c.kept_offsets.binding(),
        src_geom.binding(),
        src_power.binding(),
        dst_geom,
        dst_power,
    ]
}

/// Reads the kept flights back, with the photon of each.
pub(crate) fn download(gpu: &Gpu, out: &GpuPhotons) -> Result<Photons> {
    let n = out.segments;
    let g = gpu.download_range(&out.geom, 0..2 * n)?;
    let p = gpu.download_range(&out.power, 0..n)?;
    let mut segments = Vec::with_capacity(n);
    let mut photon = Vec::with_capacity(n);
    for Batch { first, kept } in &out.batches {
        for (i, &c) in gpu.download(kept)?.iter().enumerate() {
            for _ in 0..c {
                let k = segments.len();
                if k >= n {
                    return Err(Error::Validation(format!("the batches keep more than the {n} flights counted")));
                }
                let (a, b) = (g[2 * k], g[2 * k + 1]);
                segments.push(Segment {
                    start: glam::Vec3::new(a[0], a[1], a[2]),
                    end: glam::Vec3::new(b[0], b[1], b[2]),
                    power: [p[k][0], p[k][1], p[k][2]],
                    bounce: a[3].to_bits(),
                });
                photon.push(first + i as u32);
            }
        }
    }
    Ok(Photons { segments, photon })
}

impl Compute for PhotonTracer {
    type Input = Prepared;
    type Output = Photons;
    type GpuInput = GpuPhotonScene;
    type GpuOutput = GpuPhotons;

    fn name(&self) -> &'static str {
        "photons"
    }

    /// Stage `trace photons`; stats `photons` and `segments`.
    fn cpu_reported(&self, input: &Prepared, progress: &dyn Progress) -> Result<(Photons, Report)> {
        self.run_cpu(input, progress)
    }

    fn upload(&self, gpu: &Gpu, input: &Prepared) -> Result<GpuPhotonScene> {
        upload(gpu, input)
    }

    fn record(&self, rec: &mut Recorder, input: &GpuPhotonScene) -> Result<GpuPhotons> {
        record(rec, input, &self.options)
    }

    fn download(&self, gpu: &Gpu, output: &GpuPhotons) -> Result<Photons> {
        download(gpu, output)
    }

    fn gpu_stats(&self, _: &Gpu, output: &GpuPhotons) -> Result<Report> {
        let mut report = Report::default();
        for t in &output.timings {
            for (stage, d) in Report::from_timings("trace photons", t).stages {
                report.add_stage(&stage, d);
            }
        }
        report.stat("photons", self.options.indices().len() as f64);
        report.stat("segments traced", output.traced as f64);
        report.stat("segments", output.segments as f64);
        Ok(report)
    }
}
