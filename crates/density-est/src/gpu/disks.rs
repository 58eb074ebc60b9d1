//! Query disks at a camera's first hits on the GPU (`density/disks.wgsl`), the twin of
//! `camera_disks` (disks.rs): `camera_hits` casts a ray through every pixel's centre and
//! flags the pixels that see the scene, a compaction lists them in pixel order, and
//! `make_disks` writes one disk per listed pixel. The number of disks stays on the GPU
//! (later stages read it there); nothing is read back.

use glam::Vec3;
use lumbre_compact::{Compact, Emit, GpuStream, Select};
use lumbre_gpu::{Buffer, Compute, Error, Gpu, Progress, Recorder, Report, Result};
use lumbre_raytrace::twin::GpuCamera;
use lumbre_raytrace::{Camera, Prepared};
use lumbre_shaders::density::{DISKS_BVH, DISKS_KD};

use crate::disks::{CameraDiskPass, CameraDisks, NO_DISK, check_radius};
use crate::gpu::photons::{self, GpuPhotonScene};
use crate::problem::Disk;

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    cam: GpuCamera,
    bmin: [f32; 3],
    count: u32,
    bmax: [f32; 3],
    width: u32,
    radius: f32,
    _pad: [u32; 3],
}
const _: () = assert!(
    size_of::<Params>() == lumbre_shaders::density::DISKS_KD_PARAMS_SIZE
        && size_of::<Params>() == lumbre_shaders::density::DISKS_BVH_PARAMS_SIZE
);

const WG: u64 = 64;

/// Query disks on the GPU, the twin of a `Vec<`[`Disk`]`>`: two vec4s per disk (centre and
/// radius, normal), and their number, which may exist only on the GPU. Made by
/// [`CameraDiskPass`](crate::CameraDiskPass) (see [`GpuCameraDisks`]), read by
/// [`GpuProblem::resident`](crate::GpuProblem::resident), shrunk in place by
/// [`GpuProgressive`](crate::GpuProgressive).
#[derive(Clone, Debug)]
pub struct GpuDisks {
    /// Two vec4s per disk slot: centre and radius, normal (w unused).
    pub(crate) raw: Buffer<[f32; 4]>,
    /// The number of disks: one `u32`.
    pub(crate) count: Buffer<u32>,
    /// Disk slots: the most disks there can be.
    pub(crate) capacity: usize,
}

impl GpuDisks {
    /// The most disks there can be (the number itself is on the GPU: see
    /// [`GpuDisks::download`]).
    ///
    /// ```no_run
    /// use lumbre_density::{CameraDiskPass, PhotonTracer};
    /// use lumbre_gpu::{Compute, Gpu};
    /// use lumbre_raytrace::{Camera, Prepared, Scene};
    /// let (scene, _) = Scene::load_obj("testdata/scenes/CornellBox-Diffuse.obj".as_ref()).unwrap();
    /// let gpu = Gpu::new()?;
    /// let pass = CameraDiskPass { camera: Camera::parse("0,1,3.9,0,1,0,0,1,0,40").unwrap(), width: 8, height: 6, radius: 0.05 };
    /// let scene = pass.upload(&gpu, &Prepared::new(scene, &Default::default()))?;
    /// let mut rec = gpu.recorder();
    /// let made = pass.record(&mut rec, &scene)?;
    /// rec.submit()?;
    /// assert_eq!(made.disks().capacity(), 48);
    /// assert!(made.disks().download(&gpu)?.len() <= 48);
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Reads the disks back (their number, then as many disks).
    pub fn download(&self, gpu: &Gpu) -> Result<Vec<Disk>> {
        let n = gpu.download(&self.count)?[0] as usize;
        if n > self.capacity {
            return Err(Error::Validation(format!("{n} disks in {} slots", self.capacity)));
        }
        let raw = gpu.download_range(&self.raw, 0..2 * n)?;
        Ok(raw
            .chunks_exact(2)
            .map(|d| Disk {
                centre: Vec3::new(d[0][0], d[0][1], d[0][2]),
                normal: Vec3::new(d[1][0], d[1][1], d[1][2]),
                radius: d[0][3],
            })
            .collect())
    }
}

/// Disks at a camera's first hits on the GPU, with the pixel and material of each: the GPU
/// output of [`CameraDiskPass`](crate::CameraDiskPass) (see [`GpuDisks`] for an example).
#[derive(Clone, Debug)]
pub struct GpuCameraDisks {
    pub(crate) disks: GpuDisks,
    /// Per disk: its pixel.
    pub(crate) pixels: Buffer<u32>,
    /// Per disk: its material.
    pub(crate) material: Buffer<u32>,
    pub(crate) width: u32,
    pub(crate) height: u32,
}

