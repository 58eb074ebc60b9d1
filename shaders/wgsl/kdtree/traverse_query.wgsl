//! variants default, tiny, bvh
//! import shared/dispatch
//! define default: const KD_SHORT_STACK: u32 = 16u;
//! define tiny: const KD_SHORT_STACK: u32 = 2u;
//! import default, tiny: kdtree/traverse
//! import bvh: kdtree/bvh
// Batch ray queries against a kd-tree (variants default and tiny) or a BVH (bvh): the GPU
// twin of KdTree::closest_hits / any_hits and Bvh::closest_hits / any_hits.

struct Params {
    bmin: vec3<f32>,
    n: u32,
    bmax: vec3<f32>,
    // bit 0: restart traversal (kd-tree); bit 1: watertight test; bit 2: any hit
    flags: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
// bindings 1 to 3: the kd-tree (kdtree/traverse) or the BVH (kdtree/bvh)
// per ray: origin, t_min in w; direction, t_max in w
@group(0) @binding(4) var<storage, read> rays: array<vec4<f32>>;
// per ray: t bits, triangle (0xffffffff: none), u bits, v bits
@group(0) @binding(5) var<storage, read_write> hits: array<vec4<u32>>;

const WG: u32 = 64u;

@compute @workgroup_size(64)
fn query(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let i = flat_index(wid, nwg, lid, WG);
    if i >= params.n {
        return;
    }
    let a = rays[2u * i];
    let b = rays[2u * i + 1u];
    let r = ray_prep(a.xyz, b.xyz);
    let f = params.flags;
    let h = tree_query(r, f, (f & 4u) != 0u, params.bmin, params.bmax, a.w, b.w);
    hits[i] = vec4<u32>(bitcast<u32>(h.t), h.tri, bitcast<u32>(h.u), bitcast<u32>(h.v));
}
