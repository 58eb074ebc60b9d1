//! Imperfect shadow maps (Ritschel et al. 2008) with pull-push hole filling, as in the
//! source work's sections 3 and 4.3: a small paraboloid depth map per VPL, splatted from a
//! shared pool of scene points instead of rasterised triangles, its holes filled by
//! pull-push, and looked up with a few taps for a fraction of visibility.
//!
//! The stages, each with a CPU path and a GPU twin (a [`Compute`] each, for conformance
//! tests stage by stage):
//!
//! 1. [`SamplePoints`]: the pool, points spread over the triangles by area in a random order
//!    ([`ScenePoints`]); the same triangles and barycentric draws on both paths.
//! 2. [`Splat`]: each VPL projects the window of `points_per_vpl` pool points from its own
//!    start (the source work's suggested speed-up over discarding points per VPL) and keeps
//!    the nearest distance per texel ([`IsmAtlas`]).
//! 3. [`PullPush`]: holes filled from coarser levels (bilinear push).
//! 4. Lookups: [`IsmAtlas::visibility`] on the CPU, the WGSL module `lightcuts/ism_lookup`
//!    on the GPU ([`IsmLookup`] runs it for conformance).
//!
//! [`Ism`] runs stages 1-3 ([`Ism::build_cpu`], [`Ism::record_build`] from VPLs already on
//! the GPU).
//!
//! # CPU against GPU
//!
//! Both paths run the same operations in the same order, and the splat keeps integer
//! minima (order-independent), so on a device that evaluates f32 operations one by one as
//! IEEE 754 does (lavapipe, where the tests run) every stage agrees bit for bit. SPIR-V
//! lets a driver fuse multiply-adds and reassociate float operations (NVIDIA's do, and
//! Vulkan's division and square root may be off by an ulp or two): there positions and
//! depths move by a few ulps, and a point within rounding of a texel border can land in
//! the neighbouring texel. The pool's triangles and draws are integer arithmetic and agree
//! on every device; [`IsmAtlas::differing_texels`] measures the rest.
//!
//! ```
//! use glam::Vec3;
//! use lumbre_lightcuts::{Vpl, ism::{Ism, IsmOptions, ScenePoints}};
//! // A floor, and a small quad above it.
//! let quad = |y: f32, r: f32| {
//!     let c = [Vec3::new(-r, y, -r), Vec3::new(r, y, -r), Vec3::new(r, y, r), Vec3::new(-r, y, r)];
//!     [[c[0], c[1], c[2]], [c[0], c[2], c[3]]]
//! };
//! let tris: Vec<[Vec3; 3]> = quad(0.0, 1.0).into_iter().chain(quad(0.5, 0.25)).collect();
//! let opts = IsmOptions { size: 32, points: 20_000, points_per_vpl: 20_000, ..IsmOptions::paper() };
//! let pool = ScenePoints::sample(&tris, opts.points, opts.seed)?;
//! let vpl = Vpl { position: Vec3::new(0.0, 1.5, 0.0), normal: -Vec3::Y, intensity: Vec3::ONE };
//! let atlas = Ism::build_cpu(&pool, &[vpl], &opts)?;
//! assert_eq!(atlas.visibility(0, &vpl, Vec3::new(0.0, 0.0, 0.0)), 0.0); // under the quad
//! assert_eq!(atlas.visibility(0, &vpl, Vec3::new(0.9, 0.0, 0.9)), 1.0); // in the open
//! # Ok::<(), lumbre_gpu::Error>(())
//! ```

mod atlas;
mod gpu;
mod lookup;
mod options;
mod paraboloid;
mod points;
mod pull_push;
mod splat;

use glam::Vec3;
use lumbre_gpu::{Agree, Buffer, Compute, Error, Gpu, Progress, Recorder, Report, Result, Tolerance, compare_slices};

pub use atlas::{IsmAtlas, Lookup, MAX_DIFFERING, SAME_DEPTH_REL};
pub use gpu::{GpuIsmAtlas, GpuPoolInput, GpuScenePoints, GpuVpl, upload_vpls};
pub use options::{IsmOptions, MAX_POINTS, SIZES, TAPS};
pub use points::ScenePoints;

