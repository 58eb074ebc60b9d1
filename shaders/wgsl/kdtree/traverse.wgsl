//! module
//! import kdtree/ray
// Kd-tree ray queries, a line-by-line port of lumbre-kdtree's traverse.rs and aabb.rs (same
// conventions: hits need t_min < t < t_max; parallel axes are those with a direction
// component below f32's smallest normal; leaves test their triangles against the whole
// remaining interval).
//
// The tree is bindings 1 and 2 of group 0 (lumbre_kdtree::GpuKdTree::bindings; its triangles
// are kdtree/ray's binding 3); the includer defines KD_SHORT_STACK (16; 2 in tests, to
// exercise the restart fallback) and passes the tree's bounds to the queries.

// KdNode { a, b }
@group(0) @binding(1) var<storage, read> kd_nodes: array<vec2<u32>>;
// leaf triangle indices
@group(0) @binding(2) var<storage, read> kd_prims: array<u32>;

const KD_MAX_DEPTH: u32 = 64u;

// The tree's box against the ray, widened by a few ulps: (t0, t1, 1) or (_, _, 0).
fn kd_clip(r: RayPrep, bmin: vec3<f32>, bmax: vec3<f32>, t_min: f32, t_max: f32) -> vec3<f32> {
    if !r.valid {
        return vec3<f32>(0.0);
    }
    var t0 = t_min;
    var t1 = t_max;
    for (var k = 0u; k < 3u; k++) {
        let o = comp(r.o, k);
        let lo = comp(bmin, k);
        let hi = comp(bmax, k);
        if comp_b(r.par, k) {
            if !(o >= lo && o <= hi) {
                return vec3<f32>(0.0);
            }
            continue;
        }
        let inv = comp(r.inv, k);
        var near = lo;
        var far = hi;
        if !(inv >= 0.0) {
            near = hi;
            far = lo;
        }
        var tn = (near - o) * inv;
        var tf = (far - o) * inv;
        tn = tn * select(1.0 + SLAB_SLACK, 1.0 - SLAB_SLACK, tn > 0.0);
        tf = tf * select(1.0 - SLAB_SLACK, 1.0 + SLAB_SLACK, tf > 0.0);
        if tn > t0 {
            t0 = tn;
        }
        if tf < t1 {
            t1 = tf;
        }
    }
    return vec3<f32>(t0, t1, select(0.0, 1.0, t0 <= t1));
}

fn kd_is_leaf(n: vec2<u32>) -> bool {
    return (n.y & 3u) == 3u;
}

// Tests the leaf's triangles against (t_min, best.t); returns whether any was hit.
fn kd_test_leaf(r: RayPrep, watertight: bool, n: vec2<u32>, t_min: f32, best: ptr<function, KdHit>) -> bool {
    let first = n.x;
    let count = n.y >> 2u;
    var found = false;
    for (var k = 0u; k < count; k++) {
        let tri = kd_prims[first + k];
        let h = tri_test(watertight, r, kd_vertex(tri, 0u), kd_vertex(tri, 1u), kd_vertex(tri, 2u), t_min, (*best).t);
        if h.w != 0.0 {
            *best = KdHit(h.x, tri, h.y, h.z);
            found = true;
        }
    }
    return found;
}

// Entries of the stack traversal's short stack (Horn et al. 2007): a ring buffer that, when
// full, overwrites its oldest entry, the farthest pending subtree. Everything nearer is still
// visited in order, so when the stack runs dry after such a loss the walk restarts from the
// root at the exit of the last leaf (as KD-restart does): exact results with a small stack.
// The includer defines KD_SHORT_STACK (`//! define`).

