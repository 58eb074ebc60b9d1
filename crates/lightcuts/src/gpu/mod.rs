//! The GPU path: the kernels of `shaders/wgsl/lightcuts/`, stage by stage in the order of
//! the CPU stages (Morton tree, G-buffer, instant radiosity, cuts), each behind the
//! [`Compute`](lumbre_gpu::Compute) trait with its CPU twin.

mod cuts;
mod gbuffer;
mod instant;
mod tree;
mod vpls;

pub use cuts::{GpuCuts, HEAP_SIZES};
pub use gbuffer::{GBufferPass, GpuGBuffer};
pub use instant::GpuLit;
pub use tree::GpuLightTree;
pub use vpls::{GpuVplList, GpuVplScene, VplPass};

use lumbre_gpu::{Buffer, Gpu, Result};
use lumbre_kdtree::{GpuKdTree, QueryOptions, Traversal, TriangleTest};
use lumbre_raytrace::{GpuMaterial, Prepared};

use crate::ism::GpuVpl;
use crate::{LightNode, LightTree};

/// 8x8-pixel tiles per dispatch of the per-pixel kernels: a quarter of a million pixels,
/// so that no dispatch runs long enough for a driver to reset the GPU.
pub(crate) const TILES_PER_DISPATCH: u32 = 1 << 12;

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

/// A light tree on the GPU: its nodes and its lights.
#[derive(Clone, Debug)]
pub struct GpuLights {
    /// The nodes ([`LightNode`] layout).
    pub nodes: Buffer<LightNode>,
    /// The lights ([`GpuVpl`](crate::ism::GpuVpl) layout).
    pub vpls: Buffer<GpuVpl>,
    /// Number of lights.
    pub count: u32,
}

impl GpuLights {
    /// Uploads a tree.
    pub fn upload(gpu: &Gpu, tree: &LightTree) -> Result<GpuLights> {
        let vpls: Vec<GpuVpl> = tree.vpls.iter().map(|v| v.to_gpu()).collect();
        Ok(GpuLights { nodes: gpu.upload(&tree.nodes)?, vpls: gpu.upload(&vpls)?, count: tree.vpls.len() as u32 })
    }
}

/// The imperfect shadow maps of `shading`'s lights when `visibility` asks for them,
/// recorded on `rec`.
pub(crate) fn record_ism(
    rec: &mut lumbre_gpu::Recorder,
    visibility: &crate::Visibility,
    shading: &crate::GpuShading,
) -> Result<Option<crate::ism::GpuIsmAtlas>> {
    let crate::Visibility::Ism(options) = visibility else { return Ok(None) };
    let Some(pool) = &shading.ism_pool else {
        return Err(lumbre_gpu::Error::Input("ISM visibility on an input uploaded without its ISM pool".into()));
    };
    let scene = crate::ism::GpuIsmScene { pool: pool.clone(), vpls: shading.lights.vpls.clone() };
    Ok(Some(lumbre_gpu::Compute::record(&crate::ism::Ism { options: *options }, rec, &scene)?))
}

/// A one-map atlas to fill the ISM bindings of the kernels when visibility is not by ISM.
pub(crate) fn no_ism(gpu: &Gpu) -> Result<crate::ism::GpuIsmAtlas> {
    crate::ism::GpuIsmAtlas::upload(gpu, &crate::ism::IsmAtlas::empty(32, 1))
}

/// Bits 0 and 1 of the kernels' `flags`: restart traversal, watertight test.
pub(crate) fn query_flags(q: &QueryOptions) -> u32 {
    (q.traversal == Traversal::Restart) as u32 | (((q.test == TriangleTest::Watertight) as u32) << 1)
}

/// `(first tile, tiles)` of each dispatch over a `width x height` image in 8x8 tiles.
pub(crate) fn tile_dispatches(width: u32, height: u32) -> Vec<(u32, u32)> {
    let tiles = width.div_ceil(8) * height.div_ceil(8);
    (0..tiles.div_ceil(TILES_PER_DISPATCH))
        .map(|k| (k * TILES_PER_DISPATCH, TILES_PER_DISPATCH.min(tiles - k * TILES_PER_DISPATCH)))
        .collect()
}
