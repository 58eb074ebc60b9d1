//! variants f32, f16, f32_many, f16_many
//! import shared/dispatch
//! import radiosity/half
//! define f32: const HALF: bool = false;
//! define f16: const HALF: bool = true;
//! define f32_many: const HALF: bool = false;
//! define f16_many: const HALF: bool = true;
//! define f32: const RHS: u32 = 1u;
//! define f16: const RHS: u32 = 1u;
//! define f32_many: const RHS: u32 = 8u;
//! define f16_many: const RHS: u32 = 8u;
// B = E - Y x for up to RHS lighting vectors at once (x = V^T E from vte.wgsl), Y read once.
// `partial`: thread (chunk c, channel ch, element el) of a block of R elements streams its
// chunk of Y's words (layout.wgsl: consecutive threads read consecutive words) and writes
// one partial dot product per lighting; `finish`: B = E - the sum of the partials in chunk
// order. The twin of lumbre_radiosity::solve_cpu (which sums in another order: they agree
// to rounding). HALF: words hold eight f16 values of Y times `scale`
// (layout.wgsl).

struct Params {
    n: u32,
    // this block: first element and element count
    e0: u32,
    rows: u32,
    // words per channel row, and x's vec4s per channel row (ks / 4)
    qw: u32,
    xq: u32,
    // chunks per row and words per chunk
    chunks: u32,
    chunk: u32,
    // lighting vectors in all, and the first one of this pass
    lights: u32,
    light0: u32,
    // 1 / scale of the stored words
    inv_scale: f32,
    _pad: vec2<u32>,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> words: array<vec4<u32>>;
// lights x 3 x xq vec4
@group(0) @binding(2) var<storage, read> x: array<vec4<f32>>;
// lights x chunks x 3 x n
@group(0) @binding(3) var<storage, read_write> partial: array<f32>;
// lights x n x 3
@group(0) @binding(4) var<storage, read> emission: array<f32>;
@group(0) @binding(5) var<storage, read_write> radiosity: array<f32>;

const WG: u32 = 256u;

@compute @workgroup_size(256)
fn partial_sums(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let t = flat_index(wid, nwg, lid, WG);
    let r = params.rows;
    if t >= 3u * r * params.chunks {
        return;
    }
    let el = t % r;
    let ch = (t / r) % 3u;
    let c = t / (3u * r);
    let w0 = c * params.chunk;
    let w1 = min(w0 + params.chunk, params.qw);
    var xbase: array<u32, RHS>;
    for (var i = 0u; i < RHS; i++) {
        let light = min(params.light0 + i, params.lights - 1u);
        xbase[i] = (light * 3u + ch) * params.xq;
    }
    var acc: array<f32, RHS>;
    let ybase = ch * params.qw * r + el;
    for (var w = w0; w < w1; w++) {
        let word = words[ybase + w * r];
        if HALF {
            let y0 = f16_low(word);
            let y1 = f16_high(word);
            for (var i = 0u; i < RHS; i++) {
                acc[i] += dot(y0, x[xbase[i] + 2u * w]) + dot(y1, x[xbase[i] + 2u * w + 1u]);
            }
        } else {
            let y = bitcast<vec4<f32>>(word);
            for (var i = 0u; i < RHS; i++) {
                acc[i] += dot(y, x[xbase[i] + w]);
            }
        }
    }
    for (var i = 0u; i < RHS; i++) {
        let light = params.light0 + i;
        if light < params.lights {
            partial[((light * params.chunks + c) * 3u + ch) * params.n + params.e0 + el] = acc[i];
        }
    }
}

@compute @workgroup_size(256)
fn finish(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let t = flat_index(wid, nwg, lid, WG);
    let n = params.n;
    if t >= params.lights * n * 3u {
        return;
    }
    let light = t / (3u * n);
    let e = (t / 3u) % n;
    let ch = t % 3u;
    var s = 0.0;
    for (var c = 0u; c < params.chunks; c++) {
        s += partial[((light * params.chunks + c) * 3u + ch) * n + e];
    }
    radiosity[t] = emission[t] - s * params.inv_scale;
}
