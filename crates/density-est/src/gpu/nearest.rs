//! Radii from the nearest photon hits on the GPU (`density/nearest.wgsl`), the twin of
//! `nearest_radii` (nearest.rs) for flights and disks that live on the GPU: the flight ends
//! are bucketed in a grid of cells at least `r_max` wide and sorted by cell, and each disk
//! selects the k-th smallest squared distance among the ends in the 27 cells around it.
//! Nothing is read back.

use lumbre_compact::record_sort_bits;
use lumbre_gpu::{Fit, Recorder, Result, pieces, record_iota, wgpu};
use lumbre_shaders::density::NEAREST;

use crate::gpu::disks::GpuDisks;
use crate::gpu::photons::GpuPhotons;
use crate::nearest::check;

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    count: u32,
    k: u32,
    r_min: f32,
    r_max: f32,
    first: u32,
    ends: u32,
    _pad: [u32; 2],
}
const _: () = assert!(size_of::<Params>() == lumbre_shaders::density::NEAREST_PARAMS_SIZE);

const WG: usize = 256;

impl GpuDisks {
    /// Records the GPU twin of [`nearest_radii`](crate::nearest_radii): every disk's radius
    /// becomes the distance to the `k`-th nearest end of `flights`, clamped to
    /// `[min, max]` (`max` when fewer than `k` ends lie within it).
    ///
    /// ```no_run
    /// use lumbre_density::{CameraDiskPass, PhotonOptions, PhotonTracer};
    /// use lumbre_gpu::{Compute, Gpu};
    /// use lumbre_raytrace::{Camera, Prepared, Scene};
    /// let (scene, _) = Scene::load_obj("testdata/scenes/CornellBox-Diffuse.obj".as_ref()).unwrap();
    /// let gpu = Gpu::new()?;
    /// let pass = CameraDiskPass { camera: Camera::parse("0,1,3.9,0,1,0,0,1,0,40").unwrap(), width: 16, height: 16, radius: 0.1 };
    /// let tracer = PhotonTracer { options: PhotonOptions { photons: 10_000, ..Default::default() } };
    /// let scene = pass.upload(&gpu, &Prepared::new(scene, &Default::default()))?;
    /// let mut rec = gpu.recorder();
    /// let disks = pass.record(&mut rec, &scene)?;
    /// let flights = tracer.record(&mut rec, &scene)?;
    /// disks.disks().record_nearest_radii(&mut rec, &flights, 8, 0.1 / 16.0, 0.1)?;
    /// rec.submit()?;
    /// assert!(disks.disks().download(&gpu)?.iter().all(|d| d.radius <= 0.1));
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn record_nearest_radii(
        &self,
        rec: &mut Recorder,
        flights: &GpuPhotons,
        k: usize,
        min: f32,
        max: f32,
    ) -> Result<()> {
        record(rec, flights, self, k, min, max)
    }
}

/// Records the radii of `disks`: the distance to the `k`-th nearest end of `flights`,
/// clamped to `[r_min, r_max]` (`r_max` with fewer than `k` ends within it).
pub(crate) fn record(
    rec: &mut Recorder,
    flights: &GpuPhotons,
    disks: &GpuDisks,
    k: usize,
    r_min: f32,
    r_max: f32,
) -> Result<()> {
    check(k, r_min, r_max)?;
    let gpu = rec.gpu().clone();
    let n = flights.segments;
    gpu.check_size("flight ends for the nearest-hit radii (16 bytes each)", 16 * n as u64, Fit::Binding)?;
    let ends = gpu.zeroed::<[f32; 4]>(n.max(1))?;
    let keys = gpu.zeroed::<u32>(n.max(1))?;
    let order = gpu.zeroed::<u32>(n.max(1))?;
    let bounds = gpu.zeroed::<u32>(8)?;
    let base = Params { k: u32::try_from(k).unwrap_or(u32::MAX), r_min, r_max, ends: n as u32, ..Params::default() };
    let uniform = |p: Params| gpu.uniform(&p);
    let all = uniform(base)?;
    let res = bindings(&all, flights.geom.binding(), &bounds, &keys, &ends, &order, disks);
    rec.dispatch("nearest radii", &gpu.kernel(&NEAREST, "bounds_init")?, &res, 1)?;
    drop(res);
    let piece = gpu.piece_len(32, WG);
    for entry in ["end_bounds", "cell_keys"] {
        let kernel = gpu.kernel(&NEAREST, entry)?;
        for (start, len) in pieces(n, piece) {
            let p = uniform(Params { count: len as u32, first: start as u32, ..base })?;
            let geom = flights.geom.binding_range(2 * start..2 * (start + len));
            let res = bindings(&p, geom, &bounds, &keys, &ends, &order, disks);
            rec.dispatch("nearest radii", &kernel, &res, len.div_ceil(WG) as u64)?;
        }
    }
    if n > 0 {
        record_iota(rec, &order, 0)?;
        record_sort_bits(rec, &keys, Some(&order), 30)?;
    }
    let p = uniform(Params { count: disks.capacity as u32, ..base })?;
    let res = bindings(&p, flights.geom.binding(), &bounds, &keys, &ends, &order, disks);
    rec.dispatch("nearest radii", &gpu.kernel(&NEAREST, "radii")?, &res, disks.capacity.div_ceil(64) as u64)
}

/// The shader's bindings in order.
fn bindings<'a>(
    params: &'a wgpu::Buffer,
    geom: wgpu::BindingResource<'a>,
    bounds: &'a lumbre_gpu::Buffer<u32>,
    keys: &'a lumbre_gpu::Buffer<u32>,
    ends: &'a lumbre_gpu::Buffer<[f32; 4]>,
    order: &'a lumbre_gpu::Buffer<u32>,
    disks: &'a GpuDisks,
) -> Vec<wgpu::BindingResource<'a>> {
    vec![
        params.as_entire_binding(),
        geom,
        bounds.binding(),
        keys.binding(),
        ends.binding(),
        order.binding(),
        disks.raw.binding(),
        disks.count.binding(),
    ]
}
