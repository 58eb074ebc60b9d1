//! Stage 2 on the GPU, splatting: `lightcuts/ism_splat.wgsl`, the twin of `ism/splat.rs`.

use lumbre_gpu::{Buffer, Compute, Error, Gpu, Progress, Recorder, Report, Result, pieces};

use crate::gpu::ism::atlas::GpuIsmAtlas;
use crate::gpu::ism::points::GpuScenePoints;
use crate::gpu::vpls::GpuVpl;
use crate::ism::atlas::IsmAtlas;
use crate::ism::options::{IsmOptions, check_vpls};
use crate::ism::splat::{IsmInput, Splat};
use crate::vpls::Vpl;

/// [`IsmInput`] on the GPU.
#[derive(Clone, Debug)]
pub struct GpuIsmInput {
    /// The pool.
    pub points: GpuScenePoints,
    /// The VPLs.
    pub vpls: Buffer<GpuVpl>,
}

/// Uploads VPLs in the [`GpuVpl`] layout (checked as
/// [`Ism::build_cpu`](crate::ism::Ism::build_cpu) checks them).
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

impl Compute for Splat {
    type Input = IsmInput;
    type Output = IsmAtlas;
    type GpuInput = GpuIsmInput;
    type GpuOutput = GpuIsmAtlas;

    fn name(&self) -> &'static str {
        "ism splat"
    }

    fn cpu_reported(&self, input: &IsmInput, _: &dyn Progress) -> Result<(IsmAtlas, Report)> {
        Report::timed(self.name(), || self.cpu(input))
    }

    fn upload(&self, gpu: &Gpu, input: &IsmInput) -> Result<GpuIsmInput> {
        Ok(GpuIsmInput { points: GpuScenePoints::upload(gpu, &input.points)?, vpls: upload_vpls(gpu, &input.vpls)? })
    }

    fn record(&self, rec: &mut Recorder, input: &GpuIsmInput) -> Result<GpuIsmAtlas> {
        record_splat(rec, &input.points, &input.vpls, &self.options, input.points.diagonal())
    }

    fn download(&self, gpu: &Gpu, out: &GpuIsmAtlas) -> Result<IsmAtlas> {
        out.download(gpu)
    }
}
