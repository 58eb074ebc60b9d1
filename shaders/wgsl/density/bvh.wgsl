//! import shared/dispatch
//! import morton/code
//! import density/crossing
//! import density/fixed
//! import density/boxes
//! import density/ordered
// The linear BVH over the disks, and its traversal by every segment; each entry point is
// the twin of the function of the same name in lumbre_density's bvh/ (the GPU's
// `gather` and `unsort` included; segment order by record_sort_bits on `segment_keys`).

struct Params {
    // min corner of the disk centres, and the number of disks
    lo: vec3<f32>,
    disks: u32,
    // 1024 / size of the disk centres' box, and the threads that do work
    inv: vec3<f32>,
    count: u32,
    // the root box's min corner (origin of the quantized node boxes), half the box padding
    root_lo: vec3<f32>,
    tau: f32,
    // root size / 65535 (a quantization step), and the fixed-point scale 2^k
    step: vec3<f32>,
    scale: f32,
    // 65535 / root size
    qinv: vec3<f32>,
    _p0: u32,
    // 1024 / root size (Morton codes of segment midpoints)
    seg_inv: vec3<f32>,
    _p1: u32,
}

const WG: u32 = 256u;
const LEAF_BIT: u32 = 0x80000000u;
const NONE: u32 = 0xffffffffu;
// Radix trees of 30-bit codes with index tie-breaks are at most 64 inner nodes deep.
const STACK: u32 = 68u;

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> seg_geom: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> seg_power: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> disks: array<DiskData>;
@group(0) @binding(4) var<storage, read> disk_boxes: array<vec4<f32>>;
// Morton codes of the disk centres, then sorted
@group(0) @binding(5) var<storage, read_write> codes: array<u32>;
// disk index of each sorted position
@group(0) @binding(6) var<storage, read_write> order: array<u32>;
// the radix tree of the sorted codes (lumbre_morton::RadixNode: left, right, prefix, parent;
// inner node g is g, the disk at sorted position k is disks - 1 + k), and each leaf's parent
@group(0) @binding(7) var<storage, read> tree: array<vec4<u32>>;
@group(0) @binding(8) var<storage, read> leaf_parents: array<u32>;
// inner boxes, six order-preserving words each (lo xyz, hi xyz)
@group(0) @binding(9) var<storage, read_write> boxes: array<atomic<u32>>;
// two vec4<u32> per inner node: both children's quantized boxes (six words), then the
// children
@group(0) @binding(10) var<storage, read_write> nodes: array<vec4<u32>>;
// the disks in tree order
@group(0) @binding(11) var<storage, read_write> sorted_disks: array<DiskData>;
// eight words per sorted position: count, spare, low and high words of r, g, b
@group(0) @binding(12) var<storage, read_write> acc_sorted: array<atomic<u32>>;
// (low, high) words of node visits, then of disks tested
@group(0) @binding(13) var<storage, read_write> counters: array<atomic<u32>>;
// Morton codes of the segments' midpoints, and the segments in their order
@group(0) @binding(14) var<storage, read_write> seg_keys: array<u32>;
@group(0) @binding(15) var<storage, read_write> seg_order: array<u32>;
// eight words per disk, in the disks' order
@group(0) @binding(16) var<storage, read_write> acc: array<u32>;

var<workgroup> wg_counts: array<atomic<u32>, 4>;

@compute @workgroup_size(256)
fn morton(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let i = flat_index(wid, nwg, lid, WG);
    if i >= params.disks {
        return;
    }
    let cell = vec3<u32>(clamp(floor((disks[i].centre - params.lo) * params.inv), vec3<f32>(0.0), vec3<f32>(1023.0)));
    codes[i] = encode_u32(cell);
}

// The inner boxes emptied, for `refit` to grow (its starting boxes on the CPU).
@compute @workgroup_size(256)
fn empty_boxes(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let t = flat_index(wid, nwg, lid, WG);
    if t >= params.count {
        return;
    }
    for (var k = 0u; k < 3u; k++) {
        atomicStore(&boxes[6u * t + k], 0xffffffffu);
        atomicStore(&boxes[6u * t + 3u + k], 0u);
    }
}

