//! import shared/dispatch
// Packs the per-level node buffers of the build into lumbre_octree::PackedOctree (packed.rs):
// interior nodes of 3 words (first child, child mask, payload index) and payloads of 6 words
// (count, five sums), shared along chains of single children. Payload order: the leaves, then
// each level's branching nodes from the deepest level up, which is where a node's flag sits
// in `owner` (segments per level, leaves first); an exclusive scan of the flags between
// `owner_flags` and the other stages numbers the payloads.

struct Params {
    // capacity of the level (the stride of its word planes)
    n: u32,
    depth: u32,
    level: u32,
    // words of the key planes that lead each level's planes
    key_words: u32,
    // where the level's flags start in `owner`, and the next deeper level's
    seg: u32,
    seg_below: u32,
    _pad0: u32,
    _pad1: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
// level lengths, root first (depth + 1 words)
@group(0) @binding(1) var<storage, read> counts: array<u32>;
// interior level offsets (depth + 1 words), then the number of payloads
@group(0) @binding(2) var<storage, read_write> offsets: array<u32>;
// the level's nodes as planes of words (word f of node j at f * n + j): the key's planes,
// then first child (within the next level), child mask, count and five sums
@group(0) @binding(3) var<storage, read> level: array<u32>;
@group(0) @binding(4) var<storage, read_write> nodes: array<u32>;
// 1 where a node owns a payload (a leaf, or a node without exactly one child)
@group(0) @binding(5) var<storage, read_write> owner: array<u32>;
// the exclusive scan of `owner`, then each node's payload index
@group(0) @binding(6) var<storage, read_write> payload_of: array<u32>;
@group(0) @binding(7) var<storage, read_write> payloads: array<u32>;

const WG: u32 = 256u;
const INNER_WORDS: u32 = 3u;
const PAYLOAD_WORDS: u32 = 6u;

fn word(j: u32, f: u32) -> u32 {
    return level[(params.key_words + f) * params.n + j];
}

fn first_child(j: u32) -> u32 {
    return word(j, 0u);
}

fn child_mask(j: u32) -> u32 {
    return word(j, 1u);
}

// One thread per node slot of the level (dispatched for its capacity); 0 past its length.
@compute @workgroup_size(256)
fn owner_flags(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let j = flat_index(wid, nwg, lid, WG);
    if j >= params.n {
        return;
    }
    var own = false;
    if j < counts[params.level] {
        own = params.level == params.depth || countOneBits(child_mask(j)) != 1u;
    }
    owner[params.seg + j] = select(0u, 1u, own);
}

// After the scan; `params.seg` is the root's flag (the last one). One thread.
@compute @workgroup_size(1)
fn level_offsets() {
    var at = 0u;
    for (var l = 0u; l < params.depth; l++) {
        offsets[l] = at;
        at += counts[l];
    }
    offsets[params.depth] = at;
    offsets[params.depth + 1u] = payload_of[params.seg] + owner[params.seg];
}

// Deepest level first: a node with one child takes its child's payload index.
@compute @workgroup_size(256)
fn payload_index(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let j = flat_index(wid, nwg, lid, WG);
    if j >= counts[params.level] || owner[params.seg + j] != 0u {
        return;
    }
    payload_of[params.seg + j] = payload_of[params.seg_below + first_child(j)];
}

// Interior levels: one node per thread; child indices become global, except one level above
// the leaves, whose children are the first payloads.
@compute @workgroup_size(256)
fn gather_nodes(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let j = flat_index(wid, nwg, lid, WG);
    let l = params.level;
    if j >= counts[l] {
        return;
    }
    var first = first_child(j);
    if l + 1u < params.depth {
        first += offsets[l + 1u];
    }
    let at = (offsets[l] + j) * INNER_WORDS;
    nodes[at] = first;
    nodes[at + 1u] = child_mask(j);
    nodes[at + 2u] = payload_of[params.seg + j];
}

// Every level: the payload of each node that owns one.
@compute @workgroup_size(256)
fn gather_payloads(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let j = flat_index(wid, nwg, lid, WG);
    if j >= counts[params.level] || owner[params.seg + j] == 0u {
        return;
    }
    let at = payload_of[params.seg + j] * PAYLOAD_WORDS;
    for (var w = 0u; w < PAYLOAD_WORDS; w++) {
        payloads[at + w] = word(j, 2u + w);
    }
}