use crate::Vpl;

impl Agree for ScenePoints {
    /// Triangles and bounds exactly, positions within `tol`.
    fn disagreement(&self, gpu: &Self, tol: Tolerance) -> Option<String> {
        if self.bounds != gpu.bounds {
            return Some(format!("bounds differ: cpu {:?} vs gpu {:?}", self.bounds, gpu.bounds));
        }
        if let Some(d) = compare_slices(&self.triangles, &gpu.triangles, Tolerance::EXACT) {
            return Some(format!("triangles: {d}"));
        }
        let xyz = |p: &[Vec3]| p.iter().map(|v| v.to_array()).collect::<Vec<_>>();
        compare_slices(&xyz(&self.positions), &xyz(&gpu.positions), tol).map(|d| format!("positions: {d}"))
    }
}

/// Stage 1: samples the scene's point pool (see [`ScenePoints::sample`]).
///
/// ```
/// use glam::Vec3;
/// use lumbre_gpu::{Backend, Compute};
/// use lumbre_lightcuts::ism::SamplePoints;
/// let pool = SamplePoints { count: 64, seed: 1 }.run(&Backend::Cpu, &[[Vec3::ZERO, Vec3::X, Vec3::Y]])?;
/// assert_eq!(pool.len(), 64);
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SamplePoints {
    /// Points in the pool.
    pub count: u32,
    /// Seed of the draws and the order.
    pub seed: u32,
}

impl Compute for SamplePoints {
    type Input = [[Vec3; 3]];
    type Output = ScenePoints;
    type GpuInput = GpuPoolInput;
    type GpuOutput = GpuScenePoints;

    fn name(&self) -> &'static str {
        "ism points"
    }

    fn cpu(&self, triangles: &[[Vec3; 3]]) -> Result<ScenePoints> {
        ScenePoints::sample(triangles, self.count, self.seed)
    }

    fn upload(&self, gpu: &Gpu, triangles: &[[Vec3; 3]]) -> Result<GpuPoolInput> {
        GpuPoolInput::new(gpu, triangles, self.count, self.seed)
    }

    fn record(&self, rec: &mut Recorder, input: &GpuPoolInput) -> Result<GpuScenePoints> {
        gpu::record_points(rec, input)
    }

    fn download(&self, gpu: &Gpu, out: &GpuScenePoints) -> Result<ScenePoints> {
        let positions = gpu.download(&out.positions)?.into_iter().map(|p| Vec3::new(p[0], p[1], p[2])).collect();
        Ok(ScenePoints { positions, triangles: gpu.download(&out.triangles)?, bounds: out.bounds })
    }
}

/// A point pool and VPLs: the input of [`Splat`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct IsmInput {
    /// The scene's point pool.
    pub points: ScenePoints,
    /// The VPLs, one map each.
    pub vpls: Vec<Vpl>,
}

/// [`IsmInput`] on the GPU.
#[derive(Clone, Debug)]
pub struct GpuIsmInput {
    /// The pool.
    pub points: GpuScenePoints,
    /// The VPLs.
    pub vpls: Buffer<GpuVpl>,
}

/// Checks a pool against the options: not empty, at least `points_per_vpl` points.
fn check_pool(len: usize, opts: &IsmOptions) -> Result<()> {
    if len == 0 || len > MAX_POINTS as usize || opts.points_per_vpl as usize > len {
        return Err(Error::Input(format!(
            "a pool of {len} points for points_per_vpl {}: needed {}..={MAX_POINTS} points",
            opts.points_per_vpl,
            opts.points_per_vpl.max(1)
        )));
    }
    Ok(())
}

