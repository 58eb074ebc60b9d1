//! The path tracer on the GPU: `raytrace/path.wgsl`, one thread per pixel looping over its
//! samples and bounces, the image rendered in tiles of pixels as the Whitted kernel does.

use lumbre_gpu::{Buffer, Compute, Gpu, Placed, Progress, Recorder, Report, Result, wgpu};
use lumbre_kdtree::{Traversal, TriangleTest};

use super::batch::{TILES_PER_DISPATCH, batches};
use super::emitters::GpuEmitters;
use super::scene::GpuScene;
use crate::camera::GpuCamera;
use crate::emitters::Emitters;
use crate::image::Image;
use crate::path::{PathCounts, PathRender, PathSchedule, Tracer, face_normals};
use crate::scene::Prepared;
use crate::sums::SampleSums;

/// The parameters of raytrace/path_common, shared by the megakernel and the wavefront.
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
pub(super) struct Params {
    cam: GpuCamera,
    bmin: [f32; 3],
    width: u32,
    bmax: [f32; 3],
    height: u32,
    background: [f32; 3],
    spp: u32,
    first_sample: u32,
    max_bounces: u32,
    rr_depth: u32,
    n_lights: u32,
    flags: u32,
    eps: f32,
    pixel_base: u32,
    n_emitters: u32,
    batch_first: u32,
    batch_count: u32,
    scale_log2: i32,
    streams: u32,
}
const _: () = assert!(
    size_of::<Params>() == lumbre_shaders::raytrace::PATH_KD_PARAMS_SIZE
        && size_of::<Params>() == lumbre_shaders::raytrace::PATH_BVH_PARAMS_SIZE
        && size_of::<Params>() == lumbre_shaders::raytrace::WAVEFRONT_KD_PARAMS_SIZE
        && size_of::<Params>() == lumbre_shaders::raytrace::WAVEFRONT_BVH_PARAMS_SIZE
);

/// Invocations a dispatch of the path tracer should have at least, where its samples allow:
/// small images otherwise leave most of a large GPU idle (256x256 pixels are 65,536
/// invocations; an H100 holds about 270,000 at once).
const FILL: u64 = 1 << 20;

/// A prepared scene on the GPU for the path tracer: the scene and its emitters.
#[derive(Clone, Debug)]
pub struct GpuPathScene {
    /// Triangles, kd-tree, materials, lights.
    pub scene: GpuScene,
    /// The emitter distribution.
    pub emitters: GpuEmitters,
    /// Per triangle, its unit geometric normal computed in f64 (and 0).
    pub face_normals: Buffer<[f32; 4]>,
    /// The scene's brightest emission ([`SampleSums::brightest`]): the unit of the sums.
    pub brightest: f32,
}

impl GpuPathScene {
    /// Uploads a prepared scene and its emitters (an error for emitters or point lights the
    /// CPU path refuses too).
    pub fn upload(gpu: &Gpu, p: &Prepared) -> Result<GpuPathScene> {
        let normals: Vec<[f32; 4]> = face_normals(&p.scene).iter().map(|n| [n.x, n.y, n.z, 0.0]).collect();
        let normals = if normals.is_empty() { vec![[0.0; 4]] } else { normals };
        Ok(GpuPathScene {
            scene: GpuScene::upload(gpu, p)?,
            emitters: GpuEmitters::upload(gpu, &Emitters::new(&p.scene)?)?,
            face_normals: gpu.upload(&normals)?,
            brightest: SampleSums::brightest(&p.scene),
        })
    }
}

/// A path-traced image on the GPU and its ray counters.
#[derive(Clone, Debug)]
pub struct GpuPathImage {
    /// Linear RGB (and 1) per pixel, row-major: the mean of the render's samples, computed
    /// in f32 on the GPU (the download computes it from `sums` in f64; they differ by a few
    /// ulp at most).
    pub pixels: Buffer<[f32; 4]>,
    /// The pixels' fixed-point sums of their samples, in six planes ([`SampleSums::to_planes`]).
    pub sums: Buffer<u32>,
    /// The unit of `sums` ([`SampleSums::scale_log2`]).
    pub scale_log2: i32,
    /// Index of the render's first sample.
    pub first_sample: u32,
    /// Samples per pixel.
    pub spp: u32,
    /// Extension rays (low, high word), shadow rays (low, high word), pixel batches that
    /// stopped short (an error), pixels whose sums saturated.
    pub counters: Buffer<u32>,
    /// Width.
    pub width: u32,
    /// Height.
    pub height: u32,
}

