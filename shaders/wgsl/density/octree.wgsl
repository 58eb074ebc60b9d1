//! import shared/dispatch
//! import density/crossing
//! import density/fixed
//! import density/boxes
// The paper's octree, one level at a time; each entry point is the twin of the function of
// the same name in lumbre_density's octree.rs. Every entry point takes the same binding list
// and uses part of it.

struct Params {
    // min corner of the root box, and the depth limit
    lo: vec3<f32>,
    depth: u32,
    // 2^depth / root size, and the level being processed
    inv_finest: vec3<f32>,
    level: u32,
    // cell size of the children's level, and the box padding
    step: vec3<f32>,
    pad: f32,
    // threads that do work
    count: u32,
    // entries of the kind being filtered (E), split nodes of the level (S)
    entries: u32,
    splits: u32,
    leaf_pairs: u32,
    // 0: segments, 1: disks
    kind: u32,
    scale: f32,
    _pad: vec2<u32>,
}

struct Node {
    cell: vec3<u32>,
    state: u32,
    seg: vec2<u32>,
    disk: vec2<u32>,
}

const DEAD: u32 = 0u;
const LEAF: u32 = 1u;
const SPLIT: u32 = 2u;
const WG: u32 = 256u;

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> seg_geom: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> seg_power: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> disks: array<DiskData>;
// min corner, max corner per disk
@group(0) @binding(4) var<storage, read> disk_boxes: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read_write> nodes: array<Node>;
@group(0) @binding(6) var<storage, read> seg_items: array<u32>;
@group(0) @binding(7) var<storage, read> disk_items: array<u32>;
@group(0) @binding(8) var<storage, read> disk_node: array<u32>;
// the entries of the kind being filtered, and their nodes
@group(0) @binding(9) var<storage, read> items: array<u32>;
@group(0) @binding(10) var<storage, read> item_node: array<u32>;
@group(0) @binding(11) var<storage, read_write> split: array<u32>;
// exclusive scan of split
@group(0) @binding(12) var<storage, read> rank: array<u32>;
@group(0) @binding(13) var<storage, read_write> split_list: array<u32>;
@group(0) @binding(14) var<storage, read_write> flags: array<u32>;
// positions kept by the compaction of flags
@group(0) @binding(15) var<storage, read> kept: array<u32>;
@group(0) @binding(16) var<storage, read_write> next_items: array<u32>;
@group(0) @binding(17) var<storage, read_write> next_node: array<u32>;
@group(0) @binding(18) var<storage, read_write> next_nodes: array<Node>;
// eight words per disk: count, spare, low and high words of r, g, b
@group(0) @binding(19) var<storage, read_write> acc: array<atomic<u32>>;
// (low, high) words of node visits (unused here), then of pairs tested
@group(0) @binding(20) var<storage, read_write> counters: array<atomic<u32>>;

var<workgroup> wg_tested: array<atomic<u32>, 2>;

fn atomic_add64(buf_index: u32, v: vec2<u32>) {
    var carry = 0u;
    if v.x != 0u {
        let old = atomicAdd(&acc[buf_index], v.x);
        carry = select(0u, 1u, old + v.x < old);
    }
    if v.y + carry != 0u {
        atomicAdd(&acc[buf_index + 1u], v.y + carry);
    }
}

fn wg_add_tested(n: u32) {
    let old = atomicAdd(&wg_tested[0], n);
    if old + n < old {
        atomicAdd(&wg_tested[1], 1u);
    }
}

fn add_tested(v: vec2<u32>) {
    let old = atomicAdd(&counters[2], v.x);
    let carry = select(0u, 1u, old + v.x < old);
    if v.y + carry != 0u {
        atomicAdd(&counters[3], v.y + carry);
    }
}

fn child_cell(cell: vec3<u32>, c: u32) -> vec3<u32> {
    return 2u * cell + vec3<u32>(c & 1u, (c >> 1u) & 1u, (c >> 2u) & 1u);
}

fn finest(p: vec3<f32>) -> vec3<u32> {
    let max_cell = f32((1u << params.depth) - 1u);
    return vec3<u32>(clamp(floor((p - params.lo) * params.inv_finest), vec3<f32>(0.0), vec3<f32>(max_cell)));
}

fn owns(cell: vec3<u32>, p: vec3<f32>) -> bool {
    return all((finest(p) >> vec3<u32>(params.depth - params.level)) == cell);
}

@compute @workgroup_size(256)
fn classify(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let i = flat_index(wid, nwg, lid, WG);
    if i >= params.count {
        return;
    }
    let n = nodes[i];
    let s = n.seg.y - n.seg.x;
    let d = n.disk.y - n.disk.x;
    var state = LEAF;
    if s == 0u || d == 0u {
        state = DEAD;
    } else if params.level < params.depth && s > params.leaf_pairs / d {
        state = SPLIT;
    }
    nodes[i].state = state;
    split[i] = select(0u, 1u, state == SPLIT);
}