/// Stage 2: splats the pool into one depth map per VPL (no hole filling).
///
/// ```
/// use glam::Vec3;
/// use lumbre_gpu::{Backend, Compute};
/// use lumbre_lightcuts::{Vpl, ism::{IsmInput, IsmOptions, ScenePoints, Splat}};
/// let floor = [[Vec3::new(-1.0, 0.0, -1.0), Vec3::new(1.0, 0.0, -1.0), Vec3::new(0.0, 0.0, 1.0)]];
/// let opts = IsmOptions { size: 32, points: 1000, points_per_vpl: 1000, ..Default::default() };
/// let points = ScenePoints::sample(&floor, opts.points, 0)?;
/// let vpls = vec![Vpl { position: Vec3::Y, normal: -Vec3::Y, intensity: Vec3::ONE }];
/// let atlas = Splat { options: opts }.run(&Backend::Cpu, &IsmInput { points, vpls })?;
/// assert!(atlas.holes() > 0 && atlas.holes() < 32 * 32);
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Splat {
    /// Map size, points per VPL, seed (the others do not matter here).
    pub options: IsmOptions,
}

impl Compute for Splat {
    type Input = IsmInput;
    type Output = IsmAtlas;
    type GpuInput = GpuIsmInput;
    type GpuOutput = GpuIsmAtlas;

    fn name(&self) -> &'static str {
        "ism splat"
    }

    fn cpu(&self, input: &IsmInput) -> Result<IsmAtlas> {
        let opts = &self.options;
        opts.validate()?;
        check_pool(input.points.len(), opts)?;
        gpu::check_vpls(&input.vpls)?;
        let mut atlas = IsmAtlas::empty(opts.size, input.vpls.len() as u32);
        atlas.lookup = opts.lookup(input.points.diagonal());
        splat::splat_cpu(
            &input.points.positions,
            &input.vpls,
            opts.size,
            opts.points_per_vpl,
            opts.seed,
            &mut atlas.depth,
        );
        Ok(atlas)
    }

    fn upload(&self, gpu: &Gpu, input: &IsmInput) -> Result<GpuIsmInput> {
        Ok(GpuIsmInput { points: GpuScenePoints::upload(gpu, &input.points)?, vpls: upload_vpls(gpu, &input.vpls)? })
    }

    fn record(&self, rec: &mut Recorder, input: &GpuIsmInput) -> Result<GpuIsmAtlas> {
        gpu::record_splat(rec, &input.points, &input.vpls, &self.options, input.points.diagonal())
    }

    fn download(&self, gpu: &Gpu, out: &GpuIsmAtlas) -> Result<IsmAtlas> {
        out.download(gpu)
    }
}

/// Stage 3: pull-push hole filling of every map of an atlas over `levels` levels; the GPU
/// path fills a copy.
///
/// - Pull: level `l` is level `l - 1` halved, each texel the mean of the valid texels of
///   its 2x2 block (a hole if it has none), for `l = 1..=levels`.
/// - Push: from the top down, each hole of level `l - 1` is filled by bilinear
///   interpolation of level `l` at the hole's centre: the nearest coarse texel weighs 9/16,
///   its neighbours towards the hole 3/16 each and the diagonal one 1/16. Taps outside the
///   map (no bleeding into the neighbouring VPL's map) and holes left at the top level are
///   dropped and the weights renormalised. Valid texels never change, so a map without
///   holes comes out as it went in.
///
/// A depth linear in the texel position comes out exact wherever each 2x2 block at each
/// level has all, none or a diagonal pair of its texels valid (their mean is then the
/// block's centre value), away from the map's border.
///
/// ```
/// use lumbre_gpu::{Backend, Compute};
/// use lumbre_lightcuts::ism::{IsmAtlas, PullPush};
/// let mut atlas = IsmAtlas::empty(32, 1);
/// atlas.depth[33] = 2.0; // one texel seen
/// let filled = PullPush { levels: 5 }.run(&Backend::Cpu, &atlas)?;
/// assert_eq!(filled.holes(), 0);
/// assert!(filled.depth.iter().all(|&d| d == 2.0));
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PullPush {
    /// Levels of the pyramid: 0 ..= log2(size).
    pub levels: u32,
}

