//! import shared/dispatch
// (I - V^T U)^-1 per channel by Gauss-Jordan elimination in place, without pivoting (the
// matrix is diagonally dominant by columns: its off-diagonal columns sum to at most
// max rho < 1). Step j is `pivot` (one workgroup: the scaled pivot row and the pivot
// column, saved aside) then `update` (every entry); the step number lives in `state`, so
// one bind group serves every step. A pivot that is not finite or below 1e-20 in magnitude
// is recorded in state[2] (channel * 2^24 + step + 1, the first one only).

struct Params {
    k: u32,
    _p0: u32,
    _p1: u32,
    _p2: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> vtu: array<f32>;
// 3 x k x k: I - V^T U, then its inverse
@group(0) @binding(2) var<storage, read_write> a: array<f32>;
// 3 x k: the pivot row divided by the pivot (the pivot's slot holds 1 / pivot)
@group(0) @binding(3) var<storage, read_write> prow: array<f32>;
// 3 x k: the pivot column before the step
@group(0) @binding(4) var<storage, read_write> pcol: array<f32>;
// next step, current step, first failure
@group(0) @binding(5) var<storage, read_write> state: array<u32>;

const WG: u32 = 256u;

var<workgroup> step: u32;

@compute @workgroup_size(256)
fn init(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let t = flat_index(wid, nwg, lid, WG);
    let k = params.k;
    if t == 0u {
        state[0] = 0u;
        state[1] = 0u;
        state[2] = 0u;
    }
    if t >= 3u * k * k {
        return;
    }
    let p = (t / k) % k;
    let q = t % k;
    a[t] = select(0.0, 1.0, p == q) - vtu[t];
}

@compute @workgroup_size(256)
fn pivot(@builtin(local_invocation_index) lid: u32) {
    if lid == 0u {
        step = state[0];
    }
    let j = workgroupUniformLoad(&step);
    let k = params.k;
    for (var ch = 0u; ch < 3u; ch++) {
        let base = ch * k * k;
        let pv = a[base + j * k + j];
        let inv = 1.0 / pv;
        for (var c = lid; c < k; c += WG) {
            prow[ch * k + c] = select(a[base + j * k + c] * inv, inv, c == j);
            pcol[ch * k + c] = a[base + c * k + j];
        }
        let bits = bitcast<u32>(pv) & 0x7f800000u;
        if lid == 0u && (bits == 0x7f800000u || abs(pv) < 1e-20) && state[2] == 0u {
            state[2] = (ch << 24u) + j + 1u;
        }
    }
    if lid == 0u {
        state[1] = j;
        state[0] = j + 1u;
    }
}

@compute @workgroup_size(256)
fn update(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let t = flat_index(wid, nwg, lid, WG);
    let k = params.k;
    if t >= 3u * k * k {
        return;
    }
    let j = state[1];
    let ch = t / (k * k);
    let i = (t / k) % k;
    let c = t % k;
    if i == j {
        a[t] = prow[ch * k + c];
    } else if c == j {
        a[t] = -pcol[ch * k + i] * prow[ch * k + j];
    } else {
        a[t] = a[t] - pcol[ch * k + i] * prow[ch * k + c];
    }
}
