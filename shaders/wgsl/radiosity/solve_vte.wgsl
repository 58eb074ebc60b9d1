//! import shared/dispatch
// V^T E: one workgroup per (lighting, patch) sums the patch's emission per channel; lane l
// adds elements l, l + 64, ... in order, then the lanes fold in halves. The twin of
// lumbre_radiosity::vte_cpu and segment_sum (the same additions, so they agree bit for bit).

struct Params {
    n: u32,
    k: u32,
    // x's stride per (lighting, channel): ks, k rounded up to a multiple of 8
    ks: u32,
    lights: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> patch_start: array<u32>;
// lights x n x 3
@group(0) @binding(2) var<storage, read> emission: array<f32>;
// lights x 3 x ks (zero past k)
@group(0) @binding(3) var<storage, read_write> x: array<f32>;

const LANES: u32 = 64u;

var<workgroup> lanes: array<vec3<f32>, 64>;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let w = flat_workgroup(wid, nwg);
    if w >= params.k * params.lights {
        return;
    }
    let m = w / params.k;
    let p = w % params.k;
    let start = patch_start[p];
    let end = patch_start[p + 1u];
    var s = vec3<f32>(0.0);
    let base = m * params.n * 3u;
    for (var e = start + lid; e < end; e += LANES) {
        s.x += emission[base + e * 3u];
        s.y += emission[base + e * 3u + 1u];
        s.z += emission[base + e * 3u + 2u];
    }
    lanes[lid] = s;
    for (var h = LANES / 2u; h > 0u; h /= 2u) {
        workgroupBarrier();
        if lid < h {
            lanes[lid] = lanes[lid] + lanes[lid + h];
        }
    }
    if lid == 0u {
        let v = lanes[0];
        let o = m * 3u * params.ks;
        x[o + p] = v.x;
        x[o + params.ks + p] = v.y;
        x[o + 2u * params.ks + p] = v.z;
    }
}
