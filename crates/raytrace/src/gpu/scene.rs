//! The scene on the GPU, in the layout `raytrace/scene.wgsl` reads: the kd-tree, per-triangle
//! normals and materials, the materials and the lights.

use lumbre_gpu::{Buffer, Gpu, Result};
use lumbre_kdtree::GpuKdTree;

use crate::material::GpuMaterial;
use crate::scene::{Light, Prepared};

/// One light as `raytrace/scene.wgsl` reads it: kind (0 point, 1 area), its triangle and
/// area, its position (point lights) and its intensity or emitted radiance.
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
pub(super) struct GpuLight {
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
    pub(super) tree: GpuKdTree,
    pub(super) tri_info: Buffer<[u32; 4]>,
    pub(super) normals: Buffer<[f32; 4]>,
    pub(super) materials: Buffer<GpuMaterial>,
    pub(super) lights: Buffer<GpuLight>,
    pub(super) n_lights: u32,
    pub(super) eps: f32,
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
