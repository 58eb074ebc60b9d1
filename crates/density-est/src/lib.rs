//! Ray-based density estimation on the tangent plane (Lastra, Ureña, Bittner, García,
//! Montes, "Ray-based density estimation on the GPU"): the irradiance at a point is the
//! power of the photon segments that cross a small disk there, over the disk's area,
//! `E(x) = (1 / (pi r^2)) * sum(phi_i)` (their eq. 1).
//!
//! - [`Problem`]: photon [`Segment`]s and query [`Disk`]s, validated (errors name the index).
//! - [`crossing`]: the one crossing test (front side only; a segment ending on the disk
//!   counts, the one leaving it does not), with its WGSL twin.
//! - [`Density`]: the estimate through [`lumbre_gpu::Compute`], CPU and GPU, by one of
//!   three [`Method`]s: brute force, the paper's octree (processed a level at a time, its
//!   lists filtered by stream compaction or the paper's histogram pyramid), or a BVH over
//!   the disks that every segment traverses (the default).
//! - Query disks: [`camera_disks`] (one per pixel at the camera's first hits), [`disks_at`],
//!   radii from the nearest photon hits ([`nearest_radii`]).
//! - [`PhotonTracer`]: photons from the scene's emitters, diffuse bounces, flights as
//!   segments, CPU and GPU with the same random numbers.
//! - [`Progressive`]: pass after pass of new photons with each disk's radius shrinking
//!   (Hachisuka's progressive photon mapping, alpha 0.7), so the estimate converges; on the
//!   GPU, [`GpuProgressive`].
//! - [`CameraDensity`]: all of it seen from a camera (photons, [`CameraDiskPass`], the
//!   estimate, progressive passes). On the GPU the flights and disks are made and consumed
//!   on the device ([`GpuProblem::resident`]): no download-then-upload between stages.
//! - [`table1`]: the paper's Table 1 workloads ([`uniform_workload`]) timed per method.
//!
//! Power sums are 64-bit fixed-point integers (see [`Estimate`]): they do not depend on the
//! order of the additions, so all methods and both paths agree bit for bit.
//!
//! ```
//! use glam::Vec3;
//! use lumbre_density::{Density, Disk, Method, Problem, Segment};
//! use lumbre_gpu::{Backend, Compute};
//! // A photon falling straight down onto a disk on the floor, and one leaving it upwards.
//! let problem = Problem {
//!     segments: vec![
//!         Segment { start: Vec3::new(0.1, 1.0, 0.0), end: Vec3::new(0.1, 0.0, 0.0), power: [1.0; 3], bounce: 0 },
//!         Segment { start: Vec3::new(0.1, 0.0, 0.0), end: Vec3::new(0.5, 1.0, 0.0), power: [0.5; 3], bounce: 1 },
//!     ],
//!     disks: vec![Disk { centre: Vec3::ZERO, normal: Vec3::Y, radius: 0.25 }],
//! };
//! let est = Density { method: Method::BruteForce, ..Default::default() }.run(&Backend::Cpu, &problem)?;
//! assert_eq!(est.count, vec![1]);
//! let e = 1.0 / (std::f32::consts::PI * 0.25 * 0.25);
//! assert!((est.irradiance[0][0] - e).abs() < 1e-6 * e);
//! # Ok::<(), lumbre_gpu::Error>(())
//! ```

mod bench;
mod boxes;
mod brute;
mod bvh;
mod camera;
mod crossing;
mod disks;
mod estimate;
mod fixed;
mod gpu;
mod octree;
mod photons;
mod problem;
mod progressive;

