//! import shared/dispatch
//! define const KD_SHORT_STACK: u32 = 16u;
//! import kdtree/traverse
//! import shared/sampling
// Element-to-patch form factors with visibility, one thread per pair: a line-by-line port
// of lumbre_radiosity's FormFactors::pair (formfactor.rs). The exact unoccluded
// point-to-patch factor at N stratified points of the element (shared by its row), times
// the kernel-weighted visible fraction of N shadow rays to stratified points of the patch.

struct Params {
    bmin: vec3<f32>,
    // first row of this block's dispatch, in the whole matrix
    row0: u32,
    bmax: vec3<f32>,
    // columns (patches)
    cols: u32,
    // first pair of this dispatch within the block, and how many
    pair0: u32,
    pairs: u32,
    samples: u32,
    mult: u32,
    seed: u32,
    eps: f32,
    _pad: vec2<u32>,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> kd_nodes: array<vec2<u32>>;
@group(0) @binding(2) var<storage, read> kd_prims: array<u32>;
@group(0) @binding(3) var<storage, read> kd_tris: array<vec4<f32>>;
// four vec4 per shape: origin | triangle flag, edge_u | area, edge_v | 0, normal | 0
@group(0) @binding(4) var<storage, read> elements: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read> patches: array<vec4<f32>>;
// this block's rows, row-major
@group(0) @binding(6) var<storage, read_write> factors: array<f32>;

const WG: u32 = 64u;
const COS2_MIN: f32 = 1e-10;

struct Shape {
    o: vec3<f32>,
    u: vec3<f32>,
    v: vec3<f32>,
    n: vec3<f32>,
    area: f32,
    tri: bool,
}

fn shape_of(a: vec4<f32>, b: vec4<f32>, c: vec4<f32>, d: vec4<f32>) -> Shape {
    return Shape(a.xyz, b.xyz, c.xyz, d.xyz, b.w, a.w != 0.0);
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

// lumbre_radiosity::kernel
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

fn blocked(x: vec3<f32>, nx: vec3<f32>, y: vec3<f32>, ny: vec3<f32>) -> bool {
    let o = x + nx * params.eps;
    let t = y + ny * params.eps;
    let r = ray_prep(o, t - o);
    let h = kd_query(r, false, true, true, params.bmin, params.bmax, 0.0, 1.0);
    return h.tri != KD_NONE;
}

@compute @workgroup_size(64)
fn pairs(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let t = flat_index(wid, nwg, lid, WG);
    if t >= params.pairs {
        return;
    }
    let idx = params.pair0 + t;
    let e = params.row0 + idx / params.cols;
    let p = idx % params.cols;
    let elem = shape_of(elements[4u * e], elements[4u * e + 1u], elements[4u * e + 2u], elements[4u * e + 3u]);
    let pat = shape_of(patches[4u * p], patches[4u * p + 1u], patches[4u * p + 2u], patches[4u * p + 3u]);
    let n = max(params.samples, 1u);
    // lumbre_radiosity::element_seed and pair_seeds
    let sx = hash_u32(e ^ hash_u32(params.seed ^ 0x27d4eb2fu));
    let pair = hash_u32(e ^ hash_u32(p ^ hash_u32(params.seed)));
    let sy = hash_u32(pair);
    let b = hash_u32(pair ^ 0xc2b2ae35u) % n;
    var unoccluded = 0.0;
    var g_all = 0.0;
    var g_seen = 0.0;
    for (var i = 0u; i < n; i++) {
        let ux = stratified(n, i, sx);
        let x = shape_point(elem, ux.x, ux.y);
        let f = point_to_shape(x, elem.n, pat);
        if f <= 0.0 {
            continue;
        }
        unoccluded += f;
        let uy = stratified(n, (i * params.mult + b) % n, sy);
        let y = shape_point(pat, uy.x, uy.y);
        let g = ff_kernel(x, elem.n, y, pat.n);
        if g > 0.0 {
            g_all += g;
            if !blocked(x, elem.n, y, pat.n) {
                g_seen += g;
            }
        }
    }
    var visible = 1.0;
    if g_all > 0.0 {
        visible = g_seen / g_all;
    }
    factors[idx] = unoccluded / f32(n) * visible;
}
