//! variants kd, bvh
//! import shared/dispatch
//! define const KD_SHORT_STACK: u32 = 16u;
//! import kd: kdtree/traverse
//! import bvh: kdtree/bvh
//! import shared/sampling
//! import shared/camera
//! import shared/emitters
//! import raytrace/scene
//! import raytrace/sums
// The reference path tracer, one thread per pixel: a step-by-step port of
// lumbre_raytrace's path.rs (Tracer::sample and Tracer::direct), with the same random
// numbers (path_uniform) so that CPU and GPU trace the same paths.

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
// `mean`: the mean of the samples per pixel (RGB and 1), for work that stays on the GPU
@group(0) @binding(14) var<storage, read_write> image: array<vec4<f32>>;

const WG: u32 = 64u;
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

// Radiance of one sample of pixel (x, y): Tracer::sample.
fn path_sample(x: u32, y: u32, pixel: u32, sample: u32, counts: ptr<function, Counts>) -> vec3<f32> {
    let key = sample_key(pixel, sample);
    let jx = rand(key, 0u, DIM_CAMERA);
    let jy = rand(key, 0u, DIM_CAMERA + 1u);
    var origin = params.cam.eye.xyz;
    var dir = camera_dir(params.cam, f32(x) + jx, f32(y) + jy);
    var throughput = vec3<f32>(1.0);
    var radiance = vec3<f32>(0.0);
    var last_pdf = 0.0;
    // where the last direction was scattered from
    var last_point = origin;
    var depth = 0u;
    loop {
        (*counts).extension += 1u;
        let hit = query(origin, dir, inf(), false);
        if hit.tri == KD_NONE {
            radiance += throughput * params.background;
            break;
        }
        let sf = surface_at(hit, origin, dir, face_normals[hit.tri].xyz);
        let m = materials[sf.material];
        if m.kind == KIND_EMITTER && sf.entering {
            var w = 1.0;
            if last_pdf > 0.0 {
                // sf.ng faces the ray: -dot(ng, dir) is the cosine at the emitter
                let back = sf.p - last_point;
                let pdf_light = em_pdf(hit.tri) * dot(back, back) / (-dot(sf.ng, dir));
                w = power_heuristic(last_pdf, pdf_light);
            }
            radiance += throughput * m.ke * w;
        }
        if depth >= params.max_bounces {
            break;
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
                origin = above;
                dir = reflected;
            } else {
                let cos_t = sqrt(1.0 - sin2_t);
                origin = sf.p - ng * params.eps;
                dir = eta * dir + (eta * cos_i - cos_t) * n;
            }
            last_pdf = 0.0;
        } else {
            let mirror = m.kind == KIND_MIRROR;
            let glossy = m.kind == KIND_PHONG;
            let kd = max(max3(m.kd), 0.0);
            var ks = 0.0;
            if mirror || glossy {
                ks = max(max3(m.ks), 0.0);
            }
            if kd + ks <= 0.0 {
                break;
            }
            let specular_prob = ks / (kd + ks);
            let reflected = dir - 2.0 * dot(dir, n) * n;
            var b = Lobes(n, reflected, m.kd, vec3<f32>(0.0), max(m.ns, 1.0), 1.0 - specular_prob, 0.0);
            if glossy {
                b.ks = m.ks;
                b.p_glossy = specular_prob;
            }
            if kd > 0.0 || glossy {
                radiance += throughput * direct(sf.p, above, b, key, depth, counts);
            }
            let pick_specular = rand(key, depth, DIM_LOBE) < specular_prob;
            if mirror && pick_specular {
                throughput *= m.ks / specular_prob;
                origin = above;
                dir = reflected;
                last_pdf = 0.0;
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
                    break;
                }
                let e = lobes_eval(b, next);
                if e.pdf <= 0.0 {
                    break;
                }
                throughput *= e.f * (cos / e.pdf);
                last_pdf = e.pdf;
                last_point = sf.p;
                origin = above;
                dir = next;
            }
        }
        if depth >= params.rr_depth {
            let survive = clamp(max3(throughput), SURVIVE_MIN, SURVIVE_MAX);
            if rand(key, depth, DIM_ROULETTE) >= survive {
                break;
            }
            throughput /= survive;
        }
        depth += 1u;
    }
    return radiance;
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

// `params.pixel_base` counts 8x8 tiles; each dispatch renders a batch of samples of its
// tiles, `params.streams` workgroups a tile (one per stream, so that small images fill the
// GPU), and adds them to the pixels' sums.
@compute @workgroup_size(64)
fn render(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let group = flat_workgroup(wid, nwg);
    let stream = group % params.streams;
    let xy = tile_pixel(params.pixel_base + group / params.streams, params.width, lid);
    if xy.x >= params.width || xy.y >= params.height {
        return;
    }
    let pixel = xy.y * params.width + xy.x;
    var counts = Counts(0u, 0u);
    var sum = Sums();
    let scale = pow2(params.scale_log2);
    var done = 0u;
    for (var s = stream; s < params.batch_count; s += params.streams) {
        add_sample(&sum, path_sample(xy.x, xy.y, pixel, params.batch_first + s, &counts), scale);
        done += 1u;
    }
    // A driver that caps the loop iterations of an invocation (lavapipe: 65535) ends the
    // loop early, or a loop inside the last sample; the host turns the count into an error.
    let mine = (params.batch_count + params.streams - 1u - stream) / params.streams;
    if done != mine || loops_cut_short(mine + 1u) {
        atomicAdd(&counters[4], 1u);
    }
    let fresh = params.batch_first == params.first_sample;
    add_pixel_sums(pixel, params.width * params.height, sum, params.streams == 1u, fresh);
    add_wide(0u, counts.extension);
    add_wide(2u, counts.shadow);
}

// After the last batch: each pixel's mean (the host's download computes it from the sums in
// f64; this one rounds a few times in f32), and a count of saturated pixels.
@compute @workgroup_size(64)
fn mean(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let pixel = flat_workgroup(wid, nwg) * 64u + lid;
    if pixel >= params.width * params.height {
        return;
    }
    let n = params.width * params.height;
    if pixel_saturated(pixel, n) {
        atomicAdd(&counters[5], 1u);
    }
    image[pixel] = vec4<f32>(pixel_mean(pixel, n, params.spp, params.scale_log2), 1.0);
}
