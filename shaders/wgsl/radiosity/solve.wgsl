//! variants f32, f16, f32_many, f16_many
//! import shared/dispatch
//! import radiosity/solve_half
//! define f32: const HALF: bool = false;
//! define f16: const HALF: bool = true;
//! define f32_many: const HALF: bool = false;
//! define f16_many: const HALF: bool = true;
//! define f32: const RHS: u32 = 1u;
//! define f16: const RHS: u32 = 1u;
//! define f32_many: const RHS: u32 = 8u;
//! define f16_many: const RHS: u32 = 8u;
// B = E - Y x for up to RHS lighting vectors at once (x = V^T E from solve_vte.wgsl), Y read once.
// `partial`: thread (chunk c, channel ch, element el) of a block of R elements streams its
// chunk of Y's words (layout.wgsl: consecutive threads read consecutive words) and writes
// one partial dot product per lighting; `finish`: B = E - the sum of the partials in chunk
// order. The twin of lumbre_radiosity::solve_cpu (which sums in another order: they agree
// to rounding). HALF: words hold eight f16 values of Y times `scale`
// (layout.wgsl).
//
// The factored form (Y_ch = -diag(rho_ch) F W_ch) runs `partial_sums` over W (k rows, 3
// channels) and `finish_z` (z = W x, in x's layout), then `partial_rows` over F (n rows, one
// channel, three accumulators per lighting: one per channel of z) and `finish_rho`
// (B = E + rho * the sum).

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
    // k, and x's stride per (lighting, channel) in values (ks)
    k: u32,
    ks: u32,
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
// n x 3 reflectances (factored form)
@group(0) @binding(6) var<storage, read> rho: array<f32>;
// z = W x, lights x 3 x ks (factored form; read as x by partial_rows)
@group(0) @binding(7) var<storage, read_write> z: array<f32>;

const WG: u32 = 256u;

// acc[i] += word . x[i]'s values at word w (one channel).
fn add_word(acc: ptr<function, array<f32, RHS>>, xbase: ptr<function, array<u32, RHS>>, word: vec4<u32>, w: u32) {
    if HALF {
        let y0 = f16_low(word);
        let y1 = f16_high(word);
        for (var i = 0u; i < RHS; i++) {
            (*acc)[i] += dot(y0, x[(*xbase)[i] + 2u * w]) + dot(y1, x[(*xbase)[i] + 2u * w + 1u]);
        }
    } else {
        let y = bitcast<vec4<f32>>(word);
        for (var i = 0u; i < RHS; i++) {
            (*acc)[i] += dot(y, x[(*xbase)[i] + w]);
        }
    }
}

// acc[i] += word . x[i]'s values at word w, for each of x's three channels.
fn add_word3(acc: ptr<function, array<vec3<f32>, RHS>>, xbase: ptr<function, array<u32, RHS>>, word: vec4<u32>, w: u32) {
    let xq = params.xq;
    if HALF {
        let y0 = f16_low(word);
        let y1 = f16_high(word);
        for (var i = 0u; i < RHS; i++) {
            let b = (*xbase)[i] + 2u * w;
            (*acc)[i] += vec3<f32>(
                dot(y0, x[b]) + dot(y1, x[b + 1u]),
                dot(y0, x[b + xq]) + dot(y1, x[b + xq + 1u]),
                dot(y0, x[b + 2u * xq]) + dot(y1, x[b + 2u * xq + 1u]),
            );
        }
    } else {
        let y = bitcast<vec4<f32>>(word);
        for (var i = 0u; i < RHS; i++) {
            let b = (*xbase)[i] + w;
            (*acc)[i] += vec3<f32>(dot(y, x[b]), dot(y, x[b + xq]), dot(y, x[b + 2u * xq]));
        }
    }
}

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
    // Four words in flight per thread, added in order.
    var w = w0;
    for (; w + 4u <= w1; w += 4u) {
        let a = words[ybase + w * r];
        let b = words[ybase + (w + 1u) * r];
        let c4 = words[ybase + (w + 2u) * r];
        let d = words[ybase + (w + 3u) * r];
        add_word(&acc, &xbase, a, w);
        add_word(&acc, &xbase, b, w + 1u);
        add_word(&acc, &xbase, c4, w + 2u);
        add_word(&acc, &xbase, d, w + 3u);
    }
    for (; w < w1; w++) {
        add_word(&acc, &xbase, words[ybase + w * r], w);
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

@compute @workgroup_size(256)
fn finish_z(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let t = flat_index(wid, nwg, lid, WG);
    let ks = params.ks;
    if t >= params.lights * 3u * ks {
        return;
    }
    let p = t % ks;
    let ch = (t / ks) % 3u;
    let light = t / (3u * ks);
    var s = 0.0;
    if p < params.k {
        for (var c = 0u; c < params.chunks; c++) {
            s += partial[((light * params.chunks + c) * 3u + ch) * params.n + p];
        }
    }
    z[t] = s * params.inv_scale;
}

@compute @workgroup_size(256)
fn partial_rows(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let t = flat_index(wid, nwg, lid, WG);
    let r = params.rows;
    if t >= r * params.chunks {
        return;
    }
    let el = t % r;
    let c = t / r;
    let w0 = c * params.chunk;
    let w1 = min(w0 + params.chunk, params.qw);
    var xbase: array<u32, RHS>;
    for (var i = 0u; i < RHS; i++) {
        let light = min(params.light0 + i, params.lights - 1u);
        xbase[i] = light * 3u * params.xq;
    }
    var acc: array<vec3<f32>, RHS>;
    var w = w0;
    for (; w + 4u <= w1; w += 4u) {
        let a = words[w * r + el];
        let b = words[(w + 1u) * r + el];
        let c4 = words[(w + 2u) * r + el];
        let d = words[(w + 3u) * r + el];
        add_word3(&acc, &xbase, a, w);
        add_word3(&acc, &xbase, b, w + 1u);
        add_word3(&acc, &xbase, c4, w + 2u);
        add_word3(&acc, &xbase, d, w + 3u);
    }
    for (; w < w1; w++) {
        add_word3(&acc, &xbase, words[w * r + el], w);
    }
    for (var i = 0u; i < RHS; i++) {
        let light = params.light0 + i;
        if light < params.lights {
            for (var ch = 0u; ch < 3u; ch++) {
                partial[((light * params.chunks + c) * 3u + ch) * params.n + params.e0 + el] = acc[i][ch];
            }
        }
    }
}

@compute @workgroup_size(256)
fn finish_rho(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
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
    radiosity[t] = emission[t] + rho[3u * e + ch] * (s * params.inv_scale);
}
