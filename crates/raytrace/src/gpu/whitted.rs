//! The Whitted integrator on the GPU: `raytrace/whitted.wgsl`, one thread per pixel (several
//! on small images), the image rendered in tiles of pixels and batches of samples whose
//! radiance is added to per-pixel sums in 64-bit fixed point, read back once.

use lumbre_gpu::{Buffer, Compute, Error, Fit, Gpu, Placed, Progress, Recorder, Report, Result};
use lumbre_kdtree::{Traversal, TriangleTest};

use super::batch::{TILES_PER_DISPATCH, batches};
use super::image::check_gpu_image;
use super::scene::GpuScene;
use crate::camera::GpuCamera;
use crate::image::Image;
use crate::scene::Prepared;
use crate::sums::SampleSums;
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
    streams: u32,
    samples: u32,
    scale_log2: i32,
    fresh: u32,
}
const _: () = assert!(
    size_of::<Params>() == lumbre_shaders::raytrace::WHITTED_KD_PARAMS_SIZE
        && size_of::<Params>() == lumbre_shaders::raytrace::WHITTED_BVH_PARAMS_SIZE
);

/// Invocations a dispatch should have at least, where its samples allow, as the path tracer
/// has: small images otherwise leave most of a large GPU idle.
const FILL: u64 = 1 << 20;

/// GPU bytes per pixel of the render's largest buffer: three 64-bit sums.
const SUM_BYTES: u64 = 24;

/// A Whitted render on the GPU: its per-pixel sums, their mean and its counters.
#[derive(Clone, Debug)]
pub struct GpuImage {
    /// Linear RGB (and 1) per pixel, row-major: the mean of the render's samples, computed
    /// in f32 on the GPU from `sums` (the download computes it in f64, rounding once; the two
    /// differ by a few ulp at most, and not at all for one sample per pixel).
    pub pixels: Buffer<[f32; 4]>,
    /// The pixels' fixed-point sums of their samples, in six planes ([`SampleSums::to_planes`]).
    pub sums: Buffer<u32>,
    /// Rays cast (low, high word), invocations the driver cut short (an error), padding.
    pub counters: Buffer<u32>,
    /// The sums' unit exponent ([`RenderOptions::scale_log2`](crate::RenderOptions::scale_log2)).
    pub scale_log2: i32,
    /// Index of the render's first sample.
    pub first_sample: u32,
    /// Samples per pixel the render holds.
    pub samples: u32,
    /// Width.
    pub width: u32,
    /// Height.
    pub height: u32,
}

/// An error unless a `width` x `height` image's sums fit one storage binding of `gpu`.
fn check_sums(gpu: &Gpu, width: u32, height: u32) -> Result<()> {
    let pixels = u64::from(width) * u64::from(height);
    if gpu.check_size("sums", pixels * SUM_BYTES, Fit::Binding).is_err() {
        let l = gpu.limits();
        let max = l.max_storage_buffer_binding_size.min(l.max_buffer_size) / SUM_BYTES;
        return Err(Error::Input(format!(
            "a {width}x{height} image has {pixels} pixels; this GPU holds the Whitted sums of at most {max} \
             ({SUM_BYTES} bytes each in its largest storage buffer): render a smaller image or on the CPU"
        )));
    }
    Ok(())
}

