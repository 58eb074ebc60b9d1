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
@group(0) @binding(2) var<storage, read_write> keys: array<vec4<u32>>;
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

// Each thread encodes 4 consecutive points: the workgroup's 1024 points (768 vec4s) are
// loaded with 3 coalesced vec4 loads per thread, all issued before use, into shared memory,
// and each thread writes its 4 keys as one vec4 (wide accesses are what reach bandwidth).
const PER: u32 = 4u;
var<workgroup> xyz: array<f32, 3072>;

fn load_points(wg: u32, lid: u32) {
    let base = 768u * wg;
    let limit = (3u * params.n + 3u) / 4u;
    var v: array<vec4<f32>, 3>;
    for (var k = 0u; k < 3u; k++) {
        let i = base + k * WG + lid;
        if i < limit {
            v[k] = points[i];
        }
    }
    for (var k = 0u; k < 3u; k++) {
        let at = 4u * (k * WG + lid);
        xyz[at] = v[k].x;
        xyz[at + 1u] = v[k].y;
        xyz[at + 2u] = v[k].z;
        xyz[at + 3u] = v[k].w;
    }
    workgroupBarrier();
}

// Cell of point `j` of the workgroup; also counts it if it lies outside the box. Whole
// vec3 operations, no per-axis loop.
fn cell_of(j: u32) -> vec3<u32> {
    let p = vec3<f32>(xyz[3u * j], xyz[3u * j + 1u], xyz[3u * j + 2u]);
    let last = f32((1u << params.bits) - 1u);
    let nan = (bitcast<vec3<u32>>(p) & vec3<u32>(0x7fffffffu)) > vec3<u32>(0x7f800000u);
    let q = clamp(floor((p - params.min) * params.scale), vec3<f32>(0.0), vec3<f32>(last));
    let c = select(vec3<u32>(q), vec3<u32>(0u), nan);
    if any(nan) || any(p < params.min) || any(p > params.max) {
        atomicAdd(&outside, 1u);
    }
    return c;
}

fn code32(c: vec3<u32>) -> u32 {
    return spread10(c.x) | (spread10(c.y) << 1u) | (spread10(c.z) << 2u);
}

// 63-bit codes as (low word, high word): bit p of the code is bit 3i + axis.
fn code64(c: vec3<u32>) -> vec2<u32> {
    // Low word: x bits 0..10, y bits 0..10, z bits 0..9.
    let lo = spread11(c.x) | (spread11(c.y) << 1u) | (spread10(c.z) << 2u);
    // High word: z bits 10..20 from bit 0, x bits 11..20 from bit 1, y bits 11..20 from bit 2.
    let hi = spread11(c.z >> 10u) | (spread10(c.x >> 11u) << 1u) | (spread10(c.y >> 11u) << 2u);
    return vec2<u32>(lo, hi);
}

// Writes word `w` of the output vec4 at `v`, or the whole vec4 when it is all in range.
fn store4(v: u32, words: vec4<u32>, total: u32) {
    if 4u * v + 3u < total {
        keys[v] = words;
    } else {
        for (var c = 0u; c < 4u; c++) {
            if 4u * v + c < total {
                keys[v][c] = words[c];
            }
        }
    }
}

@compute @workgroup_size(256)
fn encode32(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let wg = flat_workgroup(wid, nwg);
    load_points(wg, lid);
    let first = (wg * WG + lid) * PER;
    if first >= params.n {
        return;
    }
    var k = vec4<u32>(0u);
    for (var e = 0u; e < PER; e++) {
        if first + e < params.n {
            k[e] = code32(cell_of(PER * lid + e));
        }
    }
    store4(wg * WG + lid, k, params.n);
}

@compute @workgroup_size(256)
fn encode64(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let wg = flat_workgroup(wid, nwg);
    load_points(wg, lid);
    let first = (wg * WG + lid) * PER;
    if first >= params.n {
        return;
    }
    var a = vec4<u32>(0u);
    var b = vec4<u32>(0u);
    for (var e = 0u; e < PER; e++) {
        if first + e < params.n {
            let w = code64(cell_of(PER * lid + e));
            if e < 2u {
                a[2u * e] = w.x;
                a[2u * e + 1u] = w.y;
            } else {
                b[2u * e - 4u] = w.x;
                b[2u * e - 3u] = w.y;
            }
        }
    }
    let v = 2u * (wg * WG + lid);
    store4(v, a, 2u * params.n);
    store4(v + 1u, b, 2u * params.n);
}
