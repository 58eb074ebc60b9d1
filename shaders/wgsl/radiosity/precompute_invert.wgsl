//! import shared/dispatch
//! import radiosity/tile
// (I - V^T U)^-1 per channel by Gauss-Jordan elimination in place, without pivoting (the
// matrix is diagonally dominant by columns: its off-diagonal columns sum to at most
// max rho < 1), in blocks of BS pivots: a block step J is `pivot` (one workgroup inverts the
// BS x BS diagonal block in workgroup memory, pivot by pivot), `panels` (the block row times
// that inverse, and the block column saved aside), then `update` (every entry, a rank-BS
// product tiled like the GEMM). The step number lives in `state`, so one bind group serves
// every step. A pivot that is not finite or below 1e-20 in magnitude is recorded in state[2]
// (channel * 2^24 + pivot + 1, the first one only).

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
// 3 x BS x k: the block row after the step (its block's columns: the diagonal block's inverse)
@group(0) @binding(3) var<storage, read_write> rowp: array<f32>;
// 3 x k x BS: the block column before the step
@group(0) @binding(4) var<storage, read_write> colp: array<f32>;
// next block step, current block step, first failure
@group(0) @binding(5) var<storage, read_write> state: array<u32>;

const WG: u32 = 256u;
// Pivots per block step.
const BS: u32 = 32u;

var<workgroup> step: u32;
var<workgroup> blk: array<f32, 1024>;
var<workgroup> prow_s: array<f32, 32>;
var<workgroup> pcol_s: array<f32, 32>;

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

// The pivots of block step J: block rows and columns j0 .. j0 + bs.
fn block_of(j: u32) -> vec2<u32> {
    let j0 = j * BS;
    return vec2<u32>(j0, min(BS, params.k - j0));
}

@compute @workgroup_size(256)
fn pivot(@builtin(local_invocation_index) lid: u32) {
    if lid == 0u {
        step = state[0];
    }
    let j = workgroupUniformLoad(&step);
    let k = params.k;
    let jb = block_of(j);
    let j0 = jb.x;
    let bs = jb.y;
    for (var ch = 0u; ch < 3u; ch++) {
        let base = ch * k * k;
        for (var e = lid; e < bs * bs; e += WG) {
            blk[e] = a[base + (j0 + e / bs) * k + j0 + e % bs];
        }
        workgroupBarrier();
        for (var s = 0u; s < bs; s++) {
            // The pivot row divided by the pivot (its own slot: 1 / pivot) and the column.
            let pv = blk[s * bs + s];
            let inv = 1.0 / pv;
            if lid < bs {
                prow_s[lid] = select(blk[s * bs + lid] * inv, inv, lid == s);
                pcol_s[lid] = blk[lid * bs + s];
            }
            let bits = bitcast<u32>(pv) & 0x7f800000u;
            if lid == 0u && (bits == 0x7f800000u || abs(pv) < 1e-20) && state[2] == 0u {
                state[2] = (ch << 24u) + j0 + s + 1u;
            }
            workgroupBarrier();
            for (var e = lid; e < bs * bs; e += WG) {
                let i = e / bs;
                let c = e % bs;
                if i == s {
                    blk[e] = prow_s[c];
                } else if c == s {
                    blk[e] = -pcol_s[i] * prow_s[s];
                } else {
                    blk[e] = blk[e] - pcol_s[i] * prow_s[c];
                }
            }
            workgroupBarrier();
        }
        for (var e = lid; e < bs * bs; e += WG) {
            rowp[(ch * BS + e / bs) * k + j0 + e % bs] = blk[e];
        }
        workgroupBarrier();
    }
    if lid == 0u {
        state[1] = j;
        state[0] = j + 1u;
    }
}

@compute @workgroup_size(256)
fn panels(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let t = flat_index(wid, nwg, lid, WG);
    let k = params.k;
    if t >= 3u * BS * k {
        return;
    }
    let jb = block_of(state[1]);
    let j0 = jb.x;
    let bs = jb.y;
    let ch = t / (BS * k);
    let base = ch * k * k;
    // The block row: the diagonal block's inverse times the rows j0 .. j0 + bs, outside
    // the block's columns (there `pivot` left the inverse itself).
    let r = (t / k) % BS;
    let c = t % k;
    if r < bs && (c < j0 || c >= j0 + bs) {
        var s = 0.0;
        for (var q = 0u; q < bs; q++) {
            s += rowp[(ch * BS + r) * k + j0 + q] * a[base + (j0 + q) * k + c];
        }
        rowp[(ch * BS + r) * k + c] = s;
    }
    // The block column as it was.
    let i = (t / BS) % k;
    let q = t % BS;
    if q < bs {
        colp[(ch * k + i) * BS + q] = a[base + i * k + j0 + q];
    }
}

@compute @workgroup_size(256)
fn update(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let k = params.k;
    let tiles = (k + TILE - 1u) / TILE;
    let w = flat_workgroup(wid, nwg);
    if w >= 3u * tiles * tiles {
        return;
    }
    let jb = block_of(state[1]);
    let j0 = jb.x;
    let bs = jb.y;
    let ch = w / (tiles * tiles);
    let i0 = ((w / tiles) % tiles) * TILE;
    let c0 = (w % tiles) * TILE;
    let tx = lid % 16u;
    let ty = lid / 16u;
    // acc = (the block column) x (the block row), DEPTH pivots at a time.
    var acc: array<vec4<f32>, 4>;
    for (var p0 = 0u; p0 < bs; p0 += DEPTH) {
        for (var s = 0u; s < 4u; s++) {
            let idx = lid + s * 256u;
            let r = idx / DEPTH;
            let kk = idx % DEPTH;
            var va = 0.0;
            if i0 + r < k && p0 + kk < bs {
                va = colp[(ch * k + i0 + r) * BS + p0 + kk];
            }
            ta[kk * TILE + r] = va;
            let kb = idx / TILE;
            let c = idx % TILE;
            var vb = 0.0;
            if p0 + kb < bs && c0 + c < k {
                vb = rowp[(ch * BS + p0 + kb) * k + c0 + c];
            }
            tb[kb * TILE + c] = vb;
        }
        workgroupBarrier();
        tile_accumulate(&acc, tx, ty);
        workgroupBarrier();
    }
    let base = ch * k * k;
    for (var m = 0u; m < 4u; m++) {
        let i = i0 + ty * 4u + m;
        if i >= k {
            continue;
        }
        for (var n = 0u; n < 4u; n++) {
            let c = c0 + tx * 4u + n;
            if c >= k {
                continue;
            }
            let at = base + i * k + c;
            if i >= j0 && i < j0 + bs {
                a[at] = rowp[(ch * BS + i - j0) * k + c];
            } else if c >= j0 && c < j0 + bs {
                a[at] = -acc[m][n];
            } else {
                a[at] = a[at] - acc[m][n];
            }
        }
    }
}
