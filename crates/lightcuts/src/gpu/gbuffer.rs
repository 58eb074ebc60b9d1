//! The G-buffer on the GPU: `lightcuts/gbuffer.wgsl`, the twin of `gbuffer.rs`.

use lumbre_gpu::{Buffer, Compute, Gpu, Progress, Recorder, Report, Result};
use lumbre_raytrace::twin::GpuCamera;
use lumbre_raytrace::{GpuScene, Prepared};

use crate::gbuffer::{GBuffer, GBufferPass, GPixel};
use crate::gpu::scene::query_flags;
use crate::rows::Rows;

/// 8x8-pixel tiles per dispatch of the per-pixel kernels: a quarter of a million pixels,
/// so that no dispatch runs long enough for a driver to reset the GPU.
const TILES_PER_DISPATCH: u32 = 1 << 12;

/// `(first tile, tiles)` of each dispatch of a per-pixel kernel (the G-buffer's, and the
/// shading kernels that read it) over a `width x height` image in 8x8 tiles.
pub(crate) fn tile_dispatches(width: u32, height: u32) -> Vec<(u32, u32)> {
    let tiles = width.div_ceil(8) * height.div_ceil(8);
    (0..tiles.div_ceil(TILES_PER_DISPATCH))
        .map(|k| (k * TILES_PER_DISPATCH, TILES_PER_DISPATCH.min(tiles - k * TILES_PER_DISPATCH)))
        .collect()
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    cam: GpuCamera,
    bmin: [f32; 3],
    width: u32,
    bmax: [f32; 3],
    height: u32,
    eps: f32,
    flags: u32,
    tile_base: u32,
    far: f32,
    first_row: u32,
    _pad: [u32; 3],
}
const _: () = assert!(
    size_of::<Params>() == lumbre_shaders::lightcuts::GBUFFER_KD_PARAMS_SIZE
        && size_of::<Params>() == lumbre_shaders::lightcuts::GBUFFER_BVH_PARAMS_SIZE
);

/// A G-buffer on the GPU.
#[derive(Clone, Debug)]
pub struct GpuGBuffer {
    /// Row-major pixels.
    pub pixels: Buffer<GPixel>,
    /// Width.
    pub width: u32,
    /// Height.
    pub height: u32,
}

impl GpuGBuffer {
    /// Uploads a G-buffer.
    pub fn upload(gpu: &Gpu, g: &GBuffer) -> Result<GpuGBuffer> {
        Ok(GpuGBuffer { pixels: gpu.upload(&g.pixels)?, width: g.width, height: g.height })
    }

    /// Reads it back.
    pub fn download(&self, gpu: &Gpu) -> Result<GBuffer> {
        Ok(GBuffer { width: self.width, height: self.height, pixels: gpu.download(&self.pixels)? })
    }
}

impl GBufferPass {
    /// Records the G-buffer of an uploaded scene.
    pub fn record_gbuffer(&self, rec: &mut Recorder, scene: &GpuScene) -> Result<GpuGBuffer> {
        self.record_gbuffer_rows(rec, scene, Rows::all(self.view.height))
    }

    /// Records the G-buffer of the band `rows` of the view (`width` x `rows.len()` pixels,
    /// the dispatches over the band's tiles only), each pixel's ray that of the whole
    /// image's pixel.
    pub(crate) fn record_gbuffer_rows(&self, rec: &mut Recorder, scene: &GpuScene, rows: Rows) -> Result<GpuGBuffer> {
        self.view.validate()?;
        rows.check(self.view.height)?;
        let gpu = rec.gpu().clone();
        let (w, h) = (self.view.width, rows.len());
        let pixels = gpu.zeroed::<GPixel>(w as usize * h as usize)?;
        let shader =
            scene.structure.pick(lumbre_shaders::lightcuts::GBUFFER_KD, lumbre_shaders::lightcuts::GBUFFER_BVH);
        let kernel = gpu.kernel(&shader, "main")?;
        let b = scene.bounds();
        for (tile_base, tiles) in tile_dispatches(w, h) {
            let params = gpu.uniform(&Params {
                cam: self.view.camera.to_gpu(w, self.view.height),
                bmin: b.min.to_array(),
                width: w,
                bmax: b.max.to_array(),
                height: h,
                eps: scene.eps,
                flags: query_flags(&self.query),
                tile_base,
                far: f32::INFINITY,
                first_row: rows.start,
                _pad: [0; 3],
            })?;
            let res: Vec<_> =
                [params.as_entire_binding()].into_iter().chain(scene.bindings()).chain([pixels.binding()]).collect();
            rec.dispatch("gbuffer", &kernel, &res, tiles as u64)?;
        }
        Ok(GpuGBuffer { pixels, width: w, height: h })
    }
}

impl Compute for GBufferPass {
    type Input = Prepared;
    type Output = GBuffer;
    type GpuInput = GpuScene;
    type GpuOutput = GpuGBuffer;

    fn name(&self) -> &'static str {
        "gbuffer"
    }

    fn cpu_reported(&self, p: &Prepared, _: &dyn Progress) -> Result<(GBuffer, Report)> {
        Report::timed(self.name(), || self.cpu(p))
    }

    fn upload(&self, gpu: &Gpu, p: &Prepared) -> Result<GpuScene> {
        GpuScene::upload(gpu, p)
    }

    fn record(&self, rec: &mut Recorder, scene: &GpuScene) -> Result<GpuGBuffer> {
        self.record_gbuffer(rec, scene)
    }

    fn download(&self, gpu: &Gpu, out: &GpuGBuffer) -> Result<GBuffer> {
        out.download(gpu)
    }
}
