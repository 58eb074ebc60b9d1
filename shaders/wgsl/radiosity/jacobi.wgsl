//! import shared/dispatch
// One Jacobi sweep of (I - RF) B = E on the full n x n form factors, for a block of rows:
// B_next(e) = E(e) + rho_e * sum_j F(e, j) B(j), one workgroup per row (lane l adds columns
// l, l + 64, ... in order, then the lanes fold in halves). The twin of
// lumbre_radiosity::jacobi_sweep_cpu (same order of additions; FMA may round differently).

struct Params {
    n: u32,
    rows: u32,
    e0: u32,
    _pad: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
// this block's rows of F, rows x n
@group(0) @binding(1) var<storage, read> f: array<f32>;
// n x 3
@group(0) @binding(2) var<storage, read> rho: array<f32>;
@group(0) @binding(3) var<storage, read> emission: array<f32>;
@group(0) @binding(4) var<storage, read> b_in: array<f32>;
@group(0) @binding(5) var<storage, read_write> b_out: array<f32>;

const LANES: u32 = 64u;

var<workgroup> lanes: array<vec3<f32>, 64>;

@compute @workgroup_size(64)
fn sweep(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let r = flat_workgroup(wid, nwg);
    if r >= params.rows {
        return;
    }
    let n = params.n;
    var s = vec3<f32>(0.0);
    for (var j = lid; j < n; j += LANES) {
        let fv = f[r * n + j];
        s += fv * vec3<f32>(b_in[3u * j], b_in[3u * j + 1u], b_in[3u * j + 2u]);
    }
    lanes[lid] = s;
    for (var h = LANES / 2u; h > 0u; h /= 2u) {
        workgroupBarrier();
        if lid < h {
            lanes[lid] = lanes[lid] + lanes[lid + h];
        }
    }
    if lid == 0u {
        let e = params.e0 + r;
        let v = lanes[0];
        for (var c = 0u; c < 3u; c++) {
            b_out[3u * e + c] = emission[3u * e + c] + rho[3u * e + c] * v[c];
        }
    }
}
