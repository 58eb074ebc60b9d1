//! The GPU path, stage by stage in the order of the CPU stages: the point pool
//! (`lightcuts/ism_points`), splatting (`lightcuts/ism_splat`), pull-push
//! (`lightcuts/pull_push`), and the buffers of lookups (`lightcuts/ism_lookup`).

use glam::Vec3;
use lumbre_gpu::{Buffer, Error, Fit, Gpu, Recorder, Result, pieces};

use super::points::PoolPlan;
use super::pull_push::scratch_texels;
use super::{IsmOptions, Lookup, ScenePoints};
use crate::Vpl;

/// A VPL as the GPU holds it: position, normal and intensity, each padded to a vec4 (48
/// bytes, the layout the lightcuts renderer shares).
///
/// ```
/// use glam::Vec3;
/// use lumbre_lightcuts::{Vpl, ism::GpuVpl};
/// let g = GpuVpl::from(&Vpl { position: Vec3::X, normal: Vec3::Y, intensity: Vec3::Z });
/// assert_eq!(g.normal, [0.0, 1.0, 0.0, 0.0]);
/// assert_eq!(size_of::<GpuVpl>(), 48);
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct GpuVpl {
    /// Position, w 0.
    pub position: [f32; 4],
    /// Unit normal, w 0.
    pub normal: [f32; 4],
    /// Intensity, w 0.
    pub intensity: [f32; 4],
}

impl From<&Vpl> for GpuVpl {
    fn from(v: &Vpl) -> GpuVpl {
        let pad = |a: Vec3| [a.x, a.y, a.z, 0.0];
        GpuVpl { position: pad(v.position), normal: pad(v.normal), intensity: pad(v.intensity) }
    }
}

/// Checks that every VPL has a finite position and a finite unit normal (within 1e-3).
pub(crate) fn check_vpls(vpls: &[Vpl]) -> Result<()> {
    if vpls.len() > u32::MAX as usize / 16 {
        return Err(Error::Input(format!("{} VPLs: at most {}", vpls.len(), u32::MAX / 16)));
    }
    for (i, v) in vpls.iter().enumerate() {
        if !(v.position.is_finite() && v.normal.is_finite() && (v.normal.length() - 1.0).abs() <= 1e-3) {
            return Err(Error::Input(format!(
                "VPL {i}: position {} and normal {} (needed: finite, and a unit normal)",
                v.position, v.normal
            )));
        }
    }
    Ok(())
}

/// Uploads VPLs in the [`GpuVpl`] layout (checked as [`super::Ism::build_cpu`] checks them).
///
/// ```no_run
/// use glam::Vec3;
/// let gpu = lumbre_gpu::Gpu::new()?;
/// let vpls = [lumbre_lightcuts::Vpl { position: Vec3::Y, normal: -Vec3::Y, intensity: Vec3::ONE }];
/// let on_gpu = lumbre_lightcuts::ism::upload_vpls(&gpu, &vpls)?;
/// assert_eq!(on_gpu.len(), 1);
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
pub fn upload_vpls(gpu: &Gpu, vpls: &[Vpl]) -> Result<Buffer<GpuVpl>> {
    check_vpls(vpls)?;
    let data: Vec<GpuVpl> = vpls.iter().map(GpuVpl::from).collect();
    gpu.upload(&data)
}

/// The point pool on the GPU.
#[derive(Clone, Debug)]
pub struct GpuScenePoints {
    /// Positions (w 1), in the pool's order.
    pub positions: Buffer<[f32; 4]>,
    /// The triangle of each point.
    pub triangles: Buffer<u32>,
    /// Bounds of the scene's triangles.
    pub bounds: (Vec3, Vec3),
}

