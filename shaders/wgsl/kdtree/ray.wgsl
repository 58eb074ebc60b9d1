//! module
// Rays and triangles, shared by the kd-tree's and the BVH's queries (kdtree/traverse,
// kdtree/bvh): the ray's constants, the hit, and both triangle tests, line-by-line ports of
// lumbre-kdtree's triangle.rs. Binding 3 of group 0 (GpuKdTree::bindings, GpuBvh::bindings):
// the triangles; binding 2 is the structure's own (its leaves' triangles).

// three vertices per triangle, in the caller's order
@group(0) @binding(3) var<storage, read> kd_tris: array<vec4<f32>>;

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
fn tri_mt(r: RayPrep, p0: vec3<f32>, p1: vec3<f32>, p2: vec3<f32>, t_min: f32, t_max: f32) -> vec4<f32> {
    let e1 = p1 - p0;
    let e2 = p2 - p0;
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
fn tri_wt(r: RayPrep, p0: vec3<f32>, p1: vec3<f32>, p2: vec3<f32>, t_min: f32, t_max: f32) -> vec4<f32> {
    let a = p0 - r.o;
    let b = p1 - r.o;
    let c = p2 - r.o;
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

// The triangle with corners p0, p1, p2: (t, u, v) in xyz and 1 in w on a hit.
fn tri_test(watertight: bool, r: RayPrep, p0: vec3<f32>, p1: vec3<f32>, p2: vec3<f32>, t_min: f32, t_max: f32) -> vec4<f32> {
    if watertight {
        return tri_wt(r, p0, p1, p2, t_min, t_max);
    }
    return tri_mt(r, p0, p1, p2, t_min, t_max);
}

