//! import shared/dispatch
// The factored form's W as the solve reads it: k rows of 3 channels, row p holding
// W_ch[p][q] = M_ch[p][q] / c_p for each channel (M the inverses), one thread per value of a
// block of rows. The twin of lumbre_radiosity::Factorization::factored (the same product).

struct Params {
    // rows in this block, the first one, and k
    rows: u32,
    p0: u32,
    k: u32,
    _pad: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
// 3 x k x k inverses
@group(0) @binding(1) var<storage, read> inverse: array<f32>;
// 1 / c_p per patch
@group(0) @binding(2) var<storage, read> inv_size: array<f32>;
// this block's rows of W, rows x 3k
@group(0) @binding(3) var<storage, read_write> w: array<f32>;

const WG: u32 = 256u;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let t = flat_index(wid, nwg, lid, WG);
    let k = params.k;
    if t >= params.rows * 3u * k {
        return;
    }
    let p = params.p0 + t / (3u * k);
    let rem = t % (3u * k);
    let ch = rem / k;
    let q = rem % k;
    w[t] = inverse[(ch * k + p) * k + q] * inv_size[p];
}