impl GpuScenePoints {
    /// Uploads a pool made on the CPU.
    ///
    /// ```no_run
    /// use glam::Vec3;
    /// use lumbre_lightcuts::ism::{GpuScenePoints, ScenePoints};
    /// let gpu = lumbre_gpu::Gpu::new()?;
    /// let pool = ScenePoints::sample(&[[Vec3::ZERO, Vec3::X, Vec3::Z]], 100, 0)?;
    /// let on_gpu = GpuScenePoints::upload(&gpu, &pool)?;
    /// assert_eq!(on_gpu.len(), 100);
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn upload(gpu: &Gpu, points: &ScenePoints) -> Result<GpuScenePoints> {
        if points.is_empty() || points.len() > super::MAX_POINTS as usize || points.triangles.len() != points.len() {
            return Err(Error::Input(format!(
                "a pool of {} points and {} triangle indices: needed 1..={} of each",
                points.len(),
                points.triangles.len(),
                super::MAX_POINTS
            )));
        }
        if let Some(i) = points.positions.iter().position(|p| !p.is_finite()) {
            return Err(Error::Input(format!("pool point {i} is not finite: {}", points.positions[i])));
        }
        let xyzw: Vec<[f32; 4]> = points.positions.iter().map(|p| [p.x, p.y, p.z, 1.0]).collect();
        Ok(GpuScenePoints {
            positions: gpu.upload(&xyzw)?,
            triangles: gpu.upload(&points.triangles)?,
            bounds: points.bounds,
        })
    }

    /// Number of points.
    pub fn len(&self) -> usize {
        self.positions.len()
    }

    /// Whether the pool is empty.
    pub fn is_empty(&self) -> bool {
        self.positions.is_empty()
    }

    /// Length of the diagonal of the scene's bounds.
    pub fn diagonal(&self) -> f32 {
        (self.bounds.1 - self.bounds.0).length()
    }
}

/// The input of the GPU point pool: the triangles and the area CDF, made on the host.
#[derive(Clone, Debug)]
pub struct GpuPoolInput {
    pub(crate) plan: PoolPlan,
    pub(crate) tris: Buffer<[f32; 4]>,
    pub(crate) cdf: Buffer<u32>,
}

impl GpuPoolInput {
    /// Checks the triangles, makes the CDF and uploads both.
    pub(crate) fn new(gpu: &Gpu, triangles: &[[Vec3; 3]], count: u32, seed: u32) -> Result<GpuPoolInput> {
        let plan = PoolPlan::new(triangles, count, seed)?;
        let tris: Vec<[f32; 4]> = triangles.iter().flatten().map(|p| [p.x, p.y, p.z, 0.0]).collect();
        Ok(GpuPoolInput { tris: gpu.upload(&tris)?, cdf: gpu.upload(&plan.cdf)?, plan })
    }
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct PointsParams {
    count: u32,
    tris: u32,
    seed: u32,
    step: u32,
    half_bits: u32,
    _pad: [u32; 3],
}
const _: () = assert!(size_of::<PointsParams>() == lumbre_shaders::lightcuts::ISM_POINTS_PARAMS_SIZE);

/// Records the point pool (`lightcuts/ism_points`).
pub(crate) fn record_points(rec: &mut Recorder, input: &GpuPoolInput) -> Result<GpuScenePoints> {
    let gpu = rec.gpu().clone();
    let plan = &input.plan;
    let n = plan.count as usize;
    let positions = gpu.zeroed::<[f32; 4]>(n)?;
    let triangles = gpu.zeroed::<u32>(n)?;
    let params = gpu.uniform(&PointsParams {
        count: plan.count,
        tris: (plan.cdf.len() - 1) as u32,
        seed: plan.seed,
        step: plan.step,
        half_bits: plan.half_bits,
        _pad: [0; 3],
    })?;
    let kernel = gpu.kernel(&lumbre_shaders::lightcuts::ISM_POINTS, "main")?;
    let bind = [
        params.as_entire_binding(),
        input.tris.binding(),
        input.cdf.binding(),
        positions.binding(),
        triangles.binding(),
    ];
    rec.dispatch("ism points", &kernel, &bind, (n as u64).div_ceil(256))?;
    Ok(GpuScenePoints { positions, triangles, bounds: plan.bounds })
}

/// The uniform of `lightcuts/ism_lookup`.
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct IsmParams {
    size: u32,
    taps: u32,
    vpls: u32,
    bias: f32,
    per_distance: f32,
    _pad: [u32; 3],
}
const _: () = assert!(size_of::<IsmParams>() == lumbre_shaders::lightcuts::ISM_VISIBILITY_ISM_PARAMS_SIZE);

/// An atlas of depth maps on the GPU (the layout of [`IsmAtlas`](super::IsmAtlas): maps one
/// after another, f32 bits, +inf for holes), with the uniform its lookups read.
#[derive(Clone, Debug)]
pub struct GpuIsmAtlas {
    /// The depths' bits. Longer than one storage binding when there are many maps: the
    /// build binds it in pieces of whole maps.
    pub depth: Buffer<u32>,
    /// Side of each map.
    pub size: u32,
    /// Number of maps.
    pub vpls: u32,
    /// How lookups compare depths.
    pub lookup: Lookup,
    params: lumbre_gpu::wgpu::Buffer,
}

impl GpuIsmAtlas {
    /// An atlas of `vpls` maps on `gpu` (contents undefined until a build writes them).
    pub(crate) fn new(gpu: &Gpu, size: u32, vpls: u32, lookup: Lookup) -> Result<GpuIsmAtlas> {
        let len = vpls as usize * (size * size) as usize;
        let depth = gpu.zeroed_fit::<u32>(len, Fit::Pieces)?;
        let params = gpu.uniform(&IsmParams {
            size,
            taps: lookup.taps,
            vpls,
            bias: lookup.bias,
            per_distance: lookup.per_distance(size),
            _pad: [0; 3],
        })?;
        Ok(GpuIsmAtlas { depth, size, vpls, lookup, params })
    }

