//! import shared/dispatch
//! import radiosity/tile
// Y(e, ch, :) = -U(e, ch, :) M_ch for one channel of a block of element rows: a tiled
// matrix product (64 x 64 outputs per workgroup of 256 threads, 4 x 4 each, 16-deep slices
// of U and M staged in workgroup memory). The twin of lumbre_radiosity::y_cpu (whose GEMM
// sums in another order: they agree to rounding).

struct Params {
    rows: u32,
    k: u32,
    ch: u32,
    _pad: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
// this block's rows of U, rows x 3k
@group(0) @binding(1) var<storage, read> u: array<f32>;
// 3 x k x k inverses
@group(0) @binding(2) var<storage, read> m: array<f32>;
// this block's rows of Y, rows x 3k
@group(0) @binding(3) var<storage, read_write> y: array<f32>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let k = params.k;
    let rows = params.rows;
    let tiles_q = (k + TILE - 1u) / TILE;
    let w = flat_workgroup(wid, nwg);
    let r0 = (w / tiles_q) * TILE;
    let q0 = (w % tiles_q) * TILE;
    if r0 >= rows {
        return;
    }
    let tx = lid % 16u;
    let ty = lid / 16u;
    let stride = 3u * k;
    let off = params.ch * k;
    let mbase = params.ch * k * k;
    var acc: array<vec4<f32>, 4>;
    for (var p0 = 0u; p0 < k; p0 += DEPTH) {
        for (var s = 0u; s < 4u; s++) {
            let idx = lid + s * 256u;
            // ta[kk * 64 + r] = U(r0 + r, p0 + kk)
            let r = idx / DEPTH;
            let kk = idx % DEPTH;
            var va = 0.0;
            if r0 + r < rows && p0 + kk < k {
                va = u[(r0 + r) * stride + off + p0 + kk];
            }
            ta[kk * TILE + r] = va;
            // tb[kk * 64 + c] = M(p0 + kk, q0 + c)
            let kb = idx / TILE;
            let c = idx % TILE;
            var vb = 0.0;
            if p0 + kb < k && q0 + c < k {
                vb = m[mbase + (p0 + kb) * k + q0 + c];
            }
            tb[kb * TILE + c] = vb;
        }
        workgroupBarrier();
        tile_accumulate(&acc, tx, ty);
        workgroupBarrier();
    }
    for (var i = 0u; i < 4u; i++) {
        let r = r0 + ty * 4u + i;
        if r >= rows {
            continue;
        }
        for (var j = 0u; j < 4u; j++) {
            let q = q0 + tx * 4u + j;
            if q < k {
                y[r * stride + off + q] = -acc[i][j];
            }
        }
    }
}
