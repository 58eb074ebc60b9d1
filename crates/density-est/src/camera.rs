//! Density estimation seen from a camera: photons traced from the scene's emitters, a disk
//! at each pixel's first hit, the irradiance of every disk from the flights crossing it,
//! in one pass or in progressive passes. The GPU path keeps everything on the device from
//! the photons to the sums (see `gpu/camera.rs`).

use glam::Vec3;
use lumbre_gpu::{Error, Progress, Report, Result};
use lumbre_raytrace::{Camera, Prepared};

use crate::density::Density;
use crate::disks::{CameraDiskPass, CameraDisks, check_radius};
use crate::nearest::nearest_radii;
use crate::photons::{PhotonOptions, PhotonTracer};
use crate::problem::Problem;
use crate::progressive::Progressive;

/// Density estimation at a camera's first hits through [`Compute`](lumbre_gpu::Compute): `passes` passes of
/// `photons.photons` photons (pass `i` seeded `photons.seed + i`), a disk of radius
/// `radius` at each pixel's first hit ([`CameraDiskPass`]), the irradiance of every disk
/// by `density` ([`Density`]); more than one pass is progressive ([`Progressive`]).
///
/// On the GPU, photons, flights, disks and sums stay on the device: the host reads back
/// only a few numbers between stages (per tracing, each batch's number of flights; per
/// pass, the 16 words of [`GpuProblem::resident`](crate::GpuProblem::resident); per
/// octree level, its sizes), then the result. With `k`, the radii from the nearest photon
/// hits are found there too (a grid of the first pass's flight ends, sorted by cell).
///
/// ```
/// use lumbre_density::{CameraDensity, PhotonOptions};
/// use lumbre_gpu::{Backend, Compute};
/// use lumbre_raytrace::{Camera, Prepared, Scene};
/// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/scenes/CornellBox-Diffuse.obj");
/// let (scene, _) = Scene::load_obj(path.as_ref()).unwrap();
/// let camera = Camera::parse("0,1,3.9,0,1,0,0,1,0,40").unwrap();
/// let alg = CameraDensity {
///     photons: PhotonOptions { photons: 2000, ..Default::default() },
///     passes: 2,
///     ..CameraDensity::new(camera, 8, 6, 0.1)
/// };
/// let (out, report) = alg.run_reported(&Backend::Cpu, &Prepared::new(scene, &Default::default()), &())?;
/// assert_eq!(out.irradiance.len(), out.disks.disks.len());
/// assert_eq!(report.get("photons"), Some(4000.0));
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CameraDensity {
    /// The camera.
    pub camera: Camera,
    /// Image width.
    pub width: u32,
    /// Image height.
    pub height: u32,
    /// The disks' radius; with `k`, the largest.
    pub radius: f32,
    /// Radii from the `k`-th nearest flight end of the first pass, in `[radius / 16, radius]`.
    pub k: Option<usize>,
    /// Photons per pass, the first pass's seed, which flights count.
    pub photons: PhotonOptions,
    /// Passes (at least one); more than one is progressive.
    pub passes: u32,
    /// The fraction of a pass's crossings a progressive disk keeps, in `(0, 1]`.
    pub alpha: f32,
    /// How the crossings are found.
    pub density: Density,
}

impl CameraDensity {
    /// One pass of the default photons with disks of radius `radius`, the BVH, alpha 0.7.
    ///
    /// ```
    /// let c = lumbre_density::CameraDensity::new(lumbre_raytrace::Camera::parse("0,1,3.9,0,1,0,0,1,0,40").unwrap(), 4, 4, 0.1);
    /// assert_eq!((c.passes, c.alpha), (1, 0.7));
    /// ```
    pub fn new(camera: Camera, width: u32, height: u32, radius: f32) -> CameraDensity {
        CameraDensity {
            camera,
            width,
            height,
            radius,
            k: None,
            photons: PhotonOptions::default(),
            passes: 1,
            alpha: 0.7,
            density: Density::default(),
        }
    }

    /// Checks every value, naming it.
    ///
    /// ```
    /// let c = lumbre_density::CameraDensity::new(lumbre_raytrace::Camera::parse("0,1,3.9,0,1,0,0,1,0,40").unwrap(), 4, 4, 0.1);
    /// assert!(c.check().is_ok());
    /// assert!(lumbre_density::CameraDensity { passes: 0, ..c }.check().is_err());
    /// ```
    pub fn check(&self) -> Result<()> {
        self.camera.validate().map_err(Error::Input)?;
        check_radius(self.radius)?;
        if self.photons.photons == 0 {
            return Err(Error::Input("at least one photon per pass".into()));
        }
        if self.passes == 0 {
            return Err(Error::Input("at least one pass".into()));
        }
        if !(self.alpha > 0.0 && self.alpha <= 1.0) {
            return Err(Error::Input(format!("progressive alpha must be in (0, 1], got {}", self.alpha)));
        }
        if self.k == Some(0) {
            return Err(Error::Input("k nearest photons: k must be at least 1".into()));
        }
        Ok(())
    }

    /// The tracer of pass `pass`.
    pub(crate) fn tracer(&self, pass: u32) -> PhotonTracer {
        PhotonTracer { options: PhotonOptions { seed: self.photons.seed.wrapping_add(pass), ..self.photons } }
    }