impl PullPush {
    fn check(&self, size: u32) -> Result<()> {
        let max = size.trailing_zeros();
        if !SIZES.contains(&size) || self.levels > max {
            return Err(Error::Input(format!(
                "pull-push over {} levels of maps of side {size}: sides {SIZES:?}, levels at most log2(side)",
                self.levels
            )));
        }
        Ok(())
    }
}

impl Compute for PullPush {
    type Input = IsmAtlas;
    type Output = IsmAtlas;
    type GpuInput = GpuIsmAtlas;
    type GpuOutput = GpuIsmAtlas;

    fn name(&self) -> &'static str {
        "ism pull-push"
    }

    fn cpu(&self, atlas: &IsmAtlas) -> Result<IsmAtlas> {
        self.check(atlas.size)?;
        if atlas.depth.len() != atlas.vpls as usize * atlas.texels() {
            return Err(Error::Input(format!(
                "{} depths for {} maps of side {}",
                atlas.depth.len(),
                atlas.vpls,
                atlas.size
            )));
        }
        if let Some(i) = atlas.depth.iter().position(|d| d.is_nan() || *d < 0.0) {
            return Err(Error::Input(format!("depth {i} is {}: depths are >= 0 or +inf", atlas.depth[i])));
        }
        let mut out = atlas.clone();
        pull_push::pull_push_cpu(&mut out.depth, out.size, self.levels);
        Ok(out)
    }

    fn upload(&self, gpu: &Gpu, atlas: &IsmAtlas) -> Result<GpuIsmAtlas> {
        self.check(atlas.size)?;
        GpuIsmAtlas::upload(gpu, atlas)
    }

    fn record(&self, rec: &mut Recorder, atlas: &GpuIsmAtlas) -> Result<GpuIsmAtlas> {
        let gpu = rec.gpu().clone();
        let out = GpuIsmAtlas::new(&gpu, atlas.size, atlas.vpls, atlas.lookup)?;
        rec.copy(&atlas.depth, &out.depth)?;
        gpu::record_pull_push(rec, &out, self.levels)?;
        Ok(out)
    }

    fn download(&self, gpu: &Gpu, out: &GpuIsmAtlas) -> Result<IsmAtlas> {
        out.download(gpu)
    }
}

/// Scene triangles and VPLs: the input of the whole build ([`Ism`] as a [`Compute`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct IsmScene {
    /// The scene's triangles (the pool is sampled over them).
    pub triangles: Vec<[Vec3; 3]>,
    /// The VPLs, one map each.
    pub vpls: Vec<Vpl>,
}

/// [`IsmScene`] on the GPU: the triangles with their area CDF, and the VPLs.
#[derive(Clone, Debug)]
pub struct GpuIsmScene {
    /// Triangles and CDF.
    pub pool: GpuPoolInput,
    /// The VPLs.
    pub vpls: Buffer<GpuVpl>,
}

/// Imperfect shadow maps: the point pool, splatting and pull-push.
///
/// As a [`Compute`] it runs all three stages from triangles and VPLs ([`IsmScene`]), and
/// reports the stages `ism points`, `ism splat` and `ism pull-push` (GPU: per pass), with
/// the atlas's size and, on the CPU, the holes left after each stage.
///
/// ```no_run
/// use glam::Vec3;
/// use lumbre_gpu::{Compute, Gpu};
/// use lumbre_lightcuts::{Vpl, ism::{Ism, IsmOptions, IsmScene}};
/// let scene = IsmScene {
///     triangles: vec![[Vec3::ZERO, Vec3::X, Vec3::Z]],
///     vpls: vec![Vpl { position: Vec3::new(0.2, 1.0, 0.2), normal: -Vec3::Y, intensity: Vec3::ONE }],
/// };
/// let ism = Ism { options: IsmOptions { points: 4096, points_per_vpl: 1024, ..Default::default() } };
/// let (on_cpu, report) = ism.cpu_reported(&scene, &())?;
/// let on_gpu = ism.gpu(&Gpu::new()?, &scene)?;
/// assert!(on_cpu.differing_texels(&on_gpu, 1e-5) < 41); // 1% of the texels: knife edges
/// println!("{report}");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Ism {
    /// How to build (and later look up).
    pub options: IsmOptions,
}