    /// Uploads an atlas.
    ///
    /// ```no_run
    /// use lumbre_lightcuts::ism::{GpuIsmAtlas, IsmAtlas};
    /// let gpu = lumbre_gpu::Gpu::new()?;
    /// let atlas = GpuIsmAtlas::upload(&gpu, &IsmAtlas::empty(32, 4))?;
    /// assert_eq!(atlas.vpls, 4);
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn upload(gpu: &Gpu, atlas: &super::IsmAtlas) -> Result<GpuIsmAtlas> {
        if atlas.depth.len() != atlas.vpls as usize * atlas.texels() || !super::SIZES.contains(&atlas.size) {
            return Err(Error::Input(format!(
                "an atlas of {} depths for {} maps of side {} (sides allowed: {:?})",
                atlas.depth.len(),
                atlas.vpls,
                atlas.size,
                super::SIZES
            )));
        }
        let g = GpuIsmAtlas::new(gpu, atlas.size, atlas.vpls, atlas.lookup)?;
        let bits: &[u32] = bytemuck::cast_slice(&atlas.depth);
        gpu.write(&g.depth, 0, bits)?;
        Ok(g)
    }

    /// Reads the atlas back.
    pub fn download(&self, gpu: &Gpu) -> Result<super::IsmAtlas> {
        let bits = gpu.download(&self.depth)?;
        Ok(super::IsmAtlas {
            size: self.size,
            vpls: self.vpls,
            depth: bits.into_iter().map(f32::from_bits).collect(),
            lookup: self.lookup,
        })
    }

    /// The bindings `lightcuts/ism_lookup` reads, in its order: the `IsmParams` uniform,
    /// then the depths. An error when the depths exceed one storage binding (lookups bind
    /// the atlas whole), naming the limit.
    pub fn lookup_bindings(&self, gpu: &Gpu) -> Result<[lumbre_gpu::wgpu::BindingResource<'_>; 2]> {
        gpu.check_size("ISM atlas bound for lookups", self.depth.size_bytes(), Fit::Binding)?;
        Ok([self.params.as_entire_binding(), self.depth.binding()])
    }

