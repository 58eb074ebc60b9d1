//! The path tracer on the GPU: `raytrace/path.wgsl`, one thread per pixel looping over its
//! samples and bounces, the image rendered in tiles of pixels as the Whitted kernel does.

use glam::Vec3;
use lumbre_gpu::{Buffer, Compute, Gpu, Progress, Recorder, Report, Result};
use lumbre_kdtree::{Traversal, TriangleTest};

use super::batch::{TILES_PER_DISPATCH, batches};
use super::emitters::GpuEmitters;
use super::scene::GpuScene;
use crate::camera::GpuCamera;
use crate::emitters::Emitters;
use crate::image::Image;
use crate::path::{PathCounts, PathRender, Tracer, face_normals};
use crate::scene::Prepared;

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
    last: u32,
    _pad: u32,
}
const _: () = assert!(size_of::<Params>() == lumbre_shaders::raytrace::PATH_PARAMS_SIZE);

/// A prepared scene on the GPU for the path tracer: the scene and its emitters.
#[derive(Clone, Debug)]
pub struct GpuPathScene {
    /// Triangles, kd-tree, materials, lights.
    pub scene: GpuScene,
    /// The emitter distribution.
    pub emitters: GpuEmitters,
    /// Per triangle, its unit geometric normal computed in f64 (and 0).
    pub face_normals: Buffer<[f32; 4]>,
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
        })
    }
}

/// A path-traced image on the GPU and its ray counters.
#[derive(Clone, Debug)]
pub struct GpuPathImage {
    /// Linear RGB (and 1) per pixel, row-major: the mean of the render's samples.
    pub pixels: Buffer<[f32; 4]>,
    /// Extension rays (low, high word), shadow rays (low, high word), pixel batches that
    /// stopped short (an error), padding.
    pub counters: Buffer<u32>,
    /// Width.
    pub width: u32,
    /// Height.
    pub height: u32,
}

impl PathRender {
    /// Records the render of an uploaded scene.
    pub fn record_render(&self, rec: &mut Recorder, s: &GpuPathScene) -> Result<GpuPathImage> {
        let o = &self.options;
        o.check()?;
        let gpu = rec.gpu().clone();
        let pixels = gpu.zeroed::<[f32; 4]>(o.width as usize * o.height as usize)?;
        let counters = gpu.zeroed::<u32>(6)?;
        let kernel = gpu.kernel(&lumbre_shaders::raytrace::PATH, "render")?;
        let tiles = o.width.div_ceil(8) * o.height.div_ceil(8);
        let flags = (o.query.traversal == Traversal::Restart) as u32
            | (((o.query.test == TriangleTest::Watertight) as u32) << 1);
        let b = s.scene.tree.bounds;
        for batch in batches(o.first_sample, o.spp, tiles, TILES_PER_DISPATCH) {
            let params = gpu.upload(&[Params {
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
                flags,
                eps: s.scene.eps,
                pixel_base: batch.tile_base,
                n_emitters: s.emitters.count,
                batch_first: batch.first,
                batch_count: batch.count,
                last: batch.last as u32,
                _pad: 0,
            }])?;
            let [e1, e2, e3] = s.emitters.bindings();
            let res: Vec<_> = [params.binding()]
                .into_iter()
                .chain(s.scene.bindings())
                .chain([
                    s.scene.lights.binding(),
                    e1,
                    e2,
                    e3,
                    pixels.binding(),
                    counters.binding(),
                    s.face_normals.binding(),
                ])
                .collect();
            rec.dispatch("path", &kernel, &res, batch.tiles as u64)?;
        }
        Ok(GpuPathImage { pixels, counters, width: o.width, height: o.height })
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

    fn download(&self, gpu: &Gpu, out: &GpuPathImage) -> Result<Image> {
        let short = gpu.download(&out.counters)?[4];
        if short > 0 {
            return Err(lumbre_gpu::Error::Validation(format!(
                "{short} pixel batches of the path render stopped before their last sample: the driver \
                 limits the loop iterations of an invocation (lavapipe: 65535); fewer bounces would fit"
            )));
        }
        let px = gpu.download(&out.pixels)?;
        let pixels = px.iter().map(|p| Vec3::new(p[0], p[1], p[2])).collect();
        Image::from_pixels(out.width, out.height, pixels).map_err(lumbre_gpu::Error::Input)
    }
}
