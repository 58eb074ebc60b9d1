//! module
//! import shared/dispatch
//! import shared/sampling
//! import shared/camera
//! import shared/emitters
//! import raytrace/scene
//! import raytrace/sums
// What the path tracer's two schedules share: the parameters, bindings 0 to 13, the random
// numbers (path_uniform), ray queries, the BRDF's lobes and next-event estimation
// (Tracer::direct), ported step by step from lumbre_raytrace's path.rs, so that the CPU, the
// megakernel (path.wgsl) and the wavefront (wavefront.wgsl) trace the same paths.
//
// The includer imports kdtree/traverse or kdtree/bvh (tree_query) before this module.

struct Params {
    cam: Camera,
    bmin: vec3<f32>,
    width: u32,
    bmax: vec3<f32>,
    height: u32,
    background: vec3<f32>,
    spp: u32,
    first_sample: u32,
    max_bounces: u32,
    rr_depth: u32,
    n_lights: u32,
    // bit 0: restart traversal; bit 1: watertight test
    flags: u32,
    eps: f32,
    // first 8x8 tile of this dispatch
    pixel_base: u32,
    n_emitters: u32,
    // this dispatch's samples: [batch_first, batch_first + batch_count) of the render's
    batch_first: u32,
    batch_count: u32,
    // samples are summed in units of 2^-scale_log2 (SampleSums::scale_log2_for)
    scale_log2: i32,
    // invocations per pixel: stream t of a pixel draws the batch's samples t, t + streams, ..
    streams: u32,
}

// In a storage buffer, not a uniform: each batch of samples has its own values, and lavapipe
// compiles (and keeps) a variant of the kernel for every set of uniform values it meets.
@group(0) @binding(0) var<storage, read> params: Params;
// bindings 1 to 6: the scene (raytrace/scene_bindings)
// point lights are used; area lights come from the emitters
@group(0) @binding(7) var<storage, read> lights: array<Light>;
@group(0) @binding(8) var<storage, read> em_emitters: array<Emitter>;
@group(0) @binding(9) var<storage, read> em_cdf: array<f32>;
@group(0) @binding(10) var<storage, read> em_index: array<u32>;
// the pixels' linear RGB sums of their samples so far in 64-bit fixed point (SampleSums): six
// planes of a word a pixel, (low, high) of red, green and blue (raytrace/sums); a pixel's
// streams add to them atomically (integer sums: the same bits in any order)
@group(0) @binding(11) var<storage, read_write> sums: array<atomic<u32>>;
// extension rays (low word, high word), shadow rays (low word, high word), pixels whose
// batch stopped short of its last sample, pixels whose sums saturated
@group(0) @binding(12) var<storage, read_write> counters: array<atomic<u32>, 6>;
// per triangle: the unit geometric normal normalize((b - a) x (c - a)), computed in f64 on
// the host: both paths branch on its bits (the sampling frame's sign of z, the emitting side)
@group(0) @binding(13) var<storage, read> face_normals: array<vec4<f32>>;

const DIM_LIGHT_PICK: u32 = 0u;
const DIM_LIGHT_POINT: u32 = 1u;
const DIM_DIRECTION: u32 = 3u;
const DIM_LOBE: u32 = 5u;
const DIM_ROULETTE: u32 = 6u;
const DIM_CAMERA: u32 = 7u;
const SURVIVE_MIN: f32 = 0.05;
const SURVIVE_MAX: f32 = 0.95;

struct Counts {
    extension: u32,
    shadow: u32,
}

fn sample_key(pixel: u32, sample: u32) -> u32 {
    return hash_u32(hash_u32(pixel) ^ sample);
}

// lumbre_raytrace::path_uniform with the sample's key computed once.
fn rand(key: u32, depth: u32, dim: u32) -> f32 {
    return hash_f32(key ^ hash_u32(depth * 16u + dim));
}

fn query(o: vec3<f32>, d: vec3<f32>, t_max: f32, any_hit: bool) -> KdHit {
    let r = ray_prep(o, d);
    return tree_query(r, params.flags, any_hit, params.bmin, params.bmax, 0.0, t_max);
}

fn max3(v: vec3<f32>) -> f32 {
    return max(v.x, max(v.y, v.z));
}

// Whether nothing lies between `start` and `end` (Tracer::visible).
fn visible(start: vec3<f32>, end: vec3<f32>, counts: ptr<function, Counts>) -> bool {
    let v = end - start;
    let d = length(v);
    if !(d > 0.0) {
        return false;
    }
    (*counts).shadow += 1u;
    return query(start, v / d, d * (1.0 - 1e-3), true).tri == KD_NONE;
}

// The non-delta part of a surface's BRDF and its sampling mixture (path.rs's Lobes).
struct Lobes {
    n: vec3<f32>,
    r: vec3<f32>,
    kd: vec3<f32>,
    ks: vec3<f32>,
    ns: f32,
    p_diffuse: f32,
    p_glossy: f32,
}

struct Eval {
    f: vec3<f32>,
    pdf: f32,
}

// The BRDF towards wi and the mixture's density of wi in solid angle.
fn lobes_eval(b: Lobes, wi: vec3<f32>) -> Eval {
    let cos = dot(b.n, wi);
    var f = b.kd / PI;
    var pdf = b.p_diffuse * cosine_hemisphere_pdf(cos);
    if b.p_glossy > 0.0 {
        let c = dot(b.r, wi);
        var cn = 0.0;
        if c > 0.0 {
            cn = pow(c, b.ns);
        }
        f += b.ks * ((b.ns + 2.0) / (2.0 * PI) * cn);
        pdf += b.p_glossy * phong_lobe_pdf(c, b.ns);
    }
    return Eval(f, pdf);
}

// Next-event estimation at p through the non-delta lobes, shadow rays from `above`
// (Tracer::direct).
fn direct(p: vec3<f32>, above: vec3<f32>, b: Lobes, key: u32, depth: u32, counts: ptr<function, Counts>) -> vec3<f32> {
    var sum = vec3<f32>(0.0);
    if params.n_emitters > 0u {
        let s = em_sample(params.n_emitters, rand(key, depth, DIM_LIGHT_PICK), rand(key, depth, DIM_LIGHT_POINT), rand(key, depth, DIM_LIGHT_POINT + 1u));
        let to = s.point - p;
        let d2 = dot(to, to);
        if d2 > 0.0 {
            let l = to / sqrt(d2);
            let cos = dot(b.n, l);
            let cos_l = -dot(s.normal, l);
            if cos > 0.0 && cos_l > 0.0 && visible(above, s.point, counts) {
                let e = lobes_eval(b, l);
                let pdf_light = s.pdf * d2 / cos_l;
                let w = power_heuristic(pdf_light, e.pdf);
                sum += s.radiance * e.f * (cos * w / pdf_light);
            }
        }
    }
    for (var li = 0u; li < params.n_lights; li++) {
        let light = lights[li];
        if light.kind != 0u {
            continue;
        }
        let to = light.pos - p;
        let d2 = dot(to, to);
        if d2 <= 0.0 {
            continue;
        }
        let l = to / sqrt(d2);
        let cos = dot(b.n, l);
        if cos > 0.0 && visible(above, light.pos, counts) {
            sum += light.e * lobes_eval(b, l).f * (cos / d2);
        }
    }
    return sum;
}

// Adds x to the 64-bit counter in words (i, i + 1), carrying into the high word.
fn add_wide(i: u32, x: u32) {
    if x == 0u {
        return;
    }
    let old = atomicAdd(&counters[i], x);
    if old > 0xffffffffu - x {
        atomicAdd(&counters[i + 1u], 1u);
    }
}
