//! module
//! import kdtree/ray
//! import shared/material
// The scene block of group 0 in the order lumbre_raytrace::GpuScene::bindings gives it: the
// kd-tree or the BVH at bindings 1 to 3 (binding 1 declared by the includer's kdtree/traverse
// or kdtree/bvh), then, per triangle, its corners' normal indices (0xffffffff: none) and its
// material, the shading normals and the materials (lumbre_raytrace's GpuMaterial).

@group(0) @binding(4) var<storage, read> tri_info: array<vec4<u32>>;
@group(0) @binding(5) var<storage, read> normals: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read> materials: array<Material>;