impl Ism {
    /// Builds the atlas on the CPU: splats `points` for every VPL, then pull-push.
    pub fn build_cpu(points: &ScenePoints, vpls: &[Vpl], opts: &IsmOptions) -> Result<IsmAtlas> {
        Ism::build_reported(points, vpls, opts, &mut Report::default())
    }

    fn build_reported(points: &ScenePoints, vpls: &[Vpl], opts: &IsmOptions, report: &mut Report) -> Result<IsmAtlas> {
        let input = IsmInput { points: points.clone(), vpls: vpls.to_vec() };
        let mut atlas = report.time("ism splat", || Splat { options: *opts }.cpu(&input))?;
        report.stat("holes after splat", atlas.holes() as f64);
        report.time("ism pull-push", || pull_push::pull_push_cpu(&mut atlas.depth, opts.size, opts.pull_push_levels));
        report.stat("holes after pull-push", atlas.holes() as f64);
        Ok(atlas)
    }

    /// Records the build from a pool and VPLs already on the GPU (48-byte [`GpuVpl`]s, one
    /// map each): splatting, then pull-push, into a new atlas. The atlas may be longer than
    /// one storage binding; it is processed in pieces of whole maps.
    pub fn record_build(
        &self,
        rec: &mut Recorder,
        points: &GpuScenePoints,
        vpls: &Buffer<GpuVpl>,
    ) -> Result<GpuIsmAtlas> {
        check_pool(points.len(), &self.options)?;
        let atlas = gpu::record_splat(rec, points, vpls, &self.options, points.diagonal())?;
        gpu::record_pull_push(rec, &atlas, self.options.pull_push_levels)?;
        Ok(atlas)
    }

    fn atlas_stats(&self, vpls: u32, report: &mut Report) {
        let (w, h) = atlas::grid(vpls);
        report.stat("maps", vpls as f64);
        report.stat("atlas width", (w * self.options.size) as f64);
        report.stat("atlas height", (h * self.options.size) as f64);
        report.stat("atlas bytes", vpls as f64 * self.options.texels() as f64 * 4.0);
    }
}

impl Compute for Ism {
    type Input = IsmScene;
    type Output = IsmAtlas;
    type GpuInput = GpuIsmScene;
    type GpuOutput = GpuIsmAtlas;

    fn name(&self) -> &'static str {
        "ism"
    }

    fn cpu(&self, scene: &IsmScene) -> Result<IsmAtlas> {
        self.cpu_reported(scene, &()).map(|(atlas, _)| atlas)
    }

    fn cpu_reported(&self, scene: &IsmScene, progress: &dyn Progress) -> Result<(IsmAtlas, Report)> {
        let opts = &self.options;
        opts.validate()?;
        let mut report = Report::default();
        progress.update("ism", 0, 3);
        let points = report.time("ism points", || ScenePoints::sample(&scene.triangles, opts.points, opts.seed))?;
        progress.update("ism", 1, 3);
        let atlas = Ism::build_reported(&points, &scene.vpls, opts, &mut report)?;
        progress.update("ism", 3, 3);
        self.atlas_stats(atlas.vpls, &mut report);
        Ok((atlas, report))
    }

    fn upload(&self, gpu: &Gpu, scene: &IsmScene) -> Result<GpuIsmScene> {
        self.options.validate()?;
        Ok(GpuIsmScene {
            pool: GpuPoolInput::new(gpu, &scene.triangles, self.options.points, self.options.seed)?,
            vpls: upload_vpls(gpu, &scene.vpls)?,
        })
    }

    fn record(&self, rec: &mut Recorder, scene: &GpuIsmScene) -> Result<GpuIsmAtlas> {
        let points = gpu::record_points(rec, &scene.pool)?;
        self.record_build(rec, &points, &scene.vpls)
    }

    fn download(&self, gpu: &Gpu, out: &GpuIsmAtlas) -> Result<IsmAtlas> {
        out.download(gpu)
    }

    fn gpu_stats(&self, _gpu: &Gpu, out: &GpuIsmAtlas) -> Result<Report> {
        let mut report = Report::default();
        self.atlas_stats(out.vpls, &mut report);
        Ok(report)
    }
}

