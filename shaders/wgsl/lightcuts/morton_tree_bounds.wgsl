//! import shared/dispatch
//! import lightcuts/light
// Stage 4 of the Morton light tree (lumbre_lightcuts::morton_tree's `tree_bounds`): the
// leaves from the sorted VPLs (`leaves`), then the clusters of one common-prefix length per
// dispatch (`level`), longest first: a node's children have longer prefixes, so they are
// done when it is computed.

struct Params {
    n: u32,
    seed: u32,
    level: u32,
    _p0: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
// three vec4 per VPL: position, normal, intensity
@group(0) @binding(1) var<storage, read> vpls: array<vec4<f32>>;
// VPL indices in key order (the sort's values)
@group(0) @binding(2) var<storage, read> order: array<u32>;
// the radix tree of the sorted keys (lumbre_morton::RadixNode: left, right, common prefix,
// parent; leaf k is n - 1 + k)
@group(0) @binding(3) var<storage, read> topology: array<vec4<u32>>;
@group(0) @binding(4) var<storage, read_write> nodes: array<LightNode>;

const WG: u32 = 256u;

@compute @workgroup_size(256)
fn leaves(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let k = flat_index(wid, nwg, lid, WG);
    if k >= params.n {
        return;
    }
    let v = order[k];
    let p = vpls[3u * v].xyz;
    nodes[params.n - 1u + k] = LightNode(p, LEAF, p, LEAF, vpls[3u * v + 1u].xyz, 1.0, vpls[3u * v + 2u].xyz, v);
}

@compute @workgroup_size(256)
fn level(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let i = flat_index(wid, nwg, lid, WG);
    if i + 1u >= params.n {
        return;
    }
    let t = topology[i];
    if t.z != params.level {
        return;
    }
    nodes[i] = merge_nodes(nodes[t.x], t.x, nodes[t.y], t.y, i, params.seed);
}
