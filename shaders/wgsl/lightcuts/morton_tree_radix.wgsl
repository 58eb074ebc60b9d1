//! import shared/dispatch
// Stage 3 of the Morton light tree (lumbre_lightcuts::morton_tree's `radix_node`): internal
// node i of Karras's radix tree (2012) over n sorted keys, with the indices' bits after a
// key's when keys are equal. Writes (left, right, common prefix length, 0), children as
// node indices: internal g at g, leaf k at n - 1 + k.

struct Params {
    n: u32,
    _p0: u32,
    _p1: u32,
    _p2: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> keys: array<u32>;
@group(0) @binding(2) var<storage, read_write> topology: array<vec4<u32>>;

const WG: u32 = 256u;

fn delta(i: i32, j: i32) -> i32 {
    if j < 0 || j >= i32(params.n) {
        return -1;
    }
    let a = keys[i];
    let b = keys[j];
    if a != b {
        return i32(countLeadingZeros(a ^ b));
    }
    return 32 + i32(countLeadingZeros(u32(i) ^ u32(j)));
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let t = flat_index(wid, nwg, lid, WG);
    if t + 1u >= params.n {
        return;
    }
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
    topology[t] = vec4<u32>(left, right, u32(d_node), 0u);
}