    /// Maps per piece: the most whole maps that one storage binding holds.
    pub(crate) fn maps_per_piece(&self, gpu: &Gpu) -> usize {
        gpu.piece_len((self.size * self.size * 4) as usize, 1)
    }
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct SplatParams {
    points: u32,
    per_vpl: u32,
    size: u32,
    vpl0: u32,
    vpls: u32,
    bands: u32,
    band_rows: u32,
    seed: u32,
}
const _: () = assert!(size_of::<SplatParams>() == lumbre_shaders::lightcuts::ISM_SPLAT_PARAMS_SIZE);

/// Texels of the splat kernel's band in workgroup memory.
const BAND_TEXELS: u32 = 4096;

/// Records splatting into a new atlas (`lightcuts/ism_splat`), piece by piece.
pub(crate) fn record_splat(
    rec: &mut Recorder,
    points: &GpuScenePoints,
    vpls: &Buffer<GpuVpl>,
    opts: &IsmOptions,
    diagonal: f32,
) -> Result<GpuIsmAtlas> {
    opts.validate()?;
    let gpu = rec.gpu().clone();
    let n = points.len() as u32;
    if n == 0 || opts.points_per_vpl > n {
        return Err(Error::Input(format!(
            "points_per_vpl {} with a pool of {n} points: needed 1..={n}",
            opts.points_per_vpl
        )));
    }
    let count = u32::try_from(vpls.len()).map_err(|_| Error::Input(format!("{} VPLs", vpls.len())))?;
    let atlas = GpuIsmAtlas::new(&gpu, opts.size, count, opts.lookup(diagonal))?;
    let kernel = gpu.kernel(&lumbre_shaders::lightcuts::ISM_SPLAT, "main")?;
    let bands = (opts.size * opts.size).div_ceil(BAND_TEXELS);
    let texels = opts.texels();
    for (first, len) in pieces(count as usize, atlas.maps_per_piece(&gpu)) {
        let params = gpu.uniform(&SplatParams {
            points: n,
            per_vpl: opts.points_per_vpl,
            size: opts.size,
            vpl0: first as u32,
            vpls: len as u32,
            bands,
            band_rows: opts.size / bands,
            seed: opts.seed,
        })?;
        let bind = [
            params.as_entire_binding(),
            points.positions.binding(),
            vpls.binding(),
            atlas.depth.binding_range(first * texels..(first + len) * texels),
        ];
        rec.dispatch("ism splat", &kernel, &bind, len as u64 * bands as u64)?;
    }
    Ok(atlas)
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct PullPushParams {
    size: u32,
    levels: u32,
    maps: u32,
    scratch_per_map: u32,
}
const _: () = assert!(size_of::<PullPushParams>() == lumbre_shaders::lightcuts::PULL_PUSH_PARAMS_SIZE);

/// Records pull-push over `levels` levels on every map of `atlas`, in place
/// (`lightcuts/pull_push`), piece by piece.
pub(crate) fn record_pull_push(rec: &mut Recorder, atlas: &GpuIsmAtlas, levels: u32) -> Result<()> {
    let max = atlas.size.trailing_zeros();
    if levels > max {
        return Err(Error::Input(format!(
            "pull-push over {levels} levels of maps of side {}: at most {max}",
            atlas.size
        )));
    }
    if levels == 0 || atlas.vpls == 0 {
        return Ok(());
    }
    let gpu = rec.gpu().clone();
    let kernel = gpu.kernel(&lumbre_shaders::lightcuts::PULL_PUSH, "main")?;
    let per_map = scratch_texels(atlas.size, levels);
    let piece = atlas.maps_per_piece(&gpu).min(atlas.vpls as usize);
    let scratch = gpu.zeroed::<u32>(piece * per_map)?;
    let texels = (atlas.size * atlas.size) as usize;
    for (first, len) in pieces(atlas.vpls as usize, piece) {
        let params = gpu.uniform(&PullPushParams {
            size: atlas.size,
            levels,
            maps: len as u32,
            scratch_per_map: per_map as u32,
        })?;
        let bind = [
            params.as_entire_binding(),
            atlas.depth.binding_range(first * texels..(first + len) * texels),
            scratch.binding(),
        ];
        rec.dispatch("ism pull-push", &kernel, &bind, len as u64)?;
    }
    Ok(())
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct VisibilityParams {
    n: u32,
    _pad: [u32; 3],
}
const _: () = assert!(size_of::<VisibilityParams>() == lumbre_shaders::lightcuts::ISM_VISIBILITY_PARAMS_SIZE);

/// Records a batch of lookups (`lightcuts/ism_visibility`): `queries` holds three vec4s per
/// query (VPL position with the VPL's index as u32 bits in w, VPL normal, receiver).
pub(crate) fn record_visibility(
    rec: &mut Recorder,
    atlas: &GpuIsmAtlas,
    queries: &Buffer<[f32; 4]>,
) -> Result<Buffer<f32>> {
    let gpu = rec.gpu().clone();
    let n = queries.len() / 3;
    let out = gpu.zeroed::<f32>(n)?;
    let params = gpu.uniform(&VisibilityParams { n: n as u32, _pad: [0; 3] })?;
    let kernel = gpu.kernel(&lumbre_shaders::lightcuts::ISM_VISIBILITY, "main")?;
    let [ism, depth] = atlas.lookup_bindings(&gpu)?;
    let bind = [params.as_entire_binding(), ism, depth, queries.binding(), out.binding()];
    rec.dispatch("ism visibility", &kernel, &bind, (n as u64).div_ceil(64))?;
    Ok(out)
}
