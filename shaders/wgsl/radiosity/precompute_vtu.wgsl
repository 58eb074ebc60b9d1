//! import shared/dispatch
// (V^T U)[ch][p][q] = sum of U(e, ch, q) over the elements e of patch p, one thread per
// output, adding this block's rows to what earlier blocks left: the twin of
// lumbre_radiosity::vtu_cpu (the same sums in element order, so they agree bit for bit).

struct Params {
    k: u32,
    // this block's elements: e0 .. e1
    e0: u32,
    e1: u32,
    _pad: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> patch_start: array<u32>;
// this block's rows of U, (e1 - e0) x 3k
@group(0) @binding(2) var<storage, read> u: array<f32>;
// 3 x k x k, zero before the first block
@group(0) @binding(3) var<storage, read_write> vtu: array<f32>;

const WG: u32 = 256u;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let t = flat_index(wid, nwg, lid, WG);
    let k = params.k;
    if t >= 3u * k * k {
        return;
    }
    let ch = t / (k * k);
    let p = (t / k) % k;
    let q = t % k;
    let lo = max(patch_start[p], params.e0);
    let hi = min(patch_start[p + 1u], params.e1);
    var s = vtu[t];
    for (var e = lo; e < hi; e++) {
        s += u[(e - params.e0) * 3u * k + ch * k + q];
    }
    vtu[t] = s;
}
