//! Density estimation seen from a camera: photons traced from the scene's emitters, a disk
//! at each pixel's first hit, the irradiance of every disk from the flights crossing it,
//! in one pass or in progressive passes. The GPU path keeps everything on the device from
//! the photons to the sums (see `gpu/camera.rs`).

use glam::Vec3;
use lumbre_gpu::{Error, Progress, Report, Result};
use lumbre_raytrace::{Camera, Emitters, Prepared};

use crate::density::Density;
use crate::disks::{CameraDiskPass, CameraDisks, check_radius};
use crate::estimate::Estimate;
use crate::fixed::{Acc, run_scale_exponent};
use crate::nearest::nearest_radii;
use crate::photons::{PhotonOptions, PhotonTracer, flight_power_bound};
use crate::problem::Problem;
use crate::progressive::Progressive;
use crate::sums::DensitySums;

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
/// One pass without `k` can run in parts: a part traces the photons of its
/// [`PhotonOptions::range`] only, with their numbers and power in the whole run, and its
/// [`CameraEstimate::sums`] are in the run's unit (an exponent from the emitters and the
/// run's photon count, the same on the CPU and the GPU), so the parts' sums merge into the
/// whole run's bits ([`CameraEstimate::from_sums`] has an example). A range with more
/// passes or with `k` is refused: the disks' radii depend on every photon.
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
        self.photons.check()?;
        if let Some(r) = self.photons.range {
            let what = match (self.passes, self.k) {
                (1, None) => None,
                (1, Some(k)) => Some(format!("k = {k}")),
                (passes, _) => Some(format!("{passes} passes")),
            };
            if let Some(what) = what {
                return Err(Error::Input(format!(
                    "photon range {}..{} (a part of a run) with {what}: the disks' radii depend on every photon; \
                     a part needs one pass and no k",
                    r.start, r.end
                )));
            }
        }
        Ok(())
    }

    /// The fixed-point exponent of the run's power sums: from the largest power a flight of
    /// the run can carry ([`flight_power_bound`]) and its number of flights at most
    /// (`photons x max_bounces`), so it is known before any flight is traced and is the same
    /// for every part of the run, on both paths.
    pub(crate) fn scale_exp(&self, em: &Emitters) -> i32 {
        let o = &self.photons;
        run_scale_exponent(flight_power_bound(em, o.photons), o.photons as f64 * o.max_bounces as f64)
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
/// each (see [`CameraDensity`] for an example), and for one pass the raw sums it came from.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CameraEstimate {
    /// The disks at the first hits and the pixel each belongs to.
    pub disks: CameraDisks,
    /// Per disk: its irradiance (RGB).
    pub irradiance: Vec<[f32; 3]>,
    /// For one pass (no progressive passes), the raw per-disk sums the irradiance comes
    /// from: those of the parts of a run ([`PhotonOptions::range`](crate::PhotonOptions::range))
    /// [`merge`](DensitySums::merge) into the run's ([`CameraEstimate::from_sums`]).
    pub sums: Option<DensitySums>,
}

impl CameraEstimate {
    /// The estimate of `disks` (a run's) from the raw sums of its one pass, merged from its
    /// parts or not: the irradiance as the one-piece run computes it
    /// ([`DensitySums::irradiance`]), bit for bit. An error unless the sums are those of
    /// as many disks.
    ///
    /// ```
    /// use lumbre_density::{CameraDensity, CameraEstimate, PhotonOptions, PhotonRange};
    /// use lumbre_gpu::{Backend, Compute};
    /// use lumbre_raytrace::{Camera, Prepared, Scene};
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/scenes/CornellBox-Diffuse.obj");
    /// let (scene, _) = Scene::load_obj(path.as_ref()).unwrap();
    /// let p = Prepared::new(scene, &Default::default());
    /// let whole = CameraDensity {
    ///     photons: PhotonOptions { photons: 3000, ..Default::default() },
    ///     ..CameraDensity::new(Camera::parse("0,1,3.9,0,1,0,0,1,0,40").unwrap(), 8, 6, 0.1)
    /// };
    /// // The run in two parts of its photons, each traced apart, then merged.
    /// let part = |i| {
    ///     let range = Some(PhotonRange::part(i, 2, 3000)?);
    ///     let alg = CameraDensity { photons: PhotonOptions { range, ..whole.photons }, ..whole };
    ///     alg.run(&Backend::Cpu, &p)
    /// };
    /// let (first, second) = (part(0)?, part(1)?);
    /// let mut sums = first.sums.clone().unwrap();
    /// sums.merge(second.sums.as_ref().unwrap())?;
    /// let merged = CameraEstimate::from_sums(first.disks, sums)?;
    /// assert_eq!(merged, whole.run(&Backend::Cpu, &p)?);
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn from_sums(disks: CameraDisks, sums: DensitySums) -> Result<CameraEstimate> {
        let irradiance = sums.irradiance(&disks.disks)?;
        Ok(CameraEstimate { disks, irradiance, sums: Some(sums) })
    }

    /// The irradiance seen at each pixel (zero where no disk is), rows from the top.
    ///
    /// ```
    /// use lumbre_density::{CameraDisks, CameraEstimate, NO_DISK};
    /// let e = CameraEstimate {
    ///     disks: CameraDisks { pixel_disk: vec![NO_DISK, 0], width: 2, height: 1, ..Default::default() },
    ///     irradiance: vec![[1.0, 2.0, 3.0]],
    ///     sums: None,
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
        let scale_exp = self.scale_exp(&Emitters::new(&p.scene)?);
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
            let (accs, prep) = self.density.accumulate(&problem, Some(scale_exp), progress, &mut report)?;
            pairs += accs.iter().map(|a| a.count as u64).sum::<u64>();
            match &mut progressive {
                Some(pr) => {
                    pr.add_pass(&Estimate::from_accs(&accs, &prep.disks, scale_exp), self.photons.photons as u64)?
                }
                None => last = Some((accs, prep.scale_exp)),
            }
        }
        let mut disks = disks.ok_or_else(|| Error::Input("no pass ran".into()))?;
        let out = match (progressive, last) {
            (Some(pr), _) => {
                disks.disks = pr.disks();
                CameraEstimate { irradiance: pr.irradiance(), disks, sums: None }
            }
            (None, Some((accs, k))) => CameraEstimate::from_sums(disks, self.sums(k, &accs))?,
            (None, None) => return Err(Error::Input("no pass ran".into())),
        };
        self.totals(&mut report, segments, out.disks.disks.len(), pairs);
        Ok((out, report))
    }

    /// The raw sums of a one-pass run (or part of one) from its accumulators.
    pub(crate) fn sums(&self, scale_exp: i32, accs: &[Acc]) -> DensitySums {
        DensitySums::from_accs(self.photons.photons, self.photons.indices().len() as u32, scale_exp, accs)
    }

    /// The statistics over every pass.
    pub(crate) fn totals(&self, report: &mut Report, segments: u64, disks: usize, pairs: u64) {
        report.stat("photons", self.photons.indices().len() as f64 * self.passes as f64);
        report.stat("segments", segments as f64);
        report.stat("disks", disks as f64);
        report.stat("pairs found", pairs as f64);
        report.stat("passes", self.passes as f64);
    }
}
