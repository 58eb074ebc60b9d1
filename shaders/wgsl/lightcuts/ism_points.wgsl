//! import shared/dispatch
//! import lightcuts/ism_random
// The scene's point pool, the GPU twin of ism/points.rs: pool slot j holds a point of
// stratum shuffle(j) of the area CDF, on the triangle whose CDF interval holds it.

struct Params {
    count: u32,
    tris: u32,
    seed: u32,
    // CDF units per stratum: the CDF runs over [0, count * step).
    step: u32,
    half_bits: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
// Three corners per triangle (xyz, w unused).
@group(0) @binding(1) var<storage, read> tris: array<vec4<f32>>;
// tris + 1 cumulative area bounds in CDF units: cdf[0] = 0, cdf[tris] = count * step.
@group(0) @binding(2) var<storage, read> cdf: array<u32>;
@group(0) @binding(3) var<storage, read_write> positions: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> triangles: array<u32>;

const WG: u32 = 256u;

@compute @workgroup_size(256)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let j = flat_index(wid, nwg, lid, WG);
    if j >= params.count {
        return;
    }
    let s = ism_shuffle(j, params.count, params.half_bits, params.seed);
    let c = s * params.step + ism_draw(params.seed, s, ISM_DIM_JITTER) % params.step;
    // The last k with cdf[k] <= c (an interval that is not empty).
    var lo = 0u;
    var hi = params.tris;
    while hi - lo > 1u {
        let mid = (lo + hi) / 2u;
        if cdf[mid] <= c {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    var u = ism_unit(ism_draw(params.seed, s, ISM_DIM_U));
    var v = ism_unit(ism_draw(params.seed, s, ISM_DIM_V));
    if u + v > 1.0 {
        u = 1.0 - u;
        v = 1.0 - v;
    }
    let a = tris[3u * lo].xyz;
    let e1 = tris[3u * lo + 1u].xyz - a;
    let e2 = tris[3u * lo + 2u].xyz - a;
    positions[j] = vec4<f32>(a + e1 * u + e2 * v, 1.0);
    triangles[j] = lo;
}
