//! Progressive density estimation on the GPU (`density/progressive.wgsl`), the twin of
//! [`Progressive`](crate::Progressive) with its state (crossings kept, flux) in f32 on the
//! device: each pass's estimate updates the state and shrinks the radii of the disks in
//! place, so the next pass gathers with them without a round trip.

use lumbre_gpu::{Buffer, Error, Gpu, Recorder, Result};
use lumbre_shaders::density::PROGRESSIVE;

use crate::fixed::pow2;
use crate::gpu::disks::GpuDisks;
use crate::gpu::estimate::GpuEstimate;
use crate::problem::Disk;

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    count: u32,
    alpha: f32,
    photons: f32,
    unit: f32,
}
const _: () = assert!(size_of::<Params>() == lumbre_shaders::density::PROGRESSIVE_PARAMS_SIZE);

const WG: u64 = 256;

/// Progressive passes on the GPU over disks that live there (see
/// [`Progressive`](crate::Progressive) for the update rule). The radii of the disks shrink
/// in place after every pass; [`GpuProgressive::irradiance`] reads the result.
///
/// The state is f32 where the CPU keeps f64: radii and irradiance agree with the CPU's
/// update of the same passes to a few units in the last place of f32 per pass.
///
/// ```no_run
/// use lumbre_density::{CameraDiskPass, Density, GpuProblem, GpuProgressive, PhotonOptions, PhotonTracer};
/// use lumbre_gpu::{Compute, Gpu};
/// use lumbre_raytrace::{Camera, Prepared, Scene};
/// let (scene, _) = Scene::load_obj("testdata/scenes/CornellBox-Diffuse.obj".as_ref()).unwrap();
/// let gpu = Gpu::new()?;
/// let pass = CameraDiskPass { camera: Camera::parse("0,1,3.9,0,1,0,0,1,0,40").unwrap(), width: 32, height: 32, radius: 0.08 };
/// let scene = pass.upload(&gpu, &Prepared::new(scene, &Default::default()))?;
/// let mut rec = gpu.recorder();
/// let disks = pass.record(&mut rec, &scene)?;
/// let mut progressive = GpuProgressive::new(&gpu, disks.disks(), 0.7)?;
/// for seed in 0..4 {
///     let tracer = PhotonTracer { options: PhotonOptions { photons: 10_000, seed, ..Default::default() } };
///     let flights = tracer.record(&mut rec, &scene)?;
///     let problem = GpuProblem::resident(&mut rec, &flights, progressive.disks())?;
///     let estimate = Density::default().record(&mut rec, &problem)?;
///     progressive.add_pass(&mut rec, &estimate, 10_000)?;
/// }
/// rec.submit()?;
/// let irradiance = progressive.irradiance(&gpu)?;
/// assert_eq!(progressive.passes(), 4);
/// # let _ = irradiance;
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct GpuProgressive {
    alpha: f32,
    disks: GpuDisks,
    /// Per disk: crossings kept (x), flux (yzw).
    pub(crate) state: Buffer<[f32; 4]>,
    /// (low, high) words of the crossings counted over the passes.
    pairs: Buffer<u32>,
    pub(crate) photons: u64,
    passes: u32,
}

impl GpuProgressive {
    /// Starts from `disks` (their radii are the first pass's; later passes shrink them in
    /// place) with the fraction `alpha` of each pass's crossings kept, in `(0, 1]`.
    pub fn new(gpu: &Gpu, disks: &GpuDisks, alpha: f32) -> Result<GpuProgressive> {
        if !(alpha > 0.0 && alpha <= 1.0) {
            return Err(Error::Input(format!("progressive alpha must be in (0, 1], got {alpha}")));
        }
        Ok(GpuProgressive {
            alpha,
            disks: disks.clone(),
            state: gpu.zeroed(disks.capacity.max(1))?,
            pairs: gpu.zeroed(2)?,
            photons: 0,
            passes: 0,
        })
    }

    /// The disks with their current radii: what the next pass gathers with.
    pub fn disks(&self) -> &GpuDisks {
        &self.disks
    }

