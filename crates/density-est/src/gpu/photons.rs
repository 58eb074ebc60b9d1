//! Photon tracing on the GPU (`density/photons.wgsl`): per batch of photons, `count`, an
//! exclusive scan of the counts, then `trace` writes every flight at its photon's offset.
//! The number of flights of a batch is read back to size its output, so batches are
//! submitted one after another (work recorded before them runs first); a batch's flights
//! must fit one storage binding, so the batch size follows the binding limit.

use lumbre_compact::{ScanKind, record_scan};
use lumbre_gpu::{Buffer, Error, Gpu, Recorder, Result, Timings};
use lumbre_kdtree::GpuKdTree;
use lumbre_raytrace::{Emitters, GpuEmitters, GpuMaterial, Prepared};
use lumbre_shaders::density::PHOTONS;

use crate::photons::{PhotonOptions, escape_box};
use crate::{Photons, Segment};

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
const _: () = assert!(size_of::<Params>() == lumbre_shaders::density::PHOTONS_PARAMS_SIZE);

const WG: u64 = 64;

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
    pub(crate) tree: GpuKdTree,
    pub(crate) tri_info: Buffer<[u32; 4]>,
    pub(crate) normals: Buffer<[f32; 4]>,
    pub(crate) materials: Buffer<GpuMaterial>,
    pub(crate) emitters: GpuEmitters,
    pub(crate) params: Params,
}

/// One batch's flights on the GPU: geometry, power, the flights of each photon (read back)
/// and the batch's first photon.
#[derive(Clone, Debug)]
pub(crate) struct Part {
    pub geom: Buffer<[f32; 4]>,
    pub power: Buffer<[f32; 4]>,
    pub per_photon: Vec<u32>,
    pub first: u32,
}

/// Traced flights on the GPU, one part per batch of photons; read them back with
/// [`Compute::download`](lumbre_gpu::Compute::download) (see [`GpuPhotonScene`]).
#[derive(Clone, Debug)]
pub struct GpuPhotons {
    pub(crate) parts: Vec<Part>,
    pub(crate) options: PhotonOptions,
    pub(crate) timings: Vec<Timings>,
}

/// Uploads what the tracer reads.
pub(crate) fn upload(gpu: &Gpu, p: &Prepared) -> Result<GpuPhotonScene> {
    let em = Emitters::new(&p.scene)?;
    if em.is_empty() {
        return Err(Error::Input("the scene has no emitter (no material with Ke > 0): no photon can leave it".into()));
    }
    let tri_info: Vec<[u32; 4]> = p.scene.triangles.iter().map(|t| [t.n[0], t.n[1], t.n[2], t.material]).collect();
    let mut normals: Vec<[f32; 4]> = p.scene.normals.iter().map(|n| [n.x, n.y, n.z, 0.0]).collect();
    normals.resize(normals.len().max(1), [0.0; 4]);
    let (lo, hi) = escape_box(p);
    let tree = GpuKdTree::upload(gpu, &p.tree, &p.tris)?;
    let params = Params {
        bmin: tree.bounds.min.into(),
        bmax: tree.bounds.max.into(),
        escape_lo: lo.into(),
        escape_hi: hi.into(),
        em_count: em.len() as u32,
        eps: p.eps,
        ..Params::default()
    };
    Ok(GpuPhotonScene {
        tree,
        tri_info: gpu.upload(&tri_info)?,
        normals: gpu.upload(&normals)?,
        materials: gpu.upload(&p.scene.gpu_materials())?,
        emitters: GpuEmitters::upload(gpu, &em)?,
        params,
    })
}

/// Photons per batch: as many as fit one binding in the worst case (every photon
/// `max_bounces` flights of 32 bytes of geometry), at most 2^20.
fn batch_size(gpu: &Gpu, o: &PhotonOptions) -> u32 {
    let fit = gpu.limits().max_storage_buffer_binding_size / (32 * o.max_bounces.max(1) as u64);
    fit.clamp(1, 1 << 20) as u32
}

