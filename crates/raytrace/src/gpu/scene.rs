//! The scene on the GPU, in the layout `raytrace/scene.wgsl` reads: the scene block of
//! `raytrace/scene_bindings.wgsl` (the kd-tree, per-triangle normals and materials, the
//! normals and the materials), which every triangle kernel binds, and the lights.

use lumbre_gpu::{Buffer, Gpu, Result, wgpu};
use lumbre_kdtree::{Aabb, GpuStructure};

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

/// A prepared scene on the GPU: the scene block every triangle kernel binds
/// ([`GpuScene::bindings`]), the lights of the Whitted and path tracers, and the offset of
/// rays off surfaces.
///
/// ```no_run
/// use glam::Vec3;
/// use lumbre_raytrace::{GpuScene, Prepared, Scene};
/// let scene = Scene::from_triangles(&[[Vec3::ZERO, Vec3::X, Vec3::Y]]);
/// let on_gpu = GpuScene::upload(&lumbre_gpu::Gpu::new()?, &Prepared::new(scene, &Default::default()))?;
/// assert!(on_gpu.structure.bounds().max.x >= 1.0);
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct GpuScene {
    /// The BVH or kd-tree and its triangles (bindings 1 to 3 of the scene block); its
    /// [`GpuStructure::pick`] names the kernel variant that walks it.
    pub structure: GpuStructure,
    tri_info: Buffer<[u32; 4]>,
    normals: Buffer<[f32; 4]>,
    materials: Buffer<GpuMaterial>,
    pub(super) lights: Buffer<GpuLight>,
    pub(super) n_lights: u32,
    /// Offset of secondary rays off their surfaces ([`Prepared::eps`]).
    pub eps: f32,
    /// The scene's brightest radiance for the Whitted renderer's sums
    /// ([`RenderOptions::brightest`](crate::RenderOptions::brightest) without the options).
    pub(super) brightest: f32,
}

impl GpuScene {
    /// Uploads a prepared scene (see [`GpuScene`] for an example).
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
            structure: GpuStructure::upload(gpu, &p.structure, &p.tris)?,
            tri_info: gpu.upload(&tri_info)?,
            normals: gpu.upload(&at_least_one(normals))?,
            materials: gpu.upload(&p.scene.gpu_materials())?,
            lights: lights_buf,
            n_lights: lights.len() as u32,
            eps: p.eps,
            brightest: crate::whitted::brightest_in_scene(p),
        })
    }

    /// The scene block in binding order, bindings 1 to 6 of every kernel that imports
    /// `raytrace/scene_bindings.wgsl`: the structure's nodes, primitives and triangles
    /// ([`GpuStructure::bindings`]), then per triangle its normals' indices and its material, the
    /// normals and the materials.
    ///
    /// ```no_run
    /// use glam::Vec3;
    /// use lumbre_raytrace::{GpuScene, Prepared, Scene};
    /// let scene = Scene::from_triangles(&[[Vec3::ZERO, Vec3::X, Vec3::Y]]);
    /// let on_gpu = GpuScene::upload(&lumbre_gpu::Gpu::new()?, &Prepared::new(scene, &Default::default()))?;
    /// let [nodes, prims, tris, tri_info, normals, materials] = on_gpu.bindings();
    /// # let _ = (nodes, prims, tris, tri_info, normals, materials);
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn bindings(&self) -> [wgpu::BindingResource<'_>; 6] {
        let [nodes, prims, tris] = self.structure.bindings();
        [nodes, prims, tris, self.tri_info.binding(), self.normals.binding(), self.materials.binding()]
    }

    /// The box of the scene's triangles, which the kd-tree's traversal clips rays to.
    pub fn bounds(&self) -> Aabb {
        self.structure.bounds()
    }
}
