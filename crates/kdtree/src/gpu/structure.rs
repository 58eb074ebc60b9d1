//! A [`Structure`] on the GPU: the bindings 1 to 3 that `kdtree/traverse.wgsl` or
//! `kdtree/bvh.wgsl` declare, and the shader variant that walks it.

use glam::Vec3;
use lumbre_gpu::{Gpu, Result, wgpu};

use super::bvh::GpuBvh;
use super::traverse::GpuKdTree;
use crate::aabb::Aabb;
use crate::structure::Structure;

/// A kd-tree or a BVH and its triangles on the GPU.
#[derive(Clone, Debug)]
pub enum GpuStructure {
    /// A kd-tree (kernels' `kd` variants, `kdtree/traverse.wgsl`).
    KdTree(GpuKdTree),
    /// A BVH (kernels' `bvh` variants, `kdtree/bvh.wgsl`).
    Bvh(GpuBvh),
}

impl GpuStructure {
    /// Uploads `s` and the triangles it was built from.
    ///
    /// ```no_run
    /// use lumbre_kdtree::{scenes, GpuStructure, Structure};
    /// let tris = scenes::generated_scene(1000);
    /// let s = Structure::build(&tris, &Default::default());
    /// let on_gpu = GpuStructure::upload(&lumbre_gpu::Gpu::new()?, &s, &tris)?;
    /// assert!(on_gpu.pick("kd", "bvh") == "bvh");
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn upload(gpu: &Gpu, s: &Structure, tris: &[[Vec3; 3]]) -> Result<GpuStructure> {
        Ok(match s {
            Structure::KdTree(t) => GpuStructure::KdTree(GpuKdTree::upload(gpu, t, tris)?),
            Structure::Bvh(b) => GpuStructure::Bvh(GpuBvh::upload(gpu, b, tris)?),
        })
    }

    /// The three bindings, in order (1: nodes, 2: the leaves' triangle indices or the
    /// triangles themselves, 3: triangles).
    pub fn bindings(&self) -> [wgpu::BindingResource<'_>; 3] {
        match self {
            GpuStructure::KdTree(t) => t.bindings(),
            GpuStructure::Bvh(b) => b.bindings(),
        }
    }

    /// The box of its triangles (the kd-tree's traversal clips rays to it).
    pub fn bounds(&self) -> Aabb {
        match self {
            GpuStructure::KdTree(t) => t.bounds,
            GpuStructure::Bvh(b) => b.bounds,
        }
    }

    /// `kd` or `bvh`, whichever walks this structure: the variant of a kernel that has both.
    pub fn pick<T>(&self, kd: T, bvh: T) -> T {
        match self {
            GpuStructure::KdTree(_) => kd,
            GpuStructure::Bvh(_) => bvh,
        }
    }
}
