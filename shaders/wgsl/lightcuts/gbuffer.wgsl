//! variants kd, bvh
//! import shared/dispatch
//! define const KD_SHORT_STACK: u32 = 16u;
//! import kd: kdtree/traverse
//! import bvh: kdtree/bvh
//! import raytrace/scene_bindings
//! import shared/camera
//! import lightcuts/light
//! import lightcuts/pixel
//! import shared/material
// The G-buffer of a band of an image's rows, one thread per pixel in 8x8 tiles of the
// band: the primary ray through the pixel's centre in the whole image and what it hits
// (lumbre_lightcuts::gbuffer's `primary`, step by step).

struct Params {
    // the camera of the whole image
    cam: Camera,
    bmin: vec3<f32>,
    width: u32,
    bmax: vec3<f32>,
    // rows in the band
    height: u32,
    eps: f32,
    // bit 0: restart traversal; bit 1: watertight test
    flags: u32,
    // first tile of this dispatch
    tile_base: u32,
    // +infinity, passed at run time (a constant folded into the traversal may round
    // differently from the CPU's)
    far: f32,
    // the whole image's row of the band's first
    first_row: u32,
    _p0: u32,
    _p1: u32,
    _p2: u32,
}


@group(0) @binding(0) var<uniform> params: Params;
// bindings 1 to 6: the scene (raytrace/scene_bindings)
@group(0) @binding(7) var<storage, read_write> gbuffer: array<GPixel>;

const KIND_MIRROR: u32 = 2u;
const KIND_GLASS: u32 = 3u;
const KIND_EMITTER: u32 = 4u;
const SHADED: u32 = 1u;

fn primary(o: vec3<f32>, d: vec3<f32>) -> GPixel {
    var px: GPixel;
    let f = params.flags;
    let hit = tree_query(ray_prep(o, d), f, false, params.bmin, params.bmax, 0.0, params.far);
    if hit.tri == KD_NONE {
        return px;
    }
    let a = kd_vertex(hit.tri, 0u);
    let b = kd_vertex(hit.tri, 1u);
    let c = kd_vertex(hit.tri, 2u);
    let point = o + d * hit.t;
    var ng = unit(cross(b - a, c - a));
    let front = dot3(ng, d) < 0.0;
    if !front {
        ng = -ng;
    }
    var n = ng;
    let info = tri_info[hit.tri];
    if info.x != KD_NONE {
        let s = unit(normals[info.x].xyz * (1.0 - hit.u - hit.v) + normals[info.y].xyz * hit.u + normals[info.z].xyz * hit.v);
        if any(s != vec3<f32>(0.0)) {
            n = select(s, -s, dot3(s, ng) < 0.0);
        }
    }
    let m = materials[info.w];
    var albedo = m.kd;
    if m.kind == KIND_MIRROR || m.kind == KIND_GLASS {
        albedo = vec3<f32>(0.0);
    }
    var emission = vec3<f32>(0.0);
    if m.kind == KIND_EMITTER && front {
        emission = m.ke;
    }
    px.position = point + ng * params.eps;
    px.flags = select(0u, SHADED, any(albedo != vec3<f32>(0.0)));
    px.normal = n;
    px.albedo = albedo;
    px.emission = emission;
    return px;
}

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let xy = tile_pixel(params.tile_base + flat_workgroup(wid, nwg), params.width, lid);
    if xy.x >= params.width || xy.y >= params.height {
        return;
    }
    // lumbre_raytrace::GpuCamera::ray, normalised as glam does (times the reciprocal length).
    let cam = params.cam;
    let s = (f32(xy.x) + 0.5) / cam.size.x;
    let t = 1.0 - (f32(params.first_row + xy.y) + 0.5) / cam.size.y;
    let dir = unit(cam.corner.xyz + cam.horizontal.xyz * s + cam.vertical.xyz * t);
    gbuffer[xy.y * params.width + xy.x] = primary(cam.eye.xyz, dir);
}
