//! import shared/dispatch
// Karras's radix tree (2012) over n sorted codes, the twin of lumbre_morton's radix_tree.rs:
// thread i writes internal node i (its children, internal g as g and leaf k as n - 1 + k, and
// the common prefix of its codes, equal codes told apart by their positions' bits) and
// itself as its children's parent.

struct Params {
    n: u32,
    _p0: u32,
    _p1: u32,
    _p2: u32,
}

// lumbre_morton::RadixNode
struct RadixNode {
    left: u32,
    right: u32,
    prefix: u32,
    parent: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> codes: array<u32>;
@group(0) @binding(2) var<storage, read_write> nodes: array<RadixNode>;
@group(0) @binding(3) var<storage, read_write> leaf_parents: array<u32>;

const WG: u32 = 256u;
const NO_PARENT: u32 = 0xffffffffu;

// The common prefix of sorted codes i and j, with the positions' bits after the code's when
// the codes are equal; -1 outside 0..n.
fn delta(i: i32, j: i32) -> i32 {
    if j < 0 || j >= i32(params.n) {
        return -1;
    }
    let a = codes[i];
    let b = codes[j];
    if a != b {
        return i32(countLeadingZeros(a ^ b));
    }
    return 32 + i32(countLeadingZeros(u32(i) ^ u32(j)));
}

// Makes `child` of node `t` know its parent.
fn set_parent(child: u32, t: u32) {
    if child >= params.n - 1u {
        leaf_parents[child - (params.n - 1u)] = t;
    } else {
        nodes[child].parent = t;
    }
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let t = flat_index(wid, nwg, lid, WG);
    if params.n == 1u && t == 0u {
        leaf_parents[0] = NO_PARENT;
    }
    if t + 1u >= params.n {
        return;
    }
    // The run's direction, its other end (exponential, then binary search), the split.
    let i = i32(t);
    var d = -1;
    if delta(i, i + 1) > delta(i, i - 1) {
        d = 1;
    }
    let d_min = delta(i, i - d);
    var l_max = 2;
    while delta(i, i + l_max * d) > d_min {
        l_max *= 2;
    }
    var l = 0;
    for (var s = l_max / 2; s >= 1; s /= 2) {
        if delta(i, i + (l + s) * d) > d_min {
            l += s;
        }
    }
    let j = i + l * d;
    let d_node = delta(i, j);
    var s = 0;
    var step = l;
    loop {
        step = (step + 1) / 2;
        if delta(i, i + (s + step) * d) > d_node {
            s += step;
        }
        if step <= 1 {
            break;
        }
    }
    let gamma = i + s * d + min(d, 0);
    let leaf0 = i32(params.n) - 1;
    var left = u32(gamma);
    if min(i, j) == gamma {
        left = u32(leaf0 + gamma);
    }
    var right = u32(gamma + 1);
    if max(i, j) == gamma + 1 {
        right = u32(leaf0 + gamma + 1);
    }
    nodes[t].left = left;
    nodes[t].right = right;
    nodes[t].prefix = u32(d_node);
    if t == 0u {
        nodes[0].parent = NO_PARENT;
    }
    set_parent(left, t);
    set_parent(right, t);
}
