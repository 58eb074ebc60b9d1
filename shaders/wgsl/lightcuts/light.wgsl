//! module
//! import shared/sampling
// Light-tree nodes, VPLs, cones, cosine bounds and the clamped geometric term: the WGSL twin
// of lumbre-lightcuts' bounds.rs, tree.rs and shading.rs, operation by operation (only
// +, -, *, /, sqrt, min, max, abs), so both sides agree bit for bit where the device rounds
// as IEEE 754 and does not fuse multiply-adds.

const INV_PI: f32 = 0.31830988618379067;
const LEAF: u32 = 0xffffffffu;

// lumbre_lightcuts::LightNode (64 bytes).
struct LightNode {
    lo: vec3<f32>,
    left: u32,
    hi: vec3<f32>,
    right: u32,
    axis: vec3<f32>,
    cos: f32,
    intensity: vec3<f32>,
    rep: u32,
}

struct Cone {
    axis: vec3<f32>,
    cos: f32,
}

fn dot3(a: vec3<f32>, b: vec3<f32>) -> f32 {
    return a.x * b.x + a.y * b.y + a.z * b.z;
}

fn abs_dot3(a: vec3<f32>, b: vec3<f32>) -> f32 {
    return abs(a.x) * b.x + abs(a.y) * b.y + abs(a.z) * b.z;
}

// v / |v| as v * (1 / sqrt(v . v)); 0 for 0.
fn unit(v: vec3<f32>) -> vec3<f32> {
    let l2 = dot3(v, v);
    if l2 > 0.0 {
        return v * (1.0 / sqrt(l2));
    }
    return vec3<f32>(0.0);
}

fn sine(c: f32) -> f32 {
    return sqrt(max(1.0 - c * c, 0.0));
}

// cos(t1 + t2) of two angles in [0, pi] given by their cosines; -1 from pi on.
fn cos_of_sum(c1_in: f32, c2: f32) -> f32 {
    let c1 = clamp(c1_in, -1.0, 1.0);
    if c1 <= -c2 {
        return -1.0;
    }
    return max(c1 * c2 - sine(c1) * sine(c2), -1.0);
}

// lumbre_lightcuts::Cone::union
fn cone_union(a: Cone, b: Cone) -> Cone {
    if a.cos <= -1.0 || b.cos <= -1.0 {
        return Cone(a.axis, -1.0);
    }
    let c = dot3(a.axis, b.axis);
    if cos_of_sum(c, b.cos) >= a.cos {
        return a;
    }
    if cos_of_sum(c, a.cos) >= b.cos {
        return b;
    }
    let s = a.axis + b.axis;
    let l2 = dot3(s, s);
    if l2 <= 1e-12 {
        return Cone(a.axis, -1.0);
    }
    let axis = s * (1.0 / sqrt(l2));
    let ca = cos_of_sum(dot3(axis, a.axis), a.cos);
    let cb = cos_of_sum(dot3(axis, b.axis), b.cos);
    return Cone(axis, min(ca, cb));
}

fn node_weight(n: LightNode) -> f32 {
    return n.intensity.x + n.intensity.y + n.intensity.z;
}

// lumbre_lightcuts::rep_uniform
fn rep_uniform(seed: u32, index: u32) -> f32 {
    return hash_f32(hash_u32(index) ^ hash_u32((seed * 0x9e3779b9u) ^ 0x5bd1e995u));
}

// lumbre_lightcuts::LightNode::merge
fn merge_nodes(a: LightNode, a_index: u32, b: LightNode, b_index: u32, index: u32, seed: u32) -> LightNode {
    let cone = cone_union(Cone(a.axis, a.cos), Cone(b.axis, b.cos));
    let wa = node_weight(a);
    let wb = node_weight(b);
    var rep = b.rep;
    if rep_uniform(seed, index) * (wa + wb) < wa || wa + wb <= 0.0 {
        rep = a.rep;
    }
    return LightNode(min(a.lo, b.lo), a_index, max(a.hi, b.hi), b_index, cone.axis, cone.cos, a.intensity + b.intensity, rep);
}

// Duff et al. 2017: (t, b) completing the unit vector n.
fn basis_t(n: vec3<f32>) -> vec3<f32> {
    let sign = select(-1.0, 1.0, n.z >= 0.0);
    let a = -1.0 / (sign + n.z);
    let b = n.x * n.y * a;
    return vec3<f32>(1.0 + sign * n.x * n.x * a, sign * b, -sign * n.x);
}

fn basis_b(n: vec3<f32>) -> vec3<f32> {
    let sign = select(-1.0, 1.0, n.z >= 0.0);
    let a = -1.0 / (sign + n.z);
    let b = n.x * n.y * a;
    return vec3<f32>(b, sign + n.y * n.y * a, -n.y);
}

// lumbre_lightcuts::box_dist2
fn box_dist2(p: vec3<f32>, lo: vec3<f32>, hi: vec3<f32>) -> f32 {
    let dx = max(max(lo.x - p.x, p.x - hi.x), 0.0);
    let dy = max(max(lo.y - p.y, p.y - hi.y), 0.0);
    let dz = max(max(lo.z - p.z, p.z - hi.z), 0.0);
    return dx * dx + dy * dy + dz * dz;
}

// lumbre_lightcuts::cos_upper
fn cos_upper(axis: vec3<f32>, lo: vec3<f32>, hi: vec3<f32>) -> f32 {
    let t = basis_t(axis);
    let b = basis_b(axis);
    let c = (lo + hi) * 0.5;
    let h = (hi - lo) * 0.5;
    let z = dot3(axis, c) + abs_dot3(axis, h);
    let cx = abs(dot3(t, c));
    let hx = abs_dot3(t, h);
    let cy = abs(dot3(b, c));
    let hy = abs_dot3(b, h);
    if z > 0.0 {
        let x = max(cx - hx, 0.0);
        let y = max(cy - hy, 0.0);
        return min(z / sqrt(x * x + y * y + z * z), 1.0);
    }
    let x = cx + hx;
    let y = cy + hy;
    let d = sqrt(x * x + y * y + z * z);
    if d > 0.0 {
        return max(z / d, -1.0);
    }
    return 1.0;
}

fn receiver_cos_upper(x: vec3<f32>, n: vec3<f32>, lo: vec3<f32>, hi: vec3<f32>) -> f32 {
    return max(cos_upper(n, lo - x, hi - x), 0.0);
}

fn light_cos_upper(x: vec3<f32>, cone: Cone, lo: vec3<f32>, hi: vec3<f32>) -> f32 {
    let c = cos_upper(cone.axis, x - hi, x - lo);
    if c >= cone.cos {
        return 1.0;
    }
    return clamp(c * cone.cos + sine(c) * sine(cone.cos), 0.0, 1.0);
}

// lumbre_lightcuts::geometry: both cosines over max(d, r)^2.
fn geometry(x: vec3<f32>, n: vec3<f32>, y: vec3<f32>, ny: vec3<f32>, min_d2: f32) -> f32 {
    let v = y - x;
    let d2 = dot3(v, v);
    let cr = dot3(n, v);
    let cl = -dot3(ny, v);
    if !(d2 > 0.0 && cr > 0.0 && cl > 0.0) {
        return 0.0;
    }
    return cr * cl / (d2 * max(d2, min_d2));
}
