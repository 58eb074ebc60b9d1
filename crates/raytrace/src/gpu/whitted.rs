//! The Whitted integrator on the GPU: `raytrace/whitted.wgsl`, one thread per pixel, the
//! image rendered in tiles of pixels and batches of samples, and read back once.

use glam::Vec3;
use lumbre_gpu::{Buffer, Compute, Error, Gpu, Progress, Recorder, Report, Result};
use lumbre_kdtree::{Traversal, TriangleTest};

use super::batch::{TILES_PER_DISPATCH, batches};
use super::image::check_gpu_image;
use super::scene::GpuScene;
use crate::camera::GpuCamera;
use crate::image::Image;
use crate::scene::Prepared;
use crate::whitted::WhittedRender;

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    cam: GpuCamera,
    bmin: [f32; 3],
    width: u32,
    bmax: [f32; 3],
    height: u32,
    background: [f32; 3],
    spp: u32,
    max_depth: u32,
    n_lights: u32,
    flags: u32,
    ambient: f32,
    eps: f32,
    pixel_base: u32,
    batch_first: u32,
    batch_count: u32,
    done: u32,
    _pad: [u32; 3],
}
const _: () = assert!(size_of::<Params>() == lumbre_shaders::raytrace::WHITTED_PARAMS_SIZE);

/// The pixels of a render on the GPU and its counters.
#[derive(Clone, Debug)]
pub struct GpuImage {
    /// Linear RGB (and 1) per pixel, row-major: the mean of the samples rendered.
    pub pixels: Buffer<[f32; 4]>,
    /// Rays cast (low, high word), pixel batches the driver cut short (an error), padding.
    pub rays: Buffer<u32>,
    /// Width.
    pub width: u32,
    /// Height.
    pub height: u32,
}

impl WhittedRender {
    /// Records the render of an uploaded scene.
    pub fn record_render(&self, rec: &mut Recorder, scene: &GpuScene) -> Result<GpuImage> {
        let gpu = rec.gpu().clone();
        let o = &self.options;
        o.check().map_err(Error::Input)?;
        check_gpu_image(&gpu, o.width, o.height)?;
        let n = o.width as usize * o.height as usize;
        let pixels = gpu.zeroed::<[f32; 4]>(n)?;
        let rays = gpu.zeroed::<u32>(4)?;
        // max_depth 1 (camera and shadow rays) has its own entry point without the ray stack.
        let entry = if o.max_depth <= 1 { "render_direct" } else { "render" };
        let kernel = gpu.kernel(&lumbre_shaders::raytrace::WHITTED, entry)?;
        let tiles = o.width.div_ceil(8) * o.height.div_ceil(8);
        let flags = (o.query.traversal == Traversal::Restart) as u32
            | (((o.query.test == TriangleTest::Watertight) as u32) << 1);
        let b = scene.tree.bounds;
        let (first, count) = o.samples();
        for batch in batches(first, count, tiles, TILES_PER_DISPATCH) {
            let params = gpu.upload(&[Params {
                cam: self.camera.to_gpu(o.width, o.height),
                bmin: b.min.to_array(),
                width: o.width,
                bmax: b.max.to_array(),
                height: o.height,
                background: o.background.to_array(),
                spp: o.spp,
                max_depth: o.max_depth,
                n_lights: scene.n_lights,
                flags,
                ambient: o.ambient,
                eps: scene.eps,
                pixel_base: batch.tile_base,
                batch_first: batch.first,
                batch_count: batch.count,
                done: batch.done,
                _pad: [0; 3],
            }])?;
            let res: Vec<_> = [params.binding()]
                .into_iter()
                .chain(scene.bindings())
                .chain([scene.lights.binding(), pixels.binding(), rays.binding()])
                .collect();
            rec.dispatch("whitted", &kernel, &res, batch.tiles as u64)?;
        }
        Ok(GpuImage { pixels, rays, width: o.width, height: o.height })
    }
}

impl Compute for WhittedRender {
    type Input = Prepared;
    type Output = Image;
    type GpuInput = GpuScene;
    type GpuOutput = GpuImage;

    fn name(&self) -> &'static str {
        "whitted render"
    }

    /// The CPU render with one progress step per row; reports the rays cast.
    fn cpu_reported(&self, p: &Prepared, progress: &dyn Progress) -> Result<(Image, Report)> {
        self.run_cpu(p, progress)
    }

    fn gpu_stats(&self, gpu: &Gpu, out: &GpuImage) -> Result<Report> {
        let mut report = Report::default();
        let c = gpu.download(&out.rays)?;
        report.stat("rays", ((c[1] as u64) << 32 | c[0] as u64) as f64);
        Ok(report)
    }

    /// Uploads the scene; an error for options or a scene size the render refuses.
    fn upload(&self, gpu: &Gpu, p: &Prepared) -> Result<GpuScene> {
        self.options.check().map_err(Error::Input)?;
        p.scene.check_size().map_err(Error::Input)?;
        check_gpu_image(gpu, self.options.width, self.options.height)?;
        GpuScene::upload(gpu, p)
    }

    fn record(&self, rec: &mut Recorder, scene: &GpuScene) -> Result<GpuImage> {
        self.record_render(rec, scene)
    }

    fn download(&self, gpu: &Gpu, out: &GpuImage) -> Result<Image> {
        let short = gpu.download(&out.rays)?[2];
        if short > 0 {
            return Err(Error::Validation(format!(
                "{short} pixel batches of the Whitted render stopped short: the driver limits the loop \
                 iterations of an invocation (lavapipe: 65535); fewer lights, a smaller max_depth or the CPU \
                 would fit"
            )));
        }
        let px = gpu.download(&out.pixels)?;
        let pixels = px.iter().map(|p| Vec3::new(p[0], p[1], p[2])).collect();
        Image::from_pixels(out.width, out.height, pixels).map_err(lumbre_gpu::Error::Input)
    }
}