pub use bench::{BenchOptions, MAX_FLIP_RATE, Row, TABLE1, TABLE1_RADIUS, Workload, table1, uniform_workload};
pub use camera::{CameraDensity, CameraEstimate};
pub use crossing::crossing;
pub use disks::{CameraDiskPass, CameraDisks, NO_DISK, camera_disks, disks_at, nearest_radii};
pub use estimate::Estimate;
pub use gpu::camera::GpuCameraEstimate;
pub use gpu::disks::{GpuCameraDisks, GpuDisks};
pub use gpu::photons::{GpuPhotonScene, GpuPhotons};
pub use gpu::progressive::GpuProgressive;
pub use gpu::{GpuEstimate, GpuProblem};
pub use octree::{Filter, MAX_LEVEL_ENTRIES, MAX_OCTREE_DEPTH, OctreeOptions};
pub use photons::{Bounces, PATH_MISMATCH_RATE, PhotonOptions, Photons, photon_random};
pub use problem::{Disk, DiskData, MAX_COORD, PLANE_EPS, Problem, Segment, disk_data};
pub use progressive::Progressive;

use lumbre_gpu::{Compute, Gpu, Progress, Recorder, Report, Result};

/// How the pairs of segments and disks are found.
///
/// ```
/// assert_eq!(lumbre_density::Method::default(), lumbre_density::Method::Bvh);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Method {
    /// Every disk against every segment.
    BruteForce,
    /// The paper's octree over segments and disks ([`OctreeOptions`]).
    Octree,
    /// A bounding volume hierarchy over the disks, traversed by every segment (the
    /// default: the fastest here).
    #[default]
    Bvh,
}

/// The density estimate through [`Compute`]: input [`Problem`], output [`Estimate`].
///
/// ```
/// use lumbre_density::{Density, Problem};
/// use lumbre_gpu::{Backend, Compute};
/// let est = Density::default().run(&Backend::Cpu, &Problem::default())?;
/// assert!(est.count.is_empty());
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Density {
    /// The index (or none).
    pub method: Method,
    /// The octree's shape, for [`Method::Octree`].
    pub octree: OctreeOptions,
}

impl Density {
    /// Every method, for tests and benchmarks that run them all.
    ///
    /// ```
    /// assert!(lumbre_density::Density::METHODS.contains(&lumbre_density::Method::Bvh));
    /// ```
    pub const METHODS: [Method; 3] = [Method::BruteForce, Method::Octree, Method::Bvh];
}

impl Compute for Density {
    type Input = Problem;
    type Output = Estimate;
    type GpuInput = GpuProblem;
    type GpuOutput = GpuEstimate;

    fn name(&self) -> &'static str {
        "density"
    }

    fn cpu(&self, input: &Problem) -> Result<Estimate> {
        self.cpu_reported(input, &()).map(|(out, _)| out)
    }

    /// Stages `prepare` (validation, plane tolerances, boxes) and the method's own; stats
    /// `segments`, `disks`, `pairs found`, `pairs tested` and the index's.
    fn cpu_reported(&self, input: &Problem, progress: &dyn Progress) -> Result<(Estimate, Report)> {
        let mut report = Report::default();
        let prep = report.time("prepare", || input.prepare())?;
        let accs = match self.method {
            Method::BruteForce => {
                report.stat("pairs tested", input.segments.len() as f64 * input.disks.len() as f64);
                report.time("brute force", || brute::brute_force(&input.segments, &prep))
            }
            Method::Octree => octree::octree(&input.segments, &prep, &self.octree, &mut report)?,
            Method::Bvh => {
                if prep.disks.len() > bvh::node::MAX_DISKS {
                    return Err(lumbre_gpu::Error::Input(format!(
                        "{} disks: the BVH takes at most {}",
                        prep.disks.len(),
                        bvh::node::MAX_DISKS
                    )));
                }
                let tree = report.time("bvh build", || bvh::build::build(&prep));
                report.stat("bvh nodes", tree.nodes.len() as f64);
                let (accs, visited, tested) =
                    report.time("bvh traverse", || bvh::traverse::traverse(&tree, &input.segments, &prep, progress));
                report.stat("bvh node visits (four-wide)", visited as f64);
                report.stat("pairs tested", tested as f64);
                accs
            }
        };
        let out = Estimate::from_accs(&accs, &prep.disks, prep.scale_exp);
        report.stat("segments", input.segments.len() as f64);
        report.stat("disks", input.disks.len() as f64);
        report.stat("pairs found", out.pairs() as f64);
        Ok((out, report))
    }

    fn upload(&self, gpu: &Gpu, input: &Problem) -> Result<GpuProblem> {
        gpu::upload(gpu, input)
    }

    fn record(&self, rec: &mut Recorder, input: &GpuProblem) -> Result<GpuEstimate> {
        gpu::record(self, rec, input)
    }

    fn download(&self, gpu: &Gpu, output: &GpuEstimate) -> Result<Estimate> {
        gpu::download(gpu, output)
    }

    fn gpu_stats(&self, gpu: &Gpu, output: &GpuEstimate) -> Result<Report> {
        gpu::stats(gpu, output)
    }
}