// split_list[rank[i]] = i for every split node.
@compute @workgroup_size(256)
fn list_splits(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let i = flat_index(wid, nwg, lid, WG);
    if i < params.count && split[i] != 0u {
        split_list[rank[i]] = i;
    }
}

// One thread per disk entry of a leaf: its disk against the leaf's segments.
@compute @workgroup_size(256)
fn leaves(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let e = flat_index(wid, nwg, lid, WG);
    if lid < 2u {
        atomicStore(&wg_tested[lid], 0u);
    }
    workgroupBarrier();
    var tested = 0u;
    if e < params.count {
        let node = nodes[disk_node[e]];
        if node.state == LEAF {
            let d = disk_items[e];
            let disk = disks[d];
            var count = 0u;
            var r = vec2<u32>(0u);
            var g = vec2<u32>(0u);
            var b = vec2<u32>(0u);
            for (var k = node.seg.x; k < node.seg.y; k++) {
                let s = seg_items[k];
                let hit = crossing(seg_geom[2u * s].xyz, seg_geom[2u * s + 1u].xyz, disk);
                if hit.w != 0.0 && owns(node.cell, hit.xyz) {
                    let p = seg_power[s].xyz;
                    count += 1u;
                    r = add64(r, quantize(p.x, params.scale));
                    g = add64(g, quantize(p.y, params.scale));
                    b = add64(b, quantize(p.z, params.scale));
                }
            }
            tested = node.seg.y - node.seg.x;
            if count != 0u {
                atomicAdd(&acc[8u * d], count);
                atomic_add64(8u * d + 2u, r);
                atomic_add64(8u * d + 4u, g);
                atomic_add64(8u * d + 6u, b);
            }
        }
    }
    wg_add_tested(tested);
    workgroupBarrier();
    if lid == 0u {
        add_tested(vec2<u32>(atomicLoad(&wg_tested[0]), atomicLoad(&wg_tested[1])));
    }
}

// flags[c * E + e]: whether entry e's item touches child c of its split node.
@compute @workgroup_size(256)
fn child_flags(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let j = flat_index(wid, nwg, lid, WG);
    if j >= params.count {
        return;
    }
    let c = j / params.entries;
    let e = j % params.entries;
    let node = nodes[item_node[e]];
    var keep = false;
    if node.state == SPLIT {
        let cell = vec3<f32>(child_cell(node.cell, c));
        let lo = params.lo + cell * params.step - vec3<f32>(params.pad);
        let hi = params.lo + (cell + vec3<f32>(1.0)) * params.step + vec3<f32>(params.pad);
        let i = items[e];
        if params.kind == 0u {
            keep = seg_hits(seg_ray(seg_geom[2u * i].xyz, seg_geom[2u * i + 1u].xyz, 0.5 * params.pad), lo, hi);
        } else {
            keep = boxes_overlap(disk_boxes[2u * i].xyz, disk_boxes[2u * i + 1u].xyz, lo, hi);
        }
    }
    flags[j] = select(0u, 1u, keep);
}

// The next level's nodes: c * S + r is octant c of the r-th split node.
@compute @workgroup_size(256)
fn children(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let m = flat_index(wid, nwg, lid, WG);
    if m >= params.count {
        return;
    }
    let parent = nodes[split_list[m % params.splits]];
    next_nodes[m] = Node(child_cell(parent.cell, m / params.splits), DEAD, vec2<u32>(0u), vec2<u32>(0u));
}

// Kept position j = c * E + e becomes entry k of the next level.
@compute @workgroup_size(256)
fn gather(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let k = flat_index(wid, nwg, lid, WG);
    if k >= params.count {
        return;
    }
    let j = kept[k];
    let c = j / params.entries;
    let e = j % params.entries;
    next_items[k] = items[e];
    next_node[k] = c * params.splits + rank[item_node[e]];
}

// Where each node's run of entries (of the kind) starts and ends.
@compute @workgroup_size(256)
fn ranges(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let k = flat_index(wid, nwg, lid, WG);
    if k >= params.count {
        return;
    }
    let node = next_node[k];
    let first = k == 0u || next_node[k - 1u] != node;
    let last = k + 1u == params.count || next_node[k + 1u] != node;
    if params.kind == 0u {
        if first {
            next_nodes[node].seg.x = k;
        }
        if last {
            next_nodes[node].seg.y = k + 1u;
        }
    } else {
        if first {
            next_nodes[node].disk.x = k;
        }
        if last {
            next_nodes[node].disk.y = k + 1u;
        }
    }
}