impl GpuCameraDisks {
    /// The disks themselves.
    pub fn disks(&self) -> &GpuDisks {
        &self.disks
    }
}

/// Records the disks at the first hits of `camera`'s rays through each pixel's centre.
pub(crate) fn record(
    rec: &mut Recorder,
    scene: &GpuPhotonScene,
    camera: &Camera,
    width: u32,
    height: u32,
    radius: f32,
) -> Result<GpuCameraDisks> {
    camera.validate().map_err(Error::Input)?;
    check_radius(radius)?;
    let gpu = rec.gpu().clone();
    let n = width as u64 * height as u64;
    let pixels = u32::try_from(n)
        .map_err(|_| Error::Input(format!("{width}x{height} pixels: at most 2^32 - 1 disks")))?
        as usize;
    let stand_in = gpu.zeroed::<u32>(4)?;
    let hit_flags = gpu.zeroed::<u32>(pixels.max(1))?;
    let hits = gpu.zeroed::<[f32; 4]>(2 * pixels.max(1))?;
    let raw = gpu.zeroed::<[f32; 4]>(2 * pixels.max(1))?;
    let material = gpu.zeroed::<u32>(pixels.max(1))?;
    let params = gpu.uniform(&Params {
        cam: camera.to_gpu(width, height),
        bmin: scene.scene.bounds().min.into(),
        count: pixels as u32,
        bmax: scene.scene.bounds().max.into(),
        width,
        radius,
        _pad: [0; 3],
    })?;
    let mut res: Vec<_> = [params.as_entire_binding()]
        .into_iter()
        .chain(scene.scene.bindings())
        .chain([
            hit_flags.binding(),
            hits.binding(),
            stand_in.binding(),
            raw.binding(),
            material.binding(),
            stand_in.binding(),
        ])
        .collect();
    let groups = (pixels as u64).div_ceil(WG);
    let shader = scene.scene.structure.pick(DISKS_KD, DISKS_BVH);
    rec.dispatch("camera disks", &gpu.kernel(&shader, "camera_hits")?, &res, groups)?;
    let stream = GpuStream { values: stand_in.clone(), flags: hit_flags.clone(), len: pixels };
    let listed =
        Compact { select: Select::Flags, emit: Emit::Indices, ..Default::default() }.record_compact(rec, &stream)?;
    res[9] = listed.out.binding();
    res[12] = listed.count.binding();
    rec.dispatch("camera disks", &gpu.kernel(&shader, "make_disks")?, &res, groups)?;
    drop(res);
    Ok(GpuCameraDisks {
        disks: GpuDisks { raw, count: listed.count, capacity: pixels },
        pixels: listed.out,
        material,
        width,
        height,
    })
}

/// Reads the disks back with their pixels and materials.
pub(crate) fn download(gpu: &Gpu, out: &GpuCameraDisks) -> Result<CameraDisks> {
    let disks = out.disks.download(gpu)?;
    let n = disks.len();
    let pixels = gpu.download_range(&out.pixels, 0..n)?;
    let material = gpu.download_range(&out.material, 0..n)?;
    let mut pixel_disk = vec![NO_DISK; out.width as usize * out.height as usize];
    for (d, &p) in pixels.iter().enumerate() {
        let slot = pixel_disk
            .get_mut(p as usize)
            .ok_or_else(|| Error::Validation(format!("disk {d} at pixel {p}, outside the image")))?;
        *slot = d as u32;
    }
    Ok(CameraDisks { disks, pixel_disk, material, width: out.width, height: out.height })
}

impl Compute for CameraDiskPass {
    type Input = Prepared;
    type Output = CameraDisks;
    type GpuInput = GpuPhotonScene;
    type GpuOutput = GpuCameraDisks;

    fn name(&self) -> &'static str {
        "camera disks"
    }

    /// Stage `camera disks`; stat `disks`.
    fn cpu_reported(&self, p: &Prepared, progress: &dyn Progress) -> Result<(CameraDisks, Report)> {
        self.run_cpu(p, progress)
    }

    fn upload(&self, gpu: &Gpu, p: &Prepared) -> Result<GpuPhotonScene> {
        photons::upload(gpu, p)
    }

    fn record(&self, rec: &mut Recorder, scene: &GpuPhotonScene) -> Result<GpuCameraDisks> {
        record(rec, scene, &self.camera, self.width, self.height, self.radius)
    }

    fn download(&self, gpu: &Gpu, out: &GpuCameraDisks) -> Result<CameraDisks> {
        download(gpu, out)
    }
}
