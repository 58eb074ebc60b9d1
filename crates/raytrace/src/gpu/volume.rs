//! The voxel renderer on the GPU: `raytrace/volume.wgsl`, one thread per pixel, reading an
//! octree already on the GPU, the image rendered in tiles of pixels. The CPU path,
//! [`render_volume_cpu`], is the reference it follows.

use glam::Vec3;
use lumbre_gpu::{Buffer, Compute, Error, Gpu, Progress, Recorder, Report, Result};
use lumbre_octree::{GpuOctree, Octree, PackedOctree};

use super::batch::TILES_PER_DISPATCH;
use super::image::check_gpu_image;
use crate::camera::GpuCamera;
use crate::image::Image;
use crate::volume::{VOXEL_SPECULAR, VolumeRender, depth_range, voxel_eps};

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    cam: GpuCamera,
    root_min: [f32; 3],
    root_size: f32,
    background: [f32; 3],
    width: u32,
    height: u32,
    mode: u32,
    level: u32,
    max_depth: u32,
    n_lights: u32,
    ambient: f32,
    eps: f32,
    near: f32,
    far: f32,
    ks: f32,
    ns: f32,
    pixel_base: u32,
    tree_depth: u32,
    empty: u32,
    _pad: [u32; 2],
}
const _: () = assert!(
    size_of::<Params>() == lumbre_shaders::raytrace::VOLUME_SHALLOW_PARAMS_SIZE
        && size_of::<Params>() == lumbre_shaders::raytrace::VOLUME_DEEP_PARAMS_SIZE
);

/// Pixels of a volume render on the GPU.
#[derive(Clone, Debug)]
pub struct GpuVolumeImage {
    /// Linear RGB (and 1) per pixel.
    pub pixels: Buffer<[f32; 4]>,
    /// Width.
    pub width: u32,
    /// Height.
    pub height: u32,
}

/// Deepest tree the `shallow` variant of `raytrace/volume.wgsl` takes (its stack holds
/// 88 entries); deeper trees take `deep`.
const SHALLOW_DEPTH: u32 = 10;

impl VolumeRender {
    fn shell(&self, root: lumbre_octree::Root) -> Octree {
        // Enough of a tree for the helpers that only look at the root and depth.
        Octree { root, depth: self.tree_depth, nodes: Vec::new(), levels: Vec::new() }
    }

    /// Records the render of `tree` (on the GPU) into a new pixel buffer.
    pub fn record_render(&self, rec: &mut Recorder, tree: &GpuOctree) -> Result<GpuVolumeImage> {
        let gpu = rec.gpu().clone();
        let o = &self.options;
        o.check().map_err(Error::Input)?;
        check_gpu_image(&gpu, o.width, o.height)?;
        let shell = self.shell(tree.root);
        let lights = o.lights_for(&shell, &self.camera);
        let flat: Vec<[f32; 4]> =
            lights.iter().flat_map(|(p, i)| [p.extend(0.0).to_array(), i.extend(0.0).to_array()]).collect();
        let lights_buf = if flat.is_empty() { gpu.zeroed(2)? } else { gpu.upload(&flat)? };
        let (near, far) = depth_range(&shell, self.camera.eye);
        let pixels = gpu.zeroed::<[f32; 4]>(o.width as usize * o.height as usize)?;
        let shader = if tree.depth <= SHALLOW_DEPTH {
            lumbre_shaders::raytrace::VOLUME_SHALLOW
        } else {
            lumbre_shaders::raytrace::VOLUME_DEEP
        };
        let kernel = gpu.kernel(&shader, "render")?;
        let tiles = o.width.div_ceil(8) * o.height.div_ceil(8);
        let mut base = 0;
        while base < tiles {
            let count = TILES_PER_DISPATCH.min(tiles - base);
            let params = gpu.uniform(&Params {
                cam: self.camera.to_gpu(o.width, o.height),
                root_min: tree.root.min,
                root_size: tree.root.size,
                background: o.background.to_array(),
                width: o.width,
                height: o.height,
                mode: o.mode.code(),
                level: o.level.min(tree.depth),
                max_depth: o.max_depth,
                n_lights: lights.len() as u32,
                ambient: o.ambient,
                eps: voxel_eps(&shell, o.level),
                near,
                far,
                ks: VOXEL_SPECULAR.0,
                ns: VOXEL_SPECULAR.1,
                pixel_base: base,
                tree_depth: tree.depth,
                empty: tree.empty as u32,
                _pad: [0; 2],
            })?;
            let res = [
                params.as_entire_binding(),
                tree.nodes.binding(),
                lights_buf.binding(),
                pixels.binding(),
                tree.payloads.binding(),
            ];
            rec.dispatch("volume", &kernel, &res, count as u64)?;
            base += count;
        }
        Ok(GpuVolumeImage { pixels, width: o.width, height: o.height })
    }
}

impl Compute for VolumeRender {
    type Input = PackedOctree;
    type Output = Image;
    type GpuInput = GpuOctree;
    type GpuOutput = GpuVolumeImage;

    fn name(&self) -> &'static str {
        "volume render"
    }

    fn cpu_reported(&self, tree: &PackedOctree, _: &dyn Progress) -> Result<(Image, Report)> {
        Report::timed(self.name(), || self.cpu(&tree.unpack()))
    }

    fn upload(&self, gpu: &Gpu, tree: &PackedOctree) -> Result<GpuOctree> {
        self.options.check().map_err(Error::Input)?;
        check_gpu_image(gpu, self.options.width, self.options.height)?;
        tree.upload(gpu)
    }

    fn record(&self, rec: &mut Recorder, tree: &GpuOctree) -> Result<GpuVolumeImage> {
        self.record_render(rec, tree)
    }

    fn download(&self, gpu: &Gpu, out: &GpuVolumeImage) -> Result<Image> {
        let px = gpu.download(&out.pixels)?;
        Image::from_pixels(out.width, out.height, px.iter().map(|p| Vec3::new(p[0], p[1], p[2])).collect())
            .map_err(Error::Input)
    }
}