// One thread per leaf: its disk's box carried up until an ancestor already holds it.
@compute @workgroup_size(256)
fn refit(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let p = flat_index(wid, nwg, lid, WG);
    if p >= params.count {
        return;
    }
    let d = order[p];
    let lo = disk_boxes[2u * d].xyz;
    let hi = disk_boxes[2u * d + 1u].xyz;
    let lo_w = vec3<u32>(ordered_encode(lo.x), ordered_encode(lo.y), ordered_encode(lo.z));
    let hi_w = vec3<u32>(ordered_encode(hi.x), ordered_encode(hi.y), ordered_encode(hi.z));
    var node = leaf_parents[p];
    while node != NONE {
        var changed = false;
        for (var k = 0u; k < 3u; k++) {
            let old_lo = atomicMin(&boxes[6u * node + k], lo_w[k]);
            let old_hi = atomicMax(&boxes[6u * node + 3u + k], hi_w[k]);
            changed = changed || old_lo > lo_w[k] || old_hi < hi_w[k];
        }
        if !changed {
            break;
        }
        node = tree[node].w;
    }
}

// The disks in tree order.
@compute @workgroup_size(256)
fn gather(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let p = flat_index(wid, nwg, lid, WG);
    if p < params.disks {
        sorted_disks[p] = disks[order[p]];
    }
}

// Three words holding the box [lo, hi] in 16-bit steps of the root box, rounded outwards
// by one step more than needed.
fn quantize_box(lo: vec3<f32>, hi: vec3<f32>) -> vec3<u32> {
    let top = vec3<f32>(65535.0);
    let ql = vec3<u32>(clamp(floor((lo - params.root_lo) * params.qinv) - vec3<f32>(1.0), vec3<f32>(0.0), top));
    let qh = vec3<u32>(clamp(ceil((hi - params.root_lo) * params.qinv) + vec3<f32>(1.0), vec3<f32>(0.0), top));
    return vec3<u32>(ql.x | (ql.y << 16u), ql.z | (qh.x << 16u), qh.y | (qh.z << 16u));
}

// A child of the radix tree as the packed nodes name it: an inner node by its index, a disk
// by LEAF_BIT | its sorted position (lumbre_density's bvh/build.rs `children`).
fn child_ref(c: u32) -> u32 {
    let inner = params.disks - 1u;
    if c >= inner {
        return LEAF_BIT | (c - inner);
    }
    return c;
}

// Inner nodes with both children's quantized boxes; leaves refer to sorted positions. A
// one-disk tree is one node whose second child is NONE.
@compute @workgroup_size(256)
fn pack(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let i = flat_index(wid, nwg, lid, WG);
    if i >= params.count {
        return;
    }
    var ch = vec2<u32>(LEAF_BIT, NONE);
    if params.disks > 1u {
        ch = vec2<u32>(child_ref(tree[i].x), child_ref(tree[i].y));
    }
    var q: array<vec3<u32>, 2>;
    for (var k = 0u; k < 2u; k++) {
        let c = ch[k];
        q[k] = vec3<u32>(0u);
        if c == NONE {
            continue;
        }
        if (c & LEAF_BIT) != 0u {
            let d = order[c & ~LEAF_BIT];
            q[k] = quantize_box(disk_boxes[2u * d].xyz, disk_boxes[2u * d + 1u].xyz);
        } else {
            let w = 6u * c;
            let lo = vec3<f32>(ordered_decode(atomicLoad(&boxes[w])), ordered_decode(atomicLoad(&boxes[w + 1u])), ordered_decode(atomicLoad(&boxes[w + 2u])));
            let hi = vec3<f32>(ordered_decode(atomicLoad(&boxes[w + 3u])), ordered_decode(atomicLoad(&boxes[w + 4u])), ordered_decode(atomicLoad(&boxes[w + 5u])));
            q[k] = quantize_box(lo, hi);
        }
    }
    nodes[2u * i] = vec4<u32>(q[0], q[1].x);
    nodes[2u * i + 1u] = vec4<u32>(q[1].y, q[1].z, ch.x, ch.y);
}

// Morton codes of the midpoints of this piece's segments.
@compute @workgroup_size(256)
fn segment_keys(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let s = flat_index(wid, nwg, lid, WG);
    if s >= params.count {
        return;
    }
    let m = (seg_geom[2u * s].xyz + seg_geom[2u * s + 1u].xyz) * 0.5;
    let cell = vec3<u32>(clamp(floor((m - params.root_lo) * params.seg_inv), vec3<f32>(0.0), vec3<f32>(1023.0)));
    seg_keys[s] = encode_u32(cell);
}

