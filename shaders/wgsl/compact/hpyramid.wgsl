//! import shared/dispatch
// The histogram pyramid of the density-estimation paper (Ziegler et al.'s HistoPyramid):
// a 4-ary reduction tree over the keep flags (a 2D quadtree in Z order), built bottom-up
// one level per pass, then traversed top-down once per output element. Level l is stored
// as vec4 tuples: the counts of the 4 children of each level-(l+1) node.

struct HpParams {
    n: u32,
    // level being built (reduce) or the number of levels (traverse)
    level: u32,
    // added to emitted indices (inputs longer than one binding are run in pieces)
    index_base: u32,
    // offsets (in vec4 units) of each level inside `pyramid`; level 0 is the flags themselves
    offsets: array<vec4<u32>, 4>,
    // entries in the level being built
    count: u32,
    // bit 0: keep by predicate (v != 0 on values) else flags; bit 1: output indices
    mode: u32,
}

@group(0) @binding(0) var<uniform> params: HpParams;
@group(0) @binding(1) var<storage, read> values: array<u32>;
@group(0) @binding(2) var<storage, read> flags: array<u32>;
@group(0) @binding(3) var<storage, read_write> pyramid: array<vec4<u32>>;
@group(0) @binding(4) var<storage, read_write> out: array<u32>;

const WG: u32 = 256u;

fn level_offset(l: u32) -> u32 {
    return params.offsets[l / 4u][l % 4u];
}

fn keep(g: u32) -> u32 {
    if g >= params.n {
        return 0u;
    }
    if (params.mode & 1u) != 0u {
        return select(0u, 1u, values[g] != 0u);
    }
    return select(0u, 1u, flags[g] != 0u);
}

// Level 1: node i counts the keep flags of elements 4i .. 4i + 3.
@compute @workgroup_size(256)
fn base(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let i = flat_index(wid, nwg, lid, WG);
    if i >= params.count {
        return;
    }
    let c = vec4<u32>(keep(4u * i), keep(4u * i + 1u), keep(4u * i + 2u), keep(4u * i + 3u));
    let dst = level_offset(1u);
    // Level 1 is stored as tuples of 4 siblings too.
    pyramid[dst + i / 4u][i % 4u] = c.x + c.y + c.z + c.w;
}

// Level `params.level` from level - 1: node i sums the vec4 tuple of its children.
@compute @workgroup_size(256)
fn reduce(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let i = flat_index(wid, nwg, lid, WG);
    if i >= params.count {
        return;
    }
    let c = pyramid[level_offset(params.level - 1u) + i];
    pyramid[level_offset(params.level) + i / 4u][i % 4u] = c.x + c.y + c.z + c.w;
}

// Output element k: descend from the top, at each level choosing the child whose range of
// kept elements contains k.
@compute @workgroup_size(256)
fn traverse(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let k = flat_index(wid, nwg, lid, WG);
    let top = params.level;
    let total = pyramid[level_offset(top)].x;
    if k >= total {
        return;
    }
    var node = 0u;
    var rest = k;
    for (var l = top; l >= 1u; l--) {
        let c = pyramid[level_offset(l) + node];
        var child = 0u;
        if rest >= c.x {
            rest -= c.x;
            child = 1u;
            if rest >= c.y {
                rest -= c.y;
                child = 2u;
                if rest >= c.z {
                    rest -= c.z;
                    child = 3u;
                }
            }
        }
        node = 4u * node + child;
    }
    // node is now a level-1 entry; descend into its 4 elements.
    var g = 4u * node;
    for (var e = 0u; e < 4u; e++) {
        let kp = keep(4u * node + e);
        if kp == 1u {
            if rest == 0u {
                g = 4u * node + e;
                break;
            }
            rest -= 1u;
        }
    }
    out[k] = select(values[g], params.index_base + g, (params.mode & 2u) != 0u);
}
