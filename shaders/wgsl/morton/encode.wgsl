//! import shared/dispatch
// Morton encoding of f32 points, bit-exact with lumbre_morton::Quantizer::cell_clamped and
// encode_u32 / encode_u64: cell = min(floor((p - min) * scale), 2^bits - 1), NaN -> 0.
// Points outside the box (or NaN) are counted in `outside` and clamped.

struct Params {
    min: vec3<f32>,
    n: u32,
    max: vec3<f32>,
    bits: u32,
    scale: vec3<f32>,
    _pad: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> points: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> keys: array<u32>;
@group(0) @binding(3) var<storage, read_write> outside: atomic<u32>;

const WG: u32 = 256u;

fn spread10(v: u32) -> u32 {
    var x = v & 0x3ffu;
    x = (x | (x << 16u)) & 0x030000ffu;
    x = (x | (x << 8u)) & 0x0300f00fu;
    x = (x | (x << 4u)) & 0x030c30c3u;
    x = (x | (x << 2u)) & 0x09249249u;
    return x;
}

fn spread11(v: u32) -> u32 {
    return spread10(v) | (((v >> 10u) & 1u) << 30u);
}

// The workgroup's 256 points (768 floats), loaded with coalesced reads: reading x, y, z
// per thread strides by 12 bytes and wastes two thirds of every memory transaction.
var<workgroup> xyz: array<f32, 768>;

fn load_points(wg: u32, lid: u32) {
    // 768 floats are 192 vec4 loads.
    let v = 192u * wg + lid;
    if lid < 192u && 4u * v < 3u * params.n {
        let x = points[v];
        xyz[4u * lid] = x.x;
        xyz[4u * lid + 1u] = x.y;
        xyz[4u * lid + 2u] = x.z;
        xyz[4u * lid + 3u] = x.w;
    }
    workgroupBarrier();
}

// Cell of the workgroup's point `lid`; also counts it if it lies outside the box. Whole
// vec3 operations, no per-axis loop (dynamically indexed vectors can spill).
fn cell_of(lid: u32) -> vec3<u32> {
    let p = vec3<f32>(xyz[3u * lid], xyz[3u * lid + 1u], xyz[3u * lid + 2u]);
    let last = f32((1u << params.bits) - 1u);
    let nan = (bitcast<vec3<u32>>(p) & vec3<u32>(0x7fffffffu)) > vec3<u32>(0x7f800000u);
    let q = clamp(floor((p - params.min) * params.scale), vec3<f32>(0.0), vec3<f32>(last));
    let c = select(vec3<u32>(q), vec3<u32>(0u), nan);
    if any(nan) || any(p < params.min) || any(p > params.max) {
        atomicAdd(&outside, 1u);
    }
    return c;
}

@compute @workgroup_size(256)
fn encode32(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let wg = flat_workgroup(wid, nwg);
    load_points(wg, lid);
    let i = wg * WG + lid;
    if i >= params.n {
        return;
    }
    let c = cell_of(lid);
    keys[i] = spread10(c.x) | (spread10(c.y) << 1u) | (spread10(c.z) << 2u);
}

// 63-bit codes as (low word, high word) pairs: bit p of the code is bit 3i + axis.
@compute @workgroup_size(256)
fn encode64(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let wg = flat_workgroup(wid, nwg);
    load_points(wg, lid);
    let i = wg * WG + lid;
    if i >= params.n {
        return;
    }
    let c = cell_of(lid);
    // Low word: x bits 0..10, y bits 0..10, z bits 0..9.
    let lo = spread11(c.x) | (spread11(c.y) << 1u) | (spread10(c.z) << 2u);
    // High word: z bits 10..20 from bit 0, x bits 11..20 from bit 1, y bits 11..20 from bit 2.
    let hi = spread11(c.z >> 10u) | (spread10(c.x >> 11u) << 1u) | (spread10(c.y >> 11u) << 2u);
    keys[2u * i] = lo;
    keys[2u * i + 1u] = hi;
}