fn acc_add64(w: u32, v: vec2<u32>) {
    var carry = 0u;
    if v.x != 0u {
        let old = atomicAdd(&acc_sorted[w], v.x);
        carry = select(0u, 1u, old + v.x < old);
    }
    if v.y + carry != 0u {
        atomicAdd(&acc_sorted[w + 1u], v.y + carry);
    }
}

fn wg_add64(w: u32, v: u32) {
    let old = atomicAdd(&wg_counts[w], v);
    if old + v < old {
        atomicAdd(&wg_counts[w + 1u], 1u);
    }
}

fn counter_add64(w: u32, v: vec2<u32>) {
    let old = atomicAdd(&counters[w], v.x);
    let carry = select(0u, 1u, old + v.x < old);
    if v.y + carry != 0u {
        atomicAdd(&counters[w + 1u], v.y + carry);
    }
}

// Decodes three words of a quantized box and tests the segment against it.
fn hits_quantized(ray: SegRay, w0: u32, w1: u32, w2: u32) -> bool {
    let ql = vec3<f32>(f32(w0 & 0xffffu), f32(w0 >> 16u), f32(w1 & 0xffffu));
    let qh = vec3<f32>(f32(w1 >> 16u), f32(w2 & 0xffffu), f32(w2 >> 16u));
    return seg_hits(ray, params.root_lo + ql * params.step, params.root_lo + qh * params.step);
}

// One thread per segment, in the order of their midpoints' codes: down the tree, every
// disk it crosses gets its power at its sorted position.
@compute @workgroup_size(256)
fn traverse(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let t = flat_index(wid, nwg, lid, WG);
    if lid < 4u {
        atomicStore(&wg_counts[lid], 0u);
    }
    workgroupBarrier();
    var visited = 0u;
    var tested = 0u;
    if t < params.count && params.disks > 0u {
        let s = seg_order[t];
        let a = seg_geom[2u * s].xyz;
        let b = seg_geom[2u * s + 1u].xyz;
        let ray = seg_ray(a, b, params.tau);
        let p = seg_power[s].xyz;
        let q = array<vec2<u32>, 3>(quantize(p.x, params.scale), quantize(p.y, params.scale), quantize(p.z, params.scale));
        var stack: array<u32, STACK>;
        stack[0] = 0u;
        var sp = 1u;
        while sp > 0u {
            sp -= 1u;
            let n0 = nodes[2u * stack[sp]];
            let n1 = nodes[2u * stack[sp] + 1u];
            visited += 1u;
            for (var k = 0u; k < 2u; k++) {
                var c = n1.z;
                var hit = false;
                if k == 0u {
                    hit = c != NONE && hits_quantized(ray, n0.x, n0.y, n0.z);
                } else {
                    c = n1.w;
                    hit = c != NONE && hits_quantized(ray, n0.w, n1.x, n1.y);
                }
                if !hit {
                    continue;
                }
                if (c & LEAF_BIT) != 0u {
                    let d = c & ~LEAF_BIT;
                    tested += 1u;
                    if crossing(a, b, sorted_disks[d]).w != 0.0 {
                        atomicAdd(&acc_sorted[8u * d], 1u);
                        acc_add64(8u * d + 2u, q[0]);
                        acc_add64(8u * d + 4u, q[1]);
                        acc_add64(8u * d + 6u, q[2]);
                    }
                } else {
                    stack[sp] = c;
                    sp += 1u;
                }
            }
        }
    }
    wg_add64(0u, visited);
    wg_add64(2u, tested);
    workgroupBarrier();
    if lid == 0u {
        counter_add64(0u, vec2<u32>(atomicLoad(&wg_counts[0]), atomicLoad(&wg_counts[1])));
        counter_add64(2u, vec2<u32>(atomicLoad(&wg_counts[2]), atomicLoad(&wg_counts[3])));
    }
}

// The sums at sorted positions back at their disks.
@compute @workgroup_size(256)
fn unsort(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let p = flat_index(wid, nwg, lid, WG);
    if p >= params.disks {
        return;
    }
    let d = order[p];
    for (var w = 0u; w < 8u; w++) {
        acc[8u * d + w] = atomicLoad(&acc_sorted[8u * p + w]);
    }
}
