//! module
//! import kdtree/ray
// BVH ray queries: a stack of node indices; at each node both children's boxes are tested,
// leaves among them at once, nearer first, and of two inner children the farther waits on the
// stack. Hits need t_min < t < t_max. The CPU (lumbre-kdtree's bvh/traverse.rs) walks the
// same tree eight children at a time with the same slab arithmetic, so both test the same
// boxes; a four-wide walk here ran slower (docs/tuning-log.md).
//
// The nodes are binding 1 of group 0 (lumbre_kdtree::GpuBvh::bindings), four vec4 a node
// (BvhNode): a's lowest corner and a's reference, a's highest corner and b's reference, b's
// lowest corner and a's triangle count, b's highest corner and b's count (0: the reference is
// a node). Binding 2 holds the leaves' triangles in leaf order, three vec4 each, the first's w
// the triangle's index: a leaf reads its triangles in one run, without the indirection
// through Bvh::prim_indices that the CPU takes. Binding 3 is kdtree/ray's.

@group(0) @binding(1) var<storage, read> bvh_nodes: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> bvh_tris: array<vec4<f32>>;

const BVH_MAX_DEPTH: u32 = 64u;

// 1 / d, with the parallel axes' components replaced by a huge value of the same sign
// (bvh/traverse.rs, box_inverse): never NaN against a finite box.
fn bvh_inverse(r: RayPrep) -> vec3<f32> {
    let huge = bitcast<vec3<u32>>(vec3<f32>(1.0 / MIN_NORMAL));
    let signed = bitcast<vec3<f32>>((bitcast<vec3<u32>>(r.d) & vec3<u32>(0x80000000u)) | huge);
    return select(r.inv, signed, r.par);
}

// Tests the leaf of `count` triangles from `first` against (t_min, best.t), keeping the
// closest hit; true when an any-hit query may stop.
fn bvh_leaf(r: RayPrep, watertight: bool, any_hit: bool, first: u32, count: u32, t_min: f32, best: ptr<function, KdHit>) -> bool {
    for (var k = first; k < first + count; k++) {
        let p0 = bvh_tris[3u * k];
        let h = tri_test(watertight, r, p0.xyz, bvh_tris[3u * k + 1u].xyz, bvh_tris[3u * k + 2u].xyz, t_min, (*best).t);
        if h.w != 0.0 {
            *best = KdHit(h.x, bitcast<u32>(p0.w), h.y, h.z);
            if any_hit {
                return true;
            }
        }
    }
    return false;
}

// Closest hit (or, with `any_hit`, the first found). The two children's box tests are
// written out rather than called: the kd-tree's traversal ran slower with its step in a
// function (docs/tuning-log.md).
fn bvh_query(r: RayPrep, watertight: bool, any_hit: bool, t_min: f32, t_max: f32) -> KdHit {
    var best = KdHit(t_max, KD_NONE, 0.0, 0.0);
    if !r.valid {
        return best;
    }
    let inv = bvh_inverse(r);
    let neg = inv < vec3<f32>(0.0);
    var stack: array<u32, BVH_MAX_DEPTH>;
    var sp = 0u;
    var node = 0u;
    loop {
        let n0 = bvh_nodes[4u * node];
        let n1 = bvh_nodes[4u * node + 1u];
        let n2 = bvh_nodes[4u * node + 2u];
        let n3 = bvh_nodes[4u * node + 3u];
        let la = (n0.xyz - r.o) * inv;
        let ha = (n1.xyz - r.o) * inv;
        let na = select(la, ha, neg);
        let fa = select(ha, la, neg);
        var ta = max(max(na.x, na.y), max(na.z, t_min));
        var ea = min(min(fa.x, fa.y), min(fa.z, best.t));
        ta = ta * select(1.0 + SLAB_SLACK, 1.0 - SLAB_SLACK, ta > 0.0);
        ea = ea * select(1.0 - SLAB_SLACK, 1.0 + SLAB_SLACK, ea > 0.0);
        let lb = (n2.xyz - r.o) * inv;
        let hb = (n3.xyz - r.o) * inv;
        let nb = select(lb, hb, neg);
        let fb = select(hb, lb, neg);
        var tb = max(max(nb.x, nb.y), max(nb.z, t_min));
        var eb = min(min(fb.x, fb.y), min(fb.z, best.t));
        tb = tb * select(1.0 + SLAB_SLACK, 1.0 - SLAB_SLACK, tb > 0.0);
        eb = eb * select(1.0 - SLAB_SLACK, 1.0 + SLAB_SLACK, eb > 0.0);
        var hit_a = ta <= ea;
        var hit_b = tb <= eb;
        var ref_a = bitcast<u32>(n0.w);
        var ref_b = bitcast<u32>(n1.w);
        var cnt_a = bitcast<u32>(n2.w);
        var cnt_b = bitcast<u32>(n3.w);
        // The nearer child first.
        if hit_a && hit_b && tb < ta {
            let t = ta;
            ta = tb;
            tb = t;
            let f = ref_a;
            ref_a = ref_b;
            ref_b = f;
            let c = cnt_a;
            cnt_a = cnt_b;
            cnt_b = c;
        }
        var next = KD_NONE;
        var push = KD_NONE;
        if hit_a {
            if cnt_a == 0u {
                next = ref_a;
            } else if ta <= best.t && bvh_leaf(r, watertight, any_hit, ref_a, cnt_a, t_min, &best) {
                return best;
            }
        }
        if hit_b {
            if cnt_b == 0u {
                if next == KD_NONE {
                    next = ref_b;
                } else {
                    push = ref_b;
                }
            } else if tb <= best.t && bvh_leaf(r, watertight, any_hit, ref_b, cnt_b, t_min, &best) {
                return best;
            }
        }
        if push != KD_NONE {
            stack[sp] = push;
            sp += 1u;
        }
        if next == KD_NONE {
            if sp == 0u {
                break;
            }
            sp -= 1u;
            next = stack[sp];
        }
        node = next;
    }
    return best;
}

// The query every triangle kernel calls (kdtree/traverse has the same): flags bit 1 the
// watertight test; the restart bit and the tree's box are the kd-tree's and unused here.
fn tree_query(r: RayPrep, flags: u32, any_hit: bool, bmin: vec3<f32>, bmax: vec3<f32>, t_min: f32, t_max: f32) -> KdHit {
    return bvh_query(r, (flags & 2u) != 0u, any_hit, t_min, t_max);
}
