//! module
// Integer hash and stratified samples, bit-exact with lumbre_raytrace's hash_u32, hash_f32
// and stratified (PCG hash, Jarzynski and Olano 2020).

const ONE_MINUS_EPSILON: f32 = 0.99999994;

fn hash_u32(x: u32) -> u32 {
    let state = x * 747796405u + 2891336453u;
    let word = ((state >> ((state >> 28u) + 4u)) ^ state) * 277803737u;
    return (word >> 22u) ^ word;
}

fn hash_f32(x: u32) -> f32 {
    return f32(hash_u32(x) >> 8u) / 16777216.0;
}

fn isqrt(n: u32) -> u32 {
    var s = u32(sqrt(f32(n)));
    // f32's sqrt may be off by one for large n: correct it exactly.
    while s * s > n {
        s -= 1u;
    }
    while (s + 1u) * (s + 1u) <= n {
        s += 1u;
    }
    return s;
}

fn stratified(spp_in: u32, index_in: u32, seed: u32) -> vec2<f32> {
    let spp = max(spp_in, 1u);
    let index = index_in % spp;
    let key = hash_u32(seed) + index;
    let jx = hash_f32(key);
    let jy = hash_f32(hash_u32(key));
    let s = isqrt(spp);
    var xy: vec2<f32>;
    if s * s == spp {
        xy = vec2<f32>((f32(index % s) + jx) / f32(s), (f32(index / s) + jy) / f32(s));
    } else {
        xy = vec2<f32>((f32(index) + jx) / f32(spp), jy);
    }
    return min(xy, vec2<f32>(ONE_MINUS_EPSILON));
}

// lumbre_raytrace::light_sample
fn light_sample(pixel: u32, sample: u32, depth: u32, light: u32) -> vec2<f32> {
    let k = hash_u32(pixel ^ hash_u32((sample * 64u + depth * 8u) ^ (light * 0x9e3779b9u)));
    return vec2<f32>(hash_f32(k), hash_f32(hash_u32(k)));
}

// Sample warps: lumbre_raytrace::sampling, operation for operation (a GPU may fuse
// multiply-adds, so the twins agree to a few ulps).

const PI: f32 = 3.14159265358979;
const FRAC_PI_4: f32 = 0.785398163397448;

// (sin t, cos t) for |t| <= pi/4: Taylor polynomials to degree 9 and 10, Horner's rule.
fn sin_cos_quarter(t: f32) -> vec2<f32> {
    let t2 = t * t;
    let s = t * (1.0 + t2 * (-1.0 / 6.0 + t2 * (1.0 / 120.0 + t2 * (-1.0 / 5040.0 + t2 * (1.0 / 362880.0)))));
    let c = 1.0 + t2 * (-0.5 + t2 * (1.0 / 24.0 + t2 * (-1.0 / 720.0 + t2 * (1.0 / 40320.0 - t2 * (1.0 / 3628800.0)))));
    return vec2<f32>(s, c);
}

// Shirley and Chiu's concentric map from [0, 1)^2 to the unit disk.
fn concentric_disk(u: f32, v: f32) -> vec2<f32> {
    let a = 2.0 * u - 1.0;
    let b = 2.0 * v - 1.0;
    if a == 0.0 && b == 0.0 {
        return vec2<f32>(0.0);
    }
    if abs(a) > abs(b) {
        let sc = sin_cos_quarter(FRAC_PI_4 * (b / a));
        return vec2<f32>(a * sc.y, a * sc.x);
    }
    let sc = sin_cos_quarter(FRAC_PI_4 * (a / b));
    return vec2<f32>(b * sc.x, b * sc.y);
}

// Cosine-distributed direction about +z (Malley); density z / pi.
// 1 - r^2 from the map's exact radius, not from the rounded point: no cancellation at the rim.
fn cosine_hemisphere(u: f32, v: f32) -> vec3<f32> {
    let d = concentric_disk(u, v);
    let r = concentric_radius(u, v);
    let z = sqrt(max((1.0 - r) * (1.0 + r), 0.0));
    return vec3<f32>(d.x, d.y, z);
}

// The radius of concentric_disk(u, v) without rounding.
fn concentric_radius(u: f32, v: f32) -> f32 {
    return max(abs(2.0 * u - 1.0), abs(2.0 * v - 1.0));
}

fn cosine_hemisphere_pdf(cos_theta: f32) -> f32 {
    return max(cos_theta, 0.0) / PI;
}

// A direction about +z with density (ns + 1) / (2 pi) cos^ns (the normalized Phong lobe):
// the concentric point's squared radius gives the cosine, its direction the azimuth.
fn phong_lobe(u: f32, v: f32, ns: f32) -> vec3<f32> {
    let d = concentric_disk(u, v);
    let r = concentric_radius(u, v);
    if r <= 0.0 {
        return vec3<f32>(1.0, 0.0, 0.0);
    }
    let cos_a = pow(r * r, 1.0 / (ns + 1.0));
    let sin_a = sqrt(max((1.0 - cos_a) * (1.0 + cos_a), 0.0));
    return vec3<f32>(sin_a * (d.x / r), sin_a * (d.y / r), cos_a);
}

fn phong_lobe_pdf(cos_a: f32, ns: f32) -> f32 {
    if cos_a <= 0.0 {
        return 0.0;
    }
    return (ns + 1.0) / (2.0 * PI) * pow(cos_a, ns);
}

struct Basis {
    t: vec3<f32>,
    b: vec3<f32>,
}

// Duff et al. 2017: (t, b) with t x b = n; n.z = -0.0 counts as positive.
fn orthonormal_basis(n: vec3<f32>) -> Basis {
    var sign = -1.0;
    if n.z >= 0.0 {
        sign = 1.0;
    }
    let a = -1.0 / (sign + n.z);
    let b = n.x * n.y * a;
    return Basis(vec3<f32>(1.0 + sign * n.x * n.x * a, sign * b, -sign * n.x), vec3<f32>(b, sign + n.y * n.y * a, -n.y));
}

fn to_world(local: vec3<f32>, n: vec3<f32>) -> vec3<f32> {
    let f = orthonormal_basis(n);
    return f.t * local.x + f.b * local.y + n * local.z;
}

// Power heuristic a^2 / (a^2 + b^2) through the ratio of the smaller density to the larger.
fn power_heuristic(a: f32, b: f32) -> f32 {
    if a >= b {
        if a == 0.0 {
            return 0.0;
        }
        let r = b / a;
        return 1.0 / (1.0 + r * r);
    }
    let r = a / b;
    let r2 = r * r;
    return r2 / (1.0 + r2);
}

// Barycentric weights of a uniform point on a triangle (square-root warp), all >= 0.
fn uniform_triangle(u: f32, v: f32) -> vec3<f32> {
    let s = sqrt(u);
    let w1 = v * s;
    return vec3<f32>(1.0 - s, w1, s - w1);
}
