//! The scene on the GPU as the lightcuts kernels read it (the kd-tree, normals and
//! materials of a [`Prepared`] scene), and how they walk it.

use lumbre_gpu::{Buffer, Gpu, Result};
use lumbre_kdtree::{GpuKdTree, QueryOptions, Traversal, TriangleTest};
use lumbre_raytrace::Prepared;
use lumbre_raytrace::twin::GpuMaterial;

/// A prepared scene on the GPU, as the lightcuts kernels read it: the kd-tree (bindings 1
/// to 3), per-triangle normal indices and material, normals and materials.
#[derive(Clone, Debug)]
pub struct GpuLightScene {
    /// The kd-tree and its triangles.
    pub tree: GpuKdTree,
    /// Per triangle: its corners' normal indices (`u32::MAX`: none) and its material.
    pub tri_info: Buffer<[u32; 4]>,
    /// Normals (at least one entry).
    pub normals: Buffer<[f32; 4]>,
    /// Materials.
    pub materials: Buffer<GpuMaterial>,
    /// Offset of receivers and shadow rays off their surfaces.
    pub eps: f32,
}

impl GpuLightScene {
    /// Uploads a prepared scene.
    ///
    /// ```no_run
    /// use glam::Vec3;
    /// use lumbre_lightcuts::GpuLightScene;
    /// let scene = lumbre_raytrace::Scene::from_triangles(&[[Vec3::ZERO, Vec3::X, Vec3::Y]]);
    /// let prepared = lumbre_raytrace::Prepared::new(scene, &Default::default());
    /// let on_gpu = GpuLightScene::upload(&lumbre_gpu::Gpu::new()?, &prepared)?;
    /// # let _ = on_gpu;
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn upload(gpu: &Gpu, p: &Prepared) -> Result<GpuLightScene> {
        let tri_info: Vec<[u32; 4]> = p.scene.triangles.iter().map(|t| [t.n[0], t.n[1], t.n[2], t.material]).collect();
        let mut normals: Vec<[f32; 4]> = p.scene.normals.iter().map(|n| [n.x, n.y, n.z, 0.0]).collect();
        if normals.is_empty() {
            normals.push([0.0; 4]);
        }
        Ok(GpuLightScene {
            tree: GpuKdTree::upload(gpu, &p.tree, &p.tris)?,
            tri_info: gpu.upload(&tri_info)?,
            normals: gpu.upload(&normals)?,
            materials: gpu.upload(&p.scene.gpu_materials())?,
            eps: p.eps,
        })
    }
}

/// Bits 0 and 1 of the kernels' `flags`: restart traversal, watertight test.
pub(crate) fn query_flags(q: &QueryOptions) -> u32 {
    (q.traversal == Traversal::Restart) as u32 | (((q.test == TriangleTest::Watertight) as u32) << 1)
}