impl WhittedRender {
    /// Records the render of an uploaded scene: the unit of the sums from the scene, the
    /// batches of samples, and the mean.
    pub fn record_render(&self, rec: &mut Recorder, scene: &GpuScene) -> Result<GpuImage> {
        let gpu = rec.gpu().clone();
        let o = &self.options;
        o.check().map_err(Error::Input)?;
        check_gpu_image(&gpu, o.width, o.height)?;
        check_sums(&gpu, o.width, o.height)?;
        let n = o.width as usize * o.height as usize;
        let pixels = gpu.zeroed::<[f32; 4]>(n)?;
        let sums = gpu.zeroed::<u32>(6 * n)?;
        let counters = gpu.zeroed::<u32>(4)?;
        // max_depth 1 (camera and shadow rays) has its own entry point without the ray stack.
        let entry = if o.max_depth <= 1 { "render_direct" } else { "render" };
        let shader = scene.structure.pick(lumbre_shaders::raytrace::WHITTED_KD, lumbre_shaders::raytrace::WHITTED_BVH);
        let kernel = gpu.kernel(&shader, entry)?;
        let mean = gpu.kernel(&shader, "mean")?;
        let tiles = o.width.div_ceil(8) * o.height.div_ceil(8);
        let flags = (o.query.traversal == Traversal::Restart) as u32
            | (((o.query.test == TriangleTest::Watertight) as u32) << 1);
        let b = scene.bounds();
        let (first, count) = o.samples();
        // The unit from the scene's brightest radiance, kept from its upload, and the options'.
        let scale_log2 = SampleSums::scale_log2_below(scene.brightest.max(o.brightest_option()));
        for batch in batches(first, count, tiles, TILES_PER_DISPATCH) {
            // Small images: several invocations a pixel, each rendering some of the batch's
            // samples, so that a dispatch has about FILL invocations.
            let streams = (FILL.div_ceil(batch.tiles as u64 * 64) as u32).clamp(1, batch.count);
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
                streams,
                samples: count,
                scale_log2,
                fresh: (batch.first == first) as u32,
            }])?;
            let res: Vec<_> = [params.binding()]
                .into_iter()
                .chain(scene.bindings())
                .chain([scene.lights.binding(), sums.binding(), counters.binding(), pixels.binding()])
                .collect();
            rec.dispatch("whitted", &kernel, &res, batch.tiles as u64 * streams as u64)?;
            if batch.last && batch.tile_base + batch.tiles == tiles {
                rec.dispatch("whitted mean", &mean, &res, n.div_ceil(64) as u64)?;
            }
        }
        Ok(GpuImage {
            pixels,
            sums,
            counters,
            scale_log2,
            first_sample: first,
            samples: count,
            width: o.width,
            height: o.height,
        })
    }

    /// Reads the render's fixed-point sums back: the exact per-pixel result, which adds to
    /// the sums of other samples of the same render ([`SampleSums::merge`]). An error if the
    /// driver cut an invocation short.
    pub fn download_sums(&self, gpu: &Gpu, out: &GpuImage) -> Result<SampleSums> {
        let counters = gpu.download(&out.counters)?;
        if counters[2] > 0 {
            return Err(Error::Validation(format!(
                "{} invocations of the Whitted render stopped short: the driver limits the loop iterations of an \
                 invocation (lavapipe: 65535); fewer lights, a smaller max_depth or the CPU would fit",
                counters[2]
            )));
        }
        let mut sums = SampleSums::new(out.width, out.height, out.first_sample, out.scale_log2);
        sums.set_planes(&gpu.download(&out.sums)?);
        sums.samples = out.samples;
        Ok(sums)
    }

    /// The render's fixed-point sums on an input placed on either backend, with the report of
    /// [`run_placed`](Compute::run_placed): the exact result, which the sums of other batches
    /// of the same render (other devices, other shards) add to.
    ///
    /// ```
    /// use lumbre_gpu::{Backend, Compute};
    /// use lumbre_raytrace::{Camera, Prepared, RenderOptions, Scene, WhittedRender};
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/scenes/CornellBox-Original.obj");
    /// let (scene, _) = Scene::load_obj(path.as_ref())?;
    /// let p = Prepared::new(scene, &Default::default());
    /// let options = RenderOptions { width: 8, height: 8, spp: 4, ..Default::default() };
    /// let mut render = WhittedRender { camera: Camera::frame(p.scene.bounds, 1.0), options };
    /// let placed = Backend::Cpu.place(&render, &p)?;
    /// // Samples [0, 1) and [1, 4) of the four strata add up to the bits of all four.
    /// render.options.batch = Some((0, 1));
    /// let (mut sums, _) = render.sums_placed(&placed, &())?;
    /// render.options.batch = Some((1, 3));
    /// sums.merge(&render.sums_placed(&placed, &())?.0)?;
    /// render.options.batch = None;
    /// assert_eq!(sums, render.sums_placed(&placed, &())?.0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn sums_placed(
        &self,
        placed: &Placed<'_, WhittedRender>,
        progress: &dyn Progress,
    ) -> Result<(SampleSums, Report)> {
        match placed {
            Placed::Cpu(p) => self.run_sums_cpu(p, progress),
            Placed::Gpu(gpu, input) => super::gpu_sums(self, gpu, input, |gpu, out| self.download_sums(gpu, out)),
        }
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
        let c = gpu.download(&out.counters)?;
        report.stat("rays", ((c[1] as u64) << 32 | c[0] as u64) as f64);
        Ok(report)
    }

    /// Uploads the scene; an error for options or a scene size the render refuses.
    fn upload(&self, gpu: &Gpu, p: &Prepared) -> Result<GpuScene> {
        self.options.check().map_err(Error::Input)?;
        p.scene.check_size().map_err(Error::Input)?;
        check_gpu_image(gpu, self.options.width, self.options.height)?;
        check_sums(gpu, self.options.width, self.options.height)?;
        GpuScene::upload(gpu, p)
    }

    fn record(&self, rec: &mut Recorder, scene: &GpuScene) -> Result<GpuImage> {
        self.record_render(rec, scene)
    }

    /// The mean of [`download_sums`](WhittedRender::download_sums), in f64 as on the CPU.
    fn download(&self, gpu: &Gpu, out: &GpuImage) -> Result<Image> {
        self.download_sums(gpu, out)?.mean().map_err(Error::Input)
    }
}
