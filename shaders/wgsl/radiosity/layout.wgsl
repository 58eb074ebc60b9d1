//! import shared/dispatch
//! import radiosity/solve_half
// Rows of `channels` channels of k values (Y: 3, F: 1), from the row-major layout
// (rows x channels k, f32) to the solve's layout for one block of R element rows: word
// (ch * QW + w) * R + el holds row e0 + el, channel ch, columns q for the 4 (f32)
// or 8 (f16, times `scale`: component i holds column 8w + i in its low half and 8w + 4 + i
// in its high half) columns q of word w, zero past k. Consecutive threads of the solve then
// read consecutive words. The twin of lumbre_radiosity::layout_cpu (bit for bit).

struct Params {
    rows: u32,
    k: u32,
    // words per channel row: ks / 4 (f32) or ks / 8 (f16)
    qw: u32,
    half: u32,
    scale: f32,
    channels: u32,
    _p1: u32,
    _p2: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> y: array<f32>;
@group(0) @binding(2) var<storage, read_write> words: array<vec4<u32>>;

const WG: u32 = 256u;

fn value(el: u32, ch: u32, q: u32) -> f32 {
    if q >= params.k {
        return 0.0;
    }
    return y[el * params.channels * params.k + ch * params.k + q];
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let t = flat_index(wid, nwg, lid, WG);
    let r = params.rows;
    if t >= params.channels * params.qw * r {
        return;
    }
    let el = t % r;
    let w = (t / r) % params.qw;
    let ch = t / (r * params.qw);
    if params.half == 0u {
        let q = 4u * w;
        let v = vec4<f32>(value(el, ch, q), value(el, ch, q + 1u), value(el, ch, q + 2u), value(el, ch, q + 3u));
        words[t] = bitcast<vec4<u32>>(v);
    } else {
        let q = 8u * w;
        let s = params.scale;
        var out: vec4<u32>;
        for (var i = 0u; i < 4u; i++) {
            out[i] = f16_bits(value(el, ch, q + i) * s) | (f16_bits(value(el, ch, q + 4u + i) * s) << 16u);
        }
        words[t] = out;
    }
}

// The largest |value| of this block of rows (`rows x channels k`, row-major), merged into
// `largest` as f32 bits (non-negative floats order as their bits; NaN is skipped): what
// the f16 scale is made from (lumbre_radiosity::max_abs).
@group(0) @binding(3) var<storage, read_write> largest: atomic<u32>;

var<workgroup> block_max: atomic<u32>;

@compute @workgroup_size(256)
fn max_abs(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let t = flat_index(wid, nwg, lid, WG);
    if lid == 0u {
        atomicStore(&block_max, 0u);
    }
    workgroupBarrier();
    if t < params.rows * params.channels * params.k {
        let v = abs(y[t]);
        if v == v {
            atomicMax(&block_max, bitcast<u32>(v));
        }
    }
    workgroupBarrier();
    if lid == 0u {
        atomicMax(&largest, atomicLoad(&block_max));
    }
}
