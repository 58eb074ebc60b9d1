//! variants kd, bvh
//! import shared/dispatch
//! define const KD_SHORT_STACK: u32 = 16u;
//! import kd: kdtree/traverse
//! import bvh: kdtree/bvh
//! import shared/sampling
// Element-to-patch form factors with visibility, one thread per pair: a line-by-line port
// of lumbre_radiosity's FormFactors::pair (formfactor.rs) and of Clusters (outline.rs).
// Elements are ranges of pieces and patches ranges of elements. The exact unoccluded
// factor to a patch at N points of the element (shared by its row), over the patch's
// boundary edges when its bound allows (else over its elements' outlines, else their
// pieces), times the kernel-weighted visible fraction of N shadow rays to points of the
// patch.

struct Params {
    bmin: vec3<f32>,
    // The dispatch runs whole aligned groups of 64 pairs of the whole matrix (row-major):
    // the first group's row (here) and column, and the pairs of it before this dispatch's
    // first. Every pair then runs beside the same pairs in any split of the rows (lavapipe's
    // results depend on a workgroup's other invocations); those outside it are not stored.
    arow: u32,
    bmax: vec3<f32>,
    // columns (patches, or elements when full)
    cols: u32,
    // first pair of this dispatch within the block, and how many
    pair0: u32,
    pairs: u32,
    samples: u32,
    mult: u32,
    seed: u32,
    eps: f32,
    // 1: columns are elements (the full matrix)
    full: u32,
    // elements
    n: u32,
    // where the patch ranges, the elements' edge ranges and the patches' edge ranges start
    // in `ranges`
    off_patch: u32,
    off_element_edges: u32,
    off_patch_edges: u32,
    acol: u32,
    lead: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
// bindings 1 to 3: the kd-tree (kdtree/traverse)
// four vec4 per piece, in element order: origin | triangle flag, edge_u | area,
// edge_v | cumulative area fraction in its element, normal | ... in its patch
@group(0) @binding(4) var<storage, read> pieces: array<vec4<f32>>;
// element piece ranges (n + 1), patch element ranges (k + 1), element edge ranges (n + 1),
// patch edge ranges (k + 1)
@group(0) @binding(5) var<storage, read> ranges: array<u32>;
// three vec4 per element, then per patch: sphere centre | radius, normal cone axis | spread,
// vector area | piece count (u32 bits)
@group(0) @binding(6) var<storage, read> bounds: array<vec4<f32>>;
// two vec4 per directed boundary edge: its ends
@group(0) @binding(7) var<storage, read> edges: array<vec4<f32>>;
// this block's rows, row-major
@group(0) @binding(8) var<storage, read_write> factors: array<f32>;

const WG: u32 = 64u;
const COS2_MIN: f32 = 1e-10;
// lumbre_radiosity::FAR and FEW_PIECES
const FAR: f32 = 8.0;
const FEW_PIECES: u32 = 8u;

struct Shape {
    o: vec3<f32>,
    u: vec3<f32>,
    v: vec3<f32>,
    n: vec3<f32>,
    area: f32,
    tri: bool,
}

fn piece(i: u32) -> Shape {
    let a = pieces[4u * i];
    let b = pieces[4u * i + 1u];
    return Shape(a.xyz, b.xyz, pieces[4u * i + 2u].xyz, pieces[4u * i + 3u].xyz, b.w, a.w != 0.0);
}

fn shape_point(s: Shape, u_in: f32, v_in: f32) -> vec3<f32> {
    var u = u_in;
    var v = v_in;
    if s.tri && u + v > 1.0 {
        u = 1.0 - u;
        v = 1.0 - v;
    }
    return s.o + s.u * u + s.v * v;
}

fn ff_kernel(x: vec3<f32>, nx: vec3<f32>, y: vec3<f32>, ny: vec3<f32>) -> f32 {
    let d = y - x;
    let r2 = dot(d, d);
    let cx = dot(nx, d);
    let cy = -dot(ny, d);
    if cx > 0.0 && cy > 0.0 && cx * cx > COS2_MIN * r2 && cy * cy > COS2_MIN * r2 {
        return cx * cy / (r2 * r2);
    }
    return 0.0;
}

// lumbre_radiosity::point_to_shape: Lambert's contour integral over the shape clipped to
// the half-space in front of x.
fn point_to_shape(x: vec3<f32>, n: vec3<f32>, s: Shape) -> f32 {
    if dot(s.n, x - s.o) <= 0.0 {
        return 0.0;
    }
    let o = s.o - x;
    var corners = array<vec3<f32>, 4>(o, o + s.u, o + s.u + s.v, o + s.v);
    var m = 4u;
    if s.tri {
        corners = array<vec3<f32>, 4>(o, o + s.u, o + s.v, o);
        m = 3u;
    }
    var poly: array<vec3<f32>, 5>;
    var len = 0u;
    for (var i = 0u; i < m; i++) {
        let a = corners[i];
        let b = corners[(i + 1u) % m];
        let sa = dot(n, a);
        let sb = dot(n, b);
        if sa >= 0.0 {
            poly[len] = a;
            len += 1u;
        }
        if (sa >= 0.0) != (sb >= 0.0) {
            poly[len] = a + (b - a) * (sa / (sa - sb));
            len += 1u;
        }
    }
    var sum = 0.0;
    for (var i = 0u; i < len; i++) {
        let a = poly[i];
        let b = poly[(i + 1u) % len];
        let c = cross(a, b);
        let l = length(c);
        if l > 0.0 {
            sum += dot(n, c) / l * atan2(l, dot(a, b));
        }
    }
    return max(-sum / (2.0 * PI), 0.0);
}

// lumbre_radiosity::contour over edges e0..e1
fn contour(x: vec3<f32>, n: vec3<f32>, e0: u32, e1: u32) -> f32 {
    var sum = 0.0;
    for (var i = e0; i < e1; i++) {
        let a = edges[2u * i].xyz - x;
        let b = edges[2u * i + 1u].xyz - x;
        let c = cross(a, b);
        let l = length(c);
        if l > 0.0 {
            sum += dot(n, c) / l * atan2(l, dot(a, b));
        }
    }
    return max(-sum / (2.0 * PI), 0.0);
}

// lumbre_radiosity::Bound::clear of the bound at vec4 index b
fn clear(x: vec3<f32>, n: vec3<f32>, b: u32) -> bool {
    let s = bounds[b];
    let c = bounds[b + 1u];
    let d = x - s.xyz;
    let dist = length(d);
    return -dot(n, d) >= s.w && dot(c.xyz, d) - s.w - c.w * (dist + s.w) > 0.0;
}

// lumbre_radiosity::Bound::far
fn far(x: vec3<f32>, b: u32) -> bool {
    let s = bounds[b];
    let d = x - s.xyz;
    let r = FAR * s.w;
    return bitcast<u32>(bounds[b + 2u].w) > FEW_PIECES && dot(d, d) > r * r;
}

// lumbre_radiosity::Bound::far_factor
fn far_factor(x: vec3<f32>, n: vec3<f32>, b: u32) -> f32 {
    let d = bounds[b].xyz - x;
    let r2 = dot(d, d);
    return (max(dot(n, d), 0.0) * max(-dot(bounds[b + 2u].xyz, d), 0.0)) / (PI * r2 * r2);
}

// Clusters::to_element
fn to_element(x: vec3<f32>, n: vec3<f32>, e: u32) -> f32 {
    if clear(x, n, 3u * e) {
        let o = params.off_element_edges + e;
        return contour(x, n, ranges[o], ranges[o + 1u]);
    }
    if far(x, 3u * e) {
        return far_factor(x, n, 3u * e);
    }
    var sum = 0.0;
    for (var j = ranges[e]; j < ranges[e + 1u]; j++) {
        sum += point_to_shape(x, n, piece(j));
    }
    return sum;
}

// Clusters::to_patch
fn to_patch(x: vec3<f32>, n: vec3<f32>, p: u32) -> f32 {
    let b = 3u * (params.n + p);
    if clear(x, n, b) {
        let o = params.off_patch_edges + p;
        return contour(x, n, ranges[o], ranges[o + 1u]);
    }
    if far(x, b) {
        return far_factor(x, n, b);
    }
    var sum = 0.0;
    for (var e = ranges[params.off_patch + p]; e < ranges[params.off_patch + p + 1u]; e++) {
        sum += to_element(x, n, e);
    }
    return sum;
}

struct Point {
    p: vec3<f32>,
    n: vec3<f32>,
}

// lumbre_radiosity::sample over pieces lo..hi, by the element (slot 2) or patch (slot 3)
// cumulative fractions
fn sample(lo_in: u32, hi_in: u32, slot: u32, u_in: f32, v: f32) -> Point {
    var lo = lo_in;
    var hi = hi_in - 1u;
    while lo < hi {
        let mid = (lo + hi) / 2u;
        if pieces[4u * mid + slot].w > u_in {
            hi = mid;
        } else {
            lo = mid + 1u;
        }
    }
    var below = 0.0;
    if lo != lo_in {
        below = pieces[4u * (lo - 1u) + slot].w;
    }
    let w = pieces[4u * lo + slot].w - below;
    var u = 0.0;
    if w > 0.0 {
        u = clamp((u_in - below) / w, 0.0, ONE_MINUS_EPSILON);
    }
    let s = piece(lo);
    return Point(shape_point(s, u, v), s.n);
}

fn blocked(x: vec3<f32>, nx: vec3<f32>, y: vec3<f32>, ny: vec3<f32>) -> bool {
    let o = x + nx * params.eps;
    let t = y + ny * params.eps;
    let r = ray_prep(o, t - o);
    let h = tree_query(r, 2u, true, params.bmin, params.bmax, 0.0, 1.0);
    return h.tri != KD_NONE;
}

@compute @workgroup_size(64)
fn pairs(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let u = flat_index(wid, nwg, lid, WG);
    let c = params.acol + u;
    let e = params.arow + c / params.cols;
    let p = c % params.cols;
    if e >= params.n {
        return;
    }
    let n = max(params.samples, 1u);
    // lumbre_radiosity::element_seed and pair_seeds
    let sx = hash_u32(e ^ hash_u32(params.seed ^ 0x27d4eb2fu));
    let pair = hash_u32(e ^ hash_u32(p ^ hash_u32(params.seed)));
    let sy = hash_u32(pair);
    let b = hash_u32(pair ^ 0xc2b2ae35u) % n;
    // the column's pieces: an element's, or a patch's (its elements' together)
    var col_lo = ranges[p];
    var col_hi = ranges[p + 1u];
    var slot = 2u;
    if params.full == 0u {
        col_lo = ranges[ranges[params.off_patch + p]];
        col_hi = ranges[ranges[params.off_patch + p + 1u]];
        slot = 3u;
    }
    var unoccluded = 0.0;
    var g_all = 0.0;
    var g_seen = 0.0;
    for (var i = 0u; i < n; i++) {
        let ux = stratified(n, i, sx);
        let xs = sample(ranges[e], ranges[e + 1u], 2u, ux.x, ux.y);
        var f = 0.0;
        if params.full != 0u {
            f = to_element(xs.p, xs.n, p);
        } else {
            f = to_patch(xs.p, xs.n, p);
        }
        if f <= 0.0 {
            continue;
        }
        unoccluded += f;
        let uy = stratified(n, (i * params.mult + b) % n, sy);
        let ys = sample(col_lo, col_hi, slot, uy.x, uy.y);
        let g = ff_kernel(xs.p, xs.n, ys.p, ys.n);
        if g > 0.0 {
            g_all += g;
            if !blocked(xs.p, xs.n, ys.p, ys.n) {
                g_seen += g;
            }
        }
    }
    var visible = 1.0;
    if g_all > 0.0 {
        visible = g_seen / g_all;
    }
    let f = unoccluded / f32(n) * visible;
    if u >= params.lead && u - params.lead < params.pairs {
        factors[params.pair0 + u - params.lead] = f;
    }
}