/// What every dispatch of a render shares: its output, the scene's bounds and the flags.
pub(super) struct RenderSetup {
    pub out: GpuPathImage,
    pub shader: lumbre_shaders::Shader,
    pub tiles: u32,
}

impl PathRender {
    /// Records the render of an uploaded scene, on the schedule of its options.
    pub fn record_render(&self, rec: &mut Recorder, s: &GpuPathScene) -> Result<GpuPathImage> {
        let o = &self.options;
        o.check()?;
        let setup = self.setup(rec.gpu(), s)?;
        match o.schedule {
            PathSchedule::Megakernel => self.record_megakernel(rec, s, &setup)?,
            PathSchedule::Wavefront { pool, reorder } => self.record_wavefront(rec, s, &setup, pool, reorder)?,
        }
        // The mean of every pixel, once the sums are complete.
        let mean = rec.gpu().kernel(&setup.shader, "mean")?;
        let params = rec.gpu().upload(&[self.params(s, &setup, o.first_sample, o.spp, 0, 1)])?;
        let res = self.bindings(s, &setup.out, &params);
        let n = o.width as u64 * o.height as u64;
        rec.dispatch("path mean", &mean, &res, n.div_ceil(64))?;
        Ok(setup.out)
    }

    /// The output buffers and the megakernel's shader of the scene's structure.
    fn setup(&self, gpu: &Gpu, s: &GpuPathScene) -> Result<RenderSetup> {
        let o = &self.options;
        let n = o.width as usize * o.height as usize;
        let scale_log2 = SampleSums::scale_log2_below(s.brightest.max(o.background.max_element()));
        let out = GpuPathImage {
            pixels: gpu.zeroed::<[f32; 4]>(n)?,
            sums: gpu.zeroed::<u32>(6 * n)?,
            scale_log2,
            first_sample: o.first_sample,
            spp: o.spp,
            counters: gpu.zeroed::<u32>(6)?,
            width: o.width,
            height: o.height,
        };
        let shader = s.scene.structure.pick(lumbre_shaders::raytrace::PATH_KD, lumbre_shaders::raytrace::PATH_BVH);
        Ok(RenderSetup { out, shader, tiles: o.width.div_ceil(8) * o.height.div_ceil(8) })
    }

    /// The parameters of a dispatch of samples `[first, first + count)` from tile `tile_base`
    /// with `streams` invocations a pixel.
    pub(super) fn params(
        &self,
        s: &GpuPathScene,
        setup: &RenderSetup,
        first: u32,
        count: u32,
        tile_base: u32,
        streams: u32,
    ) -> Params {
        let o = &self.options;
        let b = s.scene.bounds();
        let reorder = matches!(o.schedule, PathSchedule::Wavefront { reorder: true, .. });
        Params {
            cam: self.camera.to_gpu(o.width, o.height),
            bmin: b.min.to_array(),
            width: o.width,
            bmax: b.max.to_array(),
            height: o.height,
            background: o.background.to_array(),
            spp: o.spp,
            first_sample: o.first_sample,
            max_bounces: o.max_bounces,
            rr_depth: o.rr_depth,
            n_lights: s.scene.n_lights,
            flags: (o.query.traversal == Traversal::Restart) as u32
                | (((o.query.test == TriangleTest::Watertight) as u32) << 1)
                | ((reorder as u32) << 2),
            eps: s.scene.eps,
            pixel_base: tile_base,
            n_emitters: s.emitters.count,
            batch_first: first,
            batch_count: count,
            scale_log2: setup.out.scale_log2,
            streams,
        }
    }

