//! variants key32, key64
//! import shared/dispatch
//! import octree/build_{variant}
// GPU octree build, the stages between the sort of leaf codes and the finished node array.
// Each matches a function of lumbre-octree's CPU build (build.rs) bit for bit.
//
// Levels are built deepest first into per-level buffers whose real lengths stay on the GPU
// (`count[0]`); dispatches are sized for the worst case and threads past the count exit.
// Per-level buffers hold nodes as planes of words (word f of node j at f * capacity + j),
// so that consecutive threads touch consecutive words: the key's KEY_WORDS planes, then the
// node's. octree/packed.wgsl packs them into lumbre_octree::PackedOctree, without the keys.

struct Params {
    // sorted codes (leaf stages) or child nodes (parent stages) in the worst case
    n: u32,
    // depth of the tree
    depth: u32,
    // level being built
    level: u32,
    // capacity of the level being built (the stride of its word planes)
    out_cap: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
// leaf stages: sorted leaf codes (KEY_WORDS words each) and the point index of each
@group(0) @binding(1) var<storage, read> codes: array<u32>;
@group(0) @binding(2) var<storage, read> order: array<u32>;
// per point: r | g << 8 | b << 16 | reflection << 24, refraction
@group(0) @binding(3) var<storage, read> attrs: array<vec2<u32>>;
// run starts (from a compaction of `flags`) and how many there are
@group(0) @binding(4) var<storage, read> starts: array<u32>;
@group(0) @binding(5) var<storage, read> count: array<u32>;
// the finer level (parent stages; planes of stride `n`) and its length
@group(0) @binding(6) var<storage, read> children: array<u32>;
@group(0) @binding(7) var<storage, read> child_count: array<u32>;
// outputs
@group(0) @binding(8) var<storage, read_write> flags: array<u32>;
@group(0) @binding(9) var<storage, read_write> nodes: array<u32>;

const WG: u32 = 256u;
const NO_CHILD: u32 = 0xffffffffu;
// Word planes of a node: the key's, then first child, child mask, count and five sums.
const W_FIRST: u32 = KEY_WORDS;
const W_MASK: u32 = KEY_WORDS + 1u;
const W_COUNT: u32 = KEY_WORDS + 2u;
const W_SUM: u32 = KEY_WORDS + 3u;

fn put(j: u32, w: u32, v: u32) {
    nodes[w * params.out_cap + j] = v;
}

// Sums of red, green, blue, reflection (rgbr) and refraction.
fn put_sums(j: u32, rgbr: vec4<u32>, refr: u32) {
    put(j, W_SUM, rgbr.x);
    put(j, W_SUM + 1u, rgbr.y);
    put(j, W_SUM + 2u, rgbr.z);
    put(j, W_SUM + 3u, rgbr.w);
    put(j, W_SUM + 4u, refr);
}

fn child_word(k: u32, w: u32) -> u32 {
    return children[w * params.n + k];
}

// flags[i] = 1 where a run of equal leaf codes starts (CPU: leaf_level).
@compute @workgroup_size(256)
fn leaf_flags(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let i = flat_index(wid, nwg, lid, WG);
    if i >= params.n {
        return;
    }
    flags[i] = select(0u, 1u, i == 0u || !same_key(load_code(i), load_code(i - 1u)));
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
    // Sums in named registers: a dynamically indexed array may live in slow local memory.
    var rgbr = vec4<u32>(0u);
    var refr = 0u;
    for (var k = start; k < end; k++) {
        let a = attrs[order[k]];
        rgbr += (vec4<u32>(a.x) >> vec4<u32>(0u, 8u, 16u, 24u)) & vec4<u32>(0xffu);
        refr += a.y;
    }
    put_key(j, leaf_key(load_code(start), params.depth));
    put(j, W_FIRST, NO_CHILD);
    put(j, W_MASK, 0u);
    put(j, W_COUNT, end - start);
    put_sums(j, rgbr, refr);
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
        f = select(0u, 1u, j == 0u || !same_key(parent_key(child_key(j)), parent_key(child_key(j - 1u))));
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
    var count = 0u;
    var mask = 0u;
    var rgbr = vec4<u32>(0u);
    var refr = 0u;
    for (var k = start; k < end; k++) {
        count += child_word(k, W_COUNT);
        mask |= 1u << key_octant(child_key(k));
        rgbr += vec4<u32>(child_word(k, W_SUM), child_word(k, W_SUM + 1u), child_word(k, W_SUM + 2u), child_word(k, W_SUM + 3u));
        refr += child_word(k, W_SUM + 4u);
    }
    put_key(p, parent_key(child_key(start)));
    put(p, W_FIRST, start);
    put(p, W_MASK, mask);
    put(p, W_COUNT, count);
    put_sums(p, rgbr, refr);
}