/// Visibility queries: an atlas, the VPLs it was built for, and (VPL index, receiver) pairs.
#[derive(Clone, Debug, PartialEq)]
pub struct IsmQueries {
    /// The atlas.
    pub atlas: IsmAtlas,
    /// The VPLs of the atlas's maps.
    pub vpls: Vec<Vpl>,
    /// (VPL index, receiver) per query.
    pub queries: Vec<(u32, Vec3)>,
}

/// [`IsmQueries`] on the GPU.
#[derive(Clone, Debug)]
pub struct GpuIsmQueries {
    /// The atlas.
    pub atlas: GpuIsmAtlas,
    /// Three vec4s per query: VPL position (w: the VPL's index as u32 bits), VPL normal,
    /// receiver.
    pub queries: Buffer<[f32; 4]>,
}

/// Lookups: [`IsmAtlas::visibility`] for each query on the CPU, the WGSL module
/// `lightcuts/ism_lookup` (through the test kernel `lightcuts/ism_visibility`) on the GPU.
///
/// ```
/// use glam::Vec3;
/// use lumbre_gpu::{Backend, Compute};
/// use lumbre_lightcuts::{Vpl, ism::{IsmAtlas, IsmLookup, IsmQueries}};
/// let vpls = vec![Vpl { position: Vec3::Y, normal: -Vec3::Y, intensity: Vec3::ONE }];
/// let q = IsmQueries { atlas: IsmAtlas::empty(32, 1), vpls, queries: vec![(0, Vec3::ZERO)] };
/// assert_eq!(IsmLookup.run(&Backend::Cpu, &q)?, vec![1.0]);
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IsmLookup;

impl IsmLookup {
    fn check(q: &IsmQueries) -> Result<()> {
        gpu::check_vpls(&q.vpls)?;
        if let Some((i, (v, p))) =
            q.queries.iter().enumerate().find(|(_, (v, p))| *v as usize >= q.vpls.len() || !p.is_finite())
        {
            return Err(Error::Input(format!(
                "query {i}: VPL {v} of {} and receiver {p} (needed: a VPL index in range and a finite receiver)",
                q.vpls.len()
            )));
        }
        Ok(())
    }
}

impl Compute for IsmLookup {
    type Input = IsmQueries;
    type Output = Vec<f32>;
    type GpuInput = GpuIsmQueries;
    type GpuOutput = Buffer<f32>;

    fn name(&self) -> &'static str {
        "ism visibility"
    }

    fn cpu(&self, q: &IsmQueries) -> Result<Vec<f32>> {
        IsmLookup::check(q)?;
        Ok(q.queries.iter().map(|&(v, p)| q.atlas.visibility(v, &q.vpls[v as usize], p)).collect())
    }

    fn upload(&self, gpu: &Gpu, q: &IsmQueries) -> Result<GpuIsmQueries> {
        IsmLookup::check(q)?;
        let mut data = Vec::with_capacity(3 * q.queries.len());
        for &(v, p) in &q.queries {
            let l = &q.vpls[v as usize];
            data.push([l.position.x, l.position.y, l.position.z, f32::from_bits(v)]);
            data.push([l.normal.x, l.normal.y, l.normal.z, 0.0]);
            data.push([p.x, p.y, p.z, 0.0]);
        }
        Ok(GpuIsmQueries { atlas: GpuIsmAtlas::upload(gpu, &q.atlas)?, queries: gpu.upload(&data)? })
    }

    fn record(&self, rec: &mut Recorder, q: &GpuIsmQueries) -> Result<Buffer<f32>> {
        gpu::record_visibility(rec, &q.atlas, &q.queries)
    }

    fn download(&self, gpu: &Gpu, out: &Buffer<f32>) -> Result<Vec<f32>> {
        gpu.download(out)
    }
}
