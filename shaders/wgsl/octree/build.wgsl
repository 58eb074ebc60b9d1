//! import shared/dispatch
//! import shared/octree_node
// GPU octree build, the stages between the sort of leaf codes and the finished node array.
// Each matches a function of lumbre-octree's CPU build (build.rs) bit for bit.
//
// Levels are built deepest first into per-level buffers whose real lengths stay on the GPU
// (`count[0]`); dispatches are sized for the worst case and threads past the count exit.

struct Params {
    // sorted codes (leaf stages) or child nodes (parent stages) in the worst case
    n: u32,
    // depth of the tree
    depth: u32,
    // level being built
    level: u32,
    _pad: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
// leaf stages: sorted leaf codes and the point index of each
@group(0) @binding(1) var<storage, read> codes: array<u32>;
@group(0) @binding(2) var<storage, read> order: array<u32>;
// per point: r | g << 8 | b << 16 | reflection << 24, refraction
@group(0) @binding(3) var<storage, read> attrs: array<vec2<u32>>;
// run starts (from a compaction of `flags`) and how many there are
@group(0) @binding(4) var<storage, read> starts: array<u32>;
@group(0) @binding(5) var<storage, read> count: array<u32>;
// the finer level (parent stages) and its length
@group(0) @binding(6) var<storage, read> children: array<Node>;
@group(0) @binding(7) var<storage, read> child_count: array<u32>;
// outputs
@group(0) @binding(8) var<storage, read_write> flags: array<u32>;
@group(0) @binding(9) var<storage, read_write> nodes: array<Node>;

const WG: u32 = 256u;
const NO_CHILD: u32 = 0xffffffffu;

// flags[i] = 1 where a run of equal leaf codes starts (CPU: leaf_level).
@compute @workgroup_size(256)
fn leaf_flags(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let i = flat_index(wid, nwg, lid, WG);
    if i >= params.n {
        return;
    }
    flags[i] = select(0u, 1u, i == 0u || codes[i] != codes[i - 1u]);
}

// One leaf per run: key, count and the sums of its points' attributes.
@compute @workgroup_size(256)
fn leaf_nodes(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let j = flat_index(wid, nwg, lid, WG);
    let runs = count[0];
    if j >= runs {
        return;
    }
    let start = starts[j];
    var end = params.n;
    if j + 1u < runs {
        end = starts[j + 1u];
    }
    var node: Node;
    node.key = (1u << (3u * params.depth)) | codes[start];
    node.first_child = NO_CHILD;
    node.child_mask = 0u;
    node.count = end - start;
    var s = array<u32, 5>(0u, 0u, 0u, 0u, 0u);
    for (var k = start; k < end; k++) {
        let a = attrs[order[k]];
        s[0] += a.x & 0xffu;
        s[1] += (a.x >> 8u) & 0xffu;
        s[2] += (a.x >> 16u) & 0xffu;
        s[3] += a.x >> 24u;
        s[4] += a.y;
    }
    node.sum = s;
    nodes[j] = node;
}

// flags[j] = 1 where the children's parent changes (CPU: parent_level); 0 past the end.
@compute @workgroup_size(256)
fn parent_flags(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let j = flat_index(wid, nwg, lid, WG);
    if j >= params.n {
        return;
    }
    var f = 0u;
    if j < child_count[0] {
        f = select(0u, 1u, j == 0u || (children[j].key >> 3u) != (children[j - 1u].key >> 3u));
    }
    flags[j] = f;
}

// One parent per run of children: key, count, sums, child mask, first child (index within
// the children's level; made global when the levels are gathered).
@compute @workgroup_size(256)
fn parent_nodes(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let p = flat_index(wid, nwg, lid, WG);
    let runs = count[0];
    if p >= runs {
        return;
    }
    let start = starts[p];
    var end = child_count[0];
    if p + 1u < runs {
        end = starts[p + 1u];
    }
    var node: Node;
    node.key = children[start].key >> 3u;
    node.first_child = start;
    node.child_mask = 0u;
    node.count = 0u;
    var s = array<u32, 5>(0u, 0u, 0u, 0u, 0u);
    for (var k = start; k < end; k++) {
        let c = children[k];
        node.count += c.count;
        node.child_mask |= 1u << (c.key & 7u);
        for (var e = 0u; e < 5u; e++) {
            s[e] += c.sum[e];
        }
    }
    node.sum = s;
    nodes[p] = node;
}