/// The shader's bindings in order.
fn bindings<'a>(
    scene: &'a GpuPhotonScene,
    uniform: &'a lumbre_gpu::wgpu::Buffer,
    counts: &'a Buffer<u32>,
    geom: &'a Buffer<[f32; 4]>,
    power: &'a Buffer<[f32; 4]>,
) -> Vec<lumbre_gpu::wgpu::BindingResource<'a>> {
    let [nodes, prims, tris] = scene.tree.bindings();
    let [em, cdf, index] = scene.emitters.bindings();
    vec![
        uniform.as_entire_binding(),
        nodes,
        prims,
        tris,
        scene.tri_info.binding(),
        scene.normals.binding(),
        scene.materials.binding(),
        em,
        cdf,
        index,
        counts.binding(),
        geom.binding(),
        power.binding(),
    ]
}

/// Records (and submits, batch by batch) the tracing.
pub(crate) fn record(rec: &mut Recorder, scene: &GpuPhotonScene, o: &PhotonOptions) -> Result<GpuPhotons> {
    let gpu = rec.gpu().clone();
    let batch = batch_size(&gpu, o).max(1);
    let mut parts = Vec::new();
    let mut timings = Vec::new();
    let stand_in = gpu.zeroed::<[f32; 4]>(2)?;
    let mut first = 0u32;
    while first < o.photons {
        let n = batch.min(o.photons - first);
        let params =
            Params { count: n, first, photons: o.photons, max_bounces: o.max_bounces, seed: o.seed, ..scene.params };
        let uniform = gpu.uniform(&params)?;
        let counts = gpu.zeroed::<u32>(n as usize)?;
        let offsets = gpu.zeroed::<u32>(n as usize)?;
        let bind = |counts, geom, power| bindings(scene, &uniform, counts, geom, power);
        rec.dispatch(
            "photons",
            &gpu.kernel(&PHOTONS, "count")?,
            &bind(&counts, &stand_in, &stand_in),
            (n as u64).div_ceil(WG),
        )?;
        let scan = record_scan(rec, &counts, &offsets, ScanKind::Exclusive)?;
        let total = gpu.zeroed::<u32>(1)?;
        rec.copy_range(scan.carry(), scan.carry().len() - 1, &total, 0, 1)?;
        let copy = gpu.zeroed::<u32>(n as usize)?;
        rec.copy(&counts, &copy)?;
        let done = std::mem::replace(rec, gpu.recorder());
        timings.push(done.submit()?);
        let flights = gpu.download(&total)?[0] as usize;
        let per_photon = gpu.download(&copy)?;
        let geom = gpu.zeroed::<[f32; 4]>(2 * flights.max(1))?;
        let power = gpu.zeroed::<[f32; 4]>(flights.max(1))?;
        rec.dispatch(
            "photons",
            &gpu.kernel(&PHOTONS, "trace")?,
            &bind(&offsets, &geom, &power),
            (n as u64).div_ceil(WG),
        )?;
        parts.push(Part { geom, power, per_photon, first });
        first += n;
    }
    Ok(GpuPhotons { parts, options: *o, timings })
}

/// Reads the flights back, keeping those the options select.
pub(crate) fn download(gpu: &Gpu, out: &GpuPhotons) -> Result<Photons> {
    let mut segments = Vec::new();
    let mut photon = Vec::new();
    for Part { geom, power, per_photon, first } in &out.parts {
        let total: usize = per_photon.iter().map(|&c| c as usize).sum();
        let g = gpu.download_range(geom, 0..2 * total)?;
        let p = gpu.download_range(power, 0..total)?;
        let mut k = 0;
        for (i, &c) in per_photon.iter().enumerate() {
            for _ in 0..c {
                let (a, b) = (g[2 * k], g[2 * k + 1]);
                let bounce = a[3].to_bits();
                if out.options.bounces.keeps(bounce) {
                    segments.push(Segment {
                        start: glam::Vec3::new(a[0], a[1], a[2]),
                        end: glam::Vec3::new(b[0], b[1], b[2]),
                        power: [p[k][0], p[k][1], p[k][2]],
                        bounce,
                    });
                    photon.push(first + i as u32);
                }
                k += 1;
            }
        }
    }
    Ok(Photons { segments, photon })
}
