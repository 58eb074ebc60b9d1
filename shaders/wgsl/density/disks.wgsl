//! variants kd, bvh
//! import shared/dispatch
//! define const KD_SHORT_STACK: u32 = 16u;
//! import kd: kdtree/traverse
//! import bvh: kdtree/bvh
//! import raytrace/scene_bindings
//! import shared/camera
// Query disks at a camera's first hits on the GPU, twin of lumbre_density's camera_disks
// (disks.rs): `camera_hits` casts one ray per pixel and flags the pixels that see the
// scene; the flags are compacted into the pixels' list (lumbre_compact), and `make_disks`
// writes one disk per listed pixel, in pixel order.

struct Params {
    cam: Camera,
    // the kd-tree's box
    bmin: vec3<f32>,
    // pixels (camera_hits) or disk slots (make_disks) to run
    count: u32,
    bmax: vec3<f32>,
    width: u32,
    // the radius of every disk
    radius: f32,
    _p0: u32,
    _p1: u32,
    _p2: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
// bindings 1 to 6: the scene (raytrace/scene_bindings)
// per pixel: 1 when it sees the scene with a usable normal, else 0
@group(0) @binding(7) var<storage, read_write> hit_flags: array<u32>;
// per pixel, two vec4s: the hit point (w: the material's bits), the disk normal
@group(0) @binding(8) var<storage, read_write> hits: array<vec4<f32>>;
// per disk: its pixel (the compacted flags)
@group(0) @binding(9) var<storage, read> pixels: array<u32>;
// per disk, two vec4s: centre and radius, normal (as lumbre_density::Disk)
@group(0) @binding(10) var<storage, read_write> raw_disks: array<vec4<f32>>;
// per disk: its material
@group(0) @binding(11) var<storage, read_write> disk_material: array<u32>;
// the number of disks (the compaction's count)
@group(0) @binding(12) var<storage, read> disk_count: array<u32>;

const WG: u32 = 64u;

// glam's normalize_or_zero: v times the reciprocal of its length, zero when that is not a
// positive finite number.
fn normalize_or_zero(v: vec3<f32>) -> vec3<f32> {
    let rcp = 1.0 / length(v);
    if rcp > 0.0 && rcp <= 3.40282347e38 {
        return v * rcp;
    }
    return vec3<f32>(0.0);
}

@compute @workgroup_size(64)
fn camera_hits(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let i = flat_index(wid, nwg, lid, WG);
    if i >= params.count {
        return;
    }
    hit_flags[i] = 0u;
    let o = params.cam.eye.xyz;
    let d = camera_dir(params.cam, f32(i % params.width) + 0.5, f32(i / params.width) + 0.5);
    let hit = tree_query(ray_prep(o, d), 2u, false, params.bmin, params.bmax, 0.0, bitcast<f32>(0x7f800000u));
    if hit.tri == KD_NONE {
        return;
    }
    let p0 = kd_vertex(hit.tri, 0u);
    var n = normalize_or_zero(cross(kd_vertex(hit.tri, 1u) - p0, kd_vertex(hit.tri, 2u) - p0));
    let info = tri_info[hit.tri];
    if info.x != KD_NONE {
        let s = normals[info.x].xyz * (1.0 - hit.u - hit.v) + normals[info.y].xyz * hit.u + normals[info.z].xyz * hit.v;
        if length(s) > 0.0 {
            n = s * (1.0 / length(s));
        }
    }
    if dot(n, d) > 0.0 {
        n = -n;
    }
    if all(n == vec3<f32>(0.0)) {
        return;
    }
    hits[2u * i] = vec4<f32>(o + d * hit.t, bitcast<f32>(info.w));
    hits[2u * i + 1u] = vec4<f32>(n, 0.0);
    hit_flags[i] = 1u;
}

@compute @workgroup_size(64)
fn make_disks(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let k = flat_index(wid, nwg, lid, WG);
    if k >= min(params.count, disk_count[0]) {
        return;
    }
    let p = pixels[k];
    let h = hits[2u * p];
    raw_disks[2u * k] = vec4<f32>(h.xyz, params.radius);
    raw_disks[2u * k + 1u] = hits[2u * p + 1u];
    disk_material[k] = bitcast<u32>(h.w);
}