// Stack traversal: closest hit (or, with `any`, the first found). Its descent step repeats
// kd_restart's on purpose: folded into a function returning a struct, both traversals ran
// slower on NVIDIA (see docs/tuning-log.md).
fn kd_stack(r: RayPrep, watertight: bool, any_hit: bool, bmin: vec3<f32>, bmax: vec3<f32>, t_min: f32, t_max: f32) -> KdHit {
    var best = KdHit(t_max, KD_NONE, 0.0, 0.0);
    let seg = kd_clip(r, bmin, bmax, t_min, t_max);
    if seg.z == 0.0 {
        return best;
    }
    // (node, t0 bits, t1 bits) per entry.
    var st: array<vec3<u32>, KD_SHORT_STACK>;
    var head = 0u;
    var count = 0u;
    var node = 0u;
    var t0 = seg.x;
    var t1 = seg.y;
    var dropped = false;
    loop {
        loop {
            let n = kd_nodes[node];
            if kd_is_leaf(n) {
                break;
            }
            let axis = n.y & 3u;
            let split = bitcast<f32>(n.x);
            let below = node + 1u;
            let above = n.y >> 2u;
            let o = comp(r.o, axis);
            if comp_b(r.par, axis) {
                node = select(above, below, o <= split);
                continue;
            }
            let t_split = (split - o) * comp(r.inv, axis);
            var near = above;
            var far = below;
            if comp(r.d, axis) > 0.0 {
                near = below;
                far = above;
            }
            if t_split > t1 {
                node = near;
            } else if t_split < t0 {
                node = far;
            } else {
                st[head] = vec3<u32>(far, bitcast<u32>(t_split), bitcast<u32>(t1));
                head = (head + 1u) % KD_SHORT_STACK;
                if count == KD_SHORT_STACK {
                    dropped = true;
                } else {
                    count += 1u;
                }
                node = near;
                t1 = t_split;
            }
        }
        if kd_test_leaf(r, watertight, kd_nodes[node], t_min, &best) && any_hit {
            return best;
        }
        var next = false;
        loop {
            if count == 0u {
                break;
            }
            head = (head + KD_SHORT_STACK - 1u) % KD_SHORT_STACK;
            count -= 1u;
            if bitcast<f32>(st[head].y) <= best.t {
                next = true;
                break;
            }
        }
        if next {
            let e = st[head];
            node = e.x;
            t0 = bitcast<f32>(e.y);
            t1 = bitcast<f32>(e.z);
            continue;
        }
        // Stack empty: done, unless far children were dropped; then restart from the root
        // beyond the last leaf, keeping only the part that can still beat the best hit.
        if !dropped || t1 >= seg.y || best.t <= t1 {
            return best;
        }
        dropped = false;
        node = 0u;
        t0 = t1;
        t1 = seg.y;
    }
    return best;
}

// KD-restart (Foley and Sugerman 2005): stackless.
fn kd_restart(r: RayPrep, watertight: bool, any_hit: bool, bmin: vec3<f32>, bmax: vec3<f32>, t_min: f32, t_max: f32) -> KdHit {
    var best = KdHit(t_max, KD_NONE, 0.0, 0.0);
    let seg = kd_clip(r, bmin, bmax, t_min, t_max);
    if seg.z == 0.0 {
        return best;
    }
    var t_lo = seg.x;
    var first = true;
    loop {
        var node = 0u;
        let t0 = t_lo;
        var t1 = seg.y;
        loop {
            let n = kd_nodes[node];
            if kd_is_leaf(n) {
                break;
            }
            let axis = n.y & 3u;
            let split = bitcast<f32>(n.x);
            let below = node + 1u;
            let above = n.y >> 2u;
            let o = comp(r.o, axis);
            if comp_b(r.par, axis) {
                node = select(above, below, o <= split);
                continue;
            }
            let t_split = (split - o) * comp(r.inv, axis);
            var near = above;
            var far = below;
            if comp(r.d, axis) > 0.0 {
                near = below;
                far = above;
            }
            if t_split < t0 || (t_split == t0 && !first) {
                node = far;
            } else {
                node = near;
                if t_split < t1 {
                    t1 = t_split;
                }
            }
        }
        if kd_test_leaf(r, watertight, kd_nodes[node], t_min, &best) && any_hit {
            return best;
        }
        if best.t <= t1 || t1 >= seg.y {
            return best;
        }
        t_lo = t1;
        first = false;
    }
    return best;
}

fn kd_query(r: RayPrep, restart: bool, watertight: bool, any_hit: bool, bmin: vec3<f32>, bmax: vec3<f32>, t_min: f32, t_max: f32) -> KdHit {
    if restart {
        return kd_restart(r, watertight, any_hit, bmin, bmax, t_min, t_max);
    }
    return kd_stack(r, watertight, any_hit, bmin, bmax, t_min, t_max);
}

// The query every triangle kernel calls, kd-tree or BVH (kdtree/bvh has the same): flags bit 0
// the restart traversal, bit 1 the watertight test; bmin and bmax the tree's box.
fn tree_query(r: RayPrep, flags: u32, any_hit: bool, bmin: vec3<f32>, bmax: vec3<f32>, t_min: f32, t_max: f32) -> KdHit {
    return kd_query(r, (flags & 1u) != 0u, (flags & 2u) != 0u, any_hit, bmin, bmax, t_min, t_max);
}
