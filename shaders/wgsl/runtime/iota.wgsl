//! import shared/dispatch
// dst[i] = start + i for i < n: index buffers for key-value sorts, and the test of 2D
// dispatch folding (a small workgroup makes a modest buffer need > 65535 workgroups).

struct Params {
    n: u32,
    start: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;

const WG: u32 = 64u;

@compute @workgroup_size(64)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let i = flat_index(wid, nwg, lid, WG);
    if i < params.n {
        dst[i] = params.start + i;
    }
}
