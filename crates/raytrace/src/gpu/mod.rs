//! The GPU paths: the scene as the renderers read it, then one module per integrator
//! (`whitted`, `path`), the voxel renderer (`volume`) and the emitter distribution
//! (`emitters`).

use lumbre_gpu::{Agree, Buffer, Gpu, Result, Tolerance};
use lumbre_kdtree::GpuKdTree;

use crate::{Image, Light, Prepared, diff_stats};

mod emitters;
mod path;
mod volume;
mod whitted;

pub use emitters::{GpuEmitter, GpuEmitters};
pub use path::{GpuPathImage, GpuPathScene, SAMPLES_PER_DISPATCH};
pub use volume::{GpuVolumeImage, VolumeRender};
pub(crate) use whitted::check_gpu_image;
pub use whitted::{GpuImage, WhittedRender};

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct GpuLight {
    kind: u32,
    tri: u32,
    area: f32,
    _pad: u32,
    pos: [f32; 3],
    _p1: f32,
    e: [f32; 3],
    _p2: f32,
}

/// A prepared scene on the GPU.
#[derive(Clone, Debug)]
pub struct GpuScene {
    tree: GpuKdTree,
    tri_info: Buffer<[u32; 4]>,
    normals: Buffer<[f32; 4]>,
    materials: Buffer<crate::GpuMaterial>,
    lights: Buffer<GpuLight>,
    n_lights: u32,
    eps: f32,
}

impl GpuScene {
    /// Uploads a prepared scene.
    pub fn upload(gpu: &Gpu, p: &Prepared) -> Result<GpuScene> {
        let tri_info: Vec<[u32; 4]> = p.scene.triangles.iter().map(|t| [t.n[0], t.n[1], t.n[2], t.material]).collect();
        let normals: Vec<[f32; 4]> = p.scene.normals.iter().map(|n| [n.x, n.y, n.z, 0.0]).collect();
        let lights: Vec<GpuLight> = p
            .scene
            .lights
            .iter()
            .map(|l| match *l {
                Light::Point { position, intensity } => GpuLight {
                    kind: 0,
                    tri: 0,
                    area: 0.0,
                    _pad: 0,
                    pos: position.to_array(),
                    _p1: 0.0,
                    e: intensity.to_array(),
                    _p2: 0.0,
                },
                Light::Area { triangle, emission, area } => GpuLight {
                    kind: 1,
                    tri: triangle,
                    area,
                    _pad: 0,
                    pos: [0.0; 3],
                    _p1: 0.0,
                    e: emission.to_array(),
                    _p2: 0.0,
                },
            })
            .collect();
        let at_least_one = |v: Vec<[f32; 4]>| if v.is_empty() { vec![[0.0; 4]] } else { v };
        let lights_buf = if lights.is_empty() { gpu.zeroed(1)? } else { gpu.upload(&lights)? };
        Ok(GpuScene {
            tree: GpuKdTree::upload(gpu, &p.tree, &p.tris)?,
            tri_info: gpu.upload(&tri_info)?,
            normals: gpu.upload(&at_least_one(normals))?,
            materials: gpu.upload(&p.scene.gpu_materials())?,
            lights: lights_buf,
            n_lights: lights.len() as u32,
            eps: p.eps,
        })
    }
}

impl Agree for Image {
    /// Images agree when the RMSE of their 8-bit sRGB values (in 0..1) is at most `tol.abs`.
    fn disagreement(&self, gpu: &Self, tol: Tolerance) -> Option<String> {
        match diff_stats(self, gpu) {
            Err(e) => Some(e.to_string()),
            Ok(d) if d.rmse as f64 > tol.abs => {
                Some(format!("image RMSE {} above {} (max pixel error {})", d.rmse, tol.abs, d.max_abs))
            }
            Ok(_) => None,
        }
    }
}

/// One dispatch of a sampled render: samples `first .. first + count` (after `done` of the
/// render's samples) for tiles `tile_base .. tile_base + tiles`.
pub(crate) struct Batch {
    pub first: u32,
    pub count: u32,
    pub done: u32,
    pub last: bool,
    pub tile_base: u32,
    pub tiles: u32,
}

/// The dispatches of `count` samples from `first` over `tiles` tiles: at most
/// [`SAMPLES_PER_DISPATCH`] samples (lavapipe ends a loop nest after 65535 iterations) and
/// `tiles_per_dispatch` tiles each, samples outermost so that each pixel's sum runs in order.
pub(crate) fn batches(first: u32, count: u32, tiles: u32, tiles_per_dispatch: u32) -> impl Iterator<Item = Batch> {
    (0..count).step_by(SAMPLES_PER_DISPATCH as usize).flat_map(move |done| {
        let n = SAMPLES_PER_DISPATCH.min(count - done);
        (0..tiles).step_by(tiles_per_dispatch as usize).map(move |tile_base| Batch {
            first: first + done,
            count: n,
            done,
            last: done + n == count,
            tile_base,
            tiles: tiles_per_dispatch.min(tiles - tile_base),
        })
    })
}
