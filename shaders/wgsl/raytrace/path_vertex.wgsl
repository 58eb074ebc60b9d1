//! module
//! import shared/dispatch
//! import shared/sampling
//! import shared/camera
//! import shared/emitters
//! import raytrace/scene
//! import raytrace/sums
// The path tracer's parameters, its bindings 0 to 13 and one vertex of a path: a step-by-step
// port of lumbre_raytrace's path.rs (Tracer::sample and Tracer::direct) with the same random
// numbers (path_uniform), shared by the megakernel (path.wgsl) and the wavefront stages
// (wavefront.wgsl), so that all three trace the same paths.
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

// A path between two vertices: the ray to trace next and what the path carries.
struct PathState {
    origin: vec3<f32>,
    depth: u32,
    dir: vec3<f32>,
    // the sample's key (sample_key)
    key: u32,
    throughput: vec3<f32>,
    // density in solid angle of the last scattered direction; 0 after the camera or a
    // specular bounce (its emitter hit counts fully)
    last_pdf: f32,
    // where the last direction was scattered from
    last_point: vec3<f32>,
    pixel: u32,
    radiance: vec3<f32>,
    // wavefront only: STATUS_*
    status: u32,
}

// Next-event estimation at a vertex, as the vertex asks for it: direct(p, above, lobes, key,
// depth) times `throughput` adds to the path's radiance.
struct Nee {
    p: vec3<f32>,
    depth: u32,
    above: vec3<f32>,
    // the wavefront's slot of the path
    slot: u32,
    throughput: vec3<f32>,
    valid: u32,
    lobes: Lobes,
}

// The path of sample `sample` of pixel (x, y): its camera ray, jittered in the pixel.
fn path_start(x: u32, y: u32, pixel: u32, sample: u32) -> PathState {
    let key = sample_key(pixel, sample);
    let jx = rand(key, 0u, DIM_CAMERA);
    let jy = rand(key, 0u, DIM_CAMERA + 1u);
    let origin = params.cam.eye.xyz;
    let dir = camera_dir(params.cam, f32(x) + jx, f32(y) + jy);
    return PathState(origin, 0u, dir, key, vec3<f32>(1.0), 0.0, origin, pixel, vec3<f32>(0.0), 0u);
}

// The vertex where the path's ray met `hit` (KD_NONE: nothing): adds what it sees of the
// emitters and the background, asks for next-event estimation in `nee`, and scatters the
// ray. False when the path ends here (Tracer::sample's loop body).
fn path_vertex(st: ptr<function, PathState>, hit: KdHit, nee: ptr<function, Nee>) -> bool {
    (*nee).valid = 0u;
    let origin = (*st).origin;
    let dir = (*st).dir;
    let depth = (*st).depth;
    let key = (*st).key;
    if hit.tri == KD_NONE {
        (*st).radiance += (*st).throughput * params.background;
        return false;
    }
    let sf = surface_at(hit, origin, dir, face_normals[hit.tri].xyz);
    let m = materials[sf.material];
    if m.kind == KIND_EMITTER && sf.entering {
        var w = 1.0;
        if (*st).last_pdf > 0.0 {
            // sf.ng faces the ray: -dot(ng, dir) is the cosine at the emitter
            let back = sf.p - (*st).last_point;
            let pdf_light = em_pdf(hit.tri) * dot(back, back) / (-dot(sf.ng, dir));
            w = power_heuristic((*st).last_pdf, pdf_light);
        }
        (*st).radiance += (*st).throughput * m.ke * w;
    }
    if depth >= params.max_bounces {
        return false;
    }
    let n = sf.n;
    let ng = sf.ng;
    let above = sf.p + ng * params.eps;
    if m.kind == KIND_GLASS {
        var n1 = m.ni;
        var n2 = 1.0;
        if sf.entering {
            n1 = 1.0;
            n2 = m.ni;
        }
        let eta = n1 / n2;
        let cos_i = clamp(-dot(dir, n), 0.0, 1.0);
        let sin2_t = eta * eta * (1.0 - cos_i * cos_i);
        let reflected = dir - 2.0 * dot(dir, n) * n;
        if sin2_t >= 1.0 || rand(key, depth, DIM_LOBE) < schlick(cos_i, n1, n2) {
            (*st).origin = above;
            (*st).dir = reflected;
        } else {
            let cos_t = sqrt(1.0 - sin2_t);
            (*st).origin = sf.p - ng * params.eps;
            (*st).dir = eta * dir + (eta * cos_i - cos_t) * n;
        }
        (*st).last_pdf = 0.0;
    } else {
        let mirror = m.kind == KIND_MIRROR;
        let glossy = m.kind == KIND_PHONG;
        let kd = max(max3(m.kd), 0.0);
        var ks = 0.0;
        if mirror || glossy {
            ks = max(max3(m.ks), 0.0);
        }
        if kd + ks <= 0.0 {
            return false;
        }
        let specular_prob = ks / (kd + ks);
        let reflected = dir - 2.0 * dot(dir, n) * n;
        var b = Lobes(n, reflected, m.kd, vec3<f32>(0.0), max(m.ns, 1.0), 1.0 - specular_prob, 0.0);
        if glossy {
            b.ks = m.ks;
            b.p_glossy = specular_prob;
        }
        if kd > 0.0 || glossy {
            *nee = Nee(sf.p, depth, above, 0u, (*st).throughput, 1u, b);
        }
        let pick_specular = rand(key, depth, DIM_LOBE) < specular_prob;
        if mirror && pick_specular {
            (*st).throughput *= m.ks / specular_prob;
            (*st).origin = above;
            (*st).dir = reflected;
            (*st).last_pdf = 0.0;
        } else {
            let u1 = rand(key, depth, DIM_DIRECTION);
            let u2 = rand(key, depth, DIM_DIRECTION + 1u);
            var next: vec3<f32>;
            if pick_specular {
                next = to_world(phong_lobe(u1, u2, b.ns), reflected);
            } else {
                next = to_world(cosine_hemisphere(u1, u2), n);
            }
            let cos = dot(n, next);
            // below the surface (a lobe or a shading normal leaning away): the path ends
            if cos <= 0.0 || dot(next, ng) <= 0.0 {
                return false;
            }
            let e = lobes_eval(b, next);
            if e.pdf <= 0.0 {
                return false;
            }
            (*st).throughput *= e.f * (cos / e.pdf);
            (*st).last_pdf = e.pdf;
            (*st).last_point = sf.p;
            (*st).origin = above;
            (*st).dir = next;
        }
    }
    if depth >= params.rr_depth {
        let survive = clamp(max3((*st).throughput), SURVIVE_MIN, SURVIVE_MAX);
        if rand(key, depth, DIM_ROULETTE) >= survive {
            return false;
        }
        (*st).throughput /= survive;
    }
    (*st).depth = depth + 1u;
    return true;
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

// What next-event estimation `nee` adds to its path's radiance (counting its shadow rays).
fn nee_radiance(nee: Nee, key: u32, counts: ptr<function, Counts>) -> vec3<f32> {
    return nee.throughput * direct(nee.p, nee.above, nee.lobes, key, nee.depth, counts);
}
