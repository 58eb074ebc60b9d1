//! module
// Kd-tree ray queries, a line-by-line port of lumbre-kdtree's traverse.rs, triangle.rs and
// aabb.rs (same conventions: hits need t_min < t < t_max; parallel axes are those with a
// direction component below f32's smallest normal; leaves test their triangles against the
// whole remaining interval).
//
// The tree is bindings 1 to 3 of group 0 (lumbre_kdtree::GpuKdTree::bindings); the includer
// defines KD_SHORT_STACK (16; 2 in tests, to exercise the restart fallback) and passes the
// tree's bounds to the queries.

// KdNode { a, b }
@group(0) @binding(1) var<storage, read> kd_nodes: array<vec2<u32>>;
@group(0) @binding(2) var<storage, read> kd_prims: array<u32>;
// three vertices per triangle, in the caller's order
@group(0) @binding(3) var<storage, read> kd_tris: array<vec4<f32>>;

const KD_MAX_DEPTH: u32 = 64u;
const KD_NONE: u32 = 0xffffffffu;
const SLAB_SLACK: f32 = 4.0 * 1.1920929e-7;
const MIN_NORMAL: f32 = 1.17549435e-38;

struct RayPrep {
    o: vec3<f32>,
    d: vec3<f32>,
    inv: vec3<f32>,
    par: vec3<bool>,
    valid: bool,
    kx: u32,
    ky: u32,
    kz: u32,
    s: vec3<f32>,
}

struct KdHit {
    t: f32,
    tri: u32,
    u: f32,
    v: f32,
}

// Component `a` of a vector by selects: dynamically indexed vectors tend to be moved to
// local memory, which costs more than three compares.
fn comp(v: vec3<f32>, a: u32) -> f32 {
    return select(select(v.z, v.y, a == 1u), v.x, a == 0u);
}

fn comp_b(v: vec3<bool>, a: u32) -> bool {
    return select(select(v.z, v.y, a == 1u), v.x, a == 0u);
}

fn finite3(v: vec3<f32>) -> bool {
    return all((bitcast<vec3<u32>>(v) & vec3<u32>(0x7f800000u)) != vec3<u32>(0x7f800000u));
}

fn ray_prep(o: vec3<f32>, d: vec3<f32>) -> RayPrep {
    var r: RayPrep;
    r.o = o;
    r.d = d;
    r.inv = vec3<f32>(1.0) / d;
    r.par = abs(d) < vec3<f32>(MIN_NORMAL);
    r.valid = finite3(o) && finite3(d) && !all(r.par);
    let a = abs(d);
    var kz = 2u;
    if a.x >= a.y && a.x >= a.z {
        kz = 0u;
    } else if a.y >= a.z {
        kz = 1u;
    }
    var kx = (kz + 1u) % 3u;
    var ky = (kx + 1u) % 3u;
    if comp(d, kz) < 0.0 {
        let t = kx;
        kx = ky;
        ky = t;
    }
    r.kx = kx;
    r.ky = ky;
    r.kz = kz;
    let dz = comp(d, kz);
    r.s = vec3<f32>(comp(d, kx) / dz, comp(d, ky) / dz, 1.0 / dz);
    return r;
}

fn kd_vertex(tri: u32, k: u32) -> vec3<f32> {
    return kd_tris[3u * tri + k].xyz;
}

// Möller–Trumbore: (t, u, v) in xyz and 1 in w on a hit.
fn tri_mt(r: RayPrep, tri: u32, t_min: f32, t_max: f32) -> vec4<f32> {
    let p0 = kd_vertex(tri, 0u);
    let e1 = kd_vertex(tri, 1u) - p0;
    let e2 = kd_vertex(tri, 2u) - p0;
    let p = cross(r.d, e2);
    let det = dot(e1, p);
    if det == 0.0 {
        return vec4<f32>(0.0);
    }
    let inv_det = 1.0 / det;
    let s = r.o - p0;
    let u = dot(s, p) * inv_det;
    if !(u >= 0.0 && u <= 1.0) {
        return vec4<f32>(0.0);
    }
    let q = cross(s, e1);
    let v = dot(r.d, q) * inv_det;
    if !(v >= 0.0 && u + v <= 1.0) {
        return vec4<f32>(0.0);
    }
    let t = dot(e2, q) * inv_det;
    if !(t > t_min && t < t_max) {
        return vec4<f32>(0.0);
    }
    return vec4<f32>(t, u, v, 1.0);
}

// Watertight (Woop, Benthin, Wald 2013).
fn tri_wt(r: RayPrep, tri: u32, t_min: f32, t_max: f32) -> vec4<f32> {
    let a = kd_vertex(tri, 0u) - r.o;
    let b = kd_vertex(tri, 1u) - r.o;
    let c = kd_vertex(tri, 2u) - r.o;
    let az0 = comp(a, r.kz);
    let bz0 = comp(b, r.kz);
    let cz0 = comp(c, r.kz);
    let ax = comp(a, r.kx) - r.s.x * az0;
    let ay = comp(a, r.ky) - r.s.y * az0;
    let bx = comp(b, r.kx) - r.s.x * bz0;
    let by = comp(b, r.ky) - r.s.y * bz0;
    let cx = comp(c, r.kx) - r.s.x * cz0;
    let cy = comp(c, r.ky) - r.s.y * cz0;
    let u = cx * by - cy * bx;
    let v = ax * cy - ay * cx;
    let w = bx * ay - by * ax;
    if (u < 0.0 || v < 0.0 || w < 0.0) && (u > 0.0 || v > 0.0 || w > 0.0) {
        return vec4<f32>(0.0);
    }
    let det = u + v + w;
    if det == 0.0 {
        return vec4<f32>(0.0);
    }
    let az = r.s.z * az0;
    let bz = r.s.z * bz0;
    let cz = r.s.z * cz0;
    let t_scaled = u * az + v * bz + w * cz;
    let inv_det = 1.0 / det;
    let t = t_scaled * inv_det;
    if !(t > t_min && t < t_max) {
        return vec4<f32>(0.0);
    }
    return vec4<f32>(t, v * inv_det, w * inv_det, 1.0);
}

fn tri_test(watertight: bool, r: RayPrep, tri: u32, t_min: f32, t_max: f32) -> vec4<f32> {
    if watertight {
        return tri_wt(r, tri, t_min, t_max);
    }
    return tri_mt(r, tri, t_min, t_max);
}

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
        let h = tri_test(watertight, r, tri, t_min, (*best).t);
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