    /// Records the update by a pass's estimate over [`GpuProgressive::disks`], made from
    /// `photons` photons (each carrying `1 / photons` of the emitted power).
    pub fn add_pass(&mut self, rec: &mut Recorder, est: &GpuEstimate, photons: u64) -> Result<()> {
        if photons == 0 {
            return Err(Error::Input("a progressive pass needs at least one photon".into()));
        }
        record_count_pairs(rec, est, &self.disks, &self.pairs)?;
        let gpu = rec.gpu().clone();
        let params = gpu.uniform(&Params {
            count: self.disks.capacity as u32,
            alpha: self.alpha,
            photons: photons as f32,
            unit: pow2(-est.layout.frame.scale_exp),
        })?;
        let res = bindings(&params, est, &self.disks, &self.state, &self.pairs);
        let groups = (self.disks.capacity as u64).div_ceil(WG);
        rec.dispatch("progressive", &gpu.kernel(&PROGRESSIVE, "add_pass")?, &res, groups)?;
        self.photons += photons;
        self.passes += 1;
        Ok(())
    }

    /// Passes recorded.
    pub fn passes(&self) -> u32 {
        self.passes
    }

    /// Crossings found over every pass (read back).
    ///
    /// ```no_run
    /// # use lumbre_density::{CameraDiskPass, GpuProgressive};
    /// # use lumbre_gpu::{Compute, Gpu};
    /// # use lumbre_raytrace::{Camera, Prepared, Scene};
    /// # let (scene, _) = Scene::load_obj("testdata/scenes/CornellBox-Diffuse.obj".as_ref()).unwrap();
    /// # let gpu = Gpu::new()?;
    /// # let pass = CameraDiskPass { camera: Camera::parse("0,1,3.9,0,1,0,0,1,0,40").unwrap(), width: 8, height: 8, radius: 0.1 };
    /// # let scene = pass.upload(&gpu, &Prepared::new(scene, &Default::default()))?;
    /// # let mut rec = gpu.recorder();
    /// # let disks = pass.record(&mut rec, &scene)?;
    /// # rec.submit()?;
    /// let progressive = GpuProgressive::new(&gpu, disks.disks(), 0.7)?;
    /// assert_eq!(progressive.pairs(&gpu)?, 0); // no pass yet
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn pairs(&self, gpu: &Gpu) -> Result<u64> {
        let w = gpu.download(&self.pairs)?;
        Ok(w[0] as u64 | (w[1] as u64) << 32)
    }

    /// The irradiance of every disk after the passes (read back; zero before the first):
    /// `tau / (pi R^2 P)`, in f64 from the state as [`Progressive::irradiance`](crate::Progressive::irradiance).
    pub fn irradiance(&self, gpu: &Gpu) -> Result<Vec<[f32; 3]>> {
        let disks = self.disks.download(gpu)?;
        let state = gpu.download_range(&self.state, 0..disks.len())?;
        Ok(irradiance(&disks, &state, self.photons))
    }
}

/// `tau / (pi R^2 P)` per disk, from the flux in `state` (yzw) and the disks' radii.
pub(crate) fn irradiance(disks: &[Disk], state: &[[f32; 4]], photons: u64) -> Vec<[f32; 3]> {
    disks
        .iter()
        .zip(state)
        .map(|(d, s)| {
            let area = std::f64::consts::PI * (d.radius as f64).powi(2) * photons.max(1) as f64;
            [s[1], s[2], s[3]].map(|c| (c as f64 / area) as f32)
        })
        .collect()
}

fn bindings<'a>(
    params: &'a lumbre_gpu::wgpu::Buffer,
    est: &'a GpuEstimate,
    disks: &'a GpuDisks,
    state: &'a Buffer<[f32; 4]>,
    pairs: &'a Buffer<u32>,
) -> Vec<lumbre_gpu::wgpu::BindingResource<'a>> {
    vec![
        params.as_entire_binding(),
        est.acc.binding(),
        disks.raw.binding(),
        state.binding(),
        disks.count.binding(),
        pairs.binding(),
    ]
}

/// Records the addition of `est`'s crossings to the 64-bit total `pairs`.
pub(crate) fn record_count_pairs(
    rec: &mut Recorder,
    est: &GpuEstimate,
    disks: &GpuDisks,
    pairs: &Buffer<u32>,
) -> Result<()> {
    let gpu = rec.gpu().clone();
    let params = gpu.uniform(&Params { count: disks.capacity as u32, ..Default::default() })?;
    let stand_in = gpu.zeroed::<[f32; 4]>(1)?;
    let res = bindings(&params, est, disks, &stand_in, pairs);
    let groups = (disks.capacity as u64).div_ceil(WG);
    rec.dispatch("progressive", &gpu.kernel(&PROGRESSIVE, "count_pairs")?, &res, groups)
}
