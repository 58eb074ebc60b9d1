//! import shared/dispatch
//! import shared/octree_node
// Gathers the per-level node buffers into one array, root first, making child indices
// global. `offsets` (depth + 2 words) is computed first by one thread from the counts.

struct Params {
    // capacity of the level being copied
    n: u32,
    depth: u32,
    level: u32,
    _pad: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
// level lengths, root first (depth + 1 words)
@group(0) @binding(1) var<storage, read> counts: array<u32>;
@group(0) @binding(2) var<storage, read_write> offsets: array<u32>;
@group(0) @binding(3) var<storage, read> level: array<Node>;
@group(0) @binding(4) var<storage, read_write> nodes: array<Node>;

const WG: u32 = 256u;
const NO_CHILD: u32 = 0xffffffffu;

@compute @workgroup_size(1)
fn level_offsets() {
    var at = 0u;
    for (var l = 0u; l <= params.depth; l++) {
        offsets[l] = at;
        at += counts[l];
    }
    offsets[params.depth + 1u] = at;
}

@compute @workgroup_size(256)
fn copy_level(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let j = flat_index(wid, nwg, lid, WG);
    let l = params.level;
    if j >= counts[l] {
        return;
    }
    var node = level[j];
    if node.first_child != NO_CHILD {
        node.first_child += offsets[l + 1u];
    }
    nodes[offsets[l] + j] = node;
}
