//! import shared/dispatch
// The volumetric thesis's build: every point adds one to the counter of each of its
// ancestors in a dense array over all possible nodes (index = sum(8^i, i < level) + value).

struct Params {
    n: u32,
    depth: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
// leaf cell codes (Morton, `depth` bits per axis)
@group(0) @binding(1) var<storage, read> codes: array<u32>;
@group(0) @binding(2) var<storage, read_write> counters: array<atomic<u32>>;

const WG: u32 = 256u;

@compute @workgroup_size(256)
fn count(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let i = flat_index(wid, nwg, lid, WG);
    if i >= params.n {
        return;
    }
    let code = codes[i];
    var offset = 0u;
    for (var l = 0u; l <= params.depth; l++) {
        atomicAdd(&counters[offset + (code >> (3u * (params.depth - l)))], 1u);
        offset += 1u << (3u * l);
    }
}