/// Photon tracing through [`Compute`]: input a [`Prepared`](lumbre_raytrace::Prepared)
/// scene, output the [`Photons`]' flights. Photons leave the emitters (picked by power, a
/// uniform point, a cosine direction on the emitting side, drawn without a tangent frame so
/// that rounding of the normal cannot flip it), bounce diffusely off every
/// surface (emitters too) with Russian roulette by albedo (continue with probability
/// `max(Kd)`, power scaled by `Kd / max(Kd)`), and stop when a cosine direction about the
/// shading normal points into the surface. A photon that escapes is cut where it leaves the
/// scene's box. CPU and GPU draw the same numbers ([`photon_random`]).
///
/// ```
/// use lumbre_density::{PhotonOptions, PhotonTracer};
/// use lumbre_gpu::{Backend, Compute};
/// use lumbre_raytrace::{Prepared, Scene};
/// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/scenes/CornellBox-Diffuse.obj");
/// let (scene, _) = Scene::load_obj(path.as_ref()).unwrap();
/// let prepared = Prepared::new(scene, &Default::default());
/// let tracer = PhotonTracer { options: PhotonOptions { photons: 1000, ..Default::default() } };
/// let photons = tracer.run(&Backend::Cpu, &prepared)?;
/// assert_eq!(photons.photons(), 1000);
/// assert!(photons.segments.len() > 1000);
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PhotonTracer {
    /// How many photons, and which flights to keep.
    pub options: PhotonOptions,
}

impl Compute for PhotonTracer {
    type Input = lumbre_raytrace::Prepared;
    type Output = Photons;
    type GpuInput = GpuPhotonScene;
    type GpuOutput = GpuPhotons;

    fn name(&self) -> &'static str {
        "photons"
    }

    fn cpu(&self, input: &lumbre_raytrace::Prepared) -> Result<Photons> {
        self.cpu_reported(input, &()).map(|(out, _)| out)
    }

    /// Stage `trace photons`; stats `photons` and `segments`.
    fn cpu_reported(&self, input: &lumbre_raytrace::Prepared, progress: &dyn Progress) -> Result<(Photons, Report)> {
        let mut report = Report::default();
        let out = report.time("trace photons", || photons::trace_cpu(input, &self.options, progress))?;
        report.stat("photons", self.options.photons as f64);
        report.stat("segments", out.segments.len() as f64);
        Ok((out, report))
    }

    fn upload(&self, gpu: &Gpu, input: &lumbre_raytrace::Prepared) -> Result<GpuPhotonScene> {
        gpu::photons::upload(gpu, input)
    }

    fn record(&self, rec: &mut Recorder, input: &GpuPhotonScene) -> Result<GpuPhotons> {
        gpu::photons::record(rec, input, &self.options)
    }

    fn download(&self, gpu: &Gpu, output: &GpuPhotons) -> Result<Photons> {
        gpu::photons::download(gpu, output)
    }

    fn gpu_stats(&self, _: &Gpu, output: &GpuPhotons) -> Result<Report> {
        let mut report = Report::default();
        for t in &output.timings {
            for (stage, d) in Report::from_timings("trace photons", t).stages {
                report.add_stage(&stage, d);
            }
        }
        report.stat("photons", self.options.photons as f64);
        report.stat("segments traced", output.traced as f64);
        report.stat("segments", output.segments as f64);
        Ok(report)
    }
}