    /// The disk pass.
    pub(crate) fn disk_pass(&self) -> CameraDiskPass {
        CameraDiskPass { camera: self.camera, width: self.width, height: self.height, radius: self.radius }
    }
}

/// What [`CameraDensity`] finds: the disks (with their last radii) and the irradiance of
/// each (see [`CameraDensity`] for an example).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CameraEstimate {
    /// The disks at the first hits and the pixel each belongs to.
    pub disks: CameraDisks,
    /// Per disk: its irradiance (RGB).
    pub irradiance: Vec<[f32; 3]>,
}

impl CameraEstimate {
    /// The irradiance seen at each pixel (zero where no disk is), rows from the top.
    ///
    /// ```
    /// use lumbre_density::{CameraDisks, CameraEstimate, NO_DISK};
    /// let e = CameraEstimate {
    ///     disks: CameraDisks { pixel_disk: vec![NO_DISK, 0], width: 2, height: 1, ..Default::default() },
    ///     irradiance: vec![[1.0, 2.0, 3.0]],
    /// };
    /// assert_eq!(e.per_pixel()[1], glam::Vec3::new(1.0, 2.0, 3.0));
    /// ```
    pub fn per_pixel(&self) -> Vec<Vec3> {
        self.disks
            .pixel_disk
            .iter()
            .map(|&d| self.irradiance.get(d as usize).map_or(Vec3::ZERO, |e| Vec3::from(*e)))
            .collect()
    }
}

impl CameraDensity {
    /// The CPU path: the irradiance at every disk.
    ///
    /// ```
    /// use lumbre_density::{CameraDensity, PhotonOptions};
    /// use lumbre_raytrace::{Camera, Prepared, Scene};
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/scenes/CornellBox-Diffuse.obj");
    /// let (scene, _) = Scene::load_obj(path.as_ref())?;
    /// let camera = Camera::parse("0,1,3.9,0,1,0,0,1,0,40")?;
    /// let alg = CameraDensity { photons: PhotonOptions { photons: 500, ..Default::default() }, ..CameraDensity::new(camera, 8, 6, 0.1) };
    /// let out = alg.cpu(&Prepared::new(scene, &Default::default()))?;
    /// assert_eq!(out.irradiance.len(), out.disks.disks.len());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn cpu(&self, p: &Prepared) -> Result<CameraEstimate> {
        self.run_cpu(p, &()).map(|(out, _)| out)
    }

    /// [`cpu`](CameraDensity::cpu) with progress: the stages of photon tracing, `camera
    /// disks` (and `nearest radii`), and of the method, summed over passes; stats `photons`,
    /// `segments`, `disks`, `pairs found`, `passes`.
    pub fn run_cpu(&self, p: &Prepared, progress: &dyn Progress) -> Result<(CameraEstimate, Report)> {
        self.check()?;
        let mut report = Report::default();
        let (mut segments, mut pairs) = (0u64, 0u64);
        let mut disks: Option<CameraDisks> = None;
        let mut progressive: Option<Progressive> = None;
        let mut last = None;
        for pass in 0..self.passes {
            let (photons, r) = self.tracer(pass).run_cpu(p, progress)?;
            report.merge(r);
            if disks.is_none() {
                let (mut d, r) = self.disk_pass().run_cpu(p, progress)?;
                report.merge(r);
                if let Some(k) = self.k {
                    report.time("nearest radii", || {
                        nearest_radii(&mut d.disks, &photons.segments, k, self.radius / 16.0, self.radius)
                    })?;
                }
                if self.passes > 1 {
                    progressive = Some(Progressive::new(&d.disks, self.alpha)?);
                }
                disks = Some(d);
            }
            let query = match &progressive {
                Some(pr) => pr.disks(),
                None => disks.as_ref().map(|d| d.disks.clone()).unwrap_or_default(),
            };
            segments += photons.segments.len() as u64;
            let problem = Problem { segments: photons.segments, disks: query };
            let (est, r) = self.density.run_cpu(&problem, progress)?;
            report.merge(r);
            pairs += est.pairs();
            match &mut progressive {
                Some(pr) => pr.add_pass(&est, self.photons.photons as u64)?,
                None => last = Some(est),
            }
        }
        let mut disks = disks.ok_or_else(|| Error::Input("no pass ran".into()))?;
        let irradiance = match (progressive, last) {
            (Some(pr), _) => {
                disks.disks = pr.disks();
                pr.irradiance()
            }
            (None, Some(est)) => est.irradiance,
            (None, None) => return Err(Error::Input("no pass ran".into())),
        };
        self.totals(&mut report, segments, disks.disks.len(), pairs);
        Ok((CameraEstimate { disks, irradiance }, report))
    }

    /// The statistics over every pass.
    pub(crate) fn totals(&self, report: &mut Report, segments: u64, disks: usize, pairs: u64) {
        report.stat("photons", self.photons.photons as f64 * self.passes as f64);
        report.stat("segments", segments as f64);
        report.stat("disks", disks as f64);
        report.stat("pairs found", pairs as f64);
        report.stat("passes", self.passes as f64);
    }
}
