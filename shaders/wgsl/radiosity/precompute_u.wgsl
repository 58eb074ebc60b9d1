//! import shared/dispatch
// U(e, ch, q) = (rho_e[ch] * F_eq) * (1 / c_q), one thread per value of a block of element
// rows: the twin of lumbre_radiosity::u_cpu (same products in the same order, so U agrees
// bit for bit).

struct Params {
    // element rows in this block, the first one, and k
    rows: u32,
    e0: u32,
    k: u32,
    _pad: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
// this block's rows of F, rows x k
@group(0) @binding(1) var<storage, read> f: array<f32>;
// n x 3 reflectances
@group(0) @binding(2) var<storage, read> rho: array<f32>;
// 1 / c_q per patch
@group(0) @binding(3) var<storage, read> inv_size: array<f32>;
// this block's rows of U, rows x 3k
@group(0) @binding(4) var<storage, read_write> u: array<f32>;

const WG: u32 = 256u;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let t = flat_index(wid, nwg, lid, WG);
    let k = params.k;
    if t >= params.rows * 3u * k {
        return;
    }
    let el = t / (3u * k);
    let rem = t % (3u * k);
    let ch = rem / k;
    let q = rem % k;
    u[t] = (rho[(params.e0 + el) * 3u + ch] * f[el * k + q]) * inv_size[q];
}
