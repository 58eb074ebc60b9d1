//! import shared/dispatch
//! import morton/code
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
// Keys as vec4s: four 30-bit keys, or two (low, high) 63-bit keys (bindings are padded to 16
// bytes, so a last, partial vec4 is still in range).
@group(0) @binding(2) var<storage, read_write> keys: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read_write> outside: atomic<u32>;

const WG: u32 = 256u;

// Four consecutive points per thread, from three vec4 loads straight into registers:
// 48 bytes read and 16 (or 32) written per thread, wide accesses both ways.
const PER: u32 = 4u;

struct Quad {
    p0: vec3<f32>,
    p1: vec3<f32>,
    p2: vec3<f32>,
    p3: vec3<f32>,
}

fn load_quad(t: u32) -> Quad {
    let limit = (3u * params.n + 3u) / 4u;
    let i = 3u * t;
    var a = vec4<f32>(0.0);
    var b = vec4<f32>(0.0);
    var c = vec4<f32>(0.0);
    if i < limit {
        a = points[i];
    }
    if i + 1u < limit {
        b = points[i + 1u];
    }
    if i + 2u < limit {
        c = points[i + 2u];
    }
    return Quad(a.xyz, vec3<f32>(a.w, b.xy), vec3<f32>(b.zw, c.x), c.yzw);
}

// Cell of point `p` (the `j`-th of the piece); counts it if it is real and outside the box.
// Whole vec3 operations, no per-axis loop (dynamically indexed vectors can spill).
fn cell_of(p: vec3<f32>, j: u32) -> vec3<u32> {
    let last = f32((1u << params.bits) - 1u);
    let nan = (bitcast<vec3<u32>>(p) & vec3<u32>(0x7fffffffu)) > vec3<u32>(0x7f800000u);
    let q = clamp(floor((p - params.min) * params.scale), vec3<f32>(0.0), vec3<f32>(last));
    let c = select(vec3<u32>(q), vec3<u32>(0u), nan);
    if j < params.n && (any(nan) || any(p < params.min) || any(p > params.max)) {
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
    let t = flat_index(wid, nwg, lid, WG);
    let j = PER * t;
    if j >= params.n {
        return;
    }
    let q = load_quad(t);
    keys[t] = vec4<u32>(
        encode_u32(cell_of(q.p0, j)),
        encode_u32(cell_of(q.p1, j + 1u)),
        encode_u32(cell_of(q.p2, j + 2u)),
        encode_u32(cell_of(q.p3, j + 3u)),
    );
}

@compute @workgroup_size(256)
fn encode64(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let t = flat_index(wid, nwg, lid, WG);
    let j = PER * t;
    if j >= params.n {
        return;
    }
    let q = load_quad(t);
    keys[2u * t] = vec4<u32>(encode_u64(cell_of(q.p0, j)), encode_u64(cell_of(q.p1, j + 1u)));
    keys[2u * t + 1u] = vec4<u32>(encode_u64(cell_of(q.p2, j + 2u)), encode_u64(cell_of(q.p3, j + 3u)));
}