    /// Bindings 0 to 13 of the path tracer's kernels (raytrace/path_common), then the image.
    pub(super) fn bindings<'a>(
        &self,
        s: &'a GpuPathScene,
        out: &'a GpuPathImage,
        params: &'a Buffer<Params>,
    ) -> Vec<wgpu::BindingResource<'a>> {
        let [e1, e2, e3] = s.emitters.bindings();
        [params.binding()]
            .into_iter()
            .chain(s.scene.bindings())
            .chain([
                s.scene.lights.binding(),
                e1,
                e2,
                e3,
                out.sums.binding(),
                out.counters.binding(),
                s.face_normals.binding(),
                out.pixels.binding(),
            ])
            .collect()
    }

    /// The megakernel: batches of samples over tiles of pixels, each invocation tracing
    /// whole paths.
    fn record_megakernel(&self, rec: &mut Recorder, s: &GpuPathScene, setup: &RenderSetup) -> Result<()> {
        let o = &self.options;
        let kernel = rec.gpu().kernel(&setup.shader, "render")?;
        for batch in batches(o.first_sample, o.spp, setup.tiles, TILES_PER_DISPATCH) {
            // Small images: several invocations a pixel, each drawing some of the batch's
            // samples, so that a dispatch has about FILL invocations.
            let streams = (FILL.div_ceil(batch.tiles as u64 * 64) as u32).clamp(1, batch.count);
            let params =
                rec.gpu().upload(&[self.params(s, setup, batch.first, batch.count, batch.tile_base, streams)])?;
            let res = self.bindings(s, &setup.out, &params);
            rec.dispatch("path", &kernel, &res, batch.tiles as u64 * streams as u64)?;
        }
        Ok(())
    }

    /// Reads the render's fixed-point sums back: the exact per-pixel result, which adds to
    /// the sums of other samples of the same render ([`SampleSums::merge`]).
    pub fn download_sums(&self, gpu: &Gpu, out: &GpuPathImage) -> Result<SampleSums> {
        let short = gpu.download(&out.counters)?[4];
        if short > 0 {
            return Err(lumbre_gpu::Error::Validation(format!(
                "{short} pixel batches of the path render stopped before their last sample: the driver \
                 limits the loop iterations of an invocation (lavapipe: 65535); fewer bounces would fit"
            )));
        }
        let mut sums = SampleSums::new(out.width, out.height, out.first_sample, out.scale_log2);
        sums.set_planes(&gpu.download(&out.sums)?);
        sums.samples = out.spp;
        Ok(sums)
    }
}

impl PathRender {
    /// The render's fixed-point sums on an input placed on either backend, with the report of
    /// [`run_placed`](Compute::run_placed): the exact result, which the sums of other
    /// samples of the same render (other devices, other shards) add to.
    ///
    /// ```no_run
    /// use lumbre_gpu::{Backend, Gpu};
    /// use lumbre_raytrace::{Camera, PathOptions, PathRender, Prepared, Scene};
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/scenes/CornellBox-Original.obj");
    /// let (scene, _) = Scene::load_obj(path.as_ref())?;
    /// let p = Prepared::new(scene, &Default::default());
    /// let mut render = PathRender { camera: Camera::frame(p.scene.bounds, 1.0), options: PathOptions::default() };
    /// let backend = Backend::Gpu(Gpu::new()?);
    /// let placed = backend.place(&render, &p)?;
    /// let (mut sums, _) = render.sums_placed(&placed, &())?;
    /// render.options.first_sample = render.options.spp;
    /// sums.merge(&render.sums_placed(&placed, &())?.0)?;
    /// let image = sums.mean()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn sums_placed(
        &self,
        placed: &Placed<'_, PathRender>,
        progress: &dyn Progress,
    ) -> Result<(SampleSums, Report)> {
        match placed {
            Placed::Cpu(p) => self.run_sums_cpu(p, progress),
            Placed::Gpu(gpu, input) => super::gpu_sums(self, gpu, input, |gpu, out| self.download_sums(gpu, out)),
        }
    }
}

impl Compute for PathRender {
    type Input = Prepared;
    type Output = Image;
    type GpuInput = GpuPathScene;
    type GpuOutput = GpuPathImage;

    fn name(&self) -> &'static str {
        "path render"
    }

    /// The CPU render with one progress step per row; reports paths, rays (extension and
    /// shadow) and the mean path length.
    fn cpu_reported(&self, p: &Prepared, progress: &dyn Progress) -> Result<(Image, Report)> {
        self.run_cpu(p, progress)
    }

    fn gpu_stats(&self, gpu: &Gpu, out: &GpuPathImage) -> Result<Report> {
        let c = gpu.download(&out.counters)?;
        let wide = |lo: u32, hi: u32| (hi as u64) << 32 | lo as u64;
        Ok(self.stats(PathCounts { extension: wide(c[0], c[1]), shadow: wide(c[2], c[3]) }))
    }

    fn upload(&self, gpu: &Gpu, p: &Prepared) -> Result<GpuPathScene> {
        Tracer::new(p, &self.options)?;
        GpuPathScene::upload(gpu, p)
    }

    fn record(&self, rec: &mut Recorder, scene: &GpuPathScene) -> Result<GpuPathImage> {
        self.record_render(rec, scene)
    }

    /// The mean of [`download_sums`](PathRender::download_sums), in f64 as on the CPU.
    fn download(&self, gpu: &Gpu, out: &GpuPathImage) -> Result<Image> {
        self.download_sums(gpu, out)?.mean().map_err(lumbre_gpu::Error::Input)
    }
}
