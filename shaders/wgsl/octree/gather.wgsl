//! import shared/dispatch
// Gathers the per-level node buffers into one array, root first, making child indices
// global. `offsets` (depth + 2 words) is computed first by one thread from the counts.

struct Params {
    // capacity of the level being copied
    n: u32,
    depth: u32,
    level: u32,
    // words of the key planes that lead each level's planes (not copied: nodes hold no key)
    key_words: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
// level lengths, root first (depth + 1 words)
@group(0) @binding(1) var<storage, read> counts: array<u32>;
@group(0) @binding(2) var<storage, read_write> offsets: array<u32>;
// The level's nodes as planes of words (word f of node j at f * n + j, from the build; the
// key's planes first), and the output as lumbre_octree::Node records of NODE_WORDS words. A
// thread per output word, so the writes are contiguous.
@group(0) @binding(3) var<storage, read> level: array<u32>;
@group(0) @binding(4) var<storage, read_write> nodes: array<u32>;

const WG: u32 = 256u;
const NO_CHILD: u32 = 0xffffffffu;
const NODE_WORDS: u32 = 8u;
// Word of `first_child` within a node.
const FIRST_CHILD: u32 = 0u;

@compute @workgroup_size(1)
fn level_offsets() {
    var at = 0u;
    for (var l = 0u; l <= params.depth; l++) {
        offsets[l] = at;
        at += counts[l];
    }
    offsets[params.depth + 1u] = at;
}

// One thread per word of the level (dispatched for its capacity).
@compute @workgroup_size(256)
fn copy_level(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let w = flat_index(wid, nwg, lid, WG);
    let l = params.level;
    if w >= counts[l] * NODE_WORDS {
        return;
    }
    let j = w / NODE_WORDS;
    let f = w % NODE_WORDS;
    var v = level[(params.key_words + f) * params.n + j];
    if f == FIRST_CHILD && v != NO_CHILD {
        v += offsets[l + 1u];
    }
    nodes[offsets[l] * NODE_WORDS + w] = v;
}
