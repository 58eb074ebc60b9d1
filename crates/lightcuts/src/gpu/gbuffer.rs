//! The G-buffer on the GPU: `lightcuts/gbuffer.wgsl`, the twin of `gbuffer.rs`.

use lumbre_gpu::{Buffer, Compute, Gpu, Progress, Recorder, Report, Result};
use lumbre_kdtree::QueryOptions;
use lumbre_raytrace::{GpuCamera, Prepared};

use crate::gpu::{GpuLightScene, query_flags, tile_dispatches};
use crate::{GBuffer, GPixel, View, gbuffer_cpu};

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
}
const _: () = assert!(size_of::<Params>() == lumbre_shaders::lightcuts::GBUFFER_PARAMS_SIZE);

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

/// The G-buffer of a view: one primary ray through each pixel's centre.
///
/// ```no_run
/// use lumbre_gpu::{Compute, Gpu};
/// use lumbre_lightcuts::{GBufferPass, View};
/// use lumbre_raytrace::{Prepared, Scene};
/// let (scene, _) = Scene::load_obj("testdata/scenes/CornellBox-Diffuse.obj".as_ref()).unwrap();
/// let prepared = Prepared::new(scene, &Default::default());
/// let pass = GBufferPass { view: View::cornell(64, 64), query: Default::default() };
/// let g = pass.gpu(&Gpu::new()?, &prepared)?;
/// assert_eq!(g.pixels.len(), 64 * 64);
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GBufferPass {
    /// Camera and size.
    pub view: View,
    /// Traversal and triangle test of the primary rays.
    pub query: QueryOptions,
}

impl GBufferPass {
    /// Records the G-buffer of an uploaded scene.
    pub fn record_gbuffer(&self, rec: &mut Recorder, scene: &GpuLightScene) -> Result<GpuGBuffer> {
        self.view.validate()?;
        let gpu = rec.gpu().clone();
        let (w, h) = (self.view.width, self.view.height);
        let pixels = gpu.zeroed::<GPixel>(w as usize * h as usize)?;
        let kernel = gpu.kernel(&lumbre_shaders::lightcuts::GBUFFER, "main")?;
        let b = scene.tree.bounds;
        for (tile_base, tiles) in tile_dispatches(w, h) {
            let params = gpu.uniform(&Params {
                cam: self.view.camera.to_gpu(w, h),
                bmin: b.min.to_array(),
                width: w,
                bmax: b.max.to_array(),
                height: h,
                eps: scene.eps,
                flags: query_flags(&self.query),
                tile_base,
                far: f32::INFINITY,
            })?;
            let [k1, k2, k3] = scene.tree.bindings();
            let res = [
                params.as_entire_binding(),
                k1,
                k2,
                k3,
                scene.tri_info.binding(),
                scene.normals.binding(),
                scene.materials.binding(),
                pixels.binding(),
            ];
            rec.dispatch("gbuffer", &kernel, &res, tiles as u64)?;
        }
        Ok(GpuGBuffer { pixels, width: w, height: h })
    }
}

impl Compute for GBufferPass {
    type Input = Prepared;
    type Output = GBuffer;
    type GpuInput = GpuLightScene;
    type GpuOutput = GpuGBuffer;

    fn name(&self) -> &'static str {
        "gbuffer"
    }

    fn cpu(&self, p: &Prepared) -> Result<GBuffer> {
        self.cpu_reported(p, &()).map(|(g, _)| g)
    }

    fn cpu_reported(&self, p: &Prepared, _progress: &dyn Progress) -> Result<(GBuffer, Report)> {
        let mut report = Report::default();
        let g = report.time("gbuffer", || gbuffer_cpu(p, &self.view, &self.query))?;
        Ok((g, report))
    }

    fn upload(&self, gpu: &Gpu, p: &Prepared) -> Result<GpuLightScene> {
        GpuLightScene::upload(gpu, p)
    }

    fn record(&self, rec: &mut Recorder, scene: &GpuLightScene) -> Result<GpuGBuffer> {
        self.record_gbuffer(rec, scene)
    }

    fn download(&self, gpu: &Gpu, out: &GpuGBuffer) -> Result<GBuffer> {
        out.download(gpu)
    }
}
